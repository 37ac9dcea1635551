"""``treehop mcp`` frictions found by helper usage71 (bench/README.md, "MCP server: annotations,
filters, strict integers, parse errors (helper mcp63)"): the real server subprocess spoken to
as raw newline-delimited JSON-RPC 2.0 over stdio, as a client that is not the SDK's sees it.

1. ``tools/list`` carries each tool's ToolAnnotations (read-only, destructive, idempotent,
   closed world), so a client need not treat every tool as one that may write.
2. ``find`` / ``search`` take ``filter`` / ``tags`` / ``tags_all`` as the CLI and Python do,
   answering what the Python API answers, and refuse a bad one as a bounded tool error.
3. An integer argument is an integer: ``"2"``, ``2.0``, ``true`` are refused, as the Python API
   refuses them and as the published schema (``"type": "integer"``) says.
4. A line that is not JSON is answered with JSON-RPC's Parse error (``-32700``, ``id: null``)
   and the next request is still answered.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder

from treehop_test_doubles import SAMPLE_TREE

REPO = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(
        p for p in (str(REPO / "retrieval"), os.environ.get("PYTHONPATH", "")) if p
    ),
    "OPENBLAS_NUM_THREADS": "1",
}
WAIT_S = 120.0
"""How long one answer may take (a start loads the embedder: seconds on a loaded machine); a
missing answer fails the test at this bound instead of hanging it."""


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, minilm: BaseEmbedder) -> Path:
    """The devops sample tagged ``ops`` (team ``infra``) beside a note tagged ``kitchen``
    (team ``food``) that also speaks of deploying."""
    path = tmp_path_factory.mktemp("mcp63") / "idx"
    with Treehop(path, embedder=minilm) as c:
        c.add_resource(
            SAMPLE_TREE / "resources" / "devops",
            target_uri="viking://resources/devops",
            tags=["ops"],
            metadata={"team": "infra"},
        )
        c.add_resource(
            "To deploy a soup, roll the pot out slowly and check the salt before serving.",
            target_uri="viking://resources/notes/soup",
            tags=["kitchen", "ops"],
            metadata={"team": "food"},
            is_text=True,
        )
    return path


class RawServer:
    """``python -m treehop --index I mcp`` with its stdin / stdout as JSON-RPC lines."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0

    async def line(self, raw: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw.encode("utf-8") + b"\n")
        await self.proc.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        """The next message the server writes (each a whole line of JSON)."""
        assert self.proc.stdout is not None
        raw = await asyncio.wait_for(self.proc.stdout.readline(), WAIT_S)
        assert raw, "the server closed stdout"
        out = json.loads(raw)
        assert isinstance(out, dict)
        return out

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request and return its answer (an answer for another id fails)."""
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        await self.line(json.dumps(msg))
        out = await self.answer()
        assert out.get("id") == self.next_id, out
        return out

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """``tools/call``'s result (``isError`` and ``structuredContent`` / ``content``)."""
        out = await self.request("tools/call", {"name": tool, "arguments": args})
        assert "result" in out, out
        result = out["result"]
        assert isinstance(result, dict)
        return result

    async def ok(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.call(tool, args)
        assert not result.get("isError"), result
        structured = result["structuredContent"]
        assert isinstance(structured, dict)
        return structured

    async def error(self, tool: str, args: dict[str, Any]) -> str:
        result = await self.call(tool, args)
        assert result.get("isError") is True, (tool, args, result)
        text = result["content"][0]["text"]
        assert isinstance(text, str)
        return text


@asynccontextmanager
async def _server(index: Path, *extra: str) -> AsyncIterator[RawServer]:
    """A fresh server past the handshake (``initialize`` + ``notifications/initialized``);
    stdin closed at the end, and the exit awaited (a server that stays is killed)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "treehop",
        "--index",
        str(index),
        "mcp",
        *extra,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=ENV,
    )
    server = RawServer(proc)
    try:
        init = await server.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert "result" in init, init
        await server.line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield server
    finally:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), WAIT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()


# -- 1. tool annotations ------------------------------------------------------------------

READS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True}
EXPECTED_HINTS = {
    "find": READS,
    "search": READS,
    "ls": READS,
    "read": READS,
    "tree": READS,
    # with session_id, the URIs a block gave are recorded (persisted with the index), so
    # the same call answers other hits next time: a write, additive, not idempotent
    "context": {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": False},
    # a name already used in the category replaces that memory; an unnamed note is new
    # each time
    "add_memory": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
}


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
async def test_every_tool_carries_its_annotations(index: Path, read_only: bool) -> None:
    """Before: no tool had ``annotations``; a client read each as the spec's defaults (not
    read-only, destructive, open world) and asked to confirm every ``find``."""
    async with _server(index, *(["--read-only"] if read_only else [])) as server:
        listed = await server.request("tools/list", {})
        tools = {t["name"]: t for t in listed["result"]["tools"]}
        expected = {
            name: {**hints, "openWorldHint": False}
            for name, hints in EXPECTED_HINTS.items()
            if not (read_only and name == "add_memory")
        }
        assert {name: t.get("annotations") for name, t in tools.items()} == expected


# -- 2. filter / tags / tags_all on find and search ---------------------------------------


def _uris(answer: dict[str, Any]) -> list[str]:
    return [h["uri"] for h in answer["hits"]]


FILTERS: list[dict[str, Any]] = [
    {"tags": ["kitchen"]},
    {"tags": ["kitchen", "ops"]},
    {"tags_all": ["kitchen", "ops"]},
    {"filter": {"op": "must", "field": "team", "conds": ["food"]}},
    {"filter": {"op": "must_not", "field": "team", "conds": ["food"]}, "tags": ["ops"]},
]


async def test_find_and_search_filter_as_the_python_api_does(index: Path) -> None:
    """Before: ``{"query": "deploy", "filter": {...}}`` was "unknown argument(s) ['filter']"
    (and ``tags`` / ``tags_all`` too), which the CLI (``--filter``, ``--tag``, ``--tag-all``)
    and Python take. Now each answers the hits Python's ``find`` / ``search`` answer."""
    with Treehop(index) as th:
        expected = {
            (tool, json.dumps(kw)): [
                m.uri for m in getattr(th, tool)("deploy", limit=20, **kw).contexts()
            ]
            for tool in ("find", "search")
            for kw in FILTERS
        }
        everything = [m.uri for m in th.find("deploy", limit=20).contexts()]
    kitchen = expected[("find", json.dumps({"tags": ["kitchen"]}))]
    # (the premise: each filter keeps some hits and leaves some out)
    assert kitchen and set(kitchen) < set(everything)
    assert all(expected.values())
    async with _server(index) as server:
        for (tool, kw), uris in expected.items():
            answer = await server.ok(tool, {"query": "deploy", "limit": 20, **json.loads(kw)})
            assert _uris(answer) == uris, (tool, kw)
        schemas = {
            t["name"]: t["inputSchema"]["properties"]
            for t in (await server.request("tools/list", {}))["result"]["tools"]
        }
        for tool in ("find", "search"):
            assert {"filter", "tags", "tags_all"} <= set(schemas[tool])
            assert schemas[tool]["filter"]["anyOf"][0]["type"] == "object"


async def test_a_bad_filter_is_a_bounded_tool_error_naming_its_type(index: Path) -> None:
    """The core's checks, reported as MCP tool errors: a malformed filter, a field or tag no
    stored node has (the CLI's check: not an empty answer), a hostile one (not echoed whole)."""
    async with _server(index) as server:
        for tool in ("find", "search"):
            text = await server.error(
                tool, {"query": "deploy", "filter": {"op": "nope", "field": "team"}}
            )
            assert text.startswith(f"Error executing tool {tool}: InvalidFilterError: ")
            assert "nope" in text
            text = await server.error(
                tool, {"query": "deploy", "filter": {"op": "must", "field": "tem", "conds": [1]}}
            )
            assert "InvalidFilterError" in text and "tem" in text and "team" in text
            text = await server.error(tool, {"query": "deploy", "tags": ["kitchn"]})
            assert "InvalidFilterError" in text and "kitchn" in text
            text = await server.error(tool, {"query": "deploy", "tags_all": ["ops", "x" * 10**6]})
            assert "InvalidTagError" in text and "longer than 64" in text and len(text) < 2_000
            text = await server.error(
                tool, {"query": "deploy", "filter": {"op": "must", "field": "f" * 10**6}}
            )
            assert "InvalidFilterError" in text and len(text) < 2_000
            deep: dict[str, Any] = {"op": "must", "field": "team", "conds": ["food"]}
            for _ in range(40):  # (past MAX_FILTER_DEPTH 32)
                deep = {"op": "and", "conds": [deep]}
            text = await server.error(tool, {"query": "deploy", "filter": deep})
            assert "InvalidFilterError" in text and len(text) < 2_000
            # a wrong JSON type is refused by the schema's check, naming the argument
            text = await server.error(tool, {"query": "deploy", "tags": [1]})
            assert "argument 'tags[0]': input should be a valid string (got 1)" in text
            text = await server.error(tool, {"query": "deploy", "tags_all": "ops"})
            assert "argument 'tags_all': input should be a valid list" in text
            text = await server.error(tool, {"query": "deploy", "filter": ["team"]})
            assert "argument 'filter'" in text
        # the server still answers
        assert (await server.ok("find", {"query": "deploy", "tags": ["ops"]}))["hits"]


# -- 3. integers are integers -------------------------------------------------------------

NOT_INTEGERS: list[Any] = ["2", 2.0, 2.5, True, "true", [2], None]


async def test_integer_arguments_refuse_strings_floats_and_bools(index: Path) -> None:
    """Before: ``"limit": "2"`` and ``2.0`` were run as 2 (the SDK's lax validation) where the
    published schema says ``integer`` and the Python API refuses them. Each integer argument
    of each tool (read from the published schemas) now refuses them, naming the argument."""
    args = {
        "find": {"query": "deploy"},
        "search": {"query": "deploy"},
        "context": {"query": "deploy"},
        "read": {"uri": "viking://resources/devops/README.md"},
        "tree": {},
    }
    async with _server(index) as server:
        listed = await server.request("tools/list", {})
        integers = {
            t["name"]: [
                name
                for name, spec in t["inputSchema"]["properties"].items()
                if spec.get("type") == "integer"
            ]
            for t in listed["result"]["tools"]
        }
        assert integers["find"] == ["limit", "text_chars"]  # (the premise)
        assert set(args) == {tool for tool, names in integers.items() if names}
        for tool, names in integers.items():
            for name in names:
                for value in NOT_INTEGERS:
                    text = await server.error(tool, {**args[tool], name: value})
                    assert f"argument '{name}'" in text and "integer" in text, (tool, value)
                    assert f"{tool} takes " in text
        # an integer is still an integer
        assert len((await server.ok("find", {"query": "deploy", "limit": 2}))["hits"]) <= 2


# -- 4. a line that is not JSON -----------------------------------------------------------


async def test_a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on(
    index: Path,
) -> None:
    """Before: ``{not json`` got no answer at all (the SDK's stdio transport dropped it); a
    client waiting for one waited forever. JSON-RPC 2.0 answers ``-32700`` with ``id: null``."""
    async with _server(index) as server:
        for raw in ("{not json", "not json at all", '{"jsonrpc": "2.0", "id": 7, "method"'):
            await server.line(raw)
            out = await server.answer()
            assert out["jsonrpc"] == "2.0" and out["id"] is None
            assert out["error"]["code"] == -32700
            assert out["error"]["message"].startswith("Parse error")
            assert (await server.request("ping"))["result"] == {}
        # JSON that is no JSON-RPC message is an Invalid Request (-32600), not a parse error
        for raw in ('{"hello": 1}', "[]", "42"):
            await server.line(raw)
            out = await server.answer()
            assert out["id"] is None and out["error"]["code"] == -32600, (raw, out)
        # ... answered to the request's id where it has one (its client waits on that id)
        await server.line('{"jsonrpc": "2.0", "id": "q7", "method": 5}')
        out = await server.answer()
        assert out["id"] == "q7" and out["error"]["code"] == -32600
        assert (await server.request("ping"))["result"] == {}
        found = await server.ok("find", {"query": "deploy", "limit": 1})
        assert len(found["hits"]) == 1
