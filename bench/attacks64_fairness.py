"""Fairness of the store's write lock among clients of one process (helper attacks64).

Six ``AsyncTreehop`` clients of one index directory, on one event loop, each writing in a
loop for ``--seconds`` with ``lock_timeout`` 2 s: how many writes each made, how many of its
writes raised ``IndexLockedError``, and its longest single write. ``--api resource``:
``add_resource`` (the store's write lock); ``--api memory``: ``add_memory`` (the category's
conversation lock first, then the store's write lock).

    python bench/attacks64_fairness.py --api resource
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from treehop import AsyncTreehop
from treehop.errors import TreehopError

from treehop_test_doubles import BagOfWordsEmbedder


async def main(api: str, clients: int, seconds: float) -> None:
    path = Path(tempfile.mkdtemp()) / "idx"
    cs = [AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None) for _ in range(clients)]
    for c in cs:
        c.store.lock_timeout = 2.0  # type: ignore[attr-defined]
    stop = time.monotonic() + seconds

    async def loop(i: int) -> tuple[int, int, float]:
        n, errors, worst = 0, 0, 0.0
        while time.monotonic() < stop:
            t = time.monotonic()
            try:
                if api == "memory":
                    await cs[i].add_memory(f"fact {n} of {i}", name=f"m{i}")
                else:
                    await cs[i].add_resource(
                        f"fact {n} of {i}", target_uri=f"viking://resources/r{i}.md"
                    )
                n += 1
            except TreehopError:
                errors += 1
            worst = max(worst, time.monotonic() - t)
        return n, errors, round(worst, 2)

    rows = await asyncio.gather(*(loop(i) for i in range(clients)))
    print(f"api={api} clients={clients} seconds={seconds:g}")
    print("(writes, IndexLockedError, longest write s) per client:", rows)
    print("total writes", sum(r[0] for r in rows), "errors", sum(r[1] for r in rows))
    for c in cs:
        await c.close()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--api", choices=("resource", "memory"), default="resource")
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=6.0)
    a = ap.parse_args()
    asyncio.run(main(a.api, a.clients, a.seconds))
