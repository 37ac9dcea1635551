"""Newcomer leftovers, round four (bench/README.md, "(helper usage62)"): each test fails on
381faf7 and names the row it covers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, InvalidQueryError, Treehop, TreehopError


@pytest.mark.parametrize("cls", [Treehop, AsyncTreehop])
def test_unknown_constructor_keyword_is_a_typed_error_naming_the_accepted_ones(
    tmp_path: Path, cls: Any
) -> None:
    # 381faf7: Python's TypeError, naming AsyncTreehop.__init__ even for Treehop
    with pytest.raises(InvalidQueryError) as err:
        cls(tmp_path / "idx", read_only=True)
    msg = str(err.value)
    assert isinstance(err.value, TreehopError)
    assert msg.startswith(f"{cls.__name__}() got unknown keyword argument(s) 'read_only'")
    assert "reader_processes" in msg and "max_file_bytes" in msg and "strict" in msg
    assert not (tmp_path / "idx").exists()  # refused before anything was opened
    # a hostile key is bounded; the valid keywords still construct
    with pytest.raises(InvalidQueryError) as err:
        cls(tmp_path / "idx", **{"k" * 100_000: 1})
    assert len(str(err.value)) < 600
    client = cls(None, reader_processes=0, chunk_chars=500)
    if cls is Treehop:
        client.close()
