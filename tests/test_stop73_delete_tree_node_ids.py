"""LangChain ``TreehopVectorStore.delete(ids)`` refuses an id that names a tree node the store
did not write, and deletes nothing (helpers attacks86's and leftovers73b's open item).

Over an index ``treehop index`` / ``add_resource`` wrote, ``delete([<a file's URI>])``
answered ``True`` and deleted nothing: ``get_by_ids`` and the searches still returned the
file, so a caller that trusted the ``True`` kept a document it thought gone. LlamaIndex's
``delete_nodes`` refuses the same ids since leftovers73b; now LangChain's ``delete`` does too,
sync and async, the whole call refused before the first delete. Unknown ids stay ignored (as
``InMemoryVectorStore``), and a passage the store wrote is deleted by its id.
Real clients, offline word-hash embeddings (leftovers71d's fixture).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from langchain_core.documents import Document

from treehop import InvalidURIError, Treehop, TreehopError

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
import test_leftovers71d_store_source as same_index
from langchain_treehop import TreehopVectorStore

client = same_index.client

KEYS = "viking://resources/docs/keys.md"
DOCS = "viking://resources/docs"


def _count(c: Treehop) -> int:
    return len(c.aio.store)


def test_delete_of_an_indexed_files_uri_is_refused_and_deletes_nothing(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    (mine,) = store.add_documents([Document(page_content="Vault tokens expire hourly.")])
    before = _count(client)
    with pytest.raises(InvalidURIError) as err:
        store.delete([mine, KEYS])  # the store's own passage first: not deleted either
    message = str(err.value)
    assert KEYS in message and "nothing was deleted" in message and "treehop index" in message
    assert _count(client) == before
    assert [d.id for d in store.get_by_ids([mine])] == [mine]
    (keys,) = store.get_by_ids([KEYS])
    assert "Rotate the signing keys" in keys.page_content


def test_adelete_of_a_directory_uri_is_refused(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    before = _count(client)
    with pytest.raises(TreehopError, match="did not write"):
        asyncio.run(store.adelete([DOCS]))
    assert _count(client) == before


def test_unknown_ids_and_the_stores_own_passages_still_delete(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    a, b = store.add_documents([Document(page_content="one"), Document(page_content="two")])
    assert store.delete([a, "no-such-id", "viking://resources/docs/nothing-here.md"]) is True
    assert store.get_by_ids([a]) == []
    assert asyncio.run(store.adelete([b])) is True
    assert store.get_by_ids([b]) == []
    (keys,) = store.get_by_ids([KEYS])  # the indexed file untouched
    assert keys.id == KEYS


def test_the_refusal_shows_the_uri_as_refusals_show_a_value(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    a_dir = "viking://resources/docs"  # a directory the fixture wrote
    with pytest.raises(InvalidURIError) as err:
        store.delete([a_dir])
    assert repr(a_dir) in str(err.value)  # shown as every refusal shows a caller's value
