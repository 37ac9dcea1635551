"""find()'s 1,000-token block against flat hybrid's, loss by loss, and the ``leave-room`` screen
(issue 33, stop 74, helper quality80; dev halves only).

    python bench/ctx64_diag.py --dev --sets <sets> --variants base,leave-room --json run.json
    python bench/ctx80_report.py run.json [--budget 1000] [--variant leave-room]

Reads ``bench/ctx64_diag.py`` records. (1) The questions whose answer find() ranks in its top
ten (``find_rank``, the list nDCG@10 is scored on) where find()'s block at the budget holds
less of the answers than flat hybrid's: each one's cause from the base block's diagnosis
(``bench_context_diag.diagnose``), the "slot not reached" ones split by what spent the room
above the answer's slot (the top slot's extensions, lower slots' extensions, hits alone) and
whether flat hybrid ranks the answer above find's block's slot. (2) The variant against base,
flat hybrid and flat dense per pool (the nine, the untuned sets less doxygen-faq, pooled) at
500 / 1,000 / 2,000 tokens, paired per question (``bench_natural.mean_interval``), with
find's and flat hybrid's nDCG@10 (the variant does not change find()'s list).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ctx64_diag as c64

CAUSES = {
    "slot-not-reached": "answer slot not reached",
    "placed-excerpt": "answer's chunk cut to an excerpt without it",
    "answer-chunk-left-out": "answer continues into a chunk of its passage left out",
    "placed-judged-no": "answer's chunk placed, judged under half (answer longer / spread)",
    "answer-spans-chunks-cut": "answer spans chunks, cut",
    "not-in-slots": "not in the block's slots (its find() call shows it nowhere)",
    "collapsed": "only in a collapsed chunk, not shown",
}


def lost(r: dict[str, Any], b: int) -> bool:
    """find ranks an answer in its top ten; its block at ``b`` holds less than flat hybrid's."""
    rank = r.get("find_rank")
    return rank is not None and rank <= 10 and r[f"base@{b}"] < r[f"flat-hybrid@{b}"]


def answer_slot(r: dict[str, Any], b: int) -> int | None:
    """1-based slot of the first lost answer (``lost_slot``), else of the first answer
    (``slot_rank``, in records without the diagnosis's slot)."""
    if r.get(f"lost_slot@{b}") is not None:
        return int(r[f"lost_slot@{b}"]) + 1
    got = r.get(f"slot_rank@{b}")
    return None if got is None else int(got)


def room_split(r: dict[str, Any], b: int) -> str:
    """What spent the room above a not-reached answer slot: the extensions of the slots
    above (the top slot's whole passage, lower slots' bids) when, without them, the answer's
    hit would have fit whole; else the hits above alone (the slot ranked too low to fit)."""
    need = r.get(f"lost_hit_tokens@{b}", 0) - r.get(f"room@{b}", 0)
    top = r.get(f"top_ext@{b}", 0)
    ext = r.get(f"above_ext@{b}", 0)
    if ext >= need:
        return "extensions of the top slot" if top >= need else "extensions (lower slots, or both)"
    return "hits above fill the block"


def causes(recs: Sequence[dict[str, Any]], b: int) -> None:
    g = [r for r in recs if lost(r, b)]
    print(f"### {b} tokens: {len(g)} questions (find top-10 hit, block below flat hybrid's)")
    c = Counter(r.get(f"cause@{b}", "page-judged set (no diagnosis)") for r in g)
    print("| cause | questions | of which flat hybrid ranks it higher |")
    print("|---|---|---|")
    for k, n in c.most_common():
        higher = sum(
            1
            for r in g
            if r.get(f"cause@{b}", "page-judged set (no diagnosis)") == k
            and r.get("hyb_rank") is not None
            and answer_slot(r, b) is not None
            and r["hyb_rank"] < (answer_slot(r, b) or 0)
        )
        print(f"| {CAUSES.get(k, k)} | {n} | {higher} |")
    nr = [r for r in g if r.get(f"cause@{b}") == "slot-not-reached" and f"room@{b}" in r]
    print(f"\nnot reached ({len(nr)} with the room fields), by what spent the room above it:")
    for k, n in Counter(room_split(r, b) for r in nr).most_common():
        print(f"- {k}: {n}")
    if nr:
        for key in ("above_hits", "above_ext", "top_ext", "layout", "lost_hit_tokens", "room"):
            v = [r.get(f"{key}@{b}", 0) for r in nr]
            print(f"- median {key}: {float(np.median(v)):.0f}")
        print(
            "- median answer slot (1-based) / flat hybrid rank / flat hybrid pieces: "
            f"{float(np.median([r[f'lost_slot@{b}'] + 1 for r in nr])):.0f} / "
            f"{float(np.median([r['hyb_rank'] for r in nr if r['hyb_rank']])):.0f} / "
            f"{float(np.median([r[f'hyb_pieces@{b}'] for r in nr])):.0f}"
        )
    lay_g = [r.get(f"layout@{b}", 0) for r in g]
    lay_all = [r.get(f"layout@{b}", 0) for r in recs]
    print(
        f"- layout tokens (headers, '- '): median {float(np.median(lay_g)) if lay_g else 0:.0f} "
        f"in these blocks, {float(np.median(lay_all)) if lay_all else 0:.0f} in all"
    )
    print()


def screen(recs: Sequence[dict[str, Any]], variant: str) -> None:
    print(
        f"| pool (sets, questions) | budget | {variant} / base / flat hybrid / flat dense "
        f"| {variant} - base (won / lost) | {variant} - flat hybrid | base - flat hybrid "
        f"| {variant} - flat dense |"
    )
    print("|---|---|---|---|---|---|---|")
    for pool, rs in c64._groups(recs).items():
        rs = [r for r in rs if f"{variant}@1000" in r]
        if not rs:
            continue
        head = f"{pool} ({len({r['set'] for r in rs})}, {len(rs)})"
        for b in (500, 1000, 2000):
            v = np.array([r[f"{variant}@{b}"] for r in rs])
            base = np.array([r[f"base@{b}"] for r in rs])
            hyb = np.array([r[f"flat-hybrid@{b}"] for r in rs])
            den = np.array([r[f"flat-dense@{b}"] for r in rs])
            print(
                f"| {head} | {b} | {v.mean():.4f} / {base.mean():.4f} / {hyb.mean():.4f} / "
                f"{den.mean():.4f} | {c64._paired(v - base)} | {c64._paired(v - hyb)} "
                f"| {c64._paired(base - hyb)} | {c64._paired(v - den)} |"
            )
            head = ""
        fn = np.array([r["find_ndcg"] for r in rs])
        hn = np.array([r["hyb_ndcg"] for r in rs])
        print(
            f"| | nDCG@10 | {fn.mean():.4f} (find's list either way) / {hn.mean():.4f} | 0 "
            f"| {c64._paired(fn - hn)} | | |"
        )
    print()
    for b in (500, 1000, 2000):
        moved: Counter[str] = Counter()
        for r in recs:
            if f"{variant}@{b}" in r and r[f"{variant}@{b}"] != r[f"base@{b}"]:
                moved[f"{r['set']} {'+' if r[f'{variant}@{b}'] > r[f'base@{b}'] else '-'}"] += 1
        print(
            f"{variant} @{b} moves: "
            + (", ".join(f"{k}{n}" for k, n in sorted(moved.items())) or "none")
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("records", nargs="+", type=Path)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--variant", default="leave-room")
    ap.add_argument("--causes-only", action="store_true", help="no screen (records of base only)")
    args = ap.parse_args()
    seen: set[tuple[str, str]] = set()
    recs: list[dict[str, Any]] = []
    for p in args.records:
        for r in json.loads(p.read_text())["records"]:
            if (r["set"], str(r["qid"])) not in seen:
                seen.add((r["set"], str(r["qid"])))
                recs.append(r)
    print(f"{len(recs)} questions, {len({r['set'] for r in recs})} sets\n")
    causes(recs, args.budget)
    if not args.causes_only:
        screen(recs, args.variant)


if __name__ == "__main__":
    main()
