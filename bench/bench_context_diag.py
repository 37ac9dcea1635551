"""Why ``assemble_context`` misses an answer a flat row has, question by question (issue 33).

    python bench/bench_context_diag.py --dev --sets django-faq,lsof-faq --dump out.json
    python bench/bench_context_diag.py --dev --variants base,VARIANT   # layout variants
    python bench/bench_context_diag.py --dev --against question_chunk_window=False

For every question of a set's half it runs ``find()`` once per budget exactly as
``Treehop.assemble_context(question, max_tokens=B)`` does (``limit=context_limit(B)``,
``context_tokens=B``), then replays that result through
:func:`treehop.context_assembly.assemble_context` under each variant (module constants of
``treehop.context_assembly``; the ranking is the same for all), beside flat dense's, flat
hybrid's and LangChain's top chunks packed into the same budget (``bench_natural.py``'s
packing and judge). For each question a flat row answers inside B tokens and the block does
not, it says why: the answer in none of find's slots (ranking), its slot reached but its text
cut (an excerpt) or left out, the slot never reached (budget spent above it, with the tokens
each slot above took), and the budget left unused.

``--against KEY=VALUE,...`` instead compares, question by question, the block of ``find()``
defaults with the block of ``find()`` under those ``RetrievalConfig`` values (a ranking
change, e.g. ``question_chunk_window=False``), each at every budget, and says for each
question one of them answers better why (:func:`ab_cause`): the answer's slot ranked lower
(same face, the budget spent above it), its slot's text changed (extent), or its face not
a slot at all (issue 33, round 9: "context after the ranking").
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import ast  # noqa: E402
import json  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.client as client_mod  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402
from treehop import Treehop  # noqa: E402

BUDGETS = (500, 1000, 2000)
VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    "cpbt1.5": {"CHARS_PER_BLOCK_TOKEN": 1.5},
    "cpbt2.5": {"CHARS_PER_BLOCK_TOKEN": 2.5},
    "excerpts-last": {"EXCERPTS_LAST": True},
    "minex32": {"MIN_EXCERPT_TOKENS": 32},
    "minex96": {"MIN_EXCERPT_TOKENS": 96},
    "two-whole": {"WHOLE_SLOTS": 2},
    "no-whole": {"WHOLE_SLOTS": 0},
    "headings-each": {"HEADINGS_ONCE": False},
    "excerpt-edge": {"EXCERPT_AT": "edge"},
    "excerpt-last": {"EXCERPT_TIES": "last"},
    "root-line": {"ROOT_LINE": True},
    "extensions": {"HEADER_EXTENSIONS": True},
    "round8-headers": {"ROOT_LINE": True, "HEADER_EXTENSIONS": True},
    "no-headers": {"RESOURCE_HEADERS": "none"},
    "duplicates-in-rank": {"DUPLICATE_SHARE": None},
    "duplicates-0.7": {"DUPLICATE_SHARE": 0.7},
    "extension-final": {"EXTENSION_SCORE": "final"},
    "extension-own-both": {"EXTENSION_SCORE": "own-both"},
    "extension-own": {"EXTENSION_SCORE": "own"},
    "whole-on-own": {"WHOLE_ON_OWN": True},
    "whole-always": {"WHOLE_ON_OWN": False},
    "top-half-gate": {"_whole_slots": "top-half-gate"},
    "after-hits": {"EXTENSION_ORDER": "after-hits"},
}
REFIND = frozenset({"CHARS_PER_BLOCK_TOKEN", "SLOT_TOKENS"})
"""Constants that change the ``find()`` call itself (its slots), not only the packing."""
"""Module constants of :mod:`treehop.context_assembly` per variant (``base``: the defaults)."""


_WHOLE_SLOTS_OF_MAIN = ca._whole_slots


def _top_half_gate(ranked: Any, max_tokens: int, counter: Any) -> int:
    """``top-half-gate`` (helper ctx58, screened, not in the library): the top document slot
    goes whole only when its text fits in half the block; else its extensions bid by score
    as a lower slot's do (``WHOLE_SLOTS = 0`` for that block)."""
    n = _WHOLE_SLOTS_OF_MAIN(ranked, max_tokens, counter)
    top = ranked[0] if ranked else None
    if n >= 1 and top is not None and top.collapsed and not ca._is_turn(top):
        return 0 if counter.count(top.slot_text) > max_tokens / 2 else n
    return n


PATCHES = {"top-half-gate": _top_half_gate}
"""Variants that replace a library function (a rule screened here, not in the library)."""


def _apply(variant: dict[str, Any], saved: dict[str, Any]) -> None:
    for k, v in saved.items():
        setattr(ca, k, v)
    for k, v in variant.items():
        setattr(ca, k, PATCHES.get(v, v) if isinstance(v, str) and k.startswith("_") else v)


def diagnose(
    found: Any,
    ctx: Any,
    answers: list[str],
    judge: bn.Judge,
    counter: Any,
    budget: int,
) -> dict[str, Any]:
    """Where the answer was in ``found`` and what the block did with it."""
    slots = found.contexts()
    slot_of = None
    in_collapsed = None
    for i, m in enumerate(slots):
        if judge.units(m.slot_text, answers):
            slot_of = i
            break
    if slot_of is None:
        for i, m in enumerate(slots):
            if any(judge.units(c.content, answers) for c in m.collapsed if c.content):
                in_collapsed = i
                break
    placed = {s.uri: s for s in ctx.sections}
    skipped = dict(ctx.skipped)
    per_slot = []
    for i, m in enumerate(slots[: (slot_of or 0) + 1]):
        uris = [m.uri, *(c.uri for c in m.collapsed if c.position)]
        per_slot.append(
            {
                "slot": i,
                "uri": m.uri.rsplit("/", 1)[-1],
                "score": round(float(m.score), 3),
                "placed_tokens": sum(placed[u].tokens for u in uris if u in placed),
                "placed": [u.rsplit("/", 1)[-1] for u in uris if u in placed],
                "excerpt": [
                    u.rsplit("/", 1)[-1] for u in uris if u in placed and placed[u].excerpt
                ],
                "skipped": {u.rsplit("/", 1)[-1]: skipped[u] for u in uris if u in skipped},
                "slot_tokens": counter.count(m.slot_text),
            }
        )
    if slot_of is None:
        cause = "collapsed" if in_collapsed is not None else "not-in-slots"
    else:
        m = slots[slot_of]
        uris = [m.uri, *(c.uri for c in m.collapsed if c.position)]
        ans_uris = [
            u
            for u, t in [
                (m.uri, m.content),
                *((c.uri, c.content) for c in m.collapsed if c.position),
            ]
            if judge.units(t, answers)
        ]
        if not any(u in placed for u in uris):
            cause = "slot-not-reached"
        elif ans_uris and all(u in placed for u in ans_uris):
            cause = (
                "placed-excerpt" if any(placed[u].excerpt for u in ans_uris) else "placed-judged-no"
            )
        elif ans_uris:
            cause = "answer-chunk-left-out"
        else:
            cause = "answer-spans-chunks-cut"
    return {
        "cause": cause,
        "slot": slot_of,
        "collapsed_slot": in_collapsed,
        "unused": budget - ctx.tokens,
        "above": per_slot,
        "n_slots": len(slots),
    }


def answer_slot(slots: Any, answers: list[str], judge: bn.Judge) -> int | None:
    """The first of ``slots`` (``MatchedContext``) whose delivered text holds an answer."""
    for i, m in enumerate(slots):
        if judge.units(m.slot_text, answers):
            return i
    return None


def ab_cause(
    worse_faces: list[str], worse_at: int | None, better_faces: list[str], better_at: int | None
) -> str:
    """Why the block built on one ranking (``worse``) missed what the other's held, from the
    two slot lists' faces (URIs, best first) and each one's answer slot
    (:func:`answer_slot`; ``None``: no slot's text holds an answer):

    - ``no answer slot``: the better ranking has a slot holding the answer, this one none;
    - ``moved down``: the same face holds it in both, ranked lower here (the budget was
      spent on the slots above it);
    - ``same rank, packed differently``: the same face at the same or a better rank (what
      the slots above it carry, their extensions or excerpts, differs);
    - ``extent``: the better ranking's answer face is a face here too, but its slot's text
      here lacks the answer (the slot grew over other chunks);
    - ``other face``: the answer's face is no face here, though some slot holds an answer;
    - ``partial``: neither slot list holds an answer whole (graded sets: another relevant
      document's share)."""
    if better_at is None:
        return "partial"
    if worse_at is None:
        face = better_faces[better_at]
        return "extent" if face in worse_faces else "no answer slot"
    face = better_faces[better_at]
    if face not in worse_faces:
        return "other face"
    k = worse_faces.index(face)
    if k != worse_at:
        return "extent"
    return "moved down" if worse_at > better_at else "same rank, packed differently"


def _config_values(spec: str) -> dict[str, Any]:
    """``KEY=VALUE,...`` as ``RetrievalConfig`` overrides (a value read as a Python literal,
    ``False`` or ``0.0``; else kept as text)."""
    out: dict[str, Any] = {}
    for part in filter(None, spec.split(",")):
        key, _, raw = part.partition("=")
        try:
            out[key.strip()] = ast.literal_eval(raw.strip())
        except (ValueError, SyntaxError):
            out[key.strip()] = raw.strip()
    return out


def against(args: argparse.Namespace) -> None:
    """``--against``: ctx per question, defaults vs ``args.against``, and each difference's
    :func:`ab_cause` (counts per budget; every question with ``--dump``)."""
    other = _config_values(args.against)
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    rows: list[dict[str, Any]] = []
    tot: dict[str, dict[int, list[float]]] = {"defaults": {}, "against": {}}
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            th, scope = ix.th, ix.scope
            qs = bt.sampled_halves(nset.questions, None)[0 if args.dev else 1]
            ix.embedder.prepare([q.text for q in qs])
            cfg = th.config
            saved = {k: getattr(cfg, k) for k in other}
            per: dict[str, dict[int, list[float]]] = {"defaults": {}, "against": {}}
            for q in qs:
                answers = [a for a, _ in q.answers]
                for b in BUDGETS:
                    got: dict[str, tuple[float, list[str], int | None]] = {}
                    for label, values in (("defaults", saved), ("against", other)):
                        for k, v in values.items():
                            setattr(cfg, k, v)
                        try:
                            f = found_for(th, q.text, b, scope, counter)
                        finally:
                            for k, v in saved.items():
                                setattr(cfg, k, v)
                        ctx = ca.assemble_context(
                            f, max_tokens=b, token_counter=counter, query=q.text
                        )
                        sc = bn.answer_in_context(
                            ctx.text,
                            answers,
                            judge,
                            bn.block_pieces(f.contexts(), ctx),
                            nset.answers_are_pages,
                        )
                        slots = f.contexts()
                        got[label] = (
                            sc,
                            [m.uri for m in slots],
                            answer_slot(slots, answers, judge),
                        )
                        per[label].setdefault(b, []).append(sc)
                        tot[label].setdefault(b, []).append(sc)
                    (sd, fd, ad), (so, fo, ao) = got["defaults"], got["against"]
                    if sd != so:
                        lost = sd < so
                        cause = ab_cause(fd, ad, fo, ao) if lost else ab_cause(fo, ao, fd, ad)
                        rows.append(
                            {
                                "set": name,
                                "budget": b,
                                "qid": q.qid,
                                "q": q.text,
                                "defaults": sd,
                                "against": so,
                                "lost_by_defaults": lost,
                                "cause": cause,
                                "answer_slot": [ad, ao],
                            }
                        )
            cells = " | ".join(
                "/".join(f"{sum(per[r][b]) / max(1, len(qs)):.3f}" for b in BUDGETS)
                for r in ("defaults", "against")
            )
            print(f"| {name} | {len(qs)} | {cells} |", flush=True)
    cells = " | ".join(
        "/".join(f"{sum(v) / max(1, len(v)):.4f}" for v in tot[r].values())
        for r in ("defaults", "against")
    )
    print(f"| pooled | {len(tot['defaults'][BUDGETS[0]])} | {cells} |")
    for b in BUDGETS:
        for lost in (True, False):
            c = Counter(
                r["cause"] for r in rows if r["budget"] == b and r["lost_by_defaults"] is lost
            )
            word = "defaults lose" if lost else "defaults gain"
            print(f"@{b} {word} {sum(c.values())}: {dict(c)}")
    if args.dump:
        args.dump.write_text(json.dumps(rows, indent=1) + "\n")


def layout_overhead(text: str, tokens: int, counter: Any) -> int:
    """Tokens of a block that are layout, not retrieved text: its group headers (``[name]``,
    the root line ``(under ...)``) and each line's ``- `` (round 9: on Cranfield, seven
    one-abstract documents a 1,000-token block, 9 % of it), as the block's count minus the
    count of the same lines without them."""
    bare = [
        line[2:] if line.startswith("- ") else line
        for line in text.splitlines()
        if not (line.startswith("[") or line.startswith("(under "))
    ]
    return tokens - counter.count("\n".join(bare)) if text else 0


def found_for(th: Treehop, query: str, budget: int, scope: str, counter: Any) -> Any:
    """The ``FindResult`` ``Treehop.assemble_context(query, max_tokens=budget)`` builds its
    block from (caught on its way into :func:`treehop.context_assembly.assemble_context`)."""
    caught: list[Any] = []
    inner = client_mod.assemble_context

    def catch(hits: Any, **kw: Any) -> Any:
        caught.append(hits)
        return inner(hits, **kw)

    client_mod.assemble_context = catch  # type: ignore[assignment]
    try:
        th.assemble_context(query, max_tokens=budget, target_uri=scope, token_counter=counter)
    finally:
        client_mod.assemble_context = inner  # type: ignore[assignment]
    return caught[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    half = ap.add_mutually_exclusive_group(required=True)
    half.add_argument("--dev", action="store_true")
    half.add_argument("--test", action="store_true")
    ap.add_argument("--variants", default="base")
    ap.add_argument("--dump", type=Path, help="per-question losses (base variant) as JSON")
    ap.add_argument("--no-langchain", action="store_true")
    ap.add_argument(
        "--per-question",
        type=Path,
        help="every variant's (and flat row's) answer score per question and budget, as JSON",
    )
    ap.add_argument(
        "--against",
        help="KEY=VALUE,... RetrievalConfig overrides: ctx per question, defaults vs these",
    )
    args = ap.parse_args()
    if args.against:
        against(args)
        return
    names = args.variants.split(",")
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    saved = {k: getattr(ca, k) for k in {k for v in VARIANTS.values() for k in v}}
    losses: list[dict[str, Any]] = []
    per_q: list[dict[str, Any]] = []
    over: dict[tuple[str, int], list[tuple[int, int]]] = {}
    pooled: dict[str, dict[int, list[float]]] = {}
    print(f"| set | half | n | row | {' | '.join(f'ctx@{b}' for b in BUDGETS)} |")
    print(f"|---|---|---|---|{'---|' * len(BUDGETS)}")
    try:
        for name in args.sets.split(","):
            nset = ns.load_natural_set(name, cached)
            with bn.indexed_set(nset, cached) as ix:
                th, flat, emb, scope = ix.th, ix.flat, ix.embedder, ix.scope
                lc = None if args.no_langchain else bn.LangChainRow(nset.files, cached)
                qs = bt.sampled_halves(nset.questions, None)[0 if args.dev else 1]
                emb.prepare([q.text for q in qs])
                flat_rows = ["flat dense", "flat hybrid"] + ([] if lc is None else ["langchain"])
                rows = [*flat_rows, *names]
                got: dict[str, dict[int, list[float]]] = {r: {b: [] for b in BUDGETS} for r in rows}
                pages = nset.answers_are_pages
                for q in qs:
                    answers = [a for a, _ in q.answers]
                    vec = emb.queries[q.text]
                    ranked = {
                        "flat dense": flat.dense(vec, 100),
                        "flat hybrid": flat.hybrid(
                            vec, q.text, 100, bt.DEFAULT_DENSE_WEIGHT, scope
                        ),
                    }
                    if lc is not None:
                        ranked["langchain"] = lc.run(vec, 100)
                    flat_hit: dict[int, dict[str, frozenset[str]]] = {b: {} for b in BUDGETS}
                    for b in BUDGETS:
                        for row in flat_rows:
                            pieces = bn.pack_pieces(ranked[row], b, counter)
                            v = bn.answer_in_context(
                                "\n\n".join(pieces), answers, judge, pieces, pages
                            )
                            got[row][b].append(v)
                            per_q.append(
                                {"set": name, "qid": q.qid, "row": row, "budget": b, "score": v}
                            )
                            flat_hit[b][row] = judge.units("\n\n".join(pieces), answers)
                    founds = {b: found_for(th, q.text, b, scope, counter) for b in BUDGETS}
                    for v in names:
                        _apply(VARIANTS[v], saved)
                        refind = bool(REFIND & set(VARIANTS[v]))
                        for b in BUDGETS:
                            f = found_for(th, q.text, b, scope, counter) if refind else founds[b]
                            ctx = ca.assemble_context(
                                f, max_tokens=b, token_counter=counter, query=q.text
                            )
                            assert ctx.tokens <= b and counter.count(ctx.text) <= b, v
                            pieces = bn.block_pieces(f.contexts(), ctx)
                            s = bn.answer_in_context(ctx.text, answers, judge, pieces, pages)
                            got[v][b].append(s)
                            per_q.append(
                                {"set": name, "qid": q.qid, "row": v, "budget": b, "score": s}
                            )
                            if v == names[0]:
                                over.setdefault((name, b), []).append(
                                    (layout_overhead(ctx.text, ctx.tokens, counter), ctx.tokens)
                                )
                            ours = judge.units(ctx.text, answers)
                            missing = frozenset().union(*flat_hit[b].values()) - ours
                            if v == names[0] and missing and not pages:
                                lost = [answers[int(a[1:])] for a in sorted(missing)]
                                d = diagnose(f, ctx, lost, judge, counter, b)
                                rows_with = [r for r, u in flat_hit[b].items() if u & missing]
                                losses.append(
                                    {
                                        "set": name,
                                        "budget": b,
                                        "qid": q.qid,
                                        "q": q.text,
                                        "flat": rows_with,
                                        "score": s,
                                        **d,
                                    }
                                )
                    _apply({}, saved)
            for r in rows:
                cells = " | ".join(f"{sum(got[r][b]) / max(1, len(qs)):.3f}" for b in BUDGETS)
                print(
                    f"| {name} | {'dev' if args.dev else 'test'} | {len(qs)} | {r} | {cells} |",
                    flush=True,
                )
                for b in BUDGETS:
                    pooled.setdefault(r, {}).setdefault(b, []).extend(got[r][b])
    finally:
        _apply({}, saved)
    for r, by_b in pooled.items():
        cells = " | ".join(f"{sum(v) / max(1, len(v)):.3f}" for v in by_b.values())
        print(f"| pooled | | {len(by_b[BUDGETS[0]])} | {r} | {cells} |")
    print(f"layout overhead of {names[0]}'s blocks (headers, root line, line marks):")
    for (name, b), v in over.items():
        lay, used = sum(x for x, _ in v), sum(y for _, y in v)
        print(f"  {name} @{b}: {lay / len(v):.1f} tokens a block, {100 * lay / max(1, used):.1f} %")
    for b in BUDGETS:
        c = Counter(x["cause"] for x in losses if x["budget"] == b)
        print(f"losses at {b}: {dict(c)}")
    if args.dump:
        args.dump.write_text(json.dumps(losses, indent=1) + "\n")
    if args.per_question:
        args.per_question.write_text(json.dumps(per_q) + "\n")


if __name__ == "__main__":
    main()
