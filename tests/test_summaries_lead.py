"""A title that opens the first sentence keeps the sentence; plain-text underlines are no prose
(issue 33, helper quality68).

A file's abstract is ``title: first sentence``. When the sentence started with the title (a
plain-text file whose first line is its title and the start of a wrapped sentence, a
README's ``# treehop`` heading above ``treehop is ...``), the sentence was dropped as a
repeat and the abstract was the title alone. And plain text draws headings as reST does
(``ABCDE`` over ``=====``): the underline ran into the first sentence
(``0. INTRODUCTION ============ It was ...``) and an overline was the title (``====``)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest import summaries
from treehop.ingest.markup import adornment_char
from treehop.ingest.summaries import (
    ExtractiveSummarizer,
    first_sentence,
    lead_and_sentence,
    title_of,
)
from treehop.ingest.tree_builder import TreeBuilder
from treehop.models import ContextType

ABCDE = (
    "0. INTRODUCTION\n============\n\nIt was originally created by Robert Woodcook. "
    "Then others took it over.\n"
)


# --------------------------------------------------------------- the sentence is kept


def test_a_title_that_opens_the_sentence_keeps_the_whole_sentence() -> None:
    s = ExtractiveSummarizer()
    abstract, _ = s.summarize_file(
        "readme.md", "# treehop\n\ntreehop is a retrieval library. It finds context.", "markdown"
    )
    assert abstract == "treehop is a retrieval library."
    # Plain text: the first line is the title and the start of a wrapped sentence.
    abstract, _ = s.summarize_file(
        "notes.txt", "The frobnicator reads its\nconfiguration at start. Then it runs.", "text"
    )
    assert abstract == "The frobnicator reads its configuration at start."
    # reST: the title over its underline, the sentence opening with it.
    abstract, _ = s.summarize_file(
        "guide.rst", "Migrations\n==========\n\nMigrations are how a schema changes. More.", "rst"
    )
    assert abstract == "Migrations are how a schema changes."


def test_a_title_that_is_not_the_sentences_first_words_still_leads_it() -> None:
    s = ExtractiveSummarizer()
    abstract, _ = s.summarize_file("x.md", "# Install\n\nRun the setup script. Done.", "markdown")
    assert abstract == "Install: Run the setup script."
    # A prefix that stops inside a word is no repeat: ``Foo`` is not ``Foobar``.
    abstract, _ = s.summarize_file("x.md", "# Foo\n\nFoobar is a tool. More.", "markdown")
    assert abstract == "Foo: Foobar is a tool."
    # The sentence is the title: said once.
    abstract, _ = s.summarize_file("x.md", "# Notes.\n\nNotes.", "markdown")
    assert abstract == "Notes."


def test_a_folder_readme_whose_title_opens_its_sentence_keeps_it() -> None:
    got = summaries._directory_abstract(
        "pkg", [], "# treehop\n\ntreehop is a retrieval library. More."
    )
    assert got == "treehop is a retrieval library."
    got = summaries._directory_abstract("pkg", [], "# Guide\n\nRead this first. More.")
    assert got == "Guide: Read this first."


@settings(max_examples=400, deadline=None)
@given(
    st.text(st.sampled_from("ab :.\n\t"), max_size=12),
    st.text(st.sampled_from("ab :.\n\t"), max_size=30),
)
def test_lead_and_sentence_never_loses_a_word(head: str, sentence: str) -> None:
    got = lead_and_sentence(head, sentence)
    if not sentence.split():
        assert got == head  # nothing to add
        return
    # The sentence is all there, as given; the head is said once, first.
    assert got in (sentence, f"{head}: {sentence}")
    flat_got, flat_head = " ".join(got.split()), " ".join(head.split())
    assert flat_got.startswith(flat_head)
    # It is said by the sentence alone exactly when the sentence opens with it as whole
    # words (``a`` opens ``a b``, not ``ab``); a blank head says nothing.
    words, lead = sentence.split(), head.split()
    opens = words[: len(lead)] == lead or (
        bool(lead)
        and words[: len(lead) - 1] == lead[:-1]
        and len(words) >= len(lead)
        and words[len(lead) - 1].startswith(lead[-1])
        and not words[len(lead) - 1][len(lead[-1]) :][:1].isalnum()
    )
    assert (got == sentence) == opens


# ------------------------------------------------------------ underlines are no prose


def test_an_underline_is_no_part_of_a_plain_text_sentence() -> None:
    assert first_sentence(ABCDE, "text") == (
        "0. INTRODUCTION: It was originally created by Robert Woodcook."
    )
    # Tildes and dashes too, indented or not (mdadm's README.recipes, emacs's TUTORIAL).
    text = "1. create a degraded array\n   ~~~~~~~~~~~~~~~~~~~~~\n\nUse mdadm --create. Then."
    assert first_sentence(text, "text") == "1. create a degraded array: Use mdadm --create."
    # A heading that already ends in a stop needs no lead-in.
    text = "Why does it fail?\n-----------------\nIt lacks a disk. More."
    assert first_sentence(text, "text") == "Why does it fail?"
    # A heading with nothing after it is the heading alone (no dangling colon).
    assert first_sentence("WindowMaker Bug Report Form\n--------------\n", "text") == (
        "WindowMaker Bug Report Form"
    )


def test_an_overline_is_no_title_and_the_abstract_is_title_and_sentence() -> None:
    text = "====\nBUGS\n====\n\nFreeciv certainly contains some bugs. Report them."
    assert title_of(text, "text") == "BUGS"
    abstract, _ = ExtractiveSummarizer().summarize_file("BUGS", text, "text")
    assert abstract == "BUGS: Freeciv certainly contains some bugs."
    abstract, _ = ExtractiveSummarizer().summarize_file("FAQ", ABCDE, "text")
    assert abstract == "0. INTRODUCTION: It was originally created by Robert Woodcook."
    # Only adornment lines: there is no title.
    assert title_of("=====\n-----\n\n~~~~~\n", "text") == ""


def test_markup_kinds_are_read_as_before() -> None:
    """Markdown and reST already skip their headings and adornments; a Markdown ``---`` rule
    under a paragraph is Markdown's setext heading, not a plain-text lead-in."""
    assert first_sentence(ABCDE, "rst") == "It was originally created by Robert Woodcook."
    assert first_sentence("Intro\n-----\n\nBody text here. More.", "markdown") == (
        "Body text here."
    )
    assert first_sentence("**Bold** start. Next.", "markdown") == "Bold start."


def test_a_built_plain_text_tree_has_no_underline_in_any_abstract(tmp_path: Path) -> None:
    (tmp_path / "FAQ").write_text(
        ABCDE
        + "\n"
        + "\n\n".join(
            f"{i}. SECTION {i}\n{'-' * 12}\n\n" + f"Entry {i} explains option{i} in full. " * 20
            for i in range(1, 6)
        ),
        encoding="utf-8",
    )
    (tmp_path / "BUGS").write_text(
        "====\nBUGS\n====\n\nThe tool certainly has some bugs.", encoding="utf-8"
    )
    built = TreeBuilder(chunk_chars=800).build_directory(
        tmp_path, "viking://resources/faq", ContextType.RESOURCE
    )
    abstracts = {n.uri.rsplit("/", 1)[-1]: n.abstract for n in built.nodes}
    assert abstracts["FAQ"] == "0. INTRODUCTION: It was originally created by Robert Woodcook."
    assert abstracts["BUGS"] == "BUGS: The tool certainly has some bugs."
    for n in built.nodes:
        assert not re.search(r"(?:^|\s)([=~-])\1+(?:\s|$)", n.abstract), n.abstract


# ---------------------------------------------------------------------- properties

_LINES = st.sampled_from(
    [
        "word",
        "Title",
        "Is it so?",
        "a sentence ends here.",
        "2021 notes",
        "3.4.",
        "",
        "   ",
        "=====",
        "  ~~~~~~",
        "---",
        "--",
        "****",
        "x" * 130,
    ]
)
_PLAIN = st.lists(_LINES, max_size=40).map("\n".join)


def _is_mark(token: str) -> bool:
    return adornment_char(token) is not None


@settings(max_examples=400, deadline=None)
@given(_PLAIN)
def test_plain_text_sentence_and_title_hold_no_adornment(text: str) -> None:
    sent = first_sentence(text, "text")
    title = title_of(text, "text")
    assert not any(_is_mark(t) for t in sent.split()), sent
    assert not _is_mark(title)
    # The title is the first line that is neither blank nor an adornment (clipped).
    lines = [ln.strip() for ln in text.split("\n")[:400]]
    expected = next((ln for ln in lines if ln and not _is_mark(ln)), "")
    assert title == summaries._clip(expected, 120)
    # Nothing is made up: the sentence's words are the prose lines' words, a heading's
    # lead-in colon aside.
    prose = " ".join(ln for ln in lines if ln and not _is_mark(ln)).split()
    got = [w.removesuffix(":") for w in sent.split()]
    assert got == [w.removesuffix(":") for w in prose[: len(got)]]


def test_adornment_runs_stay_linear() -> None:
    """Titles and sentences over texts that are all adornments: each line is read once.
    CPU time of this process (the machine's load does not count)."""
    for text in ("=====\n" * 200_000, "-" * 1_000_000, "~~\n\n" * 150_000 + "Title\nbody."):
        t0 = time.process_time()
        title_of(text, "text")
        first_sentence(text, "text")
        ExtractiveSummarizer().summarize_file("f", text, "text")
        assert time.process_time() - t0 < 2.0
