"""Adversarial pass over the store's write lock and stop 59's surface (helper attacks66).

- A process that forks (``os.fork``, ``multiprocessing``'s ``fork`` method) while one of
  its threads writes: the child inherited the held ``flock`` descriptors and locked copies
  of the in-process gates. The child's own writes to that index then failed (or, for a
  memory category's lock, which has no deadline within a process, hung) for good; and when
  the parent was killed, the child it left behind kept ``locks/writes`` held, so every other
  process got :class:`~treehop.errors.IndexLockedError` though a dead writer is promised to
  leave no lock. Now the child drops its copies (``os.register_at_fork``).
- A directory ingest opened each scanned file by name after the scan: a file swapped for a
  symlink to outside the tree in between was read and indexed. Now a tree's files are
  opened with ``O_NOFOLLOW``.

Threads and processes meet on events and pipes, never on sleeps; every wait is bounded by
:data:`BOUND`.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing as mp
import os
import select
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from test_xproc59 import GATE, GatedEmbedder
from treehop import AsyncTreehop, Treehop
from treehop.errors import TreehopError
from treehop.ingest import writer as writer_mod
from treehop.stores._filelock import store_writers_waiting
from treehop.stores.embedded import EmbeddedStore
from treehop.tagging.ingest import IngestTagger

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 30.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""

_SPAWN = mp.get_context("spawn")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork (POSIX) only")


def _write(path: str, how: str, timeout: float) -> str:
    """One write through a new client of ``path`` (what a forked child or the test does)."""
    c = Treehop(store=EmbeddedStore(path, lock_timeout=timeout), embedder=BagOfWordsEmbedder())
    try:
        if how == "memory":
            c.add_memory("I moved to Porto", name="home/child")
        else:
            c.add_resource("child text", target_uri="viking://resources/child.md")
        return "ok"
    except Exception as exc:  # (reported to the test, which asserts on it)
        return f"{type(exc).__name__}: {exc}"[:300]
    finally:
        c.close()


def _wait_readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], BOUND)[0])


@pytest.mark.parametrize("how", ["resource", "memory"])
def test_a_child_forked_during_a_write_writes_once_the_parent_is_done(
    tmp_path: Path, how: str
) -> None:
    path = str(tmp_path / "idx")
    entered, gate = threading.Event(), threading.Event()
    th = Treehop(path, embedder=GatedEmbedder(entered, gate), tagger=None)
    th.add_resource("seed text", target_uri="viking://resources/seed.md")
    outcome: list[Any] = []

    def held_write() -> None:
        if how == "memory":
            outcome.append(th.add_memory(f"I live in Lisbon {GATE}", name="home/parent"))
        else:
            outcome.append(th.add_resource(f"parent {GATE}", target_uri="viking://resources/p.md"))

    t = threading.Thread(target=held_write)
    t.start()
    assert entered.wait(BOUND)  # (the write lock, and a memory's category lock, held)
    go_r, go_w = os.pipe()
    out_r, out_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: wait for the parent's write to end, then write
        code = 1
        try:
            os.close(go_w)
            os.close(out_r)
            if _wait_readable(go_r):
                os.write(out_w, _write(path, how, 2.0).encode())
                code = 0
        finally:
            os._exit(code)
    os.close(go_r)
    os.close(out_w)
    try:
        gate.set()
        t.join(BOUND)
        assert not t.is_alive() and outcome
        os.write(go_w, b"x")
        assert _wait_readable(out_r), "the forked child's write never ended"
        said = os.read(out_r, 1000).decode()
    finally:
        os.close(go_w)
        os.close(out_r)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert said == "ok"
    th.close()


def _holder(path: str, entered: Any, gate: Any, done: Any, pids: Any) -> None:
    """Hold the index's write lock (a write stopped in its embedding), fork a child that
    lingers until ``done``, report its pid, and wait to be killed."""
    th = Treehop(path, embedder=GatedEmbedder(entered, gate), tagger=None)
    t = threading.Thread(
        target=th.add_resource,
        args=(f"held {GATE}",),
        kwargs={"target_uri": "viking://resources/h.md"},
    )
    t.start()
    assert entered.wait(BOUND)
    pid = os.fork()
    if pid == 0:
        try:
            done.wait(BOUND)
        finally:
            os._exit(0)
    pids.put(pid)
    t.join(BOUND)  # (the gate is never opened: the test kills this process inside its write)


def test_a_killed_writer_leaves_no_lock_behind_in_a_child_it_forked(tmp_path: Path) -> None:
    path = str(tmp_path / "idx")
    Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None).add_resource(
        "seed text", target_uri="viking://resources/seed.md"
    )
    entered, gate, done = _SPAWN.Event(), _SPAWN.Event(), _SPAWN.Event()
    pids = _SPAWN.Queue()
    p = _SPAWN.Process(target=_holder, args=(path, entered, gate, done, pids))
    p.start()
    child = None
    try:
        child = pids.get(timeout=BOUND)
        os.kill(p.pid, signal.SIGKILL)  # (the writer dies holding locks/writes)
        # Dead, not yet reaped (``p.join`` would wait for the child too: it inherited the
        # end of the pipe ``multiprocessing`` watches).
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        os.kill(child, 0)  # (its forked child still lives: ProcessLookupError if not)
        said = _write(path, "resource", 2.0)
        assert said == "ok"
        reader = Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
        assert "child text" in (reader.read("viking://resources/child.md") or "")
        reader.close()
        done.set()
        p.join(BOUND)
        assert p.exitcode == -signal.SIGKILL
    finally:
        # (``gate`` is not set: a process killed while waiting on an Event leaves it
        # waiting for a wake-up that no one acknowledges, and ``set`` would hang)
        done.set()
        if p.is_alive():
            p.kill()
        p.join(BOUND)
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)


def test_a_tree_file_swapped_for_a_symlink_after_the_scan_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET hunter2 credentials outside the tree\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("# Alpha\n\nalpha text about rivers\n")
    (src / "b.md").write_text("# Beta\n\nbeta text about mountains\n")
    real_scan = writer_mod.scan_columns

    def scan_then_swap(*args: Any, **kwargs: Any) -> Any:
        got = real_scan(*args, **kwargs)
        (src / "b.md").unlink()  # (what another user of the tree does meanwhile)
        os.symlink(secret, src / "b.md")
        return got

    monkeypatch.setattr(writer_mod, "scan_columns", scan_then_swap)
    th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder(), tagger=None)
    r = th.add_resource(str(src), target_uri="viking://resources/src")
    assert "b.md" in r.skipped_unreadable
    assert "alpha" in (th.read("viking://resources/src/a.md") or "")
    hits = th.find("TOPSECRET hunter2 credentials", limit=10)
    assert hits.contexts()
    for h in hits.contexts():
        assert "TOPSECRET" not in (th.read(h.uri) or "")
    # A file named by the caller is theirs to name through a link: still followed.
    monkeypatch.setattr(writer_mod, "scan_columns", real_scan)
    one = th.add_resource(str(src / "b.md"), target_uri="viking://resources/linked.md")
    assert one.files == 1 and "TOPSECRET" in (th.read("viking://resources/linked.md") or "")
    th.close()


class _GatedTagger(IngestTagger):
    """The ingest tagger; while ``armed``, tagging sets ``entered`` and waits for ``gate``
    (in the worker thread the write runs it in)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.entered, self.gate = threading.Event(), threading.Event()
        self.ended = threading.Event()

    def tag_nodes(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            self.entered.set()
            assert self.gate.wait(BOUND), "the gate was never opened"
            try:
                return super().tag_nodes(*args, **kwargs)
            finally:
                self.ended.set()
        return super().tag_nodes(*args, **kwargs)


async def test_a_cancelled_retag_holds_the_write_lock_until_its_thread_ends(
    tmp_path: Path,
) -> None:
    """``retag`` writes the store from a worker thread; cancelling the call (``wait_for``'s
    timeout) gave the write lock back while that thread went on writing, and another
    client's write ran beside it. Now the cancelled call keeps the lock until its thread
    ends, then raises ``CancelledError``."""
    path = tmp_path / "idx"
    tagger = _GatedTagger()
    a = AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=tagger)
    await a.add_resource("rivers and lakes of the north", target_uri="viking://resources/r.md")
    b = AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    tagger.armed = True
    retag = asyncio.create_task(a.retag())
    assert await asyncio.to_thread(tagger.entered.wait, BOUND)
    retag.cancel()
    write = asyncio.create_task(
        b.add_resource("mountains and valleys", target_uri="viking://resources/m.md")
    )
    give_up = time.monotonic() + BOUND
    while not (write.done() or store_writers_waiting(a.store)):  # (b waits, or b wrote)
        assert time.monotonic() < give_up
        await asyncio.sleep(0.005)
    wrote_beside = write.done()
    tagger.gate.set()  # (the retag's thread ends in any case)
    assert not wrote_beside, "b wrote while the cancelled retag's thread still wrote"
    with pytest.raises(asyncio.CancelledError):
        await retag
    assert tagger.ended.is_set()
    await write
    assert "mountains" in (await a.read("viking://resources/m.md") or "")
    await a.close()
    await b.close()


class _ArmedEmbedder(BagOfWordsEmbedder):
    """The bag-of-words embedder; while ``armed``, an embedding sets ``entered`` and then
    waits for ``gate`` (``fail``: raises, its text holding a key, instead)."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = self.fail = False
        self.entered, self.gate = threading.Event(), threading.Event()

    def embed(self, texts: Any) -> Any:
        if self.armed:
            if self.fail:
                raise RuntimeError("401 Unauthorized, api_key=sk-attacks66")
            self.entered.set()
            assert self.gate.wait(BOUND), "the gate was never opened"
        return super().embed(texts)


@pytest.mark.parametrize("how", ["cancelled", "embedder fails"])
async def test_a_remove_stopped_before_its_save_leaves_no_lock_and_no_half_write(
    tmp_path: Path, how: str
) -> None:
    """``remove`` deletes, then re-describes the folder above (an embedding), then saves. A
    remove stopped in between (cancelled, or its embedder failing) gave the write lock back
    with the deletion uncommitted and the index's ``LOCK`` still held: every other store
    object and process got ``IndexLockedError`` until this client's next save, and that save
    committed the half-done remove. Now the write's uncommitted part is dropped."""
    path = tmp_path / "idx"
    emb = _ArmedEmbedder()
    a = AsyncTreehop(path, embedder=emb, tagger=None)
    for name in ("one", "two"):
        await a.add_resource(
            f"{name} text about rivers", target_uri=f"viking://resources/d/{name}.md"
        )
    emb.armed, emb.fail = True, how != "cancelled"
    remove = asyncio.create_task(a.remove("viking://resources/d/one.md"))
    if how == "cancelled":
        assert await asyncio.to_thread(emb.entered.wait, BOUND)
        remove.cancel()
    outcome = (await asyncio.gather(remove, return_exceptions=True))[0]
    assert isinstance(outcome, asyncio.CancelledError if how == "cancelled" else TreehopError)
    emb.gate.set()
    emb.armed = False
    fresh = await _another_writes_then_reads(path, a)
    assert "one text" in (await fresh.read("viking://resources/d/one.md") or "")
    await fresh.close()
    await a.close()


class _FailingOn(BagOfWordsEmbedder):
    """The bag-of-words embedder; a batch holding a text that starts with ``prefix`` (a
    folder's description: ``"<folder name>: ..."``) raises, its text holding a key."""

    def __init__(self) -> None:
        super().__init__()
        self.prefix: str | None = None
        self.failed = 0

    def embed(self, texts: Any) -> Any:
        if self.prefix is not None and any(t.startswith(self.prefix) for t in texts):
            self.failed += 1
            raise RuntimeError("401 Unauthorized, api_key=sk-attacks66")
        return super().embed(texts)


async def _text_or_none(c: AsyncTreehop, uri: str) -> str | None:
    try:
        return await c.read(uri)
    except TreehopError:
        return None


async def _another_writes_then_reads(path: Path, a: AsyncTreehop) -> AsyncTreehop:
    """What a stopped write must leave possible: another store object writes with a short
    lock wait (a ``LOCK`` left held fails it), ``a`` writes again (its save must not commit
    the stopped write's half), and a fresh client finds the other's text: returned, to be
    asked what is left of the stopped write. One copy for the remove and the add tests."""
    b = AsyncTreehop(store=EmbeddedStore(path, lock_timeout=0.5), embedder=BagOfWordsEmbedder())
    await b.add_resource("other text", target_uri="viking://resources/other.md")  # (no wait)
    await b.close()
    await a.add_resource("later text", target_uri="viking://resources/later.md")
    fresh = AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
    assert "other text" in (await _text_or_none(fresh, "viking://resources/other.md") or "")
    return fresh


@pytest.mark.parametrize("how", ["resource", "memory"])
async def test_an_add_whose_folder_description_fails_leaves_no_lock_and_no_half_write(
    tmp_path: Path, how: str
) -> None:
    """The same for an add: its node upserted, then the folder above re-described (the
    second embedding) failing: ``LOCK`` stayed held and the next save committed the node
    below a folder that does not describe it."""
    path = tmp_path / "idx"
    emb = _FailingOn()
    a = AsyncTreehop(path, embedder=emb)
    await a.add_resource("one text about rivers", target_uri="viking://resources/d/one.md")
    await a.add_memory("I like tea", name="prefs/drink")
    emb.prefix = "prefs: " if how == "memory" else "d: "
    with pytest.raises(TreehopError) as caught:
        if how == "memory":
            await a.add_memory("I like coffee", name="prefs/food")
        else:
            await a.add_resource("two text", target_uri="viking://resources/d/two.md")
    assert emb.failed and "sk-attacks66" not in str(caught.value)
    emb.prefix = None
    fresh = await _another_writes_then_reads(path, a)
    half = "viking://~/memories/prefs/food" if how == "memory" else "viking://resources/d/two.md"
    assert await _text_or_none(fresh, half) is None
    await fresh.close()
    await a.close()
