"""``scan_columns`` lists directories through an open descriptor (each ``lstat`` relative
to it): the same files, sizes, times, directories and report as listing by path, and no
descriptor left open, also when a directory cannot be listed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest import loaders

_NAME = st.sampled_from(
    ["a.md", "B.txt", "{x}.md", "é.md", ".hidden.md", "c d.md", "n%41.md", "q#1.md", "z.py"]
)


def _open_fds() -> set[str]:
    """The process's open descriptors (their numbers)."""
    return set(os.listdir("/proc/self/fd"))


def _scan_both(root: Path) -> None:
    # No descriptor the scan opened is still open after it: none open now that was not open
    # before. (Not a count: an earlier test's background thread or finalizer may close its
    # own descriptors meanwhile; CI saw 512 before and 500 after.)
    before = _open_fds()
    got, got_report = loaders.scan_columns(root)
    assert _open_fds() - before == set()
    real = loaders._SCAN_BY_FD
    try:
        loaders._SCAN_BY_FD = False
        want, want_report = loaders.scan_columns(root)
    finally:
        loaders._SCAN_BY_FD = real
    assert got.rels == want.rels and got.dirs == want.dirs
    assert got.sizes.tolist() == want.sizes.tolist()
    assert got.mtimes.tolist() == want.mtimes.tolist()
    assert got.dir_of.tolist() == want.dir_of.tolist()
    assert got_report == want_report


pytestmark = pytest.mark.skipif(
    not loaders._SCAN_BY_FD or not os.path.isdir("/proc/self/fd"),
    reason="listing by descriptor is a POSIX path",
)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["", "d", "d/{e}", "f g", "d/.h", "node_modules"]), _NAME),
        max_size=12,
    )
)
def test_scan_by_descriptor_equals_scan_by_path(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[str, str]]
) -> None:
    root = tmp_path_factory.mktemp("scan")
    for folder, name in files:
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_text(name * 3)
    (root / "d").mkdir(exist_ok=True)
    os.symlink(root / "d", root / "d" / "link.md")  # a symlinked file name: skipped
    os.symlink(root / "d", root / "linkdir")  # a symlinked directory: not entered
    os.mkfifo(root / "d" / "pipe")  # not a regular file: skipped
    _scan_both(root)


def test_unlistable_directory_is_passed_over_without_a_leak(tmp_path: Path) -> None:
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "a.md").write_text("alpha")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "b.md").write_text("beta")
    real = os.scandir

    def failing(path):  # type: ignore[no-untyped-def]
        # stands in for EACCES (root reads any directory): the listing of one folder fails
        if path == str(locked) or (
            isinstance(path, int) and os.readlink(f"/proc/self/fd/{path}") == str(locked)
        ):
            raise PermissionError(13, "Permission denied")
        return real(path)

    before = _open_fds()
    try:
        os.scandir = failing  # type: ignore[assignment]
        found, _ = loaders.scan_columns(tmp_path)
    finally:
        os.scandir = real
    assert _open_fds() - before == set()
    assert found.rels == ["ok/a.md"]
