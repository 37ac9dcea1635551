"""Term proximity screened inside ``find()``: issue 33, round 15 (helper ``proximity``).

Term proximity (how close together a query's terms occur in a text) is the one classic IR
family the natural-question rounds had not tried. This screen patches the retriever from
outside (``retrieval/`` is not changed): before the chunk window (the first step of
``HierarchicalRetriever._conclude``), each of the best ``POOL`` collected leaves of a find
(by their final score, the same pool size as the chunk window's) gains a proximity bonus in
BM25 units, put on the fusion's scale the way the store puts BM25 there::

    final += (1 - dense_weight) * bonus / scale        # scale: the query's best BM25 in the index

so the bonus is what the literature adds to a BM25 score, weighted as the store weights
BM25. Positions are those of the index's own tokens (stemmed, stopwords dropped:
``LexicalIndex.tokenize``), so "adjacent" means no content word between. Query terms count
once each; a leaf with fewer than two distinct query terms gains nothing.

Variants, parameters from the papers, none fitted here:

* ``mindist``: Tao & Zhai (SIGIR 2007), ``pi = log(alpha + exp(-delta))`` with ``delta`` the
  smallest distance between occurrences of two distinct query terms and ``alpha = 0.3`` (the
  paper's recommended value), as a bonus over a leaf with no pair: ``log(1 + exp(-delta) /
  alpha)`` (0.80 for adjacent terms, 0.37 at distance 2, 0.15 at 3, ~0 past 5);
* ``tp``: Büttcher, Clarke & Lushman (SIGIR 2006) BM25TP: for each pair of consecutive
  occurrences of distinct query terms at distance ``d``, each term's accumulator gains the
  other's IDF over ``d**2``; bonus ``sum_t min(1, idf_t) * acc_t * (k1 + 1) / (acc_t + K)``
  with BM25's own ``k1``, ``b`` and length norm ``K`` (the index's, and its IDF);

* ``sdm``: Metzler & Croft's (SIGIR 2005) sequential dependence model's two proximity
  features, each as the share of the query's bigrams (consecutive distinct query terms)
  found ordered (adjacent, in order) and unordered (within 8 tokens), weighted by SDM's own
  ``lambda_O / lambda_T = 0.10 / 0.85`` and ``lambda_U / lambda_T = 0.05 / 0.85``; these
  shares are on the fusion's normalised lexical scale already (no division by the best
  BM25; built on branch ``wip-proximity`` as ``RetrievalConfig.question_proximity`` and not
  merged: bench/README.md, round 15);

each for question-shaped queries only (``q``, the find's question flag) or every query
(``all``; ``sdm`` was screened for questions only); ``--variant off`` is main's ranking. The
closest pair of distinct terms is always a consecutive pair in the merged list of
occurrences, so each variant is one linear pass over a leaf's tokens.

    python bench/bench_proximity_screen.py --variant mindist-q -- --dev --rows find --sets ...
    python bench/bench_proximity_screen.py --variant off -- --dev --rows find --sets ...

Everything after ``--`` goes to ``bench_natural.py`` (``--json`` included).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import heapq  # noqa: E402
import math  # noqa: E402
import operator  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
from treehop.chunk_window import WINDOW_POOL  # noqa: E402
from treehop.descent import Track, score_of  # noqa: E402
from treehop.hierarchical_retriever import HierarchicalRetriever  # noqa: E402

ALPHA = 0.3
"""Tao & Zhai's ``alpha`` (their recommended value)."""

VARIANTS = ("off", "mindist-q", "mindist-all", "tp-q", "tp-all", "sdm-q")

SDM_TERM, SDM_ORDERED, SDM_UNORDERED, SDM_WINDOW = 0.85, 0.10, 0.05, 8
"""Metzler & Croft's (SIGIR 2005) sequential dependence weights and unordered window."""


def pair_gaps(ids: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], ...]:
    """The consecutive pairs of query-term occurrences whose terms differ, in a token stream
    (``ids``: the query term's number per token, -1 for other tokens): their distances and
    the two terms (first, second)."""
    pos = np.flatnonzero(ids >= 0)
    t = ids[pos]
    differ = t[1:] != t[:-1]
    gaps = (pos[1:] - pos[:-1])[differ]
    return gaps, t[:-1][differ], t[1:][differ]


def mindist_bonus(ids: npt.NDArray[np.int64]) -> float:
    """Tao & Zhai's MinDist term over a leaf with no pair: ``log(1 + exp(-delta) / alpha)``."""
    gaps, _, _ = pair_gaps(ids)
    if gaps.size == 0:
        return 0.0
    return math.log1p(math.exp(-float(gaps.min())) / ALPHA)


def tp_bonus(
    ids: npt.NDArray[np.int64], idf: npt.NDArray[np.float64], k1: float, b: float, avgdl: float
) -> float:
    """Büttcher et al.'s proximity accumulators, saturated as BM25 saturates a term's tf."""
    gaps, first, second = pair_gaps(ids)
    if gaps.size == 0:
        return 0.0
    inv = 1.0 / gaps.astype(np.float64) ** 2
    acc = np.bincount(first, weights=idf[second] * inv, minlength=idf.size)
    acc += np.bincount(second, weights=idf[first] * inv, minlength=idf.size)
    big_k = k1 * ((1.0 - b) + b * ids.size / max(avgdl, 1e-9))
    return float((np.minimum(1.0, idf) * acc * (k1 + 1.0) / (acc + big_k)).sum())


def sdm_share(ids: npt.NDArray[np.int64], n_terms: int) -> float:
    """The sequential dependence model's two proximity features, each as the share of the
    query's bigrams (consecutive query terms) it finds: ordered (the second term right after
    the first) and unordered (both within ``SDM_WINDOW`` tokens), weighted by SDM's own
    ``lambda_O / lambda_T`` and ``lambda_U / lambda_T``: a leaf that holds every bigram in
    order gains ``(0.10 + 0.05) / 0.85`` of a BM25 weight's full share."""
    if n_terms < 2:
        return 0.0
    pos = np.flatnonzero(ids >= 0)
    t = ids[pos]
    ordered = unordered = 0
    for i in range(n_terms - 1):
        a, b = pos[t == i], pos[t == i + 1]
        if a.size == 0 or b.size == 0:
            continue
        ordered += bool(np.isin(a + 1, b).any())
        # the nearest b of each a (both sides): within the window?
        j = np.searchsorted(b, a)
        near = np.minimum(
            np.abs(b[np.minimum(j, b.size - 1)] - a), np.abs(a - b[np.maximum(j - 1, 0)])
        )
        unordered += bool((near < SDM_WINDOW).any())
    return (SDM_ORDERED * ordered + SDM_UNORDERED * unordered) / (SDM_TERM * (n_terms - 1))


def _bonuses(store: Any, query: str, texts: Sequence[str], kind: str) -> npt.NDArray[np.float64]:
    lex = store.lexical
    terms = list(dict.fromkeys(lex.tokenize(query)))
    out = np.zeros(len(texts))
    if len(terms) < 2:
        return out
    number = {t: i for i, t in enumerate(terms)}
    n = max(len(lex), 1)
    dfs = np.array([lex.document_frequency(t) for t in terms], dtype=np.float64)
    idf = np.log1p((n - dfs + 0.5) / (dfs + 0.5))
    for j, text in enumerate(texts):
        ids = np.fromiter((number.get(t, -1) for t in lex.tokenize(text)), dtype=np.int64, count=-1)
        if kind == "sdm":
            out[j] = sdm_share(ids, len(terms))
        elif kind == "mindist":
            out[j] = mindist_bonus(ids)
        else:
            out[j] = tp_bonus(ids, idf, lex.k1, lex.b, lex.avgdl)
    return out


def install(variant: str) -> None:
    """Patch ``HierarchicalRetriever._conclude`` with the variant's proximity step first."""
    if variant == "off":
        return
    kind, gate = variant.split("-")
    original = HierarchicalRetriever._conclude

    async def _conclude(self: Any, q: Any, state: Any, result: Any, t0: float) -> Any:
        lex = getattr(self.store, "lexical", None)
        if (
            lex is not None
            and (q.question or gate == "all")
            and state.track is Track.VECTOR
            and q.dense_weight < 1.0
        ):
            cands = [c for c in state.collected.values() if c.is_leaf]
            pool = max(WINDOW_POOL, 3 * q.req.limit)
            if len(cands) > pool:
                cands = heapq.nlargest(pool, cands, key=operator.attrgetter("final.vec"))
            query = q.req.query.query
            scale = lex.max_score(query, lex.row_bound)
            if cands and scale > 0:
                texts = [c.node.lexical_text() for c in cands]
                bonus = _bonuses(self.store, query, texts, kind)
                # (SDM's shares are on the fusion's normalised lexical scale already)
                w = (1.0 - q.dense_weight) / (1.0 if kind == "sdm" else scale)
                for c, x in zip(cands, bonus.tolist(), strict=True):
                    if x > 0:
                        c.final = score_of(c.final.vec + w * x, c.final.rr)
        return await original(self, q, state, result, t0)

    HierarchicalRetriever._conclude = _conclude  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    rest: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, rest = argv[:at], argv[at + 1 :]
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--variant", choices=VARIANTS, required=True)
    args = ap.parse_args(argv)
    install(args.variant)
    bn.main(rest)


if __name__ == "__main__":
    main()
