"""A memory find on one long session: how long ``find(q, context_type="memory")`` takes and how
many turn nodes it reads to give each turn hit its neighbouring turns (helper attacks50's open
item, worked on by helper memctx).

One conversation session of N turns written by ``add_messages`` (synthetic chat lines over a
small vocabulary, BagOfWords embedder: no model download), then a fixed set of queries, each
asked ``--repeat`` times after one warm-up find. A turn hit's slot carries the turns around it
(:mod:`treehop.memory_context`); reading them must not cost the whole session.

    OPENBLAS_NUM_THREADS=1 python bench/bench_memory_neighbours.py [--turns 1000,10000,100000]

Prints per size: turns, the first find after the write (ms: per-snapshot caches are built
then), find p50 / p95 (ms), turn nodes read per find (nodes the store built during the find
whose ``kind`` is ``turn``), the find's ``nodes_scored``, a hash of the warm-up finds'
results (URIs, scores, carried turns and their scores) to compare two checkouts, and how many
repeated finds gave results other than their query's warm-up find (past 50,000 rows the
HNSW graph is built in the background after the write, and a search of a wide scope reads it
as far as it goes: the script waits for it, ``--no-wait`` does not).

Last, ``--appends`` times one turn appended to the session, then a find (the first on the
snapshot the write published): its median is the last column.

``--check`` (this branch on): each query's results against the whole-session path with its
bound lifted (the right neighbours); ``--exact``: no HNSW graph, every search exact (the
graph is built by threads in the background: results past 50,000 rows differ from run to
run, on main as here).

To measure another checkout with this script: ``PYTHONPATH=/that/checkout/retrieval``.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from treehop import Treehop
from treehop.models import FindResult

from treehop_test_doubles import BagOfWordsEmbedder

WORDS = str.split(
    "pottery workshop marathon berlin garden piano concert recipe hiking camping painting "
    "adoption counselor school museum guitar novel puppy beach birthday festival bakery "
    "camera sunset violin mountain library lake soccer chess yoga dinner wedding trip"
)
QUERIES = [
    "pottery workshop last saturday",
    "training for the berlin marathon",
    "adoption counselor meeting",
    "guitar concert with friends",
    "camping trip to the lake",
]
SPEAKERS = ("Caroline", "Melanie")


def chat(n: int) -> list[dict[str, Any]]:
    """``n`` turns, two speakers, each line three vocabulary words and its number (so the
    texts differ), one minute apart."""
    out = []
    for i in range(n):
        a, b, c = (WORDS[(i * k + k * k) % len(WORDS)] for k in (3, 7, 11))
        out.append(
            {
                "speaker": SPEAKERS[i % 2],
                "content": f"We talked about the {a} and the {b}, then {c} again ({i}).",
                "timestamp": 1_683_000_000 + 60 * i,
            }
        )
    return out


def digest(res: FindResult) -> str:
    """The results as a find returns them: each slot's URI and score, and its carried turns
    (URI, score, position, carried flag), hashed."""
    h = hashlib.sha256()
    for m in res.memories:
        h.update(f"{m.uri}|{m.score!r}|".encode())
        for c in m.collapsed:
            h.update(f"{c.uri}|{c.score!r}|{c.position}|{c.carried};".encode())
    return h.hexdigest()[:16]


def counting(c: Treehop) -> Callable[[], int]:
    """Count the turn nodes the embedded store builds (``_node``: a node read from its row)
    from now on; returns a reader of the count."""
    store: Any = c.store
    orig = store._node
    seen = [0]

    def node(s: Any, r: int) -> Any:
        n = orig(s, r)
        if n.metadata.get("kind") == "turn":
            seen[0] += 1
        return n

    store._node = node
    return lambda: seen[0]


def check_reference(c: Treehop) -> str:
    """Each query's results against the path without windows (each session searched whole,
    ``_window_reader`` answering ``None``) with its 10,000-turn bound lifted: the right
    neighbours. ``"n/m"``: how many of the queries gave identical results (slots, scores,
    carried turns, positions, flags). Exact only where that search is (no HNSW graph:
    ``--exact``)."""
    from treehop import hierarchical_retriever as hr

    same = 0
    for q in QUERIES:
        new = digest(c.find(q, context_type="memory"))
        saved = hr.HierarchicalRetriever._window_reader, hr.MAX_SESSION_FETCH
        hr.HierarchicalRetriever._window_reader = lambda *a: None  # type: ignore[method-assign]
        hr.MAX_SESSION_FETCH = 10**7
        try:
            old = digest(c.find(q, context_type="memory"))
        finally:
            hr.HierarchicalRetriever._window_reader, hr.MAX_SESSION_FETCH = saved  # type: ignore[method-assign]
        same += new == old
    return f"{same}/{len(QUERIES)}"


def run(
    n: int,
    repeat: int,
    no_wait: bool = False,
    appends: int = 3,
    check: bool = False,
    exact: bool = False,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        store = None
        if exact:  # no HNSW graph: every search exact, so runs repeat to the bit
            from treehop.stores.embedded import EmbeddedStore

            store = EmbeddedStore(Path(d) / "idx", ann_min_rows=None)
        c = Treehop(Path(d) / "idx", embedder=BagOfWordsEmbedder(), tagger=None, store=store)
        try:
            t0 = time.perf_counter()
            c.add_messages(chat(n), conversation_id="c1", session_id="s1")
            write_s = time.perf_counter() - t0
            wait = getattr(c.store, "wait_ann", None)
            if wait is not None and not no_wait:
                wait()  # (past 50,000 rows: the graph built, so that no repeat reads it half-built)
            read = counting(c)
            times: list[float] = []
            nodes: list[int] = []
            scored: list[int] = []
            h = hashlib.sha256()
            changed = 0
            t1 = time.perf_counter()
            c.find(QUERIES[0], context_type="memory")  # the first find after the write
            first_ms = 1000 * (time.perf_counter() - t1)
            for q in QUERIES:
                first = c.find(q, context_type="memory")  # warm-up (caches, first parse)
                h.update(digest(first).encode())
                for _ in range(repeat):
                    before = read()
                    t1 = time.perf_counter()
                    res = c.find(q, context_type="memory")
                    times.append(time.perf_counter() - t1)
                    nodes.append(read() - before)
                    scored.append(res.query_results[0].nodes_scored if res.query_results else 0)
                    changed += digest(res) != digest(first)
            same = check_reference(c) if check else None
            after_write: list[float] = []
            for i in range(appends):  # one turn appended, then the first find on the new snapshot
                c.add_messages(chat(n + i + 1)[-1:], conversation_id="c1", session_id="s1")
                t1 = time.perf_counter()
                c.find(QUERIES[i % len(QUERIES)], context_type="memory")
                after_write.append(time.perf_counter() - t1)
            times.sort()
            return {
                "turns": n,
                "write_s": write_s,
                "p50": 1000 * statistics.median(times),
                "p95": 1000 * times[min(len(times) - 1, int(0.95 * len(times)))],
                "nodes": statistics.median(nodes),
                "scored": statistics.median(scored),
                "hash": h.hexdigest()[:16],
                "changed": changed,
                "same": same,
                "first_ms": first_ms,
                "append_ms": 1000 * statistics.median(after_write) if after_write else 0.0,
            }
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=10, help="finds per query after a warm-up")
    ap.add_argument(
        "--appends", type=int, default=3, help="turns appended one at a time, each then a find"
    )
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare each query with the whole-session path, its bound lifted (a branch only)",
    )
    ap.add_argument("--exact", action="store_true", help="no HNSW graph (ann_min_rows=None)")
    ap.add_argument(
        "--no-wait",
        action="store_true",
        help="time the finds while the HNSW graph is still built in the background",
    )
    args = ap.parse_args()
    for n in (int(x) for x in args.turns.split(",")):
        r = run(n, args.repeat, args.no_wait, args.appends, args.check, args.exact)
        print(
            f"turns {r['turns']:>7,}  write {r['write_s']:5.1f} s  first find "
            f"{r['first_ms']:6.1f} ms  find p50 {r['p50']:6.1f} ms  p95 {r['p95']:6.1f} ms  "
            f"turn nodes read/find {r['nodes']:>6,.0f}  nodes_scored {r['scored']:>6,.0f}  "
            f"results {r['hash']}  (repeats that differed: {r['changed']})  "
            f"find after a 1-turn append p50 {r['append_ms']:6.1f} ms"
            + (f"  same as the whole-session reference: {r['same']}" if r["same"] else ""),
            flush=True,
        )


if __name__ == "__main__":
    main()
