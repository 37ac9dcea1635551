"""Quality of ``find()`` versus flat exact search, on Cranfield-as-a-tree and the Django docs.

    python bench/bench_quality.py                       # both datasets, alpha 1.0 and 0.5
    python bench/bench_quality.py --dataset cranfield --alpha 1.0 --max-queries 50

For every query the same embedder (MiniLM int8, cached on disk) produces the query vector for
both methods, and both see exactly the same leaf vectors (the flat baseline reads them back
from the client's store), so the only difference is the search:

* ``flat``: one exact cosine search over every leaf under the target, top-``limit`` leaves;
* ``find``: the hierarchical heap search, ``find(query, limit=limit, include_directories=False)``.

Leaves are chunks of files (or whole short files); both result lists are mapped back to their
file (a Cranfield document, a Django page) and scored with ir_measures position by position: a
file counts once, at its first position in the list returned, and a repeat of it is a wasted
slot (what a user reading the list sees). A ``limit=10`` run gives nDCG@10 and R@10 as a user
calling ``find(limit=10)`` sees them; a ``limit=100`` run adds R@100.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import ir_measures  # noqa: E402
from ir_measures import R, nDCG  # noqa: E402

from treehop import RetrievalConfig, Scope, Treehop  # noqa: E402


@dataclass
class Corpus:
    name: str
    root: Path
    target_uri: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    doc_of_leaf: Callable[[Any], str]
    note: str


@dataclass
class Row:
    dataset: str
    method: str
    limit: int
    ndcg10: float
    r10: float
    r100: float | None
    p50_ms: float
    p95_ms: float
    scored: float
    overlap10: float | None


def cranfield_corpus(args: argparse.Namespace, embedder: Any) -> Corpus:
    cran = ds.load_cranfield(marginal_gain=args.cranfield_marginal_gain)
    layout = ds.build_cranfield_tree(
        cran, embedder, top_k=args.cranfield_topics, sub_k=args.cranfield_subtopics
    )
    leaf_dirs = len({str(Path(p).parent) for p in layout.paths.values()})
    return Corpus(
        name="cranfield",
        root=layout.root,
        target_uri="viking://resources/cranfield",
        queries=cran.queries,
        qrels=cran.qrels,
        doc_of_leaf=lambda node: ds.doc_id_from_uri(node.uri),
        note=(
            f"1400 abstracts, spherical k-means tree {args.cranfield_topics}x"
            f"{args.cranfield_subtopics} ({leaf_dirs} leaf dirs)"
        ),
    )


def django_corpus(args: argparse.Namespace) -> Corpus | None:
    if not ds.django_docs_available():
        print(f"SKIP django: {ds.django_install_hint()}", file=sys.stderr)
        return None
    root, pages = ds.materialise_django_docs()
    qs = ds.load_django_queries()
    known = {p.relpath for p in pages}
    missing = [q["relevant"] for q in qs if q["relevant"] not in known]
    if missing:
        raise SystemExit(
            f"{len(missing)} labelled pages are not in the installed docs (e.g. {missing[0]}); "
            "a different python-django-doc version? Rebuild the query set with "
            "python bench/datasets.py --rebuild-django-queries"
        )
    return Corpus(
        name="django",
        root=root,
        target_uri="viking://resources/django",
        queries={q["qid"]: q["query"] for q in qs},
        qrels={q["qid"]: {q["relevant"]: 1} for q in qs},
        doc_of_leaf=lambda node: str(node.metadata["source_path"]),
        note=f"{len(pages)} pages of {ds.DJANGO_PACKAGE}, {len(qs)} heading queries",
    )


def _ranked_docs(docs: Sequence[str]) -> dict[str, float]:
    """The list as the user gets it: a document counts once, at its first position; a later
    slot holding the same document again stays a slot (an unjudged placeholder), so a list
    that repeats chunks of one file ranks the next document lower and holds fewer documents.
    Scores are descending positions so that ir_measures keeps our order."""
    out: dict[str, float] = {}
    for i, d in enumerate(docs):
        out[d if d not in out else f"{d}::repeat{i}"] = float(len(docs) - i)
    return out


def split_queries(qids: Sequence[str], split: str, seed: int) -> list[str]:
    """A seeded half of the queries: tune parameters on ``tune``, report ``test``."""
    if split == "all":
        return list(qids)
    order = list(qids)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    chosen = set(order[:half] if split == "tune" else order[half:])
    return [q for q in qids if q in chosen]


def parse_variant(text: str) -> tuple[str, dict[str, Any]]:
    """``label:key=value,key=value`` -> RetrievalConfig updates (values parsed as JSON)."""
    label, _, body = text.partition(":")
    updates: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, _, raw = part.partition("=")
        try:
            updates[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            updates[key.strip()] = raw.strip()
    RetrievalConfig(**{k: v for k, v in updates.items() if k not in BENCH_KEYS})
    return label, updates


BENCH_KEYS = ("dirvec",)
"""Variant keys that are not RetrievalConfig fields: ``dirvec`` = summary|centroid|mixed
re-derives every directory's routing vector in place before the row runs."""


class DirectoryVectors:
    """Swap directory routing vectors in place: the summary embedding, the centroid of the
    children's vectors (bottom-up), or both added."""

    def __init__(self) -> None:
        self.summary: dict[str, dict[str, np.ndarray]] = {}

    def __call__(self, th: Any, resolved: str, updates: dict[str, Any]) -> None:
        mode = updates.get("dirvec", "summary")
        nodes = list(th.store.iter_nodes(resolved))
        vecs = dict(
            zip((n.uri for n in nodes), th.store.get_vectors([n.uri for n in nodes]), strict=True)
        )
        dirs = [n for n in nodes if not n.is_leaf]
        if resolved not in self.summary:
            self.summary[resolved] = {n.uri: vecs[n.uri].copy() for n in dirs}
        summary = self.summary[resolved]
        kids: dict[str, list[str]] = {}
        for n in nodes:
            if n.parent_uri:
                kids.setdefault(n.parent_uri, []).append(n.uri)
        for node in sorted(dirs, key=lambda n: -n.uri.count("/")):
            vec = summary[node.uri]
            if mode != "summary" and kids.get(node.uri):
                cen = np.mean([vecs[k] for k in kids[node.uri]], axis=0)
                cen = cen / (np.linalg.norm(cen) or 1.0)
                vec = cen if mode == "centroid" else vec + cen
            vecs[node.uri] = vec / (np.linalg.norm(vec) or 1.0)
        th.store.upsert(dirs, np.stack([vecs[n.uri] for n in dirs]).astype(np.float32))


def _pct(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q)) if values else float("nan")


def evaluate(corpus: Corpus, args: argparse.Namespace, embedder: Any) -> list[Row]:
    th = Treehop(
        None,
        embedder=embedder,
        config=RetrievalConfig(),
        tagger=None if args.tagger == "none" else "auto",
    )
    t0 = time.perf_counter()
    misses0 = getattr(embedder, "misses", 0)
    added = th.add_resource(str(corpus.root), target_uri=corpus.target_uri)
    print(
        f"[{corpus.name}] indexed {added.directories} dirs, {added.files} files, "
        f"{added.chunks} chunks in {time.perf_counter() - t0:.1f}s "
        f"({getattr(embedder, 'misses', 0) - misses0} texts embedded, rest from cache)",
        file=sys.stderr,
    )
    resolved = th.aio.resolve(corpus.target_uri)
    leaves = [n for n in th.store.iter_nodes(resolved) if n.is_leaf]
    leaf_uris = [n.uri for n in leaves]
    leaf_docs = [corpus.doc_of_leaf(n) for n in leaves]
    doc_by_uri = dict(zip(leaf_uris, leaf_docs, strict=True))
    mat = np.ascontiguousarray(th.store.get_vectors(leaf_uris), dtype=np.float32)
    n_nodes = sum(1 for _ in th.store.iter_nodes(resolved))
    print(
        f"[{corpus.name}] {len(leaves)} leaves, {n_nodes} nodes under {resolved}", file=sys.stderr
    )

    qids = [q for q in corpus.queries if q in corpus.qrels]
    qids = split_queries(qids, args.split, args.split_seed)
    if args.max_queries:
        qids = qids[: args.max_queries]
    qvecs = np.asarray(embedder.embed([corpus.queries[q] for q in qids]), dtype=np.float32)
    # Only the queries actually run: ir_measures would score a judged query with no run as 0.
    qrels = {q: corpus.qrels[q] for q in qids}
    rows: list[Row] = []
    for limit in args.limits:
        measures = [nDCG @ 10, R @ 10] + ([R @ 100] if limit >= 100 else [])
        # Flat exact search over the very same leaf vectors.
        flat_run: dict[str, dict[str, float]] = {}
        times: list[float] = []
        for qi, q in enumerate(qids):
            s = time.perf_counter()
            scores = mat @ qvecs[qi]
            k = min(limit, len(scores))
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            times.append((time.perf_counter() - s) * 1000)
            flat_run[q] = _ranked_docs([leaf_docs[i] for i in top])
        agg = ir_measures.calc_aggregate(measures, qrels, flat_run)
        rows.append(
            Row(
                corpus.name,
                "flat exact",
                limit,
                agg[nDCG @ 10],
                agg[R @ 10],
                agg.get(R @ 100),
                _pct(times, 50),
                _pct(times, 95),
                float(len(leaves)),
                None,
            )
        )
        for w in args.dense_weights:
            if w >= 1.0:
                continue
            # Flat hybrid: the store's own BM25 + dense scoring over every leaf in scope.
            hy_run: dict[str, dict[str, float]] = {}
            times = []
            scope = Scope(subtrees=(resolved,), leaves_only=True)
            for qi, q in enumerate(qids):
                s = time.perf_counter()
                hits_ = th.store.search(
                    qvecs[qi], scope, limit, query_text=corpus.queries[q], dense_weight=w
                )
                times.append((time.perf_counter() - s) * 1000)
                hy_run[q] = _ranked_docs([doc_by_uri[h.node.uri] for h in hits_])
            agg = ir_measures.calc_aggregate(measures, qrels, hy_run)
            rows.append(
                Row(
                    corpus.name,
                    f"flat w={w:g}",
                    limit,
                    agg[nDCG @ 10],
                    agg[R @ 10],
                    agg.get(R @ 100),
                    _pct(times, 50),
                    _pct(times, 95),
                    float(len(leaves)),
                    None,
                )
            )
        variants = list(args.variants) or [
            (f"find a={a:g} w={w:g}", {"score_propagation_alpha": a, "dense_weight": w})
            for w in args.dense_weights
            for a in args.alphas
        ]
        for label, updates in variants:
            cfg_updates = {k: v for k, v in updates.items() if k not in BENCH_KEYS}
            for key, value in {**RetrievalConfig().model_dump(), **cfg_updates}.items():
                setattr(th.config, key, value)
            for hook in args.before_variant:
                hook(th, resolved, updates)
            run: dict[str, dict[str, float]] = {}
            times, scored, overlaps = [], [], []
            for q in qids:
                s = time.perf_counter()
                res = th.find(
                    corpus.queries[q],
                    target_uri=corpus.target_uri,
                    limit=limit,
                    include_directories=False,
                )
                times.append((time.perf_counter() - s) * 1000)
                hits = [m for m in res.resources if m.is_leaf]
                run[q] = _ranked_docs([doc_by_uri[th.aio.resolve(m.uri)] for m in hits])
                if res.query_results:
                    scored.append(float(res.query_results[0].nodes_scored))
                a = [d for d in list(run[q])[:10] if "::repeat" not in d]
                b = {d for d in list(flat_run[q])[:10] if "::repeat" not in d}
                overlaps.append(len(set(a) & b) / max(1, len(b)))
            agg = ir_measures.calc_aggregate(measures, qrels, run)
            rows.append(
                Row(
                    corpus.name,
                    label,
                    limit,
                    agg[nDCG @ 10],
                    agg[R @ 10],
                    agg.get(R @ 100),
                    _pct(times, 50),
                    _pct(times, 95),
                    statistics.fmean(scored) if scored else float("nan"),
                    statistics.fmean(overlaps),
                )
            )
    for key, value in RetrievalConfig().model_dump().items():
        setattr(th.config, key, value)
    th.close()
    print(f"[{corpus.name}] {len(qids)} queries; {corpus.note}", file=sys.stderr)
    return rows


def print_table(rows: Sequence[Row]) -> None:
    head = (
        f"{'dataset':<10} {'method':<26} {'limit':>5} {'nDCG@10':>8} {'R@10':>7} "
        f"{'R@100':>7} {'p50 ms':>8} {'p95 ms':>8} {'cands/q':>9} {'top10 = flat':>12}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        r100 = f"{r.r100:.3f}" if r.r100 is not None else "-"
        ov = f"{r.overlap10:.2f}" if r.overlap10 is not None else "-"
        print(
            f"{r.dataset:<10} {r.method:<26} {r.limit:>5} {r.ndcg10:>8.3f} {r.r10:>7.3f} "
            f"{r100:>7} {r.p50_ms:>8.2f} {r.p95_ms:>8.2f} {r.scored:>9.0f} {ov:>12}"
        )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", choices=["all", "cranfield", "django"], default="all")
    ap.add_argument("--max-queries", type=int, default=0, help="first N queries (0 = all)")
    ap.add_argument(
        "--alpha",
        default="1.0,0.5",
        help="comma-separated score_propagation_alpha values (default 1.0,0.5)",
    )
    ap.add_argument("--limit", default="10,100", help="comma-separated find() limits")
    ap.add_argument(
        "--dense-weight",
        default="1.0,0.7",
        help="comma-separated dense_weight values (1 = dense only; default 1.0,0.7)",
    )
    ap.add_argument(
        "--tagger",
        choices=["auto", "none"],
        default="auto",
        help="the client's automatic ingest tagger (default: as a user gets it)",
    )
    ap.add_argument("--cranfield-topics", type=int, default=20)
    ap.add_argument("--cranfield-subtopics", type=int, default=5)
    ap.add_argument(
        "--cranfield-marginal-gain",
        type=int,
        default=ds.CRANFIELD_GAINS[-1],
        help="gain of cranqrel code -1 (see datasets.CRANFIELD_GAINS)",
    )
    ap.add_argument(
        "--split",
        choices=["all", "tune", "test"],
        default="all",
        help="a seeded half of each set's queries: tune parameters on one, report the other",
    )
    ap.add_argument("--split-seed", type=int, default=0)
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="a find() row 'label:key=value,...' of RetrievalConfig updates (repeatable); "
        "replaces the --alpha x --dense-weight grid",
    )
    ap.add_argument("--no-cache", action="store_true", help="do not use bench/.cache embeddings")
    args = ap.parse_args(argv)
    args.alphas = [float(a) for a in args.alpha.split(",") if a.strip()]
    args.limits = [int(x) for x in args.limit.split(",") if x.strip()]
    args.dense_weights = [float(x) for x in args.dense_weight.split(",") if x.strip()]
    args.variants = [parse_variant(v) for v in args.variant]
    args.before_variant = [DirectoryVectors()]

    embedder = ds.default_embedder(cache=not args.no_cache)
    rows: list[Row] = []
    t0 = time.perf_counter()
    if args.dataset in ("all", "cranfield"):
        rows += evaluate(cranfield_corpus(args, embedder), args, embedder)
    if args.dataset in ("all", "django"):
        corpus = django_corpus(args)
        if corpus is not None:
            rows += evaluate(corpus, args, embedder)
    print()
    print_table(rows)
    print(
        f"\nembedder {embedder.name}; find() config: {RetrievalConfig().model_dump(mode='json')}; "
        f"alpha varied as listed; total {time.perf_counter() - t0:.0f}s"
    )
    print(
        "p50/p95: per query, query embedding excluded for flat and cached for find; "
        "cands/q: QueryResult.nodes_scored, the hits the store returned to the heap search "
        "(its global step scores every node in scope; flat: the number of leaves); "
        "top10 = flat: share of find's top-10 files also in flat's top-10"
    )


if __name__ == "__main__":
    main()
