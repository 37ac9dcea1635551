"""What the embedded store does at open so that the first search after it is cheap: the
lookup keys built during the open (in a thread for a large index), a wide subtree as one
slice of the URI order, the wide-scope mask as one scatter, and node texts checked through
``pread`` instead of the map. Each gives the answers of the long way round."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.errors import IndexCorruptError
from treehop.models import Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import ann_worker as emb_ann
from treehop.stores.embedded import column_files as emb_files
from treehop.stores.embedded import manifest as emb_manifest
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot

from treehop_test_doubles import store_folder
from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"


def tree() -> list[Node]:
    """Folders whose names sort between a folder and its descendants (``a-b``, ``a.c``
    after ``a``, before ``a/``), a chunk-style ``#`` child, and plain files."""
    out = [store_folder(f"{R}/a", R), store_folder(f"{R}/a-b", R), store_folder(f"{R}/a.c", R)]
    out += [store_folder(f"{R}/z", R), store_folder(f"{R}/a/x", f"{R}/a")]
    for d in (f"{R}/a", f"{R}/a-b", f"{R}/a.c", f"{R}/z", f"{R}/a/x"):
        out += [leaf(f"{d}/f{i}.md") for i in range(4)]
    chunk = leaf(f"{R}/z#0")
    out.append(chunk.model_copy(update={"parent_uri": f"{R}/z"}))
    return out


def saved(path: Path, nodes: list[Node]) -> None:
    s = EmbeddedStore(path)
    s.upsert(nodes, vecs(len(nodes), 3))
    s.save()
    s.close()


def reference_subtree(s: EmbeddedStore, uri: str) -> list[int]:
    """The concatenation the store built before: own row, then the ``/`` range, then the
    ``#`` range of the URI order."""
    snap = s._snap
    order = [int(r) for r in snap.by_uri]
    uris = [snap.uri(r) for r in order]
    own = [r for r, u in zip(order, uris, strict=True) if u == uri]
    slash = [r for r, u in zip(order, uris, strict=True) if u.startswith(uri + "/")]
    hash_ = [r for r, u in zip(order, uris, strict=True) if u.startswith(uri + "#")]
    return own + slash + hash_


def test_open_builds_the_lookup_keys_in_a_thread_it_joins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = tree()
    saved(tmp_path / "i", nodes)
    monkeypatch.setattr(emb_ann, "_WARM_INLINE_ROWS", 0)  # the large-index path: a thread
    ran: list[tuple[str, bool]] = []  # (the warm-up's thread, whether the open had returned)
    opened: list[bool] = []
    real = emb_ann._warm

    def spy(s: emb_snapshot._Snap, ann_rows: object = None) -> object:
        time.sleep(0.2)  # (a warm-up the open must wait for)
        ran.append((threading.current_thread().name, bool(opened)))
        return real(s, ann_rows)  # type: ignore[arg-type]

    monkeypatch.setattr(emb_ann, "_warm", spy)
    s = EmbeddedStore(tmp_path / "i")
    opened.append(True)
    assert ran == [("treehop-open-warm", False)]  # in a thread, joined: the open paid for it
    snap = s._snap
    uk = snap.cache[("keys", "uri_hash")]
    pk = snap.cache[("keys", "parent_hash")]
    np.testing.assert_array_equal(uk, snap.cols["uri_hash"][snap.by_hash])
    np.testing.assert_array_equal(pk, snap.cols["parent_hash"][snap.by_parent])
    assert np.all(uk[1:] >= uk[:-1]) and np.all(pk[1:] >= pk[:-1])
    # a store opened without them answers the same
    monkeypatch.setattr(emb_manifest, "_start_warm", lambda s, ann_rows=None: lambda: None)
    cold = EmbeddedStore(tmp_path / "i")
    assert ("keys", "uri_hash") not in cold._snap.cache
    uris = [n.uri for n in nodes]
    assert s.get(uris) == cold.get(uris)
    assert [n.uri for n in s.children(f"{R}/a")] == [n.uri for n in cold.children(f"{R}/a")]
    q = vecs(1, 9)[0]
    scope = Scope(subtrees=(R,))
    assert s.search(q, scope, 7) == cold.search(q, scope, 7)


def test_a_failed_warm_up_leaves_the_keys_to_the_first_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    nodes = tree()
    saved(tmp_path / "i", nodes)
    monkeypatch.setattr(emb_ann, "_WARM_INLINE_ROWS", 0)

    def broken(s: emb_snapshot._Snap, ann_rows: object = None) -> None:
        raise MemoryError("no room for the keys")

    monkeypatch.setattr(emb_ann, "_warm", broken)
    s = EmbeddedStore(tmp_path / "i")  # opens anyway
    assert ("keys", "uri_hash") not in s._snap.cache
    assert s.get([nodes[3].uri]) == [nodes[3]]
    assert ("keys", "uri_hash") in s._snap.cache


def test_wide_subtree_is_the_reference_rows_in_the_reference_order(tmp_path: Path) -> None:
    nodes = tree()
    saved(tmp_path / "i", nodes)
    s = EmbeddedStore(tmp_path / "i")
    by_uri = s._snap.by_uri
    sliced = 0
    for uri in [R, *(n.uri for n in nodes), f"{R}/missing", f"{R}/a/x/f1"]:
        got = s._subtree_rows_uncached(s._snap, uri)
        assert got.tolist() == reference_subtree(s, uri), uri
        sliced += int(got.size > 0 and np.shares_memory(got, by_uri))
    # R (not stored, one range), a/x, a-b, a.c (a node right before its one range) came
    # back as slices; a (a-b and a.c sort between it and its range) and z (two ranges) were
    # concatenated, as were the leaves (no range)
    assert sliced == 4


_SEG = st.text(alphabet="ab-./#", min_size=1, max_size=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(_SEG, min_size=1, max_size=3), min_size=1, max_size=25, unique_by=str))
def test_subtree_rows_match_the_reference_on_random_uris(paths: list[list[str]]) -> None:
    """Random URIs of segments that sort around ``/`` and ``#`` (``-`` and ``.`` before,
    letters after): every subtree equals the reference, rows and order."""
    uris = sorted({f"{R}/" + "/".join(p) for p in paths})
    nodes = [leaf(u) for u in uris]
    s = EmbeddedStore()
    s.upsert(nodes, vecs(len(nodes), 5))
    for uri in {*uris, R, *(u.rsplit("/", 1)[0] for u in uris)}:
        assert s._subtree_rows_uncached(s._snap, uri).tolist() == reference_subtree(s, uri)


def test_full_mask_scatters_the_eligibility() -> None:
    rng = np.random.default_rng(4)
    s = EmbeddedStore()
    nodes = [leaf(f"{R}/d/f{i}.md") for i in range(300)]
    s.upsert(nodes, vecs(300, 2))
    snap = s._snap
    for _ in range(20):
        rows = rng.permutation(snap.n)[: rng.integers(1, snap.n)]
        eligible = rng.random(rows.size) < 0.6
        want = np.zeros(snap.n, dtype=bool)
        want[rows[eligible]] = True
        np.testing.assert_array_equal(emb_search._full_mask(snap, rows, eligible, None), want)


def test_node_texts_are_checked_through_pread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_NODE_BLOCK", 512)
    nodes = [leaf(f"{R}/d/f{i}.md", f"text {i} " * 20) for i in range(80)]
    saved(tmp_path / "i", nodes)
    # no background pass: every extent is checked by the reader that needs it
    monkeypatch.setattr(emb_files._BlobGuard, "verify_rest", lambda self, stop=None: None)
    s = EmbeddedStore(tmp_path / "i")
    guard = s._snap.nodes_guard
    assert guard is not None and guard.reader is s._snap.nodes_file
    touched: list[int] = []
    real = emb_files._release_pages

    def spy(arr: np.ndarray, start: int, end: int) -> None:
        touched.append(start)
        real(arr, start, end)

    monkeypatch.setattr(emb_files, "_release_pages", spy)
    assert s.get([nodes[5].uri]) == [nodes[5]]
    assert guard.done.any() and not touched  # checked without mapping a page
    # a damaged extent is still found
    f = next((tmp_path / "i").glob("data-*/nodes.bin"))
    raw = bytearray(f.read_bytes())
    raw[-5] ^= 0x11
    f.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError, match="checksum"):
        s.get([nodes[-1].uri])
    # a file cut short after open: a typed error for the unchecked extents (through the
    # map, the check would have raised SIGBUS and ended the process)
    with open(f, "r+b") as fh:
        fh.truncate(100)
    s._node_cache.clear()
    with pytest.raises(IndexCorruptError):
        s.get([nodes[40].uri])


def test_batch_siblings_equal_one_query_at_a_time() -> None:
    """The batched sibling rule gives each query the rows :func:`_sibling_rows` gives it,
    in the same order: folders of every size around ``_SIBLING_MAX``, deleted and
    ineligible rows, padding candidates, candidates that are siblings already."""
    rng = np.random.default_rng(11)
    s = EmbeddedStore()
    nodes = []
    for d, size in enumerate((3, 40, emb_search._SIBLING_MAX, emb_search._SIBLING_MAX + 1, 7, 90)):
        nodes += [leaf(f"{R}/d{d}/f{i}.md") for i in range(size)]
    s.upsert(nodes, vecs(len(nodes), 12))
    s.delete([f"{R}/d1/f{i}.md" for i in range(0, 40, 3)])
    snap = s._snap
    live = np.flatnonzero(snap.alive[: snap.n])
    for _ in range(30):
        b, width = int(rng.integers(1, 9)), int(rng.integers(1, 40))
        cand = rng.choice(live, size=(b, width))
        dense = rng.standard_normal((b, width)).astype(np.float32)
        ok = rng.random((b, width)) < 0.8
        full = snap.alive[: snap.n] & (rng.random(snap.n) < 0.9)
        owner, rows = emb_search._batch_siblings(snap, cand, dense, ok, full)
        assert np.all(np.diff(owner) >= 0)
        for i in range(b):
            want = emb_search._sibling_rows(snap, cand[i][ok[i]], dense[i][ok[i]], full)
            assert rows[owner == i].tolist() == want.tolist()


def test_children_read_in_one_pass_equal_node_by_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_NODE_BLOCK", 512)  # children across several checked extents
    nodes = tree()
    saved(tmp_path / "i", nodes)
    s = EmbeddedStore(tmp_path / "i")
    s.upsert([leaf(f"{R}/a/new.md")], vecs(1, 8))  # a row in the unsaved tail
    by_parent: dict[str | None, list[Node]] = {}
    for n in [*nodes, leaf(f"{R}/a/new.md")]:
        by_parent.setdefault(n.parent_uri, []).append(n)
    s.get([f"{R}/a/f1.md"])  # one child cached already
    top = s.children(R)  # (R is not stored: its children's parent URIs are read per row)
    assert sorted(n.uri for n in top) == sorted(n.uri for n in by_parent[R])
    reads: list[int] = []
    real = emb_snapshot._Snap.node_json

    def spy(self: emb_snapshot._Snap, r: int) -> bytes:
        reads.append(r)
        return real(self, r)

    monkeypatch.setattr(emb_snapshot._Snap, "node_json", spy)
    for parent in (f"{R}/a", f"{R}/z", f"{R}/a/x", f"{R}/a-b"):
        got = s.children(parent)
        assert sorted(n.uri for n in got) == sorted(n.uri for n in by_parent[parent])
        assert got == s.get([n.uri for n in got])
    assert not reads  # no text was read one row at a time


def test_open_checks_the_graph_in_a_thread_and_reads_the_index_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``verify=True`` the saved graph's checksum runs on the open's own thread
    (overlapping the vectors' check), once; the row map comes from the one read of the
    index file; a damaged graph found that way is dropped and rebuilt, as before."""
    from treehop.stores import _checksum

    nodes = [leaf(f"{R}/d{i % 7}/f{i}.md") for i in range(400)]
    s = EmbeddedStore(tmp_path / "i", ann_min_rows=0, lexical=False)
    s.upsert(nodes, vecs(400, 6))
    assert s.wait_ann(timeout=60)
    s.save()
    s.close()
    graph = next((tmp_path / "i").glob("ann-*.bin"))
    checked: list[tuple[str, str]] = []
    real_ok = _checksum.whole_file_ok

    def spy_ok(f: Path, size: int, entry: object) -> bool:
        checked.append((Path(f).name, threading.current_thread().name))
        return real_ok(f, size, entry)  # type: ignore[arg-type]

    reads: list[str] = []
    real_read = emb_files._read_arrays

    def spy_read(f: Path, meta: object, verify: bool, *rest: Any) -> dict[str, np.ndarray]:
        reads.append(Path(f).name)
        return real_read(f, meta, verify, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_checksum, "whole_file_ok", spy_ok)
    for mod in (emb_manifest, emb_ann):
        monkeypatch.setattr(mod, "_read_arrays", spy_read)
    t = EmbeddedStore(tmp_path / "i", ann_min_rows=0, lexical=False)
    assert t._ann is not None and t._ann.count == 400
    assert [c for c in checked if c[0] == graph.name] == [(graph.name, "treehop-open-graph")]
    assert len(reads) == 1 and reads[0].startswith("index-")
    q = vecs(1, 13)[0]
    assert [h.node.uri for h in t.search(q, Scope(), 5)] == [
        h.node.uri for h in EmbeddedStore(tmp_path / "i", ann_min_rows=None).search(q, Scope(), 5)
    ]
    t.close()
    raw = bytearray(graph.read_bytes())
    raw[len(raw) // 2] ^= 0x40
    graph.write_bytes(bytes(raw))
    bad = EmbeddedStore(tmp_path / "i", ann_min_rows=0, lexical=False)
    assert bad.ann_damaged is not None and "checksum" in bad.ann_damaged
    assert bad.wait_ann(timeout=60) and bad._ann is not None and bad._ann.count == 400


def test_the_background_pass_checks_every_node_extent_and_close_joins_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(emb_files, "_NODE_BLOCK", 512)
    nodes = [leaf(f"{R}/d/f{i}.md", f"text {i} " * 20) for i in range(80)]
    saved(tmp_path / "i", nodes)
    s = EmbeddedStore(tmp_path / "i")
    guard = s._snap.nodes_guard
    assert guard is not None and guard.done.size > 4
    for t in s._threads:
        t.join(timeout=30)
    assert guard.left == 0 and guard.done.all()  # no reader needed them: the pass did
    s.close()
    assert not [t for t in s._threads if t.is_alive()]
    # a pass told to stop checks nothing more (close() sets it before joining)
    s2 = EmbeddedStore(tmp_path / "i", verify=True)
    g2 = s2._snap.nodes_guard
    m = s2._committed
    assert g2 is not None and m is not None
    fresh = emb_files._BlobGuard(g2.f, g2.blob, m["files"]["nodes"]["extents"], g2.reader)
    fresh.verify_rest(stop=lambda: True)
    assert fresh.left == fresh.done.size and not fresh.done.any()
    s2.close()
