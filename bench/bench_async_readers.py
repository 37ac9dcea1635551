"""Awaited finds over a sync client with reader processes: do concurrent awaits use them?

    OPENBLAS_NUM_THREADS=1 python bench/bench_async_readers.py --index IDX [--concurrency 8]

``IDX`` is an index built by ``bench_find_overhead.py`` (its ``queries.npy`` beside it, e.g.
the 100k one). What an async application sees (a web server or a LangGraph graph awaiting the
LangChain retriever, whose ``ainvoke`` is :func:`treehop.integration_kit.afind`): ``N``
awaits in flight at a time, over (a) a sync ``Treehop(IDX)`` without workers, whose awaits run
on the caller's event loop, one core; (b) ``Treehop(IDX, reader_processes=1)``, whose awaits
run its sync ``find()`` in the loop's executor threads: one call at a time in this process,
the others overflow to the worker; (c) an ``AsyncTreehop(IDX, reader_processes=1)`` awaited
directly (a FastAPI or LangGraph application on the async client): one await at a time runs
on the loop, the concurrent ones overflow to the worker (the wait in a thread). Rounds rotate
(a, b, c; b, c, a; ...) with the same queries; the result is wall QPS per round and the
median ratio of (b) and (c) to (a), plus a check that all answer alike.
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
from treehop import AsyncTreehop, RetrievalConfig, Treehop  # noqa: E402
from treehop import integration_kit as kit  # noqa: E402

KW: dict[str, Any] = {"target_uri": bl.TARGET, "limit": 10, "include_directories": False}


async def _round(
    client: Treehop | AsyncTreehop, names: list[str], concurrency: int
) -> tuple[float, list[Any]]:
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
    ap.add_argument("--settle", type=float, default=30.0, help="seconds idle after warm-up")
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
    t0 = time.perf_counter()
    aio = AsyncTreehop(
        args.index, embedder=emb, config=cfg, tagger=None, reader_processes=args.processes
    )
    assert aio._pool.wait(300), "the async client's reader processes did not start"
    print(f"async client's workers started in {time.perf_counter() - t0:.1f}s", flush=True)
    plain = Treehop(args.index, embedder=emb, config=cfg, tagger=None)
    clients: dict[str, Treehop | AsyncTreehop] = {
        "native": plain,
        "pooled": pooled,
        "async": aio,
    }
    # warm all (BM25 load, the workers' first reads and background checksum pass)
    for _ in range(2):
        for client in clients.values():
            asyncio.run(_round(client, names[:40], args.concurrency))
    time.sleep(args.settle)
    qps: dict[str, list[float]] = {label: [] for label in clients}
    same = {label: 0 for label in clients}
    total = 0
    labels = list(clients)
    for r in range(args.rounds):
        order = labels[r % 3 :] + labels[: r % 3]
        answers: dict[str, list[Any]] = {}
        for label in order:
            wall, got = asyncio.run(_round(clients[label], names, args.concurrency))
            qps[label].append(len(names) / wall)
            answers[label] = [[m.uri for m in res.contexts()] for res in got]
        for label in labels:
            same[label] += sum(
                a == b for a, b in zip(answers["native"], answers[label], strict=True)
            )
        total += len(names)
        print(
            f"round {r}: "
            + ", ".join(f"{label} {qps[label][-1]:.0f} QPS" for label in labels)
            + f" (load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
    print(
        f"{args.concurrency} awaits in flight, {len(names)} queries a round, {args.rounds} "
        f"rounds, {args.processes} reader process(es): native median "
        f"{statistics.median(qps['native']):.0f} QPS"
    )
    for label, what in (
        ("pooled", "sync Treehop with workers, awaited via integration_kit.afind"),
        ("async", "AsyncTreehop with workers, awaited directly"),
    ):
        ratios = [p / n for p, n in zip(qps[label], qps["native"], strict=True)]
        print(
            f"  {what}: median {statistics.median(qps[label]):.0f} QPS, ratio to native "
            f"median {statistics.median(ratios):.2f} (per round "
            f"{', '.join(f'{x:.2f}' for x in ratios)}); same lists {same[label]}/{total}"
        )
    plain.close()
    pooled.close()
    asyncio.run(aio.close())


if __name__ == "__main__":
    main()
