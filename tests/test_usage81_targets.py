"""A vector store's ``target_uri`` naming no node is a ``NotFoundError``, as ``find()`` says.

helper usage81: LlamaIndex ``index.as_retriever(vector_store_kwargs={"target_uri":
"viking://resources/FAQ.md"})`` over a store holding ``FAQ.txt`` answered ``[]``, and so did
LangChain's ``similarity_search(q, target_uri="key.md")`` for a stored ``keys.md``: the stores
dropped a target naming no node in silence, where ``find()``, both retrievers, the CLI and MCP
answer it ``unknown target URI(s): ...`` and a misspelt filter field is refused by the
same stores. A store with nothing under its base yet still answers ``[]`` (an empty scope)."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode

from langchain_treehop import TreehopVectorStore as LCStore
from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore
from treehop import Treehop
from treehop.errors import NotFoundError

from treehop_test_doubles import BagOfWordsEmbedder

BASE = "viking://resources/docs"


@pytest.fixture
def lc() -> LCStore:
    th = Treehop(None, embedder=BagOfWordsEmbedder())
    store = LCStore(client=th, base_uri=BASE)
    store.add_texts(
        ["Keys rotate every 90 days.", "Deploys roll back with one command."],
        metadatas=[{"source": "keys.md"}, {"source": "ops/deploy.md"}],
    )
    return store


@pytest.mark.parametrize("target", ["key.md", f"{BASE}/key.md", ["keys.md", "ops/nope.md"]])
def test_a_langchain_search_naming_no_node_says_so(lc: LCStore, target: object) -> None:
    with pytest.raises(NotFoundError, match="unknown target URI"):
        lc.similarity_search("keys rotate", k=2, target_uri=target)
    with pytest.raises(NotFoundError, match="unknown target URI"):
        asyncio.run(lc.asimilarity_search("keys rotate", k=2, target_uri=target))
    with pytest.raises(NotFoundError, match=r"nope\.md|key\.md"):
        lc.as_retriever(search_kwargs={"k": 2, "target_uri": target}).invoke("keys rotate")


def test_control_langchain_targets_that_exist_and_no_target(lc: LCStore) -> None:
    assert [d.page_content for d in lc.similarity_search("keys", k=2, target_uri="keys.md")] == [
        "Keys rotate every 90 days."
    ]
    assert len(lc.similarity_search("deploys", k=2, target_uri="ops")) == 1
    assert len(lc.similarity_search("keys", k=2)) == 2


def test_control_an_empty_store_answers_nothing_for_any_target() -> None:
    store = LCStore(client=Treehop(None, embedder=BagOfWordsEmbedder()), base_uri=BASE)
    assert store.similarity_search("keys", k=2, target_uri="keys.md") == []
    assert store.similarity_search("keys", k=2) == []


def _li_index() -> VectorStoreIndex:
    store = LIStore(client=Treehop(None, embedder=BagOfWordsEmbedder()))
    nodes = [
        TextNode(
            text="Chronyd steps the clock with makestep.",
            id_="a",
            metadata={"file_path": "FAQ.txt"},
        ),
        TextNode(
            text="Use the pool directive for NTP servers.",
            id_="b",
            metadata={"file_path": "README.txt"},
        ),
    ]
    return VectorStoreIndex(
        nodes,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )


def test_a_llamaindex_query_naming_no_node_says_so() -> None:
    index = _li_index()
    for target in ("viking://resources/FAQ.md", "faq.txt"):
        retriever = index.as_retriever(vector_store_kwargs={"target_uri": target})
        with pytest.raises(NotFoundError, match="unknown target URI"):
            retriever.retrieve("clock steps")
        with pytest.raises(NotFoundError, match="unknown target URI"):
            asyncio.run(retriever.aretrieve("clock steps"))
    ok = index.as_retriever(vector_store_kwargs={"target_uri": "FAQ.txt"}).retrieve("clock steps")
    assert [n.node.node_id for n in ok] == ["a"]  # control: the file named as stored


def test_a_misspelt_vector_store_kwargs_key_names_the_key_meant() -> None:
    index = _li_index()
    for given, meant in (("target_ur", "target_uri"), ("mmr_treshold", "mmr_threshold")):
        retriever = index.as_retriever(vector_store_kwargs={given: "FAQ.txt"})
        with pytest.raises(TypeError, match=f"did you mean '{meant}'"):
            retriever.retrieve("clock steps")
    with pytest.raises(TypeError, match=r"\['zzz'\]\.$"):  # control: no guess for no likeness
        index.as_retriever(vector_store_kwargs={"zzz": 1}).retrieve("clock steps")
