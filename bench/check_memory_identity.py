"""Every LoCoMo memory find's full result, hashed: to check that a change to the memory context
moves nothing (run on two checkouts, compare the last line).

The five dev conversations of ``bench_memory.py`` (``TREEHOP_LOCOMO``, MiniLM through
``TREEHOP_BENCH_CACHE``), written by ``add_messages`` as there; per question: ``find`` with
``include_directories=False``, with the defaults and with ``limit=30``, with the question's
``since`` / ``until`` window where it names a time, and ``assemble_context(max_tokens=500)``.
Hashed: each slot's URI and score and its carried turns (URI, score, position, carried flag),
and the assembled text.

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
    TREEHOP_LOCOMO=/work/shared/data/locomo/locomo5_dev.json \\
    PYTHONPATH=retrieval python bench/check_memory_identity.py
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_memory as bm
from datasets import default_embedder
from treehop import AsyncTreehop


def shape(res: Any) -> str:
    return repr(
        [
            (
                m.uri,
                repr(m.score),
                [(c.uri, repr(c.score), c.position, c.carried) for c in m.collapsed],
            )
            for m in res.contexts()
        ]
    )


async def main() -> None:
    emb = default_embedder()
    h = hashlib.sha256()
    n = carried = 0
    for conv in bm.load_conversations(None):
        sessions = bm.sessions_of(conv)
        cid = conv["sample_id"]
        mem = AsyncTreehop(None, embedder=emb, tagger=None)
        await bm.add_conversation(mem, cid, sessions)
        target = f"viking://~/memories/conversations/{cid}"
        times = [st for _, st, _ in sessions]
        for q in conv["qa"]:
            kws: list[dict[str, Any]] = [{"include_directories": False}, {}, {"limit": 30}]
            w = bm.question_window(q["question"], times)
            if w is not None:
                kws.append({"since": w[0], "until": w[1]})
            for kw in kws:
                res = await mem.find(q["question"], target_uri=target, **kw)
                h.update(shape(res).encode())
                n += 1
                carried += sum(len(m.collapsed) for m in res.contexts())
            ctx = await mem.assemble_context(q["question"], max_tokens=500)
            h.update(ctx.text.encode())
            n += 1
        await mem.close()
    print(f"{n} results, {carried} carried turns, hash {h.hexdigest()[:16]}")


if __name__ == "__main__":
    asyncio.run(main())
