"""The wire under ``treehop mcp``'s stdio transport: stdin read as bounded lines, stdout
written with a deadline (helper leftovers66c).

The SDK's ``stdio_server`` (mcp 2.3) reads stdin with ``readline()`` and writes stdout with a
blocking ``write`` + ``flush``, each in one of anyio's worker threads. Two ways a client could
hold the server through them:

- a line without a newline is read whole: a client that sends 1 GiB without ``"\\n"`` grows
  the server's memory by gigabytes (the bytes, then the decoded text). :class:`WireLines`
  reads stdin in chunks and cuts lines itself: a line longer than :data:`MAX_LINE_CHARS` is
  handed on as a :class:`TooLong` (the server answers it with a JSON-RPC error) as soon as it
  passes the limit, and the rest of it, up to its newline, is read and dropped, never kept.
- a client that stops reading stdout fills the pipe, and the writer's ``write`` blocks for as
  long as the client lives; a worker thread blocked in a system call cannot be cancelled, so
  the server hangs with it (every answer queues behind the stuck one). :class:`WireOut`
  writes each message under a total deadline (:data:`WRITE_DEADLINE_S`); past it the write is
  abandoned and :class:`ClientStuck` ends the session.

(anyio, the SDK's own dependency, is imported where it is used: the core needs neither.)
Both run their blocking calls on a daemon thread of their own (:class:`_Blocking`), not in
anyio's worker threads: those are joined when the interpreter exits, so a read or a write
still blocked on a stuck client would keep the process alive after the session ended.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import os
import queue
import re
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

MAX_LINE_CHARS = 16 * 1024 * 1024
"""The longest stdin line (characters, its newline not counted) the MCP server reads as a
message. Why: a line is a message, and the SDK read each one whole, however long; a client
writing without newlines grew the server's memory without bound. A longer line is answered
with ``-32600`` Invalid Request, to the request's id where the line's head names it before
anything nested (as every SDK writes a request: ``{"jsonrpc": "2.0", "id": 7, ...}``), else
``id: null``, and dropped as it streams past: the server's memory for stdin stays about this
many characters. 16 Mi characters is far above any request a tool takes (an ``add_memory``
text, a query, 1,000 ``exclude_uris`` of the longest URI are each under 1 MiB as JSON), and
above the 5 MB of hostile arguments that ``tests/test_cli62_mcp.py`` has answered as a tool
error since stop 62."""

HEAD_CHARS = 4096
"""How much of a line past :data:`MAX_LINE_CHARS` is kept to find its id in."""

WRITE_DEADLINE_S = 60.0
"""How long one message to the client (an answer, an error) may take to be written on stdout
before the server gives up on the client and ends the session. Why: a client that stops
reading stdout fills the pipe, and the SDK's writer then blocks for as long as the client
lives, every later answer queued behind it. A client that reads, however slowly, takes
milliseconds per message; a minute is a client that no longer reads."""

READ_CHUNK_BYTES = 64 * 1024
"""How much of stdin one read asks for (the lines are cut from these chunks)."""

JOIN_PARTS = 256
"""How many short pieces of a line in progress :class:`LineSplitter` keeps before it joins
them into one string (each piece at least a character)."""

JOIN_CHARS = 1024
"""A piece of a line this long or longer is kept as it is; shorter ones are joined once
they add up to this many characters (or :data:`JOIN_PARTS` pieces)."""

MAX_IN_FLIGHT = 256
"""How many requests the stdio server runs at once: while this many it has read are not
answered yet, it passes no further request on (backpressure; see
``treehop.mcp_server._LineGate``). Why: the SDK starts a task for every request it reads and
keeps reading while the answers wait, so a client that wrote requests without end and read
no answer grew the server by every request (350 MB in 10 s of pings), and the work of
reading starved the writer: the write deadline (:data:`WRITE_DEADLINE_S`) fired only once the
stdout pipe was full, 4 s to over 120 s in (helper leftovers66d). Bounded, the reading stops,
the pipe fills and the deadline ends the session on time. 256 is far above what an agent
keeps in flight (a few calls). Safe because no treehop tool sends a request to the client
(sampling, elicitation, roots): a request in flight never waits on a line unread."""

IN_FLIGHT_LINES = 4
"""The default bound on the characters of the requests in flight, in lines of the line
bound: ``max_in_flight_chars`` defaults to this many times ``line_chars`` (64 Mi characters
with the default 16 Mi). Why (helper leftovers67b): :data:`MAX_IN_FLIGHT` counts requests,
not their size, so 256 requests of up to :data:`MAX_LINE_CHARS` each (4 Gi characters, more
once parsed) could be held at once; a few lines' worth serves every real client (an agent's
calls are kilobytes) and lets a few requests at the line bound run side by side."""

MAX_IN_FLIGHT_CHARS = IN_FLIGHT_LINES * MAX_LINE_CHARS
"""The default bound on the characters of the requests read and not answered (see
:data:`IN_FLIGHT_LINES`); a single request longer than what is left of it waits until the
ones in flight are answered (one alone always runs)."""

LIMIT_RANGES: dict[str, tuple[int | float, int | float]] = {
    "line_chars": (1024, 2**30),
    "write_deadline_s": (1.0, 86_400.0),
    "max_in_flight": (1, 65_536),
    "max_in_flight_chars": (1024, 2**36),
}
"""Each wire limit's accepted range (``build_server``'s keywords, ``treehop mcp``'s options).
Why these ends: below 1,024 characters a client's own ``initialize`` (a few hundred
characters with its capabilities) may not fit a line; a deadline under a second can pass on a
loaded machine with the client reading (each write is handed to a thread), and one over a day
is no deadline; one request in flight at a time is the least that serves. The upper ends only
refuse typos (a bound in the tens of gigabytes holds nothing back)."""


class WireLimits(NamedTuple):
    """The stdio server's limits, checked (:func:`wire_limits`)."""

    line_chars: int
    write_deadline_s: float
    max_in_flight: int
    max_in_flight_chars: int


def wire_limits(
    *,
    line_chars: object = MAX_LINE_CHARS,
    write_deadline_s: object = WRITE_DEADLINE_S,
    max_in_flight: object = MAX_IN_FLIGHT,
    max_in_flight_chars: object = None,
    names: Mapping[str, str] | None = None,
) -> WireLimits:
    """The limits, each checked against :data:`LIMIT_RANGES` (an integer, never a bool, for
    the counts; a finite number of seconds for the deadline), ``max_in_flight_chars``
    defaulting to :data:`IN_FLIGHT_LINES` lines and at least one line: else
    :class:`~treehop.errors.InvalidConfigError` naming the first bad one (as ``names`` spells
    it: ``treehop mcp`` gives its option names). Why: a bound of 0 refused every line, a
    negative or NaN deadline ended every session at its first answer, and an in-flight budget
    under one line could not hold the request the line bound admits; each was taken as given.
    """
    from .errors import InvalidConfigError
    from .validation import integral, real, shown_value

    shown = {**{k: k for k in LIMIT_RANGES}, **(names or {})}

    def count(value: object, key: str) -> int:
        low, high = LIMIT_RANGES[key]
        n = integral(value)
        if n is None or not low <= n <= high:
            raise InvalidConfigError(
                f"{shown[key]} must be an integer from {low:,} to {high:,}, got "
                f"{shown_value(value)}"
            )
        return n

    line = count(line_chars, "line_chars")
    low, high = LIMIT_RANGES["write_deadline_s"]
    seconds = real(write_deadline_s)
    if seconds is None or not low <= seconds <= high:  # (False for NaN)
        raise InvalidConfigError(
            f"{shown['write_deadline_s']} must be a number of seconds from {low:g} to "
            f"{high:,g}, got {shown_value(write_deadline_s)}"
        )
    flight = count(max_in_flight, "max_in_flight")
    if max_in_flight_chars is None:
        chars = IN_FLIGHT_LINES * line
    else:
        chars = count(max_in_flight_chars, "max_in_flight_chars")
        if chars < line:
            raise InvalidConfigError(
                f"{shown['max_in_flight_chars']} ({chars:,}) must be at least "
                f"{shown['line_chars']} ({line:,}): the requests in flight must hold one "
                "request of the longest line read"
            )
    return WireLimits(line, float(seconds), flight, chars)


class TooLong(NamedTuple):
    """A stdin line longer than ``limit`` characters, handed on in the line's place (its text
    is dropped as it is read but its first :data:`HEAD_CHARS`, ``head``)."""

    limit: int
    head: str = ""


_KEY_OR_END = re.compile(r'\s*(?:,\s*)?(?:"((?:[^"\\\x00-\x1f]|\\.)*)"\s*:\s*)?')
_SCALAR = re.compile(
    r'"(?:[^"\\\x00-\x1f]|\\.)*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null'
)


def head_id(head: str) -> Any:
    """The ``id`` of the JSON object ``head`` begins, when the keys before it hold only
    strings, numbers, booleans or ``null`` (nothing nested whose end was cut off), else
    ``None``: what a line too long to read names as its id. Linear (one pass, no
    backtracking: each pattern matches a token at a position)."""
    at = len(head) - len(head.lstrip())
    if not head.startswith("{", at):
        return None
    at += 1
    while True:
        key = _KEY_OR_END.match(head, at)
        if key is None or key.group(1) is None:
            return None
        value = _SCALAR.match(head, key.end())
        if value is None or value.end() >= len(head):  # (a number may go on past the head)
            return None
        if key.group(1) == "id":
            try:
                return json.loads(value.group(0))
            except ValueError:
                return None
        at = value.end()


class LineSplitter:
    """Text fed in pieces, cut into lines of at most ``limit`` characters (newline excluded).

    A line is handed on with its ``"\\n"`` (as ``readline`` hands it); a line that passes the
    limit is handed on once, as a :class:`TooLong`, the moment it passes it, and the rest of
    it is skipped up to its newline. Each piece is searched once: linear in the text fed,
    whatever the cut of the pieces, and at most about ``limit`` characters are kept."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[str] = []
        self._small: list[str] = []  # (the short pieces after the parts, not joined yet)
        self._small_chars = 0
        self._size = 0
        self._skipping = False

    def _keep(self, piece: str) -> None:
        """``piece`` kept for the line in progress: a long one as it is, short ones joined
        by the :data:`JOIN_PARTS` (or :data:`JOIN_CHARS` worth), so that a line fed in
        pieces of a character or two costs about its characters, not a string object (~50
        bytes) for each piece (helper attacks79: a client writing two bytes at a time as
        fast as the server reads made the 16 Mi character bound ~500 MB). Only short pieces
        are joined, so a join copies at most about ``JOIN_CHARS`` characters: a line read in
        64 KiB chunks is never copied before its end (its memory stays about the limit)."""
        if len(piece) >= JOIN_CHARS:
            self._join_small()
            self._parts.append(piece)
            return
        self._small.append(piece)
        self._small_chars += len(piece)
        if len(self._small) >= JOIN_PARTS or self._small_chars >= JOIN_CHARS:
            self._join_small()

    def _join_small(self) -> None:
        if self._small:
            self._parts.append("".join(self._small))
            self._small.clear()
            self._small_chars = 0

    def _line(self) -> str:
        """The line in progress, whole (and forgotten here)."""
        self._join_small()
        line = "".join(self._parts)
        self._clear()
        return line

    def _clear(self) -> None:
        self._parts.clear()
        self._small.clear()
        self._small_chars = 0
        self._size = 0

    def feed(self, text: str) -> list[str | TooLong]:
        """The lines (or :class:`TooLong`) that ``text`` completes or makes too long."""
        out: list[str | TooLong] = []
        start, n = 0, len(text)
        while start < n:
            end = text.find("\n", start)
            stop = n if end < 0 else end
            if not self._skipping:
                self._size += stop - start
                if self._size > self._limit:
                    if stop > start:
                        self._keep(text[start : min(stop, start + HEAD_CHARS)])
                    out.append(TooLong(self._limit, self._head()))
                    self._clear()
                    self._skipping = True
                elif stop > start:
                    self._keep(text[start:stop])
            if end < 0:
                break
            if self._skipping:
                self._skipping = False  # (the long line ends here; the next one is read)
            else:
                out.append(self._line() + "\n")
            start = end + 1
        return out

    def _head(self) -> str:
        """The first :data:`HEAD_CHARS` of the parts kept (without joining them all: they
        may hold the whole limit)."""
        head: list[str] = []
        left = HEAD_CHARS
        for part in (*self._parts, *self._small):
            if left <= 0:
                break
            head.append(part[:left])
            left -= len(head[-1])
        return "".join(head)

    def end(self) -> list[str]:
        """A last line without a newline, at the end of the text (as ``readline`` gives it)."""
        last = self._line()
        return [last] if last else []


class _Blocking:
    """Blocking calls run one at a time on a daemon thread of this object's own, each awaited
    so that a cancellation abandons it (the thread runs on; the process can still exit).

    Why not ``anyio.to_thread.run_sync(..., abandon_on_cancel=True)``: anyio's worker threads
    are not daemons, and the interpreter joins them at exit: a read or write blocked on a
    stuck client would keep the process alive after the server has ended."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        import anyio.from_thread

        while True:
            job = self._jobs.get()
            if job is None:  # (closed)
                return
            fn, args, token, done, box = job
            try:
                box.append((True, fn(*args)))
            except BaseException as exc:  # (handed to the awaiting task, raised there)
                box.append((False, exc))
            # (the event loop may be gone: the call was abandoned, nobody waits)
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(done.set, token=token)

    def close(self) -> None:
        """Let the thread end once the call it runs, if any, returns (one blocked on a stuck
        client never does: a daemon, it does not keep the process)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> _Job:
        """``fn(*args)`` queued for the thread: its :class:`_Job`, whose ``done`` is set once
        it has run (:meth:`_Job.outcome` then has its result)."""
        import anyio
        import anyio.lowlevel

        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        job = _Job(anyio.Event(), [])
        self._jobs.put((fn, args, anyio.lowlevel.current_token(), job.done, job.box))
        return job

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` on the thread; its result, or its exception raised here."""
        job = self.submit(fn, *args)
        await job.done.wait()
        return job.outcome()


class _Job(NamedTuple):
    """One call handed to a :class:`_Blocking` thread."""

    done: Any
    """An ``anyio.Event``, set once the call has run."""
    box: list[tuple[bool, Any]]
    """``(True, result)`` or ``(False, exception)`` once it has run."""

    def outcome(self) -> Any:
        """The call's result, or its exception raised here."""
        ok, value = self.box[0]
        if not ok:
            raise value
        return value


class WireLines:
    """stdin's lines (:class:`LineSplitter`), read in chunks of :data:`READ_CHUNK_BYTES` by
    ``read`` on a daemon thread: what ``stdio_server`` takes as its ``stdin`` (an async
    iterable of lines). Bytes are decoded as the SDK decodes them: UTF-8, invalid bytes
    replaced, ``"\\r\\n"`` and ``"\\r"`` read as ``"\\n"`` (``TextIOWrapper``'s universal
    newlines, the same decoder).

    Cancel-safe: a ``__anext__`` cancelled while a read is under way loses nothing (the read
    goes on, and the next ``__anext__`` takes its chunk). Why (helper leftovers67b): the MCP
    server's gate races a read against an answer freeing room (``mcp_server._LineGate``);
    an abandoned read's chunk would have been lines the client sent and nobody served."""

    def __init__(self, read: Callable[[int], bytes], *, limit: int = MAX_LINE_CHARS) -> None:
        self._read = read
        self._lines = LineSplitter(limit)
        self._decoder = io.IncrementalNewlineDecoder(
            codecs.getincrementaldecoder("utf-8")(errors="replace"), translate=True
        )
        self._ready: list[str | TooLong] = []
        self._at = 0
        self._ended = False
        self._thread = _Blocking("treehop mcp stdin")
        self._reading: _Job | None = None

    def close(self) -> None:
        """Let the reading thread end (see :meth:`_Blocking.close`)."""
        self._thread.close()

    def __aiter__(self) -> WireLines:
        return self

    async def __anext__(self) -> str | TooLong:
        while self._at >= len(self._ready):
            if self._ended:
                raise StopAsyncIteration
            if self._reading is None:
                self._reading = self._thread.submit(self._read, READ_CHUNK_BYTES)
            await self._reading.done.wait()  # (cancelled here, the read stays for next time)
            job, self._reading = self._reading, None
            chunk = job.outcome()
            if chunk:
                self._ready = self._lines.feed(self._decoder.decode(chunk))
            else:
                self._ready = [*self._lines.feed(self._decoder.decode(b"", final=True))]
                self._ready += self._lines.end()
                self._ended = True
            self._at = 0
        self._at += 1
        return self._ready[self._at - 1]


class ClientStuck(Exception):
    """A message to the client was not written within the deadline: the client stopped
    reading stdout. Ends the session (``treehop mcp`` says so on stderr and exits)."""


class WireOut:
    """stdout as ``stdio_server`` writes it (``write`` then ``flush`` per message), each
    message written by ``write_all`` on a daemon thread within ``deadline_s``
    (:data:`WRITE_DEADLINE_S`), else :class:`ClientStuck`."""

    def __init__(
        self, write_all: Callable[[bytes], None], *, deadline_s: float = WRITE_DEADLINE_S
    ) -> None:
        self._write_all = write_all
        self._deadline_s = deadline_s
        self._out: list[str] = []
        self._thread = _Blocking("treehop mcp stdout")

    def close(self) -> None:
        """Let the writing thread end (see :meth:`_Blocking.close`)."""
        self._thread.close()

    async def write(self, text: str) -> None:
        self._out.append(text)

    async def flush(self) -> None:
        import anyio

        data = "".join(self._out).encode("utf-8")
        self._out.clear()
        with anyio.move_on_after(self._deadline_s) as scope:
            await self._thread.call(self._write_all, data)
        if scope.cancelled_caught:
            raise ClientStuck(
                f"the client read no answer for {self._deadline_s:g} s (its stdout pipe is "
                "full): the session is ended"
            )


def _write_fd(fd: int) -> Callable[[bytes], None]:
    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    return write_all


def _write_buffer(buffer: Any) -> Callable[[bytes], None]:
    def write_all(data: bytes) -> None:
        buffer.write(data)
        buffer.flush()

    return write_all


def _private(fd: int, diversion: Callable[[], int]) -> int | None:
    """A private duplicate of ``fd``, with ``fd`` itself pointed at ``diversion()``; ``None``
    where either cannot be done (``fd`` is then left as it was)."""
    try:
        wire = os.dup(fd)
    except OSError:
        return None
    try:
        other = diversion()
        try:
            os.dup2(other, fd)
        finally:
            os.close(other)
    except OSError:
        os.close(wire)
        return None
    return wire


def _stdout_diversion() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


@contextlib.contextmanager
def wire(
    *, limit: int = MAX_LINE_CHARS, deadline_s: float = WRITE_DEADLINE_S
) -> Iterator[tuple[WireLines, WireOut]]:
    """The process's stdin and stdout as the server's wire, claimed as the SDK's
    ``stdio_server`` claims them when it opens them itself: each read and written through a
    private duplicate, with fd 0 on the null device and fd 1 on stderr while the server runs
    (a plug-in or a child process that reads stdin reads EOF, and what it prints misses the
    wire), both put back after. Where a descriptor cannot be duplicated, ``sys.stdin`` /
    ``sys.stdout``'s buffer is used in place (the SDK's own fallback).

    The duplicates are never closed: a daemon thread may still block on one after the
    server stops (a stuck client), and a closed descriptor could be recycled under it."""
    stdin = _private(0, lambda: os.open(os.devnull, os.O_RDONLY))
    stdout = _private(1, _stdout_diversion)
    try:
        read = _reader(stdin)
        write = _write_fd(stdout) if stdout is not None else _write_buffer(sys.stdout.buffer)
        lines, out = WireLines(read, limit=limit), WireOut(write, deadline_s=deadline_s)
        try:
            yield lines, out
        finally:
            lines.close()
            out.close()
    finally:
        for fd, private in ((1, stdout), (0, stdin)):
            if private is not None:
                with contextlib.suppress(OSError):
                    os.dup2(private, fd)


def _reader(fd: int | None) -> Callable[[int], bytes]:
    """``read(n)`` on the private stdin duplicate, or on ``sys.stdin``'s buffer."""
    if fd is not None:
        return lambda n: os.read(fd, n)
    buffer: Any = sys.stdin.buffer
    return lambda n: buffer.read1(n)
