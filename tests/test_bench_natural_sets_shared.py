"""Helpers that several natural-question sets share (``bench/natural_sets.py``): the page and
question bookkeeping of the one-pass FAQ splitters (``_FaqPage``: curl, mc, Window Maker,
cryptsetup), and the identity hashes of ``bench/check_natural_sets_identity.py`` that prove a
refactor of the builders moved no set. Offline, on small inline texts.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_natural_sets_identity as cni
import natural_sets as ns


def test_faq_page_questions_answers_and_page() -> None:
    """Blocks between headings are dedented parts of the page and of the open answer; a
    sub-section heading stays inside the answer; a section heading ends it; the question's
    wrapped lines are one question, whitespace collapsed."""
    page = ns._FaqPage(["# T"])
    page.block += ["  intro before any question", ""]
    page.heading("## 1 Section")
    page.ask("1.1", "How do I", "   wrap a  question?")
    page.block += ["", "  first part", "    indented", "", "", "", "  more"]
    page.heading("### 1.1.1 Sub", in_answer=True)
    page.block += ["  under the sub"]
    page.heading("## 2 Next")
    page.block += ["  section text, no answer"]
    text = page.page()
    assert text == (
        "# T\n\nintro before any question\n\n## 1 Section\n\nfirst part\n  indented\n\nmore"
        "\n\n### 1.1.1 Sub\n\nunder the sub\n\n## 2 Next\n\nsection text, no answer\n"
    )
    assert page.qa == [
        (
            "1.1",
            "How do I wrap a question?",
            "first part\n  indented\n\nmore\n\n### 1.1.1 Sub\n\nunder the sub",
        )
    ]


def test_faq_page_repeated_numbers_and_empty_questions() -> None:
    """A repeated number gets -2, -3; a question with no text under it asks nothing (and
    does not count as a use of its number); the last question is closed by ``page``."""
    page = ns._FaqPage()
    page.ask("1.1", "First?")
    page.block.append("one")
    page.ask("1.1", "Empty?")  # nothing under it
    page.ask("1.1", "Again?")
    page.block.append("two")
    page.ask("1.1", "Third?")
    page.block.append("   ")  # blank only: asks nothing
    page.ask("1.1", "Last?")
    page.block.append("three")
    assert page.page() == "one\n\ntwo\n\nthree\n"
    assert page.qa == [
        ("1.1", "First?", "one"),
        ("1.1-2", "Again?", "two"),
        ("1.1-3", "Last?", "three"),
    ]


def test_faq_page_block_text_is_the_splitters_choice() -> None:
    """cryptsetup's blocks keep indents past two spaces (``_bullet_block``), the others'
    are dedented."""
    lines = ["  text", "      code"]
    kept = ns._FaqPage(block_text=ns._bullet_block)
    kept.ask("1.1", "Q?")
    kept.block += lines
    dedented = ns._FaqPage()
    dedented.ask("1.1", "Q?")
    dedented.block += lines
    assert kept.page() == "text\n    code\n" and dedented.page() == "text\n    code\n"
    kept2 = ns._FaqPage(block_text=ns._bullet_block)
    kept2.ask("1.1", "Q?")
    kept2.block += ["   three", "  two"]
    assert kept2.page() == "three\ntwo\n"  # (the page's leading space dropped by the join)
    assert kept2.qa == [("1.1", "Q?", "three\ntwo")]


def _set(tmp_path: Path) -> ns.NaturalSet:
    q1 = ns.NaturalQuestion("s:1", "How?", (("an answer", 1.0),))
    q2 = ns.NaturalQuestion("s:2", "Why?", (("another", 1.0), ("a second", 0.5)))
    return ns.NaturalSet("s", tmp_path, [q1, q2], "note", {"a.md": "A", "b/c.md": "C"})


def test_identity_hashes_name_the_part_that_moved(tmp_path: Path) -> None:
    """The same set hashes the same; a change to one file, one question's text, one gain or
    one question's id moves the set's hash and the hash of that part (ids are in every
    part but files)."""
    base = cni.set_hashes(_set(tmp_path))
    assert base == cni.set_hashes(_set(tmp_path))
    assert set(base) == {*cni.PARTS, "set"}

    def moved(nset: ns.NaturalSet) -> set[str]:
        now = cni.set_hashes(nset)
        return {p for p in now if now[p] != base[p]}

    s = _set(tmp_path)
    s.files["a.md"] = "A "
    assert moved(s) == {"files", "set"}
    s = _set(tmp_path)
    s.files = {"a2.md": "A", "b/c.md": "C"}  # a file renamed, same text
    assert moved(s) == {"files", "set"}
    s = _set(tmp_path)
    s.questions[0] = replace(s.questions[0], text="How so?")
    assert moved(s) == {"questions", "set"}
    s = _set(tmp_path)
    s.left_out = ("Too short?",)
    assert moved(s) == {"questions", "set"}
    s = _set(tmp_path)
    s.questions[1] = replace(s.questions[1], answers=(("another", 1.0), ("a second", 1.0)))
    assert moved(s) == {"qrels", "set"}
    s = _set(tmp_path)
    s.questions[1] = replace(s.questions[1], qid="s:3")
    assert moved(s) == {"questions", "qrels", "halves", "set"}


MARKS_ROFF = r""".TH MC 1 "2023" "4.8.29"
.SH "Menu Bar"
.SH "  Listing Format..."
This character is similar to what is displayed by ls \-F:
.B *
for executable files,
.B @
for links,
.B =
for sockets,
.B \-
for character devices.
.PP
Text after the marks.
.SH "  Sort Order..."
.TP
.B =
Make panels equal in width.
.nf
a line
===
.fi
"""


def test_roff_marks_in_running_text_make_no_heading() -> None:
    """mc(1)'s file-type marks, set in running text (``.B =`` then "for sockets,"), are
    joined to the line above them, so that no markdown reader takes "for links," or "for
    sockets," for a setext heading (treehop's own parser read "for sockets," as one, over
    the rest of the chapter); a mark that is a ``.TP`` item's tag, and a ``===`` line in an
    example, stay lines of their own."""
    from treehop.ingest import markup as mk

    page = ns.roff_page_markdown(MARKS_ROFF)
    assert "@\nfor links, =\nfor sockets, -\nfor character devices." in page
    assert "\n\n=\n\nMake panels equal in width." in page  # a .TP tag after a blank line
    assert "```\na line\n===\n```" in page
    nested = ns.mc_man_markdown(MARKS_ROFF)
    assert mk._parse_markdown(nested).headings == [
        "MC(1)",
        "Menu Bar",
        "Listing Format...",
        "Sort Order...",
    ]
    # the words a reader of man sees, in the same order
    words = " ".join(page.split())
    assert "@ for links, = for sockets, - for character devices." in words
