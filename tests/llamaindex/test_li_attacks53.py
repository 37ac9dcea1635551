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
