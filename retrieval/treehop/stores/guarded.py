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
already. A caller's subclass of the embedded store is wrapped when it overrides any of its
methods or properties (its own code may raise anything; helper leftovers64b), else used as
it is.

The wrapper answers ``isinstance`` as the wrapped store does (its ``__class__`` is the
store's class: ``isinstance(client.store, MyStore)`` holds, and treehop's own checks for an
embedded store still see a guarded subclass as one). Decided (helper leftovers65a): for a
caller's subclass of a built-in store, ``isinstance(client.store, EmbeddedStore)`` is True,
as it is for the caller's object -- Python's rule, which a caller's (a LangChain user's)
check relies on; the answer differs from the object's for ``GuardedStore`` alone
(``tests/test_store_leftovers65.py`` asks every class of the store's MRO, the built-in
stores, treehop's runtime protocols and ``collections.abc``). ``type(client.store)`` is
:class:`GuardedStore` and ``client.store.inner`` the caller's object. One wrapper per store
object (:func:`guard_store`), so that two clients of one store share it as they share the
store (the in-process write gate is kept per store object).

A write that fails midway (helper leftovers64b): what the store's ``upsert`` / ``delete``
calls already did during the failed write is rolled back through its ``discard_unsaved``
when it has one (the embedded store's rule: it knows what it has not committed); a store
without one keeps it -- a remote engine writes at once, and undoing an ``upsert`` that
replaced a node would need the old node and vector read before every write. The error is
then a :class:`PartialWriteError` that lists the URIs written and deleted (``.written``,
``.deleted``, the message the first few), so the caller can check or remove them; adding
the same input again completes the write.
"""

from __future__ import annotations

import contextlib
import inspect
import operator
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from numbers import Real
from typing import Any

import numpy as np

from .._plugins import SHOWN_CHARS, call, failed, passes
from ..errors import PartialWriteError, StoreError
from ..models import Node
from ..redaction import listed, redact
from .base import ScoredNode, StoreCapabilities

_WRITE_METHODS = frozenset(
    {
        "upsert",
        "delete",
        "save",
        "set_tags",
        "put_state",
        "delete_state",
        "drop_state",
        "upsert_many",
    }
)
"""Methods whose failure during a write is the write's (a read failing in another thread
meanwhile is not)."""


_DROPPED = "dropped through the store's discard_unsaved"
_KEPT = (
    "kept by the store (it has no discard_unsaved): check or remove them, or add the same "
    "input again"
)
_NOT_DROPPED = (
    "kept by the store (its discard_unsaved failed or dropped nothing): check or remove "
    "them, or add the same input again"
)


def not_dropped(exc: PartialWriteError) -> None:
    """``exc`` corrected after the store's ``discard_unsaved`` failed or answered that it
    dropped nothing: the nodes are kept, not dropped. Why (helper attacks76): the error is
    made where the store fails, before the writer calls ``discard_unsaved``, and said
    "dropped" (``discarded=True``) even when that call raised and every node stayed."""
    if exc.discarded:
        exc.discarded = False
        text = str(exc)
        exc.args = (
            text.removesuffix(_DROPPED) + _NOT_DROPPED if text.endswith(_DROPPED) else text,
        )


def _journal_lists(
    journal: tuple[list[str], list[str]], inner: object
) -> tuple[tuple[str, ...], tuple[str, ...], bool, str]:
    """What a write's earlier calls changed (``journal``) in store ``inner``: (written,
    deleted, whether the store has ``discard_unsaved``, the bounded, redacted text listing
    them; the fate is said by the caller, last and whole)."""
    written, deleted = tuple(dict.fromkeys(journal[0])), tuple(dict.fromkeys(journal[1]))
    discard = callable(getattr(type(inner), "discard_unsaved", None))
    # (bounded as every plug-in error: at most three URIs of each list, each cut and
    # redacted; .written / .deleted hold them all)
    parts = []
    if written:
        parts.append(f"{len(written)} node(s) this write wrote before: {listed(written, first=3)}")
    if deleted:
        parts.append(f"{len(deleted)} it deleted: {listed(deleted, first=3)}")
    return written, deleted, discard, "; ".join(parts)


def _journaled(guard: GuardedStore, name: str, exc: StoreError) -> PartialWriteError | None:
    """When a write is under way and its earlier calls changed the store, the
    :class:`PartialWriteError` for ``exc`` (the failure of the store's method ``name``)
    saying what; else ``None`` (``exc`` as it is)."""
    journal = guard._journal
    if journal is None or name not in _WRITE_METHODS or not (journal[0] or journal[1]):
        return None
    written, deleted, discard, lists = _journal_lists(journal, guard._inner)
    fate = _DROPPED if discard else _KEPT
    # (the failure's own text cut first, then the lists; the fate last and whole: the writer
    # corrects it when the rollback fails. Redacted: a plug-in's own StoreError passes
    # through as it is, but this message is treehop's, and it echoed a registered key the
    # plug-in's text held -- helper attacks78)
    try:
        own = redact(str(exc)[:160])
    except Exception:  # (a plug-in's StoreError whose __str__ raises: named by its type)
        own = type(exc).__name__[:100]
    body = f"{own}; {lists}"[: SHOWN_CHARS - len(fate) - 2]
    out = PartialWriteError(f"{body}; {fate}", written, deleted, discard)
    out.__context__ = exc.__context__ if exc.__suppress_context__ else exc
    out.__suppress_context__ = True
    return out


def _foreign(what: str, exc: BaseException) -> StoreError:
    return StoreError(failed(f"the store's {what[:100]}", exc))


def _wrong(what: str, expected: str, out: object) -> StoreError:
    return StoreError(
        f"the store's {what[:100]} answered {type(out).__name__[:100]}; expected {expected}"
    )


def _all(out: object, kind: type | tuple[type, ...]) -> bool:
    return isinstance(out, list | tuple) and all(isinstance(x, kind) for x in out)


def _is_hit(hit: object) -> bool:
    """``hit`` is a :class:`ScoredNode` whose scores are real numbers (the lexical one
    ``None`` or a number) and whose ``matches`` is a truth value. Why (helper attacks75):
    the guard checked the class only, and a store's hit scored with a string, ``None``, a
    complex number or an array (a numpy row where a scalar was meant) raised a raw
    ``TypeError`` / ``ValueError`` from the ranking of ``find`` and ``search``."""
    return (
        isinstance(hit, ScoredNode)
        and isinstance(hit.score, Real)
        and isinstance(hit.vector_score, Real)
        and (hit.lexical_score is None or isinstance(hit.lexical_score, Real))
        and isinstance(hit.matches, bool | np.bool_)
    )


def _checked(what: str, out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``out``, the answer of the store's method ``what``, if it has the protocol's shape;
    else a :class:`StoreError`.

    Why: treehop reads the answers of the methods below at once (``hit.node``, ``zip`` of
    ``get``'s answer with the URIs asked, ``child.is_leaf``); a store answering ``None``, a
    list of the wrong items or a shorter list raised a raw ``TypeError`` / ``AttributeError``
    / ``ValueError`` from ``find``, ``ls`` or ``add_resource`` (helper attacks74). An item
    check is an ``isinstance`` each (a search answers ``limit`` hits); a list or tuple only.
    """
    if what == "search" and not (isinstance(out, list | tuple) and all(map(_is_hit, out))):
        raise _wrong(what, "a list of ScoredNode with real-number scores", out)
    if what == "children" and not _all(out, Node):
        raise _wrong(what, "a list of Node", out)
    if what == "get":
        uris = args[0] if args else kwargs.get("uris")
        if not _all(out, (Node, type(None))):
            raise _wrong(what, "a list of Node or None", out)
        if isinstance(uris, list | tuple) and len(out) != len(uris):
            raise StoreError(
                f"the store's get answered {len(out)} items for {len(uris)} URIs; "
                "expected one per URI (None where missing)"
            )
    if what in ("iter_nodes", "iter_uris") and not isinstance(out, Iterable):
        raise _wrong(what, "an iterator", out)
    if what == "state_keys" and not (
        isinstance(out, list | tuple | set | frozenset) and all(isinstance(x, str) for x in out)
    ):
        raise _wrong(what, "a list of str", out)
    if what == "get_state" and out is not None and not isinstance(out, bytes):
        raise _wrong(what, "bytes or None", out)
    if what == "find_by_tags" and not (
        isinstance(out, Mapping) and all(_all(v, Node) for v in out.values())
    ):
        raise _wrong(what, "a mapping of label to a list of Node", out)
    return out


def _guarded_iter(what: str, it: Iterator[Any]) -> Iterator[Any]:
    """``it``, each step under the guard (a generator's body runs as it is read); an item
    of ``iter_nodes`` that is no :class:`Node` is a :class:`StoreError`."""
    while True:
        try:
            item = next(it)
        except StopIteration:
            return
        except BaseException as exc:
            if passes(exc):
                raise
            raise _foreign(what, exc) from None
        if what == "iter_nodes" and not isinstance(item, Node):
            raise _wrong(what, "Node items", item)
        yield item


class _Method:
    """A bound method of the wrapped store, called under the guard."""

    __slots__ = ("_fn", "_guard", "_name")

    def __init__(self, name: str, fn: Callable[..., Any], guard: GuardedStore | None = None):
        self._name = name
        self._fn = fn
        self._guard = guard

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        guard = self._guard
        partial: StoreError | None = None
        try:
            out = call(f"the store's {self._name[:100]}", StoreError, self._fn, *args, **kwargs)
        except StoreError as exc:
            partial = None if guard is None else _journaled(guard, self._name, exc)
            if partial is None:
                raise
        if partial is not None:
            raise partial  # (outside the except: its __context__ stays the store's own error)
        if guard is not None and guard._journal is not None:
            guard._note(self._name, args, kwargs)
        if inspect.isawaitable(out):
            # An ``async def`` method: treehop calls a store synchronously (the async client
            # runs it in a worker thread), so its coroutine would never run -- an ``upsert``
            # lost while ``add_resource`` reported it written. Closed, never awaited here.
            if inspect.iscoroutine(out):
                out.close()
            raise StoreError(
                f"the store's {self._name[:100]} answered a coroutine (an async method); "
                "treehop calls a store's methods synchronously: make them plain methods"
            )
        out = _checked(self._name, out, args, kwargs)
        if isinstance(out, Iterator):
            return _guarded_iter(self._name, out)
        if self._name in ("iter_nodes", "iter_uris"):
            # (an iterable whose ``__iter__`` raises, or answers no iterator: helper attacks75)
            return _guarded_iter(
                self._name, call(f"the store's {self._name[:100]}", StoreError, iter, out)
            )
        return out

    def __repr__(self) -> str:
        return f"<guarded {self._name}>"


class GuardedStore:
    """Wraps a caller's ``inner`` store: its own exceptions become :class:`StoreError`."""

    def __init__(self, inner: object) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_journal", None)

    @property
    def inner(self) -> Any:
        """The wrapped store (the object the caller passed)."""
        return self._inner

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        # ``isinstance(client.store, MyStore)`` as for the caller's object (``type()`` still
        # says GuardedStore). Why: a caller checking the store it passed got False from the
        # wrapper; and a guarded subclass of the embedded store must still take treehop's
        # embedded-store paths (close rather than save, the unsaved checks).
        return type(self._inner)

    def begin_journal(self) -> None:
        """Start noting what ``upsert`` / ``delete`` calls change (a write took the lock):
        a write method failing later in the same write says what stays
        (:class:`PartialWriteError`)."""
        object.__setattr__(self, "_journal", ([], []))

    def end_journal(self, failure: BaseException | None = None, rolled_back: bool = True) -> None:
        """The write is over (committed or rolled back): stop noting. ``failure``: what
        ended it, when not the store (an embedder's, a summarizer's error, a cancellation)
        after the write's earlier calls changed the store: it gets a note (shown under its
        traceback) and the attributes ``written`` / ``deleted`` / ``discarded`` that a
        :class:`PartialWriteError` has; ``rolled_back``: whether the store's
        ``discard_unsaved`` dropped them (False when it failed or dropped nothing).

        Why (helper leftovers65a): a folder's nodes upserted into a caller's store, then the
        embedder failing as the folder above was described again, left 6 nodes in the store
        and an ``EmbeddingError`` that did not say so. Its type stays (a caller catching
        ``EmbeddingError`` still does); what stays in the store is said on it."""
        journal = self._journal
        object.__setattr__(self, "_journal", None)
        if (
            failure is None
            or isinstance(failure, PartialWriteError)
            or journal is None
            or not (journal[0] or journal[1])
        ):
            return
        written, deleted, discard, lists = _journal_lists(journal, self._inner)
        dropped = discard and bool(rolled_back)
        fate = _DROPPED if dropped else _NOT_DROPPED if discard else _KEPT
        said = f"this write failed after changing the store: {lists}"
        # A failure that refuses the note or the attributes (its own ``add_note``, a
        # ``__notes__`` that is not a list, a ``__setattr__`` that refuses, a property that
        # raises) keeps what it is: raised from here, the refusal replaced the caller's
        # error and skipped the rest of the write's exit, so the store's write lock was
        # never let go and every later write of the client failed after its lock_timeout
        # (helper attacks77). A signal raised meanwhile still passes.
        with contextlib.suppress(Exception):
            failure.add_note(f"{said[: SHOWN_CHARS - len(fate) - 2]}; {fate}")
        for attr, value in (("written", written), ("deleted", deleted), ("discarded", dropped)):
            with contextlib.suppress(Exception):
                if not hasattr(failure, attr):
                    setattr(failure, attr, value)

    def _note(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Note the URIs a successful write method of the current write changed; a
        ``save`` commits them (a directory ingest's committed batches are no longer this
        write's to roll back)."""
        journal = self._journal
        if journal is None:
            return
        if name == "save":
            journal[0].clear()
            journal[1].clear()
        elif name == "upsert":
            nodes = args[0] if args else kwargs.get("nodes", ())
            journal[0].extend(str(getattr(n, "uri", "?")) for n in nodes)
        elif name == "delete":
            uris = args[0] if args else kwargs.get("uris", ())
            journal[1].extend(str(u) for u in uris)

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
            return _Method(attr, value, self)
        if attr == "capabilities" and not isinstance(value, StoreCapabilities):
            # (read at once: ``capabilities.remote``; None or a string was a raw
            # ``AttributeError`` out of ``find`` and ``add_resource``; helper attacks75)
            raise _wrong(attr, "a StoreCapabilities", value)
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._inner, attr, value)

    def __len__(self) -> int:
        out = _Method("__len__", self._inner.__len__)()
        # ``len()`` takes an int of at least 0 only: a store answering ``"3"``, ``3.0``,
        # ``None`` or ``-1`` made ``len(store)`` (every write reads it) a raw ``TypeError`` /
        # ``ValueError`` (helper attacks75). A numpy integer is an int here.
        try:
            n = operator.index(out)
        except TypeError:
            raise _wrong("__len__", "an int of at least 0", out) from None
        if n < 0:
            raise StoreError(f"the store's __len__ answered {n}; expected an int of at least 0")
        return n

    def __repr__(self) -> str:
        try:
            inner = repr(self._inner)
        except BaseException as exc:
            # The caller's ``__repr__`` raising made the guard's (a log line, a debugger) raise.
            if passes(exc):
                raise
            inner = f"<{type(self._inner).__name__[:100]}>"
        return f"GuardedStore({inner})"


_GUARDS: weakref.WeakValueDictionary[int, GuardedStore] = weakref.WeakValueDictionary()
"""The wrapper of each store object, by the object's ``id`` (not its hash or ``==``: a
caller's class may define either, and two equal stores are still two stores); weak, so a
wrapper lives as long as a client holds it (while it does, its store lives, and the ``id``
is not reused)."""
_GUARDS_LOCK = threading.Lock()


def guard_store(store: Any) -> Any:
    """``store`` in a :class:`GuardedStore` unless it is treehop's own (a class defined in
    :mod:`treehop.stores`, or an embedded store whose class overrides none of its methods);
    the same wrapper for the same store object (see the module's text)."""
    from .embedded import EmbeddedStore

    if type(store) is GuardedStore:
        return store
    if isinstance(store, EmbeddedStore) and not _overrides(type(store), EmbeddedStore):
        return store
    if type(store).__module__.startswith("treehop.stores."):
        return store
    with _GUARDS_LOCK:
        guard = _GUARDS.get(id(store))
        if guard is None or guard._inner is not store:
            guard = _GUARDS[id(store)] = GuardedStore(store)
    return guard


def _overrides(cls: type, base: type) -> bool:
    """Whether ``cls`` (a subclass of ``base``) defines, outside treehop, a method or
    property of its own in place of one ``base`` has."""
    for klass in cls.__mro__:
        if klass is base:
            return False
        if klass.__module__.startswith("treehop."):
            continue
        for name, value in vars(klass).items():
            if hasattr(base, name) and (callable(value) or isinstance(value, property)):
                return True
    return False
