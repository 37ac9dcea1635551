"""A plain-text file whose first line is a comment marker alone is titled by the next line.

usage87: mutt's ``examples/`` (Debian ``mutt``) hold config files that open a comment block
with a bare ``#`` line (``Mush.rc``: ``#`` / ``# Key bindings similar to those of MUSH`` /
``#``). Each was abstracted ``#``: MCP ``ls`` and ``treehop_read`` of the folder listed
``Mush.rc: #``, ``Muttrc: #``, ``Pine.rc: #``, and the folder's own abstract (embedded) read
``examples: #; #; #; # From``. A short first line with no letter or digit names nothing: the
title is the next line that says something, and the first sentence starts there too.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.summaries import ExtractiveSummarizer, first_sentence, title_of

from treehop_test_doubles import BagOfWordsEmbedder

MUSH = "#\n# Key bindings similar to those of MUSH\n#\n\n# $Id$\n\nbind index . display-message\n"
MUTTRC = (
    "#\n# System configuration file for Mutt\n#\n\n# Default list of header fields.\nignore *\n"
)


def test_a_config_folders_files_are_abstracted_by_their_first_comment(tmp_path: Path) -> None:
    doc = tmp_path / "examples"
    doc.mkdir()
    (doc / "Mush.rc").write_text(MUSH, encoding="utf-8")
    (doc / "Muttrc").write_text(MUTTRC, encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(str(doc), target_uri="viking://resources/examples")
        shown = {e.uri.rsplit("/", 1)[1]: e.abstract for e in th.ls("viking://resources/examples")}
        overview = th.read("viking://resources/examples")
    # (ingest76's rule, merged beside this one: a text opening with a block of ``#`` comment
    # lines is abstracted from the block's words under the file's name)
    assert shown == {
        "Mush.rc": "Mush: Key bindings similar to those of MUSH",
        "Muttrc": "Muttrc: System configuration file for Mutt Default list of header fields.",
    }
    assert ": #\n" not in overview + "\n" and "Key bindings similar to those of MUSH" in overview


def test_controls_a_worded_first_line_and_a_text_of_markers_alone() -> None:
    s = ExtractiveSummarizer()
    # a first line with a word is the title, as before
    assert s.summarize_file("a.rc", "# set x\nbind y\n", "text")[0].startswith("# set x")
    # nothing but markers: the file's name says more
    assert s.summarize_file("colors.linux", "#\n#\n;;\n", "text")[0] == "colors"
    # a structured text's sentence keeps its reading (a Markdown list mark is no comment:
    # gitfaq's chunks of ``- - -`` lines kept their passage abstracts, as on the base)
    assert first_sentence("-\n\nText here.\n", "markdown", as_read=True) == "- Text here."
    assert first_sentence("- - -\n\nText here.\n", "markdown") == "- - - Text here."


_MARKER = st.sampled_from(["#", "##", "//", ";;", "--", "/*", "%", "*", "!"])
_WORDS = st.lists(st.from_regex(r"[A-Za-z][a-z]{1,8}", fullmatch=True), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(st.lists(_MARKER, min_size=1, max_size=4), _MARKER, _WORDS)
def test_property_leading_marker_lines_never_title_a_plain_text(
    leading: list[str], marker: str, words: list[str]
) -> None:
    line = f"{marker} {' '.join(words)}"
    text = "\n".join([*leading, line, marker, "", "set option = value"]) + "\n"
    assert title_of(text, "text") == line
    abstract, _ = ExtractiveSummarizer().summarize_file("conf.rc", text, "text")
    assert abstract.startswith(line) and abstract not in leading
