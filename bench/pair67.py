"""Two ``bench_natural.py --json`` files of the same sets and half, paired per question: the
change minus the base for each row they share (issue 33, helper quality67).

    python bench/pair67.py BASE.json CHANGE.json [BASE2.json CHANGE2.json ...]

Files are given in (base, change) pairs (several pairs pool, e.g. two processes over
different sets). Per row and metric: the pooled base value, the paired mean difference with
its 95 % bootstrap interval (:func:`bench_natural.mean_interval`, questions as the unit),
questions won / lost, and the sets whose mean moved. Every question weighs the same.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import bench_natural as bn

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def per_question(files: list[Path]) -> dict[tuple[str, str], dict[str, float]]:
    """(row, metric) -> {set<TAB>qid: value} over ``files`` (a question seen twice: the same)."""
    out: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for f in files:
        rows: list[dict[str, Any]] = json.loads(f.read_text())["rows"]
        for r in rows:
            for metric, values in r.get("per_question", {}).items():
                for qid, v in values.items():
                    out[(r["row"], metric)][f"{r['dataset']}\t{qid}"] = float(v)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", type=Path, nargs="+", help="BASE CHANGE [BASE CHANGE ...]")
    args = ap.parse_args()
    if len(args.files) % 2:
        ap.error("give the files in (base, change) pairs")
    base = per_question(args.files[0::2])
    change = per_question(args.files[1::2])
    for row, metric in sorted(set(base) & set(change)):
        if metric not in METRICS:
            continue
        b, c = base[(row, metric)], change[(row, metric)]
        keys = sorted(set(b) & set(c))
        if not keys:
            continue
        d = np.array([c[k] - b[k] for k in keys])
        mean, lo, hi = bn.mean_interval(d)
        won, lost = int((d > 1e-12).sum()), int((d < -1e-12).sum())
        sets: dict[str, float] = defaultdict(float)
        for k, x in zip(keys, d, strict=True):
            sets[k.split("\t")[0]] += x
        moved = ", ".join(f"{s} {v:+.2f}" for s, v in sorted(sets.items()) if abs(v) > 1e-12)
        print(
            f"{row:12s} {metric:9s} n={len(keys):5d} base {np.mean([b[k] for k in keys]):.4f} "
            f"diff {mean:+.4f} ({lo:+.4f}..{hi:+.4f}) won/lost {won}/{lost}"
            + (f"  [{moved}]" if moved else "")
        )


if __name__ == "__main__":
    main()
