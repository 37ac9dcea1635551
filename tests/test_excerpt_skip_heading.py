"""With ``excerpt_skip_heading`` (``EXCERPT_SKIP_HEADING``,
``RetrievalConfig.excerpt_skip_heading``; off by default) a query excerpt's window is weighed
without the words of the chunk's heading line: the heading path is shared by every part of
the chunk, and its query words made the chunk's start tie with or beat the window that holds
the answer, so the excerpt kept the heading's neighbourhood (bench/README.md, quality73's
excerpt losses; helper quality75)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from test_excerpt_paragraphs import client_blocks
from treehop import RetrievalConfig
from treehop.context_assembly import (
    _query_window,
    _sentence_bounds,
    assemble_context,
    default_token_counter,
    query_terms,
)
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, MatchedContext

ROOT = "viking://resources/docs"
HEADING = "Linker › Missing symbols"
INTRO = " ".join(
    f"Static builds need option {n} passed to configure before make runs again, and the"
    " configure script then writes a new cache file, checks every compiler flag it was given"
    " and prints a summary of the features it found on this machine."
    for n in range(6)
)
ANSWER = (
    "The linker warns of missing symbols when C headers lack an extern block. "
    "Wrap them and rebuild every object file."
)
CHUNK = f"{HEADING}\n\n{INTRO}\n\n{ANSWER}"
QUERY = "Why does the linker report missing symbols?"


def _chunk(content: str) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/faq.md#chunk-3",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract=HEADING,
        content=content,
        score=0.9,
        chunk_index=3,
    )


def _chars(a: int, b: int) -> int:
    return b - a


def _room() -> int:
    """A budget that holds the answer and a little more, not the chunk."""
    counter = default_token_counter()
    room = counter.count(ANSWER) + 45  # the answer and its line, no intro sentence besides
    assert counter.count(CHUNK) > 2 * room
    return room


def test_the_heading_words_no_longer_keep_the_start() -> None:
    bounds = _sentence_bounds(CHUNK)
    terms = query_terms(QUERY)
    room = len(ANSWER) + 40  # in characters here: the answer, no intro sentence besides
    # counted, the heading's words make the start weigh as much as the answer: no window beats
    # the edge, and the excerpt would keep the heading and the intro
    assert _query_window(CHUNK, bounds, terms, _chars, room, False) is None
    span = _query_window(CHUNK, bounds, terms, _chars, room, False, skip_before=len(HEADING))
    assert span is not None
    assert ANSWER in CHUNK[span[0] : span[1]]


def test_a_chunk_matched_only_by_its_heading_keeps_its_start() -> None:
    text = f"{HEADING}\n\n{INTRO}\n\nNothing here asks anything."
    bounds = _sentence_bounds(text)
    room = len(INTRO) // 2
    got = _query_window(
        text, bounds, query_terms(QUERY), _chars, room, False, skip_before=len(HEADING)
    )
    assert got is None  # no word outside the heading: the excerpt keeps the start, as before


def test_the_block_keeps_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    room = _room()
    on = assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_skip_heading=True)
    assert on.tokens <= room and on.sections[0].excerpt
    assert ANSWER in on.text and "option 0" not in on.text
    off = assemble_context(
        [_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_skip_heading=False
    )
    assert off.tokens <= room and ANSWER not in off.text and "option 0" in off.text
    # the module default (off) is what a call without the argument takes
    assert assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY).text == off.text
    monkeypatch.setattr(ca, "EXCERPT_SKIP_HEADING", True)
    assert assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY).text == on.text
    again = assemble_context(
        [_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_skip_heading=False
    )
    assert again.text == off.text


def test_a_chunk_without_a_heading_line_is_weighed_as_before() -> None:
    # no blank line after the first line: it is a sentence of the text, and its words count
    text = f"{HEADING}.\n{INTRO}\n\n{ANSWER}"
    room = _room()
    on = assemble_context([_chunk(text)], max_tokens=room, query=QUERY, excerpt_skip_heading=True)
    off = assemble_context([_chunk(text)], max_tokens=room, query=QUERY)
    assert on.text == off.text


def test_a_non_bool_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="excerpt_skip_heading"):
        assemble_context([_chunk(CHUNK)], max_tokens=50, query=QUERY, excerpt_skip_heading=1)  # type: ignore[arg-type]


WORDS = ["linker fails.", "symbols gone!", "filler text.", "x y", "missing:"]


@settings(max_examples=80, deadline=None)
@given(
    heading=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
    paras=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=5
    ),
    room=st.integers(1, 200),
    from_end=st.booleans(),
)
def test_skipping_is_blanking_the_heading(
    heading: list[str], paras: list[list[str]], room: int, from_end: bool
) -> None:
    # weighing without the heading's words is weighing the same text with the heading's
    # letters replaced by a word no query holds (same sentences, same lengths)
    head = " ".join(heading)
    body = "\n\n".join(" ".join(p) for p in paras)
    text = f"{head}\n\n{body}"
    blank = f"{re.sub(r'[a-z]', 'q', head)}\n\n{body}"
    bounds = _sentence_bounds(text)
    assert bounds == _sentence_bounds(blank)
    terms = query_terms("linker symbols missing")
    got = _query_window(text, bounds, terms, _chars, room, from_end, skip_before=len(head))
    assert got == _query_window(blank, bounds, terms, _chars, room, from_end)


def test_the_client_reads_the_option(tmp_path: Path) -> None:
    room = _room()
    page = f"# Linker missing symbols\n\n{INTRO}\n\n{ANSWER}\n"
    got = client_blocks(tmp_path, page, QUERY, room, "excerpt_skip_heading")
    assert RetrievalConfig().excerpt_skip_heading is False
    assert got[True].tokens <= room and any(s.excerpt for s in got[True].sections)
    assert ANSWER in got[True].text and ANSWER not in got[False].text
