"""The filter DSL's one rule for the numbers it compares (helper leftovers69d,
bench/README.md "(helper leftovers69d)").

leftovers69b refused a range bound no float or integer holds exactly (``Fraction(1, 10**400)``
had become ``0.0``). The same rounding stayed in a ``must`` / ``must_not``'s conds and in a
``time`` filter's (and ``find()``'s) ``since`` / ``until``; and ``bytes`` given as ``conds``
were read as a list of their byte values (``b"ab"``: a ``must`` on 97 and 98).

Each test fails on 25be04fa unless it says it is a control.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError
from treehop.filters import MetadataFilter

from treehop_test_doubles import BagOfWordsEmbedder

R = "viking://resources"
TINY = Fraction(1, 10**400)


def _must(conds: Any, op: str = "must") -> dict[str, Any]:
    return {"op": op, "field": "x", "conds": conds}


@pytest.mark.parametrize("op", ["must", "must_not"])
@pytest.mark.parametrize(
    ("cond", "shown"),
    [(TINY, "0.0"), (Fraction(1, 3), "0.3333333333333333"), (np.longdouble("0.1"), "0.1")],
    ids=["tiny", "third", "longdouble"],
)
def test_a_cond_no_float_holds_is_refused_naming_what_it_would_compare_as(
    op: str, cond: Any, shown: str
) -> None:
    with pytest.raises(InvalidFilterError, match=rf"conds\[1\] .*would compare as {shown}\)"):
        MetadataFilter.parse(_must([1, cond], op))
    nested = {"op": "and", "conds": [_must([2]), _must([cond], op)]}
    with pytest.raises(InvalidFilterError, match=r"filter\.conds\[1\]: conds\[0\] .*holds exactly"):
        MetadataFilter.parse(nested)


def test_a_numpy_array_of_long_doubles_is_refused_as_its_items_are() -> None:
    with pytest.raises(InvalidFilterError, match=r"conds\[0\] .*holds exactly"):
        MetadataFilter.parse(_must(np.array([np.longdouble("0.1")])))


@pytest.mark.parametrize("since", [TINY, Fraction(1, 3), np.longdouble("0.1"), 2**53 + 1])
def test_a_time_bound_no_float_holds_is_refused(since: Any) -> None:
    """A ``time`` node's numbers become the float ``to_epoch`` makes: an integer past 2**53
    that no float holds is refused there too (a range bound keeps the integer)."""
    with pytest.raises(InvalidFilterError, match=r"'since' must be a number a float holds"):
        MetadataFilter.parse({"op": "time", "since": since})
    nested = {"op": "or", "conds": [_must([1]), {"op": "time", "until": since}]}
    with pytest.raises(InvalidFilterError, match=r"filter\.conds\[1\]: 'until' must be"):
        MetadataFilter.parse(nested)


def test_the_tiny_numbers_no_longer_take_a_stored_zero(tmp_path: Path) -> None:
    """The store's answers on 25be04fa: ``must [Fraction(1, 10**400)]`` returned the node
    whose ``x`` is 0, and ``since`` the same tiny number (as a ``time`` node and as
    ``find(since=...)``) returned the one written at the epoch. Now each call is refused,
    typed, and the floats the caller may have meant answer as they say."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(
            "apples", is_text=True, target_uri=f"{R}/z", metadata={"x": 0, "timestamp": 0}
        )
        with pytest.raises(InvalidFilterError, match="holds exactly"):
            th.find("apples", filter=_must([TINY]))
        with pytest.raises(InvalidFilterError, match="holds exactly"):
            th.find("apples", filter={"op": "time", "since": TINY})
        with pytest.raises(InvalidQueryError, match="since must be a number a float holds"):
            th.find("apples", since=cast(Any, TINY))  # (hostile: not a TimeLike)
        with pytest.raises(InvalidQueryError, match="until must be a number a float holds"):
            th.find("apples", until=cast(Any, Fraction(1, 3)))
        assert not th.find("apples", filter=_must([1e-300])).resources
        assert not th.find("apples", since=1e-300).resources
        hit = [f"{R}/z"]
        assert [h.uri for h in th.find("apples", filter=_must([0.0])).resources] == hit
        assert [h.uri for h in th.find("apples", since=0.0).resources] == hit


_NUMBERS = (
    st.fractions(max_denominator=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.integers(-(2**70), 2**70)
)


@settings(max_examples=300, deadline=None)
@given(cond=_NUMBERS, value=_NUMBERS, op=st.sampled_from(["must", "must_not"]))
def test_an_accepted_cond_matches_exactly(cond: Any, value: Any, op: str) -> None:
    """A cond is taken when a float or an integer holds it, and a stored value then matches
    it exactly when it equals it; else the parse refuses it (never a rounded answer)."""
    spec = _must([cond], op)
    if float(cond) != cond and int(cond) != cond:
        with pytest.raises(InvalidFilterError, match="holds exactly"):
            MetadataFilter.parse(spec)
        return
    f = MetadataFilter.parse(spec)
    assert f is not None
    stored = float(value) if isinstance(value, Fraction) else value
    assert f.matches({"x": stored}) == ((stored == cond) == (op == "must"))


@settings(max_examples=300, deadline=None)
@given(since=_NUMBERS, value=st.floats(allow_nan=False, allow_infinity=False))
def test_an_accepted_time_bound_compares_exactly(since: Any, value: float) -> None:
    """Taken iff a float holds it, and then ``since <= timestamp`` as the exact comparison
    says, as a ``time`` node and as ``find()``'s ``since`` (the same window)."""
    spec = {"op": "time", "since": since}
    if float(since) != since:
        with pytest.raises(InvalidFilterError, match="a float holds exactly"):
            MetadataFilter.parse(spec)
        return
    f = MetadataFilter.parse(spec)
    assert f is not None
    assert f.matches({"timestamp": value}) == (value >= since)


_EXACT = [Fraction(1, 2), np.float32(0.1), np.int64(3), np.longdouble(0.5), np.uint64(2**64 - 1)]


@pytest.mark.parametrize("cond", _EXACT, ids=repr)
def test_conds_and_times_a_float_or_integer_holds_are_still_taken(cond: Any) -> None:
    """Control (taken on 25be04fa too): exact values, numpy's and a Fraction's."""
    f = MetadataFilter.parse(_must([cond]))
    assert f is not None and f.spec["conds"] == [cond]
    assert type(f.spec["conds"][0]) in (int, float)
    # (a numpy integer compared as Python's int: numpy compares it with a float as a float,
    # so np.uint64(2**64 - 1) "equals" 2.0**64, a time no float holds; helper attacks83)
    exact = int(cond) if isinstance(cond, np.integer) else cond
    if float(cond) == exact:
        t = MetadataFilter.parse({"op": "time", "since": cond})
        assert t is not None and t.spec["gte"] == exact
    else:
        with pytest.raises(InvalidFilterError, match="a float holds exactly"):
            MetadataFilter.parse({"op": "time", "since": cond})


# -- bytes as conds ---------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    data=st.binary(min_size=1, max_size=50),
    kind=st.sampled_from([bytes, bytearray, memoryview]),
    op=st.sampled_from(["must", "must_not", "and", "or"]),
    nested=st.booleans(),
)
def test_bytes_as_conds_are_refused_not_read_as_integers(
    data: bytes, kind: Any, op: str, nested: bool
) -> None:
    """25be04fa: ``{"op": "must", "field": "x", "conds": b"ab"}`` was a ``must`` on 97 and 98
    (an ``and`` / ``or`` over bytes a refusal of its first integer as no object)."""
    node: dict[str, Any] = {"op": op, "conds": kind(data)}
    if op in {"must", "must_not"}:
        node["field"] = "x"
    spec = {"op": "and", "conds": [_must(["a"]), node]} if nested else node
    where = r"filter\.conds\[1\]" if nested else "filter"
    with pytest.raises(InvalidFilterError, match=rf"{where}: '{op}' needs a list 'conds', got "):
        MetadataFilter.parse(spec)


def test_bytes_as_conds_through_find_are_refused(tmp_path: Path) -> None:
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("apples", is_text=True, target_uri=f"{R}/z", metadata={"x": 97})
        with pytest.raises(InvalidFilterError, match=r"give \[value\.decode\(\)\] for one text"):
            th.find("apples", filter=_must(b"ab"))
        # control: the integers written as a list are what they say
        assert [h.uri for h in th.find("apples", filter=_must([97, 98])).resources] == [f"{R}/z"]
