"""What a LlamaIndex user's first scripts expect, round three (helper usage59), each checked
against LlamaIndex's own ``SimpleVectorStore`` where it has an answer.

- ``store.embed_model`` (treehop's embedder as a ``TreehopEmbedding``, the model the docs give
  the index) handed back when the index is reopened -- ``TreehopVectorStore(path=...,
  embed_model=store.embed_model)``, ``TreehopVectorStore(client, embed_model=...)``,
  ``TreehopRetriever.from_defaults(path=..., embed_model=...)`` -- was wrapped again as a
  ``LlamaIndexEmbedder`` named ``llamaindex:TreehopEmbedding:<name>``: the index built with it
  refused it (``EmbeddingError``: "would mix vector spaces"), a client given with it was
  refused too. It is now the treehop embedder it wraps.
- ``QueryFusionRetriever`` over ``TreehopRetriever``s fused by ``node.hash``, which covered
  the hit's score and query: a passage two retrievers found was never summed. The hit's node
  now hashes its text and stored metadata only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

from llama_index.retrievers.treehop import TreehopRetriever, add_documents
from llama_index.vector_stores.treehop import TreehopEmbedding, TreehopVectorStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "roll back a deployment with helm rollback",
    "blue green deployment switches traffic",
    "pizza on fridays in the cafeteria",
]


def _build(path: Path) -> tuple[TreehopEmbedding, list[str]]:
    store = TreehopVectorStore(client=Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None))
    index = VectorStoreIndex.from_documents(
        [Document(text=t, id_=f"d{i}") for i, t in enumerate(TEXTS)],
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    first = [n.node.ref_doc_id or "" for n in index.as_retriever().retrieve("helm rollback")]
    embed_model = store.embed_model
    assert isinstance(embed_model, TreehopEmbedding)
    store.client.close()
    return embed_model, first


def test_store_embed_model_reopens_the_index_it_built(tmp_path: Path) -> None:
    embed_model, first = _build(tmp_path / "idx")
    again = TreehopVectorStore(path=tmp_path / "idx", embed_model=embed_model)
    try:
        assert again.aclient.embedder is embed_model.embedder
        index = VectorStoreIndex.from_vector_store(again, embed_model=again.embed_model)
        got = [n.node.ref_doc_id or "" for n in index.as_retriever().retrieve("helm rollback")]
        assert got == first and got[0] == "d0"
        # a new document written through it lands in the same vector space
        index.insert(Document(text="rotate the api keys every quarter", id_="d9"))
        top = index.as_retriever(similarity_top_k=1).retrieve("rotate api keys")
        assert top[0].node.ref_doc_id == "d9"
    finally:
        again.close()


def test_store_embed_model_with_the_client_it_came_from(tmp_path: Path) -> None:
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    first = TreehopVectorStore(client)
    second = TreehopVectorStore(client, embed_model=first.embed_model)
    assert second.client is client and second.aclient.embedder is client.aio.embedder


def test_retriever_from_defaults_takes_the_stores_embed_model(tmp_path: Path) -> None:
    embed_model, _ = _build(tmp_path / "idx")
    retriever = TreehopRetriever.from_defaults(path=tmp_path / "idx", embed_model=embed_model)
    try:
        got = retriever.retrieve("helm rollback")
        assert got and "helm rollback" in got[0].node.get_content()
    finally:
        retriever.client.close()


FUSION_TEXTS = {
    "x": ("roll back a deployment with helm rollback", "ops"),
    "y": ("helm charts pin each deployment revision", "sec"),
    "z": ("pizza on fridays in the cafeteria", "misc"),
}


def _fused_ids(retrievers: list[Any], mode: str) -> list[str]:
    fusion = QueryFusionRetriever(
        retrievers, llm=MockLLM(), num_queries=1, mode=mode, use_async=False
    )
    return [n.node.ref_doc_id or "" for n in fusion.retrieve("helm rollback deployment")]


def test_query_fusion_sums_a_passages_scores_as_over_simple_vector_store() -> None:
    """``QueryFusionRetriever`` sums a node's scores over its retrievers by ``node.hash``
    (text + metadata). A hit's metadata holds its score and query, so the same passage from
    two retrievers hashed twice: RRF never summed it, and the passage both retrievers found
    (``y``) ranked below the one only the first found (``x``)."""
    docs = [
        Document(text=t, id_=i, metadata={"team": team}) for i, (t, team) in FUSION_TEXTS.items()
    ]
    not_ops = MetadataFilters(
        filters=[MetadataFilter(key="team", value="ops", operator=FilterOperator.NE)]
    )
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    add_documents(client, docs)
    ours = [
        TreehopRetriever(client, similarity_top_k=2),
        TreehopRetriever(client, similarity_top_k=2, filters=not_ops),
    ]
    assert [n.node.ref_doc_id for n in ours[0].retrieve("helm rollback deployment")] == ["x", "y"]
    assert ours[1].retrieve("helm rollback deployment")[0].node.ref_doc_id == "y"
    embed_model = TreehopVectorStore(client).embed_model
    simple = VectorStoreIndex.from_documents(docs, embed_model=embed_model)
    reference = [
        simple.as_retriever(similarity_top_k=2),
        simple.as_retriever(similarity_top_k=2, filters=not_ops),
    ]
    # (rank-based; the score-based modes depend on each store's score values)
    want = _fused_ids(reference, "reciprocal_rerank")
    got = _fused_ids(ours, "reciprocal_rerank")
    assert got[:2] == want[:2] == ["y", "x"], (got, want)
    # the hash still tells different passages apart, and serialised it is a TextNode
    nodes = ours[0].retrieve("helm rollback deployment")
    assert nodes[0].node.hash != nodes[1].node.hash
    assert type(nodes[0].node).class_name() == "TextNode"
    assert nodes[0].node.to_dict()["class_name"] == "TextNode"
