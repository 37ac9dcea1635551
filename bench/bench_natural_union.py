"""Natural questions over one tree of every set at once: does the tree's lead hold as the
corpus grows? (issue 33)

    python bench/bench_natural_union.py --dev
    python bench/bench_natural_union.py --test --sets django-faq,lsof-faq,r-faq

``bench_natural.py`` searches each set inside its own subtree, one small corpus at a time
(9 to 1,400 files). A user indexes all of their documentation in one tree and asks without
naming the part. Here every set named is added to one client under
``viking://resources/<set>`` and each question is asked over the whole tree
(``target_uri="viking://resources"``), so each set's pages sit beside every other set's:
~10,000 leaves of FAQs, manuals and abstracts. The flat rows rank the same leaves of the
whole tree (``bench_natural.Flat``); ``find()`` must find the right subtree on its own
(the global step picks the starting directories). Judged exactly as ``bench_natural.py``
judges (text overlap, nDCG@10 over the delivered texts, answer-in-context at each budget),
per set and pooled, beside the same rows of the per-set run when ``--against`` names its
JSON, then ``bench_natural.print_checks``' goal lines (find() against each set's best flat
row, paired bootstrap intervals, pooled).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from collections.abc import Mapping, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402
from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.context_assembly import default_token_counter  # noqa: E402

ROOT = "viking://resources"
METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def run(
    names: Sequence[str],
    half: str,
    rows: Sequence[bn.Row],
    budgets: Sequence[int],
    config: Mapping[str, Any] | None = None,
) -> list[bn.TableRow]:
    cached = bn.bench_embedder("")
    embedder = bt.MemoEmbedder(cached)
    th = Treehop(None, embedder=embedder, config=RetrievalConfig(**dict(config or {})))
    sets: list[ns.NaturalSet] = []
    try:
        t0 = time.perf_counter()
        for name in names:
            nset = ns.load_natural_set(name, cached)
            th.add_resource(str(nset.root), target_uri=f"{ROOT}/{name}")
            sets.append(nset)
        flat = bn.Flat(th)
        bn._log(
            f"union of {len(sets)} sets: {len(flat.uris)} leaves indexed in "
            f"{time.perf_counter() - t0:.0f}s"
        )
        runner = bn.Runner(th, embedder, flat, ROOT)
        files = {f"{s.name}/{rel}": text for s in sets for rel, text in s.files.items()}
        methods = {r.method for r in rows}
        if "langchain" in methods:
            runner.langchain = bn.LangChainRow(files, cached)
            bn._log(f"LangChain over the union: {runner.langchain.n_chunks} chunks")
        if "llamaindex" in methods:
            runner.llamaindex = bn.LlamaIndexRow(files, embedder)
            bn._log(f"LlamaIndex over the union: {runner.llamaindex.n_chunks} nodes")
        counter = bn.CachedCounter(default_token_counter())
        judge = bn.Judge()
        out: list[bn.TableRow] = []
        for nset in sets:
            dev, test = bt.sampled_halves(nset.questions, 0)
            qs = dev if half == "dev" else test
            embedder.prepare([q.text for q in qs])
            t1 = time.perf_counter()
            runs = bn.run_rows(runner, rows, qs, budgets, counter)
            bn._log(f"{nset.name}/{half}: {len(qs)} queries in {time.perf_counter() - t1:.0f}s")
            out += bn.table_rows(runs, nset.name, half, qs, judge, budgets, nset.answers_are_pages)
        return out
    finally:
        th.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--sets",
        default=",".join(ns.NATURAL_SETS + ns.HELD_OUT_SETS),
        help="comma-separated set names (default: the nine and the untuned held-out sets)",
    )
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dev", action="store_true")
    g.add_argument("--test", action="store_true")
    ap.add_argument("--rows", default="flat-dense,flat-hybrid,find")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--config", default="", help="RetrievalConfig settings, as bench_natural's")
    ap.add_argument(
        "--against",
        type=Path,
        nargs="*",
        default=[],
        help="bench_natural.py --json files of the same sets, half and rows searched per set",
    )
    a = ap.parse_args()
    names = a.sets.split(",")
    half = "dev" if a.dev else "test"
    rows = bn.parse_rows(a.rows)
    budgets = [500, 1000, 2000]
    table = run(names, half, rows, budgets, bn.parse_config(a.config))
    got = [t.as_json() for t in table]
    if a.json:
        a.json.write_text(
            json.dumps({"argv": [half, a.sets, a.rows, a.config], "rows": got}) + "\n"
        )
    per_set: dict[tuple[str, str], Mapping[str, Any]] = {}
    for f in a.against:
        for r in json.loads(f.read_text())["rows"]:
            if r["half"] == half and r["dataset"] in names:
                per_set[(r["dataset"], r["row"])] = r
    print(
        "| set | row | n | " + " | ".join(METRICS) + " | per-set run: " + " | ".join(METRICS) + " |"
    )
    for r in got:
        own = per_set.get((r["dataset"], r["row"]))
        tail = (
            " | ".join(f"{own[m]:.3f}" for m in METRICS)
            if own
            else " | ".join("-" for _ in METRICS)
        )
        print(
            f"| {r['dataset']} | {r['row']} | {r['n']} | "
            + " | ".join(f"{r[m]:.3f}" for m in METRICS)
            + f" | {tail} |"
        )
    here, there = bn.pooled_rows(got), bn.pooled_rows(list(per_set.values()))
    for row in rows:
        p = here[(row.key, half)]
        line = f"| pooled | {row.key} | {p['n']:.0f} | " + " | ".join(
            f"{p[m]:.4f}" for m in METRICS
        )
        q = there.get((row.key, half))
        if q is not None:
            line += " | " + " | ".join(f"{q[m]:.4f}" for m in METRICS) + " |"
        print(line)
    bn.print_checks(table)


if __name__ == "__main__":
    main()
