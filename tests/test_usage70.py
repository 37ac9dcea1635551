"""A user's first hour, stop 62 (the core): browsing a new index, and a failed first write.

- ``Treehop(path).ls()`` (its own default, ``viking://resources``) and ``tree()`` on a new
  index, or ``ls("viking://~/memories")`` before a first memory: ``NotFoundError: no node at
  viking://resources``; the LangChain ``treehop_ls`` tool answered an agent "Nothing exists
  at viking://resources; list its parent directory with treehop_ls first". The command line
  and the MCP server had each listed such a root as empty (tests/test_cli62_mcp.py).
- The embedded store on disk: a first write that failed and was discarded kept the
  dimension it had set, so the next write of the right dimension was refused in the process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidURIError, NotFoundError, StoreError
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

_ROOTS = ["viking://resources", "viking://~/memories", "viking://~/skills/", "viking://resources/"]


@pytest.fixture
def new(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


def test_ls_and_tree_of_a_new_index_are_empty(new: Treehop) -> None:
    assert new.ls() == []
    assert new.tree() == {
        "uri": "viking://resources",
        "is_leaf": False,
        "abstract": "",
        "kind": "directory",
        "children": [],
    }
    for root in _ROOTS:
        assert new.ls(root) == []
        assert new.tree(root, depth=0)["uri"] == root.rstrip("/")
        assert "children" not in new.tree(root, depth=0)  # (depth 0: as a directory's)


def test_an_empty_root_beside_a_filled_one(new: Treehop) -> None:
    new.remember("Ann prefers dark mode.", name="theme")
    assert new.ls() == []  # no resources yet
    assert new.ls("viking://~/memories")  # (the note's directory)
    new.add_resource("Blue-green deploys.", target_uri="viking://resources/d.md")
    assert [e.uri for e in new.ls()] == ["viking://resources/d.md"]


def test_below_a_root_a_missing_node_is_still_not_found(new: Treehop) -> None:
    for uri in ("viking://resources/docs", "viking://~/memories/x", "viking://~/skills/a/b"):
        with pytest.raises(NotFoundError, match="no node at"):
            new.ls(uri)
        with pytest.raises(NotFoundError):
            new.tree(uri)
    with pytest.raises(InvalidURIError):  # (another user's space: refused as before)
        new.ls("viking://user/bob/memories")


async def test_the_async_client_lists_an_empty_root(tmp_path: Path) -> None:
    c = AsyncTreehop(tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        assert await c.ls() == []
        assert (await c.tree("viking://~/skills"))["children"] == []
    finally:
        await c.close()


def _leaf(name: str) -> Node:
    return Node(
        uri=f"viking://resources/{name}",
        parent_uri="viking://resources",
        context_type=ContextType.RESOURCE,
        level=1,
        is_leaf=True,
        abstract=name,
        content=name,
    )


@pytest.mark.parametrize("on_disk", [True, False], ids=["disk", "memory"])
def test_a_discarded_first_write_leaves_no_dimension(tmp_path: Path, on_disk: bool) -> None:
    store = EmbeddedStore(tmp_path / "ix" if on_disk else None)
    try:
        store.upsert([_leaf("a")], np.ones((1, 8), np.float32))
        assert store.dimension == 8
        store.discard_unsaved()
        assert store.dimension is None  # was 8 on disk (memory: None already)
        store.upsert([_leaf("a")], np.ones((1, 64), np.float32))
        store.save()
        assert store.dimension == 64
    finally:
        store.close()


def test_a_discarded_write_keeps_the_committed_dimension(tmp_path: Path) -> None:
    # (control: an index with a committed generation keeps its dimension)
    store = EmbeddedStore(tmp_path / "ix")
    try:
        store.upsert([_leaf("a")], np.ones((1, 8), np.float32))
        store.save()
        store.upsert([_leaf("b")], np.ones((1, 8), np.float32))
        store.discard_unsaved()
        assert store.dimension == 8
        with pytest.raises(StoreError, match="does not match the index"):
            store.upsert([_leaf("b")], np.ones((1, 64), np.float32))
    finally:
        store.close()
