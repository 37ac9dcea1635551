"""A guard around a caller's own store: only :class:`~treehop.errors.TreehopError` leaves it.

The :class:`~treehop.stores.base.VectorStore` protocol is open (docs/extending.md, "A store"):
a caller's class raises whatever its engine's client raises -- a ``KeyError`` from a dict, a
driver's connection error, a ``LookupError`` as the recipe's ``get_vectors`` does -- and each
escaped ``find()``, ``add_resource()`` and ``rm()`` raw (helper leftovers63 left it open),
where only ``TreehopError`` subclasses may leave treehop.

Why one wrapper at client construction, as :mod:`treehop.embedders.guarded` does for the
embedder, rather than a ``try`` at each call site: the store is called from the retriever,
the ingest writer, the records writer, the sessions, the memory writer and the ledger, on
the caller's thread and in worker threads; guards at each would drift apart.

What it does: every method of the wrapped store, and every attribute read, runs through
:func:`treehop._plugins.call`'s rule -- what it raises becomes a :class:`StoreError` naming the
method and what was raised (cut to 500 characters, redacted, the original the error's
``__context__``, kept out of printed tracebacks), unless it passes (treehop's own errors, a
Ctrl-C, an exit, a cancellation). An iterator a method returns (``iter_nodes``) is guarded
as it is read. An attribute the store does not have is still an ``AttributeError`` (what the
optional protocols -- ``IndexMetaStore``, ``IncrementalStore``, ``begin_write`` -- are
detected by). A write the store refused is rolled back as any failed write is: treehop
deletes nothing it did not write, and a store without ``discard_unsaved`` keeps what its own
``upsert`` kept before raising.

Only stores that are not treehop's are wrapped: the built-in stores raise typed errors
already, and the embedded store (with its subclasses) is detected by its class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .._plugins import failed, passes
from ..errors import StoreError


def _foreign(what: str, exc: BaseException) -> StoreError:
    return StoreError(failed(f"the store's {what[:100]}", exc))


def _guarded_iter(what: str, it: Iterator[Any]) -> Iterator[Any]:
    """``it``, each step under the guard (a generator's body runs as it is read)."""
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except BaseException as exc:
            if passes(exc):
                raise
            raise _foreign(what, exc) from None
        yield item


class _Method:
    """A bound method of the wrapped store, called under the guard."""

    __slots__ = ("_fn", "_name")

    def __init__(self, name: str, fn: Callable[..., Any]) -> None:
        self._name = name
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            out = self._fn(*args, **kwargs)
        except BaseException as exc:
            if passes(exc):
                raise
            raise _foreign(self._name, exc) from None
        if isinstance(out, Iterator):
            return _guarded_iter(self._name, out)
        return out

    def __repr__(self) -> str:
        return f"<guarded {self._name}>"


class GuardedStore:
    """Wraps a caller's ``inner`` store: its own exceptions become :class:`StoreError`."""

    def __init__(self, inner: object) -> None:
        object.__setattr__(self, "_inner", inner)

    @property
    def inner(self) -> Any:
        """The wrapped store (the object the caller passed)."""
        return self._inner

    def __getattr__(self, attr: str) -> Any:
        # Only reached for what the guard does not define: the store's own methods and
        # attributes (``meta``, ``capabilities``, ``dimension``, ``begin_write``, ...).
        if attr == "_inner":
            raise AttributeError(attr)
        try:
            value = getattr(self._inner, attr)
        except AttributeError:
            raise
        except BaseException as exc:
            if passes(exc):
                raise
            raise _foreign(attr, exc) from None
        if callable(value) and not isinstance(value, type):
            return _Method(attr, value)
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._inner, attr, value)

    def __len__(self) -> int:
        out: int = _Method("__len__", self._inner.__len__)()
        return out

    def __repr__(self) -> str:
        return f"GuardedStore({self._inner!r})"


def guard_store(store: Any) -> Any:
    """``store`` in a :class:`GuardedStore` unless it is treehop's own (a class defined in
    :mod:`treehop.stores`, or an embedded store of any class)."""
    from .embedded import EmbeddedStore

    if isinstance(store, GuardedStore | EmbeddedStore):
        return store
    if type(store).__module__.startswith("treehop.stores."):
        return store
    return GuardedStore(store)
