"""``find_pool`` on the dev halves: paired per-question intervals of the ``find-pool20`` row
(``RetrievalConfig.find_pool=20``) minus ``find`` (today's default), and of each minus flat
hybrid, pooled over the nine tuned sets, the untuned sets present (less doxygen-faq, as
``pool_untuned.py`` pools them) and both; then each set's p50 of the limit-10 find() calls
(the rows interleave per query in one process: ``bench_natural``).

    python bench/bench_natural.py --dev --sets <sets> --rows flat-hybrid,find,find-pool20 \\
        --json dev.json
    python bench/pool79_report.py dev.json

Dev halves only: a file holding a test-half row stops the report.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import natural_sets as ns  # noqa: E402
from bench_natural import mean_interval  # noqa: E402

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")
PAIRS = (("find-pool20", "find"), ("find-pool20", "flat-hybrid"), ("find", "flat-hybrid"))
NOT_UNTUNED = frozenset({"doxygen-faq"})


def load(paths: list[Path]) -> dict[tuple[str, str], dict[str, Any]]:
    """(set, row) -> the row (the first file holding it wins)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for p in paths:
        for r in json.loads(p.read_text())["rows"]:
            if r["half"] != "dev":
                raise SystemExit(f"{p}: a {r['half']} half row ({r['dataset']}): dev only")
            rows.setdefault((r["dataset"], r["row"]), r)
    return rows


def paired(
    rows: dict[tuple[str, str], dict[str, Any]], sets: list[str], a: str, b: str, metric: str
) -> str:
    d: list[float] = []
    won = lost = 0
    for s in sets:
        pa, pb = rows[(s, a)]["per_question"][metric], rows[(s, b)]["per_question"][metric]
        for q, v in pa.items():
            x = float(v) - float(pb[q])
            d.append(x)
            won += x > 0
            lost += x < 0
    if not d:
        return "-"
    m, lo, hi = mean_interval(np.array(d, dtype=np.float64))
    return f"{m:+.4f} ({lo:+.4f}..{hi:+.4f}) {won} / {lost}"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("json", type=Path, nargs="+")
    args = ap.parse_args()
    rows = load(args.json)
    done = sorted(
        {s for s, _ in rows if all((s, r) in rows for r in ("find", "find-pool20", "flat-hybrid"))}
    )
    nine = [s for s in ns.NATURAL_SETS if s in done]
    untuned = [s for s in ns.HELD_OUT_SETS if s in done and s not in NOT_UNTUNED]
    pools = {"nine": nine, "untuned": untuned, "pooled": nine + untuned}
    print(
        "| pool (sets, questions) | measure | pool20 - find (won / lost) | pool20 - flat hybrid "
        "| find - flat hybrid |"
    )
    print("|---|---|---|---|---|")
    for name, sets in pools.items():
        if not sets:
            continue
        n = sum(rows[(s, "find")]["n"] for s in sets)
        for i, m in enumerate(METRICS):
            head = f"{name} ({len(sets)}, {n})" if i == 0 else ""
            cells = " | ".join(paired(rows, sets, a, b, m) for a, b in PAIRS)
            print(f"| {head} | {m} | {cells} |")
    print("\n| set | n | p50 ms find | p50 ms find-pool20 | ratio | nDCG@10 pool20 - find |")
    print("|---|---|---|---|---|---|")
    for s in nine + untuned:
        a, b = rows[(s, "find")], rows[(s, "find-pool20")]
        print(
            f"| {s} | {a['n']} | {a['p50_ms']:.2f} | {b['p50_ms']:.2f} | "
            f"{b['p50_ms'] / a['p50_ms']:.2f} | {b['ndcg@10'] - a['ndcg@10']:+.4f} |"
        )
    r = [rows[(s, "find-pool20")]["p50_ms"] / rows[(s, "find")]["p50_ms"] for s in nine + untuned]
    if r:
        print(f"\nmedian p50 ratio pool20 / find over {len(r)} sets: {float(np.median(r)):.2f}")


if __name__ == "__main__":
    main()
