"""Numpy values are values everywhere in the core filter; ``MilvusStore`` shows a filter it
cannot evaluate bounded and redacted (helper leftovers68b, bench/README.md "(helper
leftovers68b)"; stop 67's open items from helpers leftovers68a and leftovers67a).

1. ``must`` / ``must_not`` refused ``np.int64(3)`` ("conds must be scalars, got int64"; any
   numpy integer, ``np.float32``, ``np.bool_``, a numpy NaN named "scalars"), kept an
   ``np.float64`` as it was, and refused a numpy array of conds ("needs a non-empty list");
   a ``time`` node's ``since`` / ``until`` (and ``find(since=...)``) refused ``np.int64``
   epoch seconds. Range bounds took them (leftovers68a). Each is now the Python value it
   equals: a numpy bool a ``bool``, a numpy integer an ``int`` (never one for the other), a
   NaN refused as Python's is.
2. ``MilvusStore``'s "cannot be evaluated by Milvus" error showed ``md.spec`` whole: up to
   1,000 conds of 1,000 characters, and whatever secret the filter held.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError, StoreError
from treehop.filters import MAX_CONDS, MetadataFilter
from treehop.redaction import register_secret
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.milvus import MilvusStore

from treehop_test_doubles import BagOfWordsEmbedder, numpy_real_scalars, store_leaf, unit_vectors


def _parsed(spec: dict[str, Any]) -> object:
    """The parsed spec with each value's type beside it (``1 == 1.0 == True``), or the
    refusal's type."""
    try:
        md = MetadataFilter.parse(spec)
    except InvalidFilterError:
        return InvalidFilterError
    assert md is not None
    return _typed(md.spec)


def _typed(spec: Any) -> Any:
    if isinstance(spec, dict):
        return {k: _typed(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_typed(v) for v in spec]
    return (type(spec), spec)


def _specs(*conds: Any) -> list[dict[str, Any]]:
    return [
        {"op": "must", "field": "x", "conds": list(conds)},
        {"op": "must_not", "field": "x", "conds": [*conds, "a"]},
        {"op": "or", "conds": [{"op": "must", "field": "x", "conds": list(conds)}]},
    ]


@given(numpy_real_scalars())
def test_a_numpy_number_cond_is_the_python_number_it_equals(value: Any) -> None:
    # c3a05a97: np.int64 (any width), np.float16 / np.float32: "conds must be scalars, got
    # int64"; an np.float64 kept as np.float64 in the spec the stores read
    python = value.item()
    for spec, same in zip(_specs(value), _specs(python), strict=True):
        assert _parsed(spec) == _parsed(same), spec
    # finite: taken (as the Python number); NaN / infinity: refused, as Python's are
    assert (_parsed(_specs(value)[0]) is InvalidFilterError) == (not math.isfinite(python))


@given(st.lists(numpy_real_scalars(), min_size=1, max_size=8))
def test_a_numpy_array_of_conds_is_the_list_it_holds(values: list[Any]) -> None:
    # c3a05a97: "'must' needs a non-empty list 'conds'" for any numpy array
    array = np.array(values)  # (numpy picks one dtype for them all)
    spec = {"op": "must", "field": "x", "conds": array}
    assert _parsed(spec) == _parsed({"op": "must", "field": "x", "conds": array.tolist()})


def test_a_numpy_bool_stays_a_bool_and_a_numpy_integer_an_integer() -> None:
    # c3a05a97: np.bool_ refused ("conds must be scalars, got bool"), np.int64 refused
    flag = MetadataFilter.parse({"op": "must", "field": "x", "conds": [np.bool_(True)]})
    one = MetadataFilter.parse({"op": "must", "field": "x", "conds": [np.int64(1)]})
    assert flag is not None and one is not None
    assert [type(c) for c in flag.spec["conds"]] == [bool]
    assert [type(c) for c in one.spec["conds"]] == [int]
    assert flag.key() != one.key()  # (the cache keys differ, as True's and 1's do)
    mixed = MetadataFilter.parse(
        {"op": "must", "field": "x", "conds": np.array([True, False])}  # an array of bools
    )
    assert mixed is not None and [type(c) for c in mixed.spec["conds"]] == [bool, bool]


@pytest.mark.parametrize(
    "cond", [np.float32("nan"), np.float64("nan"), np.float16("inf"), np.float64("-inf")], ids=repr
)
def test_a_numpy_nan_or_infinity_is_refused_as_pythons(cond: Any) -> None:
    # c3a05a97: np.float32(nan), np.float16(inf): "conds must be scalars, got float32" (the
    # np.float64 cases pass there: a float subclass, refused as "finite")
    with pytest.raises(InvalidFilterError, match="conds must be finite"):
        MetadataFilter.parse({"op": "must", "field": "x", "conds": ["a", cond]})


@pytest.mark.parametrize(
    "conds",
    [np.array([[1, 2]]), np.array([]), np.array([np.complex128(1)]), [np.datetime64("2021")]],
    ids=["2-d", "empty", "complex", "datetime64"],
)
def test_what_is_no_value_is_still_refused_control(conds: Any) -> None:
    # control: refused before and after, typed
    with pytest.raises(InvalidFilterError):
        MetadataFilter.parse({"op": "must", "field": "x", "conds": conds})


def test_a_numpy_array_past_the_conds_bound_is_refused_naming_it() -> None:
    # c3a05a97: "needs a non-empty list" for an array of 2,000 conds; now the bound, checked
    # before the array is made a list
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_CONDS} conds"):
        MetadataFilter.parse({"op": "must", "field": "x", "conds": np.arange(MAX_CONDS + 1)})


@pytest.mark.parametrize(
    "since", [np.int64(1_600_000_000), np.float32(1.6e9), np.uint32(1_600_000_000)], ids=repr
)
def test_a_numpy_time_bound_is_epoch_seconds(since: Any) -> None:
    # c3a05a97: "since must be epoch seconds, a datetime, a date or an ISO-8601 string, got
    # int64"; an np.float64 was taken
    got = MetadataFilter.parse({"op": "time", "since": since, "until": np.int64(1_700_000_000)})
    assert got is not None
    assert got.spec == {"op": "range", "field": "timestamp", "gte": 1.6e9, "lt": 1.7e9}
    assert type(got.spec["gte"]) is float and type(got.spec["lt"]) is float


@pytest.mark.parametrize(
    "since", [np.bool_(True), np.float64("nan"), Fraction(10**5000), np.datetime64("2021")]
)
def test_what_is_no_time_is_still_refused_typed_control(since: Any) -> None:
    # control (typed on c3a05a97 too): a numpy bool is a bool; a Fraction past float range
    # is refused without building its repr (which raises ValueError past 4,300 digits)
    with pytest.raises(InvalidFilterError, match="since must be"):
        MetadataFilter.parse({"op": "time", "since": since})


def test_numpy_conds_and_times_filter_a_client_as_python_ones() -> None:
    # c3a05a97: every numpy call below refused
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        for i, year in enumerate([2019, 2020, 2021]):
            client.remember(f"note {i} about the river", name=f"n{i}", timestamp=f"{year}-06-01")

        def names(**kw: Any) -> list[str]:
            hits = client.find("river", include_directories=False, **kw)
            return sorted(m.uri.rsplit("/", 1)[-1] for m in hits.contexts())

        by_year = {"op": "time", "since": "2020-01-01"}
        assert names(filter=by_year) == ["n1", "n2"]
        assert names(since=np.int64(1_577_836_800)) == names(since=1_577_836_800) == ["n1", "n2"]
        pick = {"op": "must", "field": "timestamp", "conds": np.array([1_591_000_000.0])}
        assert names(filter=pick) == []  # (no note at that second: a filter, not a refusal)
    finally:
        client.close()


def test_numpy_conds_filter_the_embedded_store_as_python_ones() -> None:
    # c3a05a97: np.int64 / np.bool_ conds refused
    store = EmbeddedStore()
    nodes = [
        store_leaf(f"viking://resources/y{i}.md", year=2018 + i, flag=i % 2 == 0) for i in range(4)
    ]
    vectors = unit_vectors(4)
    store.upsert(nodes, vectors)

    def years(op: str, field: str, conds: Any) -> list[int]:
        md = MetadataFilter.parse({"op": op, "field": field, "conds": conds})
        hits = store.search(vectors[0], Scope(metadata=md), 4)
        return sorted(h.node.metadata["year"] for h in hits)

    assert years("must", "year", [np.int64(2019), np.uint16(2021)]) == [2019, 2021]
    assert years("must_not", "year", np.array([2018, 2019])) == [2020, 2021]
    assert years("must", "flag", [np.bool_(True)]) == years("must", "flag", [True]) == [2018, 2020]


# -- MilvusStore ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def milvus_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusStore]:
    from pymilvus import MilvusClient

    client = MilvusClient(str(tmp_path_factory.mktemp("milvus") / "filters68b.db"))
    store = MilvusStore(client=client, collection="filters68b", dimension=8)
    store._max_matches = 1  # (one match allowed: two make the error)
    nodes = [
        store_leaf(f"viking://resources/t{i}.md", title="deploy notes", year=2020 + i, flag=i == 0)
        for i in range(3)
    ]
    store.upsert(nodes, unit_vectors(3, dim=8))
    yield store
    client.close()


def test_numpy_conds_filter_milvus_as_python_ones(milvus_store: MilvusStore) -> None:
    # c3a05a97: refused at the parse ("conds must be scalars, got int64")
    q = unit_vectors(1, dim=8)[0]

    def years(conds: Any, field: str = "year") -> list[int]:
        md = MetadataFilter.parse({"op": "must", "field": field, "conds": conds})
        hits = milvus_store.search(q, Scope(metadata=md), 3)
        return sorted(h.node.metadata["year"] for h in hits)

    assert years([np.int64(2021), np.float32(2022.0)]) == years([2021, 2022.0]) == [2021, 2022]
    assert years([np.bool_(True)], "flag") == years([True], "flag") == [2020]


def test_milvus_shows_a_filter_it_cannot_evaluate_bounded_and_redacted(
    milvus_store: MilvusStore,
) -> None:
    # c3a05a97: the whole spec in the message (here over 900,000 characters, the secret too)
    secret = "tok-" + "Zq7" * 12
    register_secret(secret)
    many = [secret] + [f"{i:04d}" + "x" * 900 for i in range(MAX_CONDS - 1)]
    md = MetadataFilter.parse(
        {
            "op": "or",
            "conds": [
                {"op": "must", "field": "team", "conds": many},
                {"op": "text_match", "field": "title", "value": "deploy"},  # all 3 match
            ],
        }
    )
    with pytest.raises(StoreError) as info:
        milvus_store.search(unit_vectors(1, dim=8)[0], Scope(metadata=md), 3)
    message = str(info.value)
    assert "cannot be evaluated by Milvus and matches 3 nodes" in message
    assert "max_client_side_matches=1" in message
    assert len(message) < 600, len(message)
    assert secret not in message and secret[:16] not in message
    assert "{'op': 'or'" in message  # (the filter still shown, its start)


def test_an_open_client_still_refuses_a_bad_since_typed_control() -> None:
    # control: a time that is no time stays a typed refusal through find()
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        with pytest.raises(InvalidQueryError):
            client.find("river", since=np.bool_(True))
    finally:
        client.close()
