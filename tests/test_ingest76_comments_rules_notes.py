"""The ingest items helper ingest75 counted and left open (stop 75), fixed by helper ingest76.

- reST comments (``.. -*- coding: utf-8 -*-``, ``.. NOTE TO MAINTAINERS: ...``) and
  ``.. include::`` lines were text of a page's passages (docutils shows neither);
- a field list at the start of a page whose first title is one of several top-level
  sections was dropped as docinfo (docutils shows it: there is no document title);
- a page short enough to be one node kept its rule lines (``=====``, ``#####``);
- a Sphinx version note with no text of its own ("New in version 2.0.") was a page's first
  sentence and so its file's abstract (Flask's ``Using async and await: New in version
  2.0.``, phpMyAdmin's ``Charts: New in version 3.4.0.``);
- a plain text that opens with ``#`` comment lines (nginx's ``examples/http``, Apache's
  ``cgi-examples/printenv``) was abstracted ``# File:: # File: # http # Description: ...``.
"""

from __future__ import annotations

import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from test_ingest75_rst_unshown import _build  # (the same folder built into nodes)
from treehop.ingest import markup, summaries
from treehop.ingest.chunking import split_text
from treehop.ingest.summaries import ExtractiveSummarizer, first_sentence
from treehop.ingest.tree_builder import _leaf_text


def _out(text: str) -> str:
    return "\n".join(markup.rst_unshown_out(text.split("\n")))


FAQ = (
    ".. -*- coding: utf-8 -*-\n\n.. NOTE TO MAINTAINERS: Please add new questions\n"
    "   to the end of their sections.\n\n"
    "=====\nTools\n=====\n\n.. include:: ../header.txt\n\n"
    "Intro\n=====\n\nThe tools directory holds the front ends.\n\n"
    "..\n   An indented comment body.\n\n"
    "Usage\n=====\n\n"
    + "".join(f"The front end number {i} converts a file to HTML or LaTeX.\n\n" for i in range(40))
)


def test_comments_and_include_lines_are_no_text_of_any_chunk(tmp_path: Path) -> None:
    nodes = _build(tmp_path, {"tools.txt": FAQ})
    chunks = [n for k, n in nodes.items() if k.startswith("tools.txt#")]
    assert len(chunks) > 1
    for c in chunks:
        text = c.content  # type: ignore[attr-defined]
        for gone in (
            "coding: utf-8",
            "NOTE TO MAINTAINERS",
            "end of their",
            "include::",
            "comment",
        ):
            assert gone not in text, (gone, text)
    assert "The tools directory holds the front ends." in nodes["tools.txt#chunk-0"].content  # type: ignore[attr-defined]
    # the first chunk is the page's, not a titleless ``.. -*- coding: utf-8 -*-``
    assert next(c.title for c in split_text(FAQ, "rst", 1000)) == "Tools › Intro"


def test_targets_footnotes_substitutions_directives_and_an_empty_comment_stay() -> None:
    text = (
        "Title\n=====\n\n.. _label:\n\nText [1]_ with |x|.\n\n.. [1] A footnote.\n\n"
        ".. |x| replace:: an ex\n\n.. note:: Keep this.\n\n.. py:function:: f(a)\n\n   Doc.\n\n"
        "- a list\n\n..\n\n   A block quote after an empty comment.\n"
    )
    out = _out(text)
    for kept in (
        ".. _label:",
        ".. [1] A footnote.",
        ".. |x| replace:: an ex",
        ".. note:: Keep this.",
        ".. py:function:: f(a)",
        "   Doc.",
        "   A block quote after an empty comment.",
    ):
        assert kept in out, kept
    assert "\n..\n" not in out  # the empty comment itself is no text


def test_a_field_list_under_one_of_several_top_level_sections_is_shown() -> None:
    text = (
        "Install\n=======\n\n:Requires: Python 3.8\n:Platforms: Linux, macOS\n\n"
        "Run the installer.\n\nUse\n===\n\nRun the tool.\n"
    )
    out = _out(text)
    assert ":Requires: Python 3.8" in out and ":Platforms: Linux, macOS" in out
    chunk = split_text(text, "rst", 1000)[0]
    assert chunk.title == "Install" and ":Requires: Python 3.8" in chunk.text


def test_a_docinfo_under_the_documents_title_is_still_dropped() -> None:
    """Control (passes on the base): one top-level title, sections below it."""
    text = (
        "Install\n=======\n\n:Author: Jan\n:Date: $Date: 2004 $\n\nRun the installer.\n\n"
        "Use\n---\n\nRun the tool.\n\nMore\n----\n\nAnd more.\n"
    )
    out = _out(text)
    assert ":Author:" not in out and "$Date" not in out and "Run the installer." in out


def test_a_one_node_page_loses_its_rules(tmp_path: Path) -> None:
    nodes = _build(
        tmp_path,
        {
            "BUGS": "BUGS\n====\n\nThis file lists known bugs.\n\n- one\n",
            "page.txt": "=====\nTitle\n=====\n\nSome text.\n\n    ====\n    kept\n",
            "script": "#####\n# setup\n#####\nrun --fast\n",
        },
    )
    assert nodes["BUGS"].content == "BUGS\n\nThis file lists known bugs.\n\n- one"  # type: ignore[attr-defined]
    page = nodes["page.txt"].content  # type: ignore[attr-defined]
    assert page == "Title\n\nSome text.\n\n    ====\n    kept", page  # an indented one stays
    assert nodes["script"].content == "# setup\nrun --fast"  # type: ignore[attr-defined]


def test_markdown_and_code_one_node_pages_are_unchanged() -> None:
    """Control (passes on the base): a Markdown setext underline and a code file's lines."""
    assert _leaf_text("Title\n=====\n\nText.", "markdown") == "Title\n=====\n\nText."
    assert _leaf_text("x = 1\n#####\n", "code") == "x = 1\n#####"


def test_a_bare_version_note_is_no_first_sentence() -> None:
    page = (
        "# Using async and await\n\nNew in version 2.0.\n\n"
        "Routes, error handlers and other functions can be coroutines.\n"
    )
    assert first_sentence(page) == ("Routes, error handlers and other functions can be coroutines.")
    abstract = ExtractiveSummarizer().summarize_file("async-await.md", page, "markdown")[0]
    assert abstract == (
        "Using async and await: Routes, error handlers and other functions can be coroutines."
    )
    two = "Added in version 4.8.0.\n\n*Changed in version 5.0.*\n\nSince 4.8 you can log in."
    assert first_sentence(two) == "Since 4.8 you can log in."
    assert first_sentence(two, "markdown", as_read=True) == "Since 4.8 you can log in."


def test_a_version_note_with_its_own_text_is_kept() -> None:
    """Control (passes on the base)."""
    text = "Changed in version 1.4: Session transaction management has been revised."
    assert first_sentence(text) == text
    assert first_sentence("New in version 2 of the API, tokens expire.") == (
        "New in version 2 of the API, tokens expire."
    )


NGINX = (
    "##\n#  File:\n#    http\n#  Description:\n"
    "#    This file is meant to deliver a basic understanding of the http block.\n##\n\n"
    "# All web configuration should be inside of the http block.\nhttp {\n\tsendfile on;\n}\n"
)


def test_a_commented_configuration_is_abstracted_from_its_comments_words() -> None:
    s = ExtractiveSummarizer()
    assert s.summarize_file("http", NGINX, "text")[0] == (
        "http: File: http Description: This file is meant to deliver a basic understanding "
        "of the http block."
    )
    script = "#!/bin/sh\n#\n# printenv prints the environment.\n# It is a CGI example.\necho\n"
    assert s.summarize_file("printenv", script, "text")[0] == (
        "printenv: printenv prints the environment."
    )


def test_a_single_hash_line_and_code_are_read_as_before() -> None:
    """Control (passes on the base): one ``#`` line over prose is a plain text's title."""
    s = ExtractiveSummarizer()
    text = "# Notes on the build\n\nThe build needs make.\n"
    assert s.summarize_file("NOTES", text, "text")[0] == "# Notes on the build"
    py = "# Tools for the build.\n# More.\nimport os\n"
    assert s.summarize_file("b.py", py, "code") == s.summarize_file("b.py", py, "code")
    assert s.summarize_file("b.py", py, "code")[0].startswith("Tools for the build")


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_SENTENCE = st.lists(_WORD, min_size=1, max_size=8).map(lambda ws: " ".join(ws).capitalize() + ".")


@settings(max_examples=100, deadline=None)
@given(
    comments=st.lists(st.lists(_WORD, min_size=0, max_size=5), min_size=1, max_size=4),
    bodies=st.lists(st.lists(_WORD, min_size=1, max_size=4), min_size=1, max_size=4),
    paragraphs=st.lists(_SENTENCE, min_size=1, max_size=4),
)
def test_comments_never_change_what_a_page_reads_as(comments, bodies, paragraphs):  # type: ignore[no-untyped-def]
    """Any comments (words after ``..``, none a directive's ``name::``; an indented body
    or none) anywhere between a titled page's paragraphs leave it reading exactly as the
    page without them, every paragraph kept."""
    clean = "Title\n=====\n\n" + "\n\n".join(paragraphs) + "\n"
    parts = ["Title\n=====\n"]
    for i, p in enumerate(paragraphs):
        words = comments[i % len(comments)]
        body = bodies[i % len(bodies)]
        comment = (".. " + " ".join(words)).rstrip() if words else ".."
        if words or i % 2:
            comment += "\n" + "\n".join("   " + w for w in body)
        parts += [comment, p]
    page = "\n\n".join(parts) + "\n"
    assert [(c.title, c.text) for c in split_text(page, "rst", 200)] == [
        (c.title, c.text) for c in split_text(clean, "rst", 200)
    ]
    out = _out(page)
    assert ".." not in out
    for p in paragraphs:
        assert p in out


@settings(max_examples=100, deadline=None)
@given(
    versions=st.lists(
        st.from_regex(r"[0-9]{1,2}(\.[0-9]{1,2}){0,2}", fullmatch=True), min_size=1, max_size=3
    ),
    verb=st.sampled_from(["New in", "Added in", "Changed in", "Deprecated since"]),
    sentence=_SENTENCE,
    marks=st.sampled_from(["", "*", "_"]),
)
def test_bare_version_notes_never_are_the_first_sentence(versions, verb, sentence, marks):  # type: ignore[no-untyped-def]
    notes = "\n\n".join(f"{marks}{verb} version {v}.{marks}" for v in versions)
    text = f"{notes}\n\n{sentence}\n"
    assert first_sentence(text, "markdown") == first_sentence(sentence, "markdown")
    assert first_sentence(text, "rst", as_read=True) == first_sentence(
        sentence, "rst", as_read=True
    )
    # a note with its own text is a sentence of the page
    own = f"{verb} version {versions[0]}: {sentence}"
    assert first_sentence(own, "markdown") == own


@settings(max_examples=100, deadline=None)
@given(
    lines=st.lists(st.lists(_WORD, min_size=1, max_size=6), min_size=2, max_size=6),
    hashes=st.sampled_from(["#", "##", "# ", "#   "]),
    rule=st.booleans(),
)
def test_an_opening_comment_block_reads_as_its_words(lines, hashes, rule):  # type: ignore[no-untyped-def]
    """Two or more ``#`` lines with words open a plain text: its abstract is the file's
    name and the first sentence of those words, no ``#`` in it."""
    words = [" ".join(ws) for ws in lines]
    block = "\n".join(hashes + w for w in words)
    text = ("#####\n" if rule else "") + block + "\ncommand --flag\n"
    abstract = ExtractiveSummarizer().summarize_file("example", text, "text")[0]
    assert "#" not in abstract
    expected = "example: " + first_sentence("\n".join(words), "text")
    assert abstract == summaries._cut(" ".join(expected.split()), summaries.ABSTRACT_CHARS)


def test_the_new_readers_are_linear() -> None:
    """Runs of comments, of empty comments, of field lists under titles, of version notes and
    of comment lines are each read once."""

    def cost(fn, text: str) -> float:  # type: ignore[no-untyped-def]
        best = float("inf")
        for _ in range(3):
            t = time.process_time()
            fn(text)
            best = min(best, time.process_time() - t)
        return best

    def unshown(text: str) -> object:
        return markup.rst_unshown_out(text.split("\n"))

    def abstract(text: str) -> object:
        return ExtractiveSummarizer().summarize_file("x", text, "text")

    cases = [
        (unshown, ".. a comment\n   body\n"),
        (unshown, "..\n\n"),
        (unshown, "T\n=\n\n:a: b\n"),
        (unshown, "=\nT\n=\n:a: b\n"),
        (first_sentence, "New in version 1.0. "),
        (first_sentence, "New in version " + "1" * 30 + " "),
        (abstract, "# a b\n"),
        (abstract, "#\n"),
    ]
    for fn, unit in cases:
        small, big = cost(fn, unit * 10_000), cost(fn, unit * 40_000)
        assert big < 12 * small + 0.5, (unit, small, big)
