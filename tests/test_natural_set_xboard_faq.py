"""The ``xboard-faq`` natural-question set (``bench/natural_sets.py``), its reading of
XBoard and WinBoard's HTML FAQ and the question-leak check (``bench/check_question_leaks.py``)
on a small inline FAQ shaped as Debian's ``xboard`` ships it (``FAQ.html``: a title and
introduction, a rule, an "Outline" and a "Detailed contents" list repeating every group and
question, then groups, each an ``<h2>`` with an anchor over ``<h3>`` entries labelled
``[B.7]``, wrapped over lines, holding ``&quot;`` and an apostrophe; answers with a list, a
command in ``<pre>`` and a rule; a rule and "** End of XBoard/WinBoard FAQ **" after the
last) beside the engine protocol page (quoting a question), the READMEs and a man page over
the limit, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question or contents line is left in any file; each
answer is exactly the text after its question up to the next heading; the group titles stay
in no answer; ids are the FAQ's labels, so an entry added keeps the halves; an answer too
short to judge leaves the set but not the corpus's scrubbing.
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

Q_WHAT = "What are XBoard and WinBoard?"
Q_BUILD = "How do I build XBoard? Do I need gcc?"
Q_STRONG = (
    "The chess engines are too strong and always beat me. "
    "How can I adjust the difficulty level to make them weaker?"
)
Q_XAW = "I can't build XBoard because the X11/Xaw/... include files are not found."
Q_FAIRY = (
    'XBoard says, "Failed to start first chess program fairymax on localhost: '
    'fairymax: No such file or directory."'
)
Q_CRAFTY = "What is Crafty?"
FAQ = """<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
<head>
<title>XBoard and WinBoard: Frequently Asked Questions</title>
</head>
<body>
<h1>XBoard and WinBoard: Frequently Asked Questions</h1>

<p>This document answers some frequently asked questions about the
graphical chess interfaces XBoard and WinBoard.</p>

<hr />
<h2>Outline</h2>

<ul>
<li><a href="#tag-A0">[A] Introduction and hot topics</a></li>
<li><a href="#tag-B0">[B] XBoard and WinBoard</a></li>
</ul>

<hr />
<h2>Detailed contents</h2>

<ul>
  <li><a name="tag-A0" href="#tag[A">[A] Introduction and hot topics</a>
    <ul>
      <li><a href="#tag-A.1">[A.1] What are XBoard and WinBoard?</a></li>
  </ul></li>
  <li><a name="tag-B0" href="#tag[B">[B] XBoard and WinBoard</a>
    <ul>
      <li><a href="#tag-B.7">[B.7] How do I build XBoard?  Do I need gcc?</a></li>
      <li><a href="#tag-B.24">[B.24] Contentsline, the engines are too strong.</a></li>
      <li><a href="#tag-C.1">[C.1] I can't build XBoard (contentsline)</a></li>
  </ul></li>
</ul>

<hr />
<h2><a name="tag-A">[A] Introduction and hot topics</a></h2>

<hr />
<h3><a name="tag-A.1">[A.1] What are XBoard and WinBoard?</a></h3>

<p>XBoard and WinBoard are graphical user interfaces for chess.
  XBoard runs with the X Window System on Unix systems; see topic
  <a href="#tag-B.1">[B.1]</a>.</p>

<hr />
<H2><a name="tag-B">[B] XBoard and WinBoard</a></H2>
<hr />
<h3><a name="tag-B.7">[B.7] How do I build XBoard?  Do I need
    gcc?</a></h3>

<p>Unpack the distribution and run these commands:</p>
<pre>
    ./configure
    make
</pre>
<p>You do not need gcc; any ANSI C compiler will do.</p>

<hr />
<h3><a name="tag-B.24">[B.24] The chess engines are too strong and always beat me.
How can I adjust the difficulty level to make them weaker?</a></h3>

<p>Most engines accept a time control; give them less time:</p>
<ul>
<li>use the -tc option</li>
<li>or the Options menu</li>
</ul>

<hr />
<h2><a name="tag-C">[C] XBoard and WinBoard, bugs and problems</a></h2>

<hr />
<h3><a name="tag-C.1">[C.1] I can&#39;t build XBoard because the X11/Xaw/... include
    files are not found.</a></h3>

<p>Install the X development packages (libxaw7-dev on Debian) and run configure again.</p>

<hr />
<h3><a name="tag-C.22">[C.22] XBoard says, &quot;Failed to start first chess program
fairymax on localhost: fairymax: No such file or directory.&quot;</a></h3>

<p>Fairy-Max is the default engine. Install it, or name another engine with -fcp.</p>

<hr />
<h3>[C.23]</h3>

<p>An entry whose question was never written, kept as text.</p>

<hr />
<h3><a name="tag-D.3">[D.3] What is Crafty?</a></h3>

<p>Crafty is a strong free chess program by Robert Hyatt.</p>
<hr />
** End of XBoard/WinBoard FAQ **
</body></html>
"""
A_WHAT = (
    "XBoard and WinBoard are graphical user interfaces for chess. XBoard runs with the X "
    "Window System on Unix systems; see topic [B.1]."
)
A_BUILD = (
    "Unpack the distribution and run these commands:\n\n```\n\n    ./configure\n    make\n\n```"
    "\n\nYou do not need gcc; any ANSI C compiler will do."
)
A_STRONG = (
    "Most engines accept a time control; give them less time:\n\n"
    "- use the -tc option\n\n- or the Options menu"
)
A_XAW = "Install the X development packages (libxaw7-dev on Debian) and run configure again."
A_FAIRY = "Fairy-Max is the default engine. Install it, or name another engine with -fcp."
A_CRAFTY = "Crafty is a strong free chess program by Robert Hyatt."
ASKED = (Q_WHAT, Q_BUILD, Q_STRONG, Q_XAW, Q_FAIRY, Q_CRAFTY)
ANSWERS = {
    "A.1": A_WHAT,
    "B.7": A_BUILD,
    "B.24": A_STRONG,
    "C.1": A_XAW,
    "C.22": A_FAIRY,
    "D.3": A_CRAFTY,
}


def test_split_xboard_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_xboard_faq(FAQ)
    # each labelled <h3> asked, in order: its text without the label (wrapped lines joined,
    # spaces folded, &quot; and &#39; read); the answer the text after it up to the next
    # heading (a group's <h2> ends the entry before it); the id the label
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # both contents lists leave the page; the group titles stay, in no answer; the entry
    # with no question stays whole; the title, introduction and closing line stay, the
    # closing line in no answer
    assert "contentsline" not in page and "Outline" not in page and "Detailed contents" not in page
    for title in ("[A] Introduction", "[B] XBoard and WinBoard", "[C] XBoard and WinBoard, bugs"):
        assert page.count(title) == 1
    assert "[C.23]" in page and "never written, kept as text." in page
    assert "[B.7]" not in page and "[C.1]" not in page
    assert "frequently asked questions about the graphical" in page
    assert page.rstrip().endswith("** End of XBoard/WinBoard FAQ **")
    for _, _, a in qa:
        assert "[B] XBoard" not in a and "End of XBoard" not in a and "never written" not in a


def test_split_xboard_faq_edges() -> None:
    # no heading: the page as markdown, nothing asked; no group title: nothing taken as
    # contents; a heading with no answer asks nothing; an <h3> without a label asks with id
    # Q; a repeated label is told apart; an unclosed heading is text and does not swallow
    # the next entry; the text after the last rule is in no answer
    assert ns.split_xboard_faq("<p>No entries.</p>")[1] == []
    page, qa = ns.split_xboard_faq("<h2>Intro</h2><p>Kept.</p><h3>[A.1] Q?</h3><p>An answer.</p>")
    assert qa == [("A.1", "Q?", "An answer.")] and "Kept." in page and "Intro" in page
    ruled = "<h3>[A.1] Q?</h3>\n<hr />\n<h3>[A.2] R?</h3><p>S.</p><hr />"
    assert ns.split_xboard_faq(ruled)[1] == [("A.2", "R?", "S.")]
    assert ns.split_xboard_faq("<h3>Why?</h3><p>Because.</p>")[1] == [("Q", "Why?", "Because.")]
    twice = "<h3>[A.1] One?</h3><p>1.</p><h3>[A.1] Two?</h3><p>2.</p>"
    assert ns.split_xboard_faq(twice)[1] == [("A.1", "One?", "1."), ("A.1-2", "Two?", "2.")]
    open_head = "<h3>[A.1] Broken<p>x</p><h3>[A.2] Fine?</h3><p>Yes.</p>"
    assert ns.split_xboard_faq(open_head)[1] == [("A.2", "Fine?", "Yes.")]
    assert ns.xboard_heading_text('<a name="x">[A.1]  It&#39;s\n  "a"?</a>') == '[A.1] It\'s "a"?'


_WORD = st.sampled_from(["engine", "board", "ics", "gnuchess", "build", "move", "clock"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a group title before the entry
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: unanswered)
            st.sampled_from(["A", "B", "C"]),
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the contents lists before the first group
)
def test_split_xboard_faq_property(
    entries: list[tuple[bool, list[str], int, list[str], str]], contents: bool
) -> None:
    """Random entries, some after a group title, each question wrapped over one to three
    lines, some unanswered, with or without the contents lists: one question per answered
    entry, in order, its label the id (repeats ``-2``), the answer the text up to the next
    heading, in the page; no asked question and no contents line left in it; group titles
    and unanswered entries kept, in no answer; the closing line in no answer."""
    text = "<h1>FAQ</h1>\n<p>Intro.</p>\n<hr />\n"
    if contents:
        text += "<h2>Outline</h2>\n<ul>\n"
        for n, (_, words, *_rest) in enumerate(entries):
            text += f'<li><a href="#tag-{n}">contentsline{n} {" ".join(words)}</a></li>\n'
        text += "</ul>\n<hr />\n"
    text += '<h2><a name="tag-0">[0] First group</a></h2>\n'
    expected = []
    seen: dict[str, int] = {}
    for n, (group, qwords, wrap, awords, letter) in enumerate(entries):
        if group:
            text += f'<hr />\n<h2><a name="tag-G{n}">[G] group{n}title</a></h2>\n'
        label = f"{letter}.{n % 3}"
        words = [f"entry{n}x", *qwords]
        cut = [words[i::wrap] for i in range(wrap)]  # any split over lines
        lines = [" ".join(w) for w in cut if w]
        question_html = "\n    ".join(lines)
        text += f'<hr />\n<h3><a name="tag-{label}">[{label}] {question_html}</a></h3>\n'
        if awords:
            answer = " ".join(["Answer", *awords]) + "."
            text += f"\n<p>{answer}</p>\n\n"
            seen[label] = seen.get(label, 0) + 1
            key = label if seen[label] == 1 else f"{label}-{seen[label]}"
            expected.append((key, " ".join(lines), answer))
        else:
            text += "\n"
    text += "<hr />\n** End of the FAQ **\n"
    page, qa = ns.split_xboard_faq(text)
    unanswered = [n for n, e in enumerate(entries) if not e[3]]
    for n in unanswered:
        assert f"entry{n}x" in page
    if not unanswered:
        nsc.assert_random_split(page, qa, expected)
    assert qa == expected
    for _, _, a in qa:
        assert a in page and "End of the FAQ" not in a and "title" not in a
    answered = {n for n, e in enumerate(entries) if e[3]}
    for n in answered:
        assert f"entry{n}x" not in page
    for n, e in enumerate(entries):
        if e[0]:
            assert page.count(f"group{n}title") == 1
    assert "contentsline" not in page and "Outline" not in page
    assert "First group" in page and page.rstrip().endswith("** End of the FAQ **")


# -- the set, built from a package tree shaped like Debian's xboard -------------------------


def _man(name: str, body: str) -> str:
    return f'.TH {name.upper()} 6 "2016"\n.SH NAME\n{name} \\- a program\n.SH DESCRIPTION\n{body}'


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.XBOARD_PACKAGE, "4.9.1-2+b1")
    doc: Path = root / ns.XBOARD_DOC
    doc.mkdir(parents=True)
    (doc / ns.XBOARD_FAQ).write_text(faq)
    (doc / "engine-intf.html").write_text(
        "<html><body><h1>Chess Engine Communication Protocol</h1>\n"
        f"<p>Users ask: {Q_STRONG} The engine obeys the level command.</p>\n</body></html>\n"
    )
    (doc / "README").write_text("XBoard is a graphical user interface for chess.\n")
    write_gz(doc / "zippy.README.gz", "Zippy connects a chess program to an ICS.\n")
    write_gz(doc / "NEWS.gz", "left out\n")
    write_gz(doc / "TODO.gz", "left out\n")
    write_gz(doc / "changelog.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    write_gz(
        root / "usr/share/man/man6/xboard.6.gz",
        _man("xboard", "Plays chess. " * 20_000 + "\n"),
    )
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_xboard_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.xboard_faq_set()
    nsc.assert_package_set(
        nset,
        "xboard-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "engine-intf.md", "README", "zippy.README"},
        source="FAQ.md",
        version="4.9.1-2+b1",
        too_long="man/xboard.6.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the page quoting a question scrubbed, its other text kept; the READMEs as text
    assert "The engine obeys the level command." in nset.files["engine-intf.md"]
    assert Q_STRONG not in nset.files["engine-intf.md"]
    assert "graphical user interface" in nset.files["README"]
    assert "Zippy connects" in nset.files["zippy.README"]
    assert nset.left_out == ()


def test_xboard_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(A_CRAFTY, "A chess program.")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.xboard_faq_set(), Q_CRAFTY, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"FAQ.txt": ns.xboard_heading_text(FAQ.replace("[", " ["))}
    nsc.assert_leak_checked(ns.xboard_faq_set(), shipped, ASKED)


def test_xboard_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        "<hr />\n** End",
        '<hr />\n<h3><a name="tag-D.4">[D.4] How do I use Crafty with XBoard?</a></h3>\n'
        "<p>Give xboard the option -fcp crafty and put its book files in place.</p>\n"
        "<hr />\n** End",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.xboard_faq_set, lambda: (doc_dir / ns.XBOARD_FAQ).write_text(more)
    )


def test_xboard_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.XBOARD_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.xboard_faq_set, ns.XBOARD_FAQ)
