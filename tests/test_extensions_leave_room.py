"""With ``extensions_leave_room`` (``EXTENSIONS_LEAVE_ROOM``, ``RetrievalConfig.
extensions_leave_room``; off by default) a lower slot's extension (a chunk of its passage that
bids for the budget on its own score) is placed only where the next hit still fits whole after
it, when that hit fits whole before it; otherwise it waits until every hit was offered. The top
slot still goes whole, a far chunk never goes in without its near one, and the default block is
the old one (bench/README.md, helper quality80)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treehop.client as client_mod
import treehop.context_assembly as ca
from context_slots import ext as _ext
from context_slots import slot as _slot
from treehop import RetrievalConfig, Treehop
from treehop.context_assembly import assemble_context, default_token_counter
from treehop.errors import InvalidConfigError, InvalidQueryError
from treehop.models import MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

FILLER = " ".join(f"Filler sentence {n} repeats the section's other text." for n in range(14))
ANSWER = " ".join(f"Answer step {n} says what to set and why it matters here." for n in range(6))
LAST = "Answer step 5 says what to set and why it matters here."


def _cost(text: str) -> int:
    return default_token_counter().count(text)


def _hits() -> list[MatchedContext]:
    """Top slot A; slot B whose +1 chunk (long other text) scores above C's hit, so it bids
    before C; slot C holding the answer (about two thirds of B's chunk)."""
    a = _slot("a.md", 3, "Top hit A.", 0.9)
    b = _slot("b.md", 7, "Hit B.", 0.8, [_ext("b.md", 8, 1, 0.75, FILLER)])
    c = _slot("c.md", 2, ANSWER, 0.7)
    return [a, b, c]


def _budget_for(hits: list[MatchedContext], uris: list[str]) -> int:
    keep = set(uris)
    trimmed = [
        h.model_copy(update={"collapsed": [c for c in h.collapsed if c.uri in keep]})
        for h in hits
        if h.uri in keep
    ]
    return assemble_context(trimmed, max_tokens=4000).tokens


def _room(hits: list[MatchedContext]) -> int:
    """A block that holds A, B and B's chunk whole with a few tokens more, and also A, B and C
    whole with room left for an excerpt of B's chunk, but not B's chunk and C."""
    a, b, c = hits
    room = _budget_for(hits, [a.uri, b.uri, b.collapsed[0].uri]) + 10
    assert room >= _budget_for(hits, [a.uri, b.uri, c.uri]) + ca.MIN_EXCERPT_TOKENS
    assert room < _budget_for(hits, [a.uri, b.uri, b.collapsed[0].uri, c.uri])
    return room


def test_a_lower_extension_waits_where_it_would_push_the_next_hit_out() -> None:
    hits = _hits()
    a, b, c = hits
    b1 = b.collapsed[0].uri
    room = _room(hits)
    on = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    # C's answer whole, then B's chunk in the room left (cut to an excerpt)
    assert on.uris == [a.uri, b.uri, c.uri, b1]
    assert LAST in on.text
    assert [s.excerpt for s in on.sections] == [False, False, False, True]
    assert on.tokens <= room
    # the old order: B's chunk whole (it scores above C), C left with less than its text
    off = assemble_context(hits, max_tokens=room)
    assert off.uris[:3] == [a.uri, b.uri, b1]
    assert LAST not in off.text
    for flag in (None, False):
        same = assemble_context(hits, max_tokens=room, extensions_leave_room=flag)
        assert same.text == off.text and same.uris == off.uris


def test_the_module_constant_turns_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    hits = _hits()
    room = _room(hits)
    want = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    monkeypatch.setattr(ca, "EXTENSIONS_LEAVE_ROOM", True)
    assert assemble_context(hits, max_tokens=room).text == want.text
    # the per-call argument wins over the module constant
    off = assemble_context(hits, max_tokens=room, extensions_leave_room=False)
    assert LAST not in off.text


def test_an_extension_that_leaves_room_goes_at_its_bid() -> None:
    hits = _hits()
    a, b, c = hits
    b1 = b.collapsed[0].uri
    room = _budget_for(hits, [a.uri, b.uri, b1, c.uri])  # everything fits: nothing waits
    on = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    assert on.uris == [a.uri, b.uri, b1, c.uri] == assemble_context(hits, max_tokens=room).uris


def test_no_wait_where_the_next_hit_does_not_fit_whole_anyway() -> None:
    a, b, _ = _hits()
    c = _slot("c.md", 2, f"{ANSWER} {FILLER} {FILLER}", 0.7)  # longer than the room after B
    hits = [a, b, c]
    room = _budget_for(hits, [a.uri, b.uri, b.collapsed[0].uri]) + 60
    assert room < _budget_for(hits, [a.uri, b.uri, c.uri])
    on = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    assert on.text == assemble_context(hits, max_tokens=room).text


def test_the_top_slot_still_goes_whole() -> None:
    # the top slot's chunk pushes B's hit out, and goes in all the same (WHOLE_SLOTS)
    a = _slot("a.md", 3, "Top hit A.", 0.9, [_ext("a.md", 4, 1, 0.2, FILLER)])
    b = _slot("b.md", 7, ANSWER, 0.8)
    hits = [a, b]
    room = _budget_for(hits, [a.uri, a.collapsed[0].uri]) + 10
    on = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    assert on.uris[:2] == [a.uri, a.collapsed[0].uri]
    assert on.text == assemble_context(hits, max_tokens=room).text


def test_a_far_chunk_waits_with_its_near_one() -> None:
    a = _slot("a.md", 3, "Top hit A.", 0.9)
    b = _slot(
        "b.md",
        7,
        "Hit B.",
        0.8,
        [_ext("b.md", 8, 1, 0.78, FILLER), _ext("b.md", 9, 2, 0.77, "B's far chunk.")],
    )
    c = _slot("c.md", 2, ANSWER, 0.7)
    hits = [a, b, c]
    near, far = (e.uri for e in b.collapsed)
    room = _budget_for(hits, [a.uri, b.uri, near, far]) + 10
    assert room < _budget_for(hits, [a.uri, b.uri, near, c.uri])
    off = assemble_context(hits, max_tokens=room)
    assert off.uris[:4] == [a.uri, b.uri, near, far] and LAST not in off.text
    # the near chunk would push C out: it waits, and the far one (bidding 0.77, above C's
    # hit) waits with it instead of going in without it
    on = assemble_context(hits, max_tokens=room, extensions_leave_room=True)
    assert on.uris[:4] == [a.uri, b.uri, c.uri, near]
    assert LAST in on.text
    assert far not in on.uris[:4]


def test_a_non_bool_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match="extensions_leave_room"):
        assemble_context(_hits(), max_tokens=500, extensions_leave_room="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigError):
        RetrievalConfig.model_validate({"extensions_leave_room": "yes"})
    assert RetrievalConfig().extensions_leave_room is False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(
        st.tuples(st.integers(1, 12), st.lists(st.integers(1, 12), max_size=3)),
        min_size=2,
        max_size=5,
    ),
    budget=st.integers(60, 700),
)
def test_blocks_fit_and_never_show_a_far_chunk_alone(
    sizes: list[tuple[int, list[int]]], budget: int
) -> None:
    hits = []
    for s, (n, exts) in enumerate(sizes):
        doc = f"d{s}.md"
        chunks = [
            _ext(doc, 10 + k, k + 1, 0.9 - s / 10 - k / 100, " ".join(["Other text here."] * m))
            for k, m in enumerate(exts)
        ]
        hits.append(_slot(doc, 10, " ".join([f"Hit {s} says."] * n), 0.9 - s / 10, chunks))
    on = assemble_context(hits, max_tokens=budget, extensions_leave_room=True)
    off = assemble_context(hits, max_tokens=budget)
    assert on.tokens <= budget and off.tokens <= budget
    placed = on.uris
    for h in hits[1:]:
        # a lower slot's chunk k steps from its hit only after the hit and the chunk k - 1
        # steps away (the top slot goes whole, each chunk that fits: as without the option)
        chain = [h.uri, *(c.uri for c in sorted(h.collapsed, key=lambda c: c.position or 0))]
        shown = [u for u in chain if u in placed]
        assert shown == chain[: len(shown)]
        assert [placed.index(u) for u in shown] == sorted(placed.index(u) for u in shown)
    # the same entries are offered: what one block shows, the other skipped or showed
    assert set(on.uris) | {u for u, _ in on.skipped} == set(off.uris) | {u for u, _ in off.skipped}
    if all(not h.collapsed for h in hits[1:]):  # no lower extension: the old block
        assert on.text == off.text


def test_the_client_passes_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text(f"# A\n\n{ANSWER}\n")
    seen: list[Any] = []
    inner = client_mod.assemble_context

    def spy(hits: Any, **kw: Any) -> Any:
        seen.append(kw.get("extensions_leave_room"))
        return inner(hits, **kw)

    monkeypatch.setattr(client_mod, "assemble_context", spy)
    for on in (True, False):
        c = Treehop(
            None,
            embedder=BagOfWordsEmbedder(),
            tagger=None,
            config=RetrievalConfig.model_validate({"extensions_leave_room": on}),
        )
        try:
            c.add_resource(str(docs), target_uri="viking://resources/faq")
            c.assemble_context("what to set", max_tokens=200, target_uri="viking://resources/faq")
        finally:
            c.close()
    assert seen == [True, False]
