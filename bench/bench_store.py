"""The embedded store (format 3) at 10k / 100k leaves (1M with ``--million``): every row of
issue 13's "Done when" list, measured in one run.

    python bench/bench_store.py                      # 10k and 100k leaves
    python bench/bench_store.py --sizes 10000        # one size
    python bench/bench_store.py --million            # adds 1M leaves (slow: HNSW build)
    python bench/bench_store.py --sizes "" --million --open-only --ann-min-rows -1
                                                     # 1M: ingest, save, fresh-process open
    python bench/bench_store.py --ann-compare 100000 # hnswlib vs usearch f32/f16/i8, same vectors
    nice -n 5 python bench/bench_store.py --million-table --index-dir /work/idx/onem-1m
                                                     # issue 35 item 3 (bench_million.py)
    python bench/bench_store.py --sizes "" --million --open-only --index-dir /tmp/ann-1m --files 0
    python bench/bench_store.py --sizes "" --million --index-dir /tmp/ann-1m --no-writes --files 0
                                                     # 1M: build (graph included) once, then
                                                     # find vs flat on the kept index

The tree is bench_latency's synthetic clustered tree (384-d random vectors that follow the
directory structure, no embedding model). Per size:

- **ingest (store)**: ``upsert`` of every node in batches of 5,000, then ``save()``; the HNSW
  graph (from ``ann_min_rows`` rows on) is built by the store's background worker after the
  writes that start it (timed apart: they do not wait for it), waited for, then saved.
- **open / first find / memory**: a fresh Python process, with the index files evicted from
  the page cache first (``posix_fadvise(DONTNEED)``: a cold cache without root), opens the
  index, runs one ``find()`` through the client, then the query set; its RSS growth from
  before the open is compared with the raw float32 vectors (the HNSW file size is shown apart).
  With the default ``verify=True`` the open itself reads the vectors and the graph whole (their
  checksums), so the first find meets them in the page cache; the node texts and URIs stay
  cold. The first find's CPU time on its thread is printed beside its wall time: on a busy
  machine the wall time also counts waiting for a core.
- **find vs flat**: ``find()`` p50 through the sync client against one flat exact BLAS search
  (``leaf_matrix @ q`` + top-10) of the same leaf vectors, and how often find's top-10 leaves
  equal the exhaustive top-10 (same cosine scoring). Flat searches, finds and store steps are
  timed in separate passes over the same queries, and the HNSW answers the store keeps for a
  repeated query are dropped before every timed phase that repeats queries.
- **re-add 100 changed files**: what the client does on a re-add of the whole tree: list the
  stored subtree's content hashes, diff, upsert the 100 changed leaves (new vectors), pass
  every unchanged node to ``update_nodes`` (which rewrites only those whose JSON differs,
  keeping their vectors), save. Embedding excluded.
- **remove a 10k-node subtree**: list it, ``delete``, ``save``.
- **QPS at 1 and 2 threads**: ``store.search`` (global step of a find) and the sync client's
  ``find()``, from 1 and 2 Python threads; ``find()`` also through the client's one loop
  thread (how every sync call ran before reads moved to the calling thread's own loop).
- **batch of 32**: ``search_batch`` of 32 queries against 32 ``search`` calls (exact scoped
  step and HNSW global step). On the graph the batch cannot beat one by one by more than
  ``cores x (1 + rest / graph)``: one usearch call (split over the cores) does the same graph
  work as the 32 single queries, and only the work around it (``rest``) is saved.
- **client ingest**: ``add_resource`` of a generated directory with automatic tags on, the
  embedding time (a hashing embedder, timed) subtracted.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402
from treehop.stores.embedded import DEFAULT_ANN_MIN_ROWS, EmbeddedStore  # noqa: E402

TARGET = bl.TARGET


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _evict(path: Path) -> None:
    for f in path.rglob("*"):
        if f.is_file():
            fd = os.open(f, os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def _pct(xs: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) if xs else float("nan")


# ---------------------------------------------------------------------- child: fresh open
def child_open(index: str, queries_file: str, verify: str = "full", ann_min: str = "") -> None:
    queries = np.load(queries_file)
    _evict(Path(index))
    base = _rss()
    t0 = time.perf_counter()
    ann_min_rows = (
        (int(ann_min) if int(ann_min) >= 0 else None) if ann_min else DEFAULT_ANN_MIN_ROWS
    )
    store = EmbeddedStore(
        index, verify=True if verify == "full" else "background", ann_min_rows=ann_min_rows
    )
    t_open = time.perf_counter() - t0
    ann_at_first = store._ann is not None
    emb = bl.PreparedQueryEmbedder(queries.shape[1])
    for i, q in enumerate(queries):
        emb.vectors[f"q{i}"] = q
    cfg = RetrievalConfig(dense_weight=1.0)
    th = Treehop(embedder=emb, store=store, config=cfg, tagger=None)
    t0, c0 = time.perf_counter(), time.thread_time()
    th.find("q0", target_uri=TARGET, limit=10, include_directories=False)
    t_first = time.perf_counter() - t0
    c_first = time.thread_time() - c0  # its CPU on this thread: less inflated by a busy machine
    rss_first = _rss() - base
    t0 = time.perf_counter()
    ann = store.load_ann()
    t_ann = time.perf_counter() - t0
    for i in range(1, len(queries)):
        th.find(f"q{i}", target_uri=TARGET, limit=10, include_directories=False)
    rss_all = _rss() - base
    print(
        json.dumps(
            {
                "open_s": t_open,
                "first_find_s": t_first,
                "first_find_cpu_s": c_first,
                "ann_wait_s": t_ann,
                "ann": ann,
                "ann_at_first": ann_at_first,
                "rss_first": rss_first,
                "rss_all": rss_all,
            }
        )
    )


def child_warmup(index: str, queries_file: str, verify: str, config: str = "dense") -> None:
    """``--warmup``'s child: a fresh process (files evicted from the page cache) opens the
    index and runs every query once through ``find()``; prints each find's ms. ``config``:
    ``dense`` (``dense_weight=1.0``) or ``default`` (the default config: hybrid, so the
    first find needs the BM25 index; the query texts ``q0``... match no term, so only the
    index's load and the lexical steps' cost are measured)."""
    queries = np.load(queries_file)
    _evict(Path(index))
    store = EmbeddedStore(index, verify=verify == "on")
    emb = bl.PreparedQueryEmbedder(queries.shape[1])
    for i, q in enumerate(queries):
        emb.vectors[f"q{i}"] = q
    cfg = RetrievalConfig(dense_weight=1.0) if config == "dense" else RetrievalConfig()
    th = Treehop(embedder=emb, store=store, config=cfg, tagger=None)
    times = []
    for i in range(len(queries)):
        t0 = time.perf_counter()
        th.find(f"q{i}", target_uri=TARGET, limit=10, include_directories=False)
        times.append((time.perf_counter() - t0) * 1000)
    th.close()
    print(json.dumps(times))


def first_write(index: str) -> None:
    """``--first-write IDX``: a fresh process opens the saved index and times its first write
    (the first leaf with a changed text, its vector kept) and a second one; nothing is saved
    (the process ends with ``os._exit``). Alternate ``PYTHONPATH`` for an A/B."""
    t0 = time.perf_counter()
    s = EmbeddedStore(index)
    t_open = time.perf_counter() - t0
    snap = s._snap
    r = int(np.flatnonzero(snap.cols["leaf"][: snap.n])[0])
    node = s.get([snap.uri(r)])[0]
    assert node is not None
    v = s.get_vectors([node.uri])
    times = []
    for text in ("a changed text", "changed again"):
        t0 = time.perf_counter()
        s.upsert([node.model_copy(update={"content": text})], v)
        times.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "open_s": round(t_open, 3),
                "first_write_s": round(times[0], 3),
                "second_write_s": round(times[1], 4),
                "load": round(os.getloadavg()[0], 1),
            }
        ),
        flush=True,
    )
    os._exit(0)


def warmup(n: int, args: argparse.Namespace, tmp: Path) -> None:
    """``--warmup``: the first 100 finds of a fresh process against finds 201-300 of the same
    process (steady state), with verification on and off, fresh processes interleaved
    (on, off, on, off, ...). The index (with its graph) is built once in ``--index-dir``."""
    root = Path(args.index_dir) if args.index_dir else tmp
    path = root / f"warm-{n}"
    syn = bl.make_tree(bl.shape_for(n), args.dim, args.seed, args.sigmas)
    if not (path / "CURRENT").exists():
        store = EmbeddedStore(path, ann_min_rows=args.ann_min_rows)
        for i in range(0, len(syn.nodes), 5000):
            store.upsert(syn.nodes[i : i + 5000], syn.vectors[i : i + 5000])
        store.wait_ann()
        store.close()
    qfile = root / f"warm-queries-{n}.npy"
    np.save(qfile, bl.make_queries(syn, 300, args.seed + 7, args.sigmas[2]))
    got: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
    for _ in range(args.warmup_rounds):
        for verify in ("on", "off"):
            res = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child-warmup",
                    str(path),
                    str(qfile),
                    verify,
                    args.warmup_config,
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            t = json.loads(res.stdout.strip().splitlines()[-1])
            first, steady = statistics.mean(t[:100]), statistics.mean(t[200:300])
            got[verify].append((first, steady))
            print(
                json.dumps(
                    {
                        "verify": verify,
                        "config": args.warmup_config,
                        "first_find_ms": round(t[0], 2),
                        "first100_mean_ms": round(first, 2),
                        "first100_p50_ms": round(statistics.median(t[:100]), 2),
                        "steady_mean_ms": round(steady, 2),
                        "ratio": round(first / steady, 2),
                        "load": round(os.getloadavg()[0], 1),
                    }
                ),
                flush=True,
            )


# ---------------------------------------------------------------------- parent
def forget_answers(store: EmbeddedStore) -> None:
    """Drop the answers the store keeps for a query asked again (a descent's deeper step,
    tree context's pool): the timed phases below repeat queries, which must not be served
    from them."""
    ann = store._ann
    if ann is not None:
        ann.recent.clear()
    # the exact path's kept scores (a query's cosines to every row, a wide scope's answer)
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("all", "dense")]:
        cache.pop(key, None)


def flat_top(flat: np.ndarray, q: np.ndarray, k: int) -> np.ndarray:
    scores = flat @ q
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def qps(fn: Any, items: Sequence[Any], threads: int) -> float:
    chunks = [items[i::threads] for i in range(threads)]

    def run(chunk: Sequence[Any]) -> None:
        for it in chunk:
            fn(it)

    ts = [threading.Thread(target=run, args=(c,)) for c in chunks]
    t0 = time.perf_counter()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return len(items) / (time.perf_counter() - t0)


def run_size(n: int, args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"leaves": n}
    shape = bl.shape_for(n)
    syn = bl.make_tree(shape, args.dim, args.seed, args.sigmas)
    out["nodes"] = len(syn.nodes)
    raw = syn.vectors.nbytes
    out["raw_mb"] = raw / 2**20
    path = (Path(args.index_dir) if args.index_dir else tmp) / f"idx-{n}"
    # --index-dir: an index built by an earlier run (with --no-writes, so it is still the
    # synthetic tree) is reused instead of ingested and its graph built again
    reuse = (path / "CURRENT").exists()
    store = EmbeddedStore(path, ann_min_rows=None, lexical=not args.no_lexical)
    nan = float("nan")
    out.update(ingest_rows_s=nan, first_save_s=nan, ann_write_s=nan)
    out.update(ann_build_s=nan, ann_build_cpu_s=nan)
    if not reuse:
        t0 = time.perf_counter()
        for i in range(0, len(syn.nodes), 5000):
            store.upsert(syn.nodes[i : i + 5000], syn.vectors[i : i + 5000])
        t_up = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.save()
        t_save = time.perf_counter() - t0
        out["ingest_rows_s"] = len(syn.nodes) / (t_up + t_save)
        out["first_save_s"] = t_save
    use_ann = args.ann_min_rows >= 0 and len(syn.nodes) >= args.ann_min_rows
    out["ann"] = use_ann
    if use_ann:
        store.ann_min_rows = args.ann_min_rows
        t0 = time.perf_counter()
        c0 = time.process_time()
        if reuse:
            store.load_ann()
        else:
            store.upsert(syn.nodes[:1], -syn.vectors[:1])  # a write: the worker builds the graph
            store.upsert(syn.nodes[:1], syn.vectors[:1])
            out["ann_write_s"] = time.perf_counter() - t0  # the writes do not wait for it
        store.wait_ann()
        if not reuse:
            out["ann_build_s"] = time.perf_counter() - t0
            out["ann_build_cpu_s"] = time.process_time() - c0
        t0 = time.perf_counter()
        store.save()
        out["ann_save_s"] = time.perf_counter() - t0
        entry = store._committed["ann"] if store._committed else None
        out["ann_ratio"] = (path / entry["file"]).stat().st_size / raw if entry else nan
    print(f"[{n}] built: {out}", file=sys.stderr)

    queries = bl.make_queries(syn, args.queries + 10, args.seed, args.sigmas[2])
    qfile = tmp / f"queries-{n}.npy"
    np.save(qfile, queries[: args.open_queries])
    # fresh-process open, twice (the first may pay for imports); the second is reported
    for _ in range(2):
        res = subprocess.run(
            [
                sys.executable,
                __file__,
                "--child-open",
                str(path),
                str(qfile),
                "full",
                str(args.ann_min_rows),
            ],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ},
        )
    child = json.loads(res.stdout.strip().splitlines()[-1])
    bg = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child-open",
            str(path),
            str(qfile),
            "background",
            str(args.ann_min_rows),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    child_bg = json.loads(bg.stdout.strip().splitlines()[-1])
    out["open_bg_s"] = child_bg["open_s"]
    out["first_find_bg_ms"] = child_bg["first_find_s"] * 1000
    out.update(
        open_s=child["open_s"],
        first_find_ms=child["first_find_s"] * 1000,
        first_find_cpu_ms=child["first_find_cpu_s"] * 1000,
        mem_ratio_first=child["rss_first"] / raw,
        mem_ratio_all=child["rss_all"] / raw,
        ann_wait_s=child["ann_wait_s"],
        ann_at_first=child.get("ann_at_first", False),
    )

    if args.open_only:
        store.close()
        return out

    # find vs one flat exact BLAS search. The equality check needs find() to score as the
    # exhaustive search does (plain cosine): tree context (treehop.tree_scoring) is off in
    # `th` and on, as by default, in `th_ctx`, which is timed in a pass of its own.
    emb = bl.PreparedQueryEmbedder(args.dim)
    plain = RetrievalConfig(
        dense_weight=1.0,
        context_neighbour_weight=0.0,
        context_parent_weight=0.0,
        context_sibling_weight=0.0,
    )
    th = Treehop(embedder=emb, store=store, config=plain, tagger=None)
    th_ctx = Treehop(
        embedder=emb, store=store, config=RetrievalConfig(dense_weight=1.0), tagger=None
    )
    leaf_idx = [i for i, nd in enumerate(syn.nodes) if nd.is_leaf]
    leaf_uris = [syn.nodes[i].uri for i in leaf_idx]
    flat = np.ascontiguousarray(syn.vectors[leaf_idx])
    names = []
    for i, q in enumerate(queries):
        emb.vectors[f"q{i}"] = q
        names.append(f"q{i}")
    glob = Scope(subtrees=(TARGET,), leaves_only=True)
    # Three passes over the same queries, each timed on its own: interleaving them would
    # charge each find for the OpenBLAS worker threads that keep spinning for a while after
    # every multi-threaded flat search (measured: ~2x the find's own time on 2 cores).
    flat_t, find_t, agree, equal, step_t, step_eq = [], [], [], [], [], []
    tops = []
    for i in range(len(names)):
        t0 = time.perf_counter()
        tops.append(flat_top(flat, queries[i], 10))
        flat_t.append((time.perf_counter() - t0) * 1000)
    results = []
    for name in names:
        t0 = time.perf_counter()
        results.append(th.find(name, target_uri=TARGET, limit=10, include_directories=False))
        find_t.append((time.perf_counter() - t0) * 1000)
    forget_answers(store)
    ctx_t = []
    for name in names:
        t0 = time.perf_counter()
        th_ctx.find(name, target_uri=TARGET, limit=10, include_directories=False)
        ctx_t.append((time.perf_counter() - t0) * 1000)
    ctx_t = ctx_t[10:]
    forget_answers(store)
    for i in range(len(names)):
        t0 = time.perf_counter()
        hits = store.search(queries[i], glob, 10)
        step_t.append((time.perf_counter() - t0) * 1000)
        exact = {leaf_uris[int(j)] for j in tops[i]}
        step_eq.append(float({h.node.uri for h in hits} == exact))
        got = {m.uri for m in results[i].resources if m.is_leaf}
        agree.append(len(exact & got) / 10)
        equal.append(float(exact == got))
    # the first 10 queries of each pass warm caches up
    flat_t, find_t, step_t = flat_t[10:], find_t[10:], step_t[10:]
    agree, equal, step_eq = agree[10:], equal[10:], step_eq[10:]
    out.update(
        flat_p50=_pct(flat_t, 50),
        find_p50=_pct(find_t, 50),
        find_ratio=_pct(find_t, 50) / _pct(flat_t, 50),
        ctx_p50=_pct(ctx_t, 50),
        ctx_ratio=_pct(ctx_t, 50) / _pct(flat_t, 50),
        agree10=statistics.fmean(agree),
        equal10=statistics.fmean(equal),
        step_p50=_pct(step_t, 50),
        step_ratio=_pct(step_t, 50) / _pct(flat_t, 50),
        step_equal10=statistics.fmean(step_eq),
    )

    # QPS at 1 and 2 threads
    qv = list(queries[10:])
    for t in (1, 2):
        forget_answers(store)
        out[f"store_qps{t}"] = qps(lambda q: store.search(q, glob, 10), qv, t)
    fnames = names[10:]
    for t in (1, 2):
        forget_answers(store)
        out[f"find_qps{t}"] = qps(
            lambda nm: th.find(nm, target_uri=TARGET, limit=10, include_directories=False),
            fnames,
            t,
        )
    # the same through the client's one loop thread (every sync call before run_here), for
    # the side-by-side ratio: a client whose reads may not leave that thread
    loop_only = Treehop(embedder=emb, store=store, config=plain, tagger=None)
    loop_only._reads_anywhere = lambda: False  # type: ignore[method-assign]
    for t in (1, 2):
        forget_answers(store)
        out[f"loop_qps{t}"] = qps(
            lambda nm: loop_only.find(nm, target_uri=TARGET, limit=10, include_directories=False),
            fnames,
            t,
        )
    loop_only.close()

    # Reader processes, fairly: each row below is a fresh client over the saved index (its
    # own store, caches cold) running one pass over the same queries, so that they compare
    # with each other, not with the warm in-process rows above. The pooled client runs one
    # call at a time here and sends concurrent ones to its two worker processes.
    def settle(client: Treehop) -> None:  # no background checksum or graph load meanwhile
        client.store.wait_verified()  # type: ignore[attr-defined]
        client.store.load_ann()  # type: ignore[attr-defined]

    def fresh_pass(client: Treehop, threads: int) -> float:
        return qps(
            lambda nm: client.find(nm, target_uri=TARGET, limit=10, include_directories=False),
            fnames,
            threads,
        )

    for t in (1, 2):
        with Treehop(path, embedder=emb, config=plain, tagger=None) as alone:
            settle(alone)
            alone.find(names[0], target_uri=TARGET, limit=10)
            out[f"fresh_qps{t}"] = fresh_pass(alone, t)
    with Treehop(path, embedder=emb, config=plain, tagger=None, reader_processes=2) as pooled:
        assert pooled._wait_readers()  # (they start with the client, in the background)
        settle(pooled)
        pool = pooled._readers[1]  # type: ignore[index]
        for w in range(2):  # each worker's first call reads the index's files
            pool.find(names[w], target_uri=TARGET, limit=10)
        pooled.find(names[0], target_uri=TARGET, limit=10)
        out["pool_qps2"] = fresh_pass(pooled, 2)

    # batch of 32 vs one by one: the global step (HNSW when on) and an exact wide scope
    qb = np.stack(qv[:32])
    for label, scope in (
        ("global", glob),
        ("exact", Scope(subtrees=(f"{TARGET}/t000",), leaves_only=True)),
    ):
        one = batch = 0.0
        for _ in range(3):
            forget_answers(store)
            t0 = time.perf_counter()
            for q in qb:
                store.search(q, scope, 10)
            one += (time.perf_counter() - t0) / 3
            forget_answers(store)
            t0 = time.perf_counter()
            store.search_batch(qb, scope, 10)
            batch += (time.perf_counter() - t0) / 3
        out[f"batch_{label}"] = one / batch
    # exact over the whole index (HNSW off): the case one matrix product is for
    saved_min = store.ann_min_rows
    store.ann_min_rows = None
    t0 = time.perf_counter()
    for q in qb:
        store.search(q, glob, 10)
    one = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.search_batch(qb, glob, 10)
    out["batch_exact_all"] = one / (time.perf_counter() - t0)
    store.ann_min_rows = saved_min

    if args.no_writes:
        th.close()
        store.close()
        return out

    # re-add with 100 changed files (store side of the client's re-add)
    rng = np.random.default_rng(5)
    changed = set(rng.choice(leaf_idx, size=100, replace=False).tolist())
    new_nodes = []
    new_vecs = syn.vectors.copy()
    for i, nd in enumerate(syn.nodes):
        if i in changed:
            nd = nd.model_copy(update={"content": nd.content + " (edited)", "content_hash": "x"})
            v = rng.standard_normal(args.dim).astype(np.float32)
            new_vecs[i] = v / np.linalg.norm(v)
        new_nodes.append(nd)
    t0 = time.perf_counter()
    old = store.content_hashes(TARGET)  # what the client diffs against
    ch = [i for i, nd in enumerate(new_nodes) if old.get(nd.uri) != nd.content_hash]
    same = [i for i, nd in enumerate(new_nodes) if old.get(nd.uri) == nd.content_hash]
    store.upsert([new_nodes[i] for i in ch], new_vecs[ch])
    store.update_nodes([new_nodes[i] for i in same])  # as the client does
    store.save()
    out["readd_s"] = time.perf_counter() - t0
    out["readd_changed"] = len(ch)

    # remove a ~10k-node subtree (whole top-level topics until 10k nodes)
    t0 = time.perf_counter()
    removed = 0
    for t in range(shape.fanout[0]):
        uris = list(store.iter_uris(f"{TARGET}/t{t:03d}"))  # as the client's remove()
        removed += store.delete(uris)
        if removed >= min(10_000, len(syn.nodes) // 3):
            break
    store.save()
    out["remove_s"] = time.perf_counter() - t0
    out["removed"] = removed
    th.close()
    store.close()
    if args.index_dir:
        # the rows above changed 100 vectors and removed a subtree: a later run reusing this
        # index would compare find() against the synthetic tree it no longer holds (top-10
        # "equal to exhaustive" fell from 0.995 to 0.885 that way), so it is built afresh
        shutil.rmtree(path)
    return out


def ingest_only(n: int, args: argparse.Namespace, tmp: Path) -> None:
    """``--ingest-only``: the store's bulk ingest alone (``upsert`` of every node in batches of
    5,000, then ``save()``; no graph), printed as one JSON line. Run it under two checkouts
    one after the other (``PYTHONPATH=<old>/retrieval`` / ``<new>/retrieval``) for an A/B."""
    syn = bl.make_tree(bl.shape_for(n), args.dim, args.seed, args.sigmas)
    path = tmp / f"ingest-{n}"
    store = EmbeddedStore(path, ann_min_rows=None, lexical=not args.no_lexical)
    t0 = time.perf_counter()
    for i in range(0, len(syn.nodes), 5000):
        store.upsert(syn.nodes[i : i + 5000], syn.vectors[i : i + 5000])
    t_up = time.perf_counter() - t0
    t0 = time.perf_counter()
    store.save()
    t_save = time.perf_counter() - t0
    store.close()
    # the first write after an open (a new store object on the saved index): one changed leaf
    again = EmbeddedStore(path, ann_min_rows=None, lexical=not args.no_lexical)
    leaf = next(nd for nd in syn.nodes if nd.is_leaf)
    t0 = time.perf_counter()
    again.upsert([leaf.model_copy(update={"content": "a changed text"})], syn.vectors[:1])
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again.save()
    t_first_save = time.perf_counter() - t0
    again.close()
    print(
        json.dumps(
            {
                "first_write_after_open_s": round(t_first, 3),
                "its_save_s": round(t_first_save, 3),
                "nodes": len(syn.nodes),
                "upsert_s": round(t_up, 2),
                "save_s": round(t_save, 2),
                "rows_s": round(len(syn.nodes) / (t_up + t_save)),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                "load": round(os.getloadavg()[0], 1),
            }
        ),
        flush=True,
    )


def growth(n: int, args: argparse.Namespace) -> None:
    """``--growth``: appending ``n`` rows of vectors, 5,000 per write, as the store's unsaved
    tail did before issue 35 (one array grown by half into a fresh zeroed copy when full) and
    as it does now (``embedded.snapshot._Tail``: 64k-row blocks, none copied once full), alternated
    in one process, twice each. Only the vectors' growth: the rest of a write is the same."""
    from treehop.stores.embedded.snapshot import _Tail

    rng = np.random.default_rng(args.seed)
    batch = rng.standard_normal((5000, args.dim)).astype(np.float32)

    def old_way() -> float:
        tail = np.zeros((0, args.dim), np.float32)
        t0 = time.perf_counter()
        for t0_row in range(0, n, 5000):
            t1 = t0_row + 5000
            if t1 > tail.shape[0]:
                grown = np.zeros((max(t1, int(tail.shape[0] * 1.5) + 64), args.dim), np.float32)
                grown[:t0_row] = tail[:t0_row]
                tail = grown
            tail[t0_row:t1] = batch
        return time.perf_counter() - t0

    def new_way() -> float:
        tail = _Tail(args.dim)
        t0 = time.perf_counter()
        for t0_row in range(0, n, 5000):
            tail = tail.with_rows(t0_row, batch)
        return time.perf_counter() - t0

    for _ in range(2):
        for name, fn in (("one array, 1.5x zeroed copies", old_way), ("blocks", new_way)):
            secs = fn()
            print(
                json.dumps(
                    {
                        "growth": name,
                        "rows": n,
                        "s": round(secs, 2),
                        "rows_s": round(n / secs),
                        "load": round(os.getloadavg()[0], 1),
                    }
                ),
                flush=True,
            )


def client_ingest(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """``add_resource`` of generated text files with automatic tags; embedding excluded."""
    src = tmp / "corpus"
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(3000)] + ["retrieval", "vector", "index", "kafka", "tree"]
    for d in range(args.files // 20):
        (src / f"d{d:03d}").mkdir(parents=True, exist_ok=True)
        for f in range(20):
            text = " ".join(rng.choice(words, size=120)) + ".\n"
            (src / f"d{d:03d}" / f"f{f:02d}.md").write_text(f"# doc {d} {f}\n\n{text}")

    class HashEmbedder:
        name = "bench-hash"
        dimension = 64

        def __init__(self) -> None:
            self.seconds = 0.0

        def embed(self, texts: Sequence[str]) -> np.ndarray:
            t0 = time.perf_counter()
            out = np.empty((len(texts), 64), np.float32)
            for i, t in enumerate(texts):
                seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little")
                v = np.random.default_rng(seed).standard_normal(64)
                out[i] = v / np.linalg.norm(v)
            self.seconds += time.perf_counter() - t0
            return out

        async def aembed(self, texts: Sequence[str]) -> np.ndarray:
            return self.embed(texts)

        def embed_query(self, text: str) -> np.ndarray:
            return self.embed([text])[0]

        async def aembed_query(self, text: str) -> np.ndarray:
            return self.embed_query(text)

    out: dict[str, Any] = {}
    for tagger in ("auto", None):
        emb = HashEmbedder()
        idx = tmp / f"client-{tagger}"
        with Treehop(idx, embedder=emb, tagger=tagger) as th:
            t0 = time.perf_counter()
            th.add_resource(src, target_uri="viking://resources/corpus")
            total = time.perf_counter() - t0 - emb.seconds
            nodes = len(th.store)
            # re-add with 5% of the files changed
            for d in range(0, args.files // 20, 20):
                f = src / f"d{d:03d}" / "f00.md"
                f.write_text(f.read_text() + "\nedited\n")
            emb.seconds = 0.0
            t0 = time.perf_counter()
            res2 = th.add_resource(src, target_uri="viking://resources/corpus")
            readd = time.perf_counter() - t0 - emb.seconds
        key = "tags" if tagger else "notags"
        out[f"ingest_{key}_nodes_s"] = nodes / total
        out[f"readd_{key}_s"] = readd
        out[f"readd_{key}_embedded"] = res2.embedded
        out["client_nodes"] = nodes
    return out


_ANN_KINDS = ("hnswlib-f32", "usearch-f32", "usearch-f16", "usearch-i8")


def _ann_vectors(n: int, dim: int, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """Clustered unit vectors (n // 100 centres) and ``nq`` held-out queries near them."""
    rng = np.random.default_rng(0)
    c = rng.standard_normal((max(n // 100, 1), dim)).astype(np.float32)
    x = c[rng.integers(0, len(c), n)] + 0.8 * rng.standard_normal((n, dim)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = c[rng.integers(0, len(c), nq)] + 0.8 * rng.standard_normal((nq, dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return x, q


def _ann_open(kind: str, path: str, dim: int) -> Any:
    if kind.startswith("hnswlib"):
        import hnswlib

        h = hnswlib.Index(space="ip", dim=dim)
        h.load_index(path)
        h.set_ef(128)
        h.set_num_threads(1)
        return h
    from usearch.index import Index as UIndex

    u = UIndex.restore(path, view=True)
    u.expansion_search = 128
    return u


def _ann_query(kind: str, index: Any, qs: np.ndarray, k: int, threads: int) -> np.ndarray:
    if kind.startswith("hnswlib"):
        index.set_num_threads(threads)
        return np.asarray(index.knn_query(qs, k=k)[0], dtype=np.int64)
    return np.asarray(index.search(qs, k, threads=threads).keys, dtype=np.int64).reshape(
        qs.shape[0], -1
    )


def child_ann_open(kind: str, path: str, n: str, dim: str) -> None:
    """Fresh process, cold cache: open a saved ANN file, then one query, then 200 more; the
    RSS growth is reported apart from the vectors' raw size."""
    _evict(Path(path))
    _, q = _ann_vectors(int(n), int(dim), 200)
    base = _rss()
    t0 = time.perf_counter()
    index = _ann_open(kind, path, int(dim))
    t_open = time.perf_counter() - t0
    t0 = time.perf_counter()
    _ann_query(kind, index, q[:1], 64, 1)
    t_first = time.perf_counter() - t0
    for v in q:
        _ann_query(kind, index, v[None], 64, 1)
    print(json.dumps({"open_s": t_open, "first_ms": t_first * 1000, "rss": _rss() - base}))


def ann_compare(n: int, dim: int) -> None:
    """hnswlib against usearch (f32 / f16 / i8) on the same clustered vectors and held-out
    queries, at the graph width the store would use (16 links, 128 wide at build and search):
    build rows/s (wall and CPU), recall@10 of the raw answer and of the store's use of it
    (64 candidates rescored exactly: top-10 equal to the exhaustive one), query p50 one by
    one, batch-of-32 QPS over one-by-one QPS (one call, 1 and 2 threads), fresh-process open
    and first query from a cold cache, RSS and file size over the raw float32 vectors."""
    x, q = _ann_vectors(n, dim, 200)
    raw = x.nbytes
    sims = q @ x.T
    exact = np.argsort(-sims, axis=1)[:, :10]
    tmp = Path(tempfile.mkdtemp(prefix="treehop-ann-"))
    rows = []
    try:
        for kind in _ANN_KINDS:
            t0, c0 = time.perf_counter(), time.process_time()
            if kind.startswith("hnswlib"):
                import hnswlib

                index: Any = hnswlib.Index(space="ip", dim=dim)
                index.init_index(max_elements=n, M=16, ef_construction=128)
                index.set_num_threads(os.cpu_count() or 1)
                index.add_items(x, np.arange(n))
                index.set_ef(128)
            else:
                from usearch.index import Index as UIndex

                index = UIndex(
                    ndim=dim,
                    metric="ip",
                    dtype=kind.split("-")[1],
                    connectivity=16,
                    expansion_add=128,
                    expansion_search=128,
                )
                index.add(np.arange(n), x, threads=os.cpu_count() or 1)
            build, build_cpu = time.perf_counter() - t0, time.process_time() - c0
            one = []
            got64 = []
            for v in q:
                t0 = time.perf_counter()
                labels = _ann_query(kind, index, v[None], 64, 1)[0]
                one.append(time.perf_counter() - t0)
                got64.append(labels)
            got64 = [g[(g >= 0) & (g < n)] for g in got64]
            got10 = [g[:10] for g in got64]
            raw_rec = np.mean(
                [len(set(a) & set(b)) / 10 for a, b in zip(got10, exact, strict=True)]
            )
            store_eq = np.mean(
                [set(c[np.argsort(-sims[i, c])[:10]]) == set(exact[i]) for i, c in enumerate(got64)]
            )
            batch = {}
            for threads in (1, 2):
                t0 = time.perf_counter()
                for j in range(0, 192, 32):
                    _ann_query(kind, index, q[j : j + 32], 64, threads)
                batch[threads] = (192 / (time.perf_counter() - t0)) / (1 / statistics.fmean(one))
            f = tmp / f"{kind}.bin"
            if kind.startswith("hnswlib"):
                index.save_index(str(f))
            else:
                index.save(str(f))
            del index
            res = subprocess.run(
                [sys.executable, __file__, "--child-ann-open", kind, str(f), str(n), str(dim)],
                capture_output=True,
                text=True,
                check=True,
            )
            child = json.loads(res.stdout.strip().splitlines()[-1])
            rows.append(
                {
                    "kind": kind,
                    "build rows/s (wall)": f"{n / build:.0f}",
                    "build CPU ms / row": f"{build_cpu / n * 1000:.3f}",
                    "recall@10 (raw answer)": f"{raw_rec:.3f}",
                    "top-10 == exact (64 rescored)": f"{store_eq:.3f}",
                    "query p50 ms (1 thread, k=64)": f"{_pct(one, 50) * 1000:.3f}",
                    "batch-32 QPS / one-by-one, 1 thread": f"{batch[1]:.2f}",
                    "batch-32 QPS / one-by-one, 2 threads": f"{batch[2]:.2f}",
                    "open, fresh process, cold cache ms": f"{child['open_s'] * 1000:.1f}",
                    "first query after open ms": f"{child['first_ms']:.2f}",
                    "RSS growth (open + 201 queries) / raw": f"{child['rss'] / raw:.2f}",
                    "file size / raw": f"{f.stat().st_size / raw:.2f}",
                }
            )
            f.unlink()
            print(f"[{kind}] {rows[-1]}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(len(k) for k in rows[0])
    print(f"\n{n} rows, {dim}-d, 200 held-out queries; 16 links, 128 wide at build and search")
    print(f"{'':<{width}}  " + "  ".join(f"{r['kind']:>12}" for r in rows))
    for key in list(rows[0])[1:]:
        print(f"{key:<{width}}  " + "  ".join(f"{r[key]:>12}" for r in rows))
    load = os.getloadavg()
    print(f"Load average {load[0]:.1f} on {os.cpu_count()} CPUs.")


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--million-table" in argv:  # issue 35 item 3's 1M table: bench_million.py's options
        import bench_million

        argv.remove("--million-table")
        bench_million.main(argv)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--million", action="store_true", help="also 1,000,000 leaves")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--open-queries", type=int, default=50)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sigmas", default="1.0,0.8,1.2")
    ap.add_argument("--ann-min-rows", type=int, default=DEFAULT_ANN_MIN_ROWS)
    ap.add_argument("--no-lexical", action="store_true", help="no BM25 index beside vectors")
    ap.add_argument("--files", type=int, default=1000, help="files for the client ingest row")
    ap.add_argument(
        "--open-only",
        action="store_true",
        help="only ingest, save and the fresh-process open (what a 1M run can afford here)",
    )
    ap.add_argument(
        "--index-dir",
        help="keep the built indexes here and reuse them on the next run; a run without "
        "--no-writes changes the index, so it deletes it at the end",
    )
    ap.add_argument(
        "--no-writes", action="store_true", help="skip the re-add and remove rows (keeps the index)"
    )
    ap.add_argument(
        "--ingest-only", action="store_true", help="only the bulk upsert + save rate (JSON)"
    )
    ap.add_argument(
        "--warmup", action="store_true", help="first 100 finds of a fresh process vs steady"
    )
    ap.add_argument("--warmup-rounds", type=int, default=2)
    ap.add_argument(
        "--warmup-config",
        choices=("dense", "default"),
        default="dense",
        help="--warmup's find config: dense only, or the default (hybrid: BM25 loads)",
    )
    ap.add_argument("--child-warmup", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--first-write", help="time the first write after opening this index")
    ap.add_argument("--growth", type=int, default=0, help="only the tail growth A/B at N rows")
    ap.add_argument("--child-open", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--child-ann-open", nargs=4, help=argparse.SUPPRESS)
    ap.add_argument(
        "--ann-compare", type=int, default=0, help="only compare hnswlib and usearch at N rows"
    )
    args = ap.parse_args(argv)
    if args.ann_compare:
        ann_compare(args.ann_compare, args.dim)
        return
    if args.child_open:
        child_open(*args.child_open)
        return
    if args.child_warmup:
        child_warmup(*args.child_warmup)
        return
    if args.first_write:
        first_write(args.first_write)
        return
    if args.growth:
        growth(args.growth, args)
        return
    if args.child_ann_open:
        child_ann_open(*args.child_ann_open)
        return
    args.sigmas = [float(s) for s in args.sigmas.split(",")]
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.million:
        sizes.append(1_000_000)
    tmp = Path(tempfile.mkdtemp(prefix="treehop-bench-store-"))
    if args.warmup:
        try:
            for n in sizes:
                warmup(n, args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    if args.ingest_only:
        try:
            for n in sizes:
                ingest_only(n, args, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    try:
        rows = [run_size(n, args, tmp) for n in sizes]
        cl = client_ingest(args, tmp) if args.files and not args.open_only else {}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    nan = float("nan")
    fmt = [
        ("leaves / nodes", lambda r: f"{r['leaves']} / {r['nodes']}"),
        ("raw float32 vectors MB", lambda r: f"{r['raw_mb']:.0f}"),
        ("open, fresh process, cold cache s", lambda r: f"{r['open_s']:.3f}"),
        ("first find after open ms", lambda r: f"{r['first_find_ms']:.1f}"),
        ("  its CPU time on the calling thread ms", lambda r: f"{r['first_find_cpu_ms']:.1f}"),
        ('open, verify="background" s', lambda r: f"{r['open_bg_s']:.3f}"),
        ("  first find after that open ms", lambda r: f"{r['first_find_bg_ms']:.1f}"),
        ("  then waiting for HNSW load s", lambda r: f"{r['ann_wait_s']:.2f}"),
        ("HNSW graph open at the first find", lambda r: "yes" if r.get("ann_at_first") else "no"),
        ("RSS growth / raw: open + first find", lambda r: f"{r['mem_ratio_first']:.2f}"),
        ("RSS growth / raw: after all finds", lambda r: f"{r['mem_ratio_all']:.2f}"),
        ("HNSW file / raw", lambda r: f"{r.get('ann_ratio', 0):.2f}" if r["ann"] else "off"),
        ("flat exact BLAS p50 ms", lambda r: f"{r['flat_p50']:.2f}"),
        ("find() p50 ms, tree context off", lambda r: f"{r['find_p50']:.2f}"),
        ("find p50 / flat p50, tree context off", lambda r: f"{r['find_ratio']:.2f}"),
        ("find() p50 ms, default (tree context on)", lambda r: f"{r['ctx_p50']:.2f}"),
        ("find p50 / flat p50, default", lambda r: f"{r['ctx_ratio']:.2f}"),
        ("find top-10 == exhaustive (share; context off)", lambda r: f"{r['equal10']:.3f}"),
        ("find top-10 overlap with exhaustive", lambda r: f"{r['agree10']:.3f}"),
        ("store global step (top-10 leaves) p50 ms", lambda r: f"{r['step_p50']:.2f}"),
        ("store global step p50 / flat p50", lambda r: f"{r['step_ratio']:.3f}"),
        ("store top-10 == exhaustive (share)", lambda r: f"{r['step_equal10']:.3f}"),
        ("store ingest rows/s (upsert+save)", lambda r: f"{r['ingest_rows_s']:.0f}"),
        (
            "HNSW build s wall / CPU (background worker)",
            lambda r: f"{r['ann_build_s']:.0f} / {r['ann_build_cpu_s']:.0f}" if r["ann"] else "off",
        ),
        (
            "writes that start the build ms",
            lambda r: f"{r['ann_write_s'] * 1000:.1f}" if r["ann"] else "off",
        ),
        ("re-add, 100 changed files, store side s", lambda r: f"{r.get('readd_s', nan):.2f}"),
        (
            "remove subtree s (nodes)",
            lambda r: f"{r.get('remove_s', nan):.2f} ({r.get('removed', 0)})",
        ),
        ("store.search QPS 1 thread", lambda r: f"{r['store_qps1']:.0f}"),
        ("store.search QPS 2 threads / 1", lambda r: f"{r['store_qps2'] / r['store_qps1']:.2f}"),
        ("find() QPS 1 thread", lambda r: f"{r['find_qps1']:.0f}"),
        ("find() QPS 2 threads / 1", lambda r: f"{r['find_qps2'] / r['find_qps1']:.2f}"),
        ("find() QPS 1 thread, one loop thread", lambda r: f"{r['loop_qps1']:.0f}"),
        (
            "find() QPS 2 threads / 1, one loop thread",
            lambda r: f"{r['loop_qps2'] / r['loop_qps1']:.2f}",
        ),
        ("find() QPS 1 thread, fresh client (first pass)", lambda r: f"{r['fresh_qps1']:.0f}"),
        (
            "find() QPS 2 threads / 1, fresh clients",
            lambda r: f"{r['fresh_qps2'] / r['fresh_qps1']:.2f}",
        ),
        (
            "find() QPS 2 threads, reader_processes=2 / 1 thread, fresh clients",
            lambda r: f"{r['pool_qps2'] / r['fresh_qps1']:.2f}",
        ),
        ("batch-32 speed-up, global step", lambda r: f"{r['batch_global']:.2f}"),
        ("batch-32 speed-up, exact scoped", lambda r: f"{r['batch_exact']:.2f}"),
        ("batch-32 speed-up, exact whole index", lambda r: f"{r['batch_exact_all']:.2f}"),
    ]
    if args.open_only:
        fmt = fmt[:11] + [
            f for f in fmt if f[0].startswith(("store ingest", "HNSW build", "writes"))
        ]
    width = max(len(k) for k, _ in fmt)
    print(f"{'':<{width}}  " + "  ".join(f"{r['leaves']:>12}" for r in rows))
    for label, f in fmt:
        print(f"{label:<{width}}  " + "  ".join(f"{f(r):>12}" for r in rows))
    if cl:
        print(
            f"\nclient add_resource of {args.files} files ({cl['client_nodes']} nodes), "
            f"embedding excluded: {cl['ingest_tags_nodes_s']:.0f} nodes/s with automatic tags, "
            f"{cl['ingest_notags_nodes_s']:.0f} without; re-add with 5% of files changed: "
            f"{cl['readd_tags_s']:.2f} s with tags ({cl['readd_tags_embedded']} re-embedded), "
            f"{cl['readd_notags_s']:.2f} s without"
        )
    load = os.getloadavg()
    print(
        f"\n{args.queries} queries, limit 10, dense only, HNSW from {args.ann_min_rows} rows. "
        f"Load average {load[0]:.1f} on {os.cpu_count()} CPUs. "
        f"Peak RSS of this process "
        f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB."
    )


if __name__ == "__main__":
    main()
