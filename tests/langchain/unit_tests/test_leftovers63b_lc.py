"""Leftovers, stop 63 (LangChain): results copied from a treehop retriever into a vector store,
and numeric options checked as the core checks them.

- ``store.add_documents(retriever.invoke(q))`` stored each Document's ``score``,
  ``vector_score``, ``found_by``, ``uri``, ... as the copy's metadata.
- ``similarity_search(q, score_threshold=True / nan / inf)`` answered with that floor (NaN and
  inf: nothing), ``"0.3"`` a raw ``TypeError``; ``similarity_search_with_relevance_scores``
  and ``as_retriever(search_type="similarity_score_threshold")`` the same (LangChain applies
  that threshold itself, after the search); ``TreehopRetriever(rerank_threshold=True / "3")``
  and ``chunk_diffusion_count=True / 3.0 / "3"`` were read as numbers (pydantic's lax mode).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.models import PROVENANCE_KEYS

from treehop_test_doubles import BagOfWordsEmbedder

_TEXTS = [
    "Keys rotate every 90 days.",
    "Deploys roll back with helm rollback.",
    "Tokens are validated by the gateway.",
    "The cache is flushed nightly.",
    "Backups are copied off site.",
]
_BAD_FLOATS = [True, math.nan, math.inf, "0.3", pytest.param(10**5000, id="10**5000")]


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


@pytest.fixture
def store(client: Treehop) -> TreehopVectorStore:
    s = TreehopVectorStore(client)
    s.add_texts(_TEXTS, [{"n": i} for i in range(len(_TEXTS))], ids=[str(i) for i in range(5)])
    return s


# ---------------------------------------------------------------- copies of results


@pytest.mark.parametrize("is_async", [False, True])
async def test_documents_a_treehop_retriever_returned_are_added_without_their_scores(
    store: TreehopVectorStore, is_async: bool
) -> None:
    docs = TreehopRetriever(client=store.client, k=3).invoke("keys helm tokens")
    assert len(docs) == 3 and {"score", "vector_score", "found_by"} <= set(docs[0].metadata)
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as other:
        copy_store = TreehopVectorStore(other)
        if is_async:
            ids = await copy_store.aadd_documents(docs)
        else:
            ids = copy_store.add_documents(docs)
        copies = copy_store.get_by_ids(ids)
        assert len(copies) == 3
        for doc in copies:
            # Before: every provenance key (score, vector_score, found_by, uri, ...) stored.
            assert not set(doc.metadata) & set(PROVENANCE_KEYS)
            assert doc.metadata["n"] in range(5)
        assert {d.page_content for d in copies} == {d.page_content for d in docs}
        found = copy_store.similarity_search("keys", k=3, filter={"n": {"$gte": 0}})
        assert len(found) == 3


def test_a_documents_own_score_and_uri_metadata_are_kept(store: TreehopVectorStore) -> None:
    meta = {"score": 4, "uri": "https://example.org/review", "found_by": "a person"}
    [doc_id] = store.add_documents([Document(page_content="A review.", metadata=meta)])
    assert store.get_by_ids([doc_id])[0].metadata == meta


# ---------------------------------------------------------------- numeric options


@pytest.mark.parametrize("value", _BAD_FLOATS)
def test_a_search_score_threshold_is_checked_as_the_core_checks_it(
    store: TreehopVectorStore, value: object
) -> None:
    with pytest.raises(InvalidQueryError, match="score_threshold") as e:
        store.similarity_search("keys", k=2, score_threshold=value)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("value", [*_BAD_FLOATS, 1.5, -0.1])
async def test_a_relevance_score_threshold_is_a_number_in_0_1(
    store: TreehopVectorStore, value: object
) -> None:
    # LangChain documents it as "a floating point value between 0 to 1" and applies it itself.
    with pytest.raises(InvalidQueryError, match=r"score_threshold must be a number in \[0, 1\]"):
        store.similarity_search_with_relevance_scores("keys", k=2, score_threshold=value)
    with pytest.raises(InvalidQueryError, match=r"score_threshold must be a number in \[0, 1\]"):
        await store.asimilarity_search_with_relevance_scores("keys", k=2, score_threshold=value)


@pytest.mark.parametrize("value", [math.nan, math.inf, 3.0])
def test_a_score_threshold_retriever_checks_its_threshold(
    store: TreehopVectorStore, value: float
) -> None:
    retriever = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": value}
    )
    # Before: [] (with LangChain's "No relevant docs were retrieved" warning).
    with pytest.raises(InvalidQueryError, match="score_threshold"):
        retriever.invoke("keys")


def test_valid_thresholds_still_filter(store: TreehopVectorStore) -> None:
    scored = store.similarity_search_with_relevance_scores("keys rotate", k=5)
    floor = sorted(s for _, s in scored)[2]
    kept = store.similarity_search_with_relevance_scores("keys rotate", k=5, score_threshold=floor)
    assert 0 < len(kept) < len(scored) and all(s >= floor for _, s in kept)
    retriever = store.as_retriever(
        search_type="similarity_score_threshold",
        search_kwargs={"score_threshold": floor, "k": 5},
    )
    assert len(retriever.invoke("keys rotate")) == len(kept)
    raw = store.similarity_search_with_score("keys rotate", k=5)
    raw_floor = sorted(s for _, s in raw)[2]
    assert len(store.similarity_search("keys rotate", k=5, score_threshold=raw_floor)) == 3


@pytest.mark.parametrize("value", [True, "0.3", math.nan])
def test_the_retrievers_rerank_threshold_is_checked_as_the_core_checks_it(
    client: Treehop, value: object
) -> None:
    # Before: True and "0.3" were read as 1.0 and 0.3.
    with pytest.raises(ValidationError, match="rerank_threshold"):
        TreehopRetriever(client=client, rerank_threshold=value)


@pytest.mark.parametrize("value", [True, 1.0, "1"])
def test_the_retrievers_chunk_diffusion_count_is_an_int(client: Treehop, value: object) -> None:
    # Before: read as 1.
    with pytest.raises(ValidationError, match="chunk_diffusion_count"):
        TreehopRetriever(client=client, chunk_diffusion_count=value)


def test_the_retrievers_numbers_take_their_values(client: Treehop) -> None:
    retriever = TreehopRetriever(client=client, rerank_threshold=0.2, chunk_diffusion_count=1)
    assert (retriever.rerank_threshold, retriever.chunk_diffusion_count) == (0.2, 1)


_HUGE = {"10**5000": 10**5000, "a megabyte": "x" * 1_000_000}


@pytest.mark.parametrize("value", list(_HUGE.values()), ids=list(_HUGE))
@pytest.mark.parametrize(
    "call",
    [
        "similarity_search k",
        "mmr fetch_k",
        "mmr lambda_mult",
        "add_texts batch_size",
        "tools read_max_chars",
        "store search limit",
        "store search offset",
        "store list_namespaces max_depth",
    ],
)
def test_a_huge_numeric_option_gets_a_short_typed_error(
    store: TreehopVectorStore, call: str, value: object
) -> None:
    from langchain_treehop import TreehopStore, create_treehop_tools

    kv = TreehopStore(store.client)
    calls = {
        "similarity_search k": lambda: store.similarity_search("keys", k=value),
        "mmr fetch_k": lambda: store.max_marginal_relevance_search("keys", fetch_k=value),
        "mmr lambda_mult": lambda: store.max_marginal_relevance_search("keys", lambda_mult=value),
        "add_texts batch_size": lambda: store.add_texts(["more keys"], batch_size=value),
        "tools read_max_chars": lambda: create_treehop_tools(store.client, read_max_chars=value),
        "store search limit": lambda: kv.search(("a",), limit=value),
        "store search offset": lambda: kv.search(("a",), offset=value),
        "store list_namespaces max_depth": lambda: kv.list_namespaces(max_depth=value),
    }
    # Before: a megabyte message (the value's whole repr), or ValueError from repr(10**5000)
    # (Python's 4,300-digit limit) inside the message meant to report it. A huge k, fetch_k,
    # batch_size, read_max_chars, limit, offset or max_depth is a valid "everything".
    try:
        calls[call]()
    except InvalidQueryError as e:
        assert len(str(e)) < 400
    else:
        assert isinstance(value, int)


@pytest.mark.parametrize("field", ["k", "retrieve_count", "rerank_threshold"])
def test_a_huge_retriever_option_gets_a_short_error(client: Treehop, field: str) -> None:
    # (an empty client: k above 1,000 is "everything", answered; before: ValueError)
    try:
        TreehopRetriever(client=client, **{field: 10**5000}).invoke("keys")
    except (InvalidQueryError, ValidationError) as e:
        assert len(str(e)) < 600


_ANY_NUMBER_OR_TEXT = st.one_of(
    st.booleans(),
    st.integers(min_value=-(10**6000), max_value=10**6000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3000),
    st.none(),
)


@given(_ANY_NUMBER_OR_TEXT)
@settings(max_examples=300, deadline=None)
def test_the_relevance_threshold_check_takes_exactly_the_numbers_in_0_1(value: object) -> None:
    from langchain_treehop.vectorstores import _relevance_threshold

    ok = value is None or (
        isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
    )
    try:
        _relevance_threshold(value)
    except InvalidQueryError as e:
        assert not ok and len(str(e)) < 250
    else:
        assert ok


@given(_ANY_NUMBER_OR_TEXT)
@settings(max_examples=300, deadline=None)
def test_core_numeric_checks_answer_any_value_with_a_short_typed_error(value: object) -> None:
    from treehop.validation import check_dense_weight, check_limit, check_threshold, shown_value

    for check in (
        lambda: check_limit(value, "k"),
        lambda: check_threshold(value),
        lambda: check_dense_weight(value),
    ):
        try:
            check()
        except InvalidQueryError as e:
            assert len(str(e)) < 250
    assert len(shown_value(value)) <= 100


def test_a_copy_into_a_client_is_placed_by_its_uri_without_its_scores(
    store: TreehopVectorStore,
) -> None:
    from langchain_treehop import add_documents
    from treehop.ingest.records import stored_fields

    docs = TreehopRetriever(client=store.client, k=2).invoke("keys tokens")
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as other:
        uris = add_documents(other, docs)
        assert uris == [d.metadata["uri"] for d in docs]  # (placed where they were)
        # Before: score, vector_score, found_by, level, ... stored on the copies.
        fields = stored_fields(other)
        assert "n" in fields and not fields & {"score", "vector_score", "found_by", "level"}
