"""The ``jed-faq`` natural-question set (``bench/natural_sets.py``), its reading of the JED
editor's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped as Debian's ``jed-common`` ships it
(``/usr/share/jed/doc/txt/jed_faq.txt``: a title, the "search for <3>" line, a rule,
"Frequently asked questions:" over the numbered contents list, one item wrapped over an
indented line, a rule, "Answers:", then column-0 entries ``<N> <question>``, one worded
differently from the list, one wrapped over indented lines, one asked twice by number, one
with no text; answers indented, with code, a tab-indented listing and a ``--- `` dash inside
a line; the closing rule and the authors' numbering function) beside the editor's other
notes (one quoting a question), the README, the function references (one over the page
limit), Debian's notes and examples and the HTML manual (its title and contents pages, the
changelogs and the copyright to be left out), in a package tree laid out as ``jed-common``
unpacks (marker present, nothing downloaded); offline, no embedding model, no test reads the
real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents list, a note quoting one); each answer is exactly the text under its question up to
the next question or rule; a wrapped question is read whole; ids are the authors' numbers, so
an added entry keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
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

Q_OBTAIN = "How do I obtain JED and its S-Lang library?"
Q_DIFF = "What is the difference between internal and intrinsic functions?"
Q_TAB = "The TAB key is broken--- it does not insert TABs!"
Q_PASTE = (
    "When I paste indented text into Jed, it misaligns everything (i.e. every succeeding "
    "line is indented more than the previous). How can I prevent this?"
)
Q_KEYS = "I define keybindings in my jed.rc file but they are not working. What is wrong?"
ASKED = (Q_OBTAIN, Q_DIFF, Q_TAB, Q_PASTE, Q_KEYS)

FAQ = """Frequently Asked Questions about the JED editor.

To find the answer to one of the following questions,  Search for the number
enclosed in <>, e.g., <3> for question 3.

----------------------------------------------------------------------------
Frequently asked questions:

1. How do I obtain JED and its S-Lang library?
2. What are the differences between internal and intrinsic functions?
3. Is this entry answered at all?
4. The TAB key is broken--- it does not insert TABs!
5. When I paste text into Jed, it misaligns everything. How can I
    prevent this?
6. I define keybindings in my jed.rc file but they are not working.
    What is wrong?

----------------------------------------------------------------------------
Answers:

<1> How do I obtain JED and its S-Lang library?

   See <https://www.jedsoft.org/jed/download.html> for the sources.

<2> What is the difference between internal and intrinsic functions?

   An intrinsic function is a function that is directly callable from S-Lang
   while an internal function cannot.  For example:

      call ("backward_delete_char_untabify");

   calls an internal function.

<3> Is this entry answered at all?
<4> The TAB key is broken--- it does not insert TABs!

   Should it?  By default, the TAB key runs the `indent_line' function:

         program main
\t integer*4 i
    10   continue

<5> When I paste indented text into Jed, it misaligns everything
  (i.e. every succeeding line is indented more than the previous).
  How can I prevent this?

  The reason, why this happens is: In Jed, carriage return is bound to
  `newline_and_indent'.  Use the "paste" mode of the terminal — or ESC-x.

<6> I define keybindings in my jed.rc file but they are not working.
   What is wrong?

  Jed will load a fallback keybinding-file if you do not specify an
  emulation in your jed.rc overwriting your bindings.

-------------------------------------------------------------------------------
This is a useful function used to maintain numbers in this faq.

define faq_fix ()
{
   while (re_fsearch("^<[0-9]+>"))
     ++n;
}
"""
ANSWERS = {
    "1": "See <https://www.jedsoft.org/jed/download.html> for the sources.",
    "2": "An intrinsic function is a function that is directly callable from S-Lang\n"
    "while an internal function cannot.  For example:\n\n"
    '   call ("backward_delete_char_untabify");\n\n'
    "calls an internal function.",
    "4": "Should it?  By default, the TAB key runs the `indent_line' function:\n\n"
    "         program main\n\t integer*4 i\n    10   continue",
    "5": "The reason, why this happens is: In Jed, carriage return is bound to\n"
    '`newline_and_indent\'.  Use the "paste" mode of the terminal — or ESC-x.',
    "6": "Jed will load a fallback keybinding-file if you do not specify an\n"
    "emulation in your jed.rc overwriting your bindings.",
}


def test_split_jed_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_jed_faq(FAQ)
    # the entries' wording, wrapped ones whole; the authors' numbers; answers dedented
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents list leaves the page, its wrapped items and its other wording too; a
    # question with nothing under it asks nothing and leaves the page all the same
    assert "differences between" not in page and "prevent this" not in page
    assert "answered at all" not in page and not re.search(r"(?m)^\d+\. ", page)
    # the title, the rules, the lines around the list and the closing function stay, in no
    # answer
    assert page.startswith("Frequently Asked Questions about the JED editor.\n\nTo find")
    assert "Frequently asked questions:" in page and "Answers:" in page
    assert page.count("-" * 70) == 3
    assert page.rstrip().endswith("++n;\n}")
    assert all("faq_fix" not in a and "Answers:" not in a for *_, a in qa)


def test_split_jed_faq_edges() -> None:
    # an indented "<N>" line or a "<N>" inside a line is text; a numbered line after the
    # first entry is answer text, not a contents item; a repeated number gets -2
    page, qa = ns.split_jed_faq(
        "Title\n\n1. Listed?\n<1> One?\n\n  A <2> inside.\n   <3> Indented?\n"
        "2. Numbered in an answer.\n\n<1> Again?\n\n  B.\n"
    )
    kept = "A <2> inside.\n   <3> Indented?\n2. Numbered in an answer."
    assert qa == [("1", "One?", kept), ("1-2", "Again?", "B.")]
    assert page == f"Title\n\n  {kept}\n\nB.\n"
    # a short rule (under ten dashes) is answer text; a long one ends the answer
    _, qa = ns.split_jed_faq("<1> Q?\n\n  x\n---------\n  y\n----------\n  z\n")
    assert qa == [("1", "Q?", "x\n---------\n  y")]
    page, none = ns.split_jed_faq("JED notes\n\nSome prose, no entry.\n")
    assert none == [] and page == "JED notes\n\nSome prose, no entry.\n"


_WORD = st.sampled_from(["jed", "slang", "mode", "tab", "key", "buffer", "xterm"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.integers(min_value=1, max_value=6),  # words on the question's first line
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_jed_faq_property(entries: list[tuple[list[str], int, list[str]]]) -> None:
    """Random entries, wrapped or not, some unanswered, each listed in the contents first:
    one question per answered entry, in order, its number its id, its answer its text, in
    the page; no question's word left in it."""
    head = ["Frequently Asked Questions about the JED editor.", "", "-" * 40, ""]
    body = ["-" * 40, "Answers:", ""]
    expected: list[tuple[str, str, str]] = []
    for k, (qwords, cut, awords) in enumerate(entries, start=1):
        words = [f"entry{k}x", *qwords]
        first, rest = " ".join(words[:cut]), " ".join(words[cut:])
        head += [f"{k}. {first}", f"    {rest}?"] if rest else [f"{k}. {first}?"]
        body += [f"<{k}> {first}", f"   {rest}?"] if rest else [f"<{k}> {first}?"]
        body.append("")
        if awords:
            answer = " ".join(["Answer", *awords])
            body += [f"   {answer}", ""]
            expected.append((str(k), " ".join(words) + "?", answer))
    page, qa = ns.split_jed_faq("\n".join(head + body))
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's jed-common --------------------


def _html(title: str, body: str) -> str:
    return f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.JED_PACKAGE, "1:0.99.20~pre.178+dfsg-6")
    doc: Path = root / ns.JED_DOC
    (doc / "txt").mkdir(parents=True)
    (doc / ns.JED_FAQ).write_text(faq, encoding="utf-8")
    (doc / "txt/hooks.txt").write_text(
        f"Hooks\n\nSee the FAQ: {Q_DIFF} The mode_hook is called — always.\n", encoding="utf-8"
    )
    (doc / "txt/utf8.txt").write_text("UTF-8 mode\n\nSet _UTF8_Mode.\n")
    (doc / "README").write_text("The main reason JED's version number is below 1.0 ...\n")
    (doc / "hlp").mkdir()
    (doc / "hlp/libfuns.hlp").write_text("save_buffers\n\n SYNOPSIS\n  save_buffers\n")
    (doc / "hlp/jedfuns.hlp").write_text("bob\n\n SYNOPSIS\n  Top of buffer\n" * 6000)
    debian = root / ns.JED_DEBIAN
    (debian / "examples").mkdir(parents=True)
    (debian / "README.Debian-startup").write_text("jed in Debian starts from jed.conf.\n")
    (debian / "Debian-Jed-Policy.txt").write_text("Add-ons go to /usr/share/jed/lib.\n")
    (debian / "examples/jed.rc").write_text('% jed.rc\n_Jed_Emulation = "emacs";\n')
    write_gz(debian / "changelog.gz", "left out\n")
    write_gz(debian / "NEWS.Debian.gz", "left out\n")
    (debian / "copyright").write_text("left out\n")
    (debian / "html").mkdir()
    (debian / "html/index.html").write_text(_html("jed", "<p>left out</p>"))
    (debian / "html/jed001.html").write_text(_html("Contents", "<p>left out</p>"))
    (debian / "html/jed011.html").write_text(_html("10 Basic Editing", "<p>Editing is easy.</p>"))
    (debian / "html/jed.css").write_text("body { color: black }\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_jed_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.jed_faq_set()
    nsc.assert_package_set(
        nset,
        "jed-faq",
        ids=list(ANSWERS),
        files={
            "txt/jed_faq.txt",
            "txt/hooks.txt",
            "txt/utf8.txt",
            "README",
            "hlp/libfuns.hlp",
            "README.Debian-startup",
            "Debian-Jed-Policy.txt",
            "examples/jed.rc",
            "manual/jed011.md",
        },
        source="txt/jed_faq.txt",
        version="1:0.99.20~pre.178+dfsg-6",
        too_long="hlp/jedfuns.hlp",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # UTF-8 read as such; a note quoting a question scrubbed, its other text kept; the
    # manual's chapter as markdown
    assert "terminal — or ESC-x" in nset.files["txt/jed_faq.txt"]
    assert "The mode_hook is called — always." in nset.files["txt/hooks.txt"]
    assert nset.files["manual/jed011.md"].startswith("# 10 Basic Editing\n\nEditing is easy.")


def test_jed_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "  Jed will load a fallback keybinding-file if you do not specify an\n"
        "  emulation in your jed.rc overwriting your bindings.\n",
        "  Pick an emulation.\n",
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.jed_faq_set(), Q_KEYS, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.jed_faq_set(), {"jed_faq.txt": FAQ}, ASKED)


def test_jed_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "\n-------------------------------------------------------------------------------\n"
        "This is a useful",
        "\n<7> How do I set custom tab stops in jed?\n\n"
        "  Put Tab_Stops = [0:19]*8 + 1; in your jed.rc file.\n\n"
        "-------------------------------------------------------------------------------\n"
        "This is a useful",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.jed_faq_set, lambda: (doc / ns.JED_FAQ).write_text(more, encoding="utf-8")
    )


def test_jed_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.JED_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.jed_faq_set, "txt/jed_faq.txt")
