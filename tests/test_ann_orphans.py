"""The rows the HNSW graph cannot reach (``AnnIndex.orphan_rows``), kept between queries: the
same rows and vectors as a fresh gather, recomputed when the orphans, the row map or the
snapshot's row count change, and the global step's top-k of them (``_best_orphans``)."""

from __future__ import annotations

import numpy as np

from treehop.stores._ann import AnnIndex
from treehop.stores.embedded.layout import _matvec
from treehop.stores.embedded.search_paths import _best_orphans, _eligible_rows

DIM = 16


def _graph(n: int) -> tuple[AnnIndex, np.ndarray]:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ann = AnnIndex.new(DIM)
    ann.extend(np.arange(n, dtype=np.int64), lambda r: vecs[r], n, 1, lambda: True)
    return ann, vecs


def test_orphan_rows_are_kept_and_follow_their_inputs() -> None:
    ann, vecs = _graph(200)
    ann.orphans = np.array([5, 150, 199, 7], dtype=np.int64)
    gathered: list[int] = []

    def vectors_of(rows: np.ndarray) -> np.ndarray:
        gathered.append(int(rows.size))
        return vecs[rows]

    rows, mat = ann.orphan_rows(160, vectors_of)
    assert rows.tolist() == [5, 150, -1, 7]  # row 199 is not below n
    assert np.array_equal(mat, vecs[[5, 150, 199, 7]])
    again, mat2 = ann.orphan_rows(160, vectors_of)
    assert again is rows and mat2 is mat and gathered == [4]  # kept, nothing gathered
    # more rows published: the row that was out of range now counts, with its own vector
    wider, mat3 = ann.orphan_rows(200, vectors_of)
    assert wider.tolist() == [5, 150, 199, 7] and mat3 is mat
    assert np.array_equal(mat3[2], vecs[199])
    # a compaction renumbers rows (a new row map): the rows follow, the vectors stay
    ann.row = np.where(ann.row == 150, 40, ann.row)
    moved, _ = ann.orphan_rows(200, vectors_of)
    assert moved.tolist() == [5, 40, 199, 7]
    # new orphans: rows and vectors gathered again
    ann.orphans = np.array([9], dtype=np.int64)
    rows, mat = ann.orphan_rows(200, vectors_of)
    assert rows.tolist() == [9] and np.array_equal(mat, vecs[[9]]) and gathered == [4, 1]


def test_best_orphans_is_the_exact_top_k_of_the_eligible() -> None:
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((500, DIM)).astype(np.float32)
    rows = rng.permutation(2000)[:500].astype(np.int64)
    rows[::7] = -1
    full = rng.random(2000) < 0.6
    q = rng.standard_normal(DIM).astype(np.float32)
    ok = _eligible_rows(rows, full)
    got = _best_orphans(rows, vecs, ok, q, 20)
    score = np.where(ok, _matvec(vecs, q), -np.inf)
    assert sorted(got.tolist()) == sorted(rows[np.argsort(-score)[:20]].tolist())
    few = np.zeros(2000, dtype=bool)
    few[rows[[3, 71, 400]]] = True
    got = _best_orphans(rows, vecs, _eligible_rows(rows, few), q, 10)
    assert sorted(got.tolist()) == sorted(rows[[3, 71, 400]].tolist())


def test_usearch_ranks_8_bit_vectors_by_their_integer_dot_product() -> None:
    # OrphanCodes' bound rests on it: the ``ip`` distance of ``i8`` vectors is 1 - c . q8
    from treehop.stores._ann import OrphanCodes

    rng = np.random.default_rng(2)
    vecs = rng.standard_normal((300, 48)).astype(np.float32)
    codes = OrphanCodes(vecs)
    q8 = rng.integers(-127, 128, 48).astype(np.int8)
    got = codes.index.search(q8, 300, exact=True, threads=1)
    dots = codes.codes[np.asarray(got.keys, dtype=np.int64)].astype(np.int64) @ q8.astype(np.int64)
    assert np.array_equal(np.asarray(got.distances, dtype=np.float64), 1.0 - dots)
    assert (np.diff(dots) <= 0).all()


def test_orphan_codes_reach_every_orphan_at_or_above_the_floor() -> None:
    from treehop.stores._ann import OrphanCodes

    rng = np.random.default_rng(3)
    centres = rng.standard_normal((20, 48))
    vecs = (centres[rng.integers(0, 20, 3000)] + 0.4 * rng.standard_normal((3000, 48))).astype(
        np.float32
    )
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    codes = OrphanCodes(vecs)
    widened = 0
    for i in range(40):
        q = (centres[i % 20] + 0.5 * rng.standard_normal(48)).astype(np.float32)
        q *= np.float32(0.5 + i / 20)  # (not only unit queries)
        exact = _matvec(vecs, q)
        for rank in (1, 10, 60, 300):
            floor = float(np.sort(exact)[-rank])
            got = codes.reaching(q, floor, 16)
            assert got is not None
            assert set(np.flatnonzero(exact >= floor).tolist()) <= set(got.tolist())
            widened += got.size > 16
    assert widened  # some floors needed more than the first 16 (the 4x steps ran)
    # a query that cannot be coded: the caller scores every orphan
    assert codes.reaching(np.zeros(48, np.float32), 0.0, 16) is None
    assert codes.reaching(np.full(48, np.nan, np.float32), 0.0, 16) is None


def _clustered(n: int, dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Unit rows in clusters, and 14 queries near them at several scales."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, dim))
    vecs = (centres[rng.integers(0, 20, n)] + 0.4 * rng.standard_normal((n, dim))).astype(
        np.float32
    )
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    qs = (centres[rng.integers(0, 20, 14)] + 0.5 * rng.standard_normal((14, dim))).astype(
        np.float32
    )
    qs *= np.linspace(0.5, 2.0, 14, dtype=np.float32)[:, None]  # (not only unit queries)
    return vecs, qs


def test_reaching_many_reaches_every_orphan_at_or_above_each_querys_floor() -> None:
    from treehop.stores._ann import OrphanCodes

    vecs, qs = _clustered(3000, 48, 5)
    codes = OrphanCodes(vecs)
    exact = np.stack([_matvec(vecs, q) for q in qs])
    for rank in (1, 10, 60, 300):
        floors = np.sort(exact, axis=1)[:, -rank].astype(np.float32)
        got = codes.reaching_many(qs, floors, 16, 2)
        assert len(got) == len(qs)
        for i, keys in enumerate(got):
            assert set(np.flatnonzero(exact[i] >= floors[i]).tolist()) <= set(keys.tolist())
        if rank == 300:  # the 4x steps ran, for these queries only
            assert all(k.size > 16 for k in got)
    assert codes.reaching_many(qs[:0], floors[:0], 16, 2) == []


def test_bounds_many_keeps_every_orphan_at_or_above_each_querys_floor() -> None:
    from treehop.stores._ann import OrphanCodes

    vecs, qs = _clustered(3000, 48, 7)
    codes = OrphanCodes(vecs)
    assert codes.packed is not None  # numkong is installed with usearch
    exact = np.stack([_matvec(vecs, q) for q in qs])
    for rank in (1, 10, 60, 300):
        floors = np.sort(exact, axis=1)[:, -rank].astype(np.float32)
        pairs = codes.bounds_many(qs, floors)
        assert pairs is not None and (np.diff(pairs[0]) >= 0).all()
        for i in range(len(qs)):
            got = set(pairs[1][pairs[0] == i].tolist())
            assert set(np.flatnonzero(exact[i] >= floors[i]).tolist()) <= got
            assert len(got) < vecs.shape[0]  # (the bound does leave most out)
    codes.packed = None
    assert codes.bounds_many(qs, floors) is None


def test_batch_orphans_are_each_querys_eligible_orphans_at_or_above_its_floor() -> None:
    """What the batch adds per query: every eligible orphan scoring at least its floor (the
    best ``fetch`` when more; none at an infinite floor, all eligible at ``-inf``), with the
    exact kernel's scores to the bit, through the 8-bit codes or without them."""
    from treehop.stores._ann import OrphanCodes
    from treehop.stores.embedded.search_paths import _batch_orphans

    vecs, qs = _clustered(2500, 48, 6)
    rng = np.random.default_rng(6)
    rows = rng.permutation(10_000)[: vecs.shape[0]].astype(np.int64)
    rows[::11] = -1  # removed since
    live = (rows >= 0) & (rng.random(rows.size) < 0.8)
    exact = np.stack([_matvec(vecs, q) for q in qs])
    ranks = [1, 5, 40, 400, 2000, 3, 10, 80, 1, 20, 200, 7, 0, 0]
    floors = np.array(
        [np.sort(exact[i])[-r] if r else 0.0 for i, r in enumerate(ranks)], dtype=np.float32
    )
    floors[12], floors[13] = np.inf, -np.inf
    unpacked = OrphanCodes(vecs)
    unpacked.packed = None  # (usearch's exact search of the codes instead of numkong's)
    for codes in (OrphanCodes(vecs), unpacked, None):
        for fetch in (64, 5000):
            qi, got, score = _batch_orphans(qs, floors, (rows, vecs, live), codes, fetch, 2)
            assert (np.diff(qi) >= 0).all()  # grouped by query
            pos = {r: p for p, r in enumerate(rows.tolist()) if r >= 0}
            for i in range(len(qs)):
                mine = [pos[r] for r in got[qi == i].tolist()]
                assert np.array_equal(score[qi == i], exact[i, mine])  # to the bit
                reach = np.flatnonzero(live & (exact[i] >= floors[i]))
                if reach.size <= fetch:
                    assert sorted(mine) == reach.tolist()
                else:  # the best fetch of them
                    assert len(mine) == fetch
                    assert exact[i, mine].min() >= np.sort(exact[i, reach])[-fetch]
            assert not (qi == 12).any() and (qi == 13).sum() == min(int(live.sum()), fetch)
