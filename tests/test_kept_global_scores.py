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
    for q in _batch_queries(12, 7)[0]:  # (near a folder: most family searches read)
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
    assert read[0] >= 12  # (38 of 72 hybrid, 66 dense on this machine)


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
    mean_store: tuple[EmbeddedStore, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finds whose family searches read their step's kept scores (queries near a folder, as
    a real query is near its best hits' folder: most of them read) give what they give
    with every score computed.

    (Random queries over ``clustered_tree`` read in 1 find of 20 here and in none on
    another CPU, whose graph differed: the read count there proved nothing.)"""
    store, folders = mean_store
    read = _counted(monkeypatch)
    rng = np.random.default_rng(3)
    n = 10
    for cfg in (RetrievalConfig(), RetrievalConfig(dense_weight=1.0)):
        retriever = HierarchicalRetriever(store, cfg)
        picked = rng.integers(0, 40, n)
        qs = folders[picked] + 0.1 * rng.standard_normal((n, 32))
        qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
        before = read[0]
        for k in range(n):
            req = RetrievalRequest(
                query=TypedQuery(query=f"doc {int(picked[k])} {k}"),
                vector=qs[k],
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
        # the tree context's family searches read the step's scores (most of them)
        assert read[0] - before >= n // 2


def _batch_queries(n: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """Queries near a folder's leaves (as a real query is near its best hits' folder), with
    texts that match."""
    rng = np.random.default_rng(seed)
    _, vecs = clustered_tree(30, 20)
    qs = vecs[rng.integers(0, len(vecs), n)] + 0.3 * rng.standard_normal((n, 32))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    return qs, [f"doc {k % 30} {(k + 3) % 20}" for k in range(n)]


@pytest.mark.parametrize("weight", [0.5, 0.8, 1.0])
def test_batch_family_searches_read_the_batch_steps_scores(
    store: EmbeddedStore, weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``find_many``'s global step (``search_columns_batch``, hybrid or dense) keeps each
    query's scores as the one-query step keeps its own, and the batch's family searches
    (``search_arrays_many``: the leaves of the best hits' folder, of two folders, that
    folder with its directory, a folder far off) read them where every row is among the
    step's candidates: each answer equals the one computed without any kept score, to the
    bit (rows, order, dense, lexical and blended floats, leaf columns built with the
    batch)."""
    read = _counted(monkeypatch)
    qs, texts = _batch_queries(12, 11)
    steps = store.search_columns_batch(
        qs, Scope(subtrees=(R,)), 40, query_texts=texts, dense_weight=weight
    )
    vectors, scopes, limits, qtexts, leaf_cols = [], [], [], [], []
    far = np.random.default_rng(5)
    for q, t, step in zip(qs, texts, steps, strict=True):
        parents = list(dict.fromkeys(p for p in step.parent_uris if p and p != R))
        for subtrees, leaves in (
            ((parents[0],), True),
            (tuple(parents[:2]), True),
            ((parents[0],), False),
            ((f"{R}/d{int(far.integers(0, 30))}",), True),
        ):
            vectors.append(q)
            scopes.append(Scope(subtrees=subtrees, leaves_only=leaves))
            limits.append(40)
            qtexts.append(t)
            leaf_cols.append(20)

    def many() -> list[tuple[Any, ...]]:
        got = store.search_arrays_many(
            vectors,
            scopes,
            limits,
            query_texts=qtexts,
            dense_weights=[weight] * len(vectors),
            leaf_columns=leaf_cols,
        )
        return [_arrays(a) for a in got]

    got = many()
    assert read[0] >= len(qs)  # (most families lie inside their step's candidates)
    with monkeypatch.context() as m:
        m.setattr(sp, "_kept_scores", lambda *a: None)
        want = many()
    assert got == want


@pytest.fixture(scope="module")
def mean_store() -> tuple[EmbeddedStore, np.ndarray]:
    """40 folders of 40 files, each folder's vector the mean of its files' (as
    bench_latency's trees are made), and those folder vectors: a query near a folder is
    near its files, so the graph step's candidates hold the tree context's whole family
    (the folder's row included) and its family search can read them."""
    nodes, vecs = clustered_tree(40, 40)
    vecs = vecs.copy()
    at = np.arange(40) * 41
    for a in at.tolist():
        mean = vecs[a + 1 : a + 41].mean(axis=0)
        vecs[a] = mean / np.linalg.norm(mean)
    s = EmbeddedStore(ann_min_rows=0)
    s.upsert(nodes, vecs)
    assert s.wait_ann(timeout=60)
    return s, vecs[at]


def test_find_many_reads_its_steps_scores_and_equals_find(
    mean_store: tuple[EmbeddedStore, np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch of finds (hybrid, dense) whose family searches read the batch step's kept scores
    (most of them: queries near a folder) gives each query the result ``retrieve`` gives
    it alone."""
    store, folders = mean_store
    rng = np.random.default_rng(4)
    picked = rng.integers(0, 40, 12)
    qs = folders[picked] + 0.1 * rng.standard_normal((12, 32))
    qs = (qs / np.linalg.norm(qs, axis=1, keepdims=True)).astype(np.float32)
    texts = [f"doc {d} {k}" for k, d in enumerate(picked.tolist())]
    reqs = [
        RetrievalRequest(query=TypedQuery(query=t), vector=q, roots=[R], limit=10)
        for q, t in zip(qs, texts, strict=True)
    ]
    for cfg in (RetrievalConfig(), RetrievalConfig(dense_weight=1.0)):
        retriever = HierarchicalRetriever(store, cfg)
        read = _counted(monkeypatch)
        store._snap.cache.clear()
        many = asyncio.run(retriever.retrieve_many(reqs))
        assert read[0] >= len(reqs) // 2
        store._snap.cache.clear()  # (the lone finds compute or keep their own)
        alone = [asyncio.run(retriever.retrieve(r)) for r in reqs]
        assert [_outcome(r) for r in many] == [_outcome(r) for r in alone]
