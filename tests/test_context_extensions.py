"""What a document slot carries into a token budget (``EXTENSION_ORDER``, issue 33): the top
slot whole (its passage is most likely the answer going on), a lower slot's passage chunks
only when their own score beats the next hit, a far chunk never without the near one, and
conversation slots exactly as before."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from context_slots import ROOT
from context_slots import ext as _ext
from context_slots import slot as _slot
from treehop.context_assembly import assemble_context, default_token_counter
from treehop.memory_context import TURN_KIND
from treehop.models import ChunkContext, ContextType, MatchedContext

FILLER = " ".join(f"Filler sentence {n} repeats the section's other text." for n in range(12))


def _three_slots() -> list[MatchedContext]:
    """Slot A (top) whose answer goes on in its +1 chunk (scored low), slot B whose -1 chunk
    is long other text scored below C's hit, and slot C holding another answer."""
    a = _slot("a.md", 3, "Answer A starts here.", 0.9, [_ext("a.md", 4, 1, 0.4, "A continues.")])
    b = _slot("b.md", 7, "Hit B.", 0.8, [_ext("b.md", 6, -1, 0.5, FILLER)])
    c = _slot("c.md", 2, "Answer C is short.", 0.7)
    return [a, b, c]


def _budget_for(hits: list[MatchedContext], uris: list[str]) -> int:
    """Tokens of a block holding exactly ``uris`` (in slot order): what fits them."""
    keep = set(uris)
    trimmed = [
        h.model_copy(update={"collapsed": [c for c in h.collapsed if c.uri in keep]})
        for h in hits
        if h.uri in keep
    ]
    return assemble_context(trimmed, max_tokens=4000).tokens


def test_a_lower_slots_passage_waits_for_a_better_hit() -> None:
    hits = _three_slots()
    a, b, c = hits
    a1, b1 = a.collapsed[0].uri, b.collapsed[0].uri
    room = _budget_for(hits, [a.uri, a1, b.uri, c.uri]) + 2 * ca.MIN_EXCERPT_TOKENS
    assert room < _budget_for(hits, [a.uri, a1, b.uri, b1, c.uri])
    out = assemble_context(hits, max_tokens=room)
    # the top slot whole (its continuation scored 0.4, below every other hit), then B's hit,
    # then C's hit (0.7) before B's other text (0.5), which fills what is left as an excerpt
    assert out.uris == [a.uri, a1, b.uri, c.uri, b1]
    assert "A continues." in out.text and "Answer C is short." in out.text
    assert [s.excerpt for s in out.sections] == [False, False, False, False, True]
    # slot by slot, B's passage spends the room (cut to an excerpt) before C is tried
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "EXTENSION_ORDER", "slot")
        old = assemble_context(hits, max_tokens=room)
    assert "Answer C is short." not in old.text
    assert old.uris[:4] == [a.uri, a1, b.uri, b1]


def test_an_extension_that_scores_like_its_hit_goes_before_the_next_hit() -> None:
    b = _slot("b.md", 7, "Hit B.", 0.8, [_ext("b.md", 8, 1, 0.75, "B's answer goes on.")])
    a = _slot("a.md", 3, "Top hit.", 0.9)
    c = _slot("c.md", 2, "Hit C.", 0.7)
    d = _slot("d.md", 2, "Hit D.", 0.76)
    out = assemble_context([a, b, d, c], max_tokens=500)
    # B's +1 (0.75) waits for D (0.76), goes before C (0.7)
    assert out.uris == [a.uri, b.uri, d.uri, b.collapsed[0].uri, c.uri]


def test_the_top_slot_goes_whole_even_when_its_passage_scores_low(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hits = _three_slots()
    a, b, _ = hits
    a1 = a.collapsed[0].uri
    out = assemble_context(hits, max_tokens=500)
    assert out.uris[:2] == [a.uri, a1]
    # with no slot offered whole, A's continuation (0.4) comes after every hit
    monkeypatch.setattr(ca, "WHOLE_SLOTS", 0)
    out = assemble_context(hits, max_tokens=500)
    assert out.uris.index(a1) > out.uris.index(hits[2].uri)
    # and after every hit in slot order with ``after-hits``
    monkeypatch.setattr(ca, "EXTENSION_ORDER", "after-hits")
    out = assemble_context(hits, max_tokens=500)
    assert out.uris == [a.uri, b.uri, hits[2].uri, a1, b.collapsed[0].uri]


def test_a_far_chunk_never_goes_in_without_the_near_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ca, "EXTENSION_EXCERPTS", False)
    near = _ext("b.md", 8, 1, 0.3, FILLER)
    far = _ext("b.md", 9, 2, 0.3, "Far.")
    a = _slot("a.md", 3, "Top hit.", 0.9)
    b = _slot("b.md", 7, "Hit B.", 0.8, [near, far])
    room = _budget_for([a, b], [a.uri, b.uri]) + 10  # room for "Far." but not the filler
    out = assemble_context([a, b], max_tokens=room)
    assert out.uris == [a.uri, b.uri]
    assert (near.uri, "budget") in out.skipped and (far.uri, "budget") in out.skipped
    assert "Far." not in out.text
    # a hit that did not go in takes its passage with it
    small = assemble_context([a, b], max_tokens=_budget_for([a], [a.uri]))
    assert small.uris == [a.uri]
    assert {u for u, _ in small.skipped} == {b.uri, near.uri, far.uri}
    # a hit an earlier turn of the session already injected still takes its passage along
    seen = assemble_context([a, b], max_tokens=4000, seen_uris=[b.uri])
    assert seen.uris == [a.uri, near.uri, far.uri] and (b.uri, "seen") in seen.skipped


def _turn(i: int, score: float, around: list[ChunkContext]) -> MatchedContext:
    return MatchedContext(
        uri=f"viking://user/u/memories/chat/s0/turn-{i:05d}",
        context_type=ContextType.MEMORY,
        is_leaf=True,
        abstract="",
        content=f"Ann: turn {i} " + "words " * (i % 7),
        score=score,
        metadata={"kind": TURN_KIND},
        collapsed=around,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    scores=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
    budget=st.integers(20, 400),
)
def test_conversation_blocks_do_not_change(scores: list[float], budget: int) -> None:
    hits = []
    for k, s in enumerate(sorted(scores, reverse=True)):
        i = 10 * k + 5
        around = [
            ChunkContext(
                uri=f"viking://user/u/memories/chat/s0/turn-{i + p:05d}",
                score=s / 2,
                content=f"Bob: reply {i + p} " + "more " * p * p,
                position=p,
                carried=True,
            )
            for p in (-2, -1, 1, 2)
        ]
        hits.append(_turn(i, s, around))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "EXTENSION_ORDER", "slot")
        before = assemble_context(hits, max_tokens=budget)
    after = assemble_context(hits, max_tokens=budget)
    assert after.text == before.text and after.uris == before.uris


WORDS = st.text(alphabet=st.sampled_from(list("abcd xyz.")), min_size=1, max_size=300)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    hits=st.lists(
        st.tuples(
            WORDS,
            st.floats(0.0, 1.0),
            st.lists(st.tuples(WORDS, st.floats(0.0, 1.0)), max_size=2),
            st.lists(st.tuples(WORDS, st.floats(0.0, 1.0)), max_size=2),
        ),
        min_size=1,
        max_size=6,
    ),
    budget=st.integers(1, 600),
)
def test_document_blocks_keep_the_budget_and_every_passage_unbroken(
    hits: list[tuple[str, float, list[tuple[str, float]], list[tuple[str, float]]]],
    budget: int,
) -> None:
    slots = []
    for k, (text, score, before, after) in enumerate(sorted(hits, key=lambda h: -h[1])):
        at = 10
        exts = [
            _ext(f"d{k}.md", at - j - 1, -j - 1, s, "x " + t) for j, (t, s) in enumerate(before)
        ]
        exts += [_ext(f"d{k}.md", at + j + 1, j + 1, s, "x " + t) for j, (t, s) in enumerate(after)]
        slots.append(_slot(f"d{k}.md", at, "hit " + text, score, exts))
    out = assemble_context(slots, max_tokens=budget)
    assert default_token_counter().count(out.text) <= budget
    placed = set(out.uris)
    hit_uris = {s.uri for s in slots}
    for s in slots[ca.WHOLE_SLOTS :]:
        for c in s.collapsed:
            if c.uri in placed:  # every placed chunk's inner neighbour is placed too
                step = 1 if (c.position or 0) > 0 else -1
                inner = f"{ROOT}/{s.uri.rsplit('/', 1)[1].split('#')[0]}#chunk-"
                inner += str((c.chunk_index or 0) - step)
                assert inner in placed
    # every hit goes in before any lower slot's hit when the budget holds them all: with
    # room for everything the block is the slot-by-slot one, only the order of offers moved
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "EXTENSION_ORDER", "slot")
        roomy_old = assemble_context(slots, max_tokens=100_000)
    roomy = assemble_context(slots, max_tokens=100_000)
    assert roomy.text == roomy_old.text
    assert set(roomy.uris) == set(roomy_old.uris)
    assert hit_uris <= set(roomy.uris) | {u for u, _ in roomy.skipped}


def test_a_hit_that_is_another_slots_extension_continues_nothing() -> None:
    """A chunk can be one slot's hit and another slot's extension (two finds merged, a
    hand-built list): as a hit it needs nothing before it, whatever
    happened to the slot it extends (excluded, seen, out of budget)."""
    a = _slot("a.md", 3, "Top hit.", 0.9)
    b = _slot("b.md", 4, "Hit B. " + FILLER, 0.8, [_ext("b.md", 5, 1, 0.3, "B goes on.")])
    c = _slot("b.md", 5, "B goes on.", 0.7)
    out = assemble_context([a, b, c], max_tokens=4000, exclude_uris=[b.uri])
    assert out.uris == [a.uri, c.uri] and (b.uri, "excluded") in out.skipped
    # B's hit does not fit, C's (the same chunk as B's extension) does
    room = _budget_for([a, c], [a.uri, c.uri])
    out = assemble_context([a, b, c], max_tokens=room)
    assert out.uris == [a.uri, c.uri] and (b.uri, "budget") in out.skipped


def test_a_chunk_two_slots_extend_needs_only_its_own_slots_near_one() -> None:
    """b.md#6 is both C's near chunk (before #7) and the lower slot B's far chunk (after #5):
    offered as C's, it needs C's hit only, not B's #5 (a long chunk that does not fit)."""
    a = _slot("a.md", 3, "Top hit.", 0.9)
    c = _slot("b.md", 7, "Hit C.", 0.8, [_ext("b.md", 6, -1, 0.2, "Six.")])
    b = _slot(
        "b.md",
        4,
        "Hit B.",
        0.7,
        [_ext("b.md", 5, 1, 0.2, FILLER), _ext("b.md", 6, 2, 0.2, "Six.")],
    )
    six = c.collapsed[0].uri
    room = _budget_for([a, c, b], [a.uri, b.uri, c.uri, six])
    out = assemble_context([a, c, b], max_tokens=room)
    assert six in out.uris and b.collapsed[0].uri not in out.uris
    assert default_token_counter().count(out.text) <= room


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shapes=st.lists(
        st.tuples(
            st.integers(0, 12),  # the hit's chunk index in the one shared document
            st.floats(0.0, 1.0),
            st.lists(st.tuples(st.integers(-3, 3), st.floats(0.0, 1.0), WORDS), max_size=4),
            WORDS,
        ),
        min_size=1,
        max_size=6,
    ),
    budget=st.integers(1, 800),
    drop=st.sets(st.integers(0, 5), max_size=2),
)
def test_overlapping_slots_keep_the_budget_and_every_passage_unbroken(
    shapes: list[tuple[int, float, list[tuple[int, float, str]], str]],
    budget: int,
    drop: set[int],
) -> None:
    """Slots over one document whose passages overlap each other and each other's hits
    (duplicate chunks, a hit that is also an extension): the block keeps its budget, a
    placed chunk is a hit or continues a placed chunk of a slot that offered it, and with
    room for everything every hit that is not excluded goes in."""
    slots = []
    for at, score, exts, text in sorted(shapes, key=lambda h: -h[1]):
        chunks = {}
        for pos, s, t in exts:
            if pos and at + pos >= 0:
                chunks[pos] = _ext("x.md", at + pos, pos, s, "x " + t)
        slots.append(_slot("x.md", at, "hit " + text, score, list(chunks.values())))
    excluded = [slots[i].uri for i in sorted(drop) if i < len(slots)]
    out = assemble_context(slots, max_tokens=budget, exclude_uris=excluded)
    assert default_token_counter().count(out.text) <= budget
    placed = set(out.uris)
    hits = {s.uri for s in slots}
    for u in placed - hits:  # an extension: a slot offering it has its inner one placed
        ok = False
        for rank, s in enumerate(slots):
            for c in s.collapsed:
                if c.uri != u:
                    continue
                p = c.position or 0
                nearer = [d for d in s.collapsed if 0 < (d.position or 0) * p < p * p]
                inner = max(nearer, key=lambda d: abs(d.position or 0)).uri if nearer else s.uri
                ok = ok or rank < ca.WHOLE_SLOTS or inner in placed
        assert ok, u
    roomy = assemble_context(slots, max_tokens=100_000, exclude_uris=excluded)
    assert hits - set(excluded) <= set(roomy.uris)
