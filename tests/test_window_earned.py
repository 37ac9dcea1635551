"""``question_window_earned``: a question's chunk-window lift capped at what a chunk of the
window earns alone, off by default (issue 33, stop 76, helper quality82).

The chunk window (``question_chunk_window``) scores a question's chunk on the larger of its
own cosine and its window's (itself with its previous and next chunk). 9 of the 27 slots
find() ranked above a 1,000-token loss's answer got there only by that lift (helper
quality81). With the cap a chunk may rise to the score its best neighbour earns alone (the
neighbour's evidence carried to it), never above every chunk of its window.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import treehop.chunk_window as cw
from test_chunk_window import KEYWORDS, QUESTION, _find, _spread_answer, _store, _unit
from treehop import InvalidConfigError, RetrievalConfig
from treehop.chunk_window import earned_lifts, window_earned_on


def _on() -> RetrievalConfig:
    return RetrievalConfig(question_window_earned=True)


def test_off_a_spread_window_ranks_above_every_chunk_it_is_made_of() -> None:
    """The default: ``guide.md``'s three chunks (0.60-0.62 alone) rank on their window (0.79)
    above ``faq.md`` (0.70), as before the option; ``False`` is the same."""
    store = _spread_answer()
    off = _find(store, QUESTION, RetrievalConfig())
    assert off[0][0] == "guide.md#chunk-1"
    assert off[0][1] > next(s for u, s, _ in off if u == "faq.md")
    assert _find(store, QUESTION, RetrievalConfig(question_window_earned=False)) == off


def test_on_the_window_ranks_no_higher_than_its_best_chunk_earns() -> None:
    """On: the guide slot scores what its best chunk (0.62) scores alone, as with the window
    off, so ``faq.md`` (0.70) ranks first."""
    store = _spread_answer()
    on = _find(store, QUESTION, _on())
    assert on[0][0] == "faq.md"
    guide = next(s for u, s, _ in on if u.startswith("guide.md"))
    alone = _find(store, QUESTION, RetrievalConfig(question_chunk_window=False))
    assert guide == pytest.approx(next(s for u, s, _ in alone if u.startswith("guide.md")))
    assert guide < on[0][1]
    scores = [s for _, s, _ in on]
    assert scores == sorted(scores, reverse=True)


def test_on_a_neighbours_evidence_still_lifts_a_chunk_up_to_the_neighbour() -> None:
    """``ref.md`` chunk 0 (0.30 alone) beside chunk 1 (0.90 alone), each its own passage: the
    window still lifts chunk 0 (its window is closer than it is), capped at chunk 1's own
    score, never past it."""
    store = _store(
        [
            ("ref.md", 0, _unit((0, 0.3), (1, 0.954)), 0),
            ("ref.md", 1, _unit((0, 0.9), (2, 0.436)), 100),
            ("other.md", 0, _unit((0, 0.1), (3, 0.995)), 0),
        ],
        {"note.md": _unit((0, 0.35), (4, 0.937))},
    )
    apart = {"question_document_penalty": 0.0, "join_adjacent_hits": False}  # two slots
    cfg = RetrievalConfig(question_window_earned=True, **apart)
    got = {u: s for u, s, _ in _find(store, QUESTION, cfg, limit=4)}
    alone = RetrievalConfig(question_chunk_window=False, **apart)
    own = {u: s for u, s, _ in _find(store, QUESTION, alone, limit=4)}
    assert got["ref.md#chunk-1"] == pytest.approx(own["ref.md#chunk-1"])
    assert own["ref.md#chunk-0"] + 1e-4 < got["ref.md#chunk-0"] <= got["ref.md#chunk-1"] + 1e-9
    assert got["ref.md#chunk-0"] > got["note.md"]  # the carried evidence passes 0.35


def test_on_a_lift_within_the_neighbours_score_is_kept_whole() -> None:
    """Where the window's lift stays below the neighbour's own score the cap does not bite:
    the same list and scores on and off."""
    store = _store(
        [
            ("ref.md", 0, _unit((0, 0.5), (1, 0.866)), 0),
            ("ref.md", 1, _unit((0, 0.95), (2, 0.312)), 100),
        ],
        {"note.md": _unit((0, 0.2), (4, 0.98))},
    )
    off_cfg = RetrievalConfig(question_document_penalty=0.0)
    on_cfg = RetrievalConfig(question_document_penalty=0.0, question_window_earned=True)
    assert _find(store, QUESTION, on_cfg) == _find(store, QUESTION, off_cfg)


def test_the_module_default_is_read_where_the_setting_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _spread_answer()
    assert RetrievalConfig().question_window_earned is None
    monkeypatch.setattr(cw, "QUESTION_WINDOW_EARNED", True)
    assert _find(store, QUESTION, RetrievalConfig())[0][0] == "faq.md"
    # the setting wins over the module default
    off = RetrievalConfig(question_window_earned=False)
    assert _find(store, QUESTION, off)[0][0] == "guide.md#chunk-1"


def test_keyword_queries_are_not_touched() -> None:
    store = _spread_answer()
    assert _find(store, KEYWORDS, _on()) == _find(store, KEYWORDS, RetrievalConfig())


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, [True]])
def test_a_non_bool_setting_is_refused(bad: object) -> None:
    assert RetrievalConfig(question_window_earned=True).question_window_earned is True
    with pytest.raises(InvalidConfigError):
        RetrievalConfig(question_window_earned=bad)  # type: ignore[arg-type]
    cfg = RetrievalConfig()
    with pytest.raises(InvalidConfigError):
        cfg.question_window_earned = bad  # type: ignore[assignment]


def test_a_non_bool_module_default_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cw, "QUESTION_WINDOW_EARNED", "on")
    with pytest.raises(InvalidConfigError):
        window_earned_on(None)
    with pytest.raises(InvalidConfigError):
        _find(_spread_answer(), QUESTION, RetrievalConfig())
    assert window_earned_on(False) is False
    assert window_earned_on(True) is True


_score = st.floats(-2.0, 2.0, allow_nan=False)
_neighbour = st.one_of(st.just(-np.inf), _score)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.0, 1.0, allow_nan=False), _score, _neighbour, _neighbour),
        min_size=1,
        max_size=30,
    )
)
def test_earned_lifts_property(rows: list[tuple[float, float, float, float]]) -> None:
    """Never raises a lift nor goes below 0; the lifted score never passes the best of the
    chunk and its neighbours; a lift within that room is kept whole."""
    lift, score, prev, nxt = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    out = earned_lifts(lift, score, prev, nxt)
    assert out.shape == lift.shape
    assert np.all(out >= 0.0)
    assert np.all(out <= lift)
    best = np.maximum(score, np.maximum(prev, nxt))
    assert np.all(score + out <= best + 1e-12)
    room = np.maximum(prev, nxt) - score
    whole = lift <= room
    assert np.array_equal(out[whole], lift[whole])
