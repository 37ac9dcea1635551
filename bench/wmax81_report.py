"""The ``question_weight_max`` screen (issue 33, stop 75, helper quality81; dev halves only).

    python bench/bench_natural.py --dev --sets <the nine>,<HELD_OUT_SETS less doxygen-faq> \\
        --rows flat-hybrid,find,find-wmax --json run.json --resume
    python bench/wmax81_report.py run.json [--variant find-wmax]

Per pool (the nine tuning sets, the untuned sets, pooled): each metric's means and the
variant minus ``find`` and minus flat hybrid, paired per question
(``bench_natural.mean_interval``), with questions won / lost; then the nine per set.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_natural as bn
import natural_sets as ns

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def per_question(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """row -> metric -> "set qid" -> value (the set rows only, not its kinds' rows)."""
    out: dict[str, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        if r["half"] != "dev" or "/" in r["dataset"]:
            continue
        for m, vals in r["per_question"].items():
            for q, v in vals.items():
                out[r["row"]][m][f"{r['dataset']} {q}"] = float(v)
    return out


def diff(a: dict[str, float], b: dict[str, float]) -> str:
    keys = sorted(set(a) & set(b))
    d = np.array([a[k] - b[k] for k in keys])
    mean, lo, hi = bn.mean_interval(d)
    return f"{mean:+.4f} ({lo:+.4f}..{hi:+.4f}) {int((d > 0).sum())}/{int((d < 0).sum())}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--variant", default="find-wmax")
    args = ap.parse_args()
    rows = [r for p in args.runs for r in json.loads(p.read_text())["rows"]]
    pq = per_question(rows)
    v = args.variant
    nine = set(ns.NATURAL_SETS)
    sets = {k.split(" ", 1)[0] for k in pq[v]["ndcg@10"]}
    pools = {
        "nine": lambda s: s in nine,
        "untuned": lambda s: s not in nine,
        "pooled": lambda s: True,
    }
    print(f"{len(sets)} sets ({len(sets & nine)} of the nine)\n")
    print(
        f"| pool (sets, questions) | metric | {v} / find / flat hybrid | {v} - find (won/lost) "
        f"| {v} - flat hybrid | find - flat hybrid |"
    )
    print("|---|---|---|---|---|---|")
    for pool, keep in pools.items():
        head = ""
        for m in METRICS:
            sel = {
                row: {k: x for k, x in pq[row][m].items() if keep(k.split(" ", 1)[0])}
                for row in (v, "find", "flat-hybrid")
            }
            if not sel[v]:
                continue
            n = len(sel[v])
            ns_ = len({k.split(" ", 1)[0] for k in sel[v]})
            head = f"{pool} ({ns_}, {n})" if m == METRICS[0] else ""
            means = " / ".join(f"{np.mean(list(sel[r].values())):.4f}" for r in sel)
            print(
                f"| {head} | {m} | {means} | {diff(sel[v], sel['find'])} "
                f"| {diff(sel[v], sel['flat-hybrid'])} | {diff(sel['find'], sel['flat-hybrid'])} |"
            )
    print("\nthe nine, per set (variant - find, won/lost):")
    for s in sorted(sets & nine):
        cells = []
        for m in METRICS:
            a = {k: x for k, x in pq[v][m].items() if k.startswith(s + " ")}
            b = {k: x for k, x in pq["find"][m].items() if k.startswith(s + " ")}
            d = np.array([a[k] - b[k] for k in sorted(set(a) & set(b))])
            cells.append(f"{m} {d.mean():+.4f} {int((d > 0).sum())}/{int((d < 0).sum())}")
        print(f"- {s}: " + "; ".join(cells))
    moved = defaultdict(list)
    for m in METRICS:
        for k, x in pq[v][m].items():
            y = pq["find"][m].get(k)
            if y is not None and x != y:
                moved[m].append(k.split(" ", 1)[0])
    print("\nsets moved:", {m: len(set(x)) for m, x in moved.items()})


if __name__ == "__main__":
    main()
