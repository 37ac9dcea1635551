"""MMR with ``fetch_k`` below ``k`` returns what LangChain's own stores return (helper
leftovers72b).

``InMemoryVectorStore`` (and Chroma, FAISS) fetch ``fetch_k`` candidates and pick up to
``k`` of them, so ``k=5, fetch_k=2`` answers 2 documents; treehop's store fetched ``k`` and
answered 5. Checked against ``InMemoryVectorStore`` itself over the same texts and
embeddings, for every ``k`` / ``fetch_k`` pair; the retriever's ``search_type="mmr"`` alike.
"""

from __future__ import annotations

import itertools

from langchain_core.vectorstores import InMemoryVectorStore

from langchain_treehop import TreehopRetriever, TreehopVectorStore

from lc_helpers import WordHashEmbeddings

TEXTS = [
    "rotate the signing keys every ninety days",
    "the vault host stores the signing keys",
    "key rotation runs from cron nightly",
    "deploy the service with the rollback plan",
    "the oncall engineer pages the vault team",
    "tokens expire after one hour of rotation",
]
Q = "signing keys rotation vault"


def test_store_mmr_returns_as_many_as_in_memory_for_every_k_and_fetch_k() -> None:
    emb = WordHashEmbeddings()
    ours = TreehopVectorStore(embedding=emb)
    ours.add_texts(TEXTS)
    theirs = InMemoryVectorStore(emb)
    theirs.add_texts(TEXTS)
    for k, fetch_k in itertools.product(range(1, 8), range(1, 8)):
        got = ours.max_marginal_relevance_search(Q, k=k, fetch_k=fetch_k)
        want = theirs.max_marginal_relevance_search(Q, k=k, fetch_k=fetch_k)
        assert len(got) == len(want) == min(k, fetch_k, len(TEXTS)), (k, fetch_k)
        assert len({d.id for d in got}) == len(got)
    # as_retriever(search_type="mmr") passes fetch_k through the same search
    r = ours.as_retriever(search_type="mmr", search_kwargs={"k": 5, "fetch_k": 2})
    assert len(r.invoke(Q)) == 2


async def test_store_async_mmr_the_same() -> None:
    ours = TreehopVectorStore(embedding=WordHashEmbeddings())
    await ours.aadd_texts(TEXTS)
    assert len(await ours.amax_marginal_relevance_search(Q, k=5, fetch_k=2)) == 2
    vec = WordHashEmbeddings().embed_query(Q)
    got = await ours.amax_marginal_relevance_search_by_vector(vec, k=4, fetch_k=3)
    assert len(got) == 3


def test_retriever_mmr_honours_a_fetch_k_below_k_and_defaults_to_k() -> None:
    store = TreehopVectorStore(embedding=WordHashEmbeddings())
    store.add_texts(TEXTS)
    client = store.client
    given = TreehopRetriever(client=client, search_type="mmr", k=5, fetch_k=2)
    assert len(given.invoke(Q)) == 2
    # control: with no fetch_k the candidates are at least k
    default = TreehopRetriever(client=client, search_type="mmr", k=5)
    assert len(default.invoke(Q)) == 5
