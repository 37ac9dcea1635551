"""Framework users' leftovers, round five (bench/README.md, "(helper usage64)"): what
usage63 left open, decided as a LangChain / LangGraph / LlamaIndex user expects from the
framework's own in-memory equivalent. Each test fails on 3908f4b (main before this round)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.store.memory import InMemoryStore

from langchain_treehop import TreehopRetriever, TreehopStore
from treehop import InvalidQueryError, Treehop, UnsupportedUseError

from treehop_test_doubles import BagOfWordsEmbedder, indexed_kb

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with indexed_kb(tmp_path) as th:
        yield th


def test_an_empty_find_result_is_falsy_and_its_length_counts_the_hits(client: Treehop) -> None:
    # 3908f4b: bool(FindResult) was always True (pydantic), so `if not res:` never fired on a
    # result without hits; a retriever's list answers `if not docs:` and len(docs)
    res = client.find("rotate api keys", limit=2)
    assert res.contexts()
    assert len(res) == len(res.contexts())
    assert res
    empty = client.find("rotate api keys", score_threshold=0.999)
    assert empty.contexts() == []
    assert len(empty) == 0
    assert not empty
    # counted over every context type, neighbours included, as contexts() lists them
    both = res.model_copy(update={"memories": res.resources[:1]})
    assert len(both) == len(res) + 1 == len(both.contexts())
    # iteration still refuses (a length is not a sequence): the hits are in res.contexts()
    with pytest.raises(UnsupportedUseError, match=r"res\.contexts\(\)"):
        list(res)


def test_langchain_retriever_k_is_strict_as_the_vector_stores(client: Treehop) -> None:
    # 3908f4b: invoke(q, k="1") and k=True were read as 1 by pydantic's lax mode;
    # InMemoryVectorStore's retriever raises TypeError on "1", our vector stores raise
    # InvalidQueryError ("k must be an integer")
    reference = InMemoryVectorStore.from_documents(
        [Document(page_content="keys rotate")], embedding=_LCEmbeddings()
    ).as_retriever()
    with pytest.raises(TypeError):
        reference.invoke("keys", k="1")
    retriever = TreehopRetriever(client=client)
    assert len(retriever.invoke("rotate api keys", k=1)) == 1
    for bad in ("1", True, 1.0):
        with pytest.raises(InvalidQueryError, match=r"\bk\b"):
            retriever.invoke("rotate api keys", k=bad)
        with pytest.raises(InvalidQueryError, match=r"\bk\b"):
            asyncio.run(retriever.ainvoke("rotate api keys", k=bad))
        with pytest.raises(ValueError, match=r"\bk\b"):
            TreehopRetriever(client=client, k=bad)
    with pytest.raises(InvalidQueryError, match="fetch_k"):
        TreehopRetriever(client=client, search_type="mmr").invoke("keys", fetch_k="3")


def test_langgraph_store_keeps_a_value_s_key_order_as_in_memory_store(tmp_path: Path) -> None:
    # 3908f4b: TreehopStore answered the keys sorted (its JSON was written with sort_keys)
    value = {"zeta": 1, "alpha": {"y": 2, "b": [3, {"k2": 1, "k1": 0}]}, "mid": "x"}
    reference = InMemoryStore()
    reference.put(("u",), "k", value)
    store = TreehopStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    store.put(("u",), "k", value)
    want = reference.get(("u",), "k")
    got = store.get(("u",), "k")
    assert want is not None and got is not None
    assert got.value == want.value == value
    assert list(got.value) == list(want.value) == ["zeta", "alpha", "mid"]
    assert list(got.value["alpha"]) == ["y", "b"]
    assert list(got.value["alpha"]["b"][1]) == ["k2", "k1"]
    assert list(store.search(("u",))[0].value) == ["zeta", "alpha", "mid"]
    # a value mixing int and str keys stays refused (its keys would collide as JSON strings)
    with pytest.raises(InvalidQueryError, match="JSON-serialisable"):
        store.put(("u",), "k2", {1: "a", "1": "b"})


def test_llama_index_reopen_without_embed_model_is_documented_and_the_fix_runs() -> None:
    # VectorStoreIndex.from_vector_store(store) resolves Settings.embed_model (OpenAI) inside
    # LlamaIndex before the store is asked; docs/llamaindex.md names the one-line fixes
    from llama_index.core import Document as LIDocument
    from llama_index.core import Settings, StorageContext, VectorStoreIndex

    from llama_index.vector_stores.treehop import TreehopVectorStore

    doc = (REPO / "docs" / "llamaindex.md").read_text(encoding="utf-8")
    assert "from_vector_store(store)` without `embed_model`" in doc
    assert "Settings.embed_model = store.embed_model" in doc
    store = TreehopVectorStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    VectorStoreIndex.from_documents(
        [LIDocument(text="Keys rotate every 90 days.", id_="faq")],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    saved = Settings._embed_model
    try:
        Settings.embed_model = store.embed_model
        nodes = VectorStoreIndex.from_vector_store(store).as_retriever().retrieve("keys rotate")
    finally:
        Settings._embed_model = saved
    assert [n.node.ref_doc_id for n in nodes] == ["faq"]


class _LCEmbeddings:
    """LangChain's embeddings interface over the test double (the reference store's model)."""

    def __init__(self) -> None:
        self._inner = BagOfWordsEmbedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, v)) for v in self._inner.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
