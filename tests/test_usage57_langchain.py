"""What a LangChain / LangGraph user's first scripts expect (helper usage57).

- ``similarity_search(q, k=0)`` (and the other searches) answers ``[]``, as LangChain's own
  ``InMemoryVectorStore`` does, after the call's usual checks; it was ``InvalidQueryError``.
- ``TreehopStore(client, index={"embed": ..., "dims": ..., "fields": [...]})``, LangGraph's
  ``IndexConfig`` as ``InMemoryStore`` takes it, was a raw ``TypeError``.
- ``TreehopRetriever.from_path("./indx")`` (a typo) read an empty index forever; it now
  refuses a path holding no saved index, as ``FAISS.load_local`` and LlamaIndex's
  ``StorageContext.from_defaults(persist_dir=...)`` do.
- ``configurable_fields(k=...)`` on a retriever opened with ``from_path`` failed on every
  configured run ("give client or path, not both": LangChain rebuilds it from every field).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import ConfigurableField
from langchain_core.vectorstores import InMemoryVectorStore
from langgraph.store.memory import InMemoryStore
from pydantic import ValidationError

from langchain_treehop import (
    LangChainEmbedder,
    TreehopEmbeddings,
    TreehopRetriever,
    TreehopStore,
    TreehopVectorStore,
)
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError, NotFoundError

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
]
METAS = [{"source": "ops/rollback.md"}, {"source": "sec/keys.md"}, {"source": "misc/food.md"}]


@pytest.fixture
def store() -> Iterator[TreehopVectorStore]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as client:
        s = TreehopVectorStore(client=client)
        s.add_texts(TEXTS, metadatas=METAS)
        yield s


def test_k_zero_answers_nothing_as_the_in_memory_store_does(store: TreehopVectorStore) -> None:
    reference = InMemoryVectorStore.from_texts(TEXTS, store.embeddings, metadatas=METAS)
    vector = store.embeddings.embed_query("roll back")
    for s in (reference, store):
        assert s.similarity_search("roll back", k=0) == []
        assert s.similarity_search_with_score("roll back", k=0) == []
        assert s.similarity_search_by_vector(vector, k=0) == []
        assert s.max_marginal_relevance_search("roll back", k=0) == []
        assert s.max_marginal_relevance_search_by_vector(vector, k=0) == []
        assert asyncio.run(s.asimilarity_search("roll back", k=0)) == []
        assert asyncio.run(s.amax_marginal_relevance_search("roll back", k=0)) == []
        assert s.as_retriever(search_kwargs={"k": 0}).invoke("roll back") == []
    assert store.similarity_search_with_relevance_scores("roll back", k=0) == []
    assert store.similarity_search("roll back", k=1)  # (the store is not empty)


def test_k_zero_is_checked_like_any_other_call(store: TreehopVectorStore) -> None:
    with pytest.raises(InvalidFilterError, match="sourse"):
        store.similarity_search("roll back", k=0, filter={"sourse": "x"})
    with pytest.raises(InvalidQueryError, match="unknown search argument"):
        store.similarity_search("roll back", k=0, filtr={"source": "x"})
    with pytest.raises(InvalidQueryError, match="empty"):
        store.similarity_search("", k=0)
    with pytest.raises(InvalidQueryError, match="lambda_mult"):
        store.max_marginal_relevance_search("roll back", k=0, lambda_mult=2.0)
    for bad in (-1, False, 1.0):
        with pytest.raises(InvalidQueryError, match="k must be"):
            store.similarity_search("roll back", k=bad)  # type: ignore[arg-type]


# ------------------------------------------------------------------ TreehopStore(index=...)
def _two_items(store: TreehopStore | InMemoryStore) -> list[str]:
    store.put(("u",), "a", {"text": "zebra stripes", "note": "apple pie"})
    store.put(("u",), "b", {"text": "apple pie", "note": "zebra stripes"})
    return [item.key for item in store.search(("u",), query="zebra stripes", limit=2)]


@pytest.mark.parametrize(("fields", "first"), [(["note"], "b"), (["text"], "a")])
def test_store_takes_langgraph_index_config(fields: list[str], first: str) -> None:
    fake = DeterministicFakeEmbedding(size=16)
    client = Treehop(embedder=LangChainEmbedder(fake), tagger=None)
    store = TreehopStore(client, index={"embed": fake, "dims": 16, "fields": fields})
    assert store.index_fields == fields
    reference = InMemoryStore(index={"embed": fake, "dims": 16, "fields": fields})
    assert _two_items(store)[0] == _two_items(reference)[0] == first


def test_store_index_config_names_the_clients_own_model() -> None:
    bow = BagOfWordsEmbedder()
    client = Treehop(embedder=bow, tagger=None)
    same = TreehopStore(client, index={"embed": TreehopEmbeddings(bow), "fields": ["text"]})
    assert same.index_fields == ["text"]
    assert TreehopStore(client, index={"dims": bow.dimension}).index_fields == ["$"]
    with pytest.raises(EmbeddingError, match="1536"):
        TreehopStore(client, index={"dims": 1536})
    for other in (DeterministicFakeEmbedding(size=bow.dimension), "openai:text-embedding-3-small"):
        with pytest.raises(InvalidQueryError, match="one vector space"):
            TreehopStore(client, index={"embed": other})
    with pytest.raises(InvalidQueryError, match="ann_index_config"):
        TreehopStore(client, index={"fields": ["text"], "ann_index_config": {}})
    with pytest.raises(InvalidQueryError, match="not both"):
        TreehopStore(client, index={"fields": ["text"]}, index_fields=["text"])
    with pytest.raises(InvalidQueryError, match="IndexConfig"):
        TreehopStore(client, index=["text"])  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="dims"):
        TreehopStore(client, index={"dims": "384"})


# ------------------------------------------------------------------ from_path
@pytest.fixture
def index(tmp_path: Path) -> Path:
    path = tmp_path / "index"
    TreehopVectorStore(client=Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None)).add_texts(
        TEXTS, metadatas=METAS
    )
    return path


def _embedding() -> TreehopEmbeddings:
    return TreehopEmbeddings(BagOfWordsEmbedder())


def test_from_path_refuses_a_path_without_an_index(index: Path, tmp_path: Path) -> None:
    typo = tmp_path / "indx"
    with pytest.raises(NotFoundError, match="indx holds no treehop index"):
        TreehopRetriever.from_path(typo, embedding=_embedding())
    assert not typo.exists()  # nothing written where nothing was asked for
    afile = tmp_path / "notes.txt"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(NotFoundError, match="is a file"):
        TreehopRetriever.from_path(afile, embedding=_embedding())
    docs = TreehopRetriever.from_path(index, embedding=_embedding(), k=1).invoke("roll back")
    assert [d.metadata["source"] for d in docs] == ["ops/rollback.md"]


def test_configurable_fields_on_a_from_path_retriever(index: Path) -> None:
    retriever = TreehopRetriever.from_path(index, embedding=_embedding(), k=3)
    configurable = retriever.configurable_fields(
        k=ConfigurableField(id="k"), target_uri=ConfigurableField(id="where")
    )
    assert len(configurable.invoke("roll back keys")) == 2  # (pizza scores 0: not a hit)
    one = configurable.with_config(configurable={"k": 1}).invoke("roll back keys")
    assert len(one) == 1
    sec = configurable.with_config(configurable={"where": "viking://resources/sec"})
    assert {d.metadata["source"] for d in sec.invoke("roll back keys")} == {"sec/keys.md"}
    batches = configurable.batch(["roll back", "keys"], config={"configurable": {"k": 1}})
    assert [len(b) for b in batches] == [1, 1]
    # (the rebuilt retriever queries the client the first one opened: no second client)
    rebuilt = configurable.with_config(configurable={"k": 1})._prepare(  # type: ignore[attr-defined]
        {"configurable": {"k": 1}}
    )[0]
    assert rebuilt.client is retriever.client
    # A client and a path given by the caller are still two answers to one question.
    with pytest.raises(ValidationError, match="give client or path, not both"):
        TreehopRetriever(client=Treehop(embedder=BagOfWordsEmbedder()), path=str(index))
