"""Plumbing shared by the retriever, the tools and the ingest helpers.

Treehop has a sync client (:class:`~treehop.Treehop`, which owns an event-loop thread) and a
native async one (:class:`~treehop.AsyncTreehop`). LangChain calls both ``invoke`` and
``ainvoke`` on the same object, so every component here accepts either client and picks the
right path:

- async code always awaits the :class:`~treehop.AsyncTreehop` (a sync client's ``.aio``), so
  ``ainvoke`` never parks a worker thread or blocks the caller's event loop;
- sync code calls the sync client directly, and runs an async client's coroutines on one
  shared background loop. One persistent loop (rather than ``asyncio.run`` per call) matters:
  HTTP clients inside models and rerankers keep connection pools bound to the loop that opened
  them, and ``asyncio.run`` cannot be used at all when the caller already runs a loop
  (Jupyter, an async web framework calling a sync chain).

The retriever also accepts a :class:`KnowledgeSource`: a read-only source that answers
treehop's ``find()`` from an index treehop did not build (an existing VikingDB knowledge base,
:class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`). It is matched structurally, so
importing this package never imports a vendor SDK.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar, runtime_checkable

from typing_extensions import TypeIs

from treehop import AsyncTreehop, FindResult, Treehop
from treehop.errors import InvalidQueryError

T = TypeVar("T")
TreehopClient = Treehop | AsyncTreehop
"""Either treehop client; every public entry point of this package accepts both."""


@runtime_checkable
class KnowledgeSource(Protocol):
    """A read-only source answering treehop's ``find()``, with no treehop tree behind it.

    ``find`` takes treehop's ``find()`` keyword arguments (``limit``, ``filter``,
    ``score_threshold``, ``target_uri``, ``mode``, ``dense_weight``, ``retrieve_count``,
    ``rerank_threshold``, ``chunk_diffusion_count``, ``chunk_group``, ...) and refuses the ones
    it cannot honour; ``afind`` is its awaitable twin (a thread for a sync SDK). There is no
    store, no tags, no sessions and no ``search()``: the retriever refuses options that need
    them instead of dropping them. ``doc_id_of(uri)``, when present, checks a ``target_uri``
    at construction. :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource` is one.
    """

    def find(self, query: str, **kwargs: Any) -> FindResult: ...

    async def afind(self, query: str, **kwargs: Any) -> FindResult: ...


RetrieverClient = Treehop | AsyncTreehop | KnowledgeSource
"""What a :class:`~langchain_treehop.TreehopRetriever` queries."""


class _BackgroundLoop:
    """One daemon thread running one event loop, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=loop.run_forever, name="langchain-treehop-loop", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self._ensure()
        if threading.current_thread() is self._thread:
            coro.close()
            raise RuntimeError(
                "a sync langchain-treehop call was made from its own background loop; "
                "use the async API (ainvoke / arun) inside coroutines"
            )
        return asyncio.run_coroutine_threadsafe(coro, loop).result()


_BACKGROUND = _BackgroundLoop()


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, even when this thread runs a loop."""
    return _BACKGROUND.run(coro)


def check_client(client: object, what: str = "client") -> TreehopClient:
    """Return ``client`` if it is a treehop client, else raise a clear error."""
    if not isinstance(client, (Treehop, AsyncTreehop)):
        raise InvalidQueryError(
            f"{what} must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    return client


def is_knowledge_source(client: object) -> TypeIs[KnowledgeSource]:
    """True for a find-only source (anything with ``find`` and ``afind`` but no tree)."""
    return not isinstance(client, (Treehop, AsyncTreehop)) and isinstance(client, KnowledgeSource)


def check_retriever_client(client: object) -> RetrieverClient:
    """Return ``client`` if a retriever can query it (a treehop client or a knowledge source)."""
    if isinstance(client, (Treehop, AsyncTreehop)) or is_knowledge_source(client):
        return client
    raise InvalidQueryError(
        "client must be a treehop.Treehop, a treehop.AsyncTreehop or a knowledge source with "
        f"find() and afind() (such as VikingDBKnowledgeSource), got {type(client).__name__}"
    )


def async_client(client: TreehopClient) -> AsyncTreehop:
    """The native async client behind either client (a sync client shares its store)."""
    return client.aio if isinstance(client, Treehop) else client


def call_sync(client: TreehopClient, method: str, *args: Any, **kwargs: Any) -> Any:
    """Call ``method`` of the client from sync code.

    A sync client's own method is preferred (it runs on that client's loop thread); an async
    client, or a method the sync client does not wrap, runs on the shared background loop.
    """
    if isinstance(client, Treehop) and callable(getattr(client, method, None)):
        return getattr(client, method)(*args, **kwargs)
    return run_sync(getattr(async_client(client), method)(*args, **kwargs))


async def call_async(client: TreehopClient, method: str, *args: Any, **kwargs: Any) -> Any:
    """Await ``method`` of the async client behind ``client``."""
    return await getattr(async_client(client), method)(*args, **kwargs)


def has_method(client: TreehopClient, method: str) -> bool:
    return callable(getattr(async_client(client), method, None))
