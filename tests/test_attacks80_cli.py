"""Attacks on stop 67's Latin-1 folder reading through ``treehop index`` (helper attacks80).

Since stop 67 a Latin-1 folder's *files* are read (and named, ``read N files as
Windows-1252``), but a file in it whose *name* is Latin-1 (``caf\\xe9.txt``: not UTF-8, so no
URI can hold it) was dropped without a word: ``AddResult.skipped_names`` held it and
``--json`` showed it, the summary printed nothing. Fails on c3a05a97 unless a control.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from treehop.cli import main

LATIN1 = "Café notes: the naïve déjà vu option is read here.\n".encode("latin-1")


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "ok.txt").write_bytes(LATIN1)
    # (a name as a Latin-1 system wrote it: the byte E9, not UTF-8)
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "wb") as f:
        f.write(LATIN1)
    return root


def test_the_cli_names_a_file_whose_name_is_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _folder(tmp_path / "doc")
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(doc)]) == 0
    out = capsys.readouterr().out
    line = [ln for ln in out.splitlines() if "caf" in ln]
    assert line == [
        "  skipped 1 file or folder whose name no URI can hold (not UTF-8, a control character "
        "or an escaped slash; rename it): caf\\xe9.txt"
    ], out
    assert "read 1 file as Windows-1252 (neither UTF-8 nor UTF-16; check them): ok.txt" in out
    # (the premise: --json carried it already)
    assert main(["--index", idx, "index", str(doc), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped_names"] == ["caf\\xe9.txt"]


def test_a_folder_of_utf8_names_has_no_such_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # control (passes on c3a05a97)
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "café.txt").write_bytes(LATIN1)
    assert main(["--index", str(tmp_path / "idx"), "index", str(doc)]) == 0
    out = capsys.readouterr().out
    assert "no URI can hold" not in out and "café.txt" in out, out
