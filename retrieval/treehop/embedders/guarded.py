"""A guard around any embedder: only :class:`~treehop.errors.EmbeddingError` leaves it.

The :class:`~treehop.embedders.base.Embedder` protocol is open: users pass their own object
(a wrapped LangChain ``Embeddings``, a LlamaIndex ``BaseEmbedding``, a hand-written class).
Such an object raises whatever its library raises -- ``RuntimeError``, ``ValueError``, an
``openai.APIError`` -- and may answer with the wrong shape or NaN. Without a guard that fault
escapes ``find()`` or ``add_resource()`` as a foreign exception (the library promises that only
``TreehopError`` subclasses escape), or a wrong-sized vector reaches the store and fails there
with a confusing message.

Why one wrapper at client construction rather than ``try``/``except`` at each call site: the
embedder is called from the query path (async and the sync caller-thread path), the ingest
writer, and the memory writer; a guard at each would drift apart. The client keeps the user's
object as ``client.embedder`` (identity and type preserved) and hands this guard to everything
that calls it. Attributes it does not define are read from the wrapped embedder.

The message of a foreign exception is cut and redacted (:func:`treehop._plugins.failed`) and
the original is not chained: a client library's error may carry a URL or header with a key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from .._plugins import call as plugin_call
from .._plugins import describe, failed, noted, passes
from ..errors import EmbeddingError
from .base import Embedder, Vectors

_T = TypeVar("_T")


class GuardedEmbedder:
    """Wraps ``inner``: foreign exceptions become :class:`EmbeddingError`, outputs are checked.

    Checks: ``embed`` answers ``(len(texts), d)``, ``embed_query`` answers ``d`` values (a
    ``(1, d)`` answer is flattened), ``d`` equals ``inner.dimension`` when that is set, and every
    value is finite. Vectors are not renormalised (the protocol asks the embedder for unit rows;
    renormalising would change a correct embedder's last bits and so its scores).
    """

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner

    @property
    def inner(self) -> Embedder:
        """The wrapped embedder (the object the user passed)."""
        return self._inner

    @property
    def name(self) -> str:
        return str(self._guard(lambda: self._inner.name))

    @property
    def dimension(self) -> int:
        return int(self._guard(lambda: self._inner.dimension) or 0)

    def __getattr__(self, attr: str) -> Any:
        # Only reached for attributes the guard does not define (a model handle, counters).
        if attr == "_inner":
            raise AttributeError(attr)
        return getattr(self._inner, attr)

    def __repr__(self) -> str:
        return f"GuardedEmbedder({self._inner!r})"

    # ------------------------------------------------------------------ the four calls
    def embed(self, texts: Sequence[str]) -> Vectors:
        out = self._guard(lambda: self._inner.embed(texts))
        return self._rows(out, len(texts))

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        out = await self._aguard(self._inner.aembed(texts))
        return self._rows(out, len(texts))

    def embed_query(self, text: str) -> Vectors:
        out = self._guard(lambda: self._inner.embed_query(text))
        return self._one(out)

    def embed_query_unfinished(self, text: str) -> Vectors:
        """:meth:`embed_query` without its last check (every value finite), for a caller
        that makes it itself as part of its own: the sync ``find()`` takes the vector's norm
        at once (:func:`treehop.client._check_query_vector` with ``embedded=True``), and a
        finite norm proves every value finite; where it is not finite that check raises
        this guard's :class:`~treehop.errors.EmbeddingError`. The same vector, or the same
        error, as :meth:`embed_query`; ~2 numpy calls fewer per find."""
        out = self._guard(lambda: self._inner.embed_query(text))
        return self._one(out, finite=False)

    async def aembed_query(self, text: str) -> Vectors:
        out = await self._aguard(self._inner.aembed_query(text))
        return self._one(out)

    # ------------------------------------------------------------------ checks
    def _guard(self, call: Callable[[], _T]) -> _T:
        """``call()``; what it raises becomes :class:`EmbeddingError` unless it passes
        (:func:`treehop._plugins.passes`: treehop's own errors, a Ctrl-C, an exit, a
        cancellation). A ``BaseException`` subclass of the embedder's own is wrapped too."""
        return plugin_call("the embedder", EmbeddingError, call)

    async def _aguard(self, call: Awaitable[_T]) -> _T:
        """:meth:`_guard` for an awaited call (a cancellation passes through); noted as the
        embedder's while it runs (:func:`treehop._plugins.noted`)."""
        try:
            with noted("the embedder"):
                return await call
        except BaseException as exc:
            if passes(exc):
                raise
            raise self._foreign(exc) from None

    def _foreign(self, exc: BaseException) -> EmbeddingError:
        return EmbeddingError(failed("the embedder", exc))

    def _expected_dim(self) -> int:
        try:
            dim = self._inner.dimension
        except BaseException as exc:
            if passes(exc):
                raise
            return 0
        return dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else 0

    def _as_array(self, out: Any) -> Vectors:
        try:
            arr = np.asarray(out, dtype=np.float32)
        except BaseException as exc:  # (also an int past float's range, an element's __float__)
            if passes(exc):
                raise
            raise EmbeddingError(
                f"the embedder returned {type(out).__name__}, not numbers: {describe(exc)}"[:300]
            ) from None
        return arr

    def _rows(self, out: Any, n: int) -> Vectors:
        arr = self._as_array(out)
        dim = self._expected_dim()
        if arr.ndim != 2 or arr.shape[0] != n or (dim and arr.shape[1] != dim):
            want = f"({n}, {dim or 'd'})"
            raise EmbeddingError(f"the embedder returned shape {arr.shape}, expected {want}")
        return self._finite(arr)

    def _one(self, out: Any, finite: bool = True) -> Vectors:
        arr = self._as_array(out)
        if arr.ndim == 2 and arr.shape[0] == 1:
            arr = arr[0]
        dim = self._expected_dim()
        if arr.ndim != 1 or arr.shape[0] == 0 or (dim and arr.shape[0] != dim):
            want = f"({dim or 'd'},)"
            raise EmbeddingError(
                f"the embedder returned shape {arr.shape} for a query, expected {want}"
            )
        return self._finite(arr) if finite else arr

    @staticmethod
    def _finite(arr: Vectors) -> Vectors:
        # (the array's own ``all``: ``np.all`` adds a Python dispatch layer to every query)
        if not np.isfinite(arr).all():
            raise EmbeddingError(NOT_FINITE)
        return arr


NOT_FINITE = "the embedder returned NaN or infinite values"
"""The guard's error for a vector with a NaN or an infinite value."""


def guard_embedder(embedder: Embedder) -> GuardedEmbedder:
    """``embedder`` behind a :class:`GuardedEmbedder` (an existing guard is not wrapped twice)."""
    return embedder if isinstance(embedder, GuardedEmbedder) else GuardedEmbedder(embedder)
