"""Issue 35 item 3: the embedded store at 1M leaves on this machine, beside usearch and faiss.

    nice -n 5 python bench/bench_store.py --million-table --index-dir /work/idx/onem-1m
    nice -n 5 python bench/bench_million.py --index-dir /work/idx/onem-1m --stages open
    python bench/bench_million.py --leaves 100000 --index-dir /tmp/m100k --compare-rows 50000

One command, stages in order (``--stages``, default all of them):

- ``ingest``: the store's bulk ingest of the synthetic clustered tree (bench_latency's shape:
  1M leaves under 200 x 10 x 10 directories, 384-d), ``upsert`` in batches of 5,000 and one
  ``save()``, graph off: rows/s and the peak RSS of this process. The vectors are generated
  in blocks into one float32 matrix and the ``Node`` models are built per batch (the tree
  bench's generator holds 1M ``Node`` models: 11.9 GB peak RSS at 1M). Skipped when
  ``--index-dir`` already holds an index (it is reused: the build costs minutes of both
  cores).
- ``build``: the store's own background graph build (``ann_min_rows`` set, ``wait_ann``)
  from nothing to every row, wall and process CPU (every thread), then a save.
- ``compare``: the graph build rate of the same first ``--compare-rows`` leaf vectors by
  usearch's ``Index.add`` (the store's settings: i8, inner product, ``CONNECTIVITY`` links,
  ``EXPANSION_ADD`` wide, 2 threads; once whole, once in the worker's chunks), faiss
  ``IndexHNSWFlat`` (M = ``CONNECTIVITY``, efConstruction = ``EXPANSION_ADD``, 2 OpenMP
  threads) and the store's :class:`AnnIndex` path as its worker runs it (``extend`` in chunks
  with the reachability check, then the sweep that ends a first build); each graph's recall@10
  at search width ``EF`` against the exact top-10.
- ``open``: fresh processes, the index files evicted from the page cache first
  (``posix_fadvise(DONTNEED)``: ``/proc/sys/vm/drop_caches`` is denied here even as root):
  the open, the first ``find()``, ``--queries`` finds (tree context off, then the default),
  then exact flat BLAS searches of the same leaf vectors (read from the store); find() p50
  against flat p50, recall@10 of find()'s leaves against the exact top-10, and the
  process's RSS growth from before the open to after the finds (before the flat matrix is
  gathered) over the raw float32 vectors, with the resident bytes of each mapped file. Then
  a warm open (page cache kept) and its first find, and a cold open with
  ``verify="background"`` (checksums in a thread; damage found later fails every call).

Stages not in the default list (issue 35 round 4):

- ``chroma``: chromadb's persistent collection of the same leaf vectors (its defaults, cosine
  space), ``add`` in batches of 5,000 into ``--chroma-dir``: rows/s and process CPU, printed
  every 100k rows (run it with a Python that has chromadb, e.g. a ``--system-site-packages``
  venv: it pins its own pydantic).
- ``side``: one process, queries interleaved: faiss ``IndexHNSWFlat`` (``--faiss-m``,
  ``--faiss-ef``; built once with 2 threads and kept beside the chroma folder), chromadb's
  ``collection.query``, the store's global step (``store.search``) and ``find()`` (tree
  context off; defaults): p50 wall and thread CPU, recall@10 against the exact top-10.
- ``reads``: ``find()`` with the saved vectors mapped (``vector_reads="map"``) and read by
  ``pread`` (the default at 1M), two stores in one process, interleaved: p50, recall@10 and
  whether the lists are identical.

Heavy stages belong under ``nice -n 5`` on this shared machine; the load average is printed
with every stage.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop import ContextType, Node, RetrievalConfig, Treehop  # noqa: E402
from treehop.stores import _ann  # noqa: E402
from treehop.stores.embedded import DEFAULT_ANN_MIN_ROWS, EmbeddedStore  # noqa: E402

F32 = npt.NDArray[np.float32]
ROOT, TARGET = bl.ROOT, bl.TARGET


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _mapped_rss(under: str) -> dict[str, int]:
    """Resident bytes per mapped file under ``under`` (by name), and anonymous memory."""
    out: dict[str, int] = {}
    name = "?"
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if not head:
                continue
            if "-" in head[0] and len(head) >= 5:
                path = head[5] if len(head) > 5 else ""
                name = (
                    os.path.basename(path)
                    if path.startswith(under)
                    else ("anon" if not path else "other")
                )
            elif head[0] == "Rss:":
                out[name] = out.get(name, 0) + int(head[1]) * 1024
    return out


def _page_cache(path: Path) -> dict[str, int]:
    """Bytes of each index file in the page cache (util-linux ``fincore``; empty without
    it): the kernel's, shared by every process, reclaimable, and not in any RSS."""
    files = [str(f) for f in sorted(path.rglob("*.bin")) if f.is_file()]
    try:
        res = subprocess.run(
            ["fincore", "--bytes", "--raw", "--noheadings", "-o", "RES,FILE", *files],
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return {}
    out: dict[str, int] = {}
    for line in res.stdout.splitlines():
        size, _, name = line.partition(" ")
        out[os.path.basename(name)] = out.get(os.path.basename(name), 0) + int(size)
    return out


def _evict(path: Path) -> None:
    for f in path.rglob("*"):
        if f.is_file():
            fd = os.open(f, os.O_RDONLY)
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


# ---------------------------------------------------------------------- the tree, lightly
@dataclass
class LightTree:
    """bench_latency's synthetic clustered tree without a ``Node`` per row: the vectors in
    one float32 matrix (upsert order: root, target, 3 directory levels, leaves) and the
    nodes built on demand per range of rows."""

    shape: bl.Shape
    vectors: F32
    leaf_centres: F32  # one per leaf directory, to draw queries near (bl.make_queries)
    first_leaf: int

    def nodes(self, start: int, stop: int) -> list[Node]:
        a, b, c = self.shape.fanout
        per = self.shape.leaves_per_dir
        res = ContextType.RESOURCE
        out: list[Node] = []
        for r in range(start, stop):
            if r == 0:
                out.append(
                    Node(
                        uri=ROOT,
                        parent_uri=None,
                        context_type=res,
                        level=0,
                        is_leaf=False,
                        abstract="resources",
                    )
                )
                continue
            if r == 1:
                out.append(
                    Node(
                        uri=TARGET,
                        parent_uri=ROOT,
                        context_type=res,
                        level=1,
                        is_leaf=False,
                        abstract="synthetic tree",
                        ancestors=[ROOT],
                    )
                )
                continue
            if r < self.first_leaf:
                i = r - 2
                if i < a:
                    path = [i]
                elif i < a + a * b:
                    q = i - a
                    path = [q // b, q % b]
                else:
                    q = i - a - a * b
                    path = [q // (b * c), (q // c) % b, q % c]
                uris = _dir_uris(path)
                out.append(
                    Node(
                        uri=uris[-1],
                        parent_uri=uris[-2],
                        context_type=res,
                        level=1,
                        is_leaf=False,
                        abstract="topic " + ".".join(map(str, path)),
                        ancestors=[ROOT, *uris[:-1]],
                    )
                )
                continue
            q, m = divmod(r - self.first_leaf, per)
            k, j, i = q % c, (q // c) % b, q // (b * c)
            uris = _dir_uris([i, j, k])
            out.append(
                Node(
                    uri=f"{uris[-1]}/f{m:03d}.md",
                    parent_uri=uris[-1],
                    context_type=res,
                    level=2,
                    is_leaf=True,
                    abstract=f"leaf {m}",
                    content=f"leaf {i}.{j}.{k}.{m}",
                    ancestors=[ROOT, *uris],
                )
            )
        return out


def _dir_uris(path: Sequence[int]) -> list[str]:
    """``[TARGET, t.., s.., d..]`` down to the directory ``path`` names."""
    out = [TARGET]
    for depth, x in enumerate(path):
        out.append(out[-1] + ("/t%03d", "/s%02d", "/d%02d")[depth] % x)
    return out


def light_tree(
    n: int, dim: int, seed: int, sigmas: Sequence[float], block: int = 2_000
) -> LightTree:
    """The tree's vectors, drawn by blocks of ``block`` leaf directories straight into one
    float32 matrix (peak: the matrix plus a block), directories as the normalised mean of
    their children as in ``bl.make_tree``."""
    shape = bl.shape_for(n)
    rng = np.random.default_rng(seed)
    a, b, c = shape.fanout
    per = shape.leaves_per_dir
    s_sub, s_leafdir, s_leaf = sigmas
    top = bl._unit(rng.standard_normal((a, dim)).astype(np.float32))
    mid = bl._jitter(rng, top, b, s_sub)
    low = bl._jitter(rng, mid, c, s_leafdir)
    first_leaf = 2 + a + a * b + a * b * c
    mat = np.empty((first_leaf + shape.leaves, dim), dtype=np.float32)
    leaves = mat[first_leaf:]
    scale = np.float32(s_leaf / np.sqrt(dim))
    low_v = np.empty_like(low)
    for d0 in range(0, low.shape[0], block):
        d1 = min(d0 + block, low.shape[0])
        part = leaves[d0 * per : d1 * per]
        part[:] = np.repeat(low[d0:d1], per, axis=0)
        part += rng.standard_normal(part.shape, dtype=np.float32) * scale
        part /= np.linalg.norm(part, axis=1, keepdims=True)
        low_v[d0:d1] = bl._unit(part.reshape(d1 - d0, per, dim).mean(axis=1))
    mid_v = bl._unit(low_v.reshape(len(mid), c, dim).mean(axis=1))
    top_v = bl._unit(mid_v.reshape(a, b, dim).mean(axis=1))
    target_v = bl._unit(top_v.mean(axis=0, keepdims=True))
    mat[0] = target_v[0]
    mat[1] = target_v[0]
    mat[2 : 2 + a] = top_v
    mat[2 + a : 2 + a + a * b] = mid_v
    mat[2 + a + a * b : first_leaf] = low_v
    return LightTree(shape, mat, low, first_leaf)


def queries_for(tree: LightTree, n: int, seed: int, sigmas: Sequence[float]) -> F32:
    return bl.make_queries(tree, n, seed, sigmas[2])  # type: ignore[arg-type]


# ---------------------------------------------------------------------- stages
def stage_ingest(tree: LightTree, path: Path, batch: int = 5_000) -> dict[str, Any]:
    store = EmbeddedStore(path, ann_min_rows=None)
    n = tree.vectors.shape[0]
    load0 = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    build_nodes = 0.0
    for i in range(0, n, batch):
        tb = time.perf_counter()
        nodes = tree.nodes(i, min(i + batch, n))
        build_nodes += time.perf_counter() - tb
        store.upsert(nodes, tree.vectors[i : i + len(nodes)])
    t_up = time.perf_counter() - t0 - build_nodes
    t1 = time.perf_counter()
    store.save()
    t_save = time.perf_counter() - t1
    cpu = time.process_time() - c0
    store.close()
    return {
        "rows": n,
        "upsert_s": round(t_up, 1),
        "save_s": round(t_save, 1),
        "rows_per_s": round(n / (t_up + t_save)),
        "node_models_s": round(build_nodes, 1),
        "cpu_s": round(cpu, 1),
        "peak_rss_mb": round(_peak_rss_mb()),
        "load": [load0, _load()],
    }


def stage_build(path: Path) -> dict[str, Any]:
    store = EmbeddedStore(path, ann_min_rows=None)
    if store._committed and store._committed.get("ann"):
        store.close()
        return {"skipped": "the index already has a graph"}
    load0 = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    store.ann_min_rows = DEFAULT_ANN_MIN_ROWS
    done = store.wait_ann()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    ann = store._ann
    t1 = time.perf_counter()
    store.save()
    t_save = time.perf_counter() - t1
    out = {
        "done": done,
        "labels": ann.count if ann else 0,
        "orphans": int(ann.orphans.size) if ann else 0,
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "rows_per_s": round((ann.count if ann else 0) / wall),
        "save_s": round(t_save, 1),
        "threads": store.ann_threads,
        "load": [load0, _load()],
    }
    store.close()
    return out


def _timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    got = fn()
    return got, time.perf_counter() - t0, time.process_time() - c0


def _recall(found: npt.NDArray[np.int64], exact: npt.NDArray[np.int64]) -> float:
    hits = [
        len(set(f[:10].tolist()) & set(e.tolist())) / 10 for f, e in zip(found, exact, strict=True)
    ]
    return round(float(np.mean(hits)), 4)


def stage_compare(
    tree: LightTree, rows: int, threads: int, qs: F32, chunks: bool = False, raw: bool = True
) -> dict[str, Any]:
    """The same leaf vectors into usearch (whole / chunked), faiss and the store's path."""
    import faiss
    from usearch.index import Index

    vecs = np.ascontiguousarray(tree.vectors[tree.first_leaf : tree.first_leaf + rows])
    dim = vecs.shape[1]
    # queries near the leaf directories these rows belong to (the whole tree's are mostly
    # far from a prefix of it)
    per = tree.shape.leaves_per_dir
    sub = LightTree(tree.shape, vecs, tree.leaf_centres[: max(1, rows // per)], 0)
    qs = bl.make_queries(sub, qs.shape[0], 1, 1.2)  # type: ignore[arg-type]
    exact = np.argsort(-(qs @ vecs.T), axis=1)[:, :10]
    out: dict[str, Any] = {"rows": rows, "threads": threads}

    def usearch_index() -> Any:
        return Index(
            ndim=dim,
            metric="ip",
            dtype="i8",
            connectivity=_ann.CONNECTIVITY,
            expansion_add=_ann.EXPANSION_ADD,
            expansion_search=_ann.EF,
        )

    def row(
        name: str,
        index_search: Callable[[F32], npt.NDArray[np.int64]],
        wall: float,
        cpu: float,
        load0: float,
        **extra: Any,
    ) -> None:
        out[name] = {
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "rows_per_s": round(rows / wall),
            "recall10": _recall(index_search(qs), exact),
            "load": [load0, _load()],
            **extra,
        }
        print(f"[compare] {name}: {out[name]}", file=sys.stderr, flush=True)

    def us_search(index: Any) -> Callable[[F32], npt.NDArray[np.int64]]:
        return lambda q: np.asarray(index.search(q, 10, threads=threads).keys, dtype=np.int64)

    if raw:
        # usearch, whole
        load0 = _load()
        idx = usearch_index()
        keys = np.arange(rows, dtype=np.uint64)
        _, wall, cpu = _timed(lambda: idx.add(keys, vecs, threads=threads))
        row("usearch_add", us_search(idx), wall, cpu, load0)
        idx = None
        # faiss HNSW flat
        load0 = _load()
        faiss.omp_set_num_threads(threads)
        fx = faiss.IndexHNSWFlat(dim, _ann.CONNECTIVITY, faiss.METRIC_INNER_PRODUCT)
        fx.hnsw.efConstruction = _ann.EXPANSION_ADD
        _, wall, cpu = _timed(lambda: fx.add(vecs))
        fx.hnsw.efSearch = _ann.EF

        def f_search(q: F32) -> npt.NDArray[np.int64]:
            return np.asarray(fx.search(q, 10)[1], dtype=np.int64)

        row("faiss_hnsw_flat", f_search, wall, cpu, load0)
        fx = None
    # the store's path: AnnIndex.extend (chunks + reachability check), then the sweep
    load0 = _load()
    ann = _ann.AnnIndex.new(dim)
    spent = {"check": 0.0}
    inner = ann._unreachable

    def counted(labels: Any, v: F32, th: int) -> Any:
        t = time.perf_counter()
        try:
            return inner(labels, v, th)
        finally:
            spent["check"] += time.perf_counter() - t

    ann._unreachable = counted  # type: ignore[method-assign]

    def vectors_of(r: npt.NDArray[np.int64]) -> F32:
        return vecs[r]

    every = np.arange(rows, dtype=np.int64)
    # as the store's worker does: a build that a sweep ends adds its chunks unchecked
    check = not ann.sweep_follows(rows) if hasattr(ann, "sweep_follows") else True
    _, w_ext, c_ext = _timed(
        lambda: (
            ann.extend(every, vectors_of, rows, threads, lambda: True, check)
            if not check
            else ann.extend(every, vectors_of, rows, threads, lambda: True)
        )
    )
    check_in_extend = spent["check"]
    swept = ann.needs_sweep()
    _, w_sw, c_sw = _timed(lambda: ann.sweep(vectors_of, threads, lambda: True) if swept else None)
    row(
        "treehop_annindex",
        lambda q: ann.query_many(q, 10, threads),
        w_ext + w_sw,
        c_ext + c_sw,
        load0,
        extend_s=round(w_ext, 1),
        check_in_extend_s=round(check_in_extend, 1),
        sweep_s=round(w_sw, 1),
        chunks_checked=check,
        orphans=int(ann.orphans.size),
    )
    # usearch in the worker's chunks
    if not chunks:
        return out
    load0 = _load()
    idx = usearch_index()

    def chunked() -> None:
        for i in range(0, rows, _ann.CHUNK):
            idx.add(keys[i : i + _ann.CHUNK], vecs[i : i + _ann.CHUNK], threads=threads)

    _, wall, cpu = _timed(chunked)
    row("usearch_add_chunks", us_search(idx), wall, cpu, load0)
    idx = None
    return out


def chroma_ingest(tree: LightTree, where: Path, batch: int = 5_000) -> dict[str, Any]:
    """chromadb's persistent collection of the leaf vectors (ids = leaf numbers; its
    defaults but cosine space), ``add`` in batches of ``batch``: rows/s and process CPU
    (every thread: chromadb's HNSW is native), progress printed every 100k rows so that a
    run stopped early still says its rate. Resumes a collection a stopped run left."""
    import chromadb

    leaves = tree.vectors[tree.first_leaf :]
    client = chromadb.PersistentClient(path=str(where))
    col = client.get_or_create_collection("leaves", metadata={"hnsw:space": "cosine"})
    have = col.count()
    step = min(batch, client.get_max_batch_size())
    load0 = _load()
    t0, c0 = time.perf_counter(), time.process_time()
    for lo in range(have, len(leaves), step):
        hi = min(lo + step, len(leaves))
        col.add(ids=[str(i) for i in range(lo, hi)], embeddings=leaves[lo:hi])
        if hi // 100_000 != lo // 100_000 or hi == len(leaves):
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            print(
                f"[chroma] {hi} rows ({hi - have} this run) in {dt:.1f} s, "
                f"{dc:.1f} CPU-s: {(hi - have) / dt:,.0f} rows/s; load {_load()}; "
                f"peak RSS {_peak_rss_mb():.0f} MB",
                file=sys.stderr,
                flush=True,
            )
    dt, dc = time.perf_counter() - t0, time.process_time() - c0
    added = len(leaves) - have
    return {
        "rows": int(col.count()),
        "added": int(added),
        "wall_s": round(dt, 1),
        "cpu_s": round(dc, 1),
        "rows_per_s": round(added / dt) if added else None,
        "peak_rss_mb": round(_peak_rss_mb()),
        "load": [load0, _load()],
    }


def leaf_uri(tree: LightTree, j: int) -> str:
    """The URI of leaf ``j`` (0-based among the leaves), as :meth:`LightTree.nodes` names it."""
    _, b, c = tree.shape.fanout
    q, m = divmod(j, tree.shape.leaves_per_dir)
    k, jj, i = q % c, (q // c) % b, q // (b * c)
    return f"{_dir_uris([i, jj, k])[-1]}/f{m:03d}.md"


KW: dict[str, Any] = {"target_uri": TARGET, "limit": 10, "include_directories": False}
PLAIN = RetrievalConfig(
    dense_weight=1.0,
    context_neighbour_weight=0.0,
    context_parent_weight=0.0,
    context_sibling_weight=0.0,
)


def _forget(store: EmbeddedStore) -> None:
    """Drop the graph answers and exact scores a store keeps for a repeated query."""
    if store._ann is not None:
        store._ann.recent.clear()
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("all", "dense")]:
        cache.pop(key, None)


def _interleaved(
    timed: dict[str, Callable[[int], set[str] | None]],
    n: int,
    exact: Sequence[set[str]],
    stores: Sequence[EmbeddedStore],
    warm: int = 10,
) -> dict[str, Any]:
    """Each query through every entry in turn (the order rotating, so that each sees the
    same load), the first ``warm`` untimed: p50 wall and thread CPU ms, recall@10 against
    ``exact`` (entries answering ``None`` have no recall row)."""
    names = list(timed)
    wall: dict[str, list[float]] = {k: [] for k in names}
    cpu: dict[str, list[float]] = {k: [] for k in names}
    rec: dict[str, list[float]] = {k: [] for k in names}
    for i in range(n):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            for st_ in stores:
                _forget(st_)
            t0, c0 = time.perf_counter(), time.thread_time()
            got = timed[name](i)
            dt, dc = (time.perf_counter() - t0) * 1e3, (time.thread_time() - c0) * 1e3
            if i < warm:
                continue
            wall[name].append(dt)
            cpu[name].append(dc)
            if got is not None:
                rec[name].append(len(got & exact[i]) / 10)
    return {
        k: {
            "p50_ms": round(float(np.median(wall[k])), 3),
            "cpu_p50_ms": round(float(np.median(cpu[k])), 3),
            **({"recall10": round(float(np.mean(rec[k])), 4)} if rec[k] else {}),
        }
        for k in names
    }


def _exact_uris(tree: LightTree, qs: F32) -> list[set[str]]:
    leaves = tree.vectors[tree.first_leaf :]
    out = []
    for lo in range(0, qs.shape[0], 50):
        sc = qs[lo : lo + 50] @ leaves.T
        top = np.argpartition(-sc, 9, axis=1)[:, :10]
        out.extend({leaf_uri(tree, int(j)) for j in row} for row in top)
    return out


def stage_reads(path: Path, tree: LightTree, qs: F32) -> dict[str, Any]:
    """find() with the saved vectors read through the map (``vector_reads="map"``: as
    before the setting existed) and by ``pread`` (``"auto"``, the default: ``"read"`` at
    this size), two stores on the same index in one process,
    queries interleaved: p50 and recall@10, and whether their lists are identical."""
    exact = _exact_uris(tree, qs)
    stores: dict[str, EmbeddedStore] = {}
    for name, how in (("map", "map"), ("pread", "auto")):
        stores[name] = EmbeddedStore(path, vector_reads=how)  # type: ignore[arg-type]
        stores[name].wait_verified()
        stores[name].wait_ann()
    assert stores["map"]._snap.vector_rows is None
    assert stores["pread"]._snap.vector_rows is not None
    emb = bl.PreparedQueryEmbedder(qs.shape[1])
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    lists: dict[str, list[Any]] = {}
    timed: dict[str, Callable[[int], set[str] | None]] = {}
    for name, st_ in stores.items():
        for cfg_name, cfg in (("plain", PLAIN), ("default", RetrievalConfig())):
            th = Treehop(embedder=emb, store=st_, config=cfg, tagger=None)
            th.find("q0", **KW)  # (BM25 loads on the first hybrid find: untimed)
            key = f"find_{cfg_name} {name}"
            got = lists.setdefault(key, [])

            def run(i: int, th: Treehop = th, got: list[Any] = got) -> set[str]:
                res = th.find(f"q{i}", **KW)
                got.append([(m.uri, m.score) for m in res.resources])
                return {m.uri for m in res.resources if m.is_leaf}

            timed[key] = run
    load0 = _load()
    out = _interleaved(timed, qs.shape[0], exact, list(stores.values()))
    for cfg_name in ("plain", "default"):
        a, b = lists[f"find_{cfg_name} map"], lists[f"find_{cfg_name} pread"]
        out[f"{cfg_name} identical lists"] = sum(x == y for x, y in zip(a, b, strict=True))
        out[f"{cfg_name} pread / map"] = round(
            out[f"find_{cfg_name} pread"]["p50_ms"] / out[f"find_{cfg_name} map"]["p50_ms"], 3
        )
    out["load"] = [load0, _load()]
    for st_ in stores.values():
        st_.close()
    return out


def stage_side(
    path: Path, tree: LightTree, qs: F32, chroma_dir: Path, faiss_m: int, faiss_ef: int
) -> dict[str, Any]:
    """The side-by-side at this size, one process, interleaved (bench_find_overhead's rows
    at 100k): faiss ``IndexHNSWFlat`` (built once with 2 threads, kept beside the index;
    one query on one thread), chromadb's collection (``chroma`` stage), the store's global
    step (``store.search``), ``find()`` dense with tree context off and with the defaults."""
    import chromadb
    import faiss

    from treehop.stores.base import Scope

    exact = _exact_uris(tree, qs)
    leaves = np.ascontiguousarray(tree.vectors[tree.first_leaf :])
    out: dict[str, Any] = {}
    fpath = chroma_dir.parent / f"faiss-hnsw-m{faiss_m}-{leaves.shape[0]}.bin"
    if fpath.exists():
        fx = faiss.read_index(str(fpath))
    else:
        faiss.omp_set_num_threads(2)
        fx = faiss.IndexHNSWFlat(leaves.shape[1], faiss_m, faiss.METRIC_INNER_PRODUCT)
        load0 = _load()
        _, wall, cpu = _timed(lambda: fx.add(leaves))
        out["faiss_build"] = {
            "wall_s": round(wall, 1),
            "cpu_s": round(cpu, 1),
            "rows_per_s": round(leaves.shape[0] / wall),
            "load": [load0, _load()],
        }
        print(f"[side] faiss build {out['faiss_build']}", file=sys.stderr, flush=True)
        faiss.write_index(fx, str(fpath))
    faiss.omp_set_num_threads(1)
    fx.hnsw.efSearch = faiss_ef
    col = chromadb.PersistentClient(path=str(chroma_dir)).get_collection("leaves")
    out["chroma_rows"] = col.count()
    store = EmbeddedStore(path)
    store.wait_verified()
    store.wait_ann()
    emb = bl.PreparedQueryEmbedder(qs.shape[1])
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    plain = Treehop(embedder=emb, store=store, config=PLAIN, tagger=None)
    dflt = Treehop(embedder=emb, store=store, config=RetrievalConfig(), tagger=None)
    dflt.find("q0", **KW)
    glob = Scope(subtrees=(TARGET,), leaves_only=True)
    uri_of = lambda j: leaf_uri(tree, int(j))  # noqa: E731

    def find_with(th: Treehop) -> Callable[[int], set[str]]:
        def run(i: int) -> set[str]:
            return {m.uri for m in th.find(f"q{i}", **KW).resources if m.is_leaf}

        return run

    timed: dict[str, Callable[[int], set[str] | None]] = {
        "faiss": lambda i: {uri_of(j) for j in fx.search(qs[i : i + 1], 10)[1][0]},
        "chromadb": lambda i: {
            uri_of(int(x))
            for x in col.query(query_embeddings=qs[i : i + 1], n_results=10)["ids"][0]
        },
        "store": lambda i: (store.search(qs[i], glob, 10), None)[1],
        "find_plain": find_with(plain),
        "find_default": find_with(dflt),
    }
    load0 = _load()
    out.update(_interleaved(timed, qs.shape[0], exact, [store]))
    out["load"] = [load0, _load()]
    plain.close()
    return out


def child(index: str, queries_file: str, mode: str, nq: str) -> None:
    """A fresh process: open (cold or warm), first find, finds, then flat searches."""
    qs = np.load(queries_file)[: int(nq)]
    if mode.startswith("cold"):
        _evict(Path(index))
    base = _rss()
    t0, c0 = time.perf_counter(), time.process_time()
    if mode.endswith("-auto"):  # the default: verify="auto" (background at this size)
        store = EmbeddedStore(index)
    else:
        store = EmbeddedStore(index, verify="background" if mode.endswith("-bg") else True)
    t_open, c_open = time.perf_counter() - t0, time.process_time() - c0
    rss_open = _rss() - base
    emb = bl.PreparedQueryEmbedder(qs.shape[1])
    for i, q in enumerate(qs):
        emb.vectors[f"q{i}"] = q
    plain = RetrievalConfig(
        dense_weight=1.0,
        context_neighbour_weight=0.0,
        context_parent_weight=0.0,
        context_sibling_weight=0.0,
    )
    th = Treehop(embedder=emb, store=store, config=plain, tagger=None)
    t0, c0 = time.perf_counter(), time.thread_time()
    th.find("q0", target_uri=TARGET, limit=10, include_directories=False)
    t_first, c_first = time.perf_counter() - t0, time.thread_time() - c0
    out: dict[str, Any] = {
        "mode": mode,
        "open_s": round(t_open, 3),
        "open_cpu_s": round(c_open, 3),  # every thread's
        "first_find_ms": round(t_first * 1000, 1),
        "first_find_cpu_ms": round(c_first * 1000, 1),
        "rss_open_mb": round(rss_open / 2**20),
        "graph_at_first": store._ann is not None,
        "load": _load(),
    }
    if mode not in ("cold", "cold-auto"):
        th.close()
        print(json.dumps(out))
        return
    store.wait_verified()
    got, find_t = [], []
    for i in range(len(qs)):
        t0 = time.perf_counter()
        res = th.find(f"q{i}", target_uri=TARGET, limit=10, include_directories=False)
        find_t.append((time.perf_counter() - t0) * 1000)
        got.append([m.uri for m in res.resources if m.is_leaf])
    ctx = Treehop(embedder=emb, store=store, config=RetrievalConfig(dense_weight=1.0), tagger=None)
    ctx_t = []
    for i in range(len(qs)):
        t0 = time.perf_counter()
        ctx.find(f"q{i}", target_uri=TARGET, limit=10, include_directories=False)
        ctx_t.append((time.perf_counter() - t0) * 1000)
    rss_all = _rss() - base
    mapped = _mapped_rss(str(Path(index).resolve()))
    cached = _page_cache(Path(index))
    snap = store._snap
    leaf_rows = np.flatnonzero(snap.cols["leaf"][: snap.n] & snap.alive[: snap.n])
    raw = leaf_rows.size * qs.shape[1] * 4
    flat = np.ascontiguousarray(snap.vectors_of(leaf_rows))
    flat_t, exact = [], []
    for q in qs:
        t0 = time.perf_counter()
        sc = flat @ q
        top = np.argpartition(-sc, 9)[:10]
        top = top[np.argsort(-sc[top])]
        flat_t.append((time.perf_counter() - t0) * 1000)
        exact.append({snap.uri(int(leaf_rows[j])) for j in top})
    rec = [len(set(g) & e) / 10 for g, e in zip(got, exact, strict=True)]
    same = [float(set(g) == e) for g, e in zip(got, exact, strict=True)]
    skip = min(10, len(qs) // 4)
    p50 = lambda xs: float(np.percentile(xs[skip:], 50))  # noqa: E731
    out.update(
        queries=len(qs),
        find_p50_ms=round(p50(find_t), 2),
        find_ctx_p50_ms=round(p50(ctx_t), 2),
        flat_p50_ms=round(p50(flat_t), 2),
        find_over_flat=round(p50(find_t) / p50(flat_t), 4),
        find_ctx_over_flat=round(p50(ctx_t) / p50(flat_t), 4),
        recall10=round(float(np.mean(rec)), 4),
        top10_equal=round(float(np.mean(same)), 4),
        raw_mb=round(raw / 2**20),
        rss_finds_mb=round(rss_all / 2**20),
        rss_over_raw=round(rss_all / raw, 3),
        mapped_mb={k: round(v / 2**20) for k, v in sorted(mapped.items()) if v > 2**20},
        page_cache_mb={k: round(v / 2**20) for k, v in sorted(cached.items()) if v > 2**20},
        load_end=_load(),
    )
    th.close()
    print(json.dumps(out))


def stage_open(
    path: Path, qfile: Path, nq: int, base: str | None, modes: Sequence[str]
) -> dict[str, Any]:
    """Each mode in a fresh process; with ``base`` (another checkout's ``retrieval``
    folder), the same child with that code first, then with this one (``before`` /
    ``after``), one after the other."""
    out: dict[str, Any] = {}
    for mode in modes:
        for who, code in (("before", base), ("after", None)):
            if who == "before" and not base:
                continue
            env = dict(os.environ)
            if code:
                env["PYTHONPATH"] = code + os.pathsep + env.get("PYTHONPATH", "")
            res = subprocess.run(
                [sys.executable, __file__, "--child", str(path), str(qfile), mode, str(nq)],
                capture_output=True,
                text=True,
                check=False,
                env=env,
            )
            if res.returncode:
                raise SystemExit(f"child {mode} failed:\n{res.stderr[-4000:]}")
            key = f"{mode} {who}" if base else mode
            out[key] = json.loads(res.stdout.strip().splitlines()[-1])
            print(f"[open] {key}: {out[key]}", file=sys.stderr, flush=True)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--leaves", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sigmas", default="1.0,0.8,1.2")
    ap.add_argument("--index-dir", required=False, help="where the index is built and kept")
    ap.add_argument("--stages", default="ingest,build,compare,open")
    ap.add_argument("--compare-rows", type=int, default=200_000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--treehop-only", action="store_true", help="compare: only the store's build path"
    )
    ap.add_argument(
        "--compare-chunks", action="store_true", help="also usearch in the worker's chunks"
    )
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--faiss-m", type=int, default=32, help="side: faiss HNSW links (M)")
    ap.add_argument("--faiss-ef", type=int, default=64, help="side: faiss efSearch")
    ap.add_argument(
        "--chroma-dir",
        help="chroma and side stages: the chromadb collection's folder "
        "(default INDEX_DIR/chroma-LEAVES)",
    )
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument(
        "--ab-base",
        help="open stage: also run each child with this retrieval/ folder first (before/after)",
    )
    ap.add_argument(
        "--open-modes",
        default="cold,warm,cold-bg,cold-auto",
        help="open stage: fresh processes, in order (cold and cold-auto also run the finds "
        "and measure memory)",
    )
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return
    if not args.index_dir:
        ap.error("--index-dir is required (the 1M index is built once and kept)")
    stages = [s for s in args.stages.split(",") if s]
    sigmas = [float(s) for s in args.sigmas.split(",")]
    path = Path(args.index_dir) / f"idx-{args.leaves}"
    path.parent.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"leaves": args.leaves, "nice": os.nice(0), "cpus": os.cpu_count()}
    t0 = time.perf_counter()
    tree = light_tree(args.leaves, args.dim, args.seed, sigmas)
    results["generate_s"] = round(time.perf_counter() - t0, 1)
    results["rows"] = int(tree.vectors.shape[0])
    results["raw_mb"] = round(tree.vectors.nbytes / 2**20)
    qs = queries_for(tree, args.queries, args.seed, sigmas)
    qfile = Path(args.index_dir) / f"queries-{args.leaves}.npy"
    np.save(qfile, qs)
    print(f"[gen] {results}", file=sys.stderr, flush=True)
    if "ingest" in stages:
        if (path / "CURRENT").exists():
            results["ingest"] = {"skipped": f"reused {path}"}
        else:
            results["ingest"] = stage_ingest(tree, path)
        print(f"[ingest] {results['ingest']}", file=sys.stderr, flush=True)
    if "build" in stages:
        results["build"] = stage_build(path)
        print(f"[build] {results['build']}", file=sys.stderr, flush=True)
    if "compare" in stages:
        results["compare"] = stage_compare(
            tree, args.compare_rows, args.threads, qs, args.compare_chunks, not args.treehop_only
        )
    chroma_dir = Path(args.chroma_dir or Path(args.index_dir) / f"chroma-{args.leaves}")
    if "chroma" in stages:
        results["chroma"] = chroma_ingest(tree, chroma_dir)
        print(f"[chroma] {results['chroma']}", file=sys.stderr, flush=True)
    if "reads" in stages:
        results["reads"] = stage_reads(path, tree, qs)
        print(f"[reads] {results['reads']}", file=sys.stderr, flush=True)
    if "side" in stages:
        results["side"] = stage_side(
            path,
            tree,
            qs,
            chroma_dir,
            args.faiss_m,
            args.faiss_ef,
        )
        print(f"[side] {results['side']}", file=sys.stderr, flush=True)
    if "open" in stages:
        del tree
        results["open"] = stage_open(
            path, qfile, args.queries, args.ab_base, args.open_modes.split(",")
        )
    print(json.dumps(results, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
