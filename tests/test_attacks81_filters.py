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

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MAX_CONDS, MetadataFilter

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
