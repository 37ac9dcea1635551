"""A retriever dropped without ``close()`` closes the client it opened when it is collected,
and never one the caller passed (helper leftovers68b, bench/README.md "(helper
leftovers68b)"; usage78's open item).

LangChain's ``TreehopRetriever.from_path`` and LlamaIndex's ``from_defaults(path=...)`` open
a client that only ``close()`` released (usage78): a retriever dropped unclosed held the
store's files until a cyclic collection freed the store unsaved (its model pools unclosed),
and LlamaIndex's ``Treehop`` kept its loop thread until exit. The client is now closed, in a
thread of its own, when its retriever is collected; LangChain's retrievers that share a
client (a configured run's rebuild, a copy) close it when the last of them is.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.runnables import ConfigurableField, RunnableConfig
from llama_index.core.schema import TextNode

from langchain_treehop import TreehopRetriever
from langchain_treehop.retrievers import _VARIANTS
from llama_index.retrievers.treehop import TreehopRetriever as LlamaRetriever
from treehop import AsyncTreehop, Treehop

from treehop_test_doubles import BagOfWordsEmbedder, index_files_open, two_note_index

QUERY = "tides in the harbour"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return two_note_index(tmp_path / "idx")


def _within(seconds: float, done: Callable[[], bool]) -> bool:
    """Whether ``done()`` holds within ``seconds`` (the close runs in a thread of its own)."""
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


def _collect() -> None:
    gc.collect()
    gc.collect()


def test_a_langchain_retriever_dropped_closes_the_client_it_opened(index: Path) -> None:
    # c3a05a97: the client stays open (held here: nothing closes it; unheld, a cyclic
    # collection freed its store unsaved)
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    assert len(r.invoke(QUERY)) == 1
    client = r.client
    assert isinstance(client, AsyncTreehop) and index_files_open(index) != []
    del r
    _collect()
    assert _within(10, lambda: client._closed and index_files_open(index) == [])


def test_a_rebuild_or_copy_keeps_the_shared_client_until_the_last_is_dropped(
    index: Path,
) -> None:
    # c3a05a97: never closed (the last assertion)
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    client = r.client
    assert isinstance(client, AsyncTreehop)
    conf = r.configurable_fields(k=ConfigurableField(id="k"))
    config: RunnableConfig = {"configurable": {"k": 2}}
    assert len(conf.invoke(QUERY, config=config)) == 2  # (a rebuild, dropped after the run)
    copy = r.model_copy()
    del r, conf
    _collect()
    time.sleep(0.3)  # (a close, had one started, runs aside)
    assert not client._closed
    assert len(copy.invoke(QUERY)) == 1  # (the copy still answers)
    del copy
    _collect()
    assert _within(10, lambda: client._closed and index_files_open(index) == [])


def test_a_configured_runs_own_client_is_closed_with_its_root(index: Path) -> None:
    # c3a05a97: neither closed
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    root = r.client
    conf = r.configurable_fields(embedding=ConfigurableField(id="emb"))
    config: RunnableConfig = {"configurable": {"emb": BagOfWordsEmbedder()}}
    assert len(conf.invoke(QUERY, config=config)) == 1
    variants = [variant for _, variant in _VARIANTS.get(root, ())]
    assert len(variants) == 1 and variants[0] is not root  # (the run's own client)
    del r, conf
    _collect()
    assert _within(10, lambda: root._closed and variants[0]._closed)  # type: ignore[union-attr]
    assert index_files_open(index) == []


def test_a_langchain_retriever_over_a_callers_client_leaves_it_open_control(
    index: Path,
) -> None:
    # control: a client the caller passed is the caller's to close
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        r = TreehopRetriever(client=th, k=1)
        assert len(r.invoke(QUERY)) == 1
        del r
        _collect()
        time.sleep(0.3)
        assert th.find(QUERY, limit=1).contexts()
        assert index_files_open(index) != []
    assert index_files_open(index) == []


def test_a_llamaindex_retriever_dropped_closes_the_treehop_it_opened(index: Path) -> None:
    # c3a05a97: the Treehop stays open, its loop thread running until exit
    r = LlamaRetriever.from_defaults(
        path=index, embed_model=BagOfWordsEmbedder(), similarity_top_k=1
    )
    assert len(r.retrieve(QUERY)) == 1
    client = r.client
    assert isinstance(client, Treehop)
    loop_thread = client._runner._thread
    assert loop_thread.is_alive()
    del r
    _collect()
    assert _within(10, lambda: client._runner.closed and index_files_open(index) == [])
    loop_thread.join(5)
    assert not loop_thread.is_alive()


def test_what_a_dropped_llamaindex_retriever_added_is_saved(tmp_path: Path) -> None:
    # c3a05a97: never closed; here the written index is read back by a new client
    idx = tmp_path / "idx"
    r = LlamaRetriever.from_defaults(
        path=idx,
        embed_model=BagOfWordsEmbedder(),
        documents=[TextNode(text="The ferry leaves at noon.", id_="ferry")],
        similarity_top_k=1,
    )
    client = r.client
    assert isinstance(client, Treehop)
    del r
    _collect()
    assert _within(10, lambda: client._runner.closed)
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        assert "ferry" in th.find("ferry noon", limit=1).contexts()[0].content


def test_a_llamaindex_retriever_over_a_callers_client_leaves_it_open_control(
    index: Path,
) -> None:
    # control: from_defaults(client) and the constructor: the caller's client stays open
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for r in (LlamaRetriever.from_defaults(th, similarity_top_k=1), LlamaRetriever(th)):
            assert r.retrieve(QUERY)
        del r
        _collect()
        time.sleep(0.3)
        assert not th._runner.closed and th.find(QUERY, limit=1).contexts()
    assert index_files_open(index) == []
