"""What every framework adapter needs from the core, written once (no framework imported here).

Why a kit: the LangChain and LlamaIndex adapters used to carry their own copies of the same
plumbing (an event-loop thread each, the ``KnowledgeSource`` protocol and its checks, calls
dispatched by method-name strings that returned ``Any``). Here it is once and typed, so an
adapter only translates its framework's names:

- **Running the async core from sync code**: a sync :class:`~treehop.Treehop` runs work on
  its own loop thread (:meth:`Treehop.run`); an :class:`~treehop.AsyncTreehop` used from sync
  code runs on one shared background loop (:func:`run_sync`), the same
  :class:`~treehop._sync.LoopThread` the sync client uses. One persistent loop rather than
  ``asyncio.run`` per call, because HTTP clients inside models and rerankers keep connection
  pools bound to the loop that opened them, and ``asyncio.run`` fails where the caller already
  runs a loop (Jupyter, an async web app calling a sync chain).
- **Typed calls**: :func:`call` / :func:`acall` take an :class:`AsyncTreehop` method itself
  (``call(client, AsyncTreehop.ls, uri)``), so arguments and results are checked by mypy;
  :func:`find` / :func:`afind` also accept a :class:`KnowledgeSource`.
- **Knowledge sources**: a read-only source answering ``find()`` from an index treehop did not
  build (:class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource`), matched structurally so
  that importing an adapter never imports a vendor SDK; :func:`is_knowledge_source` is the one
  check.
- **Opening a client** for a vector store (:func:`open_client`), refusing unknown framework
  keyword arguments (:func:`reject_extra`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Coroutine, Mapping
from os import PathLike
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, Unpack, runtime_checkable

from typing_extensions import TypeIs

from ._sync import LoopThread
from .client import AsyncTreehop, Treehop
from .embedders.base import Embedder
from .errors import InvalidQueryError
from .models import ContextType, FindResult, MatchedContext
from .search_options import SearchKwargs

T = TypeVar("T")
P = ParamSpec("P")

TreehopClient = Treehop | AsyncTreehop
"""A sync or an async treehop client."""


@runtime_checkable
class KnowledgeSource(Protocol):
    """A read-only source answering treehop's ``find()``, with no treehop tree behind it.

    ``find`` takes treehop's search options (:class:`~treehop.search_options.SearchKwargs`,
    so a misspelt option is a type error) and refuses, with a typed error, the ones it cannot
    honour; ``afind`` is its awaitable twin (a thread for a sync SDK). There is no store (so no
    CHILD relationships and no chunk counts), no tags, no sessions and no ``search()``: the
    adapters refuse options that need them instead of dropping them. ``doc_id_of(uri)``, when
    present, checks a ``target_uri`` at construction.
    :class:`treehop.vikingdb_knowledge.VikingDBKnowledgeSource` is one.
    """

    def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult: ...

    async def afind(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult: ...


RetrieverClient = Treehop | AsyncTreehop | KnowledgeSource
"""What a retriever queries: a treehop client or a knowledge source."""


def is_knowledge_source(client: object) -> TypeIs[KnowledgeSource]:
    """True for a find-only source (anything with ``find`` and ``afind`` but no tree)."""
    return not isinstance(client, Treehop | AsyncTreehop) and isinstance(client, KnowledgeSource)


def check_client(client: object, what: str = "client") -> TreehopClient:
    """``client`` if it is a treehop client, else a typed error naming ``what``."""
    if not isinstance(client, Treehop | AsyncTreehop):
        raise InvalidQueryError(
            f"{what} must be a treehop.Treehop or treehop.AsyncTreehop, got {type(client).__name__}"
        )
    return client


def check_retriever_client(client: object) -> RetrieverClient:
    """``client`` if a retriever can query it (a treehop client or a knowledge source)."""
    if isinstance(client, Treehop | AsyncTreehop) or is_knowledge_source(client):
        return client
    raise InvalidQueryError(
        "client must be a treehop.Treehop, a treehop.AsyncTreehop or a knowledge source with "
        f"find() and afind() (such as VikingDBKnowledgeSource), got {type(client).__name__}"
    )


def as_async(client: TreehopClient) -> AsyncTreehop:
    """The async client behind ``client`` (itself when it is already async)."""
    return client.aio if isinstance(client, Treehop) else client


# --------------------------------------------------------------------------- running

_shared_lock = threading.Lock()
_shared: LoopThread | None = None


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion from sync code on the shared background loop.

    The loop thread starts on first use (importing an adapter starts no thread) and is
    restarted if it was closed.
    """
    global _shared
    with _shared_lock:
        if _shared is None or _shared.closed:
            _shared = LoopThread()
        runner = _shared
    return runner.run(coro)


def run_on(client: TreehopClient, coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine over ``client`` from sync code: on a sync client's own loop thread
    (where its write lock and connection pools live), else on the shared loop."""
    return client.run(coro) if isinstance(client, Treehop) else run_sync(coro)


def call(
    client: TreehopClient,
    method: Callable[Concatenate[AsyncTreehop, P], Coroutine[Any, Any, T]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``method`` (an :class:`AsyncTreehop` method, e.g. ``AsyncTreehop.ls``) from sync code.

    Passing the method itself, not its name, keeps the call typed end to end.
    """
    return run_on(client, method(as_async(client), *args, **kwargs))


async def acall(
    client: TreehopClient,
    method: Callable[Concatenate[AsyncTreehop, P], Coroutine[Any, Any, T]],
    /,
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """``method`` awaited on the native async client behind ``client`` (never a thread)."""
    return await method(as_async(client), *args, **kwargs)


def find(
    client: RetrieverClient,
    query: str,
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> FindResult:
    """``find()`` on a treehop client or a knowledge source, from sync code."""
    if is_knowledge_source(client):
        return client.find(query, context_type=context_type, **options)
    return call(client, AsyncTreehop.find, query, context_type=context_type, **options)


async def afind(
    client: RetrieverClient,
    query: str,
    *,
    context_type: ContextType | str | None = None,
    **options: Unpack[SearchKwargs],
) -> FindResult:
    """``find()`` on a treehop client or a knowledge source, awaited."""
    if is_knowledge_source(client):
        return await client.afind(query, context_type=context_type, **options)
    return await as_async(client).find(query, context_type=context_type, **options)


def top_hits(client: RetrieverClient, result: FindResult, k: int) -> list[MatchedContext]:
    """The hits an adapter returns: :meth:`FindResult.top` for a treehop client.

    A knowledge source was asked for ``k`` hits already, and the neighbouring chunks its
    service adds are not marked as neighbours, so its result is taken whole (best first).
    """
    if is_knowledge_source(client):
        return result.contexts()
    return result.top(k)


# --------------------------------------------------------------------------- vector stores


def open_client(
    client: object,
    path: str | PathLike[str] | None,
    model: object | None,
    *,
    wrap: Callable[[Any], Embedder],
    model_attr: str,
    model_arg: str,
    user: str = "default",
    tagger: Any = "auto",
) -> tuple[TreehopClient, bool]:
    """The client an adapter works on, and whether the adapter owns (and so closes) it.

    ``client`` wins when given; then ``path`` must be absent and ``model`` (the framework's
    embedding model, named ``model_arg`` in the adapter) must be the very object the client's
    embedder wraps (read from the embedder's ``model_attr``). Without a client, a new sync
    client is opened on ``path`` (``None``: in memory) embedding with ``wrap(model)``.
    """
    if client is not None:
        checked = check_client(client)
        if path is not None:
            raise InvalidQueryError("give client or path, not both")
        if model is not None:
            inner = getattr(as_async(checked).embedder, model_attr, None)
            if inner is not model:
                raise InvalidQueryError(
                    f"{model_arg}= differs from the client's embedder; an index has one vector "
                    f"space: open the client with an embedder wrapping this {model_arg}"
                )
        return checked, False
    embedder = wrap(model) if model is not None else None
    return Treehop(path, user=user, embedder=embedder, tagger=tagger), True


def reject_extra(kwargs: Mapping[str, Any], where: str) -> None:
    """Adapters take ``**kwargs`` because their frameworks pass them; unknown ones are errors,
    never silently ignored."""
    if kwargs:
        raise InvalidQueryError(f"{where}: unknown argument(s) {sorted(kwargs)}")


__all__ = [
    "KnowledgeSource",
    "RetrieverClient",
    "TreehopClient",
    "acall",
    "afind",
    "as_async",
    "call",
    "check_client",
    "check_retriever_client",
    "find",
    "is_knowledge_source",
    "open_client",
    "reject_extra",
    "run_on",
    "run_sync",
    "top_hits",
]

