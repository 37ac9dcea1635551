"""The inter-process writer lock of an embedded index: one writer per index directory.

``flock`` (POSIX) or ``msvcrt.locking`` (Windows) on ``<index>/LOCK``. The operating system
drops the lock when the holding process dies, even by ``SIGKILL``, so a crash never leaves an
index locked. ``flock`` locks belong to an open file, so two store objects in one process on the
same path exclude each other too (a process shares one writer through
:meth:`EmbeddedStore.shared`). A waiting writer polls with a short back-off up to its timeout
and then raises :class:`~treehop.errors.IndexLockedError`; it never writes without the lock.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import errno
import functools
import math
import numbers
import os
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import IndexLockedError, StoreError
from ..validation import shown_value

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _try_lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


_BY_DIR_FD = os.open in os.supports_dir_fd and hasattr(os, "O_NOFOLLOW")
_FOLDER_FLAGS = (
    os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
    if hasattr(os, "O_CLOEXEC")
    else os.O_RDONLY
)

_ANCHOR_FLAGS = _FOLDER_FLAGS & ~getattr(os, "O_NOFOLLOW", 0)
"""The index folder, opened to lock it (``anchor``): a folder, which may be a link."""


def held_elsewhere(path: Path) -> bool:
    """Whether the lock file ``path`` exists and another holder has it locked now: a probe
    that creates nothing and holds nothing (the file opened read-only, locked without
    waiting and unlocked at once). Any failure to open it reads as not held."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if _try_lock(fd):
            _unlock(fd)
            return False
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class WriterLock:
    """An exclusive, non-reentrant lock on one file, held until :meth:`release`.

    A lock made with ``make_folder`` (an index's ``locks/<name>``) opens its folder and its
    file without following a symbolic link at either: a ``locks/`` (or a lock file) that is
    a link is a :class:`StoreError`. Why (helper leftovers62): ``locks/`` made a link to
    another folder put every lock file of the index (``writes``, ``writes-turn``, the key
    locks) outside it, in a folder the link's author chose, and a lock file made a link to
    a missing file created that file wherever it pointed. The index folder itself may be a
    link (a path the user chose); only what lies inside it is not followed.

    ``anchor``: a folder that is also ``flock``-ed while the lock is held (the index folder,
    for its ``locks/writes``). Why (helper leftovers62): a lock on a path cannot see its file
    replaced. ``locks/`` deleted while one process held ``locks/writes`` (its ``flock`` now
    on a file no path names) let a second process make ``locks/`` again, lock a new
    ``writes`` and write beside the first. Deleting ``locks/`` does not replace the index
    folder, so the second waits for the first's hold on it. The file's lock stays (taken
    first) so that a process of an earlier treehop, which locks the file alone, still
    excludes and is excluded."""

    def __init__(
        self,
        path: Path,
        make_folder: Callable[[], object] | None = None,
        anchor: Path | None = None,
    ) -> None:
        self.path = path
        self._fd: int | None = None
        self._make_folder = make_folder
        """Makes the lock file's folder (or raises :class:`StoreError`), called only when
        the open finds it missing: an index's ``locks/`` is made again if deleted, without a
        ``mkdir`` before every open (helper perf61: 14 us of a 48 us write-lock hold)."""
        self._anchor = anchor if sys.platform != "win32" else None
        self._anchor_fd: int | None = None

    def _took(self, fd: int) -> None:
        self._fd = fd
        with _held_files_guard:
            _held_files.add(self)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def anchor_identity(self) -> tuple[int, int] | None:
        """The ``(st_dev, st_ino)`` of the anchor folder while this lock holds it (``None``:
        no anchor held). Why: the folder held is the one a write began on; the path may name
        another by now (renamed, replaced), and a write must not commit into that one
        (:meth:`EmbeddedStore.save <treehop.stores.embedded.EmbeddedStore.save>`)."""
        afd = self._anchor_fd
        if afd is None:
            return None
        try:
            st = os.fstat(afd)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _open(self, folder_fd: int | None = None) -> int:
        try:
            if self._make_folder is not None and _BY_DIR_FD:
                return self._open_inside(folder_fd)
            try:
                return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except (FileNotFoundError, NotADirectoryError):
                if self._make_folder is None:
                    raise
                self._make_folder()
                return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot open the index lock file {self.path}: {exc.strerror or exc}"
            ) from exc

    def open_folder(self) -> int | None:
        """A descriptor of this lock's folder opened as :meth:`_open_inside` opens it (no
        link followed; made when missing), for the caller to pass to :meth:`try_acquire`
        of this lock and of one :meth:`beside` it right after, and then to close; ``None``
        where locks are opened by path. Why (helper perf62): a write-lock hold opened
        ``locks/`` twice, for ``writes-turn`` and then ``writes``, microseconds apart (2.7
        us of its 48 us); one open serves both first tries."""
        if self._make_folder is None or not _BY_DIR_FD:
            return None
        try:
            return self._open_folder()
        except OSError as exc:
            raise StoreError(
                f"cannot open the index lock file {self.path}: {exc.strerror or exc}"
            ) from exc

    def _open_folder(self) -> int:
        assert self._make_folder is not None
        folder, _ = _parts(self.path)
        try:
            return os.open(folder, _FOLDER_FLAGS)
        except OSError as exc:
            # (a link opened with O_NOFOLLOW | O_DIRECTORY: ELOOP or ENOTDIR, by system)
            if exc.errno == errno.ELOOP or os.path.islink(folder):
                raise _linked(self.path.parent, "folder") from None
            if not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                raise
            self._make_folder()
            return os.open(folder, _FOLDER_FLAGS)

    def _open_inside(self, folder_fd: int | None = None) -> int:
        """Open the lock file through its folder's descriptor, following no link at either
        (see the class); a missing folder is made (``make_folder``). ``folder_fd``: that
        folder, opened a moment ago by :meth:`open_folder` (kept open: the caller closes
        it)."""
        dfd = self._open_folder() if folder_fd is None else folder_fd
        try:
            return os.open(
                _parts(self.path)[1], os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644, dir_fd=dfd
            )
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _linked(self.path, "file") from None
            raise
        finally:
            if folder_fd is None:
                os.close(dfd)

    def _lock(self, fd: int) -> bool:
        """``flock`` the opened ``fd`` and then the anchor (if any), without waiting; on
        ``False`` nothing is held (``fd`` stays open)."""
        if not _try_lock(fd):
            return False
        if self._anchor is None:
            return True
        try:
            afd = os.open(self._anchor, _ANCHOR_FLAGS)
        except OSError as exc:
            _unlock(fd)
            raise StoreError(
                f"cannot open the index folder {self._anchor} to lock it: {exc.strerror or exc}"
            ) from exc
        if _try_lock(afd):
            self._anchor_fd = afd
            return True
        os.close(afd)
        _unlock(fd)
        return False

    def try_acquire(self, folder_fd: int | None = None) -> bool:
        """Take the lock if it is free right now (``folder_fd``: see :meth:`open_folder`)."""
        if self._fd is not None:
            return True
        fd = self._open(folder_fd)
        try:
            got = self._lock(fd)
        except BaseException:
            os.close(fd)
            raise
        if got:
            self._took(fd)
            return True
        os.close(fd)
        return False

    def acquire(self, timeout: float) -> None:
        """Take the lock, waiting up to ``timeout`` seconds (0: do not wait)."""
        if self._fd is not None:
            return
        fd = self._open()
        deadline = time.monotonic() + max(0.0, timeout)
        delay = 0.002
        try:
            while not self._lock(fd):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise IndexLockedError(
                        f"{self.path.parent} is locked by another writer "
                        f"(waited {timeout:g} s; see EmbeddedStore(lock_timeout=...))"
                    )
                time.sleep(min(delay, left))
                delay = min(delay * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise
        self._took(fd)

    def beside(self, name: str) -> WriterLock:
        """A lock on the file ``name`` in this lock's folder (made as this one's is)."""
        return WriterLock(_beside(self.path, name), self._make_folder)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        with _held_files_guard:
            _held_files.discard(self)
        afd, self._anchor_fd = self._anchor_fd, None
        try:
            if afd is not None:
                try:
                    _unlock(afd)
                finally:
                    os.close(afd)
        finally:
            try:
                _unlock(fd)
            finally:
                os.close(fd)


def _linked(path: Path, what: str) -> StoreError:
    return StoreError(
        f"the index's lock {what} {path} is a symbolic link: refused (its lock files would "
        "be made where the link points, outside the index); remove the link, and the next "
        "write makes the folder again"
    )


@functools.lru_cache(maxsize=64)
def _beside(path: Path, name: str) -> Path:
    """``path.with_name(name)``, kept: a write-lock hold names its turnstile beside its lock
    file every time (pathlib's parsing, a few us of a 35 us hold)."""
    return path.with_name(name)


@functools.lru_cache(maxsize=512)
def _parts(path: Path) -> tuple[str, str]:
    """``path``'s folder and name as strings, kept: a hold opens two lock files by them
    (pathlib's ``parent`` / ``name`` / ``__fspath__``, ~2 us a hold; helper perf62)."""
    return os.fspath(path.parent), path.name


_held_files: weakref.WeakSet[WriterLock] = weakref.WeakSet()
"""The :class:`WriterLock` objects this process holds (what a forked child must let go)."""
_held_files_guard = threading.Lock()


def lock_timeout_of(value: Any) -> float:
    """``value`` as a lock timeout (seconds, finite, 0 or more; ``0``: do not wait), else
    :class:`~treehop.errors.StoreError`.

    Why: ``float(lock_timeout)`` took NaN and infinity, and every wait's deadline
    (``now + timeout``) then never came: a write waiting for another writer's lock, or for
    its own (a callback's nested write), hung for good instead of raising
    :class:`~treehop.errors.IndexLockedError` (helper attacks64); a string or ``None``
    escaped as ``ValueError`` / ``TypeError``, and ``True`` was one second."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise StoreError(f"lock_timeout must be a number of seconds, got {type(value).__name__}")
    try:
        seconds = float(value)
    except OverflowError:
        seconds = math.inf
    except Exception as exc:  # (a caller's own number whose conversion fails: attacks73)
        raise StoreError(
            f"lock_timeout must be a number of seconds, got {type(value).__name__} "
            f"that float() refuses ({type(exc).__name__})"
        ) from None
    if not (math.isfinite(seconds) and seconds >= 0.0):
        raise StoreError(f"lock_timeout must be finite and 0 or more, got {shown_value(value, 40)}")
    return seconds


# -- an index's key locks, shared within a process ----------------------------------------


@dataclass
class HeldKeyLock:
    """An index's key lock (:meth:`~treehop.stores.embedded.EmbeddedStore.key_lock`) this
    process holds, how many of its callers hold it, and the table it is kept in while held."""

    lock: Any
    users: int
    table: dict[str, HeldKeyLock]


_key_locks: weakref.WeakKeyDictionary[Any, dict[str, HeldKeyLock]] = weakref.WeakKeyDictionary()
_key_locks_guard = threading.Lock()


def take_key_lock(store: Any, lock: Any) -> HeldKeyLock | None:
    """Take (or share) ``lock``, one of ``store``'s key locks, without waiting: the hold
    (give it back with :func:`give_key_lock`), ``None`` while another process holds it.
    Within this process the lock is shared, counted: the callers serialise this process's
    own calls on a key themselves (a conversation's ``threading.Lock``, the sessions'
    lock), and a second ``flock`` of the same file from this process would wait for the
    first (two keys of one bucket, or one nested in another, would wait on themselves)."""
    name = str(lock.path)
    with _key_locks_guard:
        try:
            table = _key_locks.get(store)
            if table is None:
                table = _key_locks[store] = {}
        except TypeError:  # (a store that cannot be a weak key: no sharing, a hold per call)
            table = {}
        entry = table.get(name)
        if entry is None:
            if not lock.try_acquire():
                return None
            entry = table[name] = HeldKeyLock(lock, 0, table)
        entry.users += 1
        return entry


def give_key_lock(entry: HeldKeyLock) -> None:
    """Give back a hold :func:`take_key_lock` gave (the lock is released with its last)."""
    with _key_locks_guard:
        entry.users -= 1
        if entry.users == 0:
            name = str(entry.lock.path)
            if entry.table.get(name) is entry:
                del entry.table[name]
            entry.lock.release()


def _key_lock_of(store: Any, key: str) -> tuple[Any, float]:
    make = getattr(store, "key_lock", None)
    lock = make(key) if callable(make) else None
    return lock, lock_timeout_of(getattr(store, "lock_timeout", 10.0))


def _busy(key: str, timeout: float) -> IndexLockedError:
    return IndexLockedError(
        f"another process is writing to {key[:200]} (waited {timeout:g} s; see "
        "EmbeddedStore(lock_timeout=...))"
    )


def _waits(key: str, timeout: float) -> Iterator[float]:
    """The pauses between tries of a key lock (0.5 ms, doubling up to 50 ms), for
    :func:`holding_key` and :func:`aholding_key`; :class:`~treehop.errors.IndexLockedError`
    once ``timeout`` seconds have passed since the first."""
    give_up = time.monotonic() + timeout
    pause = 0.0005
    while True:
        if time.monotonic() >= give_up:
            raise _busy(key, timeout)
        yield pause
        pause = min(2 * pause, 0.05)


@contextlib.asynccontextmanager
async def aholding_key(store: Any, key: str) -> AsyncIterator[None]:
    """:func:`holding_key` for a coroutine: the wait for another process polls with
    ``asyncio.sleep`` (the event loop keeps running), and a cancelled wait holds nothing.
    A sync :func:`holding_key` of the same key inside it shares this hold (no wait)."""
    lock, timeout = _key_lock_of(store, key)
    if lock is None:
        yield
        return
    waits = _waits(key, timeout)
    while (hold := take_key_lock(store, lock)) is None:
        await asyncio.sleep(next(waits))
    try:
        yield
    finally:
        give_key_lock(hold)


@contextlib.contextmanager
def holding_key(store: Any, key: str) -> Iterator[None]:
    """Hold ``store``'s key lock of ``key`` (nothing for a store without key locks: in
    memory, a remote engine), waiting up to the store's ``lock_timeout`` for another process
    to give it back; :class:`~treehop.errors.IndexLockedError` past it. Blocking (the
    sessions' writes run in a thread): the async twin is :func:`aholding_key`."""
    lock, timeout = _key_lock_of(store, key)
    if lock is None:
        yield
        return
    waits = _waits(key, timeout)
    while (hold := take_key_lock(store, lock)) is None:
        time.sleep(next(waits))
    try:
        yield
    finally:
        give_key_lock(hold)


@contextlib.contextmanager
def holding_named(store: Any, name: str) -> Iterator[None]:
    """Hold ``store``'s lock ``name`` (:meth:`~treehop.stores.embedded.EmbeddedStore.
    named_lock`; nothing for a store without one: in memory, a remote engine), waiting up
    to the store's ``lock_timeout``; :class:`~treehop.errors.IndexLockedError` past it.

    Unlike :func:`holding_key`, every hold opens the lock file anew, so two threads of one
    process exclude each other too (``flock`` locks belong to an open file): two clients of
    one index in a process keep their own in-memory copies of what the lock guards. Not
    reentrant: a caller never takes it inside its own hold.

    Lock order (every inter-process lock of an index): a conversation's or a session's key
    lock, then the writer lock (``LOCK``), then a named lock. A named lock is the last one:
    its holder waits for no other inter-process lock (it reads and writes state blobs, which
    take only the store's in-process lock), so any holder of the others may wait for it."""
    make = getattr(store, "named_lock", None)
    lock = make(name) if callable(make) else None
    if lock is None:
        yield
        return
    lock.acquire(lock_timeout_of(getattr(store, "lock_timeout", 10.0)))
    try:
        yield
    finally:
        lock.release()


# -- a store's write lock: one write (check and write) at a time, across clients and processes


@dataclass(eq=False)
class _StoreGate:
    """The in-process half of a store's write lock (:func:`aholding_store`): one per store
    object, or per index directory for an embedded store on disk (two store objects of one
    path share it), kept while a call holds it or waits for it."""

    key: Any
    lock: threading.Lock
    users: int = 0
    """Calls holding or waiting for it (the gate leaves its table with the last)."""
    waiting: int = 0
    """Calls waiting for it or for the file lock behind it (what tests watch)."""
    line: WaitLine = field(default_factory=lambda: WaitLine())
    """The calls waiting for :attr:`lock`, first come first (:class:`WaitLine`)."""


_STALE_WAITER_S = 1.0
"""A waiter that has not tried its lock for this long loses its place in line (a live one
tries every 50 ms at most)."""


@dataclass(eq=False)
class _Ticket:
    """A call's place in a :class:`WaitLine`, when it last tried, and how to wake it."""

    seen: float
    wake: Any = None
    """While the waiter sleeps between tries: a callable (any thread) that ends the sleep."""


def _done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class WaitLine:
    """The calls of this process waiting for one ``threading.Lock`` that they poll (from any
    thread or event loop), first come, first served: only the first in line may take it.

    Why: polled alone, a client writing in a loop took the lock back before a waiter's next
    try (the waiter sleeps up to 50 ms between tries); six clients of one event loop writing
    for 6 s with ``lock_timeout`` 2 s: with ``add_resource`` (the store's write lock) 9
    writes raised ``IndexLockedError`` and one client made 0 writes; with ``add_memory``
    (the category's lock, which has no deadline in a process) five clients made one write
    each, waiting 6 s (helper attacks64).

    A waiter that stops trying (its event loop blocked by a sync call, its thread dead
    without unwinding) loses its place after :data:`_STALE_WAITER_S`: it cannot hold up the
    ones behind it for good.

    A holder that lets go through :meth:`release` wakes the waiter whose turn it is (on that
    waiter's own loop), so the lock is handed on at once rather than at that waiter's next
    try. Why: four writers of one store in one process, each write 2 ms inside the lock,
    took 7.4 ms a write instead of 2.6 (each hand-over waited out the first waiter's 5 ms
    pause; helper perf60). The pauses stay as the fallback: a wake that comes to nothing
    (the waiter gone, its loop closed) costs nothing but a try."""

    _guard = threading.Lock()

    def __init__(self) -> None:
        self._queue: collections.deque[_Ticket] = collections.deque()

    def _turn_of(self, ticket: _Ticket, now: float) -> bool:
        for t in self._queue:
            if t is ticket:
                return True
            if now - t.seen < _STALE_WAITER_S:
                return False
        return True

    async def take(
        self,
        lock: threading.Lock,
        give_up: float | Callable[[], float] | None,
        busy: Any,
        pauses: tuple[float, float] = (0.0005, 0.05),
    ) -> None:
        """Take ``lock`` in turn, polling with ``asyncio.sleep`` (the event loop runs on;
        a cancelled wait holds nothing); past ``give_up`` (``time.monotonic()``, or a
        function giving it at each try, for a deadline that moves; ``None``: no deadline)
        raise ``busy()``. The first in line tries every 5 ms at most, so the lock is handed
        on within that rather than within the others' longest pause."""
        ticket = _Ticket(time.monotonic())
        with self._guard:
            self._queue.append(ticket)
        taken = False
        try:
            pause, longest = pauses
            while True:
                now = time.monotonic()
                with self._guard:
                    ticket.seen = now
                    first = self._turn_of(ticket, now)
                if first and lock.acquire(blocking=False):
                    taken = True
                    return
                limit = give_up() if callable(give_up) else give_up
                if limit is not None and now >= limit:
                    raise busy()
                await self._nap(ticket, min(pause, 0.005) if first else pause)
                pause = min(2 * pause, longest)
        finally:
            with self._guard:
                self._queue.remove(ticket)
            if not taken and not lock.locked():
                # (a waiter that leaves without the lock, cancelled after a release woke
                # it: the wake was its, so the next in line would sleep out its pause, up to
                # 50 ms, beside a free lock; helper attacks67)
                self._wake_next()

    async def _nap(self, ticket: _Ticket, seconds: float) -> None:
        """Sleep ``seconds``, or less if :meth:`release` wakes ``ticket`` meanwhile."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()
        timer = loop.call_later(seconds, _done, fut)

        def wake() -> None:
            with contextlib.suppress(RuntimeError):  # (its loop closed: nothing to wake)
                loop.call_soon_threadsafe(_done, fut)

        with self._guard:
            ticket.wake = wake
        try:
            await fut
        finally:
            timer.cancel()
            with self._guard:
                ticket.wake = None

    def waiting(self) -> int:
        """How many calls wait in line now."""
        with self._guard:
            return len(self._queue)

    def release(self, lock: threading.Lock) -> None:
        """Release ``lock`` (taken through :meth:`take`) and wake the waiter whose turn it
        is, if it sleeps."""
        lock.release()
        self._wake_next()

    def _wake_next(self) -> None:
        """Wake the waiter whose turn it is, if it sleeps."""
        now = time.monotonic()
        with self._guard:
            wake = next((t.wake for t in self._queue if now - t.seen < _STALE_WAITER_S), None)
        if wake is not None:
            wake()


FIRST_PAUSE_SHARE = 1 / 16
"""The process first in line for an index's ``locks/writes`` (the one holding its
turnstile) tries again after this share of what it has waited so far
(:func:`_first_pause`)."""


def _first_pause(waited: float) -> float:
    """The pause before the next try of the process first in line across processes:
    :data:`FIRST_PAUSE_SHARE` of ``waited``, 0.25 ms to 50 ms.

    Why (helper perf61): another process's release cannot wake this one (no channel
    between them; a blocking ``flock`` cannot be given a deadline, and a thread left
    blocked in one would hold the lock when it comes), so the lock is handed on at this
    process's next try. The pauses doubled up to 50 ms, so a hand-over came up to one whole
    wait late (two processes, 20 ms writes: 13.9 ms median gap between one's release and
    the other's take). A pause of 1/16 of the wait makes a hand-over at most about 6 % of
    the wait late, and the tries still grow only logarithmically with a long wait (about
    120 in a 2 s wait instead of 46: 3 ms more CPU). The processes behind it, waiting at
    the turnstile, keep the doubling pauses: they are not next."""
    return min(max(waited * FIRST_PAUSE_SHARE, 0.00025), 0.05)


_gates: dict[Any, _StoreGate] = {}
_gates_by_store: weakref.WeakKeyDictionary[Any, _StoreGate] = weakref.WeakKeyDictionary()
_gates_guard = threading.Lock()
_held_gates: contextvars.ContextVar[tuple[_StoreGate, ...]] = contextvars.ContextVar(
    "treehop_held_store_writes", default=()
)
STORE_WRITES_TIMEOUT = 10.0
"""The wait of a store without ``lock_timeout`` (in memory of another kind, a remote
engine) for another client's write of the same store object in this process."""


def _gate_key(store: Any) -> Any:
    """Which gate ``store`` shares: its index directory (resolved) for a store with a
    :meth:`~treehop.stores.embedded.EmbeddedStore.writes_lock` and a path, else the store
    object itself (``None``)."""
    path = getattr(store, "path", None)
    if path is not None and callable(getattr(store, "writes_lock", None)):
        return ("path", _resolved(store, os.fspath(path)))
    return None


_resolved_paths: weakref.WeakKeyDictionary[Any, tuple[str, tuple[int, int], str]] = (
    weakref.WeakKeyDictionary()
)


def _resolved(store: Any, path: str) -> str:
    """``os.path.realpath(path)``, kept per store while it still holds: ``path`` (followed)
    and the kept resolved path (not followed) both name the directory they named when it
    was resolved (its ``st_dev``, ``st_ino``: a ``stat`` and an ``lstat``).

    Why: ``realpath`` ``lstat``s every component of the path, 19 us of a 48 us write-lock
    hold on disk (helper perf61). Why check the kept path too, not only ``path``: the
    directory renamed and ``path`` made a symlink to its new name is the same directory,
    whose resolved path changed (a new store object of it resolves the new name: the two
    must share a gate). Not caught: a folder *above* the index renamed and replaced by a
    symlink to it (the kept path still reaches the directory); the two store objects then
    wait for each other through ``locks/writes`` (its ``flock`` excludes two descriptors of
    one process too) rather than the shared gate, as two objects did before when that
    happened during a hold. Not kept while the directory is missing (a new index, made by
    its first write: the resolved path of a missing path is what it will be once made)."""
    try:
        st = os.stat(path)
    except OSError:
        return os.path.realpath(path)
    ident = (st.st_dev, st.st_ino)
    try:
        kept = _resolved_paths.get(store)
    except TypeError:  # (a store that cannot be a weak key: resolved every time)
        return os.path.realpath(path)
    if kept is not None and kept[0] == path and kept[1] == ident and st.st_ino:
        try:
            again = os.lstat(kept[2])
        except OSError:
            again = None
        if again is not None and (again.st_dev, again.st_ino) == ident:
            return kept[2]
    real = os.path.realpath(path)
    _resolved_paths[store] = (path, ident, real)
    return real


def _folder_held(gate: _StoreGate, held: tuple[_StoreGate, ...]) -> bool:
    """Whether this context holds another gate of ``gate``'s index folder (the same
    directory reached by another resolved path).

    Why (helper attacks69): :func:`_resolved` keeps a store's resolved path while it still
    reaches the directory, so after a folder *above* the index was renamed and its old name
    made a symlink to it, a store object opened before keeps the old path as its gate key and
    one opened after gets the new path: two gates of one index. Plain writes through both
    still exclude each other (``locks/writes``), but a nested hold (a write through the
    second object from inside a write through the first) waited for its own outer hold's
    ``flock`` and failed with :class:`~treehop.errors.IndexLockedError` after
    ``lock_timeout``, where every path resolved at each hold had shared one gate. Only
    nested holds of two different gates pay for it (a ``stat`` of each key)."""
    if gate.key is None:
        return False
    for other in held:
        if other.key is not None:
            with contextlib.suppress(OSError):
                if os.path.samefile(other.key[1], gate.key[1]):
                    return True
    return False


def _take_gate(store: Any) -> _StoreGate:
    key = _gate_key(store)
    with _gates_guard:
        if key is not None:
            gate = _gates.get(key)
            if gate is None:
                gate = _gates[key] = _StoreGate(key, threading.Lock())
        else:
            try:
                gate = _gates_by_store.get(store)
                if gate is None:
                    gate = _gates_by_store[store] = _StoreGate(None, threading.Lock())
            except TypeError:  # (a store that cannot be a weak key: no sharing)
                gate = _StoreGate(None, threading.Lock())
        gate.users += 1
        return gate


def _give_gate(gate: _StoreGate) -> None:
    with _gates_guard:
        gate.users -= 1
        if gate.users == 0 and gate.key is not None and _gates.get(gate.key) is gate:
            del _gates[gate.key]


def _gate_of(store: Any) -> _StoreGate | None:
    """``store``'s gate in this process (by its folder, else by the object), or ``None``;
    the caller holds ``_gates_guard``."""
    key = _gate_key(store)
    if key is not None:
        return _gates.get(key)
    try:
        return _gates_by_store.get(store)
    except TypeError:  # (an object that cannot be a weak key: never gated by object)
        return None


def store_writers_waiting(store: Any) -> int:
    """How many calls of this process wait for ``store``'s write lock
    (:func:`aholding_store`): 0 when none does (tests interleave writes on it)."""
    with _gates_guard:
        gate = _gate_of(store)
        return gate.waiting if gate is not None else 0


def another_write_holds(store: Any) -> bool:
    """Whether a write of ``store`` (:func:`aholding_store`) is in progress in this process
    and the calling context is not inside it: another client's write, or one of this
    client's own on another task or thread (what :meth:`EmbeddedStore.close
    <treehop.stores.embedded.EmbeddedStore.close>` must not save half of)."""
    with _gates_guard:
        gate = _gate_of(store)
    if gate is None or not gate.lock.locked():
        return False
    held = _held_gates.get()
    return gate not in held and not _folder_held(gate, held)


def _store_busy(store: Any, timeout: float) -> IndexLockedError:
    where = getattr(store, "path", None)
    what = f"{where}" if where is not None else "this store"
    return IndexLockedError(
        f"another write to {str(what)[:200]} (another client, or another process) did not "
        f"end within {timeout:g} s; see EmbeddedStore(lock_timeout=...)"
    )


@contextlib.asynccontextmanager
async def aholding_store(store: Any) -> AsyncIterator[None]:
    """Hold ``store``'s write lock: what a client's write (its checks of the place against
    what is stored, then the write and its save) runs under, so that no other write of the
    same store runs in between, whichever client or process makes it.

    Why: each client's ``TreeWriter.lock`` is its own, and the embedded store's writer lock
    (``LOCK``) is held only from a write's first ``upsert`` to its ``save``, after the
    write's checks read the store. Two clients of one store, or two processes of one index
    directory, each checked "no document above this place", then each wrote: process B's
    text below the memory process A was writing, and A's memory became a directory, its
    text gone (helper xproc59).

    Two halves, both waited for (polling with ``asyncio.sleep``: the event loop runs on)
    within one deadline, the store's ``lock_timeout`` (:data:`STORE_WRITES_TIMEOUT` for a
    store without one), past which :class:`~treehop.errors.IndexLockedError` is raised and
    nothing is held:

    - in this process, a ``threading.Lock`` per store object (per index directory for an
      embedded store on disk: two store objects of one path share it), whatever thread or
      event loop each client runs on, taken first come, first served
      (:class:`WaitLine`; helper attacks64);
    - across processes, for an embedded store on disk, its
      :meth:`~treehop.stores.embedded.EmbeddedStore.writes_lock` (a ``flock``: a process
      that dies holding it, even by ``SIGKILL``, releases it, so a lock file left behind
      never stops a writer); then the store picks up what another process committed
      (:meth:`~treehop.stores.embedded.EmbeddedStore.refresh`) before the caller reads.
      Taken through a turnstile (``locks/writes-turn``, held only while waiting): with
      polling alone, a process writing in a loop took the lock back before another
      process's next try, and that one ran out its ``lock_timeout``.

    Reentrant in a context that holds it (a coroutine, the tasks it starts, the worker
    threads ``asyncio.to_thread`` runs for it): a nested hold shares the outer one. Remote
    engines (Milvus, VikingDB) get the in-process half only: they have no lock, no
    transaction and no conditional write to build the other half on (see bench/README.md,
    helper xproc59).

    Lock order (with :func:`holding_named`'s): a conversation's or a session's key lock,
    then a client's write lock, then this one, then the writer lock (``LOCK``), then a
    named lock."""
    held = _held_gates.get()
    gate = _take_gate(store)
    try:
        if gate in held or _folder_held(gate, held):
            yield
            return
        timeout = lock_timeout_of(getattr(store, "lock_timeout", STORE_WRITES_TIMEOUT))
        give_up = time.monotonic() + timeout
        pause = 0.0005
        file: WriterLock | None = None
        with _gates_guard:
            gate.waiting += 1
        try:
            await gate.line.take(gate.lock, give_up, lambda: _store_busy(store, timeout))
            try:
                file = store.writes_lock() if gate.key is not None else None
                if file is not None:
                    # (the turnstile first, held only while waiting for the lock: a process
                    # that writes in a loop waits at the turnstile for a waiter already
                    # there, instead of taking the lock back before the waiter's next try)
                    turn = file.beside("writes-turn")
                    # (``locks/`` opened once for the first tries of both files, closed
                    # before any wait: a retry opens it again; helper perf62)
                    dfd = file.open_folder()
                    try:
                        got_turn = turn.try_acquire(dfd)
                        got = got_turn and file.try_acquire(dfd)
                    except BaseException:
                        turn.release()
                        raise
                    finally:
                        if dfd is not None:
                            os.close(dfd)
                    while not got_turn and not turn.try_acquire():
                        now = time.monotonic()
                        if now >= give_up:
                            raise _store_busy(store, timeout)
                        await asyncio.sleep(min(pause, give_up - now))
                        pause = min(2 * pause, 0.05)
                    try:
                        first = time.monotonic()
                        while not got and not file.try_acquire():
                            now = time.monotonic()
                            if now >= give_up:
                                raise _store_busy(store, timeout)
                            await asyncio.sleep(min(_first_pause(now - first), give_up - now))
                    finally:
                        turn.release()
            except BaseException:
                gate.line.release(gate.lock)
                raise
        finally:
            with _gates_guard:
                gate.waiting -= 1
        token = _held_gates.set((*held, gate))
        try:
            if file is not None:
                store.refresh()  # (what another process committed before this write's reads)
                # (the records a writer that stopped before the index's first commit left,
                # removed before this write writes its own; helper leftovers77)
                clear = getattr(store, "_clear_dead_records", None)
                if callable(clear):
                    clear(holding_writes=True)
            yield
        finally:
            _held_gates.reset(token)
            try:
                if file is not None:
                    file.release()
            finally:
                gate.line.release(gate.lock)
    finally:
        _give_gate(gate)


def _forget_locks_in_forked_child() -> None:
    """In a child made by ``os.fork`` (``multiprocessing``'s ``fork`` start method, a
    pre-forking server): hold none of the parent's locks, and wait for none of its holds.

    Why (helper attacks66): a ``flock`` belongs to the open file, and a forked child
    inherits the parent's descriptors, ``O_CLOEXEC`` or not (no ``exec``). A parent that
    forked while one of its threads held ``locks/writes`` (or ``LOCK``, a key lock) and was
    then killed left the lock held by a child that never knew it had it: every other process
    got :class:`~treehop.errors.IndexLockedError` for as long as that child lived, though a
    dead holder is promised to leave no lock behind. And the child's copies of the
    in-process gates were locked by a thread that does not exist in it: each write of the
    child to that index waited its ``lock_timeout`` and failed, for good. The child closes
    its copies of the held descriptors (closing, never unlocking: ``LOCK_UN`` would release
    the parent's hold too), and starts with empty gate and key-lock tables and new guards.
    Objects the child copied from the parent (a client, a store) are not made safe: open a
    new client in the child."""
    global _held_files_guard, _gates_guard, _key_locks_guard
    for lock in list(_held_files):
        fd, lock._fd = lock._fd, None
        afd, lock._anchor_fd = lock._anchor_fd, None
        for one in (fd, afd):
            if one is not None:
                with contextlib.suppress(OSError):
                    os.close(one)
    _held_files.clear()
    _held_files_guard = threading.Lock()
    _gates.clear()
    _gates_by_store.clear()
    _gates_guard = threading.Lock()
    _key_locks.clear()
    _key_locks_guard = threading.Lock()
    WaitLine._guard = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks_in_forked_child)
