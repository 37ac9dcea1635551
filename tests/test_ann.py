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


def test_ann_is_rebuilt_after_writes() -> None:
    approx = build(0)
    q = np.zeros(32, np.float32)
    q[5] = 1.0
    approx.search(q, Scope(), 5)
    first = approx._ann
    node = Node(
        uri=f"{R}/d0/new.md",
        parent_uri=f"{R}/d0",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content="new",
    )
    approx.upsert([node], q[None, :])
    top = approx.search(q, Scope(), 1)
    assert top[0].node.uri == f"{R}/d0/new.md" and approx._ann is not first
