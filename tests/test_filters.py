from __future__ import annotations

import pytest

from treehop.errors import InvalidFilterError
from treehop.filters import MetadataFilter

MD = {"lang": "en", "year": 2021, "topics": ["ml", "ops"], "draft": False}


def _m(spec: dict) -> bool:
    f = MetadataFilter.parse(spec)
    assert f is not None
    return f.matches(MD)


def test_must_and_must_not() -> None:
    assert _m({"op": "must", "field": "lang", "conds": ["en", "de"]})
    assert not _m({"op": "must", "field": "lang", "conds": ["fr"]})
    assert _m({"op": "must", "field": "topics", "conds": ["ops"]})
    assert _m({"op": "must_not", "field": "lang", "conds": ["fr"]})
    assert not _m({"op": "must_not", "field": "topics", "conds": ["ml"]})
    assert not _m({"op": "must", "field": "missing", "conds": ["x"]})


def test_ranges() -> None:
    assert _m({"op": "range", "field": "year", "gte": 2020, "lt": 2022})
    assert not _m({"op": "range", "field": "year", "gt": 2021})
    assert _m({"op": "range_out", "field": "year", "gte": 2022})
    assert not _m({"op": "range_out", "field": "year", "gte": 2000, "lte": 2030})
    assert not _m({"op": "range", "field": "lang", "gte": 0})


def test_nested_and_or() -> None:
    spec = {
        "op": "and",
        "conds": [
            {"op": "must", "field": "lang", "conds": ["en"]},
            {
                "op": "or",
                "conds": [
                    {"op": "range", "field": "year", "lt": 2000},
                    {"op": "must", "field": "topics", "conds": ["ml"]},
                ],
            },
        ],
    }
    assert _m(spec)
    spec["conds"][0]["conds"] = ["de"]
    assert not _m(spec)


@pytest.mark.parametrize(
    ("spec", "msg"),
    [
        ({"op": "nope", "field": "x"}, "unknown op"),
        ({"op": "must", "conds": ["a"]}, "field"),
        ({"op": "must", "field": "x", "conds": "a"}, "list"),
        ({"op": "must", "field": "x", "conds": []}, "list"),
        ({"op": "must", "field": "x", "conds": [{"a": 1}]}, "scalars"),
        ({"op": "range", "field": "x"}, "at least one"),
        ({"op": "range", "field": "x", "gt": 1, "gte": 2}, "either"),
        ({"op": "range", "field": "x", "gt": "1"}, "finite number"),
        ({"op": "range", "field": "x", "gt": float("nan")}, "finite number"),
        ({"op": "and", "conds": []}, "non-empty"),
        ({"op": "or", "conds": [{"op": "bad"}]}, r"conds\[0\]"),
        ({"op": "must", "field": "x", "conds": ["a"], "extra": 1}, "unknown keys"),
    ],
)
def test_malformed_filters_name_the_problem(spec: dict, msg: str) -> None:
    with pytest.raises(InvalidFilterError, match=msg):
        MetadataFilter.parse(spec)


def test_not_a_dict() -> None:
    with pytest.raises(InvalidFilterError):
        MetadataFilter.parse(["op"])  # type: ignore[arg-type]
    assert MetadataFilter.parse({}) is None
