"""One document of many short near-identical entries: how long a ``find`` takes, and how many
rounds it pages through (helper attacks48's open item, worked on by helper attacks50).

``# FAQ`` then ``(i)\\nwhy does alpha beta fail i? because gamma delta.`` N times, ingested
with ``chunk_chars=200`` (16,000 entries: 12,002 nodes), then ``find(query, limit=10)``. Past
the global step's 10,000 rows, the one document is opened and, with fewer documents than the
limit, the k-th best document stays unknown: the descent paged through it
``max_children_per_dir`` rows a round for ``max_rounds`` rounds, each round searching it with
the rows seen so far excluded (attacks50 made each round's cost follow its own rows). Helper
paging's stop rule by passage slots ends it after the first round: the first ten slots are
full and their neighbouring chunks collected, so no unread row can change them.

    OPENBLAS_NUM_THREADS=1 python bench/bench_paging_pathology.py [--entries 8000,16000]
        [--no-slot-stop] [--max-rounds N]

Prints per size: nodes, rounds of the first query, its stop reason, the median find time (ms)
and a hash of the results (URIs, scores, shown texts, collapsed chunks: equal hashes, equal
answers). ``--no-slot-stop``: the stop rule by passage slots off (helper paging; before it the
descent paged here for ``max_rounds`` rounds); ``--max-rounds 100000`` with it: unbounded
paging.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from treehop import Treehop
from treehop import hierarchical_retriever as hr
from treehop.config import RetrievalConfig
from treehop.ingest.records import add_records

from treehop_test_doubles import BagOfWordsEmbedder

QUERY = "why does alpha beta fail?"


def entries_text(n: int) -> str:
    """A markdown FAQ of ``n`` label-led entries under one heading, all sharing the query's
    words (attacks48's repro)."""
    entries = (f"({i})\nwhy does alpha beta fail {i}? because gamma delta.\n\n" for i in range(n))
    return "# FAQ\n\n" + "".join(entries)


def run(n: int, repeat: int, max_rounds: int = 200) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as d:
        c = Treehop(
            Path(d) / "idx",
            embedder=BagOfWordsEmbedder(),
            tagger=None,
            chunk_chars=200,
            config=RetrievalConfig(max_rounds=max_rounds),
        )
        try:
            add_records(c, [(entries_text(n), {"source": "faq.md"})])
            nodes = len(c.store)
            first = c.find(QUERY, limit=10)
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                c.find(QUERY, limit=10)
                times.append(time.perf_counter() - t0)
            answer = [
                (m.uri, m.score, m.slot_text, [(x.uri, x.score) for x in m.collapsed])
                for m in first.resources
            ]
            return {
                "entries": n,
                "nodes": nodes,
                "rounds": first.query_results[0].rounds,
                "stop": first.query_results[0].stop_reason,
                "ms": 1000 * statistics.median(times),
                "hash": hashlib.sha256(json.dumps(answer).encode()).hexdigest()[:12],
            }
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", default="8000,16000")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--no-slot-stop", action="store_true", help="the stop rule by slots off")
    ap.add_argument("--max-rounds", type=int, default=200)
    args = ap.parse_args()
    hr.SLOT_STOP = not args.no_slot_stop
    for n in (int(x) for x in args.entries.split(",")):
        r = run(n, args.repeat, args.max_rounds)
        print(
            f"entries {r['entries']:>7,}  nodes {r['nodes']:>7}  rounds {r['rounds']:>4}  "
            f"find p50 {r['ms']:8.1f} ms  answer {r['hash']}  ({r['stop']})"
        )


if __name__ == "__main__":
    main()
