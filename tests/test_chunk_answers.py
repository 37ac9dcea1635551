"""Chunks end at answer boundaries on pages without headings (issue 33, item 6): questions on
their own lines, labelled questions (``Q:``, ``3.``, ``E4)``), bold entry lines, definition
lists (``<dt>``/``<dd>``), and the passage each chunk belongs to (``Chunk.passage``). The
linear-time guards for these paths are in ``test_ingest_markup.py`` (``_ADVERSARIAL``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.ingest.chunking import split_text
from treehop.ingest.markup import html_to_markdown


def _answer(i: int, sentences: int) -> str:
    return " ".join(
        f"Answer {i} sentence {k} explains topic{i} in words." for k in range(sentences)
    )


def _owners(chunk_text: str) -> set[int]:
    """Which answers a chunk holds text of (by the ``topic<i>`` words of their sentences)."""
    return {int(m) for m in re.findall(r"topic(\d+)", chunk_text)}


def _check_boundaries(chunks: list, n_answers: int) -> None:
    """Every chunk holds words of one answer only, and every answer is somewhere."""
    seen: set[int] = set()
    for c in chunks:
        owners = _owners(c.text)
        assert len(owners) <= 1, f"chunk {c.index} spans answers {sorted(owners)}"
        seen |= owners
    assert seen == set(range(n_answers))


def _faq_page_chunks(body: str) -> list:
    """``body`` as the main part of an HTML page headed "FAQ", converted by treehop's own
    ``html_to_markdown`` and chunked at 1,000 characters."""
    text, _ = html_to_markdown(f"<html><body><main><h1>FAQ</h1>{body}</main></body></html>")
    return split_text(text, "html", 1000)


def test_questions_on_their_own_lines_start_new_chunks() -> None:
    # 6 answers of ~300 characters: the old packer put three into each 1,000-char chunk,
    # cutting the third across its boundary
    page = "\n\n".join(f"How do I configure topic{i}?\n\n{_answer(i, 6)}" for i in range(6))
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 6)
    assert len(chunks) == 6
    for i, c in enumerate(chunks):
        assert c.text.startswith(f"How do I configure topic{i}?")
        assert c.passage == c.index  # one answer each: its own passage


def test_labelled_and_numbered_questions_are_boundaries() -> None:
    labels = ["Q: ", "Q2. ", "3) ", "E4) ", "Question 5: "]
    page = "\n\n".join(
        f"{lab}Why does topic{i} fail\nwhen the cache is cold?\n{_answer(i, 8)}"
        for i, lab in enumerate(labels)
    )
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, len(labels))


def test_bold_entry_lines_are_boundaries_in_markdown() -> None:
    page = "# FAQ\n\n" + "\n\n".join(
        f"**Installing topic{i} on Windows**\n\n{_answer(i, 5)}" for i in range(5)
    )
    chunks = split_text(page, "markdown", 1000)
    _check_boundaries(chunks, 5)
    assert all(c.path == ("FAQ",) for c in chunks)


def test_definition_list_entries_are_boundaries_in_html() -> None:
    entries = "".join(
        f"<dt>topic{i} keeps failing</dt><dd><p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p></dd>"
        for i in range(5)
    )
    chunks = _faq_page_chunks(f"<dl>{entries}</dl>")
    _check_boundaries(chunks, 5)
    # the markup's boundary mark is whitespace only: no chunk text shows it
    assert all("\n\n\n" not in c.text for c in chunks)


def test_definitions_without_terms_are_boundaries_in_html() -> None:
    # a page whose questions were taken out (or never written): <dd> after <dd>
    entries = "".join(f"<dd><p>{_answer(i, 6)}</p></dd>" for i in range(5))
    text, _ = html_to_markdown(f"<html><body><main><dl>{entries}</dl></main></body></html>")
    _check_boundaries(split_text(text, "html", 1000), 5)


def test_emptied_headings_are_boundaries_in_html() -> None:
    # a question taken out of a Sphinx page's heading leaves the element and its permalink
    parts = "".join(
        f'<h3><a class="headerlink" href="#q{i}" title="Link to this heading">¶</a></h3>'
        f"<p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p>"
        for i in range(5)
    )
    chunks = _faq_page_chunks(parts)
    _check_boundaries(chunks, 5)
    assert [c.passage for c in chunks] == [c.index for c in chunks]
    assert all(c.path == ("FAQ",) for c in chunks)  # no empty heading in the path


def test_emptied_bold_questions_are_boundaries_in_html() -> None:
    # a hand-written FAQ: each question a bold paragraph, its text taken out
    parts = "".join(f"<p><b></b></p><p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p>" for i in range(5))
    _check_boundaries(_faq_page_chunks(parts), 5)
    # bold words inside an answer's text change nothing
    one = f"<p>{_answer(0, 4)} <b>Note</b> this.</p><p>{_answer(0, 4)}</p>"
    text, _ = html_to_markdown(f"<html><body><h1>FAQ</h1>{one}</body></html>")
    assert len({c.passage for c in split_text(text, "html", 1000)}) == 1


def test_sections_without_headings_are_boundaries_in_html() -> None:
    # Sphinx's <section> and DocBook's <div class="section"> whose headings were dropped
    for open_, close in (
        ("<section id='q{i}'>", "</section>"),
        ("<div class='section'>", "</div>"),
        ('<DIV\nCLASS="SECT2"\n>', "</DIV\n>"),  # DocBook DSSSL, as Debian's FAQs ship
        ("<div class='qandaentry'>", "</div>"),
    ):
        parts = "".join(
            open_.format(i=i) + f"<p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p>" + close
            for i in range(5)
        )
        _check_boundaries(_faq_page_chunks(parts), 5)


def test_section_marks_leave_pages_with_headings_as_they_were() -> None:
    # the same page with and without <section> wrappers: the same chunks
    body = "".join(
        f"<h2>Topic{i} setup</h2><p>{_answer(i, 3)}</p><p>{_answer(i, 3)}</p>" for i in range(4)
    )
    wrapped = "".join(
        f"<section><h2>Topic{i} setup</h2><p>{_answer(i, 3)}</p><p>{_answer(i, 3)}</p></section>"
        for i in range(4)
    )
    plain = split_text(
        html_to_markdown(f"<html><body><h1>Guide</h1>{body}</body></html>")[0], "html"
    )
    sect = split_text(
        html_to_markdown(f"<html><body><h1>Guide</h1>{wrapped}</body></html>")[0], "html"
    )
    assert [(c.title, c.text, c.passage) for c in sect] == [
        (c.title, c.text, c.passage) for c in plain
    ]


def test_rule_lines_are_boundaries_and_leave_no_text() -> None:
    # a Markdown thematic break, a reST transition (what is left of a title whose text was
    # deleted: its underline) and a plain-text FAQ's dashes all set entries apart
    for kind, rule in (
        ("markdown", "---"),
        ("markdown", "* * *"),
        ("rst", "-" * 40),
        ("rst", "=" * 12),
        ("text", "_" * 30),
        ("rst", "=" * 20 + "\n" + "=" * 20),  # a deleted title's over- and underline
    ):
        head = "# FAQ\n\n" if kind == "markdown" else ""
        page = head + f"\n\n{rule}\n\n".join(
            f"{_answer(i, 4)}\n\n{_answer(i, 2)}" for i in range(5)
        )
        chunks = split_text(page, kind, 1000)
        _check_boundaries(chunks, 5)
        assert all(rule not in c.text for c in chunks), (kind, rule)


def test_html_rules_are_boundaries() -> None:
    parts = "<hr>".join(f"<p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p>" for i in range(5))
    _check_boundaries(_faq_page_chunks(parts), 5)


def test_rule_lines_in_code_or_inside_a_paragraph_stay_text() -> None:
    code = "```\noutput of topic0\n\n--------\n\nmore output of topic0\n```"
    page = f"# Log\n\n{_answer(0, 2)}\n\n{code}\n\n{_answer(0, 2)}"
    chunks = split_text(page, "markdown", 1000)
    assert len(chunks) == 1 and "--------" in chunks[0].text
    # a line of dashes inside a run of lines is part of that block (an ASCII table rule)
    table = "name    value\n-------------\ntopic0  1"
    chunks = split_text(f"{_answer(0, 2)}\n\n{table}\n\n{_answer(0, 2)}", "text", 1000)
    assert len(chunks) == 1 and "-------------" in chunks[0].text


def test_field_lists_inside_an_entry_do_not_split_it() -> None:
    # Sphinx's API entries hold "Parameters" / "Returns" field lists: part of the answer
    entry = (
        "<dl class='py function'><dt>topic0.run(x)</dt><dd><p>Runs topic0.</p>"
        "<dl class='field-list simple'><dt>Parameters</dt><dd>x the topic0 input</dd>"
        "<dt>Returns</dt><dd>the topic0 result</dd></dl></dd></dl>"
    )
    text, _ = html_to_markdown(f"<html><body><main><h1>API</h1>{entry}</main></body></html>")
    chunks = split_text(text, "html", 1000)
    assert len(chunks) == 1
    assert "Parameters" in chunks[0].text and "Runs topic0." in chunks[0].text


def test_a_long_answer_cut_by_size_is_one_passage() -> None:
    page = "\n\n".join(
        [
            "How do I tune topic0?",
            *(_answer(0, 5) for _ in range(6)),  # ~1,800 characters: cut by size
            "How do I tune topic1?",
            _answer(1, 4),
        ]
    )
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 2)
    first = [c for c in chunks if _owners(c.text) == {0}]
    second = [c for c in chunks if _owners(c.text) == {1}]
    assert len(first) >= 2
    assert {c.passage for c in first} == {first[0].index}  # one passage, cut by size
    assert [c.passage for c in second] == [second[0].index]


def test_small_entries_still_join_their_question() -> None:
    # a lone question (shorter than a quarter of the size) joins its answer
    page = "Why?\n\nBecause topic0 says so, in a sentence of its own here."
    chunks = split_text(page, "text", 1000)
    assert len(chunks) == 1 and chunks[0].text.startswith("Why?")


def test_sections_with_headings_keep_their_passages() -> None:
    page = "# Guide\n\n## A\n\n" + _answer(0, 3) + "\n\n## B\n\n" + _answer(1, 30)
    chunks = split_text(page, "markdown", 1000)
    b = [c for c in chunks if c.path == ("Guide", "B")]
    assert len(b) >= 2 and {c.passage for c in b} == {b[0].index}
    a = [c for c in chunks if c.path[-1:] == ("A",)]
    assert a and a[0].passage != b[0].passage


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "Q: ", "**", "1. ", "\n\n"]),
            st.text(alphabet="ab ?.\n*:", max_size=80),
        ),
        max_size=40,
    )
)
def test_any_text_chunks_into_passages_that_cover_it(parts: list[tuple[str, str]]) -> None:
    """Whatever the markers, every chunk's passage is itself or an earlier chunk's, a
    passage's chunks are consecutive, and no word of the input is lost."""
    text = "\n\n".join(a + b for a, b in parts)
    chunks = split_text(text, "markdown", 200)
    words = [w for w in re.split(r"[\s*]+", text) if w and not w.startswith("#")]
    joined = " ".join(c.text for c in chunks)
    for w in words:
        assert w.strip("\\") in joined.replace("\\", "") or not w.strip("\\")
    for k, c in enumerate(chunks):
        assert c.index == k
        assert c.passage <= c.index
        assert c.passage == c.index or chunks[c.index - 1].passage == c.passage


def test_a_short_answer_ends_before_the_next_question() -> None:
    # a one-line answer is shorter than a quarter of the size: it used to wait for (and join)
    # the next question, so one chunk held the end of one answer and the start of the next
    page = "\n\n".join(
        [
            "Is topic0 supported?",
            "Yes, topic0 is supported.",
            "How do I configure topic1?",
            _answer(1, 6),
        ]
    )
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 2)
    assert [c.text.split("\n", 1)[0] for c in chunks] == [
        "Is topic0 supported?",
        "How do I configure topic1?",
    ]


def test_the_tail_of_an_answer_cut_by_size_does_not_join_the_next_question() -> None:
    # lsof's FAQ: an answer a little over the size left a short tail, which joined the next
    # question and its answer (41 of the FAQ's chunks began mid-entry, 7 after)
    long_answer = [_answer(0, 4) for _ in range(5)]  # 5 paragraphs: the piece is ~970 chars
    page = "\n\n".join(
        [
            "How do I tune topic0?",
            *long_answer,
            "The topic0 tail is one more sentence that takes the piece past the size.",
            "How do I tune topic1?",
            _answer(1, 5),
        ]
    )
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 2)
    tail = next(c for c in chunks if "The topic0 tail" in c.text)
    # the tail (a sentence alone) took paragraphs from the piece before it: a chunk of its
    # answer's own text, not one line, and both pieces still within the size
    assert len(tail.text) >= 250 and tail.text.startswith("Answer 0")
    assert chunks[0].text.startswith("How do I tune topic0?")
    assert all(len(c.text) <= 1000 for c in chunks)
    assert "topic1" not in tail.text
    assert tail.passage == chunks[0].index  # it continues the first answer's passage
    assert chunks[-1].text.startswith("How do I tune topic1?")


def test_numbered_title_lines_start_entries_in_plain_text() -> None:
    # plain-text FAQs and manuals number their entries ("3.2.3  Other header file problems");
    # a one-level "1." is a list item inside an answer, not an entry
    titles = ["3.2.3\tOther topic0 problems", "3.2.4  The topic1 locale", "10.2 /dev/topic2 notes"]
    page = "\n\n".join(
        f"{t}\n\n1.  First, topic{i} step.\n\n2.  Then topic{i} step.\n\n{_answer(i, 2)}"
        for i, t in enumerate(titles)
    )
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 3)
    assert [c.text.split("\n", 1)[0] for c in chunks] == titles
    # a numbered sentence on its own line is not a title
    prose = f"{_answer(0, 3)}\n\n2.5 topic0 units are enough.\n\n{_answer(0, 3)}"
    assert len(split_text(prose, "text", 1000)) == 1


LABELS_ALONE = [
    "(1)",
    "2.",
    "3.1.",
    "4.2",
    "5)",
    "(f)",
    "Q:",
    "Q8.",
    "Question 9:",
    "E4)",
    "**11.**",
]


def test_a_label_left_alone_where_a_question_was_starts_an_entry() -> None:
    """A question whose text was taken out in place leaves its number or label on a line of
    its own (``(1)``, ``3.1.``, ``Q:``): that line starts a new entry, in every kind."""
    for kind in ("markdown", "text", "rst"):
        head = "# FAQ\n\n" if kind == "markdown" else ""
        page = head + "\n\n".join(
            f"{lab}\n\n{_answer(i, 4)}\n\n{_answer(i, 2)}" for i, lab in enumerate(LABELS_ALONE)
        )
        chunks = split_text(page, kind, 1000)
        _check_boundaries(chunks, len(LABELS_ALONE))
        assert len({c.passage for c in chunks}) == len(LABELS_ALONE), kind
    page = "".join(
        f"<p><b>({i + 1})</b></p><p>{_answer(i, 4)}</p><p>{_answer(i, 2)}</p>" for i in range(5)
    )
    _check_boundaries(_faq_page_chunks(page), 5)


def test_a_label_over_the_answer_line_starts_an_entry() -> None:
    """``Q:`` left over ``A: <answer>`` (a Q/A FAQ whose question text was taken out), or
    a number over the answer's first line: the block starts an entry."""
    for label in ("Q:\nA: ", "2.1.\n", "(3)\n"):
        page = "\n\n".join(f"{label}{_answer(i, 6)}\n\n{_answer(i, 3)}" for i in range(4))
        _check_boundaries(split_text(page, "text", 1000), 4)


def test_values_and_indented_examples_are_not_labels() -> None:
    """A decimal value (``0.707``, ``1.414``), a bare integer (a page number), ``A:``, or a
    label-like line of an indented example (``y)`` in Vim) continues its answer."""
    for line in ("0.707", "1.414", "12", "A:", "    y)", "a"):
        page = f"{_answer(0, 3)}\n\n{line}\n\n{_answer(0, 3)}"
        chunks = split_text(page, "text", 1000)
        assert len(chunks) == 1 and len({c.passage for c in chunks}) == 1, line


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(1, 99), min_size=1, max_size=4),
    st.sampled_from([".", ")", ""]),
    st.booleans(),
)
def test_any_section_number_alone_is_a_label(parts: list[int], end: str, bold: bool) -> None:
    """Every ``N.M.K`` section number (with or without a closing ``.`` or ``)``; a single
    level needs one), bold or not, marks the entry it stood for."""
    label = ".".join(map(str, parts)) + end
    if len(parts) == 1 and not end:
        label += "."
    if bold:
        label = f"**{label}**"
    page = f"{_answer(0, 8)}\n\n{label}\n\n{_answer(1, 8)}"
    chunks = split_text(page, "text", 1000)
    _check_boundaries(chunks, 2)


def _codec_table(i: int) -> str:
    """A texinfo-style table of one-word terms and short definitions (an FFmpeg FAQ answer's
    list of codecs): part of the answer around it, not a list of answers."""
    rows = "".join(
        f"<dt><span><samp>codec{k}x{i}</samp></span></dt><dd><p>.avi only for topic{i}</p></dd>"
        for k in range(6)
    )
    return f'<dl compact="compact">{rows}</dl>'


def test_a_table_as_a_definition_list_stays_inside_its_answer() -> None:
    # texi2html's <dl> of codecs inside an answer under an emptied heading: each short row
    # used to be an entry of its own, one 20-character chunk per codec, and the answer's
    # closing note joined the last row instead of the answer
    parts = "".join(
        f"<h3 class='section'><a class='anchor' aria-hidden='true' href='#q{i}'>#</a></h3>"
        f"<p>{_answer(i, 2)}</p><p>The following list works for topic{i}:</p>"
        f"{_codec_table(i)}<p>Note that topic{i} needs {_answer(i, 1)}</p>"
        for i in range(4)
    )
    chunks = _faq_page_chunks(parts)
    _check_boundaries(chunks, 4)
    assert len(chunks) == 4  # one per answer: its text, its table and its note together
    for i, c in enumerate(chunks):
        assert f"codec0x{i}" in c.text and f"codec5x{i}" in c.text and "Note that" in c.text


def test_definition_lists_of_short_questions_keep_their_entries() -> None:
    # short answers, but the terms are questions: an FAQ, every entry its own answer
    entries = "".join(
        f"<dt>Does topic{i} run on Windows?</dt><dd>Yes, topic{i} does.</dd>" for i in range(5)
    )
    chunks = _faq_page_chunks(f"<dl>{entries}</dl>")
    _check_boundaries(chunks, 5)
    assert len(chunks) == 5


@pytest.mark.parametrize("table_first", [False, True])
def test_a_table_inside_an_answer_entry_keeps_the_answers_apart(table_first: bool) -> None:
    """gitfaq-like answers (long ``<dd>``s), one short table each, after the answer's text
    or opening it: the answers stay apart and the table stays inside its answer (the table's
    rows never take back the *answer's* entry mark: a mark belongs to the list whose entry
    set it)."""
    entries = "".join(
        f"<dt></dt><dd>{_codec_table(i)}<p>{_answer(i, 5)}</p></dd>"
        if table_first
        else f"<dt></dt><dd><p>{_answer(i, 5)}</p>{_codec_table(i)}</dd>"
        for i in range(4)
    )
    chunks = _faq_page_chunks(f"<dl>{entries}</dl>")
    _check_boundaries(chunks, 4)
    assert len(chunks) == 4


_DL_PARTS = [
    "<dl>",
    "</dl>",
    "<dl class='field-list'>",
    "<dt>",
    "</dt>",
    "<dd>",
    "</dd>",
    "<p>",
    "</p>",
    "<section>",
    "</section>",
    "<hr>",
    " word ",
    " Why? ",
    " " + "long " * 60,
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_DL_PARTS), max_size=50))
def test_definition_list_marks_are_whitespace_only(parts: list[str]) -> None:
    """However lists, terms, definitions and sections nest or fail to close, undoing a
    table row's entry mark takes back whitespace only: every word of the page is in the
    text, in order, and so in its chunks."""
    page = "".join(parts)
    text, _ = html_to_markdown(page)
    words = re.findall(r"word|Why\?|long", page)
    assert re.findall(r"word|Why\?|long", text) == words
    assert "\n\n\n\n" not in text  # a mark is one blank line more, never two
    chunks = split_text(text, "html", 300)
    assert re.findall(r"word|Why\?|long", " ".join(c.text for c in chunks)) == words
