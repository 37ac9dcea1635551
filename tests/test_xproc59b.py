"""Other writers get in between a directory ingest's commit batches (helper xproc59b).

xproc59's store-wide write lock made a write's checks and the write one step across
processes, but a directory's ingest held it for the whole directory: another process's
``add_messages`` or ``add_resource`` waited its ``lock_timeout`` and raised
``IndexLockedError`` during a long ingest. Now the ingest holds the store's lock per commit
batch (its client's own lock for the whole ingest) and checks again, under the lock, what
it read before: a write inside the directory it ingests stops it with ``IngestError``,
committed batches and the other write kept.

Process A ingests a directory of more than ``COMMIT_FILES`` files; its embedder stops on
its first call after A's first commit (the store's generation moved), between two batches,
until the test opens a ``multiprocessing.Event``. The test process is the other writer.
No sleep is a synchronisation; every wait is bounded by :data:`BOUND`.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.ingest.writer import COMMIT_FILES

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 60.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""

FILES = COMMIT_FILES * 2 + 50
TARGET = "viking://resources/big"
_SPAWN = mp.get_context("spawn")  # (no fork of a process with threads)


class AfterCommitGate(BagOfWordsEmbedder):
    """The bag-of-words embedder; once its store's generation moved past ``start`` (the
    ingest committed a batch), its next call sets ``entered`` and waits for ``gate``."""

    def __init__(self, entered: Any, gate: Any) -> None:
        super().__init__()
        self.entered, self.gate = entered, gate
        self.store: Any = None
        self.start = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        s = self.store
        if s is not None and s.generation > self.start and not self.gate.is_set():
            self.entered.set()
            assert self.gate.wait(BOUND), "the gate was never opened"
        return super().embed(texts)


def _ingest(path: str, src: str, entered: Any, gate: Any, out: Any, tagged: bool) -> None:
    emb = AfterCommitGate(entered, gate)
    c = Treehop(path, embedder=emb, **({} if tagged else {"tagger": None}))
    emb.store, emb.start = c.store, c.store.generation
    try:
        res = c.add_resource(src, target_uri=TARGET)
        out.put(("ok", res.files))
    except Exception as exc:
        out.put(("err", type(exc).__name__, str(exc)))
    finally:
        c.close()


def _tree(root: Path) -> Path:
    src = root / "big"
    src.mkdir()
    for i in range(FILES):
        (src / f"f{i:04d}.md").write_text(f"File number {i} about topic {i % 7}.\n")
    return src


def _seed(path: Path) -> None:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("Unrelated seed text", target_uri="viking://resources/seed.md")


def _start(path: Path, src: Path, tagged: bool = False) -> tuple[Any, Any, Any, Any]:
    entered, gate, out = _SPAWN.Event(), _SPAWN.Event(), _SPAWN.Queue()
    p = _SPAWN.Process(target=_ingest, args=(str(path), str(src), entered, gate, out, tagged))
    p.start()
    return p, entered, gate, out


def _outcome(p: Any, out: Any) -> tuple[Any, ...]:
    try:
        got = out.get(timeout=BOUND)
    except queue.Empty:
        p.kill()
        raise AssertionError("the ingest process gave no outcome") from None
    p.join(BOUND)
    assert p.exitcode == 0, p.exitcode
    return tuple(got)


def _files_below(c: Treehop) -> set[str]:
    return {e.uri.rsplit("/", 1)[-1] for e in c.ls(TARGET)}


@pytest.mark.parametrize("how", ["add_messages", "add_resource", "add_resource tagged"])
def test_another_process_writes_between_an_ingests_batches(tmp_path: Path, how: str) -> None:
    """A is paused between its batches; B (this process) writes elsewhere and ends while A
    is still paused. Before: A held the store's lock for its whole ingest and B raised
    ``IndexLockedError`` after its ``lock_timeout``. Both writes are whole afterwards (with
    the keyword tagger too: B's re-tagging of the small index leaves A's texts alone)."""
    path = tmp_path / "idx"
    _seed(path)
    tagged = how.endswith("tagged")
    p, entered, gate, out = _start(path, _tree(tmp_path), tagged)
    try:
        assert entered.wait(BOUND), "A never paused between its batches"
        tagger: dict[str, Any] = {} if tagged else {"tagger": None}
        with Treehop(path, embedder=BagOfWordsEmbedder(), **tagger) as b:
            b.store.lock_timeout = 10.0  # type: ignore[attr-defined]
            if how == "add_messages":
                b.add_messages([{"role": "user", "content": "hello there"}], session_id="s1")
            else:
                b.add_resource("Other text", target_uri="viking://resources/other.md")
            assert not gate.is_set()  # (A is still paused: B did not wait for its end)
    finally:
        gate.set()
    assert _outcome(p, out) == ("ok", FILES)
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert len(_files_below(c)) == FILES
        assert c.read(f"{TARGET}/f0123.md").startswith("File number 123")
        if how.startswith("add_resource"):
            assert c.read("viking://resources/other.md").startswith("Other text")
        assert c.read("viking://resources/seed.md").startswith("Unrelated seed")


def test_a_write_inside_the_directory_being_ingested_stops_the_ingest(tmp_path: Path) -> None:
    """B writes a text inside A's target while A is paused between batches. A's plan (its
    stored URIs, the stale nodes it would delete) no longer holds: A stops with
    ``IngestError`` at its next batch, B's text and A's committed batches kept; adding the
    directory again finishes it."""
    path = tmp_path / "idx"
    _seed(path)
    src = _tree(tmp_path)
    p, entered, gate, out = _start(path, src)
    try:
        assert entered.wait(BOUND), "A never paused between its batches"
        with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as b:
            b.add_resource("Inside text", target_uri=f"{TARGET}/inside.md")
    finally:
        gate.set()
    got = _outcome(p, out)
    assert got[0] == "err" and got[1] == "IngestError", got
    assert "add the directory again" in got[2]
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert c.read(f"{TARGET}/inside.md").startswith("Inside text")
        kept = _files_below(c) - {"inside.md"}
        assert COMMIT_FILES <= len(kept) < FILES, len(kept)
        assert c.add_resource(src, target_uri=TARGET).files == FILES
        assert len(_files_below(c) - {"inside.md"}) == FILES


def test_another_ingest_of_the_same_directory_stops_the_paused_one(tmp_path: Path) -> None:
    """While A is paused between batches, B (this process) ingests the same directory to the
    same target and ends (it resumes from A's partial manifest). A's next batch finds the
    manifest rewritten and stops with ``IngestError``, writing nothing more: B's complete
    ingest stands, and adding again reads nothing."""
    path = tmp_path / "idx"
    _seed(path)
    src = _tree(tmp_path)
    p, entered, gate, out = _start(path, src)
    try:
        assert entered.wait(BOUND), "A never paused between its batches"
        with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as b:
            res = b.add_resource(src, target_uri=TARGET)
            assert res.files == FILES and res.read < FILES, (res.files, res.read)
    finally:
        gate.set()
    got = _outcome(p, out)
    assert got[0] == "err" and got[1] == "IngestError", got
    assert "manifest was rewritten" in got[2]
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        assert len(_files_below(c)) == FILES
        again = c.add_resource(src, target_uri=TARGET)
        assert (again.files, again.read, again.embedded) == (FILES, 0, 0)
