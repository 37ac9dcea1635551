"""What a LlamaIndex user expects of ``similarity_top_k=0`` and a mode given as a string
(helper usage58), checked against LlamaIndex's own ``SimpleVectorStore``.

- ``similarity_top_k=0`` is "no limit" there (``get_top_k_embeddings`` keeps the heap only
  ``if similarity_top_k``; its MMR takes ``similarity_top_k or len(embeddings)``), so
  ``VectorStoreIndex.as_retriever(similarity_top_k=0)`` returns every node; ours refused it.
  Now: as many as one search returns (``MAX_LIMIT``).
- ``VectorStoreQueryMode`` is a ``str`` enum and LlamaIndex's stores compare with ``==``, so
  ``VectorStoreQuery(mode="mmr")`` works there; ours refused any plain string. Now a string
  naming a mode is that mode; an unknown one is still refused.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.vector_stores import SimpleVectorStore
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "roll back a deployment with helm rollback",
    "blue green deployment switches traffic",
    "deployment of the api keys rotation",
    "pizza on fridays in the cafeteria",
    "tokens validated against the jwks endpoint",
]


@pytest.fixture
def indexes() -> Iterator[tuple[VectorStoreIndex, VectorStoreIndex]]:
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    store = TreehopVectorStore(client=client)
    docs = [Document(text=t, id_=f"d{i}") for i, t in enumerate(TEXTS)]
    ours = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    simple = VectorStoreIndex.from_documents(docs, embed_model=store.embed_model)
    assert isinstance(simple.vector_store, SimpleVectorStore)
    yield ours, simple
    client.close()


def _ids(index: VectorStoreIndex, query: str, **kwargs: object) -> list[str]:
    return [n.node.ref_doc_id or "" for n in index.as_retriever(**kwargs).retrieve(query)]


def test_similarity_top_k_zero_is_no_limit_as_in_simple_vector_store(
    indexes: tuple[VectorStoreIndex, VectorStoreIndex],
) -> None:
    ours, simple = indexes
    every = {f"d{i}" for i in range(len(TEXTS))}
    for index in (simple, ours):
        got = _ids(index, "deployment rollback", similarity_top_k=0)
        assert set(got) == every and len(got) == len(TEXTS)
        mmr = _ids(index, "deployment", similarity_top_k=0, vector_store_query_mode="mmr")
        assert set(mmr) == every
    # best first, as with the limit spelled out
    assert _ids(ours, "deployment rollback", similarity_top_k=0)[:2] == _ids(
        ours, "deployment rollback", similarity_top_k=2
    )
    store = ours.vector_store
    for bad in (-1, True, 1.5, "0"):
        with pytest.raises(InvalidQueryError, match="similarity_top_k"):
            store.query(VectorStoreQuery(query_str="deployment", similarity_top_k=bad))  # type: ignore[arg-type]


def test_a_mode_given_as_a_string_is_that_mode(
    indexes: tuple[VectorStoreIndex, VectorStoreIndex],
) -> None:
    ours, simple = indexes
    emb = ours.vector_store.embed_model.get_query_embedding("deployment")  # type: ignore[attr-defined]
    for mode in ("mmr", "default"):
        results = []
        for store in (simple.vector_store, ours.vector_store):
            q = VectorStoreQuery(query_embedding=emb, similarity_top_k=3, mode=mode)  # type: ignore[arg-type]
            as_enum = VectorStoreQuery(
                query_embedding=emb, similarity_top_k=3, mode=VectorStoreQueryMode(mode)
            )
            got = store.query(q)
            assert got.ids == store.query(as_enum).ids, (mode, store)
            assert q.mode == mode and type(q.mode) is str  # the caller's query is not changed
            results.append(len(got.ids or []))
        assert results == [3, 3]
    q = VectorStoreQuery(query_str="deployment", similarity_top_k=2, mode="hybrid")  # type: ignore[arg-type]
    assert len(ours.vector_store.query(q).ids or []) == 2
    for bad in ("MMR", "bogus", "mmr "):
        with pytest.raises(ValueError, match="Invalid query mode"):  # LlamaIndex's own refusal
            simple.vector_store.query(
                VectorStoreQuery(query_embedding=emb, similarity_top_k=2, mode=bad)  # type: ignore[arg-type]
            )
        with pytest.raises(InvalidQueryError, match="mode must be a VectorStoreQueryMode"):
            ours.vector_store.query(
                VectorStoreQuery(query_str="deployment", similarity_top_k=2, mode=bad)  # type: ignore[arg-type]
            )
