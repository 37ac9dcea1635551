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
