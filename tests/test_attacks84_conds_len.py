"""helper attacks84: a filter's ``conds`` whose ``len()`` raises is a typed refusal.

leftovers71b bounded a ``Sequence`` whose ``len()`` lies; one whose ``__len__`` raises (a
caller's lazy view over a closed cursor) or answers what ``len()`` refuses (``-1``,
``"2"``, ``2.0``) escaped ``find()`` as ``RuntimeError`` / ``ValueError`` / ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

LEAF = {"op": "must", "field": "kind", "conds": ["x"]}


class _Conds(Sequence[Any]):
    def __init__(self, length: Any) -> None:
        self.length = length

    def __len__(self) -> int:
        if isinstance(self.length, BaseException):
            raise self.length
        return self.length  # type: ignore[no-any-return]

    def __getitem__(self, i: Any) -> Any:
        if i >= 1:
            raise IndexError(i)
        return LEAF


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path: Path = tmp_path_factory.mktemp("conds") / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource("Roll back the deploy.", is_text=True, name="a.md")
        yield th


BAD_LENGTHS = st.one_of(
    st.sampled_from([RuntimeError("cursor closed"), KeyError("k"), ValueError("v")]),
    st.integers(max_value=-1),
    st.text(max_size=3),
    st.floats(allow_nan=True),
    st.none(),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(length=BAD_LENGTHS, op=st.sampled_from(["or", "and", "must", "must_not"]))
def test_a_len_that_raises_or_is_no_int_is_refused_typed(client: Any, length: Any, op: str) -> None:
    conds = _Conds(length)
    spec = {"op": op, "conds": conds}
    if op.startswith("must"):
        spec["field"] = "kind"
    with pytest.raises(InvalidFilterError, match="conds has no usable len"):
        client.find("roll back", filter=spec)


def test_control_an_honest_sequence_filters(client: Any) -> None:
    res = client.find("roll back", filter={"op": "or", "conds": _Conds(1)})
    assert res.contexts() == []  # (kind is never "x")
    hit = client.find(
        "roll back",
        filter={"op": "or", "conds": [{"op": "must_not", "field": "kind", "conds": ["x"]}]},
    )
    assert [m.uri for m in hit.contexts()]
