"""The ``autotools-faq`` natural-question set's parsers (``bench/natural_sets.py``) on small
inline texts shaped like makeinfo's Info output (Automake's manual: nodes after ``\\x1f``,
underlined titles, menus, index nodes) and texi2any's one-page HTML (Autoconf's manual, its
FAQ chapter's sections opening with the reader's question as a display); offline, no
embedding model.

What the set's numbers rest on: only the FAQ chapter asks; every question's title leaves the
corpus, and so does a display that asks it (then it is the question); the answer is exactly
the text under its question; the menus and indices that repeat every title are gone; no
example line is ever read as a heading; each chapter is its own file.
"""

from __future__ import annotations

import gzip
import itertools
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written, assert_held_out

INFO_HEAD = """This is automake-1.16.info, produced by makeinfo version 6.8 from
automake.texi.

INFO-DIR-SECTION Software development
START-INFO-DIR-ENTRY
* Automake: (automake-1.16).         Making GNU standards-compliant Makefiles.
END-INFO-DIR-ENTRY

\x1f
File: automake-1.16.info,  Node: Top,  Next: Introduction,  Up: (dir)

GNU Automake
************

This manual is for GNU Automake.

* Menu:

* Introduction::                Automake's purpose
* FAQ::                         Frequently Asked Questions

 -- The Detailed Node Listing --

Frequently Asked Questions about Automake

* Wildcards::                   Why doesn't Automake support wildcards?

\x1f
File: automake-1.16.info,  Node: Introduction,  Next: FAQ,  Prev: Top,  Up: Top

1 Introduction
**************

Automake is a tool for automatically generating 'Makefile.in's.
#include <not-a-heading.h>
"""

INFO_FAQ = """\x1f
File: automake-1.16.info,  Node: FAQ,  Next: Indices,  Prev: Introduction,  Up: Top

2 Frequently Asked Questions about Automake
*******************************************

This chapter covers some questions.

* Menu:

* Wildcards::                   Why doesn't Automake support wildcards?
* Per-Object Flags::            How to simulate per-object flags?

\x1f
File: automake-1.16.info,  Node: Wildcards,  Next: Per-Object Flags,  Up: FAQ

2.1 Why doesn't Automake support wildcards?
===========================================

Developers are lazy.

Background: lazy developers
---------------------------

   They would like wildcards.

\x1f
File: automake-1.16.info,  Node: Per-Object Flags,  Prev: Wildcards,  Up: FAQ

2.2 Per-Object Flags Emulation
==============================

     One of my source files needs to be compiled with different flags.  How
     do I do that?

   Automake supports per-program compilation flags.

     foo_CFLAGS = -some -flags

\x1f
File: automake-1.16.info,  Node: Indices,  Prev: FAQ,  Up: Top

Appendix A Indices
******************

\x00\x08[index\x00\x08]
* Menu:

* Wildcards:                        Wildcards.      (line  6)

\x1f
Tag Table:
Node: Top\x7f1101
\x1f
End Tag Table
"""

AUTOCONF_HTML = """<html><head><title>Autoconf</title></head><body>
<h1 class="settitle">Autoconf</h1>
<div class="top" id="Top"><h1 class="top">Autoconf</h1>
<p>This manual is for GNU Autoconf.</p>
<ul class="section-toc">
<li><a href="#Introduction">Introduction</a></li>
</ul>
</div>
<div class="chapter" id="Introduction">
<div class="header"><p>Next: <a href="#FAQ">Frequent Autoconf Questions</a></p></div>
<h2 class="chapter">1 Introduction</h2>
<p>Autoconf is a tool for producing shell scripts.</p>
<h3 class="section">1.1 A section</h3>
<p>Text of a section of an earlier chapter.</p>
</div>
<div class="chapter" id="FAQ">
<h2 class="chapter">2 Frequent Autoconf Questions, with answers</h2>
<p>Several questions about Autoconf come up occasionally.</p>
<ul class="section-toc">
<li><a href="#Why-GNU-M4">Why Require GNU M4?</a></li>
</ul>
<h3 class="section">2.1 Why Require GNU M4?</h3>
<div class="display"><pre class="display">Why does Autoconf require
GNU M4?
</pre></div>
<p>Many M4 implementations have hard-coded limitations.</p>
<h4 class="subsection">2.1.1 A sub-section</h4>
<p>Autoconf requires version 1.4.6 or later of GNU M4.</p>
<h3 class="section">2.2 Expanded Before Required</h3>
<div class="display"><pre class="display">AC_DEFUN([TESTA], [[echo in A]])
</pre></div>
<p>Older versions of Autoconf silently built files.</p>
</div>
<div class="appendix" id="Indices">
<h2 class="appendix">Appendix A Indices</h2>
<p>Why Require GNU M4? (index entry)</p>
</div>
</body></html>
"""


def test_info_markdown_nodes_titles_menus_and_indices() -> None:
    md = ns.info_markdown(INFO_HEAD + INFO_FAQ)
    assert md.startswith("# GNU Automake\n\nThis manual is for GNU Automake.\n\n## 1 Introduction")
    assert " #include <not-a-heading.h>" in md  # a text line never becomes a heading
    assert "### 2.1 Why doesn't Automake support wildcards?" in md
    assert "#### Background: lazy developers" in md
    for gone in ("File:", "* Menu:", "Automake's purpose", "Detailed Node", "Tag Table", "(line"):
        assert gone not in md
    assert "makeinfo" not in md  # the preamble is not a node
    assert "Indices" not in md  # an index node goes whole
    assert "\x1f" not in md and "\x00" not in md and "\n\n\n" not in md


def test_info_markdown_underline_must_match_the_title() -> None:
    md = ns.info_markdown(
        "\x1f\nFile: x.info,  Node: N\n\nTitle\n=====\nShort\n===\n  Ind\n  ===\n"
    )
    assert md == "### Title\n\nShort\n===\n  Ind\n  ===\n"


def test_lead_display_question_cases() -> None:
    fenced = "```\nWhy does Autoconf require\nGNU M4?\n\n```\n\nBecause."
    assert ns.lead_display_question(fenced) == ("Why does Autoconf require GNU M4?", "Because.")
    code = "```\nAC_DEFUN([A])\n\n```\n\nOlder versions."
    assert ns.lead_display_question(code) == (None, code)
    assert ns.lead_display_question("```\nWhy? never closed") == (None, "```\nWhy? never closed")
    info = "One of my files needs flags.  How\n     do I do that?\n\n   Automake supports it."
    assert ns.lead_display_question(info, indent=5) == (
        "One of my files needs flags. How do I do that?",
        "Automake supports it.",
    )
    assert ns.lead_display_question(info, indent=3) == (None, info)  # a paragraph, not a display
    plain = "Developers are lazy?\nyes\n\nMore."
    assert ns.lead_display_question(plain, indent=5) == (None, plain)  # continuation unindented
    assert ns.lead_display_question("     Why?", indent=5) == ("Why?", "")


def test_split_texinfo_chapters_question_chapters_ask_alone() -> None:
    md = (
        "## 1 A\n\n### 1.1 One?\n\nx\n\n## 2 B\n\n### 2.1 Two?\n\ny\n\n"
        "## 3 C\n\n### 3.1 Three?\n\nz\n"
    )
    _, qa = ns.split_texinfo_chapters(md, question_chapters={2})
    assert qa == [("2.1", "Two?", "y")]
    _, qa = ns.split_texinfo_chapters(md, first_question_chapter=2)
    assert [n for n, _, _ in qa] == ["2.1", "3.1"]  # the R FAQ's rule, unchanged


def test_bold_in_chapter_touches_that_chapter_alone() -> None:
    md = (
        "## 1 A\n\n#### 1.1.1 Kept\n\n## 2 FAQ\n\n#### 2.1.1 Bold\n\n```\n## 3 not\n```\n\n"
        "## 3 C\n\n#### 3.1.1 Kept\n"
    )
    out = ns._bold_in_chapter(md, 2)
    assert "#### 1.1.1 Kept" in out and "#### 3.1.1 Kept" in out
    assert "**2.1.1 Bold**" in out and "#### 2.1.1" not in out
    assert ns._bold_in_chapter(md, 9) == md


_INFO_LINE = st.one_of(
    st.text(alphabet="ab #?*=-.", max_size=12),
    st.builds(lambda t: "#" + t, st.text(alphabet="ab #", max_size=6)),
    st.just(""),
    st.just("* Menu:"),
    st.just("\x1f"),
    st.just("File: x.info,  Node: N,  Up: Top"),
    st.just("File: x.info,  Node: Top,  Up: (dir)"),
    st.just("\x00\x08[index\x00\x08]"),
    st.sampled_from(["Title", "2 Chapter", "2.1 Section?"]),
    st.sampled_from(["*****", "=====", "-----", ".....", "*********", "===========", "#####"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_INFO_LINE, max_size=60))
def test_info_markdown_headings_come_only_from_underlined_titles(lines: list[str]) -> None:
    md = ns.info_markdown("\n".join(lines))
    underlined = {
        " ".join(a.split())
        for a, b in itertools.pairwise(line.rstrip() for line in lines)
        if a and b and b[0] in "*=-." and b == b[0] * len(a) and any(c.isalnum() for c in a)
    }
    for line in md.split("\n"):
        if line.startswith("#"):
            assert line.split(" ", 1)[1] in underlined
    assert "\x1f" not in md and "* Menu:" not in md


# -- the set, built from package trees shaped like Debian's autoconf-doc and automake --------


def _packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setattr(ns, "AUTOCONF_FAQ_CHAPTER", 2)
    monkeypatch.setattr(ns, "AUTOMAKE_FAQ_CHAPTER", 2)
    ac = unpacked_package(tmp_path, monkeypatch, ns.AUTOCONF_PACKAGE, "2.71-3")
    am = unpacked_package(tmp_path, monkeypatch, ns.AUTOMAKE_PACKAGE, "1:1.16.5-1")
    (ac / ns.AUTOCONF_DOC).mkdir(parents=True)
    (am / ns.AUTOMAKE_INFO).mkdir(parents=True)
    return ac / ns.AUTOCONF_DOC, am / ns.AUTOMAKE_INFO


def _write(ac: Path, info: Path) -> None:
    (ac / ns.AUTOCONF_MANUAL).write_text(AUTOCONF_HTML, encoding="utf-8")
    # parts sorted by number (-10 after -2) and the indirect file left out
    for name, text in (("automake-1.16.info-2.gz", INFO_FAQ), ("automake-1.16.info-10.gz", "")):
        with gzip.open(info / name, "wt", encoding="utf-8") as fh:
            fh.write(text)
    with gzip.open(info / "automake-1.16.info-1.gz", "wt", encoding="utf-8") as fh:
        fh.write(INFO_HEAD)
    with gzip.open(info / "automake-1.16.info.gz", "wt", encoding="utf-8") as fh:
        fh.write("Indirect:\nautomake-1.16.info-1: 1101\n")


def test_autotools_faq_set_from_package_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ac, info = _packages(tmp_path, monkeypatch)
    _write(ac, info)
    nset = ns.autotools_faq_set()
    by_id = {q.qid: q for q in nset.questions}
    assert list(by_id) == [
        "autotools-faq:autoconf-2.1",
        "autotools-faq:autoconf-2.2",
        "autotools-faq:automake-2.1",
        "autotools-faq:automake-2.2",
    ]
    # a display that asks is the question; one that quotes code is not; else the title
    assert by_id["autotools-faq:autoconf-2.1"].text == "Why does Autoconf require GNU M4?"
    assert by_id["autotools-faq:autoconf-2.1"].answers[0][0] == (
        "Many M4 implementations have hard-coded limitations.\n\n"
        "**2.1.1 A sub-section**\n\nAutoconf requires version 1.4.6 or later of GNU M4."
    )
    assert by_id["autotools-faq:autoconf-2.2"].text == "Expanded Before Required"
    assert by_id["autotools-faq:autoconf-2.2"].answers[0][0].startswith("```\nAC_DEFUN")
    assert by_id["autotools-faq:automake-2.1"].text == "Why doesn't Automake support wildcards?"
    assert by_id["autotools-faq:automake-2.2"].text == (
        "One of my source files needs to be compiled with different flags. How do I do that?"
    )
    assert by_id["autotools-faq:automake-2.2"].answers[0][0] == (
        "Automake supports per-program compilation flags.\n\n     foo_CFLAGS = -some -flags"
    )
    assert set(nset.files) == {
        "autoconf/00-autoconf.md",
        "autoconf/01-1-introduction.md",
        "autoconf/02-2-frequent-autoconf-questions-with-answe.md",
        "automake/00-gnu-automake.md",
        "automake/01-1-introduction.md",
        "automake/02-2-frequently-asked-questions-about-autom.md",
    }
    corpus = " ".join(" ".join(nset.files.values()).split()).lower()
    for q in nset.questions:
        assert q.text.lower() not in corpus
        assert q.answers[0][0] in nset.files[q.source]
    for title in ("why require gnu m4?", "per-object flags emulation", "(index entry)"):
        assert title not in corpus
    assert "### 1.1 A section" in nset.files["autoconf/01-1-introduction.md"]
    assert_files_as_written(nset)
    assert "2.71-3" in nset.note and "1:1.16.5-1" in nset.note and "6 chapter files" in nset.note
    assert_held_out("autotools-faq")


def test_autotools_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ac, info = _packages(tmp_path, monkeypatch)
    _write(ac, info)
    first = ns.autotools_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}


def test_autotools_faq_set_refuses_packages_without_the_manuals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _packages(tmp_path, monkeypatch)
    with pytest.raises(FileNotFoundError, match=r"no autoconf\.html under"):
        ns.autotools_faq_set()
