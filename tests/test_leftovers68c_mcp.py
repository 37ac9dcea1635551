"""``treehop mcp``'s gate, stop 67's leftovers (helper leftovers68c, bench/README.md
"(helper leftovers68c)"), the real server over real pipes where it can be:

1. Once the waiting room was full (as many lines as may run, read past the limit), stdin was
   read no further: a ``notifications/cancelled`` sent then waited behind requests nothing
   could stop. Cancels are now read and applied behind a full room; the first other line
   waits past it (one line) and reading stops there, so a flood of cancels holds nothing.
2. A blank stdin line was answered with a Parse error (``-32700``): it is no message, and the
   SDK's own stdio readers answer none.
3. The gate parsed a request a second time (the SDK's union) whenever its text *might* hold a
   ``"result"`` / ``"error"`` key (any ``\\u`` escape, any value ending in "error"): the keys
   the one parse decodes say it exactly.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import test_leftovers67b_mcp_limits as l67b
import test_mcp63_protocol as mcp63
from test_leftovers66c_mcp_wire import _Proc
from test_leftovers67b_mcp_limits import _cancel, _draining, _lines, _ping, _settled

# -- 1. a cancel behind a full waiting room --------------------------------------------------


async def test_a_cancel_behind_a_full_room_is_read_and_frees_its_place() -> None:
    from treehop.mcp_server import _LineGate

    head = [_ping(1), _ping(2), _ping(3), _ping(4), _cancel(1)]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2)
    async with _draining(gate) as passed:
        # 1 and 2 run, 3 and 4 fill the room (2 lines); the cancel of 1 is read behind it
        # (c3a05a97: never, 4 lines read) and frees 1's place, which 3 takes; 5 then fills
        # the room again and 6 waits past it: nothing further is read
        await _settled(read, 7)
        assert passed == [read[0], read[1], read[4], read[2]], passed
        assert gate.in_flight == 2 and gate.waiting == 3


async def test_a_flood_of_cancels_behind_a_full_room_is_passed_on_and_holds_nothing() -> None:
    from treehop.mcp_server import _LineGate

    floods = 3_000
    head = [_ping(1), _ping(2), _ping(3), _ping(4), *(_cancel(f"gone-{i}") for i in range(floods))]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2)
    async with _draining(gate) as passed:
        # every cancel is passed on as it is read (none kept: the room stays at 2); the first
        # ping after them waits past the room, and reading stops there
        await _settled(read, 4 + floods + 1)
        assert passed == read[:2] + read[4 : 4 + floods]
        assert gate.waiting == 3 and gate.in_flight == 2


async def test_a_line_past_the_full_room_stops_the_reading() -> None:
    # control (the bound): a cancel sent after a line that waits past the full room waits
    # for a place, as every line did once the room was full
    from treehop.mcp_server import _LineGate

    head = [_ping(1), _ping(2), _ping(3), _ping(4), _ping(5), _cancel(1)]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=2)
    async with _draining(gate) as passed:
        await _settled(read, 5)
        assert gate.waiting == 3 and passed == read[:2]
        gate.answered(2)  # (2's place: 3 runs, and the room has a place: the cancel is read,
        # frees 1's place for 4; 6 fills the room again, 7 waits past it)
        await _settled(read, 8)
        assert passed == [read[0], read[1], read[2], read[5], read[3]], passed


def _server(tmp_path: Path, **limits: Any) -> tuple[_Proc, Path]:
    """leftovers67b's held-embedder server (a find of "hold ..." waits for the flag file),
    built with ``limits``."""
    script = l67b._HELD
    built = "build_server(client.aio, write_deadline_s=60)"
    assert built in script
    script = script.replace(built, f"build_server(client.aio, write_deadline_s=60, **{limits!r})")
    flag = tmp_path / "release"
    tests = str(Path(__file__).resolve().parent)
    return _Proc([sys.executable, "-c", script, str(tmp_path / "idx"), str(flag), tests]), flag


def test_a_cancel_sent_behind_a_full_room_reaches_the_server(tmp_path: Path) -> None:
    # 4 finds held by a slow embedder run (max_in_flight=4), 4 pings fill the waiting room;
    # then the 4 finds are cancelled and a line that is not JSON follows. The cancels must be
    # read behind the full room: each frees a place, the 4 pings are answered, then the Parse
    # error (c3a05a97: nothing read until a find answers: no answer within 20 s). The
    # cancelled finds are never answered.
    server, flag = _server(tmp_path, max_in_flight=4)
    try:
        for i in range(4):
            call = {"name": "find", "arguments": {"query": f"hold {i}"}}
            server.send(
                {"jsonrpc": "2.0", "id": f"find-{i}", "method": "tools/call", "params": call}
            )
        for i in range(4):
            server.send({"jsonrpc": "2.0", "id": i, "method": "ping"})
        server.write("".join(_cancel(f"find-{i}") + "\n" for i in range(4)).encode())
        server.write(b"{not json\n")
        got = [server.answer(20.0)["id"] for _ in range(5)]
        assert sorted(got, key=str) == sorted([0, 1, 2, 3, None], key=str), got
    finally:
        flag.touch()
        assert server.proc.stdout is not None
        code = server.close()
    rest = server.proc.stdout.read().decode()
    assert code == 0
    assert rest == "", [json.loads(line)["id"] for line in rest.splitlines()]


# -- 2. a blank line -------------------------------------------------------------------------


def test_a_blank_line_is_no_message_and_gets_no_answer(tmp_path: Path) -> None:
    # blank lines (JSON whitespace only) between messages: no answer; c3a05a97 answered each
    # with a Parse error to id null, the first answer the client saw
    server, flag = _server(tmp_path)
    flag.touch()
    try:
        server.write(b"\n   \n\t\r\n \r\n")
        server.send({"jsonrpc": "2.0", "id": "after-blanks", "method": "ping"})
        assert server.answer(mcp63.WAIT_S)["id"] == "after-blanks"
        # control: a line that is not blank and not JSON is still a Parse error
        server.write(b" x \n")
        refused = server.answer(mcp63.WAIT_S)
        assert refused["id"] is None and refused["error"]["code"] == -32700, refused
        server.write(b"\n\n\n")
    finally:
        code = server.close()
    assert server.proc.stdout is not None
    assert code == 0 and server.proc.stdout.read() == b""  # (the last blanks: no answer)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=" \t\r\n", max_size=40), st.text(max_size=20))
def test_only_json_whitespace_is_blank(spaces: str, other: str) -> None:
    from treehop.mcp_server import _blank

    assert _blank(spaces)
    stripped = other.strip(" \t\r\n")
    if stripped:  # (a character that is no JSON whitespace: a line to answer or pass on)
        assert not _blank(spaces + other + spaces)
    # (a Unicode space is no JSON whitespace: \u00a0 alone is not JSON, answered -32700)
    assert not _blank(spaces + "\u00a0")


# -- 3. one parse for a request --------------------------------------------------------------


class _CountingUnion:
    """The SDK's union of message models, counting its parses (each one passed to it)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.parses = 0

    def validate_json(self, *args: Any, **kwargs: Any) -> Any:
        self.parses += 1
        return self.inner.validate_json(*args, **kwargs)


def _find(query: str, *, ascii_only: bool, **extra: Any) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": "find", "arguments": {"query": query}},
        **extra,
    }
    return json.dumps(message, ensure_ascii=ascii_only)


def test_a_request_with_escapes_is_parsed_once(monkeypatch: Any) -> None:
    import mcp_types

    from treehop.mcp_server import _screen

    counting = _CountingUnion(mcp_types.jsonrpc_message_adapter)
    monkeypatch.setattr(mcp_types, "jsonrpc_message_adapter", counting)
    for line in (
        _find("Schlüssel 鍵", ascii_only=True),  # (\u escapes: c3a05a97 parsed it twice)
        _find("what does this error", ascii_only=False),  # (ends in error": twice too)
        _find("r\u00e9sult", ascii_only=True),
    ):
        screened = _screen(line)
        assert screened.answer is None and screened.request_id == 7
    assert counting.parses == 0
    # control: beside a "result" key, spelled with an escape or not, the union decides
    for key in ('"result"', '"r\\u0065sult"', '"\\u0065rror"'):
        line = _find("keys", ascii_only=True)[:-1] + f", {key}: {{}}}}"
        _screen(line)
    assert counting.parses == 3


_KEY = st.one_of(
    st.sampled_from(["result", "error", "x", "params2", "id2", "Result", "errors"]),
    st.text(max_size=8),
)
_VALUE = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=10),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=2),
)


def _escaped(text: str, mask: list[bool]) -> str:
    """``text`` as a JSON string with the letters ``mask`` picks written as ``\\u`` escapes."""
    plain = json.dumps(text)[1:-1]
    if plain != text:
        return plain
    return "".join(f"\\u{ord(c):04x}" if m else c for c, m in zip(text, mask, strict=False))


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(_KEY, _VALUE, max_size=3),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.text(max_size=12),
    st.sampled_from([7, "q", -3]),
)
def test_the_gate_reads_a_request_as_the_sdks_union_does(
    extra: dict[str, Any], mask: list[bool], query: str, rid: Any
) -> None:
    # control (exactness, true on c3a05a97 too, where more lines went to the union): whatever
    # top-level keys sit beside a request's fields (spelled with escapes
    # or not), the gate awaits an answer (request_id) exactly when the SDK's union, which its
    # stdio reader uses, reads the line as a request
    from mcp_types import JSONRPCRequest, jsonrpc_message_adapter

    from treehop.mcp_server import _screen

    fields = {"jsonrpc": "2.0", "id": rid, "method": "ping", "params": {"q": query}}
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in fields.items()]
    parts += [
        f'"{_escaped(k, mask)}": {json.dumps(v)}' for k, v in extra.items() if k not in fields
    ]
    line = "{" + ", ".join(parts) + "}"
    screened = _screen(line)
    union = jsonrpc_message_adapter.validate_json(line, by_name=False)
    assert screened.answer is None
    assert (screened.request_id is not None) == isinstance(union, JSONRPCRequest), line


def test_the_screening_is_linear_for_a_large_ascii_request() -> None:
    # control (no timing asserted): a 1 MB request with no extra key is served, its id kept
    from treehop.mcp_server import _screen

    line = _find("backup keys " * 85_000, ascii_only=True)
    screened = _screen(line)
    assert screened.answer is None and screened.request_id == 7 and screened.line == line


async def test_blank_lines_are_skipped_by_the_gate_in_process() -> None:
    # the gate itself: blank lines are neither passed on nor answered (an answer would wait
    # for the transport, which this test never opens: c3a05a97 stalled at the first blank)
    from treehop.mcp_server import _LineGate

    head = ["", "   ", "\t\r", _ping(1)]
    read: list[str] = []
    gate = _LineGate(_lines(read, head), max_in_flight=1)
    async with _draining(gate) as passed:
        await _settled(read, 6)  # (ping 1 runs, ping 4 waits: the room of 1; 5 past it)
        assert passed == [read[3]]
