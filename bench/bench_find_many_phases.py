"""``find_many`` in phases against the per-query order it replaced, in one process (issue 35
round 8).

Each batch of ``--batch`` queries runs four ways, in a rotating order: single ``find()``s;
``find_many`` with the per-query order (the shared first step, then ``retrieve`` of each
request: the code before the phases, put back for the run); the phases with the cyclic
collector running; the phases with it paused (the library's ``find_many``). Process CPU of
every batch is added up per way (usearch's threads included), with the collector's own time
and collections by generation (``gc.callbacks``), and every way's lists are compared.

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_many_phases.py --index /work/idx/fast3-100k \
        --batches 20 [--config ctx]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from bench_find_overhead import KW, forget_answers  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402

WAYS = ("single", "per_query", "phases_gc_on", "phases")


async def _per_query(
    self: Any, part: Sequence[Any], first: Sequence[Any], resolved: Any = None
) -> list[Any]:
    """The order before the phases: each request's ``retrieve`` in turn."""
    return [await self.retrieve(r, f) for r, f in zip(part, first, strict=True)]


@contextlib.contextmanager
def _no_pause(pause: bool = True) -> Iterator[None]:
    yield


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--config", choices=("default", "ctx"), default="default")
    args = ap.parse_args()
    qs = np.load(args.index / "queries.npy").astype(np.float32)
    store = EmbeddedStore(args.index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    emb = bl.PreparedQueryEmbedder(int(qs.shape[1]))
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    cfg = RetrievalConfig() if args.config == "default" else RetrievalConfig(dense_weight=1.0)
    client = Treehop(embedder=emb, store=store, config=cfg, tagger=None)
    client.find("q0", **KW)  # (the BM25 index loads on the first hybrid search)
    phased, paused = hr.retrieve_in_phases, hr.collector_paused
    cpu = dict.fromkeys(WAYS, 0.0)
    gc_s = dict.fromkeys(WAYS, 0.0)
    gens = {w: [0, 0, 0] for w in WAYS}
    now: list[Any] = [None, 0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if now[0] is None:
            return
        if phase == "start":
            now[1] = time.perf_counter()
        else:
            gc_s[now[0]] += time.perf_counter() - now[1]
            gens[now[0]][info["generation"]] += 1

    gc.callbacks.append(on_gc)
    same = 0
    warm = 2
    b = args.batch
    for r in range(args.batches + warm):
        lo = 10 + (r * b) % (len(qs) - b - 10)
        batch = [f"q{i}" for i in range(lo, lo + b)]
        order = WAYS[r % 4 :] + WAYS[: r % 4]
        got: dict[str, list[Any]] = {}
        for way in order:
            forget_answers(store)
            hr.retrieve_in_phases = _per_query if way == "per_query" else phased  # type: ignore[assignment]
            hr.collector_paused = paused if way == "phases" else _no_pause  # type: ignore[assignment]
            now[0] = way if r >= warm else None
            c0 = time.process_time()
            if way == "single":
                got[way] = [client.find(t, **KW) for t in batch]
            else:
                got[way] = client.find_many(batch, **KW)
            if r >= warm:
                cpu[way] += time.process_time() - c0
            now[0] = None
        lists = [
            [[(m.uri, m.score, m.own_score, str(m.found_by)) for m in x.resources] for x in got[w]]
            for w in WAYS
        ]
        same += all(x == lists[0] for x in lists)
    hr.retrieve_in_phases, hr.collector_paused = phased, paused  # type: ignore[assignment]
    n = args.batches * b
    print(f"{args.config}: {args.batches} batches of {b}, load {os.getloadavg()}")
    for w in WAYS:
        print(
            f"  {w:13s} process CPU {cpu[w] * 1e3 / n:.3f} ms/query, vs single "
            f"{cpu['single'] / cpu[w]:.2f}; collector {gc_s[w] * 1e3 / n:.3f} ms/query, "
            f"collections by generation {gens[w]}"
        )
    print(f"  lists identical across the four ways: {same}/{args.batches + warm} batches")


if __name__ == "__main__":
    main()
