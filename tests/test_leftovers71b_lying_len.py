"""A ``Sequence`` of conds whose ``__len__`` lies is read no further than it says (helper
leftovers71b; attacks82's open item).

The conds bound asked ``len()``, but every walk after it iterated: a sequence saying 2 and
yielding a million items was walked whole by the rewrite, the validation and the store.
Now it is copied once, at most ``len() + 1`` items read, and refused typed when it yields a
different number; an honest one (a ``range``, a custom class) filters as its list.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MetadataFilter

from treehop_test_doubles import BagOfWordsEmbedder


class Lying(Sequence[Any]):
    """Says ``said`` items, yields ``items`` (counting every read)."""

    def __init__(self, said: int, items: list[Any]) -> None:
        self.said, self.items, self.reads = said, items, 0

    def __len__(self) -> int:
        return self.said

    @overload
    def __getitem__(self, i: int) -> Any: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Any]: ...
    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            raise TypeError("no slices")
        self.reads += 1
        return self.items[i]

    def __iter__(self) -> Iterator[Any]:
        for x in self.items:  # (as long as it yields, whatever len() says)
            self.reads += 1
            yield x


@settings(max_examples=60, deadline=None)
@given(said=st.integers(1, 50), extra=st.integers(-50, 10**5), op=st.sampled_from(["must", "or"]))
def test_a_lying_length_is_refused_after_at_most_len_plus_one_reads(
    said: int, extra: int, op: str
) -> None:
    n = max(0, said + extra)
    leaf = {"op": "must", "field": "f", "conds": [1]}
    items: list[Any] = list(range(n)) if op == "must" else [leaf] * n
    conds = Lying(said, items)
    spec: dict[str, Any] = (
        {"op": "must", "field": "f", "conds": conds}
        if op == "must"
        else {"op": "or", "conds": conds}
    )
    if n == said:
        parsed = MetadataFilter.parse(spec)
        assert parsed is not None
        inner = parsed.spec["conds"]
        assert type(inner) is list and len(inner) == said
    else:
        with pytest.raises(InvalidFilterError, match=f"len\\(\\) says {said} but that yields"):
            MetadataFilter.parse(spec)
    assert conds.reads <= said + 1


def test_find_over_a_lying_sequence_is_refused_at_once() -> None:
    conds = Lying(2, list(range(10**6)))
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        client.add_resource("keys rotate", is_text=True, name="k.md", metadata={"f": 1})
        with pytest.raises(InvalidFilterError, match="yields more than 2 items"):
            client.find("keys", filter={"op": "must", "field": "f", "conds": conds})
    assert conds.reads <= 3


def test_reading_that_raises_is_typed() -> None:
    class Broken(Lying):
        def __iter__(self) -> Iterator[Any]:
            raise RuntimeError("adapter broke")

    with pytest.raises(InvalidFilterError, match="could not be read \\(RuntimeError\\)"):
        MetadataFilter.parse({"op": "must", "field": "f", "conds": Broken(2, [1, 2])})


def test_control_honest_sequences_filter_as_their_list() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        for i in range(3):
            client.add_resource(
                f"keys rotate {i}", is_text=True, name=f"k{i}.md", metadata={"f": i}
            )
        for conds in (range(1, 3), Lying(2, [1, 2]), [1, 2], (1, 2)):
            res = client.find("keys rotate", filter={"op": "must", "field": "f", "conds": conds})
            assert sorted(m.metadata["f"] for m in res.contexts()) == [1, 2], conds
