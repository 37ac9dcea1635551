"""An empty value list in a LlamaIndex filter (helper usage80).

A list of exclusions built at run time (``NIN`` the files a user hid, often none) is empty:
``SimpleVectorStore`` keeps every node for ``nin []`` and ``all []``, none for ``in []``.
treehop refuses an empty list (as its LangChain package and core DSL do), and the refusal
said "it would match nothing" for every operator: the opposite of what ``nin []`` and
``all []`` ask. The message now says what each one asks, and the advice it gives holds.
"""

from __future__ import annotations

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    SimpleVectorStore,
)

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = {
    "faq": "How do I enable syntax highlighting in the editor?",
    "todo": "Syntax highlighting for more languages is planned.",
    "authors": "The editor was written by many authors.",
}


def _nodes() -> list[TextNode]:
    return [
        TextNode(text=t, id_=k, metadata={"file_name": k, "labels": [k, "doc"]})
        for k, t in TEXTS.items()
    ]


def _filters(op: FilterOperator, key: str = "file_name") -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, value=[], operator=op)])


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    store = TreehopVectorStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    return VectorStoreIndex(
        _nodes(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )


def _ids(index: VectorStoreIndex, filters: MetadataFilters | None) -> set[str]:
    retriever = index.as_retriever(similarity_top_k=10, filters=filters)
    return {h.node.node_id for h in retriever.retrieve("syntax highlighting editor")}


def test_the_premise_simple_vector_store_keeps_every_node_for_nin_and_all() -> None:
    simple = VectorStoreIndex(_nodes(), embed_model=WordHashEmbedding())
    assert _ids(simple, _filters(FilterOperator.NIN)) == set(TEXTS)
    assert _ids(simple, _filters(FilterOperator.ALL, "labels")) == set(TEXTS)
    assert _ids(simple, _filters(FilterOperator.IN)) == set()


@pytest.mark.parametrize(
    ("op", "key"), [(FilterOperator.NIN, "file_name"), (FilterOperator.ALL, "labels")]
)
def test_an_empty_list_that_keeps_everything_says_so_and_the_advice_holds(
    index: VectorStoreIndex, op: FilterOperator, key: str
) -> None:
    client = index.vector_store.client
    for run in (
        lambda: _ids(index, _filters(op, key)),
        lambda: TreehopRetriever(client, filters=_filters(op, key)).retrieve("syntax"),
    ):
        with pytest.raises(InvalidFilterError) as err:
            run()
        msg = str(err.value)
        assert "match nothing" not in msg
        assert "leave the filter out to keep every node" in msg
    # The advice followed: no filter keeps every node, as SimpleVectorStore's answer.
    assert _ids(index, None) == set(TEXTS)


@pytest.mark.parametrize("op", [FilterOperator.IN, FilterOperator.ANY])
def test_control_an_empty_in_list_still_says_it_would_match_nothing(
    index: VectorStoreIndex, op: FilterOperator
) -> None:
    with pytest.raises(InvalidFilterError, match=r"value list is empty \(it would match nothing\)"):
        _ids(index, _filters(op))


def test_control_the_store_is_a_treehop_store(index: VectorStoreIndex) -> None:
    assert isinstance(index.vector_store, TreehopVectorStore)
    assert not isinstance(index.vector_store, SimpleVectorStore)
