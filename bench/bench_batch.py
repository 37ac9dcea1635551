"""A batch of 32 queries through the store's global step (the HNSW graph) against the same 32
queries one by one, on a saved index, with the numbers of the bound a batch cannot beat; and
a paired A/B of two source trees.

    python bench/bench_batch.py --index IDX --queries-file Q.npy              # this checkout
    python bench/bench_batch.py --index IDX --queries-file Q.npy --ab OTHER   # paired A/B
    python bench/bench_batch.py --index IDX --queries-file Q.npy --check      # answers equal

``IDX`` is an index bench_store built and kept (``--index-dir DIR --no-writes``: its
``DIR/idx-N``); ``Q.npy`` holds query vectors of its tree. Each measurement takes 32 queries
and times, on the same warm store (nodes built, the graph's kept answers dropped before every
phase, as bench_store does): 32 ``store.search`` calls of bench_store's global step
(``Scope(subtrees=(TARGET,), leaves_only=True)``, limit 10), one ``search_batch`` of them, and
the graph alone: 32 one-query graph calls (what each ``search`` asks of usearch, one thread)
and one call for the 32 (two threads, as ``search_batch`` asks).

The bound (bench_store's docstring): usearch does the same graph work for 32 queries as for 32
single calls, only split over the cores, so a batch cannot beat one by one by more than
``cores x (1 + rest / graph)``, with ``graph`` the one-query graph call's time and ``rest``
the rest of a one-query search (its time less the graph's). Both are printed per query, with
the bound and the batch's own graph call; the ratio the batch reaches is one by one / batch.

``--ab``: one worker process per source tree (this checkout's ``retrieval/`` and the other's),
both on the same index and queries; each measurement is taken by both in turn, the order
alternating, so that both see the same load (the cores are shared). Medians and ranges per tree.
Each timed phase starts after ``--settle`` seconds of sleep: OpenBLAS's worker threads spin on
for ~0.1 s of CPU after a product (the old batch path ran two), which would otherwise be
counted in the next phase, of either tree.

``--check``: every query of the file, one by one and in batches of 32, must give the same hits
with the same scores (``==`` on the floats); prints how many differ.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop.stores import _ann  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402

BATCH = 32
LIMIT = 10
SCOPE = Scope(subtrees=(bl.TARGET,), leaves_only=True)
PHASES = ("one", "batch", "graph1", "graph_batch")
FIELDS = PHASES + tuple(f"{p}_cpu" for p in PHASES)


def forget_answers(store: EmbeddedStore) -> None:
    """bench_store's: drop the graph answers and exact scores kept for a repeated query."""
    ann = store._ann
    if ann is not None:
        ann.recent.clear()
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("all", "dense")]:
        cache.pop(key, None)


def open_store(index: Path, qs: np.ndarray) -> EmbeddedStore:
    """The index opened, its graph loaded, every query's nodes built and the orphans' 8-bit
    codes (built in a thread on first use) ready: the steady state of a serving store."""
    store = EmbeddedStore(index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    ann = store._ann
    assert ann is not None, "the index has no graph"
    for q in qs:
        store.search(q, SCOPE, LIMIT)
    deadline = time.monotonic() + 60
    while (
        ann.orphans.size >= _ann.ORPHAN_CODES_MIN
        and ann.orphan_codes() is None
        and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    store.search_batch(qs[:BATCH], SCOPE, LIMIT)
    return store


def measure(store: EmbeddedStore, qb: np.ndarray, settle: float) -> dict[str, float]:
    """Milliseconds per query of each phase for one batch of queries: wall time, and the
    process's CPU time (``_cpu``: every thread's, usearch's included), which a loaded
    machine inflates far less than the wall time."""
    ann = store._ann
    assert ann is not None
    fetch = 64  # (what the global step asks at this scope's share; the width is the cost)

    def one() -> None:
        for q in qb:
            store.search(q, SCOPE, LIMIT)

    def batch() -> None:
        store.search_batch(qb, SCOPE, LIMIT)

    def graph1() -> None:
        for q in qb:
            ann.lock.acquire_read()
            try:
                ann.query_many(q.reshape(1, -1), fetch, 1, whole=True)
            finally:
                ann.lock.release_read()

    def graph_batch() -> None:
        ann.lock.acquire_read()
        try:
            ann.query_many(qb, fetch, min(2, store.ann_threads))
        finally:
            ann.lock.release_read()

    out: dict[str, float] = {}
    for name, fn in (
        ("one", one),
        ("batch", batch),
        ("graph1", graph1),
        ("graph_batch", graph_batch),
    ):
        time.sleep(settle)  # (OpenBLAS's threads spin on after a product: let them stop)
        forget_answers(store)
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        out[name] = 1e3 * (time.perf_counter() - t0) / len(qb)
        out[name + "_cpu"] = 1e3 * (time.process_time() - c0) / len(qb)
    return out


def worker(index: Path, queries: Path, settle: float) -> None:
    """Answer ``<batch number>`` lines with that batch's per-query milliseconds."""
    qs = np.load(queries).astype(np.float32)
    store = open_store(index, qs)
    print("ready", flush=True)
    for line in sys.stdin:
        i = int(line) % max(len(qs) // BATCH, 1)
        got = measure(store, qs[i * BATCH : (i + 1) * BATCH], settle)
        print(" ".join(f"{got[f]:.6f}" for f in FIELDS), flush=True)
    store.close()


def check(index: Path, queries: Path) -> None:
    qs = np.load(queries).astype(np.float32)
    store = open_store(index, qs)
    differ = 0
    for i in range(0, len(qs), BATCH):
        qb = qs[i : i + BATCH]
        forget_answers(store)
        batch = store.search_batch(qb, SCOPE, LIMIT)
        for q, got in zip(qb, batch, strict=True):
            forget_answers(store)
            one = store.search(q, SCOPE, LIMIT)
            same = [(h.node.uri, h.score, h.vector_score) for h in got] == [
                (h.node.uri, h.score, h.vector_score) for h in one
            ]
            differ += not same
    print(f"{len(qs)} queries: {differ} batch answers differ from one by one (hits, scores)")
    store.close()


def report(name: str, rows: list[dict[str, float]]) -> None:
    """Medians (and ranges) of one tree's measurements, wall clock then CPU time."""

    def med(key: str) -> float:
        return statistics.median(r[key] for r in rows)

    for unit, sfx in (("wall", ""), ("CPU", "_cpu")):
        ratio = [r["one" + sfx] / r["batch" + sfx] for r in rows]
        rest = [r["one" + sfx] - r["graph1" + sfx] for r in rows]
        # cores x (1 + rest / graph) = 2 x one / graph on 2 cores (in CPU time the cores do
        # not divide the work: there the bound is 1 + rest / graph)
        cores = 2 if unit == "wall" else 1
        bound = [cores * r["one" + sfx] / r["graph1" + sfx] for r in rows]
        print(
            f"  {name:5s} {unit:4s} one/batch {statistics.median(ratio):.2f}"
            f" ({min(ratio):.2f}-{max(ratio):.2f}) | ms/query one {med('one' + sfx):.2f},"
            f" batch {med('batch' + sfx):.2f}; graph alone {med('graph1' + sfx):.2f},"
            f" rest {statistics.median(rest):.2f}; batch's graph call"
            f" {med('graph_batch' + sfx):.2f} | bound {cores} x (1 + rest/graph)"
            f" {statistics.median(bound):.2f} ({min(bound):.2f}-{max(bound):.2f})"
        )


def run(
    index: Path, queries: Path, other: Path | None, rounds: int, batches: int, settle: float
) -> None:
    trees: dict[str, Path] = {"this": HERE.parent}
    if other is not None:
        trees["other"] = other
    procs: dict[str, Any] = {}
    for name, root in trees.items():
        env = dict(os.environ, PYTHONPATH=f"{root}/retrieval:{root}/integrations")
        args = ["--index", str(index), "--queries-file", str(queries), "--worker"]
        args += ["--settle", str(settle)]
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    for p in procs.values():
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in procs}
    step = 0
    for _ in range(rounds):
        for i in range(batches):
            order = list(procs) if step % 2 == 0 else list(procs)[::-1]
            step += 1
            for name in order:
                p = procs[name]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(f"{i}\n")
                p.stdin.flush()
                got = map(float, p.stdout.readline().split())
                rows[name].append(dict(zip(FIELDS, got, strict=True)))
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()
    load = os.getloadavg()[0]
    print(
        f"{index.name}: {rounds} rounds x {batches} batches of {BATCH}, limit {LIMIT},"
        f" load average {load:.1f} on {os.cpu_count()} CPUs"
    )
    for name, got in rows.items():
        report(name, got)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--queries-file", type=Path, required=True)
    ap.add_argument("--ab", type=Path, help="another checkout to compare with, paired")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batches", type=int, default=8, help="batches of 32 per round")
    ap.add_argument("--check", action="store_true", help="batch answers == one by one's")
    ap.add_argument(
        "--settle",
        type=float,
        default=0.3,
        help="seconds of sleep before each timed phase: OpenBLAS's worker threads spin for "
        "~0.1 s of CPU after a product (the old batch path's), which would land in the next "
        "phase's time",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.index, args.queries_file, args.settle)
    elif args.check:
        check(args.index, args.queries_file)
    else:
        run(args.index, args.queries_file, args.ab, args.rounds, args.batches, args.settle)


if __name__ == "__main__":
    main()
