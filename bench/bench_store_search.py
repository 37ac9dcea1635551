"""LangGraph ``TreehopStore.search`` over LoCoMo's turns stored as store items (helper store57).

A labelled check that search over a store does not get worse when what the namespace
directories are described (and embedded) from changes: each LoCoMo conversation is written
through ``TreehopStore.batch`` as one namespace per session, ``("locomo", <sample_id>,
"session_NN")``, one item per turn (key: its ``dia_id``, value ``{"speaker": ..., "text":
...}``, as an agent would keep a message), and each question (written by people, LoCoMo's
``qa``; category 5, adversarial, left out) is searched over the conversation's prefix
``("locomo", <sample_id>)``, so the tree search descends through the session directories.
Measure: evidence recall@5 / @10 of the returned items (the share of the question's evidence
turns among them).

Rows, same items, same embedder (MiniLM, cached; ``--no-cache`` to embed afresh):

- ``store, index $``: the default ``index_fields=["$"]`` (each item embedded as its JSON);
- ``store, index text``: ``index_fields=["text"]`` (the turn's text only);
- ``flat dense $`` / ``flat dense text``: cosine top-k over the same item vectors, what
  LangGraph's ``InMemoryStore`` with the same embedder and fields returns.

Conversations are split by ``bench_memory.is_held_out`` (dev: conv-26, conv-42; held out:
conv-30, conv-41, conv-43); nothing is tuned here, both are printed. Run it on two checkouts
(``PYTHONPATH`` first) to compare a change::

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
        python bench/bench_store_search.py [--out results.json] [--limit-convs N] [--keys uuid]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from langgraph.store.base import PutOp  # noqa: E402

import bench_memory as bm  # noqa: E402
from datasets import default_embedder  # noqa: E402
from langchain_treehop import TreehopStore  # noqa: E402
from treehop import Treehop  # noqa: E402

INDEXES: dict[str, list[str]] = {"$": ["$"], "text": ["text"]}
K = (5, 10)


def uuid_key(sid: str, dia_id: str) -> str:
    """A uuid4-shaped key derived from the turn (``--keys uuid``), as LangGraph's memory tools
    key items (``uuid.uuid4()``), but the same on every run so runs compare."""
    raw = bytearray(hashlib.sha256(f"{sid}/{dia_id}".encode()).digest()[:16])
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def run_conversation(
    conv: dict[str, Any], embedder: Any, fields_name: str, keys_kind: str = "dia_id"
) -> dict[str, list[list[float]]]:
    """Per row: one ``[recall@5, recall@10]`` per question."""
    sid = conv["sample_id"]
    to_key = (lambda d: d) if keys_kind == "dia_id" else (lambda d: uuid_key(sid, d))
    questions = [
        q for q in conv["qa"] if q.get("category") != 5 and bm.evidence_ids(q.get("evidence", []))
    ]
    th = Treehop(None, embedder=embedder)
    try:
        store = TreehopStore(th, index_fields=INDEXES[fields_name])
        ops = [
            PutOp(
                ("locomo", sid, f"session_{n:02d}"),
                to_key(t["dia_id"]),
                {"speaker": t["speaker"], "text": t["text"]},
            )
            for n, _, turns in bm.sessions_of(conv)
            for t in turns
        ]
        store.batch(ops)
        # flat dense: the stored item vectors, cosine with the query's
        uris = [store.item_uri(tuple(op.namespace), op.key) for op in ops]
        dia_of = {
            to_key(t["dia_id"]): t["dia_id"] for _, _, turns in bm.sessions_of(conv) for t in turns
        }
        keys = [dia_of[op.key] for op in ops]
        mat = np.asarray(th.store.get_vectors(uris), dtype=np.float32)
        rows: dict[str, list[list[float]]] = {"store": [], "flat dense": []}
        for q in questions:
            gold = bm.evidence_ids(q["evidence"])
            hits = store.search(("locomo", sid), query=q["question"], limit=max(K))
            got = [dia_of[h.key] for h in hits]
            rows["store"].append([bm.recall(got, gold, k) for k in K])
            qv = np.asarray(embedder.embed_query(q["question"]), dtype=np.float32)
            top = np.argsort(-(mat @ qv), kind="stable")[: max(K)]
            rows["flat dense"].append([bm.recall([keys[i] for i in top], gold, k) for k in K])
        return rows
    finally:
        th.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="per-question results (JSON)")
    ap.add_argument("--limit-convs", type=int, default=None)
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument(
        "--keys",
        choices=("dia_id", "uuid"),
        default="dia_id",
        help="item keys: the turn's dia_id (D1:3) or a uuid4-shaped key per turn",
    )
    a = ap.parse_args(argv)
    convs = bm.load_conversations(a.limit_convs)
    embedder = default_embedder(cache=not a.no_cache)
    per: dict[str, dict[str, list[list[float]]]] = {}
    t0 = time.perf_counter()
    for conv in convs:
        for fields_name in INDEXES:
            for row, vals in run_conversation(conv, embedder, fields_name, a.keys).items():
                per.setdefault(f"{row}, index {fields_name}", {})[conv["sample_id"]] = vals
    print(f"{len(convs)} conversations, {time.perf_counter() - t0:.0f} s")
    parts = {
        "dev": [c["sample_id"] for c in convs if not bm.is_held_out(c["sample_id"])],
        "held out": [c["sample_id"] for c in convs if bm.is_held_out(c["sample_id"])],
    }
    parts["all"] = parts["dev"] + parts["held out"]
    head = " | ".join(f"{p} r@5 / r@10 (n)" for p in parts)
    print(f"| row | {head} |")
    print("|---|" + "---|" * len(parts))
    summary: dict[str, Any] = {}
    for row in sorted(per):
        cells = []
        for p, sids in parts.items():
            vals = [v for s in sids for v in per[row].get(s, [])]
            if not vals:
                cells.append("-")
                continue
            r5 = statistics.fmean(v[0] for v in vals)
            r10 = statistics.fmean(v[1] for v in vals)
            summary.setdefault(row, {})[p] = {"r@5": r5, "r@10": r10, "n": len(vals)}
            cells.append(f"{r5:.3f} / {r10:.3f} ({len(vals)})")
        print(f"| {row} | " + " | ".join(cells) + " |")
    blob = json.dumps(per, sort_keys=True).encode()
    print("per-question hash", hashlib.sha256(blob).hexdigest()[:12])
    if a.out is not None:
        a.out.write_text(json.dumps({"summary": summary, "per_question": per}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
