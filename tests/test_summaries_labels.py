"""A numbered entry's number is not its abstract (issue 33, helper quality67).

Numbered FAQs start each entry with its number (``3.4. Is chronyd allowed to step the system
clock?``); the full stop after the number read as the first sentence's end, so a chunk's
abstract was ``3.4.`` and a file whose first line is ``13.`` was titled ``13.``."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest import summaries
from treehop.ingest.summaries import ExtractiveSummarizer, first_sentence, is_label
from treehop.ingest.tree_builder import TreeBuilder
from treehop.models import ContextType

CHRONY = (
    "3.4. Is chronyd allowed to step the system clock? By default, chronyd adjusts the "
    "clock gradually by slowing it down or speeding it up. The makestep directive ..."
)


@pytest.mark.parametrize(
    "label", ["1.", "13.", "3.4.", "A.6.4.", "Q12.", "IV.", "iv.", "W.", "2)", "(a)", "1. 2."]
)
def test_enumeration_labels_are_labels(label: str) -> None:
    assert is_label(label)
    assert is_label(f"  {label}\n")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "3.1",  # a version heading (libstdc++'s ABI history)
        "2021",  # a year heading
        "XML",  # roman-numeral letters, but a name
        "VIDIX",
        "F A Q",  # a spaced-out title
        "No.",  # a sentence
        "Yes.",
        "There are 3 ways: 1.",
        "1. " * 20,  # labels, but longer than a label is
    ],
)
def test_names_and_sentences_are_not_labels(text: str) -> None:
    assert not is_label(text)


def test_a_numbered_entry_starts_with_its_number_and_its_text() -> None:
    assert first_sentence(CHRONY, "text") == "3.4. Is chronyd allowed to step the system clock?"
    # The question deleted (as the bench does): the answer follows the number.
    assert first_sentence("13.\n\nYes, you can use partitions. More.", "text") == (
        "13. Yes, you can use partitions."
    )
    assert first_sentence("**1.** Install it first. Then run.", "markdown") == (
        "1. Install it first."
    )
    # A number inside a sentence still ends it where a full stop follows it.
    assert first_sentence("There are 3 ways: 1. foo. 2. bar.", "text") == "There are 3 ways: 1."
    # Labels alone and nothing after them: the text is all there is.
    assert first_sentence("3.4.", "text") == "3.4."


def test_a_label_title_falls_through_to_the_name_and_the_text() -> None:
    """A plain-text entry's first line ``13.`` (or a ``## 3.4.`` heading) was the title, and
    the first sentence (``13. ...``) starting with it was dropped as a repeat."""
    s = ExtractiveSummarizer()
    abstract, _ = s.summarize_file("raid-faq.txt", "13.\n\nYes, partitions work too.", "text")
    assert abstract == "raid faq: 13. Yes, partitions work too."
    abstract, _ = s.summarize_file("entry.md", "## 3.4.\n\nThe makestep directive.", "markdown")
    assert abstract == "entry: The makestep directive."
    # A title that is a name is kept.
    abstract, _ = s.summarize_file("x.md", "# XML\n\nA markup language.", "markdown")
    assert abstract == "XML: A markup language."


def test_a_folder_readme_titled_with_a_label_uses_its_name_and_sentence() -> None:
    got = summaries._directory_abstract("raid-docs", [], "# 2.\n\nHow to grow an array.")
    assert got == "raid docs: How to grow an array."
    got = summaries._directory_abstract("raid-docs", [], "2.\n\nHow to grow an array.")
    assert got == "raid docs: 2. How to grow an array."


def test_a_numbered_faq_tree_has_no_label_only_abstract(tmp_path: Path) -> None:
    """Every node of a numbered FAQ (plain text, one entry a chunk) says something."""
    entries = [
        f"{i}.\n\n" + f"Answer number {i} explains the option{i} setting in detail. " * 12
        for i in range(1, 13)
    ]
    (tmp_path / "FAQ").write_text("\n\n".join(entries), encoding="utf-8")
    (tmp_path / "README").write_text("1.\n\nThe tool keeps clocks in sync.", encoding="utf-8")
    built = TreeBuilder(chunk_chars=800).build_directory(
        tmp_path, "viking://resources/faq", ContextType.RESOURCE
    )
    chunks = [n for n in built.nodes if n.chunk_index is not None]
    assert len(chunks) >= 6
    for n in built.nodes:
        assert not is_label(n.abstract.rsplit(": ", 1)[-1]), n.abstract
        assert re.search(r"[A-Za-z]{3}", n.abstract), n.abstract


# ------------------------------------------------------------------- bounded == unbounded


def _unbounded_first_sentence(text: str, kind: str) -> str:
    """The first sentence read off the whole cleaned probe at once: the first sentence end
    whose text so far is not labels alone."""
    body = " ".join(summaries._prose_lines(text, kind))[: summaries.SENTENCE_PROBE_CHARS]
    body = summaries._MARKUP_CHARS.sub("", body)
    for m in summaries._SENT_END.finditer(body):
        if not (m.end() <= summaries._LABEL_CHARS and is_label(body[: m.end()])):
            return body[: m.end()].strip()
    return body.strip()


_PIECES = st.sampled_from(
    [
        "1.",
        "3.4.",
        "IV.",
        "W.",
        "(a)",
        "2021",
        "XML",
        "word",
        "Title",
        "x" * 130,
        " ",
        "\n",
        "\n\n",
        ".",
        "?",
        "。",
        "**",
        "`",
        "# Head\n",
        "    code\n",
    ]
)
_TEXT = st.tuples(st.lists(_PIECES, max_size=60), st.integers(0, 3)).map(
    lambda p: "".join(p[0]) * (1 + p[1] * 40)  # repeated: texts past the probes' cuts
)


@settings(max_examples=400, deadline=None)
@given(_TEXT, st.sampled_from(["markdown", "rst", "text"]))
def test_first_sentence_equals_the_unbounded_label_aware_search(text: str, kind: str) -> None:
    assert first_sentence(text, kind) == _unbounded_first_sentence(text, kind)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_is_label_never_raises_and_is_bounded(text: str) -> None:
    got = is_label(text)
    assert isinstance(got, bool)
    if got:
        assert 0 < len(text.strip()) <= summaries._LABEL_CHARS


def test_label_runs_stay_linear() -> None:
    """A text that is all labels and full stops: each search starts where the last ended."""
    for text in ("1. " * 200_000, "I." * 300_000, "(a) " * 200_000):
        t0 = time.perf_counter()
        first_sentence(text, "text")
        is_label(text)
        assert time.perf_counter() - t0 < 2.0
