"""Metadata's 64-bit integer bound reads ``int``'s own bit length (helper attacks82,
bench/README.md "(helper attacks82)").

``arguments.check_metadata`` refuses an integer outside the 64-bit range (what the remote
stores and a JSON reader that keeps 64-bit integers can hold) by ``value.bit_length()``: an
``int`` subclass that says 1 there was stored as ``10**100``. Now the bound asks ``int``.

Each test fails on 4b7966c0 unless it says it is a control.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop.arguments import check_metadata
from treehop.errors import InvalidQueryError


class _Small(int):
    """An integer that says it fits one bit."""

    def bit_length(self) -> int:
        return 1


def _outcome(metadata: dict[str, object]) -> str:
    try:
        return repr(check_metadata(metadata))
    except InvalidQueryError as exc:
        return str(exc)


@given(value=st.integers(-(2**200), 2**200), nested=st.booleans())
def test_an_int_subclass_is_bounded_as_its_value_is(value: int, nested: bool) -> None:
    # 4b7966c0: every value past 63 bits taken when it came as _Small
    def wrap(v: object) -> dict[str, object]:
        return {"a": {"n": [v]}} if nested else {"n": v}

    assert _outcome(wrap(_Small(value))) == _outcome(wrap(value))
    assert ("64-bit range" in _outcome(wrap(value))) == (value.bit_length() > 63)


def test_a_large_int_subclass_is_refused() -> None:
    with pytest.raises(InvalidQueryError, match=r"metadata\.n: integer outside the 64-bit range"):
        check_metadata({"n": _Small(10**100)})


def test_control_an_int_subclass_within_range_is_taken() -> None:
    # control (as on 4b7966c0)
    assert check_metadata({"n": _Small(2**62)}) == {"n": 2**62}
