"""Running the async core from synchronous code, safely even inside a running event loop.

The sync client owns one daemon thread with its own event loop and submits coroutines to it.
This works the same in a script, in Jupyter (whose loop is already running) and inside another
framework's async code, where ``asyncio.run`` would fail. Writes, and anything holding
loop-bound state (HTTP connection pools), run there.

Reads that touch no loop-bound state may instead run on an event loop owned by the *calling*
thread (:meth:`LoopThread.run_here`): with one loop thread, concurrent sync calls from several
threads were funnelled through it and could never run their Python or their GIL-free numpy /
HNSW parts side by side (2 threads gave 0.7-0.9x the QPS of one). Each calling thread gets
one loop, reused by its later calls and closed when the thread ends or the client closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from .errors import ClientClosedError

T = TypeVar("T")

CANCEL_GRACE_S = 1.0
"""How long an interrupted sync call waits for its cancelled task to unwind (its ``finally``
blocks; work already handed to a worker thread is not waited for)."""

_here = threading.local()


def on_caller_loop() -> bool:
    """Whether this thread is running a call on its own loop (:meth:`LoopThread.run_here`):
    nothing else shares that loop, so a blocking read gains nothing from a worker thread and
    would pay for the hop (two thread wake-ups; over 1 ms each on loaded cores)."""
    return bool(getattr(_here, "depth", 0))


WIND_DOWN_S = 2.0
"""How long closing a loop waits, in all, for its async generators to be finalised and then
for its worker threads (the default executor's) to finish the work items they run."""


def _new_loop() -> tuple[asyncio.AbstractEventLoop, ThreadPoolExecutor]:
    """A new event loop and its default executor (asyncio's own, made here so that closing
    the loop can wait for its threads with a deadline: :func:`_join_workers`)."""
    loop = asyncio.new_event_loop()
    executor = ThreadPoolExecutor(thread_name_prefix="asyncio")
    loop.set_default_executor(executor)
    return loop, executor


async def _finalise_asyncgens(timeout: float) -> None:
    """The running loop's ``shutdown_asyncgens()``, given ``timeout`` seconds (what
    ``asyncio.run`` does before it closes its loop).

    Why (helper leftovers68b; stop 67's open item): the sync client's loops were closed
    without it, so an async generator that ties a resource to its loop (the chat model's and
    the embedder's HTTP pools: ``_loop_guard``) never ran its ``finally``: a model used
    through ``Treehop.run`` (or a ``find`` on a calling thread's loop) and then the client
    closed left its pool's socket to the garbage collector (``ResourceWarning: unclosed
    <socket.socket ...>`` and ``unclosed transport``)."""
    loop = asyncio.get_running_loop()
    with contextlib.suppress(Exception):  # (a generator's finally that hangs: given up on)
        await asyncio.wait_for(loop.shutdown_asyncgens(), max(timeout, 0.0))


def _join_workers(executor: ThreadPoolExecutor, timeout: float) -> None:
    """Shut ``executor`` down (work items not started are cancelled) and wait up to
    ``timeout`` seconds for its threads to finish the items they run.

    Why not asyncio's ``shutdown_default_executor``: on Python 3.11 it has no timeout (it
    joins its helper thread without one even when cancelled), so a plug-in call stuck in a
    worker thread would hang ``close()``; a thread still running after the deadline is left
    to finish on its own, as ``loop.close()`` always left them."""
    executor.shutdown(wait=False, cancel_futures=True)
    if timeout <= 0:
        return
    waiter = threading.Thread(target=executor.shutdown, name="treehop-loop-close", daemon=True)
    waiter.start()
    waiter.join(timeout)


class _CallerLoop:
    """The event loop of one calling thread; closed when the thread's storage drops it, or
    when the client closes (:meth:`close`)."""

    def __init__(self) -> None:
        self.loop, self._executor = _new_loop()
        self.busy = threading.Lock()
        """Held while a call runs on the loop (in its thread), and by :meth:`close`, which
        may be called from another thread (the client's ``close()``): the loop is never
        closed, nor run to finalise its generators, under a running call."""

    def close(self) -> None:
        """Finalise the loop's async generators, close it and wait for its worker threads,
        all within :data:`WIND_DOWN_S`; a loop running a call is left as it is (it closes
        when its thread ends). The generators are finalised only where this thread runs no
        other event loop (``run_until_complete`` cannot run there) and the interpreter is
        not exiting."""
        if not self.busy.acquire(blocking=False):
            return
        try:
            loop = self.loop
            if loop.is_closed() or loop.is_running():
                return
            start = time.monotonic()
            if asyncio.events._get_running_loop() is None and not sys.is_finalizing():
                with contextlib.suppress(Exception):
                    loop.run_until_complete(_finalise_asyncgens(WIND_DOWN_S))
            loop.close()
            _join_workers(self._executor, WIND_DOWN_S - (time.monotonic() - start))
        finally:
            self.busy.release()

    def __del__(self) -> None:
        self.close()


_CLOSED_POLL_S = 0.25
"""How often a sync call waiting on the loop thread checks that the thread still runs."""


async def _wind_down() -> None:
    """Cancel every task of the running loop but this one, wait up to
    :data:`CANCEL_GRACE_S` for them to end, then finalise the loop's async generators
    (:func:`_finalise_asyncgens`, up to :data:`WIND_DOWN_S`)."""
    me = asyncio.current_task()
    others = [t for t in asyncio.all_tasks() if t is not me]
    for t in others:
        t.cancel()
    if others:
        await asyncio.wait(others, timeout=CANCEL_GRACE_S)
    await _finalise_asyncgens(WIND_DOWN_S)


def _unwind_here(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any]) -> None:
    """Cancel ``task``, interrupted on the calling thread's ``loop`` (Ctrl-C while the loop
    waited), and run the loop up to :data:`CANCEL_GRACE_S` while it unwinds.

    Why (helper leftovers69c): an interrupt out of ``run_until_complete`` left the call's
    task pending on the thread's loop; its ``finally`` blocks ran only when the garbage
    collector closed the coroutine (after the client's close), in another context, and the
    thread's next call stepped it meanwhile. The loop thread's calls were cancelled so
    already (:meth:`LoopThread._run_cancellable`), as ``asyncio.run`` cancels its task."""
    task.cancel()
    with contextlib.suppress(BaseException):  # (a second Ctrl-C: the first one goes on)
        loop.run_until_complete(asyncio.wait([task], timeout=CANCEL_GRACE_S))


class LoopThread:
    def __init__(self) -> None:
        self._stopping = False
        """Set by :meth:`close`: a task cancelled from then on was cancelled by the close."""
        self._pid = os.getpid()
        """The process the loop thread runs in (a child made by ``os.fork`` has no copy)."""
        self._loop, self._executor = _new_loop()
        self._thread = threading.Thread(target=self._serve, name="treehop-loop", daemon=True)
        self._thread.start()
        self._local = threading.local()
        self._callers: weakref.WeakSet[_CallerLoop] = weakref.WeakSet()
        self._callers_lock = threading.Lock()

    def _serve(self) -> None:
        """The loop thread: the loop runs until :meth:`close` stops it.

        Why a loop around ``run_forever`` (helper attacks71): asyncio lets a task's
        ``KeyboardInterrupt`` / ``SystemExit`` out of ``run_forever`` (a tagger, embedder or
        callback raising one in a worker thread), which ended the thread in the middle of a
        write: the write's task was never resumed, so its rollback never ran (an in-memory
        store kept half of it, the write lock stayed taken) and every later call, ``close``
        included, got :class:`ClientClosedError`. The task that raised holds the exception
        as its result; run again, the loop resumes the tasks awaiting it, which unwind (the
        write rolls back) and hand it to their callers."""
        while True:
            try:
                self._loop.run_forever()
            except (KeyboardInterrupt, SystemExit):
                continue
            return

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop thread and wait for its result.

        In a child made by ``os.fork`` from the process that opened the client there is no
        loop thread (a fork copies only the forking thread): refused, saying so. Why (helper
        attacks67): a write there (reads run in the calling thread and still answer) raised
        "this treehop client was closed before the call ran", about a client nobody closed."""
        if os.getpid() != self._pid:
            coro.close()
            raise ClientClosedError(
                "this treehop client was opened in another process (before os.fork()), and its "
                "event loop thread does not run in this one: open a new client in this process"
            )
        if self._loop.is_closed():
            coro.close()
            raise ClientClosedError("this treehop client is closed")
        if threading.current_thread() is self._thread:
            coro.close()
            raise ClientClosedError(
                "cannot call the sync treehop client from its own event loop (use client.aio)"
            )
        return self._run_cancellable(coro)

    def _run_cancellable(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` as a task on the loop thread; when the caller is interrupted while it
        waits (Ctrl-C: ``KeyboardInterrupt`` in the main thread), cancel the task and give it
        :data:`CANCEL_GRACE_S` to unwind before the interrupt goes on.

        Why not ``run_coroutine_threadsafe(...).result()``: an interrupt there left the task
        running on the loop thread; closing the client then stopped the loop under it
        ("Task was destroyed but it is pending!") and the garbage collector closed the
        coroutine in another context, so its ``finally`` blocks failed (a context variable's
        ``reset``: "created in a different Context"). Cancelled here, the task runs its own
        ``finally`` blocks, in its own context, on its own loop.
        """
        loop = self._loop
        done = threading.Event()
        box: list[asyncio.Task[T]] = []

        def start() -> None:
            if self._stopping:  # (queued as :meth:`close` began: never started, see below)
                done.set()
                return
            task = loop.create_task(coro)
            task.add_done_callback(lambda _t: done.set())
            box.append(task)

        def cancel() -> None:
            if box:
                box[0].cancel()
            else:  # (cannot happen: start() was queued first) never started: close it
                coro.close()
                done.set()

        if self._stopping:
            coro.close()
            raise ClientClosedError("this treehop client is closed")
        try:
            loop.call_soon_threadsafe(start)
        except RuntimeError:  # (closed since :meth:`run` looked: "Event loop is closed")
            coro.close()
            raise ClientClosedError("this treehop client is closed") from None
        try:
            # Until the task is done, or the loop thread has ended: :meth:`close` from
            # another thread stops the loop, and a call whose ``start`` was queued after the
            # stop, or whose task was still pending, waited for ``done`` forever. (A wait
            # with a timeout is the same lock wait; it returns as soon as ``done`` is set.)
            while not done.wait(_CLOSED_POLL_S):
                if not self._thread.is_alive():
                    break
        except BaseException:
            if not loop.is_closed():
                loop.call_soon_threadsafe(cancel)
                done.wait(CANCEL_GRACE_S)
            raise
        if not box:  # (never started: the loop stopped first)
            coro.close()
            raise ClientClosedError("this treehop client was closed before the call ran")
        task = box.pop()
        if not task.done() or (task.cancelled() and self._stopping):
            raise ClientClosedError("this treehop client was closed while the call ran")
        try:
            return task.result()
        finally:
            # The task holds its exception, whose traceback now holds this frame: kept as a
            # local, the task made a reference cycle through every caller's frame, so an
            # object a failed call's caller held (a retriever whose ``invoke`` raised, the
            # client it opened) outlived its last reference until a cyclic collection
            # (helper leftovers69c). ``concurrent.futures.Future.result`` clears its own so.
            del task

    def can_run_here(self) -> bool:
        """Whether the calling thread may run a coroutine to completion itself: it is not the
        loop thread and runs no event loop of its own (Jupyter's cell thread does)."""
        if self._loop.is_closed() or threading.current_thread() is self._thread:
            return False
        # (asyncio's own "is a loop running in this thread" (``asyncio.events.__all__``):
        # ``get_running_loop`` answers no by raising, ~0.6 us of exception per call, and a
        # sync find asks twice)
        return asyncio.events._get_running_loop() is None

    def run_here(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the calling thread's own event loop (see the module docstring); on
        the loop thread instead where the calling thread cannot (:meth:`can_run_here`).

        Only for coroutines that use no loop-bound state: they may run on several loops at
        once, one per calling thread.
        """
        if not self.can_run_here():
            return self.run(coro)
        holder: _CallerLoop | None = getattr(self._local, "loop", None)
        if holder is None or holder.loop.is_closed():
            holder = _CallerLoop()
            self._local.loop = holder
            with self._callers_lock:
                self._callers.add(holder)
        with holder.busy:  # (uncontended but for a close() from another thread)
            if holder.loop.is_closed():  # (the client closed since: refused as it says)
                return self.run(coro)
            _here.depth = getattr(_here, "depth", 0) + 1
            loop = holder.loop
            task = loop.create_task(coro)
            try:
                return loop.run_until_complete(task)
            except BaseException:
                if not task.done():
                    _unwind_here(loop, task)
                raise
            finally:
                del task  # (a failed task's traceback holds this frame: see _run_cancellable)
                _here.depth -= 1

    def run_inline(self, make: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """Run the coroutine ``make()`` returns on the calling thread without an event loop
        when it never needs one, else as :meth:`run_here` does.

        Why: a ``find()`` on an in-process store awaits only coroutines that finish at once
        (the store is called inline on the caller's loop, see :func:`on_caller_loop`), so
        ``run_until_complete`` (a task, two loop iterations, a selector poll, all of it
        Python under the GIL) is pure overhead: ~29 us per call of a coroutine that returns
        at once against ~4 us driven by hand (``coroutine.send``), measured here at load ~6;
        ~250 us per find was seen on loaded cores. Such a call finishes in its first step.
        A coroutine that does need a loop asks for it (``asyncio.get_running_loop()``:
        to_thread, wait_for, timeouts, tasks), which raises ``RuntimeError`` here, or
        suspends on a future; it is then closed and ``make()`` runs again on a loop. So
        ``make`` must be safe to run twice: a read (only
        :meth:`~treehop.client.Treehop._find_here` and
        :func:`~treehop.client._blocking_many` call this). Each run gets a copy of the
        caller's context, as a task would, so context variables it sets do not leak into
        the caller.
        """
        if not self.can_run_here():
            return self.run(make())
        coro = make()
        ctx = contextvars.copy_context()
        _here.depth = getattr(_here, "depth", 0) + 1
        try:
            while True:
                try:
                    step = ctx.run(coro.send, None)
                except StopIteration as done:
                    result: T = done.value
                    return result
                except RuntimeError as exc:
                    if _needs_loop(exc):
                        break
                    raise
                if step is not None:  # suspended on a future: it needs a loop
                    coro.close()
                    break
                # a bare ``yield`` (``asyncio.sleep(0)``) needs no loop: resume it
        finally:
            _here.depth -= 1
        return self.run_here(make())

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def close(self) -> None:
        """Stop the loop thread. The calls still running on it (other threads' sync calls)
        are cancelled first and given :data:`CANCEL_GRACE_S` to unwind in their own
        ``finally`` blocks; their callers get :class:`ClientClosedError`. Then the loop's
        async generators are finalised (what ``asyncio.run`` does: an HTTP pool tied to
        the loop is closed on it) and its worker threads waited for, within
        :data:`WIND_DOWN_S` (:func:`_finalise_asyncgens`, :func:`_join_workers`), and the
        calling threads' loops closed the same way."""
        if self._loop.is_closed():
            return
        self._stopping = True
        start = time.monotonic()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            # (the loop stopped already, or a task would not unwind: stopped as it is)
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_wind_down(), self._loop).result(
                    CANCEL_GRACE_S + WIND_DOWN_S + 1.0
                )
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()
        _join_workers(self._executor, CANCEL_GRACE_S + WIND_DOWN_S - (time.monotonic() - start))
        with self._callers_lock:
            callers = list(self._callers)
        for holder in callers:  # a loop still running closes when its thread ends
            holder.close()


def _needs_loop(exc: RuntimeError) -> bool:
    """Whether ``exc`` is asyncio's "no running event loop" (``get_running_loop()`` and
    everything that calls it), whose text asyncio has kept since 3.7."""
    return str(exc) == "no running event loop"
