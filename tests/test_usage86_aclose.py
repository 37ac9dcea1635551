"""``AsyncTreehop.aclose()``: the name asyncio code awaits to close a resource.

helper usage86: an async LlamaIndex service (``TreehopRetriever(AsyncTreehop(path))``,
``await retriever.aretrieve(...)``, ``await engine.aquery(...)``) ended with ``await
client.aclose()``, as docs/llamaindex.md ends a retriever (``await retriever.aclose()``), and
got ``AttributeError: 'AsyncTreehop' object has no attribute 'aclose'``; so did
``contextlib.aclosing(client)``. ``aclose()`` is ``close()``: the index saved, later calls
``ClientClosedError``, a second close a no-op."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from treehop import AsyncTreehop
from treehop.errors import ClientClosedError

from treehop_test_doubles import BagOfWordsEmbedder


def test_aclose_closes_and_saves(tmp_path: Path) -> None:
    async def run() -> None:
        client = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
        await client.add_memory("Gunicorn runs the app behind nginx.", name="deploy")
        await client.aclose()
        with pytest.raises(ClientClosedError):
            await client.find("gunicorn")
        await client.aclose()  # a second close does nothing
        async with AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as again:
            assert (await again.find("gunicorn", context_type="memory")).memories

    asyncio.run(run())


def test_contextlib_aclosing_closes_the_client(tmp_path: Path) -> None:
    async def run() -> AsyncTreehop:
        client = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
        async with contextlib.aclosing(client) as th:
            await th.add_memory("Waitress serves WSGI on Windows.", name="win")
        return client

    client = asyncio.run(run())
    with pytest.raises(ClientClosedError):
        asyncio.run(client.find("waitress"))
