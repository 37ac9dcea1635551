"""The ``zlib-faq`` natural-question set (``bench/natural_sets.py``): zlib's FAQ as Debian's
``zlib1g-dev`` ships it (``/usr/share/doc/zlib1g-dev/FAQ.gz``: plain text, numbered entries
`` 1. <question>`` with the number right-aligned in two columns, questions wrapped onto lines
indented four spaces, answers indented four spaces) read by Screen's reader unchanged
(``split_qa_faq``) once each number reads as ``Q:`` (``split_zlib_faq``), beside the
package's notes, the annotated usage example, ``zlib.h`` and the man page, on a small inline
package tree of that shape (a title and the web copy's address, a question wrapped over two
lines, a stated problem, a two-digit number at column 0, an answer holding an indented
numbered list and a code block, an answer too short to judge, an HTML page quoting a
question, the examples' C sources, ``zconf.h``, the PDF, the changelogs and the copyright);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every numbered entry asks, its wrapped lines joined by one
space; each answer is exactly the text under it up to the next entry; an answer's own
numbered lines (indented) ask nothing; the notes, usage example, header and man page are the
corpus, the C sources, ``zconf.h``, the PDF, changelogs and copyright are not; no question is
left in any file; the halves are fixed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

VERSION = "1:1.2.13.dfsg-1"

Q_Y2K = "Is zlib Y2K-compliant?"
Q_BUF = "compress() returns Z_BUF_ERROR."
Q_LICENSE = (
    'The license says that altered source versions must be "plainly marked". So what '
    "exactly do I need to do to meet that requirement?"
)
Q_ENDIAN = "Will zlib work on a big-endian or little-endian architecture?"
Q_RANDOM = "Can I access data randomly in a compressed stream?"
Q_THREADS = "Is zlib thread-safe?"
ASKED = [Q_Y2K, Q_BUF, Q_LICENSE, Q_RANDOM, Q_THREADS]
A_Y2K = "Yes. zlib doesn't handle dates."
A_BUF = (
    "Make sure that before the call of compress(), the length of the compressed\n"
    "    buffer is equal to the available size of the compressed buffer."
)
A_LICENSE = (
    "You need to change the ZLIB_VERSION and ZLIB_VERNUM #defines in zlib.h:\n\n"
    '    1. the final version number changed to "f";\n'
    "    2. an identification string appended to ZLIB_VERSION.\n\n"
    "    For example:\n\n"
    '        #define ZLIB_VERSION "1.2.3.f-zachary-mods-v3"'
)
A_RANDOM = (
    "No, not without some preparation.  If when compressing you periodically use\n"
    "    Z_FULL_FLUSH, keep an index of those locations.  See examples/zran.c ."
)
A_THREADS = (
    "Yes.  However any library routines that zlib uses and any application-\n"
    "    provided memory allocation routines must also be thread-safe."
)
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "is-zlib-y2k-compliant": A_Y2K,
    "compress-returns-z-buf-error": A_BUF,
    "the-license-says-that-altered-source-ver": A_LICENSE,
    "can-i-access-data-randomly-in-a-compress": A_RANDOM,
    "is-zlib-thread-safe": A_THREADS,
}

FAQ = (
    "\n                Frequently Asked Questions about zlib\n\n\n"
    "If your question is not there, please check the zlib home page\n"
    "http://zlib.net/ which may have more recent information.\n\n\n"
    " 1. Is zlib Y2K-compliant?\n\n"
    "    Yes. zlib doesn't handle dates.\n\n"
    " 4. compress() returns Z_BUF_ERROR.\n\n"
    "    Make sure that before the call of compress(), the length of the compressed\n"
    "    buffer is equal to the available size of the compressed buffer.\n\n"
    '24. The license says that altered source versions must be "plainly marked". So\n'
    "    what exactly do I need to do to meet that requirement?\n\n"
    "    You need to change the ZLIB_VERSION and ZLIB_VERNUM #defines in zlib.h:\n\n"
    '    1. the final version number changed to "f";\n'
    "    2. an identification string appended to ZLIB_VERSION.\n\n"
    "    For example:\n\n"
    '        #define ZLIB_VERSION "1.2.3.f-zachary-mods-v3"\n\n'
    "25. Will zlib work on a big-endian or little-endian architecture?\n\n"
    "    Yes and yes.\n\n"
    "28. Can I access data randomly in a compressed stream?\n\n"
    "    No, not without some preparation.  If when compressing you periodically use\n"
    "    Z_FULL_FLUSH, keep an index of those locations.  See examples/zran.c .\n\n"
    "21. Is zlib thread-safe?\n\n"
    "    Yes.  However any library routines that zlib uses and any application-\n"
    "    provided memory allocation routines must also be thread-safe.\n"
)
SHIPPED = {"FAQ": FAQ}
FILES = {
    "FAQ",
    "README",
    "algorithm.txt",
    "txtvsbin.txt",
    "examples/README.examples",
    "examples/zlib_how.md",
    "zlib.h",
    "man/zlib.3.md",
}
HEADER = (
    "/* zlib.h -- interface of the 'zlib' general purpose compression library\n"
    "  version 1.2.13, October 13th, 2022\n*/\n"
    "/*\n     The 'zlib' compression library provides in-memory compression and\n"
    "  decompression functions, including integrity checks of the uncompressed data.\n*/\n"
    "ZEXTERN int ZEXPORT deflate OF((z_streamp strm, int flush));\n"
)
MAN = (
    '.TH ZLIB 3 "13 Oct 2022"\n.SH NAME\nzlib \\- compression/decompression library\n'
    ".SH DESCRIPTION\nThe\n.I zlib\nlibrary is a general purpose data compression library.\n"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: ``FAQ.gz``; the three gzipped notes; ``examples/`` (its
    README, the usage example page quoting a question, C sources); the PDF; the header and
    ``zconf.h``; the man page; the changelogs and the copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.ZLIB_PACKAGE, VERSION)
    doc = root / ns.ZLIB_DOC
    write_gz(doc / "FAQ.gz", FAQ)
    write_gz(doc / "README.gz", "ZLIB DATA COMPRESSION LIBRARY\n\nzlib 1.2.13 is a library.\n")
    write_gz(doc / "algorithm.txt.gz", "1. Compression algorithm (deflate)\n\nLZ77 variant.\n")
    write_gz(doc / "txtvsbin.txt.gz", "A Fast Method for Identifying Plain Text Files\n")
    (doc / "examples").mkdir()
    (doc / "examples/README.examples").write_text(
        "This directory contains examples of the use of zlib.\n\nzran.c\n    random access\n",
        encoding="utf-8",
    )
    (doc / "examples/zlib_how.html").write_text(
        "<html><head><title>zlib Usage Example</title></head><body>"
        "<h2 align=center>zlib Usage Example</h2><p>We often get questions about how the "
        "deflate() and inflate() functions should be used.</p>"
        f"<p>People ask: {Q_THREADS} Read on.</p></body></html>\n",
        encoding="utf-8",
    )
    for name in ("zpipe.c", "zran.c", "zran.h"):
        (doc / "examples" / name).write_text("/* leftout source */\n", encoding="utf-8")
    write_gz(doc / "crc-doc.1.0.pdf.gz", "%PDF-1.4 leftout\n")
    for name in ("changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / name, "leftout changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    (root / "usr/include").mkdir(parents=True)
    (root / ns.ZLIB_HEADER).write_text(HEADER, encoding="utf-8")
    (root / "usr/include/zconf.h").write_text("/* zconf.h leftout */\n", encoding="utf-8")
    write_gz(root / ns.ZLIB_MAN[0], MAN)
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_zlib_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.zlib_faq_set()
    assert nset.name == "zlib-faq"
    # every numbered entry asks, in order, wrapped lines joined by one space; the indented
    # "1." and "2." lines of an answer ask nothing
    assert [q.qid for q in nset.questions] == [f"zlib-faq:{k}" for k in ANSWERS]
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {"FAQ"}
    assert set(nset.files) == FILES
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("zlib-faq")
    faq = nset.files["FAQ"]
    assert not re.search(r"(?m)^ {0,3}(\d+\.|Q:)", faq)  # numbers out with the questions
    # the title and the address stay; answers stay paragraphs apart; a left-out entry's
    # answer stays in the page
    assert faq.startswith("Frequently Asked Questions about zlib\n\nIf your question")
    assert "dates.\n\n    Make sure" in faq
    assert '-mods-v3"\n\n    Yes and yes.\n\n    No, not without' in faq
    # the usage example as markdown, its copy of a question scrubbed, the rest kept
    how = nset.files["examples/zlib_how.md"]
    assert "## zlib Usage Example" in how and "People ask:" in how and "Read on." in how
    assert nset.files["zlib.h"] == HEADER
    assert "random access" in nset.files["examples/README.examples"]
    assert nset.files["README"].startswith("ZLIB DATA COMPRESSION LIBRARY\n")
    assert "LZ77 variant." in nset.files["algorithm.txt"]
    assert "Plain Text Files" in nset.files["txtvsbin.txt"]
    man = nset.files["man/zlib.3.md"]
    assert man.startswith("# ZLIB(3)") and "general purpose data compression" in man
    # C sources, zconf.h, the PDF, changelogs and copyright out
    assert "leftout" not in " ".join(nset.files.values())
    assert VERSION in nset.note and "zlib.h" in nset.note and "zlib_how.html" in nset.note
    nsc.assert_left_out(nset, Q_ENDIAN, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.zlib_faq_set(), SHIPPED, [*ASKED, Q_ENDIAN])


def test_zlib_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "28. Can I access",
        "29. Does zlib work on MVS, OS/390, CICS, etc.?\n\n    It has in the past, but we "
        "have not heard of any recent evidence.\n\n28. Can I access",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.zlib_faq_set, lambda: write_gz(doc / "FAQ.gz", more)
    )


def test_zlib_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / "FAQ.gz").unlink()
    nsc.assert_refuses_without_faq(ns.zlib_faq_set, "FAQ.gz")


_QWORD = st.sampled_from(["zlib", "deflate()", "gzip", "Z_BUF_ERROR", "4", "GB", "1.2.3."])
_AWORD = st.sampled_from(["Yes.", "use", "the", "inflateInit2()", "zlib.h", "3.", "(see"])
_ALINE = st.one_of(
    st.builds(lambda w: "    " + " ".join(w), st.lists(_AWORD, min_size=1, max_size=5)),
    st.builds(lambda n, w: f"    {n}. " + " ".join(w), st.integers(1, 99), st.lists(_AWORD)),
    st.builds(lambda w: "        " + " ".join(w), st.lists(_AWORD, min_size=1, max_size=4)),
    st.just(""),
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(1, 99),  # the entry's number (right-aligned in two columns)
            st.lists(_QWORD, min_size=0, max_size=10),  # the question's words after its tag
            st.data(),  # where the question wraps, the blank lines before its answer
            st.lists(_AWORD, min_size=1, max_size=5),  # the answer's first line
            st.lists(_ALINE, max_size=6),  # the answer's further lines
        ),
        min_size=1,
        max_size=6,
    )
)
def test_split_zlib_faq_reads_numbered_entries_property(
    entries: list[tuple[int, list[str], st.DataObject, list[str], list[str]]],
) -> None:
    """Random FAQs shaped as zlib's: a title, then entries `` N. <question>`` (the number
    right-aligned in two columns), each question wrapped onto lines indented four spaces at
    random word breaks, 1-2 blank lines before its answer, the answer's lines indented four
    or eight spaces (some opening with a number and a dot: a list in the answer) with blank
    lines among them: every entry asks, in order, its question its words joined by one
    space; its answer exactly the text under it up to the next entry (ends stripped, blank
    runs made one); ids the slugs; no entry's number and no question left in the page;
    the title and every answer in it."""
    lines = ["        Frequently Asked Questions about zlib", ""]
    expected: list[tuple[str, str]] = []
    for n, (number, words, data, first, more) in enumerate(entries):
        words = [f"entry{n}x", *words]
        question = " ".join(words)
        breaks = data.draw(st.lists(st.booleans(), min_size=len(words), max_size=len(words)))
        wrapped = "".join(
            w + ("\n    " if br and k < len(words) - 1 else " ")
            for k, (w, br) in enumerate(zip(words, breaks, strict=True))
        ).rstrip(" ")
        lines += f"{number:2d}. {wrapped}".split("\n")
        lines += [""] * data.draw(st.integers(1, 2))
        lines += ["    " + " ".join(first), *more, ""]
        body = re.sub(r"\n{3,}", "\n\n", "\n".join([" ".join(first), *more])).strip()
        expected.append((question, body))
    page, qa = ns.split_zlib_faq("\n".join(lines) + "\n")
    assert [(q, a) for _, q, a in qa] == expected
    assert [k for k, _, _ in qa] == [ns._slug(q).rstrip("-") for q, _ in expected]
    assert not re.search(r"(?m)^ {0,3}\d+\.", page)
    assert not re.search(r"(?m)^.*entry\d+x", page)
    assert page.startswith("Frequently Asked Questions about zlib\n")
    nsc.assert_page_keeps_answers(qa, page)
