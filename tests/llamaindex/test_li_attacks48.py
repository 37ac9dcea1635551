"""Helper attacks48: the LlamaIndex vector store's MMR checks its own arguments before any
work (a NaN ``mmr_threshold`` raised KeyError from LlamaIndex's MMR, a string TypeError;
a NaN, infinite or non-number ``mmr_prefetch_factor`` / ``mmr_prefetch_k`` ValueError or
OverflowError), and compares the candidates with the direction of a caller's vector at any
scale (1e300 per value overflowed its similarities)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from li_helpers import WordHashEmbedding, word_vector
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop.errors import InvalidQueryError

TEXTS = [
    "the cat sat on the mat",
    "dogs bark at night",
    "cats and dogs play",
    "a red fox jumps",
    "mat weaving guide",
]


@pytest.fixture
def store() -> TreehopVectorStore:
    emb = WordHashEmbedding()
    s = TreehopVectorStore(embed_model=emb, tagger=None)
    nodes = []
    for i, t in enumerate(TEXTS):
        n = TextNode(text=t, id_=f"n{i}")
        n.embedding = emb.get_text_embedding(t)
        nodes.append(n)
    s.add(nodes)
    return s


def _mmr(vector: list[float], **kwargs: Any) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_embedding=vector, similarity_top_k=3, mode=VectorStoreQueryMode.MMR, **kwargs
    )


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.5, 1.5, "x", True])
def test_a_bad_mmr_threshold_is_refused(store: TreehopVectorStore, bad: object) -> None:
    with pytest.raises(InvalidQueryError, match="mmr_threshold"):
        store.query(_mmr(word_vector("cat mat"), mmr_threshold=bad))


@pytest.mark.parametrize("name", ["mmr_prefetch_factor", "mmr_prefetch_k"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "x", -3, 0, True])
def test_a_bad_prefetch_argument_is_refused(
    store: TreehopVectorStore, name: str, bad: object
) -> None:
    with pytest.raises(InvalidQueryError, match=name):
        store.query(_mmr(word_vector("cat mat")), **{name: bad})


def test_good_mmr_arguments_still_answer(store: TreehopVectorStore) -> None:
    qv = word_vector("cat mat")
    for kwargs in ({}, {"mmr_prefetch_factor": 2}, {"mmr_prefetch_factor": 1.5}):
        assert store.query(_mmr(qv, mmr_threshold=0.3), **kwargs).nodes
    assert store.query(_mmr(qv), mmr_prefetch_k=5).nodes
    assert store.query(_mmr(qv, mmr_threshold=0), mmr_prefetch_k=None).nodes


def test_mmr_takes_the_direction_of_a_vector_at_any_scale(store: TreehopVectorStore) -> None:
    qv = np.asarray(word_vector("cat mat"), dtype=np.float64)
    want = [n.text for n in store.query(_mmr(list(qv))).nodes]
    assert want
    for scale in (1e300, 1e-50):
        assert [n.text for n in store.query(_mmr(list(qv * scale))).nodes] == want
