"""A numpy number is a range bound of the core filter; ``MilvusStore`` checks its filter cache's
numbers (helper leftovers68a, bench/README.md "(helper leftovers68a)"; stop 67's open items).

1. ``MetadataFilter.parse`` took an ``np.float64`` range bound (a float subclass, kept as it
   was) and refused ``np.int64`` / ``np.float32`` ("must be a finite number", ``isinstance(v,
   (int, float))``). Each real number is now the Python number it equals
   (:func:`treehop.validation.real`); a bool, a NaN or an infinity is refused as a Python one
   is, showing the caller's value, bounded.
2. ``MilvusStore`` kept ``filter_cache_ttl_s`` and ``max_client_side_matches`` as given (a
   string included); they go through the remote stores' one rule
   (:func:`treehop.stores.base.check_number`), as the VikingDB store's do, before anything is
   created.

Each test fails on 05a7cdf8 unless it says it is a control.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given

from treehop.errors import InvalidFilterError, StoreError
from treehop.filters import MetadataFilter
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.milvus import MilvusStore

from treehop_test_doubles import numpy_real_scalars, store_leaf, unit_vectors


def _parsed(spec: dict[str, Any]) -> object:
    try:
        md = MetadataFilter.parse(spec)
    except InvalidFilterError:
        return InvalidFilterError
    assert md is not None
    return md.spec


def _specs(value: Any) -> list[dict[str, Any]]:
    return [
        {"op": "range", "field": "x", "gt": value},
        {"op": "range_out", "field": "x", "gte": value, "lt": 7},
        {"op": "and", "conds": [{"op": "range", "field": "x", "lte": value}]},
    ]


def _no_numpy(spec: Any) -> bool:
    if isinstance(spec, dict):
        return all(_no_numpy(v) for v in spec.values())
    if isinstance(spec, list):
        return all(_no_numpy(v) for v in spec)
    return not isinstance(spec, np.generic)


@given(numpy_real_scalars())
def test_a_numpy_range_bound_is_the_python_number_it_equals(value: Any) -> None:
    # 05a7cdf8: np.int64(3) (any numpy integer, np.float16, np.float32): "bound 'gt' must be
    # a finite number within float range, got np.int64(3)"; an np.float64 was kept as it was
    python = value.item()
    for spec, same in zip(_specs(value), _specs(python), strict=True):
        got, want = _parsed(spec), _parsed(same)
        assert got == want, (spec, got, want)
        if got is not InvalidFilterError:
            assert _no_numpy(got)
    assert (_parsed(_specs(value)[0]) is InvalidFilterError) == (not math.isfinite(python))


def test_a_numpy_bound_filters_the_embedded_store_as_the_python_one() -> None:
    # 05a7cdf8: the np.int64 bound refused ("must be a finite number"); np.float32 too
    store = EmbeddedStore()
    nodes = [store_leaf(f"viking://resources/y{i}.md", year=2018 + 2 * i) for i in range(4)]
    vectors = unit_vectors(4)
    store.upsert(nodes, vectors)

    def years(**bounds: Any) -> list[int]:
        md = MetadataFilter.parse({"op": "range", "field": "year", **bounds})
        return sorted(
            h.node.metadata["year"] for h in store.search(vectors[0], Scope(metadata=md), 4)
        )

    assert years(gte=np.int64(2021), lt=np.float32(2024.0)) == years(gte=2021, lt=2024.0) == [2022]
    assert years(gt=np.uint8(200)) == [2018, 2020, 2022, 2024]


@pytest.mark.parametrize(
    "bound",
    [np.bool_(True), True, np.float64("nan"), np.float32("-inf"), np.complex128(1), "2021"],
    ids=repr,
)
def test_what_is_no_finite_number_is_still_refused_as_given_control(bound: Any) -> None:
    # control: refused before and after, the caller's value shown (np.float64(nan), not nan);
    # except Python's True, which 05a7cdf8 showed as "an integer of 1 bits"
    with pytest.raises(InvalidFilterError, match="must be a finite number") as info:
        MetadataFilter.parse({"op": "range", "field": "x", "lt": bound})
    assert repr(bound)[:20] in str(info.value)


def test_a_refused_bound_is_shown_bounded() -> None:
    # 05a7cdf8: a string bound of a megabyte made a message of a megabyte (its whole repr)
    with pytest.raises(InvalidFilterError) as info:
        MetadataFilter.parse({"op": "range", "field": "x", "gt": "y" * 10**6})
    assert len(str(info.value)) < 400


# -- MilvusStore's filter cache numbers -------------------------------------------------


@pytest.fixture(scope="module")
def milvus_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "numbers68.db"))
    yield client
    client.close()


@pytest.mark.parametrize(
    "kw",
    [
        {"filter_cache_ttl_s": "5"},
        {"filter_cache_ttl_s": -1.0},
        {"filter_cache_ttl_s": float("nan")},
        {"filter_cache_ttl_s": np.bool_(True)},
        {"filter_cache_ttl_s": None},
        {"max_client_side_matches": 0},
        {"max_client_side_matches": 2.0},
        {"max_client_side_matches": "10"},
        {"max_client_side_matches": True},
        {"max_client_side_matches": np.float64(5.0)},
        {"max_client_side_matches": 10**400},
    ],
    ids=lambda kw: f"{next(iter(kw))}={shown(kw)}",
)
def test_milvus_refuses_a_filter_cache_number_naming_it_before_any_write(
    milvus_client: Any, kw: dict[str, Any]
) -> None:
    # 05a7cdf8: every value kept as given (the store and its state collection created); a
    # string ttl failed at the second filtered search (the cache's first hit) with a raw TypeError
    name = next(iter(kw))
    collection = f"refused_{abs(hash(repr(kw))) % 10**8}"
    with pytest.raises(StoreError, match=f"^{name} must be") as info:
        MilvusStore(client=milvus_client, collection=collection, dimension=8, **kw)
    assert len(str(info.value)) < 300
    assert not milvus_client.has_collection(collection)
    assert not milvus_client.has_collection(f"{collection}_state")


def shown(kw: dict[str, Any]) -> str:
    return repr(next(iter(kw.values())))[:20]


def test_milvus_takes_numpy_filter_cache_numbers_as_python_ones(milvus_client: Any) -> None:
    # 05a7cdf8: kept as np.float64 / np.int64 (no check); now the Python numbers they equal
    store = MilvusStore(
        client=milvus_client,
        collection="numpy_cache",
        dimension=8,
        filter_cache_ttl_s=np.float32(0.5),  # type: ignore[arg-type]
        max_client_side_matches=np.int64(1),  # type: ignore[arg-type]
    )
    assert type(store._ttl) is float and store._ttl == 0.5
    assert type(store._max_matches) is int and store._max_matches == 1
    nodes = [store_leaf(f"viking://resources/t{i}.md", title="deploy notes") for i in range(2)]
    vectors = unit_vectors(2, dim=8)
    store.upsert(nodes, vectors)
    md = MetadataFilter.parse({"op": "text_match", "field": "title", "value": "deploy"})
    with pytest.raises(StoreError, match="max_client_side_matches=1"):
        store.search(vectors[0], Scope(metadata=md), 2)
