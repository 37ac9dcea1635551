"""A narrow search inside a query's graph step (the tree context's family search) reads the
scores that step gave its candidates (``search_paths._kept_scores``) where every row of its
scope is among them, and answers exactly what it computes otherwise: the same rows, order and
floats (dense, lexical, blended), to the bit, and the same finds.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from test_columnar_search import _outcome
from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import search_paths as sp

from treehop_test_doubles import clustered_tree

R = "viking://resources"


@pytest.fixture(scope="module")
def store() -> EmbeddedStore:
    s = EmbeddedStore(ann_min_rows=0)  # (the graph answers every wide search)
    s.upsert(*clustered_tree(30, 20))
    assert s.wait_ann(timeout=60)
    return s


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the narrow searches answered from a graph step's scores."""
    read = [0]
    kept = sp._kept_scores

    def counting(*args: Any) -> Any:
        out = kept(*args)
        read[0] += out is not None
        return out

    monkeypatch.setattr(sp, "_kept_scores", counting)
    return read


def _arrays(a: Any) -> tuple[Any, ...]:
    at = np.arange(len(a))
    cols = a.columns(at)
    return (
        a.scores.tobytes(),
        a.leaves.tolist(),
        a.uris(at),
        a.exact,
        cols.vector_scores,
        cols.lexical_scores,
    )


@pytest.mark.parametrize(("text", "weight"), [("doc 3 7", 0.5), ("doc 3 7", 1.0), ("", 1.0)])
def test_family_search_equals_the_computed_one(
    store: EmbeddedStore, text: str, weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _counted(monkeypatch)
    rng = np.random.default_rng(7)
    for _ in range(12):
        q = rng.standard_normal(32).astype(np.float32)
        q /= np.linalg.norm(q)
        step = store.search_columns(
            q, Scope(subtrees=(R,)), 40, query_text=text, dense_weight=weight
        )
        parents = list(dict.fromkeys(p for p in step.parent_uris if p and p != R))
        # the families of the best hits, one and two folders at once, and a folder far off
        scopes = [(parents[0],), tuple(parents[:2]), (f"{R}/d{int(rng.integers(0, 30))}",)]
        for subtrees in scopes:
            for limit in (5, 40):
                scope = Scope(subtrees=subtrees)
                got = store.search_arrays(q, scope, limit, query_text=text, dense_weight=weight)
                with monkeypatch.context() as m:
                    m.setattr(sp, "_kept_scores", lambda *a: None)
                    want = store.search_arrays(
                        q, scope, limit, query_text=text, dense_weight=weight
                    )
                assert _arrays(got) == _arrays(want)
    assert read[0] > 0


def test_rows_outside_the_step_are_computed() -> None:
    cand = np.array([9, 3, 5, 12], dtype=np.int64)
    dense = np.array([0.1, 0.2, 0.3, 0.4], dtype=np.float32)
    kept: list[Any] = [cand, dense, dense, None, None]
    got = sp._kept_scores(kept, np.array([3, 12], dtype=np.int64))
    assert got is not None
    assert got[1].tolist() == dense[[1, 3]].tolist() and got[2] is got[1] and got[3] is None
    assert sp._kept_scores(kept, np.array([3, 4], dtype=np.int64)) is None  # 4: not scored
    assert sp._kept_scores(kept, np.array([13], dtype=np.int64)) is None  # past the last
    assert sp._kept_scores(None, np.array([3], dtype=np.int64)) is None


def test_finds_equal_with_and_without_the_kept_scores(
    store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    read = _counted(monkeypatch)
    rng = np.random.default_rng(3)
    for cfg in (RetrievalConfig(), RetrievalConfig(dense_weight=1.0)):
        retriever = HierarchicalRetriever(store, cfg)
        for k in range(10):
            q = rng.standard_normal(32).astype(np.float32)
            req = RetrievalRequest(
                query=TypedQuery(query=f"doc {k} {k + 3}"),
                vector=q / np.linalg.norm(q),
                roots=[R],
                limit=10,
                include_directories=[None, False][k % 2],
            )
            got = asyncio.run(retriever.retrieve(req))
            with monkeypatch.context() as m:
                m.setattr(sp, "_kept_scores", lambda *a: None)
                want = asyncio.run(retriever.retrieve(req))
            assert _outcome(got) == _outcome(want)
            assert got.matched_contexts
    assert read[0] > 0  # the tree context's family searches read the step's scores
