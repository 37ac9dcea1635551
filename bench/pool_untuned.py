"""The untuned sets' test halves pooled, find() minus each other row: the issue-33 line that
each stop's closing note reports (earlier stops computed it with a script outside the
repository).

    python bench/bench_natural.py --test --sets <untuned sets> \\
        --rows flat-dense,flat-hybrid,find --json NOW.json
    python bench/pool_untuned.py NOW.json

``find`` / ``flat-hybrid`` / ``flat-dense`` rows come from ``NOW.json`` (a fresh run at the
commit being reported); a row missing there (``langchain``, ``llamaindex``, ``flat-bm25``:
rows no treehop change can move, slow to rerun) is taken from the newest committed
``bench/data/natural_results_*.json`` holding that set's test half with per-question values
(by the file's last commit time). Pooled: every question weighs the same; the interval is
``bench_natural.mean_interval`` over the per-question differences (a paired 95 % bootstrap).
Per set: find() minus the best other row on nDCG@10 and answer-in-context at 1,000 tokens,
against the issue's goal lines (+0.02, +0.03). Last, every find / flat row of ``NOW.json``
that differs from the committed file it would have been taken from (a moved result).

``doxygen-faq`` is in ``natural_sets.HELD_OUT_SETS`` but took part in round 13's screens, so it
is not untuned and is left out of the pool.
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import natural_sets  # noqa: E402
from bench_natural import mean_interval  # noqa: E402

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")
OTHERS = ("flat-hybrid", "langchain", "llamaindex", "flat-dense", "flat-bm25")
NOT_UNTUNED = frozenset({"doxygen-faq"})


def _commit_time(path: str) -> int:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%ct", "--", path],
        capture_output=True,
        text=True,
        cwd=HERE.parent,
        check=False,
    ).stdout.strip()
    return int(out or 0)


def committed_test_rows() -> dict[tuple[str, str], tuple[str, dict[str, Any]]]:
    """(set, row) -> (file, row) for the newest committed test-half row with per-question values."""
    files = sorted(glob.glob(str(HERE / "data" / "natural_results_*.json")), key=_commit_time)
    rows: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
    for f in files:
        try:
            for r in json.loads(Path(f).read_text())["rows"]:
                if r.get("half") == "test" and "per_question" in r:
                    rows[(r["dataset"], r["row"])] = (Path(f).name, r)
        except (ValueError, KeyError, TypeError):
            continue
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("now", help="--json of a fresh bench_natural --test run")
    args = ap.parse_args()
    now = {
        (r["dataset"], r["row"]): r
        for r in json.loads(Path(args.now).read_text())["rows"]
        if r["half"] == "test"
    }
    older = committed_test_rows()
    sets = [s for s in natural_sets.HELD_OUT_SETS if s not in NOT_UNTUNED]

    def row(s: str, name: str) -> dict[str, Any]:
        return now[(s, name)] if (s, name) in now else older[(s, name)][1]

    print(f"{len(sets)} sets, {sum(row(s, 'find')['n'] for s in sets)} questions")
    for name in ("find", *OTHERS):
        means = [
            np.mean([v for s in sets for v in row(s, name)["per_question"][m].values()])
            for m in METRICS
        ]
        print(
            f"{name:12s} " + "  ".join(f"{m} {v:.3f}" for m, v in zip(METRICS, means, strict=True))
        )
    for name in OTHERS:
        cells = []
        for m in METRICS:
            d = [
                row(s, "find")["per_question"][m][q] - row(s, name)["per_question"][m][q]
                for s in sets
                for q in row(s, "find")["per_question"][m]
            ]
            mu, lo, hi = mean_interval(np.array(d))
            cells.append(f"{m} {mu:+.3f} ({lo:+.3f}..{hi:+.3f})")
        print(f"find - {name:12s} " + " | ".join(cells))
    met = {"ndcg@10": 0, "ctx@1000": 0}
    goal = {"ndcg@10": 0.02, "ctx@1000": 0.03}
    # A goal line above 1.0 (the best other row within the goal of the metric's maximum)
    # cannot be met by any method: counted apart, so a miss is read as a loss only where a
    # win was possible.
    unreachable = {"ndcg@10": 0, "ctx@1000": 0}
    for s in sets:
        parts = []
        for m in met:
            best = max(OTHERS, key=lambda o, m=m: row(s, o)[m])
            d = row(s, "find")[m] - row(s, best)[m]
            met[m] += d >= goal[m]
            capped = row(s, best)[m] + goal[m] > 1.0 + 1e-12
            unreachable[m] += capped and d < goal[m]
            mark = " (ceiling)" if capped else ""
            parts.append(f"{m} {d:+.3f} vs {best:11s} {row(s, best)[m]:.3f}{mark:10s}")
        print(f"  {s:16s} n={row(s, 'find')['n']:3d}  " + "  ".join(parts))
    print("goal lines met: " + ", ".join(f"{m} {k} of {len(sets)}" for m, k in met.items()))
    print(
        "missed where the best other row leaves no room for the goal (ceiling): "
        + ", ".join(f"{m} {k}" for m, k in unreachable.items())
    )
    taken = sorted({older[(s, n)][0] for s in sets for n in OTHERS if (s, n) not in now})
    print("rows taken from: " + ", ".join(taken))
    for s in sets:
        for name in ("find", "flat-hybrid", "flat-dense"):
            if (s, name) in older and (s, name) in now:
                o, h = older[(s, name)][1], now[(s, name)]
                moved = [
                    (m, round(o[m], 3), round(h[m], 3))
                    for m in (*METRICS, "R@10", "R@100")
                    if abs(o[m] - h[m]) > 1e-12
                ]
                if moved:
                    print(f"moved since {older[(s, name)][0]}: {s} {name} {moved}")


if __name__ == "__main__":
    main()
