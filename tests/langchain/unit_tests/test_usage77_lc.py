"""An MMR argument in a similarity search names MMR, not itself (helper usage77).

``store.as_retriever(search_kwargs={"k": 4, "fetch_k": 20})`` (a tutorial's MMR line kept
when ``search_type`` went back to ``"similarity"``) and ``similarity_search(q, fetch_k=20)``
were refused with ``'fetch_k': did you mean 'fetch_k'?``: the name given offered as the fix.
The refusal stays (the project's decision: a search meant as MMR never runs as a plain one
in silence) and now says that ``fetch_k`` / ``lambda_mult`` are MMR's and where they go.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder

DOCS = [
    Document("Keys rotate every 90 days.", id="keys", metadata={"source": "faq.md"}),
    Document("Keys are stored in the vault.", id="vault", metadata={"source": "faq.md"}),
    Document("Deploys happen on Fridays.", id="deploys", metadata={"source": "ops.md"}),
]
KW = {"k": 2, "fetch_k": 3, "lambda_mult": 0.5}

CALLS: dict[str, Callable[[TreehopVectorStore], Any]] = {
    "similarity_search": lambda s: s.similarity_search("keys", k=2, fetch_k=3),
    "similarity_search_with_score": lambda s: s.similarity_search_with_score(
        "keys", k=2, lambda_mult=0.5
    ),
    "relevance_scores": lambda s: s.similarity_search_with_relevance_scores("keys", k=2, fetch_k=3),
    "as_retriever": lambda s: s.as_retriever(search_kwargs=KW).invoke("keys"),
    "as_retriever threshold": lambda s: s.as_retriever(
        search_type="similarity_score_threshold",
        search_kwargs={**KW, "score_threshold": 0.1},
    ).invoke("keys"),
    "asimilarity_search": lambda s: asyncio.run(s.asimilarity_search("keys", k=2, fetch_k=3)),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_mmr_argument_in_a_similarity_search_names_mmr(call: str) -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
        store.add_documents([d.model_copy() for d in DOCS])
        with pytest.raises(UnknownArgumentError) as exc:
            CALLS[call](store)
        msg = str(exc.value)
        assert "did you mean 'fetch_k'" not in msg and "did you mean 'lambda_mult'" not in msg
        assert "MMR's" in msg and "search_type='mmr'" in msg, msg
        # ... and the way it names answers: the same search_kwargs under search_type="mmr"
        got = store.as_retriever(search_type="mmr", search_kwargs=KW).invoke("keys")
        assert len(got) == 2 and {d.id for d in got} <= {"keys", "vault", "deploys"}


def test_a_misspelt_name_still_gets_its_did_you_mean() -> None:
    """The control: a typo of an MMR argument is a typo (the hint as before)."""
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
        store.add_documents([d.model_copy() for d in DOCS])
        with pytest.raises(UnknownArgumentError, match="'fetchk': did you mean 'fetch_k'"):
            store.similarity_search("keys", k=2, fetchk=3)
        with pytest.raises(UnknownArgumentError, match="'filtr': did you mean 'filter'"):
            store.similarity_search("keys", k=2, filtr={})


def test_an_mmr_argument_and_a_typo_each_get_their_hint() -> None:
    with Treehop(None, embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client=client, base_uri="viking://resources/lc")
        store.add_documents([d.model_copy() for d in DOCS])
        with pytest.raises(UnknownArgumentError) as exc:
            store.similarity_search("keys", k=2, fetch_k=3, filtr={})
        assert "'filtr': did you mean 'filter'" in str(exc.value)
        assert "fetch_k: MMR's" in str(exc.value)


def test_the_docs_say_fetch_k_is_mmrs() -> None:
    from pathlib import Path

    doc = (Path(__file__).parents[3] / "docs" / "langchain.md").read_text()
    assert "refused, saying they are MMR's and where they go" in doc
