"""A file put at the index path after the folder moved reads as the moved index does: every
read raises the "renamed, moved or removed" ``StoreError``, never answers as an empty index
(helper attacks87).

Stop 73 (leftovers73b, leftovers73c) made a direct store's reads raise once its folder left
its path, with nothing there or an empty folder there. With a *file* there (``touch idx``,
an editor's save, ``mv`` of a tarball to the old name), ``refresh()`` raised "exists and is
not a directory" once, after dropping the snapshot, and every read after it answered as an
empty index: ``len`` 0, ``get`` ``[None]``, ``search`` ``[]``, ``state_keys`` an error of
its own. Now the store knows it is gone; a write still refuses (no folder can be made over
a file), and removing the file and committing an index there is read as usual.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import StoreError, TreehopError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder, resource_leaf

VECS = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
URIS = [f"viking://resources/a{i}.md" for i in range(4)]


def _moved_with_a_file_there(tmp_path: Path) -> tuple[EmbeddedStore, Path, Path]:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    s = EmbeddedStore(idx)
    s.upsert([resource_leaf(u, u[-5:]) for u in URIS], VECS)
    s.put_state("sessions/s1", b"v")
    s.save()
    os.rename(idx, moved)
    idx.write_bytes(b"not an index")
    return s, idx, moved


def _refreshed(s: EmbeddedStore) -> None:
    # (a typed error here or at the reads below; never an empty answer)
    with contextlib.suppress(StoreError):
        s.refresh()


def test_reads_after_a_file_replaced_the_folder_raise(tmp_path: Path) -> None:
    s, idx, moved = _moved_with_a_file_there(tmp_path)
    _refreshed(s)
    for read in (
        lambda: len(s),
        lambda: s.get(URIS[:1]),
        lambda: list(s.iter_nodes("viking://resources")),
        lambda: s.search(VECS[0], Scope(), 3),
        lambda: s.get_state("sessions/s1"),
        lambda: s.state_keys("sessions"),
    ):
        with pytest.raises(StoreError, match="renamed, moved or removed"):
            read()
    _refreshed(s)  # (asked again: still gone)
    with pytest.raises(StoreError, match="renamed, moved or removed"):
        len(s)
    s.close()
    assert len(EmbeddedStore(moved)) == 4
    assert idx.read_bytes() == b"not an index"


def test_a_write_over_the_file_is_a_typed_error_and_the_file_stays(tmp_path: Path) -> None:
    s, idx, _ = _moved_with_a_file_there(tmp_path)
    _refreshed(s)
    with pytest.raises(StoreError):
        s.upsert([resource_leaf("viking://resources/b.md", "b")], VECS[:1])
    with pytest.raises(StoreError):
        s.put_state("sessions/s2", b"w")
    assert idx.read_bytes() == b"not an index"
    s.close()


def test_an_index_committed_at_the_path_again_is_read(tmp_path: Path) -> None:
    s, idx, moved = _moved_with_a_file_there(tmp_path)
    _refreshed(s)
    idx.unlink()
    os.rename(moved, idx)
    s.refresh()
    assert len(s) == 4
    assert s.get_state("sessions/s1") == b"v"
    s.close()


def test_a_client_read_after_a_file_replaced_the_folder_raises(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    c = Treehop(path=str(idx), embedder=BagOfWordsEmbedder())
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, tmp_path / "moved")
    idx.write_bytes(b"x")
    for _ in range(2):
        with pytest.raises(TreehopError):
            c.find("keys")
        with pytest.raises(TreehopError):
            c.ls("viking://resources")
    c.close()
