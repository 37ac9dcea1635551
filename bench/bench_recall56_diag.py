"""Why ``find()``'s 100 results miss an answer that flat hybrid's 100 hold, question by question.

Issue 33, stop 56 (helper ``recall56``). On an untuned set ``find()`` had the lowest R@100
of the rows while having the best nDCG@10; this asks the same question on sets one may look
at. For every question of the chosen sets and halves it counts what ``find(limit=100)``
returns (how many results, from how many documents: the slot's ``parent_uri``, and how many
of the set's leaves its slots hold, faces and collapsed chunks) beside flat
hybrid's 100 (their documents), and for each question where flat hybrid's 100 hold an
answer and ``find()``'s do not it gives one cause, read in this order:

* ``fewer than 100``: ``find()`` returned fewer than the 100 it was asked for (the descent,
  threshold or collapse stopped short) and no slot holds an answer leaf;
* ``answer is a face, slot not judged``: a leaf that holds the answer is a slot's face, and
  the slot's text (the face grown over its passage) is not judged to hold it;
* ``answer in a slot's run, slot not judged``: an answer leaf is shown in a slot's run;
* ``answer collapsed behind a face``: an answer leaf is held in a slot, not shown;
* ``ranked past 100``: 100 slots, none holds an answer leaf; ``find(limit=300)`` ranks one
  (its rank printed);
* ``not found at 300``: not even there.

For the last two it also runs each switch of ``bench_find_loss_diag.SWITCHES`` (BM25
fusion, the question fusion at flat hybrid's weight, no chunk window, no document penalty,
no tree terms, one slot per chunk, face-only slots) at limit 100 and prints the first
answer's rank under each (``None``: still not in the 100).

Prints one line per such question (no question text, so an untuned set's dev half can be
counted without being read), the per-set counts of short results and documents, and the
count per cause. Nothing here changes a default.

    python bench/bench_recall56_diag.py --sets django-faq,perlfaq --halves dev --json OUT.json
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_find_loss_diag as fd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402

ROWS = {r.key: r for r in bn.ROWS}


def first(texts: Sequence[str], answers: Sequence[str], judge: bn.Judge) -> int | None:
    """1-based rank of the first text judged to hold an answer (``None``: none)."""
    return next((i + 1 for i, t in enumerate(texts) if judge.units(t, answers)), None)


def diagnose(
    runner: bn.Runner, q: ns.NaturalQuestion, judge: bn.Judge, find_row: str = "find"
) -> dict[str, Any]:
    """One question's record: find's and flat hybrid's first-answer ranks at 100, find's
    result count and documents, flat hybrid's documents, and (when flat hybrid's 100 hold
    an answer and find's do not) the cause."""
    answers = [a for a, _ in q.answers]
    f_texts, found = runner.results(ROWS[find_row], q, 100)
    h_texts, _ = runner.results(ROWS["flat-hybrid"], q, 100)
    flat = runner.flat
    slots = found.contexts()
    f_rank, h_rank = first(f_texts, answers, judge), first(h_texts, answers, judge)
    doc_of = {n.content or n.abstract: n.parent_uri for n in flat.th.store.iter_nodes(None)}
    rec: dict[str, Any] = {
        "qid": q.qid,
        "find": f_rank,
        "hybrid": h_rank,
        "find_n": len(slots),
        "find_docs": len({m.parent_uri for m in slots}),
        "hybrid_docs": len({doc_of.get(t) for t in h_texts}),
        # leaves the slots hold (faces and collapsed chunks) of the set's leaves: a short
        # result that leaves some out stopped before the corpus ran out
        "find_covers": len(
            ({m.uri for m in slots} | {c.uri for m in slots for c in m.collapsed}) & set(flat.uris)
        ),
        "leaves": len(flat.uris),
        "cause": None,
    }
    if f_rank is not None or h_rank is None:
        return rec
    answer_uris = {u for u, t in zip(flat.uris, flat.texts, strict=True) if judge.units(t, answers)}
    face = any(m.uri in answer_uris for m in slots)
    shown = any(c.uri in answer_uris and c.position is not None for m in slots for c in m.collapsed)
    held = any(c.uri in answer_uris and c.position is None for m in slots for c in m.collapsed)
    if face:
        cause = "answer is a face, slot not judged"
    elif shown:
        cause = "answer in a slot's run, slot not judged"
    elif held:
        cause = "answer collapsed behind a face"
    elif len(slots) < 100:
        cause = "fewer than 100"
    else:
        deep, _ = runner.results(ROWS[find_row], q, 300)
        rec["find_at_300"] = first(deep, answers, judge)
        cause = "ranked past 100" if rec["find_at_300"] else "not found at 300"
        # which one switch of bench_find_loss_diag brings an answer into find's 100
        rec["switches"] = {
            name: first(runner.results(row, q, 100)[0], answers, judge) for name, row in fd.SWITCHES
        }
    rec["cause"] = cause
    rec["answer_leaves"] = len(answer_uris)
    return rec


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    ap.add_argument("--halves", default="dev")
    ap.add_argument("--row", default="find", help="the find() row to read (a key of ROWS)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    cached = bn.bench_embedder("")
    judge = bn.Judge()
    records: list[dict[str, Any]] = []
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        dev, test = bt.sampled_halves(nset.questions, None)
        halves = {"dev": dev, "test": test}
        picked = [(h, q) for h in args.halves.split(",") for q in halves[h]]
        with bn.indexed_set(nset, cached) as ix:
            runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
            ix.embedder.prepare([q.text for _, q in picked])
            mine = []
            for half, q in picked:
                rec = diagnose(runner, q, judge, args.row)
                rec.update(set=nset.name, half=half)
                mine.append(rec)
                if rec["cause"]:
                    print(
                        f"[{rec['cause']}] {name}/{half} {rec['qid']}: hybrid={rec['hybrid']} "
                        f"find n={rec['find_n']} docs={rec['find_docs']} "
                        f"at300={rec.get('find_at_300')} answer leaves={rec['answer_leaves']}"
                        + (f" switches={rec['switches']}" if "switches" in rec else ""),
                        flush=True,
                    )
        records += mine
        short = sum(1 for r in mine if r["find_n"] < 100)
        gaps = sum(1 for r in mine if r["find_n"] < 100 and r["find_covers"] < r["leaves"])
        n_min = min((r["find_n"] for r in mine), default=0)
        print(
            f"{name}: {len(mine)} questions; find() under 100 results on {short} (min "
            f"{n_min}; {gaps} of them leave leaves uncovered); mean documents "
            f"{sum(r['find_docs'] for r in mine) / max(1, len(mine)):.1f}"
            f" (flat hybrid {sum(r['hybrid_docs'] for r in mine) / max(1, len(mine)):.1f})"
            f"; find misses, hybrid holds: {sum(1 for r in mine if r['cause'])}; find holds, "
            f"hybrid misses: {sum(1 for r in mine if r['find'] and not r['hybrid'])}",
            flush=True,
        )
    counts = Counter(r["cause"] for r in records if r["cause"])
    print("\n| cause | questions |\n|---|---|")
    for cause, n in counts.most_common():
        print(f"| {cause} | {n} |")
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
