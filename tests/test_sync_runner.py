"""The sync runner: reads on the calling thread's own loop, everything else on the loop thread."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from treehop import Treehop
from treehop._sync import LoopThread, on_caller_loop
from treehop.errors import ClientClosedError
from treehop.rerankers.base import BaseReranker


async def _where() -> tuple[int, int]:
    return threading.get_ident(), id(asyncio.get_running_loop())


def test_run_here_uses_one_loop_per_calling_thread() -> None:
    runner = LoopThread()
    try:
        loop_thread, main_loop = runner.run(_where())
        assert loop_thread != threading.get_ident()
        seen: dict[int, set[int]] = {}
        together = threading.Barrier(3)  # alive at once: no reused thread ids or loop ids

        def call() -> None:
            for _ in range(3):
                ident, loop = runner.run_here(_where())
                seen.setdefault(ident, set()).add(loop)
            together.wait()

        threads = [threading.Thread(target=call) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # each calling thread ran its calls itself, on one loop of its own, reused
        assert set(seen) == {t.ident for t in threads}
        assert all(len(loops) == 1 for loops in seen.values())
        assert len(set().union(*seen.values()) | {main_loop}) == 4
        gc.collect()  # the finished threads' loops were closed with them
        assert not any(not h.loop.is_closed() for h in list(runner._callers))
    finally:
        runner.close()


def test_run_here_falls_back_where_the_caller_runs_a_loop() -> None:
    runner = LoopThread()
    try:
        loop_thread, _ = runner.run(_where())

        async def inside() -> int:
            # like a Jupyter cell: this thread's loop is running, so it cannot be reused and
            # the call goes to the loop thread (blocking this loop, as a sync call does)
            assert not runner.can_run_here()
            return runner.run_here(_where())[0]

        assert asyncio.run(inside()) == loop_thread
        # from the loop thread itself: refused, as before
        with pytest.raises(ClientClosedError):
            runner.run(_call_back(runner))
    finally:
        runner.close()
    with pytest.raises(ClientClosedError):
        runner.run_here(_where())
    assert not runner.can_run_here()


_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("_VAR", default="caller")


class _NeedsALoopToWait:
    """An awaitable that suspends on an object of its own (as on a future) when no loop runs,
    and finishes at once on a loop."""

    def __await__(self) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            yield object()
        return "waited"


def test_run_inline_drives_a_read_without_a_loop_and_falls_back_when_it_needs_one() -> None:
    runner = LoopThread()
    made: list[str] = []
    closed: list[str] = []
    try:

        async def inline() -> tuple[int, bool, str]:
            await asyncio.sleep(0)  # a bare yield needs no loop
            _VAR.set("inside")  # a task's own context: never the caller's
            return threading.get_ident(), on_caller_loop(), _VAR.get()

        def make_inline() -> Any:
            made.append("inline")
            return inline()

        assert runner.run_inline(make_inline) == (threading.get_ident(), True, "inside")
        assert made == ["inline"] and _VAR.get() == "caller" and not on_caller_loop()

        # asks for the running loop: run again, on this thread's own loop
        made.clear()

        def make_where() -> Any:
            made.append("where")
            return _where()

        ident, loop = runner.run_inline(make_where)
        assert made == ["where", "where"] and ident == threading.get_ident()
        assert runner.run_here(_where()) == (ident, loop)  # the loop run_here keeps

        # suspends on something only a loop resolves: closed (its finally ran), run again
        made.clear()

        async def waits() -> str:
            try:
                return str(await _NeedsALoopToWait())
            finally:
                closed.append("closed")

        def make_waits() -> Any:
            made.append("waits")
            return waits()

        assert runner.run_inline(make_waits) == "waited"
        assert made == ["waits", "waits"] and closed == ["closed", "closed"]

        # any other error is the call's own: raised, not run again
        made.clear()

        async def fails() -> None:
            raise RuntimeError("the store's own error")

        def make_fails() -> Any:
            made.append("fails")
            return fails()

        with pytest.raises(RuntimeError, match="store's own"):
            runner.run_inline(make_fails)
        assert made == ["fails"] and not on_caller_loop()

        # a caller whose thread runs a loop: the call goes to the loop thread, once
        loop_thread, _ = runner.run(_where())
        made.clear()

        async def inside() -> int:
            return runner.run_inline(make_where)[0]

        assert asyncio.run(inside()) == loop_thread and made == ["where"]
    finally:
        runner.close()
    with pytest.raises(ClientClosedError):
        runner.run_inline(make_where)


async def _call_back(runner: LoopThread) -> Any:
    return runner.run(_where())


def test_sync_find_runs_on_the_callers_loop_unless_state_is_loop_bound(
    tmp_path: Path, bow: Any
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(6):
        (src / f"f{i}.md").write_text(f"# doc {i}\n\nalpha beta gamma {i} delta\n")
    with Treehop(tmp_path / "i", embedder=bow, tagger=None) as th:
        th.add_resource(src, target_uri="viking://resources/src")
        store = th.store
        where: list[int] = []
        original = store.get

        def spy(uris: Sequence[str]) -> Any:
            where.append(threading.get_ident())
            return original(uris)

        store.get = spy  # type: ignore[method-assign]
        want = [m.uri for m in th.find("alpha delta", limit=3).resources]
        assert want and threading.get_ident() in where  # ran on this thread's own loop
        where.clear()
        got = [m.uri for m in th.find(query="alpha delta", limit=3).resources]
        assert got == want and threading.get_ident() in where

        class LoopBound(BaseReranker):
            name = "loop-bound"

            def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
                return [0.0] * len(documents)

            async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
                return self.rerank(query, documents)

        th.aio.reranker = LoopBound()
        where.clear()
        assert [m.uri for m in th.find("alpha delta", limit=3).resources] == want
        assert where and threading.get_ident() not in where  # on the client's loop thread
        th.aio.reranker = BaseReranker()
        assert th._reads_anywhere()


def test_ctrl_c_cancels_the_running_call_in_its_own_context() -> None:
    """A real SIGINT while a sync call waits: the call's task is cancelled and unwinds on
    its loop, in its own context (a context variable's ``reset`` in its ``finally`` works),
    and the ``KeyboardInterrupt`` reaches the caller at once. Before, the task was left
    running, then destroyed pending when the client closed ("Task was destroyed but it is
    pending!") and its ``finally`` failed ("created in a different Context")."""
    import os
    import signal
    import time

    from treehop._sync import LoopThread

    var: contextvars.ContextVar[str] = contextvars.ContextVar("probe", default="")
    seen: list[str] = []

    async def long_call() -> None:
        token = var.set("inside")
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        finally:
            var.reset(token)  # raises ValueError when run in another context
            seen.append("reset")

    runner = LoopThread()
    # (a process started in the background without job control inherits SIGINT ignored, and
    # Python then leaves it ignored: the Ctrl-C this test sends would never arrive)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            runner.run(long_call())
        assert time.monotonic() - t0 < 2.0
        assert seen == ["cancelled", "reset"]
        assert runner.run(asyncio.sleep(0, "still usable")) == "still usable"
    finally:
        timer.cancel()
        runner.close()
        signal.signal(signal.SIGINT, previous)
