"""The ``putty-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
PuTTY FAQ (Halibut HTML) and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ page shaped as Debian's ``putty-doc`` ships it
(``/usr/share/doc/putty-doc/AppendixA.html``: the navigation line, the page's contents list
of in-page links, nested, quoting every question; the ``<h1>`` title over a note; ``<h2>``
sections, one with paragraphs of its own; numbered ``<h3>`` entries with two anchors, one
holding ``<code>``, one a stated problem with curly quotes written as entities, one with no
text under it, one ``<h3>`` with no number; answers with lists and a ``<pre>`` example; the
footer after ``<hr>``) beside the other pages of the manual (a chapter quoting a question, a
chapter over the page limit to be cut at its sections, the contents page, the index and the
licence to be left out), in a package tree laid out as ``putty-doc`` unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents list, a chapter quoting one); each answer is exactly the text under its heading up
to the next question or section heading; ids are the FAQ's numbers, so an added entry keeps
the halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_WHAT = "What is PuTTY?"
Q_KEYS = "Does PuTTY support reading OpenSSH or ssh.com SSH-2 private key files?"
Q_MEMORY = (
    "After trying to establish an SSH-2 connection, PuTTY says \u2018Out of memory\u2019 and dies."
)
Q_SAY = "How do I pronounce \u2018PuTTY\u2019?"
ASKED = (Q_WHAT, Q_KEYS, Q_MEMORY, Q_SAY)
ANSWERS = {
    "A.1.1": "PuTTY is a client program for the SSH, Telnet, Rlogin, and SUPDUP network protocols.",
    "A.2.2": "PuTTY doesn't support this natively, but as of 0.53 PuTTYgen can convert both "
    "OpenSSH and ssh.com private key files into PuTTY's format.",
    "A.7.3": "If this happens just while the connection is starting up, this often "
    "indicates that for some reason the client and server have failed to establish a "
    "session encryption key.\n\n-  Check the Cipher panel.\n\n-  Try another key.\n\n"
    "```\nplink -v host\n\n```\n\n### Not a numbered heading\n\n Kept as text.",
    "A.10.4": "Exactly like the English word \u2018putty\u2019, which we pronounce "
    "/\u02c8p\u028cti/.",
}

NAV = (
    '<p><a href="Chapter10.html">Previous</a> | <a href="index.html">Contents</a> | '
    '<a href="IndexPage.html">Index</a> | <a href="AppendixB.html">Next</a></p>\n'
)
FOOTER = (
    "\n<hr><p>If you want to provide feedback on this manual or on the PuTTY tools themselves, "
    'see the <a href="https://www.chiark.greenend.org.uk/feedback.html">Feedback page</a>.</p>'
    "<address>\n[Debian PuTTY release 0.78-2+deb12u2]</address></body>\n</html>\n"
)


def _h3(anchor: str, number: str, text: str) -> str:
    return f'<h3><a name="faq-{anchor}"></a><a name="Q{number}"></a>{number} {text}</h3>\n'


def _h2(anchor: str, number: str, text: str) -> str:
    return f'<h2><a name="faq-{anchor}"></a><a name="S{number}"></a>{number} {text}</h2>\n'


def _page(title: str, body: str, contents: str = "") -> str:
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN">\n<html>\n<head>\n'
        '<meta http-equiv="content-type" content="text/html; charset=US-ASCII">\n'
        f"<title>{title}</title>\n</head>\n<body>\n{NAV}\n{contents}\n{body}{FOOTER}"
    )


FAQ = _page(
    "PuTTY FAQ",
    '<h1><a name="faq"></a><a name="AA"></a>Appendix A: PuTTY FAQ</h1>\n'
    "<p>\nThis FAQ is published on the PuTTY web site.\n</p>\n"
    + _h2("intro", "A.1", "Introduction")
    + _h3("what", "A.1.1", "What is PuTTY?")
    + "<p>\nPuTTY is a client program for the SSH, Telnet, Rlogin, and SUPDUP network "
    "protocols.\n</p>\n"
    + _h2("support", "A.2", "Features supported in PuTTY")
    + "<p>\nIn general, look for it on the PuTTY web site.\n</p>\n"
    + _h3("x", "A.2.1", "Is this entry answered at all?")
    + _h3(
        "ssh2-keyfmt",
        "A.2.2",
        "Does PuTTY support reading OpenSSH or <code>ssh.com</code> SSH-2 private key files?",
    )
    + "<p>\nPuTTY doesn't support this natively, but as of 0.53 PuTTYgen can convert both "
    "OpenSSH and <code>ssh.com</code> private key files into PuTTY's format.\n</p>\n"
    + _h2("trouble", "A.7", "Troubleshooting")
    + _h3(
        "outofmem",
        "A.7.3",
        "After trying to establish an SSH-2 connection, PuTTY says "
        "&#8216;Out of memory&#8217; and dies.",
    )
    + "<p>\nIf this happens just while the connection is starting up, this often indicates "
    "that for some reason the client and server have failed to establish a session "
    "encryption key.\n</p>\n<ul><li>\nCheck the Cipher panel.\n</li>\n<li>\nTry another "
    "key.\n</li>\n</ul>\n<pre><code>plink -v host\n</code></pre>\n"
    + "<h3>Not a numbered heading</h3>\n<p>\nKept as text.\n</p>\n"
    + _h2("misc", "A.10", "Miscellaneous")
    + _h3("pronounce", "A.10.4", "How do I pronounce &#8216;PuTTY&#8217;?")
    + "<p>\nExactly like the English word &#8216;putty&#8217;, which we pronounce "
    "/&#712;p&#652;ti/.\n</p>\n",
    contents='<ul>\n<li><a href="#faq">Appendix A: PuTTY FAQ</a>\n<ul>\n'
    '<li><a href="#faq-intro">A.1 Introduction</a>\n<ul>\n'
    '<li><a href="#faq-what">A.1.1 What is PuTTY?</a></li>\n</ul></li>\n'
    '<li><a href="#faq-support">A.2 Features supported in PuTTY</a>\n<ul>\n'
    '<li><a href="#faq-x">A.2.1 Is this entry answered at all?</a></li>\n'
    '<li><a href="#faq-ssh2-keyfmt">A.2.2 Does PuTTY support reading OpenSSH or '
    "<code>ssh.com</code> SSH-2 private key files?</a></li>\n</ul></li>\n"
    '<li><a href="#faq-trouble">A.7 Troubleshooting</a>\n<ul>\n<li><a href="#faq-outofmem">'
    "A.7.3 After trying to establish an SSH-2 connection, PuTTY says &#8216;Out of "
    "memory&#8217; and dies.</a></li>\n</ul></li>\n"
    '<li><a href="#faq-misc">A.10 Miscellaneous</a>\n<ul>\n<li><a href="#faq-pronounce">'
    "A.10.4 How do I pronounce &#8216;PuTTY&#8217;?</a></li>\n</ul></li>\n</ul></li>\n</ul>",
)


def test_split_putty_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_putty_faq(FAQ)
    # labels off, tags out, entities read; the FAQ's numbers; answers as converted
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the navigation, the contents list, the footer and the unanswered entry leave the
    # page; the title, its note, the section headings and a section's own text stay, in no
    # answer; an <h3> with no number is text of the answer above it
    assert "Previous" not in page and "feedback" not in page and "Debian PuTTY" not in page
    assert "answered at all" not in page and "A.2.1" not in page
    assert page.startswith("# Appendix A: PuTTY FAQ\n\n This FAQ is published")
    assert "## A.2 Features supported in PuTTY\n\n In general, look for it" in page
    assert "## A.10 Miscellaneous" in page
    assert all("In general" not in a and not re.search(r"(?m)^## ", a) for *_, a in qa)
    assert "### Not a numbered heading\n\n Kept as text." in page


def test_split_putty_faq_edges() -> None:
    # no numbered heading: the page converted, nothing asked; a repeated number gets -2;
    # an <h1> ends the answer above it
    page, none = ns.split_putty_faq("<html><body><h1>Notes</h1><p>Text.</p></body></html>")
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_putty_faq(
        "<body>"
        + _h3("a", "B.1", "One?")
        + "<p>First.</p>"
        + _h3("b", "B.1", "Two?")
        + "<p>Second.</p><h1>Appendix C</h1><p>After.</p></body>"
    )
    assert qa == [("B.1", "One?", "First."), ("B.1-2", "Two?", "Second.")]
    assert page == "First.\n\nSecond.\n\n# Appendix C\n\nAfter.\n"
    # a page without a navigation line or footer is read whole by halibut_page_body; a
    # list holding a link to another page is kept
    kept = '<ul><li><a href="Chapter4.html">Configuring</a></li></ul><p>Body.</p>'
    assert ns.halibut_page_body(kept) == kept


_WORD = st.sampled_from(["putty", "ssh", "key", "pageant", "plink", "session", "telnet"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=10),  # the question's words
                st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_split_putty_faq_property(sections: list[list[tuple[list[str], list[str]]]]) -> None:
    """Random sections of random entries, some unanswered, listed in a contents list first:
    one question per answered entry, in order, its number its id, its answer its text, in
    the page; no question's word left in it."""
    items, body, expected = "", "", []
    for s, entries in enumerate(sections, start=1):
        body += _h2(f"s{s}", f"A.{s}", f"Section{s}")
        for p, (qwords, awords) in enumerate(entries, start=1):
            q = " ".join([f"entry{s}x{p}", *qwords]) + "?"
            items += f'<li><a href="#faq-e{s}{p}">A.{s}.{p} {q}</a></li>'
            body += _h3(f"e{s}{p}", f"A.{s}.{p}", q)
            if awords:
                answer = " ".join(["Answer", *awords])
                body += f"<p>\n{answer}\n</p>\n"
                expected.append((f"A.{s}.{p}", q, answer))
    page, qa = ns.split_putty_faq(_page("PuTTY FAQ", body, f"<ul>{items}</ul>"))
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's putty-doc ---------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.PUTTY_PACKAGE, "0.78-2+deb12u2")
    doc: Path = root / ns.PUTTY_DOC
    doc.mkdir(parents=True)
    (doc / ns.PUTTY_FAQ).write_text(faq, encoding="utf-8")

    def chapter(name: str, title: str, body: str) -> None:
        contents = '<ul><li><a href="#c">1.1 Section</a></li></ul>'
        (doc / name).write_text(_page(title, f"<h1>{title}</h1>{body}", contents))

    chapter(
        "Chapter1.html",
        "Chapter 1: Introduction to PuTTY",
        f"<p>See the FAQ, &#8216;{Q_WHAT}&#8217; PuTTY is a free SSH client.</p>",
    )
    chapter("AppendixB.html", "Appendix B: Feedback", "<p>Send bug reports.</p>")
    chapter(
        "Chapter4.html",
        "Chapter 4: Configuring PuTTY",
        "<p>Configuration intro.</p>"
        + "".join(
            f"<h2>4.{n} The panel {n}</h2>" + "<p>Panel text that runs on.</p>" * 2000
            for n in (1, 2, 3)
        ),
    )
    for skipped in ns.PUTTY_LEFT_OUT:
        chapter(skipped, "Left out", "<p>left out</p>")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_putty_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.putty_faq_set()
    cut = {
        "Chapter4/00-chapter-4-configuring-putty.md",
        "Chapter4/01-4-1-the-panel-1.md",
        "Chapter4/02-4-2-the-panel-2.md",
        "Chapter4/03-4-3-the-panel-3.md",
    }
    nsc.assert_package_set(
        nset,
        "putty-faq",
        ids=list(ANSWERS),
        files={"AppendixA.md", "Chapter1.md", "AppendixB.md", *cut},
        source="AppendixA.md",
        version="0.78-2+deb12u2",
        too_long="Chapter4.html in 4 files",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text and "Previous" not in text and "Feedback page" not in text
    # a chapter quoting a question scrubbed, its other text kept; each cut file under the
    # limit, headed by its section
    assert "PuTTY is a free SSH client." in nset.files["Chapter1.md"]
    assert all(len(nset.files[rel]) <= ns.PUTTY_MAX_PAGE_CHARS for rel in cut)
    assert nset.files["Chapter4/02-4-2-the-panel-2.md"].startswith("## 4.2 The panel 2\n")
    assert "Configuration intro." in nset.files["Chapter4/00-chapter-4-configuring-putty.md"]


def test_putty_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "PuTTY is a client program for the SSH, Telnet, Rlogin, and SUPDUP network protocols.",
        "An SSH client.",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.putty_faq_set(), Q_WHAT, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.putty_faq_set(), {"AppendixA.html": FAQ}, ASKED, is_html=True)


def test_putty_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "<hr><p>If you want",
        _h3("sillyputty", "A.10.2", "Where can I buy silly putty?")
        + "<p>You're looking at the wrong web site for that.</p>\n<hr><p>If you want",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.putty_faq_set, lambda: (doc / ns.PUTTY_FAQ).write_text(more, encoding="utf-8")
    )


def test_putty_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.PUTTY_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.putty_faq_set, "AppendixA.html")
