"""Map LlamaIndex :class:`MetadataFilters` onto treehop's tag filter and metadata filter DSL.

treehop filters in two independent places that are always combined with AND: a *tag filter*
(any-of and all-of label sets) and a *metadata filter* (the ``must``/``must_not``/``range``/
``range_out``/``and``/``or`` DSL of :mod:`treehop.filters`). A LlamaIndex filter tree is split
into those two parts:

- the key ``tags`` addresses the tag filter (``EQ``/``CONTAINS`` and ``ALL`` require tags,
  ``ANY``/``IN`` -- or an ``OR`` of single tags -- require one of a set);
- the key ``context_type`` narrows the context types searched (``EQ``/``IN``/``ANY``);
- every other key addresses the node's stored metadata.

Anything that cannot be expressed exactly raises :class:`~treehop.errors.InvalidFilterError`
naming the offending filter: a filter is never dropped or loosened silently, because a dropped
filter returns documents the caller asked to exclude.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from treehop import tags as tagmod
from treehop.errors import InvalidFilterError
from treehop.filters import MAX_FILTER_DEPTH, MAX_FILTER_NODES, MAX_TEXT_MATCH_CHARS
from treehop.filters import MetadataFilter as TreehopMetadataFilter
from treehop.integration_kit import number_text_hint, shown_name
from treehop.models import ContextType
from treehop.validation import shown_value

from .nodes import PROVENANCE

TAGS_KEY = "tags"
CONTEXT_TYPE_KEY = "context_type"

#: Keys the retriever adds to every node's metadata as provenance. They are computed per
#: result, not stored on the tree, so a filter on them would silently match nothing.
#: (``tags`` and ``context_type`` are provenance too, but map onto treehop's own filters.)
PROVENANCE_KEYS = frozenset(PROVENANCE) - {TAGS_KEY, CONTEXT_TYPE_KEY}

CONTEXT_ALIASES = {
    "resource": ContextType.RESOURCE,
    "resources": ContextType.RESOURCE,
    "memory": ContextType.MEMORY,
    "memories": ContextType.MEMORY,
    "skill": ContextType.SKILL,
    "skills": ContextType.SKILL,
}
_RANGE_OPS = {
    FilterOperator.GT: "gt",
    FilterOperator.GTE: "gte",
    FilterOperator.LT: "lt",
    FilterOperator.LTE: "lte",
}
_TAG_ANY_OPS = {FilterOperator.ANY, FilterOperator.IN}
_TAG_ONE_OPS = {FilterOperator.EQ, FilterOperator.CONTAINS}
_TAG_GROUP_OPS = _TAG_ANY_OPS | _TAG_ONE_OPS


@dataclass(frozen=True)
class TreehopFilterArgs:
    """The treehop keyword arguments a :class:`MetadataFilters` translates to."""

    filter: dict[str, Any] | None = None
    tags: tuple[str, ...] | None = None
    tags_all: tuple[str, ...] | None = None
    context_types: tuple[ContextType, ...] | None = None
    #: LlamaIndex filters that were mapped, for error messages and ``repr``.
    source: str = field(default="", compare=False)


def _describe(f: MetadataFilter | MetadataFilters) -> str:
    """A filter for an error message, bounded: the key and value at most 100 characters
    each, at most 10 filters of a group (a value of a million numbers was quoted whole, a
    7.9 MB ``InvalidFilterError``).

    The key and the value are redacted and the value's repr is built only as far as it is
    shown (:func:`~treehop.validation.shown_value`). Why (helper leftovers65e): a
    registered secret given as a key or a value was quoted whole, and ``{value!r:.100}``
    built the whole repr of a million-item value before cutting it."""
    if isinstance(f, MetadataFilters):
        inner = ", ".join(_describe(x) for x in f.filters[:10])
        more = ", ..." if len(f.filters) > 10 else ""
        return f"{(f.condition or FilterCondition.AND).value.upper()}({inner}{more})"
    return f"{_key(f.key)} {f.operator.value} {shown_value(f.value)}"


def _key(key: object) -> str:
    """A filter's key as :func:`_describe` writes it: unquoted (as before), cut at 100
    characters, escaped and redacted (:func:`~treehop.integration_kit.shown_name`'s form
    without its quotes)."""
    return shown_name(key, 100)[1:-1]


def _as_list(f: MetadataFilter) -> list[Any]:
    value = f.value
    if value is None:
        raise InvalidFilterError(f"filter {_describe(f)!r}: a value is required")
    items = list(value) if isinstance(value, list) else [value]
    if not items:
        means = _EMPTY_LIST_MEANS.get(f.operator, _MATCHES_NOTHING)
        raise InvalidFilterError(f"filter {_describe(f)!r}: the value list is empty ({means})")
    return items


_MATCHES_NOTHING = "it would match nothing"
_EMPTY_LIST_MEANS = {
    FilterOperator.NIN: "it excludes nothing: leave the filter out to keep every node",
    FilterOperator.ALL: "it asks for no value: leave the filter out to keep every node",
}
"""What an empty list asks, by operator, for the refusal's message. Why (helper usage80):
every empty list was refused as "it would match nothing", true of ``in`` / ``any``, the
opposite of ``nin []`` (``SimpleVectorStore`` keeps every node; a list of exclusions built
at run time is often empty) and of ``all []``. The list is still refused, not read as "no
filter", as the LangChain package and the core DSL refuse an empty list."""


def _scalar(f: MetadataFilter) -> Any:
    if f.value is None or isinstance(f.value, list):
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: operator {f.operator.value!r} takes one scalar value"
            + ("; use IN for a list" if isinstance(f.value, list) else "")
        )
    return f.value


def _check_metadata_key(f: MetadataFilter) -> None:
    if f.key in PROVENANCE_KEYS:
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: {f.key!r} is provenance the retriever adds to each "
            "result, not metadata stored on the tree, so it cannot be filtered on"
        )


_NONE_KEEPS = {
    FilterOperator.EQ: False,
    FilterOperator.IN: False,
    FilterOperator.ANY: False,
    FilterOperator.CONTAINS: False,
    FilterOperator.ALL: False,
    FilterOperator.NE: True,
    FilterOperator.NIN: True,
}
"""The operators that compare a value, each with whether ``value=None`` with it asks for the
nodes *with* a value (``!=`` / ``nin``) rather than those without one."""


def _no_none(f: MetadataFilter) -> InvalidFilterError:
    """The refusal of ``value=None`` with a comparing operator, naming the filter that works.

    Why (helper leftovers65c): ``MetadataFilter(key="lang", value=None)`` (a guess for "the
    nodes without a language", as ``SimpleVectorStore`` matches a missing key as ``None``)
    came back as "operator '==' takes one scalar value", naming neither the field nor
    ``FilterOperator.IS_EMPTY``, which asks for it. Not translated into ``IS_EMPTY``:
    treehop's "empty" also counts ``""`` and ``[]``, a looser filter than the one written
    (the LangChain package refuses ``None`` so too)."""
    with_value = _NONE_KEEPS[f.operator]
    key = shown_name(f.key, 100)
    empty = f"MetadataFilter(key={key}, value=None, operator=FilterOperator.IS_EMPTY)"
    suggestion = (
        f"MetadataFilters(filters=[{empty}], condition=FilterCondition.NOT)"
        if with_value
        else empty
    )
    return InvalidFilterError(
        f"filter {_describe(f)!r}: None is not a value a filter compares (a key stored as "
        f"null counts as absent, as do '' and []): {suggestion} keeps the nodes "
        f"{'with' if with_value else 'without'} a value for {key}"
    )


def metadata_leaf(f: MetadataFilter) -> dict[str, Any]:
    """One LlamaIndex filter on a stored metadata key as a treehop DSL node."""
    _check_metadata_key(f)
    op = f.operator
    if f.value is None and op in _NONE_KEEPS:
        raise _no_none(f)
    key = f.key
    if op is FilterOperator.CONTAINS:
        return _contains(f, _scalar(f))
    if op is FilterOperator.EQ:
        return {"op": "must", "field": key, "conds": [_scalar(f)]}
    if op is FilterOperator.NE:
        return {"op": "must_not", "field": key, "conds": [_scalar(f)]}
    if op in _RANGE_OPS:
        value = _scalar(f)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            # (a date: every LlamaIndex store built on node_to_metadata_dict keeps a
            # datetime as its ISO text, and SimpleDirectoryReader's creation_date /
            # last_modified_date are text dates, which a range here cannot compare; helpers
            # leftovers66b and usage76, documented in docs/llamaindex.md; a ``date`` has no
            # ``timestamp()``, so the hint gives its form too: helper leftovers69c)
            hint = number_text_hint(value) or (
                "; a datetime in metadata is stored as its ISO text, as node_to_metadata_dict "
                "writes it: for a time range store the time as a number (epoch seconds, "
                "datetime.timestamp(); e.g. metadata['created_ts'] = t.timestamp(); a date d "
                "has none: datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp(); or "
                "SimpleDirectoryReader(file_metadata=...)) and compare with a number"
                if isinstance(value, str)
                else ""
            )
            raise InvalidFilterError(
                f"filter {_describe(f)!r}: treehop compares ranges on numbers only, "
                f"got {type(value).__name__}{hint}"
            )
        return {"op": "range", "field": key, _RANGE_OPS[op]: value}
    if op is FilterOperator.IN:
        return {"op": "must", "field": key, "conds": _as_list(f)}
    if op is FilterOperator.NIN:
        return {"op": "must_not", "field": key, "conds": _as_list(f)}
    if op is FilterOperator.ANY:
        items = _as_list(f)
        others = [v for v in items if not isinstance(v, str)]
        leaves = [_contains(f, v) for v in dict.fromkeys(v for v in items if isinstance(v, str))]
        if others:
            leaves.append({"op": "must", "field": key, "conds": others})
        return leaves[0] if len(leaves) == 1 else {"op": "or", "conds": leaves}
    if op is FilterOperator.ALL:
        leaves = [_contains(f, v) for v in _as_list(f)]
        return leaves[0] if len(leaves) == 1 else {"op": "and", "conds": leaves}
    if op is FilterOperator.TEXT_MATCH or op is FilterOperator.TEXT_MATCH_INSENSITIVE:
        value = _scalar(f)
        if not isinstance(value, str) or not value:
            raise InvalidFilterError(
                f"filter {_describe(f)!r}: {op.value} takes a non-empty string"
            )
        leaf: dict[str, Any] = {"op": "text_match", "field": key, "value": value}
        if op is FilterOperator.TEXT_MATCH_INSENSITIVE:
            leaf["ignore_case"] = True
        return leaf
    if op is FilterOperator.IS_EMPTY:
        return {"op": "empty", "field": key}
    raise InvalidFilterError(
        f"filter {_describe(f)!r}: operator {op.value!r} has no treehop equivalent "
        "(supported: ==, !=, >, >=, <, <=, in, nin, any, all, contains, text_match, "
        "text_match_insensitive, is_empty)"
    )


def _contains(f: MetadataFilter, value: Any) -> dict[str, Any]:
    """``value in <the field>``, as ``SimpleVectorStore`` evaluates ``CONTAINS`` (and each
    value of ``ANY`` / ``ALL``): a text is a substring of a string field or an item of a
    list field (the DSL's ``text_match`` with ``whole_items``); a number is an item of a
    list field (``must``, which also matches a number field equal to it, where
    ``SimpleVectorStore`` raises ``TypeError``).

    Why (helper leftovers70a): ``MetadataFilter(key="file_name", value="faq",
    operator=CONTAINS)`` was ``must``, equality on a string field: ``faq.html`` was not
    found, where ``SimpleVectorStore`` finds it. An empty text is refused: it is in every
    string, which no DSL filter says without naming the strings (``IS_EMPTY`` under ``NOT``
    is the nearest: a value of any type)."""
    if not isinstance(value, str):
        return {"op": "must", "field": f.key, "conds": [value]}
    if not value:
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: an empty text is inside every string, so it filters "
            "nothing out of a string field; leave it out, or keep the nodes with a value: "
            f"NOT(IS_EMPTY) on {shown_name(f.key, 100)}"
        )
    if len(value) > MAX_TEXT_MATCH_CHARS:
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: {f.operator.value} compares a text of at most "
            f"{MAX_TEXT_MATCH_CHARS} characters (it is searched inside every string value)"
        )
    return {"op": "text_match", "field": f.key, "value": value, "whole_items": True}


_SWAPPED = {
    "must": "must_not",
    "must_not": "must",
    "range": "range_out",
    "range_out": "range",
    "text_match": "text_match_not",
    "text_match_not": "text_match",
    "empty": "not_empty",
    "not_empty": "empty",
}
"""Each leaf op and its exact negation in the DSL."""


def negate(spec: dict[str, Any]) -> dict[str, Any]:
    """The exact negation of a DSL node (De Morgan for and/or, leaf ops swap)."""
    op = spec["op"]
    if op == "and":
        return {"op": "or", "conds": [negate(c) for c in spec["conds"]]}
    if op == "or":
        return {"op": "and", "conds": [negate(c) for c in spec["conds"]]}
    return {**spec, "op": _SWAPPED[op]}


def _combine(condition: FilterCondition, parts: list[dict[str, Any]]) -> dict[str, Any]:
    if condition is FilterCondition.NOT:
        # LlamaIndex's NOT matches when none of the filters match: AND of the negations.
        parts = [negate(p) for p in parts]
        condition = FilterCondition.AND
    if len(parts) == 1:
        return parts[0]
    return {"op": condition.value, "conds": parts}


_SPECIAL_KEYS = frozenset({TAGS_KEY, CONTEXT_TYPE_KEY})
_STORED_TAGS_SPECIAL = frozenset({CONTEXT_TYPE_KEY})
"""The keys with a meaning of their own when ``tags`` is stored metadata (the vector store)."""


def _contains_special_key(
    f: MetadataFilter | MetadataFilters, special: frozenset[str] = _SPECIAL_KEYS
) -> str | None:
    if isinstance(f, MetadataFilters):
        for x in f.filters:
            found = _contains_special_key(x, special)
            if found:
                return found
        return None
    return f.key if f.key in special else None


def metadata_tree(
    filters: MetadataFilters, special: frozenset[str] = _SPECIAL_KEYS
) -> dict[str, Any]:
    """A nested :class:`MetadataFilters` on stored metadata only, as one DSL node
    (``special``: the keys that are not stored metadata there)."""
    parts: list[dict[str, Any]] = []
    for f in filters.filters:
        special_key = _contains_special_key(f, special)
        if special_key is not None:
            raise InvalidFilterError(
                f"filter {_describe(filters)!r}: {special_key!r} can only be filtered at the top "
                "level with AND (treehop applies tag and context-type filters to the whole "
                "query, not inside OR/NOT groups of metadata filters)"
            )
        if isinstance(f, MetadataFilters):
            parts.append(metadata_tree(f, special))
        else:
            parts.append(metadata_leaf(f))
    if not parts:
        raise InvalidFilterError(f"filter {_describe(filters)!r}: an empty filter group")
    return _combine(filters.condition or FilterCondition.AND, parts)


def _tag_labels(f: MetadataFilter) -> list[str]:
    items = _as_list(f)
    for v in items:
        if not isinstance(v, str):
            raise InvalidFilterError(
                f"filter {_describe(f)!r}: tags are strings, got {shown_value(v)}"
            )
    return [str(v) for v in items]


def _tag_any_group(
    f: MetadataFilter | MetadataFilters, tags_key: str | None = TAGS_KEY
) -> list[str] | None:
    """Labels of an "any of these tags" filter, or ``None`` if ``f`` is not one (always
    ``None`` where ``tags_key`` is ``None``: ``tags`` is stored metadata there)."""
    if isinstance(f, MetadataFilter):
        if tags_key is not None and f.key == tags_key and f.operator in _TAG_GROUP_OPS:
            return _tag_labels(f)
        return None
    if (f.condition or FilterCondition.AND) is not FilterCondition.OR:
        return None
    out: list[str] = []
    for x in f.filters:
        labels = _tag_any_group(x, tags_key)
        if labels is None:
            return None
        out.extend(labels)
    return out or None


def _context_types(f: MetadataFilter) -> list[ContextType]:
    if f.operator not in {FilterOperator.EQ, FilterOperator.IN, FilterOperator.ANY}:
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: context_type takes ==, in or any "
            "(the set of context types to search)"
        )
    out: list[ContextType] = []
    for v in _as_list(f):
        ct = CONTEXT_ALIASES.get(str(v).strip().casefold())
        if ct is None:
            raise InvalidFilterError(
                f"filter {_describe(f)!r}: unknown context type {shown_value(v)} "
                "(use resource, memory or skill)"
            )
        if ct not in out:
            out.append(ct)
    return out


def to_treehop_filters(
    filters: MetadataFilters | None, *, tags_are_metadata: bool = False
) -> TreehopFilterArgs:
    """Translate ``filters``; raise :class:`InvalidFilterError` for what cannot be mapped.

    ``tags_are_metadata``: the key ``tags`` is stored metadata like any other, not treehop's
    tags. Why: the vector store keeps each node's metadata as added, ``tags`` included, and
    ``SimpleVectorStore`` (and the LangChain store's ``filter``) match that list; a
    ``MetadataFilter(key="tags", value="helm", operator=CONTAINS)`` over nodes added with
    ``metadata={"tags": ["helm"]}`` was "no stored node has tag(s) ['helm']"."""
    tags_key = None if tags_are_metadata else TAGS_KEY
    special = _STORED_TAGS_SPECIAL if tags_are_metadata else _SPECIAL_KEYS
    if filters is None:
        return TreehopFilterArgs()
    # (the type first: ``filters.filters`` of a dict, a list or ``True`` raised
    # AttributeError from get_nodes / delete_nodes, no TreehopError; helper attacks87)
    if not isinstance(filters, MetadataFilters):
        raise InvalidFilterError(
            f"filters must be a llama_index MetadataFilters, got {type(filters).__name__}"
        )
    if not filters.filters:
        return TreehopFilterArgs()
    _check_depth(filters)
    condition = filters.condition or FilterCondition.AND
    desc = _describe(filters)
    if condition is FilterCondition.OR:
        labels = _tag_any_group(filters, tags_key)
        if labels is not None:
            return TreehopFilterArgs(tags=tuple(labels), source=desc)
        return TreehopFilterArgs(filter=metadata_tree(filters, special), source=desc)
    if condition is FilterCondition.NOT:
        return TreehopFilterArgs(filter=metadata_tree(filters, special), source=desc)

    any_of: list[str] | None = None
    all_of: list[str] = []
    ctypes: list[ContextType] | None = None
    meta: list[dict[str, Any]] = []
    for f in _flatten_and(filters):
        group = _tag_any_group(f, tags_key)
        if isinstance(f, MetadataFilter) and f.key == tags_key:
            if f.operator in _TAG_ONE_OPS:
                if isinstance(f.value, list):
                    raise InvalidFilterError(
                        f"filter {_describe(f)!r}: {f.operator.value!r} on tags takes one tag; "
                        "use any or all for a list"
                    )
                all_of.extend(_tag_labels(f))
            elif f.operator is FilterOperator.ALL:
                all_of.extend(_tag_labels(f))
            elif f.operator in _TAG_ANY_OPS:
                any_of = _set_any_group(any_of, _tag_labels(f), f)
            else:
                raise InvalidFilterError(
                    f"filter {_describe(f)!r}: treehop tag filters can require tags "
                    "(==, contains, all) or one of a set (any, in), not exclude them"
                )
        elif isinstance(f, MetadataFilters) and group is not None:
            any_of = _set_any_group(any_of, group, f)
        elif isinstance(f, MetadataFilter) and f.key == CONTEXT_TYPE_KEY:
            found = _context_types(f)
            ctypes = found if ctypes is None else [c for c in ctypes if c in found]
            if not ctypes:
                raise InvalidFilterError(
                    f"filter {desc!r}: the context_type filters exclude each other"
                )
        elif isinstance(f, MetadataFilters):
            meta.append(metadata_tree(f, special))
        else:
            meta.append(metadata_leaf(f))
    return TreehopFilterArgs(
        filter=_combine(FilterCondition.AND, meta) if meta else None,
        tags=tuple(any_of) if any_of is not None else None,
        tags_all=tuple(all_of) if all_of else None,
        context_types=tuple(ctypes) if ctypes is not None else None,
        source=desc,
    )


_MAX_FILTER_PARTS = 4 * MAX_FILTER_NODES
"""The most filters and groups a ``MetadataFilters`` holds, counted as a tree (each place a
shared one stands in, once): four times the core's objects, so that no filter the core
would take is refused here (tag and context-type filters, and AND groups, make no object)."""


def _check_depth(filters: MetadataFilters) -> None:
    """Bounded as the core's DSL is, before the helpers below recurse (nested AND groups are
    flattened, so the core would not see the depth; 900 levels exhausted the stack); and no
    more than :data:`_MAX_FILTER_PARTS` filters and groups. Why the count (helper
    attacks81): one group listed 1,000 times in a group, four levels deep (a few kB held),
    is 10**12 groups as a tree, and this walk and the translation after it went through
    each: the retriever's and the vector store's query hung here."""
    stack: list[tuple[MetadataFilters, int]] = [(filters, 0)]
    parts = 0
    while stack:
        group, depth = stack.pop()
        if depth > MAX_FILTER_DEPTH:
            raise InvalidFilterError(f"filter nested deeper than {MAX_FILTER_DEPTH} levels")
        parts += 1 + len(group.filters)
        if parts > _MAX_FILTER_PARTS:
            raise InvalidFilterError(
                f"filter has more than {_MAX_FILTER_PARTS} filters and groups (nested "
                "groups counted each time they stand in one)"
            )
        stack.extend((f, depth + 1) for f in group.filters if isinstance(f, MetadataFilters))


def _flatten_and(filters: MetadataFilters) -> list[MetadataFilter | MetadataFilters]:
    """Inline nested AND groups into the top-level AND (the same filter, fewer levels)."""
    out: list[MetadataFilter | MetadataFilters] = []
    for f in filters.filters:
        if isinstance(f, MetadataFilters) and (f.condition or FilterCondition.AND) is (
            FilterCondition.AND
        ):
            out.extend(_flatten_and(f))
        else:
            out.append(f)
    return out


def _set_any_group(
    current: list[str] | None, labels: Sequence[str], f: MetadataFilter | MetadataFilters
) -> list[str]:
    if current is not None:
        raise InvalidFilterError(
            f"filter {_describe(f)!r}: treehop supports one 'any of these tags' group per "
            "query; merge the tag groups or put the extra tags in an 'all' filter"
        )
    return list(labels)


def validate(args: TreehopFilterArgs) -> None:
    """Run treehop's own validation (fail when the retriever is built, not at query time)."""
    if args.filter is not None:
        TreehopMetadataFilter.parse(args.filter)
    tagmod.normalize_filter_labels(args.tags)
    tagmod.normalize_filter_labels(args.tags_all)
