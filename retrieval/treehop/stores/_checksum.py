"""Checksums of the embedded store's files, each recorded with the algorithm that made it.

Why two algorithms: format 2 wrote CRC-32 (``zlib``), whose ~1.9 GB/s on one core made
checking the 1.5 GB of vectors of a million-node index most of its open time. XXH3-64
(``xxhash``) runs at ~8 GB/s here, releases the GIL like ``zlib`` does, and detects the same
damage (any flipped byte changes it; it is not a cryptographic hash, and none is needed
against accidental corruption). New writes use XXH3; CRC-32 checksums written before stay
valid and are verified as CRC-32, so an index written by format 2 opens without a rewrite.

How the algorithm is recorded (absent = CRC-32, the format-2 meaning):

- an extent of an append-only file: ``[start, end, sum]`` (CRC-32) or
  ``[start, end, sum, "xxh3_64"]``; one file may hold both after appends to an old index;
- a whole small file (lookup arrays, HNSW): the key names it, ``{"crc32": sum}`` or
  ``{"xxh3_64": sum}``;
- a BM25 file: ``[size, sum]`` (CRC-32) or ``[size, sum, "xxh3_64"]``.

``CURRENT`` and the manifest's checksum of its own content stay CRC-32: they cover a few
kilobytes, and keeping them lets any version read the pointer.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import xxhash

from ..errors import IndexCorruptError

CRC32 = "crc32"
XXH3 = "xxh3_64"
DEFAULT = XXH3
"""The algorithm new writes use."""

_ONE_SHOT: dict[str, Callable[[Any], int]] = {
    CRC32: zlib.crc32,
    XXH3: xxhash.xxh3_64_intdigest,
}
_READ = 1 << 22


def digest(data: Any, algo: str | None = None) -> int:
    """The checksum of a bytes-like object (a memoryview of a map is read in place);
    ``algo`` ``None``: :data:`DEFAULT`."""
    algo = algo or DEFAULT
    try:
        fn = _ONE_SHOT[algo]
    except KeyError:
        raise IndexCorruptError(f"unknown checksum algorithm {algo!r}") from None
    return fn(data)


def file_digest(f: Path, start: int, end: int, algo: str | None = None) -> int:
    """The checksum of ``f[start:end]`` (-1 if the file is shorter), read into one reused
    buffer: a fresh buffer per chunk costs a page fault per 4 KiB, more than the checksum."""
    algo = algo or DEFAULT
    if algo not in _ONE_SHOT:
        raise IndexCorruptError(f"unknown checksum algorithm {algo!r}")
    crc = 0
    h = xxhash.xxh3_64() if algo == XXH3 else None
    buf = bytearray(min(max(end - start, 0), _READ))
    mv = memoryview(buf)
    with open(f, "rb", buffering=0) as fh:
        fh.seek(start)
        left = end - start
        while left > 0:
            got = fh.readinto(mv[: min(left, len(buf))])
            if not got:
                return -1
            if h is not None:
                h.update(mv[:got])
            else:
                crc = zlib.crc32(mv[:got], crc)
            left -= got
    return h.intdigest() if h is not None else crc


def extent(start: int, end: int, value: int, algo: str | None = None) -> list[Any]:
    """An extent record (see the module docstring for its two shapes)."""
    algo = algo or DEFAULT
    return [start, end, value] if algo == CRC32 else [start, end, value, algo]


def parse_extent(ext: Sequence[Any]) -> tuple[int, int, int, str]:
    """``(start, end, sum, algorithm)`` of an extent record."""
    if len(ext) == 3:
        return int(ext[0]), int(ext[1]), int(ext[2]), CRC32
    if len(ext) == 4 and isinstance(ext[3], str):
        return int(ext[0]), int(ext[1]), int(ext[2]), ext[3]
    raise IndexCorruptError(f"malformed checksum extent {list(ext)!r}")


def tagged(value: int, algo: str | None = None) -> dict[str, int]:
    """The checksum of a whole file as a manifest entry's key: ``{algorithm: sum}``."""
    return {algo or DEFAULT: value}


def whole_file_ok(f: Path, size: int, entry: Mapping[str, Any]) -> bool:
    """Whether ``f[:size]`` matches the checksum an entry records under its algorithm's key
    (every recorded one must match; an entry with none is damaged)."""
    found = [(algo, int(entry[algo])) for algo in _ONE_SHOT if algo in entry]
    return bool(found) and all(file_digest(f, 0, size, a) == v for a, v in found)


def sized(size: int, value: int, algo: str | None = None) -> list[Any]:
    """A BM25 file record: ``[size, sum]`` (CRC-32) or ``[size, sum, algorithm]``."""
    algo = algo or DEFAULT
    return [size, value] if algo == CRC32 else [size, value, algo]


def parse_sized(rec: Sequence[Any]) -> tuple[int, int, str]:
    """``(size, sum, algorithm)`` of a BM25 file record."""
    if len(rec) == 2:
        return int(rec[0]), int(rec[1]), CRC32
    if len(rec) == 3 and isinstance(rec[2], str):
        return int(rec[0]), int(rec[1]), rec[2]
    raise IndexCorruptError(f"malformed checksum record {list(rec)!r}")
