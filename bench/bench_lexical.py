"""Benchmark: treehop's incremental BM25 index (``treehop.lexical``) against ``bm25s``.

What it measures, and why:

1. **Scale** (100k short texts synthesised from Cranfield sentences: each text is one or two
   random sentences of the collection, seed 0): build time, memory, query latency for a global
   top-10 and for a top-10 restricted to 50 rows (the per-directory search of the hierarchical
   retriever), and the cost of an update. ``bm25s`` has no incremental add/delete, so an update
   costs it a full re-index; its ``weight_mask`` restriction still scores and ranks the whole
   corpus and pads the answer with zero-score rows from outside the mask (counted below).
2. **Agreement**: on identical tokens both compute Lucene's BM25; ``bm25s`` leaves out the
   constant factor (k1 + 1), so the score ratio must be exactly k1 + 1 everywhere.
3. **Quality** on Cranfield (1,400 documents, title + text, 225 queries): nDCG@10 and
   recall@100 with ``ir_measures``, under two readings of the judgements (see ``QRELS``).
4. **Hybrid** (``--hybrid``; embeds the collection with the offline MiniLM model, about 5 minutes
   on two CPU cores the first time, then cached): nDCG@10 of
   ``dense_weight * dense + (1 - dense_weight) * normalised BM25`` for each normalisation, over
   all documents and over a 50-document candidate set (a narrow scope).

Run from the repository root::

    PYTHONPATH=retrieval python bench/bench_lexical.py [--docs 100000] [--hybrid]
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treehop.lexical import LexicalIndex, normalize_lexical
from treehop.text_tokenize import porter_stem, tokenize

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "cranfield"
K1, B = 1.2, 0.75


# ------------------------------------------------------------------------------ data


def parse_records(path: Path) -> list[dict[str, str]]:
    """Records of ``cran.all.1400`` / ``cran.qry``: ``.I`` id, ``.T`` title, ``.W`` text."""
    records: list[dict[str, str]] = []
    field = None
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith(".I "):
            records.append({"id": line.split()[1], "T": "", "W": ""})
            field = None
            continue
        m = re.match(r"^\.([TABW])\s*$", line)
        if m:
            field = m.group(1)
        elif field in ("T", "W"):
            records[-1][field] += line + "\n"
    return records


def load_cranfield() -> tuple[list[str], list[str], dict[str, list[tuple[str, str, int]]]]:
    docs = parse_records(DATA / "cran.all.1400")
    queries = parse_records(DATA / "cran.qry")
    texts = [d["T"] + " " + d["W"] for d in docs]
    qtexts = [q["W"] for q in queries]  # queries are numbered 1..225 in file order
    raw = [line.split() for line in (DATA / "cranqrel").read_text().splitlines() if line.strip()]
    trec = [
        line.split()
        for line in (DATA / "QRelsCorrectedforTRECeval").read_text().splitlines()
        if line.strip()
    ]
    qrels = {
        # code 1 (complete answer) .. 4 (minimum interest) -> gain 4 .. 1, marginal (-1) -> 1.
        # This reading reproduces the reference points of shared/data/README.md (MiniLM dense
        # 0.435 nDCG@10 here and there).
        "graded": [(q, d, 5 - int(c) if int(c) > 0 else 1) for q, d, c in raw],
        # QRelsCorrectedforTRECeval as shipped (it maps marginal to 5, the highest gain).
        "trec-file": [(q, d, int(r)) for q, _, d, r in trec],
    }
    return texts, qtexts, qrels


def synthesise(texts: Sequence[str], n: int, seed: int = 0) -> list[str]:
    """``n`` short texts, each one or two random sentences of the Cranfield abstracts."""
    sentences = [
        s.strip()
        for t in texts
        for s in re.split(r"\s\.\s", " ".join(t.split()))
        if len(s.split()) >= 4
    ]
    rng = np.random.default_rng(seed)
    firsts = rng.integers(0, len(sentences), n)
    seconds = rng.integers(0, len(sentences), n)
    two = rng.random(n) < 0.5
    return [
        sentences[a] + (" . " + sentences[b] if t else "")
        for a, b, t in zip(firsts.tolist(), seconds.tolist(), two.tolist(), strict=True)
    ]


# ------------------------------------------------------------------------------ helpers


# Timings are CPU time of this process (``--clock wall`` for wall-clock): everything measured
# runs on one thread, and on a shared machine CPU time is what an idle machine's wall time
# would be, while wall time also counts the other processes' turns.
CLOCK: Callable[[], float] = time.process_time


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = CLOCK()
    out = fn()
    return out, CLOCK() - t0


def traced_mib(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Result of ``fn`` and the memory it still holds afterwards (tracemalloc, numpy included)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    out = fn()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return out, (after - before) / 2**20


def per_query_ms(fn: Callable[[str], Any], queries: Sequence[str]) -> float:
    fn(queries[0])  # warm-up (lazy merges, caches)
    times = []
    for q in queries:
        t0 = CLOCK()
        fn(q)
        times.append(CLOCK() - t0)
    return 1000 * statistics.median(times)


def bm25s_tokens(texts: Sequence[str], stem: bool = False) -> list[list[str]]:
    import bm25s

    stemmer = (lambda ws: [porter_stem(w) for w in ws]) if stem else None
    out: list[list[str]] = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    return out


def bm25s_index(tokens: list[list[str]]) -> Any:
    import bm25s

    index = bm25s.BM25(k1=K1, b=B, method="lucene")
    index.index(tokens, show_progress=False)
    return index


def bm25s_top(
    index: Any, tokens: list[str], k: int, mask: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    docs, scores = index.retrieve([tokens], k=k, show_progress=False, n_threads=0, weight_mask=mask)
    return docs[0], scores[0]


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(c) for c in header]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    print(f"\n## {title}\n")
    for j, r in enumerate(cells):
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if j == 0:
            print("  ".join("-" * w for w in widths))


# ------------------------------------------------------------------------------ sections


def bench_scale(corpus_texts: list[str], queries: list[str], n_docs: int) -> None:
    texts = synthesise(corpus_texts, n_docs)
    rng = np.random.default_rng(1)
    subsets = [np.sort(rng.choice(n_docs, 50, replace=False)) for _ in queries]
    sub_iter = iter(subsets * 2)
    n_tokens = sum(len(t.split()) for t in texts)
    print(f"\ncorpus: {n_docs} texts, {n_tokens / n_docs:.1f} words each on average")

    # Tokenisation (each library's own tokenizer) and indexing, timed apart.
    ours_tokens, t_tok_ours = timed(lambda: [tokenize(t) for t in texts])
    bm_tokens, t_tok_bm = timed(lambda: bm25s_tokens(texts))
    ours = LexicalIndex(k1=K1, b=B)
    _, t_idx_ours = timed(lambda: ours.upsert_tokens(np.arange(n_docs), ours_tokens))
    bm, t_idx_bm = timed(lambda: bm25s_index(bm_tokens))
    holder: list[Any] = []

    def build_ours() -> None:
        holder.append(LexicalIndex(k1=K1, b=B))
        holder[-1].upsert_tokens(np.arange(n_docs), ours_tokens)
        holder[-1].score("wing")  # builds the term-sorted permutation, as any query does

    _, mem_ours = traced_mib(build_ours)
    holder.clear()
    _, mem_bm = traced_mib(lambda: holder.append(bm25s_index(bm_tokens)))
    holder.clear()
    ours.score("warm up")

    bm_q = bm25s_tokens(queries)
    qi = {q: i for i, q in enumerate(queries)}

    glob_ours = per_query_ms(lambda q: ours.top(q, 10), queries)
    glob_bm = per_query_ms(lambda q: bm25s_top(bm, bm_q[qi[q]], 10), queries)
    glob_bm_tok = per_query_ms(lambda q: bm25s_top(bm, bm25s_tokens([q])[0], 10), queries)

    sub_ours = per_query_ms(lambda q: ours.top(q, 10, rows=next(sub_iter)), queries)
    padded = 0

    def bm_sub(q: str) -> None:
        nonlocal padded
        mask = np.zeros(n_docs, dtype=np.float32)
        rows = next(sub_iter)
        mask[rows] = 1.0
        docs, scores = bm25s_top(bm, bm_q[qi[q]], 10, mask)
        padded += int(np.count_nonzero((scores <= 0) | ~np.isin(docs, rows)))

    sub_iter = iter(subsets * 2)
    sub_bm = per_query_ms(bm_sub, queries)

    # Updates: replace 100 documents and delete 100. bm25s can only rebuild.
    new_texts = synthesise(corpus_texts, 100, seed=7)
    changed = rng.choice(n_docs, 200, replace=False)

    def update_ours() -> None:
        ours.upsert(changed[:100], new_texts)
        ours.delete(changed[100:])

    _, t_upd_ours = timed(update_ours)
    first_after = per_query_ms(lambda q: ours.top(q, 10), queries[:1])
    after_ours = per_query_ms(lambda q: ours.top(q, 10), queries)

    def update_bm() -> Any:
        kept = np.setdiff1d(np.arange(n_docs), changed[100:])
        toks = list(bm_tokens)
        for r, t in zip(changed[:100].tolist(), bm25s_tokens(new_texts), strict=True):
            toks[r] = t
        return bm25s_index([toks[i] for i in kept.tolist()])

    _, t_upd_bm = timed(update_bm)

    with tempfile.TemporaryDirectory() as tmp:
        _, t_save = timed(lambda: ours.save(tmp))
        size = sum(p.stat().st_size for p in Path(tmp).iterdir()) / 2**20
        _, t_load = timed(lambda: LexicalIndex.load(tmp))

    table(
        f"Scale: {n_docs} short texts (median per query over {len(queries)} Cranfield queries)",
        ["", "treehop.lexical", "bm25s 0.3.16"],
        [
            ["tokenise corpus (s)", f"{t_tok_ours:.2f}", f"{t_tok_bm:.2f}"],
            ["index tokens (s)", f"{t_idx_ours:.2f}", f"{t_idx_bm:.2f}"],
            ["index memory (MiB, tracemalloc)", f"{mem_ours:.1f}", f"{mem_bm:.1f}"],
            ["global top-10, tokens given (ms)", "-", f"{glob_bm:.2f}"],
            ["global top-10 incl. tokenising (ms)", f"{glob_ours:.2f}", f"{glob_bm_tok:.2f}"],
            ["top-10 of 50 rows (ms)", f"{sub_ours:.3f}", f"{sub_bm:.2f} (weight_mask)"],
            ["  padding: zero-score or outside rows (of 2250)", "0", str(padded)],
            [
                "replace 100 + delete 100 docs (s)",
                f"{t_upd_ours:.3f}",
                f"{t_upd_bm:.2f} (re-index)",
            ],
            ["first global query after update (ms)", f"{first_after:.2f}", "-"],
            ["global top-10 after update (ms)", f"{after_ours:.2f}", "-"],
            ["save / load (s)", f"{t_save:.2f} / {t_load:.2f}", "-"],
            ["on disk (MiB)", f"{size:.1f}", "-"],
        ],
    )


def bench_agreement(texts: list[str], queries: list[str]) -> None:
    tokens = [tokenize(t) for t in texts]
    ours = LexicalIndex(k1=K1, b=B)
    ours.upsert_tokens(np.arange(len(texts)), tokens)
    bm = bm25s_index(tokens)
    ratios = []
    same_top10 = 0
    for q in queries:
        qt = tokenize(q)
        a = ours.score_tokens(qt, size=len(texts)).astype(np.float64)
        b = np.asarray(bm.get_scores(qt), dtype=np.float64)
        nz = b > 0
        assert np.array_equal(a > 0, nz)
        ratios.extend((a[nz] / b[nz]).tolist())
        same_top10 += int(
            set(ours.top(q, 10)[0].tolist()) == set(np.argsort(-b, kind="stable")[:10].tolist())
        )
    print(
        f"\nagreement on identical tokens (Cranfield, {len(queries)} queries): score ratio "
        f"treehop/bm25s in [{min(ratios):.6f}, {max(ratios):.6f}] (k1 + 1 = {K1 + 1}); "
        f"same top-10 set for {same_top10}/{len(queries)} queries"
    )


def evaluate(
    runs: dict[str, list[tuple[str, str, float]]], qrels: dict[str, Any]
) -> list[list[str]]:
    import ir_measures
    from ir_measures import R, nDCG

    rows = []
    for name, run in runs.items():
        scored = [ir_measures.ScoredDoc(q, d, s) for q, d, s in run]
        cells = [name]
        for qr in qrels.values():
            qrel = [ir_measures.Qrel(q, d, r) for q, d, r in qr]
            agg = ir_measures.calc_aggregate([nDCG @ 10, R @ 100], qrel, scored)
            cells.append(f"{agg[nDCG @ 10]:.3f} / {agg[R @ 100]:.3f}")
        rows.append(cells)
    return rows


def bench_quality(texts: list[str], queries: list[str], qrels: dict[str, Any]) -> None:
    runs: dict[str, list[tuple[str, str, float]]] = {}
    ours = LexicalIndex(k1=K1, b=B)
    ours.upsert(np.arange(len(texts)), texts)
    run = []
    for i, q in enumerate(queries):
        rows, scores = ours.top(q, 100)
        run += [(str(i + 1), str(r + 1), float(s)) for r, s in zip(rows, scores, strict=True)]
    runs["treehop.lexical (Porter, stopwords)"] = run
    for stem in (False, True):
        bm = bm25s_index(bm25s_tokens(texts, stem))
        docs, scores = bm.retrieve(
            bm25s_tokens(queries, stem), k=100, show_progress=False, n_threads=0
        )
        runs[f"bm25s tokenizer{' + Porter' if stem else ''}"] = [
            (str(i + 1), str(int(docs[i, j]) + 1), float(scores[i, j]))
            for i in range(len(queries))
            for j in range(100)
            if scores[i, j] > 0
        ]
    table(
        "Cranfield BM25 (k1=1.2, b=0.75), nDCG@10 / recall@100",
        ["", *[f"qrels: {k}" for k in qrels]],
        evaluate(runs, qrels),
    )


def bench_hybrid(texts: list[str], queries: list[str], qrels: dict[str, Any], cache: Path) -> None:
    from treehop.embedders.local_minilm import MODEL_NAME, default_embedder

    path = cache / f"cranfield-{MODEL_NAME}.npz"
    if path.exists():
        data = np.load(path)
        dv, qv = data["docs"], data["queries"]
    else:
        emb = default_embedder()
        print(f"\nembedding {len(texts)} documents with {MODEL_NAME} (cached at {path}) ...")
        dv = emb.embed(texts)
        qv = np.stack([emb.embed_query(q) for q in queries])
        cache.mkdir(parents=True, exist_ok=True)
        np.savez(path, docs=dv, queries=qv)
    dense = qv @ dv.T
    ours = LexicalIndex(k1=K1, b=B)
    ours.upsert(np.arange(len(texts)), texts)
    lex = np.stack([ours.score(q, size=len(texts)) for q in queries])

    def zscore(lx: np.ndarray, d: np.ndarray) -> np.ndarray:
        z = (lx - lx.mean()) / (lx.std() + 1e-9)
        return z * d.std() + d.mean()

    norms: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
        "max": lambda lx, d: normalize_lexical(lx, "max"),
        "minmax": lambda lx, d: normalize_lexical(lx, "minmax"),
        "z-score onto dense": zscore,
    }
    weights = [0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    graded = {"graded": qrels["graded"]}
    for cand_size in (None, 50):
        rows = []
        for name, norm in norms.items():
            cells = [name]
            for w in weights:
                run = []
                for i in range(len(queries)):
                    cand = (
                        np.arange(len(texts))
                        if cand_size is None
                        else np.argsort(-dense[i], kind="stable")[:cand_size]
                    )
                    d = dense[i, cand]
                    s = w * d + (1 - w) * norm(lex[i, cand], d) if w < 1 else d
                    order = np.argsort(-s, kind="stable")[:100]
                    run += [(str(i + 1), str(int(cand[j]) + 1), float(s[j])) for j in order]
                cells.append(evaluate({"": run}, graded)[0][1].split(" / ")[0])
            rows.append(cells)
        where = "all 1400 documents" if cand_size is None else "the dense top-50 (a narrow scope)"
        table(
            f"Hybrid nDCG@10 (graded qrels), candidates: {where}",
            ["normalisation \\ dense_weight", *[str(w) for w in weights]],
            rows,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=100_000, help="size of the scale corpus")
    parser.add_argument("--hybrid", action="store_true", help="also measure hybrid weights")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "treehop-bench",
        help="where --hybrid caches the MiniLM vectors",
    )
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu", help="what to time")
    args = parser.parse_args()
    global CLOCK
    CLOCK = time.process_time if args.clock == "cpu" else time.perf_counter
    print(f"timings: {args.clock} time")
    texts, queries, qrels = load_cranfield()
    bench_scale(texts, queries, args.docs)
    bench_agreement(texts, queries)
    bench_quality(texts, queries, qrels)
    if args.hybrid:
        bench_hybrid(texts, queries, qrels, args.cache)


if __name__ == "__main__":
    main()
