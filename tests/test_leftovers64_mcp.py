"""``treehop mcp``'s open items after stop 63 (helper leftovers64, bench/README.md "(helper
leftovers64)"), the real server subprocess spoken to as raw JSON-RPC 2.0 lines over stdio
(as tests/test_mcp63_protocol.py does):

1. A request whose ``id`` is an object, an array, a bool, ``null`` or a fraction got no answer
   (the SDK read it as a notification); JSON-RPC answers it ``-32600`` with ``id: null``.
2. A line holding an escaped lone surrogate is JSON (RFC 8259's grammar; Python's parser and
   the SDK's streamable-HTTP transport read it) that the SDK's stdio parser refuses: an
   Invalid Request (``-32600``) answered to the request's id, not a Parse error (``-32700``,
   ``id: null``) that its client cannot match; ``id: null`` only where the id itself holds it.
3. A JSON *string* given for an object or an array argument (``"filter": "{...}"``) ran as
   that value; refused as the schema says, as strict integers are.
4. ``context`` takes ``filter`` / ``tags`` / ``tags_all`` as ``find`` does, checked the same way.
5. The one private SDK name the server reads (``MCPServer._lowlevel_server``) is checked here.

Each test fails on fbccbd78 unless it says it is a control.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import test_mcp63_protocol as mcp63
from treehop import Treehop, mcp_server
from treehop.embedders.base import BaseEmbedder

_server = mcp63._server
index = mcp63.index  # (the same index fixture: the devops sample beside the soup note)
INVALID_IDS = ['{"x": 1}', "[1]", "[]", "true", "false", "null", "1.5", "{}"]


async def _raw(server: Any, line: str) -> dict[str, Any]:
    await server.line(line)
    out: dict[str, Any] = await server.answer()
    return out


# -- 1. an id of another JSON type ---------------------------------------------------------


async def test_a_request_with_an_id_of_another_type_is_an_invalid_request(index: Path) -> None:
    async with _server(index) as server:
        for raw_id in INVALID_IDS:
            line = f'{{"jsonrpc": "2.0", "id": {raw_id}, "method": "ping"}}'
            out = await _raw(server, line)
            assert out["jsonrpc"] == "2.0" and out["id"] is None, (raw_id, out)
            assert out["error"]["code"] == -32600, (raw_id, out)
            assert "string or an integer" in out["error"]["message"]
            assert (await server.request("ping"))["result"] == {}
        # the same for a tools/call: answered, and nothing searched in its name
        out = await _raw(
            server,
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": {"k": 2},
                    "method": "tools/call",
                    "params": {"name": "find", "arguments": {"query": "deploy"}},
                }
            ),
        )
        assert out["id"] is None and out["error"]["code"] == -32600
        # (control) a notification stays unanswered: the next answer is the ping's
        await server.line(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"id": 3}})
        )
        assert (await server.request("ping"))["result"] == {}


# -- 2. a lone surrogate -------------------------------------------------------------------


async def test_an_escaped_lone_surrogate_is_an_invalid_request_answered_to_its_id(
    index: Path,
) -> None:
    async with _server(index) as server:
        # in an argument: the request's own id answers it
        line = (
            '{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"name": "find", '
            '"arguments": {"query": "deploy \\ud800 now"}}}'
        )
        out = await _raw(server, line)
        assert out["id"] == 41 and out["error"]["code"] == -32600, out
        assert "surrogate" in out["error"]["message"]
        out = await _raw(server, '{"jsonrpc": "2.0", "id": "q\\udfff-id-ok", "method": "ping"}')
        assert out["id"] is None and out["error"]["code"] == -32600, out  # (in the id itself)
        out = await _raw(server, '{"jsonrpc": "2.0", "id": "s1", "method": "p\\ud800"}')
        assert out["id"] == "s1" and out["error"]["code"] == -32600, out
        # (control) a surrogate *pair* is one character: served
        found = await server.ok("find", {"query": "deploy \U0001f680", "limit": 1})
        assert len(found["hits"]) == 1
        # (control) not JSON is still a Parse error, NaN too (RFC 8259 has none)
        for raw in ('{"jsonrpc": "2.0", "id": 5, "method": "ping"', '{"id": NaN}'):
            out = await _raw(server, raw)
            assert out["id"] is None and out["error"]["code"] == -32700, (raw[:40], out)
        # (control) 100,000 open brackets are refused at the depth limit, before their end is
        # read: "nested too deeply" (attacks90), not a parse error of a text never read whole
        out = await _raw(server, "[" * 100_000)
        assert out["id"] is None and out["error"]["code"] == -32600, out
        assert "too deeply" in out["error"]["message"], out
        assert (await server.request("ping"))["result"] == {}


async def test_json_nested_deeper_than_the_sdk_reads_is_answered_to_its_id(index: Path) -> None:
    # fbccbd78: a Parse error with id null, for JSON that Python's parser reads
    deep = "[" * 300 + "]" * 300
    async with _server(index) as server:
        out = await _raw(
            server, f'{{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {{"x": {deep}}}}}'
        )
        assert out["id"] == 9 and out["error"]["code"] == -32600, out
        assert "nested deeper" in out["error"]["message"]
        assert (await server.request("ping"))["result"] == {}


# -- 3. a JSON string for an object or an array -------------------------------------------

AS_STRINGS: list[tuple[str, dict[str, Any], str]] = [
    (
        "find",
        {"query": "deploy", "filter": '{"op": "must", "field": "team", "conds": ["infra"]}'},
        "filter",
    ),
    (
        "search",
        {"query": "deploy", "filter": '{"op": "must", "field": "team", "conds": ["infra"]}'},
        "filter",
    ),
    ("find", {"query": "deploy", "tags": '["ops"]'}, "tags"),
    ("find", {"query": "deploy", "tags_all": '["ops"]'}, "tags_all"),
    (
        "context",
        {"query": "deploy", "exclude_uris": '["viking://resources/notes/soup"]'},
        "exclude_uris",
    ),
    (
        "context",
        {"query": "deploy", "filter": '{"op": "must", "field": "team", "conds": ["infra"]}'},
        "filter",
    ),
]


async def test_a_json_string_for_an_object_or_array_argument_is_refused(index: Path) -> None:
    async with _server(index) as server:
        for tool, args, name in AS_STRINGS:
            text = await server.error(tool, args)
            assert f"argument '{name}'" in text and f"{tool} takes " in text, (tool, text)
            assert len(text) < 2_000
        # (control) the same values as JSON are served
        found = await server.ok(
            "find",
            {"query": "deploy", "filter": {"op": "must", "field": "team", "conds": ["infra"]}},
        )
        assert found["hits"]
        # (control) a string argument that looks like JSON stays a string
        out = await server.ok("find", {"query": '{"op": "must"}', "limit": 1})
        assert "hits" in out


# -- 4. context's filters ------------------------------------------------------------------


async def test_context_takes_filter_and_tags_as_the_python_api_does(
    index: Path, minilm: BaseEmbedder
) -> None:
    infra = {"op": "must", "field": "team", "conds": ["infra"]}
    food = {"op": "must", "field": "team", "conds": ["food"]}
    asks: list[dict[str, Any]] = [
        {"filter": infra},
        {"filter": food},
        {"tags": ["kitchen"]},
        {"tags_all": ["kitchen", "ops"]},
        {"tags": ["ops"], "filter": food},
    ]
    with Treehop(index, embedder=minilm) as c:
        want = [c.assemble_context("deploy", max_tokens=400, limit=5, **ask).uris for ask in asks]
    async with _server(index, "--read-only") as server:
        tools = (await server.request("tools/list", {}))["result"]["tools"]
        schema = next(t for t in tools if t["name"] == "context")["inputSchema"]
        assert {"filter", "tags", "tags_all"} <= set(schema["properties"])
        for ask, uris in zip(asks, want, strict=True):
            got = await server.ok(
                "context", {"query": "deploy", "max_tokens": 400, "limit": 5, **ask}
            )
            assert got["uris"] == uris, (ask, got["uris"], uris)
        assert all("soup" in u for u in want[1]) and want[1]  # (the premise: it filters)
        assert not any("soup" in u for u in want[0]) and want[0]
        # checked as find's: a field or tag no node has, a malformed filter
        text = await server.error(
            "context", {"query": "deploy", "filter": {"op": "must", "field": "tem", "conds": ["x"]}}
        )
        assert text.startswith("Error executing tool context: InvalidFilterError"), text
        text = await server.error("context", {"query": "deploy", "tags": ["nosuchtag"]})
        assert "InvalidFilterError" in text, text
        text = await server.error("context", {"query": "deploy", "filter": {"op": "nope"}})
        assert "Error executing tool context: Invalid" in text, text
        text = await server.error("context", {"query": "deploy", "tags": "ops"})
        assert "argument 'tags'" in text


# -- 5. the private SDK name ---------------------------------------------------------------


def test_the_low_level_server_is_where_the_stdio_loop_reads_it() -> None:
    # Fails loudly if an mcp release renames or removes MCPServer._lowlevel_server: the
    # server would then run the SDK's own stdio loop, leaving broken lines unanswered.
    from mcp.server.lowlevel import Server

    from treehop import AsyncTreehop

    from treehop_test_doubles import BagOfWordsEmbedder

    server = mcp_server.build_server(AsyncTreehop(None, embedder=BagOfWordsEmbedder()))
    assert isinstance(mcp_server._lowlevel(server), Server)
    assert mcp_server._lowlevel(object()) is None  # (control)


# -- the decision, as a property -----------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    request_id=JSON_VALUES,
    method=st.sampled_from(["ping", "tools/list", 5]),
    lone=st.booleans(),
)
def test_every_request_line_is_served_or_answered(request_id: Any, method: Any, lone: bool) -> None:
    """A line with ``method`` and ``id`` is passed on (``_refusal`` is None) exactly when the
    SDK reads it as a request; else it is answered -32600, to its id where the id is a
    string of Unicode text or an integer."""
    from mcp_types import JSONRPCRequest

    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method})
    if lone:
        line = line[:-1] + ', "x": "\\udc00"}'
    answer = mcp_server._refusal(line)
    # (helper leftovers65b: a whole-number float id within 2**53 is served as that integer)
    whole = isinstance(request_id, float) and request_id.is_integer() and abs(request_id) < 2**53
    usable = whole or (isinstance(request_id, str | int) and not isinstance(request_id, bool))
    readable = not lone and isinstance(method, str) and usable
    if readable:
        assert answer is None
        return
    assert answer is not None and answer.error.code == -32600, (line, answer)
    assert answer.id == ((int(request_id) if whole else request_id) if usable else None)
    if not lone:  # (the SDK's own model agrees: no request)
        with pytest.raises(ValueError):
            JSONRPCRequest.model_validate_json(line)
