"""``to_epoch`` (``find(since=...)``, ``time_range_filter``, a memory's ``timestamp``) under a
hostile caller's times (helper attacks83, bench/README.md "(helper attacks83)").

Found on a62913ab: a numpy integer past 2**53 was rounded where the same ``int`` is refused
(numpy compares an integer with a float *as a float*, so ``exact_real``'s check said equal);
a ``datetime`` with no epoch seconds escaped raw (pandas' ``NaT`` is a ``datetime`` subclass
whose ``timestamp()`` raises ``ValueError``; a ``tzinfo`` whose ``utcoffset`` raises or says a
day or more); a ``str`` subclass's own ``strip`` / ``__repr__`` ran. Each test fails on
a62913ab unless it says it is a control.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, cast

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidQueryError, TreehopError
from treehop.timestamps import time_range_filter, to_epoch

from treehop_test_doubles import BagOfWordsEmbedder

_INT_TYPES = [np.int64, np.uint64, np.int32, np.uint32, np.int16, np.int8]


def _outcome(call: Any) -> object:
    try:
        return call()
    except InvalidQueryError:
        return "refused"


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(_INT_TYPES), n=st.integers(-(2**64), 2**64))
@example(kind=np.int64, n=2**53 + 1)
@example(kind=np.uint64, n=2**64 - 1)
@example(kind=np.int64, n=-(2**63) + 1)
def test_a_numpy_integer_is_a_time_exactly_as_its_int_is(kind: Any, n: int) -> None:
    info = np.iinfo(kind)
    if not info.min <= n <= info.max:
        return
    given_ = kind(n)
    for call in (to_epoch, lambda v: time_range_filter(since=v)):
        assert _outcome(lambda c=call: c(given_)) == _outcome(lambda c=call: c(n))


def test_find_since_a_numpy_integer_no_float_holds_is_refused() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.remember("apples are red", name="a", timestamp=1.0e9)
        with pytest.raises(InvalidQueryError, match="since must be a number a float holds"):
            th.find("apples", since=cast(Any, np.int64(2**53 + 1)))
        with pytest.raises(InvalidQueryError, match="timestamp must be a number a float holds"):
            th.remember("pears", name="b", timestamp=cast(Any, np.uint64(2**64 - 1)))
        # (control: one a float holds is the time it says)
        hits = th.find("apples", since=cast(Any, np.int64(10**9))).memories
        assert [h.uri for h in hits] == ["viking://~/memories/notes/a"]


class _NaT(datetime):
    """What pandas' ``NaT`` is to Python: a ``datetime`` whose ``timestamp`` raises."""

    def timestamp(self) -> float:
        raise ValueError("NaTType does not support timestamp")


class _Zone(tzinfo):
    """A zone whose offset is ``hours`` (30: past a day, which ``datetime`` refuses), or
    whose ``utcoffset`` raises when ``hours`` is None (an unreadable zone database)."""

    def __init__(self, hours: int | None) -> None:
        self.hours = hours

    def tzname(self, dt: datetime | None) -> str:
        return "X"

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def utcoffset(self, dt: datetime | None) -> timedelta:
        if self.hours is None:
            raise RuntimeError("zone database unreadable")
        return timedelta(hours=self.hours)


class _NanStamp(datetime):
    def timestamp(self) -> float:
        return float("nan")


class _TextStamp(datetime):
    def timestamp(self) -> float:
        return cast(float, "soon")


class _YearlessDate(date):
    @property
    def year(self) -> int:
        raise KeyError("year")


NO_TIMES = [
    _NaT(2020, 1, 1),
    datetime(2020, 1, 1, tzinfo=_Zone(None)),
    datetime(2020, 1, 1, tzinfo=_Zone(30)),
    _NanStamp(2020, 1, 1),
    _TextStamp(2020, 1, 1),
    _YearlessDate(2020, 1, 1),
]


@pytest.mark.parametrize("value", NO_TIMES, ids=lambda v: type(v).__name__)
def test_a_date_with_no_epoch_seconds_is_refused_typed(value: object) -> None:
    with pytest.raises(InvalidQueryError, match="since must be a time"):
        to_epoch(value, "since")
    with pytest.raises(InvalidQueryError, match="until must be a time"):
        time_range_filter(until=cast(Any, value))
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        with pytest.raises(InvalidQueryError, match="timestamp must be a time"):
            th.remember("apples are red", name="a", timestamp=cast(Any, value))
        assert not th.find("apples").memories  # (refused before any write)


def test_control_dates_at_the_calendars_ends_are_their_seconds() -> None:
    assert to_epoch(datetime(1, 1, 1, tzinfo=UTC)) == -62135596800.0
    assert to_epoch(datetime(9999, 12, 31, 23, 59, 59)) == 253402300799.0
    assert to_epoch(date(2020, 1, 1)) == 1577836800.0
    assert to_epoch("0001-01-01T00:00+01:00") == -62135600400.0


class _StripsToNumber(str):
    def strip(self, chars: str | None = None) -> Any:
        return 5


class _UnprintableText(str):
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class _StripsToOther(str):
    def strip(self, chars: str | None = None) -> Any:
        return "2020-01-01"


_ISO = st.one_of(
    st.dates().map(date.isoformat),
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
    st.text(max_size=80),
)


@settings(max_examples=300, deadline=None)
@given(text=_ISO, kind=st.sampled_from([_StripsToNumber, _UnprintableText, _StripsToOther]))
@example(text="nonsense", kind=_UnprintableText)
@example(text="2020-01-01", kind=_StripsToNumber)
def test_a_str_subclass_is_the_time_its_text_is(text: str, kind: type[str]) -> None:
    """The outcome for a subclass equals the plain text's, word for word; never a raw
    error (``strip`` returning ``5`` was a ``TypeError``, a raising ``__repr__`` its
    ``RuntimeError``; ``strip`` returning another text was that text's time)."""
    try:
        plain: object = to_epoch(text)
    except InvalidQueryError as exc:
        plain = str(exc)
    try:
        sub: object = to_epoch(kind(text))
    except InvalidQueryError as exc:
        sub = str(exc)
    except TreehopError as exc:  # pragma: no cover - (any other type fails the test)
        sub = exc
    if isinstance(plain, str) and kind is _UnprintableText:
        assert sub == plain.replace(_shown(text), f"<{kind.__name__}>")
    else:
        assert sub == plain


def _shown(text: str) -> str:
    from treehop.validation import shown_value

    return shown_value(text)
