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
from collections.abc import AsyncIterator
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


async def written(
    emb: Any, conversations: int | None = None
) -> AsyncIterator[tuple[dict[str, Any], AsyncTreehop, str, list[Any]]]:
    """Each conversation (``conversations``: the first N, ``None``: all) written into a fresh
    in-memory client as ``bench_memory.py`` writes it: ``(conversation, client, its memory
    target, its sessions)``, the client closed after the caller's turn. One copy for this
    script and the two that rerun its finds (``check_deeper_turns.py``,
    ``bench_deeper_turns_cost.py``)."""
    for conv in bm.load_conversations(conversations):
        sessions = bm.sessions_of(conv)
        cid = conv["sample_id"]
        mem = AsyncTreehop(None, embedder=emb, tagger=None)
        await bm.add_conversation(mem, cid, sessions)
        yield conv, mem, f"viking://~/memories/conversations/{cid}", sessions
        await mem.close()


def find_options(question: str, times: list[Any]) -> list[dict[str, Any]]:
    """The ``find`` keywords each question is asked with: leaves only, the defaults,
    ``limit=30``, and the question's ``since`` / ``until`` window where it names a time."""
    kws: list[dict[str, Any]] = [{"include_directories": False}, {}, {"limit": 30}]
    w = bm.question_window(question, times)
    if w is not None:
        kws.append({"since": w[0], "until": w[1]})
    return kws


async def main() -> None:
    emb = default_embedder()
    h = hashlib.sha256()
    n = carried = 0
    async for conv, mem, target, sessions in written(emb):
        times = [st for _, st, _ in sessions]
        for q in conv["qa"]:
            for kw in find_options(q["question"], times):
                res = await mem.find(q["question"], target_uri=target, **kw)
                h.update(shape(res).encode())
                n += 1
                carried += sum(len(m.collapsed) for m in res.contexts())
            ctx = await mem.assemble_context(q["question"], max_tokens=500)
            h.update(ctx.text.encode())
            n += 1
    print(f"{n} results, {carried} carried turns, hash {h.hexdigest()[:16]}")


if __name__ == "__main__":
    asyncio.run(main())
