"""Exact duplicate vectors in the HNSW graph (``AnnIndex.owner``): one usearch node per
distinct vector, its copies aliases of it. A search through the graph returns what the exact
search returns (every copy of a tied vector a candidate), across removals (of a copy and of
the row whose label is the node), a save and reopen, a compaction and more rows after them;
a lost node takes its copies into the orphans; a hash collision never aliases two
different vectors."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop.stores import _ann
from treehop.stores._ann import AnnIndex
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore, search_paths

from treehop_test_doubles import resource_leaf

R = "viking://resources"
DIM = 16


def _unit(m: np.ndarray) -> np.ndarray:
    m = m.astype(np.float32)
    out: np.ndarray = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


def _rows(seed: int, n: int, pool: int, unique_share: float) -> np.ndarray:
    """``n`` unit vectors: each a copy of one of ``pool`` vectors, or (``unique_share``) its own."""
    rng = np.random.default_rng(seed)
    base = _unit(rng.standard_normal((pool, DIM)))
    out = base[rng.integers(0, pool, n)]
    own = rng.random(n) < unique_share
    out[own] = _unit(rng.standard_normal((int(own.sum()), DIM)))
    return out


def _first_equal(vecs: np.ndarray) -> np.ndarray:
    """Each row's first row with the same bits (what the owners must be, one process)."""
    bits = vecs.view(np.uint32)
    _, first, inverse = np.unique(bits, axis=0, return_index=True, return_inverse=True)
    out: np.ndarray = first[inverse.ravel()]
    return out


def _graph(vecs: np.ndarray, chunk: int) -> AnnIndex:
    ann = AnnIndex.new(DIM)
    ann.chunk_rows = chunk
    n = vecs.shape[0]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_ann, "CHUNK", chunk)  # (chunks stay this small: every one held briefly)
        ann.extend(np.arange(n, dtype=np.int64), lambda r: vecs[r], n, 1, lambda: True)
    return ann


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 400),
    pool=st.integers(1, 12),
    unique_share=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
    chunk=st.sampled_from([7, 32, 1024]),
)
def test_each_distinct_vector_is_one_node_and_a_search_returns_every_copy(
    seed: int, n: int, pool: int, unique_share: float, chunk: int
) -> None:
    vecs = _rows(seed, n, pool, unique_share)
    ann = _graph(vecs, chunk)
    want = _first_equal(vecs)
    assert ann.owner.tolist() == want.tolist()
    distinct = int(np.unique(want).size)
    assert ann.nodes == distinct == len(ann.index) and ann.count == n
    assert ann.row.tolist() == list(range(n))
    # the lookup merged chunk by chunk equals one built from the whole owner map
    fresh = AnnIndex.new(DIM)
    fresh.row = ann.row.copy()
    fresh._set_owner(ann.owner.copy())
    assert fresh.nodes == ann.nodes
    if fresh._alias_index is None:
        assert ann._alias_index is None
    else:
        assert ann._alias_index is not None
        for a, b in zip(ann._alias_index, fresh._alias_index, strict=True):
            assert a.tolist() == b.tolist()
    # every node's search (the graph is small: a search reaches all of it) names every copy
    for v in vecs[np.unique(want)[:5]]:
        got = ann.query(v, min(64, ann.count))
        labels = ann.expand(got[got >= 0])
        assert sorted(labels.tolist()) == sorted(set(labels.tolist()))  # each label once
        same = np.flatnonzero((vecs.view(np.uint32) == v.view(np.uint32)).all(axis=1))
        assert set(same.tolist()) <= set(labels.tolist())
        assert ann.aliased(same[:1]).tolist() == [same.size > 1]  # (its node: the first)


def test_distinct_vectors_leave_the_graph_as_it_was() -> None:
    vecs = _rows(3, 500, 1, 1.0)
    ann = _graph(vecs, 64)
    assert ann.nodes == ann.count == 500 and ann._owner is None and ann._alias_index is None
    got = ann.query(vecs[7], 20)
    assert ann.expand(got) is got  # (no aliases: the labels themselves, not a copy)


def test_a_hash_collision_never_aliases_two_different_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # every vector hashes the same: only the bits compared decide
    monkeypatch.setattr(_ann, "_hash_rows", lambda bits: np.zeros(bits.shape[0], np.uint64))
    vecs = _rows(5, 300, 4, 0.3)
    ann = _graph(vecs, 32)
    owner = ann.owner
    assert (vecs[owner].view(np.uint32) == vecs.view(np.uint32)).all()
    assert ann.nodes == len(ann.index)


def test_a_lost_node_takes_its_copies_into_the_orphans(monkeypatch: pytest.MonkeyPatch) -> None:
    vecs = _rows(9, 300, 5, 0.2)
    want = _first_equal(vecs)
    lost_node = int(want[np.bincount(want).argmax()])  # the vector with the most copies
    real = AnnIndex._unreachable

    def unreachable(self: AnnIndex, labels: np.ndarray, v: np.ndarray, threads: int) -> np.ndarray:
        out = real(self, labels, v, threads)
        return np.union1d(out, labels[labels == lost_node].astype(np.int64))

    monkeypatch.setattr(AnnIndex, "_unreachable", unreachable)
    ann = _graph(vecs, 16)  # (copies in later chunks than the node's)
    copies = np.flatnonzero(want == lost_node)
    assert copies.size > 1 and set(copies.tolist()) <= set(ann.orphans.tolist())
    rows, _ = ann.orphan_rows(300, lambda r: vecs[r])
    assert set(copies.tolist()) <= set(rows.tolist())
    # a sweep finds it lost again, copies and all; a node found again leaves with them
    assert ann.sweep(lambda r: vecs[r], 1, lambda: True)
    assert set(copies.tolist()) <= set(ann.orphans.tolist())
    monkeypatch.setattr(AnnIndex, "_unreachable", real)
    assert ann.sweep(lambda r: vecs[r], 1, lambda: True)
    assert not set(copies.tolist()) & set(ann.orphans.tolist())


def test_a_node_whose_own_row_is_removed_is_still_swept_through_a_copy() -> None:
    vecs = _rows(11, 200, 3, 0.0)
    ann = _graph(vecs, 64)
    node = int(ann.owner[0])
    ann.row = np.where(ann.row == node, -1, ann.row)  # its row removed (a compaction)
    rows = ann._node_rows()
    assert rows[node] >= 0 and (vecs[rows[node]] == vecs[node]).all()
    assert (rows[ann.owner != np.arange(ann.count)] == -1).all()


def test_copies_of_a_node_whose_row_is_gone_alias_one_new_node() -> None:
    vecs = _rows(12, 100, 2, 0.0)
    ann = _graph(vecs, 32)
    assert ann.nodes == 2
    ann.row = np.where(ann.row == 0, -1, ann.row)  # node 0's row compacted away
    more = np.concatenate([vecs, np.repeat(vecs[:1], 50, axis=0)])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_ann, "CHUNK", 16)
        for start in range(100, 150, 16):  # (the copies come in several calls and chunks)
            part = np.arange(start, min(start + 16, 150), dtype=np.int64)
            ann.extend(part, lambda r: more[r], int(part[-1]) + 1, 1, lambda: True)
    assert ann.nodes == 3 and len(ann.index) == 3
    assert set(ann.owner[100:].tolist()) == {100}


def test_invalid_owner_maps_are_refused() -> None:
    ann = AnnIndex.new(DIM)
    ann.row = np.arange(4, dtype=np.int64)
    for bad in ([0, 2, 2, 3], [0, 0, 1, 3], [-1, 1, 2, 3], [0, 1]):
        with pytest.raises(ValueError):
            ann._set_owner(np.array(bad, dtype=np.int64))
    ann._set_owner(np.array([0, 0, 2, 0], dtype=np.int64))
    assert ann.nodes == 2 and ann.expand(np.array([0], np.int64)).tolist() == [0, 1, 3]


def _leaf_uris(start: int, n: int) -> list[str]:
    return [f"{R}/d{i % 7}/f{i}.md" for i in range(start, start + n)]


def _compare(graph: EmbeddedStore, exact: EmbeddedStore, qs: np.ndarray, limit: int) -> None:
    """The graph store's answers against the exact store's: the same rows in the same order
    and the same scores, except which copies fill the last tied places (any of them may)."""
    assert graph._ann is not None
    batch = graph.search_batch(qs, Scope(), limit)
    for q, got_b in zip(qs, batch, strict=True):
        got = graph.search(q, Scope(), limit)
        want = exact.search(q, Scope(), limit)
        assert [(h.node.uri, h.score) for h in got_b] == [(h.node.uri, h.score) for h in got]
        assert len(got) == len(want)
        gs = np.array([h.score for h in got])
        ws = np.array([h.score for h in want])
        assert np.allclose(gs, ws, rtol=0, atol=1e-5)
        if not len(got):
            continue
        last = ws[-1]
        above = ws > last + 1e-5
        assert [h.node.uri for h, a in zip(got, above, strict=True) if a] == [
            h.node.uri for h, a in zip(want, above, strict=True) if a
        ]
        tie_w = {h.node.uri for h in exact.search(q, Scope(), 10_000) if h.score >= last - 1e-5}
        assert {h.node.uri for h, a in zip(got, above, strict=True) if not a} <= tie_w
        rows = graph._snap.lookup([h.node.uri for h in got])  # ties ordered by row
        for i in range(len(got) - 1):
            if got[i].score == got[i + 1].score:
                assert rows[i] < rows[i + 1]


def _both(path: Path) -> tuple[EmbeddedStore, EmbeddedStore]:
    return (
        EmbeddedStore(path, ann_min_rows=0, lexical=False),
        EmbeddedStore(ann_min_rows=None, lexical=False),
    )


def _add(stores: tuple[EmbeddedStore, ...], uris: list[str], vecs: np.ndarray) -> None:
    for s in stores:
        s.upsert([resource_leaf(u, u) for u in uris], vecs)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(40, 600),
    pool=st.integers(1, 30),
    unique_share=st.sampled_from([0.0, 0.2, 0.7, 0.9]),
    limit=st.sampled_from([1, 5, 30]),
)
def test_graph_search_with_many_copies_equals_the_exact_search_through_removals_and_reopen(
    seed: int, n: int, pool: int, unique_share: float, limit: int
) -> None:
    rng = np.random.default_rng(seed)
    vecs = _rows(seed, n, pool, unique_share)
    uris = _leaf_uris(0, n)

    def queries() -> np.ndarray:
        picks = vecs[rng.integers(0, n, 4)]
        return np.concatenate([picks, _unit(rng.standard_normal((3, DIM)))])

    with tempfile.TemporaryDirectory() as d, pytest.MonkeyPatch.context() as mp:
        mp.setattr(_ann, "CHUNK", 64)
        # the graph asked for all its nodes: its 8-bit ranking (on 16 dimensions, a row the
        # exact 30th can rank past the 64 asked for) is out of the comparison, the copies,
        # orphans, removals and saved owners are what it checks
        narrow = search_paths._graph_fetch
        mp.setattr(
            search_paths,
            "_graph_fetch",
            lambda s, share, limit: None if narrow(s, share, limit) is None else 1 << 20,
        )
        path = Path(d) / "idx"
        graph, exact = _both(path)
        _add((graph, exact), uris, vecs)
        assert graph.wait_ann(timeout=60)
        ann = graph._ann
        assert ann is not None and ann.nodes == int(np.unique(_first_equal(vecs)).size)
        _compare(graph, exact, queries(), limit)
        # removals: copies, and the rows whose labels are the graph's nodes
        owner = ann.owner
        nodes = np.flatnonzero(owner == np.arange(owner.size))
        gone = set(rng.choice(n, n // 5, replace=False).tolist()) | set(nodes[:3].tolist())
        gone_uris = [uris[i] for i in sorted(gone)]
        for s in (graph, exact):
            s.delete(gone_uris)
        _compare(graph, exact, queries(), limit)
        # saved and reopened (the graph memory-mapped, its owners read back)
        graph.save()
        saved_owner = graph._ann.owner.copy() if graph._ann is not None else None
        graph.close()
        graph = EmbeddedStore(path, ann_min_rows=0, lexical=False)
        assert graph._ann is not None and not graph._ann.mutable
        assert saved_owner is not None and graph._ann.owner.tolist() == saved_owner.tolist()
        _compare(graph, exact, queries(), limit)
        # more rows (copies of the old vectors and new ones), then a compaction
        more = np.concatenate([vecs[rng.integers(0, n, 150)], _rows(seed + 1, 100, 3, 0.3)])
        _add((graph, exact), _leaf_uris(n, 250), more)
        assert graph.wait_ann(timeout=60)
        _compare(graph, exact, queries(), limit)
        late = [u for i, u in enumerate(uris) if i not in gone][: (n - len(gone)) * 3 // 4]
        for s in (graph, exact):
            s.delete(late)
        graph.save()  # (dead rows outnumber live ones: compacted, the labels renumbered)
        _compare(graph, exact, queries(), limit)
        graph.close()
        again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
        _compare(again, exact, queries(), limit)
        again.close()
        exact.close()


def test_many_copies_of_one_vector_send_the_search_the_exact_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vecs = np.concatenate([_rows(2, 300, 1, 0.0), _rows(4, 300, 1, 1.0)])
    graph, exact = (
        EmbeddedStore(ann_min_rows=0, lexical=False),
        EmbeddedStore(ann_min_rows=None, lexical=False),
    )
    uris = _leaf_uris(0, 600)
    _add((graph, exact), uris, vecs)
    assert graph.wait_ann(timeout=60)
    assert graph._ann is not None and graph._ann.nodes == 301
    calls: list[bool] = []
    real: Callable[..., object] = graph._ann_candidates

    def spy(*a: object, **k: object) -> object:
        out = real(*a, **k)
        calls.append(out is None)
        return out

    monkeypatch.setattr(graph, "_ann_candidates", spy)
    for q in (vecs[0], vecs[450]):
        got = graph.search(q, Scope(), 10)
        want = exact.search(q, Scope(), 10)
        assert [(h.node.uri, h.score) for h in got] == [(h.node.uri, h.score) for h in want]
    assert calls == [True, False]  # 300 copies of 600 rows: exact; a lone vector: the graph


def test_batches_with_copies_equal_their_queries_alone_dense_and_hybrid() -> None:
    # 2,000 mostly distinct rows, 200 copies each of 3 vectors (under 1/8 of the rows each:
    # the graph path, with the copies added); queries near and at the copied vectors
    vecs = np.concatenate([_rows(20, 2000, 1, 1.0), np.repeat(_rows(21, 3, 3, 1.0), 200, 0)])
    vecs = vecs[np.random.default_rng(22).permutation(vecs.shape[0])]
    uris = _leaf_uris(0, vecs.shape[0])
    store = EmbeddedStore(ann_min_rows=0, lexical=True)
    store.upsert([resource_leaf(u, f"word{i % 50} text") for i, u in enumerate(uris)], vecs)
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None and ann.nodes == 2003
    rng = np.random.default_rng(23)
    copied = _rows(21, 3, 3, 1.0)
    qs = np.concatenate(
        [copied, _unit(copied + 0.05 * rng.standard_normal(copied.shape)), vecs[:3]]
    ).astype(np.float32)
    texts: list[str | None] = [f"word{i} text" for i in range(qs.shape[0])]
    for scope in (Scope(), Scope(subtrees=(R,), leaves_only=True)):
        dense = store.search_batch(qs, scope, 10)
        for q, got in zip(qs, dense, strict=True):
            one = store.search(q, scope, 10)
            assert [(h.node.uri, h.score) for h in got] == [(h.node.uri, h.score) for h in one]
        many = store.search_columns_batch(qs, scope, 10, query_texts=texts, dense_weight=0.6)
        alone = [
            store.search_columns(q, scope, 10, query_text=t, dense_weight=0.6)
            for q, t in zip(qs, texts, strict=True)
        ]
        assert [list(c.uris) for c in many] == [list(c.uris) for c in alone]
        assert [list(c.scores) for c in many] == [list(c.scores) for c in alone]
        hybrid = store.search_batch(qs, scope, 10, query_texts=texts, dense_weight=0.6)
        for q, t, got in zip(qs, texts, hybrid, strict=True):
            one = store.search(q, scope, 10, query_text=t, dense_weight=0.6)
            assert [(h.node.uri, h.score) for h in got] == [(h.node.uri, h.score) for h in one]
    # a query at a copied vector: every one of its 10 hits is one of the 200 copies
    hits = store.search(copied[0], Scope(), 10)
    assert all((store.get_vectors([h.node.uri])[0] == copied[0]).all() for h in hits)
    store.close()
