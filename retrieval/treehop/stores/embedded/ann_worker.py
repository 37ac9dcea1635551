"""The HNSW graph beside the store: the background worker that extends it after writes,
its load (memory-mapped, checksum checked in a thread) and save, and the warm-up of a freshly
opened snapshot."""

from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import (
    IndexCorruptError,
    StoreError,
)
from ...validation import real, shown_value
from .. import _ann
from .. import _checksum as _ck
from .._ann import AnnIndex, WarmOrphans
from .attributes import _StoreAttributes
from .column_files import (
    _LEASE_BYTES,
    _cut_short,
    _fsync_file,
    _map_read,
    _map_short,
    _read_arrays,
    _saved_upto,
)
from .layout import IntArray
from .snapshot import _Snap, _uri_rank


class _AnnWorker(_StoreAttributes):
    """The HNSW graph's worker, load and save (see :mod:`.ann_worker`)."""

    def _ann_index(self, wait: bool = True) -> AnnIndex | None:
        """The HNSW graph. A saved one opens with the index (memory-mapped); with
        ``verify="background"`` its checksum runs in a thread first, and until then a search
        (``wait=False``) stays exact instead of waiting."""
        ann = self._ann
        why = None if ann is None or ann.mapped is None else _graph_changed(ann)
        if ann is not None and why is not None:
            self._drop_cut_graph(ann, why)  # (read past its end, a view is SIGBUS)
            return None
        if ann is not None or self._ann_file is None or self.path is None:
            return ann
        if not wait:
            self._start_ann_load()
            return self._ann
        loader = self._ann_loader
        if loader is not None and loader is not threading.current_thread():
            loader.join()
        with self._wlock:
            if self._ann is None and self._ann_file is not None:
                self._ann = self._load_ann_or_rebuild()
        return self._ann

    def _drop_cut_graph(self, ann: AnnIndex, why: str | None = None) -> None:
        """Drop graph view ``ann``, whose file another program cut short, rewrote in place
        (:func:`_graph_changed`) or opened for writing (``why``, a query's
        :class:`_GraphCut`): searches go exact
        until the worker has rebuilt it from the vectors, as for a graph found damaged at its
        load (:meth:`_load_ann_or_rebuild`; ``ann_damaged`` says why), and the next save
        writes a new file."""
        assert ann.mapped is not None
        with self._ann_load_lock:
            if self._ann is not ann:
                return  # (dropped already, or replaced by the worker's in-memory copy)
            self._ann = None
            self._ann_file = None
            self.ann_damaged = why or str(_cut_short(ann.mapped[0]))
        self._ann_kick()

    def _start_ann_load(self) -> None:
        with self._ann_load_lock:
            if self._ann is not None or self._ann_file is None or _ann.exiting():
                return
            if self._ann_loader is not None and self._ann_loader.is_alive():
                return
            wanted, token = self._ann_file, self._ann_token

            def run() -> None:
                with self._wlock:
                    fresh = self._ann_file == wanted and self._ann_token == token
                    if self._ann is None and fresh:
                        self._ann = self._load_ann_or_rebuild()
                self._ann_kick()

            self._ann_loader = threading.Thread(target=run, name="treehop-ann-load", daemon=True)
            self._ann_loader.start()

    def load_ann(self) -> bool:
        """Wait until the saved HNSW graph is open (with ``verify="background"`` it opens in a
        thread). Returns whether the global step can use one now."""
        return self._ann_index(wait=True) is not None

    def wait_ann(self, timeout: float | None = None) -> bool:
        """Wait until the background worker has added every row written so far to the HNSW
        graph (searches never need this: rows it does not cover yet are searched exactly).
        Returns whether the graph now covers every row; ``False`` after ``timeout``. Raises
        :class:`IndexCorruptError` when the worker stopped at a file cut short by another
        program; a ``timeout`` that is no number of seconds (NaN, a string) is a
        :class:`StoreError` before anything starts, and one past what a thread's join
        takes (``math.inf``, ``1e300``) waits as ``None`` does (:func:`_wait_seconds`)."""
        seconds = _wait_seconds(timeout)
        self._paused = False
        self._ann_index(wait=True)
        end = None if seconds is None else time.monotonic() + seconds
        while True:
            # lag 1: a tail shorter than CATCH_UP_ROWS (which writes leave to the exact scan)
            # is added too; a worker already running with the writes' lag is joined first
            self._ann_kick(lag=1)
            worker = self._ann_worker
            if worker is None or worker is threading.current_thread():
                break
            worker.join(None if end is None else max(0.0, end - time.monotonic()))
            failed = self._ann_failed
            if failed is not None and failed[0] is worker:
                self._ann_failed = None
                raise failed[1]
            ann = self._ann
            caught_up = ann is not None and ann.upto >= self._snap.n
            if caught_up or worker.is_alive() or (end is not None and time.monotonic() >= end):
                break
            if self._ann_worker is worker and not self._ann_wants(1):
                break  # nothing left for a worker to do (no graph to build, or a token change)
        ann = self._ann
        return ann is not None and ann.upto >= self._snap.n and not (worker and worker.is_alive())

    def _ann_stop(self) -> None:
        """Stop the worker after its current chunk (before rows are renumbered or the state
        is replaced) and wait for it."""
        self._ann_token += 1
        worker = self._ann_worker
        if worker is not None and worker is not threading.current_thread():
            worker.join()

    def _ann_wants(self, lag: int) -> bool:
        """Whether a worker has rows to add: the graph lags the rows by ``lag`` or more (or
        does not exist yet on an index past ``ann_min_rows``)."""
        s = self._snap if self._released else self._snap_v  # (after close: mapped again)
        if self.ann_min_rows is None or s.live < self.ann_min_rows or not s.dim:
            return False
        ann = self._ann
        if ann is None and self._ann_file is not None:
            return False  # the saved graph is being opened; its loader kicks when done
        return ann is None or s.n - ann.upto >= lag

    def _ann_kick(self, lag: int | None = None) -> None:
        """Start the background worker when the graph lags the rows by ``lag`` (writes:
        ``CATCH_UP_ROWS``; :meth:`wait_ann`: 1). Writes call this and return at once: the
        graph is never extended inside a write."""
        lag = self.ann_catch_up if lag is None else lag
        if self._paused or self._halt.is_set() or _ann.exiting() or not self._ann_wants(lag):
            return
        with self._ann_load_lock:
            worker = self._ann_worker
            if worker is not None and worker.is_alive():
                return
            token = self._ann_token
            self._ann_worker = threading.Thread(
                target=self._ann_work, args=(token, lag), name="treehop-ann-extend", daemon=True
            )
            self._ann_worker.start()

    def _ann_work(self, token: int, lag: int) -> None:
        """Bring the graph up to the newest snapshot, chunk by chunk, until it no longer lags
        (writes may come in meanwhile). A new graph (or the in-memory copy that replaces a
        memory-mapped one) is published after its first chunk, so a first build already
        serves the rows it covers while it goes on.

        Its reads of a mapped file are checked and leased (:meth:`_Snap.vectors_held`,
        :func:`_graph_held`): a file cut short by another program stops the worker (the
        graph's own file: dropped, rebuilt from the vectors; a column file: the next store
        call raises :class:`IndexCorruptError`, :meth:`_Snap.check_mapped`), instead of a
        SIGBUS that killed the process (helper leftovers70b)."""
        for _ in range(2):
            try:
                self._ann_work_steps(token, lag)
                return
            except IndexCorruptError as exc:
                ann = self._ann
                why = None if ann is None or ann.mapped is None else _graph_changed(ann)
                if ann is None or why is None:
                    # (a column file cut: wait_ann and the next store call raise)
                    # (its traceback dropped: its frames hold the snapshot and its maps)
                    self._ann_failed = (threading.current_thread(), exc.with_traceback(None))
                    return
                self._drop_cut_graph(ann, why)  # (its kick finds this worker: built again)

    def _ann_work_steps(self, token: int, lag: int) -> None:
        def current() -> bool:
            return self._ann_token == token and not self._halt.is_set()

        while current():
            s = self._snap_v
            ann = self._ann
            if ann is not None and s.n - ann.upto < lag:
                if ann.needs_sweep():  # caught up: look for rows newer ones made unreachable
                    with _graph_held(ann):
                        ann.sweep(s.vectors_held, self.ann_threads, current)
                return
            if ann is None:
                ann = AnnIndex.new(s.dim)
            elif not ann.mutable:
                with _graph_held(ann):
                    ann = ann.mutable_copy()
            new = np.flatnonzero(s.alive[ann.upto : s.n]) + ann.upto
            head = new[: _ann.CHUNK]
            first_upto = s.n if new.size <= _ann.CHUNK else int(new[_ann.CHUNK])
            check = not ann.sweep_follows(int(new.size))  # (a bulk build: its sweep checks)
            # (the first chunk is added even when close() halts the worker: a graph that has
            # begun is then saved, and the next open resumes it instead of starting over)
            if not ann.extend(
                head,
                s.vectors_held,
                first_upto,
                self.ann_threads,
                lambda: self._ann_token == token,
                check,
            ):
                return
            with self._ann_load_lock:
                if self._ann_token != token:
                    return
                self._ann = ann  # (also when halted: close() saves the chunk it holds)
            if not ann.extend(
                new[_ann.CHUNK :], s.vectors_held, s.n, self.ann_threads, current, check
            ):
                return

    def _save_ann(self, gen: int, ann: AnnIndex | None, s: _Snap) -> dict[str, Any] | None:
        """The manifest entry of the HNSW graph, as far as the worker has got (a save never
        waits for it). The file is rewritten only when the graph holds 10% (and at least
        ``CATCH_UP_ROWS``) more rows than the saved one; otherwise the saved file stays, with
        its labels' rows (renumbered by a compaction) and the rows it covers."""
        assert self.path is not None
        if ann is None:
            if self._ann_file is None:
                return None
            # never opened in this process: keep the saved file, its labels mapped as before
            old = self._committed["ann"] if self._committed else None
            if old is None:
                return None
            row, orphans, owner = self._load_ann_rows()
            return {**old, "row": row, "orphans": orphans, "owner": owner}
        ann.lock.acquire_read()  # the worker adds no chunk meanwhile: count, rows and file agree
        try:
            count, upto, row, orphans = ann.count, ann.upto, ann.row.copy(), ann.orphans.copy()
            swept = ann.swept
            # (empty: no aliases; a kept file's labels are a prefix, their owners too)
            owner = ann.owner.copy() if ann.nodes < count else np.zeros(0, np.int64)
            saved = self._ann_file
            if saved is not None and count - saved[1] < max(self.ann_catch_up, count // 10):
                old = self._committed["ann"] if self._committed else {}
                kept = saved[1]
                return {
                    **(old or {}),
                    "row": row[:kept],
                    "orphans": orphans[orphans < kept],
                    "owner": _kept_owner(owner, kept),
                    "upto": _saved_upto(row, kept),
                    "swept": min(swept, kept),
                }
            if not count:
                return None
            name = f"ann-{gen:06d}.bin"
            tmp = self.path / f".tmp-{name}"
            ann.index.save(str(tmp))
        finally:
            ann.lock.release_read()
        size = tmp.stat().st_size
        value = _ck.file_digest(tmp, 0, size)
        _fsync_file(tmp)
        os.replace(tmp, self.path / name)
        self._ann_file = (name, count, upto)
        return {
            "file": name,
            "kind": _ann.KIND,
            "size": size,
            **_ck.tagged(value),
            "count": count,
            "upto": upto,
            "swept": swept,
            "dim": s.dim,
            "row": row,
            "orphans": orphans,
            "owner": owner,
        }

    def _ann_unsaved(self) -> bool:
        """Whether the graph grew past the saved file by the amount that rewrites it."""
        ann, saved = self._ann, self._ann_file
        if ann is None or self.path is None:
            return False
        if saved is None:
            return ann.count > 0
        return ann.count - saved[1] >= max(self.ann_catch_up, ann.count // 10)

    def _load_ann_rows(self) -> tuple[IntArray, IntArray, IntArray]:
        """The committed graph's label rows, orphan labels and label owners (empty: no
        aliases, see :attr:`AnnIndex.owner`)."""
        assert self._committed is not None and self.path is not None
        kept, self._ann_rows_open = self._ann_rows_open, None
        if kept is not None and kept[0] == self._committed["index"]["file"]:
            return kept[1], kept[2], kept[3]
        arrays = _read_arrays(
            self.path / self._committed["index"]["file"], self._committed["index"], False
        )
        return (
            np.array(arrays["ann_row"], dtype=np.int64),
            np.array(arrays["ann_orphan"], dtype=np.int64),
            np.array(arrays["ann_owner"], dtype=np.int64),
        )

    def _load_ann(self) -> AnnIndex | None:
        """The committed graph, memory-mapped (checksummed first unless ``verify=False``).
        Raises :class:`~treehop.errors.IndexCorruptError` when it is damaged."""
        assert self.path is not None and self._committed is not None
        entry = self._committed.get("ann")
        if not entry or entry.get("kind") != _ann.KIND:
            return None  # none, or an older kind (hnswlib): the worker builds a new one
        f = self.path / entry["file"]
        try:
            checked = None
            if self._verify:
                ok, checked = self._ann_file_ok(f, entry)
                if not ok:
                    raise IndexCorruptError(f"{f}: checksum mismatch")
            row, orphans, owner = self._load_ann_rows()
            if row.size != int(entry["count"]):
                raise IndexCorruptError(f"{f}: {entry['count']} labels but {row.size} rows")
            swept = entry.get("swept")  # (none in a file saved before sweeps: counts as swept)
            ann = AnnIndex.open(
                f,
                int(entry["dim"]),
                row,
                int(entry["upto"]),
                view=True,
                orphans=orphans,
                swept=None if swept is None else int(swept),
                owner=owner,
            )
            if checked is not None and ann.stamp != checked:
                # (the file changed between its checksum and its map: what was checked is
                # not what is mapped; helper leftovers72a)
                raise IndexCorruptError(f"{f}: {_REWRITTEN} (between its checksum and its map)")
            ann.guard = _graph_query_held  # (each search's read of the view: leftovers71a)
            warm, self._warm_orphans = self._warm_orphans, None
            if warm is not None:  # (a graph opened after the open's warm-up)
                ann.adopt_orphans(warm)
            return ann
        except (OSError, ValueError, TypeError) as exc:
            raise IndexCorruptError(f"{f}: {exc}") from exc

    def _ann_file_ok(self, f: Path, entry: Mapping[str, Any]) -> tuple[bool, _ann.FileStamp | None]:
        """Whether the graph file matches its checksum, and the file's stamp taken before
        the checksum read it (``None``: no stamp could be read): the open's early answer for
        this entry when there is one (waiting for it), else computed now."""
        pre, self._ann_pre = self._ann_pre, None
        if pre is not None and pre[0] == entry:
            pre[1].join()
            if pre[2]:
                got = pre[2][0]
                if isinstance(got, Exception):
                    raise got
                return got  # type: ignore[no-any-return]
        return _stamped_check(f, int(entry["size"]), entry)

    def _start_ann_precheck(self, m: Mapping[str, Any]) -> None:
        """With ``verify=True``, when the open will load the saved graph: start its checksum
        (a whole-file read) in a thread before the vectors are verified, so that the two
        cold reads overlap instead of running one after the other. Measured at 1M rows
        (``bench/bench_store.py``'s open): the vectors' 1.5 GB took 1.37 s and the graph's
        0.67 GB 1.58 s after them, most of the open's time."""
        self._ann_pre = None
        try:
            entry = dict(m.get("ann") or {})
            live = int(m["live"])
            f = (self.path or Path()) / str(entry["file"])
            size = int(entry["size"])
        except (KeyError, TypeError, ValueError):
            return  # the open itself reports a damaged manifest
        if (
            self._verify is not True
            or self.path is None
            or entry.get("kind") != _ann.KIND
            or self.ann_min_rows is None
            or live < self.ann_min_rows
        ):
            return
        box: list[Any] = []

        def run() -> None:
            with contextlib.suppress(ImportError):
                _ann._index_class()  # usearch's import (~80 ms) overlaps the open's reads too
            try:
                box.append(_stamped_check(f, size, entry))
            except (OSError, ValueError, IndexCorruptError) as exc:
                box.append(exc)

        t = threading.Thread(target=run, name="treehop-open-graph", daemon=True)
        t.start()
        self._ann_pre = (entry, t, box)

    def _load_ann_or_rebuild(self) -> AnnIndex | None:
        """:meth:`_load_ann`, except that a damaged graph is dropped (``ann_damaged`` says
        why) and rebuilt by the worker from the vectors: it is derived data, and failing
        every search over it would lose nothing the vectors do not still hold."""
        try:
            ann = self._load_ann()
        except IndexCorruptError as exc:
            self.ann_damaged = str(exc)
            ann = None
        if ann is None:
            self._ann_file = None
        return ann


_REWRITTEN = (
    "rewritten by another program while the index is open (its files are never written in "
    "place); the graph is rebuilt from the vectors"
)


def _stamped_check(
    f: Path, size: int, entry: Mapping[str, Any]
) -> tuple[bool, _ann.FileStamp | None]:
    """:func:`_checksum.whole_file_ok` of graph file ``f``, with its stamp taken first."""
    try:
        before: _ann.FileStamp | None = _ann.file_stamp(os.stat(f))
    except OSError:
        before = None
    return _ck.whole_file_ok(f, size, entry), before


def _graph_rewritten(ann: AnnIndex) -> bool:
    """Whether the file of graph view ``ann`` was modified since it was mapped: the same
    inode at its path, another size or modification time (one ``stat``, ~1-2 us).

    Why (helper leftovers72a; attacks84's open item): the store's files are only ever
    written to a new name and renamed in place, so a change of the mapped inode is another
    program's; rewritten in place at the same size it passed the size check, and usearch
    then walked whatever neighbour lists the new bytes hold. The modification time, not the
    change time: a hard link made by a backup (``cp -al``, rsnapshot) or a ``chmod`` changes
    the latter only and is no damage. Not seen: a rewrite whose ``utime`` puts the old
    time back (that is deliberate), or one within the file system's timestamp tick of the
    save that wrote it. A path that names another file now (or none: removed by another
    client's clean-up) leaves the mapped inode as it was: not rewritten."""
    stamp = ann.stamp
    if ann.mapped is None or stamp is None:
        return False
    try:
        st = os.stat(ann.mapped[0])
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == stamp[:2] and (st.st_size, st.st_mtime_ns) != stamp[2:]


def _graph_changed(ann: AnnIndex) -> str | None:
    """Why graph view ``ann`` can no longer be read (cut short, or rewritten in place:
    :func:`_graph_rewritten`), else ``None``."""
    assert ann.mapped is not None
    if _map_short(ann.mapped[1]):
        return str(_cut_short(ann.mapped[0]))
    if _graph_rewritten(ann):
        return f"{ann.mapped[0]}: {_REWRITTEN}"
    return None


def _graph_held(ann: AnnIndex) -> contextlib.AbstractContextManager[None]:
    """A context for a long read of graph ``ann`` (its copy, a sweep's searches): for a view,
    the file's size is checked and a read lease held while the read lasts (as a long read
    of a column file, :func:`_map_read`)."""
    if ann.mapped is None:
        return contextlib.nullcontext()
    return _graph_read(ann, False)


@contextlib.contextmanager
def _graph_read(ann: AnnIndex, query: bool) -> Iterator[None]:
    """:func:`_map_read` of graph view ``ann``'s whole file, and inside its lease (which
    keeps another program from opening the file for writing while it is held) the check
    that the file was not rewritten in place since it was mapped (:func:`_graph_rewritten`).
    ``query``: a query's read (:func:`_graph_query_held`: found damage is a
    :class:`_GraphCut`, which the search turns into an exact answer); ``False``: the
    worker's long reads (an :class:`IndexCorruptError` its loop drops the graph on)."""
    assert ann.mapped is not None
    path, mm = ann.mapped
    cut = (lambda p: _GraphCut(ann, p)) if query else _cut_short
    written = (lambda p: _GraphCut(ann, p, written=True)) if query else None
    with _map_read(path, mm, len(mm), max(len(mm), _LEASE_BYTES), cut=cut, written=written):
        _refuse_rewritten(ann, query)
        yield
        # (again after the read: the kernel breaks a lease after its lease-break-time, 45 s
        # here, and none is had on NFS or on another user's file; a rewrite during the read
        # makes its answer void: the search answers exactly instead)
        _refuse_rewritten(ann, query)


def _refuse_rewritten(ann: AnnIndex, query: bool) -> None:
    """Raise when graph view ``ann``'s file was rewritten (:func:`_graph_rewritten`): a
    :class:`_GraphCut` for a ``query``, else an :class:`IndexCorruptError`."""
    if _graph_rewritten(ann):
        assert ann.mapped is not None
        if query:
            raise _GraphCut(ann, ann.mapped[0], rewritten=True)
        raise IndexCorruptError(f"{ann.mapped[0]}: {_REWRITTEN}")


class _GraphCut(IndexCorruptError):
    """Graph view ``ann``'s file found cut short by the check a query makes under its read
    lease (:func:`_graph_query_held`): the search that meets it drops the graph
    (:meth:`_AnnWorker._drop_cut_graph`) and answers exactly, as one that finds the cut
    before it starts does; it never reaches a caller."""

    def __init__(
        self, ann: AnnIndex, path: str, written: bool = False, rewritten: bool = False
    ) -> None:
        if rewritten:
            text = f"{path}: {_REWRITTEN}"
        elif written:
            text = (
                f"{path}: opened for writing by another program while the index is open (its "
                "files are never written in place); the graph is rebuilt from the vectors"
            )
        else:
            text = str(_cut_short(path))
        super().__init__(text)
        self.ann = ann


def _graph_query_held(ann: AnnIndex) -> contextlib.AbstractContextManager[None]:
    """:attr:`AnnIndex.guard` of a view: each query's read of usearch's map holds a read
    lease on the file for the query's length (a query takes ~0.1-100 ms; the lease ~10 us),
    so another program's ``truncate`` waits for it (or fails at once when it opens
    non-blocking, as coreutils' does), and the size and modification time checked after the
    lease is taken see a cut or an in-place rewrite made before it: :class:`_GraphCut`.

    Why (helper leftovers71a): ``_ann_index``'s check before a search left the search itself
    (C++, the GIL released, in any thread) to a cut made meanwhile; 4 threads searching while
    ``truncate -s 0`` cut the file: SIGBUS (``tests/test_leftovers71a_graph.py``). Where no
    lease can be had (no leases on the platform or file system, a file not this user's) the
    check alone remains, as for a column file's read."""
    return _graph_read(ann, True)


def _kept_owner(owner: IntArray, kept: int) -> IntArray:
    """The owners of a kept graph file's ``kept`` labels (empty when none is an alias)."""
    head = owner[:kept]
    if not head.size or bool((head == np.arange(head.size)).all()):
        return np.zeros(0, np.int64)
    return head


_WARM_INLINE_ROWS = 100_000
"""Below this many rows the open warms a snapshot inline (a thread would cost more)."""


def _warm(s: _Snap, ann_rows: tuple[IntArray, IntArray] | None = None) -> WarmOrphans | None:
    """Build a freshly opened snapshot's query-independent lookup keys: the URI hashes in
    ``by_hash`` order (every ``lookup``: a find's roots, a parent) and the parent hashes in
    ``by_parent`` order (every ``children`` call, the siblings of graph candidates). Each is
    a random gather over every row (~10-30 ms per million rows here), which the first
    ``find()`` after an open paid before: 25-70 ms of its 76-240 ms at 1M rows
    (``bench/bench_store.py``'s "first find after open"). With ``ann_rows`` (the saved
    graph's label rows and orphan labels): also the orphans' matrix and codes
    (:class:`WarmOrphans`), the rest of that first find's one-time cost."""
    s.sorted_keys("uri_hash", s.by_hash)
    s.sorted_keys("parent_hash", s.by_parent)
    _uri_rank(s)
    if ann_rows is None or not ann_rows[1].size:
        return None
    row, labels = ann_rows
    try:
        return WarmOrphans.gather(row, labels, s.vectors_held)  # (no call's check covers it)
    except (IndexError, ValueError):
        return None  # (damaged labels or rows: the graph's own open or first search reports it)


def _start_warm(
    s: _Snap, ann_rows: tuple[IntArray, IntArray] | None = None
) -> Callable[[], WarmOrphans | None]:
    """:func:`_warm` for an opened snapshot: inline for a small one, else in a thread that
    the open joins before it returns (so the open's time includes it) and that overlaps the
    graph's checksum pass, which reads a file without the GIL, as the gathers run without
    it. Returns the join, which answers :func:`_warm`'s orphans. A failure leaves the keys
    (and the orphans) to be built by the first search that needs them."""
    if s.n < _WARM_INLINE_ROWS:
        done = _warm(s, ann_rows)
        return lambda: done
    box: list[WarmOrphans | None] = [None]

    def run() -> None:
        with contextlib.suppress(Exception):
            box[0] = _warm(s, ann_rows)

    t = threading.Thread(target=run, name="treehop-open-warm", daemon=True)
    t.start()

    def join() -> WarmOrphans | None:
        t.join()
        return box[0]

    return join


def _wait_seconds(timeout: object) -> float | None:
    """``wait_ann``'s ``timeout`` as seconds to wait (``None``: until the graph is done).

    Why (helper attacks83): ``wait_ann(timeout=math.inf)`` -- how a caller spells "wait for
    good" -- and any timeout past ``threading.TIMEOUT_MAX`` (about 292 years) reached
    ``Thread.join`` as it was, whose lock refuses it with ``OverflowError``. That escaped
    raw, and worse: Python's join, interrupted by the exception while the worker still ran,
    releases the thread's own state lock and marks it stopped, so ``is_alive()`` said False
    for a worker still extending the graph; the next call started a second worker on the
    same graph (``IndexError`` in ``_owners`` from both, then ``terminate called without an
    active exception``: the process aborted). A time that long is no deadline at all, so it
    waits as ``None``; NaN, a bool and a non-number are refused typed, a negative one is 0
    (return at once with what is done), as ``Thread.join`` reads it."""
    if timeout is None:
        return None
    seconds = real(timeout)
    if seconds is None or (isinstance(seconds, float) and math.isnan(seconds)):
        raise StoreError(
            f"timeout must be a number of seconds or None, got {shown_value(timeout, 40)}"
        )
    if seconds >= threading.TIMEOUT_MAX:  # (an int past float range is >= it too)
        return None
    return float(seconds) if seconds > 0 else 0.0  # (-10**400 has no float)
