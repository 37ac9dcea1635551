"""A vector-store record whose id names nothing when added, and a node ``treehop index``
writes at that URI later, are never two search results with one id (helper leftovers73a;
leftovers72c's open item).

leftovers72c refuses an id that is a tree node's URI at write time. The other order was
open: ``add_documents(docs, ids=[d.id for d in hits])`` with Documents a search of another
index returned (their ids are that index's URIs, naming nothing here), then ``treehop index``
of the same folder here: ``similarity_search`` showed the record and the file under one id,
and ``get_by_ids`` / ``delete`` of that id reached the record only. The record keeps its id
(the store's own ids win, as ``get_by_ids`` already read them) and the node is left out of
the store's searches, searched again so ``k`` stays filled; ``treehop find`` (named by URI)
still shows both. Real clients, offline word-hash embeddings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder, TreehopVectorStore

from lc_helpers import WordHashEmbeddings

Q = "signing keys rotation vault"
KEYS = "viking://resources/docs/keys.md"
DOCS = "viking://resources/docs"
RECORD = "Signing keys rotate in the vault every ninety days (the record)."


def _folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    (docs / "keys.md").write_text("# Keys\n\nRotate the signing keys every ninety days.\n")
    (docs / "vault.md").write_text("# Vault\n\nThe vault holds signing keys for rotation.\n")
    (docs / "audit.md").write_text("# Audit\n\nKey rotation is audited in the vault log.\n")
    return docs


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    yield c
    c.close()


def _unique(ids: list[str | None]) -> None:
    assert len(ids) == len(set(ids)), ids


def test_langchain_a_record_then_treehop_index_at_its_id_shows_one_document(
    client: Treehop, tmp_path: Path
) -> None:
    store = TreehopVectorStore(client=client)
    store.add_documents([Document(page_content=RECORD)], ids=[KEYS])  # names nothing yet
    client.add_resource(str(_folder(tmp_path)))  # what ``treehop index docs`` does
    hits = store.similarity_search(Q, k=10)
    _unique([d.id for d in hits])
    (shown,) = [d for d in hits if d.id == KEYS]
    assert shown.page_content == RECORD  # the id's document, as get_by_ids reads it
    assert [d.page_content for d in store.get_by_ids([KEYS])] == [RECORD]
    # the other files still answer, and k is filled from what is left
    assert {d.id for d in hits} >= {KEYS, f"{DOCS}/vault.md", f"{DOCS}/audit.md"}
    assert len(store.similarity_search(Q, k=3)) == 3
    # treehop find names nodes by URI: both are there
    uris = [m.uri for m in client.find(Q, limit=10).contexts()]
    assert KEYS in uris and any(u != KEYS and "keys.md" in u for u in uris), uris


def test_langchain_a_directory_written_at_a_records_id_is_left_out_too(
    client: Treehop, tmp_path: Path
) -> None:
    store = TreehopVectorStore(client=client)
    store.add_texts([RECORD], ids=[DOCS])
    client.add_resource(str(_folder(tmp_path)))
    hits = store.similarity_search(Q, k=20, include_directories=True)
    _unique([d.id for d in hits])
    assert [d.page_content for d in hits if d.id == DOCS] == [RECORD]


async def test_langchain_async_search_and_mmr_show_one_document_per_id(
    client: Treehop, tmp_path: Path
) -> None:
    store = TreehopVectorStore(client=client)
    await store.aadd_texts([RECORD], ids=[KEYS])
    client.add_resource(str(_folder(tmp_path)))
    _unique([d.id for d in await store.asimilarity_search(Q, k=10)])
    _unique([d.id for d in store.max_marginal_relevance_search(Q, k=4, fetch_k=10)])


def test_llamaindex_query_shows_one_node_per_id(client: Treehop, tmp_path: Path) -> None:
    store = LlamaStore(client=client)
    store.add([TextNode(id_=KEYS, text=RECORD)])
    client.add_resource(str(_folder(tmp_path)))
    result = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=10))
    ids = [n.node_id for n in result.nodes or []]
    _unique(ids)
    assert KEYS in ids


def test_control_the_file_shows_when_no_record_holds_its_uri(
    client: Treehop, tmp_path: Path
) -> None:
    """Control (passes on the base too): the rule leaves out only a node whose URI is a
    record's id; a record with another id and the file are both shown."""
    store = TreehopVectorStore(client=client)
    store.add_documents([Document(page_content=RECORD)], ids=["ops-1"])
    client.add_resource(str(_folder(tmp_path)))
    ids = [d.id for d in store.similarity_search(Q, k=10)]
    assert KEYS in ids and "ops-1" in ids


_URIS = [KEYS, f"{DOCS}/vault.md", f"{DOCS}/audit.md", DOCS]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    taken=st.lists(st.sampled_from(_URIS), min_size=1, max_size=3, unique=True),
    k=st.integers(1, 12),
)
@example(taken=[KEYS], k=4)  # (a directory among the hits: get_by_ids skips it)
@example(taken=[DOCS, KEYS], k=12)
def test_any_records_at_future_uris_never_show_one_id_twice(
    tmp_path_factory: pytest.TempPathFactory, taken: list[str], k: int
) -> None:
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    try:
        store = TreehopVectorStore(client=c)
        store.add_texts([f"{RECORD} {i}" for i in range(len(taken))], ids=taken)
        c.add_resource(str(_folder(tmp_path_factory.mktemp("f"))))
        _unique([d.id for d in store.similarity_search(Q, k=k, include_directories=True)])
        hits = store.similarity_search(Q, k=k)  # (get_by_ids skips directories, documented)
        _unique([d.id for d in hits])
        for d in hits:
            (same,) = store.get_by_ids([d.id])  # every id shown reads back as that document
            assert same.page_content == d.page_content
    finally:
        c.close()
