"""VikingDB constructors' numbers refused typed and bounded (helper leftovers65e).

``not value >= 0`` / ``timeout_s < 1`` ran on whatever was passed: a list raised Python's raw
``TypeError`` (not a ``TreehopError``) and ``timeout_s=inf`` / NaN passed the comparison and
failed in ``int()`` with a raw ``OverflowError`` / ``ValueError``. Both are checked before any
key or SDK is needed, so no server is involved."""

from __future__ import annotations

from typing import Any

import pytest

from treehop.errors import StoreError
from treehop.stores.vikingdb import VikingDBStore
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
