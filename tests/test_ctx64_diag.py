"""bench/ctx64_diag.py (helper quality64): its screened packing orders replay the library's
order exactly when switched off, and move what they say they move when on; the first-rank
helper the diagnosis rests on."""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx64_diag as cx
import treehop.context_assembly as ca
from treehop.models import ChunkContext, ContextType, MatchedContext

ROOT = "viking://resources/docs"


def _ext(doc: str, i: int, position: int, score: float, own: float | None = None) -> ChunkContext:
    return ChunkContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        chunk_index=i,
        score=score,
        own_score=own,
        content=f"{doc} chunk {i} text.",
        position=position,
    )


def _slot(
    doc: str, i: int, score: float, exts: list[ChunkContext], own: float | None = None
) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        content=f"{doc} hit {i}.",
        score=score,
        own_score=own,
        chunk_index=i,
        collapsed=exts,
    )


def _slots() -> list[MatchedContext]:
    return [
        _slot("a.md", 3, 0.9, [_ext("a.md", 4, 1, 0.4), _ext("a.md", 2, -1, 0.3)], own=0.8),
        _slot("b.md", 7, 0.8, [_ext("b.md", 8, 1, 0.75, own=0.7), _ext("b.md", 9, 2, 0.2)], 0.6),
        _slot("c.md", 2, 0.7, [], own=0.65),
    ]


def _uris(order: list[MatchedContext]) -> list[str]:
    return [m.uri.rsplit("/", 1)[-1] for m in order]


def test_off_is_the_librarys_order() -> None:
    """With both changes off the replay is ``_by_score`` itself (order and conditions)."""
    for whole in (0, 1, 2):
        ranked = _slots()
        expected = ca._unfold_turns(ranked, whole)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ca, "_by_score", cx.by_score_after)
            got = ca._unfold_turns(_slots(), whole)
        assert _uris(got[0]) == _uris(expected[0])
        assert got[2] == expected[2]


def test_after_one_puts_the_next_hit_before_the_top_passage() -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "_by_score", functools.partial(cx.by_score_after, after=1))
        order, _, needs = ca._unfold_turns(_slots(), 1)
    names = _uris(order)
    # a's extensions wait for b's hit; b's +1 (0.75) still beats c's hit (0.7) by score
    assert names[:4] == ["a.md#chunk-3", "b.md#chunk-7", "a.md#chunk-2", "a.md#chunk-4"]
    assert names.index("b.md#chunk-8") < names.index("c.md#chunk-2")
    assert needs[names.index("b.md#chunk-9")] == f"{ROOT}/b.md#chunk-8"


def test_with_hit_takes_an_extension_that_beats_its_hit() -> None:
    slots = _slots()
    # b's +1 chunk: ranked score 0.5 (below c's hit, so by score it waits for c), own score
    # 0.7 against b's hit's 0.6
    b = slots[1]
    slots[1] = b.model_copy(
        update={"collapsed": [_ext("b.md", 8, 1, 0.5, own=0.7), _ext("b.md", 9, 2, 0.2)]}
    )
    plain = _uris(ca._unfold_turns(slots, 1)[0])
    assert plain.index("b.md#chunk-8") > plain.index("c.md#chunk-2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "_by_score", functools.partial(cx.by_score_after, with_hit=True))
        order, _, needs = ca._unfold_turns(slots, 1)
    names = _uris(order)
    assert names.index("b.md#chunk-8") == names.index("b.md#chunk-7") + 1
    assert names.index("b.md#chunk-8") < names.index("c.md#chunk-2")
    assert needs[names.index("b.md#chunk-8")] == f"{ROOT}/b.md#chunk-7"
    # the far chunk (own score unknown) still waits, continuing the near one
    assert needs[names.index("b.md#chunk-9")] == f"{ROOT}/b.md#chunk-8"


def test_first_rank() -> None:
    assert cx.first_rank([frozenset(), frozenset({"a0"})]) == 2
    assert cx.first_rank([frozenset({"a1"})]) == 1
    assert cx.first_rank([frozenset(), frozenset()]) is None


def test_forward_offers_a_whole_slot_only_forwards() -> None:
    """``forward`` (stop 66): the top slot's chunk after its hit stays with it; the chunk
    before its hit bids by score like a lower slot's extension, after the hit it continues."""
    base = _uris(ca._unfold_turns(_slots(), 1)[0])
    assert base[:3] == ["a.md#chunk-3", "a.md#chunk-2", "a.md#chunk-4"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "_by_score", functools.partial(cx.by_score_after, forward=True))
        order, _, needs = ca._unfold_turns(_slots(), 1)
    names = _uris(order)
    # a's -1 chunk (score 0.3) waits behind b's hit, b's +1 (0.75) and c's hit (0.7)
    assert names == [
        "a.md#chunk-3",
        "a.md#chunk-4",
        "b.md#chunk-7",
        "b.md#chunk-8",
        "c.md#chunk-2",
        "a.md#chunk-2",
        "b.md#chunk-9",
    ]
    assert needs[names.index("a.md#chunk-4")] is None
    assert needs[names.index("a.md#chunk-2")] == f"{ROOT}/a.md#chunk-3"
    # with no whole slot it changes nothing
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ca, "_by_score", functools.partial(cx.by_score_after, forward=True))
        none_whole = ca._unfold_turns(_slots(), 0)
    assert _uris(none_whole[0]) == _uris(ca._unfold_turns(_slots(), 0)[0])


def test_no_bullets_drops_only_the_line_marks_and_spends_less() -> None:
    """``no-bullets`` (stop 68): the same sections, each line without its opening ``- ``,
    the group headers kept; ``bare-layout`` drops the headers too; ``_apply`` restores the
    library's line."""
    import bench_context_diag as cd

    counter = ca.HeuristicCounter()
    saved = {k: getattr(ca, k) for v in cx.VARIANTS.values() for k in v}
    base = ca.assemble_context(_slots(), max_tokens=400, token_counter=counter)
    cd._apply(cx.VARIANTS["no-bullets"], saved)
    try:
        bare = ca.assemble_context(_slots(), max_tokens=400, token_counter=counter)
    finally:
        cd._apply({}, saved)
    assert ca._line is cx._LINE_OF_MAIN
    assert [s.uri for s in bare.sections] == [s.uri for s in base.sections]
    assert any(line.startswith("- ") for line in base.text.splitlines())
    assert not any(line.startswith("- ") for line in bare.text.splitlines())
    assert [ln for ln in base.text.splitlines() if ln.startswith("[")] == [
        ln for ln in bare.text.splitlines() if ln.startswith("[")
    ]
    assert bare.tokens < base.tokens
    cd._apply(cx.VARIANTS["bare-layout"], saved)
    try:
        none = ca.assemble_context(_slots(), max_tokens=400, token_counter=counter)
    finally:
        cd._apply({}, saved)
    assert not any(ln.startswith(("[", "- ")) for ln in none.text.splitlines())
    assert none.tokens < bare.tokens
