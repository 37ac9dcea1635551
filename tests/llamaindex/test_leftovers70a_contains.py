"""LlamaIndex's ``CONTAINS`` (and ``ANY`` / ``ALL``) on a string field, beside ``SimpleVectorStore``
(helper leftovers70a).

``SimpleVectorStore``, LlamaIndex's reference store, evaluates ``CONTAINS`` as Python's
``value in metadata_value`` (``llama_index.core.vector_stores.utils.build_metadata_filter_fn``):
a substring of a string field, an item of a list field; ``ANY`` / ``ALL`` as ``any`` / ``all``
of the same test over the values. treehop translated ``CONTAINS`` and ``ANY`` to the DSL's
``must``, equality on a string field: ``file_name contains "faq"`` found no ``faq.html``.
``TEXT_MATCH`` / ``TEXT_MATCH_INSENSITIVE`` are a substring of a string field in both (an
error on a list field there: not compared here).

Each filter runs against both stores over the same nodes, and the ids must be the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index.retrievers.treehop.filters import to_treehop_filters
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MAX_TEXT_MATCH_CHARS

from treehop_test_doubles import BagOfWordsEmbedder

OP = FilterOperator
NODES = {
    "faq-page": {"file_name": "faq.html", "labels": ["faq.html", "doc"], "nums": [1, 2]},
    "nano-page": {"file_name": "nano.html", "labels": ["faq", "nano"], "nums": [3]},
    "todo": {"file_name": "TODO", "labels": ["todo"], "title": "Syntax Highlighting"},
    "bare": {"title": "the editor's FAQ list"},
}

CASES = [
    # (the key, the operator, the value, the ids SimpleVectorStore keeps)
    ("file_name", OP.CONTAINS, "faq", {"faq-page"}),  # a substring of a string
    ("file_name", OP.CONTAINS, "html", {"faq-page", "nano-page"}),
    ("file_name", OP.CONTAINS, "faq.html", {"faq-page"}),  # the whole string too
    ("labels", OP.CONTAINS, "faq", {"nano-page"}),  # an item, not inside "faq.html"
    ("labels", OP.CONTAINS, "doc", {"faq-page"}),
    ("nums", OP.CONTAINS, 2, {"faq-page"}),
    ("file_name", OP.ANY, ["faq", "TO"], {"faq-page", "todo"}),
    ("labels", OP.ANY, ["faq", "todo"], {"nano-page", "todo"}),
    ("file_name", OP.ALL, ["faq", "html"], {"faq-page"}),
    ("labels", OP.ALL, ["faq", "nano"], {"nano-page"}),
    ("labels", OP.ALL, ["fa", "nano"], set()),
    ("nums", OP.ANY, [2, 3], {"faq-page", "nano-page"}),
    ("title", OP.TEXT_MATCH, "Highlight", {"todo"}),
    ("title", OP.TEXT_MATCH, "faq", set()),
    ("title", OP.TEXT_MATCH_INSENSITIVE, "faq", {"bare"}),
    ("file_name", OP.TEXT_MATCH_INSENSITIVE, "TODO", {"todo"}),
]


def _nodes() -> list[TextNode]:
    return [TextNode(text=f"the editor page {k}", id_=k, metadata=md) for k, md in NODES.items()]


@pytest.fixture(scope="module")
def ours() -> VectorStoreIndex:
    store = TreehopVectorStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    return VectorStoreIndex(
        _nodes(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )


@pytest.fixture(scope="module")
def simple() -> VectorStoreIndex:
    return VectorStoreIndex(_nodes(), embed_model=WordHashEmbedding())


def _ids(index: VectorStoreIndex, filters: MetadataFilters) -> set[str]:
    retriever = index.as_retriever(similarity_top_k=10, filters=filters)
    return {h.node.node_id for h in retriever.retrieve("the editor page")}


def _one(key: str, op: FilterOperator, value: Any) -> MetadataFilter:
    return MetadataFilter(key=key, value=value, operator=op)


def test_the_premise_every_node_is_found_without_a_filter(
    ours: VectorStoreIndex, simple: VectorStoreIndex
) -> None:
    every = MetadataFilters(filters=[])
    assert _ids(ours, every) == _ids(simple, every) == set(NODES)


@pytest.mark.parametrize(("key", "op", "value", "kept"), CASES)
def test_a_filter_keeps_what_simple_vector_store_keeps(
    ours: VectorStoreIndex,
    simple: VectorStoreIndex,
    key: str,
    op: FilterOperator,
    value: object,
    kept: set[str],
) -> None:
    filters = MetadataFilters(filters=[_one(key, op, value)])
    assert _ids(simple, filters) == kept  # (the reference, as the table says)
    assert _ids(ours, filters) == kept


@pytest.mark.parametrize(
    ("key", "op", "value"),
    [
        ("file_name", OP.CONTAINS, "faq"),
        ("labels", OP.CONTAINS, "faq"),
        ("file_name", OP.ANY, ["faq", "TO"]),
        ("file_name", OP.ALL, ["faq", "html"]),
    ],
)
def test_under_not_and_or_the_same_nodes_are_kept(
    ours: VectorStoreIndex,
    simple: VectorStoreIndex,
    key: str,
    op: FilterOperator,
    value: object,
) -> None:
    """Under ``NOT`` a missing key counts as not containing (both keep ``bare``); ``OR``
    with a second filter."""
    for filters in (
        MetadataFilters(filters=[_one(key, op, value)], condition=FilterCondition.NOT),
        MetadataFilters(
            filters=[_one(key, op, value), _one("title", OP.TEXT_MATCH, "Syntax")],
            condition=FilterCondition.OR,
        ),
    ):
        assert _ids(ours, filters) == _ids(simple, filters)
        assert _ids(ours, filters) not in (set(), set(NODES))


def test_an_empty_text_is_refused_saying_it_filters_nothing() -> None:
    """``"" in s`` holds for every string ``s``: the DSL cannot say "is a string", so the
    filter is refused with the advice that keeps the nodes with a value."""
    for op, value in ((OP.CONTAINS, ""), (OP.ANY, ["faq", ""]), (OP.ALL, [""])):
        with pytest.raises(InvalidFilterError, match="empty text is inside every string"):
            to_treehop_filters(MetadataFilters(filters=[_one("file_name", op, value)]))


def test_a_text_longer_than_the_substring_bound_is_refused_by_its_own_name() -> None:
    long = "x" * (MAX_TEXT_MATCH_CHARS + 1)
    with pytest.raises(InvalidFilterError, match=r"contains compares a text of at most 1000"):
        to_treehop_filters(MetadataFilters(filters=[_one("file_name", OP.CONTAINS, long)]))
    ok = to_treehop_filters(MetadataFilters(filters=[_one("file_name", OP.CONTAINS, long[:-1])]))
    assert ok.filter is not None and ok.filter["value"] == long[:-1]
