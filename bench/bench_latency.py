"""Latency of ``find()`` at 10k and 100k leaves versus one flat exact numpy search, and memory.

    python bench/bench_latency.py                         # 10k and 100k leaves, 200 queries
    python bench/bench_latency.py --sizes 100000 --queries 500
    OPENBLAS_NUM_THREADS=1 python bench/bench_latency.py  # single-threaded BLAS (see README)

Synthetic but shaped like a real tree: no text is embedded. Vectors are random 384-d unit vectors
with a clustered structure that follows the directory tree (3 levels of directories, leaves
under the last): every directory level adds isotropic noise to its parent's centre, so that
cosines look like a sentence embedder's (a leaf vs its own directory's centre about 0.6,
siblings about 0.4, unrelated nodes about 0). A directory's vector is the normalised mean of its
children's, as an embedded summary of them would roughly be. Queries are drawn like leaves,
near the centre of a random leaf directory.

Nodes and vectors go straight into the client's store with ``th.store.upsert(nodes, vectors)``;
queries reach ``find()`` through a stub embedder whose ``embed_query`` returns the prepared
vector, so the timings are the retrieval itself (the real embedder adds ~10 ms per query on 2
cores, the same for any search method).

Memory: ``tracemalloc`` from before the nodes are created until the store is built and its
search layout is ready (our own inputs are dropped first), so it counts what the index keeps:
the vector matrix (with its growth headroom), the Node objects, the URI maps and the layout.
Compared with the raw float32 vectors (nodes x 384 x 4 bytes). (RSS is not shown: under
tracemalloc it mostly measures tracemalloc's own bookkeeping.) With the default ``--disk``, the
same index is also saved to a temporary directory, its size on disk measured, and re-opened
(memory-mapped) and queried once, timed.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

from treehop import ContextType, EmbeddedStore, Node, RetrievalConfig, Treehop  # noqa: E402

F32 = npt.NDArray[np.float32]
ROOT = "viking://resources"
TARGET = "viking://resources/synth"


class PreparedQueryEmbedder:
    """A stub Embedder: ``embed_query(text)`` returns the vector prepared for that text.

    Only for latency: the benchmark inserts vectors itself, so nothing but queries is embedded.
    """

    name = "bench-prepared-vectors"

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self.vectors: dict[str, F32] = {}

    def embed(self, texts: Sequence[str]) -> F32:
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)

    async def aembed(self, texts: Sequence[str]) -> F32:
        return self.embed(texts)

    def embed_query(self, text: str) -> F32:
        return self.vectors[text]

    async def aembed_query(self, text: str) -> F32:
        return self.vectors[text]


def _unit(x: F32) -> F32:
    out: F32 = (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)
    return out


def _jitter(rng: np.random.Generator, centres: F32, reps: int, sigma: float) -> F32:
    """``reps`` noisy copies of each centre (cos to the centre ~ 1/sqrt(1+sigma^2))."""
    d = centres.shape[1]
    base = np.repeat(centres, reps, axis=0)
    noise = rng.standard_normal(base.shape).astype(np.float32) * (sigma / np.sqrt(d))
    return _unit(base + noise)


@dataclass
class Shape:
    fanout: tuple[int, int, int]
    leaves_per_dir: int

    @property
    def leaves(self) -> int:
        a, b, c = self.fanout
        return a * b * c * self.leaves_per_dir

    @property
    def dirs(self) -> int:
        a, b, c = self.fanout
        return a + a * b + a * b * c


def shape_for(n: int, fanout: tuple[int, int] = (10, 10)) -> Shape:
    """``n`` leaves as top x 10 x 10 directories with 10 (<= 10k) or 50 leaves each."""
    per = 10 if n <= 10_000 else 50
    b, c = fanout
    top = max(1, round(n / (per * b * c)))
    return Shape((top, b, c), per)


@dataclass
class Synthetic:
    nodes: list[Node]
    vectors: F32
    leaf_centres: F32  # one per leaf directory, to draw queries near


def make_tree(shape: Shape, dim: int, seed: int, sigmas: Sequence[float]) -> Synthetic:
    """Nodes (root, target, 3 directory levels, leaves) and their vectors, in upsert order."""
    rng = np.random.default_rng(seed)
    a, b, c = shape.fanout
    s_sub, s_leafdir, s_leaf = sigmas
    top = _unit(rng.standard_normal((a, dim)).astype(np.float32))
    mid = _jitter(rng, top, b, s_sub)
    low = _jitter(rng, mid, c, s_leafdir)
    leaves = _jitter(rng, low, shape.leaves_per_dir, s_leaf)
    # Directory vectors: normalised mean of their children (bottom-up).
    low_v = _unit(leaves.reshape(len(low), shape.leaves_per_dir, dim).mean(axis=1))
    mid_v = _unit(low_v.reshape(len(mid), c, dim).mean(axis=1))
    top_v = _unit(mid_v.reshape(a, b, dim).mean(axis=1))
    target_v = _unit(top_v.mean(axis=0, keepdims=True))
    root_v = target_v.copy()

    res = ContextType.RESOURCE
    nodes: list[Node] = [
        Node(
            uri=ROOT,
            parent_uri=None,
            context_type=res,
            level=0,
            is_leaf=False,
            abstract="resources",
        ),
        Node(
            uri=TARGET,
            parent_uri=ROOT,
            context_type=res,
            level=1,
            is_leaf=False,
            abstract="synthetic tree",
            ancestors=[ROOT],
        ),
    ]
    vecs: list[F32] = [root_v, target_v]
    anc0 = [ROOT, TARGET]
    for i in range(a):
        u1 = f"{TARGET}/t{i:03d}"
        nodes.append(
            Node(
                uri=u1,
                parent_uri=TARGET,
                context_type=res,
                level=1,
                is_leaf=False,
                abstract=f"topic {i}",
                ancestors=anc0,
            )
        )
    vecs.append(top_v)
    for i in range(a):
        for j in range(b):
            u1, u2 = f"{TARGET}/t{i:03d}", f"{TARGET}/t{i:03d}/s{j:02d}"
            nodes.append(
                Node(
                    uri=u2,
                    parent_uri=u1,
                    context_type=res,
                    level=1,
                    is_leaf=False,
                    abstract=f"topic {i}.{j}",
                    ancestors=[*anc0, u1],
                )
            )
    vecs.append(mid_v)
    for i in range(a):
        for j in range(b):
            u1, u2 = f"{TARGET}/t{i:03d}", f"{TARGET}/t{i:03d}/s{j:02d}"
            for k in range(c):
                nodes.append(
                    Node(
                        uri=f"{u2}/d{k:02d}",
                        parent_uri=u2,
                        context_type=res,
                        level=1,
                        is_leaf=False,
                        abstract=f"topic {i}.{j}.{k}",
                        ancestors=[*anc0, u1, u2],
                    )
                )
    vecs.append(low_v)
    first_leaf = len(nodes)
    for i in range(a):
        for j in range(b):
            u1, u2 = f"{TARGET}/t{i:03d}", f"{TARGET}/t{i:03d}/s{j:02d}"
            for k in range(c):
                u3 = f"{u2}/d{k:02d}"
                anc = [*anc0, u1, u2, u3]
                for m in range(shape.leaves_per_dir):
                    nodes.append(
                        Node(
                            uri=f"{u3}/f{m:03d}.md",
                            parent_uri=u3,
                            context_type=res,
                            level=2,
                            is_leaf=True,
                            abstract=f"leaf {m}",
                            content=f"leaf {i}.{j}.{k}.{m}",
                            ancestors=anc,
                        )
                    )
    vecs.append(leaves)
    mat = np.ascontiguousarray(np.vstack(vecs), dtype=np.float32)
    assert mat.shape[0] == len(nodes) and len(nodes) - first_leaf == shape.leaves
    return Synthetic(nodes, mat, low)


def make_queries(syn: Synthetic, n: int, seed: int, sigma: float) -> F32:
    rng = np.random.default_rng(seed + 1)
    pick = syn.leaf_centres[rng.integers(0, len(syn.leaf_centres), size=n)]
    return _jitter(rng, pick, 1, sigma)


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@dataclass
class Result:
    leaves: int
    nodes: int
    shape: str
    flat_p50: float
    flat_p95: float
    find_p50: float
    find_p95: float
    afind_p50: float
    scored: float
    rounds: float
    agree10: float
    mem_index: int
    mem_raw: int
    build_s: float
    disk: int | None
    save_s: float | None
    open_s: float | None


def run_size(n: int, args: argparse.Namespace) -> Result:
    shape = shape_for(n)
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    syn = make_tree(shape, args.dim, args.seed, args.sigmas)
    emb = PreparedQueryEmbedder(args.dim)
    # Synthetic vectors carry no text: dense only, as the flat baseline.
    cfg = RetrievalConfig(score_propagation_alpha=args.alpha, dense_weight=1.0)
    store = EmbeddedStore(ann_min_rows=args.ann_min_rows if args.ann_min_rows >= 0 else None)
    th = Treehop(None, embedder=emb, config=cfg, tagger=None, store=store)
    th.store.upsert(syn.nodes, syn.vectors)
    n_nodes = len(syn.nodes)
    raw_vectors = syn.vectors.nbytes
    queries = make_queries(syn, args.queries + args.warmup, args.seed, args.sigmas[2])
    del syn  # the store owns what it keeps
    gc.collect()
    # The first search builds the store's search layout (children row sets, sorted URIs).
    emb.vectors["warm-up"] = queries[0]
    th.find("warm-up", target_uri=TARGET, limit=args.limit)
    build_s = time.perf_counter() - t0
    cur, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mem_index = cur - queries.nbytes  # everything allocated since start and still alive

    # The flat baseline: the very same leaf vectors, read back from the store.
    leaf_uris = [nd.uri for nd in th.store.iter_nodes(TARGET) if nd.is_leaf]
    flat = np.ascontiguousarray(th.store.get_vectors(leaf_uris), dtype=np.float32)

    names = [f"q{i:05d}" for i in range(len(queries))]
    for name, q in zip(names, queries, strict=True):
        emb.vectors[name] = q
    flat_t: list[float] = []
    find_t: list[float] = []
    afind_t: list[float] = []
    scored: list[float] = []
    rounds: list[float] = []
    agree: list[float] = []
    k = args.limit
    for i, name in enumerate(names):
        q = queries[i]
        s = time.perf_counter()
        scores = flat @ q
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top])]
        t_flat = time.perf_counter() - s
        s = time.perf_counter()
        res = th.find(name, target_uri=TARGET, limit=k, include_directories=False)
        t_find = time.perf_counter() - s
        if i < args.warmup:
            continue
        flat_t.append(t_flat * 1000)
        find_t.append(t_find * 1000)
        qr = res.query_results[0] if res.query_results else None
        if qr is not None:
            scored.append(qr.nodes_scored)
            rounds.append(qr.rounds)
        exact = {leaf_uris[int(j)] for j in top}
        got = {m.uri for m in res.resources if m.is_leaf}
        agree.append(len(exact & got) / k)

    async def afinds() -> list[float]:
        out = []
        for name in names[args.warmup :]:
            s = time.perf_counter()
            await th.aio.find(name, target_uri=TARGET, limit=k, include_directories=False)
            out.append((time.perf_counter() - s) * 1000)
        return out

    afind_t = asyncio.run(afinds())

    disk = save_s = open_s = None
    if args.disk:
        tmp = Path(tempfile.mkdtemp(prefix="treehop-bench-"))
        try:
            th2 = Treehop(tmp / "idx", embedder=emb, config=cfg, tagger=None)
            nodes = list(th.store.iter_nodes())
            th2.store.upsert(nodes, th.store.get_vectors([nd.uri for nd in nodes]))
            del nodes
            s = time.perf_counter()
            th2.save()
            save_s = time.perf_counter() - s
            th2.close()
            disk = _dir_bytes(tmp / "idx")
            s = time.perf_counter()
            th3 = Treehop(tmp / "idx", embedder=emb, config=cfg, tagger=None)
            th3.find(names[-1], target_uri=TARGET, limit=k)
            open_s = time.perf_counter() - s
            th3.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    th.close()
    a, b, c = shape.fanout
    return Result(
        leaves=shape.leaves,
        nodes=n_nodes,
        shape=f"{a}x{b}x{c} dirs x {shape.leaves_per_dir}",
        flat_p50=_pct(flat_t, 50),
        flat_p95=_pct(flat_t, 95),
        find_p50=_pct(find_t, 50),
        find_p95=_pct(find_t, 95),
        afind_p50=_pct(afind_t, 50),
        scored=statistics.fmean(scored) if scored else float("nan"),
        rounds=statistics.fmean(rounds) if rounds else float("nan"),
        agree10=statistics.fmean(agree) if agree else float("nan"),
        mem_index=mem_index,
        mem_raw=raw_vectors,
        build_s=build_s,
        disk=disk,
        save_s=save_s,
        open_s=open_s,
    )


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def _mb(x: int | None) -> str:
    return "-" if x is None else f"{x / 2**20:.1f}"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated leaf counts")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--limit", type=int, default=10)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument(
        "--ann-min-rows",
        type=int,
        default=-1,
        help="use the hnswlib global search from this many rows on (-1: exact, the default)",
    )
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--sigmas",
        default="1.0,0.8,1.2",
        help="noise of sub-topic, leaf-directory and leaf vs parent centre",
    )
    ap.add_argument(
        "--no-disk", dest="disk", action="store_false", help="skip the save / re-open measurement"
    )
    args = ap.parse_args(argv)
    args.sigmas = [float(s) for s in args.sigmas.split(",")]
    results = []
    for n in [int(s) for s in args.sizes.split(",") if s.strip()]:
        results.append(run_size(n, args))
        r = results[-1]
        print(f"[{r.leaves} leaves] built in {r.build_s:.1f}s", file=sys.stderr)

    print()
    head = (
        f"{'leaves':>7} {'nodes':>7} {'tree':<22} {'flat p50':>8} {'flat p95':>8} "
        f"{'find p50':>8} {'find p95':>8} {'afind p50':>9} {'cands/q':>8} {'rounds':>6} "
        f"{'=exact@10':>9}"
    )
    print(head)
    print("-" * len(head))
    for r in results:
        print(
            f"{r.leaves:>7} {r.nodes:>7} {r.shape:<22} {r.flat_p50:>8.2f} {r.flat_p95:>8.2f} "
            f"{r.find_p50:>8.2f} {r.find_p95:>8.2f} {r.afind_p50:>9.2f} {r.scored:>8.0f} "
            f"{r.rounds:>6.1f} {r.agree10:>9.2f}"
        )
    print()
    head2 = (
        f"{'leaves':>7} {'raw f32 MB':>10} {'index MB':>9} {'index/raw':>9} "
        f"{'+B/node':>8} {'disk MB':>8} {'save s':>7} {'open+find s':>11}"
    )
    print(head2)
    print("-" * len(head2))
    for r in results:
        save = "-" if r.save_s is None else f"{r.save_s:.2f}"
        opn = "-" if r.open_s is None else f"{r.open_s:.2f}"
        print(
            f"{r.leaves:>7} {_mb(r.mem_raw):>10} {_mb(r.mem_index):>9} "
            f"{r.mem_index / r.mem_raw:>9.2f} {(r.mem_index - r.mem_raw) / r.nodes:>8.0f} "
            f"{_mb(r.disk):>8} "
            f"{save:>7} {opn:>11}"
        )
    load = os.getloadavg()
    print(
        f"\nms per query (sync find via the client's loop thread; afind: awaited directly); "
        f"limit={args.limit}, alpha={args.alpha}, {args.queries} queries after "
        f"{args.warmup} warm-up; flat = one exact numpy search over all leaf vectors. "
        f"+B/node: index bytes beyond the raw vectors, per node. "
        f"cands/q: QueryResult.nodes_scored (hits the store returned: global top-k plus the "
        f"children of each popped directory; the global step itself scores every node). "
        f"=exact@10: share of find's top-10 leaves in the exact top-10. "
        f"Load average during the run: {load[0]:.1f} on {os.cpu_count()} CPUs; "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}."
    )


if __name__ == "__main__":
    main()
