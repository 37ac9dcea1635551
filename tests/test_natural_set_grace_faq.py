"""The ``grace-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on small inline pages shaped like
Debian's ``grace`` (``FAQ.html``: linuxdoc HTML, a title, an author line and an abstract, a
contents list of ``<H2>`` section headings over bullet lists of every ``N.M`` question, then
the body, the same section headings, each followed by its questions as ``<H2>N.M question``
headings; the User's Guide beside it, longer than the bench's usual cap) in a package tree
laid out as the package unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the contents list,
a question's heading, a note quoting one); each answer is exactly the text under its
question, the next question or section excluded; a heading is a question only when numbered
``N.M``, never inside fenced code; ids are the authors' numbers; an answer too short to judge
leaves the set but not the corpus's scrubbing; the halves hold when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is Grace?"
Q_BOOKS = "Are there any books about Grace?"
Q_BUG = "I think I found a bug in Grace! How do I report it?"
Q_MOTIF = "What is Motif (LessTif)?"
Q_POLAR = "How do I do polar plots?"
Q_PIPES = "How can I use pipes with Grace?"
Q_EMPTY = "Is there a forum for Grace?"
Q_UNDO = "Does Grace have an UNDO function?"

FAQ_HTML = f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2 Final//EN">
<HTML>
<HEAD>
 <TITLE>Grace FAQ (for Grace-5.1.23)</TITLE>
</HEAD>
<BODY>
<H1>Grace FAQ (for Grace-5.1.23)</H1>
<H2>by the Grace Team
  </H2>12.06.2010
<HR>
<EM>This document contains Frequently Asked Questions (FAQ) about <B>Grace</B>.</EM>
<HR>
<P>
<H2><A NAME="toc1">1.</A> <A HREF="FAQ.html#s1">General Questions     </A></H2>

<UL>
<LI><A NAME="toc1.1">1.1</A> <A HREF="FAQ.html#ss1.1">{Q_WHAT}       </A>
<LI><A NAME="toc1.2">1.2</A> <A HREF="FAQ.html#ss1.2">{Q_BOOKS}       </A>
<LI><A NAME="toc1.3">1.3</A> <A HREF="FAQ.html#ss1.3">{Q_EMPTY}       </A>
</UL>
<P>
<H2><A NAME="toc2">2.</A> <A HREF="FAQ.html#s2">Installation     </A></H2>

<UL>
<LI><A NAME="toc2.1">2.1</A> <A HREF="FAQ.html#ss2.1">{Q_BUG}       </A>
<LI><A NAME="toc2.2">2.2</A> <A HREF="FAQ.html#ss2.2">{Q_MOTIF}       </A>
</UL>
<HR>
<H2><A NAME="s1">1.</A> <A HREF="#toc1">General Questions     </A></H2>

<H2><A NAME="ss1.1">1.1</A> <A HREF="#toc1.1">{Q_WHAT}       </A>
</H2>

<P>Grace is a tool to make two-dimensional plots of numerical
data.</P>
<P>Grace is derived from Xmgr (a.k.a. ACE/gr).</P>

<H2><A NAME="books"></A> <A NAME="ss1.2">1.2</A> <A HREF="#toc1.2">{Q_BOOKS}
      </A></H2>

<P>As of now, Grace is a purely virtual creature living in the net (see
question <A HREF="#ss1.1">{Q_WHAT}</A>).</P>

<H2><A NAME="ss1.3">1.3</A> <A HREF="#toc1.3">{Q_EMPTY}       </A>
</H2>

<H2><A NAME="s2">2.</A> <A HREF="#toc2">Installation     </A></H2>

<P>Read the READMEs first.</P>

<H2><A NAME="ss2.1">2.1</A> <A HREF="#toc2.1">{Q_BUG}       </A>
</H2>

<P>Use w3todo to report it. Mention the version of Grace.</P>
<H3>Details</H3>
<P>Send the output of uname -a along with the report.</P>

<H2><A NAME="ss2.2">2.2.</A> <A HREF="#toc2.2">{Q_MOTIF}       </A>
</H2>

<P>M*tif is a widget toolkit; LessTif is a free clone of it:</P>
<PRE>
## 9.9 Not a heading inside code
./configure --with-motif-library=/usr/lib
</PRE>
<P>Then run make.</P>

<H2><A NAME="s3">3.</A> <A HREF="#toc3">Using Grace     </A></H2>

<H2><A NAME="ss3.1">3.1</A> <A HREF="#toc3.1">{Q_POLAR}       </A>
</H2>

<P>Set the graph type to Polar in the Graph Appearance dialog.</P>

<H2><A NAME="ss3.2">3.2</A> <A HREF="#toc3.2">{Q_PIPES}       </A>
</H2>

<P>Open a pipe with the -pipe option and write commands to it.</P>

<H2><A NAME="ss3.2">3.2</A> <A HREF="#toc3.2">{Q_UNDO}       </A>
</H2>

<P>Not yet. Please save often and early.</P>
</BODY>
</HTML>
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def _markdown(page: str = FAQ_HTML) -> str:
    markdown: str = ns.page_to_markdown(page)
    return markdown


# -- the reader ---------------------------------------------------------------------------------


def test_split_grace_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_grace_faq(_markdown())
    # 1.3 has no text under it: no question (its heading leaves all the same); the second
    # 3.2 is a repeated number
    assert [key for key, _, _ in qa] == ["1.1", "1.2", "2.1", "2.2", "3.1", "3.2", "3.2-2"]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["1.1"] == (
        Q_WHAT,
        "Grace is a tool to make two-dimensional plots of numerical data.\n\n"
        "Grace is derived from Xmgr (a.k.a. ACE/gr).",
    )
    # a heading with a second anchor before its number, its title wrapped: one question
    assert by_key["1.2"][0] == Q_BOOKS
    # a deeper unnumbered heading stays inside the open answer, and in the page
    assert by_key["2.1"][1] == (
        "Use w3todo to report it. Mention the version of Grace.\n\n### Details\n\n"
        "Send the output of uname -a along with the report."
    )
    # "2.2." read; a numbered line inside fenced code is code, not a question
    assert by_key["2.2"][0] == Q_MOTIF
    assert "## 9.9 Not a heading inside code" in by_key["2.2"][1]
    assert by_key["2.2"][1].endswith("Then run make.")
    assert by_key["3.2-2"] == (Q_UNDO, "Not yet. Please save often and early.")
    # a section's own text is no answer; the section headings of the body stay, once each
    assert all("Read the READMEs first." not in a for _, _, a in qa)
    assert "## 2. Installation\n\nRead the READMEs first." in text
    headings = [ln for ln in text.split("\n") if ln.startswith("#")]
    assert headings == [
        "# Grace FAQ (for Grace-5.1.23)",
        "## by the Grace Team",
        "## 1. General Questions",
        "## 2. Installation",
        "### Details",
        "## 9.9 Not a heading inside code",  # the line inside 2.2's code fence, kept
        "## 3. Using Grace",
    ]
    for _key, _q, a in qa:
        assert a in text
    flat = " ".join(text.split())
    for q in (Q_BOOKS, Q_BUG, Q_MOTIF, Q_POLAR, Q_PIPES, Q_EMPTY, Q_UNDO):
        assert q not in flat
    # 1.1's text survives only where 1.2's answer quotes it (scrubbed by the set, not here)
    assert flat.count(Q_WHAT) == 1
    assert "- 1.1" not in text and "\n\n\n" not in text


def test_split_grace_faq_keeps_a_section_that_is_not_a_contents_list() -> None:
    page = "# T\n\n## 1. Intro\n\n- 1.1 a bullet\n\nand a sentence.\n\n## 1.1 Why?\n\nBecause.\n"
    text, qa = ns.split_grace_faq(page)
    assert qa == [("1.1", "Why?", "Because.")]
    assert text == "# T\n\n## 1. Intro\n\n- 1.1 a bullet\n\nand a sentence.\n\nBecause.\n"


def test_split_grace_faq_without_numbered_headings_asks_nothing() -> None:
    text, qa = ns.split_grace_faq("# Grace\n\n## Why?\n\nNo number, no question.\n")
    assert qa == [] and text == "# Grace\n\n## Why?\n\nNo number, no question.\n"


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:", max_size=20),
    st.just(""),
    st.just(""),
    st.just("```"),
    st.builds(
        lambda lvl, a, t: f"{'#' * lvl} {a}. {t}",
        st.integers(1, 3),
        st.integers(1, 4),
        st.text(alphabet="abc ", min_size=1, max_size=10),
    ),
    st.builds(
        lambda lvl, a, b, dot, t: f"{'#' * lvl} {a}.{b}{dot} {t}",
        st.integers(1, 3),
        st.integers(1, 4),
        st.integers(0, 9),
        st.sampled_from(["", "."]),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
    st.builds(lambda a, b: f"- {a}.{b} a question?", st.integers(1, 4), st.integers(0, 9)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=60))
def test_split_grace_faq_answers_are_in_the_page_and_questions_are_not(
    lines: list[str],
) -> None:
    page = "\n".join(["# Title", "", *lines])
    text, qa = ns.split_grace_faq(page)
    assert text.startswith("# Title\n") and "\n\n\n" not in text
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    numbered = [ln for ln in lines if re.match(r"^#{1,6} \d+\.\d+\.?\s+\S", ln)]
    assert len(qa) <= len(numbered)
    kept_lines = [" ".join(ln.split()) for ln in text.split("\n")]
    given_lines = [" ".join(ln.split()) for ln in lines]
    for key, q, a in qa:
        assert re.fullmatch(r"\d+\.\d+(-\d+)?", key) and q.strip() and a.strip()
        assert a in text
        # the question's heading left the page: fewer heading lines carry it than before
        number = key.split("-")[0]
        pattern = re.compile(rf"^#{{1,6}} {re.escape(number)}\.? {re.escape(q)}$")
        assert sum(1 for ln in kept_lines if pattern.match(ln)) < sum(
            1 for ln in given_lines if pattern.match(ln)
        )


# -- the set, built from a package tree shaped like Debian's grace ------------------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GRACE_PACKAGE, "1:5.1.25-13")
    doc: Path = root / ns.GRACE_DOC
    doc.mkdir(parents=True, exist_ok=True)
    (doc / ns.GRACE_FAQ).write_text(faq)
    # longer than the bench's usual cap, under the set's: kept whole; it quotes a question
    (doc / "UsersGuide.html").write_text(
        "<HTML><BODY><H1>Grace User's Guide</H1>"
        f"<P>{Q_POLAR} Choose Polar as the graph type.</P>"
        + "<P>Set the axis options.</P>" * 4_000
        + "</BODY></HTML>"
    )
    (doc / "Tutorial.html").write_text("<HTML><BODY><H1>Tutorial</H1><P>Plot it.</P></BODY>")
    (doc / "CHANGES.html").write_text(
        "<HTML><BODY><P>" + "Fixed. " * (ns.GRACE_MAX_PAGE_CHARS // 7 + 1) + "</P></BODY>"
    )  # over the set's cap: out, named
    (doc / "GPL.html").write_text("<HTML><BODY><P>GNU GENERAL PUBLIC LICENSE</P></BODY>")
    (doc / "nohelp.html").write_text("<HTML><BODY><H1>No help</H1></BODY></HTML>")
    write_gz(doc / "FAQ.pdf.gz", "%PDF-1.4\n")
    (doc / "README").write_text("GRACE\n\nRecommended reading: doc/FAQ.html\n")
    (doc / "README.Debian").write_text("grace for Debian\n\nUse epstopdf for PDF output.\n")
    (doc / "3.dat").write_text("1 2\n2 4\n")
    write_gz(doc / "changelog.gz", "5.1.25: fixes.\n")
    (doc / "copyright").write_text("GPL-2+\n")
    write_gz(
        root / "usr/share/man/man1/grace.1.gz",
        f".TH GRACE 1\n.SH NAME\ngrace \\- plot\n.SH DESCRIPTION\n{Q_PIPES} Use \\fB-pipe\\fR.\n",
    )
    return doc


def test_grace_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.grace_faq_set()
    assert [q.qid for q in nset.questions] == [
        "grace-faq:1.1",
        "grace-faq:1.2",
        "grace-faq:2.1",
        "grace-faq:2.2",
        "grace-faq:3.1",
        "grace-faq:3.2",
        "grace-faq:3.2-2",
    ]
    assert nset.left_out == ()
    assert set(nset.files) == {
        "FAQ.md",
        "UsersGuide.md",
        "Tutorial.md",
        "README",
        "README.Debian",
        "man/grace.1.md",
    }
    assert len(nset.files["UsersGuide.md"]) > ns.MAX_LINKED_CHARS
    assert {q.source for q in nset.questions} == {"FAQ.md"}
    corpus = _corpus(nset.files)
    for q in nset.questions:
        # 1.1 is under 4 words: too generic to scrub (the project's rule), left where 1.2 quotes it
        if len(q.text.split()) >= 4:
            assert q.text.lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ.md"]
    # a note and a man page quoting a question are scrubbed, their other text kept
    assert "Choose Polar as the graph type." in nset.files["UsersGuide.md"]
    assert "Use -pipe." in " ".join(nset.files["man/grace.1.md"].split())
    nsc.assert_files_as_written(nset)
    assert "1:5.1.25-13" in nset.note and "over 150000 chars: CHANGES.html" in nset.note
    assert "UsersGuide.html, Tutorial.html, README, README.Debian, grace.1" in nset.note
    nsc.assert_held_out("grace-faq")


def test_grace_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    faq = FAQ_HTML.replace(
        "<P>Set the graph type to Polar in the Graph Appearance dialog.</P>",
        "<P>Graph Appearance.</P>",
    )
    _package(tmp_path, monkeypatch, faq)
    nset = ns.grace_faq_set()
    assert nset.left_out == (Q_POLAR,)
    assert Q_POLAR in nset.note
    assert Q_POLAR.lower() not in _corpus(nset.files)


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy of a question of four words or more, and
    finds every question in the FAQ as shipped (its contents list and headings: it could
    fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.grace_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert len(asked) == 7
    leaks = cql.find_leaks(nset.files, asked, False)
    assert {(lk.question, lk.file) for lk in leaks} == {(Q_WHAT, "FAQ.md")}
    shipped = cql.find_leaks({"FAQ.html": FAQ_HTML}, asked, True)
    assert {lk.question for lk in shipped if lk.kind == "exact"} == set(asked)


def test_grace_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.grace_faq_set)
    more = FAQ_HTML.replace(
        '<H2><A NAME="s3">',
        '<H2><A NAME="ss2.3">2.3</A> Can I compile Grace myself?</H2>\n'
        "<P>Yes, this is the preferred method of installation.</P>\n"
        '<H2><A NAME="s3">',
        1,
    )
    (doc / ns.GRACE_FAQ).write_text(more)
    nsc.assert_halves_kept(ns.grace_faq_set, first, dev, test)


def test_grace_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / ns.GRACE_FAQ).unlink()
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.html under"):
        ns.grace_faq_set()
