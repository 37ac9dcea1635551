"""A save's copy of a data file's committed bytes (``column_files._drop_tail``) where the
file system answers ``copy_file_range`` with 0 instead of refusing it (helper leftovers71a,
bench/README.md "(helper leftovers71a)"; attacks82's open item).

Some file systems (FUSE ones, network and special ones on older kernels) copy nothing and
answer 0 where others raise ``EXDEV`` / ``EOPNOTSUPP``; ``_copy_range`` took that 0 as the
end of the file and the save failed "shorter than committed". Such a file system is not at
hand here, so its answer is given by wrapping ``os.copy_file_range`` (as the reliability
tests give ``fsync``'s failures); the files, their copy and the rename are real.

The first test fails on a62913ab; the second is a control.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from treehop.errors import IndexCorruptError
from treehop.stores.embedded.column_files import _drop_tail

_DATA = bytes(range(256)) * 40  # 10,240 bytes


@pytest.mark.parametrize("zero_calls", [1, 10**9])  # (the first call only; every call)
def test_a_copy_file_range_that_answers_0_falls_back_to_a_plain_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, zero_calls: int
) -> None:
    # a62913ab: IndexCorruptError "shorter than committed"
    f = tmp_path / "vectors.bin"
    f.write_bytes(_DATA)
    answering = _Answering(os.copy_file_range, zero_calls)
    monkeypatch.setattr(os, "copy_file_range", answering)
    _drop_tail(f, 5_000)
    assert f.read_bytes() == _DATA[:5_000]
    assert not (tmp_path / ".tmp-vectors.bin").exists()
    assert answering.calls >= 1


class _Answering:
    """``copy_file_range`` answering 0 for its first ``zero`` calls, then the real one."""

    def __init__(self, real: Callable[..., int], zero: int) -> None:
        self.real, self.zero, self.calls = real, zero, 0

    def __call__(self, src: int, dst: int, count: int, *args: object) -> int:
        self.calls += 1
        if self.calls <= self.zero:
            return 0
        return self.real(src, dst, count, *args)


def test_control_a_file_shorter_than_committed_is_still_refused(tmp_path: Path) -> None:
    # control (as on a62913ab): the real copy_file_range and read both end early
    f = tmp_path / "vectors.bin"
    f.write_bytes(_DATA)
    with pytest.raises(IndexCorruptError, match="shorter than committed"):
        _drop_tail(f, 20_000)
    assert f.read_bytes() == _DATA
    assert not (tmp_path / ".tmp-vectors.bin").exists()
