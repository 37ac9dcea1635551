"""The ``expect-faq`` natural-question set (``bench/natural_sets.py``), its reading of
Expect's plain-text FAQ and the question-leak check (``bench/check_question_leaks.py``) on a
small inline FAQ shaped as Debian's ``expect`` ships it (``/usr/share/doc/expect/FAQ.gz``:
the title and introduction, the list of the questions under group titles ``**** General
****``, one wrapped at column 0 and one indented, the banner ``* Questions and Answers``
between lines of a single ``*``, then the entries again: a ``#N.`` question (wrapped as in
the list), a blank line, the answer (a mailed reply with its headers and the asker's quoted
words, a script with a ``#!`` line), a rule of ``=`` after each, a group title between
them, an unanswered entry, the closing disclaimer) beside the README and the man pages
(``expect(1)``, an example program's page, the short-name link not read twice, one page
over the limit) in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
list of them, the README quoting one); each answer is exactly the text under its question
up to the rule; ids are the author's numbers, so an added entry keeps the halves; an answer
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

Q_WHAT = "I keep hearing about Expect. So what is it?"
Q_WHY = (
    "Why should I learn yet another language (Tcl) instead of writing my interaction in "
    "<a language I already know>?"
)
Q_CRON = "Can Expect be run from cron?"
Q_TALK = (
    'Why does "talk" fail with "Who are you? You have no entry utmp" or '
    '"You don\'t exist. Go away"?'
)
Q_Y2K = "Is Expect Y2K compliant?"
ASKED = (Q_WHAT, Q_WHY, Q_CRON, Q_TALK, Q_Y2K)
A_WHAT = (
    "From: libes (Don Libes)\nSubject: So what is it?\n\nCharles Hymes writes:\n>\n"
    ">So, what is Expect?\n\nExpect is a tool primarily for automating interactive "
    "applications\nsuch as telnet, ftp, passwd, fsck, rlogin, tip, etc.\n\nDon"
)
A_WHY = "Ironically, Tcl was written specifically to halt this very problem.\n\nDon"
A_CRON = (
    "Yes. Give it a terminal type, as in this script:\n\n#!/bin/sh\n"
    "expect -c 'spawn telnet host'\n\nDon"
)
A_TALK = "The talk daemon wants a utmp entry for the spawned process's tty."
A_Y2K = "The short answer is: Yes, if you're using a modern version of Tcl\n(7.6p2 or later)."
ANSWERS = {"1": A_WHAT, "3": A_WHY, "21": A_CRON, "41": A_TALK, "54": A_Y2K}
RULE = "=" * 70

FAQ = (
    "Expect FAQ (Frequently Asked Questions)\n\n"
    "This FAQ lists common questions, usually about subjects that didn't\n"
    "fit well in the book.  I've left the original questions.\n\nDon\n\n"
    f"{RULE}\n\n"
    "\t\tHere is the list of questions.  You can search for the corresponding\n"
    '\t\tanswer by searching for the question number.  For example searching\n\t\tfor "#3."\n\n\n'
    "**** General **** \n\n"
    "#1. I keep hearing about Expect.  So what is it?\n\n"
    "#3. Why should I learn yet another language (Tcl) instead of\n"
    "writing my interaction in <a language I already know>?\n\n"
    "**** Can Expect do this? **** \n\n"
    "#21. Can Expect be run from cron?\n"
    "#22. Is this entry answered at all?\n\n"
    "**** Other... **** \n\n"
    '#41. Why does "talk" fail with "Who are you?  You have no entry utmp" or\n'
    '\t"You don\'t exist.  Go away"?\n'
    "#54. Is Expect Y2K compliant?\n\n\n"
    "*\n* Questions and Answers\n*\n\n\n\n"
    "**** General **** \n\n\n"
    "#1. I keep hearing about Expect.  So what is it?\n\n"
    "From: libes (Don Libes)\nSubject: So what is it?\n\nCharles Hymes writes:\n>\n"
    ">So, what is Expect?\n\nExpect is a tool primarily for automating interactive "
    "applications\nsuch as telnet, ftp, passwd, fsck, rlogin, tip, etc.\n\nDon\n\n"
    f"{RULE}\n\n"
    "#3. Why should I learn yet another language (Tcl) instead of\n"
    "writing my interaction in <a language I already know>?\n\n"
    "Ironically, Tcl was written specifically to halt this very problem.\n\nDon\n\n"
    f"{RULE}\n\n"
    "**** Can Expect do this? **** \n\n\n"
    "#21. Can Expect be run from cron?\n\n"
    "Yes. Give it a terminal type, as in this script:\n\n#!/bin/sh\n"
    "expect -c 'spawn telnet host'\n\nDon\n\n"
    f"{RULE}\n\n"
    "#22. Is this entry answered at all?\n\n"
    f"{RULE}\n\n"
    "**** Other... **** \n\n\n"
    '#41. Why does "talk" fail with "Who are you?  You have no entry utmp" or\n'
    '\t"You don\'t exist.  Go away"?\n\n'
    "The talk daemon wants a utmp entry for the spawned process's tty.\n\n"
    f"{RULE}\n\n"
    "#54. Is Expect Y2K compliant?\n\n"
    "The short answer is: Yes, if you're using a modern version of Tcl\n(7.6p2 or later).\n\n"
    f"{RULE}\n\n\n"
    "Names of companies and products are provided in order to adequately specify\n"
    "procedures and equipment used.\n\n"
    "Last edited: Tue Sep 22 17:52:23 EDT 1998 by Don Libes\n"
)


def test_split_expect_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_expect_faq(FAQ)
    # every #N. entry after the banner a question, wrapped lines joined and spaces folded;
    # ids the author's numbers; the answer the text under it up to the rule
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the list of questions, the unanswered entry and the rules leave the page; the
    # introduction, the group titles, the banner and the disclaimer stay, in no answer
    assert "answered at all" not in page and "#1." not in page and "====" not in page
    assert page.startswith("Expect FAQ (Frequently Asked Questions)\n\nThis FAQ lists")
    assert page.count("**** Can Expect do this? ****") == 2
    assert "* Questions and Answers" in page
    assert page.rstrip().endswith("Last edited: Tue Sep 22 17:52:23 EDT 1998 by Don Libes")
    assert all("Last edited" not in a and "****" not in a for *_, a in qa)


def test_split_expect_faq_edges() -> None:
    # no entry: the text kept, nothing asked; with no banner every #N. line is the list of
    # questions (deleted, nothing asked); a repeated number gets -2; "#N." inside a line, or
    # not followed by a space, is text; a group title ends an answer; with no rule the last
    # answer runs to the end
    page, none = ns.split_expect_faq("Notes.\n\nText.\n")
    assert none == [] and page == "Notes.\n\nText.\n"
    page, none = ns.split_expect_faq("Intro.\n#1. Listed?\n#2. Also\nlisted?\n\nText.\n")
    assert none == [] and page == "Intro.\n\nText.\n"
    page, qa = ns.split_expect_faq(
        "*\n* Questions and Answers\n*\n"
        "#1. Same?\n\nFirst, see #2. below.\n#2.no space\n**** Group ****\n"
        "#1. Again?\n\nSecond.\n"
    )
    assert qa == [
        ("1", "Same?", "First, see #2. below.\n#2.no space"),
        ("1-2", "Again?", "Second."),
    ]
    assert page == (
        "*\n\n* Questions and Answers\n\n*\n\nFirst, see #2. below.\n#2.no space\n\n"
        "**** Group ****\n\nSecond.\n"
    )


_WORD = st.sampled_from(["spawn", "send", "expect", "tcl", "pty", "telnet", "cron", "interact"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=12),  # the question's words
            st.integers(min_value=0, max_value=2),  # wrapped: no, at column 0, indented
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_expect_faq_property(entries: list[tuple[list[str], int, list[str]]]) -> None:
    """Random entries, wrapped or not, some unanswered, listed before the banner and asked
    after it, a rule after each: one question per answered entry, in order, its number its
    id, the text under it its answer, in the page; no question's word left in it."""
    listing, body, expected = "Random FAQ\n\n", "*\n* Questions and Answers\n*\n\n", []
    for n, (qwords, wrap, awords) in enumerate(entries, start=1):
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        words = [f"entry{n}x", *qwords]
        cut = len(words) // 2
        shown = (
            " ".join(words[:cut]) + "\n" + "\t" * (wrap - 1) + " ".join(words[cut:]) + "?"
            if wrap
            else question
        )
        answer = " ".join(["Answer", *awords]) if awords else ""
        listing += f"#{n}. {shown}\n"
        body += f"#{n}. {shown}\n\n{answer}\n\n{RULE}\n\n"
        if answer:
            expected.append((str(n), question, answer))
    page, qa = ns.split_expect_faq(listing + "\n" + body + "Last edited today\n")
    nsc.assert_random_split(page, qa, expected)
    assert page.rstrip().endswith("Last edited today")


# -- the set, built from a package tree shaped like Debian's expect ------------------------


def _man(name: str, body: str) -> str:
    return (
        f'.TH {name.upper()} 1 "29 December 1994"\n.SH NAME\n{name} \\- a program\n'
        f".SH DESCRIPTION\n{body}"
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.EXPECT_PACKAGE, "5.45.4-2+b1")
    doc: Path = root / ns.EXPECT_DOC
    write_gz(doc / ns.EXPECT_FAQ, faq)
    write_gz(
        doc / "README.gz",
        f"This is the README for Expect.  Often asked: {Q_CRON} Read the FAQ.\n",
    )
    man = root / "usr/share/man/man1"
    write_gz(man / "expect.1.gz", _man("expect", "Expect talks to interactive programs.\n"))
    write_gz(man / "expect_kibitz.1.gz", _man("kibitz", "Kibitz lets two people share a shell.\n"))
    (man / "kibitz.1.gz").symlink_to("expect_kibitz.1.gz")
    write_gz(man / "expect_tknewsbiff.1.gz", _man("tknewsbiff", "It pops up a window.\n" * 9_000))
    write_gz(doc / "NEWS.gz", "left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_expect_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.expect_faq_set()
    nsc.assert_package_set(
        nset,
        "expect-faq",
        ids=list(ANSWERS),
        files={"FAQ", "README", "man/expect.1.md", "man/expect_kibitz.1.md"},
        source="FAQ",
        version="5.45.4-2+b1",
        too_long="man/expect_tknewsbiff.1.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the README quoting a question scrubbed, its other text kept; the man pages as text
    assert "Read the FAQ." in nset.files["README"]
    assert "Expect talks to interactive programs." in nset.files["man/expect.1.md"]


def test_expect_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "The talk daemon wants a utmp entry for the spawned process's tty.", "Use utmp."
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.expect_faq_set(), Q_TALK, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.expect_faq_set(), {"FAQ": FAQ}, ASKED)


def test_expect_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "\n\nNames of companies",
        "#55. How do I match a prompt that ends in a space?\n\n"
        "Anchor the pattern with a dollar sign and allow the trailing space.\n\n"
        f"{RULE}\n\n\nNames of companies",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.expect_faq_set, lambda: write_gz(doc / ns.EXPECT_FAQ, more)
    )


def test_expect_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.EXPECT_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.expect_faq_set, ns.EXPECT_FAQ)
