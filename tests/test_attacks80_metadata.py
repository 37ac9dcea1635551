"""Attacks on stop 67's metadata bound (helper attacks80, bench/README.md "(helper attacks80)").

``json_bytes_problem`` (the bound walked before ``plain_metadata`` turns an array into lists)
counted a numpy array's brackets for its outer list only and a text item as one byte:

1. ``np.empty((2 * 10**6, 0))`` (no item, no memory) counted one byte, and ``tolist()`` made
   two million empty lists before the core refused them (10**7 rows: 51 s, 640 MB traced);
2. a 50,000-character string broadcast to 2,000 items (one string's memory) counted 4 kB,
   and ``tolist()`` made 100 MB of Python strings (a 1 MB string over 10**4 items: 10 GB).

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_attacks78 import WAYS, _add
from treehop import Treehop
from treehop.arguments import json_bytes_problem
from treehop.errors import IngestError
from treehop.integration_kit import plain_metadata

from treehop_test_doubles import BagOfWordsEmbedder


def _empty_rows() -> np.ndarray[Any, Any]:
    return np.empty((2 * 10**6, 0))  # (6 MB as JSON: "[[],[],...]")


def _empty_object_rows() -> np.ndarray[Any, Any]:
    return np.empty((10**6, 2, 0), dtype=object)  # (7 MB as JSON)


def _broadcast_text() -> np.ndarray[Any, Any]:
    return np.broadcast_to(np.array("x" * 50_000), (2_000,))


ARRAYS = {
    "empty rows": (_empty_rows, "larger than 5000000 bytes as JSON"),
    "empty object rows": (_empty_object_rows, "larger than 5000000 bytes as JSON"),
    "broadcast text": (_broadcast_text, "numpy text arrays of more than 80000000 bytes to read"),
}


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_an_array_larger_as_lists_than_as_given_is_refused_before_it_is_converted(
    name: str, way: str, tmp_path: Path
) -> None:
    # c3a05a97: the bound counted each of these as a few bytes, so plain_metadata's tolist()
    # built them whole (a million lists; 100 MB of strings) before the core's refusal
    make, message = ARRAYS[name]
    array = make()
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client:
        tracemalloc.start()
        try:
            with pytest.raises(IngestError, match=message):
                _add(way, client, {"a": array})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 30 * 2**20, peak


def test_a_text_array_shared_many_times_is_read_within_the_budget() -> None:
    # one empty string 10**6 characters wide, referenced 10**5 times: each reference's
    # lengths read 4 MB (400 GB in all on c3a05a97's tolist()); refused by the reading budget
    wide = np.array("", dtype="U1000000")
    problem = json_bytes_problem({"a": [wide] * 100_000}, 5_000_000)
    assert problem is not None and "to read" in problem
    assert plain_metadata({"a": [wide] * 100_000})["a"][0] is wide  # (left for the core)


def test_small_text_and_empty_arrays_are_still_stored_as_their_lists() -> None:
    # control (passes on c3a05a97): within the bound, converted as before
    given = {
        "t": np.array([["ab", ""], ["c", "déjà"]]),
        "e": np.empty((3, 0)),
        "z": np.array("solo"),
        "o": np.empty((2, 0), dtype=object),
    }
    assert plain_metadata(given) == {
        "t": [["ab", ""], ["c", "déjà"]],
        "e": [[], [], []],
        "z": "solo",
        "o": [[], []],
    }


_DTYPES = ["int8", "float32", "bool", "U3", "U1"]


@st.composite
def _arrays(draw: st.DrawFn) -> np.ndarray[Any, Any]:
    shape = draw(st.lists(st.integers(0, 6), min_size=0, max_size=4))
    dtype = draw(st.sampled_from(_DTYPES))
    if dtype.startswith("U"):
        width = int(dtype[1:])
        items = draw(
            st.lists(
                # (no character JSON escapes: each is then at most 4 bytes)
                st.text(
                    st.characters(
                        codec="utf-8", exclude_categories=("Cc",), exclude_characters='"\\'
                    ),
                    max_size=width,
                ),
                min_size=int(np.prod(shape)),
                max_size=int(np.prod(shape)),
            )
        )
        return np.array(items, dtype=dtype).reshape(shape)
    return np.zeros(shape, dtype=dtype)


@settings(max_examples=300, deadline=None)
@given(_arrays())
def test_the_bound_is_a_lower_bound_and_within_a_sixth_of_the_json(
    array: np.ndarray[Any, Any],
) -> None:
    # never refused within its own JSON size (compact, UTF-8: the smallest JSON of it), and
    # refused at a sixth of it ("false" is five bytes, a character at most four, and two
    # quotes; the lists are counted exactly). On c3a05a97 the second half fails: empty rows
    # or text counted a few bytes
    size = len(
        json.dumps({"a": array.tolist()}, separators=(",", ":"), ensure_ascii=False).encode()
    )
    assert json_bytes_problem({"a": array}, size) is None
    if size >= 30:
        assert json_bytes_problem({"a": array}, size // 6) is not None
