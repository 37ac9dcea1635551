"""Fewer documents than the limit, a topical query: how long a ``find`` takes, and what it
returns (stop 51's open item, worked on by helper fewdocs).

The bench cache's markdown pages (pytest and Flask docs, then the natural sets' pages, each
set once: no HTML / label variants) joined into ONE markdown text as
``bench/bench_one_file.py`` joins pages (each a ``# <title>`` section), cut at whole pages to
about ``--mb`` megabytes, ingested with ``add_records`` as one document under one root;
then ``find(q, limit=10)`` for topical queries (keywords, headings: the queries that take one
slot per document, filled with passage slots there by ``few_document_passages``) and, for
comparison, a flat search of the same store (leaves only, the default blend).

    OPENBLAS_NUM_THREADS=1 python bench/bench_few_docs_latency.py [--mb 4.9,1.4]
        [--no-filled-top] [--repeat 3] [--embedder bow|minilm]

Prints per size: characters, nodes, the first query's stop reason and rounds, p50 of find
and of the flat search (ms, over every query and repeat), and a hash of the answers (every
query's URIs, scores, shown text, collapsed chunks and their scores: equal hashes, equal
answers). ``--no-filled-top``: every candidate cut into slots, then the first ten, as main
(``descent.FILLED_TOP`` off: helper fewdocs builds only the slots a find returns).

Embedder: the tests' bag-of-words (default: no model, ingest in seconds; stop 51's repro
used it) or the cached MiniLM (``--embedder minilm``: the 4.9 MB text is ~7,000 chunks to
embed once).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import bench_one_file as bo  # noqa: E402
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

from treehop import RetrievalConfig, Treehop, descent  # noqa: E402
from treehop.ingest.records import add_records  # noqa: E402
from treehop.stores.base import Scope  # noqa: E402

from treehop_test_doubles import BagOfWordsEmbedder  # noqa: E402

NATURAL_SETS = (
    "perlfaq",
    "django-faq",
    "sqlalchemy-faq",
    "curl-faq",
    "vim-faq",
    "r-faq",
    "autotools-faq",
    "borg-faq",
    "ffmpeg-faq",
    "privoxy-faq",
    "lsof-faq",
    "screen-faq",
    "gitfaq",
    "fetchmail-faq",
    "getmail-faq",
    "zsh-faq",
    "nano-faq",
    "doxygen-faq",
)
"""The natural sets whose pages are joined after the docs (each set's plain markdown once)."""

TOPICAL = (
    "how to configure logging",
    "parametrize tests with ids",
    "application context teardown",
    "fixture scope",
    "blueprint registration",
    "temporary directories",
    "skip and xfail",
    "request context",
    "monkeypatch environment variables",
    "template rendering",
    "error handlers",
    "capture stdout",
    "database connection",
    "command line options",
    "configuration files",
    "unicode encoding",
    "regular expressions",
    "signals",
    "deployment",
    "plugins",
)
"""Topical queries (none is a question or a sentence: they take document slots)."""


def pages() -> list[ds.DocPage]:
    """The docs pages, then every natural set's markdown pages (sorted paths)."""
    out = list(ds.materialise_pytest_docs()[1]) + list(ds.materialise_flask_docs()[1])
    root = ds.CACHE_DIR / "natural"
    for name in NATURAL_SETS:
        for p in sorted((root / name).rglob("*.md")):
            text = p.read_text(errors="replace")
            first = text.split("\n", 1)[0]
            title = first[2:].strip() if first.startswith("# ") else p.stem
            out.append(ds.DocPage(f"{name}/{p.name}", title, text, []))
    return out


def book(megabytes: float, all_pages: Sequence[ds.DocPage]) -> str:
    """Whole pages joined (:func:`bench_one_file.one_file`) up to ``megabytes``."""
    taken: list[ds.DocPage] = []
    size = 0
    for p in all_pages:
        if size + len(p.text) > megabytes * 1e6 and taken:
            break
        taken.append(p)
        size += len(p.text) + 4
    return bo.one_file(taken)[0]


def answer_of(res: Any) -> list[Any]:
    return [
        (m.uri, m.score, m.slot_text, [(x.uri, x.score, x.content) for x in m.collapsed])
        for m in res.resources
    ]


def run(megabytes: float, repeat: int, embedder: Any, queries: Sequence[str]) -> dict[str, Any]:
    text = book(megabytes, pages())
    with tempfile.TemporaryDirectory() as d:
        c = Treehop(Path(d) / "idx", embedder=embedder, tagger=None)
        try:
            add_records(c, [(text, {"source": "book.md"})], base_uri=bo.BASE)
            nodes = len(c.store)
            dense_weight = RetrievalConfig().dense_weight
            answers, first = [], None
            for q in queries:
                res = c.find(q, target_uri=bo.BASE, limit=10)
                first = first or res.query_results[0]
                answers.append(answer_of(res))
            find_ms: list[float] = []
            flat_ms: list[float] = []
            for _ in range(repeat):
                for q in queries:
                    t0 = time.perf_counter()
                    c.find(q, target_uri=bo.BASE, limit=10)
                    find_ms.append(1000 * (time.perf_counter() - t0))
                    t0 = time.perf_counter()
                    vec = embedder.embed_query(q)
                    c.store.search(
                        vec,
                        Scope(subtrees=(bo.BASE,), leaves_only=True),
                        10,
                        query_text=q,
                        dense_weight=dense_weight,
                    )
                    flat_ms.append(1000 * (time.perf_counter() - t0))
            assert first is not None
            digest = hashlib.sha256(json.dumps(answers).encode()).hexdigest()[:12]
            return {
                "chars": len(text),
                "nodes": nodes,
                "stop": first.stop_reason,
                "rounds": first.rounds,
                "find_ms": statistics.median(find_ms),
                "flat_ms": statistics.median(flat_ms),
                "results": statistics.fmean(len(a) for a in answers),
                "hash": digest,
            }
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", default="4.9,1.4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-filled-top", action="store_true", help="FILLED_TOP off (as main)")
    ap.add_argument("--embedder", default="bow", choices=("bow", "minilm"))
    args = ap.parse_args()
    if args.no_filled_top:
        descent.FILLED_TOP = False
    embedder = BagOfWordsEmbedder() if args.embedder == "bow" else ds.default_embedder()
    for mb in (float(x) for x in args.mb.split(",")):
        r = run(mb, args.repeat, embedder, TOPICAL)
        print(
            f"{r['chars'] / 1e6:.2f} MB  nodes {r['nodes']:>6}  results {r['results']:.1f}  "
            f"find p50 {r['find_ms']:7.2f} ms  flat p50 {r['flat_ms']:5.2f} ms  "
            f"answers {r['hash']}  (first: {r['rounds']} rounds, {r['stop']})"
        )


if __name__ == "__main__":
    main()
