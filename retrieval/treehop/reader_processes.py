"""``find()`` in reader processes: read throughput that grows with cores.

Why processes: a ``find()`` on the embedded store is mostly Python (the descent, the tree
context, the result models), so two threads of one process share one interpreter lock and
answer about as fast as one (``bench/bench_store.py``: 1.0-1.2x at 2 threads, while the
store's own search, numpy and usearch outside the lock, reaches 2x). A :class:`ReaderPool`
keeps ``processes`` workers, each with its own interpreter and its own read-only client over
one saved index; a call takes an idle worker, so calls from several threads (or an event
loop) run in parallel. The index files are memory-mapped, so the workers share the vectors
and the graph in the page cache instead of each holding a copy.

What stays in the calling process: the embedder. The query is embedded here and only the
vector crosses to a worker (workers load no model, start in about a second, and an API key
of a remote embedder never leaves this process). A worker answers what was last *saved*:
before each call it picks up a generation another client committed
(:meth:`~treehop.stores.embedded.EmbeddedStore.refresh`); unsaved writes of a client in this
process are not seen until that client saves. Reranking is not done in the workers (give a
reranker to a :class:`~treehop.Treehop` for that); everything else ``find()`` takes is
passed through unchanged.

A batch (:meth:`ReaderPool.find_many`, which a sync :meth:`treehop.Treehop.find_many` with
reader processes uses; :meth:`ReaderPool.afind_many` for an awaited
:meth:`treehop.AsyncTreehop.find_many`) is split into contiguous parts: one answered by the
caller's own in-process ``find_many``, one by each idle worker at the same time, each part
sharing its first graph step; results in input order, each the one ``find()`` gives.

Faults: a call that gets no answer within ``timeout_s`` raises
:class:`~treehop.errors.StoreError` and its worker is replaced; a worker that died is
replaced and the call retried once on the new one (a read changes nothing, so a retry loses
nothing); errors raised by ``find()`` in a worker (a bad option, a damaged index) are raised
here as the same :class:`~treehop.errors.TreehopError` class with the same message.

How a worker starts: on POSIX as a new interpreter (``sys.executable -c``, this process's
import path sent over the pipe) that imports treehop and nothing else, so a script needs no
``if __name__ == "__main__":`` guard and its module never runs twice (``multiprocessing``'s
``spawn`` imports the main module again in every child: a script's ingest or find at module
level would run again in each worker). Not a ``fork``: a fork of a process running treehop's
background threads is unsafe. Elsewhere (Windows, a frozen application) workers start with
``spawn``, and a script that creates a pool must then guard its entry point.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import multiprocessing
import os
import pickle
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from . import errors
from .config import RetrievalConfig
from .embedders.base import Embedder
from .embedders.fallback import offline_default
from .embedders.guarded import guard_embedder
from .errors import ClientClosedError, InvalidQueryError, StoreError, TreehopError
from .models import ContextType, FindResult
from .uri import validate_user
from .validation import check_query, shown_value

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from typing_extensions import Unpack

    from .search_options import SearchKwargs

__all__ = ["ReaderPool"]

_SPAWN_GUARD = (
    "cannot start a reader process while the main module is being imported: guard the "
    'script\'s entry point with `if __name__ == "__main__":` (reader processes are spawned, '
    "and a spawned process imports the main module again)"
)


_WORKER_MODULE = "treehop.reader_worker"
"""The module a worker process runs (its ``serve``). It opens a read-only client, so it sits
above :mod:`treehop.client`, which imports this module: the pool names it instead of importing
it, and only the spawned process imports it."""


def _run_worker(*args: Any) -> None:
    """A worker process's target: import the worker module by name and serve."""
    importlib.import_module(_WORKER_MODULE).serve(*args)


_BOOT = """\
import signal, sys
from multiprocessing.connection import Connection
signal.signal(signal.SIGINT, signal.SIG_IGN)
conn = Connection(int(sys.argv[1]))
try:
    sys.path[:] = conn.recv()
    args = conn.recv()
except (EOFError, OSError):
    sys.exit(0)
from treehop.reader_processes import _run_worker
_run_worker(conn, *args)
"""
"""A directly started worker's program (:func:`_direct_start`): it takes the parent's import
path and ``serve``'s arguments from its end of the pipe, then serves. It ignores ``SIGINT``:
a Ctrl-C in a terminal reaches the whole process group, and the worker's life is the
parent's to end (its pipe closes, or the stop message), not a traceback of its own."""


def _direct_start() -> bool:
    """Whether workers start as new interpreters (:data:`_BOOT`): on POSIX, where a socket
    end passes to a child by its descriptor, and not in a frozen application (whose
    ``sys.executable`` is not a Python)."""
    return os.name == "posix" and not getattr(sys, "frozen", False) and bool(sys.executable)


class _ProcessLike(Protocol):
    """What the pool uses of a worker's process (a ``multiprocessing`` process or a
    :class:`_Direct` one)."""

    @property
    def pid(self) -> int | None: ...
    def join(self, timeout: float | None = None) -> None: ...
    def is_alive(self) -> bool: ...
    def kill(self) -> None: ...


class _Direct:
    """A worker started by :func:`_direct_start`, with the methods of a ``multiprocessing``
    process that the pool calls (``join`` reaps it, so no zombie is left)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen

    @property
    def pid(self) -> int | None:
        return self._popen.pid

    def join(self, timeout: float | None = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)

    def is_alive(self) -> bool:
        return self._popen.poll() is None

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self._popen.send_signal(signal.SIGKILL)


class _Worker:
    """One reader process and the parent's end of its pipe."""

    def __init__(self, process: BaseProcess | _ProcessLike, conn: Connection) -> None:
        self.process = process
        self.conn = conn

    def stop(self, wait_s: float = 2.0) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.conn.send_bytes(b"")
        self.process.join(wait_s)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(wait_s)
        with contextlib.suppress(OSError):
            self.conn.close()


def _raise_reply(reply: tuple[Any, ...]) -> None:
    """Raise an error reply as the TreehopError class it names (StoreError if unknown)."""
    _, name, message = reply
    cls = getattr(errors, name, None)
    if not (isinstance(cls, type) and issubclass(cls, TreehopError)):
        cls = StoreError
    raise cls(message)


_HERE_SHARE = 1.25
"""The caller's part of a split :meth:`ReaderPool.find_many`, in workers' parts: a worker's
part pays for pickling its results and the caller for unpickling them, so equal parts left
the caller waiting (100k leaves, batches of 32, 1 worker: equal parts 1.86-1.91x the QPS of
single finds, the caller taking 1.25 parts 1.98-2.09x, 1.5 parts 1.96-2.04x)."""


def _cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # (not on every platform)
        return os.cpu_count() or 1


@dataclass
class _Batch:
    """A :meth:`ReaderPool.find_many` under way: each worker's part (``busy[i]`` answers
    ``sent[i]``; ``None`` once answered or dropped) and the caller's own part."""

    busy: list[_Worker | None]
    sent: list[bytes]
    mine: tuple[list[str], np.ndarray[Any, Any]] | None


def _stop_all(workers: list[_Worker]) -> None:
    for w in workers:
        w.stop()


class ReaderPool:
    """``find()`` over a saved index at ``path``, answered by ``processes`` worker processes
    (see the module's docstring for why, and what a worker sees).

    ``embedder`` embeds queries in this process; it must be the one the index was built with
    (checked by name, as a :class:`~treehop.Treehop` checks it). ``config`` and ``user`` are
    those of the workers' clients. ``timeout_s`` bounds each call's wait for its worker
    (embedding not included), ``start_timeout_s`` the start of a worker (imports and the
    index's open, checksums included).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        embedder: Embedder | None = None,
        config: RetrievalConfig | None = None,
        user: str = "default",
        processes: int = 2,
        timeout_s: float = 30.0,
        start_timeout_s: float = 120.0,
        _cancel: threading.Event | None = None,
    ) -> None:
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise InvalidQueryError(
                f"processes must be an integer >= 1, got {shown_value(processes)}"
            )
        for label, value in (("timeout_s", timeout_s), ("start_timeout_s", start_timeout_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise InvalidQueryError(f"{label} must be a number > 0, got {shown_value(value)}")
        if config is not None and not isinstance(config, RetrievalConfig):
            raise InvalidQueryError("config must be a RetrievalConfig")
        self.path = Path(path)
        if not (self.path / "CURRENT").is_file():
            raise StoreError(f"no saved treehop index at {self.path}")
        if embedder is None:
            embedder = offline_default()
        self.embedder = embedder
        self._embedder = guard_embedder(embedder)
        self.config = config or RetrievalConfig()
        self.user = validate_user(user)  # (before any process starts)
        self.processes = processes
        self.timeout_s = float(timeout_s)
        self.start_timeout_s = float(start_timeout_s)
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._starting = 0
        """Workers being started by :meth:`_refill` (not yet in ``_workers``)."""
        self._closed = False
        self.served: Counter[int] = Counter()
        """How many calls each worker process answered, by process id: the calls a worker
        served, not this process (a diagnostic, and the tests' proof)."""
        self._cancel = _cancel
        """Set by the owner of a pool still starting (a client closing): the start stops
        waiting, its processes are killed, and ``ClientClosedError`` is raised."""
        self._finalizer = weakref.finalize(self, _stop_all, self._workers)
        try:
            started = [self._start() for _ in range(processes)]
            for w in started:
                self._ready(w)
                self._idle.put(w)
        except BaseException:
            if _cancel is not None and _cancel.is_set():
                for w in list(self._workers):  # (still importing: no stop message read)
                    self._drop(w)
            self.close()
            raise

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"{self.processes} processes"
        return f"ReaderPool({str(self.path)!r}, {state})"

    # ------------------------------------------------------------------ workers
    def _start(self) -> _Worker:
        """Start one worker (its readiness is awaited by :meth:`_ready`)."""
        args = (
            str(self.path),
            self.user,
            self.config.model_dump_json(),
            self.embedder.name,
            int(self.embedder.dimension),
        )
        w = self._start_direct(args) if _direct_start() else self._start_spawned(args)
        with self._lock:
            closed = self._closed
            if not closed:
                self._workers.append(w)
        if closed:  # closed while it started: it must not outlive close()
            self._drop(w)
            raise ClientClosedError("this ReaderPool was closed")
        return w

    def _start_direct(self, args: tuple[Any, ...]) -> _Worker:
        """A worker as a new interpreter running :data:`_BOOT` (see the module docstring:
        no main module imported again), one end of a socket pair passed by descriptor."""
        mine, theirs = socket.socketpair()
        parent = Connection(mine.detach())
        try:
            popen = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
        except OSError as exc:
            parent.close()
            raise StoreError(f"cannot start a reader process: {exc}") from exc
        finally:
            theirs.close()
        with contextlib.suppress(OSError, ValueError):  # (a child dead at once: _ready says so)
            parent.send([p for p in sys.path if isinstance(p, str)])
            parent.send(args)
        return _Worker(_Direct(popen), parent)

    def _start_spawned(self, args: tuple[Any, ...]) -> _Worker:
        """A worker by ``multiprocessing``'s ``spawn`` (where :func:`_direct_start` is not
        available): the script must guard its entry point."""
        parent, child = self._ctx.Pipe()
        process = self._ctx.Process(
            target=_run_worker, args=(child, *args), name="treehop-reader", daemon=True
        )
        try:
            process.start()
        except OSError as exc:
            raise StoreError(f"cannot start a reader process: {exc}") from exc
        except RuntimeError as exc:
            # multiprocessing refuses to spawn while ``__main__`` is still being imported:
            # the script has no ``if __name__ == "__main__":`` guard and this is its
            # re-import in a spawned process (or a start from a module-level import)
            raise StoreError(_SPAWN_GUARD if "bootstrapping" in str(exc) else str(exc)) from None
        finally:
            child.close()
        return _Worker(process, parent)

    def _ready(self, w: _Worker) -> None:
        """Wait for a new worker's first message; its start error is raised here."""
        end = time.monotonic() + self.start_timeout_s
        try:
            while not w.conn.poll(0.05):  # (in slices: a cancelled start stops waiting)
                if self._cancel is not None and self._cancel.is_set():
                    self._drop(w)
                    raise ClientClosedError("the reader pool's owner closed while it started")
                if time.monotonic() > end:
                    raise StoreError(
                        f"a reader process did not start within {self.start_timeout_s}s"
                    )
            reply = w.conn.recv()
        except (EOFError, OSError) as exc:
            self._drop(w)
            raise StoreError(
                "a reader process exited while starting (its error output says why; a script "
                'without an `if __name__ == "__main__":` guard is the usual cause)'
            ) from exc
        except StoreError:
            self._drop(w)
            raise
        if reply[0] != "ready":
            self._drop(w)
            _raise_reply(reply)

    def _drop(self, w: _Worker) -> None:
        with self._lock:
            if w in self._workers:
                self._workers.remove(w)
        w.process.kill()
        w.process.join(5)
        with contextlib.suppress(OSError):
            w.conn.close()

    def _replacement(self) -> _Worker:
        with self._lock:
            self._starting += 1  # (counted: close() waits for a start in flight)
        try:
            w = self._start()
            self._ready(w)
            return w
        finally:
            with self._lock:
                self._starting -= 1

    # ------------------------------------------------------------------ find
    def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        query_vector: Sequence[float] | np.ndarray[Any, Any] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        """:meth:`treehop.Treehop.find` in a worker process (same arguments, same result);
        blocks the calling thread only, so calls from several threads run in parallel."""
        if self._closed:
            raise ClientClosedError("this ReaderPool is closed")
        embedded = given = None
        if query_vector is None:
            embedded = np.asarray(self._embedder.embed_query(check_query(query)), np.float32)
        elif isinstance(query_vector, np.ndarray | str | bytes):
            # (as given: the worker's find checks it as the client's does, its dtype, shape
            # and scale included; a float32 cast here made 1e300 infinite and a complex
            # array real)
            given = query_vector
        else:
            try:  # (float64: finite values past float32's range keep their direction)
                given = np.asarray(query_vector, dtype=np.float64)
            except Exception as exc:  # (an int past float's range, an element's __float__)
                raise InvalidQueryError(
                    f"query_vector must be a list of numbers ({type(exc).__name__})"
                ) from None
        try:
            data = pickle.dumps(
                ("find", query, embedded, given, context_type, options),
                protocol=pickle.HIGHEST_PROTOCOL,
            )
        except Exception as exc:  # a lambda, an open file: nothing a process can receive
            raise InvalidQueryError(
                f"find() arguments must be plain values to reach a reader process: "
                f"{type(exc).__name__}"
            ) from None
        busy: list[_Worker | None] = [self._take()]
        try:
            self._send_part(busy, 0, data)
            reply = self._part_reply(busy, 0, data)
        finally:
            if busy[0] is not None:
                # left mid-call (an interrupt, a reply that could not be read): the worker's
                # state is unknown, so it is replaced rather than reused
                self._drop(busy[0])
                self._refill_later()
        if reply[0] == "ok":
            result: FindResult = reply[1]
            return result
        _raise_reply(reply)
        raise AssertionError("unreachable")  # pragma: no cover

    def find_many(
        self,
        queries: Sequence[str],
        query_vectors: np.ndarray[Any, np.dtype[np.float32]],
        *,
        context_type: ContextType | str | None = None,
        parts: int | None = None,
        here: Callable[[list[str], np.ndarray[Any, Any]], list[FindResult]] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> list[FindResult]:
        """:meth:`treehop.Treehop.find_many` split over the workers: one result per query, in
        order, each the one ``find(query, query_vector=vector, **options)`` gives.

        Why: a batch's descent, tree context and result models are Python under one
        interpreter lock, so a batch in one process uses one core however large it is; split
        into contiguous parts, each part's ``find_many`` (its global step shared across the
        part) runs in its own process. ``query_vectors`` (one row per query) were embedded
        by the caller: only vectors cross, as in :meth:`find`. The batch is split into one
        part per idle worker (up to ``parts``, by default the cores this process may use
        less one for ``here``: on 2 cores, 2 workers and this process answered a batch at
        0.85x the QPS that 1 worker and this process did; each part at least two queries),
        plus one for ``here`` when given: the caller's own in-process ``find_many``, run while the
        workers answer theirs (the parts sized by expected cost: a worker and the caller do
        the same search work per query, a worker's results also cross a pipe; see
        ``_HERE_SHARE``). With no idle worker the whole batch runs ``here``.

        Faults as in :meth:`find`: a part with no answer within ``timeout_s`` raises
        :class:`~treehop.errors.StoreError` (its worker replaced); a worker that died is
        replaced and its part retried once; an error raised in a worker is raised here as
        the same class. Every part is pickled before any is sent, so arguments no process
        can receive raise :class:`~treehop.errors.InvalidQueryError` before any work.
        """
        job = self._plan_many(
            queries, query_vectors, context_type, parts, here is not None, options
        )
        if isinstance(job, list):
            assert here is not None
            return here(*job)  # no idle worker: the whole batch runs ``here``
        try:
            for i in range(len(job.busy)):
                self._send_part(job.busy, i, job.sent[i])
            local: list[FindResult] = []
            if here is not None and job.mine is not None:
                local = here(*job.mine)
            return self._collect(job, local)
        finally:
            self._release(job)

    async def afind_many(
        self,
        queries: Sequence[str],
        query_vectors: np.ndarray[Any, np.dtype[np.float32]],
        *,
        here: Callable[[list[str], np.ndarray[Any, Any]], Awaitable[list[FindResult]]],
        context_type: ContextType | str | None = None,
        parts: int | None = None,
        embedded: bool = False,
        **options: Unpack[SearchKwargs],
    ) -> list[FindResult]:
        """:meth:`find_many` for an event loop (:meth:`treehop.AsyncTreehop.find_many`):
        ``here`` is the caller's own awaited ``find_many``, run on the loop while the workers
        answer their parts; the wait for their replies runs in a thread, so the loop is never
        blocked on a pipe. The same split, results and faults as :meth:`find_many`.

        ``embedded``: ``query_vectors`` are the embedder's answers, which an
        :class:`~treehop.AsyncTreehop` uses as they are (a sync client makes every query
        vector a unit row, a caller's or its embedder's): a worker then answers its part
        through its async client's own batch with those vectors as its embedder's, so that
        each result is the one the awaited ``find()`` gives, to the bit."""
        job = self._plan_many(
            queries, query_vectors, context_type, parts, True, options, embedded=embedded
        )
        if isinstance(job, list):
            return await here(*job)
        done = False
        try:
            for i in range(len(job.busy)):
                self._send_part(job.busy, i, job.sent[i])
            local = await here(*job.mine) if job.mine is not None else []
            done = True
        finally:
            if not done:
                self._release(job)
        return await asyncio.to_thread(self._collect_and_release, job, local)

    def _plan_many(
        self,
        queries: Sequence[str],
        query_vectors: np.ndarray[Any, np.dtype[np.float32]],
        context_type: ContextType | str | None,
        parts: int | None,
        here: bool,
        options: SearchKwargs,
        *,
        embedded: bool = False,
    ) -> _Batch | list[Any]:
        """The parts of a :meth:`find_many`: idle workers taken, spans cut, every part
        pickled (nothing sent yet); ``[texts, vectors]`` when no worker is idle and the
        caller answers the whole batch (``here``)."""
        if self._closed:
            raise ClientClosedError("this ReaderPool is closed")
        texts = list(queries)
        vectors = np.asarray(query_vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(texts) or not texts:
            raise InvalidQueryError("find_many needs one query vector per query")
        if parts is None:  # one part per core: more parts than cores only add overhead
            parts = max(1, _cores() - here)
        wanted = min(self.processes, max(1, int(parts)), len(texts) // 2 - here)
        workers: list[_Worker] = []
        while len(workers) < wanted:
            try:
                workers.append(self._idle.get_nowait())
            except queue.Empty:
                break
        if not workers:
            if here:
                return [texts, vectors]
            workers.append(self._take())
        # contiguous parts by expected cost: a worker's part costs more per query than the
        # caller's (its results are pickled there and unpickled here), so ``here`` takes
        # _HERE_SHARE parts' worth of queries, every worker one
        share = _HERE_SHARE if here else 1.0
        total = share + len(workers) - (not here)
        cuts = [0] + [
            round(len(texts) * (share + k - 1) / total) for k in range(1, len(workers) + 2)
        ]
        if not here:
            cuts = cuts[:-1]
            cuts[-1] = len(texts)
        spans = list(itertools.pairwise(cuts))
        mine = spans.pop(0) if here else None
        try:
            sent = [
                pickle.dumps(
                    ("find_many", texts[a:b], vectors[a:b], context_type, options, embedded),
                    protocol=pickle.HIGHEST_PROTOCOL,
                )
                for a, b in spans
            ]
        except Exception as exc:
            for w in workers:
                self._idle.put(w)
            raise InvalidQueryError(
                f"find_many() arguments must be plain values to reach a reader process: "
                f"{type(exc).__name__}"
            ) from None
        here_part = None if mine is None else (texts[mine[0] : mine[1]], vectors[mine[0] : mine[1]])
        return _Batch(list(workers), sent, here_part)

    def _collect(self, job: _Batch, local: list[FindResult]) -> list[FindResult]:
        """The workers' replies to ``job``'s parts after the caller's own ``local`` ones."""
        results = list(local)
        for i in range(len(job.sent)):
            reply = self._part_reply(job.busy, i, job.sent[i])
            if reply[0] != "ok":
                _raise_reply(reply)
            results.extend(reply[1])
        return results

    def _collect_and_release(self, job: _Batch, local: list[FindResult]) -> list[FindResult]:
        try:
            return self._collect(job, local)
        finally:
            self._release(job)

    def _release(self, job: _Batch) -> None:
        """Workers of ``job`` left mid-call: their state is unknown, so they are replaced."""
        for left in job.busy:
            if left is not None:
                self._drop(left)
                self._refill_later()

    def _send_part(self, busy: list[_Worker | None], i: int, data: bytes) -> None:
        """Send call ``i`` (of :meth:`find` or a part of :meth:`find_many`) to ``busy[i]``;
        a worker found dead here is dropped and ``busy[i]`` set to ``None``: the call goes
        to a replacement when :meth:`_part_reply` waits for its reply."""
        w = busy[i]
        assert w is not None
        try:
            self._send(w, data)
        except EOFError:
            self._drop(w)
            busy[i] = None

    def _part_reply(self, busy: list[_Worker | None], i: int, data: bytes) -> tuple[Any, ...]:
        """The reply to call ``i`` (a :meth:`find`, or a part of a :meth:`find_many`; sent to
        ``busy[i]`` by :meth:`_send_part`; ``None``: its worker died at the send), retried
        once on a new worker if its worker died. On return
        the worker is idle again and ``busy[i]`` is ``None``."""
        for attempt in (0, 1):
            w = busy[i]
            try:
                if w is None:
                    raise EOFError
                reply = self._receive(w)
            except TimeoutError:
                assert w is not None
                self._drop(w)
                busy[i] = None
                self._refill_later()
                raise StoreError(
                    f"a reader process gave no answer within {self.timeout_s}s"
                ) from None
            except EOFError:
                if w is not None:
                    self._drop(w)
                busy[i] = None
                if self._closed:
                    raise ClientClosedError("this ReaderPool was closed during the call") from None
                if attempt:
                    self._refill_later()
                    raise StoreError("a reader process died twice in one call") from None
                try:
                    w = self._replacement()
                except BaseException:
                    self._refill_later()
                    raise
                busy[i] = w
                with contextlib.suppress(EOFError):  # (dead again: the receive says so)
                    self._send(w, data)
                continue
            busy[i] = None
            self._idle.put(w)
            if reply[0] == "ok":
                with self._lock:
                    self.served[reply[2]] += 1
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, w: _Worker, data: bytes) -> None:
        """Send one call; ``EOFError`` when the worker is dead."""
        try:
            w.conn.send_bytes(data)
        except (OSError, ValueError) as exc:  # a broken pipe: the worker died
            raise EOFError from exc

    def _receive(self, w: _Worker) -> tuple[Any, ...]:
        """Wait for one reply; ``TimeoutError`` after ``timeout_s``, ``EOFError`` when the
        worker is dead."""
        if not w.conn.poll(self.timeout_s):
            raise TimeoutError
        try:
            reply: tuple[Any, ...] = pickle.loads(w.conn.recv_bytes())
        except OSError as exc:
            raise EOFError from exc
        return reply

    async def afind(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        query_vector: Sequence[float] | np.ndarray[Any, Any] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        """:meth:`find` without blocking the event loop (the wait runs in a thread)."""
        return await asyncio.to_thread(
            self.find, query, context_type=context_type, query_vector=query_vector, **options
        )

    def _take(self) -> _Worker:
        """An idle worker, waiting for one while all are busy (each busy one answers within
        ``timeout_s`` or is replaced); ``StoreError`` when none is left and none starts."""
        while True:
            try:
                return self._idle.get(timeout=0.5)
            except queue.Empty:
                if self._closed:
                    raise ClientClosedError("this ReaderPool is closed") from None
                self._refill()
                with self._lock:
                    if not self._workers and not self._starting:
                        raise StoreError(
                            "no reader process is running or could be started"
                        ) from None

    def _refill_later(self) -> None:
        """:meth:`_refill` in a thread: a failed call raises at once, not after a start."""
        threading.Thread(target=self._refill, name="treehop-reader-refill", daemon=True).start()

    def _refill(self) -> None:
        """Start workers for those dropped, back up to ``processes`` (a failed start leaves
        the pool smaller; the next call tries again)."""
        while not self._closed:
            with self._lock:
                if len(self._workers) + self._starting >= self.processes:
                    return
                self._starting += 1
            try:
                w = self._replacement()
            except TreehopError:  # (ClientClosedError included: closed meanwhile)
                return
            finally:
                with self._lock:
                    self._starting -= 1
            self._idle.put(w)

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        """Stop the workers (idempotent); when it returns, no worker process is left, a
        replacement being started included (it is waited for, up to ``start_timeout_s``).
        Calls after it raise ``ClientClosedError``."""
        self._closed = True
        end = time.monotonic() + self.start_timeout_s
        while True:
            with self._lock:
                workers = list(self._workers)
                self._workers.clear()
                starting = self._starting
            _stop_all(workers)
            if not starting or time.monotonic() > end:
                break
            time.sleep(0.02)  # a start in flight stops its own process when it sees _closed
        self._finalizer.detach()

    def __enter__(self) -> ReaderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
