"""What a LangChain user's first scripts expect, round three (helper usage59), each checked
against LangChain's own ``InMemoryVectorStore``.

- ``similarity_search(q, k=10_000)`` ("give me everything"; FAISS, Chroma and
  ``InMemoryVectorStore`` answer with all they hold) was ``InvalidQueryError: k must be between
  1 and 1000`` even on a store of four documents. A ``k`` above one search's limit now means
  every passage when the store holds no more than that limit; a larger store is still refused,
  naming its size (never cut short in silence). MMR's ``fetch_k`` is a candidate pool and is
  held to one search's limit. LlamaIndex's ``similarity_top_k`` likewise.
- ``similarity_search_with_score_by_vector`` (``InMemoryVectorStore``'s, FAISS's name) was an
  ``AttributeError``.
- The retrievers showed treehop's bookkeeping keys (``treehop_id``, ``treehop_order``) beside
  the metadata a loader stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import Document as LIDocument
from llama_index.core import StorageContext, VectorStoreIndex

from langchain_treehop import TreehopVectorStore
from llama_index.vector_stores.treehop import TreehopVectorStore as LITreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.validation import MAX_LIMIT

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
    "Deployments go out on Tuesdays after the freeze.",
]
METAS = [
    {"source": "ops/rollback.md"},
    {"source": "sec/keys.md"},
    {"source": "misc/food.md"},
    {"source": "ops/deploy.md"},
]
IDS = ["a", "b", "c", "d"]


@pytest.fixture
def stores() -> Iterator[tuple[InMemoryVectorStore, TreehopVectorStore]]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        ours = TreehopVectorStore(client=client)
        reference = InMemoryVectorStore(ours.embeddings)
        for s in (reference, ours):
            s.add_texts(TEXTS, metadatas=METAS, ids=IDS)
        yield reference, ours


def test_k_above_the_limit_answers_every_document_of_a_small_store(
    stores: tuple[InMemoryVectorStore, TreehopVectorStore],
) -> None:
    reference, ours = stores
    q = "roll back the deployment"
    for k in (MAX_LIMIT + 1, 10_000):
        want = [d.id for d in reference.similarity_search(q, k=k)]
        assert sorted(want) == IDS
        got = [d.id for d in ours.similarity_search(q, k=k)]
        assert sorted(got) == IDS and got[0] == want[0] == "a"
        assert len(ours.similarity_search_with_score(q, k=k)) == 4
        assert len(ours.as_retriever(search_kwargs={"k": k}).invoke(q)) == 4
        assert len(asyncio.run(ours.asimilarity_search(q, k=k))) == 4
        mmr = ours.max_marginal_relevance_search(q, k=k, fetch_k=k)
        assert sorted(d.id for d in mmr) == IDS
        assert len(ours.max_marginal_relevance_search(q, k=2, fetch_k=k)) == 2


def test_k_above_the_limit_on_a_larger_store_is_refused_with_its_size() -> None:
    ours = TreehopVectorStore(client=Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    n = MAX_LIMIT + 1
    ours.add_texts(
        [f"note {i} about item{i}" for i in range(n)],
        metadatas=[{"source": f"d{i % 10}/f{i}.md"} for i in range(n)],
    )
    with pytest.raises(InvalidQueryError, match=f"holds {n} passages"):
        ours.similarity_search("note", k=10_000)
    with pytest.raises(InvalidQueryError, match=f"holds {n} passages"):
        ours.max_marginal_relevance_search("note", k=10_000)
    assert len(ours.similarity_search("note", k=MAX_LIMIT)) == MAX_LIMIT
    # the other refusals are unchanged
    for bad in (-1, True, 2.0, "5000"):
        with pytest.raises(InvalidQueryError):
            ours.similarity_search("note", k=bad)  # type: ignore[arg-type]


def test_similarity_top_k_above_the_limit_answers_every_node_of_a_small_store() -> None:
    store = LITreehopVectorStore(client=Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    docs = [LIDocument(text=t, id_=i) for t, i in zip(TEXTS, IDS, strict=True)]
    ours = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    simple = VectorStoreIndex.from_documents(docs, embed_model=store.embed_model)
    for index in (simple, ours):
        got = index.as_retriever(similarity_top_k=10_000).retrieve("roll back the deployment")
        assert sorted(n.node.ref_doc_id or "" for n in got) == IDS
        assert got[0].node.ref_doc_id == "a"


def test_similarity_search_with_score_by_vector_as_in_the_in_memory_store(
    stores: tuple[InMemoryVectorStore, TreehopVectorStore],
) -> None:
    """``InMemoryVectorStore`` (and FAISS, PGVector, Qdrant) name the scored vector search
    ``similarity_search_with_score_by_vector``; ours had no such attribute."""
    reference, ours = stores
    vector = ours.embeddings.embed_query("roll back the deployment")
    want = reference.similarity_search_with_score_by_vector(vector, k=4)
    got = ours.similarity_search_with_score_by_vector(vector, k=4)
    assert got[0][0].id == want[0][0].id == "a"
    assert sorted(d.id for d, _ in got) == IDS
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)  # higher is closer
    by_vector = ours.similarity_search_by_vector(vector, k=4)
    assert [d.id for d in by_vector] == [d.id for d, _ in got]
    again = asyncio.run(ours.asimilarity_search_with_score_by_vector(vector, k=4))
    assert [(d.id, s) for d, s in again] == [(d.id, s) for d, s in got]
    assert got[0][0].metadata == {"source": "ops/rollback.md"}
    with pytest.raises(InvalidQueryError, match="unknown search argument"):
        ours.similarity_search_with_score_by_vector(vector, k=2, fetch=3)


def test_retrievers_leave_treehops_bookkeeping_out_of_the_metadata() -> None:
    """A ``TreehopRetriever`` over an index a vector store wrote showed ``treehop_id`` and
    ``treehop_order: [None, 700.0]`` (a passage's id and sort key, hidden from the filter
    field lists) beside the metadata the loader stored; the LlamaIndex retriever too."""
    from langchain_core.documents import Document

    from langchain_treehop import TreehopRetriever
    from llama_index.retrievers.treehop import TreehopRetriever as LIRetriever

    client = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    store = TreehopVectorStore(client=client)
    docs = [
        Document(
            f"part {i} of the handbook about topic{i}",
            metadata={"source": "hb.md", "start_index": i * 100},
        )
        for i in range(3)
    ]
    store.add_documents(docs, ids=["p0", "p1", "p2"])
    hidden = {"treehop_id", "treehop_order", "implicit", "overview_from"}
    got = TreehopRetriever(client=client, k=3, include_directories=True).invoke("topic1")
    assert got and any(d.metadata.get("source") == "hb.md" for d in got)
    for d in got:
        assert not hidden & set(d.metadata), d.metadata
    nodes = LIRetriever(client, similarity_top_k=3, include_directories=True).retrieve("topic1")
    assert nodes and any(n.node.metadata.get("source") == "hb.md" for n in nodes)
    for n in nodes:
        assert not hidden & set(n.node.metadata), n.node.metadata
    # the vector store's own documents: exactly as added
    assert store.get_by_ids(["p1"])[0].metadata == {"source": "hb.md", "start_index": 100}
