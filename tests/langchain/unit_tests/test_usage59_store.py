"""LangGraph's ``InMemoryStore`` refuses a namespace label that is not a string with its
``InvalidNamespaceError``; ``TreehopStore`` raised a plain ``InvalidQueryError`` there, so code
catching LangGraph's error (as for every other namespace it refuses) missed it (helper
usage59). Now ``InvalidStoreNamespaceError``, both at once, before anything is written."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.store.base import InvalidNamespaceError
from langgraph.store.memory import InMemoryStore

from langchain_treehop import InvalidStoreNamespaceError, TreehopStore
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.mark.parametrize("label", [5, None, 1.5, b"bytes", ("nested",)])
def test_a_label_that_is_not_a_string_is_langgraphs_namespace_error(label: object) -> None:
    reference = InMemoryStore()
    with pytest.raises(InvalidNamespaceError):
        reference.put(("users", label), "k", {"text": "x"})  # type: ignore[arg-type]
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    store = TreehopStore(client)
    ns = ("users", label)
    calls = [
        lambda: store.put(ns, "k", {"text": "x"}),  # type: ignore[arg-type]
        lambda: store.get(ns, "k"),  # type: ignore[arg-type]
        lambda: store.delete(ns, "k"),  # type: ignore[arg-type]
        lambda: asyncio.run(store.aput(ns, "k", {"text": "x"})),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(InvalidNamespaceError) as info:
            call()
        assert isinstance(info.value, InvalidStoreNamespaceError)
        assert isinstance(info.value, InvalidQueryError)
        assert "position 1" in str(info.value)
    assert store.list_namespaces() == []
