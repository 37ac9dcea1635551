"""``treehop mcp``'s open items of stop 64 (helper leftovers65b, bench/README.md "(helper
leftovers65b)"), the real server spoken to over real pipes:

1. A client that writes its requests and closes stdin (``printf '...' | treehop mcp``) got
   about half of 2,000 pings answered: the SDK cancels every request in flight when stdin
   ends. The server now waits for them (at most ``EOF_GRACE_S``) before it exits.
2. A request whose ``id`` is a whole-number JSON float (``7.0``, ``1e3``) was refused
   (``-32600``, ``id: null``): JSON has one number type and JSON-RPC takes any number; it is
   served with the integer it equals. A fraction stays refused.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

import test_mcp63_protocol as mcp63
from treehop import mcp_server

index = mcp63.index  # (the devops sample beside the soup note, built once a module)
_INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "piped", "version": "0"},
}


def _piped(index: Path, lines: list[str]) -> tuple[list[dict[str, Any]], int]:
    """Every line written to ``treehop mcp``'s stdin at once, stdin closed, stdout read to
    its end: the answers, and the exit status."""
    head = [
        json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": _INIT}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    proc = subprocess.run(
        [sys.executable, "-m", "treehop", "--index", str(index), "mcp"],
        input="\n".join(head + lines) + "\n",
        capture_output=True,
        text=True,
        env=mcp63.ENV,
        timeout=mcp63.WAIT_S * 2,
    )
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return answers, proc.returncode


# -- 1. stdin closed with requests in flight ------------------------------------------------


def test_a_client_that_closes_stdin_gets_every_answer(index: Path) -> None:
    # 6ef26e9a: ~1,100 of the 2,000 pings answered, the rest cancelled at stdin's end
    lines = [json.dumps({"jsonrpc": "2.0", "id": i, "method": "ping"}) for i in range(2000)]
    finds = {f"find-{k}": q for k, q in enumerate(["deploy", "soup", "rollback", "kubernetes"])}
    for k, (rid, query) in enumerate(finds.items()):  # (tool calls among the pings)
        call = {"name": "find", "arguments": {"query": query, "limit": 2}}
        at = 500 * (k + 1)
        lines.insert(
            at, json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": call})
        )
    answers, code = _piped(index, lines)
    assert code == 0
    by_id = {a["id"]: a for a in answers}
    assert len(answers) == len(by_id) == 2000 + len(finds) + 1  # (each once; init's too)
    assert all(by_id[i]["result"] == {} for i in range(2000))
    for rid in finds:
        result = by_id[rid]["result"]
        assert not result.get("isError") and result["structuredContent"]["hits"], result


def test_one_request_then_end_of_stdin_is_answered_and_the_server_exits_promptly(
    index: Path,
) -> None:
    # 6ef26e9a: the ping was cancelled too (only init answered). The wait ends with the
    # answer: the server's whole life, start included, is under the grace it may wait
    started = time.monotonic()
    answers, code = _piped(index, [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})])
    assert code == 0 and [a["id"] for a in answers] == ["init", 1]
    assert time.monotonic() - started < mcp_server.EOF_GRACE_S


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line + "\n"


def _request(rid: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"})


async def _drain(gate: mcp_server._LineGate) -> list[str]:
    return [line async for line in gate]


async def test_an_unanswered_request_keeps_the_end_of_stdin_waiting_no_longer_than_the_grace() -> (
    None
):
    # the bound: a request that never answers (a hung call) cannot keep the server alive
    gate = mcp_server._LineGate(_lines(_request(1), _request(2)), grace_s=0.5)
    started = time.monotonic()
    passed = await _drain(gate)
    waited = time.monotonic() - started
    assert len(passed) == 2 and gate.in_flight == 2
    assert 0.5 <= waited < 5.0


async def test_the_end_of_stdin_waits_for_the_answers_going_out() -> None:
    from mcp.shared.message import SessionMessage
    from mcp_types import JSONRPCError, JSONRPCResponse
    from mcp_types.jsonrpc import ErrorData

    send, receive = anyio.create_memory_object_stream[Any](10)
    gate = mcp_server._LineGate(_lines(_request(1), _request("two")), grace_s=30.0)
    watched = gate.answer_on(send)
    ended = anyio.Event()

    async def read_all() -> None:
        await _drain(gate)
        ended.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read_all)
        await anyio.sleep(0.3)
        assert not ended.is_set() and gate.in_flight == 2  # (stdin has ended; two awaited)
        await watched.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=1, result={})))
        await anyio.sleep(0.3)
        assert not ended.is_set() and gate.in_flight == 1
        error = ErrorData(code=-32603, message="x")
        started = time.monotonic()
        await watched.send(SessionMessage(JSONRPCError(jsonrpc="2.0", id="two", error=error)))
        with anyio.fail_after(5):
            await ended.wait()
        assert time.monotonic() - started < 5 and gate.in_flight == 0
    # (both answers went on to the transport's stream)
    assert [receive.receive_nowait().message.id for _ in range(2)] == [1, "two"]


async def test_a_cancelled_request_is_not_waited_for() -> None:
    # the SDK never answers a request its client cancelled: waiting for it would cost the grace
    cancel = json.dumps(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
    )
    gate = mcp_server._LineGate(_lines(_request(7), cancel), grace_s=30.0)
    with anyio.fail_after(5):
        passed = await _drain(gate)
    assert len(passed) == 2 and gate.in_flight == 0


# -- 2. a whole-number float id ------------------------------------------------------------


def test_a_whole_number_float_id_is_served_with_the_integer(index: Path) -> None:
    raw_ids = {"1.0": 1, "1e3": 1000, "-2.0": -2, "-0.0": 0, "9007199254740991.0": 2**53 - 1}
    lines = [f'{{"jsonrpc": "2.0", "id": {raw}, "method": "ping"}}' for raw in raw_ids]
    call = '{"name": "find", "arguments": {"query": "deploy", "limit": 1}}'
    lines.append(f'{{"jsonrpc": "2.0", "id": 70.0, "method": "tools/call", "params": {call}}}')
    # still refused: a fraction, and floats past 2**53 (a double no longer names one integer)
    refused = ["1.5", "1e300", "9007199254740993.0", "1e400"]
    lines += [f'{{"jsonrpc": "2.0", "id": {raw}, "method": "ping"}}' for raw in refused]
    answers, code = _piped(index, lines)
    assert code == 0
    served = [a for a in answers if a["id"] is not None and "result" in a]
    assert sorted(a["id"] for a in served if a["id"] != "init") == sorted([*raw_ids.values(), 70])
    assert all(type(a["id"]) is int for a in served if a["id"] != "init")
    hits = next(a for a in served if a["id"] == 70)["result"]["structuredContent"]["hits"]
    assert len(hits) == 1
    nulls = [a for a in answers if a["id"] is None]
    assert len(nulls) == len(refused)
    assert all(a["error"]["code"] == -32600 for a in nulls)


def test_a_whole_number_float_id_with_a_lone_surrogate_is_refused_to_its_id() -> None:
    line = '{"jsonrpc": "2.0", "id": 8.0, "method": "ping", "params": {"x": "\\ud800"}}'
    answer = mcp_server._refusal(line)
    assert answer is not None and answer.id == 8 and answer.error.code == -32600


@settings(max_examples=300, deadline=None)
@given(
    request_id=st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(min_value=-(2**60), max_value=2**60).map(float),
    params=st.none()
    | st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3),
)
def test_a_float_id_is_served_as_its_integer_exactly_when_whole_and_within_2_53(
    request_id: float, params: dict[str, Any] | None
) -> None:
    from mcp_types import JSONRPCRequest

    sent: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"}
    if params is not None:
        sent["params"] = params
    screened = mcp_server._screen(json.dumps(sent))
    whole = request_id.is_integer() and abs(request_id) <= 2**53 - 1
    if not whole:
        assert screened.answer is not None and screened.answer.id is None
        assert screened.answer.error.code == -32600
        return
    assert screened.answer is None and screened.request_id == int(request_id)
    passed = json.loads(screened.line)
    assert type(passed["id"]) is int and passed == {**sent, "id": int(request_id)}
    assert JSONRPCRequest.model_validate_json(screened.line).id == int(request_id)
