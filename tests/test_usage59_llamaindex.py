"""What a LlamaIndex user's first scripts expect, round three (helper usage59), each checked
against LlamaIndex's own ``SimpleVectorStore`` where it has an answer.

- ``store.embed_model`` (treehop's embedder as a ``TreehopEmbedding``, the model the docs give
  the index) handed back when the index is reopened -- ``TreehopVectorStore(path=...,
  embed_model=store.embed_model)``, ``TreehopVectorStore(client, embed_model=...)``,
  ``TreehopRetriever.from_defaults(path=..., embed_model=...)`` -- was wrapped again as a
  ``LlamaIndexEmbedder`` named ``llamaindex:TreehopEmbedding:<name>``: the index built with it
  refused it (``EmbeddingError``: "would mix vector spaces"), a client given with it was
  refused too. It is now the treehop embedder it wraps.
"""

from __future__ import annotations

from pathlib import Path

from llama_index.core import Document, StorageContext, VectorStoreIndex

from llama_index.retrievers.treehop import TreehopRetriever
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
