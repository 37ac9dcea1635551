"""Adversarial pass attacks53, LlamaIndex side (bench/README.md, "helper attacks53")."""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop.errors import TreehopError


@pytest.mark.parametrize("ids", [[["a"]], [{"a": 1}], 5, "n1"], ids=["list", "dict", "int", "str"])
@pytest.mark.parametrize("method", ["get_nodes", "delete_nodes"])
def test_node_ids_beside_filters_are_checked(ids: Any, method: str) -> None:
    """With filters, node_ids went to set(): unhashable ids escaped TypeError, a string was
    read as its characters (the by-id path without filters refused both)."""
    emb = WordHashEmbedding()
    store = TreehopVectorStore(embed_model=emb, tagger=None)
    store.add(
        [
            TextNode(
                id_=f"n{i}",
                text=f"alpha beta {i}",
                metadata={"k": i},
                embedding=emb.get_text_embedding(f"alpha beta {i}"),
            )
            for i in range(3)
        ]
    )
    filters = MetadataFilters(filters=[MetadataFilter(key="k", value=1)])
    with pytest.raises(TreehopError):
        getattr(store, method)(node_ids=ids, filters=filters)
    assert len(store.get_nodes(node_ids=["n0", "n1", "n2"])) == 3


@pytest.mark.parametrize("depth", [40, 3_000])
def test_deeply_nested_metadata_filters_are_a_typed_error(depth: int) -> None:
    """MetadataFilters nested 900+ deep escaped RecursionError from the translation (its
    helpers recurse); nested AND groups are flattened, so the core never saw the depth."""
    from llama_index.retrievers.treehop.filters import to_treehop_filters

    spec = MetadataFilters(filters=[MetadataFilter(key="a", value=1)])
    for _ in range(depth):
        spec = MetadataFilters(filters=[spec])
    with pytest.raises(TreehopError, match="deeper"):
        to_treehop_filters(spec)
