"""Helper perf61: a tree's reads keep their folders' descriptors open from one file to the
next (:class:`treehop.ingest.loaders.FolderCursor`), and the write lock's files are opened
without a ``mkdir`` or a ``realpath`` per hold. These check that neither weakens what it
replaced: a folder swapped for a symlink is still not followed, ``locks/`` deleted between
writes is made again, and two paths to one index still share one gate."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop
from treehop.errors import StoreError
from treehop.ingest import loaders
from treehop.ingest.loaders import FolderCursor, LoadReport, read_file
from treehop.stores import _filelock
from treehop.stores._filelock import aholding_store
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

pytestmark = pytest.mark.skipif(not loaders._BY_DIR_FD, reason="needs os.open(dir_fd=)")

SECRET = "SECRET-KEY-OUTSIDE-THE-TREE"


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    top = tmp_path / "src"
    for sub in ("sub", "zother"):
        (top / sub).mkdir(parents=True)
    (top / "sub" / "a.md").write_text("# A\n\nfirst note inside\n")
    (top / "sub" / "b.md").write_text("# B\n\nsecond note inside\n")
    (top / "sub" / "c.md").write_text("# C\n\nthird note inside\n")
    (top / "zother" / "x.md").write_text("# X\n\nanother folder\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (outside / name).write_text(f"# {name}\n\n{SECRET}\n")
    return top, outside


def _read(top: Path, rel: str, report: LoadReport, folders: FolderCursor) -> str | None:
    f = read_file(f"{top}{os.sep}{rel}", rel, report, follow=False, folders=folders)
    return None if f is None else f.text


def _swap_by_rename(top: Path, outside: Path) -> None:
    (top / "sub").rename(top / "sub-old")
    (top / "sub").symlink_to(outside, target_is_directory=True)


def _swap_by_delete(top: Path, outside: Path) -> None:
    shutil.rmtree(top / "sub")
    (top / "sub").symlink_to(outside, target_is_directory=True)


def test_a_kept_folder_swapped_for_a_symlink_between_two_reads_is_not_followed(
    tmp_path: Path,
) -> None:
    """``sub`` is kept open after ``sub/a.md``; then it is renamed away and a symlink to a
    folder outside the tree takes its name. ``sub/b.md`` is read from the folder that was
    opened (the text the scan found), never from outside; once the cursor has left ``sub``,
    ``sub/c.md`` opens ``sub`` again, ``O_NOFOLLOW``: refused."""
    top, outside = _tree(tmp_path)
    report = LoadReport()
    with FolderCursor() as folders:
        assert "first note inside" in (_read(top, "sub/a.md", report, folders) or "")
        _swap_by_rename(top, outside)
        b = _read(top, "sub/b.md", report, folders)
        assert b is not None and "second note inside" in b and SECRET not in b
        assert "another folder" in (_read(top, "zother/x.md", report, folders) or "")
        assert _read(top, "sub/c.md", report, folders) is None
    assert report.skipped_unreadable == ["sub/c.md"]


def test_a_kept_folder_deleted_and_replaced_by_a_symlink_is_not_followed(tmp_path: Path) -> None:
    """The kept folder deleted (not moved) and a symlink to outside put in its place: its
    next file is not found through the kept descriptor, and not read from outside."""
    top, outside = _tree(tmp_path)
    report = LoadReport()
    with FolderCursor() as folders:
        assert _read(top, "sub/a.md", report, folders) is not None
        _swap_by_delete(top, outside)
        assert _read(top, "sub/b.md", report, folders) is None
    assert report.skipped_unreadable == ["sub/b.md"]


@pytest.mark.parametrize("swap", [_swap_by_rename, _swap_by_delete])
def test_a_directory_ingest_with_its_folder_swapped_midway_indexes_nothing_from_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: Any
) -> None:
    """The same swap made by the ingest's own read loop, right after its first read of
    ``sub`` (the real read, wrapped to make the swap at that moment): no text from outside
    the tree is indexed, and the loader's walk reads none either."""
    top, outside = _tree(tmp_path)
    real = loaders._read_bytes
    swapped: list[str] = []

    def read_then_swap(path: Any, *a: Any, **k: Any) -> bytes:
        data = real(path, *a, **k)
        if not swapped and str(path).endswith(f"sub{os.sep}a.md"):
            swap(top, outside)
            swapped.append(str(path))
        return data

    monkeypatch.setattr(loaders, "_read_bytes", read_then_swap)

    async def ingest() -> list[str]:
        c = AsyncTreehop(embedder=BagOfWordsEmbedder())
        try:
            added = await c.add_resource(str(top))
            assert added.files >= 2
            texts = []
            for q in (SECRET, "note inside", "another folder"):
                res = await c.find(q, limit=50)
                texts += [await c.read(m.uri) for m in res.resources]
            return texts
        finally:
            await c.close()

    texts = asyncio.run(ingest())
    assert swapped and texts and not any(SECRET in t for t in texts)

    shutil.rmtree(top)
    top, outside = _tree(tmp_path / "again")
    swapped.clear()
    report = loaders.walk(top)
    assert swapped
    assert not any(SECRET in f.text for f in report.files)
    assert "zother/x.md" in [f.relpath for f in report.files]


def test_a_tree_deeper_than_the_kept_folders_reads_and_leaks_no_descriptor(tmp_path: Path) -> None:
    """Folders past :attr:`FolderCursor.KEPT` are opened for their file alone: every file of a
    tree ``KEPT + 8`` deep is read, at most ``KEPT`` descriptors are kept, none is left open
    after the walk, and a deep folder swapped for a symlink is still refused."""
    depth = FolderCursor.KEPT + 8
    top = tmp_path / "deep"
    d = top
    rels = []
    for i in range(depth):
        d = d / f"d{i}"
        d.mkdir(parents=True)
        (d / "n.md").write_text(f"# level {i}\n\ntext at level {i}\n")
        rels.append("/".join(f"d{j}" for j in range(i + 1)) + "/n.md")
    fds_before = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    report = LoadReport()
    with FolderCursor() as folders:
        for rel in rels:
            text = _read(top, rel, report, folders)
            assert text is not None and f"level {rel.count('/') - 1}" in text
            assert len(folders._fds) <= FolderCursor.KEPT
        outside = tmp_path / "outside"
        outside.mkdir()
        (outside / "n.md").write_text(SECRET)
        deep = top.joinpath(*(f"d{j}" for j in range(depth - 1)))
        deep.rename(deep.with_name("moved"))
        deep.symlink_to(outside, target_is_directory=True)
        assert _read(top, rels[-1], report, folders) is None
    assert report.skipped_unreadable == [rels[-1]]
    if fds_before is not None:
        assert len(os.listdir("/proc/self/fd")) == fds_before


# -- the write lock's files ---------------------------------------------------------------


def _write(store: EmbeddedStore) -> None:
    async def hold() -> None:
        async with aholding_store(store):
            pass

    asyncio.run(hold())


def test_the_lock_folder_deleted_between_writes_is_made_again(tmp_path: Path) -> None:
    """``locks/`` is no longer made before every hold (only when an open finds it missing):
    deleted between two writes, or the whole index folder's ``locks/`` replaced by a file,
    the next write makes it again, or says why it cannot."""
    store = EmbeddedStore(tmp_path / "idx")
    try:
        _write(store)
        assert (tmp_path / "idx" / "locks" / "writes").is_file()
        shutil.rmtree(tmp_path / "idx" / "locks")
        _write(store)
        assert (tmp_path / "idx" / "locks" / "writes").is_file()
        assert (tmp_path / "idx" / "locks" / "writes-turn").is_file()
        shutil.rmtree(tmp_path / "idx" / "locks")
        (tmp_path / "idx" / "locks").write_text("not a folder")
        with pytest.raises(StoreError, match="cannot create the lock folder"):
            _write(store)
        (tmp_path / "idx" / "locks").unlink()
        _write(store)
    finally:
        store.close()


def test_two_paths_to_one_index_share_one_gate_and_a_moved_folder_is_resolved_again(
    tmp_path: Path,
) -> None:
    """The gate's key (the index folder's resolved path) is kept per store while the folder
    is the same: a symlink to the folder, or a path through ``..``, still shares its gate,
    another folder does not; the folder renamed and its old path made a symlink to the new
    name is resolved again (a new store object of the new name shares the gate)."""
    idx = tmp_path / "idx"
    idx.mkdir()
    a = EmbeddedStore(idx)
    (tmp_path / "link").symlink_to(idx, target_is_directory=True)
    b = EmbeddedStore(tmp_path / "link")
    (tmp_path / "x").mkdir()
    c = EmbeddedStore(tmp_path / "x" / ".." / "idx")
    (tmp_path / "idx2").mkdir()
    other = EmbeddedStore(tmp_path / "idx2")
    try:
        key = _filelock._gate_key(a)
        assert key == ("path", os.path.realpath(idx))
        assert _filelock._gate_key(a) == key  # (kept)
        assert key == _filelock._gate_key(b) == _filelock._gate_key(c)
        assert key != _filelock._gate_key(other)
        idx.rename(tmp_path / "moved")
        idx.symlink_to(tmp_path / "moved", target_is_directory=True)
        moved = EmbeddedStore(tmp_path / "moved")
        try:
            assert _filelock._gate_key(a) == ("path", os.path.realpath(tmp_path / "moved"))
            assert _filelock._gate_key(a) == _filelock._gate_key(moved) == _filelock._gate_key(b)
        finally:
            moved.close()
    finally:
        for s in (a, b, c, other):
            s.close()
