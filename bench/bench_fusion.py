"""How BM25 enters a question's score: fusion variants over the flat rows' own index.

Issue 33 item 4. Each variant ranks every leaf of a natural-question set (the same leaves,
MiniLM vectors and treehop BM25 as ``bench_natural.py``'s flat rows) from the dense cosine
``d`` and the BM25 score ``lex`` of the question, and is judged the way ``bench_natural.py``
judges (nDCG@10 over each leaf's text, word 5-gram overlap). No store code changes: a
variant is a formula over the two score vectors, so a dozen are compared in one pass.

Variants (``w`` = dense weight; questions over documents use ``question_dense_weight`` 0.8):

* ``w /best``: the store's fusion today, ``w*d + (1-w)*lex/max(lex)``;
* ``w /max(best,att)``: BM25 divided by at least the score an *ideal* document would
  attain (average length, each query term once: the sum of the query terms' IDF), so a best
  hit that matches only common words earns only their share;
* ``w /best x cov``, ``x cov^2``: each leaf's normalised BM25 times the share of the query's
  IDF mass it matches (a BM25 index with ``k1 = 0`` scores exactly that sum);
* ``w /best x dense-gap gate g``: a leaf more than ``g`` cosine behind the query's dense
  leader gets no lexical credit (linearly less inside ``g``): "a lexical match must not
  override a large dense lead";
* ``rrf k``: reciprocal rank fusion, ``1/(k + rank_dense) + 1/(k + rank_bm25)``, weighted or
  not.

    python bench/bench_fusion.py            # dev halves of the five natural sets
    python bench/bench_fusion.py --test
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn
import bench_tree as bt
import datasets as ds
import natural_sets as ns
from treehop import RetrievalConfig, Treehop
from treehop.lexical import LexicalIndex

F64 = npt.NDArray[np.float64]
Variant = Callable[[F64, F64, F64, float], F64]
"""(dense, bm25, IDF coverage share, attainable score) -> fused score per leaf."""


def attainable(index: LexicalIndex, query: str) -> float:
    """BM25 of an average-length document holding each query term once per occurrence:
    at ``tf = 1`` and ``dl = avgdl`` BM25's saturation factor is 1, so the sum of the
    terms' (Lucene) IDF."""
    n = len(index)
    total = 0.0
    for t in index.tokenize(query):
        df = index.document_frequency(t)
        if df > 0:
            total += math.log1p((n - df + 0.5) / (df + 0.5))
    return total


def _ranks(s: F64) -> F64:
    r = np.empty(s.shape[0])
    r[np.argsort(-s, kind="stable")] = np.arange(1, s.shape[0] + 1)
    return r


def _rrf(k: float, wd: float, wl: float) -> Variant:
    def fuse(d: F64, lex: F64, cov: F64, att: float) -> F64:
        rl = _ranks(lex)
        rl[lex <= 0] = np.inf  # a leaf sharing no term has no BM25 rank
        out: F64 = wd / (k + _ranks(d)) + wl / (k + rl)
        return out

    return fuse


def _best(lex: F64) -> float:
    hi = float(lex.max())
    return hi if hi > 0 else 1.0


def _gate(w: float, g: float) -> Variant:
    def fuse(d: F64, lex: F64, cov: F64, att: float) -> F64:
        gate = np.clip(1.0 - (d.max() - d) / g, 0.0, 1.0)
        out: F64 = w * d + (1 - w) * lex / _best(lex) * gate
        return out

    return fuse


VARIANTS: dict[str, Variant] = {
    "dense only": lambda d, lex, cov, att: d,
    "w0.5 /best": lambda d, lex, cov, att: 0.5 * d + 0.5 * lex / _best(lex),
    "w0.8 /best (today)": lambda d, lex, cov, att: 0.8 * d + 0.2 * lex / _best(lex),
    "w0.8 /max(best,att)": lambda d, lex, cov, att: 0.8 * d + 0.2 * lex / max(_best(lex), att),
    "w0.8 /best x cov": lambda d, lex, cov, att: 0.8 * d + 0.2 * lex / _best(lex) * cov,
    "w0.8 /best x cov^2": lambda d, lex, cov, att: 0.8 * d + 0.2 * lex / _best(lex) * cov**2,
    **{
        f"w{w} /best x dense-gap gate {g}": _gate(w, g) for g in (0.1, 0.2, 0.3) for w in (0.8, 0.5)
    },
    "rrf60": _rrf(60, 1.0, 1.0),
    "rrf60 .8/.2": _rrf(60, 0.8, 0.2),
    "rrf10 .8/.2": _rrf(10, 0.8, 0.2),
}


def evaluate(name: str, half: str, cached: object) -> dict[str, tuple[float, int]]:
    """Mean nDCG@10 of every variant over one set's half."""
    nset = ns.load_natural_set(name, cached)
    emb = bt.MemoEmbedder(cached)
    th = Treehop(None, embedder=emb, config=RetrievalConfig())
    try:
        th.add_resource(str(nset.root), target_uri=f"viking://resources/{nset.name}")
        flat = bn.Flat(th)
        leaves = [n for n in th.store.iter_nodes(None) if n.is_leaf]
        coverage = LexicalIndex(k1=0.0)  # BM25 at k1 = 0: the sum of the matched terms' IDF
        coverage.upsert(np.arange(len(leaves)), [n.lexical_text() for n in leaves])
        qs = bt.sampled_halves(nset.questions, None)[half == "test"]
        emb.prepare([q.text for q in qs])
        judge = bn.Judge()
        per: dict[str, list[float]] = {k: [] for k in VARIANTS}
        for q in qs:
            d = (flat.matrix @ emb.queries[q.text]).astype(np.float64)
            lex = flat.lexical.score(q.text, size=len(leaves)).astype(np.float64)
            att = attainable(flat.lexical, q.text)
            cov = coverage.score(q.text, size=len(leaves)).astype(np.float64) / max(att, 1e-9)
            answers = [a for a, _ in q.answers]
            rel = {f"a{i}": g for i, (_, g) in enumerate(q.answers)}
            for key, fuse in VARIANTS.items():
                top = np.argsort(-fuse(d, lex, cov, att), kind="stable")[:10]
                ranked = [judge.units(flat.texts[int(i)], answers) for i in top]
                per[key].append(bt.ndcg_at(ranked, rel, 10))
        return {k: (float(np.mean(v)) if v else 0.0, len(v)) for k, v in per.items()}
    finally:
        th.close()


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--test", action="store_true", help="the test halves (default: dev)")
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    args = ap.parse_args(argv)
    half = "test" if args.test else "dev"
    names = args.sets.split(",")
    cached = ds.default_embedder()
    scores = {name: evaluate(name, half, cached) for name in names}
    bn.print_variant_table(half, names, list(VARIANTS), lambda key, n: scores[n][key])


if __name__ == "__main__":
    main()
