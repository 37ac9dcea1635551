"""assemble_context: a document slot whose text is mostly a copy of the slots above it
(``DUPLICATE_SHARE``) is offered after the others, so a copy does not take a small block's
room from a lower slot with text the reader has not seen."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from treehop.context_assembly import _duplicates_last, assemble_context, default_token_counter
from treehop.memory_context import TURN_KIND
from treehop.models import ContextType, MatchedContext

ROOT = "viking://resources/docs"

OPTIONS = " ".join(
    f"Option {n} sets the merge strategy number {n} used when histories diverge." for n in range(9)
)
ANSWER = (
    "A revert undoes the change on one branch only, so the merge of the two branches sees "
    "the change on the other branch and keeps it; revert it again after the merge. Git "
    "compares the two tips with their merge base, not the history of each commit, so a "
    "change made and reverted on one side looks like no change at all on that side."
)


def _chunk(doc: str, i: int, content: str, score: float) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract=f"{doc} › Section {i}",
        content=content,
        score=score,
        chunk_index=i,
    )


def _turn(i: int, content: str, score: float) -> MatchedContext:
    return MatchedContext(
        uri=f"viking://memories/conv-1/session-01/turn-{i}",
        context_type=ContextType.MEMORY,
        is_leaf=True,
        abstract=content,
        content=content,
        score=score,
        metadata={"kind": TURN_KIND},
    )


def _hits() -> list[MatchedContext]:
    """The same included options text in two manuals, then the answer."""
    return [
        _chunk("git-rebase.md", 45, OPTIONS, 0.78),
        _chunk("git-pull.md", 44, OPTIONS + " See also the pull page.", 0.77),
        _chunk("gitfaq.md", 15, ANSWER, 0.76),
    ]


def _budget() -> int:
    """Room for the options text and the answer whole, not for a second copy of the options."""
    counter = default_token_counter()
    return counter.count(OPTIONS) + counter.count(ANSWER) + 20


def test_a_copy_of_a_slot_above_goes_after_the_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    hits = _hits()
    budget = _budget()
    out = assemble_context(hits, max_tokens=budget)
    assert ANSWER in out.text
    assert hits[2].uri in out.uris and hits[1].uri not in out.uris
    assert out.tokens <= budget
    # in rank order the copy takes the room and the answer is cut or left out
    monkeypatch.setattr(ca, "DUPLICATE_SHARE", None)
    ranked = assemble_context(hits, max_tokens=budget)
    assert ANSWER not in ranked.text
    assert hits[1].uri in ranked.uris


def test_a_copy_still_fills_room_the_others_leave() -> None:
    hits = _hits()
    out = assemble_context(hits, max_tokens=4 * _budget())
    assert out.uris == [hits[0].uri, hits[2].uri, hits[1].uri]


def test_a_slot_that_adds_more_than_it_repeats_keeps_its_rank() -> None:
    """The share is of the lower slot's own text: one that shows a short slot above it plus as
    much new text is not a copy."""
    short = "Option 1 sets the merge strategy number 1 used when histories diverge."
    longer = short + " " + ANSWER + " " + ANSWER.replace("revert", "reset")
    hits = [
        _chunk("a.md", 1, short, 0.9),
        _chunk("b.md", 2, longer, 0.8),
        _chunk("c.md", 3, "x", 0.7),
    ]
    assert _duplicates_last(hits) == hits


def test_conversation_turns_are_never_moved() -> None:
    words = "We went hiking at the lake last Sunday and it rained all afternoon."
    hits = [_turn(1, words, 0.9), _turn(2, words, 0.8), _chunk("c.md", 3, "other text", 0.7)]
    assert _duplicates_last(hits) == hits


TEXTS = st.sampled_from([OPTIONS, ANSWER, OPTIONS + " More.", "Unrelated words here.", "", "x"])


def _is_split(out: list[MatchedContext], rank: dict[str, int], k: int, share: float) -> bool:
    """Whether ``out[:k]`` (kept) and ``out[k:]`` (moved) are each in rank order, every moved
    slot's text is more than ``share`` inside the kept document slots above it, and no kept
    document slot's is."""
    head, tail = out[:k], out[k:]
    if [rank[m.uri] for m in head] != sorted(rank[m.uri] for m in head):
        return False
    if [rank[m.uri] for m in tail] != sorted(rank[m.uri] for m in tail):
        return False
    for m in out:
        own = ca._shingles(m.slot_text)
        above = set().union(*(ca._shingles(h.slot_text) for h in head if rank[h.uri] < rank[m.uri]))
        copy = bool(own) and bool(above) and len(own & above) > share * len(own)
        if copy != (m in tail):
            return False
    return True


@settings(max_examples=60, deadline=None)
@given(st.lists(TEXTS, min_size=0, max_size=8), st.sampled_from([0.3, 0.5, 0.9]))
def test_order_is_a_stable_partition_of_the_same_slots(texts: list[str], share: float) -> None:
    """Every slot stays; the kept ones and the moved ones each keep their rank order; a slot
    is moved exactly when its text is more than ``share`` inside the kept slots above it."""
    hits = [_chunk(f"d{i}.md", i, t, 1.0 - i / 10) for i, t in enumerate(texts)]
    saved = ca.DUPLICATE_SHARE
    ca.DUPLICATE_SHARE = share
    try:
        out = _duplicates_last(hits)
    finally:
        ca.DUPLICATE_SHARE = saved
    assert sorted(m.uri for m in out) == sorted(m.uri for m in hits)
    rank = {m.uri: i for i, m in enumerate(hits)}
    assert any(_is_split(out, rank, k, share) for k in range(len(out) + 1))
