"""LangChain metadata filters as treehop's filter DSL, checked against the stored fields.

LangChain vector stores take a ``filter`` dict. Users coming from Chroma, PGVector or Qdrant
write it in the MongoDB style those stores share, so that is what is accepted here, translated
exactly (never loosened):

- ``{"source": "a.pdf"}`` / ``{"source": {"$eq": "a.pdf"}}``: equality; several keys: AND;
- ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``, ``$in``, ``$nin``;
- PGVector's (and Pinecone's) ``$exists`` and PGVector's ``$between`` (``[low, high]``, both
  ends kept): ``{"owner": {"$exists": True}}`` is the DSL's ``not_empty``, ``False`` its
  ``empty``. The one difference: treehop counts a key stored with ``null``, ``""`` or ``[]``
  as absent (PGVector's ``metadata ? key`` counts it present). Why: users bring these
  filters from those stores, and "unknown operator" sent them to the DSL for one condition;
- Chroma's ``$contains`` / ``$not_contains`` on a metadata field: ``{"tags": {"$contains":
  "ops"}}`` keeps a document whose list field has the item ``"ops"`` (Chroma's array
  metadata), and one whose string field has ``"ops"`` inside it (LlamaIndex's ``CONTAINS``,
  Python's ``value in field``, which treehop's LlamaIndex filters take: a string field
  Chroma does not search); a number or bool is an item of a list (or equals a number field);
- ``{"$and": [...]}``, ``{"$or": [...]}``.

A dict with an ``"op"`` key is treehop's own DSL (:mod:`treehop.filters`) and passes through.
Anything else (an unknown operator, a list where a scalar belongs) is an
:class:`~treehop.errors.InvalidFilterError`, and so is a field no stored node has
(:func:`check_filter_fields`): a filter that silently matches nothing is the bug the user is
looking for.

Every refusal shows the caller's key and operator through
:func:`~treehop.integration_kit.shown_name` and a value through
:func:`~treehop.validation.shown_value`: cut, escaped and redacted. Why (helper
leftovers65e): ``{key!r:.100}`` echoed a registered secret given as a field name or a value
whole (attacks77 redacted the ``None`` refusal only), and built the whole repr of a
million-item value before cutting it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

import numpy as np

from treehop.errors import InvalidFilterError
from treehop.filters import (
    MAX_FILTER_DEPTH,
    MAX_FILTER_NODES,
    MAX_TEXT_MATCH_CHARS,
    MetadataFilter,
)
from treehop.integration_kit import datetime64_value, number_text_hint, shown_name
from treehop.validation import real, shown_value

_RANGE = {"$gt": "gt", "$gte": "gte", "$lt": "lt", "$lte": "lte"}
_RANGE_OPS = frozenset({*_RANGE, "$between"})


def stored_time(value: dt.datetime) -> float:
    """A ``datetime`` in metadata as the LangChain store keeps it: epoch seconds (a float).

    Why: LangChain's ``TimeWeightedVectorStoreRetriever`` stamps every document with
    ``created_at`` / ``last_accessed_at`` datetimes before it adds them, and stored metadata
    is JSON, which has no datetime (the add was an ``IngestError``). Epoch seconds are what
    that retriever reads back (``datetime.fromtimestamp`` of a float stamp) and treehop's own
    time values (:mod:`treehop.timestamps`: filterable with ``$gte`` / ``$lt``). A naive
    datetime is local time, as ``datetime.timestamp`` and ``fromtimestamp`` take it (the
    retriever's ``datetime.now()``), so the stamp reads back as written. The filters below
    turn a ``datetime`` they compare with this same function, so ``{"created_at": {"$gte":
    t}}`` meets the stored number (helper leftovers66b: it was "ranges on numbers").

    A datetime the number does not read back as is refused (``ValueError``, which the
    metadata converter reports naming the key): a float holds a microsecond only up to
    about 2242 (``datetime(2305, 1, 28, 22, 57, 46, 748000)`` read back a microsecond
    early, found by this helper's property test), and a naive time inside a daylight-saving
    gap (02:30 on the day clocks skip it) names no instant: it read back an hour off."""
    epoch = value.timestamp()
    back = dt.datetime.fromtimestamp(epoch, value.tzinfo) if value.tzinfo else None
    if (back if back is not None else dt.datetime.fromtimestamp(epoch)) != value:
        raise ValueError(
            "the epoch seconds the LangChain store keeps for a datetime do not read back as "
            "this one (a float holds a microsecond from about 1700 to 2242; a naive time in a "
            "daylight-saving gap names no instant): store it as ISO text"
        )
    return epoch


def _compared(key: str, op: str, value: Any) -> Any:
    """A filter's value as the store keeps the same value in metadata, so the two meet: a
    ``datetime`` (or numpy ``datetime64``, as the UTC time it counts) as epoch seconds, a
    ``date`` as its ISO text (for ``$eq`` / ``$ne`` / ``$in`` / ``$nin``). Unambiguous: the
    store keeps every such value so. A ``date`` in a range is refused (it is stored as text
    and ranges compare numbers); so is an ISO string (it could be meant for a text field).

    A numpy number (``np.int64``, ``np.float32``, ...) is the Python number it equals, as
    everywhere treehop takes a number (:func:`~treehop.validation.real`). Why: a bound
    computed with numpy (``np.percentile``, a column's ``max()``) was refused in a range
    ("compares ranges on numbers", ``np.int64(3)``), and an ``np.float64`` reached the core's
    filter as it was. A numpy bool is no number (a Python bool is not one either), and a NaN
    or an infinity is refused by the core's range check, as a Python one is."""
    if isinstance(value, np.number):
        number = real(value)
        if number is not None:  # (a complex number is no real one: refused as it is)
            value = number
    when = value
    if isinstance(value, np.datetime64):
        when = datetime64_value(value)
        if when is None:
            raise InvalidFilterError(
                f"filter {shown_name(key)} {op}: {shown_value(value)} is no datetime "
                "(NaT, a year outside 1..9999, or a part below a microsecond)"
            )
    if isinstance(when, dt.datetime):
        try:  # (a bound need not read back exactly: the comparison is the stored number's)
            return when.timestamp()
        except (ValueError, OverflowError, OSError):  # (year 1 in some zones, pandas' NaT)
            raise InvalidFilterError(
                f"filter {shown_name(key)} {op}: {shown_value(value)} has no epoch time"
            ) from None
        except Exception as exc:  # (its tzinfo is the caller's code: helper attacks79)
            raise InvalidFilterError(
                f"filter {shown_name(key)} {op}: {shown_value(value)} has no epoch time "
                f"(its tzinfo raised {type(exc).__name__})"
            ) from None
    if isinstance(value, dt.date):
        if op in _RANGE_OPS:
            raise InvalidFilterError(
                f"filter {shown_name(key)} {op}: a date is stored as its ISO text and "
                "treehop compares ranges on numbers; store a datetime in the metadata (it is "
                "stored as epoch seconds) and compare with one: "
                f"datetime({value.year}, {value.month}, {value.day})"
            )
        return value.isoformat()
    return value


_TIME_HINT = (
    "; a date or time: store a datetime in the metadata (it is stored as epoch seconds) and "
    "give a datetime, or its .timestamp(), as the bound"
)


def _bound(key: str, op: str, value: Any, given: Any = None) -> Any:
    """A range bound: a number, or a ``datetime`` / ``datetime64`` as the epoch seconds the
    vector store keeps a datetime metadata value as (:func:`_compared`, :func:`stored_time`:
    a naive one is local time, as ``datetime.timestamp`` takes it); anything else refused.

    Why: the store turns ``{"created_at": datetime(...)}`` into a number, so
    ``{"created_at": {"$gte": datetime(2024, 1, 1)}}`` is the filter a user writes for it,
    and it was "treehop compares ranges on numbers"; a text date (``"2024-01-01"``) is
    refused naming that way (stored dates are text, and text has no range here).
    ``given``: the whole ``[low, high]`` of a ``$between`` the value is one end of, shown in
    the refusal."""
    value = _compared(key, op, value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        hint = number_text_hint(value) or (_TIME_HINT if isinstance(value, str | dt.date) else "")
        if op == "$between":
            expects = "expects [low, high] numbers"
        else:
            expects = "treehop compares ranges on numbers"
        shown = shown_value(value if given is None else given)
        raise InvalidFilterError(f"filter {shown_name(key)} {op}: {expects}, got {shown}{hint}")
    return value


def _no_none(key: str, op: str) -> InvalidFilterError:
    """The refusal of ``None`` as a value to compare, saying what to write instead.

    Why (helper usage74): ``{"lang": None}`` (MongoDB's "null or missing", a Chroma user's
    guess) reached the core's DSL and came back as "filter: conds must be scalars, got
    NoneType": the DSL's word, no field, nothing to write. treehop counts a key stored as
    ``null`` as absent, so ``$exists`` is the way to ask for it either way; translating
    ``None`` into it would also match ``""`` and ``[]`` (what ``$exists`` counts as absent),
    a looser filter than the one written, so the caller is told instead."""
    keep = "False" if op in ("==", "$eq", "$in") else "True"
    want = "without" if keep == "False" else "with"
    also = {
        "$in": "; beside other values, leave None out of the list and join the two under $or",
        "$nin": "; beside other values, leave None out of the list and join the two under $and",
    }.get(op, "")
    # (the key redacted: a registered key pasted as a field name was echoed whole; attacks77)
    shown = shown_name(key)
    return InvalidFilterError(
        f"filter {shown} {op}: None is not a value a filter compares (a key stored as "
        f"null counts as absent): {{{shown}: {{'$exists': {keep}}}}} keeps the documents "
        f"{want} a value for it{also}"
    )


_SUBSTRING_OPS = frozenset({"$like", "$ilike", "$regex", "$text_match"})
"""Operators other stores take for a part of a string (PGVector's ``$like`` / ``$ilike``,
MongoDB's ``$regex``): the refusal names the
DSL's ``text_match``, the substring filter treehop has. Not translated: a ``LIKE`` pattern
or a regex is a substring only in its ``%word%`` form."""


def _substring_hint(key: str, op: object) -> str:
    """What to write instead of a substring operator treehop does not take ("" otherwise)."""
    if not isinstance(op, str) or op.lower() not in _SUBSTRING_OPS:
        return ""
    fold = ", 'ignore_case': True" if op.lower() == "$ilike" else ""
    return (
        f"; for a substring write treehop's filter DSL: {{'op': 'text_match', "
        f"'field': {shown_name(key)}, 'value': 'word'{fold}}} "
        "(a string value containing the word; not a pattern)"
    )


def _contains(key: str, op: str, value: Any) -> dict[str, Any]:
    """``$contains`` / ``$not_contains``: ``value in <the field>`` (or its negation).

    A text is an item of a list field (Chroma's array metadata, where the operator exists
    in LangChain's stores) or a substring of a string field (LlamaIndex's ``CONTAINS``):
    the DSL's ``text_match`` with ``whole_items``, Python's ``in``, as the LlamaIndex
    package translates ``CONTAINS``. A number or bool is an item of a list field (``must``,
    which also matches a number field equal to it). Why (helper leftovers71b): the
    operator was refused with advice to write the DSL, where a Chroma user's
    ``{"tags": {"$contains": "ops"}}`` has one meaning treehop can keep. An empty text is
    refused (it is inside every string: the filter would drop only the non-strings), and
    so is one longer than the DSL's ``text_match`` bound, by this operator's name."""
    item = _scalar(key, op, value)
    negated = op == "$not_contains"
    if not isinstance(item, str):
        return {"op": "must_not" if negated else "must", "field": key, "conds": [item]}
    if not item:
        raise InvalidFilterError(
            f"filter {shown_name(key)} {op}: an empty text is inside every string, so it "
            f"filters nothing out of a string field; leave it out, or keep the documents "
            f"with a value: {{{shown_name(key)}: {{'$exists': True}}}}"
        )
    if str.__len__(item) > MAX_TEXT_MATCH_CHARS:
        raise InvalidFilterError(
            f"filter {shown_name(key)} {op}: compares a text of at most "
            f"{MAX_TEXT_MATCH_CHARS} characters (it is searched inside every string value)"
        )
    op_out = "text_match_not" if negated else "text_match"
    return {"op": op_out, "field": key, "value": item, "whole_items": True}


def _scalar(key: str, op: str, value: Any) -> Any:
    if isinstance(value, list | tuple | dict | set):
        hint = (
            f"; {{{shown_name(key)}: {{'$in': [...]}}}} keeps any of several values"
            if op in {"==", "$eq"} and isinstance(value, list | tuple | set)
            else ""
        )
        raise InvalidFilterError(
            f"filter {shown_name(key)} {op}: expects one value, got {shown_value(value)}{hint}"
        )
    if value is None:
        raise _no_none(key, op)
    return _compared(key, op, value)


def _values(key: str, op: str, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple) or not value:
        raise InvalidFilterError(
            f"filter {shown_name(key)} {op}: expects a non-empty list, got {shown_value(value)}"
        )
    if any(v is None for v in value):
        raise _no_none(key, op)
    return [_compared(key, op, v) for v in value]


def _field(key: str, cond: Any) -> dict[str, Any]:
    if not isinstance(cond, Mapping):
        return {"op": "must", "field": key, "conds": [_scalar(key, "==", cond)]}
    parts: list[dict[str, Any]] = []
    ranges: dict[str, Any] = {}
    for op, value in cond.items():
        if op == "$eq":
            parts.append({"op": "must", "field": key, "conds": [_scalar(key, op, value)]})
        elif op == "$ne":
            parts.append({"op": "must_not", "field": key, "conds": [_scalar(key, op, value)]})
        elif op == "$in":
            parts.append({"op": "must", "field": key, "conds": _values(key, op, value)})
        elif op == "$nin":
            parts.append({"op": "must_not", "field": key, "conds": _values(key, op, value)})
        elif op == "$exists":
            if not isinstance(value, bool):
                raise InvalidFilterError(
                    f"filter {shown_name(key)} $exists: expects true or false, "
                    f"got {shown_value(value)}"
                )
            parts.append({"op": "not_empty" if value else "empty", "field": key})
        elif op == "$between":
            low_high = _values(key, op, value)
            if len(low_high) != 2:
                raise InvalidFilterError(
                    f"filter {shown_name(key)} $between: expects [low, high] numbers, "
                    f"got {shown_value(value)}"
                )
            low, high = (_bound(key, op, v, given=value) for v in low_high)
            parts.append({"op": "range", "field": key, "gte": low, "lte": high})
        elif op in ("$contains", "$not_contains"):
            parts.append(_contains(key, op, value))
        elif op in _RANGE:
            ranges[_RANGE[op]] = _bound(key, op, value)
        else:
            hint = _substring_hint(key, op)
            raise InvalidFilterError(
                f"filter {shown_name(key)}: unknown operator {shown_name(op)} (supported: $eq, "
                f"$ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $between, $contains, "
                f"$not_contains){hint}"
            )
    if ranges:
        parts.append({"op": "range", "field": key, **ranges})
    if not parts:
        raise InvalidFilterError(f"filter {shown_name(key)}: an empty condition")
    return parts[0] if len(parts) == 1 else {"op": "and", "conds": parts}


def _mongo(
    spec: Mapping[str, Any], depth: int = 0, made: list[int] | None = None
) -> dict[str, Any]:
    # Bounded as the core's DSL is (a one-filter $and collapses, so the core would not see
    # the depth; 5,000 levels exhausted the stack here). ``made`` counts the DSL objects
    # the walk has made (each field's leaf, each $and / $or of two or more), for the whole
    # filter: past the core's MAX_FILTER_NODES it is refused as the core would refuse its
    # translation. Why (helper attacks81): one {"$or": [...]} listed 1,000 times in an
    # $or, four levels deep (a few kB held), was walked path by path, 10**12 objects: the
    # vector store's search hung here before the core's bound could refuse it.
    if depth > MAX_FILTER_DEPTH:
        raise InvalidFilterError(f"filter nested deeper than {MAX_FILTER_DEPTH} levels")
    made = [0] if made is None else made
    parts: list[dict[str, Any]] = []
    for key, cond in spec.items():
        if key in {"$and", "$or"}:
            if not isinstance(cond, list | tuple) or not cond:
                raise InvalidFilterError(f"filter {key}: expects a non-empty list of filters")
            subs = []
            for c in cond:
                if not isinstance(c, Mapping):
                    raise InvalidFilterError(f"filter {key}: expects filters, got {shown_value(c)}")
                subs.append(_mongo(c, depth + 1, made))
            if len(subs) > 1:
                _made(made)
            parts.append(subs[0] if len(subs) == 1 else {"op": key[1:], "conds": subs})
        elif isinstance(key, str) and key.startswith("$"):
            raise InvalidFilterError(
                f"filter: unknown operator {shown_name(key)} (use $and or $or)"
            )
        else:
            _made(made)
            parts.append(_field(str(key), cond))
    if not parts:
        raise InvalidFilterError("filter: an empty filter")
    return parts[0] if len(parts) == 1 else {"op": "and", "conds": parts}


def _made(made: list[int]) -> None:
    """One more DSL object made (:func:`_mongo`), refused past the core's bound."""
    made[0] += 1
    if made[0] > MAX_FILTER_NODES:
        raise InvalidFilterError(f"filter has more than {MAX_FILTER_NODES} objects")


_DICT_EXAMPLE = (
    'a dict such as {"source": "a.md"} or {"start_index": {"$lt": 800}} '
    "($eq $ne $gt $gte $lt $lte $in $nin $exists $between $contains $not_contains, $and / $or) "
    "or treehop's filter DSL"
)


def _not_a_dict(spec: object) -> str:
    """The refusal of a filter that is not a dict. Why a callable is named: LangChain's own
    ``InMemoryVectorStore`` takes ``filter=lambda doc: ...`` (a Python predicate over each
    ``Document``), so a user swapping stores in brings one; "got function" did not say that
    treehop's filters run inside the tree search (and in Milvus / VikingDB), where a Python
    predicate cannot, nor what to write instead."""
    if callable(spec):
        return (
            f"filter must be {_DICT_EXAMPLE}, got a callable ({type(spec).__name__}): "
            "a Python predicate, as InMemoryVectorStore takes, cannot run inside treehop's "
            "tree search; write the condition as such a dict"
        )
    return f"filter must be {_DICT_EXAMPLE}, got {type(spec).__name__}"


def to_treehop_filter(spec: Mapping[str, Any] | MetadataFilter | None) -> dict[str, Any] | None:
    """A LangChain ``filter`` (MongoDB style or treehop DSL) as a validated treehop DSL dict."""
    if spec is None:
        return None
    if isinstance(spec, MetadataFilter):
        return dict(spec.spec)
    if not isinstance(spec, Mapping):
        raise InvalidFilterError(_not_a_dict(spec))
    if not spec:
        return None
    out = dict(spec) if "op" in spec else _mongo(spec)
    MetadataFilter.parse(out)  # the core's own validation, before any search runs
    return out
