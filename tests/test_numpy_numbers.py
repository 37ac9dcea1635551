"""A numpy number is a number to its caller (the lead, stop 64; helper attacks75's open item).

``find(limit=np.int64(3))`` and ``score_threshold=np.float32(0.1)`` were refused while the
configs (``RetrievalConfig(dense_weight=np.float64(0.6))``) took numpy numbers, and LangChain's
``TreehopRetriever(k=np.int64(3))`` raised pydantic's ``int_type`` error. An integer argument
now takes any ``numbers.Integral`` (numpy's integers included), a number argument any
``numbers.Real``; bools and floats given for integers stay refused.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import Treehop
from treehop.arguments import check_depth
from treehop.errors import InvalidQueryError
from treehop.search_options import check_slot_chars
from treehop.validation import MAX_LIMIT, check_dense_weight, check_limit, check_threshold, integral

from treehop_test_doubles import BagOfWordsEmbedder

INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)


@pytest.fixture(scope="module")
def client() -> Treehop:
    th = Treehop(embedder=BagOfWordsEmbedder())
    for i, text in enumerate(["alpha beta gamma", "alpha delta", "alpha epsilon zeta"]):
        th.add_resource(text, is_text=True, name=f"t{i}")
    return th


@given(st.sampled_from(INT_TYPES), st.integers(min_value=1, max_value=127))
def test_every_numpy_integer_is_a_limit(kind: type, value: int) -> None:
    got = check_limit(kind(value))
    assert got == value and type(got) is int


@pytest.mark.parametrize("bad", [True, np.bool_(True), 3.0, np.float64(3.0), "3", None, [3]])
def test_what_is_no_integer_stays_refused(bad: object) -> None:
    assert integral(bad) is None
    with pytest.raises(InvalidQueryError, match="limit must be an integer"):
        check_limit(bad)


def test_numpy_integers_are_bounded_as_ints() -> None:
    with pytest.raises(InvalidQueryError, match="between 1 and"):
        check_limit(np.int64(MAX_LIMIT + 1))
    with pytest.raises(InvalidQueryError, match="between 1 and"):
        check_limit(np.int8(-3))
    assert check_depth(np.int32(2)) == 2
    with pytest.raises(InvalidQueryError, match="depth must be in"):
        check_depth(np.int64(10**6))
    assert check_slot_chars(np.uint16(400)) == 400


@pytest.mark.parametrize("value", [np.float32(0.25), np.float64(0.25), Fraction(1, 4), np.int64(0)])
def test_real_numbers_are_thresholds(value: object) -> None:
    got = check_threshold(value)  # type: ignore[arg-type]
    assert got == pytest.approx(float(value)) and type(got) is float  # type: ignore[arg-type]


def test_dense_weight_takes_numpy_and_keeps_its_range() -> None:
    assert check_dense_weight(np.float32(0.5)) == pytest.approx(0.5)  # type: ignore[arg-type]
    for bad in (np.float64(0.1), np.float64("nan"), np.bool_(True), True):
        with pytest.raises(InvalidQueryError, match="dense_weight"):
            check_dense_weight(bad)  # type: ignore[arg-type]


def test_find_takes_numpy_numbers(client: Treehop) -> None:
    plain = client.find("alpha", limit=2, score_threshold=0.0)
    numpy = client.find("alpha", limit=np.int64(2), score_threshold=np.float32(0.0))
    assert [m.uri for m in numpy.resources] == [m.uri for m in plain.resources]
    assert len(numpy.resources) == 2
    with pytest.raises(InvalidQueryError, match="limit must be an integer"):
        client.find("alpha", limit=2.0)  # type: ignore[arg-type]


def test_langchain_k_takes_a_numpy_integer(client: Treehop) -> None:
    from pydantic import ValidationError

    from langchain_treehop import TreehopRetriever

    mmr = TreehopRetriever(client=client, k=np.int64(2), search_type="mmr", fetch_k=np.uint8(5))
    assert mmr.fetch_k == 5 and type(mmr.fetch_k) is int
    retriever = TreehopRetriever(client=client, k=np.int64(2))
    assert retriever.k == 2 and type(retriever.k) is int
    assert len(retriever.invoke("alpha")) == 2
    for bad in ("2", 2.0, True):
        with pytest.raises(ValidationError):
            TreehopRetriever(client=client, k=bad)
