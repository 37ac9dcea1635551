"""Stop 68's small open items in the core (helper leftovers69b, bench/README.md
"(helper leftovers69b)"):

1. ``add_resource(metadata={"n": np.int64(3)})`` was refused ("int64 is not
   JSON-serialisable") while the integrations store it as ``3`` and the core's filters take
   numpy values: numpy scalars are now taken as the Python values they equal, and stored so.
2. A range bound no float or integer holds exactly (``Fraction(1, 10**400)``) was turned
   into the nearest float (``0.0``) and compared as it: it is now refused, naming the value
   it would have compared as.
3. The MCP ``find`` tool had no ``context_type``: it has, as an enum in its schema.

Each test fails on d32e6e34 unless it says it is a control.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.arguments import check_metadata
from treehop.errors import InvalidFilterError, InvalidQueryError
from treehop.filters import MetadataFilter

from treehop_test_doubles import BagOfWordsEmbedder, numpy_real_scalars

R = "viking://resources"

# -- 1. numpy scalars in the core's metadata -------------------------------------------------

_NUMPY_SCALARS = st.builds(np.bool_, st.booleans()) | numpy_real_scalars()
"""Every numpy integer and float width (finite or not), and numpy booleans."""


@settings(max_examples=300, deadline=None)
@given(value=_NUMPY_SCALARS, nested=st.booleans())
def test_numpy_scalars_are_stored_as_the_python_value_they_equal(value: Any, nested: bool) -> None:
    """Type for type what ``.item()`` gives (a bool a bool, never 1), in a list and a dict
    too; or refused exactly where the Python value is (a NaN / infinity, an integer past
    64 bits: ``np.uint64`` above ``2**63 - 1``)."""
    python = value.item()
    meta = {"v": [{"in": value}]} if nested else {"v": value}
    plain_meta = {"v": [{"in": python}]} if nested else {"v": python}
    try:
        want = check_metadata(plain_meta)
    except InvalidQueryError as exc:
        with pytest.raises(InvalidQueryError) as got:
            check_metadata(meta)
        assert str(got.value) == str(exc)
        return
    got_meta = check_metadata(meta)
    assert got_meta == want
    stored = got_meta["v"][0]["in"] if nested else got_meta["v"]  # type: ignore[index]
    assert type(stored) is type(python) and (stored == python or math.isnan(python))


def test_add_resource_stores_numpy_metadata_as_python_values(tmp_path: Path) -> None:
    """The write goes through, every value reads back as a plain Python one (also after a
    reopen: the JSON round trip), and a filter finds it as it finds Python's."""
    meta = {
        "n": np.int64(3),
        "w": np.float32(0.5),
        "ok": np.bool_(True),
        "f64": np.float64(0.25),
        "lang": np.str_("en"),
        "scores": [np.float32(1.5), np.int8(-2)],
    }
    want = {"n": 3, "w": 0.5, "ok": True, "f64": 0.25, "lang": "en", "scores": [1.5, -2]}
    types = {"n": int, "w": float, "ok": bool, "f64": float, "lang": str, "scores": list}
    uri = f"{R}/n"
    for reopen in (False, True):
        with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
            if not reopen:
                th.add_resource("apples and pears", is_text=True, target_uri=uri, metadata=meta)
            [hit] = th.find("apples", filter={"op": "must", "field": "n", "conds": [3]}).resources
            got = {k: hit.metadata[k] for k in want}
            assert got == want and {k: type(v) for k, v in got.items()} == types
            assert [type(x) for x in got["scores"]] == [float, int]
            in_range = {"op": "range", "field": "w", "gte": np.float32(0.5)}
            assert [h.uri for h in th.find("apples", filter=in_range).resources] == [uri]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (np.longdouble("0.1"), "longdouble is not JSON-serialisable"),
        (np.float32("nan"), "nan is not a JSON number"),
        (np.float64("inf"), "inf is not a JSON number"),
        (np.uint64(2**64 - 1), "integer outside the 64-bit range"),
        (np.array([1, 2]), "ndarray is not JSON-serialisable"),
        (np.datetime64("2024-01-01"), "datetime64 is not JSON-serialisable"),
    ],
    ids=repr,
)
def test_what_no_json_number_holds_is_still_refused_before_the_write(
    tmp_path: Path, value: Any, message: str
) -> None:
    """A long double, a NaN, an infinity, an integer past 64 bits, an array, a
    ``datetime64``: refused before anything is written. On d32e6e34 each was refused too,
    the numpy ones by their type ("float32 is not JSON-serialisable", "np.float64(inf) is
    not a JSON number"): the NaN, infinity and ``uint64`` cases fail there on the message
    only; the long double, array and ``datetime64`` are controls."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        with pytest.raises(InvalidQueryError, match=message):
            th.add_resource("apples", is_text=True, target_uri=f"{R}/x", metadata={"x": value})
        assert not th.ls(R)


def test_plain_metadata_is_not_copied() -> None:
    """Control: metadata without numpy values comes back equal, its nested containers the
    caller's own objects (nothing rebuilt for the usual call)."""
    inner = {"a": [1, 2.5, "x", None, True]}
    got = check_metadata({"k": inner})
    assert got == {"k": inner} and got["k"] is inner


# -- 2. range bounds no float or integer holds exactly ---------------------------------------


def _range(bound: Any, op: str = "gte") -> dict[str, Any]:
    return {"op": "range", "field": "x", op: bound}


@pytest.mark.parametrize(
    ("bound", "shown"),
    [
        (Fraction(1, 10**400), "0.0"),
        (Fraction(1, 3), "0.3333333333333333"),
        (np.longdouble("0.1"), "0.1"),
    ],
    ids=["tiny", "third", "longdouble"],
)
def test_a_bound_no_float_holds_is_refused_naming_what_it_would_compare_as(
    bound: Any, shown: str
) -> None:
    """d32e6e34: ``gte Fraction(1, 10**400)`` became ``gte 0.0`` and took a stored 0."""
    with pytest.raises(InvalidFilterError, match=rf"bound 'gte' .* would compare as {shown}\)"):
        MetadataFilter.parse(_range(bound))
    nested = {"op": "or", "conds": [_range(1), _range(bound, "lt")]}
    with pytest.raises(InvalidFilterError, match=r"filter\.conds\[1\]: bound 'lt'"):
        MetadataFilter.parse(nested)


def test_the_tiny_bound_no_longer_takes_a_stored_zero(tmp_path: Path) -> None:
    """The store's answer: before, ``gte Fraction(1, 10**400)`` returned the node whose
    ``x`` is 0 (0 >= 1e-400 is false); now the call is refused, typed, and the same bound
    written as the float it meant answers."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("apples", is_text=True, target_uri=f"{R}/z", metadata={"x": 0})
        with pytest.raises(InvalidFilterError, match="holds exactly"):
            th.find("apples", filter=_range(Fraction(1, 10**400)))
        assert not th.find("apples", filter=_range(1e-300)).resources
        assert [h.uri for h in th.find("apples", filter=_range(0.0)).resources] == [f"{R}/z"]


@settings(max_examples=300, deadline=None)
@given(
    bound=st.fractions(max_denominator=2**70) | st.floats(allow_nan=False, allow_infinity=False),
    value=st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70),
    op=st.sampled_from(["gt", "gte", "lt", "lte"]),
)
def test_an_accepted_bound_compares_exactly(bound: Any, value: Any, op: str) -> None:
    """A bound is taken exactly when a float holds it, and then a stored value matches it
    as the exact comparison says; else the parse refuses it (never a rounded answer)."""
    spec = _range(bound, op)
    if float(bound) != bound:
        with pytest.raises(InvalidFilterError, match="holds exactly"):
            MetadataFilter.parse(spec)
        return
    f = MetadataFilter.parse(spec)
    assert f is not None
    exact = {
        "gt": value > bound,
        "gte": value >= bound,
        "lt": value < bound,
        "lte": value <= bound,
    }[op]
    assert f.matches({"x": value}) == exact


_EXACT = [Fraction(1, 2), np.float32(0.1), np.int64(3), np.longdouble(0.5), np.uint64(2**64 - 1)]


@pytest.mark.parametrize("bound", _EXACT)
def test_bounds_a_float_or_integer_holds_are_still_taken(bound: Any) -> None:
    """Control (taken on d32e6e34 too): exact values, numpy's and a Fraction's."""
    f = MetadataFilter.parse(_range(bound))
    assert f is not None and f.spec["gte"] == bound and type(f.spec["gte"]) in (int, float)


# -- 3. the MCP find tool's context_type -----------------------------------------------------


def _mixed_index(path: Path) -> None:
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("apples grow on trees", is_text=True, target_uri=f"{R}/apples")
        th.add_memory("apples are my favourite fruit", name="apples")


async def test_mcp_find_takes_context_type_and_publishes_it(tmp_path: Path) -> None:
    from mcp import Client

    from treehop import AsyncTreehop
    from treehop.mcp_server import build_server

    _mixed_index(tmp_path / "idx")
    a = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        async with Client(build_server(a)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            prop = tools["find"].input_schema["properties"]["context_type"]
            assert set(prop["anyOf"][0]["enum"]) == {"resource", "memory", "skill"}, prop

            async def uris(args: dict[str, Any]) -> list[str]:
                res = await client.call_tool("find", {"query": "apples", **args})
                assert not res.is_error, res.content
                return [h["uri"] for h in (res.structured_content or {})["hits"]]

            both = await uris({})
            memories = await uris({"context_type": "memory"})
            resources = await uris({"context_type": "resource"})
            assert memories and all(u.startswith("viking://~/memories/") for u in memories)
            assert resources == [f"{R}/apples"]
            assert set(memories) | set(resources) <= set(both)
            assert await uris({"context_type": "skill"}) == []
            bad = await client.call_tool("find", {"query": "apples", "context_type": "memories"})
            assert bad.is_error
            text = bad.content[0].text  # type: ignore[union-attr]
            assert "context_type" in text and "memories" in text
    finally:
        await a.close()
