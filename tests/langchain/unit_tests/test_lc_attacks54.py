"""Adversarial pass attacks54, LangChain side (bench/README.md, "helper attacks54")."""

from __future__ import annotations

import pytest

from langchain_treehop import TreehopVectorStore
from treehop.errors import InvalidQueryError

from lc_helpers import WordHashEmbeddings


@pytest.mark.parametrize("value", ["yes", "false", 1, 0, [True]])
def test_include_directories_must_be_a_bool(value: object) -> None:
    """``include_directories`` went through ``bool()``: ``"false"`` (a configuration's
    string) turned directories *on*. Now anything but True / False (or None: the default)
    is refused, as the core's boolean options are."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    store.add_texts(["alpha beta", "gamma delta"], [{"source": "a.md"}, {"source": "b.md"}])
    with pytest.raises(InvalidQueryError):
        store.similarity_search("alpha", k=2, include_directories=value)
    with pytest.raises(InvalidQueryError):
        store.as_retriever(search_kwargs={"k": 2, "include_directories": value}).invoke("alpha")
    assert store.similarity_search("alpha", k=1, include_directories=False)
    assert store.similarity_search("alpha", k=1, include_directories=None)  # (the default)
    assert store.similarity_search("alpha", k=3, include_directories=True)
