"""A refused value's shown form is built only as far as it is shown (helper leftovers65b,
bench/README.md "(helper leftovers65b)"): ``validation.shown_value`` computed the whole
``repr`` before cutting it to 100 characters, so ``find(q, limit=list(range(5 * 10**6)))``
spent 1.3 s building a 39 MB string to be refused (helper attacks75's open item), and a list
of shared lists (small in memory, astronomically long as text) never finished.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import InvalidQueryError, Treehop
from treehop.redaction import redact
from treehop.validation import SHOWN_VALUE_CHARS, shown_value

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with Treehop(tmp_path_factory.mktemp("v") / "idx", embedder=BagOfWordsEmbedder()) as c:
        c.add_resource(
            "deploy with a rolling update", target_uri="viking://resources/a", is_text=True
        )
        yield c


def _refusal(client: Treehop, value: object) -> tuple[str, float]:
    started = time.process_time()
    with pytest.raises(InvalidQueryError) as caught:
        client.find("deploy", limit=value)  # type: ignore[arg-type]
    return str(caught.value), time.process_time() - started


def test_refusing_a_five_million_item_list_does_not_build_its_repr(client: Treehop) -> None:
    message, spent = _refusal(client, list(range(5 * 10**6)))
    assert spent < 0.2, spent  # (6ef26e9a: ~1.3 s on the loaded box)
    assert message == (
        "limit must be an integer, got "
        "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, "
        "23, 24, 25, 26..."
    )


def test_the_work_does_not_scale_with_the_value() -> None:
    # a dict of a million keys and a list 10x longer cost what their first 100 characters cost
    timings = []
    for value in ({i: i for i in range(10**6)}, list(range(10**6)), list(range(10**7))):
        best = float("inf")
        for _ in range(20):  # (the best of 20: a collection of the 10**7 objects is not ours)
            started = time.perf_counter()
            shown = shown_value(value)
            best = min(best, time.perf_counter() - started)
        timings.append(best)
        assert len(shown) == SHOWN_VALUE_CHARS and shown.endswith("...")
    assert max(timings) < 0.01, timings  # (6ef26e9a: 0.1 s to 3 s each)


def test_a_list_of_shared_lists_is_shown_at_once() -> None:
    # ~1e14 elements as text, a few kB in memory: repr never returned
    big: list[Any] = [0] * 100
    for _ in range(6):
        big = [big] * 100
    started = time.perf_counter()
    shown = shown_value(big)
    assert time.perf_counter() - started < 0.05
    assert shown.startswith("[[[[[[[0, 0, 0") and len(shown) == SHOWN_VALUE_CHARS


def test_small_values_are_shown_as_repr_writes_them() -> None:
    # (control: the form is unchanged where the repr fits) and self-holding containers
    a: list[Any] = [1]
    a.append(a)
    d: dict[str, Any] = {}
    d["k"] = d
    for value in [
        (1,),
        (),
        set(),
        frozenset(),
        frozenset({2}),
        {1: b"x"},
        [None, True, 1.5],
        a,
        d,
        "it's",
    ]:
        assert shown_value(value) == repr(value)
    assert shown_value(10**5000) == "an integer of 16610 bits"


def test_a_huge_integer_inside_a_list_is_shown_by_its_size() -> None:
    # 6ef26e9a: "<list>" (repr raised on the 4,300-digit limit)
    assert shown_value([1, 10**5000]) == "[1, <an integer of 16610 bits>]"


def _old_form(value: object) -> str:
    """6ef26e9a's form: the whole repr, cut, then redacted (``{'PASSWORD': '***'}``)."""
    text = repr(value)
    return redact(text if len(text) <= SHOWN_VALUE_CHARS else text[: SHOWN_VALUE_CHARS - 3] + "...")


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False)
    | st.text(alphabet=st.characters(blacklist_characters="'\""), max_size=150)
    | st.binary(max_size=50).filter(lambda b: b"'" not in b and b'"' not in b)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=8)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(alphabet="abc", max_size=3) | st.integers(), inner, max_size=5)
        | st.frozensets(st.integers() | st.text(alphabet="xyz", max_size=4), max_size=6)
    ),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES)
def test_the_shown_form_is_the_cut_repr(value: object) -> None:
    """Any value of built-in containers and scalars is shown as its ``repr`` cut at 100
    characters (``...`` after a cut). (Strings without quotes: a long string is quoted as
    its shown part would be, which can differ from ``repr``'s choice for the whole.)"""
    assert shown_value(value) == _old_form(value)


@settings(max_examples=200, deadline=None)
@given(
    value=st.recursive(
        st.text() | st.integers() | st.binary(),
        lambda i: st.lists(i) | st.dictionaries(st.text(), i),
        max_leaves=30,
    )
)
def test_any_value_fitting_is_shown_as_its_repr_and_any_other_cut(value: object) -> None:
    """Any strings (quotes, escapes, secret-named keys): the redacted repr where it fits;
    else a cut form (a string cut short is quoted as its shown part is: ``repr`` picks the
    quote from the whole string, which is not read)."""
    shown = shown_value(value)
    if len(repr(value)) <= SHOWN_VALUE_CHARS:
        assert shown == _old_form(value)
    else:
        assert shown.endswith("...") and len(shown) < 2 * SHOWN_VALUE_CHARS


def test_the_message_of_a_caller_object_whose_repr_raises(tmp_path: Path) -> None:
    # (control) as before: the type's name
    class Bad:
        def __repr__(self) -> str:
            raise RuntimeError("no")

    assert shown_value(Bad()) == "<Bad>"
