"""The ``xerces-c-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Xerces-C++'s FAQ pages and the question-leak check (``bench/check_question_leaks.py``) on
small inline pages shaped as Debian's ``libxerces-c-doc`` ships them (``html/faq-*-3.html``,
the Apache XML project's generated HTML: a banner and a menu of images, all laid out in
tables; a "Questions" box repeating every question as in-page links; entries, each an anchor
``<A name="faq-N"><!--anchor--></A>`` before a title bar holding the question in ``<B>``,
wrapped over lines, with ``&quot;``; answers with paragraphs, a list, code in a ``<PRE>``
boxed in a table and ``<CODE><FONT>``; the copyright line after the last) beside the FAQ's
index page (every question again), a manual page quoting a question, a page over the limit
and the API reference, in a package tree laid out as the package unpacks (marker present,
nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question or "Questions" line is left in any file; each
answer is exactly the text after its question up to the next entry; the copyright line is
in no answer; ids are the page and the anchor, so an entry added keeps the halves; an answer
too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

VOID = '<IMG border="0" height="1" hspace="0" src="resources/void.gif" vspace="0" width="1">'
HEAD = (
    '<HTML><HEAD><META content="text/html; charset=utf8" http-equiv="Content-Type">'
    '<SCRIPT language="JavaScript" src="resources/script.js" type="text/javascript"></SCRIPT>'
    '<TITLE>{title}</TITLE></HEAD><BODY bgcolor="#ffffff">'
    '<TABLE border="0" cellpadding="0" cellspacing="0" width="620"><TR><TD rowspan="3" '
    'width="135"><IMG border="0" height="60" src="resources/logo.gif" width="135"></TD>'
    '<TD colspan="4"><IMG alt="" border="0" src="graphics/{name}-header.jpg"></TD></TR>'
    "</TABLE>"
    '<TABLE border="0" cellpadding="0" cellspacing="0" width="620"><TR><TD width="120">'
    '<A href="index.html" onMouseOut="rolloverOff(\'side-index\');"><IMG alt="Overview" '
    'border="0" name="side-index" src="graphics/index-label-3.jpg"></A><BR>\n'
    '  <IMG alt="Xerces-C++ 3.2.4" border="0" src="graphics/sect-24-label.jpg"><BR>\n'
    '</TD><TD align="left" valign="top" width="500"><TABLE border="0" cellpadding="3">'
    "<TR><TD>"
)
FOOT = (
    "</TD></TR></TABLE></TD></TR></TABLE><BR>"
    '<TABLE border="0" cellpadding="0" cellspacing="0" width="620"><TR><TD bgcolor="#0086b2">'
    '<IMG height="1" src="resources/dot.gif" width="1"></TD></TR><TR><TD align="center">'
    '<FONT color="#0086b2" size="-1"><I>\n'
    "              Copyright &copy; 1999-2017 The Apache Software Foundation.\n"
    "              All Rights Reserved.\n"
    "            </I></FONT></TD></TR></TABLE></BODY></HTML>\n"
)


def questions_box(lines: list[str]) -> str:
    """The page's "Questions" box: a title bar and one in-page link per question."""
    items = "".join(f'<LI><A href="#faq-{n}">{t}</A></LI>' for n, t in enumerate(lines, 1))
    return (
        '<TABLE border="0" cellpadding="0" cellspacing="0" width="494"><TR><TD '
        f'bgcolor="#0086b2" width="492">{VOID}<B>Questions</B></TD></TR></TABLE>'
        '<TABLE><TR><TD width="10">&nbsp;</TD><TD width="484"><FONT color="#000000">'
        f"<UL>{items}</UL></FONT></TD></TR></TABLE><BR><BR>"
    )


def entry(anchor: str, question_html: str, answer_html: str) -> str:
    """One entry as the generator writes it: the anchor, a title bar of nested tables with
    the question in ``<B>`` (empty: no ``<B>``), the answer in the next row."""
    bold = f"<B>{question_html}</B>" if question_html else ""
    return (
        f'<A name="{anchor}"><!--anchor--></A><TABLE border="0" cellpadding="0" '
        'cellspacing="0" width="494"><TR><TD bgcolor="ffffff" colspan="2" width="494">'
        f'<TABLE border="0" width="494"><TR><TD bgcolor="#039acc" width="1">{VOID}</TD>'
        '<TD bgcolor="#0086b2" width="492"><FONT color="#ffffff" size="+1">'
        f'{VOID}{bold}</FONT></TD><TD bgcolor="#017299" width="1">{VOID}</TD></TR></TABLE>'
        '</TD></TR><TR><TD width="10">&nbsp;</TD><TD width="484"><FONT color="#000000" '
        f'face="arial,helvetica,sanserif">\n{answer_html}\n    </FONT></TD></TR></TABLE><BR>'
    )


def page(name: str, title: str, box: list[str], entries: list[str]) -> str:
    return HEAD.format(title=title, name=name) + questions_box(box) + "".join(entries) + FOOT


Q_SCHEMA = "Does Xerces-C++ support Schema?"
Q_UTF8 = 'I keep getting an error: "invalid UTF-8 character". What\'s wrong?'
Q_CRASH = "Why does my application crash when instantiating the parser?"
Q_THREADS = "Is Xerces-C++ thread-safe?"
Q_SKELETON = (
    "Is there a function that creates an XML file from a DTD (obviously with the values "
    "missing, a skeleton)?"
)
Q_VERSION = "How do I determine the version of Xerces-C++ I am using?"
Q_PRODUCT = "Can I use Xerces-C++ in my product?"
CODE_BOX = (
    '<DIV align="left"><TABLE border="0" cellpadding="0" cellspacing="4" width="464"><TR>'
    f'<TD bgcolor="#0086b2" width="1">{VOID}</TD><TD bgcolor="#ffffff" width="462">'
    '<FONT size="-1"><PRE>\ntry {\n   XMLPlatformUtils::Initialize();\n}\n'
    "catch (const XMLException&amp; toCatch) {\n}</PRE></FONT></TD></TR></TABLE></DIV>"
)
FAQ_PARSE = page(
    "faq-parse-3",
    "Programming Xerces-C++",
    [
        "Does Xerces-C++ support XML Schema?",
        "contentsline invalid UTF-8",
        "contentsline crash",
        "contentsline threads",
        "contentsline untitled",
        "Can Xerces-C++ create an XML skeleton based on a DTD",
    ],
    [
        entry(
            "faq-1",
            f" {Q_SCHEMA}",
            "      <P>Yes, Xerces-C++ 3.2.4 contains an implementation of the W3C XML Schema\n"
            "        Language. See the XML Schema Support page for limitations.</P>\n",
        ),
        entry(
            "faq-2",
            "I keep getting an error: &quot;invalid UTF-8\n character&quot;. What's wrong?",
            '      <P>Most commonly, the XML <CODE><FONT face="courier, monospaced">encoding ='
            "</FONT></CODE> declaration is either incorrect or missing.</P>\n",
        ),
        entry(
            "faq-3",
            Q_CRASH,
            "      <P>You have to first initialize the XML subsystem: </P>\n\n"
            f"{CODE_BOX}\n\n      <P>This initializes the Xerces system.</P>\n",
        ),
        entry(
            "faq-4",
            Q_THREADS,
            "      <P>The answer is yes if you observe the following rules:</P>\n"
            "      <UL><LI>one parser per thread</LI><LI>one thread per document</LI></UL>\n",
        ),
        entry("faq-5", "", "      <P>An entry whose title bar holds no question.</P>\n"),
        entry("faq-6", Q_SKELETON, "      <P>No, there is no such functionality.</P>\n"),
    ],
)
FAQ_OTHER = page(
    "faq-other-3",
    "Other Xerces-C++ Questions",
    ["How do I determine the version?"],
    [
        entry(
            "faq-1",
            Q_VERSION,
            "      <P>The version string for Xerces-C++ is in the header file\n"
            '        <CODE><FONT face="courier, monospaced">XercesVersion.hpp</FONT></CODE>.</P>\n',
        ),
    ],
)
FAQ_DISTRIB = page(
    "faq-distrib-3",
    "Distributing Xerces-C++",
    [Q_PRODUCT],
    [
        entry(
            "faq-1",
            Q_PRODUCT,
            "      <P>Yes. Read the Apache License, Version 2.0.</P>\n",
        ),
    ],
)
A_PRODUCT = "Yes. Read the Apache License, Version 2.0."
A_SCHEMA = (
    "Yes, Xerces-C++ 3.2.4 contains an implementation of the W3C XML Schema Language. See the "
    "XML Schema Support page for limitations."
)
A_UTF8 = "Most commonly, the XML encoding = declaration is either incorrect or missing."
A_CRASH = (
    "You have to first initialize the XML subsystem:\n\n```\n\ntry {\n   "
    "XMLPlatformUtils::Initialize();\n}\ncatch (const XMLException& toCatch) {\n}\n```"
    "\n\nThis initializes the Xerces system."
)
A_THREADS = (
    "The answer is yes if you observe the following rules:\n\n- one parser per thread\n\n"
    "- one thread per document"
)
A_SKELETON = "No, there is no such functionality."
A_VERSION = "The version string for Xerces-C++ is in the header file XercesVersion.hpp."
PARSE_ASKED = (Q_SCHEMA, Q_UTF8, Q_CRASH, Q_THREADS, Q_SKELETON)
PARSE_ANSWERS = {
    "faq-1": A_SCHEMA,
    "faq-2": A_UTF8,
    "faq-3": A_CRASH,
    "faq-4": A_THREADS,
    "faq-6": A_SKELETON,
}
ASKED = (Q_PRODUCT, *PARSE_ASKED, Q_VERSION)
SET_ANSWERS = {"faq-distrib-3/faq-1": A_PRODUCT}
SET_ANSWERS.update({f"faq-parse-3/{k}": a for k, a in PARSE_ANSWERS.items()})
SET_ANSWERS["faq-other-3/faq-1"] = A_VERSION


def test_split_xerces_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_xerces_faq(FAQ_PARSE)
    # each entry's bold title asked, in order (wrapped lines joined, &quot; read, spaces
    # folded); the answer the text after it up to the next anchor, the layout tables read as
    # line breaks, the boxed code a block; the id the anchor
    nsc.assert_split_answers(text, qa, PARSE_ASKED, PARSE_ANSWERS)
    # the banner, menu and "Questions" box leave; the entry without a question stays whole;
    # the copyright line stays, in no answer; no "|" cells of the layout tables
    assert "contentsline" not in text and "Questions" not in text and "Overview" not in text
    assert "XML skeleton based on a DTD" not in text
    assert "An entry whose title bar holds no question." in text
    assert text.rstrip().endswith("All Rights Reserved.") and "|" not in text
    for _, _, a in qa:
        assert "Copyright" not in a and "title bar holds" not in a


def test_split_xerces_faq_edges() -> None:
    # no anchor: the whole page as markdown, nothing asked; text before the first anchor
    # leaves; an entry with no answer asks nothing and stays; a repeated anchor is told apart;
    # an unclosed <b> is text and does not swallow the next entry's question; the copyright
    # line ends the last answer, without one it runs to the page's end
    none = ns.split_xerces_faq("<p>No entries here.</p>")
    assert none == ("No entries here.\n", [])
    text, qa = ns.split_xerces_faq(
        '<p>Box.</p><a name="faq-1"></a><b>Q?</b><p>An answer.</p>'
        '<a name="faq-2"></a><b>Unanswered?</b>'
    )
    assert qa == [("faq-1", "Q?", "An answer.")]
    assert "Box." not in text and "Unanswered?" in text
    twice = '<a name="faq-1"></a><b>One?</b><p>1 a.</p><A NAME="faq-1"></A><B>Two?</B><p>2 b.</p>'
    assert ns.split_xerces_faq(twice)[1] == [("faq-1", "One?", "1 a."), ("faq-1-2", "Two?", "2 b.")]
    broken = '<a name="faq-1"></a><b>Broken <p>x</p><a name="faq-2"></a><b>Fine?</b><p>Yes.</p>'
    assert ns.split_xerces_faq(broken)[1] == [("faq-2", "Fine?", "Yes.")]
    # the question is a <b> holding no other <b> tag: a stray opening one before it is not
    # read as the start of the question
    stray = '<a name="faq-1"></a><b>Stray <b>Real?</b><p>Ans.</p>'
    assert ns.split_xerces_faq(stray)[1] == [("faq-1", "Real?", "Ans.")]
    tail = '<a name="faq-1"></a><b>Q?</b><p>A.</p><p>Copyright &copy; 2017 ASF.</p>'
    text, qa = ns.split_xerces_faq(tail)
    assert qa == [("faq-1", "Q?", "A.")] and text.rstrip().endswith("2017 ASF.")
    bare = '<a name="faq-1"></a><b>Q?</b><p>A.</p><p>B.</p>'
    assert ns.split_xerces_faq(bare)[1] == [("faq-1", "Q?", "A.\n\nB.")]
    # the layout tables read as line breaks: cells as paragraphs, no "|" rows
    assert ns.xerces_page_markdown("<table><tr><td>a</td><td>b</td></tr></table>") == "a\n\nb\n"


_WORD = st.sampled_from(["parser", "dom", "sax", "schema", "encoding", "thread", "memory"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # the title bar holds a question
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: unanswered)
            st.integers(min_value=1, max_value=4),  # the anchor's number (repeats happen)
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the "Questions" box before the first entry
)
def test_split_xerces_faq_property(
    entries: list[tuple[bool, list[str], int, list[str], int]], box: bool
) -> None:
    """Random entries, each question wrapped over one to three lines, some with no question
    in their title bar, some unanswered, with or without the "Questions" box: one question
    per entry with both, in order, the anchor the id (repeats ``-2``), the answer the text up
    to the next entry, in the page; no asked question and no box line left in it; the other
    entries kept; the copyright line in no answer."""
    lines = [f"boxline{n} {' '.join(e[1])}" for n, e in enumerate(entries)]
    built = []
    expected = []
    seen: dict[str, int] = {}
    for n, (titled, qwords, wrap, awords, number) in enumerate(entries):
        words = [f"entry{n}x", *qwords]
        cut = [" ".join(words[i::wrap]) for i in range(wrap) if words[i::wrap]]
        answer = " ".join(["Answer", *awords]) + "." if awords else ""
        anchor = f"faq-{number}"
        built.append(
            entry(anchor, "\n ".join(cut) if titled else "", f"<P>{answer}</P>" if answer else "")
        )
        if titled and answer:
            seen[anchor] = seen.get(anchor, 0) + 1
            key = anchor if seen[anchor] == 1 else f"{anchor}-{seen[anchor]}"
            expected.append((key, " ".join(cut), answer))
    html_page = HEAD.format(title="FAQ", name="faq-x") + (questions_box(lines) if box else "")
    text, qa = ns.split_xerces_faq(html_page + "".join(built) + FOOT)
    assert qa == expected
    for _, _, a in qa:
        assert a in text and "Copyright" not in a
    for n, (titled, _, _, awords, _) in enumerate(entries):
        assert (f"entry{n}x" in text) == (titled and not awords)
    if all(e[3] for e in entries):
        nsc.assert_random_split(text, qa, expected)
    assert "boxline" not in text and "Questions" not in text
    assert text.rstrip().endswith("All Rights Reserved.")


# -- the set, built from a package tree shaped like Debian's libxerces-c-doc ---------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parse: str = FAQ_PARSE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.XERCES_C_PACKAGE, "3.2.4+debian-1")
    doc: Path = root / ns.XERCES_C_DOC
    doc.mkdir(parents=True)
    (doc / "faq-distrib-3.html").write_text(FAQ_DISTRIB)
    (doc / "faq-parse-3.html").write_text(parse)
    (doc / "faq-other-3.html").write_text(FAQ_OTHER)
    (doc / ns.XERCES_C_INDEX).write_text(
        page("faqs-3", "FAQs", [], [f"<P>indexline {Q_THREADS} {Q_VERSION}</P>"])
    )
    (doc / "program-3.html").write_text(
        page("program-3", "Programming Guide", [], [])
        .replace("<B>Questions</B>", "")
        .replace("</BODY>", f"<P>Users ask: {Q_CRASH} Call Initialize first.</P></BODY>")
    )
    (doc / "releases_archive.html").write_text("<P>" + "Release notes. " * 12_000 + "</P>")
    (doc / "apiDocs-3").mkdir()
    (doc / "apiDocs-3" / "index.html").write_text("<P>apiline the API reference</P>")
    (doc / "resources").mkdir()
    (doc / "resources" / "script.js").write_text("function rolloverOn() {}\n")
    write_gz(doc.parent / "NEWS.Debian.gz", "leftout\n")
    write_gz(doc.parent / "changelog.Debian.gz", "leftout\n")
    (doc.parent / "NOTICE").write_text("leftout\n")
    (doc.parent / "copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`FAQ_PARSE`, :data:`FAQ_OTHER`), the html folder."""
    return _package(tmp_path, monkeypatch)


def test_xerces_c_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.xerces_c_faq_set()
    assert nset.name == "xerces-c-faq"
    assert [q.qid for q in nset.questions] == [f"xerces-c-faq:{k}" for k in SET_ANSWERS]
    assert set(nset.files) == {
        "faq-distrib-3.md",
        "faq-parse-3.md",
        "faq-other-3.md",
        "program-3.md",
    }
    nsc.assert_questions_out_answers_in(nset, SET_ANSWERS)
    sources = ["faq-distrib-3.md"] + ["faq-parse-3.md"] * 5 + ["faq-other-3.md"]
    assert [q.source for q in nset.questions] == sources
    nsc.assert_files_as_written(nset)
    assert "3.2.4+debian-1" in nset.note
    assert "over 150000 chars: releases_archive.html" in nset.note
    nsc.assert_held_out("xerces-c-faq")
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "indexline" not in corpus and "apiline" not in corpus
    # the page quoting a question scrubbed, its other text kept
    assert "Call Initialize first." in nset.files["program-3.md"]
    assert nset.left_out == ()


def test_xerces_c_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ_PARSE.replace(A_SKELETON, "No.")
    assert short != FAQ_PARSE
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.xerces_c_faq_set(), Q_SKELETON, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ pages as a browser shows them (tags out, entities read, lines folded): the
    # check finds every question there, so it could fail
    shipped = {
        "faq-distrib-3.txt": ns.xboard_heading_text(FAQ_DISTRIB),
        "faq-parse-3.txt": ns.xboard_heading_text(FAQ_PARSE),
        "faq-other-3.txt": ns.xboard_heading_text(FAQ_OTHER),
    }
    nsc.assert_leak_checked(ns.xerces_c_faq_set(), shipped, ASKED)


def test_xerces_c_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ_PARSE.replace(
        FOOT,
        entry(
            "faq-7",
            "How do I transcode to/from something besides the local code page?",
            "<P>Use the transcoding service and create a transcoder for the encoding.</P>",
        )
        + FOOT,
    )
    assert more != FAQ_PARSE
    nsc.assert_halves_survive_an_added_question(
        ns.xerces_c_faq_set, lambda: (doc_dir / "faq-parse-3.html").write_text(more)
    )


def test_xerces_c_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.XERCES_C_FAQ_PAGES[0]).unlink()
    nsc.assert_refuses_without_faq(ns.xerces_c_faq_set, ns.XERCES_C_FAQ_PAGES[0])
