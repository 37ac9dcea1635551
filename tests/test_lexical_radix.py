"""The postings log is sorted by term with 16-bit radix passes: the same permutation as
numpy's stable sort (a stable order is unique), for small and large vocabularies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.lexical import LexicalIndex, _stable_argsort


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([1, 7, 1 << 16, (1 << 16) + 1, 300_000, 1 << 32, 1 << 40]),
    st.integers(0, 400),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_radix_order_equals_stable_argsort(bound: int, n: int, seed: int, wide: bool) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, min(bound, 1 << 40), n).astype(np.int64)
    if not wide and bound <= 1 << 31:
        keys = keys.astype(np.int32)
    want = np.argsort(keys, kind="stable")
    assert np.array_equal(_stable_argsort(keys, bound), want)
    # keys past the bound given (never for term ids): still the stable order
    assert np.array_equal(_stable_argsort(keys, 1), want)


def test_index_with_more_than_65536_terms_scores_every_term() -> None:
    """Two radix passes (a vocabulary past 16 bits): each term's postings are found."""
    idx = LexicalIndex()
    n = 70_000
    docs = [[f"t{i}", f"t{(i * 7919) % n}", "common"] for i in range(n)]
    idx.upsert_tokens(list(range(n)), docs)
    assert len(idx._terms) > 1 << 16
    perm = idx._perm.astype(np.int64)
    keys = idx._log_term[perm]
    assert np.array_equal(perm, np.argsort(idx._log_term[: idx._m], kind="stable"))
    assert (np.diff(keys) >= 0).all()
    for i in (0, 1, 65_535, 65_536, 69_999):
        score = idx.score(f"t{i}", size=n)
        assert score[i] > 0
