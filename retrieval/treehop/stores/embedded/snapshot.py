"""The immutable view a reader uses: :class:`_Snap` (one generation's columns and lookup
arrays plus the unsaved rows), :class:`_Tail` (the unsaved vectors, grown in blocks),
:class:`_UriView`, and the helpers that read stored node fields from a snapshot."""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import pydantic_core

from ...errors import (
    IndexCorruptError,
)
from ...models import Node
from ..base import unique_inverse
from .column_files import (
    _BLOCK,
    _LEASE_BYTES,
    _BlobGuard,
    _cut_short,
    _decoded_slices,
    _map_of,
    _map_read,
    _map_short,
    _PFile,
    _release_pages,
    _VectorRows,
)
from .layout import (
    _COLUMNS,
    F32,
    BoolArray,
    IntArray,
    U8Array,
    U64Array,
    _all,
    _h64,
    _hashes,
    _matvec,
    _max,
    _min,
    _optional,
    _sum,
)

_FEW_ROWS = 64
"""Up to this many rows :meth:`_Snap.uris_of` reads their offsets as Python lists."""
_SPAN_BYTES = 4096
"""URIs of rows whose bytes lie within twice their own length plus this span are read as
one slice (:meth:`_Snap._few_uris`), not gathered."""
_KEPT_ROWS = 4096
"""At most this many URIs' rows are kept per snapshot (:meth:`_Snap.lookup`)."""
_KEPT_EXCLUDED = 8
"""Exclusion sets kept with their rows per snapshot (:meth:`_Snap.excluded_rows`): a few
finds paging directories at once each find the set their last round asked."""
_DIR_URIS = 65_536
"""At most this many directory URIs are kept per snapshot (:meth:`_Snap.dir_uris`)."""


_UIDS = itertools.count(1)


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


def _damaged_uris(gen: int) -> IndexCorruptError:
    """The error for saved URIs that are not UTF-8. Why (helper attacks73): the URIs are
    read through the map and trusted after the open's checksums; a file rewritten in place
    by another program since made ``find`` and ``read`` raise a raw
    ``UnicodeDecodeError``."""
    return IndexCorruptError(
        f"the saved URIs of generation {gen} are damaged (not UTF-8): the index's files "
        "were changed in place after it was opened; reopen it (its checksums are checked "
        "at the open)"
    )


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
    # (maps: kept out of the repr, which read every one -- a traceback's locals, a
    # debugger -- and a file cut short under them made the repr itself die of SIGBUS)
    base_vecs: F32 = field(repr=False)
    tail_vecs: _Tail
    base_uris: U8Array = field(repr=False)
    base_nodes: U8Array = field(repr=False)
    tail_uris: list[bytes]
    tail_nodes: list[bytes]
    alive: BoolArray
    by_hash: IntArray
    by_uri: IntArray
    by_parent: IntArray
    parent_row: IntArray
    tag_hash: U64Array
    tag_row: IntArray
    epoch: int = 0
    """The row numbering: the index's data epoch, which a compaction moves on. Within one
    epoch a row number names one immutable node, in this process and in any other opening
    the index (rows are appended, never renumbered); :meth:`EmbeddedStore.family_since`
    compares rows across writes only within it."""
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

    vector_rows: _VectorRows | None = None
    """The saved vectors read by row (``pread``) rather than through ``base_vecs``' map, for
    a generation above ``manifest.READ_VECTORS_BYTES`` (see :class:`_VectorRows`); ``None``:
    rows are gathered from the map, which stays resident (a small index)."""

    mapped: tuple[tuple[str, Any], ...] = ()
    """The files this snapshot reads through a memory map (``uris.bin``, ``vectors.bin``,
    ``nodes.bin`` while its map is read), as (path, ``mmap``): :meth:`check_mapped` sees
    one cut short before it is read (see there)."""

    data_dir: str = ""
    """The generation's data directory (``""``: nothing saved is mapped): a long read
    through a map holds a read lease on its file (:meth:`map_read`)."""

    def map_read(self, name: str, arr: npt.NDArray[Any], need: int, nbytes: int) -> Any:
        """A context guarding a read of ``nbytes`` bytes of map ``arr`` (file ``name``)
        reaching byte ``need``: the file's size checked, and a read lease held while the
        read lasts when it is long (:func:`.column_files._map_read`; helper leftovers65a:
        :meth:`check_mapped` at a call's start left the call's own reads open to a cut made
        meanwhile, a 30 MB scan loop died of SIGBUS in 3 of 3 runs)."""
        return _map_read(os.path.join(self.data_dir, name), _map_of(arr), need, nbytes)

    def check_mapped(self) -> None:
        """Raise :class:`IndexCorruptError` when a file mapped by this snapshot is now
        shorter than its map.

        Why (helper leftovers64b): a read through a map past the end of a file cut short by
        another program (a careless ``truncate``, an editor, a copy tool) is no exception
        but SIGBUS, which kills the whole process (attacks73, ``bench/probe_mapped_files.py``:
        rc -7 on the next ``find``). treehop's own writers only append past a committed
        size, so a file shorter than its map is damage. One ``fstat`` of each map's own
        descriptor (``mmap.size``, ~1 us) at each store call's snapshot (9 per ``find``)
        turns the crash into this typed error; reading every column by ``pread`` instead
        would cost each search's URI decodes and the exact scans a copy (the numbers are
        in bench/README.md). A file cut short *during* a call (between this check and a
        read) would still raise SIGBUS -- no Python code can survive the signal -- so the
        call's long reads (an exact scan, a large gather: 4 MiB or more) hold a read lease
        on the file while they last (:meth:`map_read`, helper leftovers65a); short ones
        (a hit's URI, a few rows) are covered by this check alone."""
        for name, mm in self.mapped:
            if _map_short(mm):
                raise _cut_short(name)

    def _read_nodes(self, start: int, end: int) -> bytes:
        if self.nodes_file is None:
            return bytes(self.base_nodes[start:end])
        return self.nodes_file.read(start, end)

    # ---------------------------------------------------------------- row access
    def uri(self, r: int) -> str:
        if r >= self.n_base:
            return self.tail_uris[r - self.n_base].decode()
        ends = self.cols["uri_end"]
        end = int(ends[r])
        start = int(ends[r - 1]) if r else 0
        # (decoded from the blob's memoryview: an array slice and its copy cost ~3x as much,
        # and a find decodes single URIs in its lookups and subtree proofs)
        try:
            return str(self._uri_view()[start:end], "utf-8")
        except UnicodeDecodeError:
            raise _damaged_uris(self.gen) from None

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
        try:
            return self._uris_of(rows)
        except UnicodeDecodeError:
            raise _damaged_uris(self.gen) from None

    def _uris_of(self, rows: IntArray) -> list[str]:
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size <= _FEW_ROWS:
            # (a search's hits, their parents: Python's max of a few ints beats numpy's call)
            row_l: list[int] = rows.tolist()
            if row_l and max(row_l) < self.n_base:
                return self._few_uris(rows, row_l)
        elif rows.size <= 4096 and int(_max(rows)) < self.n_base:
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
        (a folder's files, a file's chunks: written together) are one slice of the blob, one
        decode, then string slices; a few far apart (``row_l`` given: a global step's hits)
        are decoded one by one from a view of the blob (no copy); more of them, one gather
        of all their bytes and one decode."""
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
            lo, hi = int(_min(starts)), int(_max(ends))
            size = int(_sum(ends) - _sum(starts))
        if hi - lo <= 2 * size + _SPAN_BYTES:
            if s_l is None:
                s_l, e_l = starts.tolist(), ends.tolist()
            return _decoded_slices(self.base_uris[lo:hi].tobytes(), lo, s_l, e_l)
        if s_l is not None:
            # a few rows far apart (a global step's hits): each decoded from a view of the
            # blob, no copy (~0.6 us a row, where the gather's index arithmetic, copy and
            # slices cost ~1 us a row for 40 rows)
            view = self._uri_view()
            return [str(view[a:e], "utf-8") for a, e in zip(s_l, e_l, strict=True)]
        lens = ends - starts
        cuts = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(lens, out=cuts[1:])
        idx = np.repeat(starts - cuts[:-1], lens) + np.arange(int(cuts[-1]), dtype=np.int64)
        c = cuts.tolist()
        return _decoded_slices(self.base_uris[idx].tobytes(), 0, c[:-1], c[1:])

    def _uri_view(self) -> memoryview:
        """A memoryview of the saved URI blob, made once per snapshot."""
        view: memoryview | None = self.cache.get(("uri_view",))
        if view is None:
            view = self.cache.setdefault(("uri_view",), self.base_uris.data)
        return view

    def dir_uris(self, rows: IntArray) -> list[str]:
        """:meth:`uris_of` of directory rows (the parents of a search's hits), kept per
        snapshot (:meth:`uris_with_dirs`)."""
        return self.uris_with_dirs(np.zeros(0, np.int64), rows)[1]

    def batch_columns(
        self, qid: IntArray, rows: IntArray
    ) -> tuple[IntArray, list[str], list[str | None], list[int | None], list[bool]]:
        """The columns of many queries' answers at once (``rows``, each query's run in
        ``qid`` order, every row linked to a parent): each row's parent rank within its
        query (rows of one parent in one query share a code; the batch answers of
        ``find_many``), its URI, its parent's URI, chunk index and leaf flag. The parents
        are decoded once for the batch (:meth:`uris_with_dirs`)."""
        parent = self.parent_row[rows]
        stride = int(parent.max()) + 1
        _, ranks = np.unique(qid * stride + parent, return_inverse=True)
        ranks = ranks.reshape(-1).astype(np.int64, copy=False)
        dirs, dir_of = unique_inverse(parent)
        uris, dir_names = self.uris_with_dirs(rows, dirs)
        parents: list[str | None] = [dir_names[k] for k in dir_of.tolist()]
        leaves: list[bool] = self.cols["leaf"][rows].tolist()
        return ranks, uris, parents, _optional(self.cols["chunk"][rows]), leaves

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
        self._keep_rows(found)
        names = [found[r] if u is None else u for r, u in zip(dir_l, known, strict=True)]
        return decoded[:n], names

    def dir_names(self, dirs: list[int]) -> list[str]:
        """The URIs of directory rows ``dirs`` (a few distinct parents, sorted), kept per
        snapshot as :meth:`uris_with_dirs` keeps them (the same cache, bound and lookup
        answers), each one not kept yet decoded on its own (a global step's hits have ~3)."""
        kept: dict[int, str] | None = self.cache.get(("dir_uris",))
        if kept is None:
            kept = self.cache.setdefault(("dir_uris",), {})
        get = kept.get
        known = [get(r) for r in dirs]
        if None not in known:
            return cast("list[str]", known)
        uri = self.uri
        found = {r: uri(r) for r, u in zip(dirs, known, strict=True) if u is None}
        if len(kept) + len(found) > _DIR_URIS:
            kept.clear()
        kept.update(found)
        self._keep_rows(found)
        return [found[r] if u is None else u for r, u in zip(dirs, known, strict=True)]

    def few_uris(self, rows: IntArray, row_l: list[int]) -> list[str]:
        """:meth:`uris_of` of at most ``_FEW_ROWS`` rows, given also as the list ``row_l``."""
        if row_l and max(row_l) < self.n_base:
            try:
                return self._few_uris(rows, row_l)
            except UnicodeDecodeError:
                raise _damaged_uris(self.gen) from None
        return self.uris_of(rows)

    def vectors_of(self, rows: IntArray, held: bool = False) -> F32:
        """The vectors of ``rows``: every reader of single rows (a search's candidates, the
        graph's build and orphans, ``get_vectors``, a compaction) comes through here, so
        that a generation read by ``pread`` (:attr:`vector_rows`) maps nothing. ``held``:
        see :meth:`vectors_held`."""
        if rows.size and int(rows.max()) < self.n_base:
            return self._base_rows(rows, held)
        out = np.empty((rows.size, self.dim), np.float32)
        base = rows < self.n_base
        out[base] = self._base_rows(rows[base], held)
        out[~base] = self.tail_vecs.take(rows[~base] - self.n_base)
        return out

    def vectors_held(self, rows: IntArray) -> F32:
        """:meth:`vectors_of` for a reader that no store call's :meth:`check_mapped`
        covers -- the graph worker's chunks, its sweep, the open's warm-up: a read through
        the map of any length checks the file's size and holds a read lease while it lasts
        (:meth:`map_read`), so a file cut short by another program is an
        :class:`~treehop.errors.IndexCorruptError` there, never SIGBUS.

        Why (helper leftovers70b): the worker reads 1,024 rows at a time (1.5 MiB at 384
        dimensions), under the 4 MiB from which a call's own reads take a lease, and runs
        between calls: a ``truncate`` of a mapped ``vectors.bin`` while it built killed the
        process (rc -7). The lease costs ~10 us a chunk, which takes milliseconds to add."""
        return self.vectors_of(rows, held=True)

    def _base_rows(self, rows: IntArray, held: bool = False) -> F32:
        if self.vector_rows is not None:
            return self.vector_rows.rows(rows)
        nbytes = int(rows.size) * 4 * self.dim
        if nbytes < _LEASE_BYTES and not held:  # (a few rows: the call's check_mapped)
            return np.asarray(self.base_vecs[rows], dtype=np.float32)
        # (held: leased at any length, by asking as for a long read)
        lease = max(nbytes, _LEASE_BYTES) if held else nbytes
        with self.map_read("vectors.bin", self.base_vecs, self.n_base * 4 * self.dim, lease):
            return np.asarray(self.base_vecs[rows], dtype=np.float32)

    def base_blocks(self) -> list[tuple[int, int]]:
        """Row ranges of the saved vectors for a scan: the whole map at once when it stays
        resident, else blocks of ``_BLOCK`` bytes whose pages :meth:`base_block` releases."""
        if not self.n_base:
            return []
        if self.vector_rows is None:
            return [(0, self.n_base)]
        step = max(1, _BLOCK // (4 * max(self.dim, 1)))
        return [(a, min(a + step, self.n_base)) for a in range(0, self.n_base, step)]

    def base_block(self, lo: int, hi: int, use: Any) -> Any:
        """``use(rows lo..hi of the saved vectors)`` read through the map; for a generation
        read by ``pread`` the block's pages are released afterwards (an exact scan over a
        released map is as fast as over a resident one here: the faults map whole folios;
        copying the file through ``pread`` instead took ~2x as long)."""
        rb = 4 * self.dim
        total = self.n_base * rb  # (a scan is a pass over the whole file: leased by its size)
        if self.vector_rows is None and total < _LEASE_BYTES:
            return use(self.base_vecs[lo:hi])  # (a short read: the call's check_mapped)
        # (checked per block, and read under a read lease when the file is long: map_read)
        with self.map_read("vectors.bin", self.base_vecs, hi * rb, total):
            try:
                return use(self.base_vecs[lo:hi])
            finally:
                if self.vector_rows is not None:
                    _release_pages(self.base_vecs, lo * rb, hi * rb)

    def scores_all(self, q: F32) -> F32:
        """Cosine of every row (dead ones included) against ``q``."""
        parts = [self.base_block(a, e, lambda m: _matvec(m, q)) for a, e in self.base_blocks()]
        if self.n > self.n_base:
            parts.extend(_matvec(p, q) for p in self.tail_vecs.parts(self.n - self.n_base))
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def scores_matrix_t(self, qs: F32) -> F32:
        """Cosines of each query against every row: one matrix product, shape (len(qs), n)."""
        parts = [
            self.base_block(a, e, lambda m: qs @ np.asarray(m).T) for a, e in self.base_blocks()
        ]
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

    def _keep_rows(self, decoded: dict[int, str]) -> None:
        """Keep the rows of URIs just decoded from live rows (directory rows, by
        :meth:`uris_with_dirs`) as :meth:`lookup`'s answers for them.

        Why: the tree context searches the subtrees of its best leaves' parents, named by
        URI, and the store first looks each parent's row up (a binary search over every
        row's URI hash and one stored URI decoded to confirm it: ~15 us a find at 100k
        rows, most of it cache and page misses on a parent no earlier query asked). Those
        parents are the directories whose URIs the global step's columns decoded from
        their rows a moment before. A live row whose stored URI is ``u`` is the live row
        :meth:`lookup` answers for ``u`` (a live URI names one row), so the answer kept is
        the one the search would find; a dead row is not kept."""
        kept: dict[str, int] | None = self.cache.get(("rows",))
        if kept is None:
            kept = self.cache.setdefault(("rows",), {})
        if len(kept) + len(decoded) > _KEPT_ROWS:
            kept.clear()
        alive = self.alive
        for row, uri in decoded.items():
            if alive[row]:
                kept[uri] = row

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

    def excluded_rows(self, uris: frozenset[str]) -> IntArray:
        """The live rows of a search's excluded URIs (absent ones left out), in any order.

        Why not :meth:`lookup` of them all: a directory the descent pages through (more
        children than it opens a round) is searched again each round with every child seen
        so far excluded, one set larger each round; looking all of them up again hashed and
        compared rounds x rows URIs (one document of 12,000 near-identical chunks: ~985k, most
        of a 1.5 s find). The last few sets are kept with their rows for this snapshot (rows
        do not change within one); a set that contains a kept one looks up only the URIs the
        kept one lacks (the set operations are C loops over strings whose hashes Python
        keeps). The same rows either way: a URI names at most one live row."""
        recent: tuple[tuple[frozenset[str], IntArray], ...] = self.cache.get(("excluded",), ())
        for prior, rows in recent:
            if prior is uris:
                return rows
        base: IntArray | None = None
        todo: Sequence[str] = list(uris)
        for prior, rows in recent:
            if len(prior) <= len(uris) and prior <= uris:
                base, todo = rows, list(uris - prior)
                break
        found = self.lookup(todo) if todo else np.zeros(0, np.int64)
        found = found[found >= 0]
        out = found if base is None else np.concatenate([base, found])
        # (a new tuple, never one changed in place: finds on other threads read the old one)
        self.cache[("excluded",)] = ((uris, out), *recent[: _KEPT_EXCLUDED - 1])
        return out

    def _row_of(self, uri: str, keys: U64Array) -> int:
        """The live row of ``uri`` (-1: none) by one binary search on the sorted hashes
        (``keys``), confirmed by the stored URI."""
        hv = np.uint64(_h64(uri))
        at = int(keys.searchsorted(hv))
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
    m = int(keys.searchsorted(h, side="right")) - int(keys.searchsorted(h, side="left"))
    k = int(_uri_rank(s)[own])
    end = k + 1 + m
    if m == 0 or k < 0 or end > s.by_uri.size:
        return None
    window = s.by_uri[k + 1 : end]
    if not _all(s.parent_row[window] == own) or not _all(s.cols["leaf"][window]):
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
