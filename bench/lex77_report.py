"""The lexical questions find()'s block loses to flat hybrid, and ``LEXICAL_LEAD`` screened
(issue 33, stop 72, helper quality77). Dev halves only.

    python bench/ctx64_diag.py --dev --sets <...> --variants base,lex-lead --json run.json
    python bench/lex77_report.py run.json [run2.json ...] \
        --signals bench/data/natural_qw71_signals_dev.json

Reads ``ctx64_diag`` records (one a question; a question met twice is kept once) and prints:

1. the questions whose 1,000-token block flat hybrid's holds and find()'s does not ("hybrid
   wins") against those find()'s holds and flat hybrid's does not ("find wins"), with the
   label-free signals ``ctx64_diag.lex_signals`` recorded for find()'s slots: whether
   ``LEXICAL_LEAD`` fires (a unique lexical best slot ranked third or lower), the lexical
   best slot's lead over the top slot (``(best - top) / best`` of the slot weights), its
   position, and the dense margin of the top slot over it (``vector_score``); with ``--signals``
   also quality71's whole-index BM25 shape (``margin``, ``z``). Each signal's ROC AUC for
   "hybrid wins" against "find wins" (0.5: no separation; ties count half);
2. the screen: ``lex-lead`` minus ``base`` (find's block) and each minus flat hybrid, per
   budget, paired per question (``bench_natural.mean_interval``), won / lost, for the nine,
   the untuned sets and pooled; and the nine's sets one by one at 1,000 tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_natural as bn
import ctx64_diag as c64
import natural_sets as ns

BUDGETS = (500, 1000, 2000)


def load(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The records of every file, one per (set, question): the first met is kept."""
    seen: set[tuple[str, str]] = set()
    out: list[dict[str, Any]] = []
    for p in paths:
        for r in json.loads(p.read_text())["records"]:
            key = (r["set"], r["qid"])
            if key not in seen:
                seen.add(key)
                out.append(r)
    return out


pools = c64._groups
"""The nine tuning sets, the untuned sets (doxygen-faq out, as ``pool_untuned.py``) and both
pooled: ``ctx64_diag``'s pools."""


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """P(a "pos" value > a "neg" value), ties half; NaN when either side is empty."""
    if not pos or not neg:
        return float("nan")
    p = np.asarray(pos, dtype=float)[:, None]
    n = np.asarray(neg, dtype=float)[None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def lead_share(r: dict[str, Any], b: int = 1000) -> float:
    """How much more of the query's weighted words the lexical best slot holds than the top
    slot, as a share of the best's (0: the top slot is a lexical best)."""
    best = float(r.get(f"lex_best@{b}", 0.0))
    return (best - float(r.get(f"lex_top@{b}", 0.0))) / best if best > 0 else 0.0


def dense_margin(r: dict[str, Any], b: int = 1000) -> float:
    """The top slot's dense score minus the lexical best slot's (0 when either is missing)."""
    a, c = r.get(f"vec_top@{b}"), r.get(f"vec_best@{b}")
    return float(a) - float(c) if a is not None and c is not None else 0.0


SIGNALS: dict[str, Callable[[dict[str, Any]], float]] = {
    "fires (lex-lead moves a slot)": lambda r: float(r.get("lex_j@1000") is not None),
    "lexical lead over the top slot": lead_share,
    "lexical best's slot position": lambda r: float(r.get("lex_best_i@1000") or 0),
    "dense margin top - lexical best": dense_margin,
    "query terms": lambda r: float(r.get("lex_terms@1000", 0)),
}


def separation(recs: Sequence[dict[str, Any]], sig: dict[str, dict[str, float]]) -> None:
    """Part 1: the two groups at 1,000 tokens and each signal's AUC."""
    hyb = [r for r in recs if r["flat-hybrid@1000"] > r["base@1000"]]
    fnd = [r for r in recs if r["flat-hybrid@1000"] < r["base@1000"]]
    print(f"## 1,000 tokens: hybrid wins {len(hyb)}, find wins {len(fnd)} of {len(recs)}")
    print("| signal | hybrid wins: median | find wins: median | AUC (hybrid vs find wins) |")
    print("|---|---|---|---|")
    named = dict(SIGNALS)
    for k in ("margin", "z"):
        named[f"whole-index BM25 {k} (quality71)"] = lambda r, k=k: (
            sig.get(r["set"], {}).get(r["qid"], {}).get(k, float("nan"))
        )
    for name, f in named.items():
        a = [f(r) for r in hyb]
        c = [f(r) for r in fnd]
        a = [x for x in a if x == x]
        c = [x for x in c if x == x]
        if not a or not c:
            continue
        print(f"| {name} | {np.median(a):.3f} | {np.median(c):.3f} | {auc(a, c):.3f} |")
    fires = [r for r in recs if r.get("lex_j@1000") is not None]
    print(
        f"\nlex-lead fires on {len(fires)} of {len(recs)} at 1,000 tokens; "
        f"of the hybrid wins {sum(r.get('lex_j@1000') is not None for r in hyb)}, "
        f"of the find wins {sum(r.get('lex_j@1000') is not None for r in fnd)}"
    )
    causes: dict[str, int] = {}
    for r in hyb:
        c = str(r.get("cause@1000"))
        causes[c] = causes.get(c, 0) + 1
    print("hybrid wins by find's block's cause:", dict(sorted(causes.items(), key=lambda t: -t[1])))


def _paired(d: np.ndarray) -> str:
    m, lo, hi = bn.mean_interval(d)
    return f"{m:+.4f} ({lo:+.4f}..{hi:+.4f}) {int((d > 0).sum())} / {int((d < 0).sum())}"


def screen(recs: Sequence[dict[str, Any]]) -> None:
    """Part 2: the variant against find's block and against flat hybrid, per pool."""
    print("\n## lex-lead screen (paired per question, won / lost)")
    print(
        "| pool (n) | budget | find / lex-lead / flat hybrid | lex-lead - find"
        " | find - flat hybrid | lex-lead - flat hybrid |"
    )
    print("|---|---|---|---|---|---|")
    for pool, rs in pools(recs).items():
        for b in BUDGETS:
            base = np.array([r[f"base@{b}"] for r in rs], dtype=float)
            lex = np.array([r[f"lex-lead@{b}"] for r in rs], dtype=float)
            hyb = np.array([r[f"flat-hybrid@{b}"] for r in rs], dtype=float)
            print(
                f"| {pool} ({len(rs)}) | {b}"
                f" | {base.mean():.4f} / {lex.mean():.4f} / {hyb.mean():.4f}"
                f" | {_paired(lex - base)} | {_paired(base - hyb)} | {_paired(lex - hyb)} |"
            )
        fn = np.array([r["find_ndcg"] for r in rs], dtype=float)
        hn = np.array([r["hyb_ndcg"] for r in rs], dtype=float)
        print(
            f"| {pool} | nDCG@10 | {fn.mean():.4f} / (same list) / {hn.mean():.4f} | 0 (the list"
            f" is find()'s) | {_paired(fn - hn)} | {_paired(fn - hn)} |"
        )
    print("\nthe nine, one by one (lex-lead - find, won / lost), per budget:")
    nine = pools(recs)["nine"]
    for s in ns.NATURAL_SETS:
        rs = [r for r in nine if r["set"] == s]
        if not rs:
            print(f"  {s}: no records")
            continue
        cells = []
        for b in BUDGETS:
            d = np.array([r[f"lex-lead@{b}"] - r[f"base@{b}"] for r in rs], dtype=float)
            cells.append(f"{b}: {d.mean():+.4f} {int((d > 0).sum())}/{int((d < 0).sum())}")
        print(f"  {s} ({len(rs)}): " + "; ".join(cells))
    moved: dict[str, list[int]] = {}
    for r in pools(recs)["pooled"]:
        d = r["lex-lead@1000"] - r["base@1000"]
        if d:
            moved.setdefault(r["set"], [0, 0])[0 if d > 0 else 1] += 1
    print("sets that move at 1,000 (won/lost):", {k: tuple(v) for k, v in sorted(moved.items())})


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--signals", type=Path, default=None)
    args = ap.parse_args()
    recs = load(args.runs)
    sig = json.loads(args.signals.read_text()) if args.signals else {}
    separation(pools(recs)["pooled"], sig)
    screen(recs)


if __name__ == "__main__":
    main()
