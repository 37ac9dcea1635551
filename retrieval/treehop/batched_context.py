"""``find_many``'s queries in phases: every query's descent, then every tree context with
the family searches of all of them asked in one store call, then every conclusion.

Why: past the batch's shared first step, a find is a few hundred numpy and Python calls on
arrays of ~50 elements; their cost is per call, not per element. Run query by query, a batch
pays each call once per query. Here a phase runs for every query before the next phase
starts, so that the calls a phase can share run once for the batch: the tree context's family
search (the leaves and directories below each query's pool parents: one gather, one product,
one blend and one sort for every query's rows, :mod:`treehop.stores.embedded.family_batch`;
a family of whole files also gets its leaves' columns from that call). The batch runs with
the cyclic garbage collector paused (:func:`collector_paused`): it keeps every query's state
alive, which made the collector's full passes a batch-only cost.

Each query's result is the one :meth:`HierarchicalRetriever.retrieve` gives it alone (the
same hits, order and scores): the phases run the same steps on the same inputs, in another
order across queries. The steps of one query read nothing another query's steps write but
the store's caches (graph answers of recent queries, subtree rows, BM25 scales), which
change only how fast an answer comes, not what it is.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from .descent import Descent, Track
from .models import QueryResult
from .stores.base import HitArrays, HitColumns, Scope

_T = TypeVar("_T")
_Query = Any
"""A resolved request (``hierarchical_retriever._Query``), held and handed back, never made
here: named ``Any`` so that this module, which the retriever imports, never imports it back
(the import graph stays layered: ``tests/test_import_layers.py``)."""
RetrievalRequest = Any
"""A request (``hierarchical_retriever.RetrievalRequest``), passed through as it came."""


class PhasedRetriever(Protocol):
    """What the phases call on the retriever
    (:class:`~treehop.hierarchical_retriever.HierarchicalRetriever` has each, typed the same
    with its own request and query types)."""

    store: Any

    async def _descend(
        self,
        req: RetrievalRequest,
        first: tuple[HitColumns, int] | None = None,
        q: _Query | None = None,
    ) -> tuple[_Query, Descent, QueryResult]: ...

    async def _conclude(
        self, q: _Query, state: Descent, result: QueryResult, t0: float
    ) -> QueryResult: ...

    async def _context_parents(
        self, q: _Query, state: Descent, result: QueryResult
    ) -> tuple[list[str], list[str], list[str]]: ...

    def _family_arrays_ask(
        self, q: _Query, parents: list[str], inner: list[str]
    ) -> tuple[Scope, int, int] | None: ...

    async def _store_call(
        self, fn: Callable[..., _T], *args: Any, offload: bool = False, **kwargs: Any
    ) -> _T: ...

    async def _context_of_family(
        self,
        q: _Query,
        state: Descent,
        result: QueryResult,
        pool_uris: list[str],
        parents: list[str],
        inner: list[str],
        both: HitArrays | None = None,
    ) -> None: ...


class _Begun:
    """One query between the phases: its state, and the wall time its own steps have taken so
    far (its result's ``elapsed_ms`` counts its own phases, not the others')."""

    __slots__ = ("parents", "q", "result", "spent", "state")

    def __init__(self, q: _Query, state: Descent, result: QueryResult, spent: float) -> None:
        self.q, self.state, self.result, self.spent = q, state, result, spent
        self.parents: tuple[list[str], list[str], list[str]] | None = None


_pause_lock = threading.Lock()
_pauses = 0
_resume = False


@contextmanager
def collector_paused(pause: bool = True) -> Iterator[None]:
    """Python's cyclic garbage collector paused while a batch of finds runs (``pause``),
    and restored after it: enabled again when it was enabled before the first of the
    batches that overlap (threads count the pauses under a lock), left off when the
    caller had turned it off.

    Why: a batch keeps every query's state alive until its last phase (the descents'
    candidates, frontiers and results: ~10-20k tracked objects for 32 queries), so each
    young collection that runs meanwhile finds them alive and moves them to the oldest
    generation, and that soon triggers a full collection, which traverses every object of
    the process (~50-100 ms here). One query at a time, a find's objects die before a
    collection sees them: measured at 100k leaves, batches of 32, the full collections
    came in the batches and not in the single finds, 0.4-0.8 ms a batch query of
    collector time against 0.1-0.2 ms a single find (bench/README.md, "Issue 35 round
    8"). The batch creates no reference cycle of its own to collect; other threads'
    cycles wait at most for the batch (one ``BATCH_STEP``: tens of milliseconds). Not
    paused for a remote store, whose calls may wait on the network."""
    global _pauses, _resume
    if not pause:
        yield
        return
    with _pause_lock:
        if _pauses == 0:
            _resume = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _pause_lock:
            # (at least 0: a child forked inside the pause leaves it too, after its count
            # was reset by _forget_pauses_in_forked_child)
            _pauses = max(0, _pauses - 1)
            if _pauses == 0 and _resume:
                gc.enable()


def _forget_pauses_in_forked_child() -> None:
    """In a child made by ``os.fork``: no batch paused the collector (the threads running
    the parent's batches are not in the child), so the collector is enabled again if they
    had paused it, and the count and its lock start anew. Why (helper attacks68): a child
    forked while another thread ran a batch of finds (a ``multiprocessing`` pool, a
    pre-forking server) inherited the count above 0 and the collector off; no batch of its
    own brought the count back to 0, so the child ran its whole life without the cyclic
    garbage collector, its reference cycles never freed."""
    global _pause_lock, _pauses
    if _pauses and _resume:
        gc.enable()
    _pauses = 0
    _pause_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pauses_in_forked_child)


async def retrieve_in_phases(
    retriever: PhasedRetriever,
    reqs: Sequence[RetrievalRequest],
    first: Sequence[tuple[HitColumns, int] | None],
    resolved: Sequence[_Query] | None = None,
) -> list[QueryResult]:
    """:meth:`HierarchicalRetriever.retrieve` of each request (``first``: its first global
    step's answer, or ``None``; ``resolved``: each request resolved, not yet searched), in
    order, run in phases (see the module)."""
    clock = time.perf_counter
    begun: list[_Begun] = []
    for j, (req, f) in enumerate(zip(reqs, first, strict=True)):
        t0 = clock()
        q, state, result = await retriever._descend(
            req, f, resolved[j] if resolved is not None else None
        )
        begun.append(_Begun(q, state, result, clock() - t0))
    await _tree_contexts(retriever, begun)
    out: list[QueryResult] = []
    for b in begun:
        # (the query's own time: its phases, as if it had run alone)
        out.append(await retriever._conclude(b.q, b.state, b.result, clock() - b.spent))
    return out


async def _tree_contexts(retriever: PhasedRetriever, begun: list[_Begun]) -> None:
    """The tree context of every query: each one's pool and parents, then one
    ``search_arrays_many`` call for every query whose family is one array search
    (:meth:`HierarchicalRetriever._family_arrays_ask`; a family of whole files, whose every
    leaf the scoring reads as columns, gets those columns from the same call, built in one
    pass), then each family scored and placed
    (:meth:`HierarchicalRetriever._context_of_family`)."""
    clock = time.perf_counter
    asked: list[tuple[_Begun, Scope, int, int]] = []
    for b in begun:
        if not b.q.context.active or b.state.track is not Track.VECTOR:
            continue
        t0 = clock()
        b.parents = await retriever._context_parents(b.q, b.state, b.result)
        ask = retriever._family_arrays_ask(b.q, b.parents[1], b.parents[2])
        if ask is not None:
            asked.append((b, *ask))
        b.spent += clock() - t0
    answers: dict[int, HitArrays] = {}
    many = getattr(retriever.store, "search_arrays_many", None)
    if many is not None and len(asked) > 1:
        t0 = clock()
        got: list[HitArrays] = await retriever._store_call(
            many,
            [b.q.req.vector for b, _, _, _ in asked],
            [scope for _, scope, _, _ in asked],
            [ask for _, _, ask, _ in asked],
            query_texts=[b.q.req.query.query for b, _, _, _ in asked],
            dense_weights=[b.q.dense_weight for b, _, _, _ in asked],
            leaf_columns=[leaves for _, _, _, leaves in asked],
        )
        share = (clock() - t0) / len(asked)
        for (b, _, _, _), arrays in zip(asked, got, strict=True):
            answers[id(b)] = arrays
            b.spent += share
    for b in begun:
        if b.parents is None:
            continue
        t0 = clock()
        pool_uris, parents, inner = b.parents
        both: Any = answers.get(id(b))
        await retriever._context_of_family(b.q, b.state, b.result, pool_uris, parents, inner, both)
        b.parents = None
        b.spent += clock() - t0


__all__ = ["retrieve_in_phases"]
