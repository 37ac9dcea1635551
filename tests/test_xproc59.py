"""A write's checks and the write as one step across clients and processes (helper xproc59).

races59 moved the write checks (no document or memory above the place, a memory's name not
over a directory of memories, ``replaced``) under ``TreeWriter.lock``: atomic within one
client. Two clients of one store object, or two processes of one index directory, each had
a lock of their own: process B checked while process A's write was between its check and
its commit, and then wrote below (or over) A's memory or document. Every client write now
also holds the store's write lock (``stores._filelock.aholding_store``: one per store object
or index directory in a process, plus the index's ``locks/writes`` file lock across
processes).

Each race is deterministic: process A's write stops inside its write lock (its embedding
waits on a ``multiprocessing.Event``); process B then runs until it waits for the store's
write lock (the lock's own count of waiters, read in B) or ends; only then is A let go. No
sleep is a synchronisation; every wait is bounded by :data:`BOUND`.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import queue
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import IndexLockedError, InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 60.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""

GATE = "gateword"
"""A text holding this word stops its embedding until the test opens the gate."""

_SPAWN = mp.get_context("spawn")  # (no fork of a process with threads)


class GatedEmbedder(BagOfWordsEmbedder):
    """The bag-of-words embedder; embedding a text holding :data:`GATE` sets ``entered``
    and waits for ``gate`` (events of this process or of ``multiprocessing``)."""

    def __init__(self, entered: Any = None, gate: Any = None) -> None:
        super().__init__()
        self.entered = entered if entered is not None else threading.Event()
        self.gate = gate if gate is not None else threading.Event()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any(GATE in t.lower() for t in texts) and not self.gate.is_set():
            self.entered.set()
            assert self.gate.wait(BOUND), "the gate was never opened"
        return super().embed(texts)


async def _do(a: AsyncTreehop, how: str) -> Any:
    """One write, by name (a child process gets the name, not a function)."""
    from treehop.ingest.records import aadd_records

    if how == "memory home":
        return await a.add_memory(f"I live in Lisbon {GATE}", name="home")
    if how == "memory home/x gated":
        return await a.add_memory(f"I moved {GATE}", name="home/x")
    if how == "memory home plain":
        return await a.add_memory("I live in Porto", name="home")
    if how == "memory home/x":
        return await a.add_memory("I moved", name="home/x")
    if how == "remember home x":
        return await a.remember("I moved", category="home", name="x")
    if how == "record home/x":
        return await aadd_records(a, [("I moved", {"uri": "viking://~/memories/home/x"})])
    if how == "resource a.md":
        return await a.add_resource(f"Alpha text {GATE}", target_uri="viking://resources/a.md")
    if how == "resource a.md/b.md":
        return await a.add_resource("Beta text", target_uri="viking://resources/a.md/b.md")
    if how == "record a.md/b":
        return await aadd_records(a, [("Beta text", {"uri": "viking://resources/a.md/b"})])
    raise AssertionError(how)


def _waiting(a: AsyncTreehop) -> bool:
    """Whether a write of this process waits for the store's write lock (``False`` where
    the write lock has no such count: the code before this helper)."""
    waiting = getattr(a.writer.lock, "waiting", None)
    return bool(waiting()) if callable(waiting) else False


def _child(
    path: str,
    how: str,
    entered: Any,
    gate: Any,
    stopped: Any,
    out: Any,
    lock_timeout: float,
    watch: bool,
) -> None:
    """Run the write ``how`` on the index at ``path``; with ``watch``, set ``stopped`` once
    it waits for the store's write lock or has ended; put its outcome on ``out``."""
    c = Treehop(path, embedder=GatedEmbedder(entered, gate), tagger=None)
    c.store.lock_timeout = lock_timeout  # type: ignore[attr-defined]

    async def go() -> tuple[Any, ...]:
        a = c.aio
        task = asyncio.ensure_future(_do(a, how))
        loop = asyncio.get_running_loop()
        give_up = loop.time() + BOUND
        while watch and not (task.done() or _waiting(a)):
            if loop.time() > give_up:
                stopped.set()
                return ("err", "Hang", "neither ended nor waited")
            await asyncio.sleep(0)
        stopped.set()
        try:
            result = await task
        except Exception as exc:
            return ("err", type(exc).__name__, str(exc))
        return ("ok", getattr(result, "replaced", None))

    try:
        out.put(c.run(go()))
    finally:
        c.close()


def _seed(path: Path) -> None:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("Unrelated seed text", target_uri="viking://resources/seed.md")


class _Child(NamedTuple):
    """A child process running one write, and its events and queue (kept together: a
    queue or event collected before the child opens it is gone)."""

    proc: Any
    entered: Any
    stopped: Any
    out: Any


def _start(path: Path, how: str, gate: Any, watch: bool = False) -> _Child:
    entered, stopped, out = _SPAWN.Event(), _SPAWN.Event(), _SPAWN.Queue()
    p = _SPAWN.Process(
        target=_child, args=(str(path), how, entered, gate, stopped, out, BOUND, watch)
    )
    p.start()
    return _Child(p, entered, stopped, out)


def _outcome(c: _Child) -> tuple[Any, ...]:
    try:
        got = c.out.get(timeout=BOUND)
    except queue.Empty:
        c.proc.kill()
        raise AssertionError("the child process gave no outcome") from None
    c.proc.join(BOUND)
    assert c.proc.exitcode == 0, c.proc.exitcode
    return tuple(got)


def _race(path: Path, first: str, second: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Process A runs ``first`` until its embedding waits inside the write; process B runs
    ``second`` until it waits for the store's write lock or ends; then A goes on. Both
    outcomes, A's first."""
    gate = _SPAWN.Event()
    a = _start(path, first, gate)
    b = None
    try:
        assert a.entered.wait(BOUND), "A never reached its embedding"
        b = _start(path, second, gate, watch=True)
        assert b.stopped.wait(BOUND), "B neither waited nor ended"
    finally:
        gate.set()
    assert b is not None
    return _outcome(a), _outcome(b)


def _read(path: Path, uri: str) -> str:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        return c.read(uri)


# -- two processes -------------------------------------------------------------------------


@pytest.mark.parametrize("second", ["memory home/x", "remember home x", "record home/x"])
def test_a_write_below_a_memory_another_process_is_writing_is_refused(
    tmp_path: Path, second: str
) -> None:
    """A writes the memory ``home``; B writes ``home/x`` meanwhile. Before: B's check saw no
    ``home`` (A had not committed; their category locks are different keys), B wrote ``x``,
    then A's text landed over the directory ``home``, or ``x`` below A's memory. Now B
    waits for A's whole write and its check then refuses the place."""
    path = tmp_path / "idx"
    _seed(path)
    first, got = _race(path, "memory home", second)
    assert first == ("ok", False)
    assert got[0] == "err" and got[1] in ("InvalidQueryError", "InvalidURIError"), got
    assert "memor" in got[2]
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert c.read("viking://~/memories/home").startswith("I live in Lisbon")
        [entry] = c.ls("viking://~/memories")
        assert entry.kind in ("text", "file"), entry


def test_a_memory_name_over_memories_another_process_is_writing_is_refused(
    tmp_path: Path,
) -> None:
    """A writes ``home/x``; B writes ``add_memory(name="home")`` meanwhile. Before: B's
    text replaced the directory ``home`` A was filling (the memory ``x`` gone, or
    ``home`` both a text and a folder). Now B's check, after A's commit, refuses it."""
    path = tmp_path / "idx"
    _seed(path)
    first, got = _race(path, "memory home/x gated", "memory home plain")
    assert first[0] == "ok", first
    assert got[0] == "err" and got[1] == "InvalidQueryError", got
    assert _read(path, "viking://~/memories/home/x").startswith("I moved")


@pytest.mark.parametrize("second", ["resource a.md/b.md", "record a.md/b"])
def test_a_write_inside_a_document_another_process_is_writing_is_refused(
    tmp_path: Path, second: str
) -> None:
    """A adds the text ``a.md``; B adds ``a.md/b.md`` (or a record at ``a.md/b``)
    meanwhile. Before: both went through and ``a.md`` lost its text to a directory (or
    held a child). Now B sees the document and is refused."""
    path = tmp_path / "idx"
    _seed(path)
    first, got = _race(path, "resource a.md", second)
    assert first[0] == "ok", first
    assert got[0] == "err" and got[1] == "InvalidURIError", got
    assert "inside the document" in got[2]
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert c.read("viking://resources/a.md").startswith("Alpha text")
        kinds = {e.uri.rsplit("/", 1)[-1]: e.kind for e in c.ls("viking://resources")}
        assert set(kinds) == {"a.md", "seed.md"}, kinds
        assert kinds["a.md"] in ("text", "file"), kinds


def test_a_writer_waits_its_deadline_then_raises_typed_and_writes_nothing(
    tmp_path: Path,
) -> None:
    """B's ``lock_timeout`` (0.5 s) passes while A's write holds the index: B gets
    ``IndexLockedError`` (a ``TreehopError``) and wrote nothing. Before: B did not wait at
    all and wrote below A's memory. After A ends, the same write is refused by its check."""
    path = tmp_path / "idx"
    _seed(path)
    gate = _SPAWN.Event()
    a = _start(path, "memory home", gate)
    try:
        assert a.entered.wait(BOUND)
        b = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
        try:
            b.store.lock_timeout = 0.5  # type: ignore[attr-defined]
            with pytest.raises(IndexLockedError, match=r"did not end within 0\.5 s"):
                b.add_memory("I moved", name="home/x")
        finally:
            b.close()
    finally:
        gate.set()
    assert _outcome(a) == ("ok", False)
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert [e.uri.rsplit("/", 1)[-1] for e in c.ls("viking://~/memories")] == ["home"]
        with pytest.raises(InvalidQueryError, match="memor"):
            c.add_memory("I moved", name="home/x")


def test_a_lock_left_by_a_killed_writer_stops_no_one(tmp_path: Path) -> None:
    """A is killed (SIGKILL) inside its write, holding the store's write lock: its lock
    file stays on disk, yet the next writer takes the lock at once (the OS dropped the
    ``flock``), and A's uncommitted write is not there."""
    path = tmp_path / "idx"
    _seed(path)
    gate = _SPAWN.Event()
    a = _start(path, "memory home", gate)
    try:
        assert a.entered.wait(BOUND)
    finally:
        # (the gate is never opened: setting a multiprocessing event whose waiter was
        # killed waits for that waiter's wake-up forever)
        a.proc.kill()
        a.proc.join(BOUND)
    assert a.proc.exitcode is not None and a.proc.exitcode < 0
    assert (path / "locks" / "writes").exists()
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.store.lock_timeout = 2.0  # type: ignore[attr-defined]
        assert c.add_memory("I live in Porto", name="home").replaced is False
        assert c.read("viking://~/memories/home").startswith("I live in Porto")
        assert c.read("viking://resources/seed.md").startswith("Unrelated seed")


# -- two clients of one store in one process -----------------------------------------------


@pytest.mark.parametrize("where", ["in memory", "on disk"])
def test_two_clients_of_one_store_run_check_and_write_as_one_step(
    tmp_path: Path, where: str
) -> None:
    """Client 1 writes ``home``; client 2 (same store object, or the same index directory
    opened again, its own event loop and write lock) writes ``home/x`` meanwhile. Before:
    client 2 did not wait for client 1's lock and wrote below the memory being written."""
    emb = GatedEmbedder()
    if where == "in memory":
        c1 = Treehop(None, embedder=emb, tagger=None)
        c2 = Treehop(store=c1.store, embedder=BagOfWordsEmbedder(), tagger=None)
    else:
        c1 = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
        c2 = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    outcomes: dict[str, Any] = {}

    def run(name: str, fn: Any) -> None:
        try:
            outcomes[name] = fn()
        except Exception as exc:
            outcomes[name] = exc

    try:
        t1 = threading.Thread(
            target=run, args=("1", lambda: c1.add_memory(f"I live in Lisbon {GATE}", name="home"))
        )
        t2 = threading.Thread(
            target=run, args=("2", lambda: c2.add_memory("I moved", name="home/x"))
        )
        t1.start()
        try:
            assert emb.entered.wait(BOUND)
            t2.start()
            waited = threading.Event()
            for _ in range(100_000):
                if not t2.is_alive() or _waiting(c2.aio):
                    waited.set()
                    break
                t2.join(0.0005)  # (a poll of the condition above, not a synchronisation)
            assert waited.is_set(), "client 2 neither waited nor ended"
        finally:
            emb.gate.set()
        t1.join(BOUND)
        t2.join(BOUND)
        assert outcomes["1"].replaced is False
        assert isinstance(outcomes["2"], InvalidQueryError), outcomes["2"]
        assert c1.read("viking://~/memories/home").startswith("I live in Lisbon")
    finally:
        c2.close()
        c1.close()


def test_the_store_lock_is_reentrant_within_a_write(tmp_path: Path) -> None:
    """A write of client 2 made while client 1 holds its write lock (same index, same
    context) shares the hold instead of waiting for itself until the deadline."""

    async def go() -> None:
        async with AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            b = AsyncTreehop(store=a.store, embedder=BagOfWordsEmbedder(), tagger=None)
            a.store.lock_timeout = 0.5  # type: ignore[attr-defined]
            async with a.writer.lock:
                res = await asyncio.wait_for(
                    b.add_resource("Nested text", target_uri="viking://resources/n.md"), BOUND
                )
            assert res.root_uri == "viking://resources/n.md"
            assert (await a.read("viking://resources/n.md")).startswith("Nested text")
            await a.add_resource("After text", target_uri="viking://resources/m.md")

    asyncio.run(go())
