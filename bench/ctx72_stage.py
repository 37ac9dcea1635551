"""Where find()'s 1,000-token block loses the answers a flat row delivers, by stage (issue 33,
stop 70).

    python bench/ctx72_stage.py --losses bench/data/natural_qw70_screen_dev_*.json \\
        --causes bench/data/natural_ctx66_whole_forward_dev.json \\
        --arms RUN.json [RUN2.json ...] --arm-ranks RANKS.json [RANKS2.json ...]

quality70 (``bench/ctx70_lexical_weight.py``) found the questions find's block loses to the
set's best flat row on the untuned dev halves that miss the ctx@1000 goal line (91) and split
them by *kind*: ``lexical`` (flat hybrid's block holds the answer, flat dense's does not),
``dense`` (the other way) and ``both``. This file attributes each loss to a *stage* of what
find() does with its budget, from the per-question diagnosis ``bench/ctx64_diag.py`` recorded
for the same questions on the same code (``cause@1000``, quality66's full-pool records):

- ``outranked``: the answer is in one of the block's ``find()`` slots, below the slots the
  block reached (``slot-not-reached``);
- ``not in top 10``: no slot of the block's ``find()`` call holds it (``not-in-slots``; at
  1,000 tokens the call asks for :func:`treehop.context_assembly.context_limit` = 10 slots);
- ``per-document slot``: the answer is a chunk collapsed behind another chunk of its document
  (``collapsed``);
- ``packing``: the block reached the answer's slot and still misses it (its chunk left out,
  cut to an excerpt, placed but under half the answer, the answer spanning chunks cut).

Then, for the questions of the kinds asked (``--kinds``, by default the non-lexical ones),
each diagnosis arm's first answer rank and whether its block holds the answer (``--arms``:
``bench_natural.py --json`` runs of the same dev halves with rows such as ``find-qw1``,
``find-no-window``, ``find-no-spread``, ``find-no-collapse``; ``--arm-ranks``: their
``--ranks`` files). Dev halves only: a test-half row or rank is never read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_natural as bn
import ctx70_lexical_weight as c7
import natural_sets as ns

CTX = c7.CTX
STAGES = ("outranked", "not in top 10", "per-document slot", "packing", "no record")
STAGE_OF = {
    "slot-not-reached": "outranked",
    "not-in-slots": "not in top 10",
    "collapsed": "per-document slot",
    "answer-chunk-left-out": "packing",
    "placed-excerpt": "packing",
    "placed-judged-no": "packing",
    "answer-spans-chunks-cut": "packing",
}
KINDS = ("lexical", "dense", "both")
SHAPES = ("question", "error report", "problem report", "sentence", "other")


def shape(text: str) -> str:
    """How ``find()`` reads a query over documents (``HierarchicalRetriever._resolve``): a
    question or an error report takes the question fusion and tree terms
    (``question_dense_weight``, ``question_context_scale``); a problem report or a sentence
    takes passage slots with the other queries' weights; anything else (a heading, a topic)
    takes those weights and one slot per document. The resolver's order is
    :func:`bench_natural.query_shape_of`'s; only the labels are this tool's (its records and
    tests use them)."""
    return _LABELS.get(got := bn.query_shape_of(text), got)


_LABELS = {"error-report": "error report", "problem-report": "problem report", "title": "other"}


def load_texts(paths: Iterable[Path]) -> dict[str, str]:
    """qid -> question text from ``bench_natural.py --ranks`` files that keep it (dev halves)."""
    out: dict[str, str] = {}
    for p in paths:
        for r in json.loads(p.read_text()):
            if r["half"] == "dev" and r.get("question"):
                out[r["qid"]] = r["question"]
    return out


def stage(cause: str | None) -> str:
    """The stage a ``ctx64_diag`` cause belongs to (``no record`` when there is none)."""
    return "no record" if cause is None else STAGE_OF[cause]


def load_causes(path: Path) -> dict[str, dict[str, Any]]:
    """``ctx64_diag.py`` records by question id (every record there is a dev-half question)."""
    return {r["qid"]: r for r in json.loads(path.read_text())["records"]}


def trailing_losses(sets: dict[str, c7.SetRows]) -> list[tuple[str, str, str]]:
    """(set, qid, kind) of every question find's block loses to the set's best flat row, on the
    untuned dev halves where find misses the ctx@1000 goal line (quality70's 91)."""
    out: list[tuple[str, str, str]] = []
    for name in sorted(sets):
        s = sets[name]
        if name not in ns.HELD_OUT_SETS or name in c7.LEFT_OUT or s.meets("find"):
            continue
        d = c7.trailing_diagnosis(s, [])
        out.extend((name, q, k) for q, k in d["kinds"].items())
    return out


def stage_table(
    losses: Sequence[tuple[str, str, str]], causes: dict[str, dict[str, Any]]
) -> dict[str, Counter[str]]:
    """kind -> stage -> questions, with an ``all`` row."""
    table: dict[str, Counter[str]] = {k: Counter() for k in (*KINDS, "all")}
    for _, q, k in losses:
        st = stage(causes[q].get("cause@1000") if q in causes else None)
        table[k][st] += 1
        table["all"][st] += 1
    return table


def arm_outcomes(
    qids: Iterable[tuple[str, str]],
    arms: dict[str, c7.SetRows],
    ranks: dict[tuple[str, str], int | None],
    rows: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Per row: how many of ``qids`` (set, qid) its block answers, and its first-answer rank
    buckets (``c7.rank_bucket``). A question whose set the arm runs lack is skipped."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        held = 0
        n = 0
        buckets: Counter[str] = Counter()
        for name, q in qids:
            s = arms.get(name)
            if s is None or r not in s.rows:
                continue
            n += 1
            held += s.rows[r][CTX][q] >= 1.0
            buckets[c7.rank_bucket(ranks.get((r, q)))] += 1
        out[r] = {"n": n, "held": held, "ranks": buckets}
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--losses", type=Path, nargs="+", required=True)
    ap.add_argument("--causes", type=Path, required=True)
    ap.add_argument("--arms", type=Path, nargs="*", default=[])
    ap.add_argument("--arm-ranks", type=Path, nargs="*", default=[])
    ap.add_argument("--kinds", default="dense,both")
    args = ap.parse_args(argv)
    sets = c7.load(args.losses)
    sets = {k: s for k, s in sets.items() if {"find", *c7.FLAT} <= set(s.rows)}
    losses = trailing_losses(sets)
    causes = load_causes(args.causes)
    table = stage_table(losses, causes)
    print(f"{len(losses)} losses on the trailing untuned dev halves, by kind and stage")
    print("| kind | " + " | ".join(STAGES) + " | all |")
    for k, c in table.items():
        print(f"| {k} | " + " | ".join(str(c[s]) for s in STAGES) + f" | {sum(c.values())} |")
    if not args.arms:
        return
    arms = c7.load(args.arms)
    ranks = c7.load_ranks(args.arm_ranks)
    kinds = set(args.kinds.split(","))
    picked = [(n, q) for n, q, k in losses if k in kinds]
    rows = sorted({r for s in arms.values() for r in s.rows})
    by_stage: dict[str, list[tuple[str, str]]] = {}
    for n, q in picked:
        st = stage(causes[q].get("cause@1000") if q in causes else None)
        by_stage.setdefault(st, []).append((n, q))
    texts = load_texts(args.arm_ranks)
    if texts:
        got = Counter(shape(texts[q]) for _, q in picked if q in texts)
        every = Counter(shape(t) for t in texts.values())
        print(f"\nby how find() reads the query ({len(texts)} questions of these sets):")
        for sh in SHAPES:
            print(f"  {sh}: losses {got[sh]} of {sum(got.values())}; questions {every[sh]}")
    for st, qs in [("all", picked), *sorted(by_stage.items())]:
        print(f"\n## {st}: {len(qs)} losses ({args.kinds}); block holds it / first answer rank")
        for r, o in arm_outcomes(qs, arms, ranks, rows).items():
            b = ", ".join(f"{x} {o['ranks'][x]}" for x in ("1", "2-3", "4-10", ">10", "none"))
            print(f"  {r}: {o['held']} of {o['n']}; ranks {b}")


if __name__ == "__main__":
    main()
