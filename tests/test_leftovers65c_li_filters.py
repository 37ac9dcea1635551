"""LlamaIndex's ``MetadataFilter(value=None)`` names the field and the filter that works
(helper leftovers65c).

``MetadataFilter(key="lang", value=None)`` is a user's guess for "the nodes without a
language" (``SimpleVectorStore`` matches a missing key as ``None``). It was refused as
"operator '==' takes one scalar value", naming neither the field nor
``FilterOperator.IS_EMPTY``. Now ``==`` / ``in`` name ``IS_EMPTY`` and ``!=`` / ``nin`` its
``NOT`` group, over the vector store and the retriever alike; the control checks that the
filters named answer as the message says.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.retrievers.treehop import TreehopEmbedding, TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

_EMPTY = "MetadataFilter(key='lang', value=None, operator=FilterOperator.IS_EMPTY)"
_NOT_EMPTY = f"MetadataFilters(filters=[{_EMPTY}], condition=FilterCondition.NOT)"


@pytest.fixture
def store() -> Iterator[TreehopVectorStore]:
    embed = TreehopEmbedding(BagOfWordsEmbedder())
    s = TreehopVectorStore(embed_model=embed, tagger=None)
    nodes = [
        TextNode(id_="null", text="autoescape protects html output", metadata={"lang": None}),
        TextNode(id_="en", text="trim blocks removes a newline", metadata={"lang": "en"}),
        TextNode(id_="missing", text="the sandbox restricts attributes", metadata={"other": 1}),
    ]
    for n in nodes:
        n.embedding = embed.get_text_embedding(n.text)
    s.add(nodes)
    yield s
    s.close()


def _query(store: TreehopVectorStore, filters: MetadataFilters) -> list[str]:
    q = "html newline sandbox"
    emb = TreehopEmbedding(BagOfWordsEmbedder()).get_query_embedding(q)
    res = store.query(
        VectorStoreQuery(query_embedding=emb, query_str=q, similarity_top_k=5, filters=filters)
    )
    return sorted(res.ids or [])


@pytest.mark.parametrize(
    ("op", "hint"),
    [
        (FilterOperator.EQ, f"{_EMPTY} keeps the nodes without a value for 'lang'"),
        (FilterOperator.IN, f"{_EMPTY} keeps the nodes without a value for 'lang'"),
        (FilterOperator.NE, f"{_NOT_EMPTY} keeps the nodes with a value for 'lang'"),
        (FilterOperator.NIN, f"{_NOT_EMPTY} keeps the nodes with a value for 'lang'"),
    ],
)
def test_none_names_the_field_and_is_empty(
    store: TreehopVectorStore, op: FilterOperator, hint: str
) -> None:
    flt = MetadataFilters(filters=[MetadataFilter(key="lang", value=None, operator=op)])
    with pytest.raises(InvalidFilterError) as caught:
        _query(store, flt)
    message = str(caught.value)
    assert f"'lang {op.value} None'" in message
    assert "None is not a value a filter compares" in message
    assert hint in message
    # the same words inside an OR group, and from the native retriever at construction
    nested = MetadataFilters(
        filters=[MetadataFilter(key="other", value=1), flt], condition=FilterCondition.OR
    )
    with pytest.raises(InvalidFilterError, match=r"operator=FilterOperator\.IS_EMPTY"):
        _query(store, nested)
    with pytest.raises(InvalidFilterError, match=r"operator=FilterOperator\.IS_EMPTY"):
        TreehopRetriever(store.client, filters=flt)


def test_the_filters_the_message_names_answer_as_it_says(store: TreehopVectorStore) -> None:
    """Control (passes without the change): ``IS_EMPTY`` keeps the node stored with null and
    the one without the key; its ``NOT`` group the one with a language."""
    empty = MetadataFilter(key="lang", value=None, operator=FilterOperator.IS_EMPTY)
    assert _query(store, MetadataFilters(filters=[empty])) == ["missing", "null"]
    not_empty = MetadataFilters(filters=[empty], condition=FilterCondition.NOT)
    assert _query(store, MetadataFilters(filters=[not_empty])) == ["en"]
