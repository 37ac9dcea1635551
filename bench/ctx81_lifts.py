"""What lifts the slots find() ranks above the answer where flat hybrid ranks it higher
(issue 33, stop 75, helper quality81; dev halves only).

    python bench/ctx81_lifts.py bench/data/natural_lex77_lead_dev.json --json out.json [--sets a,b]
    python bench/ctx81_lifts.py --report out.json

The questions: quality80's group (``ctx80_report``: find ranks an answer in its top ten, its
1,000-token block holds less than flat hybrid's, cause "answer's slot not reached", flat
hybrid's first answer rank above the block's answer slot). For each, the 1,000-token block's
``find()`` call (``bench_context_diag.found_for``) is rerun with one ranking lever switched
off at a time (config overrides, nothing else changes) and the answer's slot (1-based, the
first slot whose delivered text holds an answer) recorded; for the base call, each slot above
the answer: whether it is a chunk / file / folder, its final score, its own (fused query)
score, its dense cosine, and whether it shares the answer's document.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_context_diag as cd  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import ctx80_report as r80  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

B = 1000
LEVERS: dict[str, dict[str, Any]] = {
    "no-window": {"question_chunk_window": False},
    "no-doc-penalty": {"question_document_penalty": 0.0},
    "flat-weight": {"question_dense_weight": None},
    "hub25": {"question_hub_weight": 0.25},
    "no-grow-own": {"question_grow_own": False},
}


def targets(path: Path) -> list[dict[str, Any]]:
    recs = json.loads(path.read_text())["records"]
    out = []
    for r in recs:
        if not r80.lost(r, B) or r.get(f"cause@{B}") != "slot-not-reached":
            continue
        s = r80.answer_slot(r, B)
        if r.get("hyb_rank") is not None and s is not None and r["hyb_rank"] < s:
            out.append(r)
    return out


def doc_of(m: Any) -> str:
    return m.parent_uri if m.chunk_index is not None else m.uri


def kind_of(m: Any) -> str:
    if m.chunk_index is not None:
        return "chunk"
    return "file" if m.is_leaf else "folder"


def run(args: argparse.Namespace) -> None:
    tg = targets(args.records)
    sets = args.sets.split(",") if args.sets else sorted({r["set"] for r in tg})
    done: dict[tuple[str, str], Any] = {}
    if args.json.exists():
        for r in json.loads(args.json.read_text())["records"]:
            done[(r["set"], r["qid"])] = r
    cached = ds.default_embedder()
    counter = bn.CachedCounter(bn.default_token_counter())
    for name in sets:
        want = {r["qid"]: r for r in tg if r["set"] == name}
        if not want or all((name, q) in done for q in want):
            continue
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            qs = [q for q in bt.sampled_halves(nset.questions, None)[0] if q.qid in want]
            ix.embedder.prepare([q.text for q in qs])
            judge = bn.Judge()
            cfg = ix.th.config
            for q in qs:
                answers = [a for a, _ in q.answers]
                rec: dict[str, Any] = {
                    "set": name,
                    "qid": q.qid,
                    "question": q.text,
                    "hyb_rank": want[q.qid]["hyb_rank"],
                    "find_rank": want[q.qid]["find_rank"],
                }
                found = cd.found_for(ix.th, q.text, B, ix.scope, counter)
                slots = found.contexts()
                a = cd.answer_slot(slots, answers, judge)
                rec["slot"] = None if a is None else a + 1
                rec["n_slots"] = len(slots)
                if a is not None:
                    am = slots[a]
                    rec["answer"] = {
                        "kind": kind_of(am),
                        "score": am.score,
                        "own": am.own_score,
                        "vec": am.vector_score,
                    }
                    rec["above"] = [
                        {
                            "kind": kind_of(m),
                            "score": m.score,
                            "own": m.own_score,
                            "vec": m.vector_score,
                            "same_doc": doc_of(m) == doc_of(am),
                            "n_chunks": 1 + len(m.collapsed),
                        }
                        for m in slots[:a]
                    ]
                for lever, over in LEVERS.items():
                    saved = {k: getattr(cfg, k) for k in over}
                    try:
                        for k, v in over.items():
                            setattr(cfg, k, v)
                        f2 = cd.found_for(ix.th, q.text, B, ix.scope, counter)
                    finally:
                        for k, v in saved.items():
                            setattr(cfg, k, v)
                    s2 = cd.answer_slot(f2.contexts(), answers, judge)
                    rec[lever] = None if s2 is None else s2 + 1
                done[(name, q.qid)] = rec
                print(name, q.qid, rec["slot"], {k: rec[k] for k in LEVERS}, flush=True)
        args.json.write_text(json.dumps({"records": list(done.values())}, indent=1))


def report(paths: list[Path]) -> None:
    recs = [r for p in paths for r in json.loads(p.read_text())["records"]]
    print(f"{len(recs)} questions, {len({r['set'] for r in recs})} sets")
    have = [r for r in recs if r.get("slot")]
    print("| lever off | answer slot higher | same | lower / gone | median slot |")
    print("|---|---|---|---|---|")
    for lever in LEVERS:
        up = sum(1 for r in have if r[lever] is not None and r[lever] < r["slot"])
        same = sum(1 for r in have if r[lever] == r["slot"])
        print(
            f"| {lever} | {up} | {same} | {len(have) - up - same} | "
            f"{np.median([r[lever] or 99 for r in have]):.0f} |"
        )
    ab = [x for r in have for x in r["above"]]
    print(f"\nslots above the answer: {len(ab)}; kinds {dict(Counter(x['kind'] for x in ab))}")
    print(f"same document as the answer: {sum(x['same_doc'] for x in ab)}")
    own_below = sum(
        1
        for r in have
        for x in r["above"]
        if x["own"] is not None and r["answer"]["own"] is not None and x["own"] < r["answer"]["own"]
    )
    vec_below = sum(
        1
        for r in have
        for x in r["above"]
        if x["vec"] is not None and r["answer"]["vec"] is not None and x["vec"] < r["answer"]["vec"]
    )
    print(f"above on final, below the answer on own score: {own_below}; on cosine: {vec_below}")
    print("answer kinds:", dict(Counter(r["answer"]["kind"] for r in have)))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("records", nargs="?", type=Path)
    ap.add_argument("--sets", default="")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--report", nargs="*", type=Path)
    args = ap.parse_args()
    if args.report:
        report(args.report)
    else:
        run(args)


if __name__ == "__main__":
    main()
