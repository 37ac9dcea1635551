"""A Latin-1 / Windows-1252 text file in a folder is read, not skipped as binary (helper usage77).

``treehop index`` over a folder of Click's documentation with two notes in a legacy 8-bit
encoding (``notes-latin1.txt``: ``Café ... déjà``; ``cp1252.txt``: ``“pager” —``) said
``skipped 2 binary files: cp1252.txt, notes-latin1.txt``: the text never read, and "binary"
for a file ``cat`` shows. Debian doc folders hold such files (cvs's ``FAQ.gz`` is Latin-1).
Bytes UTF-8 cannot decode are now read as their Windows-1252 characters; UTF-8 (with or
without a BOM) and UTF-16 with a BOM read as before, and bytes that look binary (a NUL in the
head, many control bytes, an image's or a PDF's signature) stay binary.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import main
from treehop.ingest import loaders
from treehop.ingest.loaders import walk

LATIN1 = (
    "Café notes\n\nThe naïve façade: click.echo writes the résumé to the terminal even "
    "when its encoding is unknown, déjà vu for Windows users.\n"
)
CP1252 = (
    "Smart quotes \u201cpager\u201d \u2014 echo_via_pager shows long text through the "
    "system pager such as less \u2026 \u20ac5.\n"
)
UTF16 = "Unicode notes: the wide-character console API writes to the Windows console.\n"


def _folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "latin1.txt").write_bytes(LATIN1.encode("latin-1"))
    (root / "cp1252.txt").write_bytes(CP1252.encode("cp1252"))
    (root / "utf16.txt").write_bytes(UTF16.encode("utf-16"))  # (with its BOM)
    (root / "guide.md").write_text("# Guide\n\nInstall with pip.\n", encoding="utf-8")
    return root


def test_legacy_encoded_files_in_a_folder_are_read(tmp_path: Path) -> None:
    report = walk(_folder(tmp_path / "doc"))
    files = {f.relpath: f.text for f in report.files}
    assert report.skipped_binary == []
    assert sorted(files) == ["cp1252.txt", "guide.md", "latin1.txt", "utf16.txt"]
    assert files["latin1.txt"] == LATIN1
    assert files["cp1252.txt"] == CP1252  # 0x93 / 0x94 / 0x97 / 0x85 / 0x80 as 1252 reads them
    assert files["utf16.txt"] == UTF16


def test_find_answers_from_a_latin1_file(bow, tmp_path: Path) -> None:
    with Treehop(None, embedder=bow) as th:
        res = th.add_resource(str(_folder(tmp_path / "doc")), target_uri="viking://resources/d")
        assert res.files == 4 and res.skipped_binary == []
        hit = th.find("naïve façade résumé terminal encoding", limit=1).contexts()[0]
        assert hit.uri.startswith("viking://resources/d/latin1.txt")
        assert "façade" in hit.slot_text


def test_a_latin1_file_given_by_itself_is_read(bow, tmp_path: Path) -> None:
    f = tmp_path / "FAQ"
    f.write_bytes(LATIN1.encode("latin-1"))
    with Treehop(None, embedder=bow) as th:
        res = th.add_resource(str(f), target_uri="viking://resources/faq")
        assert res.files == 1 and res.skipped_binary == []
        assert "déjà vu" in th.find("déjà vu", limit=1).contexts()[0].slot_text


def test_the_cli_indexes_a_latin1_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = _folder(tmp_path / "doc")
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(doc)]) == 0
    out = capsys.readouterr().out
    assert "4 files" in out and "binary" not in out, out


def test_a_utf8_file_with_a_stray_latin1_byte_keeps_its_utf8(tmp_path: Path) -> None:
    data = "Ünïcode — ok, ".encode() + "café".encode("latin-1") + " end “q”".encode()
    assert loaders.decode(data) == "Ünïcode — ok, café end “q”"


def test_binary_bytes_stay_binary() -> None:
    """The control: what was binary is binary (a NUL in the head, control-heavy bytes without
    a NUL, signatures of images / PDFs / archives)."""
    rng = random.Random(7)
    noisy = bytes(rng.randrange(1, 256) for _ in range(20_000))  # no NUL, ~1 in 9 controls
    for data in (
        b"\x00\x01\x02" * 100,
        noisy,
        b"\x89PNG\r\n\x1a\n",
        b"\xff\xd8\xff\xe0 not text",
        b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\nstream BT (Hello) Tj ET endstream\n",
        b"GIF89a\xff\xff",
        b"\xff\xfe\x41",  # a UTF-16 mark over an odd byte count
        b"P4\n16 16\n" + bytes([0xFF, 0xE7, 0xC3, 0x81, 0xBD, 0x99] * 6),  # a raw PBM icon
        "Привет, мир: это русский текст в кодировке KOI8-R.\n".encode("koi8-r"),
    ):
        assert loaders.decode(data) is None, data[:20]


@pytest.mark.parametrize(
    "head",
    [b"", b"\xc3\xa9", b"\x81"],
    ids=["latin-1", "one UTF-8 sequence", "an undefined 1252 byte"],
)
def test_the_legacy_read_is_linear(head: bytes) -> None:
    """Each path of the legacy read (the whole as Windows-1252; a UTF-8 sequence among the
    bytes, so each escaped byte is replaced; an undefined byte) is linear: 4x the bytes
    take about 4x the time (a quadratic read would take 16x)."""

    def cost(n: int) -> float:
        data = head + ("résumé naïve façade " * n).encode("latin-1")
        best = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            assert loaders.decode(data) is not None
            best = min(best, time.perf_counter() - t)
        return best

    small, large = cost(25_000), cost(100_000)
    assert large < 10 * small + 0.05, (small, large)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="cp1252", exclude_categories=["Cc"]), max_size=200))
def test_any_cp1252_text_reads_back(text: str) -> None:
    """Text Windows-1252 can write (no control characters) reads back as itself, unless its
    bytes are also UTF-8 (then UTF-8 wins, as before) or hold a UTF-8 sequence (``Ã©``, C3 A9:
    read as the ``é`` a mostly UTF-8 file means by it)."""
    data = text.encode("cp1252")
    # (the first bytes a UTF-16 or UTF-8 mark: read as that encoding, as before)
    assume(not data.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")))
    try:
        as_utf8 = data.decode("utf-8")
    except UnicodeDecodeError:
        as_utf8 = None
    got = loaders.decode(data)
    if as_utf8 is not None:
        assert got == as_utf8
    elif data.startswith(loaders._BINARY_MAGIC) or sum(b >= 0x80 for b in data) * 4 > len(data):
        # (a signature, or mostly non-ASCII: binary unless UTF-8 decodes many of its bytes)
        assert got is None or len(got) < len(text)
    elif all(
        ord(c) < 0x80 or 0xDC80 <= ord(c) <= 0xDCFF for c in data.decode("utf-8", "surrogateescape")
    ):
        assert got == text
    else:
        assert got is not None and len(got) < len(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200).filter(lambda s: "\x00" not in s and not s.startswith("\ufeff")))
def test_utf8_text_reads_as_before(text: str) -> None:
    assert loaders.decode(text.encode("utf-8")) == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_decode_never_raises_and_answers_text_or_none(data: bytes) -> None:
    got = loaders.decode(data)
    assert got is None or isinstance(got, str)
    if got is not None and b"\x00" not in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        # every byte accounted for: the text has no lone surrogate left
        assert not any(0xD800 <= ord(c) <= 0xDFFF for c in got)


def test_the_docs_say_legacy_text_is_read() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "ingest.md").read_text()
    assert "Windows-1252" in doc and "Latin-1" in doc


def test_os_urandom_without_nul_is_binary() -> None:
    data = os.urandom(50_000).replace(b"\x00", b"\x01")
    assert loaders.decode(data) is None
