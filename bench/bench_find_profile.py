"""Where a ``find()`` spends its time on bench_store's synthetic tree, and a load-robust A/B
of two source trees.

    python bench/bench_find_profile.py --index /tmp/idx100k --profile on    # cProfile, context on
    python bench/bench_find_profile.py --index /tmp/idx100k --timers default  # CPU by step
    python bench/bench_find_profile.py --index /tmp/idx100k --ab /path/to/other/checkout
    python bench/bench_find_profile.py --index NEW --queries-file Q.npy --ab OLD_CHECKOUT
        --ab-index OLD_INDEX                       # each checkout on its own index (one line)

The index (bench_store's clustered tree, 384-d, HNSW on as in bench_store) is built at
``--index`` on the first run and reused after (the HNSW build takes minutes). ``--queries-file``
runs on an index built elsewhere (bench_store's 1M, ``--index-dir``), only reading it:

    python bench/bench_find_profile.py --index /tmp/ann-1m/idx-1000000 \
        --queries-file Q.npy --profile on
    python bench/bench_find_profile.py --index /tmp/ann-1m/idx-1000000 \
        --queries-file Q.npy --widths 0,256,192 --queries 410    # the graph's search width

``--ab``: one worker process per source tree (this checkout's ``retrieval/`` and the other
one's), both on the same index, fed the same queries alternately one ``find()`` at a time, so
that both see the same machine load; each reports the find's thread CPU time. Medians per
mode (dense with the tree context off / on, and the default config: hybrid, context on),
for a first pass over new queries (nodes not built yet) and a second pass over the same
queries (steady state). On a shared, loaded machine wall-clock
ratios against a multi-threaded BLAS search swing by 2x between runs; these paired CPU times
move together.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.stores.embedded import DEFAULT_ANN_MIN_ROWS, EmbeddedStore  # noqa: E402

MODES = {
    "off": RetrievalConfig(
        dense_weight=1.0,
        context_neighbour_weight=0.0,
        context_parent_weight=0.0,
        context_sibling_weight=0.0,
    ),
    "on": RetrievalConfig(dense_weight=1.0),
    "default": RetrievalConfig(),  # hybrid (dense weight 0.5) with the tree context
}


def build(index: Path, leaves: int) -> None:
    syn = bl.make_tree(bl.shape_for(leaves), 384, 0, [1.0, 0.8, 1.2])
    store = EmbeddedStore(index, ann_min_rows=None)
    for i in range(0, len(syn.nodes), 5000):
        store.upsert(syn.nodes[i : i + 5000], syn.vectors[i : i + 5000])
    store.save()
    if len(syn.nodes) >= DEFAULT_ANN_MIN_ROWS:  # a write builds the HNSW index, as in bench_store
        store.ann_min_rows = DEFAULT_ANN_MIN_ROWS
        store.upsert(syn.nodes[:1], -syn.vectors[:1])
        store.upsert(syn.nodes[:1], syn.vectors[:1])
        store.wait_ann()  # the graph is built after writes, in the background
        store.save()
    np.save(index / "queries.npy", bl.make_queries(syn, 410, 0, 1.2))
    store.close()


def clients(index: Path, queries: Path) -> tuple[dict[str, Treehop], int]:
    store = EmbeddedStore(index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    emb = bl.PreparedQueryEmbedder(384)
    qs = np.load(queries)
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    made = {m: Treehop(embedder=emb, store=store, config=c, tagger=None) for m, c in MODES.items()}
    return made, len(qs)


def find(client: Treehop, i: int) -> None:
    client.find(f"q{i}", target_uri=bl.TARGET, limit=10, include_directories=False)


def worker(index: Path, queries: Path) -> None:
    """Answer ``<mode> <query>`` lines with the find's thread CPU and wall milliseconds, and
    the thread CPU spent inside the retriever (``HierarchicalRetriever.retrieve``): the
    difference is the client around it (checks, roots, the sync wrapper, the result)."""
    from treehop.hierarchical_retriever import HierarchicalRetriever

    made, _ = clients(index, queries)
    inner: list[float] = []
    retrieve = HierarchicalRetriever.retrieve

    async def timed(self: HierarchicalRetriever, *args: Any, **kwargs: Any) -> Any:
        c = time.thread_time()
        try:
            return await retrieve(self, *args, **kwargs)
        finally:
            inner.append(time.thread_time() - c)

    HierarchicalRetriever.retrieve = timed  # type: ignore[method-assign]
    print("ready", flush=True)
    for line in sys.stdin:
        mode, i = line.split()
        inner.clear()
        t0, c0 = time.perf_counter(), time.thread_time()
        find(made[mode], int(i))
        c1, t1 = time.thread_time(), time.perf_counter()
        print(f"{(c1 - c0) * 1e3} {(t1 - t0) * 1e3} {sum(inner) * 1e3}", flush=True)


def ab(index: Path, queries: Path, other: Path, n: int, other_index: Path | None = None) -> None:
    trees = {"this": (HERE.parent, index), "other": (other, other_index or index)}
    procs = {}
    for name, (root, idx) in trees.items():
        env = dict(os.environ, PYTHONPATH=f"{root}/retrieval:{root}/integrations")
        args = ["--index", str(idx), "--queries-file", str(queries), "--worker"]
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
    for p in procs.values():
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    for label in ("first pass", "second pass"):
        cpu: dict[tuple[str, str], list[float]] = {}
        wall: dict[tuple[str, str], list[float]] = {}
        client: dict[tuple[str, str], list[float]] = {}  # find - retrieve, thread CPU
        for mode in MODES:
            for i in range(n):
                order = list(procs) if i % 2 == 0 else list(procs)[::-1]
                for name in order:
                    p = procs[name]
                    assert p.stdin is not None and p.stdout is not None
                    p.stdin.write(f"{mode} {i}\n")
                    p.stdin.flush()
                    c, w, r = map(float, p.stdout.readline().split())
                    if i >= 10:  # the first queries warm up caches
                        cpu.setdefault((name, mode), []).append(c)
                        wall.setdefault((name, mode), []).append(w)
                        client.setdefault((name, mode), []).append(c - r)
        print(f"{label}: median find() thread CPU ms (wall ms: noisier, and it counts work")
        print("  a find hands to another thread)")
        med = {key: statistics.median(v) for key, v in cpu.items()}
        wmed = {key: statistics.median(v) for key, v in wall.items()}
        for mode in MODES:
            a, b = med[("this", mode)], med[("other", mode)]
            wa, wb = wmed[("this", mode)], wmed[("other", mode)]
            print(
                f"  {mode:7s}  this {a:6.2f}  other {b:6.2f}  this/other {a / b:.2f}"
                f"  (wall {wa:6.2f} / {wb:6.2f} = {wa / wb:.2f})"
            )
        print("  the client around the retriever (find - retrieve, thread CPU), median us:")
        for mode in MODES:
            a, b = (statistics.median(client[(n, mode)]) * 1e3 for n in ("this", "other"))
            print(f"  {mode:7s}  this {a:6.1f}  other {b:6.1f}  this/other {a / b:.2f}")
        # the tree context's own cost: the paired median of (on - off) for each query
        for name in procs:
            diff = [on - off for on, off in zip(cpu[(name, "on")], cpu[(name, "off")], strict=True)]
            print(f"  tree context's cost ({name}): median {statistics.median(diff):.2f} ms")
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.close()
        p.wait()


def profile(index: Path, queries: Path, mode: str, n: int) -> None:
    made, _ = clients(index, queries)
    for i in range(10):
        find(made[mode], i)
    prof = cProfile.Profile()
    prof.enable()
    for i in range(10, 10 + n):
        find(made[mode], i)
    prof.disable()
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)


TIMED_STEPS = {
    "treehop.hierarchical_retriever.HierarchicalRetriever": [
        "retrieve",
        "_descend",
        "_global_search",
        "_deeper_global_search",
        "_start",
        "_add_tag_hops",
        "_tree_context",
        "_context_parents",
        "_family",
        "_inner_arrays",
        "_context_candidate",
        "_place_folder",
        "_settle_directories",
        "_pool",
        "_conclude",
        "_memory_context",
        "_finish",
        "_matched_all",
    ],
    "treehop.client.AsyncTreehop": ["_find_checked", "_roots_of", "_to_find_result"],
    "treehop.hierarchical_retriever": ["_score_family", "_one_search_stands"],
    "treehop.hierarchical_retriever._FolderFamily": ["of", "score"],
    "treehop.tree_scoring": ["sibling_order", "context_columns"],
    "treehop.stores.embedded.search_paths._SearchPaths": [
        "search_columns",
        "search_arrays",
        "_ann_candidates",
        "_columns",
        "_blend",
        "_subtree_rows",
    ],
    "treehop.stores.embedded.search_paths": ["_exact_dense"],
    "treehop.stores.embedded.snapshot._Snap": ["uris_with_dirs"],
}
"""The steps ``--timers`` times: ``module[.Class]`` -> function names."""


def timers(index: Path, queries: Path, mode: str, n: int) -> None:
    """Where a find's thread CPU goes, by step: each step of :data:`TIMED_STEPS` wrapped
    by a timer (inclusive: a step's time holds its callees'; each timer adds ~1 us a call,
    so the steps read ~10-20% high), ``n`` finds after 100 warm ones; per find, the
    microseconds and calls of each step, against the whole find's thread CPU.

    Why beside ``--profile``: cProfile charges every call, so a find's hundreds of small
    calls read 2-3x slower and their shares move; these timers charge only the steps
    named, so their shares stay close to an untimed find's."""
    import functools
    import importlib
    import inspect

    spent: dict[str, int] = {}
    calls: dict[str, int] = {}

    def wrapped(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                c0 = time.thread_time_ns()
                try:
                    return await fn(*args, **kwargs)
                finally:
                    spent[label] = spent.get(label, 0) + time.thread_time_ns() - c0
                    calls[label] = calls.get(label, 0) + 1

            return timed_async

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            c0 = time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0) + time.thread_time_ns() - c0
                calls[label] = calls.get(label, 0) + 1

        return timed

    for where, names in TIMED_STEPS.items():
        try:
            owner: Any = importlib.import_module(where)
        except ModuleNotFoundError:  # a class: its module, then the attribute
            module, _, cls = where.rpartition(".")
            owner = getattr(importlib.import_module(module), cls)
        for name in names:
            raw = inspect.getattr_static(owner, name, None)
            if raw is None:
                continue  # (a step another version of the code does not have)
            fn = getattr(owner, name)
            new: Any = wrapped(f"{where.rpartition('.')[2]}.{name}", fn)
            setattr(owner, name, staticmethod(new) if isinstance(raw, staticmethod) else new)
            if inspect.ismodule(owner):  # a module function: its importers' names too
                for m in ("treehop.hierarchical_retriever", "treehop.tree_scoring"):
                    mod = importlib.import_module(m)
                    if getattr(mod, name, None) is fn:
                        setattr(mod, name, new)
    made, total = clients(index, queries)
    n = min(n, total - 10)
    for i in range(10, 110):
        find(made[mode], i % total)
    spent.clear()
    calls.clear()
    whole = 0
    for i in range(10, 10 + n):
        c0 = time.thread_time_ns()
        find(made[mode], i)
        whole += time.thread_time_ns() - c0
    print(f"{mode}: {n} finds, thread CPU {whole / n / 1e3:.0f} us a find (timed)")
    for label, ns in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {ns / n / 1e3:8.1f} us  {calls[label] / n:6.2f} calls  {label}")


def widths(index: Path, queries: Path, wanted: list[int], n: int) -> None:
    """For each graph search width (0: the default, :func:`treehop.stores._ann.
    search_width`): how many queries' find() top-10 (tree context off, as bench_store's
    equality row) equal the exhaustive top-10, how many default-config result lists (hits,
    order, scores) equal those of the first width, and the median find() thread CPU."""
    from treehop.stores import _ann
    from treehop.stores.base import Scope

    made, total = clients(index, queries)
    n = min(n, total)
    store = made["on"].store
    assert isinstance(store, EmbeddedStore)
    qs = np.load(queries).astype(np.float32)[:n]
    kept, store.ann_min_rows = store.ann_min_rows, None  # the exhaustive search: exact
    scope = Scope(subtrees=(bl.TARGET,), leaves_only=True)
    exhaustive = []
    for a in range(0, n, 32):
        for hits in store.search_batch(qs[a : a + 32], scope, 10):
            exhaustive.append({h.node.uri for h in hits})
    store.ann_min_rows = kept
    default = _ann.search_width
    first: list[list[tuple[str, float]]] | None = None

    def fixed(width: int) -> Callable[..., int]:
        def search_width(count: int) -> int:
            return width

        return search_width

    for w in wanted:
        setattr(_ann, "search_width", default if w <= 0 else fixed(w))  # noqa: B010
        ann = store._ann
        assert ann is not None, "the index has no graph"
        ann.recent.clear()
        equal, off_cpu, on_cpu, lists = 0, [], [], []
        for i in range(n):
            c0 = time.thread_time()
            res = made["off"].find(
                f"q{i}", target_uri=bl.TARGET, limit=10, include_directories=False
            )
            off_cpu.append(time.thread_time() - c0)
            equal += {m.uri for m in res.resources} == exhaustive[i]
        ann.recent.clear()
        for i in range(n):
            c0 = time.thread_time()
            res = made["on"].find(
                f"q{i}", target_uri=bl.TARGET, limit=10, include_directories=False
            )
            on_cpu.append(time.thread_time() - c0)
            lists.append([(m.uri, m.score) for m in res.resources])
        first = lists if first is None else first
        same = sum(a == b for a, b in zip(lists, first, strict=True))
        width = default(ann.count) if w <= 0 else w
        print(
            f"width {width}: top-10 == exhaustive {equal}/{n}; default-config lists equal "
            f"to the first width's {same}/{n}; median find() thread CPU ms: context off "
            f"{statistics.median(off_cpu) * 1e3:.2f}, on {statistics.median(on_cpu) * 1e3:.2f}",
            flush=True,
        )
    setattr(_ann, "search_width", default)  # noqa: B010


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True, help="built here on first use")
    ap.add_argument("--leaves", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument(
        "--queries-file",
        type=Path,
        help="query vectors (.npy); default INDEX/queries.npy. With it an existing index is "
        "only read (e.g. bench_store's saved 1M index); a missing file is written with the "
        "queries of a tree of --leaves leaves",
    )
    ap.add_argument("--profile", choices=sorted(MODES), help="cProfile finds in this mode")
    ap.add_argument(
        "--timers",
        choices=sorted(MODES),
        help="thread CPU per find by step (a timer around each step named in TIMED_STEPS)",
    )
    ap.add_argument("--ab", type=Path, help="another checkout to compare with, paired")
    ap.add_argument(
        "--ab-index",
        type=Path,
        help="with --ab: the other checkout reads this index (default: --index), e.g. the "
        "same graph before its orphans were re-checked (bench/ann_recheck_orphans.py)",
    )
    ap.add_argument(
        "--widths",
        help="graph search widths to compare, e.g. 0,256,192 (0: the default): top-10 vs "
        "the exhaustive one, result lists vs the first width's, find() CPU",
    )
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    queries = args.queries_file or args.index / "queries.npy"
    if args.queries_file is None and not queries.exists():
        build(args.index, args.leaves)
    elif not queries.exists():  # the queries of a tree of --leaves leaves (as build() draws)
        syn = bl.make_tree(bl.shape_for(args.leaves), 384, 0, [1.0, 0.8, 1.2])
        np.save(queries, bl.make_queries(syn, 410, 0, 1.2))
    if args.worker:
        worker(args.index, queries)
    elif args.ab is not None:
        ab(args.index, queries, args.ab, args.queries, args.ab_index)
    elif args.widths is not None:
        widths(
            index=args.index,
            queries=queries,
            wanted=[int(w) for w in args.widths.split(",")],
            n=args.queries,
        )
    elif args.profile is not None:
        profile(args.index, queries, args.profile, args.queries)
    elif args.timers is not None:
        timers(args.index, queries, args.timers, args.queries)
    else:
        ap.error("give --profile MODE, --timers MODE, --ab CHECKOUT or --widths W,W")


if __name__ == "__main__":
    main()
