"""A LangChain user's first hour, stop 65 (helper usage74): ``None`` in a filter.

``similarity_search(q, filter={"lang": None})`` (MongoDB's "null or missing", a Chroma or
InMemory user's guess for documents without a language) came back from the core's DSL as
"filter: conds must be scalars, got NoneType": no field named, the DSL's word, nothing to
write instead. Now each place a filter value goes (``==``, ``$eq``, ``$ne``, ``$in``,
``$nin``) refuses ``None`` naming the field and the ``$exists`` filter that asks for it, and
that filter answers as the message says.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore
from langchain_treehop.filters import to_treehop_filter
from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MetadataFilter

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def store() -> Iterator[TreehopVectorStore]:
    s = TreehopVectorStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    s.add_documents(
        [
            Document("autoescape protects html output", metadata={"lang": None}, id="null"),
            Document("trim blocks removes a newline", metadata={"lang": "en"}, id="en"),
            Document("the sandbox restricts attributes", metadata={"other": 1}, id="missing"),
        ]
    )
    yield s
    s.client.close()


def _found(store: TreehopVectorStore, flt: dict[str, Any]) -> list[str]:
    return sorted(str(d.id) for d in store.similarity_search("html newline sandbox", 5, filter=flt))


@pytest.mark.parametrize(
    ("flt", "op", "hint"),
    [
        ({"lang": None}, "==", "{'lang': {'$exists': False}} keeps the documents without"),
        ({"lang": {"$eq": None}}, "$eq", "{'lang': {'$exists': False}}"),
        ({"lang": {"$ne": None}}, "$ne", "{'lang': {'$exists': True}} keeps the documents with"),
        ({"lang": {"$in": ["en", None]}}, "$in", "join the two under $or"),
        ({"lang": {"$nin": [None]}}, "$nin", "join the two under $and"),
        ({"$or": [{"x": 1}, {"lang": None}]}, "==", "{'lang': {'$exists': False}}"),
    ],
)
def test_none_in_a_filter_names_the_field_and_the_exists_filter(
    store: TreehopVectorStore, flt: dict[str, Any], op: str, hint: str
) -> None:
    for call in (store.similarity_search, store.as_retriever().invoke):
        with pytest.raises(InvalidFilterError) as exc:
            call("html", filter=flt)
        message = str(exc.value)
        assert message.startswith(f"filter 'lang' {op}: None is not a value a filter compares")
        assert hint in message
        assert "conds" not in message


def test_the_exists_filters_the_message_names_answer_as_it_says(
    store: TreehopVectorStore,
) -> None:
    """Control: what the message tells the caller to write works (a key stored as null is
    absent, as a missing one)."""
    assert _found(store, {"lang": {"$exists": False}}) == ["missing", "null"]
    assert _found(store, {"lang": {"$exists": True}}) == ["en"]
    either = {"$or": [{"lang": {"$in": ["en"]}}, {"lang": {"$exists": False}}]}
    assert _found(store, either) == ["en", "missing", "null"]


_SCALARS = st.one_of(
    st.text(max_size=20),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)
_KEYS = st.text(min_size=1, max_size=12).filter(lambda k: not k.startswith("$"))


@settings(max_examples=200, deadline=None)
@given(
    key=_KEYS,
    op=st.sampled_from(["==", "$eq", "$ne", "$in", "$nin"]),
    values=st.lists(st.one_of(st.none(), _SCALARS), min_size=1, max_size=4),
)
def test_a_filter_value_is_a_checked_scalar_or_a_named_refusal(
    key: str, op: str, values: list[Any]
) -> None:
    """Any value list: ``None`` anywhere is refused naming the field and ``$exists``; without
    one the translation is a DSL the core parses."""
    if op in ("$in", "$nin"):
        flt: dict[str, Any] = {key: {op: values}}
    elif op == "==":
        flt = {key: values[0]}
    else:
        flt = {key: {op: values[0]}}
    used = values if op in ("$in", "$nin") else values[:1]
    if any(v is None for v in used):
        with pytest.raises(InvalidFilterError, match=r"None is not a value a filter compares"):
            to_treehop_filter(flt)
        return
    out = to_treehop_filter(flt)
    assert out is not None
    MetadataFilter.parse(out)
