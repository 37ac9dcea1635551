"""The ``screen-faq`` natural-question set's parser (``bench/natural_sets.py``) on small
inline texts shaped like GNU Screen's ``FAQ`` (plain text: ``Q:`` questions wrapped over
indented lines, a blank line, ``A:`` answers) and the set built from a package tree with
Screen's Info manual beside it; offline, no embedding model.

What the set's numbers rest on: every question leaves the corpus, its wrapped lines
included; the answer is exactly the text after ``A:`` up to the next question; ids do not
depend on a question's position; the manual comes in as chapter files.
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
import datasets as ds
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written, assert_held_out

FAQ_TEXT = """   screen: frequently asked questions -- known problems
=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=-=


Q:   Why is it  impossible to download  a file with Kermit  when
     screen is running?
\x20
A:   Screen  always   interprets   control-sequences.
     Simply detach your screen session.

Q:   Screen gets the terminal size wrong and messes up.
\x20
A:   Before you start screen: Check with 'stty -a'.
	termcap  <TERM> 'bc@:bs@'

     Q: is not a question when indented.

Q:   An entry with no answer at all

Q:   Mesg or biff cannot be turned on
A:   Screen failed to change the owner of the pty.
Q:   Screen gets the terminal size wrong and messes up.

Text with no A: label.
"""


def _corpus(text: str) -> str:
    return " ".join(text.split()).lower()


def test_split_qa_faq_questions_answers_and_ids() -> None:
    text, qa = ns.split_qa_faq(FAQ_TEXT)
    assert [key for key, _, _ in qa] == [
        "why-is-it-impossible-to-download-a-file",
        "screen-gets-the-terminal-size-wrong-and",
        "mesg-or-biff-cannot-be-turned-on",
        "screen-gets-the-terminal-size-wrong-and-2",
    ]
    by_key = {key: (q, a) for key, q, a in qa}
    assert by_key["why-is-it-impossible-to-download-a-file"] == (
        "Why is it impossible to download a file with Kermit when screen is running?",
        "Screen  always   interprets   control-sequences.\n     Simply detach your screen session.",
    )
    assert by_key["screen-gets-the-terminal-size-wrong-and"][1] == (
        "Before you start screen: Check with 'stty -a'.\n\ttermcap  <TERM> 'bc@:bs@'\n\n"
        "     Q: is not a question when indented."
    )
    # an answer may follow its question directly; an unlabelled answer starts after a blank
    assert by_key["mesg-or-biff-cannot-be-turned-on"][1] == (
        "Screen failed to change the owner of the pty."
    )
    assert by_key["screen-gets-the-terminal-size-wrong-and-2"][1] == "Text with no A: label."
    low = _corpus(text)
    for q, a in by_key.values():
        assert q.lower() not in low
        assert a in text
    assert "an entry with no answer at all" not in low  # deleted, yields nothing
    assert "a:" not in low.replace("no a: label", "")  # labels dropped
    assert text.startswith("screen: frequently asked questions")
    assert "the pty.\n\nText with no A: label." in text  # answers stay paragraphs apart
    assert "\n\n\n" not in text


_LINE = st.one_of(
    st.text(alphabet="abc ?:", max_size=15),
    st.just(""),
    st.just(" "),
    st.builds(lambda t: "Q:   " + t, st.text(alphabet="abc? ", min_size=1, max_size=12)),
    st.builds(lambda t: "A:   " + t, st.text(alphabet="abc. ", max_size=12)),
    st.builds(lambda t: "     " + t, st.text(alphabet="abc.?Q: ", max_size=12)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=50))
def test_split_qa_faq_answers_live_in_the_text(lines: list[str]) -> None:
    text, qa = ns.split_qa_faq("\n".join(lines))
    keys = [key for key, _, _ in qa]
    assert len(keys) == len(set(keys))
    for key, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"[a-z0-9-]+", key)
        assert a in text
    assert len(qa) <= sum(1 for line in lines if re.match(r"^Q:\s+\S", line))
    assert not any(re.match(r"^Q:\s+\S", line) for line in text.split("\n"))


# -- the set, built from a package tree shaped like Debian's screen ------------------------

INFO = """This is screen.info, produced by makeinfo version 6.8 from screen.texinfo.

\x1f
File: screen.info,  Node: Top,  Next: Overview,  Up: (dir)

Screen
******

This file documents the 'Screen' virtual terminal manager.

* Menu:

* Overview::                    About Screen.

\x1f
File: screen.info,  Node: Overview,  Up: Top

1 Overview
**********

Screen is a full-screen window manager.  Screen gets the terminal size
wrong and messes up.
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SCREEN_PACKAGE, "4.9.0-4")
    doc = root / ns.SCREEN_DOC
    (doc / "examples").mkdir(parents=True)
    (root / ns.SCREEN_INFO).mkdir(parents=True)
    return doc


def test_screen_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    with gzip.open(doc / ns.SCREEN_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT)
    info = ds.debian_package_root(ns.SCREEN_PACKAGE) / ns.SCREEN_INFO
    with gzip.open(info / "screen.info-1.gz", "wt", encoding="utf-8") as fh:
        fh.write(INFO)
    with gzip.open(info / "screen.info.gz", "wt", encoding="utf-8") as fh:
        fh.write("Indirect:\nscreen.info-1: 1101\n")
    (doc / "README").write_text("This is screen.\n")
    (doc / "examples" / "screenrc").write_text("# a sample screenrc\nstartup_message off\n")
    (doc / "NEWS.gz").write_bytes(b"")
    nset = ns.screen_faq_set()
    assert [q.qid for q in nset.questions] == [
        "screen-faq:why-is-it-impossible-to-download-a-file",
        "screen-faq:screen-gets-the-terminal-size-wrong-and",
        "screen-faq:mesg-or-biff-cannot-be-turned-on",
        "screen-faq:screen-gets-the-terminal-size-wrong-and-2",
    ]
    assert {q.source for q in nset.questions} == {"FAQ"}
    assert set(nset.files) == {
        "FAQ",
        "manual/00-screen.md",
        "manual/01-1-overview.md",
        "README",
        "examples/screenrc",
    }
    # the manual's copy of a question (4 words or more) is scrubbed
    assert "messes up" not in nset.files["manual/01-1-overview.md"]
    corpus = _corpus(" ".join(nset.files.values()))
    for q in nset.questions:
        assert q.text.lower() not in corpus
        assert q.answers[0][0] in nset.files["FAQ"]
    assert_files_as_written(nset)
    assert "4.9.0-4" in nset.note and "2 chapter files" in nset.note
    assert_held_out("screen-faq")


def test_screen_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _package(tmp_path, monkeypatch)
    with gzip.open(doc / ns.SCREEN_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT)
    first = ns.screen_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert {q.qid for q in dev} | {q.qid for q in test} == {q.qid for q in first}
    with gzip.open(doc / ns.SCREEN_FAQ, "wt", encoding="latin-1") as fh:
        fh.write(FAQ_TEXT.replace("Q:   An entry with", "Q:   Why?\nA:   ok\n\nQ:   An entry with"))
    again = ns.screen_faq_set().questions
    assert len(again) == len(first) + 1
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_screen_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.screen_faq_set()
