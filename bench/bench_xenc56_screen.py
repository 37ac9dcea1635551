"""An offline reranker whose weights ship in a PyPI wheel, screened as extra rows: issue 33,
stage 3 "rerank with fallback" (helper ``xenc56``).

No wheel on PyPI ships a cross-encoder's weights (bench/README.md, helper xenc56, lists the
packages checked). The one reranker found whose weights are inside its wheel is
``nanoranker`` 1.2 (MIT, Carlo Moro, 94 MB wheel): not a cross-encoder but a small network
over two *separately* embedded texts (the query's and the document's Universal Sentence
Encoder Multilingual vector, 512-d, plus a 64-d char n-gram hash each), so it cannot read the
query against the document token by token. This screen asks whether it is worth wiring at all,
on the dev halves only, against the same pipeline without it:

* ``flat-hybrid-nano``: flat hybrid's top 100 (the ``flat-hybrid`` row's list), its first
  ``TOP_N`` reranked by nanoranker, the rest kept in order.
* ``find-nano``: ``find()`` defaults' top 100 delivered slots, the first ``TOP_N`` reranked
  the same way (a post-processing rerank, the same N, so both rows differ from their bases
  only by the reranker). Its ``ctx@B`` packs the reranked list best-first like the flat rows
  (``assemble_context`` cannot take an outside order).
* ``find-packed``: ``find-nano`` without the rerank (its base for ``ctx@B``: the same top 100
  packed the same way, so the packing's share of the ``ctx@B`` change is not the reranker's).

nanoranker is not a treehop dependency: install it beside the bench, e.g.
``pip install --no-deps --target /tmp/xenc/site nanoranker onnxruntime-extensions`` and
``export XENC_SITE=/tmp/xenc/site``.

Latency: the limit-10 call reranks uncached (the p50 column is what a user pays); the
limit-100 call reuses the limit-10 call's embeddings of the same texts (same top N).

    python bench/bench_xenc56_screen.py --dev --rows find,find-nano,flat-hybrid,flat-hybrid-nano \
        --json OUT.json

Every argument goes to ``bench_natural.py``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
if os.environ.get("XENC_SITE"):
    sys.path.append(os.environ["XENC_SITE"])

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402

TOP_N = 20
"""How many of a list's first results the reranker rescores (both rows)."""

FLAT_NANO, FIND_NANO, FIND_PACKED = "flat-hybrid-nano", "find-nano", "find-packed"


class Nano:
    """nanoranker's scoring in input order, raw network outputs (its ``rank()`` sorts and
    normalises by the sum), with each text's embedding kept for reuse by a later call."""

    def __init__(self) -> None:
        import nanoranker

        self.nr = nanoranker
        self.memo: dict[str, npt.NDArray[np.float64]] = {}

    def embed(self, text: str, cached: bool) -> npt.NDArray[np.float64]:
        got = self.memo.get(text) if cached else None
        if got is None:
            got = self.memo[text] = np.asarray(self.nr.embed(text), dtype=np.float64)
        return got

    def scores(self, query: str, docs: Sequence[str], cached: bool) -> npt.NDArray[np.float32]:
        q = self.embed(query, cached)
        d = np.stack([self.embed(t, cached) for t in docs])
        x = np.concatenate([np.tile(q, (len(d), 1)), d], axis=1).astype(np.float32)
        out = self.nr.reranker_model.run(["output"], {"input": x})[0]
        return np.asarray(out, dtype=np.float32).reshape(-1)


NANO: list[Nano] = []


def reranked(query: str, texts: list[str], limit: int) -> list[str]:
    """``texts`` with its first ``TOP_N`` reordered by nanoranker (stable), cut to ``limit``.
    The limit-10 call embeds afresh (its time is the row's p50); the limit-100 call reuses."""
    if not NANO:
        NANO.append(Nano())
    head, tail = texts[:TOP_N], texts[TOP_N:]
    if head:
        s = NANO[0].scores(query, head, cached=limit != 10)
        head = [head[int(i)] for i in np.argsort(-s, kind="stable")]
    return (head + tail)[:limit]


def install() -> None:
    """Two rows, run through a patched ``Runner.results`` (their ``block`` packs the list)."""
    bn.ROWS = (
        *bn.ROWS,
        bn.Row(FLAT_NANO, f"flat hybrid + nanoranker top {TOP_N}", "flat-hybrid"),
        bn.Row(FIND_NANO, f"find() + nanoranker top {TOP_N}", "find"),
        bn.Row(FIND_PACKED, "find() top 100 packed like flat rows", "find"),
    )
    results = bn.Runner.results

    def patched_results(self: bn.Runner, row: bn.Row, q: Any, limit: int) -> tuple[list[str], Any]:
        if row.key == FLAT_NANO:
            vec = self.embedder.queries[q.text]
            w = float(row.config.get("dense_weight", bt.DEFAULT_DENSE_WEIGHT))
            texts = self.flat.hybrid(vec, q.text, bn.PACK_POOL, w, self.scope)
            return reranked(q.text, texts, limit), None
        if row.key == FIND_NANO:
            texts, _ = results(self, bn.Row("find", "find", "find"), q, bn.PACK_POOL)
            return reranked(q.text, texts, limit), None  # None: packed like the flat rows
        if row.key == FIND_PACKED:
            texts, _ = results(self, bn.Row("find", "find", "find"), q, bn.PACK_POOL)
            return texts[:limit], None
        return results(self, row, q, limit)

    bn.Runner.results = patched_results  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> None:
    install()
    bn.main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
