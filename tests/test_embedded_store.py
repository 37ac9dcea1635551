from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from treehop.errors import IndexCorruptError, InvalidQueryError, StoreError
from treehop.filters import MetadataFilter, TagFilter
from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

R = "viking://resources"


def node(uri: str, leaf: bool = True, tags: list[str] | None = None, **md: object) -> Node:
    parent = uri.rsplit("/", 1)[0] if "#" not in uri else uri.split("#")[0]
    return Node(
        uri=uri,
        parent_uri=parent,
        context_type=ContextType.RESOURCE,
        level=2 if leaf else 1,
        is_leaf=leaf,
        abstract=uri.rsplit("/", 1)[-1],
        content=uri,
        tags=tags or [],
        metadata=dict(md),
    )


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def store() -> EmbeddedStore:
    s = EmbeddedStore()
    nodes = [
        node(f"{R}/a", leaf=False),
        node(f"{R}/a/x.md", tags=["auto:ml"], year=2020),
        node(f"{R}/a/y.md", tags=["user:ops"], year=2023),
        node(f"{R}/ab", leaf=False),
        node(f"{R}/ab/z.md", tags=["auto:ml", "user:ops"], year=2024),
        node(f"{R}/a/deep", leaf=False),
        node(f"{R}/a/deep/w.md", tags=["auto:ml"], year=2019),
    ]
    vecs = np.stack(
        [
            unit(1, 0, 0),
            unit(1, 0.1, 0),
            unit(0, 1, 0),
            unit(0, 0, 1),
            unit(0.9, 0, 0.1),
            unit(0.5, 0.5, 0),
            unit(0.2, 0.1, 1),
        ]
    )
    s.upsert(nodes, vecs)
    return s


def uris(hits: list) -> list[str]:
    return [h.node.uri.rsplit("/", 1)[-1] for h in hits]


def test_global_search_exact_cosine_order(store: EmbeddedStore) -> None:
    hits = store.search(unit(1, 0, 0), Scope(), 3)
    assert uris(hits) == ["a", "x.md", "z.md"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-6)


def test_children_only(store: EmbeddedStore) -> None:
    hits = store.search(unit(1, 0, 0), Scope(parent_uri=f"{R}/a"), 10)
    assert sorted(uris(hits)) == ["deep", "x.md", "y.md"]
    assert store.search(unit(1, 0, 0), Scope(parent_uri=f"{R}/nope"), 10) == []


def test_subtree_scope_is_prefix_exact(store: EmbeddedStore) -> None:
    # "a" must not include its sibling "ab" even though the string is a prefix.
    hits = store.search(unit(1, 0, 0), Scope(subtrees=(f"{R}/a",)), 10)
    assert sorted(uris(hits)) == ["a", "deep", "w.md", "x.md", "y.md"]


def test_tag_filters_any_all(store: EmbeddedStore) -> None:
    hits = store.search(unit(1, 0, 0), Scope(tags=TagFilter(any_of=("ops",))), 10)
    assert sorted(uris(hits)) == ["y.md", "z.md"]
    hits = store.search(unit(1, 0, 0), Scope(tags=TagFilter(all_of=("ml", "ops"))), 10)
    assert uris(hits) == ["z.md"]


def test_traversal_keeps_directories_that_contain_matches(store: EmbeddedStore) -> None:
    scope = Scope(parent_uri=f"{R}/a", tags=TagFilter(any_of=("ml",)), traversal=True)
    hits = {
        h.node.uri.rsplit("/", 1)[-1]: h.matches for h in store.search(unit(1, 0, 0), scope, 10)
    }
    assert hits == {"x.md": True, "deep": False}  # y.md excluded, deep kept for descent


def test_metadata_filter(store: EmbeddedStore) -> None:
    f = MetadataFilter.parse({"op": "range", "field": "year", "gte": 2023})
    hits = store.search(unit(1, 0, 0), Scope(metadata=f), 10)
    assert sorted(uris(hits)) == ["y.md", "z.md"]


def test_leaf_and_level_filters(store: EmbeddedStore) -> None:
    hits = store.search(unit(1, 0, 0), Scope(non_leaves_only=True), 10)
    assert sorted(uris(hits)) == ["a", "ab", "deep"]
    hits = store.search(unit(1, 0, 0), Scope(levels=(2,)), 10)
    assert all(h.node.is_leaf for h in hits) and len(hits) == 4


def test_upsert_replaces_and_delete(store: EmbeddedStore) -> None:
    n = len(store)
    store.upsert([node(f"{R}/a/x.md", tags=["auto:new"])], unit(0, 0, 1)[None, :])
    assert len(store) == n
    assert store.get([f"{R}/a/x.md"])[0].tags == ["auto:new"]  # type: ignore[union-attr]
    assert store.search(unit(0, 0, 1), Scope(leaves_only=True), 1)[0].node.uri.endswith("x.md")
    assert store.delete([f"{R}/a/x.md", f"{R}/missing"]) == 1
    assert len(store) == n - 1
    assert [c.uri for c in store.children(f"{R}/a")] == [f"{R}/a/deep", f"{R}/a/y.md"]
    assert store.find_by_tags(["new"], Scope(), 10).get("new") in (None, [])


def test_find_by_tags_is_scoped(store: EmbeddedStore) -> None:
    found = store.find_by_tags(["ml"], Scope(subtrees=(f"{R}/a",)), 10)
    assert sorted(n.uri.rsplit("/", 1)[-1] for n in found["ml"]) == ["w.md", "x.md"]


def test_update_tags_keeps_vectors(store: EmbeddedStore) -> None:
    before = store.get_vectors([f"{R}/a/y.md"]).copy()
    store.update_tags({f"{R}/a/y.md": ["auto:fresh"]})
    assert np.array_equal(before, store.get_vectors([f"{R}/a/y.md"]))
    assert [
        h.node.uri for h in store.search(unit(0, 1, 0), Scope(tags=TagFilter(("fresh",))), 5)
    ] == [f"{R}/a/y.md"]


def test_bad_inputs(store: EmbeddedStore) -> None:
    with pytest.raises(StoreError):
        store.upsert([node(f"{R}/q.md")], np.zeros((1, 5), np.float32))
    with pytest.raises(StoreError):
        store.upsert([node(f"{R}/q.md")], np.zeros((2, 3), np.float32))
    with pytest.raises(InvalidQueryError):
        store.search(unit(1, 0, 0), Scope(), 0)
    with pytest.raises(InvalidQueryError):
        store.search(np.ones(5, np.float32), Scope(), 1)


def test_persistence_round_trip_and_mmap(store: EmbeddedStore, tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "idx")
    s.upsert(list(store.iter_nodes()), store.get_vectors([n.uri for n in store.iter_nodes()]))
    s.put_state("sessions", b"hello")
    s.save()
    t = EmbeddedStore(tmp_path / "idx")
    assert len(t) == len(s)
    # committed rows stay memory-mapped (a view of the file's mapping, not a copy)
    assert not t._snap.base_vecs.flags.owndata and not t._snap.base_vecs.flags.writeable
    assert t.get_state("sessions") == b"hello"
    q = unit(1, 0.2, 0.1)
    assert uris(t.search(q, Scope(), 7)) == uris(s.search(q, Scope(), 7))
    # The first mutation after a memory-mapped load copies; the file on disk stays intact.
    t.upsert([node(f"{R}/a/new.md")], q[None, :])
    assert len(EmbeddedStore(tmp_path / "idx")) == len(s)


def test_crash_during_save_keeps_previous_generation(
    store: EmbeddedStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = EmbeddedStore(tmp_path / "idx")
    s.upsert(list(store.iter_nodes()), store.get_vectors([n.uri for n in store.iter_nodes()]))
    s.save()
    s.upsert([node(f"{R}/a/extra.md")], unit(1, 1, 1)[None, :])
    real_replace = os.replace

    def boom(src: object, dst: object) -> None:
        if str(dst).endswith("CURRENT"):
            raise OSError("simulated crash before the pointer swap")
        real_replace(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(StoreError, match="reverted"):
        s.save()
    monkeypatch.setattr(os, "replace", real_replace)
    # memory was reverted to what is on disk, and the lock released
    assert len(s) == len(store) and f"{R}/a/extra.md" not in s
    t = EmbeddedStore(tmp_path / "idx")
    assert len(t) == len(store)  # the previous save, intact
    assert f"{R}/a/extra.md" not in t
    assert not list((tmp_path / "idx").glob(".tmp-*"))


def test_corrupt_index_is_a_clear_error(store: EmbeddedStore, tmp_path: Path) -> None:
    s = EmbeddedStore(tmp_path / "idx")
    s.upsert(list(store.iter_nodes()), store.get_vectors([n.uri for n in store.iter_nodes()]))
    s.save()
    nodes_file = next((tmp_path / "idx").glob("data-*/nodes.bin"))
    raw = bytearray(nodes_file.read_bytes())
    raw[5] ^= 0xFF
    nodes_file.write_bytes(bytes(raw))
    # node texts are verified before their first use, not all at open
    damaged = EmbeddedStore(tmp_path / "idx")
    with pytest.raises(IndexCorruptError, match="checksum"):
        list(damaged.iter_nodes())
    del damaged
    (tmp_path / "idx" / "CURRENT").write_text("../../etc")
    with pytest.raises(IndexCorruptError):
        EmbeddedStore(tmp_path / "idx")
