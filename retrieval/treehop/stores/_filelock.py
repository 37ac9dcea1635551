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
import contextlib
import os
import sys
import threading
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import IndexLockedError, StoreError

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


class WriterLock:
    """An exclusive, non-reentrant lock on one file, held until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def _open(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"cannot open the index lock file {self.path}: {exc.strerror or exc}"
            ) from exc

    def try_acquire(self) -> bool:
        """Take the lock if it is free right now."""
        if self._fd is not None:
            return True
        fd = self._open()
        if _try_lock(fd):
            self._fd = fd
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
        while not _try_lock(fd):
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                raise IndexLockedError(
                    f"{self.path.parent} is locked by another writer "
                    f"(waited {timeout:g} s; see EmbeddedStore(lock_timeout=...))"
                )
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)
        self._fd = fd

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            _unlock(fd)
        finally:
            os.close(fd)


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
    return lock, float(getattr(store, "lock_timeout", 10.0))


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
    lock.acquire(float(getattr(store, "lock_timeout", 10.0)))
    try:
        yield
    finally:
        lock.release()
