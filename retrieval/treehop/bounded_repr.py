"""A value's ``repr`` built only as far as a message shows it.

Why a module of its own: :mod:`treehop.validation` (``shown_value``) and
:mod:`treehop.redaction` (``shown_name``, ``first_few``) both cut a caller's value for an
error's text, and ``validation`` imports ``redaction`` (every shown value is redacted); the
walk lives below both so neither imports the other back (``tests/test_import_layers.py``).
Helpers attacks75 and attacks78: refusing ``limit=list(range(5 * 10**6))``, or a 5-million-item
``deque`` / tuple key, built the whole repr (0.3-2.5 s) for a 100-character message.
"""

from __future__ import annotations

import collections
import collections.abc
import threading
from typing import Any

_BRACKETS: dict[type, tuple[str, str, str]] = {
    list: ("[", "]", "[...]"),
    tuple: ("(", ")", "(...)"),
    dict: ("{", "}", "{...}"),
    set: ("{", "}", "set(...)"),
    frozenset: ("frozenset({", "})", "frozenset(...)"),
}


_EMPTY: dict[type, str] = {set: "set()", frozenset: "frozenset()"}


_BASE_REPRS: dict[object, type] = {list.__repr__: list, tuple.__repr__: tuple, dict.__repr__: dict}
"""A subclass that keeps one of these ``__repr__`` s is written as its base is: the base's
repr does not name the subclass (a set's does, so set subclasses are not here). Why (helper
attacks78): ``class L(list)`` of 5 million items, refused as ``limit=``, built its whole
39 MB repr (0.3 s), past the bound a plain list had."""

_TEXT_REPRS = (str.__repr__, bytes.__repr__)

_COLLECTIONS = (
    list,
    tuple,
    dict,
    set,
    frozenset,
    collections.deque,
    collections.abc.KeysView,
    collections.abc.ValuesView,
    collections.abc.ItemsView,
)
"""Containers of the standard library whose own repr writes every item: one of more items
than a message shows is shown as ``<deque of N items>`` (its type and size) instead of a
repr built whole (helper attacks78: a 5-million-item ``deque`` 0.4 s, an ``OrderedDict``
2.5 s, for a message of 100 characters). One of fewer items is its own ``repr``."""


def bounded_repr(value: object, budget: int) -> str:
    """``repr(value)`` up to its first ``budget`` characters (at least; the text may run on
    past them), for the built-in containers and strings without writing the rest.

    Each element written adds at least one character (a separator, a bracket), so the walk
    visits at most about ``budget`` values and nests at most ``budget`` deep, whatever the
    value's size or depth (a list of a million shared lists, each of a million, included).
    An object of another type is its own ``repr`` (a subclass keeps its own form); a
    container that holds itself is written as ``repr`` writes it (``[...]``)."""
    out: list[str] = []
    left = budget
    active: set[int] = set()

    def put(text: str) -> None:
        nonlocal left
        out.append(text)
        left -= len(text)

    def walk(item: object) -> None:
        kind = type(item)
        if left <= 0:
            return
        if kind is str or kind is bytes or kind.__repr__ in _TEXT_REPRS:
            # (a str / bytes subclass keeping the base's repr: its slice is a plain one)
            whole = len(item) <= left  # type: ignore[arg-type]
            put(repr(item if whole else item[:left]))  # type: ignore[index]
        elif kind is int and item.bit_length() > 300:  # type: ignore[attr-defined]
            put(f"<an integer of {item.bit_length()} bits>")  # type: ignore[attr-defined]
        elif kind in _BRACKETS:
            walk_container(item, kind)
        elif kind.__repr__ in _BASE_REPRS:  # (a list, tuple or dict subclass: the base's form)
            walk_container(item, _BASE_REPRS[kind.__repr__])
        elif kind is bytearray:
            put(repr(item if len(item) <= left else item[:left]))  # type: ignore[arg-type,index]
        elif isinstance(item, _COLLECTIONS) and len(item) > budget:
            put(f"<{kind.__name__} of {len(item)} items>")
        elif kind in _WRAPPERS:
            put(_wrapper_repr(item, kind, left))
        else:
            put(repr(item))

    def walk_container(item: Any, kind: Any) -> None:
        opening, closing, again = _BRACKETS[kind]
        if id(item) in active:
            put(again)
            return
        size = kind.__len__(item)  # (the base's own: a subclass's overrides are not repr's)
        if not size:
            put(_EMPTY.get(kind, opening + closing))
            return
        active.add(id(item))
        put(opening)
        for n, element in enumerate(dict.items(item) if kind is dict else kind.__iter__(item)):
            if left <= 0:
                return
            if n:
                put(", ")
            if kind is dict:
                walk(element[0])
                put(": ")
                element = element[1]
            walk(element)
        active.discard(id(item))
        put("," + closing if kind is tuple and size == 1 else closing)

    walk(value)
    return "".join(out)


class _Shown:
    """A stand-in whose repr is a text already written (an element's bounded repr)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def __call__(self) -> _Shown:  # (a defaultdict's factory must be callable; never called)
        return self


_VIEWS: tuple[type, ...] = (type({}.keys()), type({}.values()), type({}.items()))
_WRAPPERS = frozenset(
    {collections.deque, collections.OrderedDict, collections.defaultdict, *_VIEWS}
)
"""The standard library's containers whose own repr writes each item's repr inside its
type's form: one of few items (past :data:`_COLLECTIONS`' summary) is written by
:func:`_wrapper_repr` with each item's bounded repr."""


_WRAPPING = threading.local()
"""The containers :func:`_wrapper_repr` is writing now, in this thread (``ids``)."""


def _wrapper_repr(item: Any, kind: type, budget: int) -> str:
    """``repr(item)`` (a ``deque``, ``OrderedDict``, ``defaultdict`` or dict view of at most
    ``budget`` items) with each item written by :func:`bounded_repr` within what is left:
    ``repr`` itself of a copy holding stand-ins (:class:`_Shown`), so the type's own form
    (``maxlen=``, the factory, the view's name) is exact. Why (helper attacks78): such a
    container of one item holding 5 million (``deque([big_list])``) was ``repr``-ed whole,
    0.3 s, for a 100-character message."""
    active = _WRAPPING.__dict__.setdefault("ids", set())
    if id(item) in active:  # (a container holding itself: not written again)
        return "..."
    room = budget

    def shown(element: object) -> _Shown:
        nonlocal room
        if room <= 0:
            return _Shown("...")
        text = bounded_repr(element, room)
        room -= len(text) + 2
        return _Shown(text)

    active.add(id(item))
    try:
        if kind is collections.deque:
            return repr(collections.deque((shown(e) for e in item), maxlen=item.maxlen))
        if kind in _VIEWS:
            return f"{kind.__name__}([{', '.join(repr(shown(e)) for e in item)}])"
        factory = item.default_factory if kind is collections.defaultdict else None
        first = None if factory is None else shown(factory)  # (written first, as repr does)
        pairs = [(shown(k), shown(v)) for k, v in item.items()]
        if kind is collections.OrderedDict:
            return repr(collections.OrderedDict(pairs))
        return repr(collections.defaultdict(first, pairs))
    finally:
        active.discard(id(item))
