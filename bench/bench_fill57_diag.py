"""Why ``find()`` returns fewer results than its ``limit``, question by question (issue 33).

Stop 57, helper ``fill57``. Stop 56 (``bench_recall56_diag.py``) counted ``find(limit=100)``
returning fewer than 100 slots on 77 of the nine tuning sets' 535 dev questions, always with
the stop reason ``heap empty``. This asks why, at ``limit=10`` and ``limit=100``: for each
short result (fewer slots than the limit) it reads the find's own state at the final ranking
(one wrapper around ``HierarchicalRetriever._memory_context``, which changes nothing) and
sorts the scope's leaves that no slot holds (neither a face nor a collapsed chunk) into:

* ``never read``: not among the find's candidates, and the store scores it above the find's
  ``score_threshold`` (the same search the find makes, over the whole scope): the descent
  never collected it (a stop rule, a bound, a subtree pruned);
* ``below threshold``: not among the candidates, and the store scores it at or below the
  threshold (``score_threshold``, 0.0 by default): ``find()`` may never return it;
* ``candidate, no slot``: among the candidates but in no returned slot (cut by the grouping
  or the ``limit`` cut: should not happen on a short result).

and names the short result's cause: ``scope exhausted`` (every leaf of the scope is held by a
slot: the slots fold several leaves each, there is nothing left to fill with), ``threshold``
(every uncovered leaf scores at or below the threshold), ``descent`` (some uncovered leaf
above the threshold was never collected), ``grouping`` (some uncovered leaf is a candidate).
It also prints the candidates and the groups the final ranking cut them into (all groups, not
only the first ``limit``), so that "the slots fold hits" can be told from "the candidates ran
out".

Prints counts only (no question text), so an untuned set's dev half could be counted
without being read (this helper ran the nine tuning sets only).

    python bench/bench_fill57_diag.py                       # nine dev halves, ~2 min
    python bench/bench_fill57_diag.py --sets fetchmail-faq,zsh-faq --limits 10,100 --json OUT
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

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402

SEEN: dict[str, Any] = {}
"""What the last find's final ranking saw (the wrapper below writes it)."""


def _install() -> None:
    """Wrap ``_memory_context`` to record the find's candidates, its threshold and dense
    weight, and how many groups the whole ranking cuts them into (``ranked`` with no ``top``:
    every group, as without ``filled_top``). The find's own result is unchanged."""
    inner = hr.HierarchicalRetriever._memory_context
    if getattr(inner, "_fill57", False):
        return

    async def wrapped(self: Any, q: Any, state: Any, result: Any) -> Any:
        coll = state.collected
        own = q.question and self.config.question_grow_own
        groups = coll.ranked(state.track, hr._own_score(state.track) if own else None, None)
        SEEN.clear()
        SEEN.update(
            candidates={c.uri for c in coll.values()},
            groups=len(groups),
            threshold=q.threshold,
            dense_weight=q.dense_weight,
            stop=state.stop_reason,
            passages=bool(q.passages),
            question=bool(q.question),
            rounds=state.rounds,
            fetched=q.fetched,
        )
        return await inner(self, q, state, result)

    wrapped._fill57 = True  # type: ignore[attr-defined]
    hr.HierarchicalRetriever._memory_context = wrapped  # type: ignore[method-assign]


def store_scores(runner: bn.Runner, q: ns.NaturalQuestion, weight: float) -> dict[str, float]:
    """Every leaf of the scope with the score the store gives it for this question (the
    find's own fusion weight), the same search the find's global step makes."""
    flat = runner.flat
    hits = runner.th.store.search(
        runner.embedder.queries[q.text],
        Scope(subtrees=(runner.scope,), leaves_only=True),
        len(flat.uris) + 10,
        query_text=q.text,
        dense_weight=weight,
    )
    return {h.node.uri: float(h.score) for h in hits}


def diagnose(runner: bn.Runner, q: ns.NaturalQuestion, limit: int) -> dict[str, Any]:
    """One question's record at ``limit``: result count, stop reason, candidates, groups,
    leaves, and for a short result the uncovered leaves sorted by why."""
    res = runner.th.find(q.text, target_uri=runner.scope, limit=limit, explain=True)
    slots = res.contexts()
    seen = dict(SEEN)
    leaves = set(runner.flat.uris)
    held = {m.uri for m in slots} | {c.uri for m in slots for c in m.collapsed}
    rec: dict[str, Any] = {
        "qid": q.qid,
        "limit": limit,
        "n": len(slots),
        "stop": seen["stop"] or "heap empty",
        "candidates": len(seen["candidates"]),
        "groups": seen["groups"],
        "leaves": len(leaves),
        "held": len(held & leaves),
        # held by a slot but not in its text (a collapsed chunk the slot does not show)
        "hidden": sum(1 for m in slots for c in m.collapsed if c.position is None),
        "question": seen["question"],
        "passages": seen["passages"],
        "rounds": seen["rounds"],
        "fetched": seen["fetched"],
        "cause": None,
    }
    if len(slots) >= limit:
        return rec
    uncovered = leaves - held
    scores = store_scores(runner, q, seen["dense_weight"])
    thr = seen["threshold"]
    cand = seen["candidates"]
    in_cand = [u for u in uncovered if u in cand]
    below = [u for u in uncovered if u not in cand and scores.get(u, -9.0) <= thr]
    never = [u for u in uncovered if u not in cand and scores.get(u, -9.0) > thr]
    rec.update(uncovered=len(uncovered), in_candidates=len(in_cand), below=len(below))
    rec["never_read"] = len(never)
    if not uncovered:
        rec["cause"] = "scope exhausted"
    elif in_cand:
        rec["cause"] = "grouping"
    elif never:
        rec["cause"] = "descent"
    else:
        rec["cause"] = "threshold"
    # how far below: the best uncovered leaf's store score and how many uncovered score > 0
    if uncovered:
        rec["best_uncovered"] = max(scores.get(u, -9.0) for u in uncovered)
    return rec


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    ap.add_argument("--halves", default="dev")
    ap.add_argument("--limits", default="10,100")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    _install()
    limits = [int(x) for x in args.limits.split(",")]
    cached = bn.bench_embedder("")
    records: list[dict[str, Any]] = []
    lines: list[str] = []
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
                for limit in limits:
                    rec = diagnose(runner, q, limit)
                    rec.update(set=nset.name, half=half)
                    mine.append(rec)
            leaves = len(ix.flat.uris)
        records += mine
        for limit in limits:
            at = [r for r in mine if r["limit"] == limit]
            short = [r for r in at if r["cause"]]
            causes = Counter(r["cause"] for r in short)
            stops = Counter(r["stop"] for r in short)
            line = (
                f"| {name} | {leaves} | {limit} | {len(at)} | {len(short)} | "
                f"{min((r['n'] for r in short), default='-')} | "
                + ", ".join(f"{c} {k}" for c, k in causes.most_common())
                + " | "
                + ", ".join(f"{s} {k}" for s, k in stops.most_common())
                + " | "
                + (
                    f"{sum(r['candidates'] for r in short) / len(short):.0f} / "
                    f"{sum(r['groups'] for r in short) / len(short):.0f} / "
                    f"{sum(r['uncovered'] for r in short) / len(short):.0f} "
                    f"({sum(r['never_read'] for r in short) / len(short):.0f} never read, "
                    f"{sum(r['below'] for r in short) / len(short):.0f} below threshold); "
                    f"hidden {sum(r['hidden'] for r in short)}"
                    if short
                    else "-"
                )
                + " |"
            )
            lines.append(line)
            print(line, flush=True)
    print(
        "\n| set | leaves | limit | questions | short | min n | cause | stop | "
        "mean candidates / groups / uncovered leaves (short ones) |\n"
        "|---|---|---|---|---|---|---|---|---|"
    )
    for line in lines:
        print(line)
    for limit in limits:
        at = [r for r in records if r["limit"] == limit]
        short = [r for r in at if r["cause"]]
        print(
            f"limit {limit}: {len(short)} of {len(at)} short; causes "
            f"{dict(Counter(r['cause'] for r in short))}"
        )
    if args.json:
        args.json.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    main()
