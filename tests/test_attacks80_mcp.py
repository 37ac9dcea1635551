"""Attacks on stop 67's MCP waiting room (helper attacks80, bench/README.md "(helper attacks80)").

A ``notifications/cancelled`` read while lines wait walks the waiting room for the request it
names. Each walk made every waiting id's correlation key again (``_id_key``: the SDK's
``coerce_request_id``, an ``int()`` of a string id), and that reads a string id whole (its
digits, or its ``repr`` for the error): with a request whose id is millions of characters
waiting, each 80-character cancel held the event loop 80-500 ms (a 16 MB id), for as many
cancels as a client sends. The keys are now made once, as a line starts to wait.

Fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from test_leftovers67b_mcp_limits import _cancel, _draining, _lines, _ping

_CANCELS = 300


async def _until(done: Any) -> None:
    with anyio.fail_after(300):  # (the first screen imports the SDK: seconds on a loaded box)
        while not done():
            await anyio.sleep(0.01)


async def test_cancels_while_a_long_id_waits_cost_no_read_of_it() -> None:
    from treehop.mcp_server import _LineGate

    long_id = "x" * 16_000_000  # (a string id within the default line bound)
    head = [_ping(0), _ping(1), _ping(long_id), *(_cancel(f"c{i}") for i in range(_CANCELS))]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2, waiting_chars=20_000_000)
    async with _draining(gate) as passed:
        # 0 and 1 run, the long one waits; each cancel names no waiting request and goes
        # ahead of it
        await _until(lambda: len(passed) >= 3)
        started = time.monotonic()
        await _until(lambda: len(passed) >= 2 + _CANCELS)
        took = time.monotonic() - started
    assert passed == [read[0], read[1], *read[3 : 3 + _CANCELS]]
    # (c3a05a97: each cancel read the 16 MB id again, 80-500 ms each: 24 s and more in all)
    assert took < 5.0, took


async def test_a_cancel_still_drops_the_waiting_request_it_names_control() -> None:
    # control (passes on c3a05a97): a long id and a numeric string id ("7" is 7 to the SDK)
    from treehop.mcp_server import _LineGate

    long_id = "y" * 100_000
    head: list[Any] = [
        *(_ping(0), _ping(1), _ping(long_id), _cancel(long_id), _ping(7), _cancel("7"))
    ]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2, waiting_chars=10**6)
    async with _draining(gate) as passed:
        # the long one and 7 dropped as their cancels go ahead; pings 6 and 7 then wait, and
        # 8 past the full room (leftovers68c: read for cancels), none further
        await _until(lambda: len(read) >= 9 and gate.waiting == 3)
        await anyio.sleep(0.3)
        assert passed == [read[0], read[1], read[3], read[5]], [
            json.loads(p).get("params") or json.loads(p)["id"] for p in passed
        ]
        assert gate.waiting == 3 and len(read) == 9
