"""bench/ctx70_lexical_weight.py (helper quality70): the per-set goal line on a bench_natural
run's per-question values, the lexical / dense kind of a loss, and which losses a variant row
recovers and which wins it gives back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx70_lexical_weight as lw


def _row(dataset: str, row: str, ctx: dict[str, float], half: str = "dev") -> dict[str, object]:
    return {
        "dataset": dataset,
        "half": half,
        "row": row,
        "per_question": {"ctx@1000": ctx, "ndcg@10": {q: v / 2 for q, v in ctx.items()}},
    }


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    p = tmp_path / "run.json"
    p.write_text(json.dumps({"rows": rows}))
    return p


def _set(tmp_path: Path) -> lw.SetRows:
    # q1: find loses to hybrid, dense misses too (lexical); the variant recovers it
    # q2: find wins; the variant gives it back. q3: find loses, dense holds it (dense kind)
    # q4: a tie everywhere; q5: find wins and the variant keeps it
    rows = [
        _row("x-faq", "find", {"q1": 0.0, "q2": 1.0, "q3": 0.0, "q4": 1.0, "q5": 1.0}),
        _row("x-faq", "find-v", {"q1": 1.0, "q2": 0.0, "q3": 0.0, "q4": 1.0, "q5": 1.0}),
        _row("x-faq", "flat-hybrid", {"q1": 1.0, "q2": 0.0, "q3": 1.0, "q4": 1.0, "q5": 0.0}),
        _row("x-faq", "flat-dense", {"q1": 0.0, "q2": 0.0, "q3": 1.0, "q4": 1.0, "q5": 0.0}),
        _row("x-faq", "find", {"q1": 1.0, "q2": 1.0, "q3": 1.0, "q4": 1.0}, half="test"),
    ]
    return lw.load([_write(tmp_path, rows)])["x-faq"]


def test_load_keeps_dev_halves_only(tmp_path: Path) -> None:
    s = _set(tmp_path)
    # the test half's row (every question 1.0) must not replace the dev half's
    assert s.rows["find"]["ctx@1000"]["q1"] == 0.0
    assert s.qids() == ["q1", "q2", "q3", "q4", "q5"]


def test_the_goal_line_takes_the_better_flat_row_and_is_met_at_exactly_three_hundredths(
    tmp_path: Path,
) -> None:
    s = _set(tmp_path)
    assert s.best_flat() == "flat-hybrid"  # 0.6 against dense's 0.4
    assert not s.meets("find")  # 0.6 < 0.6 + 0.03
    qs = [f"q{i}" for i in range(100)]
    s.rows["flat-dense"]["ctx@1000"] = {q: float(i < 1) for i, q in enumerate(qs)}
    s.rows["flat-hybrid"]["ctx@1000"] = {q: 0.0 for q in qs}
    s.rows["find"]["ctx@1000"] = {q: float(i < 4) for i, q in enumerate(qs)}
    assert s.best_flat() == "flat-dense"
    assert s.meets("find")  # 0.04 - 0.01: exactly the line (0.03 in floats: not above it)
    s.rows["find"]["ctx@1000"] = {q: float(i < 3) for i, q in enumerate(qs)}
    assert not s.meets("find")


def test_losses_by_kind_and_what_a_variant_recovers_and_gives_back(tmp_path: Path) -> None:
    s = _set(tmp_path)
    d = lw.trailing_diagnosis(s, ["find-v"])
    assert d["best"] == "flat-hybrid"
    assert d["losses"] == ["q1", "q3"]
    assert d["wins"] == ["q2", "q5"]
    assert d["kinds"] == {"q1": "lexical", "q3": "both"}
    assert d["find-v"]["recovered"] == ["q1"]
    assert d["find-v"]["given_back"] == ["q2"]
    assert (d["find-v"]["moved_up"], d["find-v"]["moved_down"]) == (1, 1)


def test_paired_is_variant_minus_find(tmp_path: Path) -> None:
    s = _set(tmp_path)
    m, lo, hi, won, lost = lw.paired([s], "find-v", "ctx@1000")
    assert (m, won, lost) == (0.0, 1, 1)
    assert lo <= m <= hi
    s.rows["find-v"]["ctx@1000"]["q2"] = 1.0
    m, _, _, won, lost = lw.paired([s], "find-v", "ctx@1000")
    assert (m, won, lost) == (0.2, 1, 0)


def test_ranks_files_are_read_apart_from_runs_dev_halves_only(tmp_path: Path) -> None:
    ranks = [
        {"dataset": "x-faq", "half": "dev", "row": "find", "qid": "q1", "rank": 7},
        {"dataset": "x-faq", "half": "dev", "row": "flat-hybrid", "qid": "q1", "rank": None},
        {"dataset": "x-faq", "half": "test", "row": "find", "qid": "q9", "rank": 1},
    ]
    p = tmp_path / "ranks.json"
    p.write_text(json.dumps(ranks))
    run = _write(tmp_path, [_row("x-faq", "find", {"q1": 1.0})])
    got = lw.load_ranks([run, p])
    assert got == {("find", "q1"): 7, ("flat-hybrid", "q1"): None}
    assert set(lw.load([run, p])) == {"x-faq"}  # the ranks file is no run
    buckets = [lw.rank_bucket(x) for x in (None, 1, 2, 3, 4, 10, 11)]
    assert buckets == ["none", "1", "2-3", "2-3", "4-10", "4-10", ">10"]
