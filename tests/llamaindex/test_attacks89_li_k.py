"""LlamaIndex's vector store refuses a negative ``similarity_top_k`` saying what it takes
(helper attacks89): 0 and ``None`` are "as many as one search returns" there, so "between 1
and 1000" was wrong twice. Fails on 63c22bec unless it says it is a control."""

from __future__ import annotations

import pytest
from li_helpers import WordHashEmbedding, word_vector
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop.errors import InvalidQueryError


def _store() -> TreehopVectorStore:
    store = TreehopVectorStore(embed_model=WordHashEmbedding(), tagger=None)
    store.add(
        [TextNode(text="release note one", id_="n1", embedding=word_vector("release note one"))]
    )
    return store


def _query(k: object) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_embedding=word_vector("release"), query_str="release", similarity_top_k=k
    )


def test_a_negative_top_k_is_told_what_it_may_be() -> None:
    store = _store()
    try:
        with pytest.raises(InvalidQueryError) as err:
            store.query(_query(-1))
    finally:
        store.close()
    message = str(err.value)
    assert message.startswith(
        "similarity_top_k must be 0 (as many as one search returns; None too) or a positive "
        "integer: 1 to 1000"
    ), message


def test_zero_and_none_still_answer_control() -> None:
    # control (passes on 63c22bec)
    store = _store()
    try:
        assert store.query(_query(0)).ids == ["n1"]
        assert store.query(_query(None)).ids == ["n1"]
    finally:
        store.close()
