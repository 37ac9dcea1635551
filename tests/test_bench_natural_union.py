"""The pooling of ``bench/bench_natural_union.py`` (one tree of every natural set): a pooled
metric is the mean over all questions, each set weighted by its question count."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural_union as bu


def _row(dataset: str, row: str, n: int, value: float) -> dict[str, object]:
    return {"dataset": dataset, "row": row, "n": n, **{m: value for m in bu.METRICS}}


def test_pooled_weights_each_set_by_its_questions_and_keeps_rows_apart() -> None:
    rows = [
        _row("a", "find", 30, 1.0),
        _row("b", "find", 10, 0.0),
        _row("a", "flat-hybrid", 30, 0.0),
    ]
    got = bu.pooled(rows, "find")
    assert got["n"] == 40
    assert got["ndcg@10"] == pytest.approx(0.75)
    assert bu.pooled(rows, "flat-hybrid")["ctx@1000"] == pytest.approx(0.0)
