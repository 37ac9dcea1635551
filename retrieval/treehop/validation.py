"""Checks of caller input, shared by find() and search(), with the VikingDB limits."""

from __future__ import annotations

import math
import numbers
import unicodedata
from collections.abc import Iterable, Sequence

from .bounded_repr import bounded_repr
from .errors import InvalidQueryError, TreehopError
from .redaction import redact

MAX_QUERY_CHARS = 8000
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})
"""Unicode categories of characters a query cannot consist of alone: controls, format
characters (U+200B, U+FEFF, ...), surrogates and spaces."""
MAX_LIMIT = 1000


def is_blank(text: str) -> bool:
    """Whether ``text`` has no visible character: empty, Unicode whitespace, or only
    control, format (U+200B, U+FEFF, U+2060, ...) and space characters (:data:`_INVISIBLE`).

    Stored content is held to this as to "not empty": a turn, note, text, record or file of
    only such characters was stored and embedded as noise, where whitespace alone was
    refused or skipped. Linear in C for the usual text (``strip``, one step on a visible
    first character; else the categories of its distinct characters)."""
    s = text.strip()
    if not s:
        return True
    if unicodedata.category(s[0]) not in _BLANK:
        return False
    return all(unicodedata.category(c) in _BLANK for c in set(s))


_BLANK = _INVISIBLE - {"Cs"}
"""What :func:`is_blank` counts as no visible character: a lone surrogate is not blank but
broken text, refused by its own check ("lone surrogate") where text is stored."""


JOINERS = "\u200c\u200d"
"""ZERO WIDTH NON-JOINER and JOINER: format characters that are part of the spelling of
Persian, the Indic scripts and emoji sequences (``\U0001f469\u200d\U0001f4bb``)."""


def has_invisible_format(s: str) -> bool:
    """Whether ``s`` holds a format character (Unicode category Cf: zero-width space, word
    joiner, BOM, soft hyphen, the tag characters, LRM / RLM...) that no script needs there.

    Why: ``a\u200bb`` and ``ab`` look the same but are two names -- a filter, a hop, a read
    or a removal by the visible name misses one, and a model or another user can plant a
    look-alike. The joiners (:data:`JOINERS`) are kept between two non-ASCII characters
    (their only real use); between ASCII characters or at an end they only make a look-alike.
    One pass over ``s``, in Python only for text with an unprintable character: no ASCII
    character is a format character and no format character is printable, so
    ``str.isprintable`` (in C) clears the usual URI or label, ASCII or not (a walk of each
    non-ASCII one cost ~1.7-2.8 us a write; 0.2 us so: helper perf58).
    Shared by new tags (:func:`treehop.tags.new_label`) and new URIs
    (:func:`treehop.uri.check_new`)."""
    if s.isascii() or s.isprintable():
        return False
    for i, ch in enumerate(s):
        if ch.isascii() or unicodedata.category(ch) != "Cf":
            continue
        if unneeded_format_at(s, i):
            return True
    return False


def unneeded_format_at(s: str, i: int) -> bool:
    """Whether ``s[i]``, a format character (category Cf), is one no script needs there: any
    but a joiner, or a joiner at an end or beside an ASCII or another format character (the
    rule of :func:`has_invisible_format`, for a caller that walks ``s`` itself)."""
    if s[i] not in JOINERS or i == 0 or i == len(s) - 1:
        return True
    before, after = s[i - 1], s[i + 1]
    return (
        before.isascii()
        or after.isascii()
        or "Cf" in {unicodedata.category(before), unicodedata.category(after)}
    )


def check_strings(
    values: object, what: str, error: type[Exception] = InvalidQueryError
) -> list[str]:
    """A list (any iterable but one string) of strings, or ``error`` saying what is wrong."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise error(f"expected a list of {what} (strings), not one string")
    out = list(values)
    # an index, not the value: a ``None`` in the list is itself the bad value
    bad = next((i for i, v in enumerate(out) if not isinstance(v, str)), None)
    if bad is not None:
        raise error(f"{what} must be strings, got {type(out[bad]).__name__}")
    # Each as the plain string it holds. Why (helper attacks85): a ``str`` subclass passes
    # ``isinstance`` with its own methods, and a caller's ``startswith`` / ``__hash__`` /
    # ``__eq__`` that raise or lie then ran inside the read (``PassageIndex.get``: a
    # ``RuntimeError`` out of ``get_by_ids``), as a subclass's ``__len__`` did in the query
    # checks (helper attacks71).
    return [v if type(v) is str else str.__str__(v) for v in out]


def check_query(query: object) -> str:
    """A query string: not blank (Unicode whitespace such as U+00A0 and U+3000 counts as
    blank), at least one visible character (a query of only control or format characters,
    such as ``"\x01"`` or U+200B, would be embedded as noise), no NUL (it truncates a C
    string in an engine or a log), at most ``MAX_QUERY_CHARS``, valid Unicode (no lone
    surrogates)."""
    if not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    # (a str subclass as the string it holds: its own ``__len__`` answering 0 let a query of
    # any length past the bound below; helper attacks71)
    query = str.__str__(query)
    if not query.strip():
        raise InvalidQueryError("query is empty")
    if "\x00" in query:
        raise InvalidQueryError("query contains a NUL character")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    # (stops at the first visible character: linear, and one step for an ordinary query;
    # private-use and unassigned code points count as visible: a newer Unicode or a font
    # may give them a glyph)
    if all(unicodedata.category(c) in _INVISIBLE for c in query):
        raise InvalidQueryError(
            "query has no visible character (only control, format or space characters)"
        )
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidQueryError(
            "query contains a lone surrogate (not valid Unicode text)"
        ) from None
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidQueryError(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    return query.strip()


SHOWN_VALUE_CHARS = 100
"""How much of a caller's value a check's error shows (``...`` after a cut)."""


def shown_value(value: object, chars: int = SHOWN_VALUE_CHARS) -> str:
    """A caller's value as a check's error shows it: its repr cut at ``chars`` (by default
    :data:`SHOWN_VALUE_CHARS`) characters, an integer of more than 300 bits by its size.
    Every module's refusal of a caller's value goes through it (helper leftovers65d: the
    lexical index, the client's constructor, the reader processes, the integration kit and
    ``arguments._short`` wrote ``{value!r}`` whole). Why (helper leftovers63b):
    ``k="x" * 10**6`` made a megabyte message, and ``repr(10**5000)`` raises ValueError
    (Python's 4,300-digit limit) inside the f-string that was to report it.

    The repr is built only as far as it is shown (:func:`treehop.bounded_repr.bounded_repr`):
    refusing ``limit=list(range(5 * 10**6))`` built the whole 39 MB repr first, 1.3 s (helper
    attacks75's open item); a value whose repr fits is shown exactly as ``repr`` writes it."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 300:
        return f"an integer of {value.bit_length()} bits"
    try:
        text = bounded_repr(value, chars + 1)
    except Exception:  # (a caller's object whose repr raises)
        text = f"<{type(value).__name__}>"
    # (redacted: a key pasted into the wrong argument, ``k=api_key``, is echoed masked)
    return redact(text if len(text) <= chars else f"{text[: chars - 3]}...")


def integral(value: object) -> int | None:
    """``value`` as a Python ``int`` when it is an integer (an ``int`` or a numpy integer:
    ``numbers.Integral``), never a bool; else ``None``. Why (helper attacks75's open item):
    ``find(limit=np.int64(3))`` was refused while the configs took numpy numbers, and a
    ``k`` computed with numpy (``np.argmax``, ``len(array) // 2`` on an array's shape) is
    an integer to its caller. A float, even ``3.0``, stays refused, as Python's ``range``
    refuses it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return None
    try:
        return int(value)
    except Exception:
        # (an int subclass or a class registered as Integral whose __int__ / __index__
        # raises: no number to its caller, refused as one, not a raw RuntimeError)
        return None


def real(value: object) -> float | int | None:
    """``value`` as a Python number when it is a real number (``int``, ``float``, a numpy
    number, a ``Fraction``: ``numbers.Real``), never a bool; else ``None`` (an int stays an
    int, so an over-large one can still be told by its size)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return integral(value)
    try:
        return float(value)
    except OverflowError:
        # ``Fraction(10**400)`` is a real number past a float's range: its sign's infinity,
        # which every range check refuses (it was a raw OverflowError out of ``find``)
        try:
            return math.inf if value > 0 else -math.inf  # type: ignore[operator]
        except Exception:
            return None
    except Exception:  # (a registered Real whose __float__ raises)
        return None


def finite(v: int | float) -> bool:
    """Finite and convertible to float (``10**400`` is an int no float can hold)."""
    try:
        return math.isfinite(float(v))
    except OverflowError:
        return False


def exact_real(
    given: object, what: str, error: type[TreehopError], *, float_only: bool = False
) -> float | int | None:
    """``given`` as the Python number :func:`real` makes of it (``None`` where it is no real
    number; a NaN, an infinity or an integer past float range as ``real`` gives it, for the
    caller's own refusal), refused as ``error`` where that number is not exactly ``given``:
    a range's bound (:func:`~treehop.filters._python_bounds`), a ``must`` / ``must_not``'s
    cond (:func:`~treehop.filters._python_cond`), and with ``float_only`` every time given
    as a number (:func:`~treehop.timestamps.to_epoch`: a ``time`` filter's or ``find()``'s
    ``since`` / ``until``, a memory's ``timestamp``, ``time_range_filter``'s bounds), which
    becomes the float epoch seconds a store keeps and compares, so an integer past 2**53
    that no float holds is refused too.

    One rule for every number a filter compares or a memory's time stores (helper
    leftovers69b for the bounds; helper leftovers69d for the conds and the filters' times;
    helper leftovers70b for ``to_epoch`` itself, so a stored ``timestamp`` and the public
    ``time_range_filter`` no longer round on their own): ``Fraction(1, 10**400)`` silently
    became ``0.0`` (a ``must`` on it matched a stored ``0``, a ``since`` on it took a
    memory at the epoch), ``Fraction(1, 3)`` a nearby float, an ``np.longdouble`` with
    more digits the float next to it. The stores compare doubles, so the exact value
    cannot be kept; ``float(x)`` says which value the caller means."""
    number = real(given)
    if number is None or not finite(number):
        return number
    held: float | int = float(number) if float_only else number
    # (``held == number`` in Python's exact int / float comparison too: a numpy integer
    # compares with a float *as a float*, so ``np.int64(2**53 + 1)`` equalled the float
    # next to it and a time was rounded where the same ``int`` is refused; helper attacks83)
    if not _equals(held, given) or (float_only and not _equals(held, number)):
        holder = "a float" if float_only else "a float or an integer"
        raise error(
            f"{what} must be a number {holder} holds exactly, got {shown_value(given)} "
            f"(it would compare as {held!r}): give float(value) if that is the value meant"
        )
    return number


def _equals(number: float | int, given: object) -> bool:
    """Whether the Python number :func:`real` made of ``given`` is exactly ``given``
    (numbers compare exactly across ``int``, ``float``, ``Fraction`` and numpy types; a
    registered ``Real`` whose comparison raises is no exact number)."""
    try:
        return bool(number == given)
    except Exception:
        return False


def check_limit(limit: object, name: str = "limit") -> int:
    n = integral(limit)
    if n is None:
        raise InvalidQueryError(f"{name} must be an integer, got {shown_value(limit)}")
    if not 1 <= n <= MAX_LIMIT:
        raise InvalidQueryError(
            f"{name} must be between 1 and {MAX_LIMIT}, got {shown_value(limit)}"
        )
    return n


def check_threshold(value: float | None, name: str = "score_threshold") -> float | None:
    if value is None:
        return None
    number = real(value)
    if number is None:
        raise InvalidQueryError(f"{name} must be a number, got {shown_value(value)}")
    try:
        f = float(number)
    except OverflowError:
        bits = number.bit_length() if isinstance(number, int) else 0
        raise InvalidQueryError(f"{name} out of range (an integer of {bits} bits)") from None
    if not -1e9 < f < 1e9:
        raise InvalidQueryError(f"{name} out of range: {shown_value(value)}")
    return f


def check_dense_weight(value: float | None) -> float | None:
    if value is None:
        return None
    number = real(value)
    if number is None or not 0.2 <= number <= 1:  # False for NaN too
        raise InvalidQueryError(f"dense_weight must be in [0.2, 1], got {shown_value(value)}")
    return float(number)


def as_list(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def check_deadline(
    deadline_s: object, error: type[Exception], name: str = "deadline_s"
) -> float | None:
    """Validate a deadline argument (``None``: no total deadline); ``error`` on a bad value."""
    if deadline_s is None:
        return None
    if isinstance(deadline_s, bool) or not isinstance(deadline_s, (int, float)):
        raise error(f"{name} must be a positive number or None, got {shown_value(deadline_s)}")
    # (compared before ``float()``: an int past float range, 10**400, raised OverflowError)
    if not 0 < deadline_s < 1e7:
        raise error(f"{name} must be a positive number of seconds, got {shown_value(deadline_s)}")
    return float(deadline_s)
