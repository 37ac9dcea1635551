"""Why ``find()`` ranks a natural question's answer below flat dense, question by question.

Issue 33, round 9 (ranking). For every question of a set's half where flat dense (the same
leaves and vectors, judged leaf by leaf) puts its first answer higher than ``find()`` (judged
on each slot's delivered text, as ``bench_natural.py`` does), the question gets one cause, read
in this order:

* ``not question-shaped``: ``query_shape.is_question`` says no, so the query takes document
  slots, the hybrid default fusion and the tree terms;
* ``answer is a face, slot not judged``: a leaf that holds the answer is the face of a slot
  above the first judged one, but the slot's text (the face grown over its passage) is not
  judged to hold it (an answer split over two passages, or the slot grown over another);
* ``answer collapsed behind a face``: an answer leaf sits in a slot's ``collapsed`` list above
  the first judged slot;
* ``fusion``: the question fusion (``question_dense_weight`` times the cosine plus the rest
  times BM25 over the query's best, over every leaf) ranks the first answer leaf lower than
  the cosine alone does;
* ``other``.

Printed: one line per such question (``find`` rank, flat dense rank, fused leaf rank), then
per cause the count and the DCG@10 gain flat dense has over ``find()`` on them. Every cause
is *against flat dense only*: the fusion also wins questions dense loses (``bench_rank_screen``
pools both).

    python bench/bench_rank_diag.py --dev                       # every natural set
    python bench/bench_rank_diag.py --dev --sets django-faq,zsh-faq
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import sys  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop import RetrievalConfig  # noqa: E402
from treehop.query_shape import is_question  # noqa: E402


def gain(rank: int | None) -> float:
    """DCG@10 gain of a first answer at ``rank`` (1-based; ``None``: none in the top 10)."""
    return 0.0 if rank is None or rank > 10 else 1.0 / math.log2(rank + 1)


def first_rank(scores: npt.NDArray[np.float64], is_answer: npt.NDArray[np.bool_]) -> int | None:
    """1-based rank of the best-scored answer leaf within the top 300 (``None``: none)."""
    top = np.argsort(-scores, kind="stable")[:300]
    hits = np.flatnonzero(is_answer[top])
    return int(hits[0]) + 1 if hits.size else None


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--test", action="store_true", help="the test halves (default: dev)")
    ap.add_argument("--dev", action="store_true", help="the dev halves (the default)")
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    args = ap.parse_args(argv)
    w = RetrievalConfig().question_dense_weight or RetrievalConfig().dense_weight
    cached = ds.default_embedder()
    judge = bn.Judge()
    count: Counter[str] = Counter()
    lost: defaultdict[str, float] = defaultdict(float)
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        questions = bt.sampled_halves(nset.questions, None)[1 if args.test else 0]
        with bn.indexed_set(nset, cached) as s:
            s.embedder.prepare([q.text for q in questions])
            flat = s.flat
            for q in questions:
                answers = [a for a, _ in q.answers]
                dense = (flat.matrix @ s.embedder.queries[q.text]).astype(np.float64)
                lex = flat.lexical.score(q.text, size=len(flat.texts)).astype(np.float64)
                fused = w * dense + (1 - w) * lex / max(float(lex.max()), 1e-9)
                is_answer = np.array([bool(judge.units(t, answers)) for t in flat.texts])
                r_dense, r_fused = first_rank(dense, is_answer), first_rank(fused, is_answer)
                found = s.th.find(q.text, target_uri=s.scope, limit=10).contexts()
                r_find = next(
                    (k + 1 for k, m in enumerate(found) if judge.units(m.slot_text, answers)),
                    None,
                )
                if gain(r_find) >= gain(r_dense) - 1e-12:
                    continue
                answer_uris = {flat.uris[i] for i in np.flatnonzero(is_answer).tolist()}
                above = len(found) if r_find is None else r_find - 1
                faces = any(m.uri in answer_uris for m in found[:above])
                hidden = any(c.uri in answer_uris for m in found[:above] for c in m.collapsed)
                if not is_question(q.text):
                    cause = "not question-shaped"
                elif faces:
                    cause = "answer is a face, slot not judged"
                elif hidden:
                    cause = "answer collapsed behind a face"
                elif r_fused is not None and (r_dense is None or r_fused > r_dense):
                    cause = "fusion"
                else:
                    cause = "other"
                count[cause] += 1
                lost[cause] += gain(r_dense) - gain(r_find)
                print(
                    f"{name:14} {cause:34} find={r_find} dense={r_dense} fused={r_fused}"
                    f" | {q.text[:80]}"
                )
    print()
    print("| cause | questions | DCG@10 flat dense gains over find() |")
    print("|---|---|---|")
    for cause, n in count.most_common():
        print(f"| {cause} | {n} | {lost[cause]:.2f} |")


if __name__ == "__main__":
    main()
