"""Adversarial pass over the store's write lock (helper attacks64).

- ``lock_timeout`` NaN or infinity made every deadline (``now + timeout``) never come: a
  write waiting for another writer's lock hung for good; a string or ``None`` escaped as
  ``ValueError`` / ``TypeError``. Now a :class:`~treehop.errors.StoreError` at construction,
  and at the write for one set on the store afterwards.
- A write made through a client from inside one of its own writes (its embedder calling
  it back) waited for the client's own lock, which has no deadline: both hung for good.
  Now an :class:`~treehop.errors.IndexLockedError` at once, and the outer write completes.
- A write cancelled while it waits for the store's lock leaves nothing held or counted.

Every wait is bounded by :data:`BOUND`; the threads meet on events, never on sleeps.
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import IndexLockedError, StoreError
from treehop.stores._filelock import aholding_store, store_writers_waiting
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

BOUND = 30.0
"""The longest any wait may take (a hang is a failure, not a stuck run)."""


@pytest.mark.parametrize(
    "bad",
    [
        math.nan,
        math.inf,
        -math.inf,
        -1,
        -0.5,
        True,
        False,
        "5",
        None,
        pytest.param(10**400, id="huge"),
    ],
)
def test_a_lock_timeout_that_is_no_deadline_is_refused_at_construction(
    tmp_path: Path, bad: Any
) -> None:
    with pytest.raises(StoreError, match="lock_timeout"):
        EmbeddedStore(tmp_path / "idx", lock_timeout=bad)


def test_good_lock_timeouts_are_kept(tmp_path: Path) -> None:
    assert EmbeddedStore(tmp_path / "a", lock_timeout=0).lock_timeout == 0.0
    assert EmbeddedStore(tmp_path / "b", lock_timeout=np.float32(2.5)).lock_timeout == 2.5
    assert EmbeddedStore(tmp_path / "c", lock_timeout=10**6).lock_timeout == 1e6


def test_a_nan_lock_timeout_set_later_is_refused_at_the_write(tmp_path: Path) -> None:
    """Set on the store after construction (as tests and callers do), NaN reaches the
    lock's deadline: refused there, typed, before anything is written."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        c.add_resource("Seed text", target_uri="viking://resources/seed.md")
        c.store.lock_timeout = math.nan  # type: ignore[attr-defined]
        with pytest.raises(StoreError, match="lock_timeout"):
            c.add_resource("Other text", target_uri="viking://resources/other.md")
        c.store.lock_timeout = 1.0  # type: ignore[attr-defined]
        assert c.ls("viking://resources") and not any(
            "other.md" in e.uri for e in c.ls("viking://resources")
        )


class _CallsBack(BagOfWordsEmbedder):
    """An embedder that, embedding a text holding ``trigger``, writes through ``client``
    (a careless callback) and keeps what that write raised."""

    def __init__(self) -> None:
        super().__init__()
        self.client: Treehop | None = None
        self.inner: BaseException | str | None = None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.inner is None and any("trigger" in t for t in texts):
            assert self.client is not None
            try:
                self.client.add_resource("Inner text", target_uri="viking://resources/in.md")
                self.inner = "wrote"
            except BaseException as exc:  # (kept to assert on; the outer write goes on)
                self.inner = exc
        return super().embed(texts)


def test_a_write_from_inside_the_clients_own_write_is_refused_not_a_deadlock(
    tmp_path: Path,
) -> None:
    emb = _CallsBack()
    c = Treehop(tmp_path / "idx", embedder=emb, tagger=None)
    emb.client = c
    out: list[Any] = []
    done = threading.Event()

    def outer() -> None:
        try:
            out.append(c.add_resource("Outer trigger text", target_uri="viking://resources/out.md"))
        except BaseException as exc:
            out.append(exc)
        done.set()

    threading.Thread(target=outer, daemon=True).start()
    try:
        assert done.wait(BOUND), "the outer write and its nested write hung"
        assert isinstance(emb.inner, IndexLockedError), emb.inner
        assert out[0].root_uri == "viking://resources/out.md"
        assert c.read("viking://resources/out.md").startswith("Outer trigger text")
        uris = [e.uri for e in c.ls("viking://resources")]
        assert not any("in.md" in u for u in uris)
        # the client's lock is free again: a later write of the same client runs
        c.add_resource("Later text", target_uri="viking://resources/later.md")
    finally:
        c.close()


def test_a_write_cancelled_while_it_waits_for_the_store_lock_holds_nothing(
    tmp_path: Path,
) -> None:
    async def go() -> None:
        path = tmp_path / "idx"
        async with AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as a:
            await a.add_resource("Seed text", target_uri="viking://resources/seed.md")
            b = AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None)
            held, release = threading.Event(), threading.Event()

            def holder() -> None:  # (another thread, another context: no shared hold)
                async def hold() -> None:
                    async with aholding_store(a.store):
                        held.set()
                        await asyncio.to_thread(release.wait, BOUND)

                asyncio.run(hold())

            t = threading.Thread(target=holder)
            t.start()
            try:
                assert await asyncio.to_thread(held.wait, BOUND)
                task = asyncio.ensure_future(
                    b.add_resource("Waiting text", target_uri="viking://resources/w.md")
                )
                loop = asyncio.get_running_loop()
                give_up = loop.time() + BOUND
                while store_writers_waiting(b.store) == 0:
                    assert loop.time() < give_up and not task.done()
                    await asyncio.sleep(0)
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task
                assert store_writers_waiting(b.store) == 0
                assert not b.writer.lock.locked()
            finally:
                release.set()
                await asyncio.to_thread(t.join, BOUND)
            res = await asyncio.wait_for(
                b.add_resource("After text", target_uri="viking://resources/after.md"), BOUND
            )
            assert res.root_uri == "viking://resources/after.md"
            uris = [e.uri for e in await a.ls("viking://resources")]
            assert not any(u.endswith("w.md") for u in uris)
            await b.close()

    asyncio.run(go())


def _in_thread(fn: Any) -> threading.Thread:
    t = threading.Thread(target=lambda: asyncio.run(fn()), daemon=True)
    t.start()
    return t


def _wait_until(cond: Any) -> None:
    """Spin (yielding the GIL) until ``cond()``; a failure past :data:`BOUND`."""
    give_up = threading.Event()
    timer = threading.Timer(BOUND, give_up.set)
    timer.start()
    try:
        while not cond():
            assert not give_up.wait(0.001), "never happened"
    finally:
        timer.cancel()


def test_a_writer_that_retakes_the_store_lock_at_once_waits_behind_one_already_waiting(
    tmp_path: Path,
) -> None:
    """First come, first served: writer A lets the lock go and asks again at once, while B
    already waits for it. Polled alone, A took it back before B's next try (a client
    writing in a loop starved the others of one process until their ``lock_timeout``)."""
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=BOUND)
    order: list[str] = []
    held, release, b_done = threading.Event(), threading.Event(), threading.Event()

    async def a() -> None:
        async with aholding_store(store):
            held.set()
            await asyncio.to_thread(release.wait, BOUND)
        async with aholding_store(store):  # (at once: B is in line)
            order.append("A again")

    async def b() -> None:
        async with aholding_store(store):
            order.append("B")
        b_done.set()

    ta = _in_thread(a)
    assert held.wait(BOUND)
    tb = _in_thread(b)
    _wait_until(lambda: store_writers_waiting(store) >= 1)
    release.set()
    ta.join(BOUND)
    tb.join(BOUND)
    assert b_done.is_set()
    assert order == ["B", "A again"]


def test_a_waiter_whose_event_loop_is_blocked_does_not_hold_up_the_line(tmp_path: Path) -> None:
    """W waits first, then its event loop blocks (a careless sync call inside a coroutine):
    after a second without a try it loses its place, and B, behind it, writes."""
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=BOUND)
    held, release, blocked, unblock = (threading.Event() for _ in range(4))
    b_wrote = threading.Event()
    w_out: list[Any] = []

    async def a() -> None:
        async with aholding_store(store):
            held.set()
            await asyncio.to_thread(release.wait, BOUND)

    async def w() -> None:
        loop = asyncio.get_running_loop()

        async def write() -> None:
            async with aholding_store(store):
                w_out.append("W")

        task = asyncio.ensure_future(write())
        while store_writers_waiting(store) == 0:
            await asyncio.sleep(0)

        def block() -> None:
            blocked.set()
            unblock.wait(BOUND)

        loop.call_soon(block)
        await task

    async def b() -> None:
        async with aholding_store(store):
            b_wrote.set()

    ta = _in_thread(a)
    assert held.wait(BOUND)
    tw = _in_thread(w)
    assert blocked.wait(BOUND)
    tb = _in_thread(b)
    _wait_until(lambda: store_writers_waiting(store) >= 2)
    release.set()
    try:
        assert b_wrote.wait(BOUND), "B waited for a waiter that could not come back"
    finally:
        unblock.set()
        for t in (ta, tw, tb):
            t.join(BOUND)
    assert w_out == ["W"]


def test_a_memory_writer_that_retakes_its_category_lock_waits_behind_one_waiting(
    tmp_path: Path,
) -> None:
    """The same for a conversation's (a memory category's) lock, which has no deadline in
    a process: a client writing memories in a loop made the others wait for its end."""
    from treehop import memory

    store = EmbeddedStore(tmp_path / "idx", lock_timeout=BOUND)
    where = "viking://user/default/memories"
    order: list[str] = []
    held, release, b_waits = threading.Event(), threading.Event(), threading.Event()

    async def a() -> None:
        async with memory._conversation_lock(store, where):
            held.set()
            await asyncio.to_thread(release.wait, BOUND)
        async with memory._conversation_lock(store, where):
            order.append("A again")

    async def b() -> None:
        take = memory._conversation_lock(store, where)
        entered = asyncio.ensure_future(take.__aenter__())
        await asyncio.sleep(0)  # (one step: B is in line, polling)
        b_waits.set()
        await entered
        order.append("B")
        await take.__aexit__(None, None, None)

    ta = _in_thread(a)
    assert held.wait(BOUND)
    tb = _in_thread(b)
    assert b_waits.wait(BOUND)
    release.set()
    ta.join(BOUND)
    tb.join(BOUND)
    assert order == ["B", "A again"]
