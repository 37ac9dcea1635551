"""The files read as Windows-1252 are named, in ``AddResult`` and by ``treehop index`` (helper
usage78).

Since usage77 a file that is neither UTF-8 nor UTF-16 with a BOM is read as Windows-1252
(``loaders._legacy_text``) instead of skipped as binary. That read is a guess: right for a
Latin-1 FAQ, wrong in the non-ASCII characters of a Shift-JIS or KOI8 file that is mostly
ASCII. It was silent: ``treehop index`` said ``3 files`` and nothing else. Now
``AddResult.read_as_cp1252`` (and ``LoadReport.read_as_cp1252``) lists them, and the CLI
prints ``read 2 files as Windows-1252 (...): cp1252.txt, latin1.txt`` beside its ``skipped``
lines (``--json``: every name).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import main
from treehop.ingest import loaders
from treehop.ingest.loaders import walk

from treehop_test_doubles import BagOfWordsEmbedder

LATIN1 = "Café notes: the naïve façade of click.echo, déjà vu for Windows users.\n"
CP1252 = "Smart quotes \u201cpager\u201d \u2014 echo_via_pager shows long text \u2026 \u20ac5.\n"
PAST = (1_500_000_000, 1_500_000_000)  # (old mtimes: a re-run trusts the manifest's stat)


def _folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "latin1.txt").write_bytes(LATIN1.encode("latin-1"))
    (root / "cp1252.txt").write_bytes(CP1252.encode("cp1252"))
    (root / "utf16.txt").write_bytes("Wide console notes, UTF-16 with its BOM.\n".encode("utf-16"))
    (root / "guide.md").write_text("# Guide\n\nInstall with pip: naïve is UTF-8 here.\n")
    sub = root / "old"
    sub.mkdir()
    (sub / "FAQ.gz").write_bytes(
        gzip.compress("Résumé of the FAQ, in Latin-1.\n".encode("latin-1"))
    )
    for f in [*root.rglob("*")]:
        os.utime(f, PAST)
    return root


NAMED = ["cp1252.txt", "latin1.txt", "old/FAQ.gz"]


def test_the_walk_report_names_the_files_read_as_cp1252(tmp_path: Path) -> None:
    report = walk(_folder(tmp_path / "doc"))
    assert sorted(f.relpath for f in report.files) == [
        "cp1252.txt",
        "guide.md",
        "latin1.txt",
        "old/FAQ.gz",
        "utf16.txt",
    ]
    assert report.read_as_cp1252 == NAMED  # (UTF-8 and UTF-16 files are not named)


def test_add_resource_names_them_and_does_not_count_them_skipped(
    bow: BagOfWordsEmbedder, tmp_path: Path
) -> None:
    doc = _folder(tmp_path / "doc")
    with Treehop(tmp_path / "idx", embedder=bow) as th:
        res = th.add_resource(str(doc), target_uri="viking://resources/doc")
        assert res.files == 5 and res.read == 5
        assert res.read_as_cp1252 == NAMED
        assert res.skipped == 0 and res.skipped_binary == []
        # The files read in this call: a re-add skips unchanged files unread and names none...
        again = th.add_resource(str(doc), target_uri="viking://resources/doc")
        assert again.read == 0 and again.read_as_cp1252 == []
        # ... and names a changed one again.
        (doc / "latin1.txt").write_bytes((LATIN1 + "Encore là.\n").encode("latin-1"))
        changed = th.add_resource(str(doc), target_uri="viking://resources/doc")
        assert changed.read_as_cp1252 == ["latin1.txt"]


def test_a_latin1_file_given_by_itself_is_named(bow: BagOfWordsEmbedder, tmp_path: Path) -> None:
    f = tmp_path / "FAQ"
    f.write_bytes(LATIN1.encode("latin-1"))
    with Treehop(None, embedder=bow) as th:
        res = th.add_resource(str(f), target_uri="viking://resources/faq")
    assert res.files == 1 and res.read_as_cp1252 == ["FAQ"]


def test_the_cli_says_which_files_it_read_as_cp1252(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _folder(tmp_path / "doc")
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(doc)]) == 0
    out = capsys.readouterr().out
    line = (
        "  read 3 files as Windows-1252 (neither UTF-8 nor UTF-16; check them): "
        "cp1252.txt, latin1.txt, old/FAQ.gz\n"
    )
    assert line in out, out
    assert "skipped" not in out and "utf16.txt" not in out and "guide.md" not in out, out
    # --json: the same list, whole
    (doc / "cp1252.txt").write_bytes((CP1252 + "More \u2018text\u2019.\n").encode("cp1252"))
    assert main(["--index", idx, "index", str(doc), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["read_as_cp1252"] == ["cp1252.txt"]


def test_the_cli_lists_the_first_five_and_counts_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    for i in range(7):
        (doc / f"note{i}.txt").write_bytes(
            f"Note {i}: crème brûlée à la carte.\n".encode("latin-1")
        )
    assert main(["--index", str(tmp_path / "idx"), "index", str(doc)]) == 0
    out = capsys.readouterr().out
    assert (
        "  read 7 files as Windows-1252 (neither UTF-8 nor UTF-16; check them): "
        "note0.txt, note1.txt, note2.txt, note3.txt, note4.txt +2 more\n"
    ) in out, out


def test_control_a_utf8_and_utf16_folder_prints_no_such_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = tmp_path / "doc"
    doc.mkdir()
    (doc / "a.md").write_text("# Café\n\nUTF-8 with accents: naïve.\n", encoding="utf-8")
    (doc / "b.txt").write_bytes("UTF-16 text: façade.\n".encode("utf-16"))
    (doc / "c.txt").write_bytes("\ufeffUTF-8 with a BOM: déjà.\n".encode())
    assert main(["--index", str(tmp_path / "idx"), "index", str(doc)]) == 0
    out = capsys.readouterr().out
    assert "3 files" in out and "Windows-1252" not in out, out


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="cp1252"), min_size=1))
def test_decode_how_flags_exactly_the_cp1252_read(text: str) -> None:
    """``decode_how`` answers :func:`loaders.decode`'s text, flagged where (and only where)
    the bytes were not UTF-8 / UTF-16: a UTF-8 encoding is never flagged; a cp1252 encoding
    is flagged when it is read as text and is not also valid UTF-8."""
    for data in (text.encode("cp1252"), text.encode("utf-8"), text.encode("utf-16")):
        got, legacy = loaders.decode_how(data)
        assert got == loaders.decode(data)
        try:
            data.decode("utf-8")
            unicode = True
        except UnicodeDecodeError:
            unicode = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        assert legacy == (got is not None and not unicode)
    assert loaders.decode_how(text.encode("utf-8"))[1] is False


def test_the_docs_name_the_list() -> None:
    docs = Path(__file__).parents[1] / "docs"
    for name in ("ingest.md", "cli.md"):
        text = (docs / name).read_text(encoding="utf-8")
        assert "read_as_cp1252" in text and "as Windows-1252 (neither UTF-8" in text, name
