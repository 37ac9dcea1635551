"""Benchmark: the same retriever on the embedded store and on Milvus (milvus-lite).

    PYTHONPATH=retrieval python bench/bench_stores.py                  # Cranfield, all queries
    PYTHONPATH=retrieval python bench/bench_stores.py --max-queries 50 --hybrid 0.5

What it measures, on the same data and the same vectors (MiniLM int8, cached on disk):

* **ingest**: ``add_resource`` of the whole Cranfield tree (1,400 abstracts as a 2-level topic
  tree, from ``bench/datasets.py``) into each store, end to end (tree building, summaries,
  cached embeddings, upserts); then the raw ``store.upsert`` throughput of the same nodes and
  vectors into a fresh store, in batches of 500;
* **find()**: p50 / p95 latency over the Cranfield queries (``find(limit=10,
  include_directories=False)``, the query embedding served from the cache) and nDCG@10 / R@10
  with ``ir_measures``; each result list is mapped to documents as in ``bench_quality.py``;
* **agreement**: on how many queries Milvus's top-10 equals the embedded store's (same URIs in
  the same order). The FLAT index is exact, so any difference is a bug, not approximation.
* ``--hybrid W``: also ``find(dense_weight=W)`` on both stores. Their BM25 implementations
  differ (treehop's tokenizer with stemming vs Milvus's analyzer), so scores are not comparable
  and the agreement column is expected below 100%.

milvus-lite is NOT a Milvus cluster: it is an in-process Python implementation of the Milvus
API, served over gRPC on 127.0.0.1, whose filters scan rows in Python. Its latencies measure
protocol overhead plus a single-threaded scan, not what a distributed Milvus does; the numbers
here establish that the Milvus code path gives the same answers, and what one round trip per
directory costs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import ir_measures  # noqa: E402
from ir_measures import R, nDCG  # noqa: E402

from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.stores.base import VectorStore  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402
from treehop.stores.milvus import MilvusStore  # noqa: E402

TARGET = "viking://resources/cranfield"
LITE_NOTE = (
    "milvus-lite is not a cluster: an in-process Python server on 127.0.0.1 (filters scan "
    "rows in Python); its latency is no estimate of a Milvus cluster's."
)


@dataclass
class Ingest:
    store: str
    nodes: int
    add_resource_s: float
    upsert_rows_per_s: float


@dataclass
class FindRow:
    store: str
    method: str
    ndcg10: float
    r10: float
    p50_ms: float
    p95_ms: float
    same_top10: float | None


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def _ranked_docs(docs: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for d in docs:
        if d not in out:
            out[d] = float(len(docs) - len(out))
    return out


def _raw_upsert_rate(make: Callable[[], VectorStore], th: Treehop, batch: int = 500) -> float:
    """Rows per second of ``store.upsert`` alone, the same nodes and vectors, a fresh store."""
    nodes = list(th.store.iter_nodes())
    vecs = th.store.get_vectors([n.uri for n in nodes])
    store = make()
    t0 = time.perf_counter()
    for i in range(0, len(nodes), batch):
        store.upsert(nodes[i : i + batch], vecs[i : i + batch])
    store.save()
    return len(nodes) / (time.perf_counter() - t0)


def run(args: argparse.Namespace) -> tuple[list[Ingest], list[FindRow], dict[str, Any]]:
    embedder = ds.default_embedder(cache=not args.no_cache)
    cran = ds.load_cranfield()
    layout = ds.build_cranfield_tree(cran, embedder)
    qids = [q for q in cran.queries if q in cran.qrels]
    if args.max_queries:
        qids = qids[: args.max_queries]
    # Judgements of the queries that run only: ir_measures averages over every judged query.
    qrels = {q: cran.qrels[q] for q in qids}
    embedder.embed([cran.queries[q] for q in qids])  # warm the cache: latency is the search
    tmp = Path(tempfile.mkdtemp(prefix="treehop-bench-stores-"))
    db = str(tmp / "bench.db")
    from pymilvus import MilvusClient

    t0 = time.perf_counter()
    client = MilvusClient(db)
    lite_start = time.perf_counter() - t0
    counter = iter(range(10**6))

    def make_store(kind: str) -> VectorStore:
        if kind == "embedded":
            return EmbeddedStore(tmp / f"emb-{next(counter)}")
        return MilvusStore(client=client, collection=f"bench_{next(counter)}")

    ingests: list[Ingest] = []
    rows: list[FindRow] = []
    tops: dict[str, dict[str, list[str]]] = {}
    for kind in ("embedded", "milvus-lite"):
        th = Treehop(
            embedder=embedder,
            store=make_store(kind.split("-")[0]),
            tagger=None,
            config=RetrievalConfig(),
        )
        t0 = time.perf_counter()
        th.add_resource(str(layout.root), target_uri=TARGET)
        add_s = time.perf_counter() - t0
        n = len(th.store)
        rate = _raw_upsert_rate(lambda k=kind: make_store(k.split("-")[0]), th)
        ingests.append(Ingest(kind, n, add_s, rate))
        print(
            f"[{kind}] {n} nodes: add_resource {add_s:.1f}s, upsert {rate:.0f} rows/s",
            file=sys.stderr,
        )
        methods: list[tuple[str, float | None]] = [("dense", None)]
        if args.hybrid:
            methods.append((f"hybrid w={args.hybrid:g}", args.hybrid))
        for method, w in methods:
            run_: dict[str, dict[str, float]] = {}
            times: list[float] = []
            top: dict[str, list[str]] = {}
            for q in qids:
                s = time.perf_counter()
                res = th.find(
                    cran.queries[q],
                    target_uri=TARGET,
                    limit=10,
                    include_directories=False,
                    dense_weight=w,
                )
                times.append((time.perf_counter() - s) * 1000)
                hits = [m for m in res.resources if m.is_leaf]
                top[q] = [m.uri for m in hits]
                run_[q] = _ranked_docs([ds.doc_id_from_uri(m.uri) for m in hits])
            agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 10], qrels, run_)
            tops.setdefault(method, {})[kind] = [",".join(top[q]) for q in qids]
            rows.append(
                FindRow(
                    kind,
                    method,
                    agg[nDCG @ 10],
                    agg[R @ 10],
                    _pct(times, 50),
                    _pct(times, 95),
                    None,
                )
            )
        th.close()
    for r in rows:
        if r.store != "embedded":
            ref, got = tops[r.method]["embedded"], tops[r.method][r.store]
            r.same_top10 = sum(a == b for a, b in zip(ref, got, strict=True)) / len(ref)
    info = {"queries": len(qids), "lite_start_s": lite_start, "embedder": embedder.name}
    client.close()
    return ingests, rows, info


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-queries", type=int, default=0, help="first N queries (0 = all 225)")
    ap.add_argument("--hybrid", type=float, default=0.0, help="also run dense_weight=W (0: off)")
    ap.add_argument("--no-cache", action="store_true", help="do not use bench/.cache embeddings")
    args = ap.parse_args(argv)
    if args.hybrid and not 0.2 <= args.hybrid < 1.0:
        ap.error("--hybrid must be in [0.2, 1)")
    t0 = time.perf_counter()
    ingests, rows, info = run(args)
    print()
    print(f"{'store':<12} {'nodes':>6} {'add_resource s':>15} {'upsert rows/s':>14}")
    for i in ingests:
        print(f"{i.store:<12} {i.nodes:>6} {i.add_resource_s:>15.2f} {i.upsert_rows_per_s:>14.0f}")
    print()
    head = (
        f"{'store':<12} {'method':<14} {'nDCG@10':>8} {'R@10':>7} {'p50 ms':>8} {'p95 ms':>8} "
        f"{'top10 = embedded':>17}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        same = "-" if r.same_top10 is None else f"{r.same_top10:.0%}"
        print(
            f"{r.store:<12} {r.method:<14} {r.ndcg10:>8.3f} {r.r10:>7.3f} {r.p50_ms:>8.1f} "
            f"{r.p95_ms:>8.1f} {same:>17}"
        )
    print()
    print(
        f"Cranfield, {info['queries']} queries, embedder {info['embedder']}; "
        f"find(limit=10, include_directories=False), default RetrievalConfig; Milvus index "
        f"FLAT (exact); milvus-lite server start {info['lite_start_s']:.1f}s; "
        f"total {time.perf_counter() - t0:.0f}s"
    )
    print(LITE_NOTE)
    print(
        "top10 = embedded: share of queries whose top-10 URIs (in order) equal the embedded "
        "store's."
    )


if __name__ == "__main__":
    main()
