"""What a caller's plug-in raised, told apart and described for one of treehop's errors.

A caller hands treehop objects of its own: a tagger, an embedder, a reranker, a chat model,
a summarizer, a token counter, a progress callback. Each raises whatever its code raises --
``ValueError``, ``KeyError``, a library's error, even a ``BaseException`` subclass of its own
(a framework's "abort" signal). The project's rule is that only
:class:`~treehop.errors.TreehopError` subclasses leave the library, so every call site of a
plug-in either falls back (reranker, intent planner, session summary, memory extractor, LLM
tagger: the documented behaviour) or raises a typed error built here.

Why ``BaseException`` and not ``Exception``: the sites caught ``Exception`` only, so a plug-in's
``class Abort(BaseException)`` left ``add_resource`` or ``search`` raw (helper leftovers63).
What passes through untouched (:func:`passes`): treehop's own errors (already typed, raised by
a plug-in that wraps treehop), and the signals the interpreter and asyncio give meaning to --
``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit`` and ``asyncio.CancelledError``:
turning those into an ordinary error would stop a Ctrl-C, an exit or a cancellation.

Why the original is not chained as ``__cause__`` (``raise ... from None``): its text and its
own chain are printed whole by every logged traceback, and a client library's error may carry
a URL or header with a key (the embedder guard's rule, :mod:`treehop.embedders.guarded`). The
typed error names the original's type and its message, cut and redacted; the original is
still reachable as ``__context__`` for a debugger (``__suppress_context__`` keeps it out of
printed tracebacks).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from typing import Any, TypeVar

from .errors import IngestError, TreehopError
from .redaction import redact

SIGNALS: tuple[type[BaseException], ...] = (
    KeyboardInterrupt,
    SystemExit,
    GeneratorExit,
    asyncio.CancelledError,
)
"""What no fallback swallows: a plug-in whose failure is a fallback (a reranker, the intent
planner) still lets these through."""
PASS_THROUGH: tuple[type[BaseException], ...] = (TreehopError, *SIGNALS)
"""Raised by a plug-in, these leave treehop as they are (see the module's text)."""
_T = TypeVar("_T")

READ_CHARS = 2000
"""At most this many characters of a plug-in's message are read (and redacted): a message of
a megabyte is cut before the linear redaction passes run over it."""
SHOWN_CHARS = 500
"""At most this many characters of a typed error's message (the fallback reasons' bound)."""


CALLS: ContextVar[Callable[[str], AbstractContextManager[object]] | None] = ContextVar(
    "treehop_plugin_calls", default=None
)
"""What notes each plug-in call made in this context, given the plug-in's name (``"the
tagger"``): a client's write holding its lock sets its
:meth:`~treehop.ingest.writer.WriteLock.calling` here, and :func:`call` (and the embedder's
guard, for an awaited call) enters it around the call.

Why (stop 66's open item): a write of the same client that gives up waiting for the lock says
which plug-in call held it. The writer wrapped its three embedder calls by hand, so a slow
summarizer or tagger was named only as "no progress"; every plug-in call already goes through
:func:`call`, so noting it here names each one, the next one added included. A context
variable: ``asyncio.to_thread`` carries it into the worker threads the tagger and summarizer
run in, and a call outside a write (none set) costs one lookup."""


def noted(what: str) -> AbstractContextManager[object]:
    """Around one call of the plug-in ``what``: its note (:data:`CALLS`) when this context
    sets one, else nothing."""
    note = CALLS.get()
    return nullcontext() if note is None else note(what)


def _retrieve_exception(task: asyncio.Future[Any]) -> None:
    # An abandoned call may still fail later: read its exception so that asyncio does not log
    # "exception was never retrieved".
    if not task.cancelled():
        task.exception()


async def finished_within(task: asyncio.Future[Any], timeout_s: float) -> bool:
    """Wait at most ``timeout_s`` for a plug-in's started call; whether it finished (its
    result or exception is then the task's to read).

    A call still running at the deadline is cancelled and *abandoned*: ``asyncio.wait_for``
    waits for a call that ignores its cancellation and then hands back the late answer, so a
    reranker, planner or summary model that swallows ``CancelledError`` outlived its deadline
    (helper review76). The caller's own cancellation cancels the call and propagates. One
    helper for the planner, the reranker and the session summary, whose deadlines must agree.
    """
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout_s)
    except asyncio.CancelledError:  # the caller's cancellation: the call goes with it
        task.cancel()
        task.add_done_callback(_retrieve_exception)
        raise
    if done:
        return True
    task.cancel()
    task.add_done_callback(_retrieve_exception)
    return False


def in_daemon_thread(
    fn: Callable[..., _T], *args: Any, name: str, **kwargs: Any
) -> concurrent.futures.Future[_T]:
    """``fn(*args, **kwargs)`` in a new daemon thread; its answer (or exception) in the
    returned future, which a caller waits for with its deadline and may then abandon.

    Why not a ``ThreadPoolExecutor``: the interpreter joins its workers at exit, so a sync
    planner or summary call abandoned at its deadline (a model with no timeout of its own)
    held the caller's program open until the model answered (helper review77, left alone;
    fixed by helper pipeline77). A daemon thread is not waited for."""
    future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            result = fn(*args, **kwargs)
        except BaseException as exc:  # (told to the waiting caller, which decides)
            future.set_exception(exc)
        else:
            future.set_result(result)

    try:
        threading.Thread(target=work, name=name, daemon=True).start()
    except BaseException as exc:  # (no thread to be had: told as the call's own failure)
        # Why (helper review78a): ``start`` raising ("can't start new thread", a process at
        # its thread limit) escaped raw out of a sync fold (``add_message``) and a sync plan,
        # where the model's own failure falls back; now the waiting caller reads it from the
        # future and falls back as it does for that failure.
        if is_signal(exc):
            raise
        if not future.done():
            future.set_exception(exc)
    return future


def passes(exc: BaseException) -> bool:
    """Whether ``exc``, raised by a plug-in, leaves treehop as it is. A group of exceptions
    (a plug-in's own task group) holding a signal passes whole: made an ordinary error, a
    Ctrl-C in one of its workers would be swallowed (helper attacks74)."""
    return isinstance(exc, PASS_THROUGH) or is_signal(exc)


def is_signal(exc: BaseException) -> bool:
    """Whether ``exc`` is one of :data:`SIGNALS`, or a group holding one (a fallback must not
    swallow it)."""
    if isinstance(exc, SIGNALS):
        return True
    return isinstance(exc, BaseExceptionGroup) and exc.subgroup(SIGNALS) is not None


def describe(exc: BaseException) -> str:
    """``"TypeName: message"`` of a plug-in's exception: read at most :data:`READ_CHARS`
    characters of it (a ``__str__`` that itself fails reads as ``<unprintable>``), redacted,
    at most :data:`SHOWN_CHARS` characters."""
    try:
        text = str(exc)[:READ_CHARS]
    except BaseException as err:
        # A ``__str__`` raising a plug-in's own ``BaseException`` left raw (helper attacks74);
        # a Ctrl-C meanwhile is still a Ctrl-C.
        if is_signal(err):
            raise
        text = "<unprintable>"
    name = type(exc).__name__[:100]
    return redact(f"{name}: {text}" if text else name)[:SHOWN_CHARS]


def failed(what: str, exc: BaseException) -> str:
    """The message of a typed error for a plug-in that raised: ``what`` (who failed) and
    :func:`describe`'s text, at most :data:`SHOWN_CHARS` characters."""
    return f"{what} failed: {describe(exc)}"[:SHOWN_CHARS]


def call(
    what: str,
    error: Callable[[str], TreehopError],
    fn: Callable[..., _T],
    *args: Any,
    **kwargs: Any,
) -> _T:
    """``fn(*args, **kwargs)``, a plug-in's method: what it raises leaves as ``error`` (a
    typed error class) with :func:`failed`'s message, unless it :func:`passes`. The call is
    noted as ``what``'s (:func:`noted`)."""
    try:
        with noted(what):
            out = fn(*args, **kwargs)
    except BaseException as exc:
        if passes(exc):
            raise
        raise error(failed(what, exc)) from None
    if inspect.isawaitable(out):
        # An ``async def`` where treehop calls a plain function (an async progress callback
        # beside an ``AsyncTreehop``, an async summarizer or tagger): its coroutine never
        # ran -- a progress callback's every report was lost in silence, the others were a
        # shape error naming "coroutine", each with a "never awaited" warning (helper
        # attacks75). Closed, never awaited here (``GuardedStore`` does the same).
        close = getattr(out, "close", None) if inspect.iscoroutine(out) else None
        if close is not None:
            close()
        raise error(
            f"{what[:200]} answered a coroutine (an async function); treehop calls it "
            "synchronously (from a worker thread under an async client): make it a plain "
            "function"
        )
    return out


def report(progress: Callable[[str, int, int], object], stage: str, done: int, total: int) -> None:
    """Call a caller's ``progress(stage, done, total)`` callback: what it raises leaves as
    :class:`~treehop.errors.IngestError` (the write it interrupts is rolled back as for any
    failure: a directory ingest keeps its committed batches), unless it :func:`passes`."""
    call("the progress callback", IngestError, progress, stage, done, total)
