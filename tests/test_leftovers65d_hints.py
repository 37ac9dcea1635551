"""The MCP ``search`` and ``context`` tools tell the agent why a file target answered nothing
(helper leftovers65d, bench/README.md "(helper leftovers65d)"): leftovers65b gave the MCP
``find`` tool find's file-target hint (a file's or chunk's URI searches that leaf alone),
``search`` and ``context`` answered an empty result and no word why. Over the real server
(the MCP SDK's in-memory client), as ``tests/test_leftovers65b_hints.py`` tests ``find``.

The two hint tests fail on b41afd8a (no ``hint`` key); the controls pass there too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_leftovers65b_hints import OIL, _index
from treehop import AsyncTreehop

from treehop_test_doubles import BagOfWordsEmbedder

FOLDER = "target_uri='viking://resources/docs'"


async def _with_server(tmp_path: Path, body: Any) -> None:
    from mcp import Client

    from treehop.mcp_server import build_server

    a = AsyncTreehop(
        _index(tmp_path), embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0
    )
    try:
        async with Client(build_server(a)) as client:
            await body(client)
    finally:
        await a.close()


async def test_the_mcp_search_tells_the_agent(tmp_path: Path) -> None:
    async def body(client: Any) -> None:
        res = await client.call_tool(
            "search", {"query": "oil the spindle", "target_uri": OIL, "tags": ["kitchen"]}
        )
        out = res.structured_content or {}
        assert not res.is_error and out["hits"] == []
        assert out["hint"].startswith(f"search: target_uri {OIL} matched nothing under the filter")
        assert FOLDER in out["hint"]
        # (control) a file target that answers: no hint
        found = await client.call_tool("search", {"query": "oil the spindle", "target_uri": OIL})
        assert (found.structured_content or {})["hits"]
        assert "hint" not in (found.structured_content or {})

    await _with_server(tmp_path, body)


async def test_the_mcp_context_tells_the_agent(tmp_path: Path) -> None:
    async def body(client: Any) -> None:
        res = await client.call_tool(
            "context", {"query": "oil the spindle", "target_uri": OIL, "tags": ["kitchen"]}
        )
        out = res.structured_content or {}
        assert not res.is_error and out["uris"] == [] and out["text"] == ""
        assert out["hint"].startswith(f"context: target_uri {OIL} matched nothing under the filter")
        assert FOLDER in out["hint"]

    await _with_server(tmp_path, body)


async def test_an_empty_block_whose_find_matched_says_nothing(tmp_path: Path) -> None:
    # control: the block is empty because the caller left the hit out, not because the
    # target matched nothing: no hint (a hint there would be wrong)
    async def body(client: Any) -> None:
        res = await client.call_tool(
            "context", {"query": "oil the spindle", "target_uri": OIL, "exclude_uris": [OIL]}
        )
        out = res.structured_content or {}
        assert not res.is_error and out["uris"] == []
        assert "hint" not in out
        answered = await client.call_tool(
            "context", {"query": "oil the spindle", "target_uri": OIL}
        )
        assert (answered.structured_content or {})["uris"]
        assert "hint" not in (answered.structured_content or {})

    await _with_server(tmp_path, body)
