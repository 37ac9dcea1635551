"""``question_window_descent``: a question's chunk window lifts every chunk the descent
collected, and the descent settles the window's pool (issue 33, stop 72, helper quality76).

Without it the window lifts only the best ``max(WINDOW_POOL, 3 * limit)`` chunks on their own
scores, so an answer spread over three chunks that are each weak alone is lifted at a large
``limit`` and not at a small one: ``find()``'s first results depended on the limit asked
(flex-faq's dev half: "How can I build a two-pass scanner?").
"""

from __future__ import annotations

import numpy as np
import pytest

from test_chunk_window import KEYWORDS, QUESTION, _find, _store, _unit
from treehop import InvalidConfigError, RetrievalConfig
from treehop.chunk_window import WINDOW_POOL
from treehop.stores.embedded import EmbeddedStore

DISTRACTORS = WINDOW_POOL + 10


def _weak_answer() -> EmbeddedStore:
    """``ref.md``: ``WINDOW_POOL + 10`` chunks along one other direction, 0.55 down to 0.45
    to the query each (their windows gain next to nothing); ``guide.md``: one answer in
    three chunks, each 0.40 alone (below every ``ref.md`` chunk, so outside the window's
    pool at a small limit) along three other directions: lifted by their window, the
    middle one outranks every ``ref.md`` chunk."""
    chunks = [
        ("ref.md", i, _unit((0, c), (1, float(np.sqrt(1 - c * c)))), i)
        for i, c in enumerate(np.linspace(0.55, 0.45, DISTRACTORS).tolist())
    ]
    s = float(np.sqrt(1 - 0.4 * 0.4))
    chunks += [("guide.md", i, _unit((0, 0.4), (2 + i, s)), 0) for i in range(3)]
    return _store(chunks, {})


def _top(
    store: EmbeddedStore, cfg: RetrievalConfig, limit: int, query: str = QUESTION
) -> list[str]:
    return [u for u, _, _ in _find(store, query, cfg, limit=limit)]


def test_the_first_results_depended_on_the_limit_asked() -> None:
    """The defect, with the option off (the default): at ``limit=3`` the answer's chunks are
    outside the window's pool, unlifted, below ``ref.md``'s first; at ``limit=15`` (a pool
    of 45) the same answer is lifted to the first slot."""
    store = _weak_answer()
    small = _find(store, QUESTION, RetrievalConfig(), limit=3)
    assert small[0][0].startswith("ref.md")
    w = RetrievalConfig().question_dense_weight or 0.0
    guide = [score for u, score, _ in small if u.startswith("guide.md")]
    assert guide == [pytest.approx(w * 0.4, abs=1e-5)]  # its own score: not lifted
    assert _top(store, RetrievalConfig(), 15)[0].startswith("guide.md")


def test_with_the_option_the_answer_is_lifted_at_any_limit() -> None:
    store = _weak_answer()
    on = RetrievalConfig(question_window_descent=True)
    for limit in (1, 3, 15):
        assert _top(store, on, limit)[0].startswith("guide.md"), limit
    # the first three do not depend on the limit asked
    assert _top(store, on, 3) == _top(store, on, 15)[:3]


def test_keyword_queries_and_a_window_turned_off_are_not_touched() -> None:
    """The option reads only a question's window: the same list and scores otherwise."""
    store = _weak_answer()
    for limit in (3, 15):
        assert _find(store, KEYWORDS, RetrievalConfig(question_window_descent=True), limit) == (
            _find(store, KEYWORDS, RetrievalConfig(), limit)
        )
        off = RetrievalConfig(question_chunk_window=False)
        both = RetrievalConfig(question_chunk_window=False, question_window_descent=True)
        assert _find(store, QUESTION, both, limit) == _find(store, QUESTION, off, limit)


def test_the_default_is_off() -> None:
    assert RetrievalConfig().question_window_descent is False


@pytest.mark.parametrize("bad", ["yes", 2, None, 1.0])
def test_a_non_bool_is_refused(bad: object) -> None:
    assert RetrievalConfig(question_window_descent=True).question_window_descent is True
    with pytest.raises(InvalidConfigError, match="question_window_descent"):
        RetrievalConfig(question_window_descent=bad)  # type: ignore[arg-type]
