"""State blobs on remote stores: one key check and one chunked, generation-safe write/read.

A remote engine stores rows of bounded size, so a blob (sessions, tagger statistics, ingest
manifests) is cut into parts written under a fresh *generation* first, then a head row that
names the generation is written, then the previous generation's parts are deleted: a reader
sees the old blob or the new one, never a mix. Milvus and VikingDB keep their own row layouts
(they persist data already written); this module is the logic both follow.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import StoreError

_SEGMENT = r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}"
STATE_KEY = re.compile(rf"^{_SEGMENT}(/{_SEGMENT}){{0,3}}\Z")
"""A state key: up to four ``/``-separated segments of letters, digits, ``_.-``."""


def check_state_key(key: str) -> None:
    """Refuse a key that could escape its namespace (``..``) or is not a plain path."""
    if not isinstance(key, str) or not STATE_KEY.match(key) or ".." in key:
        raise StoreError(f"invalid state key {key!r}")


@dataclass(frozen=True)
class BlobHead:
    """Where a blob's bytes are: inline in the head row, or ``parts`` rows of ``gen``."""

    inline: bytes | None = None
    gen: str = ""
    parts: int = 0
    sha256: str | None = None
    """A checksum of the whole blob, when the engine's layout records one."""


def write_blob(
    value: bytes,
    part_bytes: int,
    old: BlobHead | None,
    *,
    put_parts: Callable[[str, Sequence[bytes]], None],
    put_head: Callable[[BlobHead], None],
    delete_parts: Callable[[str, int], None],
) -> BlobHead:
    """Write ``value`` (parts first, then the head, then the old parts go); returns the head."""
    digest = hashlib.sha256(value).hexdigest()
    if len(value) <= part_bytes:
        head = BlobHead(inline=value, sha256=digest)
    else:
        gen = uuid.uuid4().hex[:16]
        parts = [value[i : i + part_bytes] for i in range(0, len(value), part_bytes)]
        put_parts(gen, parts)
        head = BlobHead(gen=gen, parts=len(parts), sha256=digest)
    put_head(head)
    if old is not None and old.parts and old.gen != head.gen:
        delete_parts(old.gen, old.parts)
    return head


def read_blob(
    key: str, head: BlobHead, get_parts: Callable[[str, int], Sequence[bytes | None]]
) -> bytes:
    """The blob a head names; missing parts or a checksum mismatch are a :class:`StoreError`."""
    if head.inline is not None or not head.parts:
        data = head.inline or b""
    else:
        parts = list(get_parts(head.gen, head.parts))
        missing = sum(p is None for p in parts)
        if missing or len(parts) != head.parts:
            raise StoreError(
                f"state {key!r}: {missing or head.parts - len(parts)} of {head.parts} parts "
                "are missing"
            )
        data = b"".join(p for p in parts if p is not None)
    if head.sha256 is not None and hashlib.sha256(data).hexdigest() != head.sha256:
        raise StoreError(f"state {key!r}: checksum mismatch (a concurrent write?)")
    return data
