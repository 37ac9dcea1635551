"""The default store: in-process numpy, columnar, persisted to a directory (format 3).

**In memory** every node is one *row*; rows are immutable once written. A replaced node gets a
new row and its old row is marked dead; a deleted node's row is marked dead; compaction (at a
save, once dead rows outnumber live ones) rewrites the live rows and reclaims the rest. Because
rows never change, readers need no lock: every read takes the current :class:`_Snap` (one
attribute read) and works on it, while the single writer builds the next snapshot and publishes
it. Columns are numpy arrays: vectors, URI/parent hashes, chunk index, leaf flag, level and
context type, and byte offsets into two blobs that hold each row's URI and its node as JSON.
:class:`~treehop.models.Node` objects are parsed only for the rows a call returns (a bounded
cache keeps the hot ones). The lookup structures are sorted arrays (rows by URI hash, by URI,
by parent hash; tag-label hash -> rows; each row's parent row), merged incrementally on writes.

**On disk** (``<path>/``)::

    CURRENT                  "MANIFEST-000012 <crc32 of that file>"
    MANIFEST-000012.json     format version, row counts, file sizes + checksums, meta
    data-000003/*.bin        append-only columns of epoch 3 (vectors, hashes, offsets, blobs)
    index-000012.bin         the lookup arrays of generation 12 (one file, checksummed)
    lexical-000011/          the BM25 index, rewritten only when it changed
    ann-000010.bin           the usearch HNSW graph, rewritten only when it grew enough
    state/                   opaque blobs (sessions, settings), each replaced atomically
    LOCK                     the writer lock (see :mod:`._filelock`)

A save appends the rows written since the previous save to the epoch's column files (truncating
whatever an interrupted save left beyond the committed sizes first), writes the small lookup
file, then a manifest, then swaps ``CURRENT`` (write, fsync, rename). Each append is recorded in
the manifest as extents of at most 32 MiB with their checksums, so every byte is checksummed
(XXH3-64; extents written by format 2 keep their CRC-32, see :mod:`._checksum`). The
BM25 file is rewritten only after a compaction or once the rows changed since it was written
pass ``_LEX_REPLAY``; until then those rows are replayed from the node texts when it loads.

**Verification** (``verify=True``, the default): nothing unverified is ever served. Before
``open`` returns, every extent of every file but the node texts is checksummed and every vector
checked finite. The checksums run on the memory maps the searches use (no copy into buffers,
whose fresh pages cost a fault each, more than the checksum itself), the extents are independent
jobs on all cores (the checksums and numpy release the GIL), and the finiteness check reads each
vector block right after its checksum, while it is in cache. The node texts (a quarter of the
bytes) are checked lazily, before first use: a reader verifies the 1 MiB extents holding the
rows it reads, a background pass the rest, a save all of them (it may rewrite checksums), and a
damaged extent raises :class:`~treehop.errors.IndexCorruptError` to whoever reads it; the URI
and node pages are unmapped after their check, so they need not stay resident. Vectors are not
deferred: the first exact search reads every one, so that would only move the cost into the
first query. A generation recovered without ``CURRENT`` is verified whole at open.
``verify="background"`` checks vectors and texts in a thread instead (calls made before it ends
are unprotected); ``False`` trusts the files.

**Writers**: one per index across processes (a file lock taken at the first write and released
by the save that commits it; a waiting writer gives up after ``lock_timeout`` seconds with
:class:`~treehop.errors.IndexLockedError`). A writer that takes the lock after another process
committed reloads first, so no committed update is lost. Inside one process, clients share one
store per path through :meth:`EmbeddedStore.shared`.

**Search** is exact (numpy ``einsum`` matvec) except the global step of a large index, which
asks a persisted HNSW graph (usearch, 8-bit vectors, see :mod:`._ann`) for candidates and
rescores them exactly; rows written after the graph was last extended are searched exactly
beside it. The graph is kept out of the write path: writes publish rows and return, a
background worker extends the graph afterwards, and a save persists it as far as it got.
:meth:`EmbeddedStore.close` and an interpreter-exit hook stop and join the worker (and every
other background thread: a daemon thread left inside usearch's C++ at exit aborts the
process) and save the graph so far; the next open resumes the build from there.
A saved graph opens memory-mapped (O(1)). The query over-fetches by the share of the index
the scope admits, and its answer is kept briefly so that the descent's deeper global step
(same query, larger limit) slices it instead of searching again. Reads take no lock (usearch
releases the GIL, so searches from several threads run in parallel); ``search_batch``
answers many queries with one graph call or one matrix product.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import contextvars
import itertools
import json
import mmap
import os
import re
import shutil
import threading
import time
import warnings
import weakref
import zlib
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

import numpy as np
import numpy.typing as npt
import pydantic_core
from pydantic import TypeAdapter, ValidationError

from .. import tags as tagmod
from ..errors import (
    IndexCorruptError,
    IndexRecoveryError,
    InvalidQueryError,
    NotFoundError,
    RecoveryWarning,
    StoreError,
    TreehopError,
)
from ..filters import MetadataFilter, TagFilter
from ..lexical import LexicalIndex, hybrid_scores
from ..models import ContextType, Node
from . import _ann
from . import _checksum as _ck
from ._ann import AnnIndex, WarmOrphans
from ._filelock import WriterLock
from ._state_blobs import check_state_key
from .base import (
    HitArrays,
    HitColumns,
    RecoveryRecord,
    Scope,
    ScoredNode,
    StoreCapabilities,
    Vector,
    build_frozen,
    check_search_args,
    unique_inverse,
)

FORMAT_VERSION = 3
READABLE_FORMATS = (2, 3)
"""Format 3 is format 2 with checksums that name their algorithm (XXH3-64 for new writes, see
:mod:`._checksum`); a format-2 index opens as it is, and its first save writes format 3."""
LEGACY_FORMAT_VERSION = 1
_NODE = TypeAdapter(Node)
_NODES = TypeAdapter(list[Node])
_NODE_SERIALIZER = Node.__pydantic_serializer__


def _node_json(node: Node) -> bytes:
    """A node's stored JSON: the same bytes as ``TypeAdapter(Node).dump_json`` (which wraps
    this serializer), ~20% cheaper per node, which counts when a re-add compares 100k nodes."""
    out: bytes = _NODE_SERIALIZER.to_json(node)
    return out


_CTYPES = list(ContextType)
_CTYPE_CODE = {c: i for i, c in enumerate(_CTYPES)}
_MANIFEST = re.compile(r"^MANIFEST-(\d{6})\.json$")
_LEGACY_GEN = re.compile(r"^gen-\d{6}$")
IntArray = npt.NDArray[np.int64]
U64Array = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]
F32 = npt.NDArray[np.float32]
U8Array = npt.NDArray[np.uint8]

# The fixed-width columns: name -> dtype. Vectors and the two blobs are kept apart because they
# stay memory-mapped (the columns are small and copied into memory on open).
_COLUMNS: dict[str, type[np.generic]] = {
    "uri_hash": np.uint64,
    "parent_hash": np.uint64,
    "uri_end": np.int64,
    "node_end": np.int64,
    "chunk": np.int32,
    "leaf": np.bool_,
    "level": np.int8,
    "ctype": np.int8,
}
_APPEND_FILES = ("vectors", *_COLUMNS, "uris", "nodes")
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
}
_OPTIONAL_ARRAYS = frozenset({"ann_orphan"})
"""Arrays an index file saved by an older version may lack (read as empty)."""
_MAX_EXTENTS = 256
_LARGE_FILES = ("vectors", "nodes")
"""Checked in a background thread with ``verify="background"`` (the rest is always checked)."""
_SMALL_FILES = tuple(f for f in _APPEND_FILES if f not in _LARGE_FILES)
_BLOCK = 1 << 25
"""Appends are checksummed in extents of at most 32 MiB, so that verifying a large file at
open is many independent jobs (run on all cores) rather than one sequential pass."""
_VERIFY_THREADS = max(1, min(8, os.cpu_count() or 1))
_EAGER_FILES = tuple(f for f in _APPEND_FILES if f != "nodes")
"""Verified before ``open`` returns; the node texts are verified lazily (see _BlobGuard)."""
_NODE_BLOCK = 1 << 20
"""Node texts are checksummed in 1 MiB extents: a search that reads a few rows first verifies
only the extents holding them (~0.5 ms each here)."""
_NODE_CACHE = 16_384
_FEW_ROWS = 64
"""Up to this many rows :meth:`_Snap.uris_of` reads their offsets as Python lists."""
_SPAN_BYTES = 4096
"""URIs of rows whose bytes lie within twice their own length plus this span are read as
one slice (:meth:`_Snap._few_uris`), not gathered."""
_KEPT_ROWS = 4096
"""At most this many URIs' rows are kept per snapshot (:meth:`_Snap.lookup`)."""
_DIR_URIS = 65_536
"""At most this many directory URIs are kept per snapshot (:meth:`_Snap.dir_uris`)."""
_HEADING_LOCK = threading.Lock()
"""Serialises the (rare) fills of the derived heading-path column (:meth:`EmbeddedStore.
_heading_codes`), so that a path gets one code; reads of filled rows take no lock."""
HEADING_PATH = "heading_path"
"""The chunk metadata key that holds a chunk's heading path (written at ingest; the same
key as :data:`treehop.tree_scoring.HEADING_PATH`, which the stores do not import)."""
_LEX_REPLAY = 4_096
"""A save leaves the BM25 index file as it is while the rows written or deleted since it was
written stay within this (or 1/16 of the live rows): they are replayed from the node texts
when it is loaded (~30 ms per 1,000 rows here) instead of rewriting every posting."""
DEFAULT_ANN_MIN_ROWS = 50_000
"""From this many live rows on, the global step uses the HNSW graph. Measured with
``bench/bench_store.py`` on the shared 2-core machine: an exact 384-d pass costs ~0.5 ms per
1,000 rows (~25 ms at 50k), a graph query ~1 ms; at 10k rows the exact step is already only
~0.07x of a flat BLAS search (it skips nothing but is single-threaded SIMD), so the graph
starts where the exact pass passes ~20 ms. Building it no longer costs a write anything (the
background worker of :mod:`._ann`), only background CPU."""


_UIDS = itertools.count(1)


def _h64(text: str) -> int:
    """A stable 64-bit hash (never 0, which marks "no parent"): CRC-32 and Adler-32 side by
    side, 2.5x cheaper than a cryptographic hash. It only narrows a lookup: every hit is
    confirmed against the stored string, so a collision costs time, never a wrong answer."""
    b = text.encode()
    return ((zlib.crc32(b) << 32) | zlib.adler32(b)) or 1


def _hashes(texts: Sequence[str]) -> U64Array:
    return np.fromiter((_h64(t) for t in texts), dtype=np.uint64, count=len(texts))


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

    def __del__(self) -> None:
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)


_TAIL_BLOCK = 65_536
"""Rows per block of the unsaved vectors (:class:`_Tail`): 96 MiB of 384-d float32."""


class _Tail:
    """The vectors of the rows written since the last save, in blocks of ``_TAIL_BLOCK``
    rows: every block but the last holds exactly that many rows, the last up to that many.

    Why blocks: one contiguous array grown by half when full copied every unsaved vector at
    each growth into a fresh zeroed array, 82% of a 1M-row bulk upsert's time (its pages
    faulted in twice: zeroed, then overwritten). Here a full block is never copied: the
    last block grows by copying only while it is smaller than a block (at most a block's
    rows), after that a new block starts, allocated with ``np.empty`` (its pages are only
    touched when rows are written). Readers see the few blocks as one: a gather splits its
    rows by block, a product runs per block.

    Blocks are shared by the snapshots that follow each other (rows are immutable once
    published; a write only fills rows past every published snapshot's ``n``)."""

    __slots__ = ("blocks", "dim")

    def __init__(self, dim: int, blocks: Sequence[F32] = ()) -> None:
        self.dim = dim
        self.blocks: tuple[F32, ...] = tuple(blocks)

    @classmethod
    def of(cls, vecs: F32) -> _Tail:
        """A tail holding ``vecs`` (views of it, one per block: nothing is copied)."""
        dim = int(vecs.shape[1])
        return cls(dim, [vecs[i : i + _TAIL_BLOCK] for i in range(0, vecs.shape[0], _TAIL_BLOCK)])

    @property
    def capacity(self) -> int:
        if not self.blocks:
            return 0
        return (len(self.blocks) - 1) * _TAIL_BLOCK + int(self.blocks[-1].shape[0])

    def with_rows(self, t0: int, vecs: F32) -> _Tail:
        """This tail with ``vecs`` written at rows ``t0 ..`` (grown as needed): the same
        block arrays where they had room, so the rows before ``t0`` are kept as they are."""
        t1 = t0 + int(vecs.shape[0])
        blocks = list(self.blocks)
        if t1 > self.capacity:
            last = blocks[-1] if blocks else np.zeros((0, self.dim), np.float32)
            if last.shape[0] < _TAIL_BLOCK:  # (the last block grows up to a block by copies)
                start = (len(blocks) - 1) * _TAIL_BLOCK if blocks else 0
                want = max(t1 - start, int(last.shape[0] * 1.5) + 64)
                grown = np.empty((min(_TAIL_BLOCK, want), self.dim), np.float32)
                kept = max(0, min(t0 - start, last.shape[0]))
                grown[:kept] = last[:kept]
                if blocks:
                    blocks[-1] = grown
                else:
                    blocks.append(grown)
            while t1 > (len(blocks) - 1) * _TAIL_BLOCK + int(blocks[-1].shape[0]):
                blocks.append(np.empty((_TAIL_BLOCK, self.dim), np.float32))
        out = _Tail(self.dim, blocks)
        pos = 0
        for b in range(t0 // _TAIL_BLOCK, (t1 - 1) // _TAIL_BLOCK + 1 if t1 > t0 else 0):
            lo = max(t0, b * _TAIL_BLOCK)
            hi = min(t1, (b + 1) * _TAIL_BLOCK)
            blocks[b][lo - b * _TAIL_BLOCK : hi - b * _TAIL_BLOCK] = vecs[pos : pos + hi - lo]
            pos += hi - lo
        return out

    def parts(self, count: int) -> list[F32]:
        """The first ``count`` rows, one view per block."""
        out = []
        for b, block in enumerate(self.blocks):
            lo = b * _TAIL_BLOCK
            if lo >= count:
                break
            out.append(block[: count - lo])
        return out

    def take(self, t: IntArray) -> F32:
        """The vectors of tail rows ``t``."""
        if len(self.blocks) == 1:
            return np.asarray(self.blocks[0][t], dtype=np.float32)
        out = np.empty((t.size, self.dim), np.float32)
        which = t // _TAIL_BLOCK
        for b in np.unique(which).tolist() if t.size else []:
            sel = which == b
            out[sel] = self.blocks[b][t[sel] - b * _TAIL_BLOCK]
        return out

    def tobytes(self, lo: int, hi: int) -> memoryview:
        """The raw bytes of tail rows ``lo .. hi``: a view of the block when they lie in
        one, else one copy (a save's append; at 1M rows a copy per block plus their join
        held three copies of 1.5 GB at once)."""
        views = []
        for b in range(lo // _TAIL_BLOCK, (hi - 1) // _TAIL_BLOCK + 1 if hi > lo else 0):
            a, e = max(lo, b * _TAIL_BLOCK), min(hi, (b + 1) * _TAIL_BLOCK)
            block = np.ascontiguousarray(self.blocks[b][a - b * _TAIL_BLOCK : e - b * _TAIL_BLOCK])
            views.append(memoryview(block.data).cast("B"))
        if len(views) == 1:
            return views[0]
        out = bytearray(sum(len(v) for v in views))
        at = 0
        for v in views:
            out[at : at + len(v)] = v
            at += len(v)
        return memoryview(out)


@dataclass(eq=False)
class _Snap:
    """One immutable view of the index. Arrays may have spare capacity past ``n``; only the
    writer appends there, and only before publishing a snapshot that covers the new rows."""

    gen: int
    n: int
    n_base: int
    live: int
    dim: int
    cols: dict[str, npt.NDArray[Any]]
    base_vecs: F32
    tail_vecs: _Tail
    base_uris: U8Array
    base_nodes: U8Array
    tail_uris: list[bytes]
    tail_nodes: list[bytes]
    alive: BoolArray
    by_hash: IntArray
    by_uri: IntArray
    by_parent: IntArray
    parent_row: IntArray
    tag_hash: U64Array
    tag_row: IntArray
    uid: int = field(default_factory=lambda: next(_UIDS))
    """Rows are immutable within one ``uid``; a reload or compaction renumbers and gets a new
    one, so per-row caches key on (uid, row)."""
    cache: dict[Any, Any] = field(default_factory=dict)
    nodes_guard: _BlobGuard | None = None
    """Checks the node texts' extents before their bytes are first returned (``None``: the
    base blob was verified at open, or is trusted)."""
    nodes_file: _PFile | None = None
    """``nodes.bin`` open for ``pread``: node texts are read through it, not through the map,
    so the pages a search reads stay in the page cache instead of this process's memory (a
    few rows per search fault in whole pages plus the kernel's read-ahead: after 200 finds at
    100k rows nearly all 46 MB of texts were resident, 0.28x the vectors). The map remains
    for the checksums, whose pages are released after each extent."""

    def _read_nodes(self, start: int, end: int) -> bytes:
        if self.nodes_file is None:
            return bytes(self.base_nodes[start:end])
        return self.nodes_file.read(start, end)

    # ---------------------------------------------------------------- row access
    def uri(self, r: int) -> str:
        if r >= self.n_base:
            return self.tail_uris[r - self.n_base].decode()
        end = int(self.cols["uri_end"][r])
        start = int(self.cols["uri_end"][r - 1]) if r else 0
        return bytes(self.base_uris[start:end]).decode()

    def node_json(self, r: int) -> bytes:
        if r >= self.n_base:
            return self.tail_nodes[r - self.n_base]
        end = int(self.cols["node_end"][r])
        start = int(self.cols["node_end"][r - 1]) if r else 0
        if self.nodes_guard is not None:
            self.nodes_guard.ensure(start, end)
        return self._read_nodes(start, end)

    def _blob_slices(
        self, rows: IntArray, ends_name: str, blob: U8Array, tail: list[bytes]
    ) -> list[bytes]:
        rows = np.asarray(rows, dtype=np.int64)
        out: list[bytes] = [b""] * rows.size
        base = np.flatnonzero(rows < self.n_base)
        if base.size:
            ends_col = self.cols[ends_name]
            br = rows[base]
            ends = ends_col[br].tolist()
            starts = np.where(br > 0, ends_col[np.maximum(br - 1, 0)], 0).tolist()
            if blob is self.base_nodes and self.nodes_guard is not None:
                self.nodes_guard.ensure_rows(starts, ends)
            lo, hi = min(starts), max(ends)
            nodes = blob is self.base_nodes
            if hi - lo <= 2 * (sum(ends) - sum(starts)) + 65_536:
                # mostly adjacent rows (a subtree): one copy, then plain bytes slices, about
                # twice as fast as a memoryview slice per row
                whole = self._read_nodes(lo, hi) if nodes else blob[lo:hi].tobytes()
                for i, a, e in zip(base.tolist(), starts, ends, strict=True):
                    out[i] = whole[a - lo : e - lo]
            elif nodes:
                for i, a, e in zip(base.tolist(), starts, ends, strict=True):
                    out[i] = self._read_nodes(a, e)
            else:
                mv = memoryview(blob.data)
                for i, a, e in zip(base.tolist(), starts, ends, strict=True):
                    out[i] = bytes(mv[a:e])
        late = np.flatnonzero(rows >= self.n_base)
        # (plain ints: a numpy scalar index per row cost more than the copy)
        for i, r in zip(late.tolist(), (rows[late] - self.n_base).tolist(), strict=True):
            out[i] = tail[r]
        return out

    def node_jsons(self, rows: IntArray) -> list[bytes]:
        """The stored JSON of many rows (one gather of offsets instead of one per row)."""
        return self._blob_slices(rows, "node_end", self.base_nodes, self.tail_nodes)

    def uris_of(self, rows: IntArray) -> list[str]:
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size <= _FEW_ROWS:
            # (a search's hits, their parents: Python's max of a few ints beats numpy's call)
            row_l: list[int] = rows.tolist()
            if row_l and max(row_l) < self.n_base:
                return self._few_uris(rows, row_l)
        elif rows.size <= 4096 and int(rows.max()) < self.n_base:
            return self._few_uris(rows, None)
        if rows.size and int(rows.min()) >= self.n_base:  # all written since the last save
            tail = self.tail_uris
            return [tail[r].decode() for r in (rows - self.n_base).tolist()]
        return [
            b.decode() for b in self._blob_slices(rows, "uri_end", self.base_uris, self.tail_uris)
        ]

    def _few_uris(self, rows: IntArray, row_l: list[int] | None) -> list[str]:
        """The URIs of a few memory-mapped rows (a search's hits, their parents; ``row_l``:
        ``rows`` as a list, given for a few of them): rows whose bytes lie close together
        (a folder's files, a file's chunks: written together) are one slice of the blob;
        others one gather of all their bytes. One decode either way, then string slices: a
        copy and a decode per row cost several times more."""
        if row_l is not None and len(row_l) == 1:
            return [self.uri(row_l[0])]
        ends_col = self.cols["uri_end"]
        ends = ends_col[rows]
        starts = ends_col[rows - 1]  # (row 0 reads the last entry: it starts at 0)
        s_l: list[int] | None = None
        if row_l is not None:  # (a few rows: Python's sums and bounds beat numpy's calls)
            if 0 in row_l:
                starts[rows == 0] = 0
            s_l, e_l = starts.tolist(), ends.tolist()
            lo, hi, size = min(s_l), max(e_l), sum(e_l) - sum(s_l)
        else:
            starts[rows == 0] = 0
            lo, hi, size = int(starts.min()), int(ends.max()), int(ends.sum() - starts.sum())
        if hi - lo <= 2 * size + _SPAN_BYTES:
            if s_l is None:
                s_l, e_l = starts.tolist(), ends.tolist()
            return _decoded_slices(self.base_uris[lo:hi].tobytes(), lo, s_l, e_l)
        lens = ends - starts
        cuts = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lens, out=cuts[1:])
        idx = np.repeat(starts - cuts[:-1], lens) + np.arange(int(cuts[-1]), dtype=np.int64)
        c = cuts.tolist()
        return _decoded_slices(self.base_uris[idx].tobytes(), 0, c[:-1], c[1:])

    def dir_uris(self, rows: IntArray) -> list[str]:
        """:meth:`uris_of` of directory rows (the parents of a search's hits), kept per
        snapshot (:meth:`uris_with_dirs`)."""
        return self.uris_with_dirs(np.zeros(0, np.int64), rows)[1]

    def uris_with_dirs(self, rows: IntArray, dirs: IntArray) -> tuple[list[str], list[str]]:
        """:meth:`uris_of` of ``rows`` and of directory rows ``dirs`` (the distinct parents
        of a search's hits), the directories' kept per snapshot (rows are immutable within
        one): a find asks the same few parents in each of its searches, and decoding them
        with the hits (rows far apart) made each decode a scattered gather, where the hits
        of one folder alone are one slice. Directories not kept yet are decoded with the
        hits, in one gather."""
        kept: dict[int, str] | None = self.cache.get(("dir_uris",))
        if kept is None:
            kept = self.cache.setdefault(("dir_uris",), {})
        dir_l: list[int] = dirs.tolist()
        get = kept.get
        known = [get(r) for r in dir_l]
        if None not in known:
            return (self.uris_of(rows) if rows.size else []), cast("list[str]", known)
        missing = [r for r, u in zip(dir_l, known, strict=True) if u is None]
        decoded = self.uris_of(np.concatenate([rows, np.array(missing, np.int64)]))
        n = int(rows.size)
        found = dict(zip(missing, decoded[n:], strict=True))
        # (bounded; another reader may clear it meanwhile: this call answers from ``found``)
        if len(kept) + len(found) > _DIR_URIS:
            kept.clear()
        kept.update(found)
        names = [found[r] if u is None else u for r, u in zip(dir_l, known, strict=True)]
        return decoded[:n], names

    def vectors_of(self, rows: IntArray) -> F32:
        if rows.size and int(rows.max()) < self.n_base:
            return np.asarray(self.base_vecs[rows], dtype=np.float32)
        out = np.empty((rows.size, self.dim), np.float32)
        base = rows < self.n_base
        out[base] = self.base_vecs[rows[base]]
        out[~base] = self.tail_vecs.take(rows[~base] - self.n_base)
        return out

    def scores_all(self, q: F32) -> F32:
        """Cosine of every row (dead ones included) against ``q``."""
        parts = []
        if self.n_base:
            parts.append(_matvec(self.base_vecs, q))
        if self.n > self.n_base:
            parts.extend(_matvec(p, q) for p in self.tail_vecs.parts(self.n - self.n_base))
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def scores_matrix_t(self, qs: F32) -> F32:
        """Cosines of each query against every row: one matrix product, shape (len(qs), n)."""
        parts = []
        if self.n_base:
            parts.append(qs @ np.asarray(self.base_vecs).T)
        if self.n > self.n_base:
            parts.extend(qs @ p.T for p in self.tail_vecs.parts(self.n - self.n_base))
        return np.concatenate(parts, axis=1) if len(parts) > 1 else parts[0]

    def sorted_keys(self, column: str, rows: IntArray) -> npt.NDArray[Any]:
        """``cols[column][rows]`` for a sorted lookup array, gathered once per snapshot."""
        key = ("keys", column)
        hit: npt.NDArray[Any] | None = self.cache.get(key)
        if hit is None:
            hit = self.cols[column][rows]
            self.cache[key] = hit
        return hit

    def lookup(self, uris: Sequence[str]) -> IntArray:
        """Live rows of ``uris`` (-1 where absent): binary search on the sorted hashes, each hit
        confirmed by its stored URI bytes (vectorised) so that a hash collision cannot return
        a wrong node."""
        if len(uris) <= 4:
            # a few URIs (a find's roots, a parent): scalar binary searches and one decoded
            # URI each cost far less than the vectorised path's fixed overhead; their rows
            # are kept for this snapshot (a find looks its targets up with every query)
            kept: dict[str, int] | None = self.cache.get(("rows",))
            if kept is None:
                kept = self.cache.setdefault(("rows",), {})
            rows = [kept.get(uri) for uri in uris]
            if None in rows:
                keys = self.sorted_keys("uri_hash", self.by_hash)
                for pos, uri in enumerate(uris):
                    if rows[pos] is None:
                        rows[pos] = got = self._row_of(uri, keys)
                        if len(kept) >= _KEPT_ROWS:
                            kept.clear()
                        kept[uri] = got
            return np.array(rows, dtype=np.int64)
        out = np.full(len(uris), -1, dtype=np.int64)
        if not self.by_hash.size:
            return out
        h = _hashes(uris)
        keys = self.sorted_keys("uri_hash", self.by_hash)
        lo = np.searchsorted(keys, h, side="left")
        hi = np.searchsorted(keys, h, side="right")
        hit = np.flatnonzero(hi > lo)
        if not hit.size:
            return out
        cand = self.by_hash[lo[hit]]
        enc = [uris[int(i)].encode() for i in hit]
        ok = self.uris_equal(cand, enc)
        out[hit[ok]] = cand[ok]
        # a collision: the first row with this hash was another URI; try the others
        for j in np.flatnonzero(~ok & (hi[hit] - lo[hit] > 1)):
            i = int(hit[j])
            for k in range(int(lo[i]) + 1, int(hi[i])):
                r = int(self.by_hash[k])
                if self.uri(r) == uris[i]:
                    out[i] = r
                    break
        return out

    def _row_of(self, uri: str, keys: U64Array) -> int:
        """The live row of ``uri`` (-1: none) by one binary search on the sorted hashes
        (``keys``), confirmed by the stored URI."""
        hv = np.uint64(_h64(uri))
        at = int(np.searchsorted(keys, hv))
        while at < keys.size and keys[at] == hv:
            row = int(self.by_hash[at])
            if self.uri(row) == uri:
                return row
            at += 1
        return -1

    def uris_equal(self, rows: IntArray, enc: Sequence[bytes]) -> BoolArray:
        """Whether row ``rows[i]`` stores URI bytes ``enc[i]``: one vectorised byte comparison
        for the memory-mapped rows, a bytes comparison for the rows written since."""
        ends = self.cols["uri_end"]
        starts = np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
        lens = ends[rows] - starts
        qlen = np.fromiter((len(e) for e in enc), dtype=np.int64, count=len(enc))
        ok: BoolArray = lens == qlen
        base = rows < self.n_base
        sel = np.flatnonzero(ok & base & (qlen > 0))
        if sel.size:
            q = np.frombuffer(b"".join(enc[int(i)] for i in sel), dtype=np.uint8)
            ln = qlen[sel]
            first = np.cumsum(ln) - ln
            idx = np.repeat(starts[sel] - first, ln) + np.arange(int(ln.sum()), dtype=np.int64)
            diff = (self.base_uris[idx] != q).astype(np.int64)
            ok[sel] = np.add.reduceat(diff, first) == 0
        for i in np.flatnonzero(ok & ~base):
            ok[i] = self.tail_uris[int(rows[i]) - self.n_base] == enc[int(i)]
        return ok


class _UriView(Sequence[str]):
    """The URIs of ``rows`` as a lazily decoded sequence, for :mod:`bisect`."""

    def __init__(self, snap: _Snap, rows: IntArray) -> None:
        self._s, self._rows = snap, rows

    def __len__(self) -> int:
        return int(self._rows.size)

    def __getitem__(self, i: Any) -> Any:
        return self._s.uri(int(self._rows[i]))


class EmbeddedStore:
    """A columnar numpy vector store with crash-safe, incremental, checksummed persistence.

    ``lock_timeout``: seconds a write waits for another writer of the same index before
    raising :class:`~treehop.errors.IndexLockedError` (default 10). ``verify``: check every
    file's checksums and the vectors' finiteness (``True``, the default: all but the node
    texts on open, ~0.3-0.45 s for 100k 384-d rows from a cold cache here, the node texts
    before their first use); ``"background"``: check the small files on open and the vectors
    and node texts in a thread (open ~0.13 s at 100k), after which damage makes every call
    raise (calls made before it is found are not protected); ``False``: trust the files.
    ``ann_min_rows``: live rows from which the global step uses the HNSW graph (``None``:
    never). The graph is built and extended by a background worker after writes (with
    ``ann_threads`` threads), never inside one; :meth:`wait_ann` waits for it.
    """

    _registry: ClassVar[dict[str, weakref.ReferenceType[EmbeddedStore]]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        dimension: int | None = None,
        *,
        lexical: bool = True,
        ann_min_rows: int | None = DEFAULT_ANN_MIN_ROWS,
        lock_timeout: float = 10.0,
        verify: bool | Literal["background"] = True,
        strict: bool = False,
    ):
        self.path = Path(path) if path is not None else None
        self.strict = bool(strict)
        self.recovery: RecoveryRecord | None = None
        """What the last open recovered from by opening an older generation (see
        :class:`~treehop.stores.base.RecoveryRecord`); ``None``: nothing."""
        self._current_file: str | None = None  # the path of CURRENT, for refresh()
        self._recovered_from: int | None = None
        """The unreadable generation ``CURRENT`` named when the open fell back: a refresh
        does not reopen (and warn) again while ``CURRENT`` still names it."""
        self.lock_timeout = float(lock_timeout)
        self.verify = verify
        self._corrupt: IndexCorruptError | None = None
        self._verifier: threading.Thread | None = None
        self.ann_min_rows = ann_min_rows
        self._wlock = threading.RLock()
        self._flock: WriterLock | None = None
        self._use_lexical = lexical
        self._lex: LexicalIndex | None = LexicalIndex() if lexical else None
        self._lex_dir: Path | None = None
        self._lex_dirty = False
        self._ann: AnnIndex | None = None
        self._ann_file: tuple[str, int, int] | None = None  # name, count, upto
        self._ann_pre: tuple[dict[str, Any], threading.Thread, list[Any]] | None = None
        """The saved graph's checksum, computed by a thread the open starts first (see
        :meth:`_start_ann_precheck`): the manifest entry, the thread, its answer."""
        self._ann_rows_open: tuple[str, IntArray, IntArray] | None = None
        self._warm_orphans: WarmOrphans | None = None
        """The saved graph's orphans gathered by the last open (see :class:`WarmOrphans`)."""
        """The graph's row map as the open read it (index file name, rows): the graph's
        load takes it instead of reading the index file a second time."""
        self._ann_loader: threading.Thread | None = None
        self._ann_load_lock = threading.Lock()
        self._ann_worker: threading.Thread | None = None
        self._ann_token = 0
        """Bumped whenever the graph must stop growing (a reset, a compaction): a worker
        started under an older token stops after its chunk and publishes nothing."""
        self.ann_threads = os.cpu_count() or 1
        self.ann_catch_up = _ann.CATCH_UP_ROWS
        """Rows written after the graph was last extended from which a write starts the
        worker, and the growth from which a save rewrites the graph file (see
        ``_ann.CATCH_UP_ROWS``; lowered by tests that exercise the worker on small indexes)."""
        self._halt = threading.Event()
        """Set while :meth:`close` (or the interpreter's exit) stops the background threads:
        each stops at its next chunk (the graph worker) or extent (the checksum pass)."""
        self._paused = False
        """After :meth:`close`: no graph work starts until the store is used again (a write,
        a search, :meth:`wait_ann`), so a closed store leaves no thread running."""
        self._threads: list[threading.Thread] = []
        """The checksum passes started by opens (joined by :meth:`close` and at exit)."""
        self.ann_damaged: str | None = None
        """Why the saved graph could not be used (checksum, unreadable): it is then
        rebuilt from the vectors, which are the truth, instead of failing every search."""
        self._node_cache: OrderedDict[tuple[int, int], Node] = OrderedDict()
        self._md_cache: dict[tuple[int, int], dict[str, Any]] = {}
        self._meta: dict[str, Any] = {}
        self._state: dict[str, bytes] = {}
        self._dirty = False
        self._current_seen: tuple[int, ...] | None = None
        """``CURRENT``'s (inode, mtime, size) when :meth:`refresh` last found it pointing at
        this store's generation."""
        self._epoch = 0
        self._committed: dict[str, Any] | None = None  # the manifest on disk we follow
        self._committed_snap: _Snap | None = None  # the snapshot it was opened as
        self._lex_scale_cache: OrderedDict[tuple[int, str], float] = OrderedDict()
        self._snap = _empty_snap(int(dimension or 0))
        self._dim = dimension
        if self.path is not None:
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"index path {self.path} exists and is not a directory")
            if self.path.is_dir():
                self._make_lock()
            self._open_path()
        self.capabilities = StoreCapabilities(
            hybrid=self._use_lexical, tag_filter=True, prefix_scope=True, concurrent_reads=True
        )
        with _LIVE_LOCK:
            _LIVE.add(self)

    @property
    def _snap(self) -> _Snap:
        """The current snapshot; raises once a background verification found damage."""
        if self._corrupt is not None:
            raise self._corrupt
        return self._snap_v

    @_snap.setter
    def _snap(self, value: _Snap) -> None:
        self._snap_v = value

    def wait_verified(self) -> None:
        """With ``verify="background"``: wait for the checksums of the large files and raise
        :class:`~treehop.errors.IndexCorruptError` if they do not match."""
        t = self._verifier
        if t is not None:
            t.join()
        if self._corrupt is not None:
            raise self._corrupt

    @classmethod
    def shared(cls, path: str | os.PathLike[str], **kwargs: Any) -> EmbeddedStore:
        """The one store of ``path`` in this process (opened on first use).

        Clients of several users on one index must share the writer: two store objects on one
        path would each hold their own in-memory state, and the file lock would make the second
        wait for the first to save. A store found open is first brought up to the generation
        on disk (:meth:`refresh`): a client opened after another process committed sees that
        commit, as a client in a fresh process would. ``strict=True`` raises
        :class:`~treehop.errors.IndexRecoveryError` if the store found open recovered from
        damage (see :attr:`recovery`).
        """
        key = os.path.realpath(path)
        with cls._registry_lock:
            ref = cls._registry.get(key)
            store = ref() if ref is not None else None
            if store is None:
                store = cls(path, **kwargs)
                cls._registry[key] = weakref.ref(store)
                return store
        store.refresh()
        record = store.recovery
        if kwargs.get("strict") and record is not None:
            raise IndexRecoveryError(
                f"{record.reason}; this process opened generation {record.opened} and lost "
                f"{record.lost} (strict=True)",
                record,
            )
        return store

    # ------------------------------------------------------------------ basic info
    @property
    def dimension(self) -> int | None:
        return self._dim

    @property
    def meta(self) -> dict[str, Any]:
        """Free-form index metadata persisted with the index (embedder name, ...)."""
        return self._meta

    @property
    def lexical(self) -> LexicalIndex | None:
        """The BM25 index beside the vectors (same row numbers), loaded on first use."""
        if self._lex is None and self._use_lexical:
            with self._wlock:
                if self._lex is None:
                    self._lex = self._load_lexical()
        return self._lex

    @property
    def generation(self) -> int:
        """The committed generation this store shows (0: never saved)."""
        return self._snap.gen

    @property
    def unsaved(self) -> bool:
        """Whether this store holds writes that :meth:`save` has not committed yet (another
        process opening the path would not see them)."""
        return self._dirty

    def __len__(self) -> int:
        return self._snap.live

    def __contains__(self, uri: object) -> bool:
        return isinstance(uri, str) and int(self._snap.lookup([uri])[0]) >= 0

    # ------------------------------------------------------------------ node access
    def _node(self, s: _Snap, r: int) -> Node:
        key = (s.uid, r)
        hit = self._node_cache.get(key)
        if hit is not None:
            return hit
        return self._node_from(s, r, s.node_json(r))

    def _node_from(self, s: _Snap, r: int, blob: bytes) -> Node:
        """Row ``r``'s node parsed from its stored JSON ``blob``, kept in the node cache."""
        key = (s.uid, r)
        try:
            node = _NODE.validate_json(blob)
        except ValidationError as exc:
            raise IndexCorruptError(f"row {r} of {self.path} holds an invalid node") from exc
        self._node_cache[key] = node
        if len(self._node_cache) > _NODE_CACHE:
            with contextlib.suppress(KeyError):  # a concurrent reader evicted it first
                self._node_cache.popitem(last=False)
        return node

    # ------------------------------------------------------------------ writes
    def _begin_write(self, timeout: float | None = None) -> None:
        """Take the writer lock (once per commit; waiting up to ``timeout`` seconds, by
        default ``lock_timeout``) and catch up with the disk if another writer committed
        since this store last read it."""
        if self.path is None:
            return
        if self._flock is None:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the index directory {self.path}: {exc}") from exc
            if not self.path.is_dir():
                raise StoreError(f"index path {self.path} is not a directory")
            self._make_lock()
        assert self._flock is not None
        if self._flock.held:
            return
        self._flock.acquire(self.lock_timeout if timeout is None else timeout)
        try:
            on_disk = _read_current(self.path)
            mine = self._committed["generation"] if self._committed else 0
            if on_disk is not None and on_disk[1] != mine:
                self._open_path(clean=False)
        except BaseException:
            self._flock.release()
            raise

    def _make_lock(self) -> None:
        assert self.path is not None
        self._flock = WriterLock(self.path / "LOCK")
        # a store dropped without close() must not keep the lock until the process exits
        weakref.finalize(self, self._flock.release)

    def upsert(self, nodes: Sequence[Node], vectors: Vector) -> None:
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(nodes):
            raise StoreError(f"upsert: {len(nodes)} nodes but vectors of shape {vecs.shape}")
        if not nodes:
            return
        if self._dim is not None and vecs.shape[1] != self._dim:
            raise StoreError(
                f"vector dimension {vecs.shape[1]} does not match the index ({self._dim})"
            )
        if not np.isfinite(vecs).all():
            raise StoreError("upsert: vectors contain NaN or infinite values")
        # Duplicate URIs in one call: the last one wins, as if upserted one after another.
        last = {n.uri: i for i, n in enumerate(nodes)}
        if len(last) != len(nodes):
            keep = sorted(last.values())
            nodes = [nodes[i] for i in keep]
            vecs = vecs[keep]
        blobs = [_node_json(n) for n in nodes]
        with self._wlock:
            self._begin_write()
            if self._dim is None:
                self._dim = int(vecs.shape[1])
                self._snap = _empty_snap(self._dim)
            s = self._snap
            old = s.lookup([n.uri for n in nodes])
            same = np.zeros(len(nodes), dtype=bool)
            hit = np.flatnonzero(old >= 0)
            if hit.size:
                ov = s.vectors_of(old[hit])
                eqv = (ov == vecs[hit]).all(axis=1)
                cand = hit[eqv]
                for j, stored in zip(cand.tolist(), s.node_jsons(old[cand]), strict=True):
                    same[j] = stored == blobs[j]
            if same.all():
                return
            write = np.flatnonzero(~same)
            kill = old[write]
            self._apply(
                kill[kill >= 0],
                [nodes[int(i)] for i in write],
                [blobs[int(i)] for i in write],
                vecs[write],
            )

    def delete(self, uris: Sequence[str]) -> int:
        uris = list(dict.fromkeys(uris))
        with self._wlock:
            rows = self._snap.lookup(uris)
            rows = rows[rows >= 0]
            if not rows.size:
                return 0
            self._begin_write()
            rows = self._snap.lookup(uris)  # the lock may have reloaded newer data
            rows = rows[rows >= 0]
            self._apply(rows, [], [], np.zeros((0, self._dim or 0), np.float32))
            return int(rows.size)

    def update_nodes(self, nodes: Sequence[Node]) -> int:
        """Replace stored nodes by URI keeping their stored vectors; returns how many changed.

        What a re-add does with the nodes whose text is unchanged (their tags or metadata may
        have moved): with ``get_vectors`` + ``upsert`` every vector would be copied out and
        compared back (~2 s per 100k 384-d rows here); this compares only the stored JSON and
        rewrites the rows that differ. Every URI must be stored (checked before any write).
        """
        if not nodes:
            return 0
        last = {n.uri: i for i, n in enumerate(nodes)}
        if len(last) != len(nodes):
            nodes = [nodes[i] for i in sorted(last.values())]
        blobs = [_node_json(n) for n in nodes]
        with self._wlock:
            rows = self._snap.lookup([n.uri for n in nodes])
            if (rows < 0).any():
                raise NotFoundError(f"no node at {nodes[int(np.argmax(rows < 0))].uri!r}")
            differ = _differing(self._snap, rows, blobs)
            if not differ.size:
                return 0
            self._begin_write()
            s = self._snap  # the lock may have reloaded newer data
            rows = s.lookup([nodes[int(i)].uri for i in differ])
            if (rows < 0).any():
                raise NotFoundError("a node was removed by another writer meanwhile")
            self._apply(
                rows,
                [nodes[int(i)] for i in differ],
                [blobs[int(i)] for i in differ],
                s.vectors_of(rows),
            )
            return int(differ.size)

    def update_tags(self, tags_by_uri: Mapping[str, list[str]]) -> None:
        with self._wlock:
            uris = list(tags_by_uri)
            rows = self._snap.lookup(uris)
            found = [(u, int(r)) for u, r in zip(uris, rows, strict=True) if r >= 0]
            if not found:
                return
            s = self._snap
            nodes = [
                self._node(s, r).model_copy(update={"tags": list(tags_by_uri[u])}) for u, r in found
            ]
            vecs = s.vectors_of(np.array([r for _, r in found], dtype=np.int64))
            self.upsert(nodes, vecs)

    def _apply(self, kill: IntArray, nodes: list[Node], blobs: list[bytes], vecs: F32) -> None:
        """Publish the snapshot with rows ``kill`` dead and ``nodes`` appended.

        The steps, each its own function: append the new rows' columns and blobs, mark the
        killed rows dead, merge the new rows into the sorted lookups (by URI hash, by parent
        hash, by URI), link parents and children, merge the tag lookup, publish, then keep the
        BM25 and HNSW indexes in step."""
        s = self._snap
        k = len(nodes)
        n0, n1 = s.n, s.n + k
        new_rows = np.arange(n0, n1, dtype=np.int64)
        live = s.live - int(kill.size) + k
        compacts = self.path is None and n1 - live > max(live, 1000)
        # A BM25 index not loaded yet (an open loads it on first use) is not loaded for a
        # small write: the rows it does not hold are replayed from the node texts when it
        # loads (rows are immutable), so the first write after an open does not wait for the
        # whole index (3.6 s of a 100k index's first write). A large write loads it: its save
        # would rewrite the index anyway, and the postings then overlap the write.
        lex = None
        if not compacts:
            lex = self._lex if self._lex is not None or k < _LEX_REPLAY else self.lexical
        lex_job: Future[None] | None = None
        if lex is not None and k >= _LEX_THREAD_ROWS and not _ann.exiting():
            # The BM25 postings are written beside the steps below (mostly numpy sorts and
            # fresh arrays, which release the GIL): on a second core, ~1-2 s of a 100k-node
            # first ingest overlap the Python steps instead of following them. (In a copy of
            # this context: the ingest write's shared cut of the leaf texts is a variable.)
            pool = ThreadPoolExecutor(1, thread_name_prefix="treehop-lexical-write")
            ctx = contextvars.copy_context()
            lex_job = pool.submit(ctx.run, _lex_write, lex, kill, new_rows, nodes)
            pool.shutdown(wait=False)  # (the one job still runs; the thread ends after it)
            lex = None
        try:
            self._apply_rows(s, kill, nodes, blobs, vecs, new_rows, live)
        except BaseException:
            if lex_job is not None:  # the snapshot was not published: neither is the BM25 side
                futures_wait([lex_job])
                _lex_undo(self.lexical, s, kill, new_rows, self._node)
            raise
        if lex_job is not None:
            lex_job.result()  # (its error, once the snapshot steps are done)
        if compacts:
            self._compact_in_memory()
            return
        if lex is not None:
            _lex_write(lex, kill, new_rows, nodes)
        self._lex_dirty = self._lex_dirty or self._lex is not None
        self._paused = False
        self._ann_kick()  # the graph catches up in the background, not inside the write

    def _apply_rows(
        self,
        s: _Snap,
        kill: IntArray,
        nodes: list[Node],
        blobs: list[bytes],
        vecs: F32,
        new_rows: IntArray,
        live: int,
    ) -> None:
        """:meth:`_apply`'s snapshot steps: the new rows appended, ``kill`` marked dead, the
        sorted lookups merged, parents linked, tags merged, the snapshot published."""
        k = len(nodes)
        n0, n1 = s.n, s.n + k
        if k:
            cols, tail, new_h = _append_rows(s, nodes, blobs, vecs, self._dim or 0)
        else:
            cols, tail, new_h = s.cols, s.tail_vecs, np.zeros(0, np.uint64)
        alive = np.empty(n1, dtype=bool)
        alive[:n0] = s.alive[:n0]
        alive[n0:] = True
        alive[kill] = False
        by_hash = _merge(s.by_hash[alive[s.by_hash]], cols["uri_hash"], new_rows)
        by_parent = _merge(s.by_parent[alive[s.by_parent]], cols["parent_hash"], new_rows)
        tmp = replace(s, n=n1, cols=cols, tail_vecs=tail, alive=alive, by_hash=by_hash, cache={})
        by_uri = _merged_by_uri(tmp, s.by_uri[alive[s.by_uri]], new_rows, nodes)
        parent_row = _linked_parents(tmp, s.parent_row, by_parent, nodes, new_h, n0)
        th, tr = _merged_tags(s, alive, nodes, n0)
        self._snap = replace(
            tmp,
            live=live,
            by_uri=by_uri,
            by_parent=by_parent,
            parent_row=parent_row,
            tag_hash=th,
            tag_row=tr,
            cache={},
        )
        self._dirty = True

    def _compact_in_memory(self) -> None:
        """A store without a directory reclaims dead rows as soon as they outnumber live ones
        (a saved store does it at the next save)."""
        s, old_to_new = self._compacted(self._snap)
        lex = self.lexical
        if lex is not None:
            dead = np.flatnonzero(old_to_new < 0)
            lex.delete(dead[dead < lex.row_bound])
            lex.remap(old_to_new)
        self._ann_stop()
        self._snap = s
        self._ann = None
        self._ann_kick()

    # ------------------------------------------------------------------ reads
    def get(self, uris: Sequence[str]) -> list[Node | None]:
        s = self._snap
        rows = s.lookup(list(uris))
        return [self._node(s, int(r)) if r >= 0 else None for r in rows]

    def get_vectors(self, uris: Sequence[str]) -> Vector:
        s = self._snap
        rows = s.lookup(list(uris))
        if (rows < 0).any():
            missing = [u for u, r in zip(uris, rows, strict=True) if r < 0]
            raise NotFoundError(f"no node at {missing[0]!r}")
        return s.vectors_of(rows)

    def _children_rows(self, s: _Snap, uri: str) -> IntArray:
        key = ("children", uri)
        hit: IntArray | None = s.cache.get(key)
        if hit is not None:
            return hit
        h = np.uint64(_h64(uri))
        pk = s.sorted_keys("parent_hash", s.by_parent)
        lo = int(np.searchsorted(pk, h, side="left"))
        hi = int(np.searchsorted(pk, h, side="right"))
        rows = s.by_parent[lo:hi]
        if rows.size:
            chunk = s.cols["chunk"][rows]
            # (the URIs in one gather: a decode per child was ~3 ms of a 1M first find)
            keyed = sorted(zip(chunk.tolist(), s.uris_of(rows), rows.tolist(), strict=True))
            # a hash collision would mix in children of another parent: check their parent
            rows = np.array([r for _, _, r in keyed], dtype=np.int64)
            # a 64-bit hash collision would mix in another parent's children: where the parent
            # is stored, its children must link to it
            own = int(s.lookup([uri])[0])
            if own >= 0:
                rows = rows[s.parent_row[rows] == own]
            else:  # the parent is not stored: compare each row's stored parent URI
                keep = [_stored_field(s, int(r), "parent_uri") == uri for r in rows]
                rows = rows[np.array(keep, dtype=bool)]
        if len(s.cache) > 4096:
            for k in [k for k in list(s.cache) if k[0] == "children"]:
                s.cache.pop(k, None)
        s.cache[key] = rows
        return rows

    def children(self, uri: str) -> list[Node]:
        s = self._snap
        rows = self._children_rows(s, uri).tolist()
        cache, uid = self._node_cache, s.uid
        out = [cache.get((uid, r)) for r in rows]
        cold = [i for i, node in enumerate(out) if node is None]
        if cold:
            # the uncached children's texts in one checked read (siblings are mostly adjacent
            # rows) instead of a checksum lookup and a ``pread`` each: the first find after
            # an open spent ~15 ms of CPU on them at 1M rows
            crows = [rows[i] for i in cold]
            blobs = s.node_jsons(np.array(crows, np.int64))
            for i, r, blob in zip(cold, crows, blobs, strict=True):
                out[i] = self._node_from(s, r, blob)
        return [node for node in out if node is not None]

    def child_count(self, uri: str) -> int:
        """How many direct children :meth:`children` would return, no node built (the rows
        are kept per snapshot)."""
        return int(self._children_rows(self._snap, uri).size)

    def children_fields(self, uri: str, fields: Sequence[str]) -> list[dict[str, Any]]:
        """``fields`` of each of :meth:`children` (same order), parsed from the stored JSON
        without building nodes (~3x cheaper): a re-add reads the abstracts and tags of every
        child of each folder it re-describes."""
        s = self._snap
        out: list[dict[str, Any]] = []
        for blob in s.node_jsons(self._children_rows(s, uri)):
            try:
                d = pydantic_core.from_json(blob)
            except ValueError as exc:
                raise IndexCorruptError(f"a child of {uri} in {self.path} is invalid") from exc
            if not isinstance(d, dict):
                raise IndexCorruptError(f"a child of {uri} in {self.path} is not a node")
            out.append({f: d.get(f) for f in fields})
        return out

    def iter_nodes(self, subtree: str | None = None) -> Iterator[Node]:
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        for r in rows:
            yield self._node(s, int(r))

    def iter_uris(self, subtree: str | None = None) -> Iterator[str]:
        """The URIs :meth:`iter_nodes` would yield, without parsing any node."""
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        for i in range(0, rows.size, 4096):
            yield from s.uris_of(rows[i : i + 4096])

    def content_hashes(self, subtree: str | None = None) -> dict[str, str]:
        """``{uri: content_hash}`` of the stored nodes (in ``subtree``): what a re-add diffs
        against, read from the stored JSON without building the nodes (~3x cheaper)."""
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        return dict(zip(s.uris_of(rows), map(_content_hash, s.node_jsons(rows)), strict=True))

    def search(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> list[ScoredNode]:
        s, q = self._query(vector, limit, dense_weight)
        if s.live == 0:
            return []
        return self._search(s, q, scope, limit, query_text, dense_weight, None)

    def _query(self, vector: Vector, limit: int, dense_weight: float) -> tuple[_Snap, F32]:
        """The snapshot a search reads and its query as a float32 row, checked (a dimension
        that differs from a non-empty index is an :class:`InvalidQueryError`)."""
        check_search_args(limit, dense_weight)
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        s = self._snap
        if s.live and q.shape[0] != s.dim:
            raise InvalidQueryError(f"query vector has dimension {q.shape[0]}, index has {s.dim}")
        return s, q

    def _search_found(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
    ) -> tuple[
        _Snap, tuple[IntArray, IntArray, F32, F32, F32 | None, BoolArray | None, bool] | None
    ]:
        """The snapshot and :meth:`_search_top`'s answer (``None``: nothing to return) of one
        checked query: what :meth:`search_columns` and :meth:`search_arrays` share."""
        s, q = self._query(vector, limit, dense_weight)
        if not s.live:
            return s, None
        return s, self._search_top(s, q, scope, limit, query_text, dense_weight, None)

    def holds_context_type(self, context_type: ContextType) -> bool:
        """Whether a live node of ``context_type`` is stored: one pass over the type column,
        kept per snapshot (a write publishes a new one). The retriever asks it on every find:
        on a tree without memories the memory context (turn windows, session evidence) has
        nothing to work on, and its slot planning is skipped."""
        s = self._snap
        key = ("holds", context_type)
        got: bool | None = s.cache.get(key)
        if got is None:
            n = s.n
            got = bool(np.any((s.cols["ctype"][:n] == _CTYPE_CODE[context_type]) & s.alive[:n]))
            s.cache[key] = got
        return got

    def search_columns(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> HitColumns:
        """:meth:`search` with the hits as columns (the same hits, order and scores): URIs,
        parents and chunk indexes come from the URI blob and the columns, and a node is parsed
        only when the caller asks for it (see :class:`~treehop.stores.base.HitColumns`)."""
        s, found = self._search_found(vector, scope, limit, query_text, dense_weight)
        if found is None:
            return self._columns(s, np.zeros(0, np.int64), np.zeros(0, np.int64), *_NO_SCORES)
        return self._columns(s, *found[:6], exact=found[6])

    def search_arrays(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> HitArrays:
        """:meth:`search_columns` as arrays (:class:`~treehop.stores.base.HitArrays`): the
        same hits, order and scores; a hit's URI, parent URI and other Python values are
        built only for the positions the caller asks :meth:`HitArrays.columns` for."""
        s, found = self._search_found(vector, scope, limit, query_text, dense_weight)
        if found is None:
            no = np.zeros(0, np.int64)
            cand, top, score, dense, lex, matches, exact = (no, no, *_NO_SCORES, True)
        else:
            cand, top, score, dense, lex, matches, exact = found
        top = _best_first(cand, top, score, None)
        rows = cand[top]
        parent = s.parent_row[rows]
        # a linked parent row is the parent's code: distinct rows hold distinct URIs
        codes = parent if bool((parent >= 0).all()) else None
        chunk = s.cols["chunk"][rows].astype(np.int64)

        def columns(positions: npt.NDArray[np.int64]) -> HitColumns:
            return self._columns(
                s, cand, top[positions], score, dense, lex, matches, exact, ordered=True
            )

        def uris(positions: npt.NDArray[np.int64]) -> list[str]:
            return s.uris_of(rows[positions]) if positions.size else []

        def parent_uris(parent_codes: npt.NDArray[np.int64]) -> list[str]:
            # (a code is the parent's row)
            return s.dir_uris(parent_codes) if parent_codes.size else []

        def headings(
            positions: npt.NDArray[np.int64],
        ) -> tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]:
            return self._heading_codes(s, rows[positions])

        def among(positions: npt.NDArray[np.int64], wanted: Collection[str]) -> BoolArray:
            # a URI names one live row of the snapshot: the hits whose row is one of theirs
            found = s.lookup(list(wanted)) if wanted else np.zeros(0, np.int64)
            out: BoolArray = np.isin(rows[positions], found[found >= 0])
            return out

        return build_frozen(
            HitArrays,
            leaves=s.cols["leaf"][rows].astype(bool),
            scores=score[top],
            chunks=chunk,
            parent_codes=codes,
            exact=exact,
            columns=columns,
            uris=uris,
            parent_uris=parent_uris,
            heading_codes=headings,
            among=among,
        )

    def search_batch(
        self,
        vectors: Vector,
        scope: Scope,
        limit: int,
        *,
        query_texts: Sequence[str | None] | None = None,
        dense_weight: float = 1.0,
    ) -> list[list[ScoredNode]]:
        """:meth:`search` for many queries at once: one matrix product scores every row
        against every query (BLAS ``sgemm`` instead of one memory-bound pass per query)."""
        check_search_args(limit, dense_weight)
        qs = np.asarray(vectors, dtype=np.float32)
        if qs.ndim != 2:
            raise InvalidQueryError("search_batch needs a 2-d array of query vectors")
        texts = list(query_texts) if query_texts is not None else [None] * qs.shape[0]
        if len(texts) != qs.shape[0]:
            raise InvalidQueryError("query_texts must have one entry per query vector")
        s = self._snap
        if s.live == 0 or qs.shape[0] == 0:
            return [[] for _ in range(qs.shape[0])]
        if qs.shape[1] != s.dim:
            raise InvalidQueryError(
                f"query vectors have dimension {qs.shape[1]}, index has {s.dim}"
            )
        rows = self._candidate_rows(s, scope)
        if rows is not None and rows.size == 0:
            return [[] for _ in range(qs.shape[0])]
        if self._ann_usable(s, rows) and (ann := self._ann_index(wait=False)) is not None:
            if dense_weight >= 1.0 or not any(texts):
                return self._ann_batch(s, qs, scope, rows, limit, ann)
            # one graph call for the whole batch (usearch splits it over two threads)
            fetch = max(4 * limit, 64)
            ann.lock.acquire_read()
            try:
                labels = ann.query_many(qs, fetch, min(2, self.ann_threads))
            finally:
                ann.lock.release_read()
            return [
                self._search(s, q, scope, limit, t, dense_weight, None, labels[i])
                for i, (q, t) in enumerate(zip(qs, texts, strict=True))
            ]
        if dense_weight >= 1.0 or not any(texts):
            return self._batch_dense(s, qs, scope, rows, limit)
        if rows is None or rows.size * 8 > s.n:
            dense_all = s.scores_matrix_t(qs)
            dense_m = dense_all if rows is None else dense_all[:, rows]
        else:
            dense_m = qs @ s.vectors_of(rows).T
        return [
            self._search(s, q, scope, limit, t, dense_weight, dense_m[i])
            for i, (q, t) in enumerate(zip(qs, texts, strict=True))
        ]

    def _search(
        self,
        s: _Snap,
        q: F32,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        precomputed: F32 | None,
        prefetched: npt.NDArray[Any] | None = None,
    ) -> list[ScoredNode]:
        found = self._search_top(
            s, q, scope, limit, query_text, dense_weight, precomputed, prefetched
        )
        return [] if found is None else self._hits(s, *found[:6])

    def _search_top(
        self,
        s: _Snap,
        q: F32,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        precomputed: F32 | None,
        prefetched: npt.NDArray[Any] | None = None,
    ) -> tuple[IntArray, IntArray, F32, F32, F32 | None, BoolArray | None, bool] | None:
        """The search up to its best positions: (candidate rows, positions of the best
        ``limit`` in them, unordered, combined scores, dense scores, lexical scores, the
        filter's match mask, whether every row in scope was scored: no HNSW candidates);
        ``None`` when nothing is in scope."""
        rows = self._candidate_rows(s, scope)
        if rows is not None and rows.size == 0:
            return None
        skey, wide, (eligible, matches) = self._scope_masks(s, scope, rows)
        ann = None
        if precomputed is None and self._ann_usable(s, rows):
            ann = self._ann_candidates(
                s,
                q,
                rows,
                eligible,
                limit,
                query_text,
                dense_weight,
                prefetched,
                skey if wide else None,
            )
        if ann is not None:
            cand, dense = ann
        else:
            cand, dense = _exact_dense(s, q, rows, eligible, precomputed, skey if wide else None)
        if cand.size == 0:
            return None
        lex: F32 | None = None
        score = dense
        lexical = self.lexical if query_text and dense_weight < 1.0 else None
        if lexical is not None and query_text:
            lex = np.asarray(lexical.score(query_text, cand), dtype=np.float32)
            score = hybrid_scores(
                dense, lex, dense_weight, scale=self._lexical_scale(s, lexical, query_text)
            )
        k = min(limit, cand.size)
        top = np.argpartition(-score, k - 1)[:k] if k < cand.size else np.arange(cand.size)
        return cand, top, score, dense, lex, matches, ann is None

    def _hits(
        self,
        s: _Snap,
        cand: IntArray,
        top: IntArray,
        score: F32,
        dense: F32,
        lex: F32 | None,
        matches: BoolArray | None,
        k: int | None = None,
    ) -> list[ScoredNode]:
        """The (first ``k``) hits at positions ``top`` of ``cand``, best first (ties by row)."""
        top = _best_first(cand, top, score, k)
        rows = cand[top]
        n = int(rows.size)
        # whole columns to Python at once (the same floats as one ``float()`` per element)
        lexical = lex[top].tolist() if lex is not None else [None] * n
        flags = [True] * n if matches is None else matches[rows].tolist()
        return [
            ScoredNode(node=self._node(s, r), score=a, vector_score=d, lexical_score=x, matches=m)
            for r, a, d, x, m in zip(
                rows.tolist(),
                score[top].tolist(),
                dense[top].tolist(),
                lexical,
                flags,
                strict=True,
            )
        ]

    def _columns(
        self,
        s: _Snap,
        cand: IntArray,
        top: IntArray,
        score: F32,
        dense: F32,
        lex: F32 | None,
        matches: BoolArray | None,
        exact: bool = True,
        ordered: bool = False,
    ) -> HitColumns:
        """:meth:`_hits` as columns: the same hits in the same order, no node parsed.

        Every row decodes its URI from the URI blob (one gather, or one slice where the rows
        lie close together), each distinct parent once and kept per snapshot
        (:meth:`_Snap.uris_with_dirs`: a tree-context search returns hundreds to thousands
        of rows, most of them siblings; a node-cache lookup per row cost more than the
        vectorised decode). A row without a linked parent row (its parent is not stored, or
        it is a root) reads its stored parent URI. ``ordered``: ``top`` is already in the
        order wanted (:meth:`search_arrays` asks for a subset of its hits)."""
        if not ordered:
            top = _best_first(cand, top, score, None)
        rows = cand[top]
        row_l = rows.tolist()
        n = len(row_l)
        parents: list[str | None]
        parent_codes: IntArray | None
        if n:
            parent = s.parent_row[rows]
            # siblings share a parent: each distinct parent row is decoded once
            distinct, inverse = unique_inverse(parent)
            unlinked = int(np.searchsorted(distinct, 0))  # the -1s sort first
            uris, dir_uris = s.uris_with_dirs(rows, distinct[unlinked:])
            names: list[str | None] = [None] * unlinked
            names.extend(dir_uris)
            inverse = inverse.reshape(-1)
            # (one parent, a folder's files or a file's chunks: its name repeated)
            parents = names * n if len(names) == 1 else [names[k] for k in inverse.tolist()]
            # (a code per distinct parent row; unlinked rows would share one code)
            parent_codes = None if unlinked else inverse.astype(np.int64, copy=False)
            if unlinked:
                cache, uid = self._node_cache, s.uid
                for i in np.flatnonzero(parent < 0).tolist():
                    node = cache.get((uid, row_l[i]))  # a built node saves a JSON parse
                    if node is not None:
                        parents[i] = node.parent_uri
                    else:
                        stored = _stored_field(s, row_l[i], "parent_uri")
                        parents[i] = stored if isinstance(stored, str) else None
            chunks = _optional(s.cols["chunk"][rows])
            leaves: list[bool] = s.cols["leaf"][rows].tolist()
        else:
            uris, parents, chunks, leaves = [], [], [], []
            parent_codes = np.zeros(0, np.int64)

        def load(positions: Sequence[int]) -> list[Node]:
            return [self._node(s, row_l[i]) for i in positions]

        def headings(
            positions: npt.NDArray[np.int64],
        ) -> tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]:
            return self._heading_codes(s, rows[positions])

        return build_frozen(
            HitColumns,
            uris=uris,
            parent_uris=parents,
            chunk_indexes=chunks,
            leaves=leaves,
            scores=score[top].tolist(),
            vector_scores=dense[top].tolist(),
            lexical_scores=lex[top].tolist() if lex is not None else [None] * n,
            matches=[True] * n if matches is None else matches[rows].tolist(),
            load=load,
            exact=exact,
            parent_codes=parent_codes,
            heading_codes=headings,
        )

    def _heading_codes(
        self, s: _Snap, rows: IntArray
    ) -> tuple[IntArray, Sequence[tuple[str, ...]]]:
        """The heading paths of ``rows`` as codes into a table (-1: none), a column derived
        per snapshot as rows are asked for: a row's path is read from its node once, then
        every later find gathers its code (the tree context compares the paths of a few
        hundred neighbouring chunks per find; building their nodes to read them was its
        largest cost). Concurrent readers may both fill a row: they write the same path,
        at worst under two codes, which the caller tells apart by comparing the table."""
        got = s.cache.get(("heading",))
        if got is None:
            got = s.cache.setdefault(("heading",), (np.full(s.n, -2, np.int64), [], {}))
        codes, table, index = got
        out: IntArray = codes[rows]
        todo = np.flatnonzero(out == -2)
        if todo.size:
            with _HEADING_LOCK:
                for k, r in zip(todo.tolist(), rows[todo].tolist(), strict=True):
                    node = self._node(s, r)
                    path = node.metadata.get(HEADING_PATH) if node.chunk_index is not None else None
                    code = -1
                    if isinstance(path, list):
                        key = tuple(path)
                        code = index.get(key, -1)
                        if code < 0:
                            code = index[key] = len(table)
                            table.append(key)
                    codes[r] = out[k] = code
        return out, table

    def _scope_masks(
        self, s: _Snap, scope: Scope, rows: IntArray | None
    ) -> tuple[tuple[Any, ...] | None, bool, tuple[BoolArray, BoolArray | None]]:
        """(scope key, whether the scope is wide, its eligibility masks). A wide scope (the
        global step) is asked again with every query, so its masks are kept per snapshot."""
        skey = _scope_key(scope)
        wide = skey is not None and rows is not None and rows.size * 8 > s.n
        cached = s.cache.get(("elig", skey)) if wide else None
        if cached is None:
            cached = self._eligibility(s, scope, rows)
            if wide:
                _cache_put(s, ("elig", skey), cached)
        return skey, wide, cached

    def _ann_batch(
        self, s: _Snap, qs: F32, scope: Scope, rows: IntArray | None, limit: int, ann: AnnIndex
    ) -> list[list[ScoredNode]]:
        """The dense global step of many queries: each query's answer is the one
        :meth:`_ann_candidates` gives it alone (rows and scores, to the bit), with the work
        around the graph done once for the batch:

        - one graph call for every query (usearch splits it over two threads);
        - the graph's candidates and the uncovered tail scored by one ``einsum`` each, the
          per-row kernel of :func:`_matvec` (so the same floats as the one-query step);
        - the orphans (rows the graph cannot reach) that may reach each query's floor
          through one exact search of their 8-bit codes for every query, then scored
          exactly (:func:`_batch_orphans`);
        - the siblings of every query's best rows in one pass (:func:`_batch_siblings`),
          and one partial sort.

        A query whose graph answer holds fewer than ``limit`` eligible rows (alone it would
        fetch wider), that is zero or not finite, or whose graph answer names a row twice,
        goes the one-query way."""
        skey, wide, (eligible, matches) = self._scope_masks(s, scope, rows)
        key = skey if wide else None
        full = _full_mask(s, rows, eligible, key)
        fetch = max(int(1.25 * limit / max(_eligible_share(s, full, key), 0.05)) + 16, 64)
        threads = min(2, self.ann_threads)
        ann.lock.acquire_read()
        try:
            upto, count = min(ann.upto, s.n), ann.count
            labels = ann.query_many(qs, min(fetch, count), threads)
            cand = np.where(labels >= 0, ann.row[np.clip(labels, 0, None)], -1)
            orphans, orphan_vecs = ann.orphan_rows(upto, s.vectors_of)
            codes = ann.orphan_codes()
        finally:
            ann.lock.release_read()
        ok = (cand >= 0) & (cand < s.n)
        ok[ok] = full[cand[ok]]
        qn = np.linalg.norm(qs, axis=1)
        single = (np.count_nonzero(ok, axis=1) < limit) | ~(qn > 0) | ~np.isfinite(qn)
        single |= _repeats(cand, ok)
        who = ~single
        ok &= who[:, None]
        cand = np.where(ok, cand, 0)
        b, width = cand.shape
        dense = np.einsum(
            "qkd,qd->qk", s.vectors_of(cand.ravel()).reshape(b, width, s.dim), qs, optimize=False
        )
        dense[~ok] = -np.inf
        tail = np.flatnonzero(full[upto:]) + upto if upto < s.n else _NO_ROWS
        tail_d = np.einsum("td,qd->qt", s.vectors_of(tail), qs, optimize=False)
        floor = _batch_floors(dense, tail_d, max(limit, 4 * _SIBLING_PARENTS))
        floor[single] = np.inf
        live = _orphans_eligible(s, orphans, full, key)
        oq, orow, od = _batch_orphans(
            qs, floor, (orphans, orphan_vecs, live), codes, fetch, threads
        )
        new = _new_pairs(s.n, cand, ok, oq, orow)
        extra = (oq[new], orow[new], od[new])
        cand, dense, ok = _batch_matrix((cand, dense, ok), who, tail, tail_d, extra)
        # the siblings of every query's best rows (see _sibling_rows), scored in one pass
        owner, sib = _batch_siblings(s, cand, dense, ok, full)
        sib_d = np.einsum("kd,kd->k", s.vectors_of(sib), qs[owner], optimize=False)
        cand, dense, ok = _batch_matrix((cand, dense, ok), who, _NO_ROWS, None, (owner, sib, sib_d))
        k = min(limit, cand.shape[1])
        top = np.argpartition(-dense, k - 1, axis=1)[:, :k]
        return [
            self._search(s, qs[i], scope, limit, None, 1.0, None)
            if single[i]
            else self._hits(s, cand[i], top[i], dense[i], dense[i], None, matches)
            for i in range(b)
        ]

    def _batch_dense(
        self, s: _Snap, qs: F32, scope: Scope, rows: IntArray | None, limit: int
    ) -> list[list[ScoredNode]]:
        """Exact dense scores of many queries: one matrix product (``queries x rows``, so
        that each query's scores are contiguous) and one partial sort for all of them."""
        _, _, (eligible, matches) = self._scope_masks(s, scope, rows)
        cand = np.flatnonzero(eligible) if rows is None else rows[eligible]
        if cand.size == 0:
            return [[] for _ in range(qs.shape[0])]
        k = min(limit, cand.size)
        if cand.size * 8 > s.n and k < cand.size:
            # a wide scope: score every row (one GEMM) and mask the others in place, rather
            # than gathering the eligible columns (a copy of the whole matrix)
            dense_m = s.scores_matrix_t(qs)
            full = np.zeros(s.n, dtype=bool)
            full[cand] = True
            dense_m[:, ~full] = -np.inf
            cand = np.arange(s.n, dtype=np.int64)
        elif cand.size * 8 > s.n:
            dense_m = s.scores_matrix_t(qs)[:, cand]
        else:
            dense_m = qs @ s.vectors_of(cand).T
        if k == cand.size:
            every = np.arange(cand.size)
            return [self._hits(s, cand, every, d, d, None, matches) for d in dense_m]
        qi, pos = _top_candidates(dense_m, k)
        bounds = np.searchsorted(qi, np.arange(qs.shape[0] + 1))
        return [
            self._hits(s, cand, pos[bounds[i] : bounds[i + 1]], d, d, None, matches, k)
            for i, d in enumerate(dense_m)
        ]

    def _lexical_scale(self, s: _Snap, lexical: LexicalIndex, query_text: str) -> float:
        """The query's best BM25 score over the whole index (cached per query and snapshot),
        so that lexical scores of different directories' children share one scale."""
        key = (id(s), query_text)
        hit = self._lex_scale_cache.get(key)
        if hit is None:
            full = lexical.score(query_text, size=s.n)
            hit = float(full.max()) if full.size else 0.0
            self._lex_scale_cache[key] = hit
            if len(self._lex_scale_cache) > 256:
                with contextlib.suppress(KeyError):  # a concurrent reader evicted it
                    self._lex_scale_cache.popitem(last=False)
        return hit

    def find_by_tags(
        self, labels: Sequence[str], scope: Scope, limit: int
    ) -> Mapping[str, list[Node]]:
        s = self._snap
        out: dict[str, list[Node]] = {}
        if s.live == 0:
            return out
        allowed = self._candidate_rows(s, scope)
        allowed_mask: BoolArray | None = None
        if allowed is not None:
            allowed_mask = np.zeros(s.n, dtype=bool)
            allowed_mask[allowed] = True
        base = self._static_mask(s, scope, None)
        for label in labels:
            # The rows under the label's hash, checked one by one (their nodes, built for
            # the answer anyway) only until ``limit`` in scope carry the label: the same
            # first ``limit`` rows as checking every row first, which parsed the stored
            # JSON of each of the hundreds of rows a common tag has on its first lookup
            # (tag hops look up the hits' tags with every find).
            rows = self._tag_hash_rows(s, label)
            if not rows.size:
                continue
            ok = base[rows]
            if allowed_mask is not None:
                ok &= allowed_mask[rows]
            nodes: list[Node] = []
            for r in rows[ok].tolist():
                node = self._node(s, r)
                if label in tagmod.labels(node.tags):
                    nodes.append(node)
                    if len(nodes) >= limit:
                        break
            # (a label no stored row carries has no entry, one carried only out of scope an
            # empty one: the first row that carries it settles that, mostly the first row)
            if nodes or any(self._carries(s, r, label) for r in rows.tolist()):
                out[label] = [n for n in nodes if n.uri not in scope.exclude_uris]
        return out

    def _carries(self, s: _Snap, r: int, label: str) -> bool:
        """Whether row ``r`` carries tag ``label`` (its built node's tags, else its stored
        ones)."""
        node = self._node_cache.get((s.uid, r))
        tags = node.tags if node is not None else _stored_field(s, r, "tags") or []
        return label in tagmod.labels(tags)

    # ------------------------------------------------------------------ scopes and masks
    @staticmethod
    def _tag_hash_rows(s: _Snap, label: str) -> IntArray:
        """Rows with a tag whose hash is ``label``'s: every row carrying ``label`` and, on
        a hash collision, rows that do not (the caller checks)."""
        h = np.uint64(_h64(label))
        lo = int(np.searchsorted(s.tag_hash, h, side="left"))
        hi = int(np.searchsorted(s.tag_hash, h, side="right"))
        rows: IntArray = s.tag_row[lo:hi]
        return rows

    def _tag_rows(self, s: _Snap, label: str) -> IntArray:
        """Rows carrying tag ``label`` (cached per snapshot). The label hash finds them; each
        row's stored tags are then checked, so a hash collision cannot add a wrong row."""
        key = ("tag", label)
        hit: IntArray | None = s.cache.get(key)
        if hit is not None:
            return hit
        rows = self._tag_hash_rows(s, label)
        keep = [label in tagmod.labels(_stored_field(s, int(r), "tags") or []) for r in rows]
        rows = rows[np.array(keep, dtype=bool)] if rows.size else rows
        _cache_put(s, key, rows, cap=256)
        return rows

    def _subtree_rows(self, s: _Snap, uri: str) -> IntArray:
        """Rows of ``uri`` and its descendants: binary searches on the URI-sorted rows (each
        step decodes a stored URI), kept per snapshot: the tree context asks the subtrees of
        the hits' parents with every query, and hot directories come back."""
        kept: dict[str, IntArray] = s.cache.setdefault(("subtree",), {})
        hit = kept.get(uri)
        if hit is None:
            hit = self._subtree_rows_uncached(s, uri)
            if len(kept) >= 2048:
                kept.clear()
            kept[uri] = hit
        return hit

    def _subtree_rows_uncached(self, s: _Snap, uri: str) -> IntArray:
        own = s.lookup([uri])
        if own[0] >= 0:
            linked = _leaf_family_rows(s, uri, int(own[0]))
            if linked is not None:
                return linked
        parts = [own] if own[0] >= 0 else []
        view = _UriView(s, s.by_uri)
        ranges = []
        for sep in ("/", "#"):
            lo = bisect.bisect_left(view, uri + sep)
            hi = bisect.bisect_left(view, uri + sep + "\U0010ffff")
            if hi > lo:
                parts.append(s.by_uri[lo:hi])
                ranges.append((lo, hi))
        if len(ranges) == 1:
            # one range of descendants, and the node (if stored) right before it (nothing
            # sorts between them): the subtree is one slice of the URI order, the same rows
            # in the same order as the concatenation, without copying a wide subtree's rows
            # (8 MB at 1M, on the first find after an open)
            lo, hi = ranges[0]
            if own[0] < 0:
                return s.by_uri[lo:hi]
            if lo > 0 and int(s.by_uri[lo - 1]) == int(own[0]):
                return s.by_uri[lo - 1 : hi]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def _candidate_rows(self, s: _Snap, scope: Scope) -> IntArray | None:
        """Rows allowed by the structural part of the scope (``None`` = all rows)."""
        if scope.parent_uri is not None:
            return self._children_rows(s, scope.parent_uri)
        if scope.subtrees:
            key = ("subtrees", scope.subtrees)
            hit: IntArray | None = s.cache.get(key)
            if hit is not None:
                return hit
            parts = [self._subtree_rows(s, t) for t in scope.subtrees]
            if len(parts) == 1:
                rows = parts[0]
            elif sum(p.size for p in parts) * 64 < s.n:
                # a few small subtrees (the tree context's parents): sort their rows rather
                # than mark them in a mask over every row (the same sorted, distinct rows)
                rows = np.unique(np.concatenate(parts)).astype(np.int64)
            else:
                mask = np.zeros(s.n, dtype=bool)
                for part in parts:
                    mask[part] = True
                rows = np.flatnonzero(mask).astype(np.int64)
            # bounded: the tree context asks a different set of parents with every query
            _cache_put(s, key, rows, cap=64)
            return rows
        return None

    def _static_mask(self, s: _Snap, scope: Scope, rows: IntArray | None) -> BoolArray:
        """Alive and the cheap column filters (type, level, leaf), over ``rows`` or all."""
        c = s.cols
        if rows is None:
            mask = s.alive[: s.n].copy()

            def col(name: str) -> npt.NDArray[Any]:
                return c[name][: s.n]
        else:
            mask = s.alive[rows]

            def col(name: str) -> npt.NDArray[Any]:
                return c[name][rows]

        if scope.context_types:
            mask &= np.isin(col("ctype"), [_CTYPE_CODE[t] for t in scope.context_types])
        if scope.levels:
            mask &= np.isin(col("level"), list(scope.levels))
        if scope.leaves_only:
            mask &= col("leaf")
        if scope.non_leaves_only:
            mask &= ~col("leaf")
        return mask

    def _metadata(self, s: _Snap, r: int) -> dict[str, Any]:
        key = (s.uid, r)
        hit = self._md_cache.get(key)
        if hit is not None:
            return hit
        try:
            md = pydantic_core.from_json(s.node_json(r)).get("metadata") or {}
        except ValueError as exc:
            raise IndexCorruptError(f"row {r} of {self.path} holds invalid JSON") from exc
        md = md if isinstance(md, dict) else {}
        if len(self._md_cache) > 4 * _NODE_CACHE:
            self._md_cache.clear()
        self._md_cache[key] = md
        return md

    def _filter_masks(
        self, s: _Snap, tags: TagFilter, md: MetadataFilter | None
    ) -> tuple[BoolArray, BoolArray]:
        """(matches, contains-a-match) masks over all rows, cached per filter and snapshot."""
        key = ("filter", tags.key() + "|" + (md.key() if md else ""))
        hit: tuple[BoolArray, BoolArray] | None = s.cache.get(key)
        if hit is not None:
            return hit
        n = s.n
        match = s.alive[:n].copy()
        if tags.any_of:
            m = np.zeros(n, dtype=bool)
            for lab in tags.any_of:
                m[self._tag_rows(s, lab)] = True
            match &= m
        for lab in tags.all_of:
            m = np.zeros(n, dtype=bool)
            m[self._tag_rows(s, lab)] = True
            match &= m
        if md is not None:
            # Metadata is free-form JSON, evaluated per live row once per filter and snapshot;
            # the mask is then reused by every round of the descent.
            for r in np.flatnonzero(match):
                if not md.matches(self._metadata(s, int(r))):
                    match[r] = False
        contains = np.zeros(n, dtype=bool)
        frontier = s.parent_row[:n][match]
        while frontier.size:
            frontier = _unique_ints(frontier[frontier >= 0])
            frontier = frontier[~contains[frontier]]
            contains[frontier] = True
            frontier = s.parent_row[frontier]
        _cache_put(s, key, (match, contains), cap=8)  # two masks over every row each
        return match, contains

    def _eligibility(
        self, s: _Snap, scope: Scope, rows: IntArray | None
    ) -> tuple[BoolArray, BoolArray | None]:
        """Eligible mask (over ``rows`` or all rows) and the full-length match mask if filtered."""
        static = self._static_mask(s, scope, rows)
        matches: BoolArray | None = None
        if scope.filtered:
            match, contains = self._filter_masks(s, scope.tags, scope.metadata)
            matches = match
            leaf = s.cols["leaf"][: s.n]
            allowed = match | (contains & ~leaf) if scope.traversal else match
            static &= allowed if rows is None else allowed[rows]
        if scope.exclude_uris:
            ex = s.lookup(list(scope.exclude_uris))
            ex = ex[ex >= 0]
            if ex.size:
                if rows is None:
                    static[ex] = False
                else:
                    static &= ~np.isin(rows, ex)
        return static, matches

    # ------------------------------------------------------------------ approximate search
    def _ann_usable(self, s: _Snap, rows: IntArray | None) -> bool:
        if self.ann_min_rows is None or s.live < self.ann_min_rows:
            return False
        return rows is None or rows.size * 2 >= s.live

    def _ann_candidates(
        self,
        s: _Snap,
        q: F32,
        rows: IntArray | None,
        eligible: BoolArray,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        prefetched: npt.NDArray[Any] | None = None,
        cache_key: tuple[Any, ...] | None = None,
    ) -> tuple[IntArray, F32] | None:
        """Candidates from HNSW (rows it covers) plus every eligible row written after it was
        last extended, rescored exactly; ``None`` sends the search down the exact path.

        Only a wide scope uses it (at least half of the index). The HNSW query over-fetches
        and filters by the scope's eligibility; when too few eligible rows come back it fetches
        more, and past a quarter of the index it gives up. With hybrid scoring, the query's
        best BM25 rows join the candidates.
        """
        if self._paused:
            self._resume()
        ann = self._ann_index(wait=False)
        if ann is None:
            return None
        full = _full_mask(s, rows, eligible, cache_key)
        # over-fetch by the share of the index the scope admits (4x when unknown), so that
        # enough eligible rows come back without a second graph query
        share = _eligible_share(s, full, cache_key)
        fetch = max(int(1.25 * limit / max(share, 0.05)) + 16, 64)
        ann.lock.acquire_read()
        try:
            # read under the lock: the worker adds a chunk and moves ``upto`` together
            upto, count = min(ann.upto, s.n), ann.count
            while True:
                if prefetched is not None and prefetched.size >= min(fetch, count):
                    got = prefetched
                else:
                    got = ann.query(q, min(fetch, count))
                got = got[got >= 0]
                found = ann.row[got]
                found = found[(found >= 0) & (found < s.n)]
                cand = found[full[found]]
                if cand.size >= limit or fetch * 4 > count:
                    break
                fetch *= 4
            orphans, orphan_vecs = ann.orphan_rows(upto, s.vectors_of)
            codes = ann.orphan_codes()
        finally:
            ann.lock.release_read()
        lexical = self.lexical if query_text and dense_weight < 1.0 else None
        # the rows the graph does not cover yet, exactly: a new row is never missed; and the
        # best of those it cannot reach, nor one the graph lost
        tail = np.flatnonzero(full[upto:]) + upto if upto < s.n else _NO_ROWS
        if orphans.size:  # (one the graph did return after all: deduplicated below)
            ok = _orphans_eligible(s, orphans, full, cache_key)
            best = None
            if codes is not None and lexical is None:
                best = _reaching_orphans(s, q, np.concatenate([cand, tail]), limit, fetch, codes)
            if best is None:
                best = _best_orphans(orphans, orphan_vecs, ok, q, fetch)
            else:
                best = _best_orphans(orphans[best], orphan_vecs[best], ok[best], q, fetch)
            tail = np.concatenate([best, tail]) if best.size else tail
        cand = np.concatenate([cand, tail])
        # (the scope's size is counted only when too few came back: a sum over every row)
        if cand.size < limit and cand.size < int(np.count_nonzero(full)):
            return None
        if lexical is not None and query_text:
            lex_rows, _ = lexical.top(query_text, fetch)
            lex_rows = lex_rows[lex_rows < s.n]
            lex_rows = lex_rows[full[lex_rows]]
            cand = np.union1d(cand, lex_rows)
        else:
            cand = _unique_ints(cand)
        dense = _matvec(s.vectors_of(cand), q)
        sib = _sibling_rows(s, cand, dense, full)
        if sib.size:
            cand = np.concatenate([cand, sib])
            dense = np.concatenate([dense, _matvec(s.vectors_of(sib), q)])
        return cand, dense

    def _ann_index(self, wait: bool = True) -> AnnIndex | None:
        """The HNSW graph. A saved one opens with the index (memory-mapped); with
        ``verify="background"`` its checksum runs in a thread first, and until then a search
        (``wait=False``) stays exact instead of waiting."""
        if self._ann is not None or self._ann_file is None or self.path is None:
            return self._ann
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
        Returns whether the graph now covers every row; ``False`` after ``timeout``."""
        self._paused = False
        self._ann_index(wait=True)
        end = None if timeout is None else time.monotonic() + timeout
        while True:
            # lag 1: a tail shorter than CATCH_UP_ROWS (which writes leave to the exact scan)
            # is added too; a worker already running with the writes' lag is joined first
            self._ann_kick(lag=1)
            worker = self._ann_worker
            if worker is None or worker is threading.current_thread():
                break
            worker.join(None if end is None else max(0.0, end - time.monotonic()))
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
        s = self._snap_v
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
        serves the rows it covers while it goes on."""

        def current() -> bool:
            return self._ann_token == token and not self._halt.is_set()

        while current():
            s = self._snap_v
            ann = self._ann
            if ann is not None and s.n - ann.upto < lag:
                if ann.needs_sweep():  # caught up: look for rows newer ones made unreachable
                    ann.sweep(s.vectors_of, self.ann_threads, current)
                return
            if ann is None:
                ann = AnnIndex.new(s.dim)
            elif not ann.mutable:
                ann = ann.mutable_copy()
            new = np.flatnonzero(s.alive[ann.upto : s.n]) + ann.upto
            head = new[: _ann.CHUNK]
            first_upto = s.n if new.size <= _ann.CHUNK else int(new[_ann.CHUNK])
            check = not ann.sweep_follows(int(new.size))  # (a bulk build: its sweep checks)
            # (the first chunk is added even when close() halts the worker: a graph that has
            # begun is then saved, and the next open resumes it instead of starting over)
            if not ann.extend(
                head,
                s.vectors_of,
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
                new[_ann.CHUNK :], s.vectors_of, s.n, self.ann_threads, current, check
            ):
                return

    # ------------------------------------------------------------------ state blobs
    # State blobs (sessions, settings) change far more often than vectors, so they live outside
    # the generations in ``<path>/state/`` and each is written atomically on its own: adding a
    # chat message must not rewrite the index.
    def get_state(self, key: str) -> bytes | None:
        check_state_key(key)
        with self._wlock:
            if key in self._state:
                return self._state[key]
            if self.path is None:
                return None
            f = self.path / "state" / key
            try:
                if not f.is_file():
                    return None
                data = f.read_bytes()
            except OSError as exc:
                raise StoreError(f"cannot read state {key!r}: {exc.strerror or exc}") from exc
            self._state[key] = data
            return data

    def state_keys(self, prefix: str) -> list[str]:
        """The keys of non-empty state blobs directly under ``prefix/`` (sorted): the
        sessions rebuild their index from these when it is damaged (a deleted session's blob
        is ``b""`` and is not listed)."""
        check_state_key(prefix)
        with self._wlock:
            keys = {k for k, v in self._state.items() if k.startswith(prefix + "/") and v}
            gone = {k for k, v in self._state.items() if not v}
            if self.path is not None:
                d = self.path / "state" / prefix
                try:
                    for e in os.scandir(d):
                        if e.is_file() and not e.name.startswith(".") and e.stat().st_size:
                            keys.add(f"{prefix}/{e.name}")
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise StoreError(f"cannot list state {prefix!r}: {exc.strerror}") from exc
            return sorted(keys - gone)

    def put_state(self, key: str, value: bytes) -> None:
        check_state_key(key)
        with self._wlock:
            if self.path is not None:
                f = self.path / "state" / key
                tmp = f.with_name(f".{f.name}.tmp-{os.getpid()}")
                try:
                    f.parent.mkdir(parents=True, exist_ok=True)
                    tmp.write_bytes(value)
                    _fsync_file(tmp)
                    os.replace(tmp, f)
                except OSError as exc:
                    with contextlib.suppress(OSError):  # (EROFS even for a missing file)
                        tmp.unlink(missing_ok=True)
                    raise StoreError(f"cannot write state {key!r}: {exc.strerror or exc}") from exc
            self._state[key] = bytes(value)

    # ------------------------------------------------------------------ lifecycle
    def refresh(self) -> bool:
        """Pick up a generation another process committed (only with no unsaved changes).
        Returns whether a newer generation was loaded."""
        if self.path is None:
            return False
        current = self._current_file
        if current is None:  # (a str kept: building the Path was 2/3 of a no-change call)
            current = self._current_file = os.path.join(self.path, "CURRENT")
        try:  # CURRENT is replaced, never rewritten: an unchanged stat is an unchanged pointer
            st = os.stat(current)
            seen: tuple[int, ...] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            seen = None
        if seen is not None and seen == self._current_seen:
            return False  # (a reader process asks before every call: ~5 us instead of ~70)
        with self._wlock:
            if self._dirty:
                return False
            on_disk = _read_current(self.path)
            mine = self._committed["generation"] if self._committed else 0
            if on_disk is None or on_disk[1] in (mine, self._recovered_from):
                self._current_seen = seen
                return False
            self._open_path(clean=False)
            self._current_seen = None  # (read again at the next call: the open may have raced)
            return True

    def close(self) -> None:
        """Stop and join every background thread, save pending changes (and the graph as far
        as the worker got: the next open resumes it from there) and release the writer lock.

        The worker stops after the chunk it is adding (a fraction of a second); the graph it
        built so far is saved with the rows, so an ingest that closes before the build ends
        still leaves a graph that the next process searches and extends. The store stays
        usable: the next write, search or :meth:`wait_ann` resumes the graph work."""
        self._paused = True
        self._stop_background()
        with self._wlock:
            try:
                self.save()
            finally:
                if self._flock is not None:
                    self._flock.release()

    def _stop_background(self) -> None:
        """Stop every thread this store started and wait for them: the graph's worker and
        loader (after their current chunk), the orphans' codes, the checksum passes.

        Why join rather than leave daemon threads: the graph threads call into usearch
        (C++). At interpreter exit a daemon thread that returns from such a call is ended by
        ``pthread_exit``, whose unwinding through C++ frames aborts the whole process
        (SIGABRT, ``terminate called without an active exception``) after the user's work
        succeeded."""
        self._halt.set()
        try:
            me = threading.current_thread()
            for _ in range(3):  # (a loader that was running may have started a worker)
                threads = [self._ann_loader, self._ann_worker, *self._threads]
                for t in threads:
                    if t is not None and t is not me:
                        t.join()
                ann = self._ann
                if ann is not None:
                    ann.join_background()
                if not any(t is not None and t.is_alive() for t in threads):
                    break
            self._threads = [t for t in self._threads if t.is_alive()]
        finally:
            self._halt.clear()

    def _resume(self) -> None:
        """Undo :meth:`close`'s pause: the store is in use again."""
        if self._paused:
            self._paused = False
            self._ann_kick()

    def _at_exit(self) -> None:
        """The interpreter is exiting (see :func:`_stop_all_at_exit`): stop and join every
        background thread, then save the graph as far as it got, when that needs no wait and
        no unsaved rows (a store not closed never saves its writes by itself): the next open
        uses it and resumes the build instead of starting over."""
        self._paused = True
        self._stop_background()
        if self.path is None or self._dirty or not self._ann_unsaved():
            return
        if not self._wlock.acquire(timeout=1.0):
            return  # (a thread left inside a write: nothing to save safely)
        try:
            if self._dirty or not self._ann_unsaved():
                return
            try:
                self._begin_write(timeout=0.0)
            except TreehopError:
                return  # another writer holds the index: it keeps its own graph
            self._dirty = self._ann_unsaved()
            with contextlib.suppress(TreehopError):
                self.save()
        finally:
            if self._flock is not None:
                self._flock.release()
            self._wlock.release()

    # ------------------------------------------------------------------ persistence
    def save(self) -> None:
        """Commit the writes since the last save as a new generation (see the module doc).

        On failure (disk full, read-only directory, ...) the partial files are discarded, the
        store reverts to the last committed generation (so memory equals disk), the writer
        lock is released, and :class:`~treehop.errors.StoreError` is raised.
        """
        if self.path is None:
            return
        with self._wlock:
            if not self._dirty and self._ann_unsaved():
                # the background worker grew the graph since it was saved: a generation
                # without new rows persists it (under the writer lock, like any save)
                self._begin_write()
                self._dirty = self._ann_unsaved()
            if not self._dirty:
                if self._flock is not None and self._flock.held:
                    self._flock.release()
                return
            assert self._flock is not None and self._flock.held
            try:
                self._commit()
            except OSError as exc:
                self._abort()
                raise StoreError(
                    f"saving the index at {self.path} failed "
                    f"({exc.strerror or exc}); it was reverted to the last committed state"
                ) from exc
            except BaseException:
                self._abort()
                raise
            self._flock.release()

    def _abort(self) -> None:
        assert self.path is not None
        try:
            for tmp in self.path.glob(".tmp-*"):
                _remove(tmp)
            self._snap = _empty_snap(int(self._dim or 0))
            self._committed = None
            self._committed_snap = None
            self._ann_stop()
            self._ann = None
            self._lex = LexicalIndex() if self._use_lexical else None
            self._open_path(clean=False)
            _discard_uncommitted(self.path, self._committed)
        except (OSError, IndexCorruptError):  # pragma: no cover - the disk vanished too
            pass
        finally:
            self._dirty = False
            if self._flock is not None:
                self._flock.release()

    def _commit(self) -> None:
        """Write generation ``gen``: append the new rows' bytes, save the HNSW and BM25
        indexes if they changed, write the lookup arrays, then the manifest and ``CURRENT``."""
        assert self.path is not None
        s = self._snap
        if s.nodes_guard is not None:
            # Checksums are recomputed over whole files below (compaction, too many extents)
            # and the next snapshot carries no guard: every byte must be verified first.
            s.nodes_guard.verify_all()
        path = self.path
        prev = self._committed
        gen = (prev["generation"] if prev else 0) + 1
        dead = s.n - s.live
        compact = prev is None or (dead > s.live and dead > 1000)
        if compact:
            self._ann_stop()  # the worker must not add rows while they are renumbered
            if self._ann is None and self._ann_file is not None:
                self._ann = self._load_ann_or_rebuild()  # its labels are renumbered below
        old_to_new: IntArray | None = None
        if compact:
            s, old_to_new = self._compacted(s)
            self._epoch += 1
            files: dict[str, dict[str, Any]] = {}
        else:
            assert prev is not None
            files = {
                k: {"size": v["size"], "extents": list(v["extents"])}
                for k, v in prev["files"].items()
            }
        _append_segments(
            path / f"data-{self._epoch:06d}", files, _tail_bytes(s, 0 if compact else s.n_base)
        )
        ann = self._ann
        if ann is not None and old_to_new is not None:
            # the graph's labels follow the compaction's renumbering (the file is kept); no
            # search maps labels meanwhile
            ann.lock.acquire_write()
            try:
                ann.row = np.where(ann.row >= 0, old_to_new[np.clip(ann.row, 0, None)], -1)
                ann.upto = int(np.count_nonzero(old_to_new[: ann.upto] >= 0)) if ann.upto else 0
                ann.recent.clear()
            finally:
                ann.lock.release_write()
        ann_entry = self._save_ann(gen, ann, s)
        lex_entry = self._save_lexical(gen, s, prev, old_to_new)
        index_name = f"index-{gen:06d}.bin"
        index_meta = _write_arrays(path / index_name, _lookup_arrays(s, ann_entry))
        manifest: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "generation": gen,
            "epoch": self._epoch,
            "dimension": self._dim,
            "rows": s.n,
            "live": s.live,
            "files": files,
            "index": {"file": index_name, **index_meta},
            "lexical": lex_entry,
            "ann": (
                {k: v for k, v in ann_entry.items() if k not in ("row", "orphans")}
                if ann_entry
                else None
            ),
            "meta": dict(self._meta),
        }
        _write_manifest(path, manifest)
        self._lex_dirty = False
        self._dirty = False
        self._open_manifest(manifest, verify=False, own=True)
        _cleanup(path, keep=2)
        self._ann_kick()

    def _save_lexical(
        self, gen: int, s: _Snap, prev: dict[str, Any] | None, old_to_new: IntArray | None
    ) -> dict[str, Any] | None:
        """The manifest entry of the BM25 index. Its directory is rewritten only when rows
        were renumbered (a compaction) or the rows changed since it was written exceed
        ``_LEX_REPLAY`` (see :func:`_lexical_delta_small`); smaller changes are replayed
        from the node texts when it is loaded."""
        assert self.path is not None
        lex_entry: dict[str, Any] | None = prev.get("lexical") if prev else None
        lex = self._lex
        if (
            lex is None
            and self._use_lexical
            and lex_entry is not None
            and (old_to_new is not None or not _lexical_delta_small(lex_entry, s))
        ):
            # writes left it unloaded, but its rows are renumbered or the rows it lacks are
            # too many to replay at every load: load it (replaying them) and rewrite it
            lex = self.lexical
        if lex is not None and old_to_new is not None:
            lex.remap(old_to_new)
            self._lex_dirty = True
        if lex is None:
            return lex_entry if self._use_lexical else None
        if lex_entry is not None and (
            not self._lex_dirty or (old_to_new is None and _lexical_delta_small(lex_entry, s))
        ):
            # the saved index plus the rows written since (replayed from the node texts at
            # load) is this index: keep the file instead of rewriting every posting
            return lex_entry
        name = f"lexical-{gen:06d}"
        tmp = self.path / f".tmp-{name}"
        _remove(tmp)
        lex.save(tmp)
        sums = {}
        for f in sorted(tmp.iterdir()):
            _fsync_file(f)
            size = f.stat().st_size
            sums[f.name] = _ck.sized(size, _ck.file_digest(f, 0, size))
        _fsync_dir(tmp)
        os.replace(tmp, self.path / name)
        return {"dir": name, "files": sums, "rows": s.n, "documents": len(lex)}

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
            row, orphans = self._load_ann_rows()
            return {**old, "row": row, "orphans": orphans}
        ann.lock.acquire_read()  # the worker adds no chunk meanwhile: count, rows and file agree
        try:
            count, upto, row, orphans = ann.count, ann.upto, ann.row.copy(), ann.orphans.copy()
            swept = ann.swept
            saved = self._ann_file
            if saved is not None and count - saved[1] < max(self.ann_catch_up, count // 10):
                old = self._committed["ann"] if self._committed else {}
                kept = saved[1]
                return {
                    **(old or {}),
                    "row": row[:kept],
                    "orphans": orphans[orphans < kept],
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
        }

    def _ann_unsaved(self) -> bool:
        """Whether the graph grew past the saved file by the amount that rewrites it."""
        ann, saved = self._ann, self._ann_file
        if ann is None or self.path is None:
            return False
        if saved is None:
            return ann.count > 0
        return ann.count - saved[1] >= max(self.ann_catch_up, ann.count // 10)

    def _load_ann_rows(self) -> tuple[IntArray, IntArray]:
        """The committed graph's label rows and orphan labels."""
        assert self._committed is not None and self.path is not None
        kept, self._ann_rows_open = self._ann_rows_open, None
        if kept is not None and kept[0] == self._committed["index"]["file"]:
            return kept[1], kept[2]
        arrays = _read_arrays(
            self.path / self._committed["index"]["file"], self._committed["index"], False
        )
        return (
            np.array(arrays["ann_row"], dtype=np.int64),
            np.array(arrays["ann_orphan"], dtype=np.int64),
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
            if self.verify and not self._ann_file_ok(f, entry):
                raise IndexCorruptError(f"{f}: checksum mismatch")
            row, orphans = self._load_ann_rows()
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
            )
            warm, self._warm_orphans = self._warm_orphans, None
            if warm is not None:  # (a graph opened after the open's warm-up)
                ann.adopt_orphans(warm)
            return ann
        except (OSError, ValueError, TypeError) as exc:
            raise IndexCorruptError(f"{f}: {exc}") from exc

    def _ann_file_ok(self, f: Path, entry: Mapping[str, Any]) -> bool:
        """Whether the graph file matches its checksum: the open's early answer for this
        entry when there is one (waiting for it), else computed now."""
        pre, self._ann_pre = self._ann_pre, None
        if pre is not None and pre[0] == entry:
            pre[1].join()
            if pre[2]:
                got = pre[2][0]
                if isinstance(got, Exception):
                    raise got
                return bool(got)
        return _ck.whole_file_ok(f, int(entry["size"]), entry)

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
            self.verify is not True
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
                box.append(_ck.whole_file_ok(f, size, entry))
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

    def _compacted(self, s: _Snap) -> tuple[_Snap, IntArray]:
        """The live rows renumbered densely, all in the tail (the save rewrites them)."""
        live = np.flatnonzero(s.alive[: s.n])
        old_to_new = np.full(s.n, -1, dtype=np.int64)
        old_to_new[live] = np.arange(live.size, dtype=np.int64)
        m = live.size
        cols: dict[str, npt.NDArray[Any]] = {}
        for name, arr in s.cols.items():
            cols[name] = np.array(arr[live], copy=True)
        uris = [u.encode() for u in s.uris_of(live)]
        nodes_b = s.node_jsons(live)
        cols["uri_end"] = np.cumsum([len(u) for u in uris], dtype=np.int64)
        cols["node_end"] = np.cumsum([len(b) for b in nodes_b], dtype=np.int64)
        if m == s.n and not s.n_base:
            tail = s.tail_vecs  # (every row alive, all unsaved: the blocks as they are)
        elif m == s.n:
            parts = [np.asarray(s.base_vecs), *s.tail_vecs.parts(s.n - s.n_base)]
            tail = _Tail.of(np.concatenate(parts))
        else:
            vecs = s.vectors_of(live) if m else np.zeros((0, s.dim), np.float32)
            tail = _Tail.of(np.ascontiguousarray(vecs))

        def remap(a: IntArray) -> IntArray:
            out = old_to_new[a]
            return out[out >= 0]

        pr = s.parent_row[live]
        parent_row = np.where(pr >= 0, old_to_new[np.clip(pr, 0, None)], -1)
        keep_t = s.alive[s.tag_row]
        new = _Snap(
            gen=s.gen,
            n=m,
            n_base=0,
            live=m,
            dim=s.dim,
            cols=cols,
            base_vecs=np.zeros((0, s.dim), np.float32),
            tail_vecs=tail,
            base_uris=np.zeros(0, np.uint8),
            base_nodes=np.zeros(0, np.uint8),
            tail_uris=uris,
            tail_nodes=nodes_b,
            alive=np.ones(m, dtype=bool),
            by_hash=remap(s.by_hash),
            by_uri=remap(s.by_uri),
            by_parent=remap(s.by_parent),
            parent_row=parent_row,
            tag_hash=s.tag_hash[keep_t],
            tag_row=old_to_new[s.tag_row[keep_t]],
        )
        return new, old_to_new

    # ------------------------------------------------------------------ opening
    def _open_path(self, clean: bool = True) -> None:
        """Load the newest complete generation at ``self.path`` (or start empty if there is
        no index there at all). ``clean``: remove leftovers of interrupted saves when no other
        writer is active."""
        path = self.path
        assert path is not None
        if path.exists() and not path.is_dir():
            raise StoreError(f"index path {path} exists and is not a directory")
        if not path.exists():
            return
        lock = self._flock
        if clean and lock is not None and not lock.held and os.access(path, os.W_OK):
            try:
                got = lock.try_acquire()
            except StoreError:  # a read-only lock file: open read-only
                got = False
            if got:
                try:
                    self._open_committed(path, repair=True)
                finally:
                    if not self._dirty:
                        lock.release()
                return
        for attempt in range(3):
            # Without the lock a writer may commit while this open reads, and its clean-up
            # removes the files of generations two commits old: a failure while CURRENT
            # moved on is that race (the open is retried on the new generation), a failure
            # while it still names the same generation is damage.
            before = _read_current(path)
            try:
                self._open_committed(path, repair=False)
                return
            except IndexCorruptError:
                if attempt == 2 or before is None or _read_current(path) == before:
                    raise

    def _open_committed(self, path: Path, repair: bool) -> None:
        cur = _read_current(path)
        legacy = _legacy_current(path)
        if cur is None and legacy is not None:
            self._migrate_legacy(path, legacy)
            return
        manifest = None
        errors: list[str] = []
        if cur is not None:
            try:
                manifest = _read_manifest(path, cur[0], cur[2])
            except IndexCorruptError as exc:
                errors.append(str(exc))
        if manifest is None:
            # CURRENT is missing or damaged, or names a damaged manifest: the newest manifest
            # that reads back intact is the newest complete generation (a manifest is written
            # only after all of its data is synced). Its data is then verified in full; data
            # that fails is an error, not a reason to fall back silently to older data.
            for name in _manifests(path):
                try:
                    manifest = _read_manifest(path, name, None)
                    break
                except IndexCorruptError as exc:
                    errors.append(str(exc))
            if manifest is None:
                if errors or (path / "CURRENT").exists() or _legacy_current(path) is not None:
                    raise IndexCorruptError(
                        f"no complete generation of the index at {path} could be read: "
                        + "; ".join(errors[:3] or ["CURRENT is damaged"])
                    )
                if repair:
                    _cleanup(path, keep=2)  # leftovers of a first save that never committed
                return
            record = _rollback(path, cur, manifest, errors)
            if record is not None and self.strict:
                raise IndexRecoveryError(
                    f"{record.reason}; a lenient open would use generation {record.opened} "
                    f"and lose {record.lost} (strict=True)",
                    record,
                )
            self._open_manifest(manifest, verify=True, eager=True)
            if record is not None:
                self._recovered(record)
            if repair:
                _write_current(path, manifest["generation"])
        else:
            self._open_manifest(manifest, verify=self.verify)
        if repair:
            _cleanup(path, keep=2, current=manifest["generation"])

    def _recovered(self, record: RecoveryRecord) -> None:
        """Keep ``record`` (``self.recovery``) and warn: a rollback is never silent."""
        self.recovery = record
        self._recovered_from = record.expected
        warnings.warn(
            f"treehop: {record.reason}; opened generation {record.opened}, lost {record.lost}",
            RecoveryWarning,
            stacklevel=4,
        )

    def _open_manifest(
        self,
        m: dict[str, Any],
        verify: bool | Literal["background"],
        own: bool = False,
        eager: bool = False,
    ) -> None:
        """Map the files of manifest ``m`` and publish them as the current snapshot. ``own``:
        ``m`` was just committed from this store's memory, whose HNSW and BM25 indexes
        already match it (else both are reloaded from disk on first use). ``eager``: verify
        the node texts now too (a generation recovered without ``CURRENT`` must prove whole
        before it is used)."""
        assert self.path is not None
        path = self.path
        if m.get("format_version") not in READABLE_FORMATS:
            raise IndexCorruptError(f"{path}: unsupported format {m.get('format_version')}")
        if not own:
            self._start_ann_precheck(m)
        try:
            n, live, dim = int(m["rows"]), int(m["live"]), int(m["dimension"] or 0)
            epoch = int(m["epoch"])
            data = path / f"data-{epoch:06d}"
            maps = _map_segments(data, m["files"], n, dim)
            if verify:
                names = _SMALL_FILES
                if verify is True:
                    names = _APPEND_FILES if eager else _EAGER_FILES
                _verify_segments(data, m["files"], maps, names)
            nodes_file = _PFile(data / "nodes.bin") if n and hasattr(os, "pread") else None
            guard = (
                _BlobGuard(
                    data / "nodes.bin",
                    maps["nodes"],
                    m["files"]["nodes"]["extents"],
                    nodes_file,
                )
                if verify is True and not eager and maps["nodes"].size
                else None
            )
            idx = _read_arrays(path / m["index"]["file"], m["index"], bool(verify))
        except (KeyError, TypeError, ValueError, OSError) as exc:
            raise IndexCorruptError(f"cannot read the index at {path}: {exc}") from exc
        base_vecs = maps["vectors"].reshape(n, dim) if n else np.zeros((0, dim), np.float32)
        cols = {name: np.array(maps[name], copy=True) for name in _COLUMNS}
        self._ann_rows_open = None
        wanted = self.ann_min_rows is not None and live >= self.ann_min_rows
        if not own and wanted and (m.get("ann") or {}).get("kind") == _ann.KIND:
            self._ann_rows_open = (
                str(m["index"]["file"]),
                np.array(idx["ann_row"], dtype=np.int64),
                np.array(idx["ann_orphan"], dtype=np.int64),
            )
        _check_structure(path, n, live, cols, maps, idx)
        self._snap = _Snap(
            gen=int(m["generation"]),
            n=n,
            n_base=n,
            live=live,
            dim=dim,
            cols=cols,
            base_vecs=base_vecs,
            tail_vecs=_Tail(dim),
            base_uris=maps["uris"],
            base_nodes=maps["nodes"],
            tail_uris=[],
            tail_nodes=[],
            alive=np.array(idx["alive"], dtype=bool),
            by_hash=np.array(idx["by_hash"]),
            by_uri=np.array(idx["by_uri"]),
            by_parent=np.array(idx["by_parent"]),
            parent_row=np.array(idx["parent_row"]),
            tag_hash=np.array(idx["tag_hash"]),
            tag_row=np.array(idx["tag_row"]),
            nodes_guard=guard,
            nodes_file=nodes_file,
        )
        if guard is not None:
            t = threading.Thread(
                target=guard.verify_rest,
                args=(self._halt.is_set,),
                name="treehop-verify",
                daemon=True,
            )
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
            t.start()
        self._dim = dim or self._dim
        self._epoch = epoch
        self._meta.clear()
        self._meta.update(m.get("meta") or {})
        self._state = {}
        self._dirty = False
        self._committed = m
        self._committed_snap = self._snap_v
        self._corrupt = None
        if verify == "background" and n:
            self._start_verifier(m, data, maps)
        self._node_cache.clear()
        self._md_cache.clear()
        self._warm_orphans = None
        opening = None if own else self._ann_rows_open
        warm = None if own else _start_warm(self._snap_v, opening and opening[1:])
        self._follow_indexes(m, live, own)
        if warm is not None:
            self._warm_orphans = warm()
            ann = self._ann
            if ann is not None and self._warm_orphans is not None:
                ann.adopt_orphans(self._warm_orphans)
                self._warm_orphans = None  # (else kept for a graph that opens later)

    def _follow_indexes(self, m: dict[str, Any], live: int, own: bool) -> None:
        """Point the HNSW and BM25 state at manifest ``m``: kept as they are when ``m`` was
        committed from this store's memory, else dropped (BM25 reloads on first use; the
        HNSW graph opens memory-mapped now, after its checksum, or in a thread with
        ``verify="background"``; a graph lagging the rows is caught up in the background)."""
        ann = m.get("ann") or {}
        usable = ann.get("kind") == _ann.KIND
        self._ann_file = (ann["file"], int(ann["count"]), int(ann["upto"])) if usable else None
        if not own:
            self._ann_stop()
            self._ann = None
            self.ann_damaged = None
            self._lex = None
            if usable and self.ann_min_rows is not None and live >= self.ann_min_rows:
                if self.verify == "background":
                    self._start_ann_load()
                else:
                    self._ann = self._load_ann_or_rebuild()
            # a saved graph lagging the rows (a build that close() or the exit hook saved
            # part-way), or a damaged one, is caught up in the background. (An index with no
            # graph at all waits for a write: reader processes would each build it.)
            if self._ann is not None or self.ann_damaged is not None:
                self._ann_kick()
        self._lex_dirty = False
        self._lex_scale_cache.clear()

    def _start_verifier(
        self, m: dict[str, Any], data: Path, maps: Mapping[str, npt.NDArray[Any]]
    ) -> None:
        """Check the large files' checksums and the vectors' finiteness in a thread: the index
        opens at once, and any damage found makes every later call raise."""

        def run() -> None:
            try:
                _verify_segments(data, m["files"], maps, _LARGE_FILES)
            except IndexCorruptError as exc:
                if self._committed is m:
                    self._corrupt = exc
            except (OSError, ValueError) as exc:
                if self._committed is m:
                    self._corrupt = IndexCorruptError(f"cannot verify {data}: {exc}")

        self._verifier = threading.Thread(target=run, name="treehop-verify", daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [self._verifier]
        self._verifier.start()

    def _load_lexical(self) -> LexicalIndex:
        """The saved BM25 index brought up to the current snapshot (the committed generation
        and any write made while it was not loaded), or one rebuilt from the node texts when
        it is missing, damaged, or was built by another tokenizer (queries would not match
        its tokens)."""
        c = self._snap if self._committed_snap is not None else None
        entry = self._committed.get("lexical") if self._committed else None
        if entry and self.path is not None and c is not None:
            d = self.path / entry["dir"]
            try:
                ok = all(
                    (d / name).is_file()
                    and (d / name).stat().st_size == size
                    and (not self.verify or _ck.file_digest(d / name, 0, size, algo) == value)
                    for name, (size, value, algo) in (
                        (k, _ck.parse_sized(v)) for k, v in entry["files"].items()
                    )
                )
                if ok:
                    index = LexicalIndex.load(d)
                    self._replay_lexical(index, c, int(entry.get("rows", c.n)))
                    if index.row_bound <= c.n and len(index) == c.live:
                        return index
            except (IndexCorruptError, OSError, StoreError):
                pass
        s = self._snap
        index = LexicalIndex()
        rows = np.flatnonzero(s.alive[: s.n])
        if rows.size:
            index.upsert(rows, [self._node(s, int(r)).lexical_text() for r in rows])
        self._lex_dirty = True
        return index

    def _replay_lexical(self, index: LexicalIndex, c: _Snap, base_rows: int) -> None:
        """Bring a BM25 index saved when the store had ``base_rows`` rows up to snapshot
        ``c``: rows are immutable, so the rows it holds that are dead now were deleted since,
        and the live rows from ``base_rows`` on were written since."""
        if base_rows > c.n:
            raise IndexCorruptError(f"the lexical index of {self.path} is ahead of its rows")
        old = np.arange(base_rows, dtype=np.int64)
        gone = old[index.contains(old) & ~c.alive[:base_rows]]
        if gone.size:
            index.delete(gone)
        new = np.flatnonzero(c.alive[base_rows : c.n]) + base_rows
        if new.size:
            index.upsert(new, [self._node(c, int(r)).lexical_text() for r in new])

    def _migrate_legacy(self, path: Path, gen: str) -> None:
        """Read a format-1 index (``gen-NNNNNN/`` with ``nodes.json``) and rewrite it in this
        format under the writer lock; the old generations are removed afterwards."""
        gdir = path / gen
        try:
            meta = json.loads((gdir / "meta.json").read_text())
            vectors = np.load(gdir / "vectors.npy", allow_pickle=False)
            nodes = _NODES.validate_json((gdir / "nodes.json").read_bytes())
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"cannot read index generation {gdir}: {exc}") from exc
        if meta.get("format_version") != LEGACY_FORMAT_VERSION:
            raise IndexCorruptError(f"{gdir}: unsupported format {meta.get('format_version')}")
        if vectors.ndim != 2 or vectors.shape[0] != len(nodes) or meta.get("count") != len(nodes):
            raise IndexCorruptError(f"{gdir}: {len(nodes)} nodes but {vectors.shape[0]} vectors")
        if not np.isfinite(vectors).all():
            raise IndexCorruptError(f"{gdir}: vectors contain NaN or infinite values")
        self._dim = meta.get("dimension") or int(vectors.shape[1])
        self._snap = _empty_snap(int(self._dim or 0))
        self._committed = None
        self._committed_snap = None
        self._meta.clear()
        self._meta.update(meta.get("meta") or {})
        if nodes:
            self._begin_write()
            try:
                blobs = [_node_json(n) for n in nodes]
                self._apply(np.zeros(0, np.int64), list(nodes), blobs, vectors.astype(np.float32))
                self.save()
            except BaseException:
                if self._flock is not None:
                    self._flock.release()
                raise
            for old in path.glob("gen-*"):
                shutil.rmtree(old, ignore_errors=True)


_LIVE: weakref.WeakSet[EmbeddedStore] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def _stop_all_at_exit() -> None:
    """Stop and join the background threads of every store still alive when the
    interpreter exits (:meth:`EmbeddedStore._at_exit`), whether or not it was closed: see
    :meth:`EmbeddedStore._stop_background` for the abort this prevents.

    Registered with ``threading``'s exit hooks where there are (CPython 3.9+): they run
    before the interpreter tears down its threads, and this one (registered after
    ``concurrent.futures`` was imported) before the thread pools refuse new work, which the
    graph's save uses. ``atexit`` elsewhere."""
    _ann.set_exiting()  # (a thread still writing after this starts no new graph thread)
    with _LIVE_LOCK:
        stores = list(_LIVE)
        _LIVE.clear()
    for store in stores:
        with contextlib.suppress(TreehopError, OSError, RuntimeError):
            store._at_exit()


_register_exit = getattr(threading, "_register_atexit", None)
if callable(_register_exit):
    _register_exit(_stop_all_at_exit)
else:  # pragma: no cover - not CPython
    atexit.register(_stop_all_at_exit)


# ---------------------------------------------------------------------- helpers
def _empty_snap(dim: int) -> _Snap:
    return _Snap(
        gen=0,
        n=0,
        n_base=0,
        live=0,
        dim=dim,
        cols={name: np.zeros(0, dtype=dt) for name, dt in _COLUMNS.items()},
        base_vecs=np.zeros((0, dim), np.float32),
        tail_vecs=_Tail(dim),
        base_uris=np.zeros(0, np.uint8),
        base_nodes=np.zeros(0, np.uint8),
        tail_uris=[],
        tail_nodes=[],
        alive=np.zeros(0, dtype=bool),
        by_hash=np.zeros(0, np.int64),
        by_uri=np.zeros(0, np.int64),
        by_parent=np.zeros(0, np.int64),
        parent_row=np.zeros(0, np.int64),
        tag_hash=np.zeros(0, np.uint64),
        tag_row=np.zeros(0, np.int64),
    )


_LEX_THREAD_ROWS = 1024
"""Appended rows from which a write's BM25 postings go to a thread of their own (below it,
starting a thread costs more than the overlap gains)."""


def _lex_write(lex: LexicalIndex, kill: IntArray, new_rows: IntArray, nodes: list[Node]) -> None:
    """The BM25 side of a write: rows ``kill`` out, ``nodes`` in at ``new_rows``."""
    if kill.size:
        lex.delete(kill)
    if nodes:
        lex.upsert(new_rows, [n.lexical_text() for n in nodes])


def _lex_undo(
    lex: LexicalIndex | None,
    s: _Snap,
    kill: IntArray,
    new_rows: IntArray,
    node_of: Callable[[_Snap, int], Node],
) -> None:
    """Take back a :func:`_lex_write` whose snapshot was not published (its steps raised):
    the new rows' documents out, the rows it removed (still alive in ``s``) back in, so
    the BM25 index matches the snapshot readers keep seeing."""
    if lex is None:
        return
    lex.delete(new_rows)
    if kill.size:
        rows = kill[kill < s.n]
        lex.upsert(rows, [node_of(s, r).lexical_text() for r in rows.tolist()])


def _append_rows(
    s: _Snap, nodes: Sequence[Node], blobs: Sequence[bytes], vecs: F32, dim: int
) -> tuple[dict[str, npt.NDArray[Any]], _Tail, U64Array]:
    """The columns and tail vectors with ``nodes`` appended after row ``s.n`` (columns grown by
    half when full, so that appends are amortised O(1) per row; vectors in blocks, see
    :class:`_Tail`), and the new rows' URI hashes. The snapshot's own arrays past ``n`` may
    be written: no published snapshot reads them."""
    k = len(nodes)
    n0, n1 = s.n, s.n + k
    cols = s.cols
    cap = next(iter(cols.values())).shape[0]
    if n1 > cap:
        new_cap = max(n1, int(cap * 1.5) + 64)
        grown = {}
        for name, arr in cols.items():
            g = np.empty(new_cap, dtype=arr.dtype)  # (rows past n are written before use)
            g[:n0] = arr[:n0]
            grown[name] = g
        cols = grown
    uri_b = [n.uri.encode() for n in nodes]
    start_u = int(cols["uri_end"][n0 - 1]) if n0 else 0
    start_n = int(cols["node_end"][n0 - 1]) if n0 else 0
    new_h = _hashes([n.uri for n in nodes])
    cols["uri_hash"][n0:n1] = new_h
    # Siblings share a parent: each distinct parent URI is hashed once.
    parents = [n.parent_uri for n in nodes]
    parent_h = {p: _h64(p) if p is not None else 0 for p in dict.fromkeys(parents)}
    cols["parent_hash"][n0:n1] = np.fromiter(map(parent_h.__getitem__, parents), np.uint64, k)
    cols["uri_end"][n0:n1] = start_u + np.cumsum([len(b) for b in uri_b])
    cols["node_end"][n0:n1] = start_n + np.cumsum([len(b) for b in blobs])
    cols["chunk"][n0:n1] = [-1 if n.chunk_index is None else n.chunk_index for n in nodes]
    cols["leaf"][n0:n1] = [n.is_leaf for n in nodes]
    cols["level"][n0:n1] = [n.level for n in nodes]
    cols["ctype"][n0:n1] = [_CTYPE_CODE[n.context_type] for n in nodes]
    t0 = n0 - s.n_base
    tail = s.tail_vecs.with_rows(t0, vecs)
    # an earlier write that failed half-way may have left entries past ``n``
    del s.tail_uris[t0:]
    del s.tail_nodes[t0:]
    s.tail_uris.extend(uri_b)
    s.tail_nodes.extend(blobs)
    return cols, tail, new_h


def _merged_by_uri(
    tmp: _Snap, kept_uri: IntArray, new_rows: IntArray, nodes: Sequence[Node]
) -> IntArray:
    """The URI-sorted rows with the new rows merged in: a full sort when many rows are new,
    else one binary search (on lazily decoded URIs) per new row."""
    k = len(nodes)
    if not k:
        return kept_uri
    new_uris = [n.uri for n in nodes]
    if k * 8 > kept_uri.size:
        rows_all = np.concatenate([kept_uri, new_rows])
        keys = tmp.uris_of(kept_uri) + new_uris
        return rows_all[np.argsort(np.array(keys, dtype=object), kind="stable")]
    order = sorted(range(k), key=new_uris.__getitem__)
    view = _UriView(tmp, kept_uri)
    # The new URIs in order, each searched from the last one's position on; one that sorts
    # before the stored URI there lands at that position with one comparison. A bulk
    # ingest's batch sorts mostly between two neighbours (a new subtree), so nearly every
    # row costs one comparison instead of a binary search of ~20 decoded URIs (the largest
    # part of a 300k-row bulk upsert's time, in Python).
    pos: list[int] = []
    lo, at, there = 0, -1, ""
    size = len(view)
    for i in order:
        x = new_uris[i]
        if lo < size:
            if at != lo:
                at, there = lo, view[lo]
            if x >= there:
                lo = bisect.bisect_right(view, x, lo)
        pos.append(lo)
    return np.insert(kept_uri, pos, new_rows[order])


def _linked_parents(
    tmp: _Snap,
    old_parent_row: IntArray,
    by_parent: IntArray,
    nodes: Sequence[Node],
    new_h: U64Array,
    n0: int,
) -> IntArray:
    """Each row's parent row: new rows find their parent; rows written before their parent
    (or before it was replaced) link to the new row; links to dead rows are cut. Each
    candidate's stored parent URI is compared, so a hash collision cannot link a row to the
    wrong parent."""
    n1 = tmp.n
    alive = tmp.alive
    parent_row = np.full(n1, -1, dtype=np.int64)
    parent_row[:n0] = old_parent_row[:n0]
    linked = parent_row >= 0
    parent_row[linked & ~alive[np.where(linked, parent_row, 0)]] = -1
    if not nodes:
        return parent_row
    has = [i for i, nd in enumerate(nodes) if nd.parent_uri is not None]
    if has:
        # Siblings share a parent: each distinct parent URI is looked up once.
        parents = [nodes[i].parent_uri or "" for i in has]
        distinct = list(dict.fromkeys(parents))
        row_of = dict(zip(distinct, tmp.lookup(distinct).tolist(), strict=True))
        parent_row[n0 + np.array(has, dtype=np.int64)] = np.fromiter(
            map(row_of.__getitem__, parents), np.int64, len(parents)
        )
    pk = tmp.cols["parent_hash"][by_parent]
    lo = np.searchsorted(pk, new_h, side="left")
    hi = np.searchsorted(pk, new_h, side="right")
    for i in np.flatnonzero(hi > lo):
        uri = nodes[int(i)].uri
        for r in by_parent[lo[i] : hi[i]]:
            if _stored_parent(tmp, int(r), nodes, n0) == uri:
                parent_row[r] = n0 + int(i)
    return parent_row


def _merged_tags(
    s: _Snap, alive: BoolArray, nodes: Sequence[Node], n0: int
) -> tuple[U64Array, IntArray]:
    """The (tag-label hash, row) lookup without dead rows, with the new rows' labels merged."""
    keep_t = alive[s.tag_row]
    th, tr = s.tag_hash[keep_t], s.tag_row[keep_t]
    # Tags repeat across a batch's nodes: each distinct tag is labelled, and each distinct
    # label hashed, once; the (row, label) pairs are the nodes' label sets, flattened with
    # C-level passes (a set per node cost more than the rest together). Entries with equal
    # hash and row are equal, so the order of a node's labels does not show.
    per_node = [n.tags for n in nodes]
    flat_tags = list(itertools.chain.from_iterable(per_node))
    if flat_tags:
        tag_lab = dict.fromkeys(flat_tags, 0)
        lab_num: dict[str, int] = {}
        lab_hash: list[int] = []
        for t in tag_lab:
            label = tagmod.label_of(t)
            num = lab_num.get(label)
            if num is None:
                num = lab_num[label] = len(lab_hash)
                lab_hash.append(_h64(label))
            tag_lab[t] = num
        lab = np.fromiter(map(tag_lab.__getitem__, flat_tags), np.int64, len(flat_tags))
        counts = np.fromiter(map(len, per_node), dtype=np.int64, count=len(per_node))
        nr = np.repeat(np.arange(n0, n0 + len(per_node), dtype=np.int64), counts)
        pair = (nr - n0) * len(lab_hash) + lab
        srt = np.sort(pair)  # (a sort: numpy's hashing ``unique`` is many times slower)
        if (srt[1:] == srt[:-1]).any():  # a label twice in a node: once in its set
            _, first = np.unique(pair, return_index=True)
            first.sort()
            lab, nr = lab[first], nr[first]
        nh = np.asarray(lab_hash, dtype=np.uint64)[lab]
        order_t = np.argsort(nh, kind="stable")
        pos_t = np.searchsorted(th, nh[order_t], side="right")
        th = np.insert(th, pos_t, nh[order_t])
        tr = np.insert(tr, pos_t, nr[order_t])
    return th, tr


def _append_segments(
    data: Path, files: dict[str, dict[str, Any]], chunks: Mapping[str, bytes | memoryview]
) -> None:
    """Append each file's new bytes after its committed size (dropping whatever an interrupted
    save left beyond it), fsync them, and record each append as extents with their checksums
    (:mod:`._checksum`'s default algorithm; older extents keep theirs)."""
    data.mkdir(exist_ok=True)
    written = []
    for name in _APPEND_FILES:
        f = data / f"{name}.bin"
        info = files.setdefault(name, {"size": 0, "extents": []})
        with open(f, "ab" if f.exists() else "wb") as fh:
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


def _lookup_arrays(s: _Snap, ann_entry: Mapping[str, Any] | None) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a generation's ``index-*.bin`` file."""
    return {
        "alive": s.alive[: s.n],
        "by_hash": s.by_hash,
        "by_uri": s.by_uri,
        "by_parent": s.by_parent,
        "parent_row": s.parent_row[: s.n],
        "tag_hash": s.tag_hash,
        "tag_row": s.tag_row,
        "ann_row": ann_entry["row"] if ann_entry else np.zeros(0, np.int64),
        "ann_orphan": ann_entry["orphans"] if ann_entry else np.zeros(0, np.int64),
    }


def _map_segments(
    data: Path, files: Mapping[str, Any], n: int, dim: int
) -> dict[str, npt.NDArray[Any]]:
    """Memory-map each append-only file of a generation up to its committed size, checking
    that every file is there, long enough, and that the columns have one entry per row."""
    maps: dict[str, npt.NDArray[Any]] = {}
    for name in _APPEND_FILES:
        f = data / f"{name}.bin"
        size = int(files[name]["size"])
        if not f.is_file() or f.stat().st_size < size:
            raise IndexCorruptError(f"{f}: missing or shorter than committed")
        dtype = np.float32 if name == "vectors" else _COLUMNS.get(name, np.uint8)
        count = size // np.dtype(dtype).itemsize
        maps[name] = (
            # a plain view of the mapping: np.memmap's per-slice bookkeeping costs more than
            # the row reads themselves
            np.memmap(f, dtype=dtype, mode="r", shape=(count,)).view(np.ndarray)
            if count
            else np.zeros(0, dtype)
        )
    if maps["vectors"].size != n * dim:
        raise IndexCorruptError(f"{data}: {maps['vectors'].size} floats for {n} x {dim} vectors")
    for name in _COLUMNS:
        if maps[name].shape[0] != n:
            raise IndexCorruptError(f"{data}: column {name} has the wrong length")
    return maps


def _verify_segments(
    data: Path,
    files: Mapping[str, Any],
    maps: Mapping[str, npt.NDArray[Any]],
    names: Sequence[str],
) -> None:
    """Check the checksum of every extent of the files ``names`` (and that the vectors are
    finite) on their memory maps.

    Why on the maps, in threads: reading the files into buffers first costs a copy and a
    page fault per fresh 4 KiB page of every buffer, more than the checksum itself; on the
    map, each page is faulted in once and stays mapped for the searches that follow. Each
    extent (at most ``_BLOCK`` bytes for data written by this version) is one job; the
    checksums (XXH3, or CRC-32 for extents written by format 2) and numpy release the GIL,
    so the jobs run on all cores. The finiteness check runs on the same block right after
    its checksum, while it is in the CPU cache.
    """
    jobs = [
        (name, *_ck.parse_extent(ext))
        for name in names
        if maps[name].size
        for ext in files[name]["extents"]
    ]

    def check(job: tuple[str, int, int, int, str]) -> None:
        name, a, e, value, algo = job
        arr = maps[name]
        raw = arr.view(np.uint8)
        if e > raw.size or _ck.digest(raw[a:e].data, algo) != value:
            raise IndexCorruptError(f"{data / name}.bin: checksum mismatch in [{a}, {e})")
        if name == "vectors":
            if not _all_finite(arr[a // 4 : -(-e // 4)]):
                raise IndexCorruptError(f"{data}: vectors contain NaN or infinite values")
        else:
            _release_pages(arr, a, e)

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
        return WarmOrphans.gather(row, labels, s.vectors_of)
    except (IndexError, ValueError):
        return None  # (damaged labels or rows: the graph's own open or first search reports it)


def _uri_rank(s: _Snap) -> npt.NDArray[np.int32]:
    """Each live row's position in ``by_uri`` (-1 for a dead row), kept per snapshot."""
    hit: npt.NDArray[np.int32] | None = s.cache.get(("uri_rank",))
    if hit is None:
        hit = np.full(s.n, -1, dtype=np.int32)
        hit[s.by_uri] = np.arange(s.by_uri.size, dtype=np.int32)
        s.cache[("uri_rank",)] = hit
    return hit


def _leaf_family_rows(s: _Snap, uri: str, own: int) -> IntArray | None:
    """The subtree rows of stored node ``uri`` (row ``own``) when its children are all
    leaves, found through the parent links instead of two binary searches over the URI
    order; ``None`` where the links cannot prove the answer (then the caller searches).

    Why: the tree context asks the subtree of every parent of its best leaves with each
    query, mostly directories of leaves or files of chunks it has not asked before, and each
    binary search step decodes a stored URI (~70 per subtree, the largest cost of the
    family search). Here it is one hash range, one gather and one decoded URI.

    The answer is the same rows in the same order as the URI-order search: the ``m`` rows
    whose parent hash is ``uri``'s hold every child, so when the ``m`` rows right after
    ``uri`` in URI order are all leaves linked to ``own`` they are exactly its children. Its
    descendants by URI (``uri/...``, ``uri#...``) are then those rows: the first and last
    share one of the two prefixes (so every row between them does, the order being sorted),
    nothing sorts between ``uri`` and the first, and the row after the last is checked to
    hold no further descendant (an unlinked row under ``uri``, whose parent is not stored)."""
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = np.uint64(_h64(uri))
    m = int(np.searchsorted(keys, h, side="right")) - int(np.searchsorted(keys, h, side="left"))
    k = int(_uri_rank(s)[own])
    end = k + 1 + m
    if m == 0 or k < 0 or end > s.by_uri.size:
        return None
    window = s.by_uri[k + 1 : end]
    if not (s.parent_row[window] == own).all() or not s.cols["leaf"][window].all():
        return None
    first = s.uri(int(window[0]))
    last = s.uri(int(window[-1])) if m > 1 else first
    slash, hash_ = uri + "/", uri + "#"
    if first.startswith(slash) and last.startswith(slash):
        sep = slash  # no ``uri#...`` row: it would sort between ``uri`` and the first
    elif first.startswith(hash_) and last.startswith(hash_):
        sep = hash_
    else:
        return None
    if end < s.by_uri.size:
        after = s.uri(int(s.by_uri[end]))
        if after.startswith(sep):
            return None
        # below ``uri#...`` rows, a ``uri/...`` block would sort later: the next row must
        # sort after every one of them
        if sep == hash_ and not (after > slash and not after.startswith(slash)):
            return None
    out: IntArray = s.by_uri[k:end]
    return out


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


def _unique_ints(a: IntArray) -> IntArray:
    """``np.unique`` of an integer array without ``np.unique``: its first call in a process
    imports ``numpy.ma`` (60-100 ms here), which landed in the first ``find()`` after open."""
    a = np.sort(a)
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    out: IntArray = a[keep]
    return out


_SIBLING_PARENTS = 4
_SIBLING_MAX = 256


def _sibling_rows(
    s: _Snap, cand: IntArray, dense: F32, full: BoolArray, exclude: IntArray | None = None
) -> IntArray:
    """The eligible children of the parents of the best graph candidates (the first
    ``_SIBLING_PARENTS`` distinct parents by score, each with at most ``_SIBLING_MAX``
    children) that are not candidates yet: they are rescored exactly with the rest.

    Why: on a tree the best rows for a query share a parent (a folder's files, a chunked
    document), and a graph search that lands in that folder returns only some of them; its
    beam does not widen with the number of candidates asked for. Measured on bench_store's
    clustered tree (30k leaves, 16 links): top-10 equal to the exhaustive one on 27% of
    queries from 64 graph candidates, 99.5% with their parents' other children added, at
    ~4 sorted-array lookups and a few hundred dot products per query. Only ever adds
    candidates, so it cannot lose a row the graph found."""
    if cand.size == 0 or not s.n:
        return np.zeros(0, np.int64)
    best = cand[np.argsort(-dense)[: 4 * _SIBLING_PARENTS]]
    linked = s.parent_row[best]
    first = list(dict.fromkeys(linked[linked >= 0].tolist()))[:_SIBLING_PARENTS]
    parents = np.array(first, dtype=np.int64)
    if not parents.size:
        return np.zeros(0, np.int64)
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = s.cols["uri_hash"][parents]
    lo = np.searchsorted(keys, h, side="left")
    hi = np.searchsorted(keys, h, side="right")
    parts = [
        s.by_parent[a:b]
        for a, b in zip(lo.tolist(), hi.tolist(), strict=True)
        if b - a <= _SIBLING_MAX
    ]
    if not parts:
        return np.zeros(0, np.int64)
    rows = np.concatenate(parts)
    # a hash collision links nothing (at most _SIBLING_PARENTS parents: one compare each,
    # cheaper on a few hundred rows than a broadcast compare and its reduction)
    linked_to = s.parent_row[rows]
    ok = linked_to == first[0]
    for p in first[1:]:
        ok |= linked_to == p
    rows = rows[ok]
    rows = rows[full[rows]]
    have = np.sort(cand if exclude is None else exclude)
    at = np.minimum(np.searchsorted(have, rows), have.size - 1)
    out: IntArray = rows[have[at] != rows]
    return out


def _batch_siblings(
    s: _Snap, cand: IntArray, dense: F32, ok: BoolArray, full: BoolArray
) -> tuple[IntArray, IntArray]:
    """:func:`_sibling_rows` of every query of a batch at once: ``cand``/``dense``/``ok`` are
    (queries x candidates) with ``ok`` marking each query's real candidates. Returns (query
    index, sibling row) pairs, grouped by query, each query's siblings in the order
    :func:`_sibling_rows` gives them.

    Why: a graph batch spent ~0.2 ms per query in that function's Python (a sort, a dict of
    parents, a lookup per parent), as much as the batch's usearch call at 100k rows; here
    it is a few array operations for the whole batch (the same rule: the first
    ``_SIBLING_PARENTS`` distinct parents of the ``4 * _SIBLING_PARENTS`` best candidates,
    folders of at most ``_SIBLING_MAX`` children, eligible rows that are not candidates)."""
    b, width = cand.shape
    none = np.zeros(0, np.int64)
    if not b or not width or not s.n:
        return none, none
    m = min(4 * _SIBLING_PARENTS, width)
    score = np.where(ok, dense, -np.inf)
    best = (
        np.argpartition(-score, m - 1, axis=1)[:, :m]
        if m < width
        else np.tile(np.arange(width), (b, 1))
    )
    order = np.argsort(-np.take_along_axis(score, best, axis=1), axis=1, kind="stable")
    best = np.take_along_axis(best, order, axis=1)
    linked = s.parent_row[np.take_along_axis(cand, best, axis=1)]
    linked[~np.take_along_axis(ok, best, axis=1)] = -1
    # the first occurrence of each parent in score order, the first _SIBLING_PARENTS of them
    earlier = np.tri(m, m, -1, dtype=bool)
    seen = ((linked[:, :, None] == linked[:, None, :]) & earlier[None]).any(axis=2)
    first = (linked >= 0) & ~seen
    first &= np.cumsum(first, axis=1) <= _SIBLING_PARENTS
    qi, col = np.nonzero(first)
    parents = linked[qi, col]
    if not parents.size:
        return none, none
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = s.cols["uri_hash"][parents]
    lo = np.searchsorted(keys, h, side="left")
    hi = np.searchsorted(keys, h, side="right")
    lens = np.where(hi - lo <= _SIBLING_MAX, hi - lo, 0)
    total = int(lens.sum())
    if not total:
        return none, none
    starts = np.cumsum(lens) - lens
    at = np.repeat(lo - starts, lens) + np.arange(total, dtype=np.int64)
    rows = s.by_parent[at]
    owner = np.repeat(qi, lens)
    # a hash collision links nothing: the row's parent must be one of its query's parents
    mine = np.full((b, _SIBLING_PARENTS), -2, dtype=np.int64)
    mine[qi, np.cumsum(first, axis=1)[qi, col] - 1] = parents
    keep = (s.parent_row[rows][:, None] == mine[owner]).any(axis=1) & full[rows]
    rows, owner = rows[keep], owner[keep]
    # not a candidate of its own query already: (query, row) pairs against the candidates'
    have = np.sort((np.nonzero(ok)[0] * s.n + cand[ok]).astype(np.int64))
    pair = owner * s.n + rows
    if have.size:
        at = np.minimum(np.searchsorted(have, pair), have.size - 1)
        new = have[at] != pair
        rows, owner = rows[new], owner[new]
    return owner, rows


def _repeats(cand: IntArray, ok: BoolArray) -> BoolArray:
    """Which queries of a batch (rows of ``cand``, real where ``ok``) name one row twice: the
    one-query step counts distinct rows (:func:`_unique_ints`), so such a query goes its way.
    (A graph label maps to one row, so this is insurance, a sort of a few thousand ints.)"""
    b, width = cand.shape
    if width < 2:
        return np.zeros(b, dtype=bool)
    r = np.sort(np.where(ok, cand, -1 - np.arange(width)), axis=1)
    out: BoolArray = (r[:, 1:] == r[:, :-1]).any(axis=1)
    return out


def _batch_floors(dense: F32, tail_d: F32, m: int) -> F32:
    """Each query's ``m``-th best exact score of its graph candidates (``dense``, ``-inf``
    where none) and the uncovered tail (``tail_d``): the floor :func:`_reaching_orphans`
    sets for the orphans; ``-inf`` where a query has fewer than ``m`` of them (then every
    eligible orphan is scored, as the one-query step does)."""
    both = np.concatenate([dense, tail_d], axis=1) if tail_d.shape[1] else dense
    width = both.shape[1]
    none = np.full(both.shape[0], -np.inf, dtype=np.float32)
    if width < m:
        return none
    kth = np.partition(both, width - m, axis=1)[:, width - m]
    out: F32 = np.where(np.count_nonzero(both > -np.inf, axis=1) >= m, kth, none)
    return out


def _batch_orphans(
    qs: F32,
    floor: F32,
    orphans: tuple[IntArray, F32, BoolArray],
    codes: _ann.OrphanCodes | None,
    fetch: int,
    threads: int,
) -> tuple[IntArray, IntArray, F32]:
    """The orphans (rows the graph cannot reach: ``orphans`` holds their rows, vectors and
    which are eligible) that the one-query step adds to each query's candidates at or above
    its ``floor`` (``inf``: none for that query; ``-inf``: every eligible one counts), as
    (query, row, exact score) triples grouped by query: every eligible orphan scoring at
    least the floor (the best ``fetch`` of them when more), as :func:`_reaching_orphans`
    and :func:`_best_orphans` give; what either adds below the floor can neither enter the
    answer nor pick its siblings (see there), so it is left out here.

    With :class:`~treehop.stores._ann.OrphanCodes` the candidates come from one int8
    product of the batch's codes and the orphans' (numkong:
    :meth:`~treehop.stores._ann.OrphanCodes.bounds_many`), or else one exact search of the
    codes for the whole batch (:meth:`~treehop.stores._ann.OrphanCodes.reaching_many`),
    then the exact kernel (:func:`_matvec`'s) scores those; without codes, the exact kernel
    scores them all. At 1M rows (8,670 orphans, 32 queries) that step took ~4 ms of CPU
    through numkong and ~10 ms through usearch's exact search. No BLAS: a
    product of 32 queries and 8,670 orphans took 3-8 ms, but OpenBLAS's worker threads then
    spin for ~120 ms of CPU after it, a core's worth on these two cores that the next
    searches wait for."""
    rows, vecs, live = orphans
    b = qs.shape[0]
    want = floor < np.inf
    if not rows.size or not want.any():
        return _NO_ROWS, _NO_ROWS, np.zeros(0, np.float32)
    if codes is None:  # (below ORPHAN_CODES_MIN orphans, or while their codes are built)
        scores = np.einsum("td,qd->qt", vecs, qs, optimize=False)
        keep = ~(scores < floor[:, None]) & live & want[:, None]
        qi, oj = np.nonzero(keep)
        score: F32 = scores[qi, oj]
    elif (pairs := codes.bounds_many(qs[want], floor[want])) is not None:
        qi, oj = np.flatnonzero(want)[pairs[0]], pairs[1]
        score = np.einsum("kd,kd->k", vecs[oj], qs[qi], optimize=False)
        keep = ~(score < floor[qi]) & live[oj]
        qi, oj, score = qi[keep], oj[keep], score[keep]
    else:
        bounded = np.flatnonzero(want & (floor > -np.inf))
        found = dict(
            zip(
                bounded.tolist(),
                codes.reaching_many(qs[bounded], floor[bounded], fetch, threads),
                strict=True,
            )
        )
        every = np.arange(rows.size, dtype=np.int64)
        asked = np.flatnonzero(want)
        parts = [found.get(i, every) for i in asked.tolist()]
        oj = np.concatenate(parts)
        qi = np.repeat(asked, [p.size for p in parts])
        score = np.einsum("kd,kd->k", vecs[oj], qs[qi], optimize=False)
        keep = ~(score < floor[qi]) & live[oj]
        qi, oj, score = qi[keep], oj[keep], score[keep]
    counts = np.bincount(qi, minlength=b)
    over = np.flatnonzero(counts > fetch)
    if over.size:  # (a query with fewer other candidates than its floor needs, say)
        starts = np.cumsum(counts) - counts
        drop = np.zeros(qi.size, dtype=bool)
        for i in over.tolist():
            a, e = int(starts[i]), int(starts[i] + counts[i])
            drop[a:e] = True
            drop[a + np.argpartition(-score[a:e], fetch - 1)[:fetch]] = False
        qi, oj, score = qi[~drop], oj[~drop], score[~drop]
    return qi.astype(np.int64, copy=False), rows[oj], score


def _new_pairs(n: int, cand: IntArray, ok: BoolArray, qi: IntArray, rows: IntArray) -> BoolArray:
    """Which (query ``qi``, row) pairs are not yet a candidate of their query (``cand`` real
    where ``ok``; rows below ``n``): an orphan the graph returned after all is kept once."""
    have = np.sort(np.nonzero(ok)[0].astype(np.int64) * n + cand[ok])
    pair = qi * n + rows
    if not have.size:
        return np.ones(pair.size, dtype=bool)
    at = np.minimum(np.searchsorted(have, pair), have.size - 1)
    out: BoolArray = have[at] != pair
    return out


def _batch_matrix(
    have: tuple[IntArray, F32, BoolArray],
    who: BoolArray,
    shared: IntArray,
    shared_d: F32 | None,
    extra: tuple[IntArray, IntArray, F32],
) -> tuple[IntArray, F32, BoolArray]:
    """A batch's (queries x candidates) rows, scores and real-candidate mask (``have``)
    widened by ``shared`` rows of every query that takes part (``who``; scores
    ``shared_d``, queries x rows) and by each query's own (query, row, score) triples
    (``extra``, grouped by query). Padding is row 0, score ``-inf``, not real: one partial
    sort per matrix instead of a concatenation per query."""
    cand, dense, ok = have
    qi, rows, score = extra
    b, width = cand.shape
    counts = np.bincount(qi, minlength=b)
    t, p = int(shared.size), int(counts.max(initial=0))
    if not t and not p:
        return have
    out_c = np.zeros((b, width + t + p), dtype=np.int64)
    out_d = np.full((b, width + t + p), -np.inf, dtype=np.float32)
    out_ok = np.zeros((b, width + t + p), dtype=bool)
    out_c[:, :width], out_d[:, :width], out_ok[:, :width] = cand, dense, ok
    if t and shared_d is not None:
        out_c[:, width : width + t] = shared
        out_d[:, width : width + t] = np.where(who[:, None], shared_d, -np.inf)
        out_ok[:, width : width + t] = who[:, None]
    if p:
        starts = np.cumsum(counts) - counts
        col = width + t + np.arange(qi.size) - starts[qi]
        out_c[qi, col], out_d[qi, col], out_ok[qi, col] = rows, score, True
    return out_c, out_d, out_ok


def _full_mask(
    s: _Snap, rows: IntArray | None, eligible: BoolArray, cache_key: tuple[Any, ...] | None
) -> BoolArray:
    """The scope's eligibility over every row (``eligible`` is over ``rows`` when a scope
    names them), kept per snapshot for a wide scope that every query asks again."""
    if rows is None:
        return eligible
    full: BoolArray | None = s.cache.get(("full", cache_key))
    if full is None:
        full = np.zeros(s.n, dtype=bool)
        full[rows] = eligible  # (not ``rows[eligible]``: an 8-byte copy of every row in scope)
        if cache_key is not None:
            _cache_put(s, ("full", cache_key), full)
    return full


def _eligible_share(s: _Snap, full: BoolArray, cache_key: tuple[Any, ...] | None) -> float:
    """The share of the index's live rows a scope admits (cached with its mask)."""
    key = ("share", cache_key)
    hit: float | None = s.cache.get(key) if cache_key is not None else None
    if hit is None:
        hit = int(np.count_nonzero(full[: s.n])) / max(s.live, 1)
        if cache_key is not None:
            _cache_put(s, key, hit)
    return hit


def _differing(s: _Snap, rows: IntArray, blobs: Sequence[bytes]) -> IntArray:
    """Indices ``i`` whose stored node JSON (row ``rows[i]``) is not ``blobs[i]``: lengths are
    compared for all rows at once, bytes only where the lengths agree."""
    ends = s.cols["node_end"]
    lens = ends[rows] - np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
    new_lens = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    same_len = np.flatnonzero(lens == new_lens)
    differ = np.ones(len(blobs), dtype=bool)
    for i, stored in zip(same_len.tolist(), s.node_jsons(rows[same_len]), strict=True):
        differ[i] = stored != blobs[i]
    return np.flatnonzero(differ)


def _lexical_delta_small(entry: Mapping[str, Any], s: _Snap) -> bool:
    """Whether the rows written or deleted since the saved BM25 index ``entry`` are few
    enough (``_LEX_REPLAY``) to be replayed at load instead of rewriting the index."""
    if "rows" not in entry or "documents" not in entry:
        return False
    base = int(entry["rows"])
    if base > s.n:
        return False
    deleted = int(entry["documents"]) - int(np.count_nonzero(s.alive[:base]))
    written = int(np.count_nonzero(s.alive[base : s.n]))
    return deleted + written <= max(_LEX_REPLAY, s.live // 16)


def _release_pages(arr: npt.NDArray[Any], start: int, end: int) -> None:
    """Unmap the pages of bytes ``[start, end)`` of a memory-mapped file from this process
    (they stay in the page cache, and fault back in when read): node texts and URIs are read
    a few rows at a time, so verifying them must not leave the whole blob resident. The
    vectors stay mapped: every exact search reads them all."""
    base: Any = arr
    while base is not None and not isinstance(base, np.memmap):
        base = getattr(base, "base", None)
    mm = getattr(base, "_mmap", None)
    if mm is None or not hasattr(mmap, "MADV_DONTNEED"):
        return
    lo = start - start % mmap.PAGESIZE
    hi = min(end - end % mmap.PAGESIZE, len(mm))
    if hi > lo:
        with contextlib.suppress(OSError, ValueError):
            mm.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _scope_key(scope: Scope) -> tuple[Any, ...] | None:
    """A hashable key of a scope whose masks can be cached (no metadata filter)."""
    if scope.metadata is not None:
        return None
    return (
        scope.subtrees,
        scope.parent_uri,
        scope.context_types,
        scope.levels,
        scope.leaves_only,
        scope.non_leaves_only,
        scope.traversal,
        scope.tags.key(),
        tuple(sorted(scope.exclude_uris)),
    )


def _cache_put(s: _Snap, key: tuple[Any, ...], value: Any, cap: int = 32) -> None:
    """Store a per-snapshot mask, keeping at most ``cap`` per kind (the oldest half goes).

    Each kind's keys are kept in insertion order beside the cache, so that a put does not
    scan every key of every kind (the tree context puts one subtree set per query). A key
    dropped from the cache by someone else stays listed until its kind is trimmed. ``list``
    copies a dict's keys in one step, so a reader adding meanwhile cannot break the trim."""
    kept: dict[tuple[Any, ...], None] = s.cache.setdefault(("kind", key[0]), {})
    if len(kept) >= cap and key not in kept:
        for k in list(kept)[: max(cap // 2, 1)]:
            kept.pop(k, None)
            s.cache.pop(k, None)
    kept[key] = None
    s.cache[key] = value


def _top_candidates(m: F32, k: int, block: int = 256) -> tuple[IntArray, IntArray]:
    """(row, column) of a superset of each row's ``k`` best values, row-major: every value
    at or above a per-row bound no greater than the row's ``k``-th best.

    The bound is the ``k``-th best of the row's block maxima (blocks of ``block`` columns):
    ``k`` blocks reach it, each holding a value at least that large, so the ``k`` best are
    all at or above it. Two streaming passes (a max per block, one comparison) instead of a
    partition of every row, the slowest step of a whole-index batch (115 ms of 560 for 32
    queries x 100k rows on these cores); the caller ranks the few values found exactly.
    """
    n = m.shape[1]
    whole = n - n % block
    if whole // block < k:
        kth = np.partition(m, n - k, axis=1)[:, n - k]
    else:
        maxima = m[:, :whole].reshape(m.shape[0], -1, block).max(axis=2)
        if whole < n:
            maxima = np.concatenate([maxima, m[:, whole:].max(axis=1, keepdims=True)], axis=1)
        nb = maxima.shape[1]
        kth = np.partition(maxima, nb - k, axis=1)[:, nb - k]
    qi, pos = np.nonzero(m >= kth[:, None])
    return qi.astype(np.int64), pos.astype(np.int64)


def _decoded_slices(blob: bytes, at: int, starts: list[int], ends: list[int]) -> list[str]:
    """The strings at byte offsets ``starts[i] - at`` to ``ends[i] - at`` of ``blob``: one
    decode of the whole blob and string slices when it is ASCII (one character per byte: byte
    offsets are string offsets), else a decode per slice."""
    if blob.isascii():
        text = blob.decode()
        return [text[a - at : e - at] for a, e in zip(starts, ends, strict=True)]
    return [blob[a - at : e - at].decode() for a, e in zip(starts, ends, strict=True)]


_NO_ROWS: IntArray = np.zeros(0, np.int64)
"""No rows (shared: never written to)."""
_NO_SCORES: tuple[F32, F32, None, None] = (
    np.zeros(0, np.float32),
    np.zeros(0, np.float32),
    None,
    None,
)


def _optional(chunk: npt.NDArray[np.int32]) -> list[int | None]:
    """Chunk indexes with the column's -1 (not a chunk) as ``None``."""
    if chunk.max(initial=-1) < 0:  # no chunks (the common case)
        return [None] * chunk.size
    return [None if c < 0 else c for c in chunk.tolist()]


def _best_first(cand: IntArray, top: IntArray, score: F32, k: int | None) -> IntArray:
    """Positions ``top`` of ``cand`` ordered best first, ties by row (the first ``k``)."""
    out: IntArray = top[np.lexsort((cand[top], -score[top]))][:k]
    return out


def _exact_dense(
    s: _Snap,
    q: F32,
    rows: IntArray | None,
    eligible: BoolArray,
    precomputed: F32 | None,
    wide_key: tuple[Any, ...] | None,
) -> tuple[IntArray, F32]:
    """Eligible rows and their exact cosines. For a wide scope (the global step) the answer
    is kept for the next call with the same query: the descent's deeper step asks again
    with a larger limit, and the scores do not depend on the limit."""
    key = ("dense", q.tobytes(), wide_key) if wide_key is not None else None
    if key is not None and precomputed is None:
        hit: tuple[IntArray, F32] | None = s.cache.get(key)
        if hit is not None:
            return hit
    if rows is None:
        cand = np.flatnonzero(eligible)
        full = precomputed if precomputed is not None else _scores_all_kept(s, q)
        return cand, full[cand]
    sel = np.flatnonzero(eligible)
    cand = rows[sel]
    if precomputed is not None:
        return cand, precomputed[sel]
    # A wide scope: one contiguous product and a gather of scores beats gathering the
    # vectors, which copies every row.
    wide = cand.size * 8 > s.n
    dense = _scores_all_kept(s, q)[cand] if wide else _matvec(s.vectors_of(cand), q)
    if key is not None:
        _cache_put(s, key, (cand, dense), cap=8)
    return cand, dense


def _scores_all_kept(s: _Snap, q: F32) -> F32:
    """Every row's cosine to ``q``, kept for the next wide search with the same query.

    One ``find()`` asks several wide scopes with one query vector (the global step over every
    node of the roots, tree context's pool over their leaves, a deeper global step): each is a
    gather from this one pass over the vectors instead of a pass of its own. A few queries are
    kept (``n`` floats each), so memory stays far below the vectors'.
    """
    key = ("all", q.tobytes())
    hit: F32 | None = s.cache.get(key)
    if hit is None:
        hit = s.scores_all(q)
        _cache_put(s, key, hit, cap=4)
    return hit


_HASH_KEY = b'"content_hash":"'


def _content_hash(blob: bytes) -> str:
    """The top-level ``content_hash`` of a stored node's JSON.

    The serialiser writes ``content_hash`` after ``metadata`` and before ``ancestors`` (a list
    of strings, in which a quote is always escaped), so its last occurrence is the field; a
    value that is not a plain string falls back to a full parse.
    """
    at = blob.rfind(_HASH_KEY)
    if at >= 0:
        start = at + len(_HASH_KEY)
        end = blob.find(b'"', start)
        value = blob[start:end]
        if end > 0 and b"\\" not in value:
            return value.decode()
    try:
        d = pydantic_core.from_json(blob)
    except ValueError as exc:
        raise IndexCorruptError("a stored node holds invalid JSON") from exc
    return str(d.get("content_hash", "")) if isinstance(d, dict) else ""


def _stored_field(s: _Snap, r: int, name: str) -> Any:
    try:
        d = pydantic_core.from_json(s.node_json(r))
    except ValueError as exc:
        raise IndexCorruptError(f"row {r} holds invalid JSON") from exc
    return d.get(name) if isinstance(d, dict) else None


def _stored_parent(s: _Snap, r: int, nodes: Sequence[Node], n0: int) -> str | None:
    """The parent URI stored with row ``r`` (rows ``>= n0`` are ``nodes`` being written)."""
    if r >= n0:
        return nodes[r - n0].parent_uri
    p = _stored_field(s, r, "parent_uri")
    return p if isinstance(p, str) else None


def _merge(sorted_rows: IntArray, keys: npt.NDArray[Any], new_rows: IntArray) -> IntArray:
    """``sorted_rows`` (sorted by ``keys[row]``) with ``new_rows`` merged in, in O(n)."""
    if not new_rows.size:
        return sorted_rows
    nk = keys[new_rows]
    order = np.argsort(nk, kind="stable")
    pos = np.searchsorted(keys[sorted_rows], nk[order], side="right")
    return np.insert(sorted_rows, pos, new_rows[order])


def _eligible_rows(rows: IntArray, full: BoolArray) -> BoolArray:
    """Which of ``rows`` (``-1``: none) the search may return."""
    ok: BoolArray = rows >= 0
    ok[ok] = full[rows[ok]]
    return ok


def _orphans_eligible(
    s: _Snap, orphans: IntArray, full: BoolArray, cache_key: tuple[Any, ...] | None
) -> BoolArray:
    """:func:`_eligible_rows` of the graph's unreachable rows, kept per snapshot for a wide
    scope while the rows and the scope's mask are the same arrays
    (:meth:`~treehop.stores._ann.AnnIndex.orphan_rows` keeps its rows): reading the mask at
    ~3,000 scattered rows of 1M cost ~0.2 ms a query in cache misses."""
    if cache_key is None:
        return _eligible_rows(orphans, full)
    key = ("orphans_ok", cache_key)
    hit: tuple[IntArray, BoolArray, BoolArray] | None = s.cache.get(key)
    if hit is not None and hit[0] is orphans and hit[1] is full:
        return hit[2]
    ok = _eligible_rows(orphans, full)
    _cache_put(s, key, (orphans, full, ok))
    return ok


def _reaching_orphans(
    s: _Snap, q: F32, others: IntArray, limit: int, fetch: int, codes: _ann.OrphanCodes
) -> IntArray | None:
    """Positions (in the orphan arrays) of the orphans that may score at least the floor:
    the ``max(limit, 4 * _SIBLING_PARENTS)``-th best exact score of the other candidates
    (``others``: the graph's and the uncovered tail's, maybe repeated). ``None`` when there
    are fewer of those (then every orphan is scored, as before).

    :func:`_best_orphans` of these positions adds the same orphans at or above the floor as
    of all orphans (an orphan's exact score is at most its 8-bit bound, so each of them is
    here; the best ``fetch`` of a superset holding them all hold the same ones), and those
    below it can neither enter the top ``limit`` nor be among the best
    ``4 * _SIBLING_PARENTS`` rows whose parents give siblings: the floor is already reached
    by that many rows without them. So the step's answer is the same; fewer orphans below
    the floor join the rescored candidates."""
    m = max(limit, 4 * _SIBLING_PARENTS)
    rows = _unique_ints(others)
    if rows.size < m:
        return None
    dense = _matvec(s.vectors_of(rows), q)
    floor = float(np.partition(dense, rows.size - m)[rows.size - m])
    return codes.reaching(q, floor, fetch)


def _best_orphans(rows: IntArray, vecs: F32, ok: BoolArray, q: F32, k: int) -> IntArray:
    """The ``k`` best eligible (``ok``) of the rows the graph cannot reach (``vecs``:
    theirs), by exact score: as many as the graph is asked for, so the candidates hold the
    dense top-k of every row whichever side it sits on.

    (Scoring them is a pass over ~3,000 rows at 1M, ~4.6 MB read from memory per query; a
    cheaper first pass with ``np.vecdot`` and an exact one within its rounding margin
    picked the same rows but measured slower with the matrix out of the cache, as it is
    between finds.)"""
    if int(np.count_nonzero(ok)) <= k:
        out: IntArray = rows[ok]
        return out
    score = _matvec(vecs, q)
    score[~ok] = -np.inf
    best: IntArray = rows[np.argpartition(-score, k - 1)[:k]]
    return best


def _saved_upto(row: IntArray, count: int) -> int:
    """The first row not covered by the first ``count`` labels."""
    if count == 0:
        return 0
    covered = row[:count]
    live = covered[covered >= 0]
    return int(live.max()) + 1 if live.size else 0


def _tail_bytes(s: _Snap, t0: int) -> dict[str, bytes | memoryview]:
    """The bytes to append per file: rows ``t0 .. n`` (all in the tail)."""
    lo, hi = t0 - s.n_base, s.n - s.n_base
    out: dict[str, bytes | memoryview] = {"vectors": s.tail_vecs.tobytes(lo, hi)}
    for name in _COLUMNS:
        out[name] = np.ascontiguousarray(s.cols[name][t0 : s.n]).tobytes()
    out["uris"] = b"".join(s.tail_uris[lo:hi])
    out["nodes"] = b"".join(s.tail_nodes[lo:hi])
    return out


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


def _read_arrays(f: Path, meta: Mapping[str, Any], verify: bool) -> dict[str, npt.NDArray[Any]]:
    size = int(meta["size"])
    if not f.is_file() or f.stat().st_size != size:
        raise IndexCorruptError(f"{f}: missing or of the wrong size")
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
    return None


def _sum_blocks(f: Path, size: int, block: int | None = None) -> list[list[Any]]:
    """Extents of at most ``block`` bytes covering ``f[:size]``, each with its checksum."""
    step = block or _BLOCK
    return [
        _ck.extent(a, min(a + step, size), _ck.file_digest(f, a, min(a + step, size)))
        for a in range(0, size, step)
    ]


def _rollback(
    path: Path, cur: tuple[str, int, int] | None, opened: Mapping[str, Any], errors: list[str]
) -> RecoveryRecord | None:
    """What opening manifest ``opened`` after the current one failed loses: the generations
    after it that ``CURRENT`` names or whose manifest exists but does not read back.
    ``None`` when nothing newer is known (``CURRENT`` damaged or missing but the newest
    manifest intact: nothing is lost, ``CURRENT`` is simply rewritten)."""
    gen = int(opened["generation"])
    newer = [int(n[9:15]) for n in _manifests(path) if int(n[9:15]) > gen]
    expected = cur[1] if cur is not None else None
    newest = max([*newer, expected or 0])
    if newest <= gen:
        return None
    lost = f"generation {newest}" if newest == gen + 1 else f"generations {gen + 1}..{newest}"
    why = errors[0] if errors else f"CURRENT names generation {newest}"
    return RecoveryRecord(
        kind="generation",
        path=str(path),
        expected=expected,
        opened=gen,
        lost=f"the commits of {lost} (its manifest is damaged or missing)",
        reason=f"the current manifest of the index at {path} is unreadable ({why})",
    )


def _discard_uncommitted(path: Path, m: Mapping[str, Any] | None) -> None:
    """After a failed save (under the writer lock): drop what it wrote and did not commit,
    so that nothing half-written stays behind and a full disk gets its space back at once:
    bytes appended after the committed sizes of the data files, and every file no kept
    manifest names (the new generation's index, lexical and graph files, a compaction's new
    data directory). ``m``: the manifest on disk now (the save may have failed after its
    ``CURRENT`` was replaced, and then it is committed)."""
    if m is not None:
        data = path / f"data-{int(m['epoch']):06d}"
        for name, info in m["files"].items():
            f = data / f"{name}.bin"
            with contextlib.suppress(OSError):
                if f.stat().st_size > int(info["size"]):
                    os.truncate(f, int(info["size"]))
    _cleanup(path, keep=2, current=int(m["generation"]) if m is not None else None)


def _manifest_bytes(m: Mapping[str, Any]) -> bytes:
    return json.dumps(m, sort_keys=True, separators=(",", ":")).encode()


def _write_manifest(path: Path, m: dict[str, Any]) -> None:
    """Write ``MANIFEST-<gen>.json`` (carrying the CRC-32 of its own content) and point
    ``CURRENT`` at it."""
    gen = int(m["generation"])
    body = _manifest_bytes({**m, "crc32": zlib.crc32(_manifest_bytes(m))})
    name = f"MANIFEST-{gen:06d}.json"
    tmp = path / f".tmp-{name}"
    with open(tmp, "wb") as fh:
        fh.write(body)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / name)
    _fsync_dir(path)
    _write_current(path, gen, zlib.crc32(body))


def _write_current(path: Path, gen: int, crc: int | None = None) -> None:
    name = f"MANIFEST-{gen:06d}.json"
    if crc is None:
        crc = zlib.crc32((path / name).read_bytes())
    tmp = path / ".tmp-CURRENT"
    with open(tmp, "w") as fh:
        fh.write(f"{name} {crc:08x}\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / "CURRENT")
    _fsync_dir(path)


def _read_current(path: Path) -> tuple[str, int, int] | None:
    """(manifest name, generation, crc) from ``CURRENT``; ``None`` if missing or damaged."""
    try:
        text = (path / "CURRENT").read_text(errors="replace").strip()
    except OSError:
        return None
    parts = text.split()
    if len(parts) != 2 or not _MANIFEST.match(parts[0]):
        return None
    try:
        crc = int(parts[1], 16)
    except ValueError:
        return None
    m = _MANIFEST.match(parts[0])
    assert m is not None
    return parts[0], int(m.group(1)), crc


def _legacy_current(path: Path) -> str | None:
    """The format-1 generation to migrate, if this is a format-1 index."""
    if _manifests(path):
        return None
    try:
        text = (path / "CURRENT").read_text(errors="replace").strip()
    except OSError:
        text = ""
    if _LEGACY_GEN.match(text) and (path / text).is_dir():
        return text
    gens = sorted(p.name for p in path.glob("gen-*") if _LEGACY_GEN.match(p.name))
    for g in reversed(gens):
        if (path / g / "meta.json").is_file():
            return g
    return None


def _read_manifest(path: Path, name: str, crc: int | None) -> dict[str, Any]:
    f = path / name
    try:
        body = f.read_bytes()
    except OSError as exc:
        raise IndexCorruptError(f"{f}: {exc.strerror or exc}") from exc
    if crc is not None and zlib.crc32(body) != crc:
        raise IndexCorruptError(f"{f}: checksum mismatch with CURRENT")
    try:
        m = json.loads(body)
    except ValueError as exc:
        raise IndexCorruptError(f"{f}: not valid JSON") from exc
    if not isinstance(m, dict) or m.get("generation") != int(name[9:15]):
        raise IndexCorruptError(f"{f}: not a manifest of generation {name[9:15]}")
    own = m.pop("crc32", None)
    if own != zlib.crc32(_manifest_bytes(m)):
        raise IndexCorruptError(f"{f}: checksum mismatch")
    return m


def _manifests(path: Path) -> list[str]:
    """Manifest file names, newest first."""
    names = [p.name for p in path.glob("MANIFEST-*.json") if _MANIFEST.match(p.name)]
    return sorted(names, reverse=True)


def _cleanup(path: Path, keep: int, current: int | None = None) -> None:
    """Remove temporary leftovers, manifests beyond the newest ``keep`` (none newer than the
    current one) and every file no kept manifest references. Only a lock holder calls it."""
    names = _manifests(path)
    if current is not None:
        names = [n for n in names if int(n[9:15]) <= current]
        for extra in _manifests(path):
            if int(extra[9:15]) > current:
                _remove(path / extra)
    kept: list[dict[str, Any]] = []
    for name in names[:keep]:
        try:
            kept.append(_read_manifest(path, name, None))
        except IndexCorruptError:
            continue
    referenced = {f"MANIFEST-{int(m['generation']):06d}.json" for m in kept}
    for m in kept:
        referenced.add(f"data-{int(m['epoch']):06d}")
        referenced.add(m["index"]["file"])
        if m.get("lexical"):
            referenced.add(m["lexical"]["dir"])
        if m.get("ann"):
            referenced.add(m["ann"]["file"])
    if names and not kept:
        return  # manifests exist but none reads back: leave everything for inspection
    for p in path.iterdir():
        name = p.name
        if name.startswith(".tmp-") or (
            name.startswith(("MANIFEST-", "data-", "index-", "lexical-", "ann-", "gen-"))
            and name not in referenced
        ):
            _remove(p)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


def _matvec(m: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosine scores of unit rows against a unit query.

    ``einsum`` runs numpy's own single-threaded SIMD loop instead of BLAS: a matrix-vector
    product is memory-bound, and multi-threaded OpenBLAS gains nothing on it but loses badly
    when cores are busy (re-measured for this format on the 2 loaded cores, 100k x 384: einsum
    46 ms, BLAS 70 ms, BLAS limited to one thread by threadpoolctl 56 ms, and setting that
    limit costs ~0.15 ms per call).
    """
    out: npt.NDArray[np.float32] = np.einsum("ij,j->i", m, q, optimize=False)
    return out


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
