"""Attacks on what stop 62 added (helper attacks72): the client write lock's wait deadline,
the index lock files, ``EmbeddedStore.close()`` letting go of its files, copying retrieved
chunks into another store, and usage70's changes.

Threads meet on events (a line trace that parks a reader at one line, the lock's own line),
never on sleeps; every wait is bounded by :data:`BOUND`.
"""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from treehop import Treehop
from treehop.errors import EmbeddingError, StoreError
from treehop.ingest.records import add_records
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 60.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""


def _filled(idx: Path, n: int = 5) -> None:
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"Alpha text {i} here", target_uri=f"viking://resources/a{i}.md")


# -- 1. a close in another thread while a reader takes the snapshot -----------------------


def _parked_at(code: Any, marker: str, paused: threading.Event, go: threading.Event) -> Any:
    """A trace function that parks the thread once at the first line of ``code`` holding
    ``marker`` until ``go`` is set (a deterministic interleaving, no sleeps)."""
    lines = Path(code.co_filename).read_text().splitlines()

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        if event == "line" and marker in lines[frame.f_lineno - 1] and not paused.is_set():
            paused.set()
            go.wait(BOUND)
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code is code else None

    return tracer


def _read_while_closed(store: EmbeddedStore) -> list[Any]:
    """What a reader parked inside the ``_snap`` getter (after its check, before its
    return) reads when ``close()`` runs meanwhile in this thread."""
    getter = type(store).__dict__["_snap"].fget.__code__
    paused, go = threading.Event(), threading.Event()
    seen: list[Any] = []

    def read() -> None:
        sys.settrace(_parked_at(getter, "_corrupt is not None", paused, go))
        try:
            seen.append(len(store))
            seen.append(store.get(["viking://resources/a3.md"])[0] is not None)
        finally:
            sys.settrace(None)
            paused.set()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    assert paused.wait(BOUND)
    store.close()
    go.set()
    t.join(BOUND)
    assert not t.is_alive()
    return seen


def test_a_reader_taking_the_snapshot_while_another_thread_closes_sees_the_index(
    tmp_path: Path,
) -> None:
    """A reader that had checked "not let go" when ``close()`` in another thread let go of
    the mapped snapshot then read the empty one put in its place: ``len`` 0, no results,
    ``get`` None (before: ``[0, True]``). The reader is parked between the check and the
    return."""
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    size = len(store)
    assert size > 5
    for _ in range(3):  # (closed, used again, closed again under a reader)
        assert _read_while_closed(store) == [size, True]
        assert len(store) == size  # (used after the close: mapped again)
    store.close()


def test_a_closed_store_whose_index_was_removed_says_so_not_a_hang(
    tmp_path: Path,
) -> None:
    """Control for the fix above (its first form looped for good here): the index folder
    removed while the store was closed, the next use follows the path, in a bounded thread,
    and raises the "renamed, moved or removed" ``StoreError`` a client's read raises (helper
    leftovers73b; it answered as an empty index before: ``len`` 0, ``get`` ``[None]``)."""
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    assert len(store) > 5
    store.close()
    shutil.rmtree(idx)
    out: list[Any] = []

    def use() -> None:
        try:
            out.append(len(store))
        except StoreError as exc:
            out.append(exc)

    t = threading.Thread(target=use, daemon=True)
    t.start()
    t.join(BOUND)
    assert not t.is_alive(), "a use after close looped"
    assert len(out) == 1 and isinstance(out[0], StoreError), out
    assert "renamed, moved or removed" in str(out[0])
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        store.get(["viking://resources/a3.md"])


# -- 2. a close of another client of the shared store during a write ----------------------


class _ClosesAnotherClientThenFails(BagOfWordsEmbedder):
    """On its ``at``-th call, closes ``other`` (a client sharing the store) from a new
    thread, joined, then fails: a write whose store is closed under it, then rolled back."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0
        self.at: int | None = None
        self.other: Treehop | None = None

    def embed(self, texts: Any) -> Any:
        self.calls += 1
        if self.at is not None and self.calls == self.at and self.other is not None:
            t = threading.Thread(target=self.other.close)
            t.start()
            t.join(BOUND)
            raise RuntimeError("embedder down")
        return super().embed(texts)


@pytest.mark.parametrize("what", ["text", "records"])
def test_closing_another_client_of_the_store_commits_no_half_of_a_write(
    tmp_path: Path, what: str
) -> None:
    """``Treehop(idx)`` twice share one store. The second's ``close()`` while the first's
    write was between its upserts and its save saved that half (and let go of ``LOCK``);
    the write then failed and rolled back, but what was committed stayed: 10 nodes of a
    failed text write on disk (before: ``12 != 2``). The close now leaves a write in
    progress to commit or roll back itself."""
    idx = tmp_path / "idx"
    emb = _ClosesAnotherClientThenFails()
    writer = Treehop(idx, embedder=emb, tagger=None, chunk_chars=200)
    try:
        writer.add_resource("base doc", target_uri="viking://resources/base.md")
        before = len(writer.aio.store)
        other = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
        assert other.aio.store is writer.aio.store
        emb.calls, emb.at, emb.other = 0, 3, other
        with pytest.raises(EmbeddingError):
            if what == "text":
                writer.add_resource("new doc " * 200, target_uri="viking://resources/new.md")
            else:
                add_records(
                    writer,
                    [(f"rec {i} " * 50, {"uri": f"viking://resources/r{i}.md"}) for i in range(5)],
                )
        assert emb.calls == 3  # (the close ran inside the write)
        assert len(writer.aio.store) == before
        emb.at = None
        writer.add_resource("after", target_uri="viking://resources/after.md")
    finally:
        writer.close()
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as again:
        assert len(again.aio.store) == before + 1
        assert again.read("viking://resources/after.md") == "after"
