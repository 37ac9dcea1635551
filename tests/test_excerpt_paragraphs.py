"""With ``excerpt_paragraphs`` (``EXCERPT_PARAGRAPHS``, ``RetrievalConfig.excerpt_paragraphs``;
off by default: no dev gain with its interval above zero) a query excerpt starts at the
paragraph of its first matching sentence where that window holds the query's words as well
as the best one: an
FAQ chunk holds the tail of one answer, a whole answer and the start of the next, and the
earliest best window opened inside the answer before the matched one, cutting the matched
answer's end (bench/README.md, "The excerpt window starts at a paragraph (helper
quality73)")."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import RetrievalConfig, Treehop
from treehop.context_assembly import (
    AssembledContext,
    _paragraph_starts,
    _query_window,
    _sentence_bounds,
    assemble_context,
    default_token_counter,
    query_terms,
)
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, MatchedContext
from treehop.text_tokenize import tokenize

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/docs"
EARLIER = " ".join(
    f"Static builds need option {n} passed to configure before make runs again." for n in range(6)
)
MATCHED = "The linker complains about missing symbols in a C++ application."
REST = (
    'Wrap the C headers in an extern "C" block before including them. '
    "Then rebuild every object file so that the old mangled names are gone."
)
NEXT = " ".join(f"Posting to the mailing list needs a full log, item {n}." for n in range(6))
CHUNK = f"Usage › Questions\n\n{EARLIER}\n\n{MATCHED} {REST}\n\n{NEXT}"
QUERY = "Why does the linker complain about missing symbols in my C++ application?"


def _chunk(content: str) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/faq.md#chunk-3",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="Usage › Questions",
        content=content,
        score=0.9,
        chunk_index=3,
    )


def _room() -> int:
    """A budget that holds the matched answer and about as much again, not the chunk."""
    counter = default_token_counter()
    room = 2 * counter.count(f"{MATCHED} {REST}") + 12
    assert counter.count(CHUNK) > 2 * room
    return room


def test_paragraph_starts_are_the_sentences_after_a_blank_line() -> None:
    text = "One. Two.\n\nThree. Four.\nFive.\n\n\nSix."
    bounds = _sentence_bounds(text)
    starts = _paragraph_starts(text, bounds)
    firsts = sorted(text[bounds[i] :].strip().split(".")[0] for i in starts)
    assert firsts == ["One", "Six", "Three"]  # not "Two" (a sentence), nor "Five" (a line)


def test_the_window_starts_at_the_matched_answers_paragraph() -> None:
    bounds = _sentence_bounds(CHUNK)
    terms = query_terms(QUERY)
    room = len(MATCHED) + len(REST) + 200  # in characters here

    def between(a: int, b: int) -> int:
        return b - a

    span = _query_window(
        CHUNK, bounds, terms, between, room, False, _paragraph_starts(CHUNK, bounds)
    )
    assert span is not None
    got = CHUNK[span[0] : span[1]].strip()
    assert got.startswith(MATCHED) and REST in got
    # without paragraphs: the earliest window of the same weight, inside the answer before,
    # which the room then ends before the matched answer's last sentence
    old = _query_window(CHUNK, bounds, terms, between, room, False)
    assert old is not None and old[0] < span[0]
    assert "option 5" in CHUNK[old[0] : old[1]] and REST not in CHUNK[old[0] : old[1]]


def test_the_block_keeps_the_whole_matched_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    room = _room()
    out = assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_paragraphs=True)
    assert out.tokens <= room and out.sections[0].excerpt
    assert f"- … {MATCHED} {REST}" in out.text and "option" not in out.text
    off = assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_paragraphs=False)
    assert off.tokens <= room and MATCHED in off.text and REST not in off.text
    # the module default (off) is what a call without the argument takes
    assert assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY).text == off.text
    monkeypatch.setattr(ca, "EXCERPT_PARAGRAPHS", True)
    assert assemble_context([_chunk(CHUNK)], max_tokens=room, query=QUERY).text == out.text
    again = assemble_context(
        [_chunk(CHUNK)], max_tokens=room, query=QUERY, excerpt_paragraphs=False
    )
    assert again.text == off.text


def test_a_paragraph_window_never_holds_fewer_query_words() -> None:
    # the best words sit in a paragraph's second sentence: a window from that paragraph's
    # start cannot hold them and the next paragraph's match too, so the best window is kept
    first = "Filler about builds. The linker and missing symbols are here."
    second = "More text on C++ application linking problems with symbols."
    text = f"{first}\n\n{second}"
    bounds = _sentence_bounds(text)
    terms = query_terms(QUERY)

    def between(a: int, b: int) -> int:
        return b - a

    room = len(text) - len("Filler about builds.")
    new = _query_window(text, bounds, terms, between, room, False, _paragraph_starts(text, bounds))
    assert new == _query_window(text, bounds, terms, between, room, False)
    assert new is not None and new[0] > 0


def test_a_non_bool_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="excerpt_paragraphs"):
        assemble_context([_chunk(CHUNK)], max_tokens=50, query=QUERY, excerpt_paragraphs=1)  # type: ignore[arg-type]


@settings(max_examples=80, deadline=None)
@given(
    paras=st.lists(
        st.lists(
            st.sampled_from(["linker fails.", "symbols gone!", "filler text.", "x y"]),
            min_size=1,
            max_size=5,
        ),
        min_size=1,
        max_size=6,
    ),
    room=st.integers(1, 200),
)
def test_the_kept_window_weighs_as_much_as_the_best(paras: list[list[str]], room: int) -> None:
    text = "\n\n".join(" ".join(p) for p in paras)
    bounds = _sentence_bounds(text)
    terms = query_terms("linker symbols")

    def between(a: int, b: int) -> int:
        return b - a

    def weight(span: tuple[int, int] | None) -> frozenset[str]:
        if span is None:
            return frozenset()
        return frozenset(w for w in terms if w in set(tokenize(text[span[0] : span[1]])))

    old = _query_window(text, bounds, terms, between, room, False)
    new = _query_window(text, bounds, terms, between, room, False, _paragraph_starts(text, bounds))
    assert (new is None) == (old is None)
    if new is not None and old is not None:
        assert new[1] - new[0] <= room and weight(new) == weight(old)
        starts = _paragraph_starts(text, bounds)
        assert new == old or new[0] in {bounds[i] for i in starts}


def client_blocks(
    tmp_path: Path, page: str, query: str, room: int, option: str
) -> dict[bool, AssembledContext]:
    """The blocks a client assembles for ``query`` over one page, with the config
    ``option`` on and off (shared with ``test_excerpt_skip_heading.py``: each
    excerpt option is read by the client the same way)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.md").write_text(page)
    got = {}
    for on in (True, False):
        c = Treehop(
            None,
            embedder=BagOfWordsEmbedder(),
            tagger=None,
            config=RetrievalConfig.model_validate({option: on}),
        )
        try:
            c.add_resource(str(docs), target_uri="viking://resources/faq")
            got[on] = c.assemble_context(
                query, max_tokens=room, target_uri="viking://resources/faq"
            )
        finally:
            c.close()
    return got


def test_the_client_reads_the_option(tmp_path: Path) -> None:
    room = _room()
    page = f"# Usage\n\n{EARLIER}\n\n{MATCHED} {REST}\n\n{NEXT}\n"
    got = client_blocks(tmp_path, page, QUERY, room, "excerpt_paragraphs")
    assert RetrievalConfig().excerpt_paragraphs is False
    assert got[True].tokens <= room and any(s.excerpt for s in got[True].sections)
    assert REST in got[True].text and REST not in got[False].text
