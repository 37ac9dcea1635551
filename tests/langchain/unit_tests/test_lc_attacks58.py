"""Adversarial pass attacks58: the LangChain integration.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks58)").
"""

from __future__ import annotations

from typing import Any

import pytest

from langchain_treehop import TreehopVectorStore
from treehop.errors import InvalidFilterError

from lc_helpers import WordHashEmbeddings

_BIG = list(range(200_000))
_KEY = "k" * 500_000


@pytest.mark.parametrize(
    "spec",
    [
        {"a": _BIG},
        {"a": {"$in": "x" * 500_000}},
        {"a": {"$gt": _BIG}},
        {_KEY: {"$eq": [1]}},
        {"a": {"$bad" + "x" * 500_000: 1}},
        {"$x" * 200_000: 1},
        {_KEY: 1},
    ],
    ids=["list-for-eq", "string-for-in", "list-for-gt", "long-key", "long-op", "long-$", "field"],
)
def test_a_filter_error_quotes_the_callers_filter_bounded(spec: dict[str, Any]) -> None:
    """The translation and the field check quoted the caller's value, key or operator whole:
    a filter holding a list of a million numbers made a 7.9 MB error message (into logs and
    an agent's context)."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    store.add_texts(["hello world", "oauth tokens"], metadatas=[{"a": 1}, {"a": 2}])
    with pytest.raises(InvalidFilterError) as err:
        store.similarity_search("hello", k=1, filter=spec)
    assert len(str(err.value)) < 600, len(str(err.value))
