"""With ``lexical_lead`` (``LEXICAL_LEAD``, ``RetrievalConfig.lexical_lead``; off by default)
the one document slot whose hit text holds the query's words best (each word weighted by how
few slots hold it) is placed right after the top slot when find() ranked it third or lower:
the 1,000-token answers flat hybrid delivers and find()'s block misses are mostly lexical
questions whose answer sits below slots that fill the block (bench/README.md, helper
quality77)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop import RetrievalConfig, Treehop
from treehop.context_assembly import assemble_context, query_terms
from treehop.errors import InvalidConfigError, InvalidQueryError
from treehop.lexical_lead import HIT_CHARS, lexical_leader, slot_term_scores
from treehop.models import ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/docs"
QUERY = "How do I rotate the proftpd transfer log?"
FILLER = (
    "The daemon reads its configuration file at start and after a hangup signal, and every"
    " virtual server inherits what the global section sets unless it says otherwise."
)
ANSWER = "Rotate the transfer log with logrotate, then send proftpd a hangup so it reopens it."


def _slot(i: int, content: str, kind: ContextType = ContextType.RESOURCE) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/page{i}.md#chunk-0",
        context_type=kind,
        is_leaf=True,
        abstract=f"page {i}",
        content=content,
        score=1.0 - i / 100,
        chunk_index=0,
    )


def _slots() -> list[MatchedContext]:
    """Four slots of about the same length (a small block holds two): the top and two more
    about proftpd's configuration; the fourth holds the question's words (rotate, transfer,
    log)."""
    return [
        _slot(0, f"proftpd configuration. {FILLER} {FILLER}"),
        _slot(1, f"proftpd virtual servers. {FILLER} {FILLER}"),
        _slot(2, f"proftpd log level. {FILLER} {FILLER}"),
        _slot(3, f"{ANSWER} {FILLER} {FILLER}"),
    ]


def test_the_leader_is_the_slot_holding_the_query_words() -> None:
    terms = query_terms(QUERY)
    texts = [m.content for m in _slots()]
    scores = slot_term_scores(texts, terms)
    assert scores.index(max(scores)) == 3 and scores.count(max(scores)) == 1
    assert lexical_leader(texts, terms) == 3
    # "proftpd" is in every slot: it weighs log(1 + 4 / 4); "log" in two: log(1 + 4 / 2)
    assert scores[1] == pytest.approx(math.log(2.0))
    assert scores[2] == pytest.approx(math.log(2.0) + math.log(3.0))


def test_no_leader_on_a_tie_a_second_slot_or_no_match() -> None:
    terms = query_terms(QUERY)
    texts = [m.content for m in _slots()]
    assert lexical_leader([*texts, texts[3]], terms) is None  # two slots hold the same words
    assert lexical_leader([texts[0], texts[3], texts[1]], terms) is None  # already second
    assert lexical_leader([texts[3], texts[1], texts[2]], terms) is None  # the top leads
    assert lexical_leader(["a b", "c d", "e f"], terms) is None  # no slot holds a word
    assert lexical_leader(texts[:2], terms) is None  # two slots: nothing to move
    assert lexical_leader(texts, frozenset()) is None
    # a slot that may not move (None: a turn, a memory) weighs nothing: the answer's place
    # empty, the one slot holding "log" leads
    assert lexical_leader([*texts[:3], None], terms) == 2


def test_only_the_first_hit_chars_are_read() -> None:
    terms = query_terms(QUERY)
    far = "x " * HIT_CHARS + ANSWER  # the words past the bound are not read
    assert slot_term_scores([far], terms) == [0.0]


def _room() -> int:
    """A budget that holds the top slot and the next one, and no more."""
    two = assemble_context(_slots()[:2], max_tokens=10_000)
    return two.tokens + 5


def test_the_block_places_the_leader_second(monkeypatch: pytest.MonkeyPatch) -> None:
    room = _room()
    on = assemble_context(_slots(), max_tokens=room, query=QUERY, lexical_lead=True)
    assert on.tokens <= room and ANSWER in on.text
    assert [s.uri for s in on.sections][:2] == [_slots()[0].uri, _slots()[3].uri]
    off = assemble_context(_slots(), max_tokens=room, query=QUERY, lexical_lead=False)
    assert off.tokens <= room and ANSWER not in off.text
    # the module default (off) is what a call without the argument takes
    assert assemble_context(_slots(), max_tokens=room, query=QUERY).text == off.text
    monkeypatch.setattr(ca, "LEXICAL_LEAD", True)
    assert assemble_context(_slots(), max_tokens=room, query=QUERY).text == on.text
    again = assemble_context(_slots(), max_tokens=room, query=QUERY, lexical_lead=False)
    assert again.text == off.text
    # without a query there are no words to lead by: find()'s order
    assert assemble_context(_slots(), max_tokens=room, lexical_lead=True).text == (
        assemble_context(_slots(), max_tokens=room).text
    )


def test_a_memory_never_moves() -> None:
    text = _slots()[3].content
    terms = query_terms(QUERY)
    for kind, moves in ((ContextType.RESOURCE, True), (ContextType.MEMORY, False)):
        slots = [*_slots()[:3], _slot(3, text, kind)]
        got = ca._lexical_lead(slots, terms)
        # a memory weighs nothing: the one slot holding "log" leads instead
        want = [0, 3, 1, 2] if moves else [0, 2, 1, 3]
        assert [m.uri for m in got] == [slots[i].uri for i in want]


def test_a_non_bool_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="lexical_lead"):
        assemble_context(_slots(), max_tokens=50, query=QUERY, lexical_lead=1)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError, match="lexical_lead"):
        RetrievalConfig.model_validate({"lexical_lead": "yes"})


WORDS = ["rotate", "transfer", "log", "proftpd", "daemon", "signal", "the", "x"]


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(
        st.one_of(st.none(), st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)),
        max_size=8,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
)
def test_the_leader_is_the_unique_best_below_second(texts: list[str | None], query: str) -> None:
    terms = query_terms(query)
    got = lexical_leader(texts, terms)
    scores = slot_term_scores(texts, terms)
    assert len(scores) == len(texts)
    assert all(s == 0.0 for s, t in zip(scores, texts, strict=True) if t is None)
    if got is None:
        # no slot from the third on is above every other one
        assert not any(
            scores[j] > 0 and all(scores[j] > s for i, s in enumerate(scores) if i != j)
            for j in range(2, len(scores))
        )
    else:
        assert got >= 2 and texts[got] is not None
        assert all(scores[got] > s for i, s in enumerate(scores) if i != got)
        # the weight depends on the words held, not their order or repetition
        text = texts[got]
        assert text is not None
        shuffled = " ".join(reversed(text.split())) + " " + text
        doubled = [*texts[:got], shuffled, *texts[got + 1 :]]
        assert slot_term_scores(doubled, terms) == scores


def test_the_client_reads_the_option(tmp_path: Path) -> None:
    # three short pages that each repeat two of the question's words rank above the page
    # that holds all four inside a longer paragraph (bag-of-words dense, BM25's length norm)
    docs = tmp_path / "docs"
    docs.mkdir()
    parts = [
        "rotate proftpd, rotate proftpd.",
        "proftpd log, proftpd log.",
        "transfer proftpd, transfer proftpd.",
    ]
    for i, text in enumerate(parts):
        (docs / f"part{i}.md").write_text(f"# Part {i}\n\n{text}\n")
    (docs / "rotation.md").write_text(f"# Rotation\n\n{FILLER} {ANSWER}\n")
    got = {}
    for on in (True, False):
        c = Treehop(
            None,
            embedder=BagOfWordsEmbedder(),
            tagger=None,
            config=RetrievalConfig.model_validate({"lexical_lead": on}),
        )
        try:
            c.add_resource(str(docs), target_uri="viking://resources/faq")
            found = c.find(QUERY, target_uri="viking://resources/faq", limit=10)
            assert [m.uri.rsplit("/", 1)[1] for m in found.contexts()][3] == "rotation.md"
            got[on] = c.assemble_context(QUERY, max_tokens=60, target_uri="viking://resources/faq")
        finally:
            c.close()
    assert RetrievalConfig().lexical_lead is False
    assert [s.uri.rsplit("/", 1)[1] for s in got[True].sections] == ["part0.md", "rotation.md"]
    assert "rotation.md" not in {s.uri.rsplit("/", 1)[1] for s in got[False].sections}
    assert got[True].tokens <= 60 and got[False].tokens <= 60
