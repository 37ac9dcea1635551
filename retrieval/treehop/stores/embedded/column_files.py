"""The data files of a generation: the append-only column files and their checksummed
extents (segments), the memory maps and lazy verification of the node texts (:class:`_PFile`,
:class:`_BlobGuard`), the lookup-array file, node JSON blobs and fsync helpers."""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import signal
import stat
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import TypeAdapter

from ...errors import (
    IndexCorruptError,
)
from ...models import Node
from .. import _ann
from .. import _checksum as _ck
from .layout import _APPEND_FILES, _COLUMNS, IntArray, U8Array, _unique_ints

_NODES = TypeAdapter(list[Node])
_NODE_SERIALIZER = Node.__pydantic_serializer__


def _node_json(node: Node) -> bytes:
    """A node's stored JSON: the same bytes as ``TypeAdapter(Node).dump_json`` (which wraps
    this serializer), ~20% cheaper per node, which counts when a re-add compares 100k nodes."""
    out: bytes = _NODE_SERIALIZER.to_json(node)
    return out


_INDEX_ARRAYS: dict[str, type[np.generic]] = {
    "alive": np.bool_,
    "by_hash": np.int64,
    "by_uri": np.int64,
    "by_parent": np.int64,
    "parent_row": np.int64,
    "tag_hash": np.uint64,
    "tag_row": np.int64,
    "ann_row": np.int64,
    "ann_orphan": np.int64,
    "ann_owner": np.int64,
}
_OPTIONAL_ARRAYS = frozenset({"ann_orphan", "ann_owner"})
"""Arrays an index file saved by an older version may lack (read as empty)."""
_MAX_EXTENTS = 256
_BLOCK = 1 << 25
"""Appends are checksummed in extents of at most 32 MiB, so that verifying a large file at
open is many independent jobs (run on all cores) rather than one sequential pass."""
_VERIFY_THREADS = max(1, min(8, os.cpu_count() or 1))
_NODE_BLOCK = 1 << 20
"""Node texts are checksummed in 1 MiB extents: a search that reads a few rows first verifies
only the extents holding them (~0.5 ms each here)."""


class _BlobGuard:
    """Checksums of a memory-mapped blob, verified lazily: an extent is checked before any
    byte of it is returned (by the reader that needs it, or earlier by a background pass), so
    an unverified byte is never served. Used for the node texts, which a search reads a few
    rows at a time: opening need not read them all first."""

    def __init__(
        self,
        f: Path,
        blob: U8Array,
        extents: Sequence[Sequence[int]],
        reader: _PFile | None = None,
    ) -> None:
        self.f = f
        self.blob = blob
        self.reader = reader
        """Reads an extent to check (``pread``) instead of the map: a cold 1 MiB extent read
        through the map faults in page by page (9-15 ms here), one ``pread`` takes 1.6-2.5
        ms, maps nothing that must be released afterwards, and a file cut short is an
        :class:`IndexCorruptError` instead of a SIGBUS. A reader's first rows after an open
        check their extents themselves, so this is on the first ``find()``'s path."""
        parsed = [_ck.parse_extent(x) for x in extents]
        self.starts = np.array([x[0] for x in parsed], dtype=np.int64)
        self.ends = np.array([x[1] for x in parsed], dtype=np.int64)
        self.sums = [(x[2], x[3]) for x in parsed]  # (checksum, algorithm): may be mixed
        self.done = np.zeros(len(parsed), dtype=bool)
        self.left = len(parsed)
        """Extents not verified yet: once 0 (every extent checked), reads skip the lookups."""
        self.size = int(self.ends[-1]) if len(parsed) else 0
        self._count_lock = threading.Lock()

    def ensure(self, lo: int, hi: int) -> None:
        """Verify every extent overlapping bytes ``[lo, hi)`` (raises if one is damaged)."""
        if hi <= lo or (not self.left and hi <= self.size):
            return
        first = max(int(np.searchsorted(self.ends, lo, side="right")), 0)
        last = int(np.searchsorted(self.starts, hi, side="left"))
        for i in range(first, min(last, len(self.done))):
            if not self.done[i]:
                self._check(i)
        if hi > (int(self.ends[-1]) if self.ends.size else 0):
            raise IndexCorruptError(f"{self.f}: bytes beyond the checksummed extents")

    def ensure_rows(self, starts: Sequence[int], ends: Sequence[int]) -> None:
        """:meth:`ensure` for many rows' byte ranges at once."""
        if not len(starts) or (not self.left and max(ends) <= self.size):
            return
        s_arr = np.asarray(starts, dtype=np.int64)
        e_arr = np.maximum(np.asarray(ends, dtype=np.int64), s_arr + 1)
        first = np.searchsorted(self.ends, s_arr, side="right")
        last = np.searchsorted(self.ends, e_arr - 1, side="right")
        need = _unique_ints(np.concatenate([first, last]))
        for i in need[need < len(self.done)].tolist():
            if not self.done[i]:
                self._check(i)
        for j in np.flatnonzero(last - first > 1).tolist():  # a row longer than an extent
            self.ensure(int(s_arr[j]), int(e_arr[j]))
        self.ensure(int(e_arr.max()) - 1, int(e_arr.max()))

    def _check(self, i: int) -> None:
        a, e = int(self.starts[i]), int(self.ends[i])
        value, algo = self.sums[i]
        if e > self.blob.size:
            raise IndexCorruptError(f"{self.f}: checksum mismatch in [{a}, {e})")
        data: Any = self.reader.read(a, e) if self.reader is not None else self.blob[a:e].data
        if _ck.digest(data, algo) != value:
            raise IndexCorruptError(f"{self.f}: checksum mismatch in [{a}, {e})")
        with self._count_lock:  # a reader and the background pass may check one extent
            if not self.done[i]:
                self.done[i] = True
                self.left -= 1
        if self.reader is None:
            _release_pages(self.blob, a, e)  # a reader faults back in only the rows it reads

    def verify_rest(self, stop: Callable[[], bool] = lambda: False) -> None:
        """The background pass: check the extents no reader has needed yet, in file order,
        so that the first finds after an open soon stop checking (and reading) whole 1 MiB
        extents to serve a few rows each. The kernel is first asked to read the file ahead
        (``POSIX_FADV_WILLNEED``: asynchronous, no CPU or GIL here), so that the pass and the
        readers' own checks read from the page cache rather than one cold extent at a time.

        At normal priority: at the lowest one (``nice 19``, as before) the pass got almost no
        CPU on a loaded machine, so it never finished and every early find verified its
        extents itself (the warm-up of the first ~100 finds). It is short (the node texts
        are a quarter of the index's bytes, checksummed at ~8 GB/s), and the checksum and the
        reads run without the GIL. ``stop()`` ends it between extents (closing)."""
        if self.reader is not None:
            with contextlib.suppress(OSError, AttributeError):
                os.posix_fadvise(self.reader.fd, 0, 0, os.POSIX_FADV_WILLNEED)
        for i in np.flatnonzero(~self.done).tolist():
            if stop():
                return  # (closing: readers and the save still check what they need)
            if not self.done[i]:
                with contextlib.suppress(IndexCorruptError):  # raised to the reader instead
                    self._check(i)

    def verify_all(self) -> None:
        """Check every extent now (raises on the first damaged one)."""
        for i in np.flatnonzero(~self.done).tolist():
            self._check(i)


class _PFile:
    """A file read by offset (``pread``), closed with the last snapshot that uses it."""

    def __init__(self, f: Path) -> None:
        self.name = str(f)
        self.fd = os.open(f, os.O_RDONLY)

    def read(self, start: int, end: int) -> bytes:
        try:
            got = os.pread(self.fd, end - start, start)
        except OSError as exc:
            raise IndexCorruptError(f"{self.name}: {exc.strerror or exc}") from exc
        if len(got) != end - start:
            raise IndexCorruptError(f"{self.name}: shorter than committed")
        return got

    def read_into(self, buf: memoryview, offset: int) -> None:
        """Fill ``buf`` (bytes) from the file at ``offset``: no intermediate ``bytes`` (a
        vector gather reads straight into its result array). A short read (the file cut
        short since the open) is an :class:`IndexCorruptError`."""
        at, size = 0, len(buf)
        while at < size:
            try:
                got = os.preadv(self.fd, [buf[at:]], offset + at)
            except OSError as exc:
                raise IndexCorruptError(f"{self.name}: {exc.strerror or exc}") from exc
            if got <= 0:
                raise IndexCorruptError(f"{self.name}: shorter than committed")
            at += got  # (one call reads at most ~2 GiB: a whole-file read loops)

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)


_ROW_GAP = 4
"""A vector gather by ``pread`` (:class:`_VectorRows`) reads rows up to this many rows apart
in one call, the rows between included: a call costs ~2 us here, a row's 1.5 KiB ~0.2 us."""


class _VectorRows:
    """The saved float32 vectors of a generation, read by row with ``pread`` instead of
    through the memory map (generations above ``manifest.READ_VECTORS_BYTES``).

    Why: on this machine's kernel (6.18) the page cache holds the vectors file in large
    folios and a read fault maps the whole folio, so one row read through the map makes up
    to 2 MiB resident; a search's ~200 scattered rows (rescored graph candidates, siblings)
    and the ~8k rows the graph cannot reach (gathered at open) mapped every page of the file
    within a few finds: at 1M rows 1.5 GB of the process's resident memory, 1.0x the raw
    vectors on top of the graph file. ``MADV_DONTNEED`` after the open did not hold (the
    next reads mapped the folios again). Read by ``pread``, the rows are copied out of the
    page cache and nothing of the file stays mapped; the cache itself is the kernel's to
    reclaim. Rows close together are read in one call (sorted, coalesced ranges). A file cut
    short since the open is an :class:`IndexCorruptError` (through the map it was a SIGBUS).

    Exact scans over every row still read the map (``_Snap.base_block``), releasing each
    block's pages after it: as fast as a resident map here, ~2x faster than copying the file
    through ``pread``."""

    __slots__ = ("dim", "file", "n", "row_bytes")

    def __init__(self, f: Path, n: int, dim: int) -> None:
        self.file = _PFile(f)
        self.n = n
        self.dim = dim
        self.row_bytes = dim * 4
        with contextlib.suppress(OSError, AttributeError):
            # (scattered rows: the kernel's read-ahead would read 128 KiB+ around each miss)
            os.posix_fadvise(self.file.fd, 0, 0, os.POSIX_FADV_RANDOM)

    def rows(self, rows: IntArray) -> npt.NDArray[np.float32]:
        """The vectors of ``rows`` (numpy's indexing rules: negative rows count from the
        end, a row out of range is an :class:`IndexError`), in their order."""
        k = int(rows.size)
        if not k:
            return np.empty((0, self.dim), np.float32)
        lo, hi = int(rows.min()), int(rows.max())
        if lo < -self.n or hi >= self.n:
            raise IndexError(f"row out of range for {self.n} vectors")
        if lo < 0:
            rows = np.where(rows < 0, rows + self.n, rows)
        order: IntArray | None = None
        srt = rows
        if k > 1 and not bool((rows[1:] >= rows[:-1]).all()):
            order = np.argsort(rows, kind="stable")
            srt = rows[order]
        brk = np.flatnonzero(np.diff(srt) > _ROW_GAP) + 1
        starts = srt[np.concatenate(([0], brk))]
        lens = srt[np.concatenate((brk - 1, [k - 1]))] + 1 - starts
        total = int(lens.sum())
        buf = np.empty((total, self.dim), np.float32)
        mv = memoryview(buf.data).cast("B")
        rb = self.row_bytes
        fd, preadv = self.file.fd, os.preadv
        at = 0
        try:
            for a, ln in zip((starts * rb).tolist(), (lens * rb).tolist(), strict=True):
                # (the call inline: one per range, ~100 per find at 1M rows)
                if preadv(fd, [mv[at : at + ln]], a) != ln:
                    self.file.read_into(mv[at : at + ln], a)  # short: finish, or raise
                at += ln
        except OSError as exc:
            raise IndexCorruptError(f"{self.file.name}: {exc.strerror or exc}") from exc
        if total == k and order is None:
            return buf  # (sorted, distinct, no rows between: the buffer is the answer)
        counts = np.diff(np.concatenate(([0], brk, [k])))
        offs = np.cumsum(lens) - lens
        pos = srt + np.repeat(offs - starts, counts)
        if order is None:
            got: npt.NDArray[np.float32] = buf[pos]
            return got
        out = np.empty((k, self.dim), np.float32)
        out[order] = buf[pos]
        return out


def _append_segments(
    data: Path,
    files: dict[str, dict[str, Any]],
    chunks: Mapping[str, bytes | memoryview],
    appended: set[tuple[int, int]],
) -> None:
    """Append each file's new bytes after its committed size (dropping whatever an interrupted
    save or a lost generation left beyond it: :func:`_drop_tail`), fsync them, and record
    each append as extents with their checksums (:mod:`.._checksum`'s default algorithm;
    older extents keep theirs). ``appended`` gets each file's (device, inode) before its
    bytes are written: what a failed save may cut again."""
    data.mkdir(exist_ok=True)
    written = []
    for name in _APPEND_FILES:
        f = data / f"{name}.bin"
        info = files.setdefault(name, {"size": 0, "extents": []})
        with contextlib.suppress(FileNotFoundError):
            if os.stat(f).st_size > info["size"]:
                _drop_tail(f, info["size"])
        with open(f, "ab" if f.exists() else "wb") as fh:
            st = os.fstat(fh.fileno())
            appended.add((st.st_dev, st.st_ino))
            fh.truncate(info["size"])
            fh.seek(info["size"])
            fh.write(chunks[name])
        written.append(f)
    # one fsync per file, issued together: the device can serve them in one flush
    # instead of eleven sequential ones (measured ~8 ms each here)
    _each(_fsync_file, written)
    for name in _APPEND_FILES:
        info = files[name]
        payload = memoryview(chunks[name])
        start = info["size"]
        step = _NODE_BLOCK if name == "nodes" else _BLOCK
        for a in range(0, len(payload), step):
            block = payload[a : a + step]
            info["extents"].append(_ck.extent(start + a, start + a + len(block), _ck.digest(block)))
        info["size"] = start + len(payload)
        if len(info["extents"]) > _MAX_EXTENTS + info["size"] // step:
            # many small appends: checksum the file again in whole blocks
            info["extents"] = _sum_blocks(data / f"{name}.bin", info["size"], step)


FileMark = tuple[int, int, int, int]
"""A file's ``(st_ino, st_size, st_mtime_ns, st_ctime_ns)`` as an open read it."""


def _mark(st: os.stat_result) -> FileMark:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class CopiedFile:
    """A column file read into memory at the open (not mapped, :func:`_map_segments`), as
    the snapshot's per-call check sees a map (``size()`` now, ``len()`` read): so that a
    file cut short by another program is still an :class:`IndexCorruptError` at the next
    call (``check_mapped``), as a mapped one is, though no read of the copy can fault.

    The file is found again by its path and told apart by its inode: a file deleted or
    renamed over since the open (treehop's own compaction removes old generations) is no
    damage to what was read, as a map of it would have kept reading it; it reads as whole."""

    __slots__ = ("_ino", "_nbytes", "_path")

    def __init__(self, path: str, ino: int, nbytes: int) -> None:
        self._path = path
        self._ino = ino
        self._nbytes = nbytes

    def size(self) -> int:
        """The file's size now, or the size read when the path holds another file."""
        try:
            st = os.stat(self._path)
        except OSError:
            return self._nbytes
        return st.st_size if st.st_ino == self._ino else self._nbytes

    def __len__(self) -> int:
        return self._nbytes


def _map_segments(
    data: Path,
    files: Mapping[str, Any],
    n: int,
    dim: int,
    marks: dict[str, FileMark] | None = None,
    keep_mapped: Sequence[str] = (),
) -> dict[str, npt.NDArray[Any]]:
    """Memory-map each append-only file of a generation up to its committed size, checking
    that every file is there, long enough, and that the columns have one entry per row.

    The fixed-width columns (:data:`_COLUMNS`) are read into arrays of their own rather than
    mapped: the snapshot copied each out of its map at once (a write appends to them), so
    the map was set up, faulted in page by page and torn down for a copy (helper perf63:
    ~60 of the ~75 us each of the eight cost, 0.25 ms of a closed store's 0.41 ms reopen
    at 2,200 nodes). The same committed bytes; what is verified is then the bytes used.

    A file of the other kinds (the vectors, the URI and node-text blobs) smaller than
    :data:`_LEASE_BYTES` is read the same way, not mapped (helper leftovers66c): a read
    through a map of a file another program cut short meanwhile is SIGBUS, and only reads of
    4 MiB or more hold a read lease (:func:`_map_read`); an exact scan of a 3.4 MB vectors
    file cut during a batch of searches died of SIGBUS in 3 of 3 runs. A private copy of at
    most 4 MiB a file cannot fault; the cost is measured in bench/README.md
    ("(helper leftovers66c)"). ``keep_mapped`` names files mapped whatever their size (the
    vectors of a generation that reads them by row: its pages are let go after each read).

    ``marks`` (given) gets each file's :data:`FileMark` from the ``stat`` made here anyway
    (see ``EmbeddedStore._reopen``, which compares them)."""
    maps: dict[str, npt.NDArray[Any]] = {}
    folder = os.fspath(data)
    for name in _APPEND_FILES:
        f = os.path.join(folder, f"{name}.bin")
        size = int(files[name]["size"])
        try:
            st = os.stat(f)
        except OSError:
            st = None
        if st is None or not stat.S_ISREG(st.st_mode) or st.st_size < size:
            raise IndexCorruptError(f"{f}: missing or shorter than committed")
        if marks is not None:
            marks[name] = _mark(st)
        dtype = np.float32 if name == "vectors" else _COLUMNS.get(name, np.uint8)
        count = size // np.dtype(dtype).itemsize
        if not count:
            maps[name] = np.zeros(0, dtype)
        elif _READV and (name in _COLUMNS or (size < _LEASE_BYTES and name not in keep_mapped)):
            # (a small file read whole, not mapped: no later cut can fault a read of it)
            maps[name] = _read_column(f, dtype, count)
            if name not in _COLUMNS:
                maps[name].flags.writeable = False  # (read-only, as its map was)
        else:
            maps[name] = _mapped(f, dtype, count)
    if maps["vectors"].size != n * dim:
        raise IndexCorruptError(f"{data}: {maps['vectors'].size} floats for {n} x {dim} vectors")
    for name in _COLUMNS:
        if maps[name].shape[0] != n:
            raise IndexCorruptError(f"{data}: column {name} has the wrong length")
    return maps


_READV = hasattr(os, "readv")


def _read_column(f: str, dtype: Any, count: int) -> npt.NDArray[Any]:
    """The first ``count`` items of file ``f`` read into a new (writable) array; a file
    that ends before them is an :class:`IndexCorruptError`."""
    out = np.empty(count, dtype)
    buf = out.view(np.uint8).data
    fd = os.open(f, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        got = 0
        while got < buf.nbytes:
            k = os.readv(fd, [buf[got:]])
            if k <= 0:
                raise IndexCorruptError(f"{f}: missing or shorter than committed")
            got += k
    finally:
        os.close(fd)
    return out


def _mapped(f: Path | str, dtype: Any, count: int) -> npt.NDArray[Any]:
    """A read-only array of the first ``count`` items of file ``f``, mapped (``mmap``
    keeps its own descriptor, closed when the array's last reference goes).

    Why not ``np.memmap`` (helper perf62): a plain view of one was kept already (its
    per-slice bookkeeping costs more than the row reads), and making one resolved the path
    (an ``lstat`` per component), opened a Python file object and seeked: 11 maps of a
    generation were ~0.6 ms of the ~1.3 ms a closed store's reopen costs (a client opened,
    used and closed again). Same mapping (``PROT_READ``, shared, from offset 0, the
    committed bytes only)."""
    fd = os.open(f, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        mm = mmap.mmap(fd, count * np.dtype(dtype).itemsize, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    return np.frombuffer(mm, dtype=dtype, count=count)


def _verify_segments(
    data: Path,
    files: Mapping[str, Any],
    maps: Mapping[str, npt.NDArray[Any]],
    names: Sequence[str],
    release: Sequence[str] = (),
) -> None:
    """Check the checksum of every extent of the files ``names`` (and that the vectors are
    finite) on their memory maps. Every file's pages are released after its extent but the
    vectors', unless ``release`` names them (read by ``pread``: see :class:`_VectorRows`).

    Why on the maps, in threads: reading the files into buffers first costs a copy and a
    page fault per fresh 4 KiB page of every buffer, more than the checksum itself; on the
    map, each page is faulted in once and stays mapped for the searches that follow. Each
    extent (at most ``_BLOCK`` bytes for data written by this version) is one job; the
    checksums (XXH3, or CRC-32 for extents written by format 2) and numpy release the GIL,
    so the jobs run on all cores. The finiteness check runs on the same block right after
    its checksum, while it is in the CPU cache. Small extents (many saves of a few rows)
    are grouped into jobs of about ``_LEASE_BYTES``.
    """
    jobs: list[tuple[str, list[tuple[int, int, int, str]]]] = []
    for name in names:
        if not maps[name].size:
            continue
        group: list[tuple[int, int, int, str]] = []
        for ext in files[name]["extents"]:
            group.append(_ck.parse_extent(ext))
            if group[-1][1] - group[0][0] >= _LEASE_BYTES:
                jobs.append((name, group))
                group = []
        if group:
            jobs.append((name, group))

    def check(job: tuple[str, list[tuple[int, int, int, str]]]) -> None:
        name, group = job
        arr = maps[name]
        raw = arr.view(np.uint8)
        # (extents in runs of about _LEASE_BYTES, each run read under one read lease when
        # the file is that large -- an index saved many times has many small extents, and a
        # cut during a pass over them was as likely to land in a read as for one large one
        # -- with the file's size checked first: a cut meanwhile is IndexCorruptError, not
        # SIGBUS; _map_read)
        end = max(e for _, e, _, _ in group)
        for a, e, _, _ in group if end > raw.size else ():
            if e > raw.size:
                raise IndexCorruptError(f"{data / name}.bin: checksum mismatch in [{a}, {e})")
        bad: tuple[int, int] | None = None
        finite = True
        with _map_read(str(data / f"{name}.bin"), _map_of(arr), end, raw.size):
            for a, e, value, algo in group:
                if _ck.digest(raw[a:e].data, algo) != value:
                    bad = (a, e)
                    break
                if name == "vectors" and not _all_finite(arr[a // 4 : -(-e // 4)]):
                    finite = False
                    break
                if name != "vectors" or name in release:
                    _release_pages(arr, a, e)
        if bad is not None:
            raise IndexCorruptError(f"{data / name}.bin: checksum mismatch in [{bad[0]}, {bad[1]})")
        if not finite:
            raise IndexCorruptError(f"{data}: vectors contain NaN or infinite values")

    _each(check, jobs, _VERIFY_THREADS)


def _each(fn: Callable[[Any], None], items: Sequence[Any], workers: int | None = None) -> None:
    """``fn`` of every item, on a thread pool of up to ``workers`` (default one per item);
    in this thread when there is one item, or when the interpreter is exiting: from then on
    a pool refuses new work (a save from a thread still running at exit failed with
    ``RuntimeError: cannot schedule new futures after interpreter shutdown``)."""
    if len(items) <= 1 or _ann.exiting():
        for item in items:
            fn(item)
        return
    with ThreadPoolExecutor(max_workers=min(len(items), workers or len(items))) as pool:
        for fut in [pool.submit(fn, item) for item in items]:
            fut.result()


def _all_finite(block: npt.NDArray[Any]) -> bool:
    """Whether every value is finite. A NaN or an infinity makes the sum non-finite, so a
    finite sum proves the block (one streaming reduction, no mask: ~40% faster than
    ``isfinite(...).all()``, which mattered for the 1.5 GB checked at a 1M-row open); a
    non-finite sum may also be an overflow of large finite values, so it is checked exactly."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = block.sum()
    return bool(np.isfinite(total)) or bool(np.isfinite(block).all())


def _map_of(arr: npt.NDArray[Any]) -> mmap.mmap | None:
    """The ``mmap`` an array views (``None``: it views none, e.g. a column read by
    ``readv`` or an empty file's zeros)."""
    base: Any = arr
    while base is not None and not isinstance(base, (np.memmap, memoryview)):
        base = getattr(base, "base", None)
    # (a map of :func:`_mapped`: a memoryview of the mmap; an np.memmap keeps it as _mmap)
    mm = base.obj if isinstance(base, memoryview) else getattr(base, "_mmap", None)
    return mm if isinstance(mm, mmap.mmap) else None


_LEASE_BYTES = 4 << 20
"""A read through a memory map of at least this many bytes holds a read lease on the file
(:func:`_map_read`): taking one costs ~10 us here, at most ~2.5% of reading 4 MiB through
the map (a scan or a checksum of it takes 0.4 ms or more); shorter reads are checked only."""

if os.name == "posix":
    import fcntl

    _LEASES = hasattr(signal, "SIGURG") and all(
        hasattr(fcntl, a) for a in ("F_SETLEASE", "F_SETOWN", "F_SETSIG")
    )
else:  # (Windows: no leases; the size checks alone)
    _LEASES = False

_HELD: set[int] = set()
"""The descriptors holding a read lease now (:func:`_map_read`). A child made by
``os.fork`` closes its copies: a lease lasts while any descriptor of its open file does, and
a child that lived on would keep every writer of the file waiting."""


_HELD_LOCK = threading.Lock()
"""Held from a lease descriptor's ``open`` until it is in :data:`_HELD`, and from its removal
until its ``close``, and by ``os.fork`` (its before hook): a fork never lands between the
two. Why (helper attacks77): a child forked while another thread was taking a lease (the
descriptor open, not yet in ``_HELD``) kept it -- 191 of 300 forks beside a loop of leased
reads -- and a long-lived child (a ``multiprocessing`` fork worker) kept every writer of the
file waiting for the kernel's ``lease-break-time``."""


def _close_held_in_child() -> None:
    global _HELD_LOCK
    _HELD_LOCK = threading.Lock()  # (held by the fork's before hook, in the parent's thread)
    for fd in list(_HELD):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


def _before_fork() -> None:
    _HELD_LOCK.acquire()


def _after_fork_in_parent() -> None:
    _HELD_LOCK.release()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_close_held_in_child,
    )


def _read_lease(path: str, writers: list[bool] | None = None) -> int | None:
    """A descriptor of ``path`` holding a read lease (Linux ``F_SETLEASE``), or ``None``
    where none can be had: no leases on this platform or file system (NFS), the file not
    this user's (a lease needs its owner or ``CAP_LEASE``), or open for writing somewhere
    (a program that opened it for writing before the read can still cut it short).

    While the lease is held, the kernel makes another program's ``open`` for writing or
    ``truncate`` wait until it is let go (or fail at once when it opens with
    ``O_NONBLOCK``, as coreutils' ``truncate`` does: "Resource temporarily unavailable");
    the lease is let go by closing the descriptor. No signal reaches this process: the
    kernel signals a lease's owner when it is broken, so the owner is cleared right after
    the lease is taken, and the signal is set to ``SIGURG`` first (ignored unless a program
    handles it) for the microseconds between the two. ``writers``: set to ``[True]`` when
    the lease was refused because the file is open for writing somewhere."""
    try:
        # (O_NONBLOCK: another program's write lease on the file -- a Samba server's oplock
        # -- made this open wait the kernel's lease-break-time, 45 s, holding the lock that
        # forks and every other leased read wait for; now EWOULDBLOCK, no lease, the check
        # alone. Helper attacks77)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, fcntl.F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        fcntl.fcntl(fd, fcntl.F_SETOWN, 0)
    except OSError as exc:
        os.close(fd)
        if writers is not None and exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            writers[:] = [True]
        return None
    return fd


def _map_short(mm: mmap.mmap, need: int | None = None) -> bool:
    """Whether the file behind map ``mm`` is now shorter than byte ``need`` (default: the
    map's length), by one ``fstat`` of the map's own descriptor (``mmap.size``); a map
    whose size cannot be read counts as short. Reading past a file's end through a map is
    SIGBUS, so every mapped read checks this first (:func:`_map_read`,
    :meth:`.snapshot._Snap.check_mapped`, the graph view's ``_graph_changed``)."""
    try:
        return mm.size() < (len(mm) if need is None else need)
    except (OSError, ValueError):
        return True


def _cut_short(path: str) -> IndexCorruptError:
    """The error for a mapped file now shorter than its map (see :func:`_map_read`)."""
    return IndexCorruptError(
        f"{path}: cut short by another program while the index is open (its files are only "
        "ever appended to); the index is damaged: restore it from a copy, or rebuild it"
    )


@contextlib.contextmanager
def _map_read(
    path: str,
    mm: mmap.mmap | None,
    need: int,
    nbytes: int,
    cut: Callable[[str], IndexCorruptError] = _cut_short,
    written: Callable[[str], IndexCorruptError] | None = None,
) -> Iterator[None]:
    """Guard a read of ``nbytes`` through map ``mm`` of file ``path`` that reaches byte
    ``need``: an :class:`IndexCorruptError` when the file is now shorter than ``need``
    (read past the end of a file, a map raises SIGBUS, which kills the process), and for a
    read of ``_LEASE_BYTES`` or more, a read lease held for the read's length
    (:func:`_read_lease`), so that the file cannot be cut short *during* it.

    Why (helper leftovers65a): a size check before a read leaves the read itself open to a
    cut made meanwhile (a long exact scan, a checksum pass of a large file: 3 of 3 runs of
    a 30 MB scan loop with ``truncate -s 0`` died of SIGBUS). No Python code can catch a
    SIGBUS (the fault is in C: a handler returns into the same load), so the only ways out
    are not to read through the map (a private copy of every vector per process) or to keep
    the file from being cut while it is read -- the lease. Where no lease can be had the
    check alone remains (the window is the read's length). ``cut``: the error for a file
    found short (a graph query's tells the store to drop the graph, not to fail).
    ``written``: the error for a file no lease can be had on because another program has
    it open for writing (``None``: read it with the check alone): a program that opened it
    to cut it is then between its ``open`` and its ``ftruncate``, and a check passed now
    is no bound on the read (leftovers71a: a search's SIGBUS in 1 of 4 runs)."""
    fd = None
    if mm is not None and nbytes >= _LEASE_BYTES and _LEASES:
        writers: list[bool] = []
        with _HELD_LOCK:  # (no fork between the open and _HELD: a child would keep the lease)
            fd = _read_lease(path) if written is None else _read_lease(path, writers)
            if fd is not None:
                _HELD.add(fd)
        if writers and written is not None:
            raise written(path)
    try:
        # (checked after the lease: a cut made before it is seen here)
        if mm is not None and _map_short(mm, need):
            raise cut(path)
        yield
    finally:
        if fd is not None:
            with _HELD_LOCK:  # (nor between the two here)
                _HELD.discard(fd)
                os.close(fd)  # (lets the lease go: a waiting truncate goes on)


def _release_pages(arr: npt.NDArray[Any], start: int, end: int) -> None:
    """Unmap the pages of bytes ``[start, end)`` of a memory-mapped file from this process
    (they stay in the page cache, and fault back in when read): node texts and URIs are read
    a few rows at a time, so verifying them must not leave the whole blob resident. The
    vectors stay mapped: every exact search reads them all."""
    mm = _map_of(arr)
    if mm is None or not hasattr(mmap, "MADV_DONTNEED"):
        return
    lo = start - start % mmap.PAGESIZE
    hi = min(end - end % mmap.PAGESIZE, len(mm))
    if hi > lo:
        with contextlib.suppress(OSError, ValueError):
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _decoded_slices(blob: bytes, at: int, starts: list[int], ends: list[int]) -> list[str]:
    """The strings at byte offsets ``starts[i] - at`` to ``ends[i] - at`` of ``blob``: one
    decode of the whole blob and string slices when it is ASCII (one character per byte: byte
    offsets are string offsets), else a decode per slice."""
    if blob.isascii():
        text = blob.decode()
        return [text[a - at : e - at] for a, e in zip(starts, ends, strict=True)]
    return [blob[a - at : e - at].decode() for a, e in zip(starts, ends, strict=True)]


def _saved_upto(row: IntArray, count: int) -> int:
    """The first row not covered by the first ``count`` labels."""
    if count == 0:
        return 0
    covered = row[:count]
    live = covered[covered >= 0]
    return int(live.max()) + 1 if live.size else 0


def _drop_tail(f: Path, size: int) -> None:
    """Make data file ``f`` its first ``size`` bytes (its committed ones) by writing them to
    a new file renamed over it, never by cutting ``f`` itself.

    Why (helper leftovers69b): the bytes past a file's committed size are an interrupted
    save's (mapped by no one) or, after a rollback to an older generation (the newest
    manifest lost or damaged), the lost generation's, which another client that opened it
    before still maps. Truncating the file under that map killed the other process with
    SIGBUS at its next read of those rows (its graph worker's, unchecked:
    ``tests/test_leftovers69b_store.py``). A rename leaves the old file to whoever maps it.
    The copy is of the committed bytes, once, only when such a tail exists (after a crash
    or a rollback); a failure leaves ``f`` as it was."""
    tmp = f.with_name(f".tmp-{f.name}")
    try:
        with open(f, "rb") as src, open(tmp, "wb") as dst:
            left = size
            while left > 0:
                got = _copy_range(src.fileno(), dst.fileno(), left)
                if got <= 0:
                    raise IndexCorruptError(f"{f}: shorter than committed")
                left -= got
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, f)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(f.parent)


_COPY_RANGE_REFUSALS = frozenset(
    {errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM, errno.EAGAIN}
)
"""The errors of ``copy_file_range`` that mean "not here", not "this copy failed":
:func:`_copy_range` reads and writes the step instead."""


def _copy_range(src: int, dst: int, count: int) -> int:
    """Up to ``count`` bytes from ``src``'s position to ``dst``'s (in the kernel where it
    can: ``copy_file_range``, which shares the blocks on a file system that can); 0 only at
    the end of ``src``.

    A ``copy_file_range`` that copies nothing is not taken as the end of the file: some file
    systems (FUSE ones, network and special ones on older kernels) answer 0 where others
    refuse with ``EXDEV`` / ``EOPNOTSUPP``, and a save's copy (:func:`_drop_tail`) then
    failed as "shorter than committed" (helper attacks82's open item; leftovers71a). The
    step is read and written instead, which tells a real end (``read`` answers 0 too).

    ``EPERM`` and ``EAGAIN`` fall back too (helper attacks84): a container whose seccomp
    profile predates the call refuses it with ``EPERM`` (Rust's ``fs::copy`` falls back on
    it for that reason), and some ZFS versions answer ``EAGAIN``; a save failed with a
    ``PermissionError`` where a plain copy works. Where the target really cannot be
    written (an immutable file), the plain ``write`` says so."""
    step = min(count, 1 << 30)
    if hasattr(os, "copy_file_range"):
        try:
            got = os.copy_file_range(src, dst, step)
            if got:
                return got
        except OSError as exc:
            if exc.errno not in _COPY_RANGE_REFUSALS:
                raise
    block = memoryview(os.read(src, min(step, 1 << 24)))
    got = len(block)
    while block:
        block = block[os.write(dst, block) :]
    return got


def _write_arrays(f: Path, arrays: Mapping[str, npt.NDArray[Any]]) -> dict[str, Any]:
    """One file of raw arrays (each 8-byte aligned); returns its layout and checksum."""
    tmp = f.with_name(f".tmp-{f.name}")
    layout: dict[str, list[int]] = {}
    offset = 0
    with open(tmp, "wb") as fh:
        for name, arr in arrays.items():
            b = np.ascontiguousarray(arr, dtype=_INDEX_ARRAYS[name]).tobytes()
            layout[name] = [offset, len(b) // np.dtype(_INDEX_ARRAYS[name]).itemsize]
            fh.write(b)
            offset += len(b)
            pad = (-offset) % 8
            fh.write(b"\0" * pad)
            offset += pad
        fh.flush()
        os.fsync(fh.fileno())
    value = _ck.file_digest(tmp, 0, offset)
    os.replace(tmp, f)
    return {"size": offset, **_ck.tagged(value), "arrays": layout}


def _read_arrays(
    f: Path,
    meta: Mapping[str, Any],
    verify: bool,
    marks: dict[str, FileMark] | None = None,
    keep_mapped: Sequence[str] = (),
) -> dict[str, npt.NDArray[Any]]:
    size = int(meta["size"])
    try:
        st = os.stat(f)
    except OSError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_size != size:
        raise IndexCorruptError(f"{f}: missing or of the wrong size")
    if marks is not None:
        marks[f.name] = _mark(st)
    if verify and not _ck.whole_file_ok(f, size, meta):
        raise IndexCorruptError(f"{f}: checksum mismatch")
    raw = np.fromfile(f, dtype=np.uint8) if size else np.zeros(0, np.uint8)
    out = {}
    for name, dt in _INDEX_ARRAYS.items():
        if name in _OPTIONAL_ARRAYS and name not in meta["arrays"]:
            out[name] = np.zeros(0, dt)
            continue
        off, count = meta["arrays"][name]
        nbytes = int(count) * np.dtype(dt).itemsize
        if off < 0 or off + nbytes > size:
            raise IndexCorruptError(f"{f}: array {name} out of bounds")
        out[name] = raw[off : off + nbytes].view(dt)
    return out


def _check_structure(
    path: Path,
    n: int,
    live: int,
    cols: Mapping[str, npt.NDArray[Any]],
    maps: Mapping[str, npt.NDArray[Any]],
    idx: Mapping[str, npt.NDArray[Any]],
) -> None:
    """Cheap consistency checks of a generation's arrays, so that a damaged or mismatched file
    is a typed error now rather than an ``IndexError`` or a wrong node later."""
    why = _lookup_problem(n, live, cols, idx) or _link_problem(n, cols, maps, idx)
    if why:
        raise IndexCorruptError(f"the index at {path} is inconsistent: {why}")


def _lookup_problem(
    n: int, live: int, cols: Mapping[str, npt.NDArray[Any]], idx: Mapping[str, npt.NDArray[Any]]
) -> str | None:
    """What is wrong with the live mask and the sorted lookups (``None``: nothing)."""
    alive = idx["alive"]
    if alive.shape[0] != n or int(alive.sum()) != live:
        return "live row count"
    for name in ("by_hash", "by_uri", "by_parent"):
        a = idx[name]
        if a.shape[0] != live or (a.size and (a.min() < 0 or a.max() >= n)):
            return f"{name} rows"
        if a.size and not alive[a].all():
            return f"{name} points at dead rows"
    uh = cols["uri_hash"][idx["by_hash"]]
    if uh.size and not (uh[1:] >= uh[:-1]).all():
        return "by_hash is not sorted"
    return None


def _link_problem(
    n: int,
    cols: Mapping[str, npt.NDArray[Any]],
    maps: Mapping[str, npt.NDArray[Any]],
    idx: Mapping[str, npt.NDArray[Any]],
) -> str | None:
    """What is wrong with the blob offsets and the row links (``None``: nothing)."""
    for name, blob in (("uri_end", "uris"), ("node_end", "nodes")):
        ends = cols[name]
        if n and ((np.diff(ends) < 0).any() or ends[0] < 0 or ends[-1] != maps[blob].shape[0]):
            return f"{name} offsets"
    pr = idx["parent_row"]
    if pr.shape[0] != n or (pr.size and (pr.min() < -1 or pr.max() >= n)):
        return "parent rows"
    tr = idx["tag_row"]
    if tr.shape[0] != idx["tag_hash"].shape[0] or (tr.size and (tr.min() < 0 or tr.max() >= n)):
        return "tag rows"
    ar = idx["ann_row"]
    if ar.size and (ar.min() < -1 or ar.max() >= n):
        return "HNSW label rows"
    ao = idx["ann_orphan"]
    if ao.size and (ao.min() < 0 or ao.max() >= ar.size):
        return "HNSW orphan labels"
    aw = idx["ann_owner"]  # (empty: no aliases, see AnnIndex.owner)
    if aw.size and (aw.size != ar.size or aw.min() < 0 or bool((aw > np.arange(aw.size)).any())):
        return "HNSW label owners"
    return None


def _sum_blocks(f: Path, size: int, block: int | None = None) -> list[list[Any]]:
    """Extents of at most ``block`` bytes covering ``f[:size]``, each with its checksum."""
    step = block or _BLOCK
    return [
        _ck.extent(a, min(a + step, size), _ck.file_digest(f, a, min(a + step, size)))
        for a in range(0, size, step)
    ]


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
