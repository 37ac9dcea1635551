"""A heading's title opens a file's (or a folder's) first sentence only as a whole word.

Helper usage86 kept a first sentence that opens with the page's heading as the whole
abstract (Flask's ``Gunicorn`` page: "Gunicorn is a pure Python WSGI server ..."); the test
was a plain prefix, so a title that is only the start of the first word (``Go`` over
"Google makes it.", ``Git`` over "GitHub hosts it.") was dropped from the abstract, and the
abstract no longer named the page. Composed with ingest75's rule (a reST page's docinfo
skipped), a reST page with docinfo is covered too. Screen: no abstract of the nine dev sets'
corpora (nor of any cached natural set) changes (``bench/screen_opens_with.py``).
"""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from treehop.ingest.summaries import ExtractiveSummarizer, _directory_abstract, is_label, opens_with

RST_DOCINFO = ":Author: Jan Kneschke\n:Date: $Date: 2004/11/03 22:26:05 $\n:Revision: 1.2\n\n"


def _abstract(name: str, text: str, kind: str) -> str:
    return ExtractiveSummarizer().summarize_file(name, text, kind)[0]


def test_a_markdown_title_that_is_a_prefix_of_the_first_word_stays_in_the_abstract() -> None:
    assert _abstract("go.md", "# Go\n\nGoogle makes it.\n", "markdown") == "Go: Google makes it."


def test_a_rest_page_with_docinfo_keeps_its_title_before_a_sentence_not_naming_it() -> None:
    text = "Git\n===\n\n" + RST_DOCINFO + "GitHub hosts many repositories.\n"
    assert _abstract("git.rst", text, "rst") == "Git: GitHub hosts many repositories."


def test_a_folder_page_title_that_is_a_prefix_of_the_first_word_stays_in_its_abstract() -> None:
    readme = "Git\n===\n\n" + RST_DOCINFO + "GitHub hosts many repositories.\n"
    assert _directory_abstract("git", [], readme) == "Git: GitHub hosts many repositories."


def test_control_a_rest_page_with_docinfo_whose_sentence_names_its_title_is_kept_whole() -> None:
    text = "Gunicorn\n========\n\n" + RST_DOCINFO + "Gunicorn is a pure Python WSGI server.\n"
    assert _abstract("gunicorn.rst", text, "rst") == "Gunicorn is a pure Python WSGI server."
    readme = "Gunicorn\n========\n\n" + RST_DOCINFO + "Gunicorn's workers fork.\n"
    assert _directory_abstract("g", [], readme) == "Gunicorn's workers fork."


def test_control_a_plain_text_first_line_title_stays_the_abstract_alone() -> None:
    assert _abstract("g.txt", "Gunicorn\n\nGunicorn is fast.\n", "text") == "Gunicorn"


WORDS = st.text(string.ascii_letters + string.digits, min_size=1, max_size=12)


@given(WORDS, st.sampled_from([" ", ",", "'s", ":", ".", "-"]), WORDS)
def test_opens_with_a_whole_word(title: str, sep: str, rest: str) -> None:
    assert opens_with(f"{title}{sep}{rest} x.", title)
    assert opens_with(title, title)


@given(WORDS, WORDS)
def test_a_title_glued_to_more_word_characters_opens_nothing(title: str, more: str) -> None:
    assert not opens_with(f"{title}{more} is here.", title)


TITLES = st.text(string.ascii_letters, min_size=2, max_size=12).filter(lambda t: not is_label(t))


@given(TITLES, st.text(string.ascii_lowercase, min_size=1, max_size=8), st.booleans())
def test_a_markdown_abstract_always_names_its_heading(title: str, tail: str, glued: bool) -> None:
    word = title + tail if glued else title
    abstract = _abstract("page.md", f"# {title}\n\n{word} holds it here.\n", "markdown")
    expected = f"{title}: {word} holds it here." if glued else f"{word} holds it here."
    assert abstract == expected
