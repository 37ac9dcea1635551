"""Stop 65's open items in the LangChain / LlamaIndex metadata and the VikingDB numbers
(helper leftovers66b).

- A float NaN / infinity in metadata: the LlamaIndex store stored ``null`` in silence
  (LlamaIndex's ``node_to_metadata_dict`` dumps with pydantic's JSON mode, which writes a
  non-finite float as ``null``), the LangChain store refused it without naming the key. Both
  now refuse it with an ``IngestError`` naming the place (``metadata['a'][1]``), before any
  write: treehop's stored metadata is JSON, which has no such number, and no value stored in
  its place would read back as the caller's.
- A numpy array, a ``datetime64`` and a ``datetime`` nested in lists / dicts (a pandas
  loader's row): arrays of numbers, booleans, text, ``datetime64`` and objects are stored as
  the lists they equal; a ``datetime64`` as the UTC time it counts, in each framework's form
  for a datetime (LangChain epoch seconds, LlamaIndex ISO text), nested too. Arrays of complex
  numbers, bytes or ``timedelta64``, ``NaT`` and a ``datetime64`` finer than a microsecond are
  refused naming the place.
- Date filters: a LangChain ``$gte`` (``$lt``, ``$between``, ``$eq``, ``$in``) takes a
  ``datetime`` / ``datetime64`` and compares it as the store keeps it (epoch seconds); a ``date``
  compares equal to its stored ISO text. A range on text (LangChain or LlamaIndex) says how
  datetimes are stored and what to compare instead.
- VikingDB: ``dimension`` by the library's number rule (``np.int64`` taken, the refusal
  bounded); a whole float count stays refused, as ``find(limit=5.0)`` is.

Against the real stores and frameworks (``get_by_ids`` / ``get_nodes`` / searches read what
was stored); every expected value is built beside the given one, not by the converter.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core import Document as LiDocument
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from langchain_treehop import TreehopVectorStore as LangChainStore
from langchain_treehop import add_documents as lc_add
from langchain_treehop.filters import to_treehop_filter
from llama_index.retrievers.treehop import TreehopEmbedding
from llama_index.retrievers.treehop import add_documents as li_add
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaIndexStore
from treehop import Treehop
from treehop import integration_kit as kit
from treehop.errors import IngestError, InvalidFilterError, InvalidQueryError, StoreError
from treehop.stores.vikingdb import VikingDBStore

from treehop_test_doubles import BagOfWordsEmbedder

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_UNITS = {"D": dt.timedelta(days=1), "s": dt.timedelta(seconds=1), "ms": dt.timedelta(0, 0, 1000)}
_UNITS |= {"us": dt.timedelta(microseconds=1)}


def _pair(given: Any, expected: Any) -> tuple[Any, Any]:
    return given, expected


# A datetime64 and the UTC datetime it counts, built from the count by timedelta arithmetic
# (numpy's own definition: a count of units from 1970-01-01T00:00 UTC), never by the converter.
# ``years``: LangChain keeps epoch seconds, a float holding a microsecond from about 1700 to
# 2242 (outside, a time with a fraction is refused: test_an_epoch_that_does_not_read_back...).
def _dt64(years: tuple[int, int]) -> st.SearchStrategy[tuple[Any, dt.datetime]]:
    low = dt.datetime(years[0], 1, 2, tzinfo=dt.UTC) - EPOCH
    high = dt.datetime(years[1], 12, 30, tzinfo=dt.UTC) - EPOCH
    return st.sampled_from(sorted(_UNITS)).flatmap(
        lambda unit: st.integers(low // _UNITS[unit], high // _UNITS[unit]).map(
            lambda n: _pair(np.datetime64(n, unit), EPOCH + n * _UNITS[unit])  # type: ignore[call-overload]
        )
    )


_ALL_YEARS = (1, 9999)
_EPOCH_YEARS = (1800, 2200)
_DT64 = _dt64(_ALL_YEARS)
_NUMBERS = st.lists(st.integers(-(2**62), 2**62), max_size=5)
_FLOATS = st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=5)
_WORDS = st.lists(st.from_regex(r"[a-z ]{0,8}", fullmatch=True), max_size=5)


@dataclass(frozen=True)
class _Time:
    """On the expected side: a time the framework stores in its own form (epoch / ISO)."""

    at: dt.datetime


# (given, expected) pairs
def _values(years: tuple[int, int]) -> st.SearchStrategy[tuple[Any, Any]]:
    dt64 = _dt64(years)
    aware = st.datetimes(
        min_value=dt.datetime(max(years[0], 2), 1, 1),
        max_value=dt.datetime(years[1], 1, 1),
        timezones=st.just(dt.UTC),
    )
    arrays = st.one_of(
        _NUMBERS.map(lambda xs: _pair(np.array(xs, dtype=np.int64), xs)),
        _FLOATS.map(lambda xs: _pair(np.array(xs, dtype=np.float64), xs)),
        st.lists(st.booleans(), max_size=5).map(lambda xs: _pair(np.array(xs, dtype=bool), xs)),
        _WORDS.map(lambda xs: _pair(np.array(xs, dtype=str), xs)),
        st.lists(
            st.lists(st.integers(-(2**31), 2**31 - 1), min_size=3, max_size=3),
            min_size=1,
            max_size=3,
        ).map(lambda rows: _pair(np.array(rows, dtype=np.int32), rows)),  # (2-D: nested lists)
        st.lists(dt64, max_size=3).map(
            lambda ps: _pair(
                np.array([g for g, _ in ps], dtype="datetime64[us]"),
                [_Time(e) for _, e in ps],
            )
        ),
    )
    leaves = st.one_of(
        arrays,
        dt64.map(lambda p: _pair(p[0], _Time(p[1]))),
        aware.map(lambda d: _pair(d, _Time(d))),
        st.integers(-(2**62), 2**62).map(lambda i: _pair(i, i)),
        st.text(max_size=5).map(lambda t: _pair(t, t)),
    )
    return st.recursive(
        leaves,
        lambda kids: (
            st.lists(kids, max_size=3).map(lambda xs: _pair([g for g, _ in xs], [e for _, e in xs]))
            | st.dictionaries(st.from_regex(r"[a-z]{1,4}", fullmatch=True), kids, max_size=3).map(
                lambda d: _pair(
                    {k: g for k, (g, _) in d.items()}, {k: e for k, (_, e) in d.items()}
                )
            )
        ),
        max_leaves=6,
    )


def _times_read_back(stored: Any, expected: Any, read: Any) -> None:
    """``stored`` equals ``expected`` where each ``_Time(t)`` of it is a stored time that
    ``read`` turns back into ``t`` (epoch seconds or ISO text)."""
    if isinstance(expected, _Time):
        assert read(stored) == expected.at, (stored, expected)
    elif isinstance(expected, dict):
        assert isinstance(stored, dict) and stored.keys() == expected.keys()
        for k in expected:
            _times_read_back(stored[k], expected[k], read)
    elif isinstance(expected, list):
        assert isinstance(stored, list) and len(stored) == len(expected), (stored, expected)
        for s, e in zip(stored, expected, strict=True):
            _times_read_back(s, e, read)
    else:
        assert stored == expected and type(stored) is type(expected), (stored, expected)


def _from_epoch(value: Any) -> dt.datetime:
    assert isinstance(value, float)
    return dt.datetime.fromtimestamp(value, dt.UTC)


def _from_iso(value: Any) -> dt.datetime:
    assert isinstance(value, str)
    return dt.datetime.fromisoformat(value)


@contextmanager
def _local_zone(name: str) -> Iterator[None]:
    """The process's local time zone set to ``name`` for the block (``TZ`` + ``tzset``)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = name
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.fixture(scope="module")
def lc_store() -> Iterator[LangChainStore]:
    store = LangChainStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    yield store
    store.client.close()


@pytest.fixture(scope="module")
def li_store() -> Iterator[LlamaIndexStore]:
    store = LlamaIndexStore(embed_model=TreehopEmbedding(BagOfWordsEmbedder()), tagger=None)
    yield store
    store.close()


def _li_node(metadata: dict[str, Any], node_id: str = "doc", text: str = "hello world") -> TextNode:
    node = TextNode(id_=node_id, text=text, metadata=metadata)
    node.embedding = TreehopEmbedding(BagOfWordsEmbedder()).get_text_embedding(text)
    return node


_FIXTURES_OK = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


# ---------------------------------------------------------------- arrays, datetime64, nesting
@_FIXTURES_OK
@given(pair=_values(_EPOCH_YEARS))
def test_langchain_store_keeps_arrays_and_times_at_any_depth(
    lc_store: LangChainStore, pair: tuple[Any, Any]
) -> None:
    value, expected = pair
    ids = lc_store.add_documents([Document("hello world", metadata={"m": value})], ids=["doc"])
    _times_read_back(lc_store.get_by_ids(ids)[0].metadata["m"], expected, _from_epoch)


@_FIXTURES_OK
@given(pair=_values(_ALL_YEARS))
def test_llamaindex_store_keeps_arrays_and_times_at_any_depth(
    li_store: LlamaIndexStore, pair: tuple[Any, Any]
) -> None:
    value, expected = pair
    node = _li_node({"m": value})
    li_store.add([node])
    _times_read_back(li_store.get_nodes(["doc"])[0].metadata["m"], expected, _from_iso)
    assert node.metadata["m"] is value  # the caller's node keeps its own


def test_a_read_only_mapping_is_still_metadata(lc_store: LangChainStore) -> None:
    """Regression guard: the LangChain store copied every metadata into a dict while it
    converted datetimes; a ``MappingProxyType`` (a frozen config's view) was taken, and the
    caller's dict is never the stored one."""
    ids = lc_store.add_texts(["hello there"], metadatas=[MappingProxyType({"a": 2})])  # type: ignore[list-item]
    assert lc_store.get_by_ids(ids)[0].metadata == {"a": 2}
    given_ = {"a": 1}
    ids = lc_store.add_texts(["hello world"], metadatas=[given_])
    lc_store.get_by_ids(ids)[0].metadata["a"] = 5
    assert given_ == {"a": 1}


@pytest.mark.parametrize("framework", ["langchain", "llamaindex"])
def test_the_tree_helpers_store_times_as_their_stores_do(framework: str) -> None:
    """``add_documents`` (the tree helpers) refused a ``datetime`` (no JSON value) and a
    ``datetime64``; each now stores the form its framework's vector store keeps."""
    when = dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC)
    meta = {"when": when, "days": np.array(["2024-05-01T12:30"], dtype="datetime64[m]")}
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        if framework == "langchain":
            lc_add(client, [Document("hello world", metadata={"source": "a.md", **meta})])
            read = _from_epoch
        else:
            li_add(client, [LiDocument(text="hello world", metadata={"file_path": "a.md", **meta})])
            read = _from_iso
        hit = client.find("hello world").resources[0]
    assert read(hit.metadata["when"]) == when
    assert [read(v) for v in hit.metadata["days"]] == [when]


@pytest.mark.parametrize("tz_name", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_a_datetime64_is_the_utc_time_it_counts_in_any_local_zone(tz_name: str) -> None:
    """numpy counts a ``datetime64`` from the UTC epoch (pandas' ``Timestamp.timestamp()``
    agrees): its stored epoch must not move with the machine's zone, as a naive ``datetime``
    read as local time would."""
    with _local_zone(tz_name):
        out = kit.plain_metadata(
            {"t": np.datetime64("2024-01-01T00:00")}, datetimes=lambda d: d.timestamp()
        )
    assert out == {"t": 1704067200.0}


@pytest.mark.parametrize(
    ("tz_name", "value"),
    [
        ("UTC", dt.datetime(2305, 1, 28, 22, 57, 46, 748000, tzinfo=dt.UTC)),
        ("UTC", np.datetime64("1500-06-01T00:00:00.000001")),
        ("America/New_York", dt.datetime(2024, 3, 10, 2, 30)),  # (a daylight-saving gap)
    ],
)
def test_an_epoch_that_does_not_read_back_is_refused_by_the_langchain_store(
    tz_name: str, value: Any
) -> None:
    """The LangChain store keeps a datetime as epoch seconds (a float): the first read back
    a microsecond early (found by the property above), the last an hour off, in silence."""
    with _local_zone(tz_name), Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        store = LangChainStore(client)
        docs = [Document("hi", metadata={"at": {"when": [value]}})]
        with pytest.raises(IngestError, match=r"metadata\['at'\]\['when'\]\[0\]"):
            store.add_documents(docs)
        assert client.find("hi").resources == []


# ---------------------------------------------------------------- what stays refused
_NON_FINITE = st.sampled_from(
    [math.nan, math.inf, -math.inf, np.float32("nan"), np.float64("-inf"), np.float16("inf")]
)


def _planted(value: Any, depth: int, data: st.DataObject) -> tuple[Any, list[str | int]]:
    """A metadata value holding ``value`` ``depth`` levels down, and the path to it."""
    path: list[str | int] = []
    for _ in range(depth):
        if data.draw(st.booleans()):
            i = data.draw(st.integers(0, 2))
            value = [*[0] * i, value]
            path.insert(0, i)
        else:
            key = data.draw(st.from_regex(r"[a-z]{1,5}", fullmatch=True))
            value = {"ok": 1.5, key: value} if key != "ok" else {key: value}
            path.insert(0, key)
    return value, path


def _where(path: list[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f"[{p!r}]" for p in path)


@_FIXTURES_OK
@given(bad=_NON_FINITE, depth=st.integers(0, 4), data=st.data())
def test_a_non_finite_float_is_refused_naming_its_place_in_both_stores(
    li_store: LlamaIndexStore,
    lc_store: LangChainStore,
    bad: Any,
    depth: int,
    data: st.DataObject,
) -> None:
    """LlamaIndex's own dump writes ``null`` for a NaN (every store built on
    ``node_to_metadata_dict``); here it is refused, the place named, nothing written (the node
    ahead of it neither)."""
    value, path = _planted(bad, depth, data)
    named = "metadata" + _where(["m", *path])
    with pytest.raises(IngestError) as caught:
        li_store.add([_li_node({"m": 1}, "ahead"), _li_node({"m": value}, "refused")])
    assert named in str(caught.value) and "None" in str(caught.value)
    assert li_store.get_nodes(["ahead", "refused"]) == []
    docs = [Document("hello world", metadata={"m": 1}), Document("hi", metadata={"m": value})]
    with pytest.raises(IngestError, match=re.escape(named)):
        lc_store.add_documents(docs, ids=["ahead", "refused"])
    assert lc_store.get_by_ids(["ahead", "refused"]) == []


def test_llamaindex_own_dump_is_what_stored_null() -> None:
    """Control, the reason for the refusal: LlamaIndex's ``node_to_metadata_dict`` (what
    every LlamaIndex vector store writes, and this one did) turns a NaN into ``None``."""
    from llama_index.core.vector_stores.utils import node_to_metadata_dict

    dumped = node_to_metadata_dict(TextNode(text="x", metadata={"score": math.nan}))
    assert dumped["score"] is None and '"score": null' in dumped["_node_content"]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (np.array([1j]), "complex128"),
        (np.array([b"x"]), "|S1"),
        (np.array([1], dtype="timedelta64[s]"), "timedelta64"),
        (np.array([1.0], dtype=np.longdouble), "float128"),
        (np.array([1.0, math.nan]), "NaN or infinity"),
        (np.datetime64("NaT"), "NaT"),
        (np.datetime64(1, "ns"), "below a microsecond"),
        (np.array(["2024-01-01T00:00:00.000000001"], dtype="datetime64[ns]"), "below a micro"),
        (np.datetime64("10000-01-01"), "outside 1..9999"),
        ([{"a": np.array([np.datetime64("NaT")])}], "NaT"),
    ],
    ids=lambda v: str(getattr(v, "dtype", v))[:20],
)
def test_what_no_json_value_equals_is_refused_naming_its_place(
    li_store: LlamaIndexStore, lc_store: LangChainStore, value: Any, says: str
) -> None:
    with pytest.raises(IngestError, match=r"metadata\['m'\]") as caught:
        li_store.add([_li_node({"ok": np.int64(1)}, "ahead"), _li_node({"m": value}, "refused")])
    assert says in str(caught.value)
    assert li_store.get_nodes(["ahead", "refused"]) == []
    docs = [Document("hello world", metadata={}), Document("hi", metadata={"m": value})]
    with pytest.raises(IngestError, match=r"metadata\['m'\]"):
        lc_store.add_documents(docs, ids=["ahead", "refused"])
    assert lc_store.get_by_ids(["ahead", "refused"]) == []


_ANY_LEAF = st.one_of(
    _NON_FINITE,
    st.floats(),
    st.integers(-(2**63), 2**63 - 1),
    st.text(max_size=3),
    st.none(),
    _DT64.map(lambda p: p[0]),
    _NUMBERS.map(np.array),
    st.lists(st.floats(width=32), max_size=5).map(lambda xs: np.array(xs, dtype=np.float32)),
    st.just(np.array([1j])),
    st.just(np.datetime64("NaT")),
)


@settings(max_examples=300, deadline=None)
@given(
    value=st.recursive(
        _ANY_LEAF,
        lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=3), kids),
        max_leaves=8,
    )
)
def test_what_the_converter_gives_is_strict_json_or_a_named_refusal(value: Any) -> None:
    """The converter's contract, over nests of every kind it handles: an ``IngestError``
    naming a place in the metadata, or a value that strict JSON (no NaN) writes, whose read
    back equals it (nothing written as ``null`` or as something else)."""
    try:
        out = kit.plain_metadata({"m": value}, datetimes=lambda d: d.isoformat())
    except IngestError as exc:
        assert str(exc).startswith("metadata['m']")
        return
    assert json.loads(json.dumps(out, allow_nan=False)) == out


# ---------------------------------------------------------------- date filters
def _stamped(store: LangChainStore) -> None:
    days = [dt.datetime(2024, 1, d, 9, 0, tzinfo=dt.UTC) for d in (1, 10, 20)]
    docs = [
        Document(f"release note {i}", metadata={"created_at": d, "day": d.date()})
        for i, d in enumerate(days)
    ]
    store.add_documents(docs, ids=["n0", "n1", "n2"])


@pytest.mark.parametrize(
    ("flt", "ids"),
    [
        ({"created_at": {"$gte": dt.datetime(2024, 1, 10, 9, 0, tzinfo=dt.UTC)}}, ["n1", "n2"]),
        ({"created_at": {"$lt": np.datetime64("2024-01-10T09:00")}}, ["n0"]),
        (
            {
                "created_at": {
                    "$between": [
                        dt.datetime(2024, 1, 5, tzinfo=dt.UTC),
                        np.datetime64("2024-01-20T09:00:00"),
                    ]
                }
            },
            ["n1", "n2"],
        ),
        ({"created_at": dt.datetime(2024, 1, 20, 9, 0, tzinfo=dt.UTC)}, ["n2"]),
        ({"day": {"$in": [dt.date(2024, 1, 1), dt.date(2024, 1, 20)]}}, ["n0", "n2"]),
        ({"day": {"$ne": dt.date(2024, 1, 1)}}, ["n1", "n2"]),
    ],
)
def test_a_langchain_filter_compares_a_time_as_the_store_keeps_it(
    flt: dict[str, Any], ids: list[str]
) -> None:
    """``{"created_at": {"$gte": datetime(...)}}`` was "treehop compares ranges on numbers":
    the stored value is epoch seconds, and the filter now turns the datetime (or
    ``datetime64``) into the same number; a ``date`` is stored as ISO text, and equality
    compares it so."""
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        store = LangChainStore(client)
        _stamped(store)
        found = store.similarity_search("release note", k=10, filter=flt)
    assert sorted(d.id for d in found if d.id) == ids


@pytest.mark.parametrize(
    ("flt", "says"),
    [
        ({"created_at": {"$gte": "2024-01-10"}}, "stored as epoch seconds"),
        ({"day": {"$gte": dt.date(2024, 1, 10)}}, "a date is stored as its ISO text"),
        ({"created_at": {"$gte": np.datetime64("NaT")}}, "is no datetime"),
    ],
)
def test_a_langchain_range_that_cannot_meet_the_stored_form_says_why(
    flt: dict[str, Any], says: str
) -> None:
    with pytest.raises(InvalidFilterError, match=says):
        to_treehop_filter(flt)


def test_a_llamaindex_range_on_iso_text_says_how_to_filter_a_time(
    li_store: LlamaIndexStore,
) -> None:
    """LlamaIndex keeps a datetime as ISO text (``node_to_metadata_dict``); treehop's ranges
    compare numbers, so the refusal says what to store instead; the number it names works."""
    when = dt.datetime(2024, 1, 10, tzinfo=dt.UTC)
    li_store.add(
        [_li_node({"created": when, "created_ts": when.timestamp()}, "stamped", "release note")]
    )
    iso = MetadataFilters(
        filters=[MetadataFilter(key="created", value="2024-01-01", operator=FilterOperator.GTE)]
    )
    query = VectorStoreQuery(
        query_embedding=TreehopEmbedding(BagOfWordsEmbedder()).get_text_embedding("release"),
        similarity_top_k=5,
        filters=iso,
    )
    with pytest.raises(InvalidFilterError, match=r"stored as its ISO text.*created_ts"):
        li_store.query(query)
    query.filters = MetadataFilters(
        filters=[
            MetadataFilter(
                key="created_ts",
                value=dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp(),
                operator=FilterOperator.GTE,
            )
        ]
    )
    assert [n.node_id for n in li_store.query(query).nodes or []] == ["stamped"]


# ---------------------------------------------------------------- VikingDB numbers
def test_vikingdb_dimension_is_a_number_by_the_library_rule() -> None:
    """``dimension`` was ``isinstance(int)`` with the whole repr: ``np.int64(384)`` (a model's
    shape) refused, a megabyte string echoed whole. Now the rule every count here follows."""
    with pytest.raises(StoreError, match="access key"):  # (taken: the next check stops it)
        VikingDBStore(collection_name="c", dimension=np.int64(384))  # type: ignore[arg-type]
    with pytest.raises(StoreError, match="dimension must be an integer") as caught:
        VikingDBStore(collection_name="c", dimension="x" * 10**6)  # type: ignore[arg-type]
    assert len(str(caught.value)) < 300


@pytest.mark.parametrize("whole", [5.0, np.float64(5.0)])
def test_a_whole_float_count_is_refused_as_find_refuses_it(whole: Any) -> None:
    """Control of the decision: a count is an integer by ``validation.integral`` in the core
    (``find(limit=5.0)``) and in the VikingDB constructor alike."""
    with (
        Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client,
        pytest.raises(InvalidQueryError, match="limit must be an integer"),
    ):
        client.find("x", limit=whole)
    for name in ("scan_page", "max_list_items", "dimension"):
        kw: dict[str, Any] = {"dimension": 4, name: whole}
        with pytest.raises(StoreError, match=f"{name} must be an integer"):
            VikingDBStore(collection_name="c", **kw)
