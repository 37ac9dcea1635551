"""A small learned linear scorer over ``find()``'s own slots, screened leave-one-set-out:
issue 33, stop 59 (helper ``ltr59``).

Why: at 1,000 tokens the gap to flat hybrid is the answer's slot (6-7 in ``find()``, 3-4 in
flat hybrid: "helper ctx58"), and every hand-made fusion (weights, RRF, per-query weights,
proximity, a content-word query vector: "helper rank57", "adaptive57/58", "fusion57") lost
on one pool. This asks whether a *learned* combination of the evidence ``find()`` already
has per slot (its score, its own score before the tree context and window, the chunk's
cosine and BM25, the slot's rank, the chunk's place in its document, its length, the
document's other slots, the question's words at the slot's start) ranks the answers higher
on sets it was not trained on.

Two steps, so that the features are read once (``--dump``) and every fit is numpy only:

``--dump FILE`` (every other argument goes to ``bench_natural.py``; run with ``--dev`` and
``--rows find,flat-hybrid``): besides the rows, for each question of the ``find`` row two
extra calls are kept, pickled with each slot's features: ``find(limit=POOL)`` (what a
reranked ``find(limit=10)`` would reorder) and ``find(limit=POOL, context_tokens=1000)``
(what a reranked ``assemble_context(max_tokens=1000)`` would reorder: its slots, sized for
the block). ``retrieval/`` is not changed.

``--fit FILE [FILE ...]``: pairwise logistic regression (L2) on the slots' labels (the
answer grade the judge gives the slot's delivered text), leave-one-set-out: for each set the
weights are fitted on every other dev set of the files and applied to the held-out set's
questions; nDCG@10 of the reranked pool's first 10 and ctx@1000 of
``context_assembly.assemble_context`` over the reranked block call's first 10 slots (the
pure function the client calls, with the bench's token counter and judge). The base
(``pool``: the same calls, not reordered) and the ``find`` / ``flat-hybrid`` rows of the run
are reported beside it, paired per question (``bench_natural.mean_interval``).

    python bench/bench_ltr59_screen.py --dump /tmp/ltr59_nine.pkl --dev \
        --rows find,flat-hybrid --budgets 1000 --json J
    python bench/bench_ltr59_screen.py --fit /tmp/ltr59_nine.pkl /tmp/ltr59_untuned.pkl
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import math  # noqa: E402
import pickle  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
from treehop.context_assembly import assemble_context, default_token_counter  # noqa: E402
from treehop.text_tokenize import ENGLISH_STOPWORDS  # noqa: E402

POOL = 20
"""Slots a reranked call asks for and reorders (then keeps the first 10): room for an answer
at ``find()``'s slots 11-20 to come up, as flat hybrid's rank 3-4 answers sit at 6-7."""
BLOCK = 1000
FEATURES = (
    "score",  # the slot's score (tree context, window, document penalty in)
    "own",  # its own score (before propagation, the tree context and the window)
    "lift",  # score - own
    "cos",  # the chunk's cosine to the question (the client's own vectors)
    "bm25n",  # the chunk's BM25 over the question's best BM25 in the index
    "rank",  # log(1 + find()'s slot position, 0-based)
    "pos",  # log(1 + chunk index in its document)
    "len",  # log(slot text characters)
    "docrep",  # slots of the same document above it
    "head",  # share of the question's content words in the slot's first 200 characters
    "docbm25",  # the best bm25n among the pool's slots of its document
)

_PUNCT = "\"'`()[]{}<>,.;:!?\u2018\u2019\u201c\u201d"


def content_terms(text: str) -> set[str]:
    """The lower-cased words of ``text`` outside the BM25 stopword list."""
    out = set()
    for w in text.split():
        low = w.strip(_PUNCT).lower()
        if low and low not in ENGLISH_STOPWORDS:
            out.add(low)
    return out


def slot_features(
    contexts: Sequence[Any],
    terms: set[str],
    cos_of: dict[str, float],
    bm_of: dict[str, float],
) -> npt.NDArray[np.float64]:
    """One row of :data:`FEATURES` per slot of ``contexts`` (find()'s order)."""
    rows = []
    docs: dict[str, int] = {}
    doc_bm: dict[str, float] = {}
    for m in contexts:
        d = m.parent_uri or m.uri
        doc_bm[d] = max(doc_bm.get(d, 0.0), bm_of.get(m.uri, 0.0))
    for r, m in enumerate(contexts):
        d = m.parent_uri or m.uri
        own = m.own_score if m.own_score is not None else m.score
        text = m.slot_text
        start = content_terms(text[:200])
        rows.append(
            [
                m.score,
                own,
                m.score - own,
                cos_of.get(m.uri, 0.0),
                bm_of.get(m.uri, 0.0),
                math.log1p(r),
                math.log1p(m.chunk_index or 0),
                math.log(max(len(text), 1)),
                float(docs.get(d, 0)),
                len(terms & start) / len(terms) if terms else 0.0,
                doc_bm[d],
            ]
        )
        docs[d] = docs.get(d, 0) + 1
    return np.asarray(rows, dtype=np.float64).reshape(len(contexts), len(FEATURES))


DUMP: list[dict[str, Any]] = []
SET: list[str] = [""]
PAGES: dict[str, bool] = {}


def install_dump() -> None:
    """Patch ``bench_natural``: each ``find`` row question also records the two pool calls
    (slots, features), its answers and the set's by-piece rule."""
    results = bn.Runner.results
    load = bn.ns.load_natural_set

    def patched_load(name: str, cached: Any) -> Any:
        nset = load(name, cached)
        SET[0] = name
        PAGES[name] = bool(nset.answers_are_pages)
        return nset

    bn.ns.load_natural_set = patched_load  # type: ignore[assignment]

    def patched_results(self: bn.Runner, row: bn.Row, q: Any, limit: int) -> Any:
        out = results(self, row, q, limit)
        if row.key == "find" and limit == 10:
            th = self.th
            vec = self.embedder.queries[q.text]
            flat = self.flat
            cos = flat.matrix @ vec
            bm = flat.lexical.score(q.text, size=len(flat.uris))
            best = float(bm.max()) if bm.size else 0.0
            index = {u: i for i, u in enumerate(flat.uris)}
            terms = content_terms(q.text)
            rec: dict[str, Any] = {
                "set": SET[0],
                "pages": PAGES[SET[0]],
                "qid": q.qid,
                "kind": q.kind,
                "text": q.text,
                "answers": list(q.answers),
            }
            for key, kw in (("rank", {}), ("block", {"context_tokens": BLOCK})):

                def call(kw: dict[str, Any] = kw) -> Any:
                    return th._runner.run(
                        th.aio._find(q.text, target_uri=self.scope, limit=POOL, **kw)
                    )

                res = self._with_config(row, call)
                ctxs = res.contexts()
                cos_of: dict[str, float] = {}
                bm_of: dict[str, float] = {}
                for m in ctxs:
                    # (a face that is not a leaf: its best collected chunk's evidence)
                    at = [index[u] for u in [m.uri, *(c.uri for c in m.collapsed)] if u in index]
                    at = at[:1] if m.uri in index else at
                    if at:
                        cos_of[m.uri] = float(cos[at].max())
                        bm_of[m.uri] = float(bm[at].max()) / best if best > 0 else 0.0
                rec[key] = ctxs
                rec[key + "_x"] = slot_features(ctxs, terms, cos_of, bm_of)
            DUMP.append(rec)
        return out

    bn.Runner.results = patched_results  # type: ignore[method-assign]


# --------------------------------------------------------------------------------------
# Fitting
# --------------------------------------------------------------------------------------


def labels(rec: dict[str, Any], key: str, judge: bn.Judge) -> npt.NDArray[np.float64]:
    """Each slot's best answer grade (0: no answer) under the bench's judge."""
    answers = [a for a, _ in rec["answers"]]
    grade = {f"a{i}": g for i, (_, g) in enumerate(rec["answers"])}
    out = []
    for m in rec[key]:
        units = judge.units(bn.delivered(m), answers)
        out.append(max((grade[u] for u in units), default=0))
    return np.asarray(out, dtype=np.float64)


def pairs(x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Feature differences (better - worse) of every slot pair with different labels."""
    return pair_weights(x, y, "uniform")[0]


def pair_weights(
    x: npt.NDArray[np.float64], y: npt.NDArray[np.float64], mode: str
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`pairs` and a weight per pair: ``uniform`` 1; ``query`` 1 / the question's pair
    count (each question weighs the same); ``lambda`` the nDCG change of swapping the two at
    their places in ``find()``'s order (``x``'s rows: LambdaRank's weight, read once at the
    base order), so the pairs that move the first slots count most."""
    hi, lo = np.nonzero(y[:, None] > y[None, :])
    d = x[hi] - x[lo]
    if mode == "uniform":
        w = np.ones(len(d))
    elif mode == "query":
        w = np.full(len(d), 1.0 / max(len(d), 1))
    elif mode == "lambda":
        disc = 1.0 / np.log2(2.0 + np.arange(len(y)))
        w = np.abs((2.0 ** y[hi] - 2.0 ** y[lo]) * (disc[hi] - disc[lo]))
    else:
        raise ValueError(f"unknown pair weighting {mode!r}")
    return d, w


def fit_pairwise(
    d: npt.NDArray[np.float64],
    l2: float,
    steps: int = 300,
    weights: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """Weights ``w`` minimising the (``weights``-) weighted mean of ``log(1 + exp(-d @ w))``
    plus ``l2 |w|^2`` (Newton's method; the loss is convex)."""
    s = np.ones(len(d)) if weights is None else np.asarray(weights, dtype=np.float64)
    s = s / s.sum()
    w = np.zeros(d.shape[1])
    for _ in range(steps):
        z = d @ w
        p = 1.0 / (1.0 + np.exp(np.clip(z, -50, 50)))
        g = -(d * (s * p)[:, None]).sum(0) + 2 * l2 * w
        h = (d * (s * p * (1 - p))[:, None]).T @ d + 2 * l2 * np.eye(len(w))
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def ndcg(order_units: list[frozenset[str]], rel: dict[str, int]) -> float:
    return float(bt.ndcg_at(order_units, rel, 10))


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "--dump":
        out = Path(args[1])
        install_dump()
        bn.main(args[2:])
        with out.open("wb") as fh:
            pickle.dump(DUMP, fh)
        print(f"dumped {len(DUMP)} questions to {out}")
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", type=Path, nargs="+", required=True)
    ap.add_argument("--pool-name", nargs="+", help="one name per --fit file (its pool)")
    ap.add_argument("--rows-json", type=Path, nargs="*", default=[])
    ap.add_argument("--l2", type=float, default=0.01)
    ap.add_argument("--train-on", choices=("rank", "block"), default="rank")
    ap.add_argument("--weighting", choices=("uniform", "query", "lambda"), default="uniform")
    ap.add_argument("--features", default=",".join(FEATURES))
    ap.add_argument(
        "--apply",
        type=Path,
        nargs="*",
        default=[],
        help="files scored by the model fitted on every --fit set (not left out)",
    )
    a = ap.parse_args(args)
    fit(a)


def fit(a: argparse.Namespace) -> None:
    judge = bn.Judge()
    counter = bn.CachedCounter(default_token_counter())
    feats = [FEATURES.index(f) for f in a.features.split(",")]
    names = a.pool_name or [f.stem for f in a.fit]
    recs: list[dict[str, Any]] = []
    for f, pool in zip(a.fit, names, strict=True):
        for r in pickle.loads(f.read_bytes()):
            r["pool"] = pool
            recs.append(r)
    applied: list[dict[str, Any]] = []
    for f in a.apply:
        for r in pickle.loads(f.read_bytes()):
            r["pool"] = f.stem
            applied.append(r)
    for r in recs + applied:
        r["xr"] = r["rank_x"][:, feats]
        r["xb"] = r["block_x"][:, feats]
        # (what the pairs are read from: the ranked call's slots, or the block call's)
        r["y"] = labels(r, a.train_on, judge)
        r["xt"] = r["xr"] if a.train_on == "rank" else r["xb"]
    sets = sorted({r["set"] for r in recs})
    # standardise on every training row (each fit uses the same scale: a fixed transform)
    allx = np.concatenate([r["xt"] for r in recs])
    mu, sd = allx.mean(0), allx.std(0) + 1e-9

    def learn(group: Sequence[dict[str, Any]]) -> npt.NDArray[np.float64]:
        got = [pair_weights((r["xt"] - mu) / sd, r["y"], a.weighting) for r in group]
        d = np.concatenate([g[0] for g in got])
        return fit_pairwise(d, a.l2, weights=np.concatenate([g[1] for g in got]))

    def evaluate(r: dict[str, Any], w: npt.NDArray[np.float64] | None) -> tuple[float, float, int]:
        answers = [t for t, _ in r["answers"]]
        rel = {f"a{i}": g for i, (_, g) in enumerate(r["answers"])}
        order = np.arange(len(r["rank"]))
        if w is not None:
            order = np.argsort(-(((r["xr"] - mu) / sd) @ w), kind="stable")
        units = [judge.units(bn.delivered(r["rank"][i]), answers) for i in order[:10]]
        nd = ndcg(units, rel)
        border = np.arange(len(r["block"]))
        if w is not None:
            border = np.argsort(-(((r["xb"] - mu) / sd) @ w), kind="stable")
        slots = [r["block"][i] for i in border[:10]]
        ctx = assemble_context(slots, max_tokens=BLOCK, token_counter=counter, query=r["text"])
        pieces = bn.block_pieces(slots, ctx)
        c = bn.answer_in_context(str(ctx.text), answers, judge, pieces, r["pages"])
        # the block call's first answer slot after the reorder (1-based; 0: none of the 20)
        hit = [i for i, j in enumerate(border) if judge.units(bn.delivered(r["block"][j]), answers)]
        return nd, c, (hit[0] + 1 if hit else 0)

    for r in recs:
        r["base"] = evaluate(r, None)
    weights: dict[str, npt.NDArray[np.float64]] = {}
    for s in sets:
        w = learn([r for r in recs if r["set"] != s])
        weights[s] = w
        for r in recs:
            if r["set"] == s:
                r["ltr"] = evaluate(r, w)
    w_all = learn(recs)
    print("features:", a.features, f"l2 {a.l2}, pairs {a.weighting}, on {a.train_on}, pool {POOL}")
    print(
        "weights on all sets (standardised):",
        " ".join(f"{FEATURES[f]}={v:+.3f}" for f, v in zip(feats, w_all, strict=True)),
    )
    print("mu", np.round(mu, 4).tolist())
    print("sd", np.round(sd, 4).tolist())
    spread = np.std(np.stack(list(weights.values())), 0)
    print("LOSO weights' std:", " ".join(f"{v:.3f}" for v in spread))
    rows = _rows_json(a.rows_json)
    report(recs, names, sets, rows)
    for r in applied:
        r["base"] = evaluate(r, None)
        r["ltr"] = evaluate(r, w_all)
    if applied:
        print("\napplied (weights fitted on every --fit set):")
        report(
            applied, sorted({r["pool"] for r in applied}), sorted({r["set"] for r in applied}), rows
        )


def _rows_json(files: Sequence[Path]) -> dict[tuple[str, str, str], float]:
    """(set, row, metric) -> qid -> value of ``bench_natural`` JSONs (dev half)."""
    import json

    out: dict[Any, Any] = {}
    for f in files:
        for d in json.loads(f.read_text())["rows"]:
            if d["half"] != "dev" or "/" in d["dataset"]:
                continue
            for m in ("ndcg@10", "ctx@1000"):
                out[(d["dataset"], d["row"], m)] = d["per_question"].get(m, {})
    return out


_BINS = {"1-4": (1, 4), "5-10": (5, 10), "11-20": (11, 20), "none": (0, 0)}


def iv(d: Sequence[float]) -> str:
    """The paired mean and its 95 % bootstrap interval (``bench_natural.mean_interval``)."""
    m, lo, hi = bn.mean_interval(np.asarray(d, dtype=np.float64))
    return f"{m:+.4f} ({lo:+.4f}..{hi:+.4f})"


def report(
    recs: Sequence[dict[str, Any]],
    pools: Sequence[str],
    sets: Sequence[str],
    rows: dict[Any, Any],
) -> None:
    def ref(r: dict[str, Any], row: str, m: int) -> float | None:
        got = rows.get((r["set"], row, ("ndcg@10", "ctx@1000")[m]))
        if got is None:
            return None
        v = got.get(r["qid"])
        return None if v is None else float(v)

    print(f"\n{'set':<18} {'n':>4} | nDCG@10 find pool ltr hyb | ctx@1000 find pool ltr hyb")
    for s in sets:
        g = [r for r in recs if r["set"] == s]
        line = f"{s:<18} {len(g):>4} |"
        for m in (0, 1):
            vals = [ref(r, "find", m) for r in g]
            hyb = [ref(r, "flat-hybrid", m) for r in g]
            f_ = f"{np.mean(vals):.3f}" if None not in vals else "  -  "
            h_ = f"{np.mean(hyb):.3f}" if None not in hyb else "  -  "
            base = np.mean([r["base"][m] for r in g])
            ltr = np.mean([r["ltr"][m] for r in g])
            line += f" {f_} {base:.3f} {ltr:.3f} {h_} |"
        print(line)
    groups = [(f"pool {p}", [r for r in recs if r["pool"] == p]) for p in pools]
    kinds = sorted({r["kind"] for r in recs})
    if len(kinds) > 1:
        groups += [(f"kind {k}", [r for r in recs if r["kind"] == k]) for k in kinds]
    for label, g in groups:
        print(f"\n{label} ({len(g)} questions, {len({r['set'] for r in g})} sets):")
        for m, name in ((0, "nDCG@10"), (1, "ctx@1000")):
            base = [r["base"][m] for r in g]
            ltr = [r["ltr"][m] for r in g]
            d = [b - a for a, b in zip(base, ltr, strict=True)]
            won = sum(x > 1e-9 for x in d)
            lost = sum(x < -1e-9 for x in d)
            print(
                f"  {name}: pool {np.mean(base):.4f} ltr {np.mean(ltr):.4f} "
                f"ltr-pool {iv(d)} won/lost {won}/{lost}"
            )
            for row in ("find", "flat-hybrid"):
                vals = [ref(r, row, m) for r in g]
                if None in vals:
                    continue
                d2 = [b - float(a) for a, b in zip(vals, ltr, strict=True)]  # type: ignore[arg-type]
                print(
                    f"    {row}: {np.mean(vals):.4f}  ltr-{row} {iv(d2)}"
                    f"  pool-{row} {iv([b - float(a) for a, b in zip(vals, base, strict=True)])}"  # type: ignore[arg-type]
                )

        behind = [
            r
            for r in g
            if (h := ref(r, "flat-hybrid", 1)) is not None
            and (f := ref(r, "find", 1)) is not None
            and h > f
        ]
        if behind:
            print(f"  ctx@1000 behind flat hybrid: {len(behind)} questions; the block call's")
            print("  first answer slot (1-based; none: not in the 20), pool and ltr order:")
            for lab, k in (("pool", "base"), ("ltr", "ltr")):
                slots = [r[k][2] for r in behind]
                hist = {b: sum(1 for x in slots if lo <= x <= hi) for b, (lo, hi) in _BINS.items()}
                print(f"    {lab}: {hist}; ctx {np.mean([r[k][1] for r in behind]):.3f}")


if __name__ == "__main__":
    main()
