"""LangChain ``$contains`` / ``$not_contains`` on a metadata field (helper leftovers71b).

The reference: Chroma's ``where`` (the LangChain vector store that has the operator on
metadata) keeps a document whose array field has the item; LlamaIndex's ``CONTAINS``
(Python's ``value in field``, which treehop's LlamaIndex filters take) is a substring of a
string field too. So the oracle here is Python's ``in`` over the metadata as added, run
against the real vector store (and the retriever over the same tree).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from langchain_treehop.filters import to_treehop_filter
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

META: dict[str, dict[str, Any]] = {
    "a": {"tags": ["ops", "db"], "title": "faq.html", "n": [1, 3]},
    "b": {"tags": ["opsx"], "title": "deploy ops guide", "n": 3},
    "c": {"tags": [], "title": "", "n": [2]},
    "d": {"title": "keys", "n": 7},
    "e": {"tags": ["db", "faq"], "n": []},
}
DOCS = [Document(id=i, page_content=f"keys rotation note {i}", metadata=m) for i, m in META.items()]
_STORES: list[TreehopVectorStore] = []


def _store() -> TreehopVectorStore:
    if not _STORES:  # (one store for every hypothesis example: the docs never change)
        client = Treehop(None, embedder=BagOfWordsEmbedder())
        store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
        store.add_documents([d.model_copy() for d in DOCS])
        _STORES.append(store)
    return _STORES[0]


def _ids(spec: dict[str, Any]) -> set[str]:
    return {str(d.id) for d in _store().similarity_search("keys rotation", k=10, filter=spec)}


def _inside(needle: Any, value: Any) -> bool:
    """Python's ``in`` where it is defined; a number field equal to a number (documented)."""
    if isinstance(value, str):
        return isinstance(needle, str) and needle in value
    if isinstance(value, list):
        return needle in value
    return value is not None and not isinstance(needle, str) and value == needle


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    field=st.sampled_from(["tags", "title", "n"]),
    needle=st.one_of(
        st.sampled_from(["ops", "db", "faq", "f", "x", "html", "guide", "keys", "o"]),
        st.text(alphabet="opsxdbfaqhtml. ", min_size=1, max_size=4),
        st.integers(min_value=0, max_value=8),
    ),
)
def test_contains_is_pythons_in_over_the_metadata_as_added(field: str, needle: Any) -> None:
    want = {i for i, m in META.items() if _inside(needle, m.get(field))}
    assert _ids({field: {"$contains": needle}}) == want
    assert _ids({field: {"$not_contains": needle}}) == set(META) - want


def test_chromas_array_case_and_the_string_case_by_hand() -> None:
    assert _ids({"tags": {"$contains": "ops"}}) == {"a"}  # an item, not "opsx"
    assert _ids({"title": {"$contains": "ops"}}) == {"b"}  # a substring of a string
    assert _ids({"n": {"$contains": 3}}) == {"a", "b"}
    assert _ids({"$and": [{"tags": {"$contains": "db"}}, {"tags": {"$contains": "faq"}}]}) == {"e"}


async def test_the_async_search_and_the_retriever_over_the_tree_agree() -> None:
    store = _store()
    docs = await store.asimilarity_search("keys", k=10, filter={"tags": {"$contains": "db"}})
    assert {str(d.id) for d in docs} == {"a", "e"}
    retriever = TreehopRetriever(
        client=store.client, k=10, metadata_filter={"title": {"$contains": "faq"}}
    )
    assert [d.metadata["title"] for d in retriever.invoke("keys rotation")] == ["faq.html"]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("", "an empty text is inside every string"),
        ("x" * 1001, "at most 1000 characters"),
        (["ops"], "expects one value"),
        (None, "None is not a value"),
    ],
)
def test_what_contains_refuses_and_why(value: Any, said: str) -> None:
    for op in ("$contains", "$not_contains"):
        with pytest.raises(InvalidFilterError, match=said) as info:
            to_treehop_filter({"tags": {op: value}})
        assert op in str(info.value)


def test_the_translation_is_the_llamaindex_packages() -> None:
    from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

    from llama_index.retrievers.treehop.filters import to_treehop_filters

    li = MetadataFilters(
        filters=[MetadataFilter(key="title", value="ops", operator=FilterOperator.CONTAINS)]
    )
    ours = to_treehop_filter({"title": {"$contains": "ops"}})
    assert ours == to_treehop_filters(li, tags_are_metadata=True).filter
