"""What every framework adapter needs from the core, written once (no framework imported here).

Why a kit: the LangChain and LlamaIndex adapters used to carry their own copies of the same
plumbing (an event-loop thread each, the ``KnowledgeSource`` protocol and its checks, calls
dispatched by method-name strings that returned ``Any``). Here it is once and typed, so an
adapter only translates its framework's names:

- **Running the async core from sync code**: a sync :class:`~treehop.Treehop` runs work on
  its own loop thread (:meth:`Treehop.run`); an :class:`~treehop.AsyncTreehop` used from sync
  code runs on one shared background loop (:func:`run_sync`), the same
  :class:`~treehop._sync.LoopThread` the sync client uses. One persistent loop rather than
  ``asyncio.run`` per call, because HTTP clients inside models and rerankers keep connection
  pools bound to the loop that opened them, and ``asyncio.run`` fails where the caller already
  runs a loop (Jupyter, an async web app calling a sync chain).
- **Typed calls**: :func:`call` / :func:`acall` take an :class:`AsyncTreehop` method itself
  (``call(client, AsyncTreehop.ls, uri)``), so arguments and results are checked by mypy;
  :func:`find` / :func:`afind` also accept a :class:`KnowledgeSource`.
- **Knowledge sources**: a read-only source answering ``find()`` from an index treehop did not
  build (:class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`), matched structurally so
  that importing an adapter never imports a vendor SDK; :func:`is_knowledge_source` is the one
  check.
- **Options**: adapters map their own names onto :class:`~treehop.search_options.SearchKwargs`
  (:func:`shared_options` reads the ones they name like the core); the core validates them.
- **Results**: :func:`top_hits` (:meth:`FindResult.top`, the top-k cut keeping diffused
  neighbours); the stage events are :mod:`treehop.stage_events`.
- **Ingest**: :func:`add_records` / :func:`aadd_records` with the placement options declared
  once (:class:`~treehop.ingest.records.PlacementKwargs`), :func:`documents_of`;
  :func:`plain_metadata` (a numpy number, a path, a date as the JSON value it equals).
- **Progress**: :func:`progress_reporter` turns a framework's ``show_progress`` (a bool, or
  the core's ``(stage, done, total)`` callback) into that callback: a tqdm bar on a terminal
  or in a notebook when tqdm is installed, else plain stderr lines a log file can hold.
- **Vector stores**: :class:`PassageIndex` (the client, opened or given, its passages under a
  base URI, the scoped search and the vectors MMR needs) and :class:`IndexedStore`, the
  accessors both framework stores expose; :func:`reject_extra` refuses unknown framework
  keyword arguments.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import difflib
import functools
import logging
import math
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path, PurePath
from typing import (
    Any,
    Concatenate,
    ParamSpec,
    Protocol,
    Self,
    TypedDict,
    TypeGuard,
    TypeVar,
    Unpack,
    cast,
    runtime_checkable,
)

import numpy as np
from typing_extensions import TypeIs

from . import uri as urimod
from ._sync import LoopThread
from .arguments import (
    MAX_METADATA_DEPTH,
    PLAIN_NUMBERS,
    check_context_types,
    check_target_uris,
    json_bytes_problem,
)
from .client import (
    TINY_QUERY_NORM,
    AsyncTreehop,
    Treehop,
    _check_query_vector,
    _unknown_targets,
    scaled_query_row,
)
from .client_readers import MIN_SPLIT_FIND_MANY
from .embedders.base import Embedder
from .errors import (
    IngestError,
    InvalidQueryError,
    NotFoundError,
    TreehopError,
    UnknownArgumentError,
)
from .filters import MetadataFilter, ShownField, show_fields
from .ingest import records as recmod
from .ingest.markup import html_to_markdown, html_visible_text
from .ingest.records import IngestRecord, PlacementKwargs
from .ingest.writer import ProgressCallback
from .memory import MAX_TURN_CHARS
from .models import PROVENANCE_KEYS, ContextType, FindResult, MatchedContext, Node
from .redaction import first_few, listed, redact, shown_name
from .search_options import SearchKwargs
from .secrets import SECRET_NAME_PARTS
from .stores.base import CountingStore, VectorStore
from .validation import (
    MAX_LIMIT,
    MAX_QUERY_CHARS,
    as_list,
    check_limit,
    check_query,
    check_strings,
    check_threshold,
    integral,
    is_blank,
    shown_value,
)

T = TypeVar("T")
P = ParamSpec("P")

TreehopClient = Treehop | AsyncTreehop
"""A sync or an async treehop client."""


@runtime_checkable
class KnowledgeSource(Protocol):
    """A read-only source answering treehop's ``find()``, with no treehop tree behind it.

    ``find`` takes treehop's search options (:class:`~treehop.search_options.SearchKwargs`,
    so a misspelt option is a type error) and refuses, with a typed error, the ones it cannot
    honour; ``afind`` is its awaitable twin (a thread for a sync SDK). There is no store (so no
    CHILD relationships and no chunk counts), no tags, no sessions and no ``search()``: the
    adapters refuse options that need them instead of dropping them. ``doc_id_of(uri)``, when
    present, checks a ``target_uri`` at construction.
    :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource` is one.
    """

    def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult: ...

    async def afind(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult: ...


RetrieverClient = Treehop | AsyncTreehop | KnowledgeSource
"""What a retriever queries: a treehop client or a knowledge source."""


def is_knowledge_source(client: object) -> TypeIs[KnowledgeSource]:
    """True for a find-only source (anything with ``find`` and ``afind`` but no tree)."""
    return not isinstance(client, Treehop | AsyncTreehop) and isinstance(client, KnowledgeSource)


MAX_NUMBER_TEXT_CHARS = 64
"""The longest text :func:`number_text_hint` reads as a number (far above any bound a
person writes; a longer text gets no hint, so the check stays a constant cost)."""


def number_text_hint(value: object) -> str:
    """The part of a range refusal for a bound given as text that spells a finite number
    (``"2020"``, ``" 5e3 "``), else ``""``.

    Why (helper usage79): ``{"year": {"$gte": "2020"}}`` (LangChain) and
    ``MetadataFilter(key="file_size", value="5000", operator=">")`` (LlamaIndex: its
    ``value`` keeps a string as given, and a filter built from JSON or by an LLM's
    structured output has one) were refused with the date advice ("store a datetime ...")
    alone, which says nothing to a user who meant the number. Not converted: a range
    compares stored numbers, and a value stored as the text ``"2020"`` would still not
    match, so the refusal names both ways out."""
    if not isinstance(value, str) or len(value) > MAX_NUMBER_TEXT_CHARS:
        return ""
    text = value.strip()
    number: int | float
    try:
        number = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return ""
        if not math.isfinite(number):
            return ""
    return (
        f"; {shown_value(value)} is text: give the number {number!r} (and store the "
        "metadata as a number: a value stored as text has no range here)"
    )


def check_source_targets(source: KnowledgeSource, targets: Iterable[str]) -> None:
    """Refuse, before anything is sent, a ``target_uri`` a source cannot scope to: one that is
    not one of its documents (when the source can tell, through ``doc_id_of``)."""
    doc_id_of = getattr(source, "doc_id_of", None)
    if callable(doc_id_of):
        for uri in targets:
            doc_id_of(uri)  # InvalidURIError for a URI that is not one of its documents


def source_refusal(source: KnowledgeSource, option: str, *, tree: bool = True) -> str:
    """Why ``option`` (in the adapter's words) is refused for a knowledge source: it needs a
    treehop tree's tags (``tree=True``), or ``search()``, which plans over sessions."""
    name = type(source).__name__
    if tree:
        return (
            f"{option} needs a treehop tree; a {name} has no treehop tags: filter on its "
            "documents' meta fields instead"
        )
    return (
        f"{option} needs a treehop client (it plans queries over sessions and context types); "
        f"a {name} answers find() only: use mode='find'"
    )


def check_client(client: object, what: str = "client") -> TreehopClient:
    """``client`` if it is a treehop client, else a typed error naming ``what``."""
    if not isinstance(client, Treehop | AsyncTreehop):
        raise InvalidQueryError(
            f"{what} must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    return client


def check_retriever_client(client: object) -> RetrieverClient:
    """``client`` if a retriever can query it (a treehop client or a knowledge source)."""
    if isinstance(client, Treehop | AsyncTreehop) or is_knowledge_source(client):
        return client
    raise InvalidQueryError(
        "client must be a treehop.Treehop, a treehop.AsyncTreehop or a knowledge source with "
        f"find() and afind() (such as VikingDBKnowledgeSource), got {type(client).__name__}"
    )


def as_async(client: TreehopClient) -> AsyncTreehop:
    """The async client behind ``client`` (itself when it is already async).

    A closed client raises :class:`~treehop.errors.ClientClosedError` here. Why: the
    framework wrappers reach the store through this (a vector store's ``add_texts`` /
    ``get_by_ids``, LangGraph's store, LlamaIndex's ``get_nodes``), not only through the
    client's public methods, and over a closed ``AsyncTreehop`` they kept reading and writing
    where a closed ``Treehop`` raised."""
    aclient = client.aio if isinstance(client, Treehop) else client
    aclient._check_open()
    return aclient


# --------------------------------------------------------------------------- running

_shared_lock = threading.Lock()
_shared: LoopThread | None = None


def _forget_shared_loop_in_forked_child() -> None:
    """In a child made by ``os.fork``: no shared loop (its thread is the parent's: a fork
    copies only the forking thread) and a new guard, so the child's first :func:`run_sync`
    starts its own. Why (helper attacks68): a process that had used a LangChain / LlamaIndex
    wrapper's sync path over an ``AsyncTreehop`` and then forked (a pre-forking server, a
    ``multiprocessing`` pool) left the child the parent's loop: a client the child opened
    itself was refused through every such path with "opened in another process (before
    os.fork()) ... open a new client in this process", which it had done."""
    global _shared, _shared_lock
    _shared = None
    _shared_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_loop_in_forked_child)


def mmr_query_vector(vector: Sequence[float]) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A caller's query vector, already taken by the search (finite, non-zero), as the
    float32 row an integration's MMR compares the candidates with: as given, or, where its
    float32 squares overflow or underflow (values of 1e300 or 1e-50, whose direction the
    search took), scaled to a largest value of 1 as the search scales it
    (:func:`~treehop.client.scaled_query_row`). Why: MMR reads the direction only
    (cosine), and the raw cast of such a vector is infinite or zero, which made LangChain's
    MMR raise ValueError (NaN similarities) and LlamaIndex's rank by overflowed products."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        q = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.sqrt(q.dot(q))) if q.size else 0.0
        if not q.size or TINY_QUERY_NORM <= norm < float("inf"):
            return q
        scaled = scaled_query_row(vector, q)
    return q if scaled is None else scaled  # (None: the search refuses such a vector first)


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code on the shared background loop.

    The loop thread starts on first use (importing an adapter starts no thread) and is
    restarted if it was closed.
    """
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            _shared = LoopThread()
        runner = _shared
    return runner.run(coro)


_log = logging.getLogger("treehop")
"""The package's logger (the one :func:`treehop.redaction.install_log_filter` filters)."""


def close_when_dropped(owner: object, close: Callable[[], object]) -> None:
    """Call ``close()`` once ``owner`` is garbage-collected (:func:`close_aside`; not at
    interpreter exit: the process releases everything then).

    For what an integration opened for its owner alone (a retriever's client opened from a
    path): dropped without ``close()`` it held its store, its files, its loop thread (a sync
    client's) until the process exited, or until a cyclic collection freed the store unsaved
    and its model pools unclosed (helper leftovers68b; usage78's open item). ``close`` must
    not reference ``owner`` (it would keep it alive)."""
    finalizer = weakref.finalize(owner, close_aside, close)
    finalizer.atexit = False


def close_aside(close: Callable[[], object]) -> None:
    """Run ``close()`` in a thread of its own, its failure logged (redacted), never raised.

    For a garbage collection's finaliser: a collection runs them wherever it happens, on a
    client's own loop thread (whose sync close is refused there) or inside a call holding
    the store's lock (which the close takes); the thread waits for both. Not a daemon, and
    joined by the interpreter's exit before its thread pools stop taking work
    (:func:`_join_closes_at_exit`): a close started just before the program ended
    finishes, instead of failing on the pools its store's close uses."""
    thread = threading.Thread(
        target=_close_logged, args=(close,), name="treehop-close-dropped", daemon=False
    )
    with _ASIDE_LOCK:
        _hook_exit_join()
        _ASIDE.add(thread)
    thread.start()


_ASIDE: set[threading.Thread] = set()
"""The :func:`close_aside` threads still running."""
_ASIDE_LOCK = threading.Lock()
_ASIDE_JOIN_S = 30.0
"""How long the interpreter's exit keeps the thread pools taking work for the closes under
way. Not a bound on the exit: a close thread is not a daemon, so Python's exit still joins
one that runs longer, as it did before this join (a close is bounded on its own: a remote
store's by its deadline, a stuck plug-in worker by the client's wind-down); past this, that
close's pool calls fail (logged at DEBUG) and it ends sooner. A shorter bound would only fail
slow closes that would finish; none of them loses a write (each is committed at return).
Measured (helper leftovers70b): a close stuck 8 s held the exit 8 s and more with this at 1 s
as at 30 s."""
_exit_hooked = False
_exiting = False


def _hook_exit_join() -> None:
    """Register :func:`_join_closes_at_exit` once (under :data:`_ASIDE_LOCK`), after
    ``concurrent.futures``' own exit hook, so that it runs first: ``threading``'s exit
    hooks run in reverse order of registration, before the non-daemon threads are joined.
    Registered too late (the interpreter exits already), the close is marked as one
    racing the exit (:func:`_close_logged`)."""
    global _exit_hooked, _exiting
    if _exit_hooked:
        return
    import concurrent.futures.thread  # noqa: F401  (its exit hook registered before ours)

    register = getattr(threading, "_register_atexit", None)
    try:
        if callable(register):
            register(_join_closes_at_exit)
        else:  # pragma: no cover - not CPython
            import atexit

            atexit.register(_join_closes_at_exit)
    except RuntimeError:  # ("can't register atexit after shutdown")
        _exiting = True
    _exit_hooked = True


def _join_closes_at_exit() -> None:
    """The interpreter is exiting: wait (up to :data:`_ASIDE_JOIN_S` in all) for the closes
    :func:`close_aside` started, while the thread pools still take work.

    Why (helper leftovers69d; leftovers69c's open item): a retriever dropped as a script's
    last line started its close, the interpreter's exit then stopped ``concurrent.futures``
    and the close's ``asyncio.to_thread`` (the store's close) failed, printing "closing what
    a dropped object opened failed: RuntimeError('cannot schedule new futures after
    interpreter shutdown')" (4 of 5 runs of a LangChain ``from_path`` probe). Nothing
    written was lost (every write is committed when it returns; the embedded store's own
    exit hook stops its threads), but the client's store and model pools went unclosed and
    the line read as a failure."""
    global _exiting
    _exiting = True
    deadline = time.monotonic() + _ASIDE_JOIN_S
    while True:
        with _ASIDE_LOCK:
            running = [t for t in _ASIDE if t.is_alive()]
        left = deadline - time.monotonic()
        if not running or left <= 0:
            return
        running[0].join(left)


def _close_logged(close: Callable[[], object]) -> None:
    try:
        close()
    except SystemExit:
        raise  # (a request to end the thread, which threading ends quietly: no failure)
    except BaseException as exc:  # (nothing to raise it to: the owner is gone)
        # (a BaseException that is no Exception -- a plug-in's own, asyncio's
        # CancelledError, a KeyboardInterrupt raised by hand -- reached threading's
        # excepthook, which printed its text, a registered key in it, unredacted: helpers
        # attacks83 and leftovers71a; this runs only in the close's own thread)
        # (a close that only began as the interpreter exited, past the join above: its
        # pools refuse work; nothing written is lost, so not a warning)
        quiet = _exiting and isinstance(exc, RuntimeError)
        level = logging.DEBUG if quiet else logging.WARNING
        try:
            shown = repr(exc)
        except Exception:
            # (helper attacks82: a repr that raised escaped this handler, and the thread's
            # excepthook printed the close's exception, its text unredacted, to stderr)
            shown = f"{type(exc).__name__} (its repr raised)"
        _log.log(level, "closing what a dropped object opened failed: %s", redact(shown))
    finally:
        with _ASIDE_LOCK:
            _ASIDE.discard(threading.current_thread())


class ClosesOnExit:
    """``with`` / ``async with`` over a subclass's ``close()`` / ``aclose()``: the
    integrations' retrievers that open a client release it so (one definition for both)."""

    def close(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    async def aclose(self) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def run_on(client: RetrieverClient, coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine over ``client`` from sync code: on a sync client's own loop thread
    (where its write lock and connection pools live), else on the shared loop."""
    return client.run(coro) if isinstance(client, Treehop) else run_sync(coro)


def call(
    client: TreehopClient,
    method: Callable[Concatenate[AsyncTreehop, P], Coroutine[Any, Any, T]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``method`` (an :class:`AsyncTreehop` method, e.g. ``AsyncTreehop.ls``) from sync code.

    Passing the method itself, not its name, keeps the call typed end to end.
    """
    return run_on(client, method(as_async(client), *args, **kwargs))


async def acall(
    client: TreehopClient,
    method: Callable[Concatenate[AsyncTreehop, P], Coroutine[Any, Any, T]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``method`` awaited on the native async client behind ``client`` (never a thread)."""
    return await method(as_async(client), *args, **kwargs)


SHARED_OPTIONS: tuple[str, ...] = (
    "target_uri",
    "score_threshold",
    "dense_weight",
    "include_directories",
    "collapse_chunks",
    "retrieve_count",
    "rerank_threshold",
    "chunk_diffusion_count",
    "chunk_group",
)
"""The search options adapters keep under the core's own names (``mode`` is not one: both
adapters use it for find/search)."""
_OFF_BY_DEFAULT = frozenset({"chunk_diffusion_count", "chunk_group"})


def shared_options(settings: object) -> SearchKwargs:
    """The :data:`SHARED_OPTIONS` an adapter holds (as attributes of ``settings``).

    Unset ones (``None``; a zero diffusion count, ``chunk_group=False``) are left out, so that
    the core's defaults, and a knowledge source's own ``defaults``, stay theirs. The values
    are validated by the core (:meth:`SearchOptions.build` or the source) on each call.
    """
    out: dict[str, Any] = {}
    for name in SHARED_OPTIONS:
        value = getattr(settings, name, None)
        if value is not None and (value or name not in _OFF_BY_DEFAULT):
            out[name] = value
    return cast(SearchKwargs, out)


def find(
    client: RetrieverClient,
    query: str,
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> FindResult:
    """``find()`` on a treehop client or a knowledge source, from sync code. A sync
    :class:`~treehop.Treehop` answers through its own ``find()``: calls from several threads
    then run side by side (or in its reader processes) instead of queueing on its loop
    thread."""
    if is_knowledge_source(client) or isinstance(client, Treehop):
        return client.find(query, context_type=context_type, **options)
    return call(client, AsyncTreehop.find, query, context_type=context_type, **options)


async def afind(
    client: RetrieverClient,
    query: str,
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> FindResult:
    """``find()`` on a treehop client or a knowledge source, awaited.

    A sync :class:`~treehop.Treehop` with ``reader_processes`` whose workers would answer
    (:func:`_overflows_to_readers`) answers through its own ``find()`` in a worker thread:
    concurrent awaits (a LangGraph server's requests, ``abatch``) then overflow to its
    reader processes and use more than one core, as concurrent sync calls do, instead of
    running one after another under this process's interpreter lock. Cancelling the await
    drops the answer; the call itself runs to its end (its deadline bounds it). An
    :class:`~treehop.AsyncTreehop` with ``reader_processes`` spreads concurrent awaits over
    its workers in its own ``find()``."""
    if is_knowledge_source(client):
        return await client.afind(query, context_type=context_type, **options)
    if _overflows_to_readers(client):
        return await asyncio.to_thread(client.find, query, context_type=context_type, **options)
    return await as_async(client).find(query, context_type=context_type, **options)


def _overflows_to_readers(client: RetrieverClient, batch: bool = False) -> TypeGuard[Treehop]:
    """Whether ``client`` is a sync :class:`~treehop.Treehop` whose reader processes run (or,
    for a ``batch``, may start: ``reader_processes="auto"`` keeps them for batches only) and
    would answer a read as it does (no reranker, every write saved, the config they started
    with): its sync ``find()`` / ``find_many()`` then spread concurrent calls over them."""
    return isinstance(client, Treehop) and client._readers_for_call(batch) is not None


def find_many(
    client: TreehopClient,
    queries: Sequence[str],
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> list[FindResult]:
    """``find_many()`` on a treehop client, from sync code (a sync
    :class:`~treehop.Treehop` answers on the calling thread, as :func:`find`)."""
    if isinstance(client, Treehop):
        return client.find_many(queries, context_type=context_type, **options)
    return call(client, AsyncTreehop.find_many, queries, context_type=context_type, **options)


async def afind_many(
    client: TreehopClient,
    queries: Sequence[str],
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> list[FindResult]:
    """``find_many()`` on a treehop client, awaited on the native async client; a sync
    :class:`~treehop.Treehop` whose reader processes would answer runs its own
    ``find_many()`` in a worker thread, which splits a large batch over them (see
    :func:`afind`)."""
    big = (
        isinstance(queries, Sequence)
        and not isinstance(queries, str | bytes)
        and len(queries) >= MIN_SPLIT_FIND_MANY
    )
    if _overflows_to_readers(client, big):
        return await asyncio.to_thread(
            client.find_many, queries, context_type=context_type, **options
        )
    return await as_async(client).find_many(queries, context_type=context_type, **options)


def top_hits(
    client: RetrieverClient, result: FindResult, k: int, min_score: float | None = None
) -> list[MatchedContext]:
    """The hits an adapter returns: :meth:`FindResult.top` for a treehop client.

    A knowledge source was asked for ``k`` hits already, and the neighbouring chunks its
    service adds are not marked as neighbours, so its result is taken whole (best first).
    """
    if is_knowledge_source(client):
        return [m for m in result.contexts() if min_score is None or m.score >= min_score]
    return result.top(k, min_score=min_score)


def count_held(store: VectorStore, roots: Iterable[str], directories: bool) -> int:
    """How many passages (nodes, with ``directories``) ``store`` holds under ``roots``: exact
    where the store counts, else exact up to :data:`MAX_LIMIT` and ``MAX_LIMIT + 1`` past
    it (all that "every passage" needs to know). One column count per root where the store
    keeps counts (:class:`~treehop.stores.base.CountingStore`), else a walk that stops at
    ``MAX_LIMIT + 1``. Roots are disjoint (a scope's roots or targets; a target inside
    another is counted twice, which only errs towards refusing)."""
    count = 0
    for root in roots:
        if isinstance(store, CountingStore):
            count += store.count_nodes(root, leaves_only=not directories)
        else:
            for node in store.iter_nodes(root):
                count += directories or node.is_leaf
                if count > MAX_LIMIT:
                    return count
        if count > MAX_LIMIT:
            return count
    return count


def check_retrieve_count(k: int, retrieve_count: object, name: str) -> None:
    """A retriever's ``retrieve_count`` beside its ``k`` (named ``name``), refused where the
    two cannot both hold, in the caller's terms: a rerank of ``retrieve_count`` candidates
    returns at most that many, so it must be at least ``k``. The core's check of the search
    names the search's limit instead, and for a ``k`` above one search's limit ("everything",
    :func:`whole_limit`) that was "must be >= limit (1000)" for a ``k=5000`` the caller never
    saw become 1000. Only a whole-number ``retrieve_count`` is compared (its type and range
    are the core's checks); ``k=0`` (nothing, or LlamaIndex's "no limit") is not."""
    if type(retrieve_count) is not int or min(k, MAX_LIMIT) <= retrieve_count or k == 0:
        return  # (k above the limit searches for MAX_LIMIT: a retrieve_count of it holds)
    if k > MAX_LIMIT:
        raise InvalidQueryError(
            f"retrieve_count ({retrieve_count}) is below {name} ({k}): {name} above "
            f"{MAX_LIMIT} asks for every passage of the scope (up to {MAX_LIMIT}, one "
            f"search's limit), and a rerank of retrieve_count candidates returns at most "
            f"retrieve_count; give retrieve_count={MAX_LIMIT}, or leave it out (the rerank "
            f"then scores every candidate returned)"
        )
    raise InvalidQueryError(
        f"retrieve_count ({retrieve_count}) must be >= {name} ({k}): a rerank of "
        f"retrieve_count candidates returns at most retrieve_count"
    )


async def whole_limit(
    client: RetrieverClient,
    k: int,
    name: str,
    *,
    target_uri: str | Sequence[str] | None = None,
    context_types: Sequence[ContextType | str] | ContextType | str | None = None,
    directories: bool = False,
) -> int:
    """A retriever's ``k`` (already checked as an ``int >= 0``) as a search's limit.

    Up to :data:`MAX_LIMIT` it is itself. Above it the user asks for "everything", as
    LangChain's ``VectorStoreRetriever`` and LlamaIndex's ``VectorIndexRetriever`` answer
    ``k=5000`` with every document their store holds (and our vector stores do,
    :meth:`PassageIndex.checked_k`): when the retriever's scope (its targets, else the roots of
    its context types, else every root of the user) holds at most ``MAX_LIMIT`` passages
    (nodes, with ``directories``) it is ``MAX_LIMIT``, the most one search returns. A larger
    scope is refused, never cut short in silence; counting stops at ``MAX_LIMIT + 1``, so a big
    index is not walked whole. A knowledge source cannot say what it holds, so there "every
    document" is not known and ``k`` above one search's limit is refused, saying so.
    """
    if k <= MAX_LIMIT:
        return k
    shown = shown_value(k)
    bound = f"{name} above {MAX_LIMIT} (one search's limit, got {shown}) asks for everything"
    if is_knowledge_source(client):
        raise InvalidQueryError(
            f"{bound}, and a {type(client).__name__} cannot say how many documents it holds: "
            f"give {name} of at most {MAX_LIMIT}"
        )
    aclient = as_async(client)
    ctypes = check_context_types(context_types) or []

    def held() -> int:
        targets = as_list(target_uri)
        if targets or len(ctypes) <= 1:
            roots = aclient._roots(targets or None, ctypes[0] if ctypes else None)
        else:
            roots = [aclient.root(c) for c in dict.fromkeys(ctypes)]
        return count_held(aclient.store, roots, directories)

    if await aclient._io(held) > MAX_LIMIT:
        what = "nodes" if directories else "passages"
        raise InvalidQueryError(
            f"{bound}, but the retriever's scope holds more than {MAX_LIMIT} {what}, more "
            f"than one search returns: give {name} of at most {MAX_LIMIT}, or narrow the "
            "scope with target_uri"
        )
    return MAX_LIMIT


async def acheck_filter_fields(
    client: TreehopClient,
    spec: Mapping[str, Any] | None,
    provenance: Iterable[str] = (),
    *,
    tags: Sequence[str | Sequence[str] | None] = (),
    shown: Sequence[ShownField] = (),
    scope_empty: bool = False,
) -> None:
    """:func:`treehop.ingest.records.check_filter_fields` awaited: off the event loop when the
    store is remote (the check may read the store), inline otherwise. ``tags``: the call's
    tag filters (``tags``, ``tags_all``), whose labels must exist as the fields must;
    ``shown``: the keys the integration shows (:class:`~treehop.filters.ShownField`);
    ``scope_empty``: nothing is stored in the caller's scope yet (no field is a typo)."""
    if not spec and not any(tags):
        return
    aclient = as_async(client)
    check = functools.partial(
        recmod.check_filter_fields, tags=tags, shown=shown, scope_empty=scope_empty
    )
    if aclient.store.capabilities.remote:
        await asyncio.to_thread(check, aclient, spec, provenance)
    else:
        check(aclient, spec, provenance)


# --------------------------------------------------------------------------- progress


class _ProgressLines:
    """The core's ``(stage, done, total)`` callback shown to a person: one tqdm bar per stage
    where a bar can be drawn (a terminal, a notebook), else a plain line per stage at most
    every ``every_s`` seconds and at its end, with the rate and the time left."""

    def __init__(self, what: str, stream: Any, every_s: float) -> None:
        self.what, self.stream, self.every_s = what, stream, every_s
        self.bars: dict[str, Any] = {}
        self.started: dict[str, float] = {}
        self.last: dict[str, float] = {}
        self.tqdm = _tqdm_for(stream)

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        t0 = self.started.setdefault(stage, now)
        if self.tqdm is not None:
            bar = self.bars.get(stage)
            if bar is None:
                bar = self.bars[stage] = self.tqdm(
                    total=total, desc=f"{self.what}: {stage}", file=self.stream, leave=True
                )
            bar.total = total
            bar.update(done - bar.n)
            return
        final = done >= total
        if not final and now - self.last.get(stage, -1e9) < self.every_s:
            return
        self.last[stage] = now
        elapsed = now - t0
        rate = done / elapsed if elapsed > 0 else 0.0
        pct = 100.0 * done / total if total else 100.0
        line = f"{self.what}: {stage} {done}/{total} ({pct:.0f}%)"
        if rate > 0:
            line += f", {rate:.1f}/s"
            if not final:
                line += f", ETA {(total - done) / rate:.0f}s"
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def _tqdm_for(stream: Any) -> Any:
    """tqdm's bar class when ``stream`` can show a bar and tqdm is installed, else ``None``."""
    notebook = "ipykernel" in sys.modules
    if not notebook and not (hasattr(stream, "isatty") and stream.isatty()):
        return None
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]
    except ImportError:
        return None
    return tqdm


@contextmanager
def progress_reporter(
    show_progress: bool | ProgressCallback | None, what: str, *, stream: Any = None
) -> Iterator[ProgressCallback | None]:
    """The ``progress=`` callback for a framework's ``show_progress`` argument.

    ``False`` / ``None``: no callback. A callable: itself (the core's ``(stage, done,
    total)``, for a program that draws its own progress). ``True``: a reporter on
    ``stream`` (default ``sys.stderr``): a tqdm bar on a terminal or in a notebook when tqdm
    is installed, otherwise plain lines (``what: embed 128/1000 (13%), 40.1/s, ETA 22s``)
    that a log file or CI output can hold; closed when the block ends. Anything else is an
    :class:`~treehop.errors.InvalidQueryError`, raised before any work.
    """
    if show_progress is None or show_progress is False:
        yield None
        return
    if show_progress is not True:
        if not callable(show_progress):
            raise InvalidQueryError(
                "show_progress must be True, False or a callable (stage, done, total), got "
                f"{type(show_progress).__name__}"
            )
        yield show_progress
        return
    reporter = _ProgressLines(what, stream if stream is not None else sys.stderr, 2.0)
    try:
        yield reporter
    finally:
        reporter.close()


# --------------------------------------------------------------------------- page text


HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
"""MIME types of an HTML page (LlamaIndex's ``SimpleDirectoryReader`` writes ``file_type``)."""
HTML_SUFFIXES = (".html", ".htm", ".xhtml")
_TYPE_KEYS = ("file_type", "mime_type", "content_type", "mimetype")
_NAME_KEYS = ("file_name", "file_path", "source", "filename", "url")
_SNIFF = 4096
_DOC_START = re.compile(r"\s*(?:<\?xml[^>]{0,200}>\s*)?<(?:!doctype\s+html|html[\s>])", re.I)
_ELEMENTS = (
    r"(?:a|abbr|article|aside|b|blockquote|body|br|caption|cite|code|dd|details|dfn|div|dl|dt|"
    r"em|figcaption|figure|footer|form|h[1-6]|head|header|hr|i|img|kbd|li|link|main|meta|nav|"
    r"ol|p|pre|samp|script|section|small|span|strong|style|sub|summary|sup|table|tbody|td|"
    r"tfoot|th|thead|title|tr|tt|u|ul|var)"
)
_MARKUP_TAG = re.compile(
    # an element's tag at a line's start or right after another tag (``</dt><dd>``)
    rf"(?:^|>)[ \t]*</?{_ELEMENTS}[\s>/]"
    # a tag with an attribute (``<dt id="x">``, ``<a href=...>``)
    rf"|<{_ELEMENTS}[ \t\n]{{1,20}}[A-Za-z][\w:.-]{{0,40}}[ \t\n]{{0,20}}="
    # an element closed right around its text (``<b>x</b>``)
    rf"|<({_ELEMENTS})>(?:\S[^<\n]{{0,200}}?)?</\1>",
    re.I | re.M,
)
"""Tags that read as markup, not as a tag *named* in prose ("use the ``<li>`` element"): at
a line's start, next to another tag, with an attribute, or closing around their text. Each
alternative is bounded from its start, so a scan is linear."""
_FENCE_LINE = re.compile(r"[ ]{0,3}(?:```|~~~)")
_CODE_SPAN = re.compile(r"`[^`\n]{1,200}`")


def _without_markdown_code(head: str) -> str:
    """``head`` without Markdown code: fenced blocks (from a fence line to the next) and
    inline code spans, where a Markdown text shows markup as an example."""
    if "`" not in head and "~~~" not in head:
        return head
    kept: list[str] = []
    fenced = False
    for line in head.split("\n"):
        if _FENCE_LINE.match(line):
            fenced = not fenced
        elif not fenced:
            kept.append(line)
    return _CODE_SPAN.sub(" ", "\n".join(kept))


def looks_like_markup(text: str) -> bool:
    """Whether ``text`` (its first few KB) holds HTML markup, not text that names a tag:
    some element's tag reads as markup (:data:`_MARKUP_TAG`) outside Markdown code.

    Why not any tag (as before): a piece of a raw page made only of ``<dl>`` / ``<dt>`` /
    ``<dd>`` / ``<li>`` markup (a Sphinx API page's signature, a contents list) was not
    recognised and was stored as its tags (helper usage75), while a flattened page or a
    Markdown text whose prose says "use the ``<p>`` element", or whose code block shows
    ``<ul>``, was converted as markup and lost those words."""
    return _MARKUP_TAG.search(_without_markdown_code(text[:_SNIFF])) is not None


_NAV_WORDS = frozenset({"prev", "previous", "up", "next", "home", "top", "contents", "index"})
_NAV_LINE = re.compile(r"[A-Za-z]{2,8}")
_NAV_SPAN = 16
_GLUED_FOOTER = re.compile(r"\s*Prev\s*Up\s*Next[^\n]{0,300}Home[^\n]{0,200}$")
_GLUED_NAV = re.compile(
    r"(?P<title>[^\n]{1,160}?)(?P=title)?\s*+Prev\s*+Up\s*+"
    r"(?P<part>(?:[^\n]{0,159}?\S)?)\s*+Home\s*+Next"
)
"""A header glued onto the page's first line (see :func:`_strip_nav_lines`). Each blank run
is possessive (``\\s*+``) and the part ends at a non-blank (or is empty): the same matches,
title and end as ``\\s*Prev\\s*Up\\s*(?P<part>[^\n]{0,160}?)\\s*Home\\s*Next`` (a differential
test), but that pattern split every blank run between its neighbours in every way for each
title length: one 600-character line (``a``, 150 spaces, ``Prev Up``, 440 spaces) took 18 s
of a framework vector store's ``add_texts``."""


def _named_html(metadata: Mapping[str, Any]) -> bool:
    """Whether a document's metadata says it is an HTML page (a MIME type, a file name)."""
    for key in _TYPE_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.split(";", 1)[0].strip().lower() in HTML_TYPES:
            return True
    for key in _NAME_KEYS:
        value = metadata.get(key)
        if isinstance(value, str):
            path = value.split("?", 1)[0].split("#", 1)[0].lower()
            if path.endswith(HTML_SUFFIXES):
                return True
    return False


def is_html(text: str, metadata: Mapping[str, Any]) -> bool:
    """Whether ``text`` is HTML markup to convert: a page that starts like one
    (``<!DOCTYPE html>``, ``<html>``), or markup (:func:`looks_like_markup`) whose metadata
    names an HTML page. Only the first few KB are looked at (linear, and cheap on a large
    batch). Text whose metadata names no HTML page is markup only when it starts like a page:
    a Markdown README opening with ``<div align="center">`` stays Markdown."""
    head = text[:_SNIFF]
    if _DOC_START.match(head):
        return True
    return _named_html(metadata) and looks_like_markup(head)


def _nav_only(line: str) -> bool:
    words = _NAV_LINE.findall(line)
    return bool(words) and len(line.strip()) <= 80 and all(w.lower() in _NAV_WORDS for w in words)


def _prose(line: str) -> bool:
    """A line of running text, where a navigation bar certainly ended (titles are short and
    do not end a sentence)."""
    stripped = line.strip()
    words = len(stripped.split())
    return len(stripped) > 120 or words >= 8 or (words >= 5 and stripped[-1] in ".!?:;,")


def _nav_block_end(lines: Sequence[str]) -> int:
    """How many of ``lines`` (a page's first lines) are its navigation bar: up to the last
    navigation-only line (``Prev``, ``Up``, ``Next``...) among the first :data:`_NAV_SPAN`,
    when at least two are and no line up to it is prose (:func:`_prose`); else 0."""
    end, navs = 0, 0
    for i, line in enumerate(lines[:_NAV_SPAN]):
        if _prose(line):
            break
        if _nav_only(line):
            navs += 1
            end = i + 1
    return end if navs >= 2 else 0


def _strip_nav_lines(text: str) -> str:
    """A flattened page's text without its navigation bars (a DocBook or Sphinx page's
    header and footer, as a loader such as ``BSHTMLLoader`` flattens them: ``Prev``, ``Up``,
    ``Home``, ``Next`` and the neighbouring pages' titles), keeping the page's own title; a
    header glued onto one line (``5.7. Privileges5.7. PrivilegesPrev UpChapter 5. Data
    DefinitionHome Next``) too. Only the first and last :data:`_NAV_SPAN` lines are looked
    at, so prose that mentions "next" is never touched."""
    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if line.strip()]
    if not body:
        return text
    kept = [lines[i] for i in body]
    head = _nav_block_end(kept)
    title = next((ln for ln in kept[:head] if not _nav_only(ln)), None)
    tail = _nav_block_end(kept[head:][::-1])
    if head + tail >= len(kept):
        rest: list[str] = []
    else:
        rest = lines[body[head] : body[len(kept) - tail - 1] + 1]
    if title is not None and (not rest or rest[0].strip() != title.strip()):
        rest.insert(0, title)
    if rest:
        m = _GLUED_NAV.match(rest[0][:600])
        if m is not None:
            rest[0] = (m.group("title") + "\n" + rest[0][m.end() :]).rstrip()
        if _GLUED_FOOTER.match(rest[-1][:600]):
            rest.pop()
    return "\n".join(rest).strip("\n")


def page_text(text: str, metadata: Mapping[str, Any]) -> str:
    """The text treehop stores for a framework document: HTML converted by treehop's own
    converter (:func:`treehop.ingest.markup.html_to_markdown`: headings kept as Markdown
    headings, navigation, headers, footers, scripts and permalinks dropped), as a file
    ingested by ``add_resource`` would be; the text of a page a loader already flattened
    (its metadata names an HTML page) without the navigation lines at its start and end.
    Any other text is returned unchanged.

    Why here: a framework loader hands over either the raw page (LlamaIndex's
    ``SimpleDirectoryReader``, LangChain's ``TextLoader`` and ``RecursiveUrlLoader``) or its
    flattened text (``BSHTMLLoader``); either way the markup or the navigation bar otherwise
    becomes the abstract, the tags and the embedding of every page.
    """
    if is_html(text, metadata):
        return html_to_markdown(text)[0]
    if _named_html(metadata):
        return _strip_nav_lines(text)
    return text


def stored_page_text(text: str, metadata: Mapping[str, Any]) -> tuple[str, bool]:
    """What a vector store keeps for a framework document, and whether that text is only
    *shown* (``True``: embed the document as it came, :attr:`Passage.embed_text`).

    The text is :func:`page_text`; where that is empty for HTML (a piece of a raw page a text
    splitter cut), the piece's visible text (:func:`treehop.ingest.markup.html_visible_text`:
    a local table of contents or a footer as its lines of link text; shown only), else the
    markup as given (opening tags alone, ``<!DOCTYPE html>``: there is no text to keep, and
    the chunk and its id must still exist).

    Why: every other chunk of a raw page is stored and returned as its text; a chunk holding
    navigation alone was stored as raw ``<li><a class=...>`` markup and handed to a reader as
    tags (an agent's find tool answered a Sphinx contents chunk's markup; helper usage74). Its
    link text is what a reader of the page sees. It is still *embedded* as the markup: its
    words are other sections' titles, which the page conversion drops for that reason, and
    embedded as text the DocBook footers of aptitude's manual took 2 of 48 top-4 slots of 12
    questions (0 as markup; helper usage75).
    """
    page = page_text(text, metadata)
    if page.strip():
        return page, False
    if not is_html(text, metadata):
        return text, False
    visible = html_visible_text(text)
    return (visible, True) if visible.strip() else (text, False)


def no_page_text(index: int) -> str:
    """The message for document ``index`` of a tree-ingest batch whose HTML holds no text
    outside navigation. Why: a raw page cut by a text splitter ends in a chunk of its
    navigation footer alone (DocBook's ``div.navfooter``), which LlamaIndex's helper refused
    as "the text is empty (no visible character)" about hundreds of visible characters."""
    return (
        f"document {index}: its HTML page has no text outside navigation (a raw page's "
        "navigation footer cut off by a text splitter?): leave that chunk out or add whole "
        "pages (the vector stores keep such a chunk as given)"
    )


# --------------------------------------------------------------------------- ingest


D = TypeVar("D")


def documents_of(documents: object, kind: type[D], what: str) -> list[D]:
    """A framework's batch of documents, each checked to be a ``kind`` (``what`` names it in
    errors): one document or a string where a list belongs is an :class:`IngestError`."""
    if isinstance(documents, str | bytes | kind) or not isinstance(documents, Iterable):
        raise IngestError(f"documents must be a list of {what} objects")
    out = list(documents)
    for i, doc in enumerate(out):
        if not isinstance(doc, kind):
            raise IngestError(f"document {i}: expected a {what}, got {type(doc).__name__}")
    return out


RESULT_KEYS = frozenset(PROVENANCE_KEYS)
"""The keys every treehop retriever result carries (:meth:`MatchedContext.provenance`)."""


PLACEMENT_KEYS = ("uri", "chunk_index", "tags")
"""The result keys a copy into a client (``add_documents(other, retriever.invoke(q))``) is
placed and tagged by: kept there by :func:`without_result_keys` (``keep=``)."""


def without_result_keys(
    metadata: Mapping[str, Any], extra: Iterable[str] = (), keep: Iterable[str] = ()
) -> Mapping[str, Any]:
    """``metadata`` without treehop's result keys when it is a treehop retriever's result's
    (it holds every key of :data:`RESULT_KEYS`; ``extra``: an integration's own result keys,
    LlamaIndex's ``retrieval_score``), else ``metadata`` itself.

    Why (helper leftovers63b): a ``Document`` or node a treehop retriever returned and a
    program added to a vector store (copying results into another index, caching them)
    stored its ``score``, ``vector_score``, ``found_by``, ``uri``, ``level``, ... as the
    copy's metadata: scores and a place of another search, filterable on the copy and never
    true of it. Every one of them describes the hit, not the document: a result already
    shows them over any stored key of the same name, so nothing the document itself stored
    under these names reached the result to be lost here. Metadata without all of them (a
    document's own ``score`` or ``uri``) is kept as given. ``keep``: result keys the caller
    reads (:data:`PLACEMENT_KEYS`: where a copy into a client goes, its tags)."""
    if not isinstance(metadata, Mapping) or not metadata.keys() >= RESULT_KEYS:
        return metadata
    drop = (RESULT_KEYS | set(extra)) - set(keep)
    return {k: v for k, v in metadata.items() if k not in drop}


_ARRAY_KINDS = frozenset("biufUMO")
"""The numpy array kinds :func:`plain_metadata` stores as lists: booleans, integers, floats
(``float16``-``float64``), text, ``datetime64`` and objects (each item then as a value)."""

Datetimes = Callable[[dt.datetime], Any]
"""How an integration stores a ``datetime`` (LangChain: epoch seconds, LlamaIndex: ISO text)."""


def _where(path: tuple[object, ...]) -> str:
    """A metadata value's place for a refusal: ``metadata['scores'][2]``, each key through
    :func:`shown_name` (cut, escaped, redacted: a key is the caller's text)."""
    return "metadata" + "".join(
        f"[{p}]" if isinstance(p, int) else f"[{shown_name(p, 40)}]" for p in path
    )


_BELOW_NS = frozenset({"ps", "fs", "as"})
"""``datetime64`` units finer than a nanosecond: numpy's conversion factor from years to
them overflows (``np.datetime64(1, "as").astype("datetime64[Y]")`` raises ``OverflowError``,
which escaped a metadata add and a LangChain filter raw: helper attacks79)."""


def datetime64_value(value: np.datetime64) -> dt.datetime | None:
    """A numpy ``datetime64`` as the timezone-aware UTC ``datetime`` it counts, or ``None``
    where no ``datetime`` holds it (``NaT``, a year outside 1..9999, a part below a
    microsecond: converting would change the value).

    Why UTC: a ``datetime64`` is a count from numpy's epoch, 1970-01-01T00:00 UTC (its ISO
    text carries no zone, and pandas' ``Timestamp(v).timestamp()`` reads it as UTC, as
    ``(v - np.datetime64(0, "s")) / np.timedelta64(1, "s")`` does); a naive ``datetime``
    would let the LangChain store read it as local time, another instant on another
    machine."""
    if np.isnat(value):
        return None
    if np.datetime_data(value.dtype)[0] in _BELOW_NS:
        # (numpy cannot convert these units to years, an OverflowError; their whole range,
        # +-106 days at most, fits nanoseconds, so the cast is exact unless a part is finer)
        coarse = value.astype("datetime64[ns]")
        if coarse != value:
            return None
        value = coarse
    year = int(value.astype("datetime64[Y]").astype(np.int64)) + 1970
    if not 1 <= year <= 9999:  # (checked on the year: a cast to us can overflow silently)
        return None
    micro = value.astype("datetime64[us]")
    if micro != value:  # (a nanosecond part, or a unit numpy cannot compare)
        return None
    plain = micro.item()
    if not isinstance(plain, dt.datetime):  # (a date for whole days is not: D units)
        return None
    return plain.replace(tzinfo=dt.UTC)


def _refused(path: tuple[object, ...], why: str) -> IngestError:
    return IngestError(f"{_where(path)}: {why}")


_NO_NUMBER = (
    "is {}, and treehop stores metadata as JSON, which has no such number: store None for a "
    "missing value (a pandas frame: df.astype(object).where(df.notna(), None)), or the value "
    "as text"
)


def _array(
    value: np.ndarray[Any, Any], path: tuple[object, ...], depth: int, datetimes: Datetimes | None
) -> Any:
    """A numpy array as the nested lists it equals (:func:`_plain`'s arrays)."""
    kind = value.dtype.kind
    if kind not in _ARRAY_KINDS or (kind == "f" and value.dtype.itemsize > 8):
        raise _refused(
            path,
            f"a numpy array of {value.dtype} has no JSON value equal to it (arrays of "
            "numbers, booleans, text, datetime64 and Python objects are stored as lists)",
        )
    if kind == "f" and not bool(np.isfinite(value).all()):
        raise _refused(path, _NO_NUMBER.format("an array holding NaN or infinity"))
    if kind == "M":  # (each item a datetime64 scalar: tolist() would give ints for ns)
        if value.ndim == 0:
            return _plain(value[()], path, depth, datetimes)[0]
        return [_plain(v, (*path, i), depth + 1, datetimes)[0] for i, v in enumerate(value)]
    if kind == "O":  # (each item as a value of its own: a path, a date, a NaN ...)
        return _plain(value.tolist(), path, depth, datetimes)[0]
    return value.tolist()


def _stored_datetime(value: dt.datetime, path: tuple[object, ...], datetimes: Datetimes) -> Any:
    """``datetimes(value)``, its failure a refusal naming the place (a year-1 datetime has
    no epoch time in some zones; pandas' ``NaT`` is a ``datetime`` without one).

    A ``tzinfo`` is the caller's code (helper attacks79): what it raises escaped raw unless
    it was a ``ValueError`` (a ``utcoffset`` returning an ``int`` is Python's ``TypeError``),
    and a ``ValueError``'s text, a registered key in it included, was repeated whole. Any
    exception is now the refusal, its text redacted and cut."""
    try:
        return datetimes(value)
    except Exception as exc:
        raise _refused(path, f"{shown_value(value)}: {_exception_text(exc)}") from None


def _exception_text(exc: Exception) -> str:
    """``exc``'s text for a refusal: redacted, at most 300 characters, its type's name where
    its ``__str__`` raises (the caller's own exception)."""
    try:
        text = str(exc)
    except Exception:
        return f"{type(exc).__name__} raised"
    shown = redact(text)
    return shown if len(shown) <= 300 else shown[:300] + "..."


def _plain(
    value: Any, path: tuple[object, ...], depth: int, datetimes: Datetimes | None
) -> tuple[Any, bool]:
    """``value`` as :func:`plain_metadata` stores it, and whether anything changed."""
    if value is np.ma.masked:
        # (a masked array's missing item, met walking a datetime64 one: None, as tolist()
        # gives it for the other kinds; it was refused as "NaN or infinity", numpy's masked
        # constant being a 0-d float array: helper attacks79)
        return None, True
    if isinstance(value, float) and not math.isfinite(value):
        raise _refused(path, _NO_NUMBER.format(repr(value)))
    exact = isinstance(value, PLAIN_NUMBERS) and not isinstance(value, bool | int | float)
    if exact and isinstance(value, np.generic):
        plain = value.item()
        if isinstance(plain, float) and not math.isfinite(plain):
            raise _refused(path, _NO_NUMBER.format(f"{type(value).__name__} {plain!r}"))
        return plain, True
    if isinstance(value, np.datetime64):
        when = datetime64_value(value)
        if when is None:
            raise _refused(
                path,
                f"datetime64 {shown_value(value)} is no datetime (NaT, a year outside "
                "1..9999, or a part below a microsecond): store it as text",
            )
        return (when if datetimes is None else _stored_datetime(when, path, datetimes)), True
    if isinstance(value, dt.datetime):
        if datetimes is None:
            return value, False
        return _stored_datetime(value, path, datetimes), True
    if isinstance(value, PurePath):
        return str(value), True
    if isinstance(value, dt.date):
        return value.isoformat(), True
    if depth >= MAX_METADATA_DEPTH:  # deeper: as given (the core refuses the depth itself)
        return value, False
    if isinstance(value, np.ndarray):
        return _array(value, path, depth, datetimes), True
    if isinstance(value, Mapping):
        pairs = [(k, *_plain(v, (*path, k), depth + 1, datetimes)) for k, v in value.items()]
        if any(changed for _, _, changed in pairs):
            return {k: v for k, v, _ in pairs}, True
        return value, False
    if isinstance(value, list | tuple):
        items = [_plain(v, (*path, i), depth + 1, datetimes) for i, v in enumerate(value)]
        if any(changed for _, changed in items):
            return [v for v, _ in items], True
    return value, False


def plain_metadata(
    metadata: Mapping[str, Any], *, datetimes: Datetimes | None = None, bounded: bool = False
) -> Mapping[str, Any]:
    """``metadata`` with the values a program hands a vector store without thinking of JSON
    as the JSON values they equal: numpy booleans and integers and ``float16`` / ``float32`` /
    ``float64`` as Python ``bool`` / ``int`` / ``float`` (``.item()``, exact), a
    ``pathlib`` path as its text (``str(path)``), a ``datetime.date`` as its ISO text
    (``"2024-01-31"``), a numpy array of numbers, booleans, text, ``datetime64`` or objects
    as the nested lists it equals (``.tolist()``), a ``datetime`` (and a ``datetime64``, as
    the UTC time it counts: :func:`datetime64_value`) as ``datetimes`` stores it, in nested
    lists and dicts too (a tuple holding one comes back a list, as JSON gives any tuple
    back). ``metadata`` itself when nothing changes.

    Why (helper leftovers65c): LangChain's ``InMemoryVectorStore`` and LlamaIndex's
    ``SimpleVectorStore`` keep such values, and treehop stores metadata as JSON: a ``Path``
    as ``source``, a score column of a pandas frame (``np.float32``) or a ``date`` was an
    ``IngestError`` naming the type (LlamaIndex: a raw pydantic ``PydanticSerializationError``
    for numpy). What is converted reads back equal to what was given (``Path(text) ==
    path``, ``date.fromisoformat(text) == date``, ``float(np.float32(x)) == np.float32(x)``,
    ``np.array(back) == array``) and is what LlamaIndex's own ``node_to_metadata_dict``
    stores for a path or a date, so both integrations store the same form. Arrays and
    ``datetime64`` (helper leftovers66b): a pandas loader's row hands them over, and they
    were refused. ``datetimes``: the LangChain store keeps epoch seconds, LlamaIndex ISO
    text (``None``: a ``datetime`` stays as given). ``bounded``: the caller has already
    checked ``metadata`` (or a mapping it holds a subset of) with
    :func:`check_metadata_bounded`, so the bound is not walked a second time.

    Refused with an :class:`~treehop.errors.IngestError` naming the place
    (``metadata['scores'][2]``): a float NaN or infinity, Python's or numpy's, in an array
    too (JSON has no such number: LlamaIndex's own dump stored ``null`` in its place, the
    caller's value silently changed), a ``datetime64`` no ``datetime`` holds, an array of
    complex numbers, bytes, ``timedelta64`` or ``longdouble``. Anything else that is no
    JSON value (a ``longdouble``, an object) is left as given, for the store's own check to
    refuse naming its type."""
    # (walked only within the bound the core holds a passage's metadata to: metadata sharing
    # one list at every level was walked and copied path by path, exponential; over the
    # bound, a cycle or a mapping whose methods raise it is left as given, for the core's
    # typed refusal. Helper attacks78)
    if not bounded and (
        json_bytes_problem(metadata, recmod.MAX_PASSAGE_METADATA_BYTES) is not None
    ):
        return metadata
    out, changed = _plain(metadata, (), 0, datetimes)
    return out if changed else metadata


def check_metadata_bounded(metadata: object, where: str) -> None:
    """An :class:`IngestError` for ``metadata`` the core refuses before writing it out
    (:func:`treehop.arguments.json_bytes_problem`: over a passage's bound as JSON, a cycle,
    a mapping or list whose own methods raise), for an adapter that serialises a node's
    metadata itself before the core sees it (LlamaIndex's ``node_to_metadata_dict``: its
    pydantic dump of metadata sharing one list at every level ran as long as the core's)."""
    problem = json_bytes_problem(metadata, recmod.MAX_PASSAGE_METADATA_BYTES)
    if problem is not None:
        raise IngestError(f"{where}: metadata {problem}")


def add_records(
    client: TreehopClient,
    records: Sequence[IngestRecord],
    placement: PlacementKwargs,
    *,
    path_key: str,
    progress: ProgressCallback | None = None,
) -> list[str]:
    """A framework's documents (already :class:`IngestRecord`\\ s) into the tree, from sync
    code; ``path_key`` is the framework's default source key (``source``, ``file_path``).

    The rules are :func:`treehop.ingest.records.add_records`; an async client's coroutines
    run on the shared background loop.
    """
    opts: PlacementKwargs = {"path_key": path_key}
    opts.update(placement)
    return recmod.add_records(
        check_client(client), records, **opts, run_async=run_sync, progress=progress
    )


async def aadd_records(
    client: TreehopClient,
    records: Sequence[IngestRecord],
    placement: PlacementKwargs,
    *,
    path_key: str,
    progress: ProgressCallback | None = None,
) -> list[str]:
    """The async twin of :func:`add_records` (embedding is awaited, never blocking the loop)."""
    opts: PlacementKwargs = {"path_key": path_key}
    opts.update(placement)
    return await recmod.aadd_records(check_client(client), records, **opts, progress=progress)


# --------------------------------------------------------------------------- vector stores


NO_FLOOR = -1.0e6
"""The score floor of a vector-store search: a vector store returns its top k whatever their
scores, so the core's default floor (0.0), and the descent pruning it drives, apply only when
the caller sets a threshold."""


@dataclass(frozen=True)
class EmbeddingSlot:
    """How a framework's embedding model sits in a treehop client: ``wrap(model)`` is the
    treehop embedder, which keeps the model as ``attr``; ``arg`` is the adapter's name for it."""

    wrap: Callable[[Any], Embedder]
    attr: str
    arg: str


def check_index_exists(path: str | PathLike[str], what: str) -> None:
    """Refuse to open ``path`` for reading when no index was ever saved there.

    A retriever only reads, so ``Treehop("./indx")`` (a typo of ``./index``) opened an empty
    in-memory view that answered ``[]`` to every query, forever, and wrote nothing that would
    show the mistake. Readers of other libraries refuse the same (``FAISS.load_local``,
    LlamaIndex's ``StorageContext.from_defaults(persist_dir=...)``), as does ``treehop find
    --index``. A saved index has ``CURRENT`` (or, while that is being replaced, a
    ``MANIFEST-*.json``); the vector stores, which write, still create an index on a new
    path as Chroma's ``persist_directory`` does.
    """
    if not isinstance(path, str | PathLike):
        raise InvalidQueryError(
            f"{what}: path must be a str or os.PathLike, got {shown_value(path)}"
        )
    p = Path(path)
    if (p / "CURRENT").is_file() or (p.is_dir() and any(p.glob("MANIFEST-*.json"))):
        return
    where = "is a file, not an index directory" if p.is_file() else "holds no treehop index"
    raise NotFoundError(
        f"{what}: {redact(os.fspath(path))} {where}; a retriever reads an existing index: build it "
        "first (a vector store's add_documents, add_documents(client, docs), treehop index "
        "DIR), or pass an open client (Treehop(path)) to start from an empty one"
    )


def open_client(
    client: object,
    path: str | PathLike[str] | None,
    model: object | None,
    slot: EmbeddingSlot,
    user: str = "default",
    tagger: Any = "auto",
) -> tuple[TreehopClient, bool]:
    """The client an adapter works on, and whether the adapter owns (and so closes) it.

    ``client`` wins when given; then ``path`` must be absent and ``model`` (the framework's
    embedding model) must be the very object the client's embedder wraps (one index, one
    vector space). Without a client, a new sync client is opened on ``path`` (``None``: in
    memory) embedding with ``slot.wrap(model)``.
    """
    if client is not None:
        checked = check_client(client)
        if path is not None:
            raise InvalidQueryError("give client or path, not both")
        if model is not None and getattr(as_async(checked).embedder, slot.attr, None) is not model:
            raise InvalidQueryError(
                f"{slot.arg}= differs from the client's embedder; an index has one vector "
                f"space: open the client with an embedder wrapping this {slot.arg}"
            )
        return checked, False
    embedder = slot.wrap(model) if model is not None else None
    return Treehop(path, user=user, embedder=embedder, tagger=tagger), True


class PassageIndexKwargs(TypedDict, total=False):
    """Where a vector store keeps its passages, and how it opens a client of its own.

    - ``base_uri``: the subtree the store writes to and searches in (``viking://resources``).
    - ``path_key``: the metadata key naming a document's source file (the framework's).
    - ``source_root``: absolute source paths are made relative to it (default: to the
      directory all sources of a batch share).
    - ``user`` / ``tagger``: for a client opened here (``"auto"``: keyword tags).
    """

    base_uri: str
    path_key: str | None
    source_root: str | None
    user: str
    tagger: Any


class PassageIndex:
    """The framework-neutral half of a vector store over a treehop subtree.

    Both the LangChain and the LlamaIndex vector stores are this plus their own names: the
    client (given, or opened and then owned), the id-addressed :class:`PassageStore` under
    ``base_uri``, sync access through :func:`run_on`, and the search every query makes (a
    ``find()`` scoped to the base, every chunk its own hit) with the stored vectors MMR needs.
    """

    def __init__(
        self,
        client: TreehopClient,
        owns_client: bool,
        base_uri: str,
        path_key: str | None,
        source_root: str | None,
    ) -> None:
        self.client = client
        self.owns_client = owns_client
        self.passages = recmod.PassageStore(
            client, base_uri=base_uri, path_key=path_key, source_root=source_root
        )

    @classmethod
    def open(
        cls,
        client: object,
        path: str | PathLike[str] | None,
        model: object | None,
        slot: EmbeddingSlot,
        options: PassageIndexKwargs,
        *,
        path_key: str,
        owner: str = "store",
        takes: Sequence[str] = (),
        elsewhere: Mapping[str, str] | None = None,
    ) -> PassageIndex:
        """The index of a vector store: over ``client``, or over a client opened on ``path``
        embedding with ``model`` (see :func:`open_client`); ``path_key`` is the framework's
        default source key. Unknown ``options`` are errors (they arrive as ``**kwargs``): an
        :class:`~treehop.errors.UnknownArgumentError` naming the store (``owner``), what it
        takes (``takes``, its own parameters, then these options) and, for each, the one
        meant or where it goes instead (``elsewhere``; :func:`unknown_arguments`)."""
        unknown = [k for k in options if k not in _INDEX_OPTIONS]
        if unknown:
            raise unknown_arguments(
                owner, unknown, [*takes, *PassageIndexKwargs.__annotations__], elsewhere=elsewhere
            )
        user, tagger = options.get("user", "default"), options.get("tagger", "auto")
        opened, owned = open_client(client, path, model, slot, user, tagger)
        return cls(
            opened,
            owned,
            options.get("base_uri", "viking://resources"),
            options.get("path_key", path_key),
            options.get("source_root"),
        )

    @property
    def aclient(self) -> AsyncTreehop:
        return as_async(self.client)

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return run_on(self.client, coro)

    def close(self) -> None:
        """Close the client if it was opened here."""
        if self.owns_client and isinstance(self.client, Treehop):
            self.client.close()

    async def get(self, ids: Sequence[str]) -> list[Node]:
        """The stored nodes ``ids`` name, in the order asked, unknown ids skipped (LangChain's
        ``get_by_ids`` contract): the store's own records by id or URI
        (:meth:`PassageStore.aget`), and a leaf under the base that another writer stored
        (``treehop index``, ``add_resource``) by its URI, the id every Document or node the
        store's searches return for it carries.

        Why (helper leftovers71e; leftovers71d's open item): over an index ``treehop index``
        wrote, ``store.get_by_ids([doc.id for doc in store.similarity_search(q)])`` answered
        ``[]`` (and LlamaIndex's ``get_nodes(node_ids=...)``): only the ids the store wrote
        were known. A directory, a URI outside the base, a malformed one stay unknown."""
        ids = check_strings(ids, "ids")
        client, base = self.aclient, self.passages.base
        named: dict[str, Node] = {}
        for node in await self.passages.aget(ids):
            shown = client.display(node.uri)
            named.setdefault(shown, node)
            named.setdefault(self.passages.passage_id(node, shown), node)
        rest = [i for i in dict.fromkeys(ids) if i not in named and i.startswith(urimod.SCHEME)]

        def tree_leaves() -> dict[str, Node]:
            uris: dict[str, str] = {}
            for given in rest:
                try:
                    uri = client.resolve(given)
                except TreehopError:
                    continue
                if urimod.is_within(uri, base):
                    uris[given] = uri
            nodes = client.store.get(list(uris.values())) if uris else []
            return {i: n for i, n in zip(uris, nodes, strict=True) if n is not None and n.is_leaf}

        if rest:
            named.update(await client._io(tree_leaves))
        out: dict[str, Node] = {}  # (one node per URI: an id and its URI are one document)
        for given in ids:
            hit = named.get(given)
            if hit is not None:
                out.setdefault(hit.uri, hit)
        return list(out.values())

    async def search(
        self,
        query: str,
        k: int,
        options: SearchKwargs,
        vector: Sequence[float] | None = None,
        provenance: Iterable[str] = (),
        shown: Sequence[ShownField] = (),
    ) -> list[MatchedContext]:
        """The best ``k`` passages for ``query`` (or ``vector``) under the base.

        ``shown``: keys the caller shows computed from stored fields
        (:class:`~treehop.filters.ShownField`): the filter is checked as written (a shown key
        is known where a field it is shown from is), then evaluated on the values shown
        (:func:`~treehop.filters.show_fields`). Why (helper leftovers71d): a vector store
        over nodes ``treehop index`` wrote shows them a ``source``, and a filter on it must
        select what is shown.

        ``options`` may narrow ``target_uri`` (default: the base) and set the threshold
        (a floor on the returned hits' final scores; the search itself is not pruned with
        it) and ``include_directories`` (default: passages only). A
        store answers with its records, so chunks are never folded into their document's best
        chunk (the retriever's one-slot-per-document default). A filter on a field no stored
        node has is an :class:`~treehop.errors.InvalidFilterError`, not a silent ``[]``; a
        scope nothing was added under yet is ``[]``. ``k=0`` is checked as any other call,
        then answered ``[]`` without a search (LangChain's ``InMemoryVectorStore`` answers it
        so, and a caller computing ``k`` from a budget reaches it); a negative ``k`` is refused.
        """
        directories = bool(options.get("include_directories"))
        if not (k == 0 and type(k) is int):
            k = await self.checked_k(k, "k", directories)
        # The query's own checks come first: the scope may not exist yet (``[]`` below), and
        # an empty store answered ``[]`` to a query or vector a filled one refuses.
        if vector is not None:
            _check_query_vector(vector, self.aclient.store)
        if vector is None or query:
            check_query(query)
        opts: SearchKwargs = {
            "target_uri": self.passages.base_display,
            "score_threshold": NO_FLOOR,
            "include_directories": False,
        }
        opts.update(options)
        # A store's score_threshold is a floor on the scores it returns (LangChain's and
        # LlamaIndex's meaning): the core would prune its search with it on the scores
        # before the tree context, so a hit that ends above it could be lost and one that
        # ends below it kept. The search runs unpruned and the floor is applied to the
        # final scores below.
        # (checked as the core checks it: True, NaN and inf were floors, "0.3" a raw
        # TypeError in the comparison below; helper leftovers63b)
        floor = check_threshold(options.get("score_threshold"))
        opts["score_threshold"] = NO_FLOOR
        opts["limit"], opts["collapse_chunks"] = k, False
        flt = opts.get("filter")
        spec = flt.spec if isinstance(flt, MetadataFilter) else flt
        # (a shown key is known where a field a user stored shows it: not the store's own
        # passage-id key, which a ShownField may read to tell its records apart)
        known = [
            dataclasses.replace(f, over=tuple(o for o in f.over if o not in recmod.INTERNAL_KEYS))
            for f in shown
        ]
        aclient = self.aclient
        # (before the filter's fields are checked: a store nothing was added to yet answers
        # a filtered query [] as an unfiltered one, helper usage86)
        aclient._fresh()
        await acheck_filter_fields(
            self.client,
            spec,
            provenance,
            tags=(opts.get("tags"), opts.get("tags_all")),
            shown=known,
            scope_empty=await aclient._io(self.passages.is_empty),
        )
        if shown and spec:
            opts["filter"] = show_fields(spec, shown)
        targets = check_target_uris(opts.get("target_uri"))
        # (the generation check find() starts with, before the targets are looked up: a
        # scope another process wrote since this client last looked was "not there", and
        # the search answered [] without reaching find())
        aclient._fresh()
        found = await aclient._io(aclient.store.get, [aclient.resolve(t) for t in targets])
        kept = [t for t, n in zip(targets, found, strict=True) if n is not None]
        if "target_uri" in options and len(kept) < len(targets):
            await self._refuse_unknown_targets(targets, found)
        opts["target_uri"] = kept
        if not kept or k == 0:
            return []
        hits = await self._find(query, vector, opts, k)
        taken = await aclient._io(self._ids_taken, hits)
        if taken:
            # (a node another writer put at a URI this store already gave a record as its id:
            # searched again for as many more, then left out; see _ids_taken)
            opts["limit"] = min(k + len(taken), MAX_LIMIT)
            more = await self._find(query, vector, opts, opts["limit"])
            taken |= await aclient._io(self._ids_taken, more)
            hits = [m for m in more if m.uri not in taken][:k]
        if floor is not None:
            hits = [m for m in hits if m.score >= floor]
        return hits

    async def _find(
        self, query: str, vector: Sequence[float] | None, opts: SearchKwargs, k: int
    ) -> list[MatchedContext]:
        if _overflows_to_readers(self.client):  # (concurrent awaits reach the workers: afind)
            result = await asyncio.to_thread(self.client.find, query, query_vector=vector, **opts)
        else:
            result = await self.aclient.find(query, query_vector=vector, **opts)
        return result.contexts()[:k]

    def _ids_taken(self, hits: Sequence[MatchedContext]) -> set[str]:
        """The URIs among ``hits`` of nodes no passage store wrote (a file ``treehop index``
        wrote, a directory) that are the id of one of this store's own records.

        Why (helper leftovers73a; leftovers72c's open item): the store refuses such an id when
        the node is there first (:meth:`PassageStore._check_ids_name_no_other_node`), but an
        id naming nothing when added (``add_documents(docs, ids=[d.id for d in hits])`` from
        another index, then ``treehop index`` of the same folder here) became a file's URI
        later: searches showed two Documents with one id, and ``get_by_ids`` / ``delete`` of
        it reach the record only (its own id wins). The store keeps its one-document-per-id
        rule at read time: the record keeps its id and the node is left out of this store's
        searches (``treehop find``, the retrievers and the MCP tools, which name nodes by
        URI, still show it). The record ids are those the store's id index holds (built once
        per client and kept by its writes; a record another process added since is checked
        when that index is next rebuilt by a read or write that misses)."""
        shown = [
            m.uri
            for m in hits
            if not isinstance(m.metadata.get(recmod.ID_KEY), str)
            and m.uri.startswith(urimod.SCHEME)
        ]
        if not shown:
            return set()
        passages = self.passages
        idx = passages._index()
        if idx.built_at < 0:
            idx = passages._rebuild()
        return set(passages._verified(shown, idx))

    async def _refuse_unknown_targets(
        self, targets: Sequence[str], found: Sequence[Node | None]
    ) -> None:
        """A caller's ``target_uri`` naming no node is the core's :class:`NotFoundError` (as
        ``find()``, both retrievers, the CLI and MCP answer it), once anything is stored under
        the base; before that the scope is empty, not a typo, and the search answers ``[]``.
        Why: the stores dropped such a target in silence, so ``target_uri="faq.md"`` for a
        stored ``FAQ.md`` (or a URI with a typo) answered ``[]`` with no hint, where a
        misspelt filter field is an :class:`InvalidFilterError` naming the stored fields."""
        aclient = self.aclient
        missing = [t for t, n in zip(targets, found, strict=True) if n is None]
        if (await aclient._io(aclient.store.get, [self.passages.base]))[0] is None:
            return
        raise _unknown_targets(missing, aclient._escaped_hint(aclient.resolve(missing[0])))

    async def checked_k(
        self, k: object, name: str, directories: bool = False, zero: str = "none"
    ) -> int:
        """``k`` checked as a search's limit (1 to :data:`MAX_LIMIT`), where a larger ``k``
        over a store holding at most ``MAX_LIMIT`` passages (nodes, with ``directories``)
        under its base means every one of them: LangChain's ``InMemoryVectorStore``, FAISS and
        Chroma answer ``k=10_000`` with all they hold, LlamaIndex's ``SimpleVectorStore`` too,
        and a caller asking for "everything" writes that. A larger store is refused with its
        size, never cut to ``MAX_LIMIT`` in silence. Counting walks the base once, only for
        such a ``k``.

        A negative ``k`` is refused with what each caller takes: 1 to ``MAX_LIMIT``, more on
        a small store, and 0 (``zero``: what the caller answers for it, before this check).
        Why (helper attacks89; attacks88's open item): ``k=-1`` was told "between 1 and
        1000", which ``k=0`` (``[]``, or LlamaIndex's "no limit") and ``k=10**9`` (a small
        store whole) contradict."""
        n = integral(k)
        if n is not None and n < 0:
            what = "nodes" if directories else "passages"
            raise InvalidQueryError(
                f"{name} must be 0 ({zero}) or a positive integer: 1 to {MAX_LIMIT}, or more "
                f"on a store of at most {MAX_LIMIT} {what} (all of them); "
                f"got {shown_value(k)}"
            )
        if type(k) is not int or k <= MAX_LIMIT:
            return check_limit(k, name)
        aclient = self.aclient

        count = await aclient._io(count_held, aclient.store, [self.passages.base], directories)
        if count > MAX_LIMIT:
            what = "nodes" if directories else "passages"
            # (exact where the store counts; a walk stops past the limit)
            held = count if isinstance(aclient.store, CountingStore) else f"more than {MAX_LIMIT}"
            raise InvalidQueryError(
                f"{name} must be between 1 and {MAX_LIMIT} (one search's limit), "
                f"got {shown_value(k)}: this store holds {held} {what}, more than one search "
                "returns"
            )
        return MAX_LIMIT

    async def vectors(self, hits: Sequence[MatchedContext]) -> list[np.ndarray[Any, Any]]:
        """The stored vectors of ``hits`` (for a framework's MMR)."""
        aclient = self.aclient
        uris = [aclient.resolve(h.uri) for h in hits]
        return list(await aclient._io(aclient.store.get_vectors, uris))


class IndexedStore:
    """What a framework vector store built on a :class:`PassageIndex` (``self._index``)
    exposes the same way in every framework; mixed into the adapters' store classes."""

    _index: PassageIndex

    @property
    def client(self) -> TreehopClient:
        """The treehop client behind this store."""
        return self._index.client

    @property
    def aclient(self) -> AsyncTreehop:
        """The async client behind this store (a sync client's ``.aio``)."""
        return self._index.aclient

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return self._index.run(coro)

    def close(self) -> None:
        """Close the client if this store opened it."""
        self._index.close()

    def _targets(self, target: str | Sequence[str] | None) -> list[str]:
        """A search's ``target_uri`` as display URIs: a ``viking://`` URI, or a path under
        the store's base (``"ops"`` = ``<base>/ops``); ``None`` = the base."""
        passages = self._index.passages
        if target is None:
            return [passages.base_display]
        if not isinstance(target, str) and not isinstance(target, Iterable):
            raise InvalidQueryError(
                f"target_uri must be a URI or a list of URIs, got {shown_value(target)}"
            )
        items = [target] if isinstance(target, str) else list(target)
        if not items:
            raise InvalidQueryError("target_uri must not be empty")
        aclient = self.aclient
        out: list[str] = []
        for t in items:
            if not isinstance(t, str):
                raise InvalidQueryError(f"target_uri must be strings, got {shown_value(t)}")
            if t.startswith(urimod.SCHEME):
                uri = aclient.resolve(t)
                if not urimod.is_within(uri, passages.base):
                    # (a store's searches are scoped to its base: another store's base, a
                    # prefix sibling or the user's memories answered their nodes)
                    raise InvalidQueryError(
                        f"target_uri {t[:200]!r} lies outside this store's base_uri "
                        f"{passages.base_display!r}: give a URI under it, or a path under it"
                    )
            else:
                uri = passages.base
                for seg in recmod.path_segments(t):
                    uri = urimod.join(uri, seg)
            out.append(aclient.display(uri))
        return out


_INDEX_OPTIONS = frozenset(PassageIndexKwargs.__annotations__)


_MAX_GUESSED_NAME = 64
"""Longer unknown names get no spelling guess (difflib's matching is quadratic in length)."""


def did_you_mean(
    name: str, known: Iterable[str], synonyms: Mapping[str, str] | None = None
) -> str | None:
    """The argument ``name`` was most likely meant as: another API's name for one of
    ``known`` (``synonyms``: LlamaIndex's ``top_k`` for LangChain's ``k``), else the closest
    spelling among ``known`` (:func:`difflib.get_close_matches`, its default cutoff 0.6),
    else ``None``. Why: a keyword brought from another framework (``top_k``,
    ``similarity_top_k``, ``search_kwargs``) met Python's or pydantic's bare "unexpected" /
    "Extra inputs are not permitted", which names what is wrong and not what to write."""
    if synonyms and name in synonyms:
        return synonyms[name]
    if len(name) > _MAX_GUESSED_NAME:
        return None
    close = difflib.get_close_matches(name, list(known), n=1)
    return close[0] if close else None


def constructor_error(exc: BaseException) -> BaseException:
    """The treehop error a framework component's ``__init__`` raised, where pydantic's
    ``model_validate`` (which runs that ``__init__``) wrapped it in a ``ValidationError``
    of one ``value_error``; else ``exc``. Why: ``model_validate({...})`` then fails as the
    constructor does (the same class and message), and the wrapper's input, the whole
    dict with any key given in it, is not handed on."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return exc
    try:
        found = errors(include_url=False)
    except TypeError:  # (not pydantic's)
        return exc
    if len(found) == 1 and isinstance(found[0], Mapping):
        inner = (found[0].get("ctx") or {}).get("error")
        if isinstance(inner, TreehopError):
            return inner
    return exc


def looks_secret(name: object) -> bool:
    """Whether an argument's name says its value may be a secret (``api_key``, ``token``):
    such a value is left out of an error that names the argument."""
    return isinstance(name, str) and any(p in name.lower() for p in SECRET_NAME_PARTS)


def shows_secret(value: object) -> bool:
    """Whether ``value``'s repr holds a secret :func:`~treehop.redaction.redact` masks (a
    registered key, a URL's password): an error echoing it must leave it out."""
    try:
        text = repr(value)
    except Exception:  # (a repr that raises: shown by pydantic as such, nothing echoed)
        return False
    return redact(text) != text


def unknown_arguments(
    owner: str,
    unknown: Iterable[str],
    takes: Sequence[str],
    *,
    synonyms: Mapping[str, str] | None = None,
    elsewhere: Mapping[str, str] | None = None,
) -> UnknownArgumentError:
    """The error for a constructor given keywords it does not take: each named with the one
    it was most likely meant as (:func:`did_you_mean`), or where it goes instead
    (``elsewhere``: a search's ``k`` given to a vector store), then what ``owner`` takes."""
    parts: list[str] = []
    # (the first few names only, each with its hint: helper leftovers63, 20,000 unknown
    # keywords made a message of a megabyte and 20,000 difflib searches)
    head, more = first_few(unknown)
    for name in head:
        said = f"unknown argument {shown_name(name)}"
        meant = did_you_mean(name, takes, synonyms)
        if elsewhere and name in elsewhere:
            said += f": {elsewhere[name]}"
        elif meant is not None:
            said += f" (did you mean {meant!r}?)"
        parts.append(said)
    if more:
        parts.append(f"and {more} more")
    return UnknownArgumentError(f"{owner}: {'; '.join(parts)}. It takes {', '.join(takes)}")


def reject_extra(
    kwargs: Mapping[str, Any],
    where: str,
    takes: Sequence[str] = (),
    synonyms: Mapping[str, str] | None = None,
) -> None:
    """Adapters take ``**kwargs`` because their frameworks pass them; unknown ones are errors,
    never silently ignored: an :class:`~treehop.errors.UnknownArgumentError` (an
    ``InvalidQueryError`` and a ``TypeError``, as a constructor's unknown keyword), each name
    with the one meant among ``takes`` (:func:`did_you_mean`). Why a ``TypeError`` is safe
    here (helper leftovers62b): no caller in LangChain or LlamaIndex catches one around a
    vector store's ``add`` / ``delete`` / ``query`` (LlamaIndex's ``except TypeError`` sit
    in its tool calling and index-struct loading)."""
    if kwargs:
        names, _ = first_few(kwargs)  # (hints for the names shown only)
        hints = "".join(
            f" {shown_name(name)}: did you mean {meant!r}?"
            for name in names
            if isinstance(name, str) and (meant := did_you_mean(name, takes, synonyms))
        )
        # (each name as an error shows it: escaped, redacted, cut; :func:`shown_name`;
        # the first few, then how many more: :func:`~treehop.redaction.listed`)
        shown = listed(kwargs, shown_name)
        raise UnknownArgumentError(f"{where}: unknown argument(s) [{shown}].{hints}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def memory_turns(role: str, content: str) -> list[dict[str, str]]:
    """A framework's chat message as :meth:`~treehop.client.AsyncTreehop.add_messages`
    messages: its text stripped, a lone surrogate as U+FFFD, cut into consecutive turns of
    at most :data:`~treehop.memory.MAX_TURN_CHARS` characters (at the last space or line
    break in the second half of each cut, else at the limit); ``[]`` for a blank text, and
    no piece without a visible character (:func:`~treehop.validation.is_blank`).

    Why: LangChain's middleware (``record_turns``) and LlamaIndex's memory block gave each
    message whole, and ``add_messages`` refuses one over the limit or holding a lone
    surrogate: a long model answer made the agent run raise after it had answered (the
    turn not kept), a pasted document lost its whole batch. Every character is kept, in
    order. Linear: each cut searches one window once."""
    text = content.strip()
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    limit = MAX_TURN_CHARS
    out: list[dict[str, str]] = []
    while text:
        if len(text) <= limit:
            piece, text = text, ""
        else:
            cut = max(text.rfind(" ", limit // 2, limit), text.rfind("\n", limit // 2, limit))
            cut = cut if cut > 0 else limit
            piece, text = text[:cut].rstrip(), text[cut:].lstrip()
        if not is_blank(piece):  # (a piece of only invisible characters is refused there)
            out.append({"role": role, "content": piece})
    return out


def memory_query(text: str) -> str | None:
    """A chat message as the query of a framework's memory (LangChain's middleware,
    LlamaIndex's memory block): a lone surrogate as U+FFFD, a NUL as a space, its last
    :data:`~treehop.validation.MAX_QUERY_CHARS` characters (the latest words; a pasted
    text's question usually follows it); ``None`` where no query is left (blank, or only
    invisible characters): then no context is looked up.

    Why: the message went to ``assemble_context`` whole, whose query check refuses those:
    a user message of 8,001 characters, or with a NUL or a lone surrogate, made the agent's
    run raise at its first model call (the surrogate also escaped as a raw
    ``UnicodeEncodeError`` from the middleware's cache key)."""
    q = text.strip()
    if _SURROGATE.search(q):
        q = _SURROGATE.sub("\ufffd", q)
    q = q.replace("\x00", " ")
    if len(q) > MAX_QUERY_CHARS:
        q = q[-MAX_QUERY_CHARS:]
    try:
        return check_query(q)
    except InvalidQueryError:
        return None


__all__ = [
    "MAX_NUMBER_TEXT_CHARS",
    "NO_FLOOR",
    "SHARED_OPTIONS",
    "EmbeddingSlot",
    "IndexedStore",
    "KnowledgeSource",
    "PassageIndex",
    "PassageIndexKwargs",
    "ProgressCallback",
    "RetrieverClient",
    "TreehopClient",
    "aadd_records",
    "acall",
    "acheck_filter_fields",
    "add_records",
    "afind",
    "as_async",
    "call",
    "check_client",
    "check_metadata_bounded",
    "check_retriever_client",
    "check_source_targets",
    "did_you_mean",
    "documents_of",
    "find",
    "is_html",
    "is_knowledge_source",
    "looks_secret",
    "memory_query",
    "memory_turns",
    "no_page_text",
    "number_text_hint",
    "open_client",
    "page_text",
    "plain_metadata",
    "progress_reporter",
    "reject_extra",
    "run_on",
    "run_sync",
    "shared_options",
    "shown_name",
    "shows_secret",
    "source_refusal",
    "top_hits",
    "unknown_arguments",
]
