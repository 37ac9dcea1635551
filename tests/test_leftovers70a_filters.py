"""The core filter's ``text_match`` with ``whole_items`` (helper leftovers70a).

LlamaIndex's ``CONTAINS`` is Python's ``value in field`` in its reference store: a substring
of a string, an item of a list. The DSL had equality (``must``) and "inside a string or
inside one of a list's strings" (``text_match``), neither of which it is; ``whole_items``
makes ``text_match`` exactly it, for a string ``value``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop.errors import InvalidFilterError
from treehop.filters import (
    MAX_FILTER_TEXT_CHARS,
    MetadataFilter,
    ShownField,
    _validated,
    show_fields,
)

_TEXT = st.text(alphabet="aAbB ßs", max_size=6)


def _spec(value: str, **extra: Any) -> dict[str, Any]:
    return {"op": "text_match", "field": "f", "value": value, **extra}


def _parsed(spec: dict[str, Any]) -> MetadataFilter:
    parsed = MetadataFilter.parse(spec)
    assert parsed is not None
    return parsed


@given(
    needle=_TEXT.filter(bool),
    stored=st.one_of(
        st.none(),
        _TEXT,
        st.lists(st.one_of(_TEXT, st.integers(), st.none()), max_size=4),
        st.integers(),
    ),
)
def test_whole_items_is_pythons_in_over_a_string_or_a_list(needle: str, stored: Any) -> None:
    md = {} if stored is None else {"f": stored}
    want = isinstance(stored, (str, list)) and needle in stored
    assert _parsed(_spec(needle, whole_items=True)).matches(md) is want
    assert _parsed({**_spec(needle, whole_items=True), "op": "text_match_not"}).matches(md) is (
        not want
    )
    # (without it, as before: a list's strings are searched inside)
    inside = isinstance(stored, str) and needle in stored
    inside = inside or (
        isinstance(stored, list) and any(isinstance(v, str) and needle in v for v in stored)
    )
    assert _parsed(_spec(needle)).matches(md) is inside


@given(needle=_TEXT.filter(bool), items=st.lists(_TEXT, max_size=4))
def test_whole_items_with_ignore_case_compares_casefolded_items(
    needle: str, items: list[str]
) -> None:
    spec = _spec(needle, whole_items=True, ignore_case=True)
    want = needle.casefold() in [v.casefold() for v in items]
    assert _parsed(spec).matches({"f": items}) is want


@pytest.mark.parametrize("bad", [1, "yes", None, [True]])
def test_whole_items_is_true_or_false(bad: object) -> None:
    with pytest.raises(InvalidFilterError, match="'whole_items' must be true or false"):
        MetadataFilter.parse(_spec("faq", whole_items=bad))


def test_whole_items_belongs_to_text_match_only() -> None:
    """A control (passes before the change too): other ops still refuse an unknown key."""
    with pytest.raises(InvalidFilterError, match="unknown keys 'whole_items' for 'must'"):
        MetadataFilter.parse({"op": "must", "field": "f", "conds": ["a"], "whole_items": True})


# A ``source`` filter between 8 M and 16 M characters (helper leftovers70a; attacks81 left it):
# ``show_fields`` writes the filter twice (the stored key and its fallback), so the text bound
# was crossed only by the rewrite's parse, refused with advice ($in, nest less) that cannot
# shorten a text. It is now refused before the rewrite, as any over-long filter is.

SOURCE = ShownField("source", over=("source",), fallback="source_path", when="source_path")


def _source_filter(chars: int) -> dict[str, Any]:
    """A ``source`` filter holding ``chars`` characters of text (the field name counted)."""
    return {"op": "must", "field": "source", "conds": ["x" * (chars - len("source"))]}


def test_a_source_filter_over_half_the_bound_is_refused_as_over_long() -> None:
    spec = _source_filter(MAX_FILTER_TEXT_CHARS // 2 + 1_000_000)
    assert MetadataFilter.parse(spec) is not None  # (the premise: as written, within)
    with pytest.raises(InvalidFilterError) as caught:
        show_fields(spec, [SOURCE])
    msg = str(caught.value)
    assert msg.startswith(f"filter holds more than {MAX_FILTER_TEXT_CHARS} characters of text")
    assert "9,000,000 as written" in msg and "'source_path' directly" in msg
    assert "within the filter's bounds as written" not in msg  # (not the rewrite's refusal)


def test_the_refusal_before_the_rewrite_counts_as_the_rewrites_parse_would() -> None:
    """The count made before the rewrite is exact: the largest filter taken is rewritten
    into one of the bound or one character less (the rewrite's text grows by two a
    character), the next one, a character longer, is refused before the rewrite; no
    refusal is the rewrite's own."""

    def taken(chars: int) -> bool:
        try:
            show_fields(_source_filter(chars), [SOURCE])
        except InvalidFilterError as exc:
            assert str(exc).startswith("filter holds more than"), exc
            return False
        return True

    low, high = MAX_FILTER_TEXT_CHARS // 2 - 100, MAX_FILTER_TEXT_CHARS // 2
    assert taken(low) and not taken(high)
    while high - low > 1:  # (the largest filter taken: low)
        mid = (low + high) // 2
        low, high = (mid, high) if taken(mid) else (low, mid)
    out = show_fields(_source_filter(low), [SOURCE])
    assert out is not None
    assert MAX_FILTER_TEXT_CHARS - 1 <= _validated(out)[1] <= MAX_FILTER_TEXT_CHARS
