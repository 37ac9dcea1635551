"""bench/qw71_signals.py (helper quality71): the per-question lexical signals, their
separation of the questions a lower question weight helps from those it hurts, and a rule's
exact per-question value from a run's ``find`` and lower-weight rows (dev halves only)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import qw71_signals as qs


def test_leaf_signals_margin_z_and_the_lexical_leaders_dense_rank() -> None:
    bm25 = np.array([1.0, 5.0, 0.0, 2.0])
    dense = np.array([0.9, 0.5, 0.7, 0.1])  # leaf 1 (the BM25 leader) is 3rd on dense
    s = qs.leaf_signals(bm25, dense)
    assert math.isclose(s["margin"], 0.6)  # (5 - 2) / 5
    hit = np.array([1.0, 5.0, 2.0])
    assert math.isclose(s["z"], (5.0 - hit.mean()) / hit.std())
    assert s["agree"] == 3.0
    assert s["matched"] == 3.0


def test_leaf_signals_of_a_query_no_leaf_matches_are_zero() -> None:
    s = qs.leaf_signals(np.zeros(3), np.array([0.3, 0.2, 0.1]))
    assert s == {"margin": 0.0, "z": 0.0, "agree": 0.0, "matched": 0.0}


def test_separation_is_the_auc_with_ties_half() -> None:
    assert qs.separation([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert qs.separation([1.0, 2.0], [3.0, 4.0]) == 0.0
    assert qs.separation([1.0], [1.0]) == 0.5
    assert qs.separation([2.0, 0.0], [1.0]) == 0.5
    assert math.isnan(qs.separation([], [1.0]))


def _rows() -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    def pq(ctx: dict[str, float]) -> dict[str, dict[str, float]]:
        return {qs.CTX: ctx, qs.NDCG: {q: v / 2 for q, v in ctx.items()}}

    return {
        "x-faq": {
            "find": pq({"a": 0.0, "b": 1.0, "c": 0.0}),
            "find-qw0.5": pq({"a": 1.0, "b": 0.0, "c": 1.0}),
        },
        "y-faq": {"find": pq({"d": 0.0})},  # no lower-weight row: left out
    }


def test_rule_value_is_the_lower_rows_where_it_fires_and_finds_elsewhere() -> None:
    sigs = {
        "x-faq": {"a": {"margin": 0.9}, "b": {"margin": 0.1}, "c": {"margin": 0.2}},
        "y-faq": {"d": {"margin": 0.9}},
    }
    d, fired = qs.rule_diffs(sigs, _rows(), "find-qw0.5", lambda s: s["margin"] >= 0.5, bool)
    assert fired == 1
    assert d[qs.CTX].tolist() == [1.0, 0.0, 0.0]  # a: the lower row; b, c: find's
    assert d[qs.NDCG].tolist() == [0.5, 0.0, 0.0]
    d, fired = qs.rule_diffs(sigs, _rows(), "find-qw0.5", lambda s: True, bool)
    assert fired == 3 and d[qs.CTX].tolist() == [1.0, -1.0, 1.0]
    d, fired = qs.rule_diffs(sigs, _rows(), "find-qw0.5", lambda s: True, lambda n: n != "x-faq")
    assert fired == 0 and len(d[qs.CTX]) == 0


def test_load_rows_keeps_whole_set_dev_rows_only(tmp_path: Path) -> None:
    def row(dataset: str, half: str, v: float) -> dict[str, object]:
        return {
            "dataset": dataset,
            "half": half,
            "row": "find",
            "per_question": {qs.CTX: {"q": v}, qs.NDCG: {"q": v}},
        }

    p = tmp_path / "run.json"
    rows = [
        row("x-faq", "dev", 1.0),
        row("x-faq", "test", 0.0),
        row("x-faq/natural", "dev", 0.5),
        row("doxygen-faq", "dev", 1.0),
    ]
    p.write_text(json.dumps({"rows": rows}))
    got = qs.load_rows([p])
    assert list(got) == ["x-faq"]
    assert got["x-faq"]["find"][qs.CTX] == {"q": 1.0}
