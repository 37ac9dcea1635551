"""Chroma-style (MongoDB) LangChain filters translate exactly into treehop's DSL."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_treehop.filters import to_treehop_filter
from treehop.errors import InvalidFilterError
from treehop.filters import MetadataFilter

FIELDS = ["page", "year"]
VALUES = st.integers(min_value=0, max_value=5)
OPS = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]


def _leaf(op: str, value: Any) -> Any:
    return {op: [value, value + 1] if op in {"$in", "$nin"} else value}


def _holds(op: str, v: Any, arg: Any) -> bool:
    if op == "$eq":
        return bool(v == arg)
    if op == "$ne":
        return bool(v != arg)
    if op == "$in":
        return v in arg
    if op == "$nin":
        return v not in arg
    if v is None:
        return False
    return bool({"$gt": v > arg, "$gte": v >= arg, "$lt": v < arg, "$lte": v <= arg}[op])


def reference(spec: dict[str, Any], md: dict[str, Any]) -> bool:
    """What a MongoDB-style store would select (the semantics users expect)."""
    out = True
    for key, cond in spec.items():
        if key in {"$and", "$or"}:
            parts = [reference(c, md) for c in cond]
            out = out and (all(parts) if key == "$and" else any(parts))
            continue
        v = md.get(key)
        conds = cond if isinstance(cond, dict) else {"$eq": cond}
        for op, arg in conds.items():
            out = out and _holds(op, v, arg)
    return out


leaf = st.builds(
    lambda f, op, v: {f: _leaf(op, v)}, st.sampled_from(FIELDS), st.sampled_from(OPS), VALUES
)
spec = st.recursive(
    leaf,
    lambda inner: st.builds(
        lambda k, xs: {k: xs},
        st.sampled_from(["$and", "$or"]),
        st.lists(inner, min_size=1, max_size=3),
    ),
    max_leaves=6,
)


@given(spec, st.fixed_dictionaries({"page": VALUES, "year": VALUES}))
def test_translation_matches_mongo_semantics(s: dict[str, Any], md: dict[str, Any]) -> None:
    dsl = to_treehop_filter(s)
    parsed = MetadataFilter.parse(dsl)
    assert parsed is not None
    assert parsed.matches(md) == reference(s, md)


def test_plain_equality_and_several_keys() -> None:
    assert to_treehop_filter({"source": "a.pdf"}) == {
        "op": "must",
        "field": "source",
        "conds": ["a.pdf"],
    }
    both = to_treehop_filter({"source": "a.pdf", "page": {"$gte": 2, "$lt": 5}})
    assert both is not None and both["op"] == "and"
    dsl = {"op": "must", "field": "lang", "conds": ["en"]}
    assert to_treehop_filter(dsl) == dsl  # treehop's own DSL passes through
    assert to_treehop_filter(None) is None and to_treehop_filter({}) is None


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"page": {"$regex": "x"}}, "unknown operator"),
        ({"$not": {"page": 1}}, "unknown operator"),
        ({"page": {"$in": []}}, "non-empty list"),
        ({"page": {"$gt": "2"}}, "numbers"),
        ({"page": [1, 2]}, "one value"),
        ({"$or": []}, "non-empty list"),
        ("page=1", "must be a dict"),
    ],
)
def test_bad_filters(bad: Any, match: str) -> None:
    with pytest.raises(InvalidFilterError, match=match):
        to_treehop_filter(bad)
