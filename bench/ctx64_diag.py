"""Why a better ranking does not put more answers in the 1,000-token block (issue 33, stop 64).

    python bench/ctx64_diag.py --dev --sets r-faq,vim-faq --json out.json
    python bench/ctx64_diag.py --dev --untuned --variants base,VARIANT --json out.json
    python bench/ctx64_diag.py --report out.json [out2.json ...]

One pass over a set's dev half, per question: ``find()``'s first answer rank among its ten
results (``bench_natural``'s ``find`` row, the list nDCG@10 is scored on) and flat hybrid's
among its hundred, both rows' nDCG@10; per budget (500 / 1,000 / 2,000) the flat rows' packed
blocks (dense, hybrid, BM25: cheap; LangChain is left out) and the block
``Treehop.assemble_context`` builds (its ``find()`` call caught, ``bench_context_diag.
found_for``) replayed under each variant (module constants or patched functions of
``treehop.context_assembly``; ``bench_context_diag.VARIANTS`` plus this file's own), judged
as ``bench_natural`` judges ``ctx@B``. For the base block it records where the answer was in
find's slots and why the block misses it (``bench_context_diag.diagnose``), with the tokens
the slots above the answer's slot took, split into their hits and their extensions.

``--report`` reads the JSON files back: the joint table of the two rows' answer ranks against
the two blocks (why an nDCG@10 lead need not be a ctx@1000 lead), the causes of the
questions whose answer find ranks in its top 3 and whose block misses it, and each variant
against base, per budget, paired per question (``bench_natural.mean_interval``), per group
(the nine tuning sets, the untuned sets) and pooled.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import heapq  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402
import treehop.lexical_lead as ll  # noqa: E402

BUDGETS = (500, 1000, 2000)
FLAT = ("flat-dense", "flat-hybrid", "flat-bm25")


def by_score_after(
    slots: Sequence[tuple[Any, list[tuple[int, Any]], bool]],
    whole: int | None = None,
    *,
    after: int = 0,
    with_hit: bool = False,
    forward: bool = False,
    cap: int | None = None,
    cost: Any = None,
) -> tuple[list[Any], list[str | None]]:
    """``treehop.context_assembly._by_score`` with two screened changes (not in the library):
    ``after`` > 0: a whole slot's extensions wait for the next ``after`` slots' hits (the
    budget reaches one or two more answers before the top passage's continuation);
    ``with_hit``: a lower slot's extension whose own score is at least its hit's own score goes
    right after the hit (the slot was ranked by that text), nearest first; ``forward`` (stop 66):
    a whole slot is offered whole only forwards (its hit, then the chunks after it), the chunks
    before its hit compete as a lower slot's do (by score, nearest first, each after the one it
    continues). ``after=0, with_hit=False, forward=False`` is the library's order exactly
    (checked in tests/test_ctx64_diag.py)."""
    if cap is not None:  # (``cap`` / ``cost``: the library's call, window_share off here)
        raise ValueError("the replays stand in for _by_score without window_share (cap None)")
    by_score = ca.EXTENSION_ORDER == "score"
    whole = ca.WHOLE_SLOTS if whole is None else whole
    out: list[Any] = []
    needs: list[str | None] = []
    requires: dict[int, str] = {}
    pending: list[tuple[float, int, int, Any]] = []
    chains: dict[int, list[Any]] = {}
    deferred: list[tuple[int, list[Any]]] = []
    seq = 0

    def offer_next(chain_id: int) -> None:
        nonlocal seq
        chain = chains.get(chain_id)
        if chain:
            e = chain.pop()
            key = -ca._extension_score(e) if by_score else float(chain_id // 2)
            heapq.heappush(pending, (key, seq, chain_id, e))
            seq += 1

    def emit_best() -> None:
        _, _, chain_id, e = heapq.heappop(pending)
        out.append(e)
        needs.append(requires[id(e)])
        offer_next(chain_id)

    def release(upto: int) -> None:
        while deferred and deferred[0][0] <= upto:
            for e in deferred.pop(0)[1]:
                out.append(e)
                needs.append(None)

    for rank, (m, entries, is_turn) in enumerate(slots):
        while by_score and pending and -pending[0][0] >= ca._hit_score(m):
            emit_best()
        out.append(m)
        needs.append(None)
        release(rank)
        if not is_turn and entries and rank < whole and after > 0:
            deferred.append((rank + after, [e for _, e in entries]))
            continue
        sides: tuple[int, ...] = (0, 1)
        if not is_turn and entries and rank < whole and forward:
            ahead = [e for p, e in entries if p > 0]
            out.extend(ahead)
            needs.extend(None for _ in ahead)
            sides = (0,)
        elif is_turn or not entries or rank < whole:
            out.extend(e for _, e in entries)
            needs.extend(None for _ in entries)
            continue
        for side in sides:
            chain = sorted(
                (pe for pe in entries if (pe[0] > 0) == bool(side)), key=lambda pe: abs(pe[0])
            )
            inner = m.uri
            own = m.own_score
            if with_hit and own is not None and math.isfinite(own):
                while chain and (chain[0][1].own_score or -math.inf) >= own:
                    e = chain.pop(0)[1]
                    out.append(e)
                    needs.append(inner)
                    inner = e.uri
            for _, e in chain:
                requires[id(e)] = inner
                inner = e.uri
            chains[2 * rank + side] = [e for _, e in reversed(chain)]
            offer_next(2 * rank + side)
    release(len(slots))
    while pending:
        emit_best()
    return out, needs


WHOLE_PER_TOKENS = 1000
"""``whole-per-1000``: one whole slot per this many tokens of budget (issue 33, stop 65)."""


def whole_per_budget(ranked: Sequence[Any], max_tokens: int, counter: Any) -> int:
    """``treehop.context_assembly._whole_slots`` for the screened ``whole-per-1000`` rule (not
    in the library): ``max(WHOLE_SLOTS, max_tokens // WHOLE_PER_TOKENS)`` slots whole, so
    500 and 1,000 tokens keep the library's one whole slot, 2,000 takes two, 4,000 four. The
    rule leaves conversation slots alone (they are offered whole in every mode)."""
    return max(ca.WHOLE_SLOTS, max_tokens // WHOLE_PER_TOKENS)


def bare_line(m: Any, tier: Any, body: str, label: str, group_time: str | None) -> str:
    """``no-bullets`` (stop 68): a document line without the ``- `` that opens it (its
    label and note kept): the layout's per-line cost, the group headers kept."""
    line = _LINE_OF_MAIN(m, tier, body, label, group_time)
    return line[2:] if line.startswith("- ") else line


_LINE_OF_MAIN = ca._line
_PATCHES: dict[str, Any] = {
    "bare-line": bare_line,
    "per-budget": whole_per_budget,
    "after-1": functools.partial(by_score_after, after=1),
    "after-2": functools.partial(by_score_after, after=2),
    "with-hit": functools.partial(by_score_after, with_hit=True),
    "forward": functools.partial(by_score_after, forward=True),
}
cd.PATCHES.update(_PATCHES)
VARIANTS: dict[str, dict[str, Any]] = {
    **cd.VARIANTS,
    # the top slot's extensions after the next one / two slots' hits
    "whole-after-1": {"_by_score": "after-1"},
    "whole-after-2": {"_by_score": "after-2"},
    # two slots whole, each one's extensions after the next slot's hit
    "two-whole-after-1": {"WHOLE_SLOTS": 2, "_by_score": "after-1"},
    # a lower slot's extension that matches the question better than its hit goes with it
    "ext-with-hit": {"_by_score": "with-hit"},
    # one whole slot per 1,000 tokens of budget (stop 65's screen; = two-whole at 2,000)
    "whole-per-1000": {"_whole_slots": "per-budget"},
    # the whole slots whole only forwards: the chunks before a top hit bid as extensions (stop 66)
    "whole-forward": {"_by_score": "forward"},
    # the layout's bounds (stop 68): no ``- `` opening each line; no group headers either
    "no-bullets": {"_line": "bare-line"},
    "bare-layout": {"_line": "bare-line", "RESOURCE_HEADERS": "none"},
    # a query excerpt from the paragraph of its first matching sentence (stop 71, off), and
    # the earliest best window (the default; quality73 ran it as "no-para" with it on)
    "para": {"EXCERPT_PARAGRAPHS": True},
    "no-para": {"EXCERPT_PARAGRAPHS": False},
    # a query excerpt's window weighed without the chunk's heading line's words (stop 71)
    "no-head": {"EXCERPT_SKIP_HEADING": True},
    # the one slot whose hit holds the query's words best placed second (stop 72, quality77)
    "lex-lead": {"LEXICAL_LEAD": True},
    # quality80: an extension placed only where the next hit still fits whole after it
    "leave-room": {"EXTENSIONS_LEAVE_ROOM": True},
}


def first_rank(units: Sequence[frozenset[str]]) -> int | None:
    """1-based rank of the first result holding an answer (``None``: none does)."""
    for i, u in enumerate(units):
        if u:
            return i + 1
    return None


def lex_signals(slots: Sequence[Any], query: str, b: int) -> dict[str, Any]:
    """Label-free signals of ``LEXICAL_LEAD`` (quality77) for one block's slots: the leader
    it moves (``lex_j``, 0-based, ``None``: none), the slot weights' top / best / second best
    (``treehop.lexical_lead.slot_term_scores``) and the dense scores of the top slot and the
    lexical best (``vector_score``)."""
    texts = [
        (m.content or m.abstract)
        if m.context_type is ca.ContextType.RESOURCE and not ca._is_turn(m)
        else None
        for m in slots
    ]
    terms = ca.query_terms(query)
    sc = ll.slot_term_scores(texts, terms) if slots else []
    order = sorted(range(len(sc)), key=lambda i: -sc[i])
    best = order[0] if order else None
    vec = [m.vector_score for m in slots]
    return {
        f"lex_j@{b}": ll.lexical_leader(texts, terms),
        f"lex_best_i@{b}": best,
        f"lex_top@{b}": sc[0] if sc else 0.0,
        f"lex_best@{b}": sc[best] if best is not None else 0.0,
        f"lex_second@{b}": sc[order[1]] if len(order) > 1 else 0.0,
        f"lex_terms@{b}": len(terms),
        f"vec_top@{b}": vec[0] if vec else None,
        f"vec_best@{b}": vec[best] if best is not None else None,
    }


def slot_tokens_above(found: Any, ctx: Any, slot: int | None) -> dict[str, int]:
    """Tokens the block spent on the slots above the answer's slot (all slots when ``None``),
    split into the slots' hits and their extensions (the chunks of a slot's passage)."""
    placed = {s.uri: s for s in ctx.sections}
    hits = ext = 0
    slots = found.contexts()
    for m in slots[: len(slots) if slot is None else slot]:
        if m.uri in placed:
            hits += placed[m.uri].tokens
        for c in m.collapsed:
            if c.position and c.uri in placed:
                ext += placed[c.uri].tokens
    return {"hits": hits, "ext": ext}


def run_set(
    name: str,
    names: Sequence[str],
    cached: Any,
    counter: Any,
    saved: dict[str, Any],
    budgets: Sequence[int] = BUDGETS,
) -> list[dict[str, Any]]:
    nset = ns.load_natural_set(name, cached)
    out: list[dict[str, Any]] = []
    with bn.indexed_set(nset, cached) as ix:
        runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
        rows = {r.key: r for r in bn.ROWS}
        qs = bt.sampled_halves(nset.questions, None)[0]
        ix.embedder.prepare([q.text for q in qs])
        judge = bn.Judge()
        pages = nset.answers_are_pages
        for q in qs:
            answers = [a for a, _ in q.answers]
            rel = {f"a{i}": g for i, (_, g) in enumerate(q.answers)}
            rec: dict[str, Any] = {"set": name, "qid": q.qid, "n_answers": len(answers)}
            find10, _ = runner.results(rows["find"], q, 10)
            u_find = [judge.units(t, answers) for t in find10]
            rec["find_rank"] = first_rank(u_find)
            rec["find_ndcg"] = bt.ndcg_at(u_find, rel, 10)
            pools = {k: runner.results(rows[k], q, bn.PACK_POOL)[0] for k in FLAT}
            u_hyb = [judge.units(t, answers) for t in pools["flat-hybrid"]]
            rec["hyb_rank"] = first_rank(u_hyb)
            rec["hyb_ndcg"] = bt.ndcg_at(u_hyb[:10], rel, 10)
            for b in budgets:
                for k in FLAT:
                    pieces = bn.pack_pieces(pools[k], b, counter)
                    rec[f"{k}@{b}"] = bn.answer_in_context(
                        "\n\n".join(pieces), answers, judge, pieces, pages
                    )
                    if k == "flat-hybrid":
                        rec[f"hyb_pieces@{b}"] = len(pieces)
                found = cd.found_for(ix.th, q.text, b, ix.scope, counter)
                slots = found.contexts()
                rec[f"slot_rank@{b}"] = first_rank(
                    [judge.units(m.slot_text, answers) for m in slots]
                )
                rec[f"face_rank@{b}"] = first_rank([judge.units(m.content, answers) for m in slots])
                rec.update(lex_signals(slots, q.text, b))
                for v in names:
                    cd._apply(VARIANTS[v], saved)
                    try:
                        ctx = ca.assemble_context(
                            found, max_tokens=b, token_counter=counter, query=q.text
                        )
                    finally:
                        cd._apply({}, saved)
                    assert ctx.tokens <= b, v
                    pieces = bn.block_pieces(slots, ctx)
                    rec[f"{v}@{b}"] = bn.answer_in_context(ctx.text, answers, judge, pieces, pages)
                    if v != "base":
                        continue
                    rec[f"faces@{b}"] = sum(
                        1 for m in slots if m.uri in {s.uri for s in ctx.sections}
                    )
                    rec[f"layout@{b}"] = cd.layout_overhead(ctx.text, ctx.tokens, counter)
                    if rec[f"base@{b}"] < 1.0 and not pages:
                        held = judge.units(ctx.text, answers)
                        lost = [a for i, a in enumerate(answers) if f"a{i}" not in held]
                        d = cd.diagnose(found, ctx, lost, judge, counter, b)
                        rec[f"cause@{b}"] = d["cause"]
                        rec[f"lost_slot@{b}"] = d["slot"]
                        above = slot_tokens_above(found, ctx, d["slot"])
                        rec[f"above_hits@{b}"] = above["hits"]
                        rec[f"above_ext@{b}"] = above["ext"]
                        rec[f"room@{b}"] = b - ctx.tokens
                        top = slot_tokens_above(found, ctx, 1) if slots else {"hits": 0, "ext": 0}
                        rec[f"top_ext@{b}"] = top["ext"]
                        if d["slot"] is not None:
                            m = slots[d["slot"]]
                            rec[f"lost_hit_tokens@{b}"] = counter.count(m.content or m.abstract)
            out.append(rec)
    return out


# ---------------------------------------------------------------------------- report


def _paired(d: np.ndarray) -> str:
    if len(d) == 0:
        return "n/a"
    m, lo, hi = bn.mean_interval(d)
    return f"{m:+.4f} ({lo:+.4f}..{hi:+.4f}) {int((d > 0).sum())}/{int((d < 0).sum())}"


def _groups(recs: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The nine tuning sets, the untuned sets and both pooled (the keep rule's three pools)."""
    nine = set(ns.NATURAL_SETS)
    # doxygen-faq took part in round 13's screens: not untuned (bench/pool_untuned.py)
    untuned = set(ns.HELD_OUT_SETS) - {"doxygen-faq"}
    return {
        "nine": [r for r in recs if r["set"] in nine],
        "untuned": [r for r in recs if r["set"] in untuned],
        "pooled": [r for r in recs if r["set"] in nine | untuned],
    }


def budgets_of(recs: Sequence[dict[str, Any]]) -> list[int]:
    """The budgets every record was run at (``--budgets``)."""
    each = [{int(k.rsplit("@", 1)[1]) for k in r if k.startswith("base@")} for r in recs]
    return sorted(set.intersection(*each)) if each else []


def screen(recs: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[int, Any]]]:
    """Each variant minus base per budget, paired per question, per pool (the keep rule):
    ``{pool: {variant: {budget: (mean, lo, hi, won, lost, n)}}}``; printed with the sets
    where a variant moves at all."""
    budgets = budgets_of(recs)
    variants = sorted({k.rsplit("@", 1)[0] for r in recs for k in r} & set(VARIANTS) - {"base"})
    variants = [v for v in variants if all(f"{v}@{b}" in r for r in recs for b in budgets)]
    out: dict[str, dict[str, dict[int, Any]]] = {}
    for g, rs in _groups(recs).items():
        if not rs:
            continue
        n_sets = len({r["set"] for r in rs})
        print(f"\n### screen, {g}: {n_sets} sets, {len(rs)} questions")
        for b in budgets:
            row = {k: np.mean([r[f"{k}@{b}"] for r in rs]) for k in (*FLAT, "base", *variants)}
            print(f"ctx@{b}: " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()))
        out[g] = {}
        for v in variants:
            out[g][v] = {}
            cells = []
            for b in budgets:
                d = np.array([r[f"{v}@{b}"] - r[f"base@{b}"] for r in rs])
                m, lo, hi = bn.mean_interval(d)
                out[g][v][b] = (m, lo, hi, int((d > 0).sum()), int((d < 0).sum()), len(d))
                cells.append(f"@{b} {_paired(d)}")
            print(f"{v} - base: " + " | ".join(cells))
    for v in variants:
        for b in budgets:
            moved: dict[str, list[float]] = defaultdict(list)
            for r in recs:
                moved[r["set"]].append(r[f"{v}@{b}"] - r[f"base@{b}"])
            sets = {k: (sum(x > 0 for x in d), sum(x < 0 for x in d)) for k, d in moved.items()}
            sets = {k: wl for k, wl in sets.items() if wl != (0, 0)}
            print(
                f"{v} @{b}, sets that move (won/lost): "
                + ", ".join(f"{k} {w}/{lost}" for k, (w, lost) in sorted(sets.items()))
            )
    return out


def report(recs: Sequence[dict[str, Any]]) -> None:
    """The diagnosis (when every record has the 500 / 1,000 / 2,000 budgets), then the screen."""
    if set(BUDGETS) <= set(budgets_of(recs)):
        _diagnosis(recs)
    screen(recs)


def _diagnosis(recs: Sequence[dict[str, Any]]) -> None:
    nine = set(ns.NATURAL_SETS)
    # doxygen-faq took part in round 13's screens: not untuned (bench/pool_untuned.py)
    untuned = set(ns.HELD_OUT_SETS) - {"doxygen-faq"}
    groups = {
        "nine": [r for r in recs if r["set"] in nine],
        "untuned": [r for r in recs if r["set"] in untuned],
        "pooled": [r for r in recs if r["set"] in nine | untuned],
    }
    variants = sorted(
        {k.rsplit("@", 1)[0] for r in recs for k in r if k.endswith("@1000")}
        & (set(VARIANTS) | {"base"}),
        key=lambda v: (v != "base", v),
    )
    for grp, rs in groups.items():
        if not rs:
            continue
        n_sets = len({r["set"] for r in rs})
        print(f"\n### {grp}: {n_sets} sets, {len(rs)} questions")
        for b in BUDGETS:
            row = {k: np.mean([r[f"{k}@{b}"] for r in rs]) for k in (*FLAT, *variants)}
            print(f"ctx@{b}: " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()))
        fn = np.array([r["find_ndcg"] for r in rs])
        hn = np.array([r["hyb_ndcg"] for r in rs])
        print(f"nDCG@10 find {fn.mean():.4f} hybrid {hn.mean():.4f} diff {_paired(fn - hn)}")
        for b in BUDGETS:
            d = np.array([r[f"base@{b}"] - r[f"flat-hybrid@{b}"] for r in rs])
            print(f"find - hybrid ctx@{b}: {_paired(d)}")
        # where the nDCG lead sits: questions by the two blocks at 1,000
        print("\nat 1,000: nDCG lead (find - hybrid) by which blocks hold an answer")
        cells: dict[str, list[float]] = defaultdict(list)
        for r in rs:
            f_in, h_in = r["base@1000"] > 0, r["flat-hybrid@1000"] > 0
            key = {
                (True, True): "both",
                (True, False): "find only",
                (False, True): "hybrid only",
                (False, False): "neither",
            }[(f_in, h_in)]
            cells[key].append(r["find_ndcg"] - r["hyb_ndcg"])
        tot = sum(sum(v) for v in cells.values())
        for k in ("both", "find only", "hybrid only", "neither"):
            lead_k = cells.get(k, [])
            print(
                f"  {k:12s} n={len(lead_k):4d}  sum dnDCG {sum(lead_k):+7.2f} "
                f"({100 * sum(lead_k) / tot if tot else 0:5.1f} % of the lead)"
            )
        # the questions neither block answers: where find ranked the answer, and why its block
        # misses it (the nDCG@10 credit a 1,000-token block cannot turn into an answer)
        nei = [r for r in rs if r["base@1000"] == 0 and r["flat-hybrid@1000"] == 0]
        why: Counter[str] = Counter()
        lead: dict[str, float] = defaultdict(float)
        for r in nei:
            fr = r["find_rank"]
            k = "none in find's 10" if fr is None else ("rank 1-3" if fr <= 3 else "rank 4-10")
            k += f" / {r.get('cause@1000', '-')}"
            why[k] += 1
            lead[k] += r["find_ndcg"] - r["hyb_ndcg"]
        print("neither block @1000, by find's answer rank / cause: n, sum dnDCG")
        for k, n in why.most_common():
            print(f"  {k:45s} {n:4d} {lead[k]:+6.2f}")
        # nDCG@10 judged on find's slot texts (hit + extensions) vs on its faces (the hit chunk
        # alone, what a lower slot shows in the block): single-answer questions, first rank
        one = [r for r in rs if r["n_answers"] == 1]
        if one:

            def g(x: int | None) -> float:
                return 0.0 if x is None else 1.0 / float(np.log2(x + 1))

            st = np.mean([g(r["slot_rank@1000"]) for r in one])
            fa = np.mean([g(r["face_rank@1000"]) for r in one])
            hy = np.mean([g(r["hyb_rank"] if (r["hyb_rank"] or 99) <= 10 else None) for r in one])
            print(
                f"single-answer questions ({len(one)}): first-answer DCG of find's 10 slots "
                f"judged on slot text {st:.4f}, on the hit chunk alone {fa:.4f}; hybrid {hy:.4f}"
            )
        # the joint rank table
        print("\nfirst answer rank: find's ten results (rows) x flat hybrid's (columns), count")

        def bucket(x: int | None) -> str:
            if x is None:
                return "none"
            return str(x) if x <= 5 else ("6-10" if x <= 10 else ">10")

        cols = ["1", "2", "3", "4", "5", "6-10", ">10", "none"]
        tab: Counter[tuple[str, str]] = Counter(
            (bucket(r["find_rank"]), bucket(r["hyb_rank"])) for r in rs
        )
        print("| find \\ hybrid | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        for a in cols:
            print(f"| {a} | " + " | ".join(str(tab[(a, c)]) for c in cols) + " |")
        hp = [r["hyb_pieces@1000"] for r in rs]
        fc = [r["faces@1000"] for r in rs]
        print(f"hybrid pieces @1000 {np.mean(hp):.2f}; find's faces in its block {np.mean(fc):.2f}")
        for b in BUDGETS:
            hyb_in = [r for r in rs if r[f"flat-hybrid@{b}"] > 0]
            ranks = [r["hyb_rank"] for r in hyb_in if r["hyb_rank"]] or [0]
            print(
                f"@{b}: hybrid block holds an answer for {len(hyb_in)} of {len(rs)}; "
                f"of them find's block too {sum(r[f'base@{b}'] > 0 for r in hyb_in)}; "
                f"hybrid's first answer rank there: median {np.median(ranks):.0f}, "
                f"90th percentile {np.percentile(ranks, 90):.0f}"
            )
        # top-3 misses: why
        for b in BUDGETS:
            miss = [
                r
                for r in rs
                if r["find_rank"] is not None
                and r["find_rank"] <= 3
                and r[f"base@{b}"] < 1.0
                and f"cause@{b}" in r
            ]
            c = Counter(r[f"cause@{b}"] for r in miss)
            spent = [
                r
                for r in miss
                if r[f"cause@{b}"] == "slot-not-reached"
                and r.get(f"lost_hit_tokens@{b}") is not None
                and r[f"above_ext@{b}"] >= r[f"lost_hit_tokens@{b}"]
            ]
            zero = sum(1 for r in miss if r[f"base@{b}"] == 0)
            print(
                f"find ranks an answer top-3, block @{b} misses one ({len(miss)}; none held "
                f"{zero}): {dict(c)}; not reached where the extensions above took >= the "
                f"answer hit's tokens: {len(spent)}"
            )
        for v in variants:
            if v == "base":
                continue
            cells2 = []
            for b in BUDGETS:
                d = np.array([r[f"{v}@{b}"] - r[f"base@{b}"] for r in rs])
                cells2.append(f"@{b} {_paired(d)}")
            print(f"{v} - base: " + " | ".join(cells2))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", default="")
    ap.add_argument("--untuned", action="store_true", help="every HELD_OUT_SETS set")
    ap.add_argument("--nine", action="store_true", help="the nine tuning sets")
    ap.add_argument("--dev", action="store_true", required=False)
    ap.add_argument("--variants", default="base")
    ap.add_argument(
        "--budgets",
        default=",".join(map(str, BUDGETS)),
        help="token budgets (the diagnosis in --report needs 500,1000,2000)",
    )
    ap.add_argument("--json", type=Path)
    ap.add_argument("--report", nargs="*", type=Path)
    args = ap.parse_args()
    recs: list[dict[str, Any]] = []
    if args.report:
        recs = [r for p in args.report for r in json.loads(p.read_text())["records"]]
        report(recs)
        return
    if not args.dev:
        ap.error("only --dev halves are run here (test halves are held out)")
    sets = [s for s in args.sets.split(",") if s]
    if args.untuned:
        sets += list(ns.HELD_OUT_SETS)
    if args.nine:
        sets += list(ns.NATURAL_SETS)
    budgets = [int(b) for b in args.budgets.split(",") if b]
    names = args.variants.split(",")
    if names[0] != "base":
        names.insert(0, "base")
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    saved = {k: getattr(ca, k) for v in VARIANTS.values() for k in v}
    if args.json and args.json.exists():
        old = json.loads(args.json.read_text())
        recs = old["records"]
    done = {r["set"] for r in recs}
    for name in sets:
        if name in done:
            continue
        t0 = time.perf_counter()
        recs.extend(run_set(name, names, cached, counter, saved, budgets))
        print(f"{name}: {time.perf_counter() - t0:.0f} s", flush=True)
        if args.json:
            args.json.write_text(json.dumps({"argv": sys.argv[1:], "records": recs}))
    report(recs)


if __name__ == "__main__":
    main()
