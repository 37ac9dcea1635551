"""What a LlamaIndex user's first scripts expect (helper usage57).

- ``index.as_retriever(vector_store_query_mode="mmr", vector_store_kwargs={"mmr_threshold":
  0.5})`` is LlamaIndex's documented way to set the MMR trade-off (its retriever never sets
  ``VectorStoreQuery.mmr_threshold``); the treehop store refused the keyword
  (``InvalidQueryError: query: unknown argument(s) ['mmr_threshold']``).
- ``TreehopRetriever.from_defaults(path="./indx")`` (a typo) read an empty index forever; it
  now refuses a path holding no saved index unless ``documents=`` are given to build it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError, NotFoundError

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "roll back a deployment with helm rollback",
    "blue green deployment switches traffic",
    "deployment of the api keys rotation",
    "pizza on fridays in the cafeteria",
    "tokens validated against the jwks endpoint",
]


def _docs() -> list[Document]:
    return [Document(text=t, id_=f"d{i}") for i, t in enumerate(TEXTS)]


def _mmr(index: VectorStoreIndex, **kwargs: object) -> list[str]:
    retriever = index.as_retriever(
        vector_store_query_mode="mmr", similarity_top_k=3, vector_store_kwargs=kwargs
    )
    return [n.node.ref_doc_id or "" for n in retriever.retrieve("deployment")]


def test_mmr_threshold_through_vector_store_kwargs() -> None:
    store = TreehopVectorStore(client=Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    ours = VectorStoreIndex.from_documents(
        _docs(),
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    simple = VectorStoreIndex.from_documents(_docs(), embed_model=store.embed_model)
    picks = {}
    for threshold in (0.2, 0.6, 1.0):  # (at 0 every first pick ties: order decides)
        picks[threshold] = _mmr(ours, mmr_threshold=threshold)
        # every candidate fits in the fetch, so the picks are LlamaIndex's own MMR's
        assert picks[threshold] == _mmr(simple, mmr_threshold=threshold), threshold
    assert picks[0.2] != picks[1.0]  # the keyword is read, not dropped
    with pytest.raises(InvalidQueryError, match="mmr_threshold"):
        _mmr(ours, mmr_threshold=1.5)
    # The query's own field still works when no keyword is given.
    vector = store.embed_model.get_query_embedding("deployment")
    query = VectorStoreQuery(
        query_embedding=vector, similarity_top_k=3, mode=VectorStoreQueryMode.MMR, mmr_threshold=0.2
    )
    assert [n.ref_doc_id for n in store.query(query).nodes] == picks[0.2]


def test_from_defaults_refuses_a_path_without_an_index(tmp_path: Path) -> None:
    typo = tmp_path / "indx"
    with pytest.raises(NotFoundError, match="holds no treehop index"):
        TreehopRetriever.from_defaults(path=typo, embed_model=BagOfWordsEmbedder())
    assert not typo.exists()
    built = TreehopRetriever.from_defaults(
        path=typo, embed_model=BagOfWordsEmbedder(), documents=_docs(), similarity_top_k=1
    )  # documents= builds the index there: allowed
    built.client.close()  # type: ignore[union-attr]
    again = TreehopRetriever.from_defaults(path=typo, embed_model=BagOfWordsEmbedder())
    assert again.retrieve("pizza on fridays")
    again.client.close()  # type: ignore[union-attr]
