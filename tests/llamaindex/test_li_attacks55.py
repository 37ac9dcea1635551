"""Adversarial pass attacks55, LlamaIndex side (bench/README.md, "helper attacks55")."""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop.errors import TreehopError


@pytest.mark.parametrize(
    "embedding", [[float("nan")] * 4, [0.0] * 4, [[1.0, 2.0], [3.0, 4.0]]], ids=repr
)
def test_a_bad_query_embedding_is_refused_by_an_empty_store_too(embedding: Any) -> None:
    """An empty store answered an empty result to a vector a filled one refuses."""
    store = TreehopVectorStore(embed_model=WordHashEmbedding(), tagger=None)
    with pytest.raises(TreehopError):
        store.query(VectorStoreQuery(query_embedding=embedding, similarity_top_k=1))
