"""Either treehop client, from sync or async code.

Async code always awaits the native :class:`~treehop.AsyncTreehop` (a sync client's ``.aio``),
so ``aretrieve`` never parks a worker thread or blocks the caller's loop. Sync code calls a sync
client directly and runs an async client's coroutines on one shared background loop: one
persistent loop rather than ``asyncio.run`` per call, because HTTP clients inside rerankers and
models keep connection pools per loop, and because ``asyncio.run`` fails where the caller already
runs a loop (Jupyter, an async web app calling a sync query engine).

The retriever also accepts a :class:`KnowledgeSource`: a read-only source that answers
treehop's ``find()`` from an index treehop did not build (an existing VikingDB knowledge base,
:class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`). It is matched structurally, so
importing the integration never imports a vendor SDK.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar, runtime_checkable

from typing_extensions import TypeIs

from treehop import AsyncTreehop, FindResult, Treehop
from treehop.errors import InvalidQueryError

T = TypeVar("T")
TreehopClient = Treehop | AsyncTreehop


@runtime_checkable
class KnowledgeSource(Protocol):
    """A read-only source answering treehop's ``find()``, with no treehop tree behind it.

    ``find`` takes treehop's ``find()`` keyword arguments and refuses the ones it cannot
    honour; ``afind`` is its awaitable twin. There is no store (so no CHILD relationships and
    no chunk counts), no tags, no sessions and no ``search()``. ``doc_id_of(uri)``, when
    present, checks a ``target_uri`` at construction.
    :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource` is one.
    """

    def find(self, query: str, **kwargs: Any) -> FindResult: ...

    async def afind(self, query: str, **kwargs: Any) -> FindResult: ...


RetrieverClient = Treehop | AsyncTreehop | KnowledgeSource

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None or _loop.is_closed():
            _loop = asyncio.new_event_loop()
            _thread = threading.Thread(
                target=_loop.run_forever, name="llama-index-treehop-loop", daemon=True
            )
            _thread.start()
        return _loop


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code, even when this thread runs a loop."""
    loop = _background_loop()
    if threading.current_thread() is _thread:
        coro.close()
        raise RuntimeError(
            "a sync treehop call was made from the integration's own background loop; "
            "use the async API (aretrieve / aquery) inside coroutines"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


def check_client(client: object) -> TreehopClient:
    if not isinstance(client, Treehop | AsyncTreehop):
        raise InvalidQueryError(
            f"client must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    return client


def is_knowledge_source(client: object) -> TypeIs[KnowledgeSource]:
    """True for a find-only source (anything with ``find`` and ``afind`` but no tree)."""
    return not isinstance(client, Treehop | AsyncTreehop) and isinstance(client, KnowledgeSource)


def check_retriever_client(client: object) -> RetrieverClient:
    """``client`` if a retriever can query it (a treehop client or a knowledge source)."""
    if isinstance(client, Treehop | AsyncTreehop) or is_knowledge_source(client):
        return client
    raise InvalidQueryError(
        "client must be a treehop.Treehop, a treehop.AsyncTreehop or a knowledge source with "
        f"find() and afind() (such as VikingDBKnowledgeSource), got {type(client).__name__}"
    )


def async_client(client: TreehopClient) -> AsyncTreehop:
    """The native async client behind either client (a sync client shares its store)."""
    return client.aio if isinstance(client, Treehop) else client


def call_sync(client: TreehopClient, method: str, *args: Any, **kwargs: Any) -> Any:
    """A sync client's own method (it runs on that client's loop), else the background loop."""
    if isinstance(client, Treehop):
        fn: Callable[..., Any] | None = getattr(client, method, None)
        if callable(fn):
            return fn(*args, **kwargs)
    return run_sync(getattr(async_client(client), method)(*args, **kwargs))


async def call_async(client: TreehopClient, method: str, *args: Any, **kwargs: Any) -> Any:
    return await getattr(async_client(client), method)(*args, **kwargs)
