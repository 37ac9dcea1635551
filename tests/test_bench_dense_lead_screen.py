"""The dense-lead screen's counts (bench/bench_dense_lead_screen.py): a guard that puts the
dense leader first gains where the leader answers and find()'s first slot does not, loses
where find()'s first slot answers and the leader does not, and touches nothing below the
margin or where find() already shows the leader."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from bench_dense_lead_screen import Row, table


def _counts(rows: list[Row], margin: str) -> tuple[int, int, int]:
    for line in table(rows)[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == margin:
            return int(cells[1]), int(cells[2]), int(cells[3])
    raise AssertionError(f"no row for margin {margin}")


def test_gain_loss_and_untouched_questions_are_counted_per_margin() -> None:
    rows = [
        Row("s", "gain", 0.10, leader_answers=True, leader_first=False, find_rank=3),
        Row("s", "loss", 0.05, leader_answers=False, leader_first=False, find_rank=0),
        Row("s", "both-miss", 0.09, leader_answers=False, leader_first=False, find_rank=None),
        Row("s", "already", 0.20, leader_answers=True, leader_first=True, find_rank=0),
    ]
    assert _counts(rows, "0.00") == (3, 1, 1)
    assert _counts(rows, "0.06") == (2, 1, 0)
    assert _counts(rows, "0.12") == (0, 0, 0)
