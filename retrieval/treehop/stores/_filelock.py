"""The inter-process writer lock of an embedded index: one writer per index directory.

``flock`` (POSIX) or ``msvcrt.locking`` (Windows) on ``<index>/LOCK``. The operating system
drops the lock when the holding process dies, even by ``SIGKILL``, so a crash never leaves an
index locked. ``flock`` locks belong to an open file, so two store objects in one process on the
same path exclude each other too (a process shares one writer through
:meth:`EmbeddedStore.shared`). A waiting writer polls with a short back-off up to its timeout
and then raises :class:`~treehop.errors.IndexLockedError`; it never writes without the lock.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

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
