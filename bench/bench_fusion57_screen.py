"""Does another ``question_dense_weight`` win pooled on far more dev questions? Issue 33,
stop 57 (helper ``fusion57``).

A question over documents fuses ``w * cosine + (1 - w) * BM25 / best`` with ``w`` =
``question_dense_weight`` 0.8 (flat hybrid: 0.5), chosen stops ago on the nine tuning sets'
dev halves (``natural_sets.NATURAL_SETS``). Since then 28 untuned sets were added
(``natural_sets.HELD_OUT_SETS``); their dev halves (about 1,100 questions, 28 corpora) are a
far larger pool to choose on. Their *test* halves stay the held-out check: this script runs
``--dev`` only and refuses ``--test``.

Run mode (every other argument goes to ``bench_natural.py``): adds the row ``find-qw0.6``
(``bench_natural`` already has ``find-qw0.7`` / ``find-qw0.9``; ``find`` is the default 0.8)
and runs ``bench_natural.main``::

    export TREEHOP_BENCH_CACHE=/work/benchcache OPENBLAS_NUM_THREADS=1
    R=find,find-qw0.6,find-qw0.7,find-qw0.9,flat-hybrid
    python bench/bench_fusion57_screen.py --dev --rows $R --json NINE.json
    U=$(python -c "import sys; sys.path[:0]=['bench']; import natural_sets as n; \\
        print(','.join(n.HELD_OUT_SETS))")
    python bench/bench_fusion57_screen.py --dev --sets $U --rows $R --json UNTUNED.json

Report mode: ``--report NINE.json UNTUNED.json`` prints, per file (pool), each variant's
pooled mean per metric (every question weighs the same), variant minus ``find`` with the
paired 95 % bootstrap interval (``bench_natural.mean_interval`` over per-question
differences), and per set the wins / losses of the variant's mean against ``find``'s.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402

BASE = "find"
VARIANTS = ("find-qw0.6", "find-qw0.7", "find-qw0.9")
METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")
TIE = 1e-9


def report(
    path: Path,
    variants: Sequence[str] = VARIANTS,
    extra: Sequence[str] = ("flat-hybrid",),
    latency: bool = False,
) -> None:
    """One pool's table (see the module docstring) for ``variants`` against ``find``, with
    the ``extra`` rows' means beside them (and their comparisons); ``latency``: a column of
    each row's p50 (the mean of the sets'). A row some set lacks is left out. (Also the
    report of ``bench_adaptive57_screen.py``: its rules, no extra row, with latency.)"""
    rows: Sequence[Mapping[str, Any]] = json.loads(path.read_text())["rows"]
    rows = [r for r in rows if "/" not in r["dataset"] and r["half"] == "dev"]
    by = {(r["dataset"], r["row"]): r for r in rows}
    sets = sorted({r["dataset"] for r in rows if (r["dataset"], BASE) in by})
    keys = [BASE, *(k for k in (*variants, *extra) if all((s, k) in by for s in sets))]
    n = sum(by[(s, BASE)]["n"] for s in sets)
    print(f"\n### {path.name}: {len(sets)} sets, {n} dev questions\n")
    lat_head = " p50 ms (mean of sets) |" if latency else ""
    print("| row | " + " | ".join(METRICS) + " |" + lat_head)
    print("|---" * (len(METRICS) + 1 + latency) + "|")
    for k in keys:
        cells = []
        for m in METRICS:
            vals = [v for s in sets for v in by[(s, k)]["per_question"][m].values()]
            cells.append(f"{np.mean(vals):.4f}")
        if latency:
            cells.append(f"{np.mean([by[(s, k)].get('p50_ms', float('nan')) for s in sets]):.1f}")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print("\n| minus find (0.8) | " + " | ".join(METRICS) + " |")
    print("|---" * (len(METRICS) + 1) + "|")
    for k in keys[1:]:
        cells = []
        for m in METRICS:
            d = []
            for s in sets:
                a, b = by[(s, k)]["per_question"][m], by[(s, BASE)]["per_question"][m]
                d += [a[q] - b[q] for q in sorted(set(a) & set(b))]
            mean, lo, hi = bn.mean_interval(np.array(d))
            cells.append(f"{mean:+.4f} ({lo:+.4f}..{hi:+.4f})")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print("\n| sets won / lost / tied vs find | " + " | ".join(METRICS) + " |")
    print("|---" * (len(METRICS) + 1) + "|")
    for k in keys[1:]:
        cells = []
        for m in METRICS:
            diff = [by[(s, k)][m] - by[(s, BASE)][m] for s in sets]
            w = sum(x > TIE for x in diff)
            los = sum(x < -TIE for x in diff)
            cells.append(f"{w} / {los} / {len(diff) - w - los}")
        print(f"| {k} | " + " | ".join(cells) + " |")
    print(f"\nPer set nDCG@10 ({', '.join(keys)}):\n")
    for s in sets:
        vals = " ".join(f"{by[(s, k)]['ndcg@10']:.3f}" for k in keys)
        print(f"- {s} (n={by[(s, BASE)]['n']}): {vals}")


def main(argv: Sequence[str]) -> None:
    if argv[:1] == ["--report"]:
        for f in argv[1:]:
            report(Path(f))
        return
    if "--test" in argv or "--dev" not in argv:
        raise SystemExit("dev halves only: pass --dev (the untuned test halves stay held out)")
    bn.add_screen_rows(
        bn.Row("find-qw0.6", "find questions w=0.6", "find", config={"question_dense_weight": 0.6})
    )
    bn.main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
