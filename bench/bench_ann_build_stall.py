"""Finds while the background HNSW graph is built: how long a find waits for the graph's
write lock (helper attacks52's repro: many identical vectors, as a chat's "ok" / "thanks").

    OPENBLAS_NUM_THREADS=1 python bench/bench_ann_build_stall.py [--turns 80000]
        [--seconds 40] [--hold-s 0.25] [--unfair] [--distinct] [--no-dedupe]

One session of ``--turns`` turns is written by ``add_messages`` with an embedder of 7 distinct
vectors (``--distinct``: every vector its own), past the store's ANN threshold, so a
background worker builds the graph chunk by chunk under its write lock; meanwhile one find
every 50 ms for ``--seconds``. Prints find p50 / p95 / max, the write lock's holds and the
searches' waits for it. ``--hold-s`` sets ``_ann.HOLD_S`` (1e9: every chunk 1,024 rows, as
before stop 52); ``--unfair``: the writer takes the lock again before searches that waited
(the lock before stop 52); ``--no-dedupe``: every row its own graph node (``_ann.DEDUPE``
off: exact duplicates inserted, as before stop 53). Also prints how long the graph took to
cover every row, and its nodes.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder
from treehop.stores import _ann


class Repeating(BaseEmbedder):
    """Seven distinct 16-dimensional vectors in turn (``distinct``: one per text)."""

    name = "repeating"
    dimension = 16

    def __init__(self, distinct: bool) -> None:
        self.distinct = distinct
        self.seen = 0

    def embed(self, texts: Sequence[str]) -> Any:
        idx = np.arange(self.seen, self.seen + len(texts))
        self.seen += len(texts)
        if self.distinct:
            v = np.random.default_rng(idx[0] if len(idx) else 0).standard_normal((len(texts), 16))
        else:
            v = np.ones((len(texts), 16))
            v[:, 0] = idx % 7 + 1
        v = v.astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=80_000)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--hold-s", type=float, default=None)
    ap.add_argument("--unfair", action="store_true")
    ap.add_argument("--distinct", action="store_true")
    ap.add_argument("--no-dedupe", action="store_true")
    args = ap.parse_args()
    _ann.DEDUPE = not args.no_dedupe
    if args.hold_s is not None:
        _ann.HOLD_S = args.hold_s
    holds: list[float] = []
    waits: list[float] = []
    lock_cls = _ann.RWLock
    acquire_write, release_write, acquire_read = (
        lock_cls.acquire_write,
        lock_cls.release_write,
        lock_cls.acquire_read,
    )
    started: dict[int, float] = {}

    def unfair_acquire_write(self: Any) -> None:
        with self._cond:
            while self._writer or self._readers:
                self._cond.wait()
            self._writer = True

    def timed_acquire_write(self: Any) -> None:
        (unfair_acquire_write if args.unfair else acquire_write)(self)
        started[id(self)] = time.perf_counter()

    def timed_release_write(self: Any) -> None:
        holds.append(time.perf_counter() - started.pop(id(self), time.perf_counter()))
        release_write(self)

    def timed_acquire_read(self: Any) -> None:
        t = time.perf_counter()
        acquire_read(self)
        if threading.current_thread() is threading.main_thread():
            waits.append(time.perf_counter() - t)

    lock_cls.acquire_write = timed_acquire_write  # type: ignore[method-assign]
    lock_cls.release_write = timed_release_write  # type: ignore[method-assign]
    lock_cls.acquire_read = timed_acquire_read  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as d:
        c = Treehop(Path(d) / "idx", embedder=Repeating(args.distinct), tagger=None)
        msgs = [{"content": f"message {i} hello", "speaker": "Ann"} for i in range(args.turns)]
        t = time.perf_counter()
        c.add_messages(msgs, session_id="s")
        print(f"turns {args.turns}: written in {time.perf_counter() - t:.1f} s")
        lat: list[float] = []
        start = time.perf_counter()
        end = start + args.seconds
        built: float | None = None
        store: Any = c.store  # (the embedded store, for its graph)
        while time.perf_counter() < end:
            t = time.perf_counter()
            c.find("message 5 hello", context_type="memory", limit=5)
            lat.append(time.perf_counter() - t)
            ann = store._ann
            if built is None and ann is not None and ann.upto >= store._snap.n:
                built = time.perf_counter() - start
            time.sleep(0.05)
        ann = store._ann
        nodes = "none" if ann is None else f"{ann.nodes:,} nodes of {ann.count:,} labels"
        took = "not within the finds" if built is None else f"{built:.1f} s"
        print(f"graph: {nodes}; covered every row after {took}")
        c.close()
    f, h, w = (np.array(x) * 1000 for x in (lat, holds, waits))
    print(
        f"HOLD_S {_ann.HOLD_S:g}{' unfair' if args.unfair else ''}"
        f"{' no-dedupe' if args.no_dedupe else ''}: finds {f.size} "
        f"p50 {np.median(f):.0f} / p95 {np.percentile(f, 95):.0f} / max {f.max():.0f} ms; "
        f"write holds {h.size} p50 {np.median(h) if h.size else 0:.0f} / max "
        f"{h.max() if h.size else 0:.0f} ms; a search's wait max {w.max() if w.size else 0:.0f}"
        f" ms, over 50 ms {int((w > 50).sum())}"
    )


if __name__ == "__main__":
    main()
