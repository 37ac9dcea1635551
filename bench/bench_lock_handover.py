"""How long the store's write lock takes to pass from one writer to the next in one process
(helper perf60).

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=$PWD/retrieval python bench/bench_lock_handover.py

1, 2 and 4 coroutines on one event loop, each holding the lock 100 times around 2 ms of
work in a worker thread (as a write embeds in one), for a store in memory and one on disk;
wall ms per hold, beside an ``asyncio.Lock`` (one client's own lock, which hands over at
once). Why: the store's lock is polled (``WaitLine``); before helper perf60 a waiter took it
only at its next try, up to 5 ms after the holder let go.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from treehop.stores._filelock import aholding_store
from treehop.stores.embedded import EmbeddedStore

N = 100
WORK_S = 0.002


async def writers(k: int, hold: Callable[[], AbstractAsyncContextManager[Any]]) -> float:
    """``k`` writers, ``N`` holds each: wall ms per hold."""

    async def one() -> None:
        for _ in range(N):
            async with hold():
                await asyncio.to_thread(time.sleep, WORK_S)

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(k)))
    return (time.perf_counter() - t0) / (N * k) * 1e3


async def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        for name, store in (("mem", EmbeddedStore()), ("disk", EmbeddedStore(d + "/idx"))):
            lock = asyncio.Lock()
            for k in (1, 2, 4):
                a = await writers(k, lambda lk=lock: lk)  # type: ignore[misc]
                b = await writers(k, lambda s=store: aholding_store(s))  # type: ignore[misc]
                print(
                    f"{name:4s} {k} writers, 2 ms each: asyncio.Lock {a:.2f} ms/hold, "
                    f"store lock {b:.2f} ms/hold",
                    flush=True,
                )
            store.close()


if __name__ == "__main__":
    asyncio.run(main())
