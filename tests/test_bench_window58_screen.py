"""``bench/bench_window58_screen.py``: the chunk-window no-pass rule screened in stop 55
(issue 33, helper window58; not kept, bench/README.md). The screen's numbers rest on which
lifted chunks the rule caps and where, and on the paired differences it reports, so both are
checked on inputs whose answer is known.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_window58_screen as scr


def test_a_lifted_chunk_stops_just_below_the_neighbour_better_alone() -> None:
    # lsof 17.11's shape: the answer (chunk 5) 0.619 alone, chunk 6 0.573 lifted to 0.628
    own = {"f#chunk-4": 0.30, "f#chunk-5": 0.619, "f#chunk-6": 0.573}
    got = scr.capped_scores(own, {"f#chunk-6": 0.628}, {"f#chunk-6": ("f#chunk-5", "f#chunk-7")})
    assert got["f#chunk-6"] == float(np.nextafter(0.619, -np.inf))
    assert got["f#chunk-6"] < 0.619


def test_a_neighbour_worse_alone_may_be_passed_and_the_own_score_is_a_floor() -> None:
    own = {"f#chunk-4": 0.30, "f#chunk-5": 0.50, "f#chunk-6": 0.40}
    near = {"f#chunk-5": ("f#chunk-4", "f#chunk-6")}
    # both neighbours are worse alone: the lift stands
    assert scr.capped_scores(own, {"f#chunk-5": 0.55}, near) == {"f#chunk-5": 0.55}
    # a neighbour that is not collected does not cap
    assert scr.capped_scores(
        {"f#chunk-5": 0.5}, {"f#chunk-5": 0.55}, {"f#chunk-5": ("f#chunk-4",)}
    ) == {"f#chunk-5": 0.55}
    # the cap never takes a chunk below its own score (a neighbour lifted less than that)
    own2 = {"f#chunk-1": 0.61, "f#chunk-2": 0.60}
    got = scr.capped_scores(own2, {"f#chunk-2": 0.70}, {"f#chunk-2": ("f#chunk-1", "f#chunk-3")})
    assert got["f#chunk-2"] == float(np.nextafter(0.61, -np.inf))


def test_a_chain_is_settled_best_own_first() -> None:
    # chunk 1 is best alone and lifted; chunk 2 is lifted past it, chunk 3 past chunk 2
    own = {"f#chunk-1": 0.60, "f#chunk-2": 0.55, "f#chunk-3": 0.50}
    lifted = {"f#chunk-1": 0.62, "f#chunk-2": 0.70, "f#chunk-3": 0.75}
    near = {
        "f#chunk-1": ("f#chunk-0", "f#chunk-2"),
        "f#chunk-2": ("f#chunk-1", "f#chunk-3"),
        "f#chunk-3": ("f#chunk-2", "f#chunk-4"),
    }
    got = scr.capped_scores(own, lifted, near)
    assert got["f#chunk-1"] == 0.62
    assert 0.55 <= got["f#chunk-2"] < got["f#chunk-1"]
    assert 0.50 <= got["f#chunk-3"] < got["f#chunk-2"]


def test_paired_differences_per_question() -> None:
    def row(key: str, vals: dict[str, float]) -> dict[str, object]:
        pq = {m: dict(vals) for m in scr.METRICS}
        return {"dataset": "s", "half": "dev", "row": key, "per_question": pq}

    rows = [
        row("find", {"a": 0.5, "b": 1.0, "c": 0.0}),
        row(scr.NOPASS, {"a": 1.0, "b": 0.5, "c": 0.0, "d": 1.0}),
    ]
    got = scr.paired(rows, scr.NOPASS)["ndcg@10"]
    assert got["n"] == 3 and got["ahead"] == 1 and got["behind"] == 1
    assert abs(got["mean"]) < 1e-12 and got["lo"] < 0 < got["hi"]


def test_carry_caps_only_where_the_neighbour_carried_the_lift() -> None:
    own = {"f#chunk-4": 0.58, "f#chunk-5": 0.60, "f#chunk-6": 0.50}
    lifted = {"f#chunk-6": 0.65}
    near = {"f#chunk-6": ("f#chunk-5", "f#chunk-7")}
    # without chunk 5 in its window chunk 6 would stay at 0.55, below chunk 5: capped
    got = scr.capped_scores(own, lifted, near, {("f#chunk-6", "f#chunk-5"): 0.55})
    assert got["f#chunk-6"] == float(np.nextafter(0.60, -np.inf))
    # its other neighbour alone takes it to 0.62, past chunk 5: the lift stands
    got = scr.capped_scores(own, lifted, near, {("f#chunk-6", "f#chunk-5"): 0.62})
    assert got == lifted
