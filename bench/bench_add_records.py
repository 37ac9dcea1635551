"""add_records throughput: the batch write (build + embed everything, one write, one save)
against the one-record-at-a-time write it replaced, in one process, and the stores compared.

    OPENBLAS_NUM_THREADS=1 python bench/bench_add_records.py [--n 2000] [--repeat 2]
        [--embedder bow,minilm] [--tagger auto|none]

``--n`` short records (one to three sentences, under a few sources' directories), into a
fresh index on disk, with the default keyword tagger unless ``--tagger none``. ``old`` is
the write path before helper "records" (stop 54), verbatim: each whole record through
``add_resource`` (built, tagged, embedded, stored, its ancestors re-described and the index
saved, record by record; ``treehop_test_doubles.add_records_one_by_one``). ``new`` is
:func:`treehop.ingest.records.add_records`. Runs alternate old/new; the best of
``--repeat`` is reported, and after each pair the two stores' nodes and vectors must be
equal (else the script exits 1). ``bow``: the tests' fast
bag-of-words embedder; ``minilm``: the default offline embedder (MiniLM, uncached).

``--batch-size N`` (helper store57): compares ``new`` (one batch) with ``parts``
(``add_records(batch_size=N)``: parts of N records, each committed) instead of old / new,
the same way (alternating, stores compared).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import numpy as np  # noqa: E402

from treehop import Treehop  # noqa: E402
from treehop.ingest.records import (  # noqa: E402
    add_records,
)

from treehop_test_doubles import (  # noqa: E402
    BagOfWordsEmbedder,
    add_records_one_by_one,
    settle_directory_tags,
)

WORDS = [
    "index",
    "tree",
    "node",
    "vector",
    "query",
    "chunk",
    "file",
    "directory",
    "summary",
    "tag",
    "store",
    "embed",
    "record",
    "batch",
    "ingest",
    "search",
    "answer",
    "user",
    "memory",
    "session",
    "rank",
    "score",
    "filter",
    "path",
    "source",
    "page",
    "section",
    "model",
    "service",
    "error",
    "retry",
    "commit",
    "write",
    "read",
    "lock",
    "cache",
    "token",
    "text",
    "document",
]


def make_records(n: int, seed: int = 0) -> list[tuple[str, dict[str, Any]]]:
    rng = np.random.default_rng(seed)
    out: list[tuple[str, dict[str, Any]]] = []
    for i in range(n):
        k = int(rng.integers(8, 40))
        text = f"Record {i}: " + " ".join(WORDS[j] for j in rng.integers(0, len(WORDS), k)) + "."
        out.append((text, {"source": f"src{i % 20}/r{i}.txt", "n": i}))
    return out


def digest(client: Treehop) -> str:
    """The stored nodes and vectors, after the directories are re-tagged from the final
    index (``settle_directory_tags``: the two write paths tag a directory with statistics
    from different moments)."""
    settle_directory_tags(client)
    nodes = sorted(client.store.iter_nodes(None), key=lambda n: n.uri)
    vecs = np.asarray(client.store.get_vectors([n.uri for n in nodes]), np.float32)
    h = hashlib.sha256()
    for n, v in zip(nodes, vecs, strict=True):
        h.update(n.model_dump_json().encode())
        h.update(v.tobytes())
    return h.hexdigest()[:12]


def one(
    kind: str,
    embedder: Any,
    tagger: Any,
    batch: list[tuple[str, dict[str, Any]]],
    retag_below: int | None = None,
    batch_size: int | None = None,
) -> tuple[float, str, int]:
    with tempfile.TemporaryDirectory() as d:
        c = Treehop(Path(d) / "idx", embedder=embedder, tagger=tagger)
        if retag_below is not None:
            c.aio.writer.retag_all_below = retag_below
        try:
            t0 = time.perf_counter()
            if kind == "old":
                add_records_one_by_one(c, batch)
            else:
                add_records(c, batch, batch_size=batch_size if kind == "parts" else None)
            dt = time.perf_counter() - t0
            return dt, digest(c), len(c.store)
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--embedder", default="bow,minilm")
    ap.add_argument("--tagger", default="auto", choices=("auto", "none"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--retag-below",
        type=int,
        default=None,
        help="the writer's retag_all_below (default 1000): a smaller one makes a small batch "
        "cross it, as 2,000 records cross 1,000",
    )
    ap.add_argument("--batch-size", type=int, default=None, help="compare new with parts")
    args = ap.parse_args()
    kinds = ("old", "new") if args.batch_size is None else ("new", "parts")
    a_kind, b_kind = kinds
    batch = make_records(args.n)
    tagger = "auto" if args.tagger == "auto" else None
    rows = []
    ok = True
    for name in args.embedder.split(","):
        emb = BagOfWordsEmbedder() if name == "bow" else ds.default_embedder(cache=False)
        times: dict[str, list[float]] = {k: [] for k in kinds}
        hashes: dict[str, set[str]] = {k: set() for k in kinds}
        nodes = 0
        for _ in range(args.repeat):
            for kind in kinds:
                dt, h, nodes = one(kind, emb, tagger, batch, args.retag_below, args.batch_size)
                times[kind].append(dt)
                hashes[kind].add(h)
        same = hashes[a_kind] == hashes[b_kind] and len(hashes[b_kind]) == 1
        ok &= same
        row = {
            "embedder": name,
            "records": args.n,
            "nodes": nodes,
            **({"batch_size": args.batch_size} if args.batch_size else {}),
            f"{a_kind}_s": round(min(times[a_kind]), 2),
            f"{b_kind}_s": round(min(times[b_kind]), 2),
            f"{a_kind}_rec_per_s": round(args.n / min(times[a_kind]), 1),
            f"{b_kind}_rec_per_s": round(args.n / min(times[b_kind]), 1),
            "speedup": round(min(times[a_kind]) / min(times[b_kind]), 1),
            "identical": same,
            "hash": sorted(hashes[b_kind]),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
