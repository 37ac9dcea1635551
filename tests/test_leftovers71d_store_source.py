"""The vector stores opened on an index another writer filled show where a node came from
(helper leftovers71d).

``treehop index`` / ``add_resource`` store ``name`` / ``source_path``, no ``source``; a
LangChain ``TreehopVectorStore`` over such an index returned Documents without ``source``,
and the RAG tutorial's ``format_docs`` (``d.metadata["source"]``) raised ``KeyError``. Now
such a node shows ``source`` as the retrievers do (``source_path``, else its URI), and the
store's filter on ``source`` reads the value shown. A record added through the store keeps
exactly the metadata it was added with (LangChain's standard tests compare it whole). The
LlamaIndex store shows ``file_name`` / ``file_path`` the same way. Real clients, offline
word-hash embeddings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder, TreehopVectorStore

from lc_helpers import WordHashEmbeddings

Q = "signing keys rotation vault"
BARE = "viking://resources/bare-note"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text("# Keys\n\nRotate the signing keys every ninety days.\n")
    (docs / "vault.md").write_text("# Vault\n\nKeys are stored in the vault host.\n")
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_resource(str(docs))  # what ``treehop index`` does with a folder
    c.add_resource("Key rotation runs from cron on the vault.", is_text=True, target_uri=BARE)
    yield c
    c.close()


def format_docs(docs: list[Document]) -> str:
    """LangChain's RAG tutorial idiom."""
    return "\n\n".join(f"[{d.metadata['source']}] {d.page_content}" for d in docs)


def test_langchain_store_over_indexed_files_shows_source(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    docs = store.similarity_search(Q, k=10)
    text = format_docs(docs)  # KeyError before the change
    by_source = {d.metadata["source"]: d for d in docs}
    assert "keys.md" in by_source and "vault.md" in by_source, sorted(by_source)
    assert BARE in by_source  # nothing names a file: the node's URI
    assert "[keys.md] " in text
    assert by_source["keys.md"].metadata["source_path"] == "keys.md"


async def test_langchain_store_async_and_filters_read_the_shown_source(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    shown = {d.metadata["source"] for d in await store.asimilarity_search(Q, k=10)}

    async def found(spec: dict[str, object]) -> set[str]:
        docs = await store.asimilarity_search(Q, k=10, filter=spec)
        return {d.metadata["source"] for d in docs}

    assert await found({"source": "keys.md"}) == {"keys.md"}
    assert await found({"source": {"$ne": "keys.md"}}) == shown - {"keys.md"}
    assert await found({"source": {"$exists": True}}) == shown
    assert await found({"source": {"$exists": False}}) == set()


def test_records_added_through_the_store_keep_their_metadata(client: Treehop) -> None:
    """Control (passes on the base too): the store's own records round-trip, no ``source``
    added to them by a search or by id."""
    store = TreehopVectorStore(client=client)
    store.add_documents(
        [
            Document("The signing keys rotation note.", metadata={"source_path": "x.md"}),
            Document("The vault keys rotation memo.", metadata={"kind": "memo"}),
        ],
        ids=["a", "b"],
    )
    got = {d.id: d.metadata for d in store.get_by_ids(["a", "b"])}
    assert got == {"a": {"source_path": "x.md"}, "b": {"kind": "memo"}}
    hits = {d.id: d.metadata for d in store.similarity_search(Q, k=20)}
    assert hits["a"] == {"source_path": "x.md"} and hits["b"] == {"kind": "memo"}


def test_a_source_filter_reads_the_stores_own_records_as_stored(client: Treehop) -> None:
    """Beside tree nodes, a record the store added is filtered on its stored ``source``
    (none here): a value test selects none of them, ``$exists: False`` all of them."""
    store = TreehopVectorStore(client=client)
    store.add_documents(
        [
            Document("The signing keys rotation note.", metadata={"source_path": "x.md"}),
            Document("The vault keys rotation memo.", metadata={"kind": "memo"}),
        ],
        ids=["a", "b"],
    )
    # their stored source is empty: a value test on it selects neither, $exists False both
    assert {"a", "b"}.isdisjoint(
        d.id for d in store.similarity_search(Q, k=20, filter={"source": "x.md"})
    )
    absent = {d.id for d in store.similarity_search(Q, k=20, filter={"source": {"$exists": False}})}
    assert absent == {"a", "b"}
    assert {
        d.metadata["source"] for d in store.similarity_search(Q, k=20, filter={"source": "keys.md"})
    } == {"keys.md"}


def test_llamaindex_store_over_indexed_files_shows_file_name(client: Treehop) -> None:
    store = LlamaStore(client=client)
    res = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=10))
    by_path = {n.metadata["file_path"]: n for n in res.nodes or []}  # KeyError before
    assert {"keys.md", "vault.md", BARE} <= set(by_path), sorted(by_path)
    assert by_path["keys.md"].metadata["file_name"] == "keys.md"
    assert by_path[BARE].metadata["file_name"] == "bare-note"
    one = MetadataFilters(filters=[MetadataFilter(key="file_name", value="keys.md")])
    res = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=10, filters=one))
    assert [n.metadata["file_path"] for n in res.nodes or []] == ["keys.md"]
    none = MetadataFilters(
        filters=[MetadataFilter(key="file_path", value=None, operator=FilterOperator.IS_EMPTY)]
    )
    res = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=10, filters=none))
    assert not res.nodes
