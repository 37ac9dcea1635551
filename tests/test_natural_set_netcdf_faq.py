"""The ``netcdf-faq`` natural-question set (``bench/natural_sets.py``): netCDF's FAQ as
Debian's ``netcdf-doc`` ships it (``/usr/share/doc/netCDF/html/faq.html``, one page of the C
library's manual as Doxygen writes it: the manual's header, navigation and search box, a
``div.toc`` box listing every group and question as links, then the ``div.textblock``:
``<h1>`` group titles over ``<h2>`` entries, each opening with a Doxygen anchor, a code
fragment followed by Doxygen's hidden tooltip, an answer's own ``<h3>`` sub-section, a group
title at the questions' level with no text of its own, a stated question without "?", a
one-word topic title with text, a short answer; the footer), read by the ZoneMinder reading
unchanged (:func:`natural_sets.split_zoneminder_faq`) over the page's text block
(:func:`natural_sets.doxygen_textblock_html`), beside the manual's other pages (the main
page, a user-guide page quoting a question, a module page, a structure page, one over the
page limit; Doxygen's generated indexes, per-file pages, source listings, the search folder,
a style sheet and an image left out by avr-libc's rule), in a package tree laid out as the
package unpacks (marker present, nothing downloaded); and the question-leak check
(``bench/check_question_leaks.py``); offline, no embedding model, no test reads the real
package.

What the set's numbers rest on: no question is left in any file (the contents box listing
them is not read); each answer is exactly the text under its heading up to the next heading
of its level or higher, without Doxygen's hidden tooltips; group and topic titles stay and
ask nothing; ids are the questions' slugs, so a question added keeps the halves; an answer
too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

VERSION = "1:4.9.0-3"

Q_WHAT = "What Is netCDF?"
Q_ASCII = "How do I convert netCDF data to ASCII or text?"
Q_LFS = "What is Large File Support?"
Q_RECOVER = "Can I recover data from a netCDF file that was not closed properly?"
Q_LINK = "What if I want to link against multiple libraries in a non-standard location"
Q_BUG = "How do I make a bug report?"
ASKED = [Q_WHAT, Q_ASCII, Q_LFS, Q_RECOVER, Q_LINK]
"""In page order; :data:`Q_BUG`'s answer is too short and it is left out."""
IDS = [
    "what-is-netcdf",
    "how-do-i-convert-netcdf-data-to-ascii-or",
    "what-is-large-file-support",
    "can-i-recover-data-from-a-netcdf-file-th",
    "what-if-i-want-to-link-against-multiple-",
]

A_WHAT = "NetCDF is a set of interfaces for array-oriented data access and a format."
A_ASCII_LEAD = "Use the ncdump utility that comes with the netCDF library."
A_ASCII_SUB = "It writes the header and the data as CDL text."
A_LFS = "Large File Support lets a program on a 32-bit system write files over 2 GiB."
A_RECOVER = "If the file is in classic format, the data may be there: rewrite the header."
A_LINK = "Give CMake a list of library paths separated by semicolons in one variable."
LINKING = "CMake searches the library paths in the order they are given."
A_ASCII = f"{A_ASCII_LEAD}\n\nncdump foo.nc > foo.cdl\n\n### Using ncdump\n\n{A_ASCII_SUB}"
"""The answer's code fragment and its own sub-section are in it; Doxygen's hidden tooltip
after the fragment is not."""
TOOLTIP = "Definition: dfile.c:659 leftout tooltip"


def _h(level: int, anchor: str, title: str) -> str:
    return f'<h{level}><a class="anchor" id="{anchor}"></a>\n{title}</h{level}>\n'


def _p(text: str) -> str:
    return f"<p >{text}</p>\n"


def _fragment(line: str) -> str:
    """A code fragment with the hidden tooltip Doxygen writes after it for a symbol in it."""
    return (
        f'<div class="fragment"><div class="line">{line}</div>\n</div><!-- fragment -->'
        '<div class="ttc" id="ga1"><div class="ttname"><a href="group__datasets.html">'
        'nc_open</a></div><div class="ttdeci">int nc_open(const char *path, int mode, '
        f'int *ncidp)</div><div class="ttdef"><b>{TOOLTIP}</b></div></div>\n'
    )


def _page(title: str, body: str, toc: str = "", *, textblock: bool = True) -> str:
    """A page of the manual as Doxygen 1.9 writes it (the project's header and footer)."""
    contents = f'<div class="textblock">{body}</div>' if textblock else body
    return (
        "<!DOCTYPE html>\n<html><head><title>NetCDF: leftout head</title></head><body>\n"
        '<div id="top"><div id="titlearea"><table><tr><td id="projectname">NetCDF '
        '<span id="projectnumber">4.9.0</span></td></tr></table></div>\n'
        '<div id="main-nav"><ul><li><a href="pages.html">Related Pages leftout nav</a></li>'
        "</ul></div>\n"
        '<div id="MSearchBox" class="MSearchBoxInactive">leftout search</div></div>\n'
        '<div id="doc-content">\n<div><div class="header">\n'
        f'  <div class="headertitle"><div class="title">{title} </div></div>\n'
        '</div><!--header-->\n<div class="contents">\n'
        f"{toc}{contents}</div><!-- contents -->\n</div><!-- PageDoc -->\n"
        "</div><!-- doc-content -->\n"
        '<div id="nav-path" class="navpath"><address>Generated on Sat Jul 30 2022 for '
        "NetCDF, leftout footer</address></div>\n</body>\n</html>\n"
    )


def _toc(*titles: str) -> str:
    items = "".join(f'<li class="level2"><a href="#{ns._slug(t)}">{t}</a></li>\n' for t in titles)
    return f'<div class="toc"><h3>Table of Contents</h3>\n<ul>{items}</ul>\n</div>\n'


FAQ_BODY = (
    _p('<a class="anchor" id="md__build_netcdf_docs_FAQ"></a>')
    + _h(1, "ncFAQGeneral", "General")
    + _h(2, "What-Is-netCDF", Q_WHAT)
    + _p(A_WHAT)
    + _h(2, "How-do-I-convert-netCDF-data-to-ASCII-or-text", Q_ASCII)
    + _p(A_ASCII_LEAD)
    + _fragment("ncdump foo.nc &gt; foo.cdl")
    + _h(3, "autotoc_md1", "Using ncdump")
    + _p(A_ASCII_SUB)
    + _h(1, "Large-File-Support", "Large File Support")
    + _h(2, "What-is-Large-File-Support", Q_LFS)
    + _p(A_LFS)
    + "<hr  />\n"
    + _h(2, "autotoc_md224", "Problems and Bugs")
    + _h(2, "Can-I-recover-data", Q_RECOVER)
    + _p(A_RECOVER)
    + _h(2, "How-do-I-make-a-bug-report", Q_BUG)
    + _p("See the issue tracker.")
    + _h(1, "CMake-Related", "CMake-Related Frequently Asked Questions")
    + _h(2, "What-if-I-want-to-link", Q_LINK)
    + _p(A_LINK)
    + _h(2, "Linking", "Linking")
    + _p(LINKING)
)
FAQ = _page(
    "FAQ",
    FAQ_BODY,
    _toc("General", *ASKED[:2], "Large File Support", Q_LFS, "Problems and Bugs", Q_RECOVER)
    + _toc(Q_BUG, Q_LINK, "Linking"),
)
SHIPPED = {"faq.html": FAQ}

INDEX = _page("The NetCDF C Library", _p("The C library's manual: data model, formats, API."))
KNOWN = _page(
    "Known Problems",
    _p(f"Users ask: {Q_RECOVER} Run ncdump -h on it first.") + _p("Older releases had bugs."),
)
MODULE = _page(
    "Datasets",
    '<div class="textblock">' + _p("Functions that open and create datasets.") + "</div>\n"
    '<h2 class="groupheader">Function Documentation</h2>\n'
    '<div class="memitem"><div class="memproto">int nc_open()</div>'
    '<div class="memdoc">' + _p("Open an existing netCDF file.") + "</div></div>\n",
    textblock=False,
)
STRUCT = _page("NC_Dispatch Struct Reference", _p("The dispatch table of a format's layer."))
LONG = _page("Filters", _p("Filter plugins. " * 12_000))
LEFT_OUT = (
    "globals.html",
    "globals_func.html",
    "functions.html",
    "dir_68267d1309a1af8e8297ef4c3efbcdba.html",
    "annotated.html",
    "classes.html",
    "files.html",
    "modules.html",
    "pages.html",
    "netcdf_8h.html",
    "netcdf_8h_source.html",
    "dfile_8c.html",
)
FILES = {
    "faq.md",
    "index.md",
    "known_problems.md",
    "group__datasets.md",
    "structNC__Dispatch.md",
}


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **pages: str) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.NETCDF_PACKAGE, VERSION)
    doc: Path = root / ns.NETCDF_DOC
    doc.mkdir(parents=True)
    written = {
        **SHIPPED,
        "index.html": INDEX,
        "known_problems.html": KNOWN,
        "group__datasets.html": MODULE,
        "structNC__Dispatch.html": STRUCT,
        "md__build_netcdf_docs_filters.html": LONG,
        **{name: _page("leftout index", _p(f"{Q_WHAT} leftout")) for name in LEFT_OUT},
        **pages,  # a test's own version of a page
    }
    for name, text in written.items():
        (doc / name).write_text(text, encoding="utf-8")
    (doc / "search").mkdir()
    (doc / "search/all_0.html").write_text(_page("leftout", _p("leftout")), encoding="utf-8")
    (doc / "doxygen.css").write_text("leftout { }\n", encoding="utf-8")
    (doc / "uniLogo.png").write_bytes(b"\x89PNG leftout")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`SHIPPED` and the manual's other pages)."""
    return _package(tmp_path, monkeypatch)


def test_netcdf_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.netcdf_faq_set()
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_package_set(
        nset,
        "netcdf-faq",
        ids=IDS,
        files=FILES,
        source="faq.md",
        version=VERSION,
        too_long="md__build_netcdf_docs_filters.html",
        answers={
            "what-is-netcdf": A_WHAT,
            "how-do-i-convert-netcdf-data-to-ascii-or": A_ASCII,
            "what-is-large-file-support": A_LFS,
            "can-i-recover-data-from-a-netcdf-file-th": A_RECOVER,
            "what-if-i-want-to-link-against-multiple-": A_LINK,
        },
    )
    corpus = " ".join(nset.files.values())
    # header, navigation, search box, footer, the contents box, left-out pages: not read
    assert "leftout" not in corpus and "Table of Contents" not in corpus
    # group titles (<h1>, and one at the questions' level with no text) and a one-word topic
    # title with text stay and ask nothing
    faq = nset.files["faq.md"]
    for title in ("# FAQ", "General", "Large File Support", "Problems and Bugs", "Linking"):
        assert title in faq
    assert LINKING in faq and "CMake-Related Frequently Asked Questions" in faq
    # a user-guide page quoting a question: scrubbed, its other text kept
    known = nset.files["known_problems.md"]
    assert "Users ask:" in known and "Run ncdump -h on it first." in known
    # the module page is read whole (its member documentation), not its text block only
    assert "Open an existing netCDF file." in nset.files["group__datasets.md"]
    # the short answer left out and named, its question scrubbed all the same
    nsc.assert_left_out(nset, Q_BUG, len(ASKED))
    assert "6 questions deleted" in nset.note


def test_doxygen_textblock_html_reads_the_text_block_only() -> None:
    """The page's title and text block, nothing of the header, contents box, tooltips or
    footer; a page without a text block gives its title alone."""
    block = ns.doxygen_textblock_html(FAQ)
    assert block.startswith("<h1>FAQ</h1>")
    assert Q_WHAT in block and A_LINK in block
    assert "leftout" not in block and "Table of Contents" not in block and "ttc" not in block
    assert ns.doxygen_textblock_html(MODULE) == "<h1>Datasets</h1>"


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    nset = ns.netcdf_faq_set()
    nsc.assert_leak_checked(nset, SHIPPED, [*ASKED, Q_BUG], is_html=True)


def test_netcdf_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        _h(1, "CMake-Related", "CMake-Related Frequently Asked Questions"),
        _h(2, "Are-the-libraries-thread-safe", "Are the netCDF libraries thread-safe?")
        + _p("No: a program must not call the library from two threads at once.")
        + _h(1, "CMake-Related", "CMake-Related Frequently Asked Questions"),
        1,
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.netcdf_faq_set, lambda: (doc_dir / ns.NETCDF_FAQ).write_text(more, encoding="utf-8")
    )


def test_netcdf_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.NETCDF_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.netcdf_faq_set, ns.NETCDF_FAQ)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["asks", "states", "topic"]),
                st.lists(_WORD, min_size=2, max_size=5),
                st.lists(_WORD, min_size=0, max_size=12),
            ),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_netcdf_faq_set_reads_any_doxygen_faq_page(
    groups: list[list[tuple[str, list[str], list[str]]]],
) -> None:
    """Any FAQ page of the Doxygen shape (``<h1>`` groups, ``<h2>`` entries opening with an
    anchor, a contents box listing them all) as ``faq.html`` in the package tree: each
    entry ending with "?", or stated in three words or more, with text of its own is asked
    once, as its slug, with exactly its text as the answer (left out and named when under
    five words), and is gone from every file; an entry with no text, a one-word topic title
    and every group title stay in the page and ask nothing."""
    body: list[str] = []
    titles: list[str] = []
    expected: list[tuple[str, str, str]] = []
    short: list[str] = []
    kept: list[str] = []
    for g, entries in enumerate(groups, start=1):
        body.append(_h(1, f"g{g}", f"group{g}x"))
        kept.append(f"group{g}x")
        for e, (kind, title, words) in enumerate(entries, start=1):
            text = {
                "asks": f"q{g}n{e}x " + " ".join(title) + "?",
                "states": f"s{g}n{e}x " + " ".join(title),
                "topic": f"t{g}n{e}x",
            }[kind]
            answer = " ".join(words)
            titles.append(text)
            body.append(_h(2, f"a{g}n{e}", text) + (_p(answer) if words else ""))
            if kind != "topic" and words and len(words) >= ns.MIN_ANSWER_WORDS:
                expected.append((ns._slug(text), text, answer))
            elif kind != "topic" and words:
                short.append(text)
            else:
                kept.append(text)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        _package(Path(tmp), mp, **{"faq.html": _page("FAQ", "".join(body), _toc(*titles))})
        nset = ns.netcdf_faq_set()
    got = [(q.qid.removeprefix("netcdf-faq:"), q.text, q.answers[0][0]) for q in nset.questions]
    assert got == expected
    assert {q.source for q in nset.questions} <= {"faq.md"}
    assert list(nset.left_out) == short
    corpus = nsc.flat(" ".join(nset.files.values()))
    for question in [*(q for _, q, _ in expected), *short]:
        assert nsc.flat(question) not in corpus
    for heading in kept:
        assert heading in nset.files["faq.md"]
