"""Adversarial pass attacks56, LangChain side (bench/README.md, "helper attacks56")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_treehop import TreehopVectorStore
from langchain_treehop.embeddings import LangChainEmbedder
from langchain_treehop.store import TreehopStore
from langchain_treehop.tools import create_treehop_tools
from treehop import Treehop
from treehop.errors import InvalidQueryError, TreehopError

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0)
    yield c
    c.close()


@pytest.mark.parametrize(
    "include", [5, 1.5, pytest.param(object(), id="object()"), [["find"]], [None], "find"], ids=repr
)
def test_tools_include_that_is_not_a_list_of_names_is_typed(client: Any, include: Any) -> None:
    with pytest.raises(InvalidQueryError, match="include"):
        create_treehop_tools(client, include=include)


def test_tools_include_as_a_tuple_still_works(client: Any) -> None:
    tools = create_treehop_tools(client, include=("find", "read"))
    assert [t.name for t in tools] == ["treehop_find", "treehop_read"]


@pytest.mark.parametrize(
    "dimension", ["3", 1.5, [3], pytest.param(object(), id="object()")], ids=repr
)
def test_langchain_embedder_dimension_that_is_not_an_int_is_typed(dimension: Any) -> None:
    with pytest.raises(InvalidQueryError, match="dimension"):
        LangChainEmbedder(WordHashEmbeddings(), dimension=dimension)


@pytest.mark.parametrize(
    "fields", ["text", b"text", 5, pytest.param(object(), id="object()")], ids=repr
)
def test_store_index_fields_that_are_not_a_list_are_typed(client: Any, fields: Any) -> None:
    """``index_fields="text"`` was read as the fields ``t``, ``e``, ``x``, ``t`` (nothing of
    a value was embedded), ``5`` raised ``TypeError``."""
    with pytest.raises(InvalidQueryError, match="index_fields"):
        TreehopStore(client, index_fields=fields)


def test_store_index_fields_as_a_tuple_still_work(client: Any) -> None:
    store = TreehopStore(client, index_fields=("text",))
    store.put(("ns",), "k", {"text": "alpha beta", "other": "zzz"})
    assert [i.key for i in store.search(("ns",), query="alpha")] == ["k"]


def test_vector_store_path_longer_than_a_file_name_is_typed() -> None:
    with pytest.raises(TreehopError):
        TreehopVectorStore(WordHashEmbeddings(), path="x" * 300)
