"""The ``privoxy-faq`` natural-question set's parsers (``bench/natural_sets.py``) on small
inline pages shaped like DocBook's chunked HTML (Debian ``privoxy``: ``faq/*.html`` and
``user-manual/*.html``, the DSSSL stylesheets' upper-case markup; offline, no embedding
model).

What the set's numbers rest on: the generated tables of contents (which repeat every
question) and the navigation blocks leave the page; every ``sect2`` title of an asking
chapter leaves the corpus, its answer exactly the text under it (its own ``sect3``
sub-sections inside as bold lines, the next question excluded), whatever ``<hN>`` the
stylesheet gave the title; a chapter that asks nothing (Contact, Copyright) stays whole;
a ``qandaset`` splits the same way; a link that points at a question and quotes its wording
is deleted, a pointer in its own words kept; the dev/test halves are fixed by the ids.
"""

from __future__ import annotations

import gzip
import re
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


def _nav(cls: str) -> str:
    return (
        f'<DIV\nCLASS="{cls}"\n><TABLE\nSUMMARY="{cls.title()} navigation table"\n><TR\n><TD\n>'
        '<A\nHREF="index.html"\nACCESSKEY="P"\n>Prev</A\n></TD\n><TD\n>Getting W Started</TD\n>'
        "</TR\n></TABLE\n></DIV\n>"
    )


FAQ_PAGE = f"""<HTML
><HEAD
><TITLE
>General Information</TITLE
></HEAD
><BODY
CLASS="SECT1"
>{_nav("NAVHEADER")}<DIV
CLASS="SECT1"
><H1
CLASS="SECT1"
><A
NAME="GENERAL"
>1. General Information</A
></H1
><DIV
CLASS="SECT2"
><H3
CLASS="SECT2"
><A
NAME="WHO-USES"
>1.1. Who should give <SPAN
CLASS="APPLICATION"
>Wproxy</SPAN
> a try?</A
></H3
><P
>  Anyone who is interested in privacy.
 </P
></DIV
><DIV
CLASS="SECT2"
><H3
CLASS="SECT2"
><A
NAME="HELP"
>1.2. I would like to help you, what can
I do?</A
></H3
><DIV
CLASS="SECT3"
><H4
CLASS="SECT3"
><A
NAME="PARTICIPATE"
>1.2.1. Would you like to participate?</A
></H4
><P
>We always need help.</P
></DIV
></DIV
><DIV
CLASS="SECT2"
><H2
CLASS="SECT2"
><A
NAME="SPONSOR"
>1.3. How can I become a sponsor of the project?</A
></H2
><P
>See the sponsor levels. For a LAN, read <A
HREF="configuration.html#LANCONFIG"
>How can I set up Wproxy to act as a proxy for my LAN</A
> first; for trouble, <A
HREF="configuration.html#LANCONFIG"
>see below</A
>.</P
><PRE
CLASS="SCREEN"
>## a comment in an example
listen-address 127.0.0.1:8118</PRE
></DIV
><DIV
CLASS="SECT2"
><H3
CLASS="SECT2"
><A
NAME="EMPTY"
>1.4. A title with nothing under it?</A
></H3
></DIV
></DIV
>{_nav("NAVFOOTER")}</BODY
></HTML
>"""

CONFIG_PAGE = """<HTML><BODY><DIV CLASS="SECT1"><H1 CLASS="SECT1"><A NAME="CONFIGURATION"
>3. Configuration</A></H1><DIV CLASS="SECT2"><H3 CLASS="SECT2"><A NAME="LANCONFIG"
>3.1. How can I set up Wproxy to act as a proxy for my LAN?</A></H3><P>Change the
listen-address option.</P></DIV><DIV CLASS="SECT2"><H3 CLASS="SECT2"><A NAME="TOR"
>3.2. How do I use Wproxy together with Tor?</A></H3><P>Forward to socks5. As in <A
HREF="#LANCONFIG">How can I set up Wproxy as a proxy for my LAN</A>, first listen.</P
></DIV></DIV></BODY></HTML>"""

CONTACT_PAGE = """<HTML><BODY><DIV CLASS="SECT1"><H1 CLASS="SECT1"><A NAME="CONTACT"
>6. Contacting the developers</A></H1><DIV CLASS="SECT2"><H2 CLASS="SECT2"><A NAME="SUPPORT"
>6.1. Get Support</A></H2><P>Use the mailing list.</P></DIV><DIV CLASS="SECT2"><H2
CLASS="SECT2"><A NAME="LISTS">6.2. Mailing Lists</A></H2><P>Three lists exist.</P></DIV
></DIV></BODY></HTML>"""

INDEX_PAGE = """<HTML><BODY CLASS="ARTICLE"><DIV CLASS="ARTICLE"><DIV CLASS="TITLEPAGE"><H1
CLASS="TITLE"><A NAME="AEN2">Wproxy Frequently Asked Questions</A></H1><DIV><DIV
CLASS="ABSTRACT"><P>This FAQ gives quick answers.</P></DIV></DIV><HR></DIV><DIV
CLASS="TOC"
><DL
><DT
><B
>Table of Contents</B
></DT
><DT
>1. <A
HREF="general.html"
>General Information</A
></DT
><DD
><DL
><DT
>1.1. <A
HREF="general.html#WHO-USES"
>Who should give Wproxy a try?</A
></DT
><DD><DIV CLASS="nested"><DL><DT>1.2. How can I become a sponsor of the project?</DT></DL
></DIV></DD
></DL
></DD
></DL
></DIV
><P>After the contents.</P></DIV></BODY></HTML>"""

QANDA_PAGE = """<html><body><div class="sect1"><h2 class="sect1"><a name="faq"></a>2. Questions</h2>
<div class="qandaset"><div class="toc"><dl><dt>2.1. <a href="#q1">Does W run on Plan 9?</a></dt>
</dl></div><div class="qandaentry"><div class="question"><p><a name="q1"></a><b>Q: </b>Does
W run on Plan 9?</p></div><div class="answer"><p><b>A: </b>Yes, since version 2.</p>
</div></div><div class="qandaentry"><div class="question"><p><a name="q2"></a><b>Q: </b>How
do I build W without X11?</p></div><div class="answer"><p><b>A: </b>Pass --without-x.</p>
<p>Then run make.</p></div></div></div></div></body></html>"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_drop_docbook_toc_removes_the_contents_with_its_nested_divs() -> None:
    kept = ns.drop_docbook_toc(INDEX_PAGE)
    assert "Table of Contents" not in kept
    assert "Who should give" not in kept and "sponsor" not in kept  # inside a nested div
    assert "This FAQ gives quick answers." in kept and "After the contents." in kept
    assert kept.endswith("</DIV></BODY></HTML>")
    # lower-case XSL markup, and a "lot" list of tables, go too; other divs stay
    page = '<div class="toc"><div>a</div>b</div><div class="lot">c</div><div class="tocx">d</div>'
    assert ns.drop_docbook_toc(page) == '<div class="tocx">d</div>'
    # an unclosed table of contents runs to the end of the page
    assert ns.drop_docbook_toc('x<DIV CLASS="TOC"><DIV>y') == "x"


def test_docbook_page_markdown_levels_by_class_and_no_navigation() -> None:
    md = ns.docbook_page_markdown(FAQ_PAGE)
    assert "Prev" not in md and "Getting W Started" not in md
    assert "General Information</TITLE" not in md and md.startswith("# 1. General Information")
    # <h3 class=sect2> and <h2 class=sect2> are the same level; <h4 class=sect3> below them
    assert "## 1.1. Who should give Wproxy a try?" in md
    assert "## 1.3. How can I become a sponsor of the project?" in md
    assert "### 1.2.1. Would you like to participate?" in md
    assert "## a comment in an example" in md.split("```")[1]  # inside the fence
    index = ns.docbook_page_markdown(INDEX_PAGE)
    assert "Table of Contents" not in index and "Who should give" not in index
    assert ns.docbook_heading_anchors(FAQ_PAGE)["SPONSOR"] == (
        "1.3. How can I become a sponsor of the project?"
    )


def test_split_docbook_faq_page_questions_answers_and_text() -> None:
    text, qa = ns.split_docbook_faq_page(ns.docbook_page_markdown(FAQ_PAGE))
    assert [(n, q) for n, q, _ in qa] == [
        ("1.1", "Who should give Wproxy a try?"),
        ("1.2", "I would like to help you, what can I do?"),
        ("1.3", "How can I become a sponsor of the project?"),
    ]  # 1.4 has no text under it: no question, its heading still deleted
    by_num = {n: a for n, _, a in qa}
    assert by_num["1.1"] == "Anyone who is interested in privacy."
    # a sub-section stays inside its question's answer, as a bold line
    assert by_num["1.2"] == "**1.2.1. Would you like to participate?**\n\nWe always need help."
    # code comments in a fence are neither headings nor the end of the answer
    assert "## a comment in an example" in by_num["1.3"]
    assert by_num["1.3"].rstrip().endswith("```")
    assert " ".join(text.split()).startswith("# 1. General Information Anyone who is interested")
    for _, q, a in qa:
        assert q.lower() not in " ".join(text.split()).lower()
        assert a in text
    assert "a title with nothing under it" not in text.lower()


def test_split_docbook_faq_page_a_chapter_that_asks_nothing_stays() -> None:
    md = ns.docbook_page_markdown(CONTACT_PAGE)
    text, qa = ns.split_docbook_faq_page(md)
    assert qa == [] and text == md
    assert "## 6.1. Get Support" in text and "Three lists exist." in text


def test_split_docbook_faq_page_of_a_qandaset() -> None:
    md = ns.docbook_page_markdown(QANDA_PAGE)
    assert "Q:" not in md and "A:" not in md
    assert md.count("Does W run on Plan 9?") == 1  # the set's own contents list is gone
    text, qa = ns.split_docbook_faq_page(md)
    assert qa == [
        ("", "Does W run on Plan 9?", "Yes, since version 2."),
        ("", "How do I build W without X11?", "Pass --without-x.\n\nThen run make."),
    ]
    # the set's section is a sect1 (level 1): its questions one level under it
    assert (
        text == "# 2. Questions\n\nYes, since version 2.\n\nPass --without-x.\n\nThen run make.\n"
    )
    assert ns.docbook_heading_anchors(QANDA_PAGE)["q2"] == "How do I build W without X11?"


def test_scrub_cross_references_deletes_only_links_quoting_their_question() -> None:
    targets = {
        "faq/configuration.html#LANCONFIG": "How can I set up Wproxy to act as a proxy for my LAN?",
        "faq/general.html#WHO-USES": "Who should give Wproxy a try?",
    }
    out = ns.scrub_cross_references(FAQ_PAGE, "faq/general.html", targets)
    md = ns.docbook_page_markdown(out)
    assert "act as a proxy" not in md  # the quoting link and its text are gone
    assert "For a LAN, read first; for trouble, see below." in " ".join(md.split())
    # a same-page link (#ANCHOR), reworded: still a quote of the question
    config = ns.scrub_cross_references(CONFIG_PAGE, "faq/configuration.html", targets)
    assert "As in , first listen." in " ".join(config.split())
    # from another folder (../faq/...), and a link to a heading that is no question
    manual = (
        '<p>Read <a href="../faq/configuration.html#lanconfig">set up Wproxy as a proxy for '
        'your LAN</a> or <a href="../faq/general.html#GENERAL">Who should give it a try</a>.'
        '<a href="https://example.org/faq/general.html#WHO-USES">Who should give Wproxy a try'
        "</a></p>"
    )
    kept = ns.scrub_cross_references(manual, "user-manual/config.html", targets)
    assert "set up Wproxy" not in kept
    assert "Who should give it a try" in kept  # its target asks no question
    assert "example.org" in kept  # another site's page, not this tree's question
    # an unclosed link is left alone; nothing else on the page changes
    assert ns.scrub_cross_references("<a href='#X'>x", "faq/a.html", targets) == "<a href='#X'>x"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_faq: bool = True) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.PRIVOXY_PACKAGE, "3.0.34-1")
    doc = root / ns.PRIVOXY_DOC
    (doc / "faq").mkdir(parents=True)
    (doc / "user-manual").mkdir()
    (doc / "man-page").mkdir()
    if with_faq:
        (doc / "faq/index.html").write_text(INDEX_PAGE, encoding="latin-1")
    return doc


def test_privoxy_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / "faq/general.html").write_text(FAQ_PAGE, encoding="latin-1")
    (doc / "faq/configuration.html").write_text(CONFIG_PAGE, encoding="latin-1")
    (doc / "faq/contact.html").write_text(CONTACT_PAGE, encoding="latin-1")
    (doc / "user-manual/config.html").write_text(
        '<HTML><BODY><DIV CLASS="SECT1"><H1 CLASS="SECT1">7. The Main Configuration File</H1>'
        '<P>See <A HREF="../faq/configuration.html#tor">Using Wproxy together with Tor</A>. '
        "Who should give Wproxy a try? Everybody.</P></DIV></BODY></HTML>",
        encoding="latin-1",
    )
    (doc / "man-page/privoxy-man-page.html").write_text(
        '<HTML><BODY><H1>WPROXY</H1>Section: (8)<BR>Updated: 2012<BR><A HREF="#index">Index</A>'
        '<H2>NAME</H2>wproxy - a proxy<HR><A NAME="index">&nbsp;</A><H2>Index</H2><DL><DT>'
        '<A HREF="#lbAB">NAME</A></DL><HR>This document was created by man2html.</BODY></HTML>',
        encoding="latin-1",
    )
    with gzip.open(doc / "README.gz", "wt", encoding="latin-1") as fh:
        fh.write("Wproxy README\n\nHow do I use Wproxy together with Tor? See the FAQ.\n")
    (doc / "developer-manual").mkdir()
    (doc / "developer-manual/coding.html").write_text("<p>coding style</p>")
    nset = ns.privoxy_faq_set()
    assert [q.qid for q in nset.questions] == [
        "privoxy-faq:3.1",
        "privoxy-faq:3.2",
        "privoxy-faq:1.1",
        "privoxy-faq:1.2",
        "privoxy-faq:1.3",
    ]
    assert {q.source for q in nset.questions} == {"faq/configuration.md", "faq/general.md"}
    assert set(nset.files) == {
        "faq/configuration.md",
        "faq/contact.md",
        "faq/general.md",
        "faq/index.md",
        "user-manual/config.md",
        "man-page/privoxy-man-page.md",
        "README",
    }
    corpus = _corpus(nset.files)
    for q in nset.questions:
        assert q.text.lower() not in corpus
        assert any(q.answers[0][0] in t for t in nset.files.values())
    # the manual's link quoting a question (from another folder) is deleted, and its
    # verbatim copy of a question scrubbed, as the README's
    assert "with tor" not in corpus and "see . everybody." in corpus
    assert "who should give wproxy a try" not in corpus and "see the faq." in corpus
    # the man page without man2html's index and trailer; the FAQ index without its contents
    man = nset.files["man-page/privoxy-man-page.md"]
    assert "man2html" not in man and "Index" not in man and "wproxy - a proxy" in man
    assert "table of contents" not in corpus and "coding style" not in corpus
    assert "## 6.1. Get Support" in nset.files["faq/contact.md"]
    assert_files_as_written(nset)
    assert "3.0.34-1" in nset.note and "4 pages" in nset.note and "1 pages" in nset.note
    assert_held_out("privoxy-faq")


def test_privoxy_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    (doc / "faq/general.html").write_text(FAQ_PAGE, encoding="latin-1")
    (doc / "faq/configuration.html").write_text(CONFIG_PAGE, encoding="latin-1")
    first = ns.privoxy_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    # a rebuild, and a question more, never move a question to the other half
    (doc / "faq/contact.html").write_text(
        CONTACT_PAGE.replace("6.2. Mailing Lists", "6.2. Where are the mailing lists?"),
        encoding="latin-1",
    )
    again = ns.privoxy_faq_set().questions
    assert len(again) == len(first) + 2  # the chapter asks now: both its sections
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_privoxy_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch, with_faq=False)
    with pytest.raises(FileNotFoundError, match=r"no faq/index\.html under"):
        ns.privoxy_faq_set()


_LINE = st.one_of(
    st.text(alphabet="ab #?*", max_size=12),
    st.just(""),
    st.just("```"),
    st.builds(lambda t: f"# 1. {t}", st.text("abc ", max_size=6)),
    st.builds(
        lambda n, t, q: f"## 1.{n}. {t}{q}",
        st.integers(0, 9),
        st.builds(
            str.__add__, st.text("abcd", min_size=1, max_size=4), st.text("abcd ", max_size=8)
        ),
        st.sampled_from(["?", ".", ""]),
    ),
    st.builds(lambda t: f"### 1.1.1. {t}", st.text("ab", max_size=4)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=40))
def test_split_docbook_faq_page_never_leaves_a_question_heading(lines: list[str]) -> None:
    md = "\n".join(lines)
    text, qa = ns.split_docbook_faq_page(md)
    if not qa:
        return
    out = [" ".join(line.split()) for line in text.split("\n")]
    given_lines = [" ".join(line.split()) for line in lines]
    asked = [f"## {n}. {q}" if n else f"## {q}" for n, q, _ in qa]
    for n, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"(\d+(\.\d+)*)?", n)
        heading = f"## {n}. {q}" if n else f"## {q}"
        assert out.count(heading) + asked.count(heading) <= given_lines.count(heading), heading
        assert a in text
