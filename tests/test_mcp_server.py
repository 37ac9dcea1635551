"""``treehop mcp`` end to end: the real server subprocess over stdio, driven by the official MCP
SDK's own client, on an index built with the offline MiniLM embedder."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder

from treehop_test_doubles import SAMPLE_TREE

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm: BaseEmbedder) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "idx"
    with Treehop(path, embedder=minilm) as c:
        c.add_resource(SAMPLE_TREE / "resources" / "devops", target_uri="viking://resources/devops")
        c.add_messages(
            [{"speaker": "Ann", "content": "I moved to Porto in March and I love the river."}],
            conversation_id="chat",
            session_id="s1",
            session_time="2024-03-10T09:00:00Z",
        )
    return path


def _params(index: Path, *extra: str) -> StdioServerParameters:
    path = os.pathsep.join(
        p for p in (str(REPO / "retrieval"), os.environ.get("PYTHONPATH", "")) if p
    )
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "treehop.cli", "--index", str(index), "mcp", *extra],
        env={"PYTHONPATH": path},
    )


async def _call(client: Client, name: str, args: dict[str, Any]) -> Any:
    res = await client.call_tool(name, args)
    assert not res.is_error, res.content
    return res.structured_content


async def test_tools_over_stdio(index: Path) -> None:
    async with Client(_params(index)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert tools == {"find", "search", "context", "ls", "read", "tree", "add_memory"}

        found = await _call(client, "find", {"query": "how do we roll out a deployment"})
        assert found["total"] > 0
        uris = [h["uri"] for h in found["hits"]]
        assert any(u.startswith("viking://resources/devops") for u in uris)
        assert all({"uri", "score", "abstract", "text"} <= set(h) for h in found["hits"])

        memories = await _call(
            client, "find", {"query": "where does Ann live", "target_uri": "viking://~/memories"}
        )
        top = memories["hits"][0]
        assert top["uri"].startswith("viking://~/memories/conversations/chat/s1")
        assert top["time"].startswith("2024-03-10")

        listing = await _call(client, "ls", {"uri": "viking://resources/devops"})
        with Treehop(index) as th:  # the same kinds as the client's (and the CLI's) ls
            kinds = {e.uri: e.kind for e in th.ls("viking://resources/devops")}
        assert {e["uri"]: e["kind"] for e in listing["entries"]} == kinds
        assert {"directory", "file"} <= set(kinds.values())
        leaf = next(e["uri"] for e in listing["entries"] if e["is_leaf"])
        text = await _call(client, "read", {"uri": leaf, "max_chars": 50})
        assert len(text["text"]) <= 50 and text["uri"] == leaf
        tree = await _call(client, "tree", {"uri": "viking://~/memories", "depth": 3})
        assert tree["uri"] == "viking://~/memories" and tree["children"]

        ctx = await _call(
            client, "context", {"query": "Porto river", "max_tokens": 60, "session_id": "m1"}
        )
        assert 0 < ctx["tokens"] <= 60 and ctx["uris"]
        again = await _call(
            client, "context", {"query": "Porto river", "max_tokens": 60, "session_id": "m1"}
        )
        assert not set(again["uris"]) & set(ctx["uris"])

        added = await _call(
            client,
            "add_memory",
            {"text": "Ann's dog is called Rui.", "name": "dog", "timestamp": "2024-04-01"},
        )
        assert added["uri"] == "viking://~/memories/notes/dog"
        recent = await _call(
            client,
            "find",
            {"query": "dog name", "since": "2024-03-15", "target_uri": "viking://~/memories"},
        )
        assert [h["uri"] for h in recent["hits"] if h["is_leaf"]] == [
            "viking://~/memories/notes/dog"
        ]

        bad = await client.call_tool("ls", {"uri": "viking://resources/nope"})
        assert bad.is_error
        assert "NotFoundError" in bad.content[0].text
        bad = await client.call_tool("find", {"query": "x", "since": "someday"})
        assert bad.is_error and "InvalidQueryError" in bad.content[0].text


async def test_read_only_server_has_no_write_tool(index: Path) -> None:
    async with Client(_params(index, "--read-only")) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert "add_memory" not in tools and "find" in tools


async def test_unknown_arguments_are_refused_and_version_is_reported(index: Path) -> None:
    import treehop

    async with Client(_params(index)) as client:
        assert client.server_info is not None  # the initialize handshake's serverInfo
        assert client.server_info.name == "treehop"
        assert client.server_info.version == treehop.__version__
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        assert all(s.get("additionalProperties") is False for s in schemas.values())

        # A misspelt option is an error naming it (the Python API refuses it too), not a
        # search run as if it had not been given.
        bad = await client.call_tool("find", {"query": "deployment", "limt": 1})
        assert bad.is_error
        text = bad.content[0].text
        assert "unknown argument(s) ['limt']" in text and "limit" in text
        bad = await client.call_tool("add_memory", {"text": "x", "topic": "y"})
        assert bad.is_error and "['topic']" in bad.content[0].text
        # ... and nothing was written by the refused call.
        listed = await _call(client, "find", {"query": "x", "target_uri": "viking://~/memories"})
        assert all(h["text"] != "x" for h in listed["hits"])
        ok = await _call(client, "find", {"query": "deployment", "limit": 1})
        assert ok["hits"]
