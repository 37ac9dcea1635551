"""A filter object whose ``__len__`` lies is read no further than it says (helper
leftovers71d; leftovers71b's open item).

leftovers71b bounded a ``conds`` sequence whose ``len()`` lies; a filter *object* is a
caller's ``Mapping`` too, and every walk iterated its keys (``set(spec) - allowed``,
``{**spec}``) as long as it yielded. Now each object is copied once, at most ``len() + 1``
keys read, and refused typed when it yields a different number or its reading raises; an
honest custom mapping filters as its dict.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.errors import InvalidFilterError, TreehopError
from treehop.filters import MetadataFilter, ShownField, show_fields

from treehop_test_doubles import BagOfWordsEmbedder


class Lying(Mapping[str, Any]):
    """Says ``said`` keys; yields ``data``'s keys, then ``extra`` made-up ones (counted)."""

    def __init__(self, data: dict[str, Any], said: int, extra: int) -> None:
        self.data, self.said, self.extra, self.reads = data, said, extra, 0

    def __len__(self) -> int:
        return self.said

    def __iter__(self) -> Iterator[str]:
        for k in self.data:
            self.reads += 1
            yield k
        for i in range(self.extra):
            self.reads += 1
            yield f"x{i}"

    def __getitem__(self, k: str) -> Any:
        if k in self.data:
            return self.data[k]
        if k.startswith("x") and k[1:].isdigit() and int(k[1:]) < self.extra:
            return 1
        raise KeyError(k)


LEAF = {"op": "must", "field": "kind", "conds": ["a"]}
SOURCE = ShownField("source", over=("source",), fallback="source_path", when="source_path")


@settings(max_examples=60, deadline=None)
@given(
    lie=st.sampled_from([-2, -1, 1, 2, 50, 10**5]),
    nested=st.booleans(),
    via_shown=st.booleans(),
)
def test_a_lying_filter_object_is_refused_after_len_plus_one_reads(
    lie: int, nested: bool, via_shown: bool
) -> None:
    said = len(LEAF) + min(lie, 0)
    obj = Lying(dict(LEAF), said=said, extra=max(lie, 0))
    spec: Any = {"op": "and", "conds": [obj]} if nested else obj
    with pytest.raises(InvalidFilterError, match="len\\(\\) says"):
        if via_shown:
            show_fields(spec, (SOURCE,))
        else:
            MetadataFilter.parse(spec)
    assert obj.reads <= said + 1, obj.reads


def test_find_refuses_a_mapping_saying_three_keys_yielding_a_million() -> None:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        c.add_resource("Rotate the signing keys.", target_uri="viking://resources/keys.md")
        obj = Lying(dict(LEAF), said=3, extra=10**6)
        with pytest.raises(InvalidFilterError, match="yields more than 3 keys"):
            c.find("signing keys", filter=obj)
        assert obj.reads <= 4 * 3, obj.reads  # (each walk at most len() + 1)
    finally:
        c.close()


class Raising(Mapping[str, Any]):
    def __len__(self) -> int:
        return 2

    def __iter__(self) -> Iterator[str]:
        yield "op"
        raise RuntimeError("broken adapter")

    def __getitem__(self, k: str) -> Any:
        return "and"


def test_a_mapping_whose_reading_raises_is_typed() -> None:
    with pytest.raises(InvalidFilterError, match="could not be read \\(RuntimeError\\)"):
        MetadataFilter.parse(Raising())


def test_control_an_honest_custom_mapping_filters_as_its_dict() -> None:
    honest = Lying(dict(LEAF), said=len(LEAF), extra=0)
    parsed = MetadataFilter.parse(honest)
    assert parsed is not None
    assert parsed.spec == MetadataFilter.parse(dict(LEAF)).spec  # type: ignore[union-attr]
    assert parsed.matches({"kind": "a"}) and not parsed.matches({"kind": "b"})
    both = {
        "op": "or",
        "conds": [Lying(dict(LEAF), 3, 0), {"op": "must", "field": "source", "conds": ["s"]}],
    }
    assert show_fields(both, (SOURCE,)) == show_fields(
        {"op": "or", "conds": [dict(LEAF), {"op": "must", "field": "source", "conds": ["s"]}]},
        (SOURCE,),
    )


class LyingMetadata(Mapping[str, Any]):
    """Metadata saying one key and yielding ``n`` (counted)."""

    def __init__(self, n: int) -> None:
        self.n, self.reads = n, 0

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[str]:
        for i in range(self.n):
            self.reads += 1
            yield f"k{i}"

    def __getitem__(self, k: str) -> Any:
        return 1


def test_metadata_whose_len_lies_is_read_only_to_the_bytes_bound() -> None:
    """The metadata bound (``json_bytes_problem``) counted a mapping's keys as it read them
    but looked at the count only after the whole mapping: one saying 1 key and yielding
    millions was read whole (forever, for an endless one) before "larger than 64000 bytes"."""
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        meta = LyingMetadata(3 * 10**6)
        with pytest.raises(TreehopError, match="larger than"):
            c.add_resource("Rotate the keys.", target_uri="viking://resources/a.md", metadata=meta)
        # (each key counts at least 3 bytes against add_resource's 64,000-byte bound)
        assert meta.reads <= 64_000 // 3 + 1, meta.reads
        # control: honest metadata of the same kind is stored
        c.add_resource("Rotate the keys.", target_uri="viking://resources/b.md", metadata={"k0": 1})
        assert c.stat("viking://resources/b.md") is not None
    finally:
        c.close()
