"""``bench/bench_fusion57_screen.py`` on hand-made result files (offline, no model).

What its table rests on: each pool's means weigh every question the same (not every set),
the interval is over per-question differences of the variant against ``find`` on the same
questions, per-set wins / losses compare the sets' means, and the run mode refuses a test
half (the untuned sets' test halves are the held-out check)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_fusion57_screen as fs
import bench_natural as bn

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def _row(dataset: str, key: str, values: dict[str, float]) -> dict[str, object]:
    mean = float(np.mean(list(values.values())))
    return {
        "dataset": dataset,
        "half": "dev",
        "row": key,
        "n": len(values),
        **dict.fromkeys(METRICS, mean),
        "per_question": {m: dict(values) for m in METRICS},
    }


def test_report_pools_questions_and_counts_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base_a = {"q1": 1.0, "q2": 0.0, "q3": 0.0}  # set a: the variant gains two questions
    var_a = {"q1": 1.0, "q2": 1.0, "q3": 1.0}
    base_b = {"q1": 1.0}  # set b: the variant loses its one question
    var_b = {"q1": 0.0}
    same_c = {"q1": 0.5}  # set c: unmoved, a tie
    rows = [
        _row("a", "find", base_a),
        _row("a", "find-qw0.6", var_a),
        _row("b", "find", base_b),
        _row("b", "find-qw0.6", var_b),
        _row("c", "find", same_c),
        _row("c", "find-qw0.6", same_c),
    ]
    path = tmp_path / "pool.json"
    path.write_text(json.dumps({"rows": rows}))
    fs.report(path)
    out = capsys.readouterr().out
    assert "3 sets, 5 dev questions" in out
    # pooled over the 5 questions: 2.5 / 5 and 3.5 / 5 (per-set means: 0.61 / 0.50)
    assert "| find | 0.5000 |" in out
    assert "| find-qw0.6 | 0.7000 |" in out
    mean, lo, hi = bn.mean_interval(np.array([0.0, 1.0, 1.0, -1.0, 0.0]))
    assert f"| find-qw0.6 | {mean:+.4f} ({lo:+.4f}..{hi:+.4f}) |" in out
    assert "| find-qw0.6 | 1 / 1 / 1 |" in out


@pytest.mark.parametrize("argv", [["--test"], ["--sets", "nut-faq"], ["--dev", "--test"]])
def test_run_mode_refuses_anything_but_dev(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        fs.main(argv)
