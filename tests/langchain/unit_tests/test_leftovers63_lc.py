"""Stop 62's open item 2 for the LangChain package (bench/README.md, "Leftovers, stop 63
(helper leftovers63)"): an error built from the caller's names lists the first few, then
how many more. Each test fails on f7f9233 (0.2-1.7 MB messages)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import ValidationError

from langchain_treehop import TreehopRetriever, TreehopVectorStore, create_treehop_tools
from langchain_treehop.store import TreehopStore
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

MANY = 20_000
UNKNOWN = {f"unknown_keyword_argument_{i:05d}": i for i in range(MANY)}


def _client() -> Treehop:
    th = Treehop(embedder=BagOfWordsEmbedder())
    th.add_resource("Cats purr.", name="a.md")
    return th


CALLS: dict[str, Callable[[Treehop], object]] = {
    "TreehopRetriever()": lambda th: TreehopRetriever(client=th, **UNKNOWN),
    "invoke": lambda th: TreehopRetriever(client=th).invoke("cats", **UNKNOWN),
    "TreehopVectorStore()": lambda th: TreehopVectorStore(client=th, **UNKNOWN),
    "similarity_search": lambda th: TreehopVectorStore(client=th).similarity_search(
        "cats", **UNKNOWN
    ),
    "delete": lambda th: TreehopVectorStore(client=th).delete(["x"], **UNKNOWN),
    "add_texts": lambda th: TreehopVectorStore(client=th).add_texts(["x"], **UNKNOWN),
    "TreehopStore(index=)": lambda th: TreehopStore(th, index=dict(UNKNOWN)),
}


@pytest.mark.parametrize("name", CALLS)
def test_twenty_thousand_unknown_names_give_a_bounded_message(name: str) -> None:
    with pytest.raises((InvalidQueryError, ValidationError)) as info:
        CALLS[name](_client())
    text = str(info.value)
    assert len(text) < 2_000, len(text)
    assert "19995 more" in text or "19996 more" in text
    assert "unknown_keyword_argument_19999" not in text


def test_the_retrievers_validation_error_keeps_the_hint_and_the_other_errors() -> None:
    """The bounded constructor error is still pydantic's, with a field's own error and
    the hint for a name meant (``top_k``) among the few shown."""
    with pytest.raises(ValidationError) as info:
        TreehopRetriever(client=_client(), k="x", top_k=3, **UNKNOWN)
    errors: list[Any] = info.value.errors()
    assert errors[0]["loc"] == ("k",)
    assert any("did you mean 'k'?" in e["msg"] for e in errors)
    assert "and 19996 more unknown arguments" in errors[-1]["msg"]
    assert len(errors) == 7


def test_a_tools_include_list_is_bounded() -> None:
    with pytest.raises(InvalidQueryError) as info:
        create_treehop_tools(_client(), include=[f"kind{i}" for i in range(MANY)])
    assert len(str(info.value)) < 1_000 and "and 19995 more" in str(info.value)
