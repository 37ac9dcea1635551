"""The cost of one uncontended hold of a store's write lock (helper xproc59).

Every client write holds ``stores._filelock.aholding_store(store)`` for its whole length (a
``threading.Lock``; on disk also two lock files opened, locked and closed, a ``realpath`` and
the ``CURRENT`` stat of ``refresh``). This times 2,000 empty holds, best of 5, for a store in
memory and one on disk, so the lock's share of a write can be read beside
``bench_append_siblings.py``'s per-call times.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD/retrieval python bench/bench_store_write_lock.py
"""

from __future__ import annotations

import asyncio
import tempfile
import time

from treehop.stores._filelock import aholding_store
from treehop.stores.embedded import EmbeddedStore

HOLDS = 2000
ROUNDS = 5


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for label, store in (
            ("in memory", EmbeddedStore(None)),
            ("on disk", EmbeddedStore(folder)),
        ):
            best = float("inf")
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                for _ in range(HOLDS):
                    async with aholding_store(store):
                        pass
                best = min(best, (time.perf_counter() - t0) / HOLDS)
            print(f"{label:10s} {best * 1e6:7.1f} us per hold")
            store.close()


if __name__ == "__main__":
    asyncio.run(main())
