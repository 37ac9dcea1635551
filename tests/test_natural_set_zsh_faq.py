"""The ``zsh-faq`` natural-question set's parser (``bench/natural_sets.py``) on small inline
texts shaped like the Z-Shell FAQ (``FAQ.gz`` in Debian's ``zsh-common``, YODL's plain-text
output; offline, no embedding model).

What the set's numbers rest on: every numbered question line leaves the corpus (and the
contents list that repeats them), the answer is exactly the text under its question (the
next question, chapter or other heading excluded), a heading is only a column-0 line set
apart by two blank lines on each side (an indented URL or a paragraph's first line is not),
and each chapter becomes its own file, as the HTML edition splits it.
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

import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written

FAQ_TEXT = """Archive-Name: unix-faq/shell/wsh
Last-Modified: 2020/08/08

This document answers questions about the W-shell.
If you want the latest version, skip to question 1.2.


Contents:
Chapter 1:  Introducing wsh
1.1. What is it?
1.2. Where do I get the source code for wsh?

Chapter 2:  How to get things to work
2.1. How do I get a newline in my prompt?
2.2. Why does my terminal act funny in some way?
--- End of Contents ---


Chapter 1: Introducing wsh



1.1: What is it?



Wsh is a command interpreter with spelling correction.
  Its manual lists every option.

It runs on most systems:
            https://wsh.example.org/Patches/


1.2: Where do I get the source code for wsh?



From the archive sites; see
  question 2.2 for mirrors.


Chapter 2: How to get things to work



2.1: How do I get a newline in my prompt?



Use $'\\n' in the prompt string:

    PS1=$'line one\\nline two'

2.2 is below.


2.2: Why does my terminal act funny in some way?



Check the stty settings first.


2.3: An empty entry with nothing under it



Acknowledgments:


Thanks to the list.
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_split_yodl_faq_questions_answers_and_files() -> None:
    files, qa = ns.split_yodl_faq(FAQ_TEXT)
    assert list(files) == [
        "00-preface.md",
        "01-introducing-wsh.md",
        "02-how-to-get-things-to-work.md",
    ]
    by_num = {num: (q, a) for num, q, a in qa}
    assert list(by_num) == ["1.1", "1.2", "2.1", "2.2"]  # 2.3 has no text under it
    assert by_num["1.1"][0] == "What is it?"
    a11 = by_num["1.1"][1]
    # the answer runs over blank lines and an indented line set apart by blanks ...
    assert a11.startswith("Wsh is a command interpreter with spelling correction.")
    assert a11.rstrip().endswith("https://wsh.example.org/Patches/")
    # ... and stops at the next question
    assert "archive sites" not in a11
    assert by_num["1.2"][1] == "From the archive sites; see\n  question 2.2 for mirrors."
    # code and a line that starts with a question number are answer text, not headings
    a21 = by_num["2.1"][1]
    assert "PS1=$'line one\\nline two'" in a21 and a21.endswith("2.2 is below.")
    # a one-line answer set apart like a heading is still the answer; an unnumbered
    # heading (a title ending with ':') ends the answer before it and stays as a heading
    assert by_num["2.2"][1] == "Check the stty settings first."
    assert "## Acknowledgments:" in files["02-how-to-get-things-to-work.md"]
    for _, _, a in qa:
        assert any(a in text for text in files.values())


def test_split_yodl_faq_deletes_every_question_and_the_contents() -> None:
    files, _ = ns.split_yodl_faq(FAQ_TEXT)
    corpus = _corpus(files)
    for q in (
        "Where do I get the source code for wsh?",
        "How do I get a newline in my prompt?",
        "Why does my terminal act funny in some way?",
        "An empty entry with nothing under it",
    ):
        assert q.lower() not in corpus
    assert "contents" not in corpus and "end of contents" not in corpus
    # chapters are files headed by their title; the preface keeps its own text
    assert files["01-introducing-wsh.md"].startswith("# Chapter 1: Introducing wsh\n\nWsh is")
    assert files["00-preface.md"] == (
        "Archive-Name: unix-faq/shell/wsh\nLast-Modified: 2020/08/08\n\n"
        "This document answers questions about the W-shell.\n"
        "If you want the latest version, skip to question 1.2.\n"
    )
    # runs of blank lines are squeezed to one
    assert all("\n\n\n" not in text for text in files.values())


def test_split_yodl_faq_a_set_apart_line_is_a_heading_only_when_numbered_or_titled() -> None:
    text = "\n\n1.1: Q one?\n\n\nJust this.\n\n\nNotes:\n\n\ntail\n"
    files, qa = ns.split_yodl_faq(text)
    assert qa == [("1.1", "Q one?", "Just this.")]
    assert files == {"00-preface.md": "Just this.\n\n## Notes:\n\ntail\n"}


def test_split_yodl_faq_needs_two_blank_lines_on_each_side() -> None:
    text = "intro\n\n\n1.1: Real question here?\n\n\nanswer\n\n1.2: Not a heading?\n\n\nmore\n"
    files, qa = ns.split_yodl_faq(text)
    assert [(n, q) for n, q, _ in qa] == [("1.1", "Real question here?")]
    assert qa[0][2] == "answer\n\n1.2: Not a heading?\n\nmore"  # blank runs squeezed
    assert list(files) == ["00-preface.md"]
    assert "1.2: not a heading?" in _corpus(files)


def test_split_yodl_faq_contents_without_end_marker_stops_at_the_first_heading() -> None:
    text = "Contents:\n1.1. Where is it?\n\n\nChapter 1: Start\n\n\n1.1: Where is it?\n\n\nhere\n"
    files, qa = ns.split_yodl_faq(text)
    assert qa == [("1.1", "Where is it?", "here")]
    assert files == {"01-start.md": "# Chapter 1: Start\n\nhere\n"}


def test_split_yodl_faq_normalises_question_whitespace() -> None:
    text = "\n\n3.8: Why do the keys not work?  (And other\toddities.)\n\n\nSee stty.\n"
    _, qa = ns.split_yodl_faq(text)
    assert qa == [("3.8", "Why do the keys not work? (And other oddities.)", "See stty.")]


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.:\t", max_size=20),
    st.just(""),
    st.just(""),
    st.builds(lambda n, t: f"Chapter {n}: {t}", st.integers(0, 9), st.text("abc ", max_size=8)),
    st.builds(
        lambda a, b, t: f"{a}.{b}: {t}",
        st.integers(0, 9),
        st.integers(0, 30),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
    ),
    st.just("Contents:"),
    st.just("--- End of Contents ---"),
    st.builds(lambda t: "  " + t, st.text(alphabet="abc1.: ", max_size=10)),
)


def _numbered_headings(lines: list[str]) -> tuple[list[str], list[str]]:
    """(numbered question lines set apart as headings, every other line), by the rule."""
    padded = ["", "", *lines, "", ""]
    asked: list[str] = []
    other: list[str] = []
    for i in range(2, len(padded) - 2):
        line = padded[i]
        apart = line[:1].strip() and not any(
            padded[j].strip() for j in (i - 2, i - 1, i + 1, i + 2)
        )
        if apart and re.match(r"^\d+\.\d+:\s+\S", line):
            asked.append(line.strip())
        else:
            other.append(line.strip())
    return asked, other


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=50))
def test_split_yodl_faq_never_leaves_a_question_heading_in_the_corpus(lines: list[str]) -> None:
    files, qa = ns.split_yodl_faq("\n".join(lines))
    asked, other = _numbered_headings(lines)
    out = [line.strip() for text in files.values() for line in text.split("\n")]
    # a question line is in the output only as often as the input holds it as plain text
    for line in set(asked):
        assert out.count(line) <= other.count(line), line
    for num, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"\d+\.\d+", num)
        assert any(a in t for t in files.values())  # no chapter file overwrote another
    assert len(qa) <= len(asked)
    assert all(re.fullmatch(r"\d+-[a-z0-9-]+\.md", rel) for rel in files)


def test_split_yodl_faq_repeated_chapter_titles_keep_both_files() -> None:
    text = "\n\nChapter 1: Same\n\n\none\n\n\nChapter 1: Same\n\n\ntwo\n"
    files, _ = ns.split_yodl_faq(text)
    assert files == {
        "01-same.md": "# Chapter 1: Same\n\none\n",
        "01-same-2.md": "# Chapter 1: Same\n\ntwo\n",
    }


# -- the set, built from a package tree shaped like Debian's zsh-common -------------------


def test_zsh_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.ZSH_PACKAGE, "5.9-4")
    doc = root / ns.ZSH_DOC
    doc.mkdir(parents=True)
    with gzip.open(doc / ns.ZSH_FAQ, "wt", encoding="utf-8") as fh:
        fh.write(FAQ_TEXT)
    with gzip.open(doc / "README.gz", "wt", encoding="utf-8") as fh:
        fh.write("WSH README\n\nSee the FAQ: Where do I get the source code for wsh? It says.\n")
    (doc / "META-FAQ").write_text("Where to ask: the mailing list.\n")
    (doc / "ChangeLog-3.0").write_text("How do I get a newline in my prompt? fixed\n")
    nset = ns.zsh_faq_set()
    assert [q.qid for q in nset.questions] == [
        "zsh-faq:1.1",
        "zsh-faq:1.2",
        "zsh-faq:2.1",
        "zsh-faq:2.2",
    ]
    assert {q.source for q in nset.questions} == {
        "01-introducing-wsh.md",
        "02-how-to-get-things-to-work.md",
    }
    # only the listed notes that exist come in; a changelog never does
    assert set(nset.files) == {
        "00-preface.md",
        "01-introducing-wsh.md",
        "02-how-to-get-things-to-work.md",
        "README",
        "META-FAQ",
    }
    # the README quoted a question verbatim: scrubbed, so the corpus never holds it
    assert "where do i get the source code" not in _corpus(nset.files)
    assert "it says." in _corpus(nset.files)
    assert_files_as_written(nset)
    assert "5.9-4" in nset.note and "2 chapters" in nset.note
    assert "README, META-FAQ)" in nset.note and "FEATURES" not in nset.note
    assert "zsh-faq" in ns.NATURAL_SETS and "zsh-faq" in ns.BUILDERS


def test_zsh_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.ZSH_PACKAGE, "5.9-4")
    (root / ns.ZSH_DOC).mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"no FAQ\.gz under"):
        ns.zsh_faq_set()


def test_check_removed_refuses_a_question_left_in_the_corpus() -> None:
    files, qa = ns.split_yodl_faq("\n\n1.1: Where does the shell log go?\n\n\nto syslog\n")
    q = ns.NaturalQuestion("x:1.1", qa[0][1], ((qa[0][2], 1.0),))
    ns._check_removed(files, [q])  # removed: fine
    with pytest.raises(ValueError, match="left in the corpus"):
        ns._check_removed({**files, "b.md": "where does the shell\nlog go?"}, [q])
