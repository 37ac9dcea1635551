"""``treehop mcp`` attacked end to end (helper attacks89, bench/README.md "(helper attacks89)"):
the real server process over its stdio JSON-RPC, hostile arguments from a client that is not
the SDK's.

1,040 hostile calls (every tool x every argument x 26 values: wrong JSON types, 2**70, -1,
2 MB strings, NUL, bidi, ``..`` and ``file://`` paths, a key) were all answered as JSON-RPC,
the server alive after them; what broke was the echo of a key sent where a name is read:

- ``Method not found`` wrote the method in ``data``, whole;
- ``Unknown tool: <name>`` (a tool error) the name whole: a key, or a megabyte;
- ``prompts/get`` of an unknown name answered code 0 (the SDK's catch-all, no JSON-RPC
  error code) with ``Unknown prompt: <name>``, and logged its traceback, the name in it, to
  stderr (the client's server log);
- ``Unknown resource`` (``data.uri``), the core's ``NotFoundError`` for ``target_uri`` /
  ``ls`` / ``read`` / ``tree`` (the CLI redacts these; the server did not), and ``search``'s
  ``no session '<40 characters>'`` (cut before it was redacted).

Each test fails on 63c22bec unless it says it is a control.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import test_mcp63_protocol as mcp63
from test_leftovers66c_mcp_wire import _Proc
from vendor_keys import vendor_key

index = mcp63.index  # (the devops sample beside the soup note, built once a module)

KEY = vendor_key("openai-proj", 89)
PIECES = (KEY[8:24], KEY[-16:], KEY[40:56])
"""Pieces of the key no answer and no log line may hold."""


def _argv(index: Path) -> list[str]:
    import sys

    return [sys.executable, "-m", "treehop", "--index", str(index), "mcp"]


def _call(rid: int, name: str, arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }


def _hostile() -> list[dict[str, Any]]:
    under = f"viking://resources/{KEY}"
    calls: list[Any] = [
        {"method": KEY, "params": {}},
        {"method": "prompts/get", "params": {"name": KEY}},
        {"method": "prompts/get", "params": {"name": "greet"}},
        {"method": "resources/read", "params": {"uri": under}},
        ("tool", KEY, {"query": "deploy"}),
        ("tool", "find", {"query": "deploy", "target_uri": under}),
        ("tool", "search", {"query": "deploy", "target_uri": under}),
        ("tool", "context", {"query": "deploy", "target_uri": under}),
        ("tool", "search", {"query": "deploy", "session_id": under}),
        ("tool", "search", {"query": "deploy", "session_id": KEY}),
        ("tool", "context", {"query": "deploy", "session_id": under}),
        ("tool", "ls", {"uri": under}),
        ("tool", "read", {"uri": under}),
        ("tool", "tree", {"uri": under}),
        ("tool", "find", {"query": "deploy", KEY: 1}),
        ("tool", "find", {"query": "deploy", "limit": KEY}),
        ("tool", "find", {"query": "deploy", "filter": {"op": "must", "field": KEY, "conds": [1]}}),
    ]
    out = []
    for rid, c in enumerate(calls, start=1):
        if isinstance(c, tuple):
            out.append(_call(rid, c[1], c[2]))
        else:
            out.append({"jsonrpc": "2.0", "id": rid, **c})
    return out


def _well_formed(request: dict[str, Any], answer: dict[str, Any]) -> None:
    assert answer.get("jsonrpc") == "2.0" and answer.get("id") == request["id"], answer
    assert ("result" in answer) != ("error" in answer), answer
    if "error" in answer:
        code = answer["error"].get("code")
        # a JSON-RPC error code (the spec's -32768..-32000) or the server's own range
        assert isinstance(code, int) and -32768 <= code <= -32000, answer
        assert isinstance(answer["error"].get("message"), str), answer
    else:
        assert isinstance(answer["result"], dict), answer


def test_no_hostile_call_gets_a_key_back_nor_puts_it_in_the_log(index: Path) -> None:
    proc = _Proc(_argv(index))
    answers = []
    try:
        for request in _hostile():
            proc.send(request)
            answer = proc.answer(mcp63.WAIT_S)
            _well_formed(request, answer)
            answers.append((request, answer))
        proc.send({"jsonrpc": "2.0", "id": "alive", "method": "ping"})
        assert proc.answer(mcp63.WAIT_S) == {"jsonrpc": "2.0", "id": "alive", "result": {}}
    finally:
        assert proc.close() == 0
    assert proc.proc.stderr is not None
    log = proc.proc.stderr.read().decode("utf-8", "replace")
    leaks = [
        (r["id"], json.dumps(a)[:300])
        for r, a in answers
        if any(piece in json.dumps(a) for piece in PIECES)
    ]
    assert leaks == []
    assert not any(piece in log for piece in PIECES), log[-2000:]
    assert "Traceback" not in log, log[-2000:]


def test_an_unknown_tool_or_prompt_is_refused_in_bounded_words(index: Path) -> None:
    proc = _Proc(_argv(index))
    huge = "t" * 1_000_000
    try:
        proc.send(_call(1, huge, {}))
        tool = proc.answer(mcp63.WAIT_S)
        proc.send({"jsonrpc": "2.0", "id": 2, "method": "prompts/get", "params": {"name": huge}})
        prompt = proc.answer(mcp63.WAIT_S)
        proc.send({"jsonrpc": "2.0", "id": 3, "method": huge, "params": {}})
        method = proc.answer(mcp63.WAIT_S)
    finally:
        assert proc.close() == 0
    text = tool["result"]["content"][0]["text"]
    assert tool["result"]["isError"] is True
    assert len(text) < 2_000 and "find" in text and "search" in text, text[:300]
    # the spec's answer to a prompt name the server does not have: Invalid params
    assert prompt["error"]["code"] == -32602, str(prompt)[:300]
    assert len(json.dumps(prompt)) < 2_000
    assert method["error"]["code"] == -32601 and len(json.dumps(method)) < 3_000


def test_a_known_call_is_answered_as_before_control(index: Path) -> None:
    # control (passes on 63c22bec): a plain find, an unknown tool named plainly
    proc = _Proc(_argv(index))
    try:
        proc.send(_call(1, "find", {"query": "deploy", "limit": 2}))
        found = proc.answer(mcp63.WAIT_S)
        proc.send(_call(2, "nope", {}))
        nope = proc.answer(mcp63.WAIT_S)
    finally:
        assert proc.close() == 0
    assert not found["result"].get("isError") and found["result"]["structuredContent"]["hits"]
    assert nope["result"]["isError"] is True
    assert "Unknown tool" in nope["result"]["content"][0]["text"]
    assert "nope" in nope["result"]["content"][0]["text"]
