"""find_many at its defaults against single finds, paired per batch (issue 35 round 9).

Per batch of 32, in a rotating order: single finds on the default client; that client's
``find_many`` (``reader_processes="auto"``: split over its worker only while other processes
leave a core free); ``find_many`` on a ``reader_processes=0`` client (the batch in one
process); ``find_many`` on a ``reader_processes=1`` client (always split). Each client opens
the index itself. Wall: the median batch; CPU: this process plus every worker
(``/proc/PID/stat``) summed over all batches; GC: the cyclic garbage collector's time in
this process (``gc.callbacks``, from each collection's start to its stop; a worker's own
collections are not in it), per query, and its full (generation 2) collections. Every list is
compared with the single finds' (uri, score, found_by, abstract).

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_many_default.py --index IDX [--config ctx]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import datasets as ds

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from bench_find_overhead import KW, _proc_cpu_s, forget_answers  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402


def _key(result: Any) -> list[tuple[Any, ...]]:
    return [(m.uri, m.score, m.found_by, m.abstract) for m in result.resources]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--batches", type=int, default=30)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--config", choices=["default", "ctx"], default="default")
    args = ap.parse_args()
    cfg = RetrievalConfig() if args.config == "default" else RetrievalConfig(dense_weight=1.0)
    qs = np.load(args.index / "queries.npy").astype(np.float32)
    emb = bl.PreparedQueryEmbedder(384)
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    dflt = Treehop(args.index, embedder=emb, config=cfg, tagger=None)
    plain = Treehop(args.index, embedder=emb, config=cfg, tagger=None, reader_processes=0)
    forced = Treehop(args.index, embedder=emb, config=cfg, tagger=None, reader_processes=1)
    b = args.batch
    warm = [f"q{i}" for i in range(b)]
    for c in (dflt, plain, forced):
        c.find("q0", **KW)
        c.find_many(warm, **KW)  # (the default's first batch starts its worker)
    assert dflt._wait_readers(300) and forced._wait_readers(300), "workers did not start"
    pools = [c._readers[1] for c in (dflt, forced) if c._readers is not None]
    pids = [w.process.pid or 0 for p in pools for w in p._workers]
    for c in (dflt, forced):
        for _ in range(2):
            c.find_many(warm, **KW)
    time.sleep(3)  # (the workers' background checksum pass)
    served0 = sum(pools[0].served.values())
    runs: dict[str, Callable[[list[str]], list[Any]]] = {
        "single": lambda q: [dflt.find(t, **KW) for t in q],
        "default many": lambda q: dflt.find_many(q, **KW),
        "in one process": lambda q: plain.find_many(q, **KW),
        "always split": lambda q: forced.find_many(q, **KW),
    }
    names = list(runs)
    wall: dict[str, list[float]] = {k: [] for k in runs}
    cpu = dict.fromkeys(runs, 0.0)
    gc_s = dict.fromkeys(runs, 0.0)
    gc_full = dict.fromkeys(runs, 0)
    gc_at = [0.0]
    timed: list[str | None] = [None]  # the run being timed (collections outside: not counted)

    def on_gc(phase: str, info: dict[str, int]) -> None:
        run = timed[0]
        if phase == "start":
            gc_at[0] = time.perf_counter()
        elif run is not None:
            gc_s[run] += time.perf_counter() - gc_at[0]
            gc_full[run] += info["generation"] == 2

    gc.callbacks.append(on_gc)
    same = total = 0
    for k in range(args.batches):
        lo = 10 + (k * b) % (len(qs) - 10 - b)
        batch = [f"q{i}" for i in range(lo, lo + b)]
        got: dict[str, list[Any]] = {}
        for name in names[k % 4 :] + names[: k % 4]:
            for c in (dflt, plain, forced):
                forget_answers(c.store)  # type: ignore[arg-type]
            w0 = sum(_proc_cpu_s(p) for p in pids)
            c0, t0 = time.process_time(), time.perf_counter()
            timed[0] = name
            got[name] = runs[name](batch)
            timed[0] = None
            wall[name].append(time.perf_counter() - t0)
            cpu[name] += time.process_time() - c0 + sum(_proc_cpu_s(p) for p in pids) - w0
        for name in names[1:]:
            for r, s in zip(got[name], got["single"], strict=True):
                total += 1
                same += _key(r) == _key(s)
    med = {k: statistics.median(v) for k, v in wall.items()}
    n = args.batches * b
    print(f"{args.config}: {args.batches} batches of {b}, load {os.getloadavg()}")
    for k in names:
        print(
            f"  {k:15s} wall/batch {med[k] * 1e3:6.1f} ms ({med['single'] / med[k]:.2f}x single)"
            f"  CPU/query {cpu[k] * 1e3 / n:.3f} ms ({cpu['single'] / cpu[k]:.2f}x single)"
            f"  GC/query {gc_s[k] * 1e6 / n:5.0f} us ({gc_full[k]} full)"
        )
    gc.callbacks.remove(on_gc)
    print(f"  lists identical to single find()'s: {same}/{total}")
    split = sum(pools[0].served.values()) - served0
    print(f"  default: {split} of {args.batches} batches split over its worker")
    for c in (dflt, plain, forced):
        c.close()


if __name__ == "__main__":
    main()
