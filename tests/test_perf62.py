"""The write-lock hold and a closed store's reopen after stop 62's locks (helper perf62).

1. One uncontended hold of a store's write lock on disk opens ``locks/`` once for both
   first tries (``writes-turn``, then ``writes``), not once per file; a hold that has to
   wait at either still gets the lock when it is let go, and a linked ``writes-turn`` is
   refused with no descriptor left open.
2. The column files are mapped without ``np.memmap``: the pages a verification released
   still leave the process (``_release_pages`` finds the new maps' ``mmap``).

Threads are not used: the waits run on one event loop, which polls the lock; the test
lets the blocker go once the hold is seen waiting (``store_writers_waiting``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import StoreError
from treehop.stores import _filelock
from treehop.stores._filelock import WriterLock, aholding_store, store_writers_waiting
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_files

from treehop_test_doubles import BagOfWordsEmbedder

pytestmark = pytest.mark.skipif(not _filelock._BY_DIR_FD, reason="opens by folder descriptor")


def _filled(idx: Path, n: int = 2) -> None:
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"Alpha text {i} here", target_uri=f"viking://resources/a{i}.md")


def _open_fds() -> set[str]:
    return {
        os.readlink(f"/proc/self/fd/{n}")
        for n in os.listdir("/proc/self/fd")
        if os.path.exists(f"/proc/self/fd/{n}")
    }


def test_an_uncontended_hold_opens_locks_once_for_both_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    locks = os.fspath(idx / "locks")
    opened: list[str] = []
    real = os.open

    def counting(path: Any, *a: Any, **k: Any) -> int:
        opened.append(os.fspath(path))
        return real(path, *a, **k)

    async def hold() -> None:
        async with aholding_store(store):
            # (held: another descriptor of locks/writes cannot take it)
            assert not WriterLock(idx / "locks" / "writes").try_acquire()

    monkeypatch.setattr(os, "open", counting)
    asyncio.run(hold())
    monkeypatch.undo()
    assert opened.count(locks) == 1, opened  # (twice before: once per lock file)
    assert opened.count("writes-turn") == 1 and opened.count("writes") == 1
    after = WriterLock(idx / "locks" / "writes")
    assert after.try_acquire()  # (let go at the end of the hold)
    after.release()
    store.close()


@pytest.mark.parametrize("blocked", ["writes-turn", "writes"])
def test_a_hold_that_waits_at_either_file_takes_the_lock_when_it_is_let_go(
    tmp_path: Path, blocked: str
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx, lock_timeout=30)
    other = WriterLock(idx / "locks" / blocked)  # (another descriptor: flock excludes it)
    assert other.try_acquire()
    events: list[str] = []

    async def hold() -> None:
        async with aholding_store(store):
            events.append("held")
            assert not WriterLock(idx / "locks" / "writes").try_acquire()

    async def main() -> None:
        task = asyncio.ensure_future(hold())
        while store_writers_waiting(store) == 0:
            await asyncio.sleep(0)
        # (the hold's first tries have failed: it waits, polling)
        for _ in range(20):
            await asyncio.sleep(0)
        assert events == [] and not task.done()
        events.append("let go")
        other.release()
        await asyncio.wait_for(task, 30)

    asyncio.run(main())
    assert events == ["let go", "held"]
    store.close()


def test_a_linked_turnstile_file_is_refused_with_nothing_left_open(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    outside = tmp_path / "outside"
    (idx / "locks" / "writes-turn").unlink(missing_ok=True)
    (idx / "locks" / "writes-turn").symlink_to(outside)
    store = EmbeddedStore(idx, lock_timeout=0)

    async def hold() -> None:
        async with aholding_store(store):
            raise AssertionError("held through a linked turnstile")

    before = _open_fds()
    for _ in range(3):
        with pytest.raises(StoreError, match="symbolic link"):
            asyncio.run(hold())
    assert not outside.exists()
    assert _open_fds() - before == set()  # (the shared locks/ descriptor closed each time)
    (idx / "locks" / "writes-turn").unlink()
    asyncio.run(_empty_hold(store))  # (nothing left held: the next hold gets the lock)
    shutil.rmtree(idx / "locks")
    asyncio.run(_empty_hold(store))  # (locks/ deleted: made again, as before)
    assert (idx / "locks" / "writes").is_file()
    store.close()


async def _empty_hold(store: EmbeddedStore) -> None:
    async with aholding_store(store):
        pass


def test_released_pages_of_a_mapped_column_leave_the_process(tmp_path: Path) -> None:
    f = tmp_path / "col.bin"
    pages = 64
    f.write_bytes(np.arange(pages * 1024, dtype=np.uint32).tobytes())
    arr = emb_files._mapped(f, np.uint32, pages * 1024)
    assert not arr.flags.writeable
    assert int(arr[-1]) == pages * 1024 - 1 and int(arr.sum(dtype=np.uint64)) > 0
    assert _resident(arr) >= pages * 4096 // 2
    emb_files._release_pages(arr, 0, pages * 4096)
    assert _resident(arr) == 0
    assert int(arr[5]) == 5  # (faults back in from the file)


def _resident(arr: np.ndarray) -> int:
    """Resident bytes of the mapping holding ``arr``'s data (Linux smaps)."""
    at = int(arr.__array_interface__["data"][0])
    hit = False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                hit = lo <= at < hi
            elif hit and head and head[0] == "Rss:":
                return int(head[1]) * 1024
    raise AssertionError("no mapping holds the array")
