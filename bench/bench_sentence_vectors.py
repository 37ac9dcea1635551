"""Screen: does a leaf scored by its best sentence window beat its one vector? (issue 33)

    python bench/bench_sentence_vectors.py --dev --sets django-faq,lsof-faq

A leaf's one vector is the mean of its tokens (MiniLM's pooling, windows averaged past 256
pieces), so a question answered by one sentence of a 1,000-character chunk meets a vector
diluted by the rest. Multi-vector retrieval scores the leaf by its best piece instead. This
screen embeds every leaf's sentence windows (:func:`sentence_windows`, through the bench's
embedding cache) and ranks the *same leaves* flat by

- ``leaf``: the leaf's own vector (the ``flat-dense`` row of ``bench_natural.py``);
- ``max``: the larger of the leaf's and its best window's similarity;
- ``mix``: ``(1 - b) * leaf + b * best window`` for each ``--mix`` weight ``b``.

Each row delivers the leaf's text (what a flat store returns), judged by
``bench_natural.py``'s judge: nDCG@10, answer-in-context packed into each budget. Nothing in
``treehop`` changes; the point is to know whether the signal is worth building into the store.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop.context_assembly import default_token_counter  # noqa: E402

DEPTHS = (20, 50, 100)
"""Rescoring depths screened: how much of the gain a stage over the leaf's own top-k keeps."""
HYBRID_WS = (0.5, 0.6, 0.7, 0.8)
"""``dense_weight`` of the hybrid rows (0.5: the default), BM25 scaled by its best score."""
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")


def sentences(text: str) -> list[str]:
    """``text`` cut after sentence ends, blank lines and before list items (linear)."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def sentence_windows(text: str, max_chars: int, min_chars: int = 40) -> list[str]:
    """Runs of consecutive sentences of at most ``max_chars`` characters, one starting at
    every sentence (a sentence too short to say much alone is joined to the next ones until
    ``min_chars``); none when the leaf is itself no longer than one window."""
    if len(text) <= max_chars:
        return []
    ss = sentences(text)
    out: list[str] = []
    for i in range(len(ss)):
        run = ss[i][:max_chars]
        j = i + 1
        while j < len(ss) and len(run) + 1 + len(ss[j]) <= max_chars:
            if len(run) >= min_chars and len(run) + 1 + len(ss[j]) > max_chars // 2:
                break
            run += " " + ss[j]
            j += 1
        if len(run) >= min_chars:
            out.append(run)
    return list(dict.fromkeys(out))


class WindowIndex:
    """Every leaf's windows: one matrix, and for each window its leaf's row."""

    def __init__(self, flat: bn.Flat, embedder: object, max_chars: int) -> None:
        owner: list[int] = []
        texts: list[str] = []
        for i, t in enumerate(flat.texts):
            for w in sentence_windows(t, max_chars):
                owner.append(i)
                texts.append(w)
        self.owner = np.asarray(owner, dtype=np.int64)
        self.n_leaves = len(flat.texts)
        if texts:
            self.matrix = np.ascontiguousarray(embedder.embed(texts), dtype=np.float32)  # type: ignore[attr-defined]
        else:
            self.matrix = np.zeros((0, flat.matrix.shape[1]), dtype=np.float32)

    def best(self, vec: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """Each leaf's best window similarity (-inf for a leaf with no windows)."""
        out = np.full(self.n_leaves, -np.inf, dtype=np.float32)
        if len(self.owner):
            np.maximum.at(out, self.owner, self.matrix @ vec)
        return out


def run(
    names: Sequence[str], half: str, max_chars: int, mixes: Sequence[float]
) -> list[dict[str, Any]]:
    cached = bn.bench_embedder("")
    budgets = [500, 1000, 2000]
    counter = bn.CachedCounter(default_token_counter())
    out: list[dict[str, Any]] = []
    for name in names:
        nset = ns.load_natural_set(name, cached)
        t0 = time.perf_counter()
        with bn.indexed_set(nset, cached) as ix:
            flat = ix.flat
            wi = WindowIndex(flat, cached, max_chars)
            dev, test = bt.sampled_halves(nset.questions, 0)
            qs = dev if half == "dev" else test
            ix.embedder.prepare([q.text for q in qs])
            rows = ["leaf", "max"] + [f"mix{b:g}" for b in mixes]
            rows += [f"mix{mixes[0]:g}@k{k}" for k in DEPTHS]
            for w in HYBRID_WS:
                rows += [f"hyb{w:g}-leaf"] + [f"hyb{w:g}-mix{b:g}" for b in mixes]
            runs = {
                r: bn.RowRun(
                    bn.Row(r, r, "flat-dense"), {10: {}, 100: {}}, {b: {} for b in budgets}, []
                )
                for r in rows
            }
            for q in qs:
                vec = ix.embedder.queries[q.text]
                leaf = flat.matrix @ vec
                best = wi.best(vec)
                has = np.isfinite(best)
                variants = {"leaf": leaf, "max": np.where(has, np.maximum(leaf, best), leaf)}
                for b in mixes:
                    variants[f"mix{b:g}"] = np.where(has, (1 - b) * leaf + b * best, leaf)
                b0 = mixes[0]
                first = np.argsort(-leaf, kind="stable")
                for k in DEPTHS:
                    # rescoring only the k best by the leaf's own vector (a reranker's view)
                    s_k = leaf - 10.0
                    head = first[:k]
                    s_k[head] = variants[f"mix{b0:g}"][head]
                    variants[f"mix{b0:g}@k{k}"] = s_k
                lex = np.zeros(len(leaf), dtype=np.float32)
                lrows, lsc = flat.lexical.top(q.text, len(leaf))
                lex[lrows] = lsc
                scale = float(lex.max()) if lex.size and lex.max() > 0 else 1.0
                for w in HYBRID_WS:
                    variants[f"hyb{w:g}-leaf"] = w * leaf + (1 - w) * lex / scale
                    for b in mixes:
                        mixed = variants[f"mix{b:g}"]
                        variants[f"hyb{w:g}-mix{b:g}"] = w * mixed + (1 - w) * lex / scale
                for r, s in variants.items():
                    rr = runs[r]
                    rr.texts[10][q.qid] = flat.ranked(s, 10)
                    rr.texts[100][q.qid] = flat.ranked(s, 100)
                    for bud in budgets:
                        pool = rr.texts[100][q.qid][: bn.PACK_POOL]
                        pieces = bn.pack_pieces(pool, bud, counter)
                        rr.blocks[bud][q.qid] = ("\n\n".join(pieces), pieces)
            judge = bn.Judge()
            for r in rows:
                sc = bn.score(runs[r], qs, judge, budgets, nset.answers_are_pages)
                out.append(
                    {
                        "set": name,
                        "half": half,
                        "row": r,
                        "n": sc.n,
                        "ndcg@10": sc.ndcg10,
                        **{f"ctx@{b}": sc.ctx[b] for b in budgets},
                        "per_question": sc.per_question,
                    }
                )
            print(
                f"{name}/{half}: {len(flat.texts)} leaves, {len(wi.owner)} windows, "
                f"{time.perf_counter() - t0:.0f}s",
                flush=True,
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(ns.NATURAL_SETS))
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dev", action="store_true")
    g.add_argument("--test", action="store_true")
    ap.add_argument("--window-chars", type=int, default=300)
    ap.add_argument("--mix", default="0.3,0.5")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    mixes = [float(x) for x in a.mix.split(",") if x.strip()]
    rows = run(a.sets.split(","), "dev" if a.dev else "test", a.window_chars, mixes)
    keys = ["ndcg@10", "ctx@500", "ctx@1000", "ctx@2000"]
    names = list(dict.fromkeys(r["row"] for r in rows))
    print("| set | row | n | " + " | ".join(keys) + " |")
    for r in rows:
        print(
            f"| {r['set']} | {r['row']} | {r['n']} | "
            + " | ".join(f"{r[k]:.3f}" for k in keys)
            + " |"
        )
    for name in names:
        sel = [r for r in rows if r["row"] == name]
        n = sum(r["n"] for r in sel)
        print(
            f"| pooled | {name} | {n} | "
            + " | ".join(f"{sum(r[k] * r['n'] for r in sel) / n:.4f}" for k in keys)
            + " |"
        )
    if a.json:
        a.json.write_text(json.dumps(rows) + "\n")


if __name__ == "__main__":
    main()
