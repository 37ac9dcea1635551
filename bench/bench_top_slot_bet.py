"""At a small budget, the top slot's bet question by question (issue 33, helper ctxsmall).

``assemble_context`` offers the top slot whole (:data:`treehop.context_assembly.WHOLE_SLOTS`):
its hit and the passage around it. Inside 500 tokens that passage can fill the block and push
out the next slot's hit, which flat packing reaches. For every question whose top slot and
next hit do not both fit, this prints whether the whole top slot (the default) or no slot
whole (``WHOLE_SLOTS = 0``: the top slot's extensions bid by score, as a lower slot's do) was
worth more to the judge, and signals a block could read beforehand:
the scores of the top hit and the next hit, the own score of the top slot's best extension,
whether the two hits are from one document, how many query terms the extensions hold that the
top hit lacks, and where the hit sits in its passage. Nothing here chooses a rule; it shows
whether one of these signals separates the two outcomes on a pool of dev halves.

    python bench/bench_top_slot_bet.py --dev --sets django-faq,... --budget 500 --json OUT
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_context_diag as cd
import bench_natural as bn
import bench_tree as bt
import datasets as ds
import natural_sets as ns
import treehop.context_assembly as ca


def features(slots: Any, query: str, counter: Any) -> dict[str, Any]:
    """What a block could read about its top two slots (``MatchedContext``) before packing."""
    top, nxt = slots[0], slots[1]
    terms = ca.query_terms(query)
    ext = [c for c in top.collapsed if c.position]
    hit_terms = ca.query_terms(top.content or "") & terms
    ext_terms = (
        set().union(*(ca.query_terms(c.content or "") & terms for c in ext)) if ext else set()
    )
    own = [c.own_score for c in ext if c.own_score is not None]
    return {
        "top_score": float(top.score),
        "next_score": float(nxt.score),
        "gap": float(top.score - nxt.score),
        "top_own": None if top.own_score is None else float(top.own_score),
        "next_own": None if nxt.own_score is None else float(nxt.own_score),
        "ext_best_own": max(own) if own else None,
        "same_doc": top.uri.split("#")[0] == nxt.uri.split("#")[0],
        "ext_new_terms": len(ext_terms - hit_terms),
        "n_terms": len(terms),
        "n_ext": len(ext),
        "ext_after_only": all((c.position or 0) > 0 for c in ext),
        "top_tokens": counter.count(top.slot_text),
        "next_tokens": counter.count(nxt.content or nxt.abstract),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group(required=True)
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--budget", type=int, default=500)
    ap.add_argument("--json", type=Path, required=True)
    args = ap.parse_args()
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    out: list[dict[str, Any]] = []
    b = args.budget
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            qs = bt.sampled_halves(nset.questions, None)[0 if args.dev else 1]
            ix.embedder.prepare([q.text for q in qs])
            for q in qs:
                answers = [a for a, _ in q.answers]
                found = cd.found_for(ix.th, q.text, b, ix.scope, counter)
                ranked = ca._duplicates_last(found.contexts())  # the order the block offers
                if len(ranked) < 2 or not ranked[0].collapsed:
                    continue
                f = features(ranked, q.text, counter)
                if f["top_tokens"] + f["next_tokens"] <= b:
                    continue
                got = []
                whole = ca.WHOLE_SLOTS
                for n in (whole, 0):
                    ca.WHOLE_SLOTS = n
                    try:
                        ctx = ca.assemble_context(
                            found, max_tokens=b, token_counter=counter, query=q.text
                        )
                    finally:
                        ca.WHOLE_SLOTS = whole
                    got.append(bn.answer_in_context(ctx.text, answers, judge))
                out.append({"set": name, "qid": q.qid, "whole": got[0], "none_whole": got[1], **f})
        print(f"{name}: {sum(1 for x in out if x['set'] == name)} questions fire", flush=True)
    args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
