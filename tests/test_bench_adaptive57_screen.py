"""``bench/bench_adaptive57_screen.py`` offline (no model): its report on hand-made result
files and its three per-query rules on hand-made scores and a real ``LexicalIndex``.

What the screen's numbers rest on: each pool's means weigh every question the same, the
interval is over per-question differences against ``find``, per-set wins / losses compare
set means; the margin is scale-free, agreement keeps 0.8, the rare share counts a term as
rare against the corpus's median posting; the run mode refuses a test half."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_adaptive57_screen as ad
import bench_natural as bn
from treehop.lexical import LexicalIndex

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def _row(dataset: str, key: str, values: dict[str, float], p50: float) -> dict[str, object]:
    mean = float(np.mean(list(values.values())))
    return {
        "dataset": dataset,
        "half": "dev",
        "row": key,
        "n": len(values),
        "p50_ms": p50,
        **dict.fromkeys(METRICS, mean),
        "per_question": {m: dict(values) for m in METRICS},
    }


def test_report_pools_questions_and_counts_sets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = []
    for key, a, b, c in [
        ("find", {"q1": 1.0, "q2": 0.0, "q3": 0.0}, {"q1": 1.0}, {"q1": 0.5}),
        ("find-margin", {"q1": 1.0, "q2": 1.0, "q3": 1.0}, {"q1": 0.0}, {"q1": 0.5}),
        ("find-agree", {"q1": 1.0, "q2": 0.0, "q3": 0.0}, {"q1": 1.0}, {"q1": 0.5}),
        ("find-rare", {"q1": 0.0, "q2": 0.0, "q3": 0.0}, {"q1": 1.0}, {"q1": 0.5}),
    ]:
        rows += [_row("a", key, a, 2.0), _row("b", key, b, 4.0), _row("c", key, c, 6.0)]
    path = tmp_path / "pool.json"
    path.write_text(json.dumps({"rows": rows}))
    ad.report(path)
    out = capsys.readouterr().out
    assert "3 sets, 5 dev questions" in out
    # pooled over the 5 questions (2.5 / 5), not over the sets' means (0.61); p50 mean 4.0
    assert "| find | 0.5000 | 0.5000 | 0.5000 | 0.5000 | 4.0 |" in out
    assert "| find-margin | 0.7000 |" in out
    mean, lo, hi = bn.mean_interval(np.array([0.0, 1.0, 1.0, -1.0, 0.0]))
    assert f"| find-margin | {mean:+.4f} ({lo:+.4f}..{hi:+.4f}) |" in out
    assert "| find-margin | 1 / 1 / 1 |" in out
    assert "| find-agree | 0 / 0 / 3 |" in out
    assert "| find-rare | 0 / 1 / 2 |" in out


def test_margin_is_scale_free_and_bounded() -> None:
    s = np.array([0.9, 0.5, 0.45, 0.4, 0.3, 0.2, 0.2, 0.1, 0.1, 0.1, 0.0], np.float32)
    assert ad.margin(s) == pytest.approx(0.4 / 0.8)  # (the 10th best, not the 11th)
    assert ad.margin(s * 7.0) == pytest.approx(ad.margin(s))
    assert ad.margin(np.array([1.0], np.float32)) == 0.0
    assert ad.margin(np.full(5, 0.3, np.float32)) == 0.0


def test_margin_and_agreement_pick_the_side() -> None:
    dense = np.array([0.60, 0.59, 0.58, 0.57, 0.56, 0.1, 0.1, 0.1, 0.1, 0.0], np.float32)
    lex = np.zeros(10, np.float32)
    lex[[9, 8, 7, 6, 5]] = [20.0, 2.0, 1.5, 1.0, 0.5]  # BM25 stands out, on other rows
    assert ad.margin_weight(dense, lex) == ad.LOW
    assert ad.agree_weight(dense, lex) == ad.LOW
    assert ad.margin_weight(lex / 20.0 + 0.0, dense) == ad.HIGH  # roles swapped
    agreeing = np.zeros(10, np.float32)
    agreeing[[0, 1, 2, 9]] = [20.0, 2.0, 1.5, 1.0]  # 3 of the top 5 shared: a majority
    assert ad.margin_weight(dense, agreeing) == ad.LOW
    assert ad.agree_weight(dense, agreeing) == ad.HIGH


def test_rare_share_against_the_median_posting() -> None:
    lex = LexicalIndex()
    docs = ["common word here"] * 6 + ["common zebra", "common okapi quagga"]
    lex.upsert(np.arange(len(docs)), docs)
    df = np.asarray(lex._df)
    # postings: common 8, word 6, here 6, zebra 1, okapi 1, quagga 1: the median posting's
    # term is in 6 documents (a hapax-heavy vocabulary's median would be 1)
    assert ad.median_posting_df(df) == 6.0
    assert ad.rare_share(lex, "common zebra?") == pytest.approx(0.5)
    assert ad.rare_share(lex, "word here") == 0.0
    assert ad.rare_share(lex, "okapi quagga") == 1.0
    assert ad.rare_share(lex, "unknownterm") == 0.0
    # the two maps: half the terms rare -> 0.8 - 0.2 / 2 and 0.8 - 0.1 / 2
    flat = SimpleNamespace(lexical=lex)  # (the rare rules read only the flat's BM25 index)
    vec = np.zeros(4, np.float32)
    assert ad.weight_for("find-rare", flat, vec, "common zebra") == pytest.approx(0.7)  # type: ignore[arg-type]
    assert ad.weight_for("find-rare7", flat, vec, "common zebra") == pytest.approx(0.75)  # type: ignore[arg-type]
    assert ad.weight_for("find-rare7", flat, vec, "okapi") == pytest.approx(0.7)  # type: ignore[arg-type]


@pytest.mark.parametrize("argv", [["--test"], ["--sets", "nut-faq"], ["--dev", "--test"]])
def test_run_mode_refuses_anything_but_dev(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        ad.main(argv)
