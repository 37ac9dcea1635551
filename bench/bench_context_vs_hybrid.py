"""Where ``assemble_context``'s block spends its tokens when flat hybrid's packed block holds an
answer it does not (issue 33, stop 57).

    python bench/bench_context_vs_hybrid.py --dev --json out.json
    python bench/bench_context_vs_hybrid.py --dev --sets lsof-faq,perlfaq --budgets 500

For every question of a set's half and every budget B it builds the two blocks the
``bench_natural.py`` ctx@B metric judges: ``Treehop.assemble_context(q, max_tokens=B)`` (its
own ``find()``: ``limit=context_limit(B)``, ``context_tokens=B``; the ``FindResult`` and the
block are both caught) and flat hybrid's top chunks packed into B tokens with the same
counter (:func:`bench_natural.pack_pieces`). Each block is accounted: slots that placed
text (faces), their hits and extensions, excerpts, layout (headers, ``- ``), tokens left
unused. For each question whose hybrid block holds an answer find()'s block does not, the
answer's way through find's slots gives one cause:

- ``not-in-slots``: no slot of the block's ``find()`` shows the answer (the ranking, or a
  slot's extent; ``collapsed``: a collected chunk of a slot that its text does not show);
- ``not-reached``: a slot shows it, none of that slot's text is in the block (the budget
  spent above it); split by the slot's rank (top 3 / 4-10 / below 10) and whether the top
  slot alone took >= 60 % of the block (``top-passage``);
- ``cut``: the slot is in the block, the chunk with the answer is not, or only as an excerpt;
- ``judged-short``: the chunk is in the block whole, the judge still says no (a graded
  set's partial answer, or an answer spread over chunks the block holds only part of).

Answers that are whole pages (``answers_are_pages``) are judged per piece and not
diagnosed. Nothing here changes the library; it reads its results.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import bench_context_diag as diag  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.client as client_mod  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402

TOP_PASSAGE = 0.6
"""Share of the block the top slot's text must take for a not-reached answer to count as
the top slot's passage (stop 53's threshold, kept so the counts compare)."""


def block_for(th: Any, query: str, budget: int, scope: str, counter: Any) -> tuple[Any, Any]:
    """The ``FindResult`` and the block ``Treehop.assemble_context(query, max_tokens=budget)``
    builds (both caught on their way through ``client.assemble_context``)."""
    caught: list[Any] = []
    inner = client_mod.assemble_context

    def catch(hits: Any, **kw: Any) -> Any:
        out = inner(hits, **kw)
        caught.append((hits, out))
        return out

    client_mod.assemble_context = catch  # type: ignore[assignment]
    try:
        th.assemble_context(query, max_tokens=budget, target_uri=scope, token_counter=counter)
    finally:
        client_mod.assemble_context = inner  # type: ignore[assignment]
    return caught[0]


def account(found: Any, ctx: Any, counter: Any) -> dict[str, Any]:
    """Where a block's tokens went: per slot face that placed text, its hit's and its
    extensions' tokens (and how many sections are excerpts), plus layout and unused."""
    placed = {s.uri: s for s in ctx.sections}
    faces = []
    for i, m in enumerate(found.contexts()):
        uris = [m.uri, *(c.uri for c in m.collapsed if c.position)]
        got = [placed[u] for u in uris if u in placed]
        if not got:
            continue
        hit = placed.get(m.uri)
        faces.append(
            {
                "slot": i,
                "tokens": sum(s.tokens for s in got),
                "hit": hit.tokens if hit is not None else 0,
                "ext": sum(s.tokens for s in got if s.uri != m.uri),
                "n_ext": sum(1 for s in got if s.uri != m.uri),
                "excerpts": sum(1 for s in got if s.excerpt),
                "tier": hit.tier if hit is not None else None,
                "slot_tokens": counter.count(m.slot_text),
                "chars": sum(len(_text_of(m, s.uri)) for s in got),
            }
        )
    skipped = Counter(r for _, r in ctx.skipped)
    return {
        "faces": faces,
        "n_faces": len(faces),
        "n_sections": len(ctx.sections),
        "layout": diag.layout_overhead(ctx.text, ctx.tokens, counter),
        "unused": ctx.max_tokens - ctx.tokens,
        "tokens": ctx.tokens,
        "skipped": dict(skipped),
        "n_slots": len(found.contexts()),
        "documents": len({m.uri.split("#", 1)[0] for m in found.contexts()[:10]}),
    }


def _text_of(m: Any, uri: str) -> str:
    if uri == m.uri:
        return str(m.content or m.abstract)
    for c in m.collapsed:
        if c.uri == uri:
            return str(c.content)
    return ""


def cause_of(d: dict[str, Any], acc: dict[str, Any], budget: int) -> str:
    """One cause per lost question from :func:`bench_context_diag.diagnose`'s answer."""
    c = d["cause"]
    if c in ("not-in-slots", "collapsed"):
        return c
    if c == "slot-not-reached":
        k = d["slot"]
        top = acc["faces"][0]["tokens"] if acc["faces"] and acc["faces"][0]["slot"] == 0 else 0
        if top >= TOP_PASSAGE * budget:
            return "not-reached/top-passage"
        if k < 3:
            return "not-reached/slot-1-3"
        return "not-reached/slot-4-10" if k < 10 else "not-reached/slot-11+"
    if c in ("placed-excerpt", "answer-chunk-left-out", "answer-spans-chunks-cut"):
        return "cut/" + c
    return "judged-short"


def hybrid_rank(pieces: list[str], missing: list[str], judge: bn.Judge) -> int | None:
    """Rank (1-based) of the first hybrid piece in the packed block that holds a missing
    answer."""
    for i, p in enumerate(pieces):
        if judge.units(p, missing):
            return i + 1
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group(required=True)
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--budgets", default="500,1000,2000")
    ap.add_argument("--json", type=Path, help="every question's accounting and cause")
    ap.add_argument(
        "--losses-only",
        action="store_true",
        help="--json holds only the questions hybrid's (or LangChain's) block answers better",
    )
    ap.add_argument(
        "--langchain",
        action="store_true",
        help="also pack LangChain's 1000/200 block and diagnose where it beats find's",
    )
    ap.add_argument(
        "--report", type=Path, help="print the tables of an earlier --json (runs nothing)"
    )
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.report:
        report(json.loads(args.report.read_text()), budgets)
        return
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    rows: list[dict[str, Any]] = []
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        pages = nset.answers_are_pages
        with bn.indexed_set(nset, cached) as ix:
            th, flat, emb, scope = ix.th, ix.flat, ix.embedder, ix.scope
            lc = bn.LangChainRow(nset.files, cached) if args.langchain else None
            qs = bt.sampled_halves(nset.questions, None)[0 if args.dev else 1]
            emb.prepare([q.text for q in qs])
            for q in qs:
                answers = [a for a, _ in q.answers]
                vec = emb.queries[q.text]
                ranked = flat.hybrid(vec, q.text, 100, bt.DEFAULT_DENSE_WEIGHT, scope)
                lc_ranked = lc.run(vec, 100) if lc is not None else None
                for b in budgets:
                    pieces = bn.pack_pieces(ranked, b, counter)
                    hblock = "\n\n".join(pieces)
                    sh = bn.answer_in_context(hblock, answers, judge, pieces, pages)
                    found, ctx = block_for(th, q.text, b, scope, counter)
                    fpieces = bn.block_pieces(found.contexts(), ctx)
                    sf = bn.answer_in_context(ctx.text, answers, judge, fpieces, pages)
                    acc = account(found, ctx, counter)
                    row: dict[str, Any] = {
                        "set": name,
                        "qid": q.qid,
                        "budget": b,
                        "find": sf,
                        "hybrid": sh,
                        "hybrid_pieces": len(pieces),
                        "hybrid_unused": b - counter.count(hblock) if pieces else b,
                        **acc,
                    }
                    missing_ids = judge.units(hblock, answers) - judge.units(ctx.text, answers)
                    if sh > sf and missing_ids and not pages:
                        lost = [answers[int(a[1:])] for a in sorted(missing_ids)]
                        d = diag.diagnose(found, ctx, lost, judge, counter, b)
                        row["cause"] = cause_of(d, acc, b)
                        row["answer_slot"] = d["slot"]
                        row["hybrid_rank"] = hybrid_rank(pieces, lost, judge)
                        row["above"] = d["above"]
                    elif sh > sf:
                        row["cause"] = "page-answers"
                    if lc_ranked is not None:
                        lc_row(row, lc_ranked, b, counter, judge, answers, pages, found, ctx)
                    rows.append(row)
        print(f"[vs-hybrid] {name}: {len(qs)} questions", flush=True)
    report(rows, budgets)
    if args.json:
        behind = [r for r in rows if max(r["hybrid"], r.get("langchain", 0.0)) > r["find"]]
        kept = behind if args.losses_only else rows
        args.json.write_text(json.dumps(kept, indent=0) + "\n")


def lc_row(
    row: dict[str, Any],
    ranked: list[str],
    budget: int,
    counter: Any,
    judge: bn.Judge,
    answers: list[str],
    pages: bool,
    found: Any,
    ctx: Any,
) -> None:
    """LangChain's 1000/200 block beside find's (``--langchain``): its score, pieces, and
    where it holds an answer find's block does not, the cause (as for hybrid's), the
    first answering piece's rank and its length in characters (a 1,000-character chunk
    carries a question and its answer together where find's slot may be a section)."""
    pieces = bn.pack_pieces(ranked, budget, counter)
    block = "\n\n".join(pieces)
    row["langchain"] = bn.answer_in_context(block, answers, judge, pieces, pages)
    row["lc_pieces"] = len(pieces)
    missing = judge.units(block, answers) - judge.units(ctx.text, answers)
    if row["langchain"] > row["find"] and missing and not pages:
        lost = [answers[int(a[1:])] for a in sorted(missing)]
        d = diag.diagnose(found, ctx, lost, judge, counter, budget)
        acc = {"faces": row["faces"]}
        row["lc_cause"] = cause_of(d, acc, budget)
        row["lc_answer_slot"] = d["slot"]
        k = hybrid_rank(pieces, lost, judge)
        row["lc_rank"] = k
        row["lc_piece_chars"] = len(pieces[k - 1]) if k else None


GROUPS = {
    "not-reached/top-passage": "packing",
    "not-reached/slot-1-3": "packing",
    "cut/placed-excerpt": "packing",
    "cut/answer-chunk-left-out": "packing",
    "cut/answer-spans-chunks-cut": "packing",
    "not-reached/slot-4-10": "ranking",
    "not-reached/slot-11+": "ranking",
    "not-in-slots": "ranking",
    "collapsed": "ranking",
    "judged-short": "judge",
}
"""What could win a cause back: the block (``packing``: the answer's slot is in the top
three or in the block, its text cut or pushed out by the top slot's passage), the ranking
(the slot below the third, or none), or neither (``judge``: the text is in the block)."""


def _median(xs: list[float]) -> float | None:
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    k = len(xs) // 2
    return xs[k] if len(xs) % 2 else (xs[k - 1] + xs[k]) / 2


def cause_table(rows: list[dict[str, Any]], budgets: list[int]) -> None:
    """One line per budget and cause: questions, answer-shares (the summed ctx difference and
    its share of the pooled mean), sets, and the medians of where the tokens went (faces that
    placed text, the top face's tokens, the answer's slot in find, its rank in hybrid's
    block)."""
    n_q = max(1, len({(r["set"], r["qid"]) for r in rows}))
    print(
        "\n| B | cause | group | questions | answer-shares (pooled ctx) | sets (Cranfield) "
        "| faces | top face tok | answer slot | hybrid rank |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for b in budgets:
        behind = [r for r in rows if r["budget"] == b and r["hybrid"] > r["find"]]
        by: dict[str, list[dict[str, Any]]] = {}
        for r in behind:
            by.setdefault(r.get("cause", "?"), []).append(r)
        for c, sel in sorted(by.items(), key=lambda x: -sum(r["hybrid"] - r["find"] for r in x[1])):
            sh = sum(r["hybrid"] - r["find"] for r in sel)
            sets = len({r["set"] for r in sel})
            cran = sum(r["set"] == "cranfield" for r in sel)
            faces = _median([r["n_faces"] for r in sel])
            top = _median([r["faces"][0]["tokens"] if r["faces"] else 0 for r in sel])
            slot = _median([r.get("answer_slot") for r in sel])
            hr = _median([r.get("hybrid_rank") for r in sel])
            print(
                f"| {b} | {c} | {GROUPS.get(c, '?')} | {len(sel)} | {sh:.1f} ({sh / n_q:+.3f}) | "
                f"{sets} ({cran}) | {faces} | {top} | "
                f"{'-' if slot is None else slot + 1} | {'-' if hr is None else hr} |"
            )


def report(rows: list[dict[str, Any]], budgets: list[int]) -> None:
    """Per budget: ctx means, questions find ahead / behind, causes of the losses, and the
    blocks' accounting (all questions vs the lost ones); with ``--langchain`` rows, the same
    cause table against LangChain's 1000/200 block and the length of its answering piece."""
    cause_table(rows, budgets)
    if rows and "langchain" in rows[0]:
        print(
            "\nagainst LangChain 1000/200 (hybrid rank = the answering piece's rank in its block):"
        )
        as_lc = [
            {
                **r,
                "hybrid": r["langchain"],
                "cause": r.get("lc_cause", "page-answers"),
                "answer_slot": r.get("lc_answer_slot"),
                "hybrid_rank": r.get("lc_rank"),
            }
            for r in rows
        ]
        cause_table(as_lc, budgets)
        for b in budgets:
            rb = [r for r in rows if r["budget"] == b]
            lc = sum(r["langchain"] for r in rb) / max(1, len(rb))
            behind = [r for r in rb if r["langchain"] > r["find"]]
            chars = _median([r.get("lc_piece_chars") for r in behind])
            pieces = sum(r["lc_pieces"] for r in rb) / max(1, len(rb))
            print(
                f"@{b}: LangChain ctx {lc:.3f}, pieces {pieces:.2f}; ahead of find on "
                f"{len(behind)}, its answering piece's median chars {chars}; "
                f"per set {dict(Counter(r['set'] for r in behind))}"
            )
    for b in budgets:
        rb = [r for r in rows if r["budget"] == b]
        n = len(rb)
        ahead = sum(r["find"] > r["hybrid"] for r in rb)
        behind = [r for r in rb if r["hybrid"] > r["find"]]
        f = sum(r["find"] for r in rb) / n
        h = sum(r["hybrid"] for r in rb) / n
        print(
            f"\n@{b}: {n} questions, ctx find {f:.3f} hybrid {h:.3f}; "
            f"ahead {ahead}, behind {len(behind)}"
        )
        causes = Counter(r.get("cause", "?") for r in behind)
        shares: Counter[str] = Counter()
        for r in behind:
            shares[r.get("cause", "?")] += r["hybrid"] - r["find"]
        for c, k in sorted(causes.items(), key=lambda x: -x[1]):
            print(f"  {c}: {k} questions ({shares[c]:.1f} answer-shares)")
        per_set = Counter(r["set"] for r in behind)
        print("  behind per set:", dict(per_set))

        def stats(sel: list[dict[str, Any]], label: str) -> None:
            if not sel:
                return
            m = len(sel)
            faces = sum(r["n_faces"] for r in sel) / m
            secs = sum(r["n_sections"] for r in sel) / m
            top = sum(r["faces"][0]["tokens"] if r["faces"] else 0 for r in sel) / m
            ext = sum(sum(x["ext"] for x in r["faces"]) for r in sel) / m
            hit = sum(sum(x["hit"] for x in r["faces"]) for r in sel) / m
            exc = sum(sum(x["excerpts"] for x in r["faces"]) for r in sel) / m
            lay = sum(r["layout"] for r in sel) / m
            un = sum(r["unused"] for r in sel) / m
            hp = sum(r["hybrid_pieces"] for r in sel) / m
            chars = sum(sum(x["chars"] for x in r["faces"]) for r in sel) / max(
                1, sum(r["n_faces"] for r in sel)
            )
            dup = sum(r["skipped"].get("duplicate", 0) for r in sel) / m
            print(
                f"  {label} ({m}): faces {faces:.2f} (sections {secs:.2f}), "
                f"chars/face {chars:.0f}, "
                f"top face {top:.0f} tok, hits {hit:.0f} + extensions {ext:.0f} tok, "
                f"excerpts {exc:.2f}, layout {lay:.0f}, unused {un:.0f}, dup skipped {dup:.2f}; "
                f"hybrid pieces {hp:.2f}"
            )

        stats(rb, "all")
        stats(behind, "behind")
        nr = [r for r in behind if str(r.get("cause", "")).startswith("not-reached")]
        if nr:
            ks = Counter(r["answer_slot"] for r in nr)
            hr = Counter(r["hybrid_rank"] for r in nr)
            hr_sorted = dict(sorted(hr.items(), key=lambda x: (x[0] is None, x[0] or 0)))
            print(f"  not reached: answer slot {dict(sorted(ks.items()))}; hybrid rank {hr_sorted}")


if __name__ == "__main__":
    main()
