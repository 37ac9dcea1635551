"""System fusion screened as extra rows of ``bench_natural.py``: ``find()``'s delivered slot
order fused with flat hybrid's chunk order over the same leaves (issue 33, stop 59, helper
``sysfuse59``).

Why: at 1,000 tokens the block reaches ~4.3 slots, and the questions find() loses to flat
hybrid have the answer at find's slot 6-7 where flat hybrid (the same leaves, ``dense_weight``
0.5) ranks it ~4th (bench/README.md, "helper ctx58", "helper rank57"). Earlier screens fused
dense and BM25 inside one list and lost; this one fuses the two *systems' outputs* (run
fusion): each row is ``find()`` with its result re-ranked against one extra store query, the
flat hybrid search of the same scope (``leaves_only``, ``dense_weight`` 0.5, the same
depth as the call's ``limit``), patched in from ``bench/`` (``retrieval/`` is not changed):

* ``fuse-rrf60`` / ``fuse-rrf10``: reciprocal rank fusion, ``1/(k + rank)`` summed over the
  two lists, k 60 (Cormack et al.'s constant) and 10 (a steeper head).
* ``fuse-combsum``: CombSUM of min-max-normalised scores (each list's scores mapped to 0..1
  over the list; a slot absent from a list gets 0 from it).
* ``fuse-ilv3``: find's top three slots, then the rest alternating, a hybrid chunk not yet
  delivered first, then find's next slot.

How a hybrid chunk meets find's slots: a chunk that is a slot's hit, or a chunk the slot's
text shows (``ChunkContext.position`` set), *is* that slot (the slot's hybrid rank is its
best chunk's); any other chunk (in no slot, or collapsed behind a face and not shown) becomes
a slot of its own with its own text (the leaf's content). The fused list is cut to the
call's ``limit``; its slots keep find's score *scale* (the r-th slot gets the r-th best score
find gave, so a lower slot's extensions still bid against the next hit as
``assemble_context`` does), and ``assemble_context`` packs it by its own rules.

Cost: the rows' timed call (``limit`` 10, the p50 column) runs find and the hybrid search
afresh; the other calls of a question (``limit`` 100, the three blocks) reuse that question's
find and hybrid results across the four fused rows (the same deterministic calls), so the
screen costs about one extra row. The hybrid search and the fusion step of every timed call
are also timed on their own (a note per set: ``sysfuse59 <set>: hybrid search p50 ...``).

    R=find,flat-hybrid,fuse-rrf60,fuse-rrf10,fuse-combsum,fuse-ilv3
    python bench/bench_sysfuse59_screen.py --dev --rows $R --json OUT.json
    python bench/bench_sysfuse59_screen.py --report OUT1.json OUT2.json ...

Every other argument goes to ``bench_natural.py``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
from treehop import client as tc  # noqa: E402
from treehop.models import FindResult, MatchedContext  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402

HYBRID_WEIGHT = 0.5
"""Flat hybrid's dense weight (``RetrievalConfig().dense_weight``, the flat-hybrid row's)."""

RULES: dict[str, tuple[str, int]] = {
    "fuse-rrf60": ("rrf", 60),
    "fuse-rrf10": ("rrf", 10),
    "fuse-combsum": ("combsum", 0),
    "fuse-ilv3": ("interleave", 3),
}


# --------------------------------------------------------------------------------------
# The fusion (pure: lists in, order out)
# --------------------------------------------------------------------------------------


def slot_of_chunks(slots: Sequence[MatchedContext]) -> dict[str, int]:
    """URI -> index of the find slot whose delivered text holds it: the slot's hit and the
    chunks its text shows (``position`` set). The first slot wins a URI two slots hold."""
    out: dict[str, int] = {}
    for i, m in enumerate(slots):
        out.setdefault(m.uri, i)
        for c in m.collapsed:
            if c.position is not None:
                out.setdefault(c.uri, i)
    return out


def fuse_order(
    find_scores: Sequence[float],
    hybrid: Sequence[tuple[int | None, float]],
    rule: str,
    k: int,
) -> list[tuple[str, int]]:
    """The fused order of find's slots (``("f", i)``) and hybrid's own chunks (``("h", j)``).

    ``find_scores``: find's slots' scores, best first. ``hybrid``: per hybrid chunk, best
    first, the find slot it is (``None``: a slot of its own) and its score. A find slot's
    hybrid rank is its best chunk's; every item is ranked 1-based within its lists. Ties go
    to the item find ranks higher, then to the one hybrid ranks higher."""
    nf = len(find_scores)
    h_rank: dict[tuple[str, int], int] = {}
    h_score: dict[tuple[str, int], float] = {}
    for j, (slot, s) in enumerate(hybrid):
        key = ("f", slot) if slot is not None else ("h", j)
        if key not in h_rank:
            h_rank[key] = j + 1
            h_score[key] = s
    items = [("f", i) for i in range(nf)] + [key for key in h_rank if key[0] == "h"]
    if rule == "interleave":
        order = [("f", i) for i in range(min(k, nf))]
        placed = set(order)
        rest_f = [("f", i) for i in range(len(order), nf)]
        rest_h = [key for key in sorted(h_rank, key=h_rank.__getitem__) if key not in placed]

        def take(rest: list[tuple[str, int]]) -> None:
            # the list's next item not placed yet, if any, placed next
            while rest and rest[0] in placed:
                rest.pop(0)
            if rest:
                key = rest.pop(0)
                order.append(key)
                placed.add(key)

        while rest_f or rest_h:
            take(rest_h)
            take(rest_f)
        return order
    inf = float("inf")

    def f_rank(key: tuple[str, int]) -> float:
        return key[1] + 1 if key[0] == "f" else inf

    if rule == "rrf":

        def fused(key: tuple[str, int]) -> float:
            s = 1.0 / (k + f_rank(key)) if key[0] == "f" else 0.0
            r = h_rank.get(key)
            return s + (1.0 / (k + r) if r is not None else 0.0)

    elif rule == "combsum":
        fmin, fmax = (min(find_scores), max(find_scores)) if nf else (0.0, 0.0)
        hs = [s for _, s in hybrid]
        hmin, hmax = (min(hs), max(hs)) if hs else (0.0, 0.0)

        def norm(x: float, lo: float, hi: float) -> float:
            return (x - lo) / (hi - lo) if hi > lo else 1.0

        def fused(key: tuple[str, int]) -> float:
            s = norm(find_scores[key[1]], fmin, fmax) if key[0] == "f" else 0.0
            if key in h_score:
                s += norm(h_score[key], hmin, hmax)
            return s

    else:
        raise ValueError(f"unknown rule {rule!r}")
    return sorted(items, key=lambda key: (-fused(key), f_rank(key), h_rank.get(key, inf)))


def own_slot(node: Any, score: float) -> MatchedContext:
    """A hybrid chunk as a slot of its own: the leaf with its own text, nothing collapsed."""
    return MatchedContext(
        uri=node.uri,
        context_type=node.context_type,
        is_leaf=node.is_leaf,
        abstract=node.abstract,
        score=score,
        level=node.level,
        parent_uri=node.parent_uri,
        overview=node.overview,
        content=node.content,
        tags=list(node.tags),
        metadata=dict(node.metadata),
        chunk_index=node.chunk_index,
    )


def fused_result(
    base: FindResult, hits: Sequence[Any], rule: str, k: int, limit: int
) -> FindResult:
    """``base`` (find's result) re-ranked with the hybrid ``hits`` (``ScoredNode``s, best
    first) by ``rule``, cut to ``limit`` slots. The r-th slot gets the r-th best score find
    gave (below find's last, one step of 1e-6 per slot), so ``contexts()`` keeps the fused
    order and the block's extension bidding keeps find's scale."""
    slots = base.contexts()
    where = slot_of_chunks(slots)
    hybrid = [(where.get(h.node.uri), float(h.score)) for h in hits]
    order = fuse_order([m.score for m in slots], hybrid, rule, k)[:limit]
    scale = sorted((m.score for m in slots), reverse=True)
    out: list[MatchedContext] = []
    last = scale[-1] if scale else 0.0
    for r, (kind, i) in enumerate(order):
        s = scale[r] if r < len(scale) else last - 1e-6 * (r - len(scale) + 1)
        if out and s >= out[-1].score:
            s = out[-1].score - 1e-9
        if kind == "f":
            out.append(slots[i].model_copy(update={"score": s}))
        else:
            out.append(own_slot(hits[i].node, s))
    return base.model_copy(
        update={"resources": out, "memories": [], "skills": [], "total": len(out)}
    )


# --------------------------------------------------------------------------------------
# The rows (a patch of AsyncTreehop._find_checked)
# --------------------------------------------------------------------------------------

TIMES: dict[str, list[float]] = {"hybrid_ms": [], "fuse_ms": []}
"""The timed calls' (``limit`` 10, no block) hybrid search and fusion step, per set."""
_CACHE: dict[Any, Any] = {}
_CACHE_QUERY: list[str] = [""]


def install() -> None:
    """Add the four rows and patch ``AsyncTreehop._find_checked`` (every ``find()`` and
    every ``assemble_context(query)`` of a client runs through it) to fuse for them."""
    bn.add_screen_rows(
        *(
            bn.Row(key, f"find fused with hybrid, {r}{k or ''}", "find")
            for key, (r, k) in RULES.items()
        )
    )
    checked = tc.AsyncTreehop._find_checked

    async def patched(self: tc.AsyncTreehop, call: Any) -> FindResult:
        rule = RULES.get(bn.ACTIVE_ROW[0])
        if rule is None:
            return await checked(self, call)
        timed = call.opts.context_tokens is None and call.opts.limit == 10
        if call.query != _CACHE_QUERY[0]:
            _CACHE.clear()
            _CACHE_QUERY[0] = call.query
        key = (call.query, repr(call.opts), tuple(call.targets), call.ctype)
        base = None if timed else _CACHE.get(("find", key))
        if base is None:
            base = await checked(self, call)
            _CACHE[("find", key)] = base
        hkey = ("hybrid", call.query, call.opts.limit, tuple(call.targets))
        hits = None if timed else _CACHE.get(hkey)
        if hits is None:
            t0 = time.perf_counter()
            hits = hybrid_hits(self, call)
            if timed:
                TIMES["hybrid_ms"].append((time.perf_counter() - t0) * 1000)
            _CACHE[hkey] = hits
        t0 = time.perf_counter()
        out = fused_result(base, hits, rule[0], rule[1], call.opts.limit)
        if timed:
            TIMES["fuse_ms"].append((time.perf_counter() - t0) * 1000)
        return out

    tc.AsyncTreehop._find_checked = patched  # type: ignore[method-assign]
    evaluate_set = bn.evaluate_set

    def noted(
        nset: Any, rows: Any, halves: Any, cached: Any, budgets: Any, *a: Any, **kw: Any
    ) -> Any:
        for v in TIMES.values():
            v.clear()
        out = evaluate_set(nset, rows, halves, cached, budgets, *a, **kw)
        if TIMES["hybrid_ms"]:
            notes = a[1] if len(a) > 1 else kw["notes"]
            notes.append(
                f"sysfuse59 {nset.name}: hybrid search p50 "
                f"{np.percentile(TIMES['hybrid_ms'], 50):.2f} ms, fusion p50 "
                f"{np.percentile(TIMES['fuse_ms'], 50):.3f} ms over "
                f"{len(TIMES['hybrid_ms'])} timed calls"
            )
        return out

    bn.evaluate_set = noted


def hybrid_hits(self: tc.AsyncTreehop, call: Any) -> list[Any]:
    """Flat hybrid's hits for the call: the store's hybrid search of the call's scope, leaves
    only, ``dense_weight`` 0.5, as deep as the call's ``limit`` (the flat-hybrid row's
    query: the memo's query vector, the question's text)."""
    roots = self._roots_of(call.targets, call.ctype)
    vec = call.vector
    if vec is None:
        vec = np.asarray(self._embedder.embed_query(call.query), dtype=np.float32)
    scope = Scope(subtrees=tuple(roots), leaves_only=True)
    return list(
        self.store.search(
            vec, scope, call.opts.limit, query_text=call.query, dense_weight=HYBRID_WEIGHT
        )
    )


# --------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def report(files: Sequence[Path], against: Sequence[str] = ("find", "flat-hybrid")) -> None:
    """Per file (a pool): each row's mean per metric; each fused row minus ``against``, the
    paired mean and its 95 % bootstrap interval (``bench_natural.mean_interval``), questions
    won / lost, sets won / lost; the p50s; and each set's notes on the hybrid search's cost."""
    for f in files:
        data = json.loads(f.read_text())
        rows = [r for r in data["rows"] if "/" not in r["dataset"]]
        kinds = [r for r in data["rows"] if "/" in r["dataset"]]
        keys = list(dict.fromkeys(r["row"] for r in rows))
        print(f"\n### {f.name} ({len({r['dataset'] for r in rows})} sets)\n")
        pool_table(rows, keys, against)
        if kinds:
            print("\nper query kind:")
            for kind in sorted({r["dataset"] for r in kinds}):
                pool_table([r for r in kinds if r["dataset"] == kind], keys, against, kind)
        cost = [n for n in data["notes"] if n.startswith("sysfuse59 ")]
        hyb = [float(n.split("hybrid search p50 ")[1].split(" ms")[0]) for n in cost]
        if hyb:
            print(
                f"\nhybrid search p50 per set: median {np.median(hyb):.2f} ms "
                f"(min {min(hyb):.2f}, max {max(hyb):.2f}) over {len(hyb)} sets"
            )


def pool_table(
    rows: Sequence[Mapping[str, Any]], keys: Sequence[str], against: Sequence[str], label: str = ""
) -> None:
    per: dict[str, dict[str, dict[str, float]]] = {k: {m: {} for m in METRICS} for k in keys}
    by_set: dict[str, dict[str, dict[str, float]]] = {k: {} for k in keys}
    p50: dict[str, list[float]] = {k: [] for k in keys}
    for r in rows:
        k = r["row"]
        p50[k].append(float(r["p50_ms"]))
        by_set[k][r["dataset"]] = {m: float(r[m]) for m in METRICS if m in r}
        for m in METRICS:
            for q, v in r.get("per_question", {}).get(m, {}).items():
                per[k][m][f"{r['dataset']}/{q}"] = float(v)
    n = len(per[keys[0]]["ndcg@10"])
    head = f"| {label or 'row'} (n={n}) | " + " | ".join(METRICS) + " | p50 ms (median of sets) |"
    print(head)
    print("|---" * (len(METRICS) + 2) + "|")
    for k in keys:
        means = " | ".join(
            f"{np.mean(list(per[k][m].values())):.4f}" if per[k][m] else "-" for m in METRICS
        )
        print(f"| {k} | {means} | {np.median(p50[k]):.2f} |")
    for base in against:
        if base not in per:
            continue
        for k in keys:
            if k in against:
                continue
            cells = []
            for m in METRICS:
                a, b = per[k][m], per[base][m]
                qs = sorted(set(a) & set(b))
                if not qs:
                    cells.append("-")
                    continue
                d = np.array([a[q] - b[q] for q in qs])
                mean, lo, hi = bn.mean_interval(d)
                sw = sum(
                    1
                    for s in by_set[k]
                    if s in by_set[base] and by_set[k][s][m] > by_set[base][s][m] + 1e-12
                )
                sl = sum(
                    1
                    for s in by_set[k]
                    if s in by_set[base] and by_set[k][s][m] < by_set[base][s][m] - 1e-12
                )
                won, lost = int((d > 0).sum()), int((d < 0).sum())
                cells.append(f"{mean:+.4f} ({lo:+.3f}..{hi:+.3f}) q {won}/{lost} sets {sw}/{sl}")
            print(f"| {k} - {base} | " + " | ".join(cells) + " | |")
    if "find" in per and "flat-hybrid" in per:
        for m in ("ndcg@10", "ctx@1000"):
            f, h = per["find"][m], per["flat-hybrid"][m]
            behind = [q for q in f if q in h and h[q] > f[q]]
            ahead = [q for q in f if q in h and f[q] > h[q]]
            tied = [q for q in f if q in h and f[q] == h[q]]
            for k in keys:
                if k in ("find", "flat-hybrid"):
                    continue
                x = per[k][m]
                print(
                    f"- {m}, {k}: of the {len(behind)} questions flat hybrid beats find on, "
                    f"{sum(x[q] > f[q] for q in behind)} gained; of the {len(ahead)} find beats "
                    f"it on, {sum(x[q] < f[q] for q in ahead)} lost; on the {len(tied)} ties "
                    f"{sum(x[q] > f[q] for q in tied)} gained / "
                    f"{sum(x[q] < f[q] for q in tied)} lost"
                )


def per_set(files: Sequence[Path], row: str, base: str, metric: str) -> None:
    """One fused row minus ``base`` per set at ``metric`` (the sets that moved)."""
    for f in files:
        rows = [r for r in json.loads(f.read_text())["rows"] if "/" not in r["dataset"]]
        got = {(r["dataset"], r["row"]): float(r[metric]) for r in rows}
        moved = []
        for s in dict.fromkeys(r["dataset"] for r in rows):
            if (s, row) in got and (s, base) in got:
                d = got[(s, row)] - got[(s, base)]
                if abs(d) > 1e-12:
                    moved.append(f"{s} {d:+.3f}")
        print(f"{f.name} {row} - {base} {metric}: {', '.join(moved) or 'none moved'}")


def latency(names: Sequence[str], reps: int, row: str) -> None:
    """The warm cost of a fused find: per dev question of each set, after one warm-up call of
    each, ``reps`` rounds of find() and the fused row's find (``limit`` 10) alternating, and
    the hybrid search and the fusion step alone; each question's median, then the p50 and p90
    over the questions. Why not the table's p50: there the first call of a question pays the
    query's one-off costs (query analysis caches) and the rows take turns being first, so
    one row's p50 carried them (fuse-rrf60 read 15-25 ms beside find's 2-3 ms)."""
    import natural_sets as ns

    install()
    cached = bn.bench_embedder("")
    rule = RULES[row]
    for name in names:
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            dev, _ = bn.bt.sampled_halves(nset.questions, 0)
            ix.embedder.prepare([q.text for q in dev])
            med: dict[str, list[float]] = {"find": [], "fused": [], "hybrid": [], "fuse": []}
            for q in dev:
                call = ix.th.aio._check_find(q.text, None, None, {"target_uri": ix.scope})
                call = call._replace(vector=ix.embedder.queries[q.text])
                t: dict[str, list[float]] = {k: [] for k in med}
                for i in range(reps + 1):
                    for which in ("find", "fused") if i % 2 else ("fused", "find"):
                        bn.ACTIVE_ROW[0] = row if which == "fused" else ""
                        t0 = time.perf_counter()
                        ix.th.find(q.text, target_uri=ix.scope, limit=10)
                        if i:
                            t[which].append((time.perf_counter() - t0) * 1000)
                    bn.ACTIVE_ROW[0] = ""
                    t0 = time.perf_counter()
                    hits = hybrid_hits(ix.th.aio, call)
                    t1 = time.perf_counter()
                    base = ix.th.find(q.text, target_uri=ix.scope, limit=10)
                    t2 = time.perf_counter()
                    fused_result(base, hits, rule[0], rule[1], 10)
                    t3 = time.perf_counter()
                    if i:
                        t["hybrid"].append((t1 - t0) * 1000)
                        t["fuse"].append((t3 - t2) * 1000)
                for k in med:
                    med[k].append(float(np.median(t[k])))
            cells = ", ".join(
                f"{k} p50 {np.percentile(v, 50):.3f} / p90 {np.percentile(v, 90):.3f} ms"
                for k, v in med.items()
            )
            extra = np.array(med["fused"]) - np.array(med["find"])
            print(
                f"{name} ({len(dev)} dev questions, {reps} rounds, {row}): {cells}; fused - find "
                f"per question p50 {np.percentile(extra, 50):+.3f} ms"
            )


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--latency":
        ap = argparse.ArgumentParser()
        ap.add_argument("--latency", required=True, help="comma-separated sets")
        ap.add_argument("--reps", type=int, default=5)
        ap.add_argument("--row", default="fuse-rrf10", choices=sorted(RULES))
        a = ap.parse_args(args)
        latency(a.latency.split(","), a.reps, a.row)
        return
    if args and args[0] in ("--report", "--per-set"):
        ap = argparse.ArgumentParser()
        ap.add_argument("--report", type=Path, nargs="+")
        ap.add_argument("--per-set", type=Path, nargs="+")
        ap.add_argument("--row", default="fuse-rrf60")
        ap.add_argument("--base", default="find")
        ap.add_argument("--metric", default="ctx@1000")
        a = ap.parse_args(args)
        if a.report:
            report(a.report)
        if a.per_set:
            per_set(a.per_set, a.row, a.base, a.metric)
        return
    install()
    bn.main(args)


if __name__ == "__main__":
    main()
