"""How long a sync client's ``close()`` takes after an interrupted call (helper leftovers69c,
bench/README.md "(helper leftovers69c)"; stop 68's open item from helper leftovers68b: "a
close right after an interrupted call waits up to 2 s").

Measured: the close is prompt (milliseconds) when the interrupted call left nothing running;
it waits only for a worker thread the interrupted call handed work to and that still runs
(a plug-in call, a remote store's request), up to ``CANCEL_GRACE_S + WIND_DOWN_S`` (3 s) on
the loop thread: ``_join_workers``, so that a cancelled write's request is not cut by the
pools the close shuts. These tests pin both sides; they pass on d32e6e34 too (no change was
needed: the 2 s is that bound, met only with a worker still running).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import signal
import threading
import time
from collections.abc import Callable

import pytest

from treehop import Treehop
from treehop._sync import CANCEL_GRACE_S, WIND_DOWN_S

from treehop_test_doubles import BagOfWordsEmbedder


def _interrupted(run: Callable[[], object]) -> None:
    """``run()`` (a call that never ends by itself) interrupted as Ctrl-C interrupts it: a
    real SIGINT (``_thread.interrupt_main`` only sets Python's flag, which a loop waiting
    in ``select`` reads when its timer ends: 60 s)."""
    # (Python's own Ctrl-C handler, whatever the process had: a process started in the
    # background without job control inherits SIGINT ignored, and an earlier test or an
    # event loop may have put another handler in place; the full CI run reached this file
    # with one such, and the interrupt never arrived: test_sync_runner does the same)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run()
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("where", ["loop thread", "calling thread's loop"])
def test_close_after_an_interrupted_call_is_prompt_when_nothing_runs(where: str) -> None:
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    worker_done = threading.Event()

    async def call() -> None:
        await asyncio.to_thread(lambda: (time.sleep(0.05), worker_done.set()))
        await asyncio.sleep(60)

    runner = client._runner
    _interrupted(lambda: client.run(call()) if where == "loop thread" else runner.run_here(call()))
    assert worker_done.wait(5)
    began = time.monotonic()
    client.close()
    assert time.monotonic() - began < 0.5


def test_close_waits_for_a_worker_the_interrupted_call_left_running_within_the_bound() -> None:
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    release = threading.Event()

    async def call() -> None:
        await asyncio.to_thread(release.wait, 30)

    _interrupted(lambda: client.run(call()))
    began = time.monotonic()
    client.close()
    took = time.monotonic() - began
    release.set()
    assert 0.5 < took < CANCEL_GRACE_S + WIND_DOWN_S + 1.0, took


def test_an_interrupted_call_on_the_calling_threads_loop_unwinds_before_the_interrupt() -> None:
    # d32e6e34: the task stayed pending on the thread's loop; its finally ran only when the
    # garbage collector closed it after the client's close, outside its context (the reset
    # of a context variable it set failed there)
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    seen: list[str] = []
    var: contextvars.ContextVar[str] = contextvars.ContextVar("leftovers69c", default="unset")

    async def call() -> None:
        token = var.set("in the call")
        try:
            await asyncio.sleep(60)
        finally:
            var.reset(token)  # (raises ValueError in another context)
            seen.append("unwound")

    _interrupted(lambda: client._runner.run_here(call()))
    assert seen == ["unwound"]
    assert var.get() == "unset"
    client.close()


def test_a_failed_call_on_the_calling_threads_loop_still_raises_its_error_control() -> None:
    # control (passes on d32e6e34): an error of the call itself reaches the caller unchanged
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)

    async def call() -> None:
        await asyncio.sleep(0)
        raise LookupError("the call's own")

    with pytest.raises(LookupError, match="the call's own"):
        client._runner.run_here(call())

    async def answer() -> int:
        await asyncio.sleep(0)
        return 7

    assert client._runner.run_here(answer()) == 7
    client.close()
