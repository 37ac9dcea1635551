"""What LangChain / LangGraph users expect, where usage57 and store57 left open items (usage58).

- ``TreehopRetriever(k=0)`` / ``invoke(q, k=0)`` was refused (pydantic ``ge=1``) while
  LangChain's ``VectorStoreRetriever`` (and our own vector store's ``as_retriever``) answers
  ``[]``: now ``[]`` after the call's checks, unsearched.
- ``TreehopStore.search(ns, query="  ")`` was ``InvalidQueryError: query is empty``; LangGraph's
  ``InMemoryStore`` answers it (it embeds the blank), as it lists for ``""``: now listed as
  no query is.
- A ``from_path`` retriever under ``configurable_fields(embedding=...)`` opened a new client
  (an embedded store: threads, file handles) on every configured run and never closed it: now
  one client per configuration.
- With uuid4 keys (LangGraph's memory tools) a third of a namespace's overview was key hex:
  an overview line of a child named by an id is its abstract alone.
"""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import ConfigurableField
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.store.memory import InMemoryStore

from langchain_treehop import TreehopEmbeddings, TreehopRetriever, TreehopStore, TreehopVectorStore
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
]
METAS = [{"source": "ops/rollback.md"}, {"source": "sec/keys.md"}, {"source": "misc/food.md"}]


@pytest.fixture
def store() -> Iterator[TreehopVectorStore]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        s = TreehopVectorStore(client=client)
        s.add_texts(TEXTS, metadatas=METAS)
        yield s


# ------------------------------------------------------------------ 1. TreehopRetriever k=0
def test_retriever_k_zero_answers_nothing_as_langchains_retriever_does(
    store: TreehopVectorStore,
) -> None:
    reference = InMemoryVectorStore.from_texts(TEXTS, store.embeddings, metadatas=METAS)
    assert reference.as_retriever(search_kwargs={"k": 0}).invoke("roll back") == []
    assert reference.as_retriever().invoke("roll back", k=0) == []
    ours = TreehopRetriever(client=store.client, k=0)
    assert ours.invoke("roll back") == []
    assert asyncio.run(ours.ainvoke("roll back")) == []
    assert ours.batch(["roll back", "api keys"]) == [[], []]
    assert asyncio.run(ours.abatch(["roll back", "api keys"])) == [[], []]
    one = TreehopRetriever(client=store.client, k=1)
    assert one.invoke("roll back", k=0) == []
    assert [d.metadata["source"] for d in one.invoke("roll back")] == ["ops/rollback.md"]


def test_retriever_k_zero_is_checked_like_any_other_call(store: TreehopVectorStore) -> None:
    r = TreehopRetriever(client=store.client)
    with pytest.raises(InvalidFilterError, match="sourse"):
        r.invoke("roll back", k=0, metadata_filter={"sourse": "x"})
    with pytest.raises(InvalidQueryError, match="empty"):
        r.invoke("  ", k=0)
    with pytest.raises(InvalidQueryError, match="greater than or equal to 0"):
        r.invoke("roll back", k=-1)
    with pytest.raises(InvalidQueryError, match=r"\['colour'\]"):
        r.invoke("roll back", k=0, colour="red")


# ------------------------------------------------------------------ 3. a blank store query
def test_store_search_with_a_blank_query_lists_the_items() -> None:
    fake = DeterministicFakeEmbedding(size=16)
    ours = TreehopStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    reference = InMemoryStore(index={"embed": fake, "dims": 16, "fields": ["text"]})
    for s in (ours, reference):
        s.put(("u",), "b", {"text": "apple pie"})
        s.put(("u",), "a", {"text": "zebra stripes"})
    for blank in ("  ", "\n\t", "\u3000"):
        # InMemoryStore answers with every item (ranked by a vector of whitespace)
        assert {i.key for i in reference.search(("u",), query=blank)} == {"a", "b"}
        got = ours.search(("u",), query=blank)
        assert [(i.key, i.score) for i in got] == [("a", None), ("b", None)]  # as no query
        assert [i.key for i in ours.search(("u",), query=blank, limit=1, offset=1)] == ["b"]
        assert asyncio.run(ours.asearch(("u",), query=blank)) == got
    assert [i.key for i in ours.search(("u",), query="zebra stripes", limit=1)] == ["a"]
    with pytest.raises(InvalidQueryError, match="query must be a string"):
        ours.search(("u",), query=5)  # type: ignore[arg-type]


# ------------------------------------------------------------------ 4. one client per configuration
def _live_clients() -> int:
    gc.collect()
    return sum(isinstance(o, AsyncTreehop) for o in gc.get_objects())


def test_configured_embedding_reuses_one_client_per_configuration(tmp_path: Path) -> None:
    path = tmp_path / "index"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        TreehopVectorStore(client=th).add_texts(TEXTS, metadatas=METAS)
    first, second = TreehopEmbeddings(BagOfWordsEmbedder()), TreehopEmbeddings(BagOfWordsEmbedder())
    retriever = TreehopRetriever.from_path(path, embedding=first, k=1)
    configurable = retriever.configurable_fields(embedding=ConfigurableField(id="emb"))

    def rebuilt(emb: TreehopEmbeddings) -> TreehopRetriever:
        config = {"configurable": {"emb": emb}}
        built = configurable.with_config(config)._prepare(config)[0]  # type: ignore[attr-defined]
        assert isinstance(built, TreehopRetriever)
        return built

    other = rebuilt(second).client
    assert other is not retriever.client  # opened with the configured embedding
    assert isinstance(other, AsyncTreehop) and other.embedder is not retriever.client.embedder
    before = _live_clients()
    for _ in range(5):  # every run with that configuration: the same client
        assert rebuilt(second).client is other
        docs = configurable.with_config(configurable={"emb": second}).invoke("roll back")
        assert [d.metadata["source"] for d in docs] == ["ops/rollback.md"]
    assert rebuilt(first).client is retriever.client  # the first configuration: the first client
    assert _live_clients() == before  # nothing opened per run
    third = TreehopEmbeddings(BagOfWordsEmbedder())
    assert rebuilt(third).client not in (retriever.client, other)
    assert rebuilt(third).client is rebuilt(third).client


# ------------------------------------------------------------------ 5. uuid keys in overviews
def test_uuid_keys_spend_no_overview_characters() -> None:
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    store = TreehopStore(client, index_fields=["text"])
    notes = [f"note {i}: prefers oat milk in coffee number {i}" for i in range(40)]
    keys = [str(uuid.UUID(int=0x1234_5678_9ABC_4DEF_8123_4567_89AB_CDEF + i)) for i in range(40)]
    for key, text in zip(keys, notes, strict=True):
        store.put(("memories", "u1"), key, {"text": text})
    store.put(("memories", "u1"), "0-favourite-drink", {"text": "flat white"})
    store.put(("memories", "u1"), "0" * 40, {"text": "forty hex digits: an id too"})
    node = client.store.get([store.namespace_uri(("memories", "u1"))])[0]
    assert node is not None
    overview = node.overview
    lines = overview.split("\n")[1:]
    assert "- @0 favourite drink: flat white" in lines  # a name with words keeps its place
    assert "- forty hex digits: an id too" in lines
    assert "- note 0: prefers oat milk in coffee number 0" in lines
    for key in keys:  # no key hex, humanized or not
        assert key not in overview and key.replace("-", " ") not in overview
        assert key[:8] not in overview
    # the characters go to the items' words: more items fit before the cut
    assert sum(line.startswith("- note ") for line in lines) >= 30
