"""Does a longer face cost find()'s block answers at a budget? Per set and per question, from
``bench_context_vs_hybrid.py --json`` files written without ``--losses-only`` (issue 33,
helper ctx61).

    python bench/ctx61_face_ratio.py F.json [G.json ...] [--budget 1000] [--sets a,b]

Per set: the ctx of find()'s block and of flat hybrid's packed block, the faces the block
placed against hybrid's pieces, the tokens a placed face's hit takes against a hybrid piece
(the same leaves: a hit *is* a chunk), the tokens of the placed faces' whole slot texts
(what ``find()`` alone shows, the "about twice as long" of stop 60), the top face's tokens,
the extensions' and layout's tokens. Then, over sets, Spearman's rank correlation of find
minus hybrid with each length ratio; and per question, find minus hybrid (paired bootstrap,
:func:`bench_natural.paired_interval`) split by the top face's share of the block and by
the ratio of the top slot's text to the corpus's own median hybrid piece.

Nothing here runs retrieval; it reads the accounting the other script wrote.
"""

from __future__ import annotations

import argparse
import json
import statistics as st
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

import bench_natural as bn


def _rank(xs: list[float]) -> np.ndarray:
    order = np.argsort(xs, kind="stable")
    r = np.empty(len(xs))
    r[order] = np.arange(len(xs))
    # average ranks over ties, so equal deltas do not get an order of their own
    vals = np.asarray(xs)
    for v in set(xs):
        idx = np.nonzero(vals == v)[0]
        r[idx] = r[idx].mean()
    return r


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman's rho (Pearson on average ranks); nan under three points."""
    if len(xs) < 3:
        return float("nan")
    a, b = _rank(xs), _rank(ys)
    if a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def per_set(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """One line per set at ``budget``: means per question (tokens per block or per face)."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["budget"] == budget:
            by[r["set"]].append(r)
    out = []
    for s, rs in by.items():
        n = len(rs)
        faces = [f for r in rs for f in r["faces"]]
        pieces = sum(r["hybrid_pieces"] for r in rs)
        piece_tok = sum(budget - r["hybrid_unused"] for r in rs) / max(1, pieces)
        hit_tok = st.mean(f["hit"] for f in faces) if faces else 0.0
        slot_tok = st.mean(f["slot_tokens"] for f in faces) if faces else 0.0
        out.append(
            {
                "set": s,
                "n": n,
                "find": sum(r["find"] for r in rs) / n,
                "hybrid": sum(r["hybrid"] for r in rs) / n,
                "faces": sum(r["n_faces"] for r in rs) / n,
                "pieces": pieces / n,
                "hit_tok": hit_tok,
                "piece_tok": piece_tok,
                "slot_tok": slot_tok,
                "top_tok": st.mean(r["faces"][0]["tokens"] if r["faces"] else 0 for r in rs),
                "ext_tok": sum(sum(f["ext"] for f in r["faces"]) for r in rs) / n,
                "layout": sum(r["layout"] for r in rs) / n,
            }
        )
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--sets", help="only these sets (comma-separated)")
    ap.add_argument(
        "--gates",
        type=Path,
        help="a bench_context_diag.py --per-question file with rows base and no-whole: the "
        "won / lost questions of 'no slot whole only where a length ratio >= t'",
    )
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for f in args.files:
        rows.extend(json.loads(f.read_text()))
    if args.sets:
        keep = set(args.sets.split(","))
        rows = [r for r in rows if r["set"] in keep]
    b = args.budget
    sets = per_set(rows, b)
    print(
        f"@{b}: set (n) | find / hybrid (diff) | faces / pieces | hit tok / piece tok | "
        "slot tok (ratio to piece) | top face tok | ext tok | layout"
    )
    for x in sets:
        print(
            f"  {x['set']} ({x['n']}) | {x['find']:.3f} / {x['hybrid']:.3f} "
            f"({x['find'] - x['hybrid']:+.3f}) | {x['faces']:.2f} / {x['pieces']:.2f} | "
            f"{x['hit_tok']:.0f} / {x['piece_tok']:.0f} | {x['slot_tok']:.0f} "
            f"({x['slot_tok'] / max(1.0, x['piece_tok']):.2f}) | {x['top_tok']:.0f} | "
            f"{x['ext_tok']:.0f} | {x['layout']:.0f}"
        )
    diff = [x["find"] - x["hybrid"] for x in sets]
    for name, metric in (
        ("slot tok / piece tok", lambda x: x["slot_tok"] / max(1.0, x["piece_tok"])),
        ("hit tok / piece tok", lambda x: x["hit_tok"] / max(1.0, x["piece_tok"])),
        ("pieces - faces", lambda x: x["pieces"] - x["faces"]),
        ("top face tok / budget", lambda x: x["top_tok"] / b),
        ("piece tok", lambda x: x["piece_tok"]),
    ):
        rho = spearman(diff, [metric(x) for x in sets])
        print(f"  spearman(find - hybrid, {name}) over {len(sets)} sets: {rho:+.3f}")
    # per question: the top face's share of the block, and the top slot's text against the
    # set's own median hybrid piece (the corpus's chunk length as the flat row packs it)
    piece_med = {x["set"]: x["piece_tok"] for x in sets}
    groups: dict[str, tuple[dict[str, float], dict[str, float]]] = {}

    def add(label: str, key: str, r: dict[str, Any]) -> None:
        f, h = groups.setdefault(label, ({}, {}))
        f[key], h[key] = float(r["find"]), float(r["hybrid"])

    for r in rows:
        if r["budget"] != b or not r["faces"]:
            continue
        key = f"{r['set']}\t{r['qid']}"
        top = r["faces"][0]
        share = top["tokens"] / b
        ratio = top["slot_tokens"] / max(1.0, piece_med[r["set"]])
        add("all", key, r)
        add(
            "top face < 1/4 of block"
            if share < 0.25
            else "top face 1/4-1/2 of block"
            if share < 0.5
            else "top face >= 1/2 of block",
            key,
            r,
        )
        add("top slot text < 2 pieces" if ratio < 2 else "top slot text >= 2 pieces", key, r)
        add("top face placed whole (ext > 0)" if top["ext"] > 0 else "top face hit only", key, r)
    order = [
        "all",
        "top face < 1/4 of block",
        "top face 1/4-1/2 of block",
        "top face >= 1/2 of block",
        "top face hit only",
        "top face placed whole (ext > 0)",
        "top slot text < 2 pieces",
        "top slot text >= 2 pieces",
    ]
    for label in [x for x in order if x in groups]:
        f, h = groups[label]
        pi = bn.paired_interval(f, h)
        assert pi is not None
        won = sum(f[k] > h[k] for k in f)
        lost = sum(f[k] < h[k] for k in f)
        print(
            f"  {label}: {len(f)} questions, find {sum(f.values()) / len(f):.3f} hybrid "
            f"{sum(h.values()) / len(h):.3f}, diff {pi[0]:+.4f} ({pi[1]:+.4f}..{pi[2]:+.4f}) "
            f"ahead {won} behind {lost}"
        )
    if args.gates:
        gates(rows, json.loads(args.gates.read_text()), b, {x["set"]: x["piece_tok"] for x in sets})


GATES: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("top slot text / the set's hybrid piece", (1.5, 2.0, 2.5, 3.0)),
    ("top hit / the set's hybrid piece", (0.8, 1.0, 1.2)),
    ("top extension / top hit", (0.5, 1.0, 1.5)),
    ("top extension / budget", (0.15, 0.2, 0.25)),
)
"""Length ratios a top-slot gate could read before packing, and the thresholds counted (a
diagnosis of whether any separates the questions ``no-whole`` wins from those it loses, not a
fitted rule)."""


def gates(
    rows: list[dict[str, Any]],
    per_q: list[dict[str, Any]],
    budget: int,
    piece_tok: dict[str, float],
) -> None:
    """Per gate and threshold, the questions ``no-whole`` (``WHOLE_SLOTS = 0``) wins and loses
    against ``base`` where the gate fires. Outside the gate the block is ``base``'s, so these
    counts are the gated rule's exact won / lost at ``budget``."""
    score: dict[str, dict[tuple[str, str], float]] = defaultdict(dict)
    for r in per_q:
        if r["budget"] == budget:
            score[r["row"]][(r["set"], r["qid"])] = float(r["score"])
    base, alt = score["base"], score["no-whole"]
    acc = {(r["set"], r["qid"]): r for r in rows if r["budget"] == budget}
    won = [k for k in base if k in acc and alt[k] > base[k]]
    lost = [k for k in base if k in acc and alt[k] < base[k]]
    net = sum(alt[k] - base[k] for k in base)
    print(f"@{budget} no-whole against base: won {len(won)}, lost {len(lost)}, net {net:+.1f}")

    def ratios(k: tuple[str, str]) -> list[float] | None:
        faces = acc[k]["faces"]
        if not faces or faces[0]["slot"] != 0:
            return None
        t = faces[0]
        piece = max(1.0, piece_tok[k[0]])
        ext = t["slot_tokens"] - t["hit"]
        return [t["slot_tokens"] / piece, t["hit"] / piece, ext / max(1, t["hit"]), ext / budget]

    for i, (name, ths) in enumerate(GATES):
        cells = []
        for th in ths:
            w = sum(1 for k in won if (x := ratios(k)) is not None and x[i] >= th)
            lo = sum(1 for k in lost if (x := ratios(k)) is not None and x[i] >= th)
            cells.append(f">= {th}: {w} / {lo}")
        print(f"  {name}: " + ", ".join(cells))


if __name__ == "__main__":
    main()
