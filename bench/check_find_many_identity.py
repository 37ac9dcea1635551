"""``find_many`` against ``find`` on the LoCoMo dev conversations: answers hashed, store searches
counted (helper leftovers60: a ``find_many`` query's deeper memory run reuses its batch's first
search, as a ``find``'s reuses its own).

Each conversation's questions go through one ``find_many`` per keyword set of
``check_memory_identity.find_options``'s first three (leaves only, the defaults,
``limit=30``), each answer compared with ``find``'s; ``hierarchical_retriever.search_columns``
calls are counted inside the ``find_many`` calls (the batch's first searches are
``search_columns_batch``: not counted).

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
    TREEHOP_LOCOMO=/work/shared/data/locomo/locomo5_dev.json \\
    PYTHONPATH=retrieval python bench/check_find_many_identity.py
"""

from __future__ import annotations

import asyncio
import hashlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_memory_identity as cmi
from datasets import default_embedder
from treehop import hierarchical_retriever as hr

KEYWORDS: list[dict[str, Any]] = [{"include_directories": False}, {}, {"limit": 30}]


async def main() -> None:
    searches = [0]
    search = hr.search_columns

    def counted(*args: Any, **kwargs: Any) -> Any:
        searches[0] += 1
        return search(*args, **kwargs)

    hr.search_columns = counted  # type: ignore[assignment]
    emb = default_embedder()
    h_find, h_many = hashlib.sha256(), hashlib.sha256()
    n = differ = in_many = 0
    async for conv, mem, target, _ in cmi.written(emb):
        questions = [q["question"] for q in conv["qa"]]
        for kw in KEYWORDS:
            before = searches[0]
            batch = await mem.find_many(questions, target_uri=target, **kw)
            in_many += searches[0] - before
            for q, got in zip(questions, batch, strict=True):
                alone = cmi.shape(await mem.find(q, target_uri=target, **kw))
                many = cmi.shape(got)
                h_find.update(alone.encode())
                h_many.update(many.encode())
                n += 1
                differ += alone != many
    print(
        f"{n} find_many results, {differ} differ from find; find hash "
        f"{h_find.hexdigest()[:16]}, find_many hash {h_many.hexdigest()[:16]}; "
        f"search_columns calls in find_many: {in_many}"
    )


if __name__ == "__main__":
    asyncio.run(main())
