"""``treehop mcp``'s limits on what it holds of its client (helper leftovers67b,
bench/README.md "(helper leftovers67b)"), the real server over real pipes where it can be:

1. ``MAX_IN_FLIGHT`` bounded the requests in flight, not their size: 256 requests of up to
   16 Mi characters each could be held at once. The characters of the requests in flight are
   bounded too (``max_in_flight_chars``, by default 4 lines' worth).
2. A ``notifications/cancelled`` sent while the limit held waited behind the requests in
   flight (the gate read nothing more). Past the limit the gate now reads on into a bounded
   waiting room: a cancel is passed on at once, and a waiting request it names is dropped.
3. The limits were ``build_server`` keywords only: they are ``treehop mcp`` options now,
   checked (``InvalidConfigError`` / exit 2) before the index is opened.

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import test_mcp63_protocol as mcp63
from test_leftovers66c_mcp_wire import _pinged_unread, _Proc
from treehop import _mcp_wire
from treehop.errors import InvalidConfigError

index = mcp63.index  # (the devops sample beside the soup note, built once a module)


def _ping(rid: Any, pad: int = 0) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "ping"})[:-1] + " " * pad + "}"


def _cancel(rid: Any) -> str:
    params = {"requestId": rid}
    return json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


async def _lines(read: list[str], head: list[str]) -> AsyncIterator[str]:
    """``head``'s lines, then pings without end; each line handed on is kept in ``read``."""
    for i in itertools.count():
        line = (head[i] if i < len(head) else _ping(i)) + "\n"
        read.append(line)
        yield line


async def _settled(read: list[Any], reads: int) -> None:
    """``reads`` lines read, then no further one for 0.3 s."""
    with anyio.fail_after(30):  # (the first line screened imports the SDK: seconds)
        while len(read) < reads:
            await anyio.sleep(0.01)
    await anyio.sleep(0.3)
    assert len(read) == reads, read


@contextlib.asynccontextmanager
async def _draining(gate: Any) -> AsyncIterator[list[str]]:
    """``gate`` read as the SDK reads it, on a task, while the block runs: the lines it
    passed on (the reading is cancelled at the block's end)."""
    passed: list[str] = []

    async def drain() -> None:
        async for line in gate:
            passed.append(line)

    async with anyio.create_task_group() as tg:
        tg.start_soon(drain)
        yield passed
        tg.cancel_scope.cancel()


# -- 1. the characters in flight -------------------------------------------------------------


async def test_the_gate_runs_no_more_characters_than_its_bound() -> None:
    from treehop.mcp_server import _LineGate

    pinged = len(_ping(0, 1000)) + 1  # (each line, its newline counted: 1,046 characters)
    read: list[str] = []
    head = [_ping(i, 1000) for i in range(6)]
    gate = _LineGate(_lines(read, head), max_chars=2 * pinged + 10, waiting_chars=2 * pinged)
    async with _draining(gate) as passed:
        # two fit (2,092 <= 2,102 characters); two more are read to wait (the waiting room's
        # 2,092 characters), and one past the full room (leftovers68c: read for cancels; the
        # first other line waits there), none further
        await _settled(read, 5)
        assert gate.in_flight == 2 and gate.in_flight_chars == 2 * pinged and gate.waiting == 3
        gate.answered(0)
        await _settled(read, 6)  # (one runs, one more waits past the full room)
        assert gate.in_flight == 2 and gate.in_flight_chars == 2 * pinged
        assert passed == read[:3]


async def test_a_request_longer_than_the_bound_runs_alone() -> None:
    # control: one request always runs (the bound holds back only a second one)
    from treehop.mcp_server import _LineGate

    read: list[str] = []
    gate = _LineGate(_lines(read, [_ping(0, 5000), _ping(1)]), max_chars=1000, waiting_chars=50)
    async with _draining(gate) as passed:
        await _settled(read, 4)  # (1, 2 wait: 96 characters pass the room's 50; 3 past it)
        assert passed == read[:1] and gate.in_flight == 1
        gate.answered(0)
        with anyio.fail_after(5):
            while len(passed) < 2:
                await anyio.sleep(0.01)
        assert passed[1] == read[1]


_SERVE = """
import json, sys
from treehop import Treehop
from treehop.mcp_server import build_server

client = Treehop(sys.argv[1])
try:
    build_server(client.aio, **json.loads(sys.argv[2])).run("stdio")
finally:
    client.close()
"""


def test_a_client_writing_large_requests_without_end_is_held_to_the_character_bound(
    index: Path,
) -> None:
    # pings padded to 60,000 characters, written without end, stdout never read: the server
    # runs 4 lines' worth of characters (4 x 65,536: 4 pings) and reads 2 more to wait; on
    # 2bd9fe6d it read 256 of them (15 MB; at the default line bound 256 x 16 Mi characters)
    import fcntl

    limits = {"line_chars": 65_536, "write_deadline_s": 2}
    server = _Proc([sys.executable, "-c", _SERVE, str(index), json.dumps(limits)])
    assert server.proc.stdin is not None and server.proc.stdout is not None
    for pipe in (server.proc.stdin, server.proc.stdout):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 4096)
    sent, took = _pinged_unread(server, itertools.count(), pad=60_000)
    answered = [json.loads(line)["id"] for line in server.proc.stdout.read().splitlines()]
    assert answered == list(range(len(answered)))
    unanswered = len(sent) - len(answered)
    # (4 in flight, 2 waiting, one in the reader's 64 KiB chunk, one cut in the pipe, one
    # being written: at most 12)
    assert 0 < unanswered <= 12, (len(sent), len(answered))
    assert took < 60.0, took


# -- 2. a cancel while the limit holds -------------------------------------------------------


async def test_a_cancel_read_past_the_limit_goes_ahead_and_drops_the_request_it_names() -> None:
    from treehop.mcp_server import _LineGate

    init = json.dumps({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {}})
    head = [_ping(1), _ping(2), _ping("w"), _cancel("w"), init, _cancel("init"), _cancel(1)]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2)
    async with _draining(gate) as passed:
        # 1 and 2 run, "w" waits; the cancel of "w" passes ahead and drops it (never run,
        # never answered). init waits; the cancel naming it passes but leaves it (MCP: a
        # client must not cancel it); the cancel of 1 frees 1's place, which init takes.
        # Pings 7 and 8 then fill the waiting room (2 lines, as many as may run), and 9 waits
        # past it (leftovers68c: read for cancels)
        await _settled(read, 10)
        assert passed == [read[0], read[1], read[3], read[5], read[6], read[4]], passed
        assert gate.in_flight == 2 and gate.waiting == 3


async def test_a_read_given_up_for_a_freed_place_loses_no_line() -> None:
    # the gate races a read of stdin against an answer; the read it gives up goes on in
    # the wire reader and its line comes next (a real pipe, the real reader)
    from treehop.mcp_server import _LineGate

    rfd, wfd = os.pipe()
    try:
        lines = _mcp_wire.WireLines(lambda n: os.read(rfd, n))
        gate = _LineGate(lines, max_in_flight=2)

        async def until(n: int) -> None:
            with anyio.fail_after(30):
                while len(passed) < n:
                    await anyio.sleep(0.01)

        async with _draining(gate) as passed:
            os.write(wfd, "".join(_ping(i) + "\n" for i in (1, 2, 3)).encode())
            await until(2)
            await anyio.sleep(0.3)  # (3 waits, the room not full: the gate reads the pipe)
            assert gate.waiting == 1 and len(passed) == 2
            gate.answered(1)  # (3 runs: the read under way is given up, not lost)
            await until(3)
            os.write(wfd, (_ping(4) + "\n").encode())
            await anyio.sleep(0.3)
            assert gate.waiting == 1  # (4 read by the read given up, and waiting)
            gate.answered(2)
            await until(4)
            assert [json.loads(line)["id"] for line in passed] == [1, 2, 3, 4]
        lines.close()
    finally:
        os.close(wfd)
        os.close(rfd)


_HELD = """
import os, sys
sys.path.insert(0, sys.argv[3])  # (the tests folder: treehop_test_doubles; not on CI's path)
import anyio
from treehop import Treehop
from treehop.mcp_server import build_server
from treehop_test_doubles import BagOfWordsEmbedder


class HeldEmbedder(BagOfWordsEmbedder):
    # a query holding "hold" is embedded once the flag file exists (a slow remote embedder)
    async def aembed_query(self, text):
        if "hold" in text:
            with anyio.fail_after(120):
                while not os.path.exists(sys.argv[2]):
                    await anyio.sleep(0.05)
        return self.embed_query(text)


client = Treehop(sys.argv[1], embedder=HeldEmbedder(), reader_processes=0, tagger=None)
client.add_resource("Backups run nightly.", name="ops")
try:
    build_server(client.aio, write_deadline_s=60).run("stdio")
finally:
    client.close()
"""


def test_a_cancel_sent_while_the_limit_holds_reaches_the_server(tmp_path: Path) -> None:
    # 256 finds held by a slow embedder fill the limit; then a ping "x", 50 pings, a cancel
    # of "x" and a line that is not JSON. The server must read past the limit: the Parse
    # error comes while the finds still run (2bd9fe6d: nothing is read until a find answers).
    # Then the finds are cancelled: each cancel frees its place, the 50 pings are answered,
    # and "x" never is (it was dropped where it waited); nor is any cancelled find.
    from treehop.mcp_server import MAX_IN_FLIGHT

    flag = tmp_path / "release"
    tests = str(Path(__file__).resolve().parent)
    server = _Proc([sys.executable, "-c", _HELD, str(tmp_path / "idx"), str(flag), tests])
    try:
        for i in range(MAX_IN_FLIGHT):
            call = {"name": "find", "arguments": {"query": f"hold {i}"}}
            server.send(
                {"jsonrpc": "2.0", "id": f"find-{i}", "method": "tools/call", "params": call}
            )
        server.send({"jsonrpc": "2.0", "id": "x", "method": "ping"})
        for i in range(50):
            server.send({"jsonrpc": "2.0", "id": i, "method": "ping"})
        server.write((_cancel("x") + "\n{not json\n").encode())
        refused = server.answer(20.0)
        assert refused["id"] is None and refused["error"]["code"] == -32700, refused
        for i in range(MAX_IN_FLIGHT):
            server.write((_cancel(f"find-{i}") + "\n").encode())
        server.write(b"{not json either\n")  # (its answer: every cancel before it was read)
        got = [server.answer(mcp63.WAIT_S)["id"] for _ in range(51)]
        assert sorted(got, key=str) == sorted([*range(50), None], key=str), got
    finally:
        flag.touch()
        assert server.proc.stdout is not None
        code = server.close()
    rest = server.proc.stdout.read().decode()
    assert code == 0
    assert rest == "", [
        json.loads(line)["id"] for line in rest.splitlines()
    ]  # ("x" and the cancelled finds: never answered)


# -- 3. the limits as options ----------------------------------------------------------------

_KEYS = st.sampled_from(["line_chars", "max_in_flight", "max_in_flight_chars", "write_deadline_s"])
_VALUES = st.one_of(
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
    st.integers(min_value=2**60, max_value=2**5000),
)


@settings(max_examples=400, deadline=None)
@given(values=st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_the_limits_are_taken_in_range_or_refused_by_name(values: dict[str, Any]) -> None:
    try:
        limits = _mcp_wire.wire_limits(**values)
    except InvalidConfigError as exc:
        assert any(str(exc).startswith(k) for k in values), exc
        assert len(str(exc)) < 400
        return
    for key, (low, high) in _mcp_wire.LIMIT_RANGES.items():
        got = getattr(limits, key)
        assert low <= got <= high and not isinstance(got, bool)
        if values.get(key) is not None:
            assert got == values[key]
    assert limits.max_in_flight_chars >= limits.line_chars
    if values.get("max_in_flight_chars") is None:
        assert limits.max_in_flight_chars == _mcp_wire.IN_FLIGHT_LINES * limits.line_chars


def test_the_defaults_are_unchanged() -> None:
    # control: the limits as they were before they were options
    from treehop.mcp_server import MAX_IN_FLIGHT

    assert _mcp_wire.wire_limits() == (16 * 1024 * 1024, 60.0, 256, 64 * 1024 * 1024)
    assert MAX_IN_FLIGHT == 256


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--max-line-chars", "10"], "--max-line-chars must be an integer from 1,024"),
        (["--max-line-chars", "x"], "argument --max-line-chars: not an integer: x"),
        (["--write-deadline", "nan"], "--write-deadline must be a number of seconds from 1"),
        (["--write-deadline", "0"], "--write-deadline must be a number of seconds from 1"),
        (["--max-in-flight", "0"], "--max-in-flight must be an integer from 1 to 65,536"),
        (
            ["--max-line-chars", "4096", "--max-in-flight-chars", "2048"],
            "--max-in-flight-chars (2,048) must be at least --max-line-chars (4,096)",
        ),
    ],
)
def test_a_bad_limit_is_a_usage_error_before_the_index_is_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    from treehop.cli import main

    where = tmp_path / "idx"
    assert main(["--index", str(where), "mcp", *args]) == 2
    assert said in capsys.readouterr().err
    assert not where.exists()


def test_the_options_reach_the_server(index: Path) -> None:
    # --max-line-chars: a 3,000-character ping refused naming the bound, a 2,000 served
    server = _Proc(
        [sys.executable, "-m", "treehop", "--index", str(index), "mcp", "--max-line-chars", "2048"]
    )
    try:
        server.write((_ping(1, 3000) + "\n" + _ping(2, 1900) + "\n").encode())
        refused = server.answer(mcp63.WAIT_S)
        assert refused["id"] == 1 and "2,048 characters" in refused["error"]["message"]
        assert server.answer(mcp63.WAIT_S) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    finally:
        assert server.close() == 0


def test_the_in_flight_and_deadline_options_reach_the_server(index: Path) -> None:
    # an endless pinger that reads nothing: with --max-in-flight 2 the server holds 2 pings
    # and 2 waiting (the default holds 256 and 256), and --write-deadline 1 ends it
    import fcntl

    argv = [sys.executable, "-m", "treehop", "--index", str(index), "mcp"]
    server = _Proc([*argv, "--max-in-flight", "2", "--write-deadline", "1"])
    assert server.proc.stdin is not None and server.proc.stdout is not None
    for pipe in (server.proc.stdin, server.proc.stdout):
        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, 4096)
    sent, _took = _pinged_unread(server, itertools.count(), deadline_s=1)
    answered = [json.loads(line)["id"] for line in server.proc.stdout.read().splitlines()]
    unanswered = len(sent) - len(answered)
    assert 0 < unanswered <= 2 * 2 + 300, (len(sent), len(answered))


def test_the_help_gives_each_limit() -> None:
    from treehop.cli._app import MCP_LIMIT_OPTIONS, build_parser

    parser = build_parser()
    sub: Any = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    text = sub.choices["mcp"].format_help()
    for option in MCP_LIMIT_OPTIONS.values():
        assert option in text
    for number in ("16,777,216", "60", "256", "67,108,864"):
        assert number in text
    doc = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")
    for option in MCP_LIMIT_OPTIONS.values():
        assert option in doc, option
