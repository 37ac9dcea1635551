"""``assemble_context`` with ``TOP_FACE_SHARE`` on offers the top slot's extensions with its
hit only while the face stays within that share of the block (nearest the hit first); the
rest bid by score as a lower slot's do, so the next hit is not pushed out by one long passage
(issue 33, helper ctx58). Off by default: the default keeps the whole top slot.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import treehop.context_assembly as ca
from treehop.context_assembly import HeuristicCounter, assemble_context
from treehop.models import ChunkContext, ContextType, FindResult, MatchedContext

R = "viking://resources/docs"
TOP = f"{R}/faq.md#chunk-2"
NEXT = f"{R}/manual.md#chunk-7"


def _words(tag: str, n: int) -> str:
    return " ".join(f"{tag}{i}" for i in range(n)) + "."


def _ext(i: int, pos: int) -> ChunkContext:
    return ChunkContext(
        uri=f"{R}/faq.md#chunk-{i}",
        score=0.6 - 0.01 * abs(pos),
        content=_words(f"c{i}w", 20),
        position=pos,
        own_score=0.5,
    )


def _result() -> FindResult:
    top = MatchedContext(
        uri=TOP,
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.9,
        own_score=0.8,
        content=_words("top", 20),
        chunk_index=2,
        collapsed=[_ext(1, -1), _ext(3, 1), _ext(4, 2)],
    )
    nxt = MatchedContext(
        uri=NEXT,
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.8,
        own_score=0.7,
        content=_words("other", 20),
        chunk_index=7,
    )
    return FindResult(resources=[top, nxt], total=2)


def _budget(found: FindResult) -> int:
    """Room for the top slot whole, not for it and the next hit; half of it holds the top hit
    and one extension, not two."""
    c = HeuristicCounter()
    top, nxt = found.contexts()
    budget = c.count(top.slot_text) + 10
    assert budget < c.count(top.slot_text) + c.count(nxt.content)
    one = c.count(top.content) + c.count(top.collapsed[0].content)
    assert one <= budget / 2 < one + c.count(top.collapsed[1].content)
    return budget


@pytest.fixture
def half(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(ca, "TOP_FACE_SHARE", 0.5)
    yield


def test_the_default_offers_the_top_slot_whole() -> None:
    found = _result()
    ctx = assemble_context(found, max_tokens=_budget(found), token_counter=HeuristicCounter())
    assert NEXT not in ctx.uris
    assert {TOP, f"{R}/faq.md#chunk-1", f"{R}/faq.md#chunk-3"} <= set(ctx.uris)


@pytest.mark.usefixtures("half")
def test_the_next_hit_goes_in_after_the_top_face_reaches_its_share() -> None:
    found = _result()
    ctx = assemble_context(found, max_tokens=_budget(found), token_counter=HeuristicCounter())
    assert NEXT in ctx.uris
    # the nearest extension (the chunk before the hit: ties go to the earlier one) stays with it
    assert TOP in ctx.uris and f"{R}/faq.md#chunk-1" in ctx.uris
    placed = {s.uri: s for s in ctx.sections}
    assert not placed[NEXT].excerpt
    # the far extension is never shown without the near one on its side
    if f"{R}/faq.md#chunk-4" in placed:
        assert f"{R}/faq.md#chunk-3" in placed
    assert ctx.tokens <= _budget(found)


@pytest.mark.usefixtures("half")
def test_a_top_slot_within_the_share_goes_whole() -> None:
    found = _result()
    big = 3 * _budget(found)
    on = assemble_context(found, max_tokens=big, token_counter=HeuristicCounter())
    ca.TOP_FACE_SHARE = None
    off = assemble_context(found, max_tokens=big, token_counter=HeuristicCounter())
    assert on.text == off.text


def test_the_gate_bids_every_extension_when_the_slot_is_over_its_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ca, "TOP_FACE_SHARE", 0.5)
    monkeypatch.setattr(ca, "TOP_FACE_CUT", "gate")
    found = _result()
    ctx = assemble_context(found, max_tokens=_budget(found), token_counter=HeuristicCounter())
    assert NEXT in ctx.uris
    assert f"{R}/faq.md#chunk-1" in ctx.uris or f"{R}/faq.md#chunk-3" not in ctx.uris
