"""Awaited finds over a sync client with reader processes: do concurrent awaits use them?

    OPENBLAS_NUM_THREADS=1 python bench/bench_async_readers.py --index IDX [--concurrency 8]

``IDX`` is an index built by ``bench_find_overhead.py`` (its ``queries.npy`` beside it, e.g.
the 100k one). What an async application sees (a web server or a LangGraph graph awaiting the
LangChain retriever, whose ``ainvoke`` is :func:`treehop.integration_kit.afind`): ``N``
awaits in flight at a time, over (a) a sync ``Treehop(IDX)`` without workers, whose awaits run
on the caller's event loop, one core; (b) ``Treehop(IDX, reader_processes=1)``, whose awaits
run its sync ``find()`` in the loop's executor threads: one call at a time in this process,
the others overflow to the worker. Rounds alternate (a, b, b, a ...) with the same queries;
the result is wall QPS per round and the median ratio, plus a check that both answer alike.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop import integration_kit as kit  # noqa: E402

KW: dict[str, Any] = {"target_uri": bl.TARGET, "limit": 10, "include_directories": False}


async def _round(client: Treehop, names: list[str], concurrency: int) -> tuple[float, list[Any]]:
    """Wall seconds for every query awaited with ``concurrency`` in flight, and the answers."""
    gate = asyncio.Semaphore(concurrency)

    async def one(q: str) -> Any:
        async with gate:
            return await kit.afind(client, q, **KW)

    t0 = time.perf_counter()
    got = await asyncio.gather(*(one(q) for q in names))
    return time.perf_counter() - t0, got


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--processes", type=int, default=1)
    args = ap.parse_args()
    qs = np.load(args.index / "queries.npy").astype(np.float32)[: args.queries]
    emb = bl.PreparedQueryEmbedder(384)
    names = [f"q{i}" for i in range(len(qs))]
    for name, q in zip(names, qs, strict=True):
        emb.vectors[name] = q
    cfg = RetrievalConfig()
    t0 = time.perf_counter()
    pooled = Treehop(
        args.index, embedder=emb, config=cfg, tagger=None, reader_processes=args.processes
    )
    assert pooled._wait_readers(300), "the reader processes did not start"
    print(f"workers started in {time.perf_counter() - t0:.1f}s", flush=True)
    plain = Treehop(args.index, embedder=emb, config=cfg, tagger=None)
    # warm both (BM25 load, the workers' first reads and background checksum pass)
    for _ in range(2):
        asyncio.run(_round(plain, names[:40], args.concurrency))
        asyncio.run(_round(pooled, names[:40], args.concurrency))
    time.sleep(30)
    qps: dict[str, list[float]] = {"native": [], "pooled": []}
    same = total = 0
    for r in range(args.rounds):
        order = [("native", plain), ("pooled", pooled)]
        if r % 2:
            order.reverse()
        answers: dict[str, list[Any]] = {}
        for label, client in order:
            wall, got = asyncio.run(_round(client, names, args.concurrency))
            qps[label].append(len(names) / wall)
            answers[label] = [[m.uri for m in res.contexts()] for res in got]
        same += sum(a == b for a, b in zip(answers["native"], answers["pooled"], strict=True))
        total += len(names)
        print(
            f"round {r}: native {qps['native'][-1]:.0f} QPS, pooled {qps['pooled'][-1]:.0f} QPS "
            f"(load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    ratios = [p / n for p, n in zip(qps["pooled"], qps["native"], strict=True)]
    print(
        f"{args.concurrency} awaits in flight, {len(names)} queries a round, {args.rounds} "
        f"rounds: native median {statistics.median(qps['native']):.0f} QPS, with "
        f"{args.processes} reader process(es) {statistics.median(qps['pooled']):.0f} QPS; "
        f"ratio median {statistics.median(ratios):.2f} (per round "
        f"{', '.join(f'{x:.2f}' for x in ratios)}); same lists {same}/{total}"
    )
    plain.close()
    pooled.close()


if __name__ == "__main__":
    main()
