"""What every framework adapter needs from the core, written once (no framework imported here).

The LangChain and LlamaIndex vector stores both accept either a treehop client or an index
``path`` plus the framework's embedding model, and must refuse a model that is not the one the
client embeds with (one index, one vector space). That opening logic, and the async view of a
client, live here so that each adapter only translates its framework's names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from os import PathLike
from typing import Any

from .client import AsyncTreehop, Treehop
from .embedders.base import Embedder
from .errors import InvalidQueryError

TreehopClient = Treehop | AsyncTreehop
"""A sync or an async treehop client."""


def as_async(client: TreehopClient) -> AsyncTreehop:
    """The async client behind ``client`` (itself when it is already async)."""
    return client.aio if isinstance(client, Treehop) else client


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
        if not isinstance(client, Treehop | AsyncTreehop):
            raise InvalidQueryError(
                "client must be a treehop.Treehop or treehop.AsyncTreehop, "
                f"got {type(client).__name__}"
            )
        if path is not None:
            raise InvalidQueryError("give client or path, not both")
        if model is not None:
            inner = getattr(as_async(client).embedder, model_attr, None)
            if inner is not model:
                raise InvalidQueryError(
                    f"{model_arg}= differs from the client's embedder; an index has one vector "
                    f"space: open the client with an embedder wrapping this {model_arg}"
                )
        return client, False
    embedder = wrap(model) if model is not None else None
    return Treehop(path, user=user, embedder=embedder, tagger=tagger), True


def reject_extra(kwargs: Mapping[str, Any], where: str) -> None:
    """Adapters take ``**kwargs`` because their frameworks pass them; unknown ones are errors,
    never silently ignored."""
    if kwargs:
        raise InvalidQueryError(f"{where}: unknown argument(s) {sorted(kwargs)}")
