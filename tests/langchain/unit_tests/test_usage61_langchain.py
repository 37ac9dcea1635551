"""LangChain users' leftovers of round two (helper usage61), each beside LangChain's own
``VectorStoreRetriever`` where it has an answer.

- ``TreehopRetriever(search_type=...)`` refused every value, ``"similarity"`` (what it does)
  included. It now takes ``VectorStoreRetriever``'s three, checked as there
  (``"similarity_score_threshold"`` needs a threshold; anything else is "search_type of ...
  not allowed. Valid values are: ..."): ``"mmr"`` picks ``k`` of the tree search's
  ``fetch_k`` with LangChain's ``maximal_marginal_relevance`` on the stored vectors.
- ``k`` above 1,000 counted its scope by building up to 1,001 nodes per root on each call
  (and the vector store built every node under its base: ~0.6 s per call at 20,000 passages);
  the embedded store now counts from its columns, no node built.
- ``retrieve_count`` below ``k`` (``k=5000, retrieve_count=50``) was the core's "must be >=
  limit (1000)" at the first call: now refused at construction (and per call) naming ``k``.
- ``TimeWeightedVectorStoreRetriever(vectorstore=TreehopVectorStore(...))`` (langchain-classic)
  failed on its first ``add_documents``: its datetime stamps are not JSON, and its
  ``current_time=`` is passed on to the store. The store API points it uses are exercised
  here as it calls them (the package itself is not a test dependency).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.runnables import ConfigurableField
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from langchain_core.vectorstores.utils import maximal_marginal_relevance
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from treehop import AsyncTreehop, Treehop
from treehop import integration_kit as kit
from treehop.errors import InvalidQueryError
from treehop.rerankers.base import BaseReranker
from treehop.validation import MAX_LIMIT

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
    "Deployments go out on Tuesdays after the freeze.",
    "Helm charts template the kubernetes manifests.",
    "Canary deployments send a little traffic first.",
]
Q = "roll back the deployment"


class OverlapReranker(BaseReranker):
    """Word overlap as the rerank score (a real reranker's interface, deterministic)."""

    name = "overlap"

    def rerank(self, query: str, documents: Any) -> list[float]:
        words = set(query.split())
        return [float(len(words & set(d.split()))) for d in documents]


@pytest.fixture
def client() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, reranker=OverlapReranker())
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    yield th
    th.close()


# ----------------------------------------------------------------------- 1: search_type


def test_the_reference_checks_search_type_so() -> None:
    store = InMemoryVectorStore.from_texts(TEXTS, WordHashEmbeddings())
    with pytest.raises(ValueError, match=r"search_type of bogus not allowed\. Valid values"):
        VectorStoreRetriever(vectorstore=store, search_type="bogus")
    with pytest.raises(ValueError, match="score_threshold"):
        VectorStoreRetriever(vectorstore=store, search_type="similarity_score_threshold")


def test_search_type_similarity_is_the_default_search(client: Treehop) -> None:
    plain = [d.id for d in TreehopRetriever(client=client, k=3).invoke(Q)]
    r = TreehopRetriever(client=client, search_type="similarity", search_kwargs={"k": 3})
    assert r.search_type == "similarity"
    assert [d.id for d in r.invoke(Q)] == plain
    assert [d.id for d in asyncio.run(r.ainvoke(Q))] == plain


def test_search_type_score_threshold_needs_and_applies_a_floor(client: Treehop) -> None:
    scores = [d.metadata["score"] for d in TreehopRetriever(client=client, k=6).invoke(Q)]
    floor = (scores[1] + scores[2]) / 2  # two documents above it
    for r in (
        TreehopRetriever(
            client=client,
            search_type="similarity_score_threshold",
            search_kwargs={"k": 6, "score_threshold": floor},
        ),
        TreehopRetriever(
            client=client, search_type="similarity_score_threshold", k=6, score_threshold=floor
        ),
    ):
        assert len(r.invoke(Q)) == 2
        assert all(d.metadata["score"] >= floor for d in r.invoke(Q))
        # a configured rebuild (every field passed again) keeps the type and its floor
        conf = r.configurable_fields(search_kwargs=ConfigurableField(id="sk"))
        got = conf.invoke(Q, config={"configurable": {"sk": {"k": 1}}})
        assert len(got) == 1 and got[0].metadata["score"] >= floor
    with pytest.raises(ValidationError, match="needs a score_threshold"):
        TreehopRetriever(client=client, search_type="similarity_score_threshold")
    with pytest.raises(ValidationError, match="needs a score_threshold"):
        TreehopRetriever(
            client=client, search_type="similarity_score_threshold", search_kwargs={"k": 2}
        )


def test_other_search_types_list_the_valid_ones(client: Treehop) -> None:
    for value in ("bogus", "MMR", 3, None):
        with pytest.raises(ValidationError, match=r"not allowed\. Valid values are") as got:
            TreehopRetriever(client=client, search_type=value)
        assert "'similarity', 'similarity_score_threshold', 'mmr'" in str(got.value)
    # per call, as VectorStoreRetriever (a construction field): refused, saying where it goes
    r = TreehopRetriever(client=client)
    with pytest.raises(InvalidQueryError, match=r"TreehopRetriever\(\.\.\., search_type="):
        r.invoke(Q, search_type="similarity")
    with pytest.raises(InvalidQueryError, match=r"not allowed\. Valid values are"):
        r.invoke(Q, search_type="bogus")


def _mmr_oracle(th: Treehop, fetch_k: int, k: int, lambda_mult: float) -> list[str]:
    """MMR computed outside the retriever: the same search's ``fetch_k`` documents, their
    stored vectors, LangChain's ``maximal_marginal_relevance``."""
    candidates = TreehopRetriever(client=th, k=fetch_k).invoke(Q)
    store = th.aio.store
    rows = list(store.get_vectors([th.aio.resolve(str(d.id)) for d in candidates]))
    query = th.aio.embedder.embed_query(Q)
    picked = maximal_marginal_relevance(
        np.asarray(query, dtype=np.float32), rows, lambda_mult=lambda_mult, k=k
    )
    return [str(candidates[i].id) for i in picked]


def test_search_type_mmr_picks_as_langchains_mmr_over_the_tree_search(client: Treehop) -> None:
    # the reference takes the same arguments
    ref = VectorStoreRetriever(
        vectorstore=InMemoryVectorStore.from_texts(TEXTS, WordHashEmbeddings()),
        search_type="mmr",
        search_kwargs={"k": 3, "fetch_k": 6, "lambda_mult": 0.3},
    )
    assert len(ref.invoke(Q)) == 3
    r = TreehopRetriever(
        client=client, search_type="mmr", search_kwargs={"k": 3, "fetch_k": 6, "lambda_mult": 0.3}
    )
    want = _mmr_oracle(client, 6, 3, 0.3)
    assert [d.id for d in r.invoke(Q)] == want
    assert [d.id for d in asyncio.run(r.ainvoke(Q))] == want
    assert [[d.id for d in b] for b in r.batch([Q, Q])] == [want, want]
    # diversity changes the pick; lambda_mult=1 is relevance order of the stored vectors
    assert [d.id for d in r.invoke(Q, lambda_mult=1.0)] == _mmr_oracle(client, 6, 3, 1.0)
    assert want != _mmr_oracle(client, 6, 3, 1.0)
    # defaults: fetch_k 20 (at least k), lambda_mult 0.5; k=0 is []
    plain = TreehopRetriever(client=client, search_type="mmr", k=2)
    assert [d.id for d in plain.invoke(Q)] == _mmr_oracle(client, 20, 2, 0.5)
    assert plain.invoke(Q, k=0) == []
    # an async client, and "everything" (k above the limit over a small scope)
    aclient = AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for i, t in enumerate(TEXTS):
        asyncio.run(aclient.add_resource(t, target_uri=f"viking://resources/docs/d{i}"))
    on_async = TreehopRetriever(client=aclient, search_type="mmr", k=5000)
    assert sorted(str(d.id) for d in asyncio.run(on_async.ainvoke(Q))) == sorted(
        f"viking://resources/docs/d{i}" for i in range(len(TEXTS))
    )


def test_mmr_options_are_never_silently_unused(client: Treehop) -> None:
    with pytest.raises(ValidationError, match="fetch_k only applies to search_type='mmr'"):
        TreehopRetriever(client=client, fetch_k=5)
    with pytest.raises(ValidationError, match="lambda_mult only applies"):
        TreehopRetriever(client=client, search_kwargs={"lambda_mult": 0.2})
    with pytest.raises(InvalidQueryError, match="fetch_k only applies"):
        TreehopRetriever(client=client).invoke(Q, fetch_k=5)
    with pytest.raises(ValidationError, match="needs mode='find'"):
        TreehopRetriever(client=client, search_type="mmr", mode="search")
    with pytest.raises(ValidationError, match="chunk_diffusion_count"):
        TreehopRetriever(client=client, search_type="mmr", chunk_diffusion_count=1)
    with pytest.raises(InvalidQueryError, match="chunk_diffusion_count"):
        TreehopRetriever(client=client, search_type="mmr").invoke(Q, chunk_diffusion_count=1)
    with pytest.raises(ValidationError, match="lambda_mult"):
        TreehopRetriever(client=client, search_type="mmr", lambda_mult=1.5)
    with pytest.raises(ValidationError, match="fetch_k"):
        TreehopRetriever(client=client, search_type="mmr", fetch_k=0)


# ----------------------------------------------------------------------- 2: counting


@pytest.fixture(scope="module")
def big() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    n = MAX_LIMIT + 1
    TreehopVectorStore(client=th, base_uri="viking://resources/big").add_texts(
        [f"note {i} about item{i}" for i in range(n)],
        metadatas=[{"source": f"d{i % 10}/f{i}.md"} for i in range(n)],
    )
    th.add_resource("a small note", target_uri="viking://resources/small/one")
    yield th
    th.close()


def test_the_store_counts_what_a_walk_counts(big: Treehop) -> None:
    store = big.aio.store
    for subtree in (None, "viking://resources", "viking://resources/big", "viking://resources/x"):
        nodes = list(store.iter_nodes(subtree))
        assert store.count_nodes(subtree) == len(nodes)
        assert store.count_nodes(subtree, leaves_only=True) == sum(n.is_leaf for n in nodes)
    assert kit.count_held(store, ["viking://resources/big"], False) == MAX_LIMIT + 1


def test_everything_is_counted_without_building_nodes(
    big: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    def walked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a count walked the nodes")

    monkeypatch.setattr(big.aio.store, "iter_nodes", walked)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages"):
        TreehopRetriever(client=big, k=5000).invoke("note")
    small = TreehopRetriever(client=big, k=5000, target_uri="viking://resources/small")
    assert [d.id for d in small.invoke("note")] == ["viking://resources/small/one"]
    store = TreehopVectorStore(client=big, base_uri="viking://resources/big")
    with pytest.raises(InvalidQueryError, match=f"holds {MAX_LIMIT + 1} passages"):
        store.similarity_search("note", k=10_000)


# ----------------------------------------------------------------------- 3: retrieve_count


def test_retrieve_count_below_k_is_refused_at_construction_naming_k(client: Treehop) -> None:
    with pytest.raises(ValidationError, match=r"retrieve_count \(50\) is below k \(5000\)") as e:
        TreehopRetriever(client=client, k=5000, retrieve_count=50, retrieval_mode="thinking")
    assert "retrieve_count=1000" in str(e.value) and "limit (1000)" not in str(e.value)
    with pytest.raises(ValidationError, match=r"retrieve_count \(5\) must be >= k \(10\)"):
        TreehopRetriever(client=client, k=10, retrieve_count=5, retrieval_mode="thinking")
    with pytest.raises(ValidationError, match=r"is below k \(5000\)"):
        TreehopRetriever(
            client=client,
            search_kwargs={"k": 5000, "retrieve_count": 50},
            retrieval_mode="thinking",
        )
    # per call, the same words (an InvalidQueryError, as every per-call error)
    r = TreehopRetriever(client=client, retrieve_count=50, retrieval_mode="thinking")
    with pytest.raises(InvalidQueryError, match=r"is below k \(5000\)"):
        r.invoke(Q, k=5000)
    # what the message says to write works: every passage, reranked
    for ok in (
        TreehopRetriever(
            client=client, k=5000, retrieve_count=MAX_LIMIT, retrieval_mode="thinking"
        ),
        TreehopRetriever(client=client, k=5000, retrieval_mode="thinking"),
    ):
        docs = ok.invoke(Q)
        assert len(docs) == len(TEXTS)
        assert docs[0].page_content == TEXTS[0]
    assert len(r.invoke(Q, k=3)) == 3  # retrieve_count >= k: as before


# ----------------------------------------------------------------------- 4: time-weighted


def test_time_weighted_retriever_store_calls() -> None:
    """What ``TimeWeightedVectorStoreRetriever`` (langchain-classic 1.0.8) does with its
    store: ``add_documents(copies stamped with datetimes, current_time=...)``, then
    ``similarity_search_with_relevance_scores(query, k=100)``, reading ``buffer_idx`` back
    and a float stamp as ``datetime.fromtimestamp``."""
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    store = TreehopVectorStore(client=th)
    yesterday = dt.datetime.now() - dt.timedelta(days=1)
    aware = dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.UTC)
    docs = [
        Document(
            page_content=t,
            metadata={
                "last_accessed_at": yesterday,
                "created_at": aware,
                "buffer_idx": i,
            },
        )
        for i, t in enumerate(TEXTS[:3])
    ]
    ids = store.add_documents(docs, current_time=yesterday)
    assert len(ids) == 3
    more = [Document(page_content=TEXTS[3], metadata={"buffer_idx": 3, "created_at": yesterday})]
    assert len(asyncio.run(store.aadd_documents(more, current_time=yesterday))) == 1
    got = store.similarity_search_with_relevance_scores(Q, k=100)
    assert {d.metadata["buffer_idx"] for d, _ in got} == {0, 1, 2, 3}
    assert all(0.0 <= s <= 1.0 for _, s in got)
    top = next(d for d, _ in got if d.metadata["buffer_idx"] == 0)
    assert dt.datetime.fromtimestamp(top.metadata["last_accessed_at"]) == yesterday
    assert top.metadata["created_at"] == aware.timestamp()
    # stored as numbers: a range filter on the stamps works
    since = {"created_at": {"$gte": (yesterday - dt.timedelta(hours=1)).timestamp()}}
    hits = store.similarity_search(Q, k=10, filter=since)
    assert {d.metadata["buffer_idx"] for d in hits} == {3}
    # the caller's documents are not changed, and current_time is checked
    assert docs[0].metadata["last_accessed_at"] == yesterday
    with pytest.raises(InvalidQueryError, match="current_time must be a datetime"):
        store.add_documents(docs, current_time="yesterday")  # type: ignore[arg-type]
    th.close()


@pytest.fixture(scope="module")
def reranking() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, reranker=OverlapReranker())
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    yield th
    th.close()


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    k=st.one_of(st.integers(0, 40), st.integers(990, 1010), st.integers(5000, 10**6)),
    retrieve_count=st.one_of(st.none(), st.integers(1, 40), st.integers(990, 1000)),
    per_call=st.booleans(),
)
def test_a_retrieve_count_the_retriever_takes_the_core_takes(
    reranking: Treehop, k: int, retrieve_count: int | None, per_call: bool
) -> None:
    """Whatever ``k`` / ``retrieve_count`` pair the retriever accepts (at construction or
    per call), the call never meets the core's "retrieve_count must be >= limit"; what it
    refuses names ``k``."""
    fixed: dict[str, Any] = {"retrieval_mode": "thinking"}
    given_kw = {"k": k, "retrieve_count": retrieve_count}
    try:
        if per_call:
            docs = TreehopRetriever(client=reranking, **fixed).invoke(Q, **given_kw)
        else:
            docs = TreehopRetriever(client=reranking, **fixed, **given_kw).invoke(Q)
    except (ValidationError, InvalidQueryError) as exc:
        said = str(exc)
        assert "limit (" not in said
        assert f"k ({k})" in said and retrieve_count is not None
        assert retrieve_count < min(k, MAX_LIMIT)
        return
    assert len(docs) <= min(k, len(TEXTS))
