"""The reader processes a client keeps: when they start, when a call may use them, their end.

Why one class for both clients: a sync :class:`~treehop.Treehop` and an
:class:`~treehop.AsyncTreehop` with ``reader_processes=N`` keep a
:class:`~treehop.ReaderPool` under the same rules (started aside, never delaying a call; used
only while it answers exactly as the client; restarted when the config changes; stopped and
joined by ``close()``). Kept twice, the two copies drifted; here each client only decides
*how* a call reaches the pool (the calling thread for the sync client; for the async one a
thread of this class's own executor, :meth:`ClientReaders.overflow`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from .config import RetrievalConfig
from .embedders.base import Embedder
from .errors import ClientClosedError, InvalidQueryError, TreehopError
from .reader_processes import ReaderPool, _cores, _direct_start
from .stores.base import VectorStore
from .stores.embedded import EmbeddedStore
from .validation import shown_value

__all__ = [
    "AUTO_READERS_MAX",
    "MIN_SPLIT_FIND_MANY",
    "ClientReaders",
    "FreeCores",
    "ReaderProcesses",
    "check_reader_processes",
    "split_pays",
]

_T = TypeVar("_T")

MIN_SPLIT_FIND_MANY = 8
"""The fewest queries a :meth:`Treehop.find_many` (or an awaited
:meth:`AsyncTreehop.find_many`) splits over its reader processes (a smaller batch gains less
from a second core than its pipes and pickling cost)."""


ReaderProcesses = int | Literal["auto"]
"""A client's ``reader_processes``: a number of workers, or ``"auto"`` (the default)."""

AUTO_READERS_MAX = 2
"""The most reader processes ``reader_processes="auto"`` starts (one per core this process
may use beyond its own, up to this many: each holds ~100 MiB of its own at 100k leaves)."""


def auto_reader_processes() -> int:
    """How many workers ``reader_processes="auto"`` keeps for batches: one per spare core
    (at most :data:`AUTO_READERS_MAX`), none on one core, where a worker would need the
    script's ``__main__`` guard (:func:`~treehop.reader_processes._direct_start`: without it
    a default must not start processes that import the user's script again), or where
    ``/proc/stat`` cannot be read (macOS, a locked-down container): there
    :class:`FreeCores` could not tell a free core from a taken one, and a split on taken
    cores measured slower than the batch in one process, so the default keeps batches in
    the caller (``reader_processes=N`` still splits everywhere)."""
    if not _direct_start() or not os.access("/proc/stat", os.R_OK):
        return 0
    return max(0, min(_cores() - 1, AUTO_READERS_MAX))


def check_reader_processes(reader_processes: object, path: object) -> ReaderProcesses:
    """``reader_processes`` checked as both clients take it (before anything starts)."""
    if reader_processes == "auto" and isinstance(reader_processes, str):
        return "auto"
    if (
        isinstance(reader_processes, bool)
        or not isinstance(reader_processes, int)
        or reader_processes < 0
    ):
        raise InvalidQueryError(
            "reader_processes must be an integer >= 0 or 'auto', "
            f"got {shown_value(reader_processes)}"
        )
    if reader_processes and path is None:
        raise InvalidQueryError("reader_processes needs an index path")
    return reader_processes


_SPLIT_FREE_CORES = 1.5
"""The cores that other processes must leave free (over the last interval) for
``reader_processes="auto"`` to split a batch: one for the caller's part, and most of one for
a worker's. With less, the two parts share a core and the split only adds the worker's
cost (100k leaves, 2 cores, another job on the second: the split 1.27-1.31x the QPS of
single finds, the batch in one process 1.56-1.67x; bench/README.md, round 9)."""

_SAMPLE_S = 0.25
"""The shortest interval :class:`FreeCores` measures over (a shorter one is noise: the
previous answer stands)."""


def split_pays(cores: int, busy_s: float, ours_s: float, wall_s: float) -> bool:
    """Whether a batch split over a worker can gain, given ``busy_s`` seconds of CPU used on
    the whole machine during ``wall_s`` seconds, ``ours_s`` of them by this process and its
    workers: the other processes' cores (``(busy_s - ours_s) / wall_s``) must leave
    :data:`_SPLIT_FREE_CORES` of this machine's ``cores`` free."""
    if wall_s <= 0:
        return True
    others = max(0.0, busy_s - ours_s) / wall_s
    return cores - others >= _SPLIT_FREE_CORES


class FreeCores:
    """Whether other processes leave this process's batches a free core now (Linux: the
    machine's busy time from ``/proc/stat`` less this process's and its workers' own, over
    the time since the last look; :func:`split_pays`). Where ``/proc/stat`` cannot be read
    it always answers yes (the split as with ``reader_processes=N``).

    Why: a split batch costs more CPU than one answered in one process (each part pays its
    own first step, the parts cross a pipe) and gains only by running its parts at the same
    time; on a machine whose cores are taken by other work it answered slower than the
    batch in one process, so ``"auto"`` splits only while a core is free."""

    _TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    def __init__(self) -> None:
        self._last = self._sample(())
        self._answer = True

    def _sample(self, pids: tuple[int, ...]) -> _Sample | None:
        """The machine's busy time, this process's CPU and each of ``pids``' now (``None``
        where ``/proc/stat`` cannot be read; a worker whose stat cannot be read is left
        out, its time then counted as the others')."""
        try:
            with open("/proc/stat", "rb") as f:
                fields = f.readline().split()
            busy = sum(int(v) for i, v in enumerate(fields[1:9]) if i not in (3, 4))
        except (OSError, ValueError):
            return None
        workers = {}
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    stat = f.read().rsplit(b")", 1)[1].split()
                workers[pid] = (int(stat[11]) + int(stat[12])) / self._TICK
            except (OSError, ValueError, IndexError):
                continue
        return _Sample(time.monotonic(), busy / self._TICK, time.process_time(), workers)

    def now(self, pids: tuple[int, ...]) -> bool:
        """Whether to split a batch now, ``pids`` being the workers' process ids."""
        last = self._last
        if last is None:
            return True
        if time.monotonic() - last.wall < _SAMPLE_S:
            return self._answer
        new = self._sample(pids)
        if new is None:
            return True
        # (a worker new since the last look: its time counts as the others', which errs
        # towards answering here)
        ours = new.here - last.here
        ours += sum(t - last.workers[p] for p, t in new.workers.items() if p in last.workers)
        self._answer = split_pays(_cores(), new.busy - last.busy, ours, new.wall - last.wall)
        self._last = new
        return self._answer


@dataclass
class _Sample:
    """One look of :class:`FreeCores` (seconds)."""

    wall: float
    busy: float
    here: float
    workers: dict[int, float]


class ReadingClient(Protocol):
    """What :class:`ClientReaders` reads of its client (an :class:`~treehop.AsyncTreehop`)."""

    @property
    def store(self) -> VectorStore: ...
    @property
    def reranker(self) -> object | None: ...
    @property
    def config(self) -> RetrievalConfig: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def user(self) -> str: ...


class ClientReaders:
    """The :class:`~treehop.ReaderPool` of one client with ``processes`` reader processes
    (``0``: none, every call answered by the client; ``"auto"``: for batches only, see
    below).

    ``"auto"`` (the clients' default): single finds always run in the client and start
    nothing; the first ``find_many`` of at least ``MIN_SPLIT_FIND_MANY`` queries over a
    saved index starts :func:`auto_reader_processes` workers in the background (that batch
    runs in the client), and later batches are split over the client and its workers while
    other processes leave a core free (:class:`FreeCores`). Why
    by default: a batch in one process is Python under one interpreter lock and uses one
    core; a user who asks for a batch (LangChain ``batch``, a list of questions) expects it
    to use the machine, and one who never batches pays nothing.

    A call may go to the pool (:meth:`for_call`) only when the workers would answer exactly
    as the client: no reranker, every write saved (a worker sees what is committed) and the
    config unchanged since they started (a changed config starts new ones). The pool starts
    in a thread, when the client opens a saved index or at the first call after its first
    save, so a start never delays a call; a start that fails warns once (a missing
    ``__main__`` guard, a damaged index) and the client answers every call itself.
    """

    def __init__(self, processes: ReaderProcesses, client: ReadingClient) -> None:
        self.batches_only = processes == "auto"
        """``reader_processes="auto"``: the pool serves batches, never single finds."""
        self.processes = auto_reader_processes() if processes == "auto" else int(processes)
        self._client = client
        self.readers: tuple[str, ReaderPool] | None = None
        """The running pool and the config (as JSON) it was started with."""
        self._lock = threading.Lock()
        self._wanted: str | None = None
        """The config a pool is being started with, or failed to start with (not retried)."""
        self._starter: threading.Thread | None = None
        """The thread starting a pool, if any: :meth:`close` waits for it (no worker process
        outlives ``close()``)."""
        self._closed = False
        self.free_cores: FreeCores | None = FreeCores() if self.batches_only else None
        """``"auto"``: batches split only while other processes leave a core free
        (:class:`FreeCores`); ``None`` splits every batch that may be split (as with
        ``reader_processes=N``; tests and benchmarks set it to measure the split)."""
        self._cancel = threading.Event()
        """Set by :meth:`close`: a pool still starting stops waiting for its workers."""
        self._aside: ThreadPoolExecutor | None = None
        """The threads that wait for the workers' answers to awaited calls
        (:meth:`overflow`), one per worker; made at the first such call."""

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (the client is closing or closed)."""
        return self._closed

    def for_call(self, batch: bool = False) -> ReaderPool | None:
        """The pool, when a read (``batch``: a ``find_many`` large enough to split) may go to
        it now. When one may but none runs with the current config, one is started in a
        thread (the call meanwhile runs in the client)."""
        if not self.processes or self._closed or (self.batches_only and not batch):
            return None
        a = self._client
        store = a.store
        if a.reranker is not None or not isinstance(store, EmbeddedStore) or store.unsaved:
            return None
        if store.path is None or not store.generation:
            return None  # nothing saved yet
        config = a.config.model_dump_json()
        readers = self.readers
        if readers is not None and readers[0] == config:
            free = self.free_cores
            if batch and free is not None:
                pids = tuple(w.process.pid or 0 for w in list(readers[1]._workers))
                if not free.now(pids):
                    return None  # no free core: the batch runs in the client, cheaper
            return readers[1]
        with self._lock:
            if self._wanted == config or self._closed:
                return None  # being started (or it failed: this call and later ones run here)
            self._wanted = config
            starter = threading.Thread(
                target=self._start,
                args=(store.path, config),
                name="treehop-reader-start",
                daemon=True,
            )
            self._starter = starter
        starter.start()
        return None

    def _start(self, path: Path, config: str) -> None:
        """Start a pool with ``config`` and put it in place of the old one (closed after)."""
        a = self._client
        try:
            pool = ReaderPool(
                path,
                embedder=a.embedder,
                config=RetrievalConfig.model_validate_json(config),
                user=a.user,
                processes=self.processes,
                _cancel=self._cancel,
            )
        except TreehopError as exc:
            if self._closed:
                return  # (cancelled by close(): nothing to warn about)
            # ``_wanted`` stays: finds run in the client rather than retry each call, and
            # the caller learns why once (a missing ``__main__`` guard, a damaged index)
            warnings.warn(
                f"treehop: reader processes did not start, find() runs in this process: {exc}",
                RuntimeWarning,
                stacklevel=1,
            )
            return
        with self._lock:
            if self._closed or self._wanted != config:
                stale: ReaderPool | None = pool  # closed, or another config wanted meanwhile
            else:
                stale = self.readers[1] if self.readers is not None else None
                self.readers = (config, pool)
        if stale is not None:
            stale.close()

    def wait(self, timeout: float = 120.0) -> bool:
        """Wait until a pool runs with the current config (tests and benchmarks; with
        ``"auto"`` it starts one as a batch would)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            readers = self.readers
            if readers is not None and readers[0] == self._client.config.model_dump_json():
                return True
            self.for_call(batch=True)
            time.sleep(0.05)
        return False

    async def overflow(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
        """``fn(*args, **kwargs)`` (a :class:`~treehop.ReaderPool` call) awaited, its wait
        for a worker in a thread of this client's own executor, one thread per worker.

        Why not the loop's default executor (``asyncio.to_thread``): awaits that overflow
        while every worker is busy would each hold one of its few threads (on 2 cores, 6)
        waiting for a worker, and the find running on the loop offloads its global step to
        that executor too: it queued behind them, and the loop's share of the work stalled.
        Here the calls beyond the workers wait in this executor's queue, holding no thread.
        """
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._closed:
                raise ClientClosedError("this client is closed")
            aside = self._aside
            if aside is None:
                aside = self._aside = ThreadPoolExecutor(
                    max_workers=self.processes, thread_name_prefix="treehop-overflow"
                )
            future = loop.run_in_executor(aside, functools.partial(fn, *args, **kwargs))
        return await future

    def close(self) -> None:
        """Stop and join every worker, a pool still starting included, and the threads that
        wait for them (idempotent)."""
        with self._lock:
            self._closed = True
            self._cancel.set()  # a pool still starting kills its workers and gives up
            readers, self.readers = self.readers, None
            self._wanted = None
            starter = self._starter
            aside, self._aside = self._aside, None
        if readers is not None:
            readers[1].close()
        if aside is not None:
            # calls still queued there find the pool closed and raise ClientClosedError
            # (not cancelled: their callers get a typed error, not a CancelledError)
            aside.shutdown(wait=True)
        if starter is not None:
            # a pool still starting is closed by its thread once it sees ``_closed``;
            # waiting here means no worker process outlives this call
            starter.join()
