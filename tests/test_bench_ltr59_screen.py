"""``bench/bench_ltr59_screen.py``: the learned slot scorer screened in stop 59 (issue 33,
helper ltr59; not kept, bench/README.md). Its numbers rest on three pieces, each checked on
inputs whose answer is known: the features read off ``find()``'s slots, the pairs the
pairwise fit learns from, and the fit itself (it must rank by the feature that separates the
labels, and its L2 term must shrink the weights).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_ltr59_screen as scr
from treehop.models import MatchedContext

from treehop_test_doubles import leaf_hit


def _slot(
    uri: str, parent: str, score: float, own: float | None, idx: int, text: str
) -> MatchedContext:
    return leaf_hit(uri, text, score, own_score=own, parent_uri=parent, chunk_index=idx)


def test_slot_features_read_each_slot_in_finds_order() -> None:
    slots = [
        _slot("d1#0", "d1", 0.9, 0.8, 0, "Rotate the server logs with logrotate daily."),
        _slot("d2#3", "d2", 0.7, None, 3, "Nothing relevant here at all."),
        _slot("d1#5", "d1", 0.6, 0.65, 5, "Server logs again."),
    ]
    terms = scr.content_terms("How do I rotate the server logs?")
    assert terms == {"rotate", "server", "logs"}
    x = scr.slot_features(
        slots, terms, {"d1#0": 0.5, "d2#3": 0.2}, {"d1#0": 1.0, "d1#5": 0.4, "d2#3": 0.1}
    )
    col = {f: x[:, i] for i, f in enumerate(scr.FEATURES)}
    assert x.shape == (3, len(scr.FEATURES))
    np.testing.assert_allclose(col["score"], [0.9, 0.7, 0.6])
    np.testing.assert_allclose(col["own"], [0.8, 0.7, 0.65])  # (no own score: the score)
    np.testing.assert_allclose(col["lift"], [0.1, 0.0, -0.05], atol=1e-12)
    np.testing.assert_allclose(col["cos"], [0.5, 0.2, 0.0])  # (unknown: 0)
    np.testing.assert_allclose(col["rank"], [0.0, math.log(2), math.log(3)])
    np.testing.assert_allclose(col["pos"], [0.0, math.log(4), math.log(6)])
    np.testing.assert_allclose(col["docrep"], [0, 0, 1])  # d1's second slot
    np.testing.assert_allclose(col["head"], [1.0, 0.0, 2 / 3])
    np.testing.assert_allclose(col["docbm25"], [1.0, 0.1, 1.0])  # d1's best over its slots


def test_pairs_are_better_minus_worse_for_every_label_difference() -> None:
    x = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    y = np.array([0.0, 2.0, 1.0])
    d = scr.pairs(x, y)
    got = {tuple(r) for r in d.tolist()}
    # 2 > 0, 2 > 1, 1 > 0: three pairs, each the better slot's row minus the worse one's
    assert got == {(-1.0, 1.0), (-2.0, -1.0), (1.0, 2.0)}
    assert len(scr.pairs(x, np.zeros(3))) == 0


def test_fit_ranks_by_the_separating_feature_and_l2_shrinks_it() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    y = (x[:, 1] + 0.3 * rng.normal(size=400) > 0.5).astype(float)
    d = scr.pairs(x, y)
    w = scr.fit_pairwise(d, l2=1e-4)
    assert w[1] > 0 and abs(w[1]) > 5 * max(abs(w[0]), abs(w[2]))
    strong = scr.fit_pairwise(d, l2=1.0)
    assert 0 < strong[1] < w[1]
