"""find() against the store's own graph search and faiss HNSW, in one process, interleaved
(issue 35 item 1), and ``find_many`` against single finds.

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_overhead.py --index /work/idx/findfast-100k

``--index``: bench_find_profile's 100k index (built there on first use: the clustered tree of
bench_latency, 384-d, the HNSW graph on, the BM25 index beside it) with its ``queries.npy``.
The leaf vectors are drawn again from the same seed (the tree is deterministic) for the exact
top-10 and for faiss's ``IndexHNSWFlat`` (inner product, ``--faiss-m``, efConstruction 40,
``--faiss-ef``; built once, kept as ``INDEX/faiss-hnsw-m32.bin``; ``--faiss-efc`` another
efConstruction, kept beside it). Beside that row, ``faiss_fair``:
the same index searched at the smallest efSearch of a sweep (16, 24, 32, ... 2048) whose
recall@10 on the timed queries reaches ``--faiss-recall`` (0.99: the issue's goal pairs
"<= 5x faiss" with recall@10 >= 0.99, and efSearch 64 answers at ~0.96); the sweep is printed.

Per query, in turn (the order rotating, so that each sees the same load): faiss's one-query
search, the store's global step as a find makes it (``store.search`` of the target's leaves,
limit 10: the graph call and the rows around it), ``find()`` with tree context on and dense
only (bench_store's "default" row), the same with tree context off (its top 10 is the
exact cosine top 10 when the search finds it: the recall row), and ``find()`` with the full
default config (hybrid, ``dense_weight`` 0.5; the query texts are ``q0``, ``q1``...: no term
of the tree, so BM25 finds nothing and only its cost is measured). The graph answers the
store keeps for a repeated query are dropped before each timed call. Then batches of
``--batch``: ``find_many`` of the batch vs the same queries one ``find()`` at a time, and
faiss's batch search, as QPS.

``--reader-processes N`` runs only the batch rows of issue 35 round 6 (``reader_rows``):
find_many on a client with N reader processes against single finds and in-process find_many.

Recall@10: the leaves of find()'s top 10 (``include_directories=False``) vs the exact top 10
by cosine over every leaf (and faiss's the same way).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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
from treehop.stores.base import Scope  # noqa: E402
from treehop.stores.embedded import EmbeddedStore  # noqa: E402

KW: dict[str, Any] = {"target_uri": bl.TARGET, "limit": 10, "include_directories": False}


def forget_answers(store: EmbeddedStore) -> None:
    """bench_store's: drop the graph answers and exact scores kept for a repeated query."""
    ann = store._ann
    if ann is not None:
        ann.recent.clear()
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("all", "dense")]:
        cache.pop(key, None)


def faiss_index(path: Path, flat: np.ndarray, m: int, efc: int = 40) -> Any:
    import faiss

    if path.exists():
        return faiss.read_index(str(path))
    index = faiss.IndexHNSWFlat(flat.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = efc
    t0 = time.perf_counter()
    faiss.omp_set_num_threads(2)  # (the build only: the timed searches run on one thread)
    index.add(flat)
    faiss.omp_set_num_threads(1)
    print(f"faiss HNSW build: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    faiss.write_index(index, str(path))
    return index


def fair_faiss_ef(
    fx: Any, qs: np.ndarray, exact: list[set[str]], leaf_uris: np.ndarray, goal: float
) -> tuple[int, list[tuple[int, float]]]:
    """The smallest efSearch (of a doubling-ish sweep) whose recall@10 on ``qs`` reaches
    ``goal``: the faiss row a find() at recall 1.000 is fairly compared with (on faiss's
    default build, efConstruction 40, efSearch 64 answers at ~0.96; built with
    efConstruction 200 it reaches 1.000 at 64). Returns it and the sweep's (efSearch,
    recall) pairs up to it."""
    import faiss

    sweep: list[tuple[int, float]] = []
    for ef in (16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 2048):
        _, ids = fx.search(qs, 10, params=faiss.SearchParametersHNSW(efSearch=ef))
        hits = sum(len(set(leaf_uris[row]) & ex) for row, ex in zip(ids, exact, strict=True))
        sweep.append((ef, hits / (10 * len(exact))))
        if hits >= goal * 10 * len(exact) - 1e-6:  # counted in hits: 0.99 is no float sum
            return ef, sweep
    raise SystemExit(f"faiss reaches no recall@10 >= {goal} up to efSearch 2048: {sweep}")


def chroma_collection(path: Path, flat: np.ndarray) -> Any:
    """chromadb's persistent collection of ``flat`` (ids = row numbers), with chromadb's
    defaults but cosine space; built once (its ingest rate printed), reopened after."""
    import chromadb

    client = chromadb.PersistentClient(path=str(path))
    col = client.get_or_create_collection("leaves", metadata={"hnsw:space": "cosine"})
    have = col.count()
    if have < len(flat):
        step = min(5000, client.get_max_batch_size())
        t0 = time.perf_counter()
        for lo in range(have, len(flat), step):
            hi = min(lo + step, len(flat))
            col.add(ids=[str(i) for i in range(lo, hi)], embeddings=flat[lo:hi])
        dt = time.perf_counter() - t0
        print(
            f"chromadb ingest: {len(flat) - have} rows in {dt:.1f} s "
            f"({(len(flat) - have) / dt:,.0f} rows/s)",
            file=sys.stderr,
        )
    return col


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--leaves", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--batches", type=int, default=6)
    ap.add_argument("--faiss-m", type=int, default=32)
    ap.add_argument("--faiss-ef", type=int, default=64)
    ap.add_argument(
        "--faiss-efc",
        type=int,
        default=40,
        help="faiss's efConstruction (its default 40; another value builds and keeps "
        "INDEX/faiss-hnsw-m{M}-efc{EFC}.bin: a better-built graph reaches a recall at a "
        "smaller efSearch)",
    )
    ap.add_argument(
        "--faiss-recall",
        type=float,
        default=0.99,
        help="also time faiss at the smallest efSearch of a sweep whose recall@10 on the same "
        "queries reaches this (issue 35 pairs '<= 5x faiss' with recall@10 >= 0.99)",
    )
    ap.add_argument(
        "--chromadb",
        action="store_true",
        help="also chromadb's in-process HNSW (its defaults, cosine), built once as "
        "INDEX/chroma and timed beside the others; needs chromadb installed (not a project "
        "dependency: it pins its own pydantic; a --system-site-packages venv keeps it apart)",
    )
    ap.add_argument(
        "--dump",
        type=Path,
        help="write every find's list (uri, score, own score, found_by) per config and query "
        "as JSON: run under two source trees and compare (a speed change must not move one)",
    )
    ap.add_argument(
        "--reader-processes",
        type=lambda v: v if v == "auto" else int(v),
        default=0,
        metavar="N|auto",
        help="only the reader-process batch rows: find_many batches of --batch on a "
        "Treehop(INDEX, reader_processes=N) client (split over this process and its N "
        "workers) vs single finds on the same client vs in-process find_many, interleaved; "
        "wall QPS and process+workers CPU, worker start time and memory; 'auto': the "
        "clients' default (workers for batches only, started by the first batch)",
    )
    args = ap.parse_args()
    if args.reader_processes:
        reader_rows(args)
        return
    import faiss

    faiss.omp_set_num_threads(1)  # one query, one thread, as the store's single search

    syn = bl.make_tree(bl.shape_for(args.leaves), 384, 0, [1.0, 0.8, 1.2])
    leaf_idx = [i for i, nd in enumerate(syn.nodes) if nd.is_leaf]
    leaf_uris = np.array([syn.nodes[i].uri for i in leaf_idx])
    flat = np.ascontiguousarray(syn.vectors[leaf_idx])
    del syn
    qs = np.load(args.index / "queries.npy").astype(np.float32)
    n = min(args.queries + 10, len(qs))
    efc = "" if args.faiss_efc == 40 else f"-efc{args.faiss_efc}"
    fx = faiss_index(
        args.index / f"faiss-hnsw-m{args.faiss_m}{efc}.bin", flat, args.faiss_m, args.faiss_efc
    )
    fx.hnsw.efSearch = args.faiss_ef
    exact = [set(leaf_uris[np.argsort(-(flat @ q))[:10]]) for q in qs[:n]]
    fair_ef, sweep = fair_faiss_ef(fx, qs[10:n], exact[10:n], leaf_uris, args.faiss_recall)
    fair = faiss.SearchParametersHNSW(efSearch=fair_ef)
    print(
        "faiss efSearch sweep (recall@10 on the timed queries): "
        + ", ".join(f"{ef}: {r:.4f}" for ef, r in sweep)
        + f"; smallest >= {args.faiss_recall}: efSearch {fair_ef}"
    )
    chroma = chroma_collection(args.index / "chroma", flat) if args.chromadb else None

    store = EmbeddedStore(args.index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    emb = bl.PreparedQueryEmbedder(384)
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    ctx = Treehop(embedder=emb, store=store, config=RetrievalConfig(dense_weight=1.0), tagger=None)
    plain_cfg = RetrievalConfig(
        dense_weight=1.0,
        context_neighbour_weight=0.0,
        context_parent_weight=0.0,
        context_sibling_weight=0.0,
    )
    plain = Treehop(embedder=emb, store=store, config=plain_cfg, tagger=None)
    dflt = Treehop(embedder=emb, store=store, config=RetrievalConfig(), tagger=None)
    glob = Scope(subtrees=(bl.TARGET,), leaves_only=True)
    dflt.find("q0", **KW)  # the BM25 index loads on the first hybrid search: not timed here

    timed: dict[str, Callable[[int], Any]] = {
        "faiss": lambda i: fx.search(qs[i : i + 1], 10),
        "faiss_fair": lambda i: fx.search(qs[i : i + 1], 10, params=fair),
        "store": lambda i: store.search(qs[i], glob, 10),
        "find_plain": lambda i: plain.find(f"q{i}", **KW),
        "find_ctx": lambda i: ctx.find(f"q{i}", **KW),
        "find_default": lambda i: dflt.find(f"q{i}", **KW),
    }
    if chroma is not None:
        timed["chromadb"] = lambda i: chroma.query(query_embeddings=qs[i : i + 1], n_results=10)
    times: dict[str, list[float]] = {k: [] for k in timed}
    cpu: dict[str, list[float]] = {k: [] for k in timed}
    recall: dict[str, list[float]] = {k: [] for k in timed if k != "store"}
    names = list(timed)
    dumped: dict[str, Any] = {}
    for i in range(n):
        order = names[i % len(names) :] + names[: i % len(names)]
        for name in order:
            forget_answers(store)
            t0, c0 = time.perf_counter(), time.thread_time()
            got = timed[name](i)
            dt = (time.perf_counter() - t0) * 1e3
            dc = (time.thread_time() - c0) * 1e3
            if i < 10:
                continue  # caches warm up
            times[name].append(dt)
            cpu[name].append(dc)
            if name in ("faiss", "faiss_fair"):
                uris = set(leaf_uris[got[1][0]])
            elif name == "chromadb":
                uris = set(leaf_uris[[int(x) for x in got["ids"][0]]])
            elif name == "store":
                continue
            else:
                uris = {m.uri for m in got.resources if m.is_leaf}
                dumped[f"{name}|{i}"] = [
                    [m.uri, m.score, m.own_score, str(m.found_by)] for m in got.resources
                ]
            recall[name].append(len(uris & exact[i]) / 10)
    if args.dump is not None:
        args.dump.write_text(json.dumps(dumped))
    p50 = {k: statistics.median(v) for k, v in times.items()}
    c50 = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"load: {os.getloadavg()}; {n - 10} queries, p50 ms (interleaved): wall, thread CPU")
    for k, v in p50.items():
        rc = f"  recall@10 {statistics.fmean(recall[k]):.3f}" if k in recall else ""
        ef = (
            f" (efSearch {fair_ef if k == 'faiss_fair' else args.faiss_ef})" if "faiss" in k else ""
        )
        print(f"  {k:13s} {v:7.3f} {c50[k]:7.3f}{rc}{ef}")
    for k in ("find_plain", "find_ctx", "find_default"):
        print(
            f"  {k} / store {p50[k] / p50['store']:.2f} (CPU {c50[k] / c50['store']:.2f})"
            f"   / faiss {p50[k] / p50['faiss']:.2f} (CPU {c50[k] / c50['faiss']:.2f})"
            f"   / faiss_fair {p50[k] / p50['faiss_fair']:.2f}"
            f" (CPU {c50[k] / c50['faiss_fair']:.2f})"
        )

    # batches: find_many vs one by one (both configs), and faiss's batch search (2 threads)
    b = args.batch
    qps: dict[str, list[float]] = {}
    pcpu: dict[str, list[float]] = {}  # process CPU ms per query (usearch's threads counted)
    same = total = 0
    for k in range(args.batches):
        lo = 10 + k * b
        if lo + b > len(qs):
            break
        batch = [f"q{i}" for i in range(lo, lo + b)]
        for label, client in (("ctx", ctx), ("default", dflt)):
            forget_answers(store)
            t0, c0 = time.perf_counter(), time.process_time()
            singles = [client.find(t, **KW) for t in batch]
            qps.setdefault(f"single {label}", []).append(b / (time.perf_counter() - t0))
            pcpu.setdefault(f"single {label}", []).append((time.process_time() - c0) * 1e3 / b)
            many = getattr(client, "find_many", None)
            if many is None:
                continue
            forget_answers(store)
            t0, c0 = time.perf_counter(), time.process_time()
            res = many(batch, **KW)
            qps.setdefault(f"find_many {label}", []).append(b / (time.perf_counter() - t0))
            pcpu.setdefault(f"find_many {label}", []).append((time.process_time() - c0) * 1e3 / b)
            total += b
            same += sum(
                [(m.uri, m.score, m.found_by) for m in r.resources]
                == [(m.uri, m.score, m.found_by) for m in s.resources]
                for r, s in zip(res, singles, strict=True)
            )
        faiss.omp_set_num_threads(2)
        t0 = time.perf_counter()
        fx.search(qs[lo : lo + b], 10)
        qps.setdefault("faiss batch", []).append(b / (time.perf_counter() - t0))
        t0 = time.perf_counter()
        fx.search(qs[lo : lo + b], 10, params=fair)
        qps.setdefault(f"faiss batch ef{fair_ef}", []).append(b / (time.perf_counter() - t0))
        faiss.omp_set_num_threads(1)
    med = {k: statistics.median(v) for k, v in qps.items()}
    print(f"batches of {b} (QPS, median of {len(qps['faiss batch'])}):")
    for k, v in med.items():
        print(f"  {k:18s} {v:8.0f}")
    for label in ("ctx", "default"):
        if f"find_many {label}" in med:
            r = med[f"find_many {label}"] / med[f"single {label}"]
            one = statistics.median(pcpu[f"single {label}"])
            many_c = statistics.median(pcpu[f"find_many {label}"])
            print(
                f"  find_many / single ({label}) {r:.2f}; process CPU per query {one:.3f} -> "
                f"{many_c:.3f} ms ({one / many_c:.2f}x)"
            )
    if total:
        print(f"  find_many lists identical to find()'s: {same}/{total}")
    print(f"load after: {os.getloadavg()}")
    ctx.close()


def _proc_cpu_s(pid: int) -> float:
    """A process's user+system CPU seconds (``/proc/PID/stat``: a live worker's CPU, which
    ``os.times()`` counts only for children that were waited for)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _proc_mem_mib(pid: int) -> tuple[float, float, float]:
    """A process's RSS, PSS and private memory in MiB (PSS splits the shared pages, the
    memory-mapped index among them, between the processes that map them; private: the
    pages no other process maps, what the worker adds)."""
    out = dict.fromkeys(("Rss", "Pss", "Private_Clean", "Private_Dirty"), 0.0)
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in out:
            out[key] = int(rest.split()[0]) / 1024
    return out["Rss"], out["Pss"], out["Private_Clean"] + out["Private_Dirty"]


def reader_rows(args: argparse.Namespace) -> None:
    """find_many over reader processes (issue 35 round 6): per batch, in a rotating order,
    single finds on the pooled client (a lone caller: answered here), its find_many (split
    into this process's part and one per worker) and find_many on a client without workers;
    wall QPS, and CPU of this process plus the workers over all batches."""
    qs = np.load(args.index / "queries.npy").astype(np.float32)
    emb = bl.PreparedQueryEmbedder(384)
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    me = os.getpid()
    configs = {
        "default": RetrievalConfig(),
        "ctx": RetrievalConfig(dense_weight=1.0),
    }
    for label, cfg in configs.items():
        t0 = time.perf_counter()
        pooled = Treehop(
            args.index,
            embedder=emb,
            config=cfg,
            tagger=None,
            reader_processes=args.reader_processes,
        )
        assert pooled._wait_readers(300), "the reader processes did not start"
        start_s = time.perf_counter() - t0
        assert pooled._readers is not None
        pool = pooled._readers[1]
        pids = [w.process.pid for w in pool._workers if w.process.pid is not None]
        here = Treehop(embedder=emb, store=pooled.store, config=cfg, tagger=None)
        pooled.find("q0", **KW)  # the BM25 index loads on the first hybrid search
        for _ in range(2 * len(pids)):  # each worker's first reads (its BM25 load)
            pooled.find_many([f"q{i}" for i in range(args.batch)], **KW)
        quiet = time.perf_counter()
        while time.perf_counter() - quiet < 60:  # the workers' background checksum pass ends
            c = sum(_proc_cpu_s(p) for p in pids)
            time.sleep(1.0)
            if sum(_proc_cpu_s(p) for p in pids) - c < 0.02:
                break
        print(f"  (workers quiet after {time.perf_counter() - quiet:.1f} s)")
        store = pooled.store
        assert isinstance(store, EmbeddedStore)
        runs: dict[str, Callable[[list[str]], list[Any]]] = {
            "single": lambda b, c=pooled: [c.find(t, **KW) for t in b],
            "find_many pool": lambda b, c=pooled: c.find_many(b, **KW),
            "find_many here": lambda b, c=here: c.find_many(b, **KW),
        }
        qps: dict[str, list[float]] = {k: [] for k in runs}
        cpu: dict[str, float] = dict.fromkeys(runs, 0.0)
        wcpu: dict[str, float] = dict.fromkeys(runs, 0.0)
        same = total = 0
        names = list(runs)
        b = args.batch
        for k in range(args.batches):
            lo = 10 + (k * b) % (len(qs) - 10 - b)
            batch = [f"q{i}" for i in range(lo, lo + b)]
            got: dict[str, list[Any]] = {}
            for name in names[k % 3 :] + names[: k % 3]:
                forget_answers(store)
                w0 = sum(_proc_cpu_s(p) for p in pids)
                t0, c0 = time.perf_counter(), time.process_time()
                got[name] = runs[name](batch)
                qps[name].append(b / (time.perf_counter() - t0))
                cpu[name] += time.process_time() - c0
                wcpu[name] += sum(_proc_cpu_s(p) for p in pids) - w0
            for name in ("find_many pool", "find_many here"):
                total += b
                same += sum(
                    [(m.uri, m.score, m.found_by) for m in r.resources]
                    == [(m.uri, m.score, m.found_by) for m in s.resources]
                    for r, s in zip(got[name], got["single"], strict=True)
                )
        n = args.batches * b
        med = {k: statistics.median(v) for k, v in qps.items()}
        print(
            f"{label}: reader_processes={args.reader_processes}, {args.batches} batches of {b}, "
            f"load {os.getloadavg()}"
        )
        for name in names:
            c = (cpu[name] + wcpu[name]) * 1e3 / n
            print(
                f"  {name:15s} QPS {med[name]:6.0f} ({med[name] / med['single']:.2f}x single)"
                f"  CPU/query {c:.3f} ms (here {cpu[name] * 1e3 / n:.3f}, workers "
                f"{wcpu[name] * 1e3 / n:.3f})"
            )
        print(f"  lists identical to single find()'s: {same}/{total}")
        mem = [_proc_mem_mib(p) for p in pids]
        print(
            f"  start (client + {len(pids)} workers ready): {start_s:.2f} s; worker RSS "
            + ", ".join(f"{m[0]:.0f}" for m in mem)
            + " MiB, PSS "
            + ", ".join(f"{m[1]:.0f}" for m in mem)
            + " MiB, private "
            + ", ".join(f"{m[2]:.0f}" for m in mem)
            + f" MiB; this process RSS {_proc_mem_mib(me)[0]:.0f} MiB"
        )
        here.close()
        pooled.close()


if __name__ == "__main__":
    main()
