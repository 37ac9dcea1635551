"""A range bound given as the text of a number names the number (helper usage79).

``similarity_search(q, filter={"year": {"$gte": "2020"}})`` (LangChain) and
``MetadataFilter(key="file_size", value="5000", operator=">")`` (LlamaIndex keeps a string
value as given; filters built from JSON or by an LLM's structured output carry them) were
refused with the date advice alone ("store a datetime in the metadata ..."), which says
nothing to a user who meant the number. The refusal stays (a range compares stored numbers)
and now says to give the number; following it answers.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import Document as LIDocument
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from llama_index.retrievers.treehop import TreehopRetriever as LITreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore as LITreehopVectorStore
from treehop import Treehop
from treehop import integration_kit as kit
from treehop.errors import InvalidFilterError, InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

Q = "remote control receiver"
TEXTS = {
    "old": ("The old serial remote control receiver.", 2009),
    "new": ("The new USB remote control receiver.", 2021),
}


def _lc_store(client: Treehop) -> TreehopVectorStore:
    store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
    store.add_documents(
        [
            Document(t, id=i, metadata={"source": f"{i}.html", "year": y})
            for i, (t, y) in TEXTS.items()
        ]
    )
    return store


@pytest.mark.parametrize("where", ["vector store", "retriever"])
def test_a_langchain_number_as_text_bound_names_the_number_and_the_number_works(where: str) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _lc_store(client)

        def search(flt: dict[str, object]) -> list[str | None]:
            if where == "vector store":
                return [d.id for d in store.similarity_search(Q, k=4, filter=flt)]
            docs = TreehopRetriever(client=client, k=4).invoke(Q, filter=flt)
            return [d.metadata["source"] for d in docs]

        with pytest.raises(InvalidFilterError) as exc:
            search({"year": {"$gte": "2020"}})
        assert "'2020' is text: give the number 2020" in str(exc.value), str(exc.value)
        assert "store a datetime" not in str(exc.value)
        want = ["new"] if where == "vector store" else ["new.html"]
        assert search({"year": {"$gte": 2020}}) == want


def test_a_langchain_between_of_number_texts_names_the_number() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _lc_store(client)
        with pytest.raises(InvalidFilterError, match=r"'2000' is text: give the number 2000"):
            store.similarity_search(Q, filter={"year": {"$between": ["2000", "2010"]}})
        assert [
            d.id for d in store.similarity_search(Q, filter={"year": {"$between": [2000, 2010]}})
        ] == ["old"]


def _li_filters(value: object) -> MetadataFilters:
    return MetadataFilters(
        filters=[MetadataFilter(key="year", value=value, operator=FilterOperator.GT)]
    )


@pytest.mark.parametrize("where", ["vector store", "retriever"])
def test_a_llamaindex_number_as_text_value_names_the_number_and_the_number_works(
    where: str,
) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = LITreehopVectorStore(client)
        index = VectorStoreIndex.from_documents(
            [LIDocument(text=t, id_=i, metadata={"year": y}) for i, (t, y) in TEXTS.items()],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=store.embed_model,
        )

        def retrieve(value: object) -> list[int]:
            if where == "vector store":
                r = index.as_retriever(filters=_li_filters(value), similarity_top_k=4)
            else:
                r = LITreehopRetriever(client, filters=_li_filters(value), similarity_top_k=4)
            return [h.node.metadata["year"] for h in r.retrieve(Q)]

        with pytest.raises(InvalidFilterError) as exc:
            retrieve("2020")
        assert "'2020' is text: give the number 2020" in str(exc.value), str(exc.value)
        assert "datetime" not in str(exc.value)
        assert set(retrieve(2020)) == {2021}


@pytest.mark.parametrize("text", ["2020-01-01", "nan", "inf", "-Infinity", "twenty", "", "0x10"])
def test_control_a_text_that_is_no_finite_number_keeps_the_date_advice(text: str) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = _lc_store(client)
        with pytest.raises(InvalidFilterError) as exc:
            store.similarity_search(Q, filter={"year": {"$gte": text}})
        assert "is text: give the number" not in str(exc.value)
        assert "store a datetime" in str(exc.value)


@given(st.one_of(st.integers(-(10**30), 10**30), st.floats(allow_nan=False, allow_infinity=False)))
def test_the_hint_names_the_number_the_text_spells(number: float) -> None:
    text = repr(number)
    hint = kit.number_text_hint(f" {text} ")
    if len(text) + 2 > kit.MAX_NUMBER_TEXT_CHARS:
        assert hint == ""
    else:
        assert f"give the number {number!r} " in hint


@given(st.text(max_size=80))
def test_the_hint_never_raises_and_only_names_finite_numbers(text: str) -> None:
    hint = kit.number_text_hint(text)
    try:
        spelt = float(text)
    except ValueError:
        spelt = math.nan
    if hint:
        assert math.isfinite(spelt) and len(text) <= kit.MAX_NUMBER_TEXT_CHARS
    elif math.isfinite(spelt) and len(text) <= kit.MAX_NUMBER_TEXT_CHARS:
        pytest.fail(f"{text!r} spells {spelt} but got no hint")


def test_control_a_value_that_is_not_text_gets_no_hint() -> None:
    assert (
        kit.number_text_hint(2020)
        == kit.number_text_hint(None)
        == kit.number_text_hint(b"2020")
        == ""
    )


# A call's filter refused by LangChain's TreehopRetriever is an InvalidFilterError, as the
# vector store's and the retriever's run-time refusals are (it was an InvalidQueryError
# "invalid retriever argument(s): metadata_filter: Value error, filter ...").
BAD_FILTERS = {
    "number text": {"year": {"$gte": "2020"}},
    "unknown operator": {"year": {"$foo": 1}},
    "bad dsl op": {"op": "bad", "field": "year"},
    "none value": {"year": None},
}
RETRIEVER_CALLS = {
    "invoke": lambda r, f: r.invoke(Q, filter=f),
    "invoke metadata_filter": lambda r, f: r.invoke(Q, metadata_filter=f),
    "ainvoke": lambda r, f: asyncio.run(r.ainvoke(Q, filter=f)),
    "batch": lambda r, f: r.batch([Q, Q], filter=f),
}


@pytest.mark.parametrize("call", sorted(RETRIEVER_CALLS))
@pytest.mark.parametrize("case", sorted(BAD_FILTERS))
def test_a_calls_refused_filter_is_an_invalid_filter_error(call: str, case: str) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        _lc_store(client)
        retriever = TreehopRetriever(client=client, k=2)
        with pytest.raises(InvalidFilterError) as exc:
            RETRIEVER_CALLS[call](retriever, BAD_FILTERS[case])
        assert not str(exc.value).startswith("invalid retriever argument"), str(exc.value)
        assert "Value error," not in str(exc.value)
        # still what it was, for code catching that
        assert isinstance(exc.value, InvalidQueryError)


def test_control_a_calls_other_bad_argument_stays_an_invalid_query_error() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        _lc_store(client)
        retriever = TreehopRetriever(client=client, k=2)
        with pytest.raises(InvalidQueryError) as exc:
            retriever.invoke(Q, k=-1)
        assert not isinstance(exc.value, InvalidFilterError)
        # a bad filter beside another bad argument: both named, as before
        with pytest.raises(InvalidQueryError, match="invalid retriever argument") as exc:
            retriever.invoke(Q, k=-1, filter={"year": {"$foo": 1}})
        assert "k" in str(exc.value) and "$foo" in str(exc.value)
