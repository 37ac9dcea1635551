"""The store's write lock handed on at once (helper perf60).

``WaitLine`` waiters poll their lock between pauses; a holder that lets go through
``WaitLine.release`` wakes the waiter whose turn it is, instead of leaving the lock free
until that waiter's next try (four writers of one store in one process, 2 ms writes: 7.4 ms
a write before, 3.4 after; bench/README.md, helper perf60). No sleep synchronises anything:
the waiters' pauses are made 60 s, so only a wake can hand the lock on within the bound.
"""

from __future__ import annotations

import asyncio
import threading

from treehop.stores._filelock import WaitLine

LONG = 60.0
"""The waiters' pauses between tries: far past the bound below (only a wake ends one)."""
BOUND = 20.0


async def _queued(line: WaitLine, n: int) -> None:
    while len(line._queue) < n:  # (yields to the waiters until they stand in line)
        await asyncio.sleep(0)


async def test_a_release_wakes_the_next_waiter_instead_of_leaving_the_lock_free() -> None:
    line, lock = WaitLine(), threading.Lock()
    order: list[str] = []
    await line.take(lock, None, None)  # the holder
    took_first = asyncio.Event()
    go_on = asyncio.Event()

    async def waiter(name: str, done: asyncio.Event | None) -> None:
        await line.take(lock, None, None, (LONG, LONG))
        order.append(name)
        if done is not None:
            done.set()
            await go_on.wait()
        line.release(lock)

    first = asyncio.create_task(waiter("first", took_first))
    await _queued(line, 1)
    second = asyncio.create_task(waiter("second", None))
    await _queued(line, 2)
    # The second one now sleeps its 60 s pause (not its turn); the first one tries every
    # 5 ms at most. The holder lets go: the first takes it.
    line.release(lock)
    await asyncio.wait_for(took_first.wait(), BOUND)
    # The first lets go while the second, now first in line, still sleeps its 60 s: only
    # the release's wake hands it the lock within the bound.
    go_on.set()
    await asyncio.wait_for(asyncio.gather(first, second), BOUND)
    assert order == ["first", "second"]
    assert not lock.locked()
    assert not line._queue


async def test_a_wake_for_a_waiter_that_was_cancelled_is_harmless() -> None:
    line, lock = WaitLine(), threading.Lock()
    await line.take(lock, None, None)
    gone = asyncio.create_task(line.take(lock, None, None, (LONG, LONG)))
    await _queued(line, 1)
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    assert not line._queue
    line.release(lock)  # (nobody in line: nothing to wake)
    await asyncio.wait_for(line.take(lock, None, None), BOUND)
    line.release(lock)
    assert not lock.locked()
