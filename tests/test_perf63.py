"""The write lock's index-folder anchor kept per store, and the columns read at an open
(helper perf63).

1. Holds of one store open the index folder once (the descriptor kept between holds); the
   lock stays on the folder the path names: a folder renamed away between holds and
   another made at the path, the next hold locks the new one and lets the old one go.
2. A forked child never shares the parent's kept descriptor: while the parent holds the
   lock, the child's try on the same store object finds it taken (a ``flock`` through a
   descriptor the two share would be granted to both).
3. ``close()`` closes the kept descriptor.
4. The fixed-width columns read at an open are arrays of their own (no map, writable), the
   same values as the file; a column file cut short is still ``IndexCorruptError``.
5. A closed store's reopen of the same generation starts with the structural lookups the
   close let go (the same answers as built anew, no column file left open by them); after
   another writer's commit, or with the folder replaced, it starts empty.

No threads; the fork test's child reports through its exit status.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import IndexCorruptError
from treehop.stores._filelock import IndexFolder, aholding_store
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="flock and fork (POSIX)")


def _filled(idx: Path, n: int = 2) -> None:
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"Alpha text {i} here", target_uri=f"viking://resources/a{i}.md")


def _fds_on(folder: Path) -> int:
    """How many of this process's descriptors are open on ``folder``."""
    want = os.path.realpath(folder)
    count = 0
    for n in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{n}") == want:
                count += 1
        except OSError:
            pass
    return count


_OPEN = os.open  # (the real one: the counting test replaces os.open)


def _free(folder: Path) -> bool:
    """Whether another open file of ``folder`` can ``flock`` it now."""
    fd = _OPEN(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def _holds(store: EmbeddedStore, n: int, inside: Any = None) -> list[Any]:
    seen: list[Any] = []

    async def main() -> None:
        for _ in range(n):
            async with aholding_store(store):
                seen.append(inside() if inside is not None else None)

    asyncio.run(main())
    return seen


def test_holds_open_the_index_folder_once_and_keep_it_between_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    opened: list[str] = []
    real = os.open

    def counting(path: Any, *a: Any, **k: Any) -> int:
        opened.append(os.fspath(path))
        return real(path, *a, **k)

    monkeypatch.setattr(os, "open", counting)
    held = _holds(store, 5, lambda: (_free(idx), _fds_on(idx)))
    monkeypatch.undo()
    assert opened.count(os.fspath(idx)) == 1, opened  # (once per hold before: 5)
    assert all(not free for free, _ in held)  # (each hold had the folder locked)
    assert _free(idx)  # (and let it go)
    assert _fds_on(idx) == 1  # (kept open between holds)
    store.close()
    assert _fds_on(idx) == 0  # (closed by close())
    _holds(store, 1)  # (the store stays usable: opened again)
    assert _fds_on(idx) == 1
    store.close()


def test_a_folder_swapped_between_holds_is_let_go_and_the_new_one_locked(
    tmp_path: Path,
) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    _holds(store, 1)
    old = tmp_path / "old"
    idx.rename(old)  # (the kept descriptor now names the folder at ``old``)
    _filled(idx)
    st = os.stat(idx)

    def inside() -> tuple[Any, bool, bool]:
        lock = store._writes_made
        assert lock is not None
        return lock.anchor_identity(), _free(idx), _free(old)

    [(identity, new_free, old_free)] = _holds(store, 1, inside)
    assert identity == (st.st_dev, st.st_ino)  # (the folder at the path, not the kept one)
    assert not new_free and old_free
    assert _fds_on(old) == 0 and _fds_on(idx) == 1
    store.close()
    assert _fds_on(idx) == 0


def test_a_forked_child_does_not_share_the_parents_kept_descriptor(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    _filled(idx)
    store = EmbeddedStore(idx)
    folder = IndexFolder(idx)
    fd, kept = folder.try_lock()  # (the parent holds the folder through the kept one)
    assert fd >= 0 and kept
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through its exit status
        code = 1
        try:
            closed = folder._fd is None
            # (the child's copy of the kept descriptor is closed at the fork: locked
            # through it, a descriptor shared with the parent, the flock was granted)
            again, _ = folder.try_lock()
            # (and through the store's own write lock, which keeps its own folder)
            lock = store.writes_lock()
            assert lock is not None
            code = 0 if closed and again < 0 and not lock.try_acquire() else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    folder.unlock(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert _free(idx)
    folder.close()
    store.close()


def test_the_columns_read_at_an_open_are_owned_and_a_short_one_is_corrupt(
    tmp_path: Path,
) -> None:
    idx = tmp_path / "idx"
    _filled(idx, 3)
    store = EmbeddedStore(idx)
    s = store._snap
    data = next(idx.glob("data-*"))
    for name, arr in s.cols.items():
        assert arr.base is None and arr.flags.writeable, name  # (no map behind it)
        on_disk = np.fromfile(data / f"{name}.bin", dtype=arr.dtype)[: s.n]
        assert np.array_equal(arr[: s.n], on_disk), name
    store.close()
    f = data / "uri_hash.bin"
    f.write_bytes(f.read_bytes()[:-8])  # (one row short)
    with pytest.raises(IndexCorruptError):
        len(EmbeddedStore(idx, verify=False, strict=True))


def _data_fds(idx: Path) -> list[str]:
    out = []
    for n in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{n}")
        except OSError:
            continue
        if target.startswith(os.path.realpath(idx) + "/data-"):
            out.append(target)
    return out


def test_a_reopen_of_the_same_generation_keeps_the_lookups_and_no_file(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    _filled(idx, 3)
    store = EmbeddedStore(idx)
    root = "viking://resources"
    built = store._subtree_rows(store._snap, root)
    rows = store._snap.lookup([f"{root}/a1.md"])
    assert built.size and rows[0] >= 0
    store.close()
    assert _data_fds(idx) == []  # (the lookups kept hold no map of a column file)
    snap = store._snap  # (mapped again: the same generation)
    assert root in snap.cache[("subtree",)]  # (kept over the close: empty before)
    assert np.array_equal(snap.cache[("subtree",)][root], store._subtree_rows_uncached(snap, root))
    assert snap.cache[("rows",)][f"{root}/a1.md"] == rows[0]
    store.close()
    # (another writer commits: the next reopen maps a new generation, built anew)
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("Beta text here", target_uri=f"{root}/b.md")
    snap = store._snap
    assert ("subtree",) not in snap.cache and ("rows",) not in snap.cache
    store._subtree_rows(snap, root)
    store.close()
    # (the folder replaced by a copy of itself, the same generation: not taken over)
    twin = tmp_path / "twin"
    shutil.copytree(idx, twin)
    idx.rename(tmp_path / "gone")
    twin.rename(idx)
    snap = store._snap
    assert ("subtree",) not in snap.cache
    store.close()
