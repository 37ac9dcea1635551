"""``find_many``'s batched steps, each against the per-answer way it replaces, interleaved in
one process (issue 35 round 5).

Each variant switches one or more batched steps back to their per-answer form (the same
answers: the script checks every list against the first variant's); batches of
``--batch`` queries run under every variant in a rotating order, each with process CPU
per query counted (usearch's graph threads included), and one ``find()`` at a time of the
same batch alongside, so that the ratio ``find_many / single`` of each variant comes from
the same minutes of a loaded machine.

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_many_steps.py --index IDX --batches 12

``IDX``: an index ``bench_find_overhead.py`` reads (its ``queries.npy`` beside it).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datasets as ds

ds.ensure_treehop_importable()

import bench_find_overhead as bfo  # noqa: E402
import bench_latency as bl  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402
from treehop.stores.embedded import search_paths as sp  # noqa: E402


def _per_answer_columns(self: Any, s: Any, items: Any, matches: Any) -> list[Any]:
    """Round 4's way: each answer's columns in a call of its own."""
    return [self._columns(s, *item, matches, False) for item in items]


@contextmanager
def per_answer_columns() -> Iterator[None]:
    real = sp._SearchPaths._columns_many
    sp._SearchPaths._columns_many = _per_answer_columns  # type: ignore[method-assign]
    try:
        yield
    finally:
        sp._SearchPaths._columns_many = real  # type: ignore[method-assign]


@contextmanager
def batched() -> Iterator[None]:
    yield


@contextmanager
def gc_paused() -> Iterator[None]:
    """Not a library step: the batched code with Python's cyclic collector paused for the
    batch, to size what the collector costs a batch (its results and ~30k containers per 32
    queries stay alive until it returns)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


VARIANTS: dict[str, Callable[[], Any]] = {
    "batched": batched,
    "per-answer columns": per_answer_columns,
}
if os.environ.get("BENCH_GC_VARIANT"):
    VARIANTS["batched, gc paused"] = gc_paused


def _listing(res: Any) -> list[tuple[Any, ...]]:
    return [(m.uri, m.score, m.own_score, m.found_by) for m in res.resources]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--configs", default="ctx,default")
    args = ap.parse_args()

    store = EmbeddedStore(args.index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    qs = np.load(args.index / "queries.npy").astype(np.float32)
    emb = bl.PreparedQueryEmbedder(384)
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    configs = {
        "ctx": RetrievalConfig(dense_weight=1.0),
        "default": RetrievalConfig(),
    }
    clients = {
        name: Treehop(embedder=emb, store=store, config=configs[name], tagger=None)
        for name in args.configs.split(",")
    }
    kw = bfo.KW
    for c in clients.values():  # BM25 loads, caches warm: not timed
        c.find_many([f"q{i}" for i in range(args.batch)], **kw)
    names = list(VARIANTS)
    cpu: dict[tuple[str, str], list[float]] = {}
    same = total = 0
    b = args.batch
    lo_max = len(qs) - b
    for k in range(args.batches):
        lo = 10 + (k * b) % max(lo_max - 10, 1)
        batch = [f"q{i}" for i in range(lo, lo + b)]
        for label, client in clients.items():
            order = ["single", *names[k % len(names) :], *names[: k % len(names)]]
            ref: list[list[tuple[Any, ...]]] | None = None
            for v in order:
                bfo.forget_answers(store)
                if v == "single":
                    c0 = time.process_time()
                    for t in batch:
                        client.find(t, **kw)
                else:
                    with VARIANTS[v]():
                        c0 = time.process_time()
                        res = client.find_many(batch, **kw)
                    lists = [_listing(r) for r in res]
                    if ref is None:
                        ref = lists
                    else:
                        total += len(lists)
                        same += sum(a == r for a, r in zip(lists, ref, strict=True))
                cpu.setdefault((label, v), []).append((time.process_time() - c0) * 1e3 / b)
    print(f"load: {os.getloadavg()}; {args.batches} batches of {b}, process CPU ms per query")
    for label in clients:
        one = statistics.median(cpu[(label, "single")])
        print(f"  {label}: single find() {one:.3f}")
        for v in names:
            m = statistics.median(cpu[(label, v)])
            print(f"    find_many {v:22s} {m:.3f}  ({one / m:.2f}x single)")
    print(f"  lists identical across variants: {same}/{total}")


if __name__ == "__main__":
    main()
