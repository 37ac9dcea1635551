"""``TreehopRetriever.from_defaults(path=...)`` closes the ``Treehop`` it opened:
``close()`` / ``aclose()`` / ``with`` (helper usage78).

It opened a ``Treehop`` that only ``retriever.client.close()`` closed (the tests did that;
a user following the docs never did): the store's files and threads stayed open until the
process exited, and an argument it refused after opening left it open too. The retriever
now closes what it opened, and never a client the caller passed. The store is checked
closed by the process's descriptors into the index folder.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from llama_index.retrievers.treehop import TreehopRetriever
from treehop import AsyncTreehop, Treehop
from treehop.errors import ClientClosedError, UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder, index_files_open, two_note_index

QUERY = "tides in the harbour"


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return two_note_index(tmp_path / "idx")


def _opened(index: Path, **kwargs: Any) -> TreehopRetriever:
    return TreehopRetriever.from_defaults(
        path=index, embed_model=BagOfWordsEmbedder(), similarity_top_k=1, **kwargs
    )


def test_close_closes_the_treehop_from_defaults_opened(index: Path) -> None:
    r = _opened(index)
    assert r.retrieve(QUERY)[0].node.get_content().startswith("The tides")
    assert index_files_open(index) != []  # (premise: the opened store holds its files)
    r.close()
    assert index_files_open(index) == []
    with pytest.raises(ClientClosedError):
        r.retrieve(QUERY)
    with pytest.raises(ClientClosedError):
        asyncio.run(r.aretrieve(QUERY))
    r.close()  # (again: nothing)


def test_with_async_with_and_aclose_close_it(index: Path) -> None:
    with _opened(index) as r:
        assert len(r.retrieve(QUERY)) == 1
    assert index_files_open(index) == []
    with pytest.raises(ClientClosedError):
        r.retrieve(QUERY)

    async def run() -> None:
        async with _opened(index) as r:
            assert len(await r.aretrieve(QUERY)) == 1
            assert index_files_open(index) != []
        assert index_files_open(index) == []
        r2 = _opened(index)
        assert len(await r2.aretrieve(QUERY)) == 1
        await r2.aclose()
        assert index_files_open(index) == []
        with pytest.raises(ClientClosedError):
            await r2.aretrieve(QUERY)

    asyncio.run(run())


def test_an_argument_refused_after_the_open_closes_what_it_opened(index: Path) -> None:
    with pytest.raises(UnknownArgumentError, match="similarity_top_k"):
        TreehopRetriever.from_defaults(path=index, embed_model=BagOfWordsEmbedder(), top_k=3)
    assert index_files_open(index) == []


def test_a_client_the_caller_passed_is_left_open(index: Path) -> None:
    """The control: the retriever closes only what it opened."""
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for r in (TreehopRetriever(th, similarity_top_k=1), TreehopRetriever.from_defaults(th)):
            with r:
                assert r.retrieve(QUERY)
            r.close()
            asyncio.run(r.aclose())
            assert r.retrieve(QUERY)  # (the client still answers)
        assert th.find(QUERY, limit=1).contexts()
        assert index_files_open(index) != []
        # an argument refused over the caller's client leaves it open too
        with pytest.raises(UnknownArgumentError):
            TreehopRetriever.from_defaults(th, top_k=3)
        assert th.find(QUERY, limit=1).contexts()
    assert index_files_open(index) == []  # (closed by its owner)

    async def run() -> None:
        async with AsyncTreehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as ath:
            async with TreehopRetriever(ath, similarity_top_k=1) as r:
                assert await r.aretrieve(QUERY)
            assert await r.aretrieve(QUERY)
            assert (await ath.find(QUERY, limit=1)).contexts()

    asyncio.run(run())


def test_the_docs_say_how_to_close_it() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "llamaindex.md").read_text(encoding="utf-8")
    assert "retriever.close()" in doc and "with TreehopRetriever.from_defaults(path=" in doc
