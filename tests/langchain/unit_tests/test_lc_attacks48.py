"""Helper attacks48: the LangChain vector store's MMR with a caller's vector far from unit
scale. The search takes such a vector's direction (1e300 or 1e-50 per value); MMR then
compared the candidates with the raw vector, whose float32 cast is infinite or zero, and
LangChain's ``maximal_marginal_relevance`` raised ValueError (NaN similarities)."""

from __future__ import annotations

import numpy as np
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore

from lc_helpers import WordHashEmbeddings, word_vector

TEXTS = [
    "the cat sat on the mat",
    "dogs bark at night",
    "cats and dogs play",
    "a red fox jumps",
    "mat weaving guide",
]


def test_mmr_by_vector_takes_the_direction_of_a_vector_at_any_scale() -> None:
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    store.add_documents(
        [Document(page_content=t, metadata={"source": f"d{i}.md"}) for i, t in enumerate(TEXTS)]
    )
    qv = np.asarray(word_vector("cat mat"), dtype=np.float64)
    want = [d.page_content for d in store.max_marginal_relevance_search_by_vector(list(qv), k=3)]
    assert want
    for scale in (1e300, 1e-50, 1e30):
        got = store.max_marginal_relevance_search_by_vector(list(qv * scale), k=3, fetch_k=5)
        assert [d.page_content for d in got] == want[: len(got)] and len(got) == len(want)
