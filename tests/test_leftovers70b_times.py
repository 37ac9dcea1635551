"""``to_epoch`` (and so ``time_range_filter`` and a memory's stored ``timestamp``) refuses a
number no float holds exactly, by the filters' own rule (helper leftovers70b, bench/README.md
"(helper leftovers70b)").

leftovers69d made a ``time`` filter's and ``find()``'s ``since`` / ``until`` refuse such a
number (``validation.exact_real``, then ``filters._exact_real``), but the conversion
underneath rounded on its own: the public ``time_range_filter(since=Fraction(1, 10**400))``
gave ``gte 0.0``, and ``remember(..., timestamp=Fraction(1, 10**400))`` stored ``0.0``, a
time a ``since=0.0`` then took. Now ``to_epoch`` checks with the same function.

Each test fails on 4b7966c0 unless it says it is a control.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.timestamps import time_range_filter, to_epoch, to_stored_epoch

from treehop_test_doubles import BagOfWordsEmbedder

TINY = Fraction(1, 10**400)
INEXACT = [TINY, Fraction(1, 3), np.longdouble(1) / 3, 2**53 + 1, Fraction(10**9 * 3 + 1, 3)]


@pytest.mark.parametrize("value", INEXACT, ids=lambda v: type(v).__name__ + repr(v)[:20])
def test_to_epoch_and_the_window_refuse_a_number_no_float_holds(value: Any) -> None:
    shown = repr(float(value)).replace(".", r"\.")
    with pytest.raises(InvalidQueryError, match=rf"since must be a number a float holds .*{shown}"):
        to_epoch(value, "since")
    with pytest.raises(InvalidQueryError, match="since must be a number a float holds"):
        time_range_filter(since=value)
    with pytest.raises(InvalidQueryError, match="until must be a number a float holds"):
        time_range_filter(until=value)
    with pytest.raises(InvalidQueryError, match=r"turn\.timestamp must be a number a float"):
        to_stored_epoch(value, "turn.timestamp")


def test_a_memory_written_at_a_time_no_float_holds_is_refused_before_any_write() -> None:
    """4b7966c0: ``remember`` stored ``timestamp`` 0.0 for ``Fraction(1, 10**400)`` (and a
    turn of ``add_messages`` the float next to a third), which ``since=0.0`` then found."""
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        with pytest.raises(InvalidQueryError, match="timestamp must be a number a float holds"):
            th.remember("apples are red", name="a", timestamp=cast(Any, TINY))
        with pytest.raises(InvalidQueryError, match=r"messages\[1\]\.timestamp must be a number"):
            th.add_messages(
                [
                    {"content": "pears are green", "timestamp": 10.0},
                    {"content": "plums are blue", "timestamp": Fraction(1, 3)},
                ],
                conversation_id="c",
            )
        with pytest.raises(InvalidQueryError, match="session_time must be a number a float"):
            th.add_messages(
                [{"content": "figs"}], conversation_id="c", session_time=cast(Any, TINY)
            )
        assert not th.find("apples pears plums figs", since=0.0).memories
        # (control: the float the caller may have meant is stored as given)
        th.remember("apples are red", name="a", timestamp=cast(Any, Fraction(1, 2)))
        hit = th.find("apples", since=0.5, until=0.75).memories
        assert [h.uri for h in hit] == ["viking://~/memories/notes/a"]


_NUMBERS = (
    st.fractions(max_denominator=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**70), 2**70)
)


@settings(max_examples=300, deadline=None)
@given(value=_NUMBERS)
def test_a_time_is_taken_iff_a_float_holds_it_and_then_as_that_float(value: Any) -> None:
    """Taken exactly when ``float(value) == value``, and then as that float, by ``to_epoch``,
    both of ``time_range_filter``'s bounds and (in the years a calendar shows) a stored
    time; else refused by each. (On 4b7966c0 every value was taken, rounded.)"""
    if float(value) != value:
        for call in (
            lambda: to_epoch(value),
            lambda: time_range_filter(since=value),
            lambda: time_range_filter(until=value),
            lambda: to_stored_epoch(value),
        ):
            with pytest.raises(InvalidQueryError, match="a float holds exactly"):
                call()
        return
    assert to_epoch(value) == value and type(to_epoch(value)) is float
    assert time_range_filter(since=value) == {"op": "range", "field": "timestamp", "gte": value}
    assert time_range_filter(until=value) == {"op": "range", "field": "timestamp", "lt": value}
    if -62135596800 <= value <= 253402300799:
        assert to_stored_epoch(value) == value


@pytest.mark.parametrize(
    "value",
    [Fraction(1, 2), np.float32(0.1), np.int64(3), np.longdouble(0.5), 2**37, 1.5],
    ids=repr,
)
def test_times_a_float_holds_are_still_taken(value: Any) -> None:
    """Control (as on 4b7966c0)."""
    assert to_epoch(value) == value
    assert to_stored_epoch(value) == value
    assert time_range_filter(value, value + 1) == {
        "op": "range",
        "field": "timestamp",
        "gte": value,
        "lt": float(value + 1),
    }
