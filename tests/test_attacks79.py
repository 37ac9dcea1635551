"""Attacks on stop 66's surface (helper attacks79, bench/README.md "(helper attacks79)").

1. The MCP gate counted a line as a request in flight when it validated as a request, but
   the SDK reads a line holding a request's fields *and* an ``"error"`` (or, for some
   shapes, a ``"result"``) as a response, which it drops unanswered: 256 such lines and the
   gate read stdin no further, for good (stdin's end was never read either, so the server
   outlived its client). A line is now counted only when the SDK's own reader takes it as
   a request.
2. A ``datetime64`` in picoseconds, femtoseconds or attoseconds was a raw ``OverflowError``
   (numpy's years-to-attoseconds factor overflows) out of a metadata add and a LangChain
   filter.
3. ``json_bytes_problem`` (the bound walked before metadata is converted) counted a numpy
   array as one value: ``np.zeros(10**7)`` was turned into 10**7 Python floats (3.9 s,
   600 MB) before the core refused it, and an object array holding a list shared at every
   level was walked path by path again (31 s); an object array holding itself was nested
   to the depth limit instead of named a cycle.

Each test fails on 2bd9fe6d unless it says it is a control.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore as LangChainStore
from langchain_treehop.filters import stored_time, to_treehop_filter
from test_attacks78 import WAYS, CountedPath, _add, _shared
from test_leftovers66c_mcp_wire import _SERVE, _Proc
from treehop import Treehop
from treehop.arguments import json_bytes_problem
from treehop.errors import IngestError, InvalidFilterError
from treehop.integration_kit import plain_metadata

from treehop_test_doubles import BagOfWordsEmbedder

# -- 1. a request's fields beside an "error": a response to the SDK, never answered ----------


def test_lines_the_sdk_reads_as_responses_do_not_stop_the_server_reading(tmp_path: Path) -> None:
    # 2bd9fe6d: the 300 lines counted as requests in flight (each one validates as a request),
    # the SDK read each as an error response to a request it never sent and dropped it: the
    # gate read nothing more past 256, the ping was never answered, and the server was still
    # running 120 s after its stdin closed
    server = _Proc([sys.executable, "-c", _SERVE, str(tmp_path / "idx"), "60"])
    try:
        for i in range(300):
            server.send(
                {
                    "jsonrpc": "2.0",
                    "id": i,
                    "method": "ping",
                    "error": {"code": 1, "message": "an answer to no request"},
                }
            )
        server.send({"jsonrpc": "2.0", "id": "last", "method": "ping"})
        assert server.answer(30.0) == {"jsonrpc": "2.0", "id": "last", "result": {}}
        started = time.monotonic()
        assert server.close() == 0
        assert time.monotonic() - started < 30.0
    finally:
        if server.proc.poll() is None:  # pragma: no cover - a server that stays
            server.proc.kill()
            server.proc.wait()


_KEYS = ["jsonrpc", "id", "method", "params", "result", "error"]
_VALUES: dict[str, Any] = {
    "jsonrpc": st.sampled_from(["2.0", "1.0"]),
    "id": st.one_of(st.integers(-5, 5), st.sampled_from(["a", "7"]), st.none()),
    "method": st.sampled_from(["ping", "tools/list", "notifications/cancelled"]),
    "params": st.one_of(st.just({}), st.just({"requestId": 1}), st.none()),
    "result": st.one_of(st.just({}), st.just({"a": 1}), st.integers()),
    "error": st.one_of(
        st.just({"code": 1, "message": "x"}),
        st.just({"code": -32600, "message": "y", "data": None}),
        st.just("oops"),
    ),
}


def _escaped(key: str, which: int) -> str:
    """``key`` as JSON text with its ``which``-th letter written as a ``\\u`` escape (or
    none, ``which`` past its end): the same key to a JSON parser."""
    if which >= len(key):
        return json.dumps(key)
    return '"' + key[:which] + f"\\u{ord(key[which]):04x}" + key[which + 1 :] + '"'


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_KEYS), min_size=1, max_size=6, unique=True).flatmap(
        lambda keys: st.tuples(
            st.just(keys),
            st.tuples(*(_VALUES[k] for k in keys)),
            st.lists(st.integers(0, 9), min_size=len(keys), max_size=len(keys)),
        )
    )
)
def test_the_gate_counts_in_flight_exactly_the_lines_the_sdk_reads_as_requests(
    drawn: tuple[list[str], tuple[Any, ...], list[int]],
) -> None:
    # the gate's count must be the SDK's: a line it counts and the SDK does not answer holds
    # a place for good. Keys in any order, any of them spelt with a \u escape.
    from mcp_types import JSONRPCRequest, jsonrpc_message_adapter
    from pydantic import ValidationError

    from treehop.mcp_server import _screen

    keys, values, escapes = drawn
    line = (
        "{"
        + ", ".join(
            f"{_escaped(k, e)}: {json.dumps(v)}"
            for k, v, e in zip(keys, values, escapes, strict=True)
        )
        + "}"
    )
    try:
        sdk_request = isinstance(
            jsonrpc_message_adapter.validate_json(line, by_name=False), JSONRPCRequest
        )
    except ValidationError:
        sdk_request = False
    screened = _screen(line)
    if screened.answer is None and screened.line == line:
        assert (screened.request_id is not None) == sdk_request, line


# -- 2. datetime64 finer than a nanosecond ---------------------------------------------------

_UNIT_AS = {"ps": 10**6, "fs": 10**3, "as": 1}  # (attoseconds in one)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(sorted(_UNIT_AS)), st.integers(-(2**63) + 1, 2**63 - 1))
def test_a_datetime64_finer_than_a_nanosecond_is_stored_or_refused_by_name(
    unit: str, count: int
) -> None:
    # 2bd9fe6d: OverflowError ("conversion factor between NumPy datetime units Y and as")
    value = np.datetime64(count, unit)  # type: ignore[call-overload]
    attos = count * _UNIT_AS[unit]
    micros, rest = divmod(attos, 10**12)
    try:
        stored = plain_metadata({"t": [value]}, datetimes=stored_time)
    except IngestError as exc:
        assert rest != 0, exc  # (refused only for a part below a microsecond)
        assert "metadata['t'][0]" in str(exc) and "below a microsecond" in str(exc)
        return
    assert rest == 0
    expected = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros)
    assert stored == {"t": [expected.timestamp()]}


def test_a_langchain_filter_on_a_datetime64_in_attoseconds_is_the_time_it_counts() -> None:
    # 2bd9fe6d: OverflowError out of similarity_search, for a bound and for a value alike
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        store = LangChainStore(client)
        store.add_documents(
            [
                Document(page_content="release note one", metadata={"at": 1.0}, id="n1"),
                Document(page_content="release note two", metadata={"at": 2.0}, id="n2"),
            ]
        )
        one_second = np.datetime64(10**18, "as")
        later = store.similarity_search("release note", k=5, filter={"at": {"$gt": one_second}})
        equal = store.similarity_search("release note", k=5, filter={"at": one_second})
    assert [d.id for d in later] == ["n2"]
    assert [d.id for d in equal] == ["n1"]
    with pytest.raises(InvalidFilterError, match="below a microsecond"):
        to_treehop_filter({"at": {"$gte": np.datetime64(1, "as")}})


# -- 3. numpy arrays counted by the bound ----------------------------------------------------


@pytest.mark.parametrize("way", WAYS)
def test_a_huge_array_is_refused_before_it_is_converted(way: str, tmp_path: Path) -> None:
    # 2bd9fe6d: the array counted as one value, so plain_metadata's .tolist() made 10**7
    # Python floats (peak ~300 MB under tracemalloc) before the core's "larger than"
    array = np.zeros(10**7)
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client:
        tracemalloc.start()
        try:
            with pytest.raises(IngestError, match="larger than 5000000 bytes as JSON"):
                _add(way, client, {"a": array})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 30 * 2**20, peak


@pytest.mark.parametrize("way", WAYS)
def test_an_object_array_holding_a_shared_list_is_refused_before_it_is_walked(
    way: str, tmp_path: Path
) -> None:
    # 2bd9fe6d: plain_metadata walked the object array's list path by path, turning each of
    # its 5 * 10**5 leaf paths into text (attacks78's case, one array further down)
    CountedPath.calls = 0
    holder = np.empty(1, dtype=object)
    holder[0] = _shared(4, [CountedPath("p")] * 5 + ["x" * 1000] * 5)
    with (
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client,
        pytest.raises(IngestError, match="larger than 5000000 bytes as JSON"),
    ):
        _add(way, client, {"a": holder})
    assert CountedPath.calls == 0


@pytest.mark.parametrize("way", WAYS)
def test_an_object_array_holding_itself_is_named_a_cycle(way: str, tmp_path: Path) -> None:
    # 2bd9fe6d: .tolist() nested it to the depth limit and the store refused the depth (or
    # LlamaIndex's dump wrote it); a list holding itself was named a cycle since attacks78
    me = np.empty(1, dtype=object)
    me[0] = me
    with (
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client,
        pytest.raises(IngestError, match="holds itself"),
    ):
        _add(way, client, {"a": me})


_SHAPES = st.lists(st.integers(0, 4), min_size=0, max_size=3)


@settings(max_examples=200, deadline=None)
@given(
    _SHAPES,
    st.sampled_from(["float64", "int8", "bool", "float32", "object", "<U3"]),
    st.booleans(),
)
def test_the_bound_never_refuses_an_array_within_its_own_json_size(
    shape: list[int], dtype: str, compact: bool
) -> None:
    # the lower bound pinned: a 0-d array, an empty one, nested dimensions, object items,
    # booleans, text are never refused within their JSON size (true on 2bd9fe6d too, where an
    # array counted one byte); its second half, a large array refused by a tenth of its
    # size, fails there
    array = np.zeros(shape, dtype=dtype) if dtype != "object" else np.empty(shape, dtype=object)
    if dtype == "object":
        array.fill(None)
    separators = (",", ":") if compact else (", ", ": ")
    size = len(json.dumps({"a": array.tolist()}, separators=separators).encode())
    assert json_bytes_problem({"a": array}, size) is None
    # (and an array too large for a bound of a tenth of its size is refused)
    if array.size >= 20 and dtype != "object":
        assert json_bytes_problem({"a": array}, size // 10) is not None


def test_small_arrays_are_still_stored_as_their_lists() -> None:
    # control (passes on 2bd9fe6d): a 0-d, a 2-D and an object array within the bound
    holder = np.empty(2, dtype=object)
    holder[0], holder[1] = np.float32(0.5), [1, 2]
    given_ = {"z": np.array(3), "m": np.arange(6).reshape(2, 3), "o": holder}
    assert plain_metadata(given_) == {"z": 3, "m": [[0, 1, 2], [3, 4, 5]], "o": [0.5, [1, 2]]}


def test_a_masked_datetime64_arrays_missing_item_is_stored_as_none() -> None:
    # 2bd9fe6d: "metadata['t'][1]: is an array holding NaN or infinity" (numpy's masked
    # constant is a 0-d float array), where a masked float or int array stores None for it
    days = np.array(["2024-01-01", "2024-01-02"], dtype="datetime64[s]")
    first = dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp()
    masked = np.ma.masked_array(days, mask=[False, True])
    assert plain_metadata({"t": masked}, datetimes=stored_time) == {"t": [first, None]}
    grid = np.ma.masked_array(days.reshape(1, 2), mask=[[False, True]])
    assert plain_metadata({"t": grid}, datetimes=stored_time) == {"t": [[first, None]]}
    # (the premise: the other kinds' missing item is None)
    assert plain_metadata({"n": np.ma.masked_array([1, 2], mask=[False, True])}) == {"n": [1, None]}


# -- 4. a datetime whose tzinfo is the caller's broken code ----------------------------------

SECRET = "sk-attacks79-0123456789abcdef"


class _IntOffset(dt.tzinfo):
    """``utcoffset`` returning an ``int``: Python's own ``TypeError`` in ``timestamp()``."""

    def utcoffset(self, _: dt.datetime | None) -> Any:
        return 5

    def dst(self, _: dt.datetime | None) -> None:
        return None


class _Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text either")


class _RaisingOffset(_IntOffset):
    """``utcoffset`` raising an exception whose own ``__str__`` raises."""

    def utcoffset(self, _: dt.datetime | None) -> Any:
        raise _Unreadable


class _KeyOffset(_IntOffset):
    """``utcoffset`` raising a ``ValueError`` that holds a registered key and a megabyte."""

    def utcoffset(self, _: dt.datetime | None) -> Any:
        raise ValueError(f"zone lookup with key {SECRET} failed " + "x" * 10**6)


_ZONES = {"int offset": _IntOffset, "raising offset": _RaisingOffset, "key in text": _KeyOffset}


@pytest.mark.parametrize(("way", "zone"), [(w, z) for w in WAYS for z in sorted(_ZONES)])
def test_a_datetime_whose_tzinfo_misbehaves_is_a_bounded_typed_refusal(
    way: str, zone: str, tmp_path: Path
) -> None:
    # 2bd9fe6d: the TypeError / the caller's exception raw out of the add; the ValueError's
    # text (the key, a megabyte) repeated whole in the IngestError
    from treehop.redaction import register_secret

    register_secret(SECRET)
    when = dt.datetime(2024, 1, 1, tzinfo=_ZONES[zone]())
    with (
        Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client,
        pytest.raises(IngestError) as caught,
    ):
        _add(way, client, {"t": when})
    text = str(caught.value)
    assert "metadata['t']" in text and len(text) < 1000
    assert not any(SECRET[i : i + 8] in text for i in range(len(SECRET) - 7))


@pytest.mark.parametrize("zone", sorted(_ZONES))
def test_a_filter_on_a_datetime_whose_tzinfo_misbehaves_is_a_typed_refusal(zone: str) -> None:
    # 2bd9fe6d: the TypeError / the caller's exception raw out of the filter's translation
    # (the ValueError case was typed there already, its text not shown: a control)
    when = dt.datetime(2024, 1, 1, tzinfo=_ZONES[zone]())
    for flt in ({"t": {"$lt": when}}, {"t": when}, {"t": {"$in": [when]}}):
        with pytest.raises(InvalidFilterError, match="has no epoch time"):
            to_treehop_filter(flt)


# -- 5. a stdin line fed two characters at a time --------------------------------------------


def test_a_line_fed_in_tiny_pieces_is_kept_in_about_its_characters() -> None:
    # 2bd9fe6d: each piece kept as a string of its own (~59 bytes for two characters): 2 Mi
    # characters cost ~60 MB, so the 16 Mi character bound let a client that writes two bytes
    # at a time as fast as the server reads grow it by ~500 MB
    from treehop._mcp_wire import LineSplitter

    splitter = LineSplitter(16 * 1024 * 1024)
    tracemalloc.start()
    try:
        for _ in range(1_000_000):
            assert splitter.feed(b"ab".decode()) == []  # (a fresh string, as a read gives)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * 2_000_000, peak
    assert splitter.feed("\n") == ["ab" * 1_000_000 + "\n"]


@settings(max_examples=200, deadline=None)
@given(
    text=st.text(alphabet="ab\n", max_size=3000),
    sizes=st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=20),
    limit=st.sampled_from([0, 5, 300, 700, 2000, 5000]),
)
def test_a_line_fed_in_tiny_pieces_is_handed_on_as_given(
    text: str, sizes: list[int], limit: int
) -> None:
    # control for the joins (leftovers66c's property, in pieces of 1-3 characters, so that a
    # line crosses the 256 pieces the splitter joins at, with limits around it)
    from test_leftovers66c_mcp_wire import _reference
    from treehop._mcp_wire import HEAD_CHARS, LineSplitter, TooLong

    splitter = LineSplitter(limit)
    got: list[Any] = []
    at = k = 0
    while at < len(text):
        got += splitter.feed(text[at : at + sizes[k % len(sizes)]])
        at += sizes[k % len(sizes)]
        k += 1
    got += splitter.end()
    want = _reference(text, limit)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if isinstance(w, tuple):
            assert isinstance(g, TooLong) and w[1].startswith(g.head)
            assert len(g.head) >= min(limit + 1, HEAD_CHARS)
        else:
            assert g == w
