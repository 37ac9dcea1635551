"""The shared state-blob logic of the remote stores (``treehop.stores._state_blobs``): parts
under a fresh generation before the head, old parts deleted after, missing parts and checksum
mismatches refused. The engines' own row layouts are covered by the conformance suite."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.errors import StoreError
from treehop.stores._state_blobs import BlobHead, check_state_key, read_blob, write_blob


class Rows:
    """A key-value table standing in for an engine's state collection, with a write log."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, int], bytes] = {}
        self.head: BlobHead | None = None
        self.log: list[str] = []

    def put_parts(self, gen: str, parts: Sequence[bytes]) -> None:
        self.log.append(f"parts {gen}")
        self.parts.update({(gen, i): p for i, p in enumerate(parts)})

    def put_head(self, head: BlobHead) -> None:
        self.log.append(f"head {head.gen}")
        self.head = head

    def delete_parts(self, gen: str, n: int) -> None:
        self.log.append(f"delete {gen}")
        for i in range(n):
            self.parts.pop((gen, i), None)

    def get_parts(self, gen: str, n: int) -> list[bytes | None]:
        return [self.parts.get((gen, i)) for i in range(n)]

    def write(self, value: bytes, part_bytes: int = 8) -> BlobHead:
        return write_blob(
            value,
            part_bytes,
            self.head,
            put_parts=self.put_parts,
            put_head=self.put_head,
            delete_parts=self.delete_parts,
        )


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=5), st.integers(1, 16))
def test_every_version_reads_back_and_old_parts_go(values: list[bytes], part: int) -> None:
    rows = Rows()
    for value in values:
        head = rows.write(value, part)
        assert read_blob("k", head, rows.get_parts) == value
        live = {g for g, _ in rows.parts}
        assert live <= {head.gen}  # nothing of an older generation is left


def test_head_is_written_after_its_parts_and_before_the_old_parts_go() -> None:
    rows = Rows()
    first = rows.write(b"0123456789abcdef")
    second = rows.write(b"fedcba9876543210!")
    assert rows.log == [
        f"parts {first.gen}",
        f"head {first.gen}",
        f"parts {second.gen}",
        f"head {second.gen}",
        f"delete {first.gen}",
    ]


def test_missing_part_and_checksum_mismatch_are_store_errors() -> None:
    rows = Rows()
    head = rows.write(b"a blob longer than one part")
    del rows.parts[(head.gen, 1)]
    with pytest.raises(StoreError, match="1 of 4 parts are missing"):
        read_blob("k", head, rows.get_parts)
    bad = BlobHead(inline=b"x", sha256="0" * 64)
    with pytest.raises(StoreError, match="checksum"):
        read_blob("k", bad, rows.get_parts)


@pytest.mark.parametrize("key", ["", "../x", "a b", "/abs", "a/../b", "a/b/c/d/e", 5])
def test_bad_keys_are_refused(key: object) -> None:
    with pytest.raises(StoreError):
        check_state_key(key)  # type: ignore[arg-type]


def test_good_keys_pass() -> None:
    for key in ("sessions/_index", "tagger/keywords.bin", "ingest/manifest-abc", "a.b-c_d"):
        check_state_key(key)
