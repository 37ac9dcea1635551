"""Plain-text underlines are no prose (issue 33, helper quality68).

Plain text draws headings as reST does (``ABCDE`` over ``=====``): the underline ran into
the first sentence (``0. INTRODUCTION ============ It was ...``, every chunk abstract of such
a file) and an overline was the file's title (``====``)."""

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
    title_of,
)
from treehop.ingest.tree_builder import TreeBuilder
from treehop.models import ContextType

ABCDE = (
    "0. INTRODUCTION\n============\n\nIt was originally created by Robert Woodcook. "
    "Then others took it over.\n"
)


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


def test_an_overline_is_no_title() -> None:
    text = "====\nBUGS\n====\n\nFreeciv certainly contains some bugs. Report them."
    assert title_of(text, "text") == "BUGS"
    # The file's abstract is its title (the sentence opens with it: said once).
    abstract, _ = ExtractiveSummarizer().summarize_file("BUGS", text, "text")
    assert abstract == "BUGS"
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
    assert abstracts["FAQ#chunk-0"] == (
        "0. INTRODUCTION: It was originally created by Robert Woodcook."
    )
    assert abstracts["BUGS"] == "BUGS"
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
