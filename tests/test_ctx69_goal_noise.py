"""bench/ctx69_goal_noise.py (helper quality69): the per-set goal line, the best flat row per
set, and the every-set-alike model (its draws match the exact multinomial probability)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx69_goal_noise as gn


def _rec(s: str, q: str, base: float, hyb: float, dense: float) -> dict[str, object]:
    return {
        "set": s,
        "qid": q,
        "base@1000": base,
        "flat-hybrid@1000": hyb,
        "flat-dense@1000": dense,
    }


def test_the_line_is_met_at_exactly_three_in_a_hundred() -> None:
    assert gn.met([1.0] * 3 + [0.0] * 97)
    assert not gn.met([1.0] * 2 + [0.0] * 98)
    assert gn.met([1.0] + [0.0] * 25)  # one question net on 26 is +0.038


def test_per_set_takes_each_sets_best_flat_row_and_leaves_the_nine_out() -> None:
    recs = [
        _rec("x-faq", "x:1", 1.0, 1.0, 0.0),
        _rec("x-faq", "x:2", 0.0, 0.0, 1.0),
        _rec("x-faq", "x:3", 1.0, 1.0, 1.0),
        _rec("x-faq", "x:3", 0.0, 1.0, 1.0),  # a repeated record of x:3: the first kept
        _rec("y-faq", "y:1", 1.0, 0.0, 1.0),
        _rec("gitfaq", "g:1", 1.0, 0.0, 0.0),  # a tuning set: outside the untuned pool
        _rec("doxygen-faq", "d:1", 1.0, 0.0, 0.0),
    ]
    got = gn.per_set(recs)
    assert set(got) == {"x-faq", "y-faq"}
    # x: hybrid 2/3 vs dense 2/3: a tie keeps the first (hybrid)
    assert got["x-faq"] == [0.0, 0.0, 0.0]
    assert got["y-faq"] == [0.0]  # dense is y's best row


def test_the_model_matches_the_exact_multinomial() -> None:
    n, win, loss = 10, 0.4, 0.4
    exact = 0.0
    for w in range(n + 1):
        for lo in range(n - w + 1):
            if (w - lo) / n >= gn.GOAL - 1e-9:
                p = math.factorial(n) / (
                    math.factorial(w) * math.factorial(lo) * math.factorial(n - w - lo)
                )
                exact += p * win**w * loss**lo * (1 - win - loss) ** (n - w - lo)
    sims = gn.model_met([n], win, loss, draws=40_000, seed=3)
    assert abs(sims.mean() - exact) < 0.01, (sims.mean(), exact)


def test_the_model_extremes() -> None:
    assert (gn.model_met([12, 26, 175], 1.0, 0.0, draws=50) == 3).all()
    assert (gn.model_met([12, 26, 175], 0.0, 0.0, draws=50) == 0).all()
    assert (gn.model_met([12, 26, 175], 0.0, 1.0, draws=50) == 0).all()
