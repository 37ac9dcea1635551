"""A direct ``EmbeddedStore`` whose index folder moved away reads as a client does (helper
leftovers73b; leftovers72a's open item, bench/README.md "(helper leftovers73b)").

Before: leftovers72a made every *client* read raise :class:`StoreError` once the folder had
left its path, but the store's own reads, once the store knew (after ``refresh()``, or at
the first use after ``close()``, which maps the generation again by its path), answered as
the empty index at the path: ``get`` ``[None]``, ``len`` 0, ``search`` ``[]``,
``iter_uris`` nothing, ``get_state`` ``None`` -- "nothing stored" of an index that had only
moved. Now they raise the client's error; a write still makes a new index at the path (its
reads see it), and the client's adds (``add_resource``, ``add_memory``, the vector stores'
``add_texts``), whose place checks read the store before the write lock, still do.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import StoreError, TreehopError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder, resource_leaf

URI = "viking://resources/a0.md"
VECS = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)


def _saved(path: Path) -> EmbeddedStore:
    s = EmbeddedStore(path)
    s.upsert([resource_leaf(f"viking://resources/a{i}.md", f"a{i}") for i in range(4)], VECS)
    s.put_state("k", b"v")
    s.save()
    return s


READS: dict[str, Callable[[EmbeddedStore], object]] = {
    "get": lambda s: s.get([URI]),
    "len": len,
    "contains": lambda s: URI in s,
    "search": lambda s: s.search(VECS[0], Scope(), 3),
    "iter_uris": lambda s: list(s.iter_uris()),
    "iter_nodes": lambda s: list(s.iter_nodes()),
    "count_nodes": lambda s: s.count_nodes(),
    "children": lambda s: s.children("viking://resources"),
    "child_uris": lambda s: s.child_uris("viking://resources"),
    "content_hashes": lambda s: s.content_hashes(),
    "get_vectors": lambda s: s.get_vectors([URI]),
    "delete": lambda s: s.delete([URI]),
}


def _answers(s: EmbeddedStore) -> dict[str, object]:
    out: dict[str, object] = {}
    for name, read in READS.items():
        try:
            read(s)
            out[name] = "answered"
        except TreehopError as exc:
            out[name] = type(exc)
    return out


@pytest.mark.parametrize("when", ["refresh", "close"])
def test_direct_store_reads_raise_once_it_knows_the_folder_left(tmp_path: Path, when: str) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    s = _saved(idx)
    if when == "close":
        s.close()  # (the next use maps the generation again, by its path)
    os.rename(idx, moved)
    if when == "refresh":
        assert s.refresh() is True
    assert _answers(s) == dict.fromkeys(READS, StoreError)
    with pytest.raises(StoreError, match="renamed, moved or removed") as got:
        s.get([URI])
    assert str(idx) in str(got.value)
    assert not idx.exists()  # (the reads wrote nothing there)
    s.close()  # (closing a store whose folder left raises nothing)
    back = EmbeddedStore(moved)
    assert back.get([URI])[0] is not None and len(back) == 4
    back.close()


def test_a_direct_store_without_refresh_keeps_its_snapshot(tmp_path: Path) -> None:
    """A control, as before: a store reads the generation it opened until ``refresh()``
    (docs/stores.md, "Consistency"); its maps still hold the moved files."""
    idx = tmp_path / "idx"
    s = _saved(idx)
    os.rename(idx, tmp_path / "moved")
    assert s.get([URI])[0] is not None and len(s) == 4
    s.close()


def test_a_direct_write_after_the_move_makes_a_new_index_and_reads_it(tmp_path: Path) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    s = _saved(idx)
    os.rename(idx, moved)
    s.refresh()
    with pytest.raises(StoreError):
        len(s)
    s.upsert([resource_leaf("viking://resources/b.md", "b")], VECS[:1])
    assert len(s) == 1  # (the write holds the store: its reads see the new index)
    s.save()
    assert [*s.iter_uris()] == ["viking://resources/b.md"]
    s.close()
    assert len(EmbeddedStore(moved)) == 4


def test_a_folder_moved_back_is_read_again_directly(tmp_path: Path) -> None:
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    s = _saved(idx)
    os.rename(idx, moved)
    s.refresh()
    with pytest.raises(StoreError):
        s.get([URI])
    os.rename(moved, idx)
    s.refresh()
    assert s.get([URI])[0] is not None
    s.close()


def _client(path: Path) -> Treehop:
    return Treehop(path=str(path), embedder=BagOfWordsEmbedder())


@pytest.mark.parametrize("add", ["add_resource", "add_memory", "langchain_add_texts"])
def test_client_adds_after_a_read_raised_still_make_a_new_index(tmp_path: Path, add: str) -> None:
    """leftovers62c's / leftovers72a's rule kept through the store's new check: an add
    after the move (its place checks read the store before the write lock) writes a new
    index at the path, and the reads then answer from it."""
    idx, moved = tmp_path / "idx", tmp_path / "moved"
    c = _client(idx)
    c.add_resource("the keys rotate every ninety days", name="keys.md")
    os.rename(idx, moved)
    with pytest.raises(StoreError):
        c.ls("viking://resources")  # (the store now knows: its next reads raise)
    if add == "add_resource":
        c.add_resource("the backups run nightly", name="backups.md")
        want = "viking://resources/backups.md"
        assert [e.uri for e in c.ls("viking://resources")] == [want]
    elif add == "add_memory":
        c.add_memory("prefers tea", name="tea")
        assert [e.uri for e in c.ls("viking://~/memories")] == ["viking://~/memories/tea"]
    else:
        from langchain_treehop import TreehopVectorStore

        vs = TreehopVectorStore(client=c)
        ids = vs.add_texts(["the backups run nightly"], ids=["b1"])
        assert [d.page_content for d in vs.get_by_ids(ids)] == ["the backups run nightly"]
    c.close()
    assert (idx / "CURRENT").exists()
    old = _client(moved)
    assert [e.uri for e in old.ls("viking://resources")] == ["viking://resources/keys.md"]
    old.close()
