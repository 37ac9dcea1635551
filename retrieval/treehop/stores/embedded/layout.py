"""The format's constants and the small pieces every part shares: format versions, the column
set and block sizes, numpy array aliases, hashing and a few vector helpers."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ...models import ContextType

FORMAT_VERSION = 3
READABLE_FORMATS = (2, 3)
"""Format 3 is format 2 with checksums that name their algorithm (XXH3-64 for new writes, see
:mod:`.._checksum`); a format-2 index opens as it is, and its first save writes format 3."""
LEGACY_FORMAT_VERSION = 1


_CTYPES = list(ContextType)
_CTYPE_CODE = {c: i for i, c in enumerate(_CTYPES)}
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
_NODE_CACHE = 16_384
_LEX_REPLAY = 4_096
"""A save leaves the BM25 index file as it is while the rows written or deleted since it was
written stay within this (or 1/16 of the live rows): they are replayed from the node texts
when it is loaded (~30 ms per 1,000 rows here) instead of rewriting every posting."""


def _h64(text: str) -> int:
    """A stable 64-bit hash (never 0, which marks "no parent"): CRC-32 and Adler-32 side by
    side, 2.5x cheaper than a cryptographic hash. It only narrows a lookup: every hit is
    confirmed against the stored string, so a collision costs time, never a wrong answer."""
    b = text.encode()
    return ((zlib.crc32(b) << 32) | zlib.adler32(b)) or 1


def _hashes(texts: Sequence[str]) -> U64Array:
    return np.fromiter((_h64(t) for t in texts), dtype=np.uint64, count=len(texts))


def _unique_ints(a: IntArray) -> IntArray:
    """``np.unique`` of an integer array without ``np.unique``: its first call in a process
    imports ``numpy.ma`` (60-100 ms here), which landed in the first ``find()`` after open."""
    a = a.copy()
    a.sort()
    if a.size < 2:
        return a
    keep = np.empty(a.size, dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    out: IntArray = a[keep]
    return out


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


_max = np.maximum.reduce
_min = np.minimum.reduce
_sum = np.add.reduce
_all = np.logical_and.reduce
"""``a.max()``, ``a.min()``, ``a.sum()`` and ``a.all()`` of a 1-d array as the ufunc
reductions those methods call, without the Python frame of numpy's ``_methods`` wrapper
(in a find the wrapper's frame, run on cold caches, cost ~2-3 us a call: ~10 such calls
on the find-only paths were ~1% of a default find at 100k leaves; ``bench/README.md``,
"Issue 35 round 16"). The same C reduction, the same answer."""


def _optional(chunk: npt.NDArray[np.int32]) -> list[int | None]:
    """Chunk indexes with the column's -1 (not a chunk) as ``None``."""
    if _max(chunk, initial=-1) < 0:  # no chunks (the common case)
        return [None] * chunk.size
    return [None if c < 0 else c for c in chunk.tolist()]


_SUBTREE_KEPT = 2048
"""The most subtrees a snapshot keeps (``_SearchPaths._subtree_rows``' bound; the batched
family searches of :mod:`.family_batch` keep them the same way)."""
