"""LlamaIndex ``get_nodes`` / ``delete_nodes`` (stop 73: over every node a query returns)
refuse a ``filters`` that is no ``MetadataFilters`` with the typed error, before anything is
read or deleted (helper attacks87).

``to_treehop_filters`` read ``filters.filters`` before it checked the type, so
``store.get_nodes(filters={"kind": "memo"})`` (a LangChain-style dict), ``filters=[]`` or
``filters=True`` raised ``AttributeError: 'dict' object has no attribute 'filters'``: no
``TreehopError``, where the check right below it named the expected type.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import MetadataFilters

from langchain_treehop import LangChainEmbedder
from llama_index.retrievers.treehop import to_treehop_filters
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from lc_helpers import WordHashEmbeddings

HOSTILE: list[Any] = [{"kind": "memo"}, {}, [], (), True, False, 0, "", "kind=memo", 1.5]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LlamaStore]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.md").write_text("# Vault\n\nKeys are stored in the vault host.\n")
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_resource(str(docs))
    s = LlamaStore(client=c)
    s.add([TextNode(text="The vault keys rotation memo.", metadata={"kind": "memo"})])
    yield s
    c.close()


@pytest.mark.parametrize("filters", HOSTILE, ids=repr)
async def test_a_filters_of_another_type_is_refused_and_nothing_is_deleted(
    store: LlamaStore, filters: Any
) -> None:
    before = sorted(n.node_id for n in store.get_nodes())
    assert len(before) == 2  # (the premise: the memo and the indexed file)
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        store.get_nodes(filters=filters)
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        await store.aget_nodes(node_ids=before, filters=filters)
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        store.delete_nodes(filters=filters)
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        await store.adelete_nodes(node_ids=before, filters=filters)
    assert sorted(n.node_id for n in store.get_nodes()) == before


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True),
        st.text(max_size=5),
        st.binary(max_size=5),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=3),
        st.tuples(st.integers()),
    )
)
def test_property_anything_but_metadata_filters_is_the_typed_error(value: Any) -> None:
    with pytest.raises(InvalidFilterError, match="MetadataFilters"):
        to_treehop_filters(value)


def test_control_none_and_empty_filters_are_no_filter() -> None:
    """Control (passes on the base too)."""
    assert to_treehop_filters(None).filter is None
    assert to_treehop_filters(MetadataFilters(filters=[])).filter is None
