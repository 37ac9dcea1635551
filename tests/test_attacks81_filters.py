"""A filter's ``conds`` counted before any item is read (helper attacks81, bench/README.md
"(helper attacks81)").

Stop 68's ``_python_conds`` (numpy conds made Python values, leftovers68b) and the older
``and`` / ``or`` rewrite in ``_expand_time`` both run before the validation that refuses
more than ``MAX_CONDS`` conds, and both walked every item: a lazy sequence such as
``range(10**18)`` (what a caller building "any id below N" writes, or a hostile agent's
tool call) hung ``find()`` where the count check refuses it at once; ``range(10**19)``,
whose ``len()`` overflows, escaped as ``OverflowError``.

Each test fails on d32e6e34 unless it says it is a control. The refusal is awaited in a
worker thread with a deadline, so a regression fails in seconds instead of hanging the run.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MAX_CONDS, MAX_FILTER_NODES, MAX_FILTER_TEXT_CHARS, MetadataFilter

from treehop_test_doubles import BagOfWordsEmbedder

_DEADLINE_S = 20.0  # (the fixed code answers in microseconds; the box is shared and loaded)


def _outcome(call: Callable[[], object]) -> BaseException | object:
    """What ``call()`` returned or raised, within :data:`_DEADLINE_S` (a daemon thread: a
    hang fails the test instead of the run)."""
    box: list[object] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # (the test judges what escaped)
            box.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(_DEADLINE_S)
    assert box, f"no answer within {_DEADLINE_S} s (the conds were walked item by item)"
    return box[0]


_LAZY = [range(10**18), range(10**19), range(-(10**30), 0)]


def _specs(conds: Sequence[Any]) -> list[dict[str, Any]]:
    return [
        {"op": "must", "field": "n", "conds": conds},
        {"op": "must_not", "field": "n", "conds": conds},
        {"op": "and", "conds": conds},
        {"op": "or", "conds": conds},
        {"op": "and", "conds": [{"op": "or", "conds": conds}]},
    ]


@pytest.mark.parametrize("conds", _LAZY, ids=["1e18", "1e19-len-overflows", "negative-1e30"])
def test_lazy_conds_past_the_bound_are_refused_unread(conds: Sequence[Any]) -> None:
    # d32e6e34: hangs (1e18, -1e30: must / and / or) or OverflowError (1e19)
    for spec in _specs(conds):
        got = _outcome(functools.partial(MetadataFilter.parse, spec))
        assert isinstance(got, InvalidFilterError), (spec["op"], got)
        assert f"more than {MAX_CONDS} conds" in str(got)


def test_find_refuses_lazy_conds_as_the_dsl_error() -> None:
    # d32e6e34: the client's find() hung on the filter before anything was searched
    client = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        client.remember("a note about the river", name="n0")
        for spec in _specs(range(10**18)):
            got = _outcome(functools.partial(client.find, "river", filter=spec))
            assert isinstance(got, InvalidFilterError), (spec["op"], got)
    finally:
        client.close()


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(min_value=1, max_value=MAX_CONDS + 5),
    op=st.sampled_from(["must", "must_not"]),
)
def test_a_range_of_conds_is_taken_exactly_when_a_list_of_them_is(size: int, op: str) -> None:
    # control (d32e6e34 agrees: a short range was always read as its list): the count check
    # changes no answer, only when the refusal comes
    def parsed(conds: Sequence[int]) -> object:
        try:
            md = MetadataFilter.parse({"op": op, "field": "n", "conds": conds})
        except InvalidFilterError as exc:
            return str(exc)
        assert md is not None
        return [md.matches({"n": v}) for v in (0, size - 1, size, -1)]

    assert parsed(range(size)) == parsed(list(range(size)))


def _shared_or(levels: int, width: int) -> dict[str, Any]:
    """One ``or`` object listed ``width`` times in the ``or`` above it, ``levels`` deep: a
    few kilobytes held, ``width ** levels`` objects as a tree."""
    node: dict[str, Any] = {"op": "must", "field": "n", "conds": [1]}
    for _ in range(levels):
        node = {"op": "or", "conds": [node] * width}
    return node


@pytest.mark.parametrize(("levels", "width"), [(4, 1000), (32, 2), (3, 999)])
def test_a_filter_sharing_its_objects_is_refused_by_its_object_count(
    levels: int, width: int
) -> None:
    # d32e6e34: _expand_time walked each path (10**12, 2**32, ~10**9 objects): a hang
    got = _outcome(functools.partial(MetadataFilter.parse, _shared_or(levels, width)))
    assert isinstance(got, InvalidFilterError), got
    assert str(got) == f"filter has more than {MAX_FILTER_NODES} objects"


class _CountedLeaf(dict[str, Any]):
    """A leaf object that counts how often the filter code reads its ``op`` (a real
    mapping: any ``Mapping`` is a filter object)."""

    reads = 0

    def get(self, key: str, default: Any = None) -> Any:
        if key == "op":
            _CountedLeaf.reads += 1
        return super().get(key, default)


def test_a_shared_filter_is_read_no_further_than_its_object_bound() -> None:
    # d32e6e34: refused too, but after _expand_time read all 10**6 leaf paths (1,000,000
    # reads; the shapes above are the same walk past any time)
    leaf = _CountedLeaf(op="must", field="n", conds=[1])
    node: dict[str, Any] = {"op": "or", "conds": [leaf] * 100}
    spec = {"op": "or", "conds": [{"op": "or", "conds": [node] * 100}] * 100}
    _CountedLeaf.reads = 0
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_NODES} objects"):
        MetadataFilter.parse(spec)
    assert _CountedLeaf.reads <= MAX_FILTER_NODES


@pytest.mark.parametrize("shared", [True, False])
def test_the_object_bound_is_where_it_was(shared: bool) -> None:
    # control (d32e6e34 agrees): 1,000 objects taken, 1,001 refused, shared or not
    def leaf() -> dict[str, Any]:
        return {"op": "must", "field": "n", "conds": [1]}

    one = leaf()
    for leaves in (MAX_FILTER_NODES - 1, MAX_FILTER_NODES):
        conds = [one] * leaves if shared else [leaf() for _ in range(leaves)]
        spec = {"op": "or", "conds": conds}
        if leaves < MAX_FILTER_NODES:
            md = MetadataFilter.parse(spec)
            assert md is not None and md.matches({"n": 1}) and not md.matches({"n": 2})
        else:
            with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_NODES} objects"):
                MetadataFilter.parse(spec)


def test_a_long_text_listed_many_times_is_refused_unread() -> None:
    # d32e6e34: taken (20 M characters checked, then a 20 MB cache key; 1 MB x 1,000 took
    # find() 52 s and 2.9 GB)
    text = "x" * 20_000
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_TEXT_CHARS} char"):
        MetadataFilter.parse({"op": "must", "field": "n", "conds": [text] * 1000})
    spread = {"op": "or", "conds": [{"op": "must", "field": "n", "conds": [text] * 100}] * 10}
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_TEXT_CHARS} char"):
        MetadataFilter.parse(spread)


def test_a_broadcast_text_array_is_refused_before_its_copies_are_made() -> None:
    # d32e6e34: list() made 1,000 copies of the 4 MB-wide item (4 GB of np.str_) first
    wide = np.broadcast_to(np.array("x" * 1_000_000), (1000,))
    with pytest.raises(InvalidFilterError, match="padded form"):
        MetadataFilter.parse({"op": "must", "field": "n", "conds": wide})
    # (a text array's padded bytes are 4 a character: the two bounds meet)
    over = np.broadcast_to(np.array("x" * 20_000), (1000,))
    with pytest.raises(InvalidFilterError, match="padded form"):
        MetadataFilter.parse({"op": "must", "field": "n", "conds": over})
    within = np.broadcast_to(np.array("x" * 15_000), (1000,))  # (control: d32e6e34 too)
    md = MetadataFilter.parse({"op": "must", "field": "n", "conds": within})
    assert md is not None and md.matches({"n": "x" * 15_000}) and not md.matches({"n": "x"})


@settings(max_examples=30, deadline=None)
@given(
    lengths=st.lists(
        st.tuples(st.integers(0, 8_000_000), st.integers(1, 200)), min_size=1, max_size=5
    ),
    field=st.text(alphabet="abc", min_size=1, max_size=20),
)
def test_the_text_bound_counts_every_field_and_cond_where_it_stands(
    lengths: list[tuple[int, int]], field: str
) -> None:
    # the bound is exact: the field once per leaf plus every text cond as listed
    leaves = [
        {"op": "must", "field": field, "conds": ["y" * size] * copies} for size, copies in lengths
    ]
    total = sum(len(field) + size * copies for size, copies in lengths)
    spec = {"op": "or", "conds": leaves}
    if total <= MAX_FILTER_TEXT_CHARS:
        md = MetadataFilter.parse(spec)
        assert md is not None
        size = lengths[0][0]
        assert md.matches({field: "y" * size}) and not md.matches({field: "z"})
    else:
        with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_TEXT_CHARS} char"):
            MetadataFilter.parse(spec)


class _CountedMongoLeaf(dict[str, Any]):
    """A LangChain filter's leaf mapping that counts how often it is walked (``items()``)."""

    walks = 0

    def items(self) -> Any:
        _CountedMongoLeaf.walks += 1
        return super().items()


def test_a_langchain_filter_sharing_its_objects_is_refused_by_its_object_count() -> None:
    # d32e6e34: _mongo walked each of the 10**6 leaf paths (then the core refused the
    # result); four levels of 1,000 (10**12) hung the vector store's search
    from langchain_treehop.filters import to_treehop_filter

    leaf = _CountedMongoLeaf(a=1)
    spec: dict[str, Any] = {"$or": [{"$or": [{"$or": [leaf] * 100}] * 100}] * 100}
    _CountedMongoLeaf.walks = 0
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_NODES} objects"):
        to_treehop_filter(spec)
    assert _CountedMongoLeaf.walks <= MAX_FILTER_NODES
    hung: dict[str, Any] = {"a": 1}
    for _ in range(4):
        hung = {"$or": [hung] * 1000}
    got = _outcome(functools.partial(to_treehop_filter, hung))
    assert isinstance(got, InvalidFilterError), got
    # control (d32e6e34 agrees): the bound is where the core's is
    assert to_treehop_filter({"$or": [{"a": i} for i in range(MAX_FILTER_NODES - 1)]})
    with pytest.raises(InvalidFilterError, match=f"more than {MAX_FILTER_NODES} objects"):
        to_treehop_filter({"$or": [{"a": i} for i in range(MAX_FILTER_NODES)]})


def test_a_llamaindex_filter_sharing_its_groups_is_refused_by_its_count() -> None:
    # d32e6e34: _check_depth's walk (then the translation) went through each of the 10**12
    # groups: the retriever's and the vector store's query hung
    from llama_index.core.vector_stores.types import MetadataFilter as LIFilter
    from llama_index.core.vector_stores.types import MetadataFilters

    from llama_index.retrievers.treehop.filters import to_treehop_filters

    group = MetadataFilters(filters=[LIFilter(key="a", value=1)], condition="or")
    for _ in range(4):
        group = MetadataFilters(filters=[group] * 1000, condition="or")
    got = _outcome(functools.partial(to_treehop_filters, group))
    assert isinstance(got, InvalidFilterError), got
    assert "filters and groups" in str(got)
    # (three levels of 40: 64,000 leaves as a tree, walked in seconds on d32e6e34, where
    # the core then refused "more than 1000 objects": refused here before the walk)
    small = MetadataFilters(filters=[LIFilter(key="a", value=1)], condition="or")
    for _ in range(3):
        small = MetadataFilters(filters=[small] * 40, condition="or")
    with pytest.raises(InvalidFilterError, match="filters and groups"):
        to_treehop_filters(small)
    # control (d32e6e34 agrees): 999 leaves in an OR are translated as before
    wide = MetadataFilters(
        filters=[LIFilter(key="a", value=i) for i in range(MAX_FILTER_NODES - 1)], condition="or"
    )
    spec = to_treehop_filters(wide).filter
    assert spec is not None and spec["op"] == "or" and len(spec["conds"]) == MAX_FILTER_NODES - 1
