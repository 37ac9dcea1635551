"""The pooling behind ``bench/bench_natural_union.py``'s pooled lines (one tree of every
natural set), ``bench_natural.pooled_rows``: a pooled metric is the mean over all questions,
each set weighted by its question count, rows and halves kept apart."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural as bn
import bench_natural_union as bu


def _row(dataset: str, row: str, n: int, value: float) -> dict[str, object]:
    return {
        "dataset": dataset,
        "half": "dev",
        "row": row,
        "n": n,
        **dict.fromkeys(bu.METRICS, value),
    }


def test_pooled_weights_each_set_by_its_questions_and_keeps_rows_apart() -> None:
    rows = [
        _row("a", "find", 30, 1.0),
        _row("b", "find", 10, 0.0),
        _row("a", "flat-hybrid", 30, 0.0),
    ]
    got = bn.pooled_rows(rows)
    assert got[("find", "dev")]["n"] == 40
    assert got[("find", "dev")]["ndcg@10"] == pytest.approx(0.75)
    assert got[("flat-hybrid", "dev")]["ctx@1000"] == pytest.approx(0.0)
    assert set(bu.METRICS) <= set(bn.POOLED_METRICS)  # (every metric the script prints)
