"""LlamaIndex ``TreehopRetriever(similarity_top_k=0)`` is "no limit", as
``VectorStoreIndex.as_retriever(similarity_top_k=0)`` over LlamaIndex's ``SimpleVectorStore``
(and over our vector store, usage58) (helper deadline59). It was refused."""

from __future__ import annotations

import pytest
from llama_index.core import Document, VectorStoreIndex
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.integration_kit import NO_FLOOR
from treehop.validation import MAX_LIMIT

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "roll back a deployment with helm rollback",
    "blue green deployment switches traffic",
    "deployment of the api keys rotation",
    "pizza on fridays in the cafeteria",
    "tokens validated against the jwks endpoint",
    "deployment freeze during the holidays",
    "the cafeteria menu changes weekly",
    "helm charts template kubernetes manifests",
    "rotation of on call duty every week",
    "jwks keys cached for an hour",
    "traffic shifting with weighted routes",
    "holiday calendar for the office",
    "canary deployment sends a little traffic first",
    "helm rollback restores the previous release",
    "deployment pipelines run on every merge",
    "traffic mirroring copies requests to a shadow",
    "helm values files per environment",
    "deployment approvals from two reviewers",
]
QUERY = "deployment helm traffic"


@pytest.fixture
def client() -> Treehop:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    return th


def test_the_reference_reads_zero_as_no_limit(client: Treehop) -> None:
    embed_model = TreehopVectorStore(client=client).embed_model
    docs = [Document(text=t, id_=f"d{i}") for i, t in enumerate(TEXTS)]
    simple = VectorStoreIndex.from_documents(docs, embed_model=embed_model)
    assert isinstance(simple.vector_store, SimpleVectorStore)
    assert len(simple.as_retriever(similarity_top_k=0).retrieve(QUERY)) == len(TEXTS)


def test_retriever_similarity_top_k_zero_is_no_limit(client: Treehop) -> None:
    zero = TreehopRetriever(client, similarity_top_k=0)
    assert zero.similarity_top_k == 0 and "similarity_top_k=0" in repr(zero)
    got = [n.node.node_id for n in zero.retrieve(QUERY)]
    # every document (usage60: without the client's score floor, all 18 as the reference
    # and our vector store answer it; one search's answer under the floor was 16), best first
    every = [m.uri for m in client.find(QUERY, limit=MAX_LIMIT, score_threshold=NO_FLOOR).resources]
    assert got == every and len(got) == len(TEXTS)
    two = TreehopRetriever(client, similarity_top_k=2)
    assert got[:2] == [n.node.node_id for n in two.retrieve(QUERY)]
    # settable later, as any value
    two.similarity_top_k = 0
    assert [n.node.node_id for n in two.retrieve(QUERY)] == every


async def test_retriever_similarity_top_k_zero_async(client: Treehop) -> None:
    zero = TreehopRetriever(client, similarity_top_k=0)
    every = [m.uri for m in client.find(QUERY, limit=MAX_LIMIT, score_threshold=NO_FLOOR).resources]
    assert [n.node.node_id for n in await zero.aretrieve(QUERY)] == every


@pytest.mark.parametrize("bad", [-1, True, False, 1.5, 0.0, "0"])
def test_retriever_similarity_top_k_refuses_what_is_not_a_count(
    client: Treehop, bad: object
) -> None:
    with pytest.raises(InvalidQueryError, match="similarity_top_k"):
        TreehopRetriever(client, similarity_top_k=bad)  # type: ignore[arg-type]
    r = TreehopRetriever(client)
    with pytest.raises(InvalidQueryError, match="similarity_top_k"):
        r.similarity_top_k = bad  # type: ignore[assignment]
    assert r.similarity_top_k == 10
