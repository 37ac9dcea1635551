"""The index folder renamed, replaced or removed while a write to it runs (helper
leftovers62c; attacks72's open item).

Before: the errors were typed, but the write's save appended its rows to the data files of
the folder now at the path and wrote a manifest and ``CURRENT`` there, and that index then
failed to open (``by_hash is not sorted``, a checksum mismatch). Now a save whose folder is
no longer the one the write began on (the client's ``locks/writes`` anchor, or the folder
the store's generation was read from) is refused with a :class:`StoreError` and writes
nothing at the path; the folder the write began on keeps its last committed generation.

The swap runs inside the write, from its embedder (no threads, no sleeps).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import StoreError
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder


def _swap(idx: Path, moved: Path, how: str) -> None:
    os.rename(idx, moved)
    if how == "replace":
        idx.mkdir()


class _SwapsTheFolder(BagOfWordsEmbedder):
    """At its ``at``-th call (counted from arming), renames the index folder away and, for
    ``replace``, makes an empty folder at its path."""

    def __init__(self) -> None:
        super().__init__()
        self.n = 0
        self.at: int | None = None
        self.how = "rename"
        self.idx = self.moved = Path()

    def embed(self, texts: Any) -> Any:
        self.n += 1
        if self.at is not None and self.n == self.at:
            _swap(self.idx, self.moved, self.how)
        return super().embed(texts)


def _opens(path: Path) -> list[str]:
    store = EmbeddedStore(path)
    try:
        return sorted(n.uri for n in store.iter_nodes())
    finally:
        store.close()


BASE = ["viking://resources", "viking://resources/base.md"]


@pytest.mark.parametrize("at", [1, 2])
@pytest.mark.parametrize("how", ["rename", "replace"])
def test_a_write_whose_index_folder_is_swapped_refuses_and_writes_nothing_there(
    tmp_path: Path, how: str, at: int
) -> None:
    """The swap at the write's 1st embedder call (before its first upsert) or its 2nd
    (after its leaves' upsert, before the save). Before: ``replace`` left at the path an
    index that failed to open (``IndexCorruptError: ... checksum mismatch``) and the write
    itself failed with ``by_hash is not sorted``; ``rename`` failed with an ``ENOENT``
    StoreError (``rename`` at 1: "cannot open the index lock file")."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    emb = _SwapsTheFolder()
    emb.idx, emb.moved, emb.how = idx, moved, how
    th = Treehop(idx, embedder=emb, tagger=None, chunk_chars=200)
    try:
        th.add_resource("base doc", target_uri="viking://resources/base.md")
        emb.n, emb.at = 0, at
        with pytest.raises(StoreError) as caught:
            th.add_resource("new doc " * 200, target_uri="viking://resources/new.md")
        assert emb.n == at  # (the swap ran inside the write, at its last embedder call)
        cause = "removed or renamed" if how == "rename" else "replaced by another folder"
        assert f"was {cause} while a write to it ran" in str(caught.value)
        # nothing of the old store's at the path: absent, or the empty folder put there
        if how == "rename":
            assert not idx.exists()
        else:
            assert os.listdir(idx) == []
        emb.at = None
        # the store follows its path: a write now makes (or fills) the folder there
        th.add_resource("after", target_uri="viking://resources/after.md")
    finally:
        th.close()
    assert _opens(idx) == ["viking://resources", "viking://resources/after.md"]
    # the folder the write began on: its last committed generation, whole
    assert _opens(moved) == BASE
    with Treehop(moved, embedder=BagOfWordsEmbedder(), tagger=None) as old:
        assert old.read("viking://resources/base.md") == "base doc"


def _node(uri: str) -> Node:
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        abstract=uri.rsplit("/", 1)[-1],
        content=uri,
    )


def _vecs(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


@pytest.mark.parametrize("how", ["rename", "replace"])
def test_a_direct_save_into_a_swapped_folder_is_refused(tmp_path: Path, how: str) -> None:
    """No client (no ``locks/writes`` held): the store's own upsert then ``save`` with the
    folder swapped between them. Before: ``replace`` committed the new rows into the empty
    folder as if they extended the old generation (an index that did not open), ``rename``
    an ``ENOENT`` StoreError."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    store = EmbeddedStore(idx)
    store.upsert([_node(f"viking://resources/a{i}.md") for i in range(40)], _vecs(40, 1))
    store.save()
    store.upsert([_node(f"viking://resources/b{i}.md") for i in range(5)], _vecs(5, 2))
    _swap(idx, moved, how)
    with pytest.raises(StoreError, match="while a write to it ran"):
        store.save()
    assert not store.unsaved
    if how == "rename":
        assert not idx.exists()
    else:
        assert os.listdir(idx) == []
    store.close()  # (nothing pending: writes nothing either)
    assert not idx.exists() if how == "rename" else os.listdir(idx) == []
    assert len(_opens(moved)) == 40


def test_a_folder_replaced_between_writes_is_followed(tmp_path: Path) -> None:
    """No write running when the folder is replaced: the next write reads the folder now at
    the path and commits a whole index there (before: the rows were appended as if the old
    generation were there, and the index did not open)."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    store = EmbeddedStore(idx)
    store.upsert([_node(f"viking://resources/a{i}.md") for i in range(40)], _vecs(40, 1))
    store.save()
    _swap(idx, moved, "replace")
    store.upsert([_node("viking://resources/c.md")], _vecs(1, 3))
    store.save()
    assert len(store) == 1
    store.close()
    assert _opens(idx) == ["viking://resources/c.md"]
    assert len(_opens(moved)) == 40
