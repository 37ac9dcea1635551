"""Does a per-query signal pick the question fusion weight? Issue 33, stop 57 (helper
``adaptive57``).

``fusion57`` found the BM25-strong corpora (chrony-faq, flex-faq, nut-faq) want
``question_dense_weight`` 0.6-0.7 while doxygen / mplayer / cryptsetup want 0.8, netting
zero pooled. This screen asks whether a signal of the query itself, read off the scores a
first global search already has (the cosine and the BM25 score of every leaf), picks between
the two weights fusion57 screened: 0.8 (today's) and 0.6 (the BM25-strong sets' choice). No
constant is fitted: the two weights are the screened grid's, the thresholds are a majority
and a median. ``retrieval/`` is not changed: ``HierarchicalRetriever._resolve`` is patched
here, only for this script's rows, only for question-shaped queries over documents that
resolved to ``question_dense_weight`` (``q.question`` and no per-call ``dense_weight``).

The scores come from ``bench_natural.Flat`` (the client's own leaves and vectors, treehop's
BM25 over the same leaf texts), the same numbers the store's first global search blends
(over the whole set, where ``find()`` searches the set's scope).

* ``find-margin``: each side's normalised margin of its top hit,
  ``(s1 - s2) / (s1 - s10)`` (scale-free, in [0, 1]); BM25's larger: 0.6, else 0.8.
* ``find-agree``: the dense and BM25 top-5 leaves; when they share a majority (3 of 5) the
  two agree and 0.8 stays, otherwise ``find-margin``'s rule picks the side.
* ``find-rare``: the share of the query's BM25 terms that are rare in the corpus (document
  frequency below the median of the corpus's postings, i.e. rarer than the term of a
  typical posting); ``w = 0.8 - 0.2 * share`` (0.8 with no rare term, 0.6 with all rare).
* ``find-rare7``: ``find-rare`` with half the swing, ``w = 0.8 - 0.1 * share`` (down to
  0.7, the grid's other value; added after the first run, so screened on the same pools).

Run mode (every other argument goes to ``bench_natural.py``; ``--dev`` only)::

    export TREEHOP_BENCH_CACHE=/work/benchcache OPENBLAS_NUM_THREADS=1
    R=find,find-margin,find-agree,find-rare
    python bench/bench_adaptive57_screen.py --dev --rows $R --json NINE.json
    python bench/bench_adaptive57_screen.py --dev --sets $U --rows $R --json UNTUNED.json

It prints, per row, how many questions took each weight and the signal's own cost per
question (ms). Report mode: ``--report NINE.json UNTUNED.json``: per pool, each row's
pooled mean, variant minus ``find`` with ``bench_natural.mean_interval`` (paired 95 %
bootstrap over the questions), per-set wins / losses, find()'s median latency.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_fusion57_screen as fs  # noqa: E402
import bench_natural as bn  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402

BASE = "find"
VARIANTS = ("find-margin", "find-agree", "find-rare", "find-rare7")
METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")
TIE = 1e-9
HIGH, MID, LOW = 0.8, 0.7, 0.6
"""fusion57's grid: today's weight, and the BM25-strong sets' two choices."""
TOP = 10
AGREE_K = 5

FLAT: list[bn.Flat | None] = [None]
"""The flat index of the set being run (set by the ``_with_config`` wrapper)."""
CHOSEN: dict[str, Counter[float]] = defaultdict(Counter)
COST_MS: dict[str, list[float]] = defaultdict(list)
_MEDIAN_DF: dict[int, float] = {}


def margin(scores: npt.NDArray[np.float32]) -> float:
    """``(s1 - s2) / (s1 - s_k)`` of the best ``TOP`` of ``scores`` (sorted best first
    inside); 0 with fewer than two scores or no spread."""
    s = np.sort(np.asarray(scores, dtype=np.float64))[::-1][:TOP]
    if s.size < 2 or s[0] - s[-1] <= 0:
        return 0.0
    return float((s[0] - s[1]) / (s[0] - s[-1]))


def top_ids(scores: npt.NDArray[np.float32], k: int) -> set[int]:
    """The rows of the ``k`` best positive-or-any ``scores`` (all rows when fewer)."""
    k = min(k, scores.size)
    return {int(i) for i in np.argpartition(-scores, k - 1)[:k]} if k else set()


def margin_weight(dense: npt.NDArray[np.float32], lex: npt.NDArray[np.float32]) -> float:
    """0.6 when BM25's top hit stands out more than the dense one's, else 0.8."""
    lex_pos = lex[lex > 0]
    return LOW if margin(lex_pos) > margin(dense) else HIGH


def agree_weight(dense: npt.NDArray[np.float32], lex: npt.NDArray[np.float32]) -> float:
    """0.8 when the two top-5 lists share a majority, else :func:`margin_weight`."""
    shared = top_ids(dense, AGREE_K) & top_ids(np.where(lex > 0, lex, -np.inf), AGREE_K)
    if len(shared) * 2 > AGREE_K:
        return HIGH
    return margin_weight(dense, lex)


def median_posting_df(df: npt.NDArray[np.int64]) -> float:
    """The document frequency of the term of the median posting: each term counted once per
    document it is in (so a typical running word, not the hapax-heavy vocabulary)."""
    live = np.sort(df[df > 0])
    if live.size == 0:
        return 0.0
    cum = np.cumsum(live)
    return float(live[int(np.searchsorted(cum, cum[-1] / 2.0))])


def rare_share(lexical: Any, text: str) -> float:
    """The share of ``text``'s BM25 terms (known to the corpus) whose document frequency is
    below the median posting's."""
    key = id(lexical)  # (the caches are cleared when the set changes: ``install``)
    if key not in _MEDIAN_DF:
        _MEDIAN_DF[key] = median_posting_df(np.asarray(lexical._df))
    med = _MEDIAN_DF[key]
    dfs = [lexical.document_frequency(t) for t in set(lexical.tokenize(text))]
    dfs = [d for d in dfs if d > 0]
    if not dfs:
        return 0.0
    return sum(d < med for d in dfs) / len(dfs)


def weight_for(row: str, flat: bn.Flat, vec: npt.NDArray[np.float32], text: str) -> float:
    """The weight ``row``'s rule gives this question."""
    if row in ("find-rare", "find-rare7"):
        low = LOW if row == "find-rare" else MID
        return HIGH - (HIGH - low) * rare_share(flat.lexical, text)
    dense = flat.matrix @ np.asarray(vec, dtype=np.float32).reshape(-1)
    lex = np.asarray(flat.lexical.score(text, size=len(flat.uris)), dtype=np.float32)
    return agree_weight(dense, lex) if row == "find-agree" else margin_weight(dense, lex)


def install() -> None:
    """Add the rows and patch ``_resolve`` and ``Runner._with_config`` (idempotent)."""
    bn.add_screen_rows(*(bn.Row(k, f"find {k[5:]} weight", "find") for k in VARIANTS))
    if getattr(hr.HierarchicalRetriever._resolve, "_adaptive57", False):
        return
    with_config = bn.Runner._with_config
    cache: dict[tuple[str, str, int], float] = {}

    def keep_flat(self: bn.Runner, row: bn.Row, fn: Callable[[], Any]) -> Any:
        if FLAT[0] is not self.flat:  # (a new set: an id of the last one may be reused)
            cache.clear()
            _MEDIAN_DF.clear()
        FLAT[0] = self.flat
        return with_config(self, row, fn)

    bn.Runner._with_config = keep_flat  # type: ignore[method-assign]
    resolve = hr.HierarchicalRetriever._resolve

    def adaptive(self: hr.HierarchicalRetriever, req: hr.RetrievalRequest) -> hr._Query:
        q = resolve(self, req)
        row, flat = bn.ACTIVE_ROW[0], FLAT[0]
        cfg_w = self.config.question_dense_weight
        if (
            row not in VARIANTS
            or flat is None
            or not q.question
            or req.dense_weight is not None
            or cfg_w is None
            or q.dense_weight != max(self.config.dense_weight, cfg_w)
        ):
            return q
        key = (row, req.query.query, id(flat))
        if key not in cache:
            t0 = time.perf_counter()
            cache[key] = weight_for(row, flat, req.vector, req.query.query)  # type: ignore[arg-type]
            COST_MS[row].append((time.perf_counter() - t0) * 1000)
            CHOSEN[row][round(cache[key], 2)] += 1
        q.dense_weight = cache[key]
        return q

    adaptive._adaptive57 = True  # type: ignore[attr-defined]
    hr.HierarchicalRetriever._resolve = adaptive  # type: ignore[method-assign]


def report(path: Path) -> None:
    """One pool's table (see the module docstring): fusion57's report of these rules, with
    find()'s latency."""
    fs.report(path, VARIANTS, extra=(), latency=True)


def main(argv: Sequence[str]) -> None:
    if argv[:1] == ["--report"]:
        for f in argv[1:]:
            report(Path(f))
        return
    if "--test" in argv or "--dev" not in argv:
        raise SystemExit("dev halves only: pass --dev (the untuned test halves stay held out)")
    install()
    bn.main(argv)
    for row in VARIANTS:
        if COST_MS[row]:
            cost = np.array(COST_MS[row])
            print(
                f"{row}: weights {dict(sorted(CHOSEN[row].items()))}; signal cost per question "
                f"mean {cost.mean():.2f} ms, p50 {np.median(cost):.2f} ms, max {cost.max():.2f} ms"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
