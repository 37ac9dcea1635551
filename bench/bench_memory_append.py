"""Appending to a long memory session: how long ``add_messages`` of 1 and 2 new messages takes
on a session of N turns, and how many stored nodes it reads (helper append).

A chat app appends one or two messages per user turn, forever: the cost of an append must not
grow with the session. One conversation session of N turns is built with ``add_messages`` in
batches (synthetic chat lines, ``bench_memory_neighbours.chat``; BagOfWords embedder: no model
download), then ``--repeat`` appends of 1 message and ``--repeat`` of 2, alternating, after
one warm-up append each.

    OPENBLAS_NUM_THREADS=1 python bench/bench_memory_append.py [--turns 1000,10000,100000]
        [--tagger] [--repeat 15]

Prints per size: turns, the build time, append p50 / p95 (ms) of 1 and of 2 messages, and the
median number of nodes read from the store per append ("nodes read": nodes returned by the
store's ``get`` / ``children`` / ``children_fields`` / ``iter_nodes`` and the rows its
``family_since`` returns, counted on the store object, whatever calls them: the memory
module, the writer, the tagger). ``--tagger``: the default keyword tagger
(``tagger="auto"``), which aggregates a directory's children's automatic tags; without it
``tagger=None`` (as bench_memory_neighbours).

Last, a hash of the nodes the appends wrote (each turn's URI, text, metadata and the session
node's abstract, overview, metadata and tags after every append) to compare two checkouts: run it
with ``PYTHONPATH=/that/checkout/retrieval`` for the other one.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_memory_neighbours import chat
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

BATCH = 10_000
"""Turns per ``add_messages`` call while the session is built."""


def counting(store: Any) -> Callable[[], int]:
    """Count the nodes the store hands out from now on (``get``, ``children``,
    ``children_fields``, ``iter_nodes``, wrapped on the instance); returns a reader."""
    seen = [0]

    def wrap(name: str, many: Callable[[Any], int]) -> None:
        orig = getattr(store, name, None)
        if orig is None:
            return

        def call(*a: Any, **k: Any) -> Any:
            out = orig(*a, **k)
            if name == "iter_nodes":
                out = list(out)
            seen[0] += many(out)
            return out

        setattr(store, name, call)

    wrap("get", lambda out: sum(n is not None for n in out))
    wrap("children", len)
    wrap("children_fields", len)
    wrap("family_since", lambda out: len(out[1]))
    wrap("iter_nodes", len)
    return lambda: seen[0]


def written(c: Treehop, uris: list[str], session: str) -> str:
    """The appended turns as stored (URI, content, metadata, tags) and the session node
    (abstract, overview, metadata, tags), hashed. The tags in their stored order: a
    directory's ``auto:`` tags are ranked (helper tagcount; helper append hashed them sorted)."""
    h = hashlib.sha256()
    for n in c.store.get([*uris, session]):
        assert n is not None
        h.update(f"{n.uri}|{n.abstract}|{n.overview}|{n.content}|".encode())
        h.update(json.dumps([n.metadata, n.tags], sort_keys=True).encode())
    return h.hexdigest()


def run(n: int, repeat: int, tagger: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        c = Treehop(
            Path(d) / "idx", embedder=BagOfWordsEmbedder(), tagger="auto" if tagger else None
        )
        try:
            t0 = time.perf_counter()
            lines = chat(n + 2 * (repeat + 1) * 2)
            for lo in range(0, n, BATCH):
                c.add_messages(
                    lines[lo : min(n, lo + BATCH)], conversation_id="c1", session_id="s1"
                )
            build_s = time.perf_counter() - t0
            read = counting(c.store)
            at = n
            times: dict[int, list[float]] = {1: [], 2: []}
            nodes: dict[int, list[int]] = {1: [], 2: []}
            h = hashlib.sha256()
            for i in range(repeat + 1):
                for k in (1, 2):
                    before = read()
                    t1 = time.perf_counter()
                    res = c.add_messages(lines[at : at + k], conversation_id="c1", session_id="s1")
                    dt = time.perf_counter() - t1
                    got = read() - before
                    at += k
                    if i:  # the first of each is a warm-up
                        times[k].append(dt)
                        nodes[k].append(got)
                    full = [c.aio.resolve(u) for u in res.turn_uris]
                    h.update(written(c, full, c.aio.resolve(res.session_uri)).encode())
            out: dict[str, Any] = {"turns": n, "build_s": build_s, "hash": h.hexdigest()[:16]}
            for k in (1, 2):
                ts = sorted(times[k])
                out[f"p50_{k}"] = 1000 * statistics.median(ts)
                out[f"p95_{k}"] = 1000 * ts[min(len(ts) - 1, int(0.95 * len(ts)))]
                out[f"nodes_{k}"] = statistics.median(nodes[k])
            return out
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=15, help="timed appends of each size")
    ap.add_argument("--tagger", action="store_true", help="the default keyword tagger")
    args = ap.parse_args()
    for n in (int(x) for x in args.turns.split(",")):
        r = run(n, args.repeat, args.tagger)
        print(
            f"turns {r['turns']:>7,}  build {r['build_s']:6.1f} s  "
            f"append 1 p50 {r['p50_1']:7.1f} ms p95 {r['p95_1']:7.1f} ms "
            f"nodes read {r['nodes_1']:>7,.0f}  |  "
            f"append 2 p50 {r['p50_2']:7.1f} ms p95 {r['p95_2']:7.1f} ms "
            f"nodes read {r['nodes_2']:>7,.0f}  |  written {r['hash']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
