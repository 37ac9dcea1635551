"""The global step's exact scoring of the rows the HNSW graph cannot reach
(``embedded._best_orphans``): its cheap first pass must pick the same rows as one exact
pass, whatever the scores' rounding, the eligibility mask or the vectors' norms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.stores.embedded import _VECDOT, _best_orphans, _eligible_rows, _matvec


def _exact(rows: np.ndarray, vecs: np.ndarray, full: np.ndarray, q: np.ndarray, k: int):
    ok = _eligible_rows(rows, full)
    if int(np.count_nonzero(ok)) <= k:
        return rows[ok]
    score = _matvec(vecs, q)
    score[~ok] = -np.inf
    return rows[np.argpartition(-score, k - 1)[:k]]


def _scores(picked: np.ndarray, rows: np.ndarray, vecs: np.ndarray, q: np.ndarray):
    """The exact scores of the picked rows, sorted (equal for two picks that differ only
    between rows of one score)."""
    at = {int(r): i for i, r in enumerate(rows.tolist())}
    return np.sort(_matvec(vecs[[at[int(r)] for r in picked.tolist()]], q))


@pytest.mark.skipif(_VECDOT is None, reason="numpy < 2 has no vecdot: one exact pass only")
@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(300, 1500),
    k=st.sampled_from([1, 10, 64, 66]),
    levels=st.sampled_from([0, 3, 16]),
    scale=st.sampled_from([1.0, 0.3, 7.0]),
    share=st.sampled_from([1.0, 0.5, 0.05]),
)
def test_cheap_pass_picks_the_exact_top_k(
    seed: int, n: int, k: int, levels: int, scale: float, share: float
) -> None:
    rng = np.random.default_rng(seed)
    dim = 384
    if levels:
        # few distinct values per coordinate: many scores a rounding error apart or equal
        vecs = rng.integers(-levels, levels + 1, size=(n, dim)).astype(np.float32)
    else:
        vecs = rng.standard_normal((n, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = np.ascontiguousarray(vecs * scale, dtype=np.float32)  # not unit rows
    q = rng.standard_normal(dim).astype(np.float32)
    q /= np.linalg.norm(q)
    rows = rng.permutation(4 * n)[:n].astype(np.int64)
    rows[rng.random(n) < 0.02] = -1  # removed rows
    full = rng.random(4 * n) < share
    norm = float(np.linalg.norm(vecs, axis=1).max())
    got = _best_orphans(rows, vecs, norm, full, q, k)
    want = _exact(rows, vecs, full, q, k)
    assert got.size == want.size
    assert bool(full[got].all()) and bool((got >= 0).all())
    assert np.array_equal(_scores(got, rows, vecs, q), _scores(want, rows, vecs, q))
    # rows that tie nowhere are picked exactly as one exact pass picks them
    if levels == 0:
        assert np.array_equal(np.sort(got), np.sort(want))


def test_few_eligible_rows_are_all_returned() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((500, 8)).astype(np.float32)
    rows = np.arange(500, dtype=np.int64)
    full = np.zeros(500, dtype=bool)
    full[[3, 70, 400]] = True
    got = _best_orphans(rows, vecs, 5.0, full, rng.standard_normal(8).astype(np.float32), 10)
    assert sorted(got.tolist()) == [3, 70, 400]
