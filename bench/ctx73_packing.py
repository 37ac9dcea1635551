"""Why find()'s 1,000-token block misses an answer its slots hold: one packing loss at a time
(issue 33, stop 71; dev halves only).

    python bench/ctx73_packing.py --qids SET:QID,... [--budget 1000] [--json out.json]
    python bench/ctx73_packing.py --pair RECORDS.json [...]   # ctx64_diag.py records

For each question (a dev-half question of an untuned or tuning set) it rebuilds the block
``bench_natural``'s ``find`` row judges (``Treehop.assemble_context(question, max_tokens=B)``,
its ``find()`` caught by ``bench_context_diag.found_for``) and prints, slot by slot, the hit
and the chunks its passage shows (``collapsed`` with a ``position``), each one's tokens and
whether it holds the answer (``bench_natural.Judge``), then the block's sections in the order
they were placed (whole or excerpt, tokens) and what was skipped. Its ``--json`` keeps the
same per question, for bench/README.md's per-loss table.

``--pair`` reads ``bench/ctx64_diag.py`` records of an excerpt rule on and off (``--variants
base,no-para`` run while ``EXCERPT_PARAGRAPHS`` was on, as quality73 ran it, or ``base,VARIANT``
with the rule off, the default: ``para``, or quality75's ``no-head``) and prints, per pool
(the nine, the untuned sets less doxygen-faq, both), each block's mean at 500 / 1,000 /
2,000 tokens and the paired differences (``bench_natural.mean_interval``, won / lost):
paragraphs on minus off, and each of the two against flat dense and flat hybrid. nDCG@10 is
the same for both by construction (the change is in the packing, not in ``find()``).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import ctx64_diag as c64  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
import treehop.context_assembly as ca  # noqa: E402


def tail(uri: str) -> str:
    return uri.rsplit("/", 1)[-1]


def one(th: Any, q: Any, scope: str, budget: int, counter: Any, judge: bn.Judge) -> dict[str, Any]:
    """The slots, the block and where the answer went for one question."""
    answers = [a for a, _ in q.answers]
    found = cd.found_for(th, q.text, budget, scope, counter)
    slots = found.contexts()
    ctx = ca.assemble_context(found, max_tokens=budget, token_counter=counter, query=q.text)
    held = judge.units(ctx.text, answers)
    rec: dict[str, Any] = {
        "qid": q.qid,
        "question": q.text,
        "held": sorted(held),
        "n_answers": len(answers),
        "answer_tokens": [counter.count(a) for a in answers],
        "block_tokens": ctx.tokens,
        "slots": [],
        "sections": [],
        "skipped": [[tail(u), r] for u, r in ctx.skipped],
    }
    for i, m in enumerate(slots):
        parts = [(0, m.uri, m.content or m.abstract)]
        parts += [(c.position, c.uri, c.content or c.abstract) for c in m.collapsed if c.position]
        parts.sort(key=lambda p: p[0])
        rec["slots"].append(
            {
                "slot": i,
                "uri": tail(m.uri),
                "score": round(float(m.score), 4),
                "own": None if m.own_score is None else round(float(m.own_score), 4),
                "slot_tokens": counter.count(m.slot_text),
                "slot_holds": sorted(judge.units(m.slot_text, answers)),
                "parts": [
                    [p, tail(u), counter.count(t), sorted(judge.units(t, answers))]
                    for p, u, t in parts
                ],
                "other": [
                    [tail(c.uri), sorted(judge.units(c.content, answers))]
                    for c in m.collapsed
                    if not c.position and c.content
                ],
            }
        )
    for s in ctx.sections:
        rec["sections"].append([tail(s.uri), s.tokens, bool(s.excerpt)])
    return rec


def show(rec: dict[str, Any]) -> None:
    print(f"\n=== {rec['qid']}: {rec['question'][:110]!r}")
    print(
        f"  block {rec['block_tokens']} tokens, holds {rec['held']} of {rec['n_answers']};"
        f" answer tokens {rec['answer_tokens']}"
    )
    for s in rec["slots"]:
        mark = " <== answer" if s["slot_holds"] else ""
        print(
            f"  slot {s['slot']} {s['uri']} score {s['score']} own {s['own']}"
            f" slot_tokens {s['slot_tokens']}{mark}"
        )
        for p, u, n, h in s["parts"]:
            print(f"      {p:+d} {u} {n} tok{' ANSWER ' + str(h) if h else ''}")
        for u, h in s["other"]:
            if h:
                print(f"      (collapsed, not shown) {u} ANSWER {h}")
    print("  placed:", ", ".join(f"{u}:{n}{'x' if e else ''}" for u, n, e in rec["sections"]))
    print("  skipped:", ", ".join(f"{u}:{r}" for u, r in rec["skipped"]))


def pair(recs: list[dict[str, Any]], budgets: tuple[int, ...] = (500, 1000, 2000)) -> None:
    """The per-pool table of ``--pair`` (see the module docstring)."""
    on, off = ("base", "no-para")
    if not any("no-para@1000" in r for r in recs):  # the rule screened is the other variant
        ran = sorted({k.rsplit("@", 1)[0] for r in recs for k in r} & set(c64.VARIANTS) - {"base"})
        on, off = (ran[0] if ran else "para"), "base"
    pairs = [(on, off), *((a, z) for z in ("flat-dense", "flat-hybrid") for a in (on, off))]
    print(f"rule on: {on!r}, off: {off!r}")
    for g, rs in c64._groups(recs).items():
        if not rs:
            continue
        print(f"\n### {g}: {len({r['set'] for r in rs})} sets, {len(rs)} questions")
        for b in budgets:
            means = "  ".join(
                f"{k} {sum(r[f'{k}@{b}'] for r in rs) / len(rs):.4f}"
                for k in (on, off, "flat-dense", "flat-hybrid")
            )
            print(f"ctx@{b}: {means}")
            for a, z in pairs:
                d = np.array([r[f"{a}@{b}"] - r[f"{z}@{b}"] for r in rs])
                print(f"   {a} - {z} @{b}: {c64._paired(d)}")
        nd = np.array([r["find_ndcg"] - r["hyb_ndcg"] for r in rs])
        print(
            f"nDCG@10 find {np.mean([r['find_ndcg'] for r in rs]):.4f} - flat hybrid: "
            f"{c64._paired(nd)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--qids", default="", help="comma-separated SET:QID (dev halves only)")
    ap.add_argument("--pair", type=Path, nargs="*", default=[])
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.pair:
        seen: dict[str, dict[str, Any]] = {}
        for p in args.pair:
            for r in json.loads(p.read_text())["records"]:
                seen.setdefault(r["qid"], r)  # one record per question (overlapping runs)
        pair(list(seen.values()))
        return
    want: dict[str, set[str]] = defaultdict(set)
    for item in args.qids.split(","):
        name = item.split(":", 1)[0]
        want[name].add(item)
    cached = ds.default_embedder()
    counter = bn.CachedCounter(ca.default_token_counter())
    judge = bn.Judge()
    out: list[dict[str, Any]] = []
    for name, qids in sorted(want.items()):
        nset = ns.load_natural_set(name, cached)
        dev = bt.sampled_halves(nset.questions, None)[0]  # the dev half only
        qs = [q for q in dev if q.qid in qids]
        missing = qids - {q.qid for q in qs}
        if missing:
            sys.exit(f"not dev-half questions: {sorted(missing)}")
        with bn.indexed_set(nset, cached) as ix:
            ix.embedder.prepare([q.text for q in qs])
            for q in qs:
                rec = one(ix.th, q, ix.scope, args.budget, counter, judge)
                rec["set"] = name
                show(rec)
                out.append(rec)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
