"""Where find() loses to flat hybrid on the dev halves of the sets that trail it on the test
halves: each losing question's stage, ranking or packing (issue 33, stop 72; dev halves only).

    python bench/ctx64_diag.py --dev --sets SETS --variants base --json five.json
    python bench/ctx76_trailing.py --records five.json --json losses.json

A question *loses* when find's score is below flat hybrid's on nDCG@10 or on the answer at
500 / 1,000 / 2,000 tokens (``ctx64_diag`` records, the same run's flat hybrid). For each one
this reruns the question on its set's dev half and records the first answer rank (1-based,
``None``: not in the list) of ``find()`` (50 results), ``find()`` with ``dense_weight`` 1
(``find-dense``), flat dense, flat BM25 and flat hybrid (100 each), the query's shape
(``bench_natural.query_shape_of``) and each losing budget's stage:

- ``ranking``: the answer's chunk is in none of the block's ``find()`` slots, or is in a slot
  the block did not reach (``ctx64_diag`` causes ``not-in-slots``, ``slot-not-reached``), or
  ``find()``'s list ranks it lower (an nDCG@10 loss);
- ``collapsed``: its chunk is behind another chunk of its document in one slot, not shown;
- ``packing``: the slot was reached and the block cut or left out the answer (an excerpt,
  a chunk left out, less than half placed).

Test halves are never loaded: ``bench_tree.sampled_halves(...)[0]`` is the dev half, and a
question id outside it stops the run.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np  # noqa: E402

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import ctx64_diag as c64  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

BUDGETS = (500, 1000, 2000)
STAGE = {
    "not-in-slots": "ranking",
    "slot-not-reached": "ranking",
    "collapsed": "collapsed",
}
"""``ctx64_diag`` causes by stage; every other cause (an excerpt, a chunk left out, less than
half placed) is packing."""


def losing(rec: dict[str, Any]) -> list[str]:
    """The measures on which find's record is below flat hybrid's (``ndcg``, ``ctx@B``)."""
    out = ["ndcg"] if rec["find_ndcg"] < rec["hyb_ndcg"] else []
    out += [f"ctx@{b}" for b in BUDGETS if rec[f"base@{b}"] < rec[f"flat-hybrid@{b}"]]
    return out


def stage_of(rec: dict[str, Any], measure: str) -> str:
    """The stage a losing measure is lost at (see the module docstring)."""
    if measure == "ndcg":
        return "ranking"
    cause = rec.get(f"cause@{measure.split('@')[1]}")
    if cause is None:
        return "no cause recorded"
    return STAGE.get(cause, "packing")


def table(losses: Sequence[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Losing measures by stage: ``{measure: Counter(stage)}``."""
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for r in losses:
        for m, st in r["stages"].items():
            out[m][st] += 1
    return dict(out)


def ranks(qids: dict[str, set[str]]) -> dict[str, dict[str, Any]]:
    """The first answer rank of each row, and the shape, for the dev-half questions named."""
    cached = ds.default_embedder()
    judge = bn.Judge()
    rows = {r.key: r for r in bn.ROWS}
    limits = {"find": 50, "find-dense": 50, "flat-dense": 100, "flat-bm25": 100}
    limits["flat-hybrid"] = 100
    out: dict[str, dict[str, Any]] = {}
    for name, want in sorted(qids.items()):
        nset = ns.load_natural_set(name, cached)
        dev = bt.sampled_halves(nset.questions, None)[0]  # the dev half only
        qs = [q for q in dev if q.qid in want]
        if want - {q.qid for q in qs}:
            sys.exit(f"not dev-half questions: {sorted(want - {q.qid for q in qs})}")
        with bn.indexed_set(nset, cached) as ix:
            runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
            ix.embedder.prepare([q.text for q in qs])
            for q in qs:
                answers = [a for a, _ in q.answers]
                rec: dict[str, Any] = {"question": q.text, "shape": bn.query_shape_of(q.text)}
                for key, limit in limits.items():
                    texts, _ = runner.results(rows[key], q, limit)
                    rec[key] = c64.first_rank([judge.units(t, answers) for t in texts])
                out[q.qid] = rec
    return out


def limit_probe(name: str, deep: int = 50) -> list[dict[str, Any]]:
    """Per dev-half question of ``name``: nDCG@10 and the first answer rank of ``find(limit=10)``
    (the list nDCG@10 is scored on) and of the first ten of ``find(limit=deep)``: whether
    ``find()``'s top ten depend on the limit asked (the descent's stop rule and the
    few-documents rule read the limit)."""
    cached = ds.default_embedder()
    judge = bn.Judge()
    nset = ns.load_natural_set(name, cached)
    dev = bt.sampled_halves(nset.questions, None)[0]  # the dev half only
    out: list[dict[str, Any]] = []
    with bn.indexed_set(nset, cached) as ix:
        ix.embedder.prepare([q.text for q in dev])
        for q in dev:
            answers = [a for a, _ in q.answers]
            rel = {f"a{i}": g for i, (_, g) in enumerate(q.answers)}
            rec: dict[str, Any] = {"set": name, "qid": q.qid, "shape": bn.query_shape_of(q.text)}
            for lim in (10, deep):
                res = ix.th.find(q.text, target_uri=ix.scope, limit=lim)
                units = [judge.units(bn.delivered(m), answers) for m in res.contexts()[:10]]
                rec[f"rank@{lim}"] = c64.first_rank(units)
                rec[f"ndcg@{lim}"] = bt.ndcg_at(units, rel, 10)
            out.append(rec)
    return out


def screen_set(name: str, option: str, budgets: Sequence[int]) -> list[dict[str, Any]]:
    """Per dev-half question of ``name``: nDCG@10 of ``find(limit=10)`` and the answer in the
    block ``assemble_context`` builds at each budget, with the ``RetrievalConfig`` bool
    ``option`` off (``off``) and on (``on``), and flat hybrid's packed block in the same run
    (``flat-hybrid@B``), judged as ``bench_natural`` judges them."""
    import bench_context_diag as cd
    import treehop.context_assembly as ca

    cached = ds.default_embedder()
    judge = bn.Judge()
    counter = bn.CachedCounter(ca.default_token_counter())
    nset = ns.load_natural_set(name, cached)
    dev = bt.sampled_halves(nset.questions, None)[0]  # the dev half only
    hybrid = next(r for r in bn.ROWS if r.key == "flat-hybrid")
    out: list[dict[str, Any]] = []
    with bn.indexed_set(nset, cached) as ix:
        runner = bn.Runner(ix.th, ix.embedder, ix.flat, ix.scope)
        ix.embedder.prepare([q.text for q in dev])
        cfg = ix.th.config
        for q in dev:
            answers = [a for a, _ in q.answers]
            rel = {f"a{i}": g for i, (_, g) in enumerate(q.answers)}
            rec: dict[str, Any] = {"set": name, "qid": q.qid}
            pool, _ = runner.results(hybrid, q, bn.PACK_POOL)
            for b in budgets:
                pieces = bn.pack_pieces(pool, b, counter)
                rec[f"flat-hybrid@{b}"] = bn.answer_in_context(
                    "\n\n".join(pieces), answers, judge, pieces, nset.answers_are_pages
                )
            rec["hyb_ndcg"] = bt.ndcg_at([judge.units(t, answers) for t in pool[:10]], rel, 10)
            for arm, on in (("off", False), ("on", True)):
                setattr(cfg, option, on)
                try:
                    res = ix.th.find(q.text, target_uri=ix.scope, limit=10)
                    units = [judge.units(bn.delivered(m), answers) for m in res.contexts()]
                    rec[f"{arm}_ndcg"] = bt.ndcg_at(units, rel, 10)
                    for b in budgets:
                        found = cd.found_for(ix.th, q.text, b, ix.scope, counter)
                        ctx = ca.assemble_context(
                            found, max_tokens=b, token_counter=counter, query=q.text
                        )
                        pieces = bn.block_pieces(found.contexts(), ctx)
                        rec[f"{arm}@{b}"] = bn.answer_in_context(
                            ctx.text, answers, judge, pieces, nset.answers_are_pages
                        )
                finally:
                    setattr(cfg, option, False)
            out.append(rec)
    return out


def screen_report(recs: Sequence[dict[str, Any]]) -> None:
    """On minus off and on minus flat hybrid, per pool (the nine, the untuned sets less
    doxygen-faq, both), paired per question (``bench_natural.mean_interval``), won / lost;
    and the nine's sets that lose a block at 1,000 tokens."""
    budgets = sorted(int(k.split("@")[1]) for k in recs[0] if k.startswith("on@"))
    for g, rs in c64._groups(recs).items():
        if not rs:
            continue
        print(f"\n### {g}: {len({r['set'] for r in rs})} sets, {len(rs)} questions")
        for a, z in (("on", "off"), ("on", "hyb"), ("off", "hyb")):
            d = [r[f"{a}_ndcg"] - r[f"{z}_ndcg"] for r in rs]
            cells = [f"nDCG@10 {c64._paired(np.array(d))}"]
            for b in budgets:
                zk = f"flat-hybrid@{b}" if z == "hyb" else f"{z}@{b}"
                d = [r[f"{a}@{b}"] - r[zk] for r in rs]
                cells.append(f"@{b} {c64._paired(np.array(d))}")
            print(f"{a} - {z}: " + " | ".join(cells))
    for b in budgets:
        moved: dict[str, list[float]] = defaultdict(list)
        for r in recs:
            moved[r["set"]].append(r[f"on@{b}"] - r[f"off@{b}"])
        sets = {k: (sum(x > 0 for x in d), sum(x < 0 for x in d)) for k, d in moved.items()}
        print(
            f"on - off @{b}, sets that move (won/lost): "
            + ", ".join(f"{k} {w}/{lo}" for k, (w, lo) in sorted(sets.items()) if (w, lo) != (0, 0))
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--records", type=Path, nargs="+")
    ap.add_argument("--limit-probe", default="", help="comma-separated sets (dev halves)")
    ap.add_argument("--screen", default="", help="comma-separated sets (dev halves)")
    ap.add_argument("--option", default="question_window_descent")
    ap.add_argument("--budgets", default="500,1000,2000")
    ap.add_argument("--report", type=Path, nargs="*", default=[])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if args.report:
        seen: dict[str, dict[str, Any]] = {}
        for p in args.report:
            for r in json.loads(p.read_text()):
                seen.setdefault(r["qid"], r)  # one record per question (overlapping runs)
        screen_report(list(seen.values()))
        return
    if args.screen:
        got: list[dict[str, Any]] = []
        if args.json and args.json.exists():
            got = json.loads(args.json.read_text())
        done = {r["set"] for r in got}
        budgets = [int(b) for b in args.budgets.split(",") if b]
        for name in [s for s in args.screen.split(",") if s and s not in done]:
            got.extend(screen_set(name, args.option, budgets))
            if args.json:
                args.json.write_text(json.dumps(got))
            print(f"{name}: {sum(r['set'] == name for r in got)} questions", flush=True)
        screen_report(got)
        return
    if args.limit_probe:
        recs: list[dict[str, Any]] = []
        if args.json and args.json.exists():
            recs = json.loads(args.json.read_text())
        done = {r["set"] for r in recs}
        for name in [s for s in args.limit_probe.split(",") if s and s not in done]:
            recs.extend(limit_probe(name))
            if args.json:
                args.json.write_text(json.dumps(recs))
            d = [r["ndcg@50"] - r["ndcg@10"] for r in recs if r["set"] == name]
            print(
                f"{name}: {len(d)} questions, top ten differ {sum(x != 0 for x in d)}", flush=True
            )
        return
    if not args.records:
        ap.error("--records or --limit-probe")
    seen = {}
    for p in args.records:
        for r in json.loads(p.read_text())["records"]:
            seen.setdefault(r["qid"], r)
    losses = []
    for r in seen.values():
        ms = losing(r)
        if ms:
            losses.append({"set": r["set"], "qid": r["qid"], "stages": {}, "rec": r})
            losses[-1]["stages"] = {m: stage_of(r, m) for m in ms}
    want: dict[str, set[str]] = defaultdict(set)
    for x in losses:
        want[x["set"]].add(x["qid"])
    found = ranks(want)
    cols = ("find", "find-dense", "flat-dense", "flat-bm25", "flat-hybrid")
    print("| set:question | shape | " + " | ".join(cols) + " | lost (stage) |")
    print("|---|---|" + "---|" * len(cols) + "---|")
    for x in sorted(losses, key=lambda x: x["qid"]):
        f = found[x["qid"]]
        lost = ", ".join(f"{m} ({s})" for m, s in x["stages"].items())
        print(
            f"| {x['qid']} | {f['shape']} | "
            + " | ".join(str(f[c] or "-") for c in cols)
            + f" | {lost} |"
        )
        x["ranks"] = f
        del x["rec"]
    for m, c in sorted(table(losses).items()):
        print(f"{m}: {dict(c)}")
    print(f"{len(losses)} losing questions of {len(seen)}")
    if args.json:
        args.json.write_text(json.dumps(losses, indent=1))


if __name__ == "__main__":
    main()
