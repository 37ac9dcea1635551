"""A vector store nothing was added to answers a filtered query ``[]``, as an unfiltered one.

helper usage86: README's LangChain chain copied verbatim over a built Sphinx manual
(``Path("docs").rglob("*.md")`` matched nothing: the folder holds ``.html``), so
``from_documents([])`` made an empty store, and the chain's retriever (``filter:
{"start_index": {"$lt": 5000}}``) raised ``InvalidFilterError: no stored node has metadata
field(s) ['start_index'] ... stored fields: (none)``: a filter field cannot be a typo where
nothing is stored, the same store answered ``[]`` unfiltered and for a ``target_uri``
(usage81's rule), and LangChain's ``InMemoryVectorStore`` / LlamaIndex's ``SimpleVectorStore``
answer ``[]``. Once anything is stored the field check holds (controls), and a filter on
provenance (``score``) is refused either way."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.embeddings import FakeEmbeddings
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    SimpleVectorStore,
)
from llama_index.core.vector_stores.types import VectorStoreQuery

from langchain_treehop import TreehopVectorStore as LCStore
from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

LC_FILTER = {"start_index": {"$lt": 5000}}


def _lc() -> LCStore:
    return LCStore.from_documents([], client=Treehop(None, embedder=BagOfWordsEmbedder()))


def test_the_premise_langchains_own_empty_store_answers_a_filter_with_nothing() -> None:
    store = InMemoryVectorStore.from_documents([], FakeEmbeddings(size=4))
    assert store.similarity_search("x", k=2, filter=lambda d: d.metadata["start_index"] < 5) == []


def test_an_empty_langchain_store_answers_a_filtered_query_with_nothing() -> None:
    store = _lc()
    assert store.similarity_search("oauth tokens", k=2, filter=LC_FILTER) == []
    assert asyncio.run(store.asimilarity_search("oauth", k=2, filter={"source": "a.md"})) == []
    retriever = store.as_retriever(search_type="mmr", search_kwargs={"k": 4, "filter": LC_FILTER})
    assert retriever.invoke("How are OAuth tokens validated?") == []
    assert store.similarity_search("oauth", k=2, tags=["team"]) == []


def test_an_empty_llamaindex_store_answers_a_filtered_query_with_nothing() -> None:
    store = LIStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    flt = MetadataFilters(filters=[MetadataFilter(key="file_name", value="faq.md")])
    vec = BagOfWordsEmbedder().embed(["oauth"])[0].tolist()
    q = VectorStoreQuery(query_embedding=vec, query_str="oauth", similarity_top_k=2, filters=flt)
    assert store.query(q).nodes == []
    assert asyncio.run(store.aquery(q)).nodes == []
    assert store.get_nodes(filters=flt) == []
    simple = SimpleVectorStore()
    assert simple.query(q).ids == []  # the premise: LlamaIndex's own store


def test_control_a_filled_store_still_refuses_a_field_no_node_has() -> None:
    store = _lc()
    store.add_texts(["Keys rotate every 90 days."], metadatas=[{"source": "keys.md"}])
    with pytest.raises(InvalidFilterError, match=r"start_index.*stored fields: .*source"):
        store.similarity_search("keys", k=2, filter=LC_FILTER)
    assert len(store.similarity_search("keys", k=2, filter={"source": "keys.md"})) == 1
    li = LIStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    vec = BagOfWordsEmbedder().embed(["keys rotate"])[0].tolist()
    li.add([TextNode(text="Keys rotate.", metadata={"file_name": "keys.md"}, embedding=vec)])
    typo = MetadataFilters(filters=[MetadataFilter(key="filename", value="keys.md")])
    with pytest.raises(InvalidFilterError, match=r"filename.*stored fields: .*file_name"):
        li.query(VectorStoreQuery(query_embedding=vec, similarity_top_k=2, filters=typo))
    with pytest.raises(InvalidFilterError, match="filename"):
        li.get_nodes(filters=typo)


@pytest.mark.parametrize("flt", [{"score": {"$gt": 0.5}}, {"found_by": "global"}])
def test_control_an_empty_store_still_refuses_a_filter_on_provenance(flt: dict) -> None:
    with pytest.raises(InvalidFilterError, match="provenance"):
        _lc().similarity_search("keys", k=2, filter=flt)


def test_control_an_empty_store_still_refuses_a_malformed_filter() -> None:
    with pytest.raises(InvalidFilterError):
        _lc().similarity_search("keys", k=2, filter={"start_index": {"$near": 5}})
    li = LIStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    bad = MetadataFilters(filters=[MetadataFilter(key="n", value=[], operator=FilterOperator.IN)])
    vec = BagOfWordsEmbedder().embed(["oauth"])[0].tolist()
    with pytest.raises(InvalidFilterError):
        li.query(VectorStoreQuery(query_embedding=vec, similarity_top_k=2, filters=bad))
