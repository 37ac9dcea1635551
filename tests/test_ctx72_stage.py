"""bench/ctx72_stage.py (helper quality72): find's 1,000-token losses on the trailing untuned
dev halves, attributed to a stage (outranked, not in the top 10, per-document slot, packing),
the diagnosis arms' outcomes on them, and how find() reads each query."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx70_lexical_weight as c7
import ctx72_stage as st
import natural_sets as ns

UNTUNED = sorted(s for s in ns.HELD_OUT_SETS if s not in c7.LEFT_OUT)[0]
NINE = sorted(ns.NATURAL_SETS)[0]


def _row(dataset: str, row: str, ctx: dict[str, float], half: str = "dev") -> dict[str, object]:
    return {
        "dataset": dataset,
        "half": half,
        "row": row,
        "per_question": {"ctx@1000": ctx, "ndcg@10": dict(ctx)},
    }


def _sets(tmp_path: Path) -> dict[str, c7.SetRows]:
    rows = []
    for name in (UNTUNED, NINE):
        # flat dense is the better flat row (0.6 against 0.4): q1 lost, only flat dense holds
        # it (dense); q2 lost, both flat rows hold it (both); q3 flat hybrid alone holds it
        # (no loss against flat dense); q4 won; q5 a tie with flat dense
        rows += [
            _row(name, "find", {"q1": 0, "q2": 0, "q3": 0, "q4": 1, "q5": 1}),
            _row(name, "flat-hybrid", {"q1": 0, "q2": 1, "q3": 1, "q4": 0, "q5": 0}),
            _row(name, "flat-dense", {"q1": 1, "q2": 1, "q3": 0, "q4": 0, "q5": 1}),
        ]
    p = tmp_path / "run.json"
    p.write_text(json.dumps({"rows": rows}))
    return c7.load([p])


def test_every_cause_has_its_stage_and_a_missing_record_is_said() -> None:
    assert st.stage("slot-not-reached") == "outranked"
    assert st.stage("not-in-slots") == "not in top 10"
    assert st.stage("collapsed") == "per-document slot"
    for c in ("answer-chunk-left-out", "placed-excerpt", "placed-judged-no"):
        assert st.stage(c) == "packing"
    assert st.stage(None) == "no record"
    assert set(st.STAGE_OF.values()) | {"no record"} == set(st.STAGES)


def test_losses_are_taken_from_trailing_untuned_halves_only(tmp_path: Path) -> None:
    sets = _sets(tmp_path)
    losses = st.trailing_losses(sets)
    # the tuning set's identical losses are not the untuned halves'
    assert losses == [(UNTUNED, "q1", "dense"), (UNTUNED, "q2", "both")]
    # a set that meets the line gives none
    s = sets[UNTUNED]
    s.rows["find"][c7.CTX] = {q: 1.0 for q in s.qids()}
    assert st.trailing_losses(sets) == []


def test_the_stage_table_counts_each_loss_once_by_kind(tmp_path: Path) -> None:
    losses = st.trailing_losses(_sets(tmp_path))
    t = st.stage_table(losses, {"q1": {"cause@1000": "collapsed"}})
    assert t["dense"] == {"per-document slot": 1}
    assert t["both"] == {"no record": 1}
    t = st.stage_table(losses, {"q1": {"cause@1000": "not-in-slots"}, "q2": {}})
    assert t["dense"] == {"not in top 10": 1}
    assert t["both"] == {"no record": 1}
    assert t["all"] == {"not in top 10": 1, "no record": 1}


def test_arm_outcomes_count_held_answers_and_rank_buckets(tmp_path: Path) -> None:
    sets = _sets(tmp_path)
    ranks = {("find", "q1"): 4, ("find", "q2"): None, ("flat-dense", "q1"): 1}
    out = st.arm_outcomes(
        [(UNTUNED, "q1"), (UNTUNED, "q2"), ("absent", "q9")], sets, ranks, ["find", "flat-dense"]
    )
    assert out["find"]["n"] == 2 and out["find"]["held"] == 0
    assert out["find"]["ranks"] == {"4-10": 1, "none": 1}
    assert out["flat-dense"]["held"] == 2
    assert out["flat-dense"]["ranks"]["1"] == 1


def test_query_shapes_and_texts_from_dev_halves_only(tmp_path: Path) -> None:
    assert st.shape("Why does fetchmail hang after the greeting?") == "question"
    assert st.shape("fatal: unable to access the remote repository") == "error report"
    assert st.shape("Fetchmail hangs after the server greeting") == "problem report"
    assert st.shape("FFTW seems really slow.") == "sentence"
    assert st.shape("Disclaimer and copyright") == "other"
    p = tmp_path / "ranks.json"
    p.write_text(
        json.dumps(
            [
                {"half": "dev", "qid": "q1", "question": "a?", "row": "find", "rank": 1},
                {"half": "test", "qid": "q2", "question": "b?", "row": "find", "rank": 1},
            ]
        )
    )
    assert st.load_texts([p]) == {"q1": "a?"}
