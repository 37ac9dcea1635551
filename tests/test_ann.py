"""Approximate global search (hnswlib) on a large store: close to exact, scoped searches exact."""

from __future__ import annotations

import numpy as np
import pytest

from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

R = "viking://resources"


def build(ann_min_rows: int | None, n_dirs: int = 40, per_dir: int = 50) -> EmbeddedStore:
    rng = np.random.default_rng(0)
    store = EmbeddedStore(ann_min_rows=ann_min_rows, lexical=False)
    nodes, vecs = [], []
    centres = rng.standard_normal((n_dirs, 32)).astype(np.float32)
    for d in range(n_dirs):
        nodes.append(
            Node(
                uri=f"{R}/d{d}",
                parent_uri=R,
                context_type=ContextType.RESOURCE,
                level=1,
                is_leaf=False,
            )
        )
        vecs.append(centres[d])
        for i in range(per_dir):
            nodes.append(
                Node(
                    uri=f"{R}/d{d}/f{i}.md",
                    parent_uri=f"{R}/d{d}",
                    context_type=ContextType.RESOURCE,
                    level=2,
                    is_leaf=True,
                    content=f"doc {d} {i}",
                )
            )
            vecs.append(centres[d] + 0.5 * rng.standard_normal(32).astype(np.float32))
    m = np.stack(vecs)
    store.upsert(nodes, m / np.linalg.norm(m, axis=1, keepdims=True))
    return store


def test_ann_global_search_matches_exact() -> None:
    exact, approx = build(None), build(0)
    rng = np.random.default_rng(1)
    recall = []
    for _ in range(20):
        q = rng.standard_normal(32).astype(np.float32)
        q /= np.linalg.norm(q)
        a = [h.node.uri for h in exact.search(q, Scope(subtrees=(R,)), 10)]
        b = [h.node.uri for h in approx.search(q, Scope(subtrees=(R,)), 10)]
        recall.append(len(set(a) & set(b)) / 10)
        # scores of what the ANN returns are exact cosines, in order
        hits = approx.search(q, Scope(), 10)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        for h in hits:
            assert h.score == pytest.approx(
                float(approx.get_vectors([h.node.uri])[0] @ q), abs=1e-5
            )
    assert approx._ann is not None  # the ANN path really ran
    assert np.mean(recall) >= 0.95


def test_ann_respects_filters_and_leaves_scoped_search_exact() -> None:
    approx = build(0)
    q = np.zeros(32, np.float32)
    q[0] = 1.0
    leaves = approx.search(q, Scope(subtrees=(R,), leaves_only=True), 10)
    assert len(leaves) == 10 and all(h.node.is_leaf for h in leaves)
    dirs = approx.search(q, Scope(non_leaves_only=True), 5)
    assert len(dirs) == 5 and not any(h.node.is_leaf for h in dirs)
    exact = build(None)
    kids_a = [h.node.uri for h in approx.search(q, Scope(parent_uri=f"{R}/d3"), 7)]
    kids_e = [h.node.uri for h in exact.search(q, Scope(parent_uri=f"{R}/d3"), 7)]
    assert kids_a == kids_e


def leaf(uri: str) -> Node:
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content=uri,
    )


def test_ann_is_extended_incrementally_not_rebuilt() -> None:
    approx = build(0)
    q = np.zeros(32, np.float32)
    q[5] = 1.0
    approx.search(q, Scope(), 5)
    first = approx._ann
    assert first is not None and first.count == len(approx)
    approx.upsert([leaf(f"{R}/d0/new.md")], q[None, :])
    # a fresh row is found at once (searched exactly beside the HNSW index) ...
    assert approx.search(q, Scope(), 1)[0].node.uri == f"{R}/d0/new.md"
    assert approx._ann is first and first.count == 2040
    # ... and a replaced row's old version is never returned
    approx.upsert([leaf(f"{R}/d0/new.md")], -q[None, :])
    assert all(h.node.uri != f"{R}/d0/new.md" for h in approx.search(q, Scope(), 20))
    # enough new rows are added to the same HNSW index, not a rebuilt one
    rng = np.random.default_rng(2)
    many = rng.standard_normal((2100, 32)).astype(np.float32)
    many /= np.linalg.norm(many, axis=1, keepdims=True)
    approx.upsert([leaf(f"{R}/d1/m{i}.md") for i in range(2100)], many)
    assert approx._ann is first and first.count > 4000
    hit = approx.search(many[7], Scope(), 1)[0]
    assert hit.node.uri == f"{R}/d1/m7.md"


def test_ann_is_saved_and_reopened_without_a_rebuild(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "idx"
    mem = build(0)
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    nodes = list(mem.iter_nodes())
    store.upsert(nodes, mem.get_vectors([n.uri for n in nodes]))
    store.save()
    assert len(list(path.glob("ann-*.bin"))) == 1
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again._ann_file is not None  # loading in the background; searches stay exact
    q = mem.get_vectors([f"{R}/d3/f4.md"])[0]
    assert again.search(q, Scope(), 1)[0].node.uri == f"{R}/d3/f4.md"
    assert again.load_ann()
    assert again._ann is not None and again._ann.count == len(nodes)
    assert again.search(q, Scope(), 1)[0].node.uri == f"{R}/d3/f4.md"
    # a damaged HNSW file is a typed error, not garbage
    f = next(path.glob("ann-*.bin"))
    raw = bytearray(f.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    f.write_bytes(bytes(raw))
    from treehop.errors import IndexCorruptError

    with pytest.raises(IndexCorruptError):
        EmbeddedStore(path, ann_min_rows=0, lexical=False).load_ann()
