"""A documentation set joined into ONE file, topical queries: what does a find deliver when the
index holds one long document (a book, a manual in one file)?

Each page of the pytest (or Flask) docs becomes a ``# <title>`` section of one markdown text
(titles made unique), ingested as one document; the set's heading / first-sentence /
anchor-text queries (``bench/data/<set>_doc_queries.json``) ask for a page. What a result
delivers is mapped back to its page by the top heading of the chunk it shows (its
``heading_path``), and nDCG@10 / R@10 are scored over pages, each counted at its first rank.
Rows, in one run, same embedder and chunks:

- ``flat hybrid``: the store's own search over the file's chunks at the default blend
  (``EmbeddedStore.search``, leaves only), what a flat vector store returns;
- ``find``: ``find(q, limit=10)`` with the defaults (``few_document_passages`` on);
- ``find, few docs off``: ``few_document_passages=False`` (one slot per document: a
  topical query's single result).

    OPENBLAS_NUM_THREADS=1 python bench/bench_one_file.py [--set pytest|flask]
        [--half dev|test|all]

Why: before ``few_document_passages`` a topical query over one long file got one result whose
slot showed one chunk, every other match folded behind it (bench/README.md, "Stop 51").
These queries come from the pages' own headings, first sentences and link texts, so they
flatter lexical matching; they are the queries that take document slots (questions take
passage slots either way).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_tree as bt
import datasets as ds

ds.ensure_treehop_importable()

from treehop import RetrievalConfig, Treehop  # noqa: E402
from treehop.ingest.records import add_records  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402

SETS: dict[str, tuple[Callable[[], tuple[Path, list[ds.DocPage]]], Path]] = {
    "pytest": (ds.materialise_pytest_docs, ds.PYTEST_QUERIES_FILE),
    "flask": (ds.materialise_flask_docs, ds.FLASK_QUERIES_FILE),
}
BASE = "viking://resources/book"


def one_file(pages: Sequence[ds.DocPage]) -> tuple[str, dict[str, str]]:
    """The pages as ``# <title>`` sections of one text (a page's own ``#`` heading is
    replaced; deeper headings kept), and each unique title's page."""
    parts: list[str] = []
    page_of: dict[str, str] = {}
    for p in pages:
        title = p.title.strip() or p.relpath
        unique, n = title, 2
        while unique in page_of:
            unique, n = f"{title} ({n})", n + 1
        page_of[unique] = p.relpath
        body = p.text
        if body.startswith("# "):
            body = body.split("\n", 1)[1] if "\n" in body else ""
        parts.append(f"# {unique}\n\n{body.strip()}\n")
    return "\n".join(parts), page_of


def _page(meta: dict[str, Any], page_of: dict[str, str]) -> str:
    path = meta.get("heading_path")
    if isinstance(path, list) and path:
        return page_of.get(str(path[0]), "?")
    return "?"


def run(name: str, half: str) -> list[dict[str, Any]]:
    materialise, qfile = SETS[name]
    _, pages = materialise()
    text, page_of = one_file(pages)
    queries = ds.load_query_file(qfile)
    if half != "all":
        dev, test = bt.split_halves([q["qid"] for q in queries])
        keep = set(dev if half == "dev" else test)
        queries = [q for q in queries if q["qid"] in keep]
    rows: dict[str, list[tuple[float, float, float, int]]] = {}
    with tempfile.TemporaryDirectory() as d:
        embedder = ds.default_embedder()
        c = Treehop(Path(d) / "idx", embedder=embedder, tagger=None)
        try:
            add_records(c, [(text, {"source": "book.md"})], base_uri=BASE)
            leaves = len(c.store)
            dense_weight = RetrievalConfig().dense_weight
            for q in queries:
                rel = {q["relevant"]: 1.0}
                t0 = time.perf_counter()
                vec = embedder.embed_query(q["query"])
                hits = c.store.search(
                    vec,
                    Scope(subtrees=(BASE,), leaves_only=True),
                    10,
                    query_text=q["query"],
                    dense_weight=dense_weight,
                )
                ms = 1000 * (time.perf_counter() - t0)
                flat = [{_page(h.node.metadata, page_of)} for h in hits]
                got = {"flat hybrid": (flat, ms, sum(len(h.node.content) for h in hits))}
                for label, fill in (("find", True), ("find, few docs off", False)):
                    c.config.few_document_passages = fill
                    t0 = time.perf_counter()
                    res = c.find(q["query"], target_uri=BASE, limit=10).resources
                    ms = 1000 * (time.perf_counter() - t0)
                    ranked = [{_page(m.metadata, page_of)} for m in res]
                    got[label] = (ranked, ms, sum(len(m.slot_text) for m in res))
                for label, (ranked, ms, chars) in got.items():
                    rows.setdefault(label, []).append(
                        (
                            bt.ndcg_at(ranked, rel, 10),
                            bt.recall_at(ranked, rel, 10),
                            ms,
                            chars,
                        )
                    )
        finally:
            c.close()
    out = []
    for label, vals in rows.items():
        out.append(
            {
                "set": name,
                "half": half,
                "row": label,
                "n": len(vals),
                "leaves": leaves,
                "ndcg@10": statistics.fmean(v[0] for v in vals),
                "R@10": statistics.fmean(v[1] for v in vals),
                "p50_ms": statistics.median(v[2] for v in vals),
                "chars@10": statistics.fmean(v[3] for v in vals),
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="pytest,flask")
    ap.add_argument("--half", default="all", choices=("dev", "test", "all"))
    args = ap.parse_args()
    print("| set | half | row | n | nDCG@10 | R@10 | chars@10 | p50 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.set.split(","):
        for r in run(name, args.half):
            print(
                f"| {r['set']} ({r['leaves']} nodes) | {r['half']} | {r['row']} | {r['n']} | "
                f"{r['ndcg@10']:.3f} | {r['R@10']:.3f} | {r['chars@10']:.0f} | {r['p50_ms']:.1f} |"
            )


if __name__ == "__main__":
    main()
