"""With ``window_share`` (``context_assembly.WINDOW_SHARE``; off by default) the top slot's
window (its hit and the chunks of its passage offered whole with it) takes at most that share
of the block; the window is trimmed to its best chunks from the hit outwards and the chunks
left out bid by score as a lower slot's do, so a second slot gets in where the whole window
would have filled the block (bench/README.md, helper quality83)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import treehop.context_assembly as ca
from context_slots import ROOT
from context_slots import ext as _ext
from context_slots import slot as _slot
from treehop.context_assembly import assemble_context
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, MatchedContext


def _words(tag: str, n: int) -> str:
    return " ".join(f"{tag} sentence {k} about the topic here." for k in range(n))


ANSWER = "Bravo answer: set the limit in the config file and restart the daemon."


def _hits() -> list[MatchedContext]:
    """Top slot A (hit 5) with a window of three long chunks (-1 scoring 0.5, +1 0.6, +2
    0.55); slot B whose hit is the answer."""
    a = _slot(
        "a.md",
        5,
        _words("Alpha", 8),
        0.9,
        [
            _ext("a.md", 4, -1, 0.5, _words("Before", 10)),
            _ext("a.md", 6, 1, 0.6, _words("After", 10)),
            _ext("a.md", 7, 2, 0.55, _words("Later", 10)),
        ],
    )
    return [a, _slot("b.md", 1, ANSWER, 0.8)]


def _uri(doc: str, i: int) -> str:
    return f"{ROOT}/{doc}#chunk-{i}"


def test_the_whole_window_fills_a_small_block_without_the_option() -> None:
    off = assemble_context(_hits(), max_tokens=300)
    assert ANSWER not in off.text  # the top slot's window took the block
    assert _uri("a.md", 4) in off.uris and _uri("a.md", 7) in off.uris


def test_a_capped_window_lets_the_second_slot_in() -> None:
    on = assemble_context(_hits(), max_tokens=300, window_share=0.5)
    assert ANSWER in on.text and on.tokens <= 300
    # trimmed to its best chunk next to the hit (+1 at 0.6 beats -1 at 0.5); the -1 chunk
    # and the +2 one bid after B's hit (0.8) and fill what it left
    assert on.uris[:3] == [_uri("a.md", 5), _uri("a.md", 6), _uri("b.md", 1)]


def test_the_chunks_left_out_still_bid_where_there_is_room() -> None:
    # a block large enough for everything: each chunk goes in, the same texts as without
    on = assemble_context(_hits(), max_tokens=2000, window_share=0.1)
    off = assemble_context(_hits(), max_tokens=2000)
    assert set(on.uris) == set(off.uris) and len(on.uris) == 5
    # the -1 chunk (0.5, below B's hit at 0.8) now waits until after B's hit
    assert on.uris.index(_uri("b.md", 1)) < on.uris.index(_uri("a.md", 4))
    assert off.uris.index(_uri("a.md", 4)) < off.uris.index(_uri("b.md", 1))


def test_a_far_chunk_is_never_kept_past_a_near_one_that_does_not_fit() -> None:
    # +1 is long (80 tokens), +2 short: a cap that holds the hit and +2 but not +1 keeps
    # neither, and +2 then goes in only after +1 (here: +1 cut to an excerpt at its bid)
    a = _slot(
        "a.md",
        5,
        _words("Alpha", 3),
        0.9,
        [_ext("a.md", 6, 1, 0.6, _words("After", 10)), _ext("a.md", 7, 2, 0.7, "Short far.")],
    )
    hits = [a, _slot("b.md", 1, ANSWER, 0.8)]
    on = assemble_context(hits, max_tokens=150, window_share=0.5)
    assert on.uris[:2] == [_uri("a.md", 5), _uri("b.md", 1)]
    placed = on.uris
    assert _uri("a.md", 7) not in placed or (
        _uri("a.md", 6) in placed and placed.index(_uri("a.md", 6)) < placed.index(_uri("a.md", 7))
    )
    near = _slot("a.md", 6, _words("After", 10), 0.6)
    far = _slot("a.md", 7, "Short far.", 0.7)

    def words(m: MatchedContext) -> int:
        return len(m.content.split())

    assert ca._trimmed_window(a, [(1, near), (2, far)], 40, words) == set()
    assert ca._trimmed_window(a, [(1, near), (2, far)], 100, words) == {0, 1}


def test_a_window_within_the_share_is_the_old_block() -> None:
    # the window's texts are ~304 tokens: within 0.5 of 1,000 and 0.7 of 500
    for budget, share in ((1000, 0.5), (500, 0.7), (2000, 0.2)):
        on = assemble_context(_hits(), max_tokens=budget, window_share=share)
        off = assemble_context(_hits(), max_tokens=budget)
        assert on.text == off.text and on.uris == off.uris


def test_the_module_default_is_read_and_the_argument_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    off = assemble_context(_hits(), max_tokens=2000)
    monkeypatch.setattr(ca, "WINDOW_SHARE", 0.05)
    assert ANSWER in assemble_context(_hits(), max_tokens=300).text
    assert assemble_context(_hits(), max_tokens=2000).uris != off.uris
    assert assemble_context(_hits(), max_tokens=2000, window_share=0.9).uris == off.uris


def test_conversation_turns_are_never_trimmed() -> None:
    turn = _hits()[0].model_copy(
        update={
            "context_type": ContextType.MEMORY,
            "chunk_index": None,
            "metadata": {"kind": ca.TURN_KIND},
        }
    )
    assert ca._is_turn(turn)
    hits = [turn, _hits()[1]]
    assert (
        assemble_context(hits, max_tokens=300, window_share=0.3).text
        == assemble_context(hits, max_tokens=300).text
    )


@pytest.mark.parametrize("bad", ["0.5", True, 0, 0.0, -0.1, 1.5, float("nan"), [0.5]])
def test_a_share_outside_0_1_is_refused(bad: object, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidQueryError, match="window_share"):
        assemble_context(_hits(), max_tokens=300, window_share=bad)  # type: ignore[arg-type]
    monkeypatch.setattr(ca, "WINDOW_SHARE", bad)
    with pytest.raises(InvalidQueryError, match="window_share"):
        assemble_context(_hits(), max_tokens=300)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    window=st.lists(st.tuples(st.integers(1, 10), st.floats(0.1, 0.95)), min_size=1, max_size=4),
    before=st.integers(0, 2),
    lower=st.lists(st.integers(1, 10), min_size=1, max_size=3),
    budget=st.integers(60, 700),
    share=st.floats(0.05, 1.0),
)
def test_blocks_fit_and_a_far_chunk_never_goes_without_its_near_one(
    window: list[tuple[int, float]], before: int, lower: list[int], budget: int, share: float
) -> None:
    before = min(before, len(window))
    positions = [-(before - k) for k in range(before)] + list(range(1, len(window) - before + 1))
    exts = [
        _ext("a.md", 10 + p, p, s, _words(f"W{p}", n))
        for p, (n, s) in zip(positions, window, strict=True)
    ]
    hits = [_slot("a.md", 10, _words("Alpha", 3), 0.96, exts)]
    hits += [_slot(f"d{k}.md", 1, _words(f"Hit{k}", n), 0.9 - k / 10) for k, n in enumerate(lower)]
    on = assemble_context(hits, max_tokens=budget, window_share=share)
    off = assemble_context(hits, max_tokens=budget)
    assert on.tokens <= budget
    placed = on.uris
    for side in (-1, 1):
        chain = [hits[0].uri] + [
            e.uri
            for e in sorted(exts, key=lambda e: abs(e.position or 0))
            if (e.position or 0) * side > 0
        ]
        shown = [u for u in chain if u in placed]
        assert shown == chain[: len(shown)]
    # the same entries are offered
    assert set(on.uris) | {u for u, _ in on.skipped} == set(off.uris) | {u for u, _ in off.skipped}
    # a window whose texts fit in the share is the old block
    count = ca._cached_count(ca.default_token_counter())
    need = sum(count(m.content) for m in [hits[0], *(_e for _e in exts)])
    if need <= int(share * budget):
        assert on.text == off.text
