"""``TreehopRetriever.from_path`` closes what it opened: ``close()`` / ``aclose()`` / ``with``
(helper usage78).

``TreehopRetriever.from_path(path)`` opens an ``AsyncTreehop`` on the index; a LangChain
retriever has no lifecycle, and nothing closed it: the store's files (``nodes.bin``) and its
threads stayed open until the process exited (leftovers67a, left alone). The retriever now
closes the client it opened, and only that one: a client the caller passed is left open.
The store is checked closed by what the process holds: its descriptors into the index folder.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langchain_core.runnables import ConfigurableField, RunnableConfig

from langchain_treehop import TreehopRetriever
from treehop import AsyncTreehop, Treehop
from treehop.errors import ClientClosedError

from treehop_test_doubles import BagOfWordsEmbedder, index_files_open, two_note_index

QUERY = "tides in the harbour"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return two_note_index(tmp_path / "idx")


def test_close_closes_the_store_from_path_opened(index: Path) -> None:
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    assert r.invoke(QUERY)[0].page_content.startswith("The tides")
    assert index_files_open(index) != []  # (premise: the opened store holds its files)
    r.close()
    assert index_files_open(index) == []
    with pytest.raises(ClientClosedError):
        r.invoke(QUERY)
    r.close()  # (again: nothing)


def test_with_and_async_with_close_it(index: Path) -> None:
    with TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1) as r:
        assert len(r.invoke(QUERY)) == 1
    assert index_files_open(index) == []
    with pytest.raises(ClientClosedError):
        r.invoke(QUERY)

    async def run() -> TreehopRetriever:
        async with TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1) as r:
            assert len(await r.ainvoke(QUERY)) == 1
            assert index_files_open(index) != []
        return r

    r = asyncio.run(run())
    assert index_files_open(index) == []
    with pytest.raises(ClientClosedError):
        asyncio.run(r.ainvoke(QUERY))


def test_aclose_closes_it(index: Path) -> None:
    async def run() -> None:
        r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
        assert len(await r.ainvoke(QUERY)) == 1
        await r.aclose()
        assert index_files_open(index) == []
        with pytest.raises(ClientClosedError):
            await r.ainvoke(QUERY)

    asyncio.run(run())


def test_the_clients_of_configured_runs_are_closed_with_it(index: Path) -> None:
    """A configured embedding opens a client of its own (``_VARIANTS``), kept under the
    retriever's: closing the retriever closes it too."""
    r = TreehopRetriever.from_path(index, embedding=BagOfWordsEmbedder(), k=1)
    conf = r.configurable_fields(embedding=ConfigurableField(id="emb"))
    config: RunnableConfig = {"configurable": {"emb": BagOfWordsEmbedder()}}
    assert len(conf.invoke(QUERY, config=config)) == 1
    r.close()
    with pytest.raises(ClientClosedError):
        conf.invoke(QUERY, config=config)
    assert index_files_open(index) == []


def test_a_client_the_caller_passed_is_left_open(index: Path) -> None:
    """The control: the retriever closes only what it opened."""
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        r = TreehopRetriever(client=th, k=1)
        with r:
            assert len(r.invoke(QUERY)) == 1
        r.close()
        asyncio.run(r.aclose())
        assert len(r.invoke(QUERY)) == 1  # (the client still answers)
        assert th.find(QUERY, limit=1).contexts()
        assert index_files_open(index) != []
    assert index_files_open(index) == []  # (closed by its owner)

    async def run() -> None:
        async with AsyncTreehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as ath:
            async with TreehopRetriever(ath, k=1) as r:
                assert len(await r.ainvoke(QUERY)) == 1
            assert len(await r.ainvoke(QUERY)) == 1
            assert (await ath.find(QUERY, limit=1)).contexts()

    asyncio.run(run())


def test_the_docs_say_how_to_close_it() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "langchain.md").read_text(encoding="utf-8")
    assert "retriever.close()" in doc and "async with TreehopRetriever.from_path" in doc
