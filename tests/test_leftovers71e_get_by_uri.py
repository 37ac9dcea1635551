"""The vector stores read a tree node by the URI their searches name it by (helper
leftovers71e; leftovers71d's open item).

Over an index ``treehop index`` / ``add_resource`` wrote, a LangChain ``TreehopVectorStore``'s
``similarity_search`` returns Documents whose ``id`` is the node's URI, but
``get_by_ids([doc.id])`` answered ``[]`` (and LlamaIndex's ``get_nodes(node_ids=...)``): only
the ids the store itself wrote were known. Now such a URI returns the node as the searches
show it; unknown ids, directories and URIs outside ``base_uri`` are skipped, as LangChain's
contract says. Real clients, offline word-hash embeddings.
"""

from __future__ import annotations

import sys
from pathlib import Path

from langchain_core.documents import Document

from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
import test_leftovers71d_store_source as same_index
from langchain_treehop import TreehopVectorStore
from test_leftovers71d_store_source import BARE, Q

client = same_index.client
"""leftovers71d's fixture: a folder added as ``treehop index`` adds it, plus a name-less text."""

KEYS = "viking://resources/docs/keys.md"


def _same(a: Document, b: Document) -> None:
    assert (a.id, a.page_content, a.metadata) == (b.id, b.page_content, b.metadata)


def test_langchain_get_by_ids_returns_what_the_search_showed(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    hits = store.similarity_search(Q, k=10)
    assert KEYS in {d.id for d in hits} and BARE in {d.id for d in hits}
    wanted = list(reversed([d.id for d in hits if d.id is not None]))
    got = store.get_by_ids(["nope", *wanted, "viking://resources/docs", wanted[0]])
    assert [d.id for d in got] == wanted  # in the order asked; unknown and a directory skipped
    for d in got:
        _same(d, next(h for h in hits if h.id == d.id))
    assert got[wanted.index(KEYS)].metadata["source"] == "keys.md"
    # beside a record the store added (read by its own id, as before)
    store.add_documents([Document(page_content="Vault tokens expire hourly.")], ids=["ops-1"])
    assert [d.id for d in store.get_by_ids([KEYS, "ops-1", BARE])] == [KEYS, "ops-1", BARE]


async def test_langchain_aget_by_ids_and_the_base(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    assert [d.id for d in await store.aget_by_ids([BARE, KEYS])] == [BARE, KEYS]
    narrow = TreehopVectorStore(client=client, base_uri="viking://resources/docs")
    # a URI outside the store's base is not one of its documents
    assert [d.id for d in await narrow.aget_by_ids([BARE, KEYS])] == [KEYS]


def test_llamaindex_get_nodes_by_a_tree_nodes_uri(client: Treehop) -> None:
    store = LlamaStore(client=client)
    nodes = store.get_nodes(node_ids=[KEYS, "viking://resources/none", BARE])
    assert [n.node_id for n in nodes] == [KEYS, BARE]
    assert nodes[0].metadata["file_name"] == "keys.md"
    assert "Rotate the signing keys" in nodes[0].get_content()


def test_control_own_records_by_id_and_by_uri(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    doc = Document(page_content="Vault tokens expire hourly.", metadata={"source": "ops.md"})
    (own,) = store.add_documents([doc], ids=["ops-1"])
    (back,) = store.get_by_ids([own])
    assert (back.id, back.page_content, back.metadata) == ("ops-1", doc.page_content, doc.metadata)
