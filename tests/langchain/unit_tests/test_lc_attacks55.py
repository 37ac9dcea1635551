"""Adversarial pass attacks55, LangChain side (bench/README.md, "helper attacks55")."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_treehop import TreehopVectorStore
from treehop.errors import TreehopError

from lc_helpers import WordHashEmbeddings


@pytest.mark.parametrize("emptied", [False, True], ids=["new", "emptied"])
@pytest.mark.parametrize("query", [5, None, ["alpha"], "\x00", "   "], ids=repr)
def test_a_bad_query_is_refused_by_an_empty_store_too(query: Any, emptied: bool) -> None:
    """An empty store answered ``[]`` to any query (the early return for a scope nothing was
    added under came before the query's checks); a filled one raised a typed error."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    if emptied:
        store.add_texts(["alpha beta"], ids=["x"])
        store.delete(["x"])
    with pytest.raises(TreehopError):
        store.similarity_search(query, k=1)


@pytest.mark.parametrize("vector", [[float("nan")] * 4, [0.0] * 4, [], [[1.0, 2.0], [3.0, 4.0]]])
def test_a_bad_vector_is_refused_by_an_empty_store_too(vector: Any) -> None:
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    with pytest.raises(TreehopError):
        store.similarity_search_by_vector(vector, k=1)
