"""LlamaIndex users' open items, round two (helper usage60), beside LlamaIndex's own
``VectorIndexRetriever`` over ``SimpleVectorStore``.

- ``TreehopRetriever(similarity_top_k=5000)`` ("everything") was refused while
  ``VectorStoreIndex.as_retriever(similarity_top_k=5000)`` returns every node, and so do our
  vector stores (usage59). Now every node of a scope holding at most 1,000 passages; a larger
  scope, or a knowledge source (which cannot count what it holds), is an ``InvalidQueryError``
  that says so. ``similarity_top_k=0`` without a reranker is the same "every node" (it kept
  the client's score floor: 16 of 18 in deadline59's test, where the reference returns 18).
- ``similarity_top_k=0`` with a reranker reranked every candidate a 1,000-hit search reaches
  (1,321 pairs on a 1,500-passage index): now the reranked best ``retrieve_count`` (default
  ``NO_LIMIT_RERANK_POOL``, 100).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.vector_stores import SimpleVectorStore

from langchain_treehop import TreehopVectorStore as LCStore
from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.retrievers.treehop import base as li_base
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop._http import RetryPolicy
from treehop.errors import InvalidQueryError
from treehop.rerankers.base import BaseReranker
from treehop.validation import MAX_LIMIT

from fake_servers.vikingdb_knowledge_setup import (
    k8s_point,
    knowledge_server,
    make_knowledge_source,
    oauth_points,
)
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
ALL = sorted(f"viking://resources/docs/d{i}" for i in range(len(TEXTS)))


@pytest.fixture
def client() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    yield th
    th.close()


def ids(nodes: Sequence[object]) -> list[str]:
    return [n.node.node_id for n in nodes]  # type: ignore[attr-defined]


def test_the_reference_answers_5000_and_0_with_every_node(client: Treehop) -> None:
    embed_model = TreehopVectorStore(client=client).embed_model
    docs = [Document(text=t, id_=f"d{i}") for i, t in enumerate(TEXTS)]
    simple = VectorStoreIndex.from_documents(docs, embed_model=embed_model)
    assert isinstance(simple.vector_store, SimpleVectorStore)
    for k in (5000, 0):
        assert len(simple.as_retriever(similarity_top_k=k).retrieve(Q)) == len(TEXTS)


def test_similarity_top_k_above_the_limit_is_every_node_of_a_small_scope(
    client: Treehop,
) -> None:
    searched = ids(TreehopRetriever(client, similarity_top_k=MAX_LIMIT).retrieve(Q))
    assert len(searched) < len(TEXTS)  # one search under the client's floor
    r = TreehopRetriever(client, similarity_top_k=5000)
    assert r.similarity_top_k == 5000 and "similarity_top_k=5000" in repr(r)
    every = ids(r.retrieve(Q))
    assert sorted(every) == ALL and every[: len(searched)] == searched
    assert ids(asyncio.run(r.aretrieve(Q))) == every
    assert ids(TreehopRetriever(client, similarity_top_k=0).retrieve(Q)) == every
    later = TreehopRetriever(client, similarity_top_k=2)
    later.similarity_top_k = MAX_LIMIT + 1
    assert ids(later.retrieve(Q)) == every
    scoped = TreehopRetriever(client, similarity_top_k=5000, target_uri="viking://resources/docs")
    assert ids(scoped.retrieve(Q)) == every
    floored = TreehopRetriever(client, similarity_top_k=5000, score_threshold=0.25).retrieve(Q)
    assert floored and all((n.score or 0) >= 0.25 for n in floored) and len(floored) < 6
    for bad in (-1, True, 1.5, "5000"):
        with pytest.raises(InvalidQueryError, match="similarity_top_k"):
            TreehopRetriever(client, similarity_top_k=bad)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def big() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    n = MAX_LIMIT + 1
    LCStore(client=th, base_uri="viking://resources/big").add_texts(
        [f"note {i} about item{i}" for i in range(n)],
        metadatas=[{"source": f"d{i % 10}/f{i}.md"} for i in range(n)],
    )
    th.add_resource("a small note", target_uri="viking://resources/small/one")
    yield th
    th.close()


def test_similarity_top_k_above_the_limit_over_a_larger_scope_is_refused(big: Treehop) -> None:
    r = TreehopRetriever(big, similarity_top_k=5000)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages") as got:
        r.retrieve("note")
    assert "similarity_top_k of at most 1000" in str(got.value)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages"):
        asyncio.run(r.aretrieve("note"))
    small = TreehopRetriever(big, similarity_top_k=5000, target_uri="viking://resources/small")
    assert ids(small.retrieve("note")) == ["viking://resources/small/one"]
    assert len(TreehopRetriever(big, similarity_top_k=MAX_LIMIT).retrieve("note")) == MAX_LIMIT


def test_similarity_top_k_above_the_limit_on_a_knowledge_source() -> None:
    ak, sk = "AKLTfake-usage60-li", "fake-usage60-li-secret"
    with knowledge_server(ak, sk, [*oauth_points(), k8s_point()]) as srv:
        src = make_knowledge_source(srv, ak=ak, sk=sk, retry=RetryPolicy(max_retries=0))
        try:
            with pytest.raises(InvalidQueryError, match="cannot say how many") as got:
                TreehopRetriever(src, similarity_top_k=5000).retrieve("tokens")
            assert sk not in str(got.value)
            assert srv.posts("/search_knowledge") == []
        finally:
            src.close()


class CountingReranker(BaseReranker):
    """Word overlap as the score; counts the (query, document) pairs it is asked for."""

    name = "counting"

    def __init__(self) -> None:
        self.pairs = 0

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.pairs += len(documents)
        words = set(query.split())
        return [float(len(words & set(d.split()))) for d in documents]


@pytest.fixture(scope="module")
def reranked() -> Iterator[tuple[Treehop, CountingReranker]]:
    rr = CountingReranker()
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, reranker=rr)
    n = 300
    words = [
        "deploy",
        "helm",
        "traffic",
        "rollback",
        "keys",
        "tokens",
        "canary",
        "release",
        "pipeline",
        "review",
    ]
    LCStore(client=th, base_uri="viking://resources/kb").add_texts(
        [
            " ".join(words[(i * 7 + j * 3) % len(words)] for j in range(6)) + f" n{i}"
            for i in range(n)
        ],
        metadatas=[{"source": f"g{i % 10}/f{i}.md"} for i in range(n)],
    )
    yield th, rr
    th.close()


def test_similarity_top_k_zero_with_a_reranker_reranks_a_bounded_pool(
    reranked: tuple[Treehop, CountingReranker],
) -> None:
    th, rr = reranked

    def run(**kw: object) -> tuple[int, int]:
        rr.pairs = 0
        got = TreehopRetriever(th, retrieval_mode="thinking", **kw).retrieve(  # type: ignore[arg-type]
            "helm rollback traffic"
        )
        return len(got), rr.pairs

    n0, pairs0 = run(similarity_top_k=0)
    n_all, pairs_all = run(similarity_top_k=MAX_LIMIT)  # an explicit ask reranks what it asks
    assert n0 == li_base.NO_LIMIT_RERANK_POOL < n_all
    assert 0 < pairs0 < pairs_all
    assert run(similarity_top_k=0, retrieve_count=30)[0] == 30
    # unreranked, "no limit" is every passage (300), with no reranker call
    rr.pairs = 0
    quick = TreehopRetriever(th, similarity_top_k=0, retrieval_mode="quick").retrieve("helm")
    assert len(quick) == 300 and rr.pairs == 0
