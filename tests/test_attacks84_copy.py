"""helper attacks84: a save's copy (``column_files._drop_tail``) where ``copy_file_range``
is refused with ``EPERM`` (a container whose seccomp profile predates the call; Rust's
``fs::copy`` falls back on it for that reason) or ``EAGAIN`` (some ZFS versions).

leftovers71a made an answer of 0 fall back to a plain copy; these errors escaped the save
as ``PermissionError`` / ``BlockingIOError``. No such container or file system is at hand, so
its answer is given by wrapping ``os.copy_file_range`` (as tests/test_leftovers71a_copy.py
does); the files, the copy and the rename are real.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from treehop.stores.embedded.column_files import _drop_tail

_DATA = bytes(range(256)) * 40  # 10,240 bytes


class _Refusing:
    """``copy_file_range`` raising ``code`` for its first ``refused`` calls, then the real one."""

    def __init__(self, real: Callable[..., int], code: int, refused: int) -> None:
        self.real, self.code, self.refused, self.calls = real, code, refused, 0

    def __call__(self, src: int, dst: int, count: int, *args: object) -> int:
        self.calls += 1
        if self.calls <= self.refused:
            raise OSError(self.code, os.strerror(self.code))
        return self.real(src, dst, count, *args)


@pytest.mark.parametrize("code", [errno.EPERM, errno.EAGAIN])
@pytest.mark.parametrize("refused", [1, 10**9])
def test_a_refused_copy_file_range_falls_back_to_a_plain_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, refused: int
) -> None:
    f = tmp_path / "vectors.bin"
    f.write_bytes(_DATA)
    refusing = _Refusing(os.copy_file_range, code, refused)
    monkeypatch.setattr(os, "copy_file_range", refusing)
    _drop_tail(f, 5_000)
    assert f.read_bytes() == _DATA[:5_000]
    assert not (tmp_path / ".tmp-vectors.bin").exists()
    assert refusing.calls >= 1


def test_control_another_error_still_fails_the_save_and_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "vectors.bin"
    f.write_bytes(_DATA)
    monkeypatch.setattr(os, "copy_file_range", _Refusing(os.copy_file_range, errno.EIO, 10**9))
    with pytest.raises(OSError, match="Input/output error"):
        _drop_tail(f, 5_000)
    assert f.read_bytes() == _DATA
    assert not (tmp_path / ".tmp-vectors.bin").exists()
