"""A numpy number is a number to ``MilvusStore`` (helper leftovers67a, bench/README.md
"(helper leftovers67a)"; stop 66's open item).

``dimension`` and ``timeout`` take the numpy number a Python one would be taken as, through
the remote stores' one rule (:func:`treehop.stores.base.check_number`, moved from the VikingDB
store, and :func:`treehop.validation.real`); a bool, a NaN, a float count are refused as
before. A numpy float bound of the core filter reaches Milvus's expression as a number (its
repr was ``np.float64(2021.0)``). The LangChain side is in
``tests/langchain/unit_tests/test_leftovers67a_lc.py``.

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from treehop.errors import StoreError
from treehop.filters import MetadataFilter
from treehop.stores.base import Scope
from treehop.stores.milvus import MilvusStore, literal

from treehop_test_doubles import store_leaf, unit_vectors


@pytest.fixture(scope="module")
def milvus_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "numbers.db"))
    yield client
    client.close()


def test_milvus_takes_a_numpy_dimension_and_timeout(milvus_client: Any) -> None:
    # 2bd9fe6d: "dimension must be an integer >= 2, got np.int64(8)" (a model's shape[1]);
    # "timeout must be a positive number of seconds, got np.int64(5)"
    store = MilvusStore(
        client=milvus_client, collection="numpy_args", dimension=np.int64(8), timeout=np.int64(5)
    )
    assert store.dimension == 8 and type(store.dimension) is int
    nodes = [store_leaf(f"viking://resources/n{i}.md", year=2018 + 2 * i) for i in range(4)]
    vectors = unit_vectors(4, dim=8)
    store.upsert(nodes, vectors)
    hits = store.search(vectors[0], Scope(), 4)
    assert {h.node.uri for h in hits} == {n.uri for n in nodes}
    other = MilvusStore(client=milvus_client, collection="numpy_args", timeout=np.float32(2.5))
    assert len(other.search(vectors[0], Scope(), 4)) == 4


@pytest.mark.parametrize(
    "kw",
    [
        {"dimension": np.float64(8.0)},  # (a count is an integer, as find(limit=8.0) is)
        {"dimension": np.bool_(True)},
        {"dimension": True},
        {"dimension": np.int64(1)},
        {"timeout": np.float64("nan")},
        {"timeout": np.bool_(True)},
        {"timeout": np.float32(0.0)},
        {"timeout": np.int64(-3)},
        {"timeout": "5"},
    ],
    ids=str,
)
def test_milvus_refuses_what_is_no_number_numpy_or_not_control(
    milvus_client: Any, kw: dict[str, Any]
) -> None:
    # control: a numpy bool, NaN, a float count, a bound crossed: refused as before
    name = next(iter(kw))
    with pytest.raises(StoreError, match=f"{name} must be"):
        MilvusStore(client=milvus_client, collection="refused", **kw)


def test_a_numpy_float_bound_reaches_milvus_as_a_number(milvus_client: Any) -> None:
    # 2bd9fe6d: the core filter takes an np.float64 bound (a float subclass), and Milvus's
    # expression got its repr, "year >= np.float64(2021.0)": the server refused it
    assert literal(np.float64(2021.5)) == "2021.5"
    store = MilvusStore(client=milvus_client, collection="numpy_bound", dimension=8)
    nodes = [store_leaf(f"viking://resources/y{i}.md", year=2018 + 2 * i) for i in range(4)]
    vectors = unit_vectors(4, dim=8)
    store.upsert(nodes, vectors)
    spec = {"op": "range", "field": "year", "gte": np.float64(2021.0)}
    md = MetadataFilter.parse(spec)
    assert md is not None
    hits = store.search(vectors[0], Scope(metadata=md), 4)
    assert sorted(h.node.metadata["year"] for h in hits) == [2022, 2024]
