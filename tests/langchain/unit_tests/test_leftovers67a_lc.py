"""A numpy number is a number in a LangChain filter (helper leftovers67a, bench/README.md
"(helper leftovers67a)"; stop 66's open item).

A demanding user passes numpy scalars everywhere (a bound from ``np.percentile``, a column's
``max()``). A numpy real number is the Python number it equals in every filter value
(:func:`langchain_treehop.filters._compared`, through :func:`treehop.validation.real`); a bool,
a NaN or an infinity is refused as the Python one is. The MilvusStore side is in
``tests/test_leftovers67a_numbers.py``.

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore
from langchain_treehop.filters import to_treehop_filter
from treehop.errors import InvalidFilterError

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import numpy_real_scalars


def _outcome(spec: dict[str, Any]) -> object:
    try:
        return to_treehop_filter(spec)
    except InvalidFilterError:
        return InvalidFilterError


def _conditions(value: Any) -> list[dict[str, Any]]:
    return [
        {"x": {"$gt": value}},
        {"x": {"$gte": value, "$lt": value}},
        {"x": {"$lte": value}},
        {"x": {"$between": [value, value]}},
        {"x": value},
        {"x": {"$ne": value}},
        {"x": {"$in": [value, 7]}},
    ]


@given(numpy_real_scalars())
def test_a_numpy_number_in_a_langchain_filter_is_the_python_number_it_equals(value: Any) -> None:
    # 2bd9fe6d: np.int64(3) (any numpy integer, np.float16, np.float32) as a range bound:
    # "treehop compares ranges on numbers"; an np.float64 went through to the core as it was
    python = value.item()
    for spec, same in zip(_conditions(value), _conditions(python), strict=True):
        got, want = _outcome(spec), _outcome(same)
        assert got == want, (spec, got, want)
        if isinstance(got, dict):  # (what reaches the core: Python numbers only)
            text = repr(got)
            assert "np." not in text, text
    if not math.isfinite(python):  # (NaN, infinity: refused as the Python one is)
        assert _outcome({"x": {"$gt": value}}) is InvalidFilterError


def test_a_numpy_bool_is_no_bound_as_a_python_bool_is_not_control() -> None:
    # control: a bool is no number, numpy's or Python's
    for flag in (True, np.bool_(True)):
        with pytest.raises(InvalidFilterError, match="compares ranges on numbers"):
            to_treehop_filter({"x": {"$gt": flag}})
        with pytest.raises(InvalidFilterError, match=r"\$between: expects \[low, high\] numbers"):
            to_treehop_filter({"x": {"$between": [flag, 2]}})


def test_a_numpy_bound_keeps_the_langchain_stores_documents(tmp_path: Path) -> None:
    # end to end: the same documents for a numpy bound as for the Python one
    store = TreehopVectorStore.from_documents(
        [
            Document(page_content=f"release note {y}", metadata={"year": y, "score": y / 10})
            for y in (2018, 2020, 2022, 2024)
        ],
        WordHashEmbeddings(),
        path=tmp_path / "idx",
    )
    for numpy_filter, python_filter in [
        ({"year": {"$gte": np.int64(2021)}}, {"year": {"$gte": 2021}}),
        (
            {"year": {"$between": [np.uint16(2019), np.int32(2022)]}},
            {"year": {"$between": [2019, 2022]}},
        ),
        ({"score": {"$lt": np.float32(202.5)}}, {"score": {"$lt": 202.5}}),
    ]:
        got = store.similarity_search("release note", k=10, filter=numpy_filter)
        want = store.similarity_search("release note", k=10, filter=python_filter)
        assert want and sorted(d.page_content for d in got) == sorted(d.page_content for d in want)
