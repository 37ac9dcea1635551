"""State blobs on remote stores: one key check and one chunked, generation-safe write/read.

A remote engine stores rows of bounded size, so a blob (sessions, tagger statistics, ingest
manifests) is cut into parts written under a fresh *generation* first, then a head row that
names the generation is written, then the previous generation's parts are deleted: a reader
sees the old blob or the new one, never a mix. Milvus and VikingDB keep their own row layouts
(they persist data already written); this module is the logic both follow.
"""

from __future__ import annotations

import base64
import hashlib
import operator
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


MAX_STATE_PARTS = 1 << 16
"""The most parts a head may name (2 GiB at VikingDB's 32 KB a part): a damaged or hostile
head row saying ``parts: 100000000`` made a read build 10^8 part ids and fetch them a
hundred at a time (still running after 5 minutes) before any check."""
_GEN = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")


class DamagedHead(StoreError):
    """A head row no writer of this module wrote (see :func:`checked_head`). A read raises
    it; a write replaces such a head (:func:`old_head`), which is the only way to repair it."""


def old_head(read: Callable[[], BlobHead | None]) -> BlobHead | None:
    """The head a write replaces: ``read()``, or ``None`` where the stored one is damaged
    (its parts, if it named real ones, are left behind: the write cannot know them)."""
    try:
        return read()
    except DamagedHead:
        return None


def checked_head(
    key: str,
    *,
    inline: object = None,
    gen: object = "",
    parts: object = 0,
    sha256: object = None,
) -> BlobHead:
    """A head row's fields, read back from an engine, as a :class:`BlobHead`; anything a
    writer of this module cannot have written (a part count that is not an int in
    ``0..MAX_STATE_PARTS``, an odd generation, inline data that is not base64, a checksum
    that is not text) is a :class:`StoreError`, not the ``KeyError`` / ``ValueError`` /
    ``binascii.Error`` its use would raise, or an unbounded read."""

    def bad(what: str) -> DamagedHead:
        return DamagedHead(f"state {key!r}: its head row is damaged ({what})")

    if sha256 is not None and not isinstance(sha256, str):
        raise bad("checksum")
    if inline is not None:
        if not isinstance(inline, str):
            raise bad("inline data")
        try:
            data = base64.b64decode(inline, validate=True)
        except ValueError:  # binascii.Error
            raise bad("inline data") from None
        return BlobHead(inline=data, sha256=sha256)
    try:  # (operator.index: an engine's numpy ints too, not a float or a numeric string)
        count = -1 if isinstance(parts, bool) else operator.index(parts)  # type: ignore[arg-type]
    except TypeError:
        count = -1
    if not 0 <= count <= MAX_STATE_PARTS:
        raise bad("part count")
    if count and (not isinstance(gen, str) or not _GEN.match(gen)):
        raise bad("generation")
    return BlobHead(gen=str(gen) if count else "", parts=count, sha256=sha256)


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
        try:
            parts = list(get_parts(head.gen, head.parts))
        except ValueError:  # binascii.Error: a part's text is not base64
            raise StoreError(f"state {key!r}: a part row is damaged (not base64)") from None
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
