"""The embedded store's approximate global step: a usearch HNSW graph over the store's rows.

Why usearch (``python bench/bench_store.py --ann-compare 100000``: same vectors, same graph
width, one run at load ~10 on 2 cores): its 8-bit (``i8``) file is 0.35x the raw float32
vectors (hnswlib 1.10x), a process that opened it and ran 200 queries grew by 0.42x (hnswlib
1.15x), and a saved file opens as a memory map (``Index.restore(view=True)``: no load step;
hnswlib's ``load_index`` parses the whole file, 0.63 s at 100k, holding the GIL), which the
1M "first find after open" target needs. hnswlib answered faster (0.82 vs 1.18 ms p50) and
built with a little less CPU (0.99 vs 1.21 ms per row); both gave the exhaustive top-10 after
the store's exact rescoring of 64 candidates. The 8-bit answer is never returned as it is:
the store over-fetches (at least 64 candidates, a search 128 wide), adds the best
candidates' siblings (see ``search_paths._sibling_rows``) and rescores them all exactly against
the float32 vectors.

Graph width: on bench_store's clustered tree, 16 links left regions unreachable (top-10 equal
to the exhaustive one on 17-28% of queries at 30k-100k leaves whatever the search width);
32 links and 128 wide at build reach 0.90 at 100k from the graph alone (256 wide: 0.985 at
2.5x the build CPU), and the siblings close the rest; 48 links (the default now) also leave
far fewer rows unreachable (below).

The graph is *derived* data, kept out of the write path: a write only publishes rows; a
background worker (:meth:`AnnIndex.extend`, driven by the store) adds them to the graph in
chunks afterwards. Until then the global step searches the graph for the rows it covers
(``row < upto``) and the uncovered tail exactly, so no new row is ever missed, and removed
rows are masked by the snapshot's ``alive`` column, so none is ever returned.

Label ``i`` of the graph is row ``row[i]`` (labels are the order rows were added, so a
compaction renumbers ``row`` and keeps the file). A row whose vector equals an earlier
label's bit for bit is an *alias* of that label's node and is not inserted into the usearch
graph (:attr:`AnnIndex.owner`): a search that returns a node returns its aliases' rows too.

An HNSW graph can leave a few rows unreachable: no search from the entry point ever gets to
them, so they could never be returned, whatever the query. Each chunk the worker adds is
therefore searched for itself, as wide as a query of the graph searches
(:meth:`AnnIndex._unreachable`), and the labels that do not find themselves (``orphans``) are
searched exactly beside the uncovered tail. A row can also become unreachable later, when
newer rows take its links: once the graph has grown by a quarter since its last full check,
the worker searches every label again (:meth:`AnnIndex.sweep`, ``SWEEP_GROWTH``). Measured on
the 100k synthetic clustered tree of ``bench/bench_store.py`` (a search of every row's own
vector, width 128, built in chunks of 1,024): with 32 links 1,270-1,586 rows were
unreachable, 512-665 of them caught when added; with 48 links (``CONNECTIVITY``) 223, 210
caught. ``python bench/bench_ann_reach.py`` (100k, one build each): without sweeps 222
unreachable, 10 of them lost (never recorded); with the sweep that ends the first build 203,
all recorded, for 43 s of build CPU instead of 29. Of 48,705 MiniLM vectors of the benchmark
sets (32 links) 14, 10 caught when added. The checks are background work.
"""

from __future__ import annotations

import contextlib
import importlib.util
import mmap
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

KIND = "usearch-i8"
"""What a manifest's ``ann`` entry records; an entry of any other kind (format-3 indexes
saved an hnswlib file) is ignored and the graph rebuilt."""
EF = 128
"""Search width (usearch ``k``: see ``CHECK_EF``) of a graph of up to ``EF_ROWS`` rows; a larger
graph searches wider (see :func:`search_width`). A query for more candidates than the width
searches that many wide (usearch widens to ``max(expansion, k)`` itself)."""
EF_ROWS = 100_000
EF_MAX = 2_048
EF_GROWTH = 0.6
"""How the search width grows with the graph (see :func:`search_width`)."""


def search_width(count: int) -> int:
    """``EF * (count / EF_ROWS) ** EF_GROWTH``, at least ``EF``: a fixed width reaches less
    of a larger graph. Measured on the 1M-leaf bench tree (80 held-out queries near random
    leaves, top-10 equal to the exhaustive one, 32 links): width 128 0.78, 256 0.88, 512
    0.99, 1024 1.00, at 3.8 / 3.5 / 5.2 / 7.1 ms per global step under load; 128 gives 0.99
    at 100k (bench_store), where this keeps it.

    With 48 links (``python bench/bench_find_profile.py --index IDX --queries-file Q
    --widths 516,384,320,0`` on bench_store's saved 1M index; bench_store's 210 queries /
    410 held-out ones): width 516 210/210 / 410/410; 384 and 320 210/210, with the default
    config's result lists the very same as at 516, at 11% / 15% less find() CPU; 257
    209/210 / 410/410 (20% less); 192 409/410 held-out.

    ``EF_GROWTH`` stays 0.6 (516 wide at 1M). Stop 28 tried 0.4 (324 wide), once the
    orphans became the rows a query *this* wide misses (:meth:`AnnIndex._unreachable`) and
    cheap to search (:class:`OrphanCodes`): on a fresh 1M build by that rule (8,773
    orphans, ``--widths 0,405,516``) 324 / 405 / 516 wide gave 407 / 409 / 410 of 410 on
    queries of another seed (410/410 and 210/210 on the two other sets at every width), and
    the default find()'s median thread CPU moved by less than its run-to-run noise (3.49 /
    3.68 / 3.65 ms, 3.58 / 3.11 / 3.23 ms): the orphans were the cost, not the width, so the
    width that keeps every list stays."""
    return int(min(EF_MAX, max(EF, EF * (count / EF_ROWS) ** EF_GROWTH)))


CONNECTIVITY = 48
"""Links per row. 48 rather than 32 leaves a sixth as many rows unreachable on the 100k
bench tree (see the module's docstring) and gave the exhaustive top-10 on 200 of 200
queries there (32: 192-199), at the same build CPU and search time; the graph file grows
from 0.43x to about 0.5x the raw float32 vectors. A saved graph keeps the links it was built
with."""
EXPANSION_ADD = 128
CHECK_EF = 32
"""Width of the first pass of the reachability check (:meth:`AnnIndex._unreachable`): a
label that a search of its own vector this narrow returns is reachable, and only the few it
misses are searched ``EF`` wide and then as wide as a query. A self-search costs about as
much as an insertion (usearch, 30k rows of the 1M bench tree, 48 links: 128 wide 4.5 CPU-s,
an ``add`` at ``EXPANSION_ADD`` 4.4), so the check doubled the graph's build; 32 wide took
1.5 CPU-s and missed 231 labels, of which 128 wide still missed 89, every one of them also
missed 32 wide (a label found in the narrower search was found in the wider one). The
graph's ``expansion_search`` is this width: every search passes its own width as ``k``
(usearch searches ``max(expansion_search, k)`` wide)."""
CATCH_UP_ROWS = 2_048
"""Rows written after the graph was last extended are searched exactly; once this many
accumulate, the background worker adds them to the graph."""
CHUNK = 1_024
"""Rows added per hold of the write lock: searches wait at most one chunk's insertion and
its reachability check."""
HOLD_S = 0.25
"""The longest a chunk should hold the write lock (searches wait for it). A chunk that held
it longer makes the next one smaller in proportion (down to ``MIN_CHUNK``), one that held it
for under half of this doubles the next (up to ``CHUNK``). Why: rows are not equally costly
to insert; many identical vectors (a chat's "ok" / "thanks" a thousand times over, or a
hostile index of them) made usearch's insertion 10-15x slower, a 1,024-row chunk held the
lock 2.8 s, and finds waited 4-12 s while such a graph was built (helper attacks52)."""
MIN_CHUNK = 32
SWEEP_GROWTH = 0.25
"""A row can become unreachable after its own check, when newer rows take its links. Once
the graph has grown by this share (and by at least ``CATCH_UP_ROWS`` labels) since its last
full check, the worker searches every label for itself again (:meth:`AnnIndex.sweep`). With
geometric growth, all sweeps together search each label about ``1 / SWEEP_GROWTH`` times
over the graph's life: background work bounded by a few builds' worth of searches."""

DEDUPE = True
"""Whether a row whose vector equals an earlier node's bit for bit joins the graph as an alias
of that node instead of a node of its own (:attr:`AnnIndex.owner`). ``False``: every row is a
node, as before stop 53 (``bench/bench_ann_build_stall.py --no-dedupe``)."""

IntArray = npt.NDArray[np.int64]
F32 = npt.NDArray[np.float32]


def next_chunk(size: int, held_s: float) -> int:
    """The rows of the next chunk after one of ``size`` rows held the write lock ``held_s``
    seconds (:data:`HOLD_S`)."""
    if held_s > HOLD_S:
        return max(MIN_CHUNK, int(size * HOLD_S / held_s))
    if held_s < HOLD_S / 2:
        return min(CHUNK, 2 * size)
    return size


class RWLock:
    """Many concurrent searches, or one writer adding a chunk (or saving a copy).

    Searches that waited for a chunk go before the writer's next chunk. Why: the worker
    releases the lock and asks for it again within a few ms (its next chunk's vectors are
    ready); a waiting search, woken by the release, often had not run yet, and waited
    through chunk after chunk (a find's search waited ~1 s behind chunks of ~0.3 s while a
    graph of 80,000 rows was built: helper attacks52's repro)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._waiting = 0
        self._writer = False

    def acquire_read(self) -> None:
        with self._cond:
            if self._writer:
                self._waiting += 1
                try:
                    while self._writer:
                        self._cond.wait()
                finally:
                    self._waiting -= 1
            self._readers += 1

    def release_read(self) -> None:
        with self._cond:
            self._readers -= 1
            if not self._readers:
                self._cond.notify_all()

    def acquire_write(self) -> None:
        with self._cond:
            while self._writer or self._readers or self._waiting:
                self._cond.wait()
            self._writer = True

    def release_write(self) -> None:
        with self._cond:
            self._writer = False
            self._cond.notify_all()


_nk: Any
try:  # (usearch's own dependency: SIMD kernels, an int8 matrix product among them)
    import numkong as _nk
except ImportError:  # pragma: no cover - usearch without it
    _nk = None


def _onnxruntime_first() -> None:
    """Load ``onnxruntime`` (where installed) before usearch's extension module.

    Why: with usearch 2.26 and onnxruntime 1.32 (Linux x86-64 wheels), importing
    onnxruntime *after* ``usearch.compiled`` kills the process with SIGSEGV inside
    onnxruntime's module initialisation (``python -c "import usearch.compiled; import
    onnxruntime"``); the other order works, and both libraries then work. A store whose
    graph loaded first (a reopened index past ``ann_min_rows``, its build thread) crashed
    at the offline embedder's first query. The step costs ~0.13 s once per process, only
    where a graph is used; a broken or missing onnxruntime is left to its own users.

    Never raises (helper attacks73): ``find_spec`` itself raised ``ValueError`` for a stub
    module in ``sys.modules`` (no ``__spec__``) and a finder's ``ImportError``, which
    stopped every graph build and load with an untyped error."""
    if "usearch.compiled" in sys.modules:
        return
    with contextlib.suppress(Exception):  # (its users report it: the embedder says what)
        if importlib.util.find_spec("onnxruntime") is not None:
            import onnxruntime  # noqa: F401


def _index_class() -> Any:
    _onnxruntime_first()
    from usearch.index import Index

    return Index


_EXITING = threading.Event()


def set_exiting() -> None:
    """The interpreter is exiting (the store's exit hook): no new thread that calls into
    usearch may start from now on (see :meth:`AnnIndex.join_background`)."""
    _EXITING.set()


def exiting() -> bool:
    return _EXITING.is_set()


ORPHAN_CODES_MIN = 2_048
"""From this many orphans on, the global step finds the few that can matter through their
8-bit copies (:class:`OrphanCodes`) instead of scoring all of them: below it the float32
scan is a few hundred KB, no slower than usearch's call overhead."""


class OrphanCodes:
    """8-bit copies of the orphans' vectors, for finding the few of them that can enter a
    query's answer without scoring all of them exactly.

    Why: the orphans are scored exactly by every global step, one pass over their float32
    vectors. At 1M rows on bench_store's tree there are 8,670 of them (13 MB), ~1.2-1.6 ms of
    a ~4 ms global step, reading memory; nearly all score far below the query's answer. The
    8-bit copies are a quarter of the bytes, scored by usearch's exact (brute-force) search
    with integer SIMD; only the orphans that might reach the caller's floor are then scored
    exactly.

    No orphan that could reach the floor is missed: with one scale ``s`` for every code
    (``c = rint(s v)``, residual ``r = v - c / s``) and the query's own (``q = q8 / t + e``),
    ``v . q = (c . q8) / (s t) + (c / s) . e + r . q``, so the exact score is at most the
    8-bit estimate plus ``max|c / s| |e| + max|r| |q|`` (Cauchy-Schwarz; computed once per
    query). usearch ranks by the integer dot product (its ``ip`` distance of ``i8`` vectors
    is ``1 - c . q8``, checked by a test), so once the last of the ``k`` best it returned is
    below the floor by more than that bound, every orphan it did not return is too."""

    def __init__(self, vecs: F32) -> None:
        v = np.ascontiguousarray(vecs, dtype=np.float32)
        top = float(np.abs(v).max(initial=0.0))
        self.scale = 127.0 / top if top > 0 and np.isfinite(top) else 1.0
        self.codes: npt.NDArray[np.int8] = np.rint(v * self.scale).astype(np.int8)
        resid = np.linalg.norm(v - self.codes.astype(np.float32) / self.scale, axis=1)
        coded = np.linalg.norm(self.codes.astype(np.float32) / self.scale, axis=1)
        # (float32 norms: 1e-3 relative and 1e-6 absolute headroom for their rounding)
        self.resid_max = float(resid.max(initial=0.0)) * 1.001 + 1e-6
        self.coded_max = float(coded.max(initial=0.0)) * 1.001 + 1e-6
        n, dim = self.codes.shape
        # (a search with ``exact=True`` scans every vector; the links are never used)
        self.index = _index_class()(
            ndim=dim, metric="ip", dtype="i8", connectivity=2, expansion_add=1
        )
        if n:
            self.index.add(np.arange(n, dtype=np.uint64), self.codes, threads=1)
        self.packed: Any = _nk.dots_pack(self.codes) if _nk is not None and n else None
        """The codes packed for numkong's int8 matrix product (:meth:`bounds_many`)."""

    def reaching(self, q: F32, floor: float, k: int) -> IntArray | None:
        """Positions of a superset of the orphans whose exact score ``v . q`` is at least
        ``floor``: the ``k`` best by 8-bit estimate (4x more while the last of them may
        still reach it). ``None`` when the query cannot be coded (not finite, or zero)."""
        n = int(self.codes.shape[0])
        qmax = float(np.abs(q).max(initial=0.0))
        if not n or not (qmax > 0 and np.isfinite(qmax)):
            return None
        t = 127.0 / qmax
        q8 = np.rint(q * t).astype(np.int8)
        err = float(np.linalg.norm(q.astype(np.float64) - q8 / t))
        qn = float(np.linalg.norm(q.astype(np.float64)))
        # (1e-4 |q|: the exact float32 scores' own rounding, and the bound's)
        slack = self.coded_max * err + self.resid_max * qn + 1e-4 * (1.0 + qn)
        q32 = q8.astype(np.int32)
        k = max(1, min(k, n))
        while True:
            got = self.index.search(q8, k, exact=True, threads=1)
            keys = np.asarray(got.keys, dtype=np.int64)
            if k >= n or keys.size < k:
                return keys
            low = int((self.codes[keys].astype(np.int32) @ q32).min())
            if low / (self.scale * t) + slack < floor:
                return keys
            k = min(4 * k, n)

    def _coded_queries(
        self, qs: F32
    ) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each query's 8-bit code (its own scale ``t``) and the slack of the bound
        :meth:`reaching` uses: how far an exact score can lie above its 8-bit estimate."""
        q64 = qs.astype(np.float64)
        t = 127.0 / np.abs(q64).max(axis=1)
        q8 = np.rint(q64 * t[:, None]).astype(np.int8)
        err = np.linalg.norm(q64 - q8 / t[:, None], axis=1)
        qn = np.linalg.norm(q64, axis=1)
        slack = self.coded_max * err + self.resid_max * qn + 1e-4 * (1.0 + qn)
        return q8, t, slack

    def bounds_many(self, qs: F32, floors: npt.NDArray[np.float32]) -> IntArray | None:
        """(query, position) pairs, row-major, of the orphans whose exact score may reach
        each query's floor (each query finite and not zero): the bound of :meth:`reaching`
        for every code at once, from one int8 matrix product of the queries' codes and the
        orphans' (numkong: 1.4 ms for 32 x 8,670 x 384 on one core, where usearch's exact
        search took ~11 ms). ``None`` without numkong."""
        if self.packed is None:
            return None
        q8, t, slack = self._coded_queries(qs)
        dots = np.asarray(_nk.dots_packed(q8, self.packed))
        bound = dots / (self.scale * t)[:, None] + slack[:, None]
        out: IntArray = np.stack(np.nonzero(~(bound < floors[:, None]))).astype(np.int64)
        return out

    def reaching_many(
        self, qs: F32, floors: npt.NDArray[np.float32], k: int, threads: int
    ) -> list[IntArray]:
        """:meth:`reaching` of many queries (each finite and not zero; ``floors``: one
        each): one exact search of the 8-bit codes for all of them (usearch splits it over
        ``threads``), then a 4x wider one of only those whose last key may still reach
        their floor. Each query's positions are a superset of the orphans scoring at least
        its floor, by the bound :meth:`reaching` uses (each query coded with its own
        scale)."""
        n, b = int(self.codes.shape[0]), int(qs.shape[0])
        out: list[IntArray] = [np.zeros(0, np.int64)] * b
        if not n or not b:
            return out
        q8, t, slack = self._coded_queries(qs)
        todo = np.arange(b)
        k = max(1, min(k, n))
        while todo.size:
            got = self.index.search(q8[todo], k, exact=True, threads=threads)
            keys = np.asarray(got.keys, dtype=np.int64).reshape(todo.size, -1)
            if k >= n:
                done = np.ones(todo.size, dtype=bool)
            else:
                low = np.einsum(
                    "qkd,qd->qk",
                    self.codes[keys].astype(np.int32),
                    q8[todo].astype(np.int32),
                    optimize=False,
                ).min(axis=1)
                done = low / (self.scale * t[todo]) + slack[todo] < floors[todo]
            for i in np.flatnonzero(done).tolist():
                out[int(todo[i])] = keys[i]
            todo = todo[~done]
            k = min(4 * k, n)
        return out


@dataclass(frozen=True, slots=True)
class WarmOrphans:
    """A saved graph's orphans, their vectors and their :class:`OrphanCodes`, gathered
    while the index opens (:meth:`AnnIndex.adopt_orphans` hands them to the graph).

    Why: the first global step after an open gathered them itself, a random read of one
    row per orphan (13 MB, 20-60 ms at 1M rows here), and then built the codes in a thread
    that competed with the next few finds for the two cores. The open already reads the
    graph's file whole for its checksum, I/O that a gather in a thread overlaps."""

    labels: IntArray
    rows: IntArray
    """Each label's row in the row map the vectors were gathered from."""
    vecs: F32
    codes: OrphanCodes | None

    @classmethod
    def gather(
        cls, row: IntArray, labels: IntArray, vectors_of: Callable[[IntArray], F32]
    ) -> WarmOrphans:
        """Gather the vectors of ``labels`` (rows by the label map ``row``) as
        :meth:`AnnIndex.orphan_rows` does, and their codes from as many as it codes."""
        rows = row[labels]
        vecs = _orphan_matrix(rows, vectors_of)
        codes = OrphanCodes(vecs) if labels.size >= ORPHAN_CODES_MIN else None
        return cls(labels, rows, vecs, codes)


_HASH_MULT = np.random.default_rng(0x7EE4).integers(
    1, 2**63, size=4096, dtype=np.uint64
) * np.uint64(2) + np.uint64(1)
"""Odd 64-bit multipliers of :func:`_hash_rows` (fixed: a hash is only compared within a
process, and a fixed seed keeps runs repeatable)."""


def _hash_rows(bits: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each row of ``bits`` (a vector's float32 bits): equal rows hash
    equal; :meth:`AnnIndex._owners` compares the bits of rows whose hashes agree."""
    d = bits.shape[1]
    mult = _HASH_MULT[:d] if d <= _HASH_MULT.size else np.resize(_HASH_MULT, d)
    with np.errstate(over="ignore"):
        h: npt.NDArray[np.uint64] = (bits.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
    return h


def _orphan_matrix(rows: IntArray, vectors_of: Callable[[IntArray], F32]) -> F32:
    """The orphans' vectors as one contiguous matrix (``rows``: every label's row, a
    removed one's included): one gather for :meth:`AnnIndex.orphan_rows` and the open's
    :class:`WarmOrphans` alike, which :meth:`AnnIndex.adopt_orphans` takes as equal."""
    return np.ascontiguousarray(vectors_of(np.clip(rows, 0, None)))


FileStamp = tuple[int, int, int, int]
"""A file's ``(st_dev, st_ino, st_size, st_mtime_ns)`` (see :attr:`AnnIndex.stamp`)."""


def file_stamp(st: os.stat_result) -> FileStamp:
    """The :data:`FileStamp` of a ``stat`` result."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _map_whole(f: Path) -> tuple[mmap.mmap, FileStamp]:
    """A read-only map of all of file ``f`` and its stamp (see :attr:`AnnIndex.mapped`): it
    maps address space only, the pages are usearch's own view's."""
    fd = os.open(f, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ), file_stamp(os.fstat(fd))
    finally:
        os.close(fd)


class AnnIndex:
    """A usearch graph over the rows ``< upto`` that were alive when added.

    ``mutable``: built or loaded into memory (rows can be added); a memory-mapped view of a
    saved file is not, and the worker replaces it by an in-memory copy before extending.
    """

    def __init__(
        self,
        index: Any,
        row: IntArray,
        upto: int,
        mutable: bool,
        orphans: IntArray | None = None,
        swept: int | None = None,
        owner: IntArray | None = None,
    ) -> None:
        self.index = index
        self._rows = np.array(row, dtype=np.int64)
        self.count = int(self._rows.size)
        self.upto = int(upto)
        self.mutable = mutable
        self.orphans: IntArray = (
            np.zeros(0, np.int64) if orphans is None else np.array(orphans, dtype=np.int64)
        )
        """The labels that a search of their own vector does not find (see the module's
        docstring): the global step scores their rows exactly. Replaced, never changed in
        place (:meth:`orphan_rows` caches their vectors by identity)."""
        self._orphan_vecs: tuple[IntArray, F32] | None = None
        self._orphan_codes: tuple[IntArray, OrphanCodes | None] | None = None
        """(orphans, their :class:`OrphanCodes`; ``None`` while a thread builds them)."""
        self._orphan_rows: tuple[IntArray, IntArray, int, IntArray] | None = None
        self._codes_thread: threading.Thread | None = None
        """(orphans, the row map's buffer, ``n``, their rows): see :meth:`orphan_rows`."""
        self.swept = self.count if swept is None else min(int(swept), self.count)
        """The label count when every label was last searched for itself (:meth:`sweep`). A
        graph saved before sweeps existed counts as swept: its first sweep waits for growth
        instead of searching a large graph again right after it was opened."""
        self._owner: IntArray | None = None
        """Each label's graph node (``None``: every label is its own, no aliases). See
        :attr:`owner`."""
        self.nodes = self.count
        """The labels in the usearch graph (the others are aliases, see :attr:`owner`)."""
        self._alias_index: tuple[IntArray, IntArray] | None = None
        """(the aliases' owners sorted, the alias labels in that order, each owner's in label
        order): :meth:`copies`' lookup, replaced (never changed in place) when aliases are
        added; ``None`` while there are none."""
        self._hash_keys: npt.NDArray[np.uint64] = np.zeros(0, np.uint64)
        self._hash_labels: IntArray = np.zeros(0, np.int64)
        """The vector hashes (sorted) of the nodes this process added, and their labels:
        :meth:`_owners` finds an exact duplicate's node through them."""
        if owner is not None:
            self._set_owner(np.array(owner, dtype=np.int64))
        self.dedupe = DEDUPE
        """Whether :meth:`extend` keeps exact duplicates out of the graph (:data:`DEDUPE`)."""
        self.mapped: tuple[str, mmap.mmap] | None = None
        """(path, a map of the file) of a graph opened as a view (:meth:`open`): usearch's
        own map of it is out of reach, so the store checks the file's size through this one
        (``mmap.size()``, an ``fstat`` of its descriptor) before reading the view, and holds
        a read lease on it for the worker's long reads (helper leftovers70b)."""
        self.stamp: FileStamp | None = None
        """For a view, the file's stamp when it was mapped: the store compares the file's
        modification time with it before each query (``ann_worker._graph_changed``), since a
        file rewritten in place at the same size passes the size check (helper leftovers72a)."""
        self.guard: Callable[[AnnIndex], contextlib.AbstractContextManager[None]] | None = None
        """For a view (:attr:`mapped`), what each query's read of usearch's map runs under:
        the store's check of the file's size and a read lease held for the query's length
        (``ann_worker._graph_query_held``). A check before the query left the query itself
        to a cut made meanwhile: SIGBUS inside usearch's search (helper leftovers71a)."""
        self.lock = RWLock()
        self.chunk_rows = CHUNK
        """The rows :meth:`extend` adds under the next hold of the write lock (:func:`next_chunk`;
        kept across calls, so a worker catching up again starts from what the last chunk
        cost)."""
        self.recent: dict[bytes, npt.NDArray[np.int64]] = {}
        """The labels of recent queries (``EF`` or more of them), by query bytes. A descent
        asks the same query again with a larger limit; a search returns the best ``k`` of the
        same ``EF``-wide beam whatever ``k <= EF`` is, so a kept answer sliced to ``k``
        equals a new query. Cleared whenever the graph grows."""

    @property
    def row(self) -> IntArray:
        """The row of each label (a view of a buffer that grows by doubling)."""
        return self._rows[: self.count]

    @row.setter
    def row(self, value: IntArray) -> None:
        self._rows = np.array(value, dtype=np.int64)
        self.count = int(self._rows.size)

    @property
    def owner(self) -> IntArray:
        """Each label's graph node: the label itself, or (an *alias*) the earlier label whose
        vector its own vector equals bit for bit, which alone is in the usearch graph.

        Why: usearch's insertion of many identical vectors (a chat's "ok" / "thanks" a
        thousand times over) was 10-15x slower than of distinct ones and held the write lock
        through it (stop 52's section of bench/README.md); an alias is not inserted at all.
        A search that returns a node returns its aliases too (:meth:`expand`): they score
        exactly what it scores, so every row of a tie the graph reaches is a candidate (an
        exact tie among them is then ordered as the exact path orders it); a node the graph
        cannot reach takes its aliases into :attr:`orphans` with it."""
        if self._owner is None:
            return np.arange(self.count, dtype=np.int64)
        return self._owner[: self.count]

    def _set_owner(self, owner: IntArray) -> None:
        """Take ``owner`` (one per label) and rebuild :meth:`expand`'s lookup."""
        if owner.size != self.count:
            raise ValueError(f"{owner.size} owners for {self.count} labels")
        labels = np.arange(owner.size, dtype=np.int64)
        alias = owner != labels
        if owner.size and (int(owner.min()) < 0 or bool((owner > labels).any())):
            raise ValueError("an alias's owner is not an earlier label")
        if alias.any() and bool((owner[owner[alias]] != owner[alias]).any()):
            raise ValueError("an alias's owner is an alias")
        if not alias.any():
            self._owner, self._alias_index, self.nodes = None, None, self.count
            return
        self._owner = owner
        self.nodes = int(self.count - np.count_nonzero(alias))
        aliases = np.flatnonzero(alias)
        keys = owner[aliases]
        order = np.argsort(keys, kind="stable")
        self._alias_index = (keys[order], aliases[order])

    def _append_owners(self, labels: IntArray, owner: IntArray) -> None:
        """Add a chunk's new ``labels`` (the next ones) with their owners (``owner``): the owner
        map grows by doubling and the new aliases are merged into :meth:`copies`' sorted
        lookup, so a chunk costs its own size and the aliases' (not every label's: rebuilding
        the map took ~35 ms a chunk at 1M labels, under the write lock). The caller holds the
        write lock."""
        alias = owner != labels
        start, need = self.count, self.count + labels.size
        if self._owner is None and not alias.any():
            self.count = self.nodes = need
            return
        buf = self._owner
        if buf is None or need > buf.size:
            grown = np.empty(max(need, 2 * (0 if buf is None else buf.size), 1024), np.int64)
            grown[:start] = np.arange(start) if buf is None else buf[:start]
            self._owner = buf = grown
        buf[start:need] = owner
        self.count = need
        self.nodes += int(labels.size - np.count_nonzero(alias))
        if alias.any():
            keys, aliases = owner[alias], labels[alias]
            order = np.argsort(keys, kind="stable")
            none = np.zeros(0, np.int64)
            have_keys, have = self._alias_index or (none, none)
            at = have_keys.searchsorted(keys[order], side="right")
            self._alias_index = (
                np.insert(have_keys, at, keys[order]),
                np.insert(have, at, aliases[order]),
            )

    def expand(self, labels: IntArray) -> IntArray:
        """``labels`` (``-1``: none), then the aliases of each (see :attr:`owner`): the
        labels whose rows a search that returned ``labels`` returns. ``labels`` itself when
        the graph has no aliases (the caller holds ``lock`` for reading)."""
        aliases, _ = self.copies(labels)
        if not aliases.size:
            return labels
        out: IntArray = np.concatenate([labels, aliases])
        return out

    def copies(self, labels: IntArray) -> tuple[IntArray, IntArray]:
        """The aliases of ``labels`` (``-1``: none) and, for each, the position in ``labels``
        of its node: grouped by that position, in order (the caller holds ``lock``)."""
        kept = self._alias_index
        none = np.zeros(0, np.int64)
        if kept is None or not labels.size:
            return none, none
        keys, aliases = kept
        lo = keys.searchsorted(labels, side="left")
        hi = keys.searchsorted(labels, side="right")
        lens = np.where(labels >= 0, hi - lo, 0)
        total = int(lens.sum())
        if not total:
            return none, none
        starts = np.cumsum(lens) - lens
        at = np.repeat(lo - starts, lens) + np.arange(total, dtype=np.int64)
        pos = np.repeat(np.arange(labels.size, dtype=np.int64), lens)
        return aliases[at], pos

    def aliased(self, labels: IntArray) -> npt.NDArray[np.bool_]:
        """Which of ``labels`` (any shape, ``-1``: none) own an alias (the batch steps send
        such a query the one-query way, whose answer :meth:`expand` widens)."""
        kept = self._alias_index
        if kept is None:
            return np.zeros(labels.shape, dtype=bool)
        keys = kept[0]
        at = np.minimum(keys.searchsorted(labels), keys.size - 1)
        out: npt.NDArray[np.bool_] = (labels >= 0) & (keys[at] == labels)
        return out

    def _owners(
        self, labels: IntArray, vecs: F32, vectors_of: Callable[[IntArray], F32]
    ) -> IntArray:
        """The owner (see :attr:`owner`) of each of a chunk's new ``labels`` (vectors
        ``vecs``): an earlier node of this process (:attr:`_hash_keys`) or of the chunk whose
        vector equals it bit for bit, else the label itself. Records the chunk's new nodes'
        hashes.

        A hash only proposes an owner; the bits are compared (an earlier node's vector read
        at its row: a node whose row was removed owns no new aliases). Nodes of a graph
        opened from a file are not hashed (reading every vector would cost the open): a
        duplicate of one of them becomes one new node, whose copies then alias it."""
        out = labels.copy()
        if not labels.size:
            return out
        bits = np.ascontiguousarray(vecs).view(np.uint32).reshape(labels.size, -1)
        h = _hash_rows(bits)
        # earlier nodes: the newest with an equal hash (a node whose row a compaction removed
        # is followed by the next node of its vector), its bits compared
        keys = self._hash_keys
        if keys.size:
            at = np.maximum(keys.searchsorted(h, side="right") - 1, 0)
            hit = np.flatnonzero(keys[at] == h)
            if hit.size:
                cand = self._hash_labels[at[hit]]
                rows = self.row[cand]
                live = rows >= 0
                hit, cand, rows = hit[live], cand[live], rows[live]
                if hit.size:
                    theirs = np.ascontiguousarray(vectors_of(rows), dtype=np.float32)
                    same = (theirs.view(np.uint32).reshape(hit.size, -1) == bits[hit]).all(1)
                    out[hit[same]] = cand[same]
        # within the chunk: each row of a run of equal hashes against the run's first
        order = np.argsort(h, kind="stable")
        hs = h[order]
        first = np.ones(hs.size, dtype=bool)
        first[1:] = hs[1:] != hs[:-1]
        head = order[np.maximum.accumulate(np.where(first, np.arange(hs.size), 0))]
        dup = order[~first]
        if dup.size:
            dup_head = head[~first]
            same = (bits[dup] == bits[dup_head]).all(axis=1) & (out[dup] == labels[dup])
            out[dup[same]] = out[dup_head[same]]
        new = out == labels
        if new.any():
            nh, nl = h[new], labels[new]
            o = np.argsort(nh, kind="stable")
            pos = keys.searchsorted(nh[o], side="right")
            self._hash_keys = np.insert(keys, pos, nh[o])
            self._hash_labels = np.insert(self._hash_labels, pos, nl[o])
        return out

    @classmethod
    def new(cls, dim: int) -> AnnIndex:
        index = _index_class()(
            ndim=dim,
            metric="ip",
            dtype="i8",
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=CHECK_EF,
        )
        return cls(index, np.zeros(0, np.int64), 0, mutable=True, swept=0)

    def orphan_rows(self, n: int, vectors_of: Callable[[IntArray], F32]) -> tuple[IntArray, F32]:
        """The row of each of :attr:`orphans` (``-1``: removed, or not below ``n``) and their
        vectors, one contiguous matrix kept while the orphans stay the same: scoring them is
        one small product, not a gather of scattered rows per query (the caller holds
        ``lock`` for reading). A label keeps its vector for life (a compaction renumbers
        rows, not vectors), so the matrix outlives compactions.

        The rows are kept too, the same array while the orphans, the row map and ``n`` stay
        the same (the caller may key its own derived arrays on it; it must not change it):
        gathering them from the row map is a cache miss per orphan, ~0.25 ms a query at 1M
        rows."""
        labels, buf = self.orphans, self._rows
        kept = self._orphan_rows
        if kept is not None and kept[0] is labels and kept[1] is buf and kept[2] == n:
            rows = kept[3]
        else:
            mapped = self.row[labels]
            rows = np.where(mapped < n, mapped, -1)
            self._orphan_rows = (labels, buf, n, rows)
        cached = self._orphan_vecs
        if cached is None or cached[0] is not labels:
            cached = (labels, _orphan_matrix(self.row[labels], vectors_of))
            self._orphan_vecs = cached
            if labels.size >= ORPHAN_CODES_MIN:
                self._start_orphan_codes(labels, cached[1])
        return rows, cached[1]

    def adopt_orphans(self, warm: WarmOrphans) -> bool:
        """Take the orphans' matrix and codes gathered while the index opened
        (:meth:`WarmOrphans.gather`), when they are this graph's orphans at the same rows
        and nothing was gathered yet; else keep what :meth:`orphan_rows` builds itself.
        Returns whether they were taken."""
        labels = self.orphans
        if self._orphan_vecs is not None or not np.array_equal(labels, warm.labels):
            return False
        if not np.array_equal(self.row[labels], warm.rows):
            return False
        if warm.codes is not None:
            self._orphan_codes = (labels, warm.codes)
        self._orphan_vecs = (labels, warm.vecs)
        return True

    def _start_orphan_codes(self, labels: IntArray, vecs: F32) -> None:
        """Build the orphans' :class:`OrphanCodes` in a thread (tens of ms at 1M rows, off
        the query that found them missing): until then the global step scans them all."""
        self._orphan_codes = (labels, None)
        if _EXITING.is_set():
            return  # (the global step scans the orphans instead)

        def run() -> None:
            codes = OrphanCodes(vecs)
            kept = self._orphan_codes
            if kept is not None and kept[0] is labels:
                self._orphan_codes = (labels, codes)

        t = threading.Thread(target=run, name="treehop-orphan-codes", daemon=True)
        self._codes_thread = t
        t.start()

    def join_background(self) -> None:
        """Wait for the thread that builds the orphans' codes, if one runs: it calls into
        usearch (C++), and a daemon thread still inside a C++ call when the interpreter
        exits is unwound by ``pthread_exit`` through C++ frames that do not allow it, which
        aborts the process (``terminate called without an active exception``)."""
        t = self._codes_thread
        if t is not None and t is not threading.current_thread():
            t.join()

    def orphan_codes(self) -> OrphanCodes | None:
        """The current orphans' :class:`OrphanCodes`, or ``None`` (too few orphans, or still
        being built)."""
        kept = self._orphan_codes
        return kept[1] if kept is not None and kept[0] is self.orphans else None

    @classmethod
    def open(
        cls,
        f: Path,
        dim: int,
        row: IntArray,
        upto: int,
        view: bool,
        orphans: IntArray | None = None,
        swept: int | None = None,
        owner: IntArray | None = None,
    ) -> AnnIndex:
        """A saved graph (memory-mapped when ``view``). Raises ``ValueError`` when the file is
        not a usearch index of as many vectors of ``dim`` dimensions as ``row`` has nodes
        (labels that are not aliases, see :attr:`owner`; ``owner``: ``None`` or empty when
        there are none), when ``owner`` is not a valid owner map of ``row``'s labels, or
        when an orphan label is not one of its labels."""
        if owner is not None and not owner.size:
            owner = None
        if owner is not None and owner.size != row.size:
            raise ValueError(f"{f}: {owner.size} label owners for {row.size} labels")
        nodes = row.size
        if owner is not None:
            nodes = int(np.count_nonzero(owner == np.arange(owner.size)))
        mine = _map_whole(f) if view else None  # (before usearch's: the same file, checked)
        try:
            index = _index_class().restore(str(f), view=view)
        except (RuntimeError, OSError) as exc:
            raise ValueError(str(exc)) from exc
        if mine is not None:
            now = file_stamp(os.stat(f))
            if now[:2] != mine[1][:2]:
                raise ValueError(f"{f}: replaced while it was opened")
            if now != mine[1]:
                raise ValueError(f"{f}: rewritten by another program while it was opened")
        if index is None or index.ndim != dim or len(index) != nodes:
            raise ValueError(f"{f}: not a usearch index of {nodes} rows of {dim} dimensions")
        if (
            orphans is not None
            and orphans.size
            and (int(orphans.min()) < 0 or int(orphans.max()) >= row.size)
        ):
            raise ValueError(f"{f}: orphan labels out of range")
        index.expansion_search = CHECK_EF
        out = cls(index, row, upto, mutable=not view, orphans=orphans, swept=swept, owner=owner)
        out.mapped = None if mine is None else (str(f), mine[0])
        out.stamp = None if mine is None else mine[1]
        return out

    def query(self, q: F32, k: int) -> npt.NDArray[np.int64]:
        """The labels of the ``k`` nearest rows (the caller holds ``lock`` for reading)."""
        key = q.tobytes()
        hit = self.recent.get(key)
        if hit is not None and hit.size >= k:
            return hit[:k]
        got: npt.NDArray[np.int64] = self.query_many(q.reshape(1, -1), k, 1, whole=True)[0]
        if len(self.recent) >= 64:
            self.recent.clear()
        self.recent[key] = got
        return got[:k]

    def remember(self, qs: F32, labels: npt.NDArray[np.int64]) -> None:
        """Keep the whole-width answers of a :meth:`query_many` (``whole=True``) as the
        answers :meth:`query` gives those queries again (a batch's finds read them in
        their later steps, as a find reads its own first answer)."""
        recent = self.recent
        if len(recent) + len(qs) > 64:
            recent.clear()
        for q, got in zip(qs[-64:], labels[-64:], strict=True):
            recent[np.ascontiguousarray(q, dtype=np.float32).tobytes()] = got

    def query_many(
        self, qs: F32, k: int, threads: int, whole: bool = False
    ) -> npt.NDArray[np.int64]:
        """Labels of the ``k`` nearest rows of each query, one row per query, ``-1`` where a
        query found fewer (usearch releases the GIL; ``threads`` splits the batch). Every
        query searches :func:`search_width` wide (asking for that many: the width of the
        index is shared by concurrent callers, a call's ``k`` is not); ``whole``: return the
        whole width, not only the first ``k``."""
        if self.nodes == 0:
            return np.full((qs.shape[0], 0), -1, dtype=np.int64)
        wide = max(k, search_width(self.nodes))
        with contextlib.nullcontext() if self.guard is None else self.guard(self):
            got = self.index.search(qs, min(wide, self.nodes), threads=threads)
        keys = np.asarray(got.keys, dtype=np.uint64).reshape(qs.shape[0], -1)
        if not whole:
            keys = keys[:, :k]
        labels: npt.NDArray[np.int64] = keys.view(np.int64)
        out: npt.NDArray[np.int64] = np.where(labels < self.count, labels, -1)
        return out

    def extend(
        self,
        rows: IntArray,
        vectors_of: Callable[[IntArray], F32],
        upto: int,
        threads: int,
        keep_going: Callable[[], bool],
        check: bool = True,
    ) -> bool:
        """Add ``rows`` (sorted, all ``>= self.upto``) in chunks, then cover up to ``upto``.
        Between chunks searches run; ``keep_going() == False`` stops early (the graph then
        covers the chunks added so far). Returns whether it finished.

        Each chunk is searched for itself before it is published (``check``): the labels it
        does not find join :attr:`orphans`. The check runs under the write lock with the
        insertion: a save (which holds the read lock) must never see labels that ``row``
        does not map yet, or it would write a file whose label count disagrees with its
        rows. ``check=False`` (a bulk build, see :meth:`sweep_follows`) leaves the check to
        the sweep that ends the build."""
        i, size = 0, self.chunk_rows
        while i < rows.size:
            if not keep_going():
                return False
            part = rows[i : i + size]
            vecs = np.ascontiguousarray(vectors_of(part), dtype=np.float32)
            labels = np.arange(self.count, self.count + part.size, dtype=np.int64)
            last = i + size >= rows.size
            i += part.size
            # (outside the lock: only this worker adds labels or hashes)
            owner = self._owners(labels, vecs, vectors_of) if self.dedupe else labels
            node = owner == labels
            every = bool(node.all())
            nodes = labels if every else labels[node]
            node_vecs = vecs if every else np.ascontiguousarray(vecs[node])
            self.lock.acquire_write()
            held = time.perf_counter()
            try:
                keys = nodes.astype(np.uint64)
                if nodes.size:
                    self.index.add(keys, node_vecs, threads=threads)
                lost = (
                    self._unreachable(keys, node_vecs, threads)
                    if check and nodes.size
                    else nodes[:0]
                )
                if not every:  # aliases of a lost node, or of an orphan, are orphans too
                    gone = np.concatenate([lost, self.orphans])
                    lost = np.concatenate([lost, labels[~node][np.isin(owner[~node], gone)]])
                if lost.size:
                    self.orphans = np.concatenate([self.orphans, lost])
                need = self.count + part.size
                if need > self._rows.size:
                    grown = np.empty(max(need, 2 * self._rows.size, 1024), dtype=np.int64)
                    grown[: self.count] = self._rows[: self.count]
                    self._rows = grown
                self._rows[self.count : need] = part
                self._append_owners(labels, owner)
                self.upto = upto if last else int(part[-1]) + 1
                self.recent.clear()
            finally:
                self.lock.release_write()
            size = self.chunk_rows = next_chunk(size, time.perf_counter() - held)
        if not rows.size:
            self.upto = max(self.upto, upto)
        return True

    def needs_sweep(self) -> bool:
        """Whether the graph grew enough since its last full check (``SWEEP_GROWTH``)."""
        return self.sweep_follows(0)

    def sweep_follows(self, adding: int) -> bool:
        """Whether the graph, once ``adding`` more labels are in, will have grown enough
        since its last full check for the worker to sweep it when it catches up
        (:meth:`needs_sweep`). Then the chunks are added without their own check
        (``extend(check=False)``): the sweep searches every label again anyway, so checking
        each chunk as well searched every new label twice. A first 1M build
        (``bench/bench_million.py``'s compare at 200k rows): the chunk checks were about a
        third of its time. The cost: while such a build runs, a row added but not yet checked
        that the graph cannot reach is missed by queries until the sweep (about 0.2% of the
        rows of the bench tree; rows that newer ones make unreachable already waited for a
        sweep the same way). ``swept`` only moves with a sweep, so a build that stops early
        (``close()``) still ends in one when the next process catches up."""
        grown = self.count + adding - self.swept
        return grown >= max(CATCH_UP_ROWS, SWEEP_GROWTH * self.swept)

    def sweep(
        self, vectors_of: Callable[[IntArray], F32], threads: int, keep_going: Callable[[], bool]
    ) -> bool:
        """Search every label for itself again and make the labels missed :attr:`orphans`:
        those that became unreachable since their own check are found, and those that became
        reachable again leave the exact scoring. Chunks are searched under the read lock, so
        searches go on meanwhile; only the caller (the worker, which alone adds rows) changes
        the graph, so nothing is added while it runs. ``keep_going() == False`` stops early
        and changes nothing. A removed row's label (row ``-1``) is left out: it is never
        returned anyway. Returns whether it finished."""
        count = self.count
        lost: list[IntArray] = []
        self.lock.acquire_read()
        try:
            vec_rows = self._node_rows()
        finally:
            self.lock.release_read()
        for start in range(0, count, CHUNK):
            if not keep_going():
                return False
            self.lock.acquire_read()
            try:
                labels = np.arange(start, min(start + CHUNK, count), dtype=np.uint64)
                rows = vec_rows[start : start + labels.size]
                kept = rows >= 0
                labels, rows = labels[kept], rows[kept]
                vecs = np.ascontiguousarray(vectors_of(rows), dtype=np.float32)
                if labels.size:
                    lost.append(self._unreachable(labels, vecs, threads))
            finally:
                self.lock.release_read()
        found = np.concatenate(lost) if lost else np.zeros(0, np.int64)
        self.lock.acquire_write()
        try:
            found = self.expand(found)  # (a lost node's aliases are lost with it)
            self.orphans = np.concatenate([found, self.orphans[self.orphans >= count]])
            self.swept = count
        finally:
            self.lock.release_write()
        return True

    def _node_rows(self) -> IntArray:
        """A row holding each node's vector (``-1``: none left, and for every alias): the
        node's own row, or when that was removed one of its aliases' rows (the same vector),
        so that a sweep still checks a node whose own row is gone but whose aliases live."""
        row = self.row
        if self._owner is None:
            return row
        owner = self.owner
        out = row.copy()
        alias = np.flatnonzero(owner != np.arange(self.count))
        out[alias] = -1
        theirs = row[alias]
        live = theirs >= 0
        heads = owner[alias[live]]
        need = out[heads] < 0
        out[heads[need]] = theirs[live][need]
        return out

    def _unreachable(self, labels: npt.NDArray[np.uint64], vecs: F32, threads: int) -> IntArray:
        """Of ``labels`` (with vectors ``vecs``), those that a search of their own vector, as
        wide as a query of a graph this size searches (:func:`search_width`), does not
        return: the rows such a query cannot reach.

        Passes of growing width, each over the labels the previous one missed: every label
        ``CHECK_EF`` wide (cheap), then ``EF``, then as wide as a query searches. The graph
        only grows, and so does the width, so a later query searches at least this wide.
        Why not ``EF`` alone: at 1M rows the queries search 516 wide, and of the 17,518
        labels a sweep 128 wide missed on bench_store's 1M tree, 8,670 are missed 516 wide;
        the other half were scored exactly by every query for nothing (~1.3 ms of a 5 ms
        global step). Why ``CHECK_EF`` first: see its docstring."""
        size = len(self.index)
        missed = ~self._finds_itself(labels, vecs, min(CHECK_EF, size), threads)
        done = min(CHECK_EF, size)
        for width in (min(EF, size), min(search_width(size), size)):
            if width > done and missed.any():
                again = np.flatnonzero(missed)
                sub = np.ascontiguousarray(vecs[again])
                missed[again[self._finds_itself(labels[again], sub, width, threads)]] = False
                done = width
        out: IntArray = labels[missed].astype(np.int64)
        return out

    def _finds_itself(
        self, labels: npt.NDArray[np.uint64], vecs: F32, width: int, threads: int
    ) -> npt.NDArray[np.bool_]:
        """Whether a search of each label's own vector, ``width`` wide, returns it."""
        got = self.index.search(vecs, width, threads=threads)
        keys = np.asarray(got.keys, dtype=np.uint64).reshape(labels.size, -1)
        found: npt.NDArray[np.bool_] = (keys == labels[:, None]).any(axis=1)
        return found

    def save(self, f: Path) -> None:
        """Write the graph to ``f`` (searches go on; additions wait)."""
        self.lock.acquire_read()
        try:
            self.index.save(str(f))
        finally:
            self.lock.release_read()

    def mutable_copy(self) -> AnnIndex:
        """An in-memory copy that rows can be added to (of a memory-mapped view, say); this
        one keeps serving searches until the copy is published."""
        self.lock.acquire_read()
        try:
            index = self.index.copy()
            row, upto, orphans = self.row.copy(), self.upto, self.orphans.copy()
            swept = self.swept
            owner = None if self._owner is None else self.owner.copy()
            hashes = (self._hash_keys, self._hash_labels)
        finally:
            self.lock.release_read()
        index.expansion_search = CHECK_EF
        out = AnnIndex(index, row, upto, mutable=True, orphans=orphans, swept=swept, owner=owner)
        out._hash_keys, out._hash_labels = hashes  # (replaced, never changed in place)
        return out
