"""Points in time as the numbers memories are filtered on.

Memories carry their time as ``metadata["timestamp"]``: seconds since the Unix epoch (UTC), a
float. A number rather than a string so that the metadata filter's ``range`` operator — which
every store already translates to its engine's native range filter — answers ``since`` /
``until`` without a new operator in any engine.

Accepted inputs: an ``int``/``float`` (epoch seconds; a numpy number too), a
:class:`datetime.datetime` (a naive one is taken as UTC), a :class:`datetime.date` (its
midnight, UTC), or an ISO-8601 string (``2023-05-08``, ``2023-05-08T13:56``,
``2023-05-08T13:56:00+02:00``, a trailing ``Z``).
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from .errors import InvalidQueryError
from .validation import exact_real, shown_value

TIMESTAMP_FIELD = "timestamp"
"""The metadata field a memory's time is stored in (epoch seconds, UTC)."""

TimeLike = float | int | str | datetime | date
_MAX_ISO = 64


def to_epoch(value: Any, what: str = "time") -> float:
    """``value`` as epoch seconds (UTC); a clear :class:`InvalidQueryError` for anything else.

    A number is any real number :func:`~treehop.validation.real` takes, a numpy one included
    (helper leftovers68b: a filter's ``time`` node, ``find(since=...)`` and a memory's
    ``timestamp`` refused ``np.int64`` epoch seconds, a column's value, while a range's
    bounds took it); a numpy bool is a bool, as Python's is. A number no float holds exactly
    (``Fraction(1, 3)``, ``Fraction(1, 10**400)``, an ``np.longdouble`` with more digits,
    an integer past 2**53) is refused, not rounded: :func:`~treehop.validation.exact_real`,
    the filters' rule (helper leftovers70b: a memory's ``timestamp`` of ``Fraction(1,
    10**400)`` was stored as ``0.0``, and ``time_range_filter`` rounded its bounds where
    ``find(since=...)`` refused them)."""
    if isinstance(value, (bool, np.bool_)):
        raise InvalidQueryError(f"{what} must be a time, got a bool")
    seconds = exact_real(value, what, InvalidQueryError, float_only=True)
    if seconds is not None:
        try:
            number = float(seconds)
        except OverflowError:  # an int past float range (10**400): no time at all
            raise InvalidQueryError(f"{what} must be finite, got an int past float range") from None
        if not math.isfinite(number):
            # (shown bounded: the repr of a Fraction of 10**5000 raises ValueError)
            raise InvalidQueryError(f"{what} must be finite, got {shown_value(value, 100)}")
        return number
    if isinstance(value, date):
        return _date_epoch(value, what)
    if isinstance(value, str):
        # (``str``'s own strip and a bounded repr: a ``str`` subclass's ``strip`` returning
        # no text, or a ``__repr__`` that raises, escaped raw; helper attacks83)
        text = str.strip(value)
        if not text or len(text) > _MAX_ISO:
            raise InvalidQueryError(
                f"{what}: expected an ISO-8601 date or time, got {shown_value(value)}"
            )
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidQueryError(
                f"{what}: expected an ISO-8601 date or time (2023-05-08 or "
                f"2023-05-08T13:56:00Z), got {shown_value(value)}"
            ) from exc
        return to_epoch(parsed, what)
    raise InvalidQueryError(
        f"{what} must be epoch seconds, a datetime, a date or an ISO-8601 string, "
        f"got {type(value).__name__}"
    )


def to_stored_epoch(value: Any, what: str = "time") -> float:
    """:func:`to_epoch` of a time a memory is written with: also one a calendar can show
    (years 1-9999). Why: a bound of a filter may be any number (``since=1e20`` finds
    nothing), but a stored time is shown (a session's days, a turn's day prefix, the context
    block's headers): ``add_messages`` with a turn at 1e20 seconds raised ``OverflowError``
    out of the write, and ``remember`` stored a time no header could show."""
    epoch = to_epoch(value, what)
    if shown_iso(epoch) is None:
        raise InvalidQueryError(
            f"{what} must lie in the years 1-9999 (epoch seconds -62135596800 to "
            f"253402300799), got {value!r}"
        )
    return epoch


def to_iso(epoch: float) -> str:
    """Epoch seconds as an ISO-8601 UTC string (for display in context blocks)."""
    return datetime.fromtimestamp(epoch, tz=UTC).isoformat(timespec="seconds")


def shown_iso(epoch: object) -> str | None:
    """:func:`to_iso` of a stored ``timestamp`` metadata value, or ``None`` where it is no
    time a calendar can show: not a number, NaN, or past the years ``datetime`` holds
    (1e20 seconds, which a record's metadata may say: it raised ``OverflowError`` out of
    ``assemble_context`` and the MCP server's hits)."""
    if isinstance(epoch, bool) or not isinstance(epoch, int | float):
        return None
    try:
        return to_iso(float(epoch))
    except (OverflowError, OSError, ValueError):
        return None


def time_range_filter(
    since: Any = None, until: Any = None, field: str = TIMESTAMP_FIELD
) -> dict[str, Any] | None:
    """The metadata-filter spec for ``since <= field < until`` (half-open; either bound may be
    left out); ``None`` when both are.

    Half-open so that consecutive windows (one day, the next day) never both hold a memory
    written exactly at midnight.
    """
    if since is None and until is None:
        return None
    spec: dict[str, Any] = {"op": "range", "field": field}
    if since is not None:
        spec["gte"] = to_epoch(since, "since")
    if until is not None:
        spec["lt"] = to_epoch(until, "until")
    if "gte" in spec and "lt" in spec and spec["gte"] >= spec["lt"]:
        raise InvalidQueryError("since must be earlier than until")
    return spec


def _date_epoch(value: date, what: str) -> float:
    """A ``datetime`` (a naive one as UTC) or a ``date`` (its midnight, UTC) as epoch
    seconds; a :class:`InvalidQueryError` where it has none.

    Why (helper attacks83): ``dt.timestamp()`` ran as given, so a time that is no time
    escaped raw: pandas' ``NaT`` (a ``datetime`` subclass: a DataFrame's missing date,
    ``ValueError: NaTType does not support timestamp``), a ``tzinfo`` whose
    ``utcoffset`` raises or answers a day or more (``ValueError``), a subclass whose
    ``timestamp`` raises or answers no finite float (returned as the time)."""
    try:
        if isinstance(value, datetime):
            dt = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
            seconds = dt.timestamp()
        else:
            seconds = datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
    except Exception as exc:
        raise InvalidQueryError(
            f"{what} must be a time, got {shown_value(value)} "
            f"(it has no epoch seconds: {type(exc).__name__})"
        ) from None
    if type(seconds) is not float or not math.isfinite(seconds):
        raise InvalidQueryError(
            f"{what} must be a time, got {shown_value(value)} (its timestamp() is no finite number)"
        )
    return seconds
