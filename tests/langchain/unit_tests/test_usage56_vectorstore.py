"""What a LangChain user's first scripts expect of ``TreehopVectorStore`` (helper usage56).

LangChain's indexing API (``langchain_core.indexing.index`` with a record manager: the
documented way to keep a vector store in sync with a loader, re-run without duplicates and
with clean-up) calls ``add_documents(docs, ids=..., batch_size=...)`` and ``delete(ids)``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.indexing import InMemoryRecordManager, aindex, index

from langchain_treehop import TreehopVectorStore
from treehop.errors import InvalidQueryError

from lc_helpers import WordHashEmbeddings


@pytest.fixture
def store(embeddings: WordHashEmbeddings) -> Any:
    s = TreehopVectorStore(embedding=embeddings, tagger=None)
    yield s
    s.close()


def _docs(rollback: str) -> list[Document]:
    return [
        Document(page_content=rollback, metadata={"source": "ops.md"}),
        Document(page_content="API keys rotate every ninety days.", metadata={"source": "sec.md"}),
    ]


def _texts(store: TreehopVectorStore) -> list[str]:
    return sorted(d.page_content for d in store.similarity_search("rollback keys", k=10))


def test_langchain_indexing_api_syncs_the_store(store: TreehopVectorStore) -> None:
    records = InMemoryRecordManager(namespace="usage56")
    records.create_schema()
    first = _docs("Roll back with kubectl rollout undo.")
    kw: dict[str, Any] = {
        "cleanup": "incremental",
        "source_id_key": "source",
        "key_encoder": "sha256",
    }
    assert index(first, records, store, **kw)["num_added"] == 2
    assert index(first, records, store, **kw)["num_skipped"] == 2  # a re-run adds nothing
    changed = _docs("Roll back with helm rollback.")
    result = index(changed, records, store, **kw)
    assert (result["num_added"], result["num_deleted"]) == (1, 1)
    assert _texts(store) == sorted(d.page_content for d in changed)
    assert index([], records, store, cleanup="full", key_encoder="sha256")["num_deleted"] == 2
    assert store.similarity_search("rollback keys", k=10) == []


def test_langchain_indexing_api_async(store: TreehopVectorStore) -> None:
    records = InMemoryRecordManager(namespace="usage56-async")
    records.create_schema()
    docs = _docs("Roll back with kubectl rollout undo.")
    result = asyncio.run(
        aindex(docs, records, store, cleanup="full", batch_size=1, key_encoder="sha256")
    )
    assert result["num_added"] == 2
    assert _texts(store) == sorted(d.page_content for d in docs)


def test_batch_size_is_checked(store: TreehopVectorStore) -> None:
    assert store.add_texts(["one text"], ids=["a"], batch_size=64) == ["a"]
    for bad in (0, -1, 1.5, True, "10"):
        with pytest.raises(InvalidQueryError, match="batch_size"):
            store.add_texts(["one text"], ids=["a"], batch_size=bad)


def _leaves(store: TreehopVectorStore) -> list[str]:
    client = store.client
    return sorted({n.uri.split("#")[0] for n in client.aio.store.iter_nodes() if n.is_leaf})


def test_updating_one_file_keeps_its_place_in_the_tree(store: TreehopVectorStore) -> None:
    # A first ingest of a folder places each file relative to the folder the batch shares;
    # re-adding one changed file later (its own batch) must land where the folder put it,
    # not at the root, which would move it out of its directory (and out of target_uri).
    root = "/home/alice/project/docs"
    docs = [
        Document(page_content="Roll back with kubectl.", metadata={"source": f"{root}/ops/a.md"}),
        Document(page_content="Fish on Fridays.", metadata={"source": f"{root}/food.md"}),
    ]
    store.add_documents(docs, ids=["a", "food"])
    before = _leaves(store)
    assert before == ["viking://resources/food.md", "viking://resources/ops/a.md"]
    changed = Document(page_content="Roll back with helm.", metadata={"source": f"{root}/ops/a.md"})
    store.add_documents([changed], ids=["a"])
    assert _leaves(store) == before
    got = store.similarity_search("roll back", k=1, target_uri="ops")
    assert [d.page_content for d in got] == ["Roll back with helm."]
    # a new file of the same folder joins it the same way
    new = Document(page_content="Canary first.", metadata={"source": f"{root}/ops/b.md"})
    store.add_documents([new], ids=["b"])
    assert "viking://resources/ops/b.md" in _leaves(store)


def test_a_reopened_index_learns_where_its_folder_went(
    embeddings: WordHashEmbeddings, tmp_path: Any
) -> None:
    root = "/home/alice/project/docs"
    docs = [
        Document(page_content="Roll back with kubectl.", metadata={"source": f"{root}/ops/a.md"}),
        Document(page_content="Fish on Fridays.", metadata={"source": f"{root}/food.md"}),
    ]
    first = TreehopVectorStore.from_documents(
        docs, embeddings, ids=["a", "food"], path=tmp_path / "i", tagger=None
    )
    first.close()
    again = TreehopVectorStore(embeddings, path=tmp_path / "i", tagger=None)
    changed = Document(page_content="Blue green.", metadata={"source": f"{root}/ops/a.md"})
    again.add_documents([changed], ids=["a"])
    assert _leaves(again) == ["viking://resources/food.md", "viking://resources/ops/a.md"]
    assert [d.page_content for d in again.get_by_ids(["a"])] == ["Blue green."]
    again.close()


def test_add_documents_function_updates_a_file_in_place(embeddings: WordHashEmbeddings) -> None:
    # langchain_treehop.add_documents (whole documents, summarised and chunked by treehop):
    # re-adding one changed file used to write a second copy at <base>/a.md next to
    # <base>/ops/a.md, both found by every search.
    from langchain_treehop import LangChainEmbedder, add_documents
    from treehop import Treehop

    root = "/home/alice/project/docs"
    with Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None) as client:
        first = [
            Document(
                page_content="Roll back with kubectl.", metadata={"source": f"{root}/ops/a.md"}
            ),
            Document(page_content="Fish on Fridays.", metadata={"source": f"{root}/food.md"}),
        ]
        assert add_documents(client, first) == [
            "viking://resources/ops/a.md",
            "viking://resources/food.md",
        ]
        changed = Document(
            page_content="Roll back with helm.", metadata={"source": f"{root}/ops/a.md"}
        )
        assert add_documents(client, [changed]) == ["viking://resources/ops/a.md"]
        assert client.read("viking://resources/ops/a.md").strip() == "Roll back with helm."
        leaves = {n.uri.split("#")[0] for n in client.aio.store.iter_nodes() if n.is_leaf}
        assert leaves == {"viking://resources/ops/a.md", "viking://resources/food.md"}


def test_score_threshold_is_a_floor_on_the_scores_returned() -> None:
    # similarity_search_with_score(q, score_threshold=t) returned a document scoring below t
    # (0.138 under a 0.146 threshold), and LlamaIndex's store dropped the best node when t was
    # just under its score: the core prunes its search with the threshold on the scores
    # before the tree context, and a document is returned with its final score.
    texts = [
        "Kubernetes rollbacks: use kubectl rollout undo deployment/web.",
        "Helm charts: helm rollback web 3.",
        "Fish on Fridays.",
        "API keys rotate every 90 days.",
    ]
    store = TreehopVectorStore.from_texts(texts)  # the offline MiniLM
    try:
        ranked = store.similarity_search_with_score("roll back", k=10)
        assert len(ranked) == 4
        for _, score in ranked:
            floor = score - 1e-6
            kept = store.similarity_search_with_score("roll back", k=10, score_threshold=floor)
            assert kept and all(s >= floor for _, s in kept), (floor, kept)
            # and none that ends above it is lost (the k best, less those under the floor)
            assert [d.id for d, _ in kept] == [d.id for d, s in ranked if s >= floor]
            docs = store.similarity_search("roll back", k=10, score_threshold=floor)
            assert len(docs) == len(kept)
    finally:
        store.close()
