"""``assemble_context``'s layout choices for documents, measured one at a time (issue 33).

    python bench/bench_context_flags.py --dev                  # every variant, the 5 sets
    python bench/bench_context_flags.py --test --variants new,r3
    python bench/bench_context_flags.py --dev --variants r4,r4-two-whole --per-question P.json
    python bench/ctx58_pair.py P.json --base r4                # the paired screen of P.json

Each variant sets module constants of :mod:`treehop.context_assembly` (headers, chunk labels,
the fallback of a chunk that does not fit, the slots asked of ``find``) and runs
``Treehop.assemble_context(question, max_tokens=B)`` over the same index in one process;
``ctx@B`` is judged as in ``bench_natural.py`` (the answer's text inside the block), beside
flat dense's and flat hybrid's top-100 chunks packed best first into the same budget.
``--per-question`` writes every row's score per question and budget as JSON, in
``bench_context_diag.py``'s format (``{"set", "qid", "row", "budget", "score"}``), so
``ctx58_pair.py`` pairs two variants question by question.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import bench_context_vs_hybrid as cvh  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402

OLD: dict[str, Any] = {
    "COMPACT_RESOURCE_HEADERS": False,
    "CHUNK_LABELS": True,
    "CHUNK_FALLBACK": "tiers",
    "SLOT_TOKENS": 10**9,
    "EXCERPTS_LAST": False,
    "LEAF_EXCERPTS": False,
    "DOCUMENT_ORDER": False,
    "RESOURCE_HEADERS": "path",
    "FILE_GROUPS": False,
    "EXTENSION_ORDER": "slot",
    "WHOLE_SLOTS": 1,
    "EXTENSION_EXCERPTS": True,
}
NEW: dict[str, Any] = {
    "COMPACT_RESOURCE_HEADERS": True,
    "CHUNK_LABELS": False,
    "CHUNK_FALLBACK": "excerpt",
    "SLOT_TOKENS": 100,
    "EXCERPTS_LAST": False,
    "LEAF_EXCERPTS": False,
    "DOCUMENT_ORDER": False,
    "RESOURCE_HEADERS": "path",
    "FILE_GROUPS": False,
    "EXTENSION_ORDER": "slot",
    "WHOLE_SLOTS": 1,
    "EXTENSION_EXCERPTS": True,
}
R3: dict[str, Any] = {
    **NEW,
    "LEAF_EXCERPTS": True,
    "DOCUMENT_ORDER": True,
    "RESOURCE_HEADERS": "suffix",
    "FILE_GROUPS": True,
}
R4: dict[str, Any] = {**R3, "EXTENSION_ORDER": "score"}
VARIANTS: dict[str, dict[str, Any]] = {
    "old": OLD,
    "old+headers": {**OLD, "COMPACT_RESOURCE_HEADERS": True, "CHUNK_LABELS": False},
    "old+excerpt": {**OLD, "CHUNK_FALLBACK": "excerpt"},
    "old+none": {**OLD, "CHUNK_FALLBACK": "none"},
    "old+limit": {**OLD, "SLOT_TOKENS": 100},
    "new": NEW,
    "new-limit": {**NEW, "SLOT_TOKENS": 10**9},
    "new+excerpts-last": {**NEW, "EXCERPTS_LAST": True},
    "r3": R3,
    "r3-leaf": {**R3, "LEAF_EXCERPTS": False},
    "r3-suffix": {**R3, "RESOURCE_HEADERS": "path"},
    "r3+bare": {**R3, "RESOURCE_HEADERS": "none"},
    "r3-docorder": {**R3, "DOCUMENT_ORDER": False},
    "r3-files": {**R3, "FILE_GROUPS": False},
    "r3+slots60": {**R3, "SLOT_TOKENS": 60},
    "r3+slots150": {**R3, "SLOT_TOKENS": 150},
    "r3+excerpts-last": {**R3, "EXCERPTS_LAST": True},
    "r4": R4,
    "r4-score-all": {**R4, "WHOLE_SLOTS": 0},
    "r4-two-whole": {**R4, "WHOLE_SLOTS": 2},
    "r4-after-hits": {**R4, "EXTENSION_ORDER": "after-hits"},
    "r4-hits-first": {**R4, "EXTENSION_ORDER": "after-hits", "WHOLE_SLOTS": 0},
    "r4-no-ext-excerpts": {**R4, "EXTENSION_EXCERPTS": False},
}
"""``new`` is round 2's layout (compact path headers, excerpts, slots for the budget); ``r3``
today's defaults (round 3: excerpts of whole-file leaves, suffix headers, a group per file,
document order); ``r4`` round 4's (a lower slot's passage chunks offered by their own
score against the next hit, the top slot whole: ``EXTENSION_ORDER``)."""
BUDGETS = (500, 1000, 2000)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group(required=True)
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument(
        "--per-question",
        type=Path,
        help="every variant's (and flat row's) answer score per question and budget, as JSON",
    )
    args = ap.parse_args(argv)
    names = args.variants.split(",")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {', '.join(VARIANTS)}")
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    saved = {k: getattr(ca, k) for k in OLD}
    per_q: list[dict[str, Any]] = []
    print(f"| set | half | n | variant | {' | '.join(f'ctx@{b}' for b in BUDGETS)} |")
    print(f"|---|---|---|---|{'---|' * len(BUDGETS)}")
    try:
        for name in args.sets.split(","):
            nset = ns.load_natural_set(name, cached)
            with bn.indexed_set(nset, cached) as ix:
                th, flat, emb, scope = ix.th, ix.flat, ix.embedder, ix.scope
                qs = bt.sampled_halves(nset.questions, None)[0 if args.dev else 1]
                emb.prepare([q.text for q in qs])
                rows = ["flat dense", "flat hybrid", *names]
                got: dict[str, dict[int, list[float]]] = {r: {b: [] for b in BUDGETS} for r in rows}
                for q in qs:
                    answers = [a for a, _ in q.answers]
                    pool = flat.hybrid(
                        emb.queries[q.text], q.text, 100, bt.DEFAULT_DENSE_WEIGHT, scope
                    )
                    dense = flat.dense(emb.queries[q.text], 100)
                    pages = nset.answers_are_pages
                    for b in BUDGETS:
                        for row, ranked in (("flat hybrid", pool), ("flat dense", dense)):
                            pieces = bn.pack_pieces(ranked, b, counter)
                            s = bn.answer_in_context(
                                "\n\n".join(pieces), answers, judge, pieces, pages
                            )
                            got[row][b].append(s)
                            per_q.append(
                                {"set": name, "qid": q.qid, "row": row, "budget": b, "score": s}
                            )
                    for v in names:
                        for k, val in VARIANTS[v].items():
                            setattr(ca, k, val)
                        for b in BUDGETS:
                            found, ctx = cvh.block_for(th, q.text, b, scope, counter)
                            assert ctx.tokens <= b
                            # (answers that are pages: judged per placed slot, as bench_natural)
                            pieces = bn.block_pieces(found.contexts(), ctx)
                            s = bn.answer_in_context(ctx.text, answers, judge, pieces, pages)
                            got[v][b].append(s)
                            per_q.append(
                                {"set": name, "qid": q.qid, "row": v, "budget": b, "score": s}
                            )
            for r in rows:
                cells = " | ".join(f"{sum(got[r][b]) / max(1, len(qs)):.3f}" for b in BUDGETS)
                print(f"| {name} | {'dev' if args.dev else 'test'} | {len(qs)} | {r} | {cells} |")
    finally:
        for k, val in saved.items():
            setattr(ca, k, val)
    if args.per_question:
        args.per_question.write_text(json.dumps(per_q) + "\n")


if __name__ == "__main__":
    main()
