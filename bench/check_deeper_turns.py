"""Which LoCoMo memory finds ``DEEPER_TURNS`` changes, and how (helper leftovers59).

The finds of ``check_memory_identity.py`` (five dev conversations; per question ``find`` with
``include_directories=False``, with the defaults, with ``limit=30``, with the question's
``since`` / ``until`` window where it names a time, and ``assemble_context(max_tokens=500)``),
each run twice in one process: ``hierarchical_retriever.DEEPER_TURNS`` off, then on. For each
result that differs it prints: the slots before and after, whether the first slots' URIs
keep their order, the largest score change of a slot in both, and the evidence recall (the
question's ``dia_id`` turns held by the slots, hits and carried turns, as ``bench_memory.py``
counts them) at 5 and over every slot, before and after; for a block, the evidence turns it
holds whole. Counts and ids only, no question text.

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
    TREEHOP_LOCOMO=/work/shared/data/locomo/locomo5_dev.json \\
    PYTHONPATH=retrieval python bench/check_deeper_turns.py
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_memory as bm
from check_memory_identity import find_options, written
from datasets import default_embedder
from treehop import hierarchical_retriever as hr


def shape(res: Any) -> list[Any]:
    return [
        (m.uri, m.score, [(c.uri, c.score, c.position, c.carried) for c in m.collapsed])
        for m in res.contexts()
    ]


async def main() -> None:
    emb = default_embedder()
    n = 0
    differ: list[dict[str, Any]] = []
    async for conv, mem, target, sessions in written(emb):
        cid = conv["sample_id"]
        msg = {
            mem.display(x.uri): str(x.metadata["message_id"])
            for x in mem.store.iter_nodes(mem.resolve(target))
            if x.is_leaf and "message_id" in x.metadata
        }
        by_id = {t["dia_id"]: bm._norm(bm.turn_text(t)) for _, _, ts in sessions for t in ts}
        times = [st for _, st, _ in sessions]
        for qi, q in enumerate(conv["qa"]):
            gold = bm.evidence_ids(q.get("evidence", [])) if q.get("category") != 5 else set()
            kws = find_options(q["question"], times)
            for k, kw in enumerate([*kws, None]):
                n += 1
                got: dict[bool, Any] = {}
                for flag in (False, True):
                    hr.DEEPER_TURNS = flag
                    if kw is None:
                        ctx = await mem.assemble_context(q["question"], max_tokens=500)
                        got[flag] = ctx.text
                    else:
                        got[flag] = await mem.find(q["question"], target_uri=target, **kw)
                hr.DEEPER_TURNS = True
                rec: dict[str, Any] = {"conv": cid, "q": qi, "find": "block" if kw is None else k}
                if kw is None:
                    if got[False] == got[True]:
                        continue
                    for flag, key in ((False, "held_off"), (True, "held_on")):
                        inside = bm._norm(got[flag])
                        rec[key] = sum(1 for g in gold if g in by_id and by_id[g] in inside)
                    differ.append(rec)
                    continue
                a, b = shape(got[False]), shape(got[True])
                if a == b:
                    continue
                common = {x[0]: x[1] for x in a}
                rec.update(
                    slots=(len(a), len(b)),
                    order_kept=[x[0] for x in a] == [x[0] for x in b if x[0] in common],
                    max_score_change=max(
                        (abs(x[1] - common[x[0]]) for x in b if x[0] in common), default=0.0
                    ),
                    stop=got[True].query_results[0].stop_reason,
                )
                if gold:
                    sa = [bm.slot_ids(m, msg) for m in got[False].contexts()]
                    sb = [bm.slot_ids(m, msg) for m in got[True].contexts()]
                    rec["recall@5"] = (bm.recall(sa, gold, 5), bm.recall(sb, gold, 5))
                    rec["recall@all"] = (bm.recall(sa, gold, 1000), bm.recall(sb, gold, 1000))
                differ.append(rec)
    print(f"{n} results; {len(differ)} differ")
    for r in differ:
        print(r)


if __name__ == "__main__":
    asyncio.run(main())
