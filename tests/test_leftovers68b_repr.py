"""An open client's repr makes no store call (helper leftovers68b, bench/README.md "(helper
leftovers68b)"; usage78's open item).

``repr(Treehop)`` / ``repr(AsyncTreehop)`` counted the store's nodes (``len(store)``): a
request to a remote store (VikingDB's ``aggregate``, Milvus's ``count``) made by every log
line, debugger view, and framework repr holding the client (a LangChain retriever's, an
asyncio task's), as slow as the service and failing with it ("nodes=?"). It now shows the
store's class, read from the object.

Each test fails on c3a05a97 unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

from test_vikingdb_store import AK, SK, make_store
from treehop import AsyncTreehop, Treehop
from treehop.stores.embedded import EmbeddedStore

from fake_servers.vikingdb_server import FakeVikingDB, Reply
from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def srv() -> Iterator[FakeVikingDB]:
    with FakeVikingDB(ak=AK, sk=SK) as server:
        yield server


def test_the_repr_of_a_client_over_a_remote_store_sends_no_request(srv: FakeVikingDB) -> None:
    # c3a05a97: each repr POSTed a count (``.../aggregate``); with the service failing, the
    # repr waited out the store's retries and showed "nodes=?"
    store = make_store(srv, dim=BagOfWordsEmbedder().dimension)
    with Treehop(store=store, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        client.add_resource("the tides turn twice a day", target_uri="viking://resources/t.md")
        sent = len(srv.requests)
        shown = repr(client)
        assert len(srv.requests) == sent, [r.path for r in srv.requests[sent:]]
        assert "store=VikingDBStore" in shown and "nodes" not in shown
        assert AK not in shown and SK not in shown
        srv.script(*[Reply(503, {"code": 1000, "message": "busy"}, delay_s=1.0)] * 4)
        began = time.monotonic()
        assert repr(client) == shown  # (the same, at once, with the service down)
        assert time.monotonic() - began < 0.5
        assert len(srv.requests) == sent


class _Counting(EmbeddedStore):
    """A caller's store (a subclass: treehop guards it) that counts its ``len`` calls and
    fails them, as a store whose service is down does."""

    lens = 0

    def __len__(self) -> int:
        type(self).lens += 1
        raise ConnectionError("the service is down")


def test_the_repr_of_a_client_over_a_callers_store_never_calls_it() -> None:
    # c3a05a97: one len() per repr ("nodes=?" from the failure)
    _Counting.lens = 0
    client = Treehop(store=_Counting(), embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        before = _Counting.lens
        shown = repr(client)
        assert _Counting.lens == before
        assert shown.startswith("Treehop(path=None, user='default', store=_Counting, embedder=")
    finally:
        client.close()


def test_an_async_clients_repr_shows_its_store_and_a_closed_one_says_closed() -> None:
    # c3a05a97: "nodes=0" (the closed form, "closed=True", is usage78's and passes there)
    async def run() -> tuple[str, str]:
        client = AsyncTreehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
        opened = repr(client)
        await client.close()
        return opened, repr(client)

    opened, closed = asyncio.run(run())
    assert opened.startswith("AsyncTreehop(path=None, user='default', store=EmbeddedStore, ")
    assert "closed=True" in closed and "store=" not in closed


def test_a_frameworks_repr_of_the_client_sends_no_request(srv: FakeVikingDB) -> None:
    # c3a05a97: LangChain's retriever repr holds the client's: a count request each time
    from langchain_treehop import TreehopRetriever

    store = make_store(srv, dim=BagOfWordsEmbedder().dimension)
    with Treehop(store=store, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        retriever: Any = TreehopRetriever(client=client)
        sent = len(srv.requests)
        shown = repr(retriever)
        assert len(srv.requests) == sent
        assert "store=VikingDBStore" in shown
