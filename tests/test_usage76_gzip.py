"""A Debian doc folder's compressed files are read (helper usage76).

``/usr/share/doc/<package>/`` holds a package's documentation gzip-compressed: chrony's held
ten files and the five compressed ones (``FAQ.gz``, ``README.gz``, ``NEWS.gz``, ...) were
"skipped as binary", so ``treehop index /usr/share/doc/chrony`` answered from the copyright
file and the example configurations. A ``.gz`` file is now read as the file it holds
(bounded once decompressed), a compressed copy beside its original is skipped as a copy,
and a skip list counts a compressed file by the name it holds.
"""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.cli import main
from treehop.errors import IngestError
from treehop.ingest import loaders
from treehop.ingest.loaders import walk

FAQ = (
    "Frequently Asked Questions\n\n"
    "1. How do I make the daemon step the clock at boot?\n\n"
    "Add the makestep directive to the configuration file; the daemon then steps the "
    "clock when the offset is larger than the threshold in the first updates.\n"
)
GUIDE = (
    "# Spindle guide\n\n## Tuning the spindle\n\n"
    "Raise the spindle speed with the throttle knob to frobnicate faster.\n"
)


def _doc_folder(root: Path) -> Path:
    """A Debian package's doc folder: plain files beside gzip-compressed ones."""
    root.mkdir(parents=True)
    (root / "FAQ.gz").write_bytes(gzip.compress(FAQ.encode()))
    (root / "guide.md.gz").write_bytes(gzip.compress(GUIDE.encode()))
    (root / "copyright").write_text("Copyright 2024 The Authors. GPL-2.\n")
    return root


def test_a_doc_folders_compressed_files_are_read(tmp_path: Path) -> None:
    report = walk(_doc_folder(tmp_path / "doc"))
    files = {f.relpath: f for f in report.files}
    assert sorted(files) == ["FAQ.gz", "copyright", "guide.md.gz"]
    assert report.skipped_binary == []
    assert files["FAQ.gz"].text == FAQ and files["FAQ.gz"].kind == "text"
    assert files["guide.md.gz"].kind == "markdown"  # parsed by the name it holds


def test_find_answers_from_a_compressed_faq(bow, tmp_path: Path) -> None:
    with Treehop(None, embedder=bow) as th:
        res = th.add_resource(str(_doc_folder(tmp_path / "doc")), target_uri="viking://resources/d")
        assert res.files == 3 and res.skipped_binary == []
        hits = th.find("makestep directive step the clock", limit=3).contexts()
        assert hits and hits[0].uri.startswith("viking://resources/d/FAQ.gz")
        # the Markdown inside guide.md.gz is chunked by its headings
        chunk = th.find("spindle throttle knob", limit=1).contexts()[0]
        assert chunk.uri.startswith("viking://resources/d/guide.md.gz")
        assert "Tuning the spindle" in chunk.slot_text


def test_a_compressed_file_given_by_itself_is_read(bow, tmp_path: Path) -> None:
    doc = _doc_folder(tmp_path / "doc")
    with Treehop(None, embedder=bow) as th:
        res = th.add_resource(str(doc / "FAQ.gz"), target_uri="viking://resources/faq")
        assert res.files == 1 and res.skipped_binary == []
        hit = th.find("makestep directive", limit=1).contexts()[0]
        assert hit.uri.startswith("viking://resources/faq") and "makestep" in hit.slot_text


def test_a_compressed_copy_beside_its_original_is_skipped(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "notes.txt").write_text("Plain notes about the frobnicator.\n")
    (root / "notes.txt.gz").write_bytes(gzip.compress(b"Plain notes about the frobnicator.\n"))
    (root / "sub").mkdir()
    (root / "sub" / "notes.txt.gz").write_bytes(gzip.compress(b"Other notes, elsewhere.\n"))
    report = walk(root)
    assert sorted(f.relpath for f in report.files) == ["notes.txt", "sub/notes.txt.gz"]
    assert report.skipped_other == ["notes.txt.gz"]
    # an empty skip list reads every file, copies included
    kept = walk(root, skip_suffixes=frozenset())
    assert sorted(f.relpath for f in kept.files) == [
        "notes.txt",
        "notes.txt.gz",
        "sub/notes.txt.gz",
    ]


def test_a_skip_list_counts_a_compressed_file_by_the_name_it_holds(tmp_path: Path) -> None:
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<html><body><h1>Manual</h1><p>Words.</p></body></html>")
    (root / "site.css.gz").write_bytes(gzip.compress(b"body { color: #333 }\n"))
    (root / "app.js.gz").write_bytes(gzip.compress(b"function f() { return 1 }\n"))
    report = walk(root)
    assert [f.relpath for f in report.files] == ["index.html"]
    assert sorted(report.skipped_other) == ["app.js.gz", "site.css.gz"]
    assert loaders.skipped_for_suffix("site.css.gz", loaders.SKIP_SUFFIXES)
    assert not loaders.skipped_for_suffix("FAQ.gz", loaders.SKIP_SUFFIXES)


@pytest.mark.parametrize(
    "data",
    [
        gzip.compress(FAQ.encode())[:-12],  # truncated
        gzip.compress(FAQ.encode())[:20] + b"\xff" * 40,  # corrupt
        gzip.compress(b"\x00\x01ustar\x00" * 100),  # a compressed binary (a tarball)
        gzip.compress(FAQ.encode()) + b"trailing garbage",
    ],
    ids=["truncated", "corrupt", "binary-inside", "trailing-garbage"],
)
def test_a_bad_or_binary_gzip_is_skipped_as_binary(tmp_path: Path, data: bytes) -> None:
    root = tmp_path / "doc"
    root.mkdir()
    (root / "FAQ.gz").write_bytes(data)
    (root / "README").write_text("The readme.\n")
    report = walk(root)
    assert [f.relpath for f in report.files] == ["README"]
    assert report.skipped_binary == ["FAQ.gz"]


def test_a_gzip_bomb_is_stopped_at_the_size_limit(bow, tmp_path: Path) -> None:
    root = tmp_path / "doc"
    root.mkdir()
    # 2 MB of text in ~2 kB on disk: over a 1 MB limit once read
    (root / "big.txt.gz").write_bytes(gzip.compress(b"word " * 400_000))
    (root / "README").write_text("The readme.\n")
    report = walk(root, max_bytes=1_000_000)
    assert [f.relpath for f in report.files] == ["README"]
    assert report.skipped_large == ["big.txt.gz"]
    with (
        Treehop(None, embedder=bow, max_file_bytes=1_000_000) as th,
        pytest.raises(IngestError, match="1 over the size limit"),
    ):
        th.add_resource(str(root / "big.txt.gz"), target_uri="viking://resources/big")


def test_the_cli_indexes_a_compressed_faq(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _doc_folder(tmp_path / "doc")
    idx = str(tmp_path / "idx")
    assert main(["--index", idx, "index", str(doc)]) == 0
    out = capsys.readouterr().out
    assert "3 files" in out and "binary" not in out, out
    assert main(["--index", idx, "find", "makestep step the clock", "--limit", "1"]) == 0
    assert "FAQ.gz" in capsys.readouterr().out


def test_the_docs_say_compressed_files_are_read() -> None:
    doc = (Path(__file__).parents[1] / "docs" / "ingest.md").read_text()
    assert "`.gz`" in doc and "read as the file it holds" in doc


# ------------------------------------------------------------------ the decompressor
@settings(max_examples=150, deadline=None)
@given(
    parts=st.lists(st.binary(max_size=300), min_size=1, max_size=4),
    limit=st.integers(min_value=0, max_value=1500),
)
def test_gunzip_reads_every_member_within_the_limit(parts: list[bytes], limit: int) -> None:
    data = b"".join(gzip.compress(p) for p in parts)
    whole = b"".join(parts)
    got = loaders.gunzip(data, limit)
    assert got is not None
    if len(whole) <= limit:
        assert got == whole
    else:  # stopped one byte past the limit: the caller's "too large"
        assert len(got) == limit + 1 and whole.startswith(got)
    # zero padding after the last member is ignored, as gzip -d ignores it
    assert loaders.gunzip(data + b"\x00" * 7, len(whole)) == whole


@settings(max_examples=150, deadline=None)
@given(payload=st.binary(min_size=1, max_size=300), cut=st.integers(min_value=1, max_value=19))
def test_gunzip_refuses_a_truncated_stream(payload: bytes, cut: int) -> None:
    data = gzip.compress(payload)
    assert loaders.gunzip(data[:-cut], 10_000) is None


@settings(max_examples=200, deadline=None)
@given(junk=st.binary(max_size=200))
def test_gunzip_never_raises_on_any_bytes(junk: bytes) -> None:
    got = loaders.gunzip(b"\x1f\x8b" + junk, 1000)
    assert got is None or len(got) <= 1001


def test_gunzip_of_many_small_members_is_linear() -> None:
    # 200,000 empty members (4 MB): feeding each member the rest of the file made zlib copy
    # the rest into unused_data every time (quadratic: 20,000 took 0.31 s, 80,000 ~5 s);
    # fed in doubling pieces it is ~1 s here, far under the bound on a loaded box.
    data = gzip.compress(b"") * 200_000 + gzip.compress(b"the text")
    started = time.perf_counter()
    assert loaders.gunzip(data, 5_000_000) == b"the text"
    assert time.perf_counter() - started < 10.0
