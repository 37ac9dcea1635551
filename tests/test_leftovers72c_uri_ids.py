"""A vector store refuses an id that is the URI of a tree node it did not write under that id
(helper leftovers72c; helper attacks85's open item).

Over an index ``treehop index`` / ``add_resource`` wrote, a LangChain ``TreehopVectorStore``
took ``add_documents(docs, ids=["viking://resources/docs/keys.md"])`` (or the Documents a
search returned, added back: their ``id`` is the node's URI) and stored a record beside the
file under the same id: ``similarity_search`` then returned two Documents with one id, and
``get_by_ids`` / ``delete`` reached only the record. LlamaIndex's ``add(nodes)`` did the same
with a node whose id is such a URI. Now the whole call is refused, typed, before anything is
written; an id that is the URI of nothing (or the store's own id, re-added) stays an upsert,
as in LangChain's ``InMemoryVectorStore``. Real clients, offline word-hash embeddings.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import TextNode

from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import InvalidURIError, Treehop, TreehopError

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
import test_leftovers71d_store_source as same_index
from langchain_treehop import TreehopVectorStore
from test_leftovers71d_store_source import BARE, Q

client = same_index.client
"""leftovers71d's fixture: a folder added as ``treehop index`` adds it, plus a name-less text."""

KEYS = "viking://resources/docs/keys.md"
TREE = [KEYS, "viking://resources/docs/vault.md", "viking://resources/docs", BARE]
"""URIs of nodes the fixture wrote another way (two files, their directory, a text)."""


def _count(c: Treehop) -> int:
    return len(c.aio.store)


def _ids(docs: list[Document]) -> list[str | None]:
    return [d.id for d in docs]


def _no_id_twice(store: TreehopVectorStore) -> None:
    ids = _ids(store.similarity_search(Q, k=50, include_directories=True))
    assert len(ids) == len(set(ids)), ids


def test_langchain_refuses_a_tree_nodes_uri_as_an_id_and_writes_nothing(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    before = _count(client)
    batch = [Document(page_content="Vault tokens expire hourly."), Document(page_content="Rotate.")]
    with pytest.raises(InvalidURIError) as err:
        store.add_documents(batch, ids=["ops-1", KEYS])  # the good one first
    message = str(err.value)
    assert KEYS in message and "another id" in message and "treehop index" in message
    assert _count(client) == before  # the whole call refused before the first write
    assert store.get_by_ids(["ops-1"]) == []
    _no_id_twice(store)
    # get_by_ids / delete of the URI reach the file, the one document of that id
    (keys,) = store.get_by_ids([KEYS])
    assert "Rotate the signing keys" in keys.page_content


def test_langchain_adding_back_what_a_search_returned_is_refused(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    hits = store.similarity_search(Q, k=10)
    assert KEYS in _ids(hits)
    before = _count(client)
    with pytest.raises(InvalidURIError, match="add_resource"):
        store.add_documents(hits)  # their ids are the nodes' URIs
    assert _count(client) == before
    _no_id_twice(store)


async def test_langchain_async_refuses_the_same(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    before = _count(client)
    with pytest.raises(InvalidURIError, match="holds others"):
        await store.aadd_texts(["a text", "another"], ids=["fine", "viking://resources/docs"])
    hits = await store.asimilarity_search(Q, k=10)
    with pytest.raises(InvalidURIError):
        await store.aadd_documents(hits)
    assert _count(client) == before
    assert await store.aget_by_ids(["fine"]) == []


def test_llamaindex_add_refuses_a_node_id_that_is_a_tree_uri(client: Treehop) -> None:
    store = LlamaStore(client=client)
    before = _count(client)
    nodes = [TextNode(id_="li-1", text="Vault tokens expire hourly."), TextNode(id_=KEYS, text="x")]
    with pytest.raises(InvalidURIError, match="another id"):
        store.add(nodes)
    assert _count(client) == before
    assert store.get_nodes(node_ids=["li-1"]) == []


async def test_llamaindex_async_add_refuses_it_too(client: Treehop) -> None:
    store = LlamaStore(client=client)
    before = _count(client)
    with pytest.raises(InvalidURIError):
        await store.async_add([TextNode(id_=BARE, text="Key rotation runs hourly.")])
    assert _count(client) == before


def test_control_uri_shaped_ids_of_nothing_and_own_ids_stay_upserts(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    new = "viking://resources/notes/new.md"  # a URI of no node: an ordinary id
    store.add_documents([Document(page_content="Signing keys live in the vault.")], ids=[new])
    store.add_documents([Document(page_content="Signing keys rotate weekly.")], ids=[new])
    (got,) = store.get_by_ids([new])
    assert got.page_content == "Signing keys rotate weekly."
    # the store's own records, as a search returned them, added back: an upsert
    store.add_documents([Document(page_content="Vault signing keys audit.")], ids=["ops-2"])
    own = [d for d in store.similarity_search(Q, k=50) if d.id in {new, "ops-2"}]
    assert sorted(str(d.id) for d in own) == sorted([new, "ops-2"])
    store.add_documents(own)
    _no_id_twice(store)
    # outside a narrower store's base, a tree node's URI is an ordinary id of that store
    narrow = TreehopVectorStore(client=client, base_uri="viking://resources/notes")
    assert narrow.add_texts(["Keys rotate."], ids=[KEYS]) == [KEYS]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    picks=st.lists(
        st.one_of(
            st.sampled_from(TREE),
            st.from_regex(r"viking://resources/new/[a-z]{1,8}", fullmatch=True),
            st.text(min_size=1, max_size=12),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_batch_holding_a_tree_uri_writes_nothing(client: Treehop, picks: list[str]) -> None:
    store = TreehopVectorStore(client=client)
    before = _count(client)
    texts = [f"passage {i} about keys" for i in range(len(picks))]
    try:
        store.add_texts(texts, ids=picks)
    except TreehopError as exc:  # (an id refused for another reason too: typed, as before)
        assert _count(client) == before  # whatever refused it, nothing was written
        if "two documents would share it" in str(exc):
            assert any(p in TREE for p in picks)
    else:
        assert not any(p in TREE for p in picks)
    _no_id_twice(store)
