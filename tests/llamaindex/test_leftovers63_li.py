"""Stop 62's open item 2 for the LlamaIndex packages (bench/README.md, "Leftovers, stop 63
(helper leftovers63)"): an error built from the caller's names lists the first few, then
how many more. Each test fails on f7f9233 (0.7-1 MB messages)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from llama_index.retrievers.treehop import TreehopQueryEngine, TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

MANY = 20_000
UNKNOWN = {f"unknown_keyword_argument_{i:05d}": i for i in range(MANY)}


def _client() -> Treehop:
    th = Treehop(embedder=BagOfWordsEmbedder())
    th.add_resource("Cats purr.", name="a.md")
    return th


CALLS: dict[str, Callable[[Treehop], object]] = {
    "TreehopRetriever()": lambda th: TreehopRetriever(th, **UNKNOWN),
    "TreehopVectorStore()": lambda th: TreehopVectorStore(client=th, **UNKNOWN),
    "delete": lambda th: TreehopVectorStore(client=th).delete("x", **UNKNOWN),
    "add": lambda th: TreehopVectorStore(client=th).add([], **UNKNOWN),
    "from_args": lambda th: TreehopQueryEngine.from_args(TreehopRetriever(th), **UNKNOWN),
}


@pytest.mark.parametrize("name", CALLS)
def test_twenty_thousand_unknown_names_give_a_bounded_message(name: str) -> None:
    with pytest.raises(TypeError) as info:  # (UnknownArgumentError is a TypeError too)
        CALLS[name](_client())
    text = str(info.value)
    assert len(text) < 2_000, len(text)
    assert "and 19995 more" in text
    assert "unknown_keyword_argument_19999" not in text
