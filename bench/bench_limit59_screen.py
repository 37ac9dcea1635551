"""Why ``find()``'s first slots depend on ``limit``, and two rules screened: issue 33 (helper
``limit59``).

Helper ltr59 found that ``find(limit=20)``'s first 10 slots score higher than
``find(limit=10)`` on the untuned dev halves (nDCG@10 +0.0044). Everything in a find that
reads ``limit`` (``retrieval/treehop/hierarchical_retriever.py``):

* the descent's stop rule (``Descent.settled``: the ``limit``-th best document's score
  against the best bound left on the heap) and the deeper global step it asks for
  (``Descent.wants_deeper_global`` reads the same k-th score), and the stop rule by slots
  (``_slots_settled``: the first ``limit`` passage slots);
* the chunk window's pool and the tree context's pool (``max(30, 3 * limit)``);
* ``few_document_passages``' fill (``limit`` documents) and the document penalty's greedy
  pass (``first=limit``: prefix-consistent, the first 10 of 20 are the first 10);
* tag evidence (``gather_tag_evidence``'s ``limit``) and the memory slots (no memory here).

Rows (each ``find()`` with one patch from ``bench/``; ``retrieval/`` is not changed); each
applies to every ``find()`` of the row, the blocks' ``assemble_context(query)`` included:

* ``find-ask2x``: the whole request at twice its ``limit``, cut to ``limit`` by the client's
  post-processing (``AsyncTreehop._request``: what ``retrieve_count`` does): ltr59's finding;
* ``find-d2x``: only the descent waits for twice the candidates (``_descend``'s
  ``descent_limit`` = 2 x ``limit``, leftovers59's parameter) for a search over documents;
* ``find-gstep``: the first global step takes twice ``global_search_topk`` nodes.

``--trace FILE``: for every question of the ``find`` row, its limit-10 slots and those of the
variants ``ask2x``, ``d2x``, ``pool2x`` (the chunk window's and tree context's pools as at
twice the limit, nothing else) and ``d2x+pool2x``, with each one's stop reason, rounds and
nodes scored (one extra find per variant, untimed, no block).

    python bench/bench_limit59_screen.py --dev --rows find,find-ask2x,find-d2x --json OUT.json \
        --trace TRACE.json
    python bench/bench_limit59_screen.py --report TRACE.json [TRACE2.json ...]

Every other argument goes to ``bench_natural.py``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
from treehop import client as tc  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402

ROWS = {
    "find-ask2x": ("ask2x", "find, asked for 2 x limit slots, first limit kept"),
    "find-d2x": ("d2x", "find, descent waits for 2 x limit candidates"),
    "find-gstep": ("gstep", "find, first global step 2 x global_search_topk"),
}
VARIANTS = ("ask2x", "d2x", "pool2x", "d2x+pool2x", "gstep")
MODE: list[frozenset[str]] = [frozenset()]
"""The active variant's parts (set by the rows' marker or the trace); empty: plain find."""
SET: list[str] = [""]
TRACE: list[dict[str, Any]] = []


def modes() -> frozenset[str]:
    row = ROWS.get(bn.ACTIVE_ROW[0])
    return frozenset({row[0]}) if row is not None else MODE[0]


def install() -> None:
    """Add the rows; patch ``AsyncTreehop._request`` (ask2x), ``HierarchicalRetriever.
    _descend`` (d2x), ``HierarchicalRetriever.retrieve`` (pool2x, gstep)."""
    bn.add_screen_rows(*(bn.Row(k, name, "find") for k, (_, name) in ROWS.items()))
    request = tc.AsyncTreehop._request

    def patched_request(*args: Any) -> hr.RetrievalRequest:
        req = request(*args)
        if "ask2x" in modes():
            req = dataclasses.replace(req, limit=2 * req.limit)
        return req

    tc.AsyncTreehop._request = staticmethod(patched_request)  # type: ignore[method-assign,assignment]
    descend = hr.HierarchicalRetriever._descend

    async def patched_descend(
        self: hr.HierarchicalRetriever,
        req: hr.RetrievalRequest,
        first: Any = None,
        q: Any = None,
        descent_limit: int | None = None,
    ) -> Any:
        if descent_limit is None and "d2x" in modes() and self._over_documents(req):
            descent_limit = 2 * req.limit
        return await descend(self, req, first, q, descent_limit)

    hr.HierarchicalRetriever._descend = patched_descend  # type: ignore[method-assign]
    retrieve = hr.HierarchicalRetriever.retrieve

    async def patched_retrieve(
        self: hr.HierarchicalRetriever, req: hr.RetrievalRequest, first: Any = None
    ) -> Any:
        m = modes()
        cfg = self.config
        saved = (hr.WINDOW_POOL, cfg.context_pool, cfg.global_search_topk)
        try:
            if "pool2x" in m:
                hr.WINDOW_POOL = max(saved[0], 6 * req.limit)
                cfg.context_pool = max(saved[1], 6 * req.limit)
            if "gstep" in m:
                cfg.global_search_topk = 2 * saved[2]
            return await retrieve(self, req, first)
        finally:
            hr.WINDOW_POOL, cfg.context_pool, cfg.global_search_topk = saved

    hr.HierarchicalRetriever.retrieve = patched_retrieve  # type: ignore[method-assign]


def slot_ids(res: Any) -> list[str]:
    """Each delivered slot as its URI and a hash of its text (a passage of a document)."""
    return [
        f"{m.uri}#{hashlib.sha1(bn.delivered(m).encode()).hexdigest()[:8]}" for m in res.contexts()
    ]


def facts(res: Any) -> dict[str, Any]:
    qr = (res.query_results or [None])[0]
    return {
        "slots": slot_ids(res),
        "stop": getattr(qr, "stop_reason", None),
        "rounds": len(getattr(qr, "trace", None) or []),
        "scored": getattr(qr, "nodes_scored", None),
    }


def install_trace() -> None:
    """Patch ``bench_natural``: each ``find`` row question's limit-10 call also runs every
    variant once (untimed) and records the slots."""
    results = bn.Runner.results
    load = bn.ns.load_natural_set

    def patched_load(name: str, cached: Any) -> Any:
        SET[0] = name
        return load(name, cached)

    bn.ns.load_natural_set = patched_load  # type: ignore[assignment]

    def patched_results(self: bn.Runner, row: bn.Row, q: Any, limit: int) -> Any:
        out = results(self, row, q, limit)
        if row.key != "find" or limit != 10:
            return out
        rec: dict[str, Any] = {"set": SET[0], "qid": q.qid, "find": facts(out[1])}
        for v in VARIANTS:
            MODE[0] = frozenset(v.split("+"))
            try:
                rec[v] = facts(results(self, row, q, limit)[1])
            finally:
                MODE[0] = frozenset()
        TRACE.append(rec)
        return out

    bn.Runner.results = patched_results  # type: ignore[method-assign]


def report(paths: Sequence[str]) -> None:
    """Per variant: questions whose first 10 slots differ from find's (as a set, in order),
    which variant reproduces ask2x, and find's stop reasons where ask2x differs."""
    recs = [r for p in paths for r in json.loads(Path(p).read_text())]
    print(f"{len(recs)} questions")
    for v in VARIANTS:
        same_set = sum(set(r[v]["slots"]) == set(r["find"]["slots"]) for r in recs)
        same_order = sum(r[v]["slots"] == r["find"]["slots"] for r in recs)
        extra = [r[v]["scored"] - r["find"]["scored"] for r in recs if r[v]["scored"]]
        print(
            f"{v:12s} differs from find: set {len(recs) - same_set}, order "
            f"{len(recs) - same_order}; nodes scored +{sum(extra) / max(1, len(extra)):.0f}/q"
        )
    diff = [r for r in recs if r["ask2x"]["slots"] != r["find"]["slots"]]
    print(f"ask2x differs (order) on {len(diff)}; of them reproduced exactly by:")
    for v in ("d2x", "pool2x", "d2x+pool2x", "gstep"):
        print(f"  {v:12s} {sum(r[v]['slots'] == r['ask2x']['slots'] for r in diff)}")
    print("  find's stop reason there:")
    for k, n in Counter(_reason(r["find"]["stop"]) for r in diff).most_common():
        print(f"    {n:4d}  {k}")
    print("  find's stop reason over all questions:")
    for k, n in Counter(_reason(r["find"]["stop"]) for r in recs).most_common():
        print(f"    {n:4d}  {k}")
    uris = sum(
        [x.rsplit("#", 1)[0] for x in r["ask2x"]["slots"]]
        != [x.rsplit("#", 1)[0] for x in r["find"]["slots"]]
        for r in diff
    )
    print(f"  of them the slots' URIs differ (not only a slot's text): {uris}")
    new_uris = sum(
        bool(
            {x.rsplit("#", 1)[0] for x in r["ask2x"]["slots"]}
            - {x.rsplit("#", 1)[0] for x in r["find"]["slots"]}
        )
        for r in diff
    )
    print(f"  of them a URI new to the first 10: {new_uris}")
    newcomers = Counter(sum(s not in r["find"]["slots"] for s in r["ask2x"]["slots"]) for r in diff)
    print(f"  slots new to the first 10 (count: questions): {sorted(newcomers.items())}")


def _reason(s: str | None) -> str:
    return re.sub(r"\d+", "N", s or "?")


METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def pooled(paths: Sequence[str], base: str = "find") -> None:
    """Each row minus ``base`` over the questions of the files' sets (a set's kinds, named
    ``set/kind``, apart): paired mean, 95 % bootstrap interval (``bench_natural.
    mean_interval``), questions won / lost, sets won / lost; and the median over sets of each
    row's p50 latency (the rows interleaved per question, so a set's p50s share its load;
    not a cost in a ``--trace`` run, whose ``find`` row's timed call holds the trace's
    extra finds)."""
    rows = [r for p in paths for r in json.loads(Path(p).read_text())["rows"]]
    for kinds in (False, True):
        sel = [r for r in rows if ("/" in r["dataset"]) == kinds]
        if not sel:
            continue
        by = {(r["dataset"], r["row"]): r for r in sel}
        sets = sorted({r["dataset"] for r in sel})
        keys = sorted({r["row"] for r in sel if r["row"] != base})
        groups = [("all", sets)]
        if kinds:
            groups = [
                (k, [s for s in sets if s.endswith("/" + k)])
                for k in sorted({s.split("/")[1] for s in sets})
            ]
        for label, group in groups:
            n = sum(len(by[(s, base)]["per_question"]["ndcg@10"]) for s in group)
            print(f"{label} ({len(group)} sets, {n} questions)")
            metrics = [m for m in METRICS if m in by[(group[0], base)]]
            for m in metrics:
                mean = sum(by[(s, base)][m] * by[(s, base)]["n"] for s in group) / n
                print(f"  {m} {base} {mean:.4f}")
            for k in keys:
                print(f"  {k}:")
                for m in metrics:
                    d: list[float] = []
                    sw = sl = 0
                    for s in group:
                        a, b = by[(s, base)]["per_question"][m], by[(s, k)]["per_question"][m]
                        ds = [b[q] - a[q] for q in a]
                        d += ds
                        sm = sum(ds)
                        sw, sl = sw + (sm > 1e-9), sl + (sm < -1e-9)
                    mi = bn.mean_interval(np.asarray(d, dtype=np.float64))
                    won = sum(x > 1e-9 for x in d)
                    lost = sum(x < -1e-9 for x in d)
                    print(
                        f"    {m:9s} {mi[0]:+.4f} ({mi[1]:+.4f}..{mi[2]:+.4f}) "
                        f"q {won}/{lost} sets {sw}/{sl}"
                    )
                p = [by[(s, k)]["p50_ms"] - by[(s, base)]["p50_ms"] for s in group]
                p50b = float(np.median([by[(s, base)]["p50_ms"] for s in group]))
                print(
                    f"    p50 {base} median {p50b:.2f} ms; row - {base}: median "
                    f"{float(np.median(p)):+.2f} ms"
                )


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--report", nargs="+")
    ap.add_argument("--trace")
    ap.add_argument("--pooled", nargs="+")
    ns_, rest = ap.parse_known_args(args)
    if ns_.report:
        report(ns_.report)
        return
    if ns_.pooled:
        pooled(ns_.pooled)
        return
    install()
    if ns_.trace:
        install_trace()
    try:
        bn.main(rest)
    finally:
        if ns_.trace:
            Path(ns_.trace).write_text(json.dumps(TRACE))


if __name__ == "__main__":
    main()
