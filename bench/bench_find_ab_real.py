"""A load-robust A/B of ``find()`` on a real benchmark tree (a ``bench_tree`` set, default
config, tree context on): two source trees, one worker process each, on the same saved index,
fed the same queries alternately one at a time; each reports the find's thread CPU.

    python bench/bench_find_ab_real.py django /tmp/idx/django ../other-checkout
    python bench/bench_find_ab_real.py flask /tmp/idx/flask ../other-checkout

The index is built at ``INDEX`` on first use (with this checkout's code), or reused: an index
``find_results_diff.py dump --index-root ROOT`` made serves as ``ROOT/<set>``. Medians of the
dev and test samples' queries (``--max-queries`` each; the first 10 warm caches up), a first
pass (nodes not built yet) and a second one over the same queries. Needs
``TREEHOP_BENCH_CACHE`` as ``bench_tree.py`` does. :mod:`bench_find_profile`'s ``--ab`` does
the same on the synthetic 100k tree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def worker(name: str, index: Path, max_queries: int) -> None:
    """Answer query numbers on stdin with the find's thread CPU milliseconds."""
    import bench_tree as bt
    import datasets as ds
    from treehop import RetrievalConfig, Treehop

    cached = ds.default_embedder()
    bench = bt.load_set(name, cached)
    if bench is None:
        raise SystemExit(f"set {name} is not available here")
    emb = bt.MemoEmbedder(cached)
    fresh = not index.exists()
    th = Treehop(str(index), embedder=emb, config=RetrievalConfig())
    if fresh:
        bench.ingest(th)
        th.store.save()
    dev, test = bt.sampled_halves(bench.queries, max_queries)
    queries = dev + test
    emb.prepare([q.text for q in queries])
    wait = getattr(th.store, "wait_verified", None)
    if wait is not None:  # the background checksum pass would compete for the GIL
        wait()
    print(len(queries), flush=True)
    for line in sys.stdin:
        q = queries[int(line)]
        c0 = time.thread_time()
        th.find(q.text, target_uri=q.scope, limit=10)
        print((time.thread_time() - c0) * 1e3, flush=True)


def ab(name: str, index: Path, other: Path, max_queries: int) -> None:
    trees = {"this": HERE.parent, "other": other}
    if not index.exists():  # built once, by this checkout, before both workers open it
        build = subprocess.Popen(
            [sys.executable, __file__, name, str(index), str(other), "--worker"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
        )
        build.wait()
    procs = {}
    argv = [sys.executable, __file__, name, str(index), str(other), "--worker"]
    argv += ["--max-queries", str(max_queries)]
    for label, root in trees.items():
        env = dict(os.environ, PYTHONPATH=f"{root}/retrieval:{root}/integrations")
        procs[label] = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    counts = []
    for p in procs.values():
        assert p.stdout is not None
        counts.append(int(p.stdout.readline()))
    n = min(counts)
    for label in ("first pass", "second pass"):
        cpu: dict[str, list[float]] = {k: [] for k in procs}
        for i in range(n):
            order = list(procs) if i % 2 == 0 else list(procs)[::-1]
            for k in order:
                p = procs[k]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(f"{i}\n")
                p.stdin.flush()
                cpu[k].append(float(p.stdout.readline()))
        med = {k: statistics.median(v[10:]) for k, v in cpu.items()}
        print(
            f"{name} {label}: median find() thread CPU ms  this {med['this']:.2f}  "
            f"other {med['other']:.2f}  this/other {med['this'] / med['other']:.3f}"
        )
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("set", help="a bench_tree set: django, flask, pytest, locomo, ...")
    ap.add_argument("index", type=Path, help="a saved index of that set (built if absent)")
    ap.add_argument("other", type=Path, help="the other checkout")
    ap.add_argument("--max-queries", type=int, default=200, help="per half (dev, test)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.set, args.index, args.max_queries)
    else:
        ab(args.set, args.index, args.other, args.max_queries)


if __name__ == "__main__":
    main()
