"""VikingDB constructors' numbers refused typed and bounded (helper leftovers65e).

``not value >= 0`` / ``timeout_s < 1`` ran on whatever was passed: a list raised Python's raw
``TypeError`` (not a ``TreehopError``) and ``timeout_s=inf`` / NaN passed the comparison and
failed in ``int()`` with a raw ``OverflowError`` / ``ValueError``. Both are checked before any
key or SDK is needed, so no server is involved."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from treehop.errors import StoreError
from treehop.stores.vikingdb import VikingDBStore, check_number
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource


def _store(**kw: Any) -> None:
    VikingDBStore(collection_name="c", dimension=4, **kw)


def _knowledge(**kw: Any) -> None:
    VikingDBKnowledgeSource(collection_name="c", **kw)


BAD = [
    [1] * 10**6,
    {"a": 1},
    "x" * 10**6,
    None,
    float("inf"),
    float("nan"),
    10**400,
    -1,
    0,
]


@pytest.mark.parametrize("value", BAD, ids=lambda v: type(v).__name__ + str(v)[:8])
@pytest.mark.parametrize(
    ("build", "name"),
    [
        (_store, "timeout_s"),
        (_knowledge, "timeout_s"),
        (_store, "consistency_window_s"),
        (_store, "filter_cache_ttl_s"),
        (_store, "max_list_items"),
        (_store, "max_row_bytes"),
        (_store, "scan_page"),
    ],
)
def test_a_bad_number_is_a_bounded_store_error(build: Any, name: str, value: object) -> None:
    if name in {"consistency_window_s", "filter_cache_ttl_s"} and (
        value == 0 or value == float("inf")
    ):
        # (0 and inf are valid windows: the next check, the access keys, stops it)
        with pytest.raises(StoreError, match="access key"):
            build(**{name: value})
        return
    with pytest.raises(StoreError) as info:
        build(**{name: value})
    text = str(info.value)
    assert name in text
    assert len(text) < 300


@pytest.mark.parametrize("value", [0, 0.0, 2.5, float("inf")])
def test_windows_still_take_zero_fractions_and_inf(value: float) -> None:
    # Control: these passed before; the check only adds refusals. The store's next check
    # (the access keys) is what stops the construction here.
    with pytest.raises(StoreError, match="access key"):
        _store(consistency_window_s=value, filter_cache_ttl_s=value)


@pytest.mark.parametrize("build", [_store, _knowledge])
def test_a_fractional_timeout_is_still_taken(build: Any) -> None:
    # Control: 2.5 was taken as 2 whole seconds before, and still is.
    with pytest.raises(StoreError, match="access key"):
        build(timeout_s=2.5)


@pytest.mark.parametrize("build", [_store, _knowledge])
def test_numpy_numbers_are_numbers_here_too(build: Any) -> None:
    """The library's one rule for what is a number (``validation.integral`` / ``real``): a
    numpy number passed these checks before they were added and still does (the store's next
    check, the access keys, stops the construction)."""
    kw: dict[str, Any] = {"timeout_s": np.float32(30.0)}
    if build is _store:
        kw |= {
            "consistency_window_s": np.float32(2.5),
            "max_list_items": np.int64(32),
            "max_row_bytes": np.uint32(65_535),
            "scan_page": np.int16(500),
        }
    with pytest.raises(StoreError, match="access key"):
        build(**kw)


def test_a_checked_number_is_the_python_number_it_equals() -> None:
    # (what the constructors store and the SDK's JSON carries: never a numpy scalar)
    got = check_number("scan_page", np.int64(500), 1, 5000, integer=True)
    assert got == 500 and type(got) is int
    got = check_number("w", np.float32(2.5), 0)
    assert got == 2.5 and type(got) is float
    with pytest.raises(StoreError):
        check_number("scan_page", np.float64(500.0), 1, 5000, integer=True)  # (not an integer)
    with pytest.raises(StoreError):
        check_number("w", np.bool_(True), 0)  # (a bool is not a number)
