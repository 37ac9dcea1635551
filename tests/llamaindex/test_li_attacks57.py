"""Adversarial pass attacks57, LlamaIndex side (bench/README.md, "Adversarial pass (helper
attacks57)"): each test was written failing first."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.mark.parametrize(
    "blob",
    [
        "[" * 20_000,
        '{"excluded_llm_metadata_keys": 5}',
        '{"excluded_embed_metadata_keys": {"a": 1}}',
        '{"excluded_llm_metadata_keys": "abc"}',
        "9" * 5000,
    ],
    ids=["deep", "int", "dict", "string", "5000-digits"],
)
def test_a_documents_node_content_metadata_cannot_break_retrieval(
    tmp_path: Path, blob: str
) -> None:
    """The retriever reads a hit's ``_node_content`` metadata for the exclusions LlamaIndex
    kept there; any document's metadata may carry that key (``add_resource(...,
    metadata=...)``, a record from another store): a blob nested past the recursion limit
    raised ``RecursionError``, a key list that is a number ``TypeError``, out of every
    ``retrieve`` whose hits included it; a string was read as its characters."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        c.add_resource(
            "alpha beta gamma",
            target_uri="viking://resources/a.md",
            metadata={"_node_content": blob},
        )
        nodes = TreehopRetriever(c, similarity_top_k=3).retrieve("alpha beta gamma")
    assert len(nodes) == 1
    node = nodes[0].node
    assert "a" not in node.excluded_llm_metadata_keys  # (not a string's characters)
    assert "a" not in node.excluded_embed_metadata_keys  # (not a dict's keys)


@pytest.mark.parametrize(
    "blob", ["not json", "[" * 20_000, '{"text": 5}'], ids=["text", "deep", "wrong-type"]
)
def test_a_node_content_the_vector_store_did_not_write_cannot_break_a_query(
    tmp_path: Path, blob: str
) -> None:
    """The vector store rebuilds a hit carrying ``_node_content`` with LlamaIndex's
    ``metadata_dict_to_node``: any other document under its base URI with that metadata key
    made every query that hit it raise ``JSONDecodeError`` / ``RecursionError`` /
    pydantic's ``ValidationError``. Such a hit is read as a tree node."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        vs = TreehopVectorStore(client=c)
        c.add_resource(
            "alpha beta gamma",
            target_uri=f"{vs.base_uri}/a.md",
            metadata={"_node_content": blob, "team": "x"},
        )
        res = vs.query(VectorStoreQuery(query_str="alpha beta gamma", similarity_top_k=3))
    assert res.nodes is not None and len(res.nodes) == 1
    assert res.nodes[0].get_content() == "alpha beta gamma"
    assert res.nodes[0].metadata.get("team") == "x"
