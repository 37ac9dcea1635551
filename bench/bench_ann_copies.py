"""The HNSW graph over memory turns of which a share are exact copies of a few vectors (a
chat's "ok" / "thanks"): built with the copies as aliases of one node (``_ann.DEDUPE``, stop
53) and with every row its own node (before), side by side in one process.

    OPENBLAS_NUM_THREADS=1 python bench/bench_ann_copies.py [--share 0.1] [--turns 80000]
        [--queries 60]

Two stores of the same ``--turns`` turns (16-dimensional vectors, ``--share`` of them copies of
20 vectors, the rest each its own), each graph built to the end (``wait_ann``: its wall time
and the process CPU meanwhile); then ``--queries`` finds, alternating between the stores,
each timed in thread CPU, and the same find on the exact path (the graph store with
``ann_min_rows`` off): how many answers (URIs in order) equal the exact path's.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder
from treehop.stores import _ann


class Mixed(BaseEmbedder):
    """A random 16-dimensional vector per text (seeded by the text: the same text, the same
    vector, in either store and on every call), ``share`` of them one of 20 fixed vectors."""

    name = "mixed"
    dimension = 16

    def __init__(self, share: float) -> None:
        self.share = share
        self.pool = np.random.default_rng(1).standard_normal((20, 16))

    def embed(self, texts: Sequence[str]) -> Any:
        v = np.empty((len(texts), 16))
        for i, t in enumerate(texts):
            rng = np.random.default_rng(zlib.crc32(t.encode()))
            v[i] = rng.standard_normal(16)
            if rng.random() < self.share:
                v[i] = self.pool[rng.integers(0, 20)]
        v = v.astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _unit(m: Any) -> Any:
    v = np.asarray(m).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def forget(store: Any) -> None:
    """Drop the snapshot's kept query scores (not its query-independent keys)."""
    cache = store._snap.cache
    for key in [k for k in cache if k and k[0] in ("scored", "dense", "all")]:
        cache.pop(key, None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--turns", type=int, default=80_000)
    ap.add_argument("--queries", type=int, default=60)
    args = ap.parse_args()
    msgs = [{"content": f"message {i} hello", "speaker": "Ann"} for i in range(args.turns)]
    with tempfile.TemporaryDirectory() as d:
        clients: dict[bool, Treehop] = {}
        for dedupe in (True, False):
            _ann.DEDUPE = dedupe
            c = Treehop(Path(d) / f"idx{int(dedupe)}", embedder=Mixed(args.share), tagger=None)
            c.add_messages(msgs, session_id="s")
            t, cpu = time.perf_counter(), time.process_time()
            embedded: Any = c.store
            embedded.wait_ann()
            ann: Any = embedded._ann
            print(
                f"share {args.share} dedupe {dedupe}: {ann.nodes:,} nodes of {ann.count:,} "
                f"labels, built in {time.perf_counter() - t:.1f} s wall, "
                f"{time.process_time() - cpu:.1f} s CPU"
            )
            clients[dedupe] = c
        lat: dict[bool, list[float]] = {True: [], False: []}
        exact = {True: 0, False: 0}
        differ: dict[bool, list[int]] = {True: [], False: []}
        pool = Mixed(args.share)
        copied = [
            i
            for i in range(args.queries)
            if (pool.embed([f"message {i * 7} hello"])[0] == _unit(pool.pool)).all(axis=1).any()
        ]
        for i in range(args.queries):
            q = f"message {i * 7} hello"
            for dedupe, c in clients.items():
                t = time.thread_time()
                got = [m.uri for m in c.find(q, context_type="memory", limit=5).contexts()]
                lat[dedupe].append(time.thread_time() - t)
                store: Any = c.store
                keep, store.ann_min_rows = store.ann_min_rows, None
                forget(store)  # (the graph step's kept scores: a narrow search may read them)
                try:
                    want = [m.uri for m in c.find(q, context_type="memory", limit=5).contexts()]
                finally:
                    store.ann_min_rows = keep
                    forget(store)
                exact[dedupe] += got == want
                if got != want:
                    differ[dedupe].append(i)
        for dedupe in (True, False):
            ms = np.array(lat[dedupe]) * 1000
            print(
                f"dedupe {dedupe}: find thread CPU p50 {np.median(ms):.1f} / mean "
                f"{ms.mean():.1f} ms; answers equal to the exact path's {exact[dedupe]} of "
                f"{args.queries} (differing: queries {differ[dedupe]})"
            )
        print(f"queries whose vector is one of the 20 copied ones: {copied}")
        for c in clients.values():
            c.close()


if __name__ == "__main__":
    main()
