"""``checked_k``'s refusal of a negative ``k`` says what is allowed (helper attacks89,
bench/README.md "(helper attacks89)"; attacks88's open item).

``k=-1`` was told "k must be between 1 and 1000", while ``k=0`` answers ``[]`` (LangChain's
``InMemoryVectorStore`` does) and ``k=10**9`` answers a small store whole: both documented,
both contradicting the message. Fails on 63c22bec unless it says it is a control.
"""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore as LangChainStore
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def store() -> LangChainStore:
    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    s = LangChainStore(client)
    s.add_documents([Document(page_content="release note one", id="n1")])
    yield s
    client.close()


@pytest.mark.parametrize("k", [-1, -(2**70), np.int64(-3)])
@pytest.mark.parametrize("how", ["search", "scores", "mmr"])
def test_a_negative_k_is_told_what_k_may_be(store: LangChainStore, k: object, how: str) -> None:
    call = {
        "search": lambda: store.similarity_search("release", k=k),
        "scores": lambda: store.similarity_search_with_score("release", k=k),
        "mmr": lambda: store.max_marginal_relevance_search("release", k=k),
    }[how]
    with pytest.raises(InvalidQueryError) as err:
        call()
    message = str(err.value)
    assert "k must be 0 (none) or a positive integer: 1 to 1000" in message, message
    assert "or more on a store of at most 1000 passages (all of them)" in message, message


def test_zero_and_a_large_k_still_answer_control(store: LangChainStore) -> None:
    # control (passes on 63c22bec): what the message now names
    assert store.similarity_search("release", k=0) == []
    assert [d.id for d in store.similarity_search("release", k=10**9)] == ["n1"]
    with pytest.raises(InvalidQueryError, match="k must be an integer"):
        store.similarity_search("release", k="3")
