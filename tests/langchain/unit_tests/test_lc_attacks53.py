"""Adversarial pass attacks53, LangChain side (bench/README.md, "helper attacks53")."""

from __future__ import annotations

import pytest

from langchain_treehop import TreehopVectorStore
from treehop.errors import TreehopError

from lc_helpers import WordHashEmbeddings


@pytest.mark.parametrize("meta", [{1: "x"}, {"x": {1: 2}}], ids=["key", "nested-key"])
def test_metadata_with_a_non_string_key_is_a_typed_error_before_any_write(
    meta: dict[object, object],
) -> None:
    """Was pydantic's ValidationError (the node model's keys are strings); a nested int key
    came back from the store as "1"."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    with pytest.raises(TreehopError):
        store.add_texts(["first text", "second text"], [{"a": "b"}, meta], ids=["p1", "p2"])  # type: ignore[list-item]
    assert store.get_by_ids(["p1", "p2"]) == []


@pytest.mark.parametrize("depth", [40, 5_000])
def test_a_deeply_nested_mongo_filter_is_a_typed_error(depth: int) -> None:
    """``{"$and": [{"$and": [...]}]}`` 5,000 deep escaped RecursionError from the conversion
    (the core's DSL refuses past MAX_FILTER_DEPTH levels; the conversion now does too)."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    store.add_texts(["alpha beta"], [{"a": 1}], ids=["1"])
    spec: dict[str, object] = {"a": 1}
    for _ in range(depth):
        spec = {"$and": [spec]}
    with pytest.raises(TreehopError, match="deeper"):
        store.similarity_search("alpha", k=1, filter=spec)
