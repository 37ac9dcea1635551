"""Stage 2 (and 3): the hierarchical heap search, with rerank and its fallback.

The algorithm of the seed design, step by step (each step is one method below):

1. roots: the context type's root directory, or the caller's target directories;
2. ``_global_search``: a global search (``global_search_topk`` nodes) inside the roots gives
   candidates, an upper bound on every node it did not return, and the source hits of tag hops;
3. ``_start``: the roots go on the heap (and, in THINKING mode, the hits are reranked);
   ``_add_tag_hops`` may add sideways subtrees;
4. the loop: pop the directory with the best upper bound, ``_open`` it (score its children,
   propagate ``alpha*child + (1-alpha)*parent`` on each score track, collect, push its
   subdirectories), until the top-k is settled -- no directory left on the heap can still
   place a node in it (see :mod:`treehop.descent`) -- or the heap is empty;
5. ``_tree_context``: the best leaves' parents are opened and every leaf's final score takes
   its neighbours', best sibling's and parent's evidence (:mod:`treehop.tree_scoring`);
   directories a leaf below them already beats give up their slots;
   ``_memory_context``: a memory turn's slot carries its neighbouring turns, and a hit already
   carried merges into that slot (:mod:`treehop.memory_context`);
6. ``_finish``: one final ranking of everything collected, one slot per document (a file's
   chunks fold into its best chunk), converted to :class:`~treehop.models.MatchedContext`.

Two score tracks are kept for every candidate (:class:`~treehop.descent.Score`): vector and
rerank. If any rerank call fails, the query falls back to the vector track as a whole, so that
scores of different scales are never mixed, and the result says so. Rerank scores have no
upper bound, so on the rerank track the seed's stop rule applies (top-k unchanged for
``max_convergence_rounds`` rounds).
"""

from __future__ import annotations

import asyncio
import heapq
import operator
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress, filterfalse
from typing import Any, TypeVar, overload

import numpy as np
import numpy.typing as npt

from . import models as _models
from . import uri as urimod
from ._sync import on_caller_loop
from .batched_context import collector_paused, retrieve_in_phases
from .chunk_window import (
    WINDOW_POOL,
    earned_lifts,
    neighbour_uris,
    spread_over_documents,
    unit_cosines,
    weight_max_on,
    weight_max_scores,
    window_earned_on,
    window_gains,
)
from .config import RetrievalConfig, StopRule
from .context_assembly import context_slot_chars
from .descent import (
    NEG_INF,
    Candidate,
    Collected,
    Convergence,
    Descent,
    Frontier,
    FrontierEntry,
    HopOrigin,
    Score,
    SubtreeBounds,
    Track,
    same_passage_nodes,
    score_of,
    weak_mark,
)
from .errors import NotFoundError, TreehopError
from .filters import MetadataFilter, TagFilter
from .hubness import HUB_POOL, MIN_POOL, hub_scores
from .memory_context import (
    Window,
    gather_slots,
    session_lexical_scores,
    with_session_evidence,
)
from .models import (
    ChunkContext,
    ContextType,
    FoundBy,
    MatchedContext,
    Node,
    QueryResult,
    RetrievalMode,
    RoundTrace,
    TypedQuery,
    assign,
    built_model,
    query_result,
)
from .query_shape import (
    is_error_report,
    is_problem_report,
    is_question,
    is_sentence,
    is_title,
)
from .rerankers.base import Reranker, safe_rerank
from .stores.base import (
    ColumnarSearchStore,
    HitArrays,
    HitColumns,
    Scope,
    ScoredNode,
    SiblingWindow,
    Vector,
    VectorStore,
    search_columns,
    unique_inverse,
)
from .tag_hops import TagEvidence, apply_tag_evidence, gather_tag_evidence, plan_tag_hops
from .tree_scoring import (
    ContextColumns,
    ContextWeights,
    SectionCodes,
    SiblingLayout,
    chunk_layout,
    context_columns,
    heading_match,
    is_result_unit,
    query_terms,
    represented_directories,
    section_of,
    sibling_order,
)

T = TypeVar("T")
RERANK_DOC_CHARS = 2000
_max = np.maximum.reduce
_all = np.logical_and.reduce
"""``a.max()`` and ``a.all()`` of a 1-d array without the Python frame of numpy's
``_methods`` wrapper (the same C reduction; ~2-3 us a call in a find, on cold caches)."""
SLOT_STOP = True
"""Whether the descent also stops when no unread row can change the first ``limit`` passage
slots (:meth:`HierarchicalRetriever._slots_settled`); ``False``: the document count alone,
as before (the tests compare the two, and each with unbounded paging)."""
MAX_GLOBAL_FETCH = 10000
"""A deeper global search asks for at most this many nodes; past it the descent walks."""
DEEPER_TURNS = True
"""Whether a memory find that came out short of its ``limit`` with directories left is run
again deeper (:meth:`HierarchicalRetriever._deeper_turn_slots`); ``False``: as before."""
MAX_SESSION_FETCH = MAX_GLOBAL_FETCH
"""The most turns the memory context reads of sessions it searches whole (a store without
``sibling_window``, or a session it cannot read by order): past it, a hit's neighbours are
those of the best ``MAX_SESSION_FETCH`` turns, not of the session (the tests' reference
raises it)."""
DEEPER = 4
"""A deeper global step asks for this many times the nodes of the one before. The first
step fetches that many at once (as columns: no node is built for them) and keeps them, so
that the first deeper step, which the bound asks for whenever the first hits fill fewer than
``limit`` slots (directories, chunks of one file), is read from them instead of being a
second search of the whole scope."""
PREFETCH = DEEPER
"""How many times the first step's nodes the first global search asks for (1: none kept)."""
BATCH_STEP = 32
"""How many requests :meth:`HierarchicalRetriever.retrieve_many` batches at a time."""


@dataclass
class RetrievalRequest:
    """One typed query, resolved: what to search, where, and how."""

    query: TypedQuery
    vector: Vector
    roots: list[str]
    limit: int = 10
    mode: RetrievalMode = RetrievalMode.QUICK
    score_threshold: float | None = None
    tags: TagFilter = field(default_factory=TagFilter)
    metadata: MetadataFilter | None = None
    include_directories: bool | None = None
    """``None``: a directory takes a slot only when it holds content of its own (a skill, a
    directory with its own README/index page, a chunked document:
    :func:`~treehop.tree_scoring.is_result_unit`) and beats every leaf collected below it
    (:func:`~treehop.tree_scoring.represented_directories`); ``True``: always; ``False``:
    never."""
    dense_weight: float | None = None
    explain: bool = False
    collapse_chunks: bool | None = None
    """One slot per document; ``None``: the config's ``collapse_chunks``."""
    slot_chars: int | None = None
    """How much text a slot over documents shows; ``None``: the config's (see
    :meth:`HierarchicalRetriever._slot_chars`)."""
    context_tokens: int | None = None
    """The token budget of the block the result is assembled into (``assemble_context``):
    a question's passage slot then shows no more than about half of it."""


@dataclass
class _Query:
    """A request resolved against the config: what every step of one query reads."""

    req: RetrievalRequest
    threshold: float
    dense_weight: float
    scope: Scope
    hits: dict[str, Score] = field(default_factory=dict)
    """Own scores of the global hits, by URI (tag hops start from them)."""
    fetched: int = 0
    """How many nodes the (last) global step took."""
    prefetched: HitColumns | None = None
    """The last global search's answer (the first one asks for ``PREFETCH`` times the
    first step's nodes), read by the deeper steps it covers and the tree context's pool."""
    prefetch_limit: int = 0
    """How many nodes that search asked for."""
    initial: tuple[HitColumns, int] | None = None
    """The first global search's answer and how many nodes it asked for, made by this query
    or handed in (``find_many``'s batch: the same scope, size and weights): a deeper run of
    the query (:meth:`HierarchicalRetriever._deeper_turn_slots`) asks the same search first,
    so it starts from these columns instead (helper perf59: one search fewer per deeper run;
    leftovers60: a ``find_many`` query's too)."""
    tag_evidence: TagEvidence | None = None
    """Set when tag hops ran with ``tag_evidence_weight`` > 0 (:mod:`treehop.tag_hops`)."""
    question: bool = False
    """A question-shaped query over documents (:meth:`HierarchicalRetriever.
    _question_over_documents`): its slots are passages, not documents."""
    passages: bool = False
    """Its slots are passages (:func:`~treehop.descent.passage_groups`) showing up to
    ``question_context_chars``: a question over documents, or a sentence over documents
    with ``sentence_passages`` (:meth:`HierarchicalRetriever._passage_slots`)."""
    heading_weight: float = 0.0
    """The section-heading term's weight for this query (``question_heading_weight`` for a
    question over documents)."""
    context: ContextWeights = field(default_factory=ContextWeights)
    """The tree context's weights for this query (``question_context_scale``)."""
    unlifted: dict[str, Score] = field(default_factory=dict)
    """The scores before their window gain of the chunks ``question_chunk_window`` lifted
    (:meth:`HierarchicalRetriever._chunk_window`), by URI: a slot is ranked on the window,
    its chunks are shown on their own evidence (:meth:`HierarchicalRetriever._unlift`)."""
    families: Mapping[str, Sequence[ScoredNode]] = field(default_factory=dict)
    """Every scored leaf child of the inner parents the tree context scored completely (its
    search returned fewer leaves than asked), by parent: the memory context reads a session's
    turns from here instead of scoring them again."""
    confined: bool = False
    """Some family the tree context scores lies outside every root (a root that is a leaf,
    e.g. ``target_uri`` naming one file or chunk: its folder is outside the target). Its
    leaves then inform the scores, but only those inside a root may join the list
    (:meth:`within_roots`)."""

    def within_roots(self, uri: str) -> bool:
        """Whether ``uri`` is one of the roots or lies below one (the search's target)."""
        return urimod.within_any(uri, self.req.roots)


class HierarchicalRetriever:
    """Runs one typed query through global search, tag hops, the heap descent and rerank."""

    def __init__(
        self,
        store: VectorStore,
        config: RetrievalConfig,
        reranker: Reranker | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.reranker = reranker
        self._exact_columns = (
            isinstance(store, ColumnarSearchStore) and not store.capabilities.remote
        )
        """Whether the store may answer a search exactly (:attr:`HitColumns.exact`): only then
        does the tree context ask one search where it needs two answers."""
        self._arrays = self._exact_columns and callable(getattr(store, "search_arrays", None))
        """Whether the store answers the tree context's family search as arrays
        (:class:`~treehop.stores.base.HitArrays`, an optional capability checked once);
        other stores take the columns' path, with the same results."""

    def _may_hold_turns(self) -> bool:
        """Whether the store may hold a memory turn (:func:`~treehop.memory_context.
        carries_context`): ``False`` only where it says it holds no memory node at all (an
        optional capability, ``holds_context_type``, read per snapshot), so that a tree of
        documents skips the memory context (its slots are then the ranked groups as they
        are, and no session evidence applies: the same results, without the work)."""
        holds = getattr(self.store, "holds_context_type", None)
        return holds is None or bool(holds(ContextType.MEMORY))

    async def _store_call(
        self, fn: Callable[..., T], *args: Any, offload: bool = False, **kwargs: Any
    ) -> T:
        """Call the store: in a worker thread for remote stores (blocking SDKs) and for the
        global step of a store that allows concurrent reads (``offload``: the one large search
        of a query, whose numpy/HNSW work releases the GIL, so that concurrent queries on this
        event loop overlap with it; not when a sync call runs on its thread's own loop, which
        nothing shares); small in-process calls run inline, where a thread hop would cost
        more than them."""
        caps = self.store.capabilities
        if caps.remote or (offload and caps.concurrent_reads and not on_caller_loop()):
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    async def retrieve_many(self, reqs: Sequence[RetrievalRequest]) -> list[QueryResult]:
        """:meth:`retrieve` of each request, in order, the first global step of all of them
        run as batches (:meth:`_first_steps`) and the rest in phases (every descent, then
        every tree context, then every conclusion: :mod:`treehop.batched_context`); each
        result is the one :meth:`retrieve` gives the request alone. ``BATCH_STEP`` requests
        at a time: the graph keeps the answers of its last 64 queries, which the later
        steps of each find read again. The cyclic garbage collector is paused for each
        step of an in-process store (:func:`~treehop.batched_context.collector_paused`)."""
        out: list[QueryResult] = []
        for lo in range(0, len(reqs), BATCH_STEP):
            part = reqs[lo : lo + BATCH_STEP]
            with collector_paused(len(part) > 1 and not self.store.capabilities.remote):
                out.extend(await self._retrieve_part(part))
        return out

    async def _retrieve_part(self, part: Sequence[RetrievalRequest]) -> list[QueryResult]:
        """One step of :meth:`retrieve_many`, in a frame of its own: the step's per-query
        state (each request resolved, with its global hits, prefetched columns and scored
        families, and its first global answer) is freed as this returns, inside the
        collector's pause, so that the collector, once it resumes, neither counts those
        objects as survivors nor traverses them (measured at 100k leaves, batches of 32:
        ~40% fewer objects alive at the resume; bench/README.md, "Issue 35 round 13")."""
        resolved: list[_Query] = []
        first = await self._first_steps(part, resolved)
        return await retrieve_in_phases(self, part, first, resolved or None)

    async def _first_steps(
        self, reqs: Sequence[RetrievalRequest], resolved: list[_Query] | None = None
    ) -> list[tuple[HitColumns, int] | None]:
        """The answer of each request's first global search (:meth:`_global_step`: the same
        scope, ``PREFETCH`` times ``global_search_topk`` nodes, text and dense weight) and
        the limit it asked for, from one ``search_columns_batch`` call per group of
        requests that share a scope and a dense weight, where the store has that call
        (``None`` for each request elsewhere: :meth:`retrieve` then searches itself).
        ``resolved`` gets each request's :meth:`_resolve`, made here (its descent starts
        from it instead of resolving the request again)."""
        out: list[tuple[HitColumns, int] | None] = [None] * len(reqs)
        batch = getattr(self.store, "search_columns_batch", None)
        if batch is None or len(reqs) < 2:
            return out
        ask = min(PREFETCH * self.config.global_search_topk, MAX_GLOBAL_FETCH)
        groups: list[tuple[Scope, float, list[int]]] = []
        for i, r in enumerate(reqs):
            q = self._resolve(r)
            if resolved is not None:
                resolved.append(q)
            scope = q.scope.replaced(subtrees=tuple(r.roots))
            for g_scope, g_weight, members in groups:
                if g_weight == q.dense_weight and g_scope == scope:
                    members.append(i)
                    break
            else:
                groups.append((scope, q.dense_weight, [i]))
        for scope, weight, members in groups:
            vectors = np.stack(
                [np.asarray(reqs[i].vector, dtype=np.float32).reshape(-1) for i in members]
            )
            answers: list[HitColumns] = await self._store_call(
                batch,
                vectors,
                scope,
                ask,
                query_texts=[reqs[i].query.query for i in members],
                dense_weight=weight,
                offload=True,
            )
            for i, cols in zip(members, answers, strict=True):
                out[i] = (cols, ask)
        return out

    async def retrieve(
        self, req: RetrievalRequest, first: tuple[HitColumns, int] | None = None
    ) -> QueryResult:
        """One typed query. ``first``: its first global search's answer and the limit it
        asked for, already made (:meth:`retrieve_many`)."""
        t0 = time.perf_counter()
        q, state, result = await self._descend(req, first)
        await self._tree_context(q, state, result)
        return await self._conclude(q, state, result, t0)

    async def _descend(
        self,
        req: RetrievalRequest,
        first: tuple[HitColumns, int] | None = None,
        q: _Query | None = None,
        descent_limit: int | None = None,
    ) -> tuple[_Query, Descent, QueryResult]:
        """:meth:`retrieve` up to the tree context: the global step, the starts, tag hops
        and the descent (``find_many`` runs this phase for every query of a batch, then
        their tree contexts together: :mod:`treehop.batched_context`). ``q``: the request
        resolved already, not yet searched (:meth:`_first_steps`). ``descent_limit``: the
        candidates the stop rule waits for, in place of the request's limit
        (:meth:`_deeper_turn_slots`)."""
        if q is None:
            q = self._resolve(req)
        if first is not None:
            q.prefetched, q.prefetch_limit = first
            q.initial = first  # (find_many's batch answer, kept for a deeper run as a find's)
        result = query_result(req.query)
        state = self._new_descent(q)
        if descent_limit is not None:
            state.limit = descent_limit
        elif self._window_descent(q):
            state.limit = max(state.limit, WINDOW_POOL, 3 * req.limit)
        hits = await self._global_search(q, state, self.config.global_search_topk, result)
        await self._start(q, state, hits, result)
        await self._add_tag_hops(q, state, hits, result)
        while state.frontier:
            if state.rounds >= self.config.max_rounds:
                state.stop_reason = f"max_rounds ({self.config.max_rounds}) reached"
                break
            bounded = state.use_bound and state.track is Track.VECTOR
            kth = state.kth() if bounded else NEG_INF
            if state.settled(kth):
                state.stop_reason = f"top-{state.limit} settled: no directory left can enter it"
                state.bound_stopped = True
                break
            if q.fetched < MAX_GLOBAL_FETCH and state.wants_deeper_global(kth):
                n = min(DEEPER * q.fetched, MAX_GLOBAL_FETCH)
                await self._deeper_global_search(q, state, n, result)
                continue
            if bounded and SLOT_STOP and self._slots_settled(q, state, kth):
                state.stop_reason = (
                    f"top-{req.limit} passage slots settled: no row left can change them"
                )
                break
            entry = state.frontier.pop()
            if entry.uri in state.visited and not entry.seen:
                continue
            await self._open(q, state, entry, result)
            if state.converged(in_hop=entry.hop is not None):
                rounds = self.config.max_convergence_rounds
                # (the limit the rule waited for: ``state.limit``, larger than the
                # request's in a window descent or a deeper turn run; helper pipeline77)
                state.stop_reason = f"top-{state.limit} unchanged for {rounds} rounds"
                break
        return q, state, result

    def _window_descent(self, q: _Query) -> bool:
        """Whether the descent settles the chunk window's pool rather than the ``limit``
        (``question_window_descent``): a question over documents whose best collected
        chunks the window lifts (:meth:`_chunk_window`, vector track only: a reranked
        descent has no bound to settle)."""
        cfg = self.config
        return (
            cfg.question_window_descent
            and q.question
            and cfg.question_chunk_window
            and not (q.req.mode is RetrievalMode.THINKING and self.reranker is not None)
        )

    async def _conclude(
        self, q: _Query, state: Descent, result: QueryResult, t0: float
    ) -> QueryResult:
        """:meth:`retrieve` after the tree context: the hub correction, tag evidence, the
        memory context and the results (``t0``: when the query's work began)."""
        groups, turns = await self._slots(q, state, result)
        if DEEPER_TURNS and len(groups) < q.req.limit and state.bound_stopped:
            deeper = await self._deeper_turn_slots(q, state, result, len(groups))
            if deeper is not None:
                q, state, result, groups, turns = deeper
        return self._finish(q, state, result, t0, groups, turns)

    async def _slots(
        self, q: _Query, state: Descent, result: QueryResult
    ) -> tuple[list[list[Candidate]], list[list[ChunkContext]] | None]:
        """The chunk window, the hub correction, tag evidence and the memory context: the
        result's slots (:meth:`_memory_context`)."""
        self._weight_max(q, state)
        await self._chunk_window(q, state)
        await self._hub_correction(q, state)
        if q.tag_evidence is not None and state.track is Track.VECTOR:
            apply_tag_evidence(
                state.collected.values(), q.tag_evidence, self.config.tag_evidence_weight
            )
        return await self._memory_context(q, state, result)

    async def _deeper_turn_slots(
        self, q: _Query, state: Descent, result: QueryResult, got: int
    ) -> (
        tuple[_Query, Descent, QueryResult, list[list[Candidate]], list[list[ChunkContext]] | None]
        | None
    ):
        """A find over memory turns that came out with fewer slots than its ``limit`` while
        its descent stopped on the bound with directories left, run again with the descent
        waiting for twice the candidates (and again, doubling, while that still stops on
        the bound short of ``limit`` slots); the deeper run's whole result where it has
        more slots than ``got``, else ``None`` (the first result stands, unchanged).

        Why: the bound counts candidates as a lower bound on the slots, one a turn, but a
        turn hit that an earlier slot carries as context merges into it
        (:func:`~treehop.memory_context.plan_slots`), so the descent could stop at its first
        round with sessions unopened that hold turns above the threshold: ``find(limit=10)``
        gave 7-9 slots (helper fill57). Why a whole run and not a fill appended to the
        first slots: every slot's score is the tree context's (its family scored with the
        others'), which a fill outside that ranking did not give (stop 57 reverted one)."""
        if not self._may_hold_turns():
            return None
        scored, limit = result.nodes_scored, state.limit
        best = None
        while limit < MAX_GLOBAL_FETCH:
            limit = min(2 * limit, MAX_GLOBAL_FETCH)
            q2, state2, result2 = await self._descend(q.req, q.initial, descent_limit=limit)
            await self._tree_context(q2, state2, result2)
            groups, turns = await self._slots(q2, state2, result2)
            scored += result2.nodes_scored
            if len(groups) > got:
                best = (q2, state2, result2, groups, turns)
                got = len(groups)
            if got >= q.req.limit or not state2.bound_stopped:
                break
        if best is not None:
            assign(best[2], nodes_scored=scored)
        return best

    # ------------------------------------------------------------------ steps
    def _resolve(self, req: RetrievalRequest) -> _Query:
        cfg = self.config
        question = self._question_over_documents(req) or (
            (
                (cfg.question_error_reports and is_error_report(req.query.query))
                or (
                    cfg.problem_report_passages
                    and cfg.question_problem_reports
                    and is_problem_report(req.query.query)
                )
                or self._question_by_shape(req.query.query)
            )
            and self._over_documents(req)
        )
        dense_weight = cfg.dense_weight
        heading_weight = cfg.context_heading_weight
        scale = 1.0
        if question:
            if cfg.question_dense_weight is not None:
                # never below the configured weight: a dense-only setup stays dense-only
                dense_weight = max(dense_weight, cfg.question_dense_weight)
            if cfg.question_heading_weight is not None:
                heading_weight = cfg.question_heading_weight
            scale = cfg.question_context_scale
        return _Query(
            req=req,
            threshold=cfg.score_threshold if req.score_threshold is None else req.score_threshold,
            dense_weight=dense_weight if req.dense_weight is None else req.dense_weight,
            scope=Scope(
                tags=req.tags,
                metadata=req.metadata,
                traversal=True,
            ),
            question=question,
            passages=question or self._passage_slots(req),
            heading_weight=heading_weight,
            context=ContextWeights(
                cfg.context_neighbour_weight * scale,
                cfg.context_parent_weight * scale,
                cfg.context_sibling_weight * scale,
            ),
        )

    @staticmethod
    def _question_over_documents(req: RetrievalRequest) -> bool:
        """Whether the query is question-shaped (:func:`~treehop.query_shape.is_question`)
        and searches documents only (no root in the memories: a conversation turn answers a
        question together with its neighbours, so the memory path keeps its weights)."""
        return is_question(req.query.query) and HierarchicalRetriever._over_documents(req)

    def _question_by_shape(self, text: str) -> bool:
        """Whether a query that is not question-shaped is read as one by its shape alone: a
        sentence with ``question_sentences`` (it already takes passage slots with
        ``sentence_passages``), a title with ``question_titles``. Reports are routed by
        their own options first."""
        cfg = self.config
        if cfg.question_sentences and cfg.sentence_passages and is_sentence(text):
            return not (is_error_report(text) or is_problem_report(text))
        return cfg.question_titles and is_title(text)

    def _passage_slots(self, req: RetrievalRequest) -> bool:
        """Whether a query that is not a question takes passage slots: a sentence
        (:func:`~treehop.query_shape.is_sentence`, with ``sentence_passages``) or a problem
        report (:func:`~treehop.query_shape.is_problem_report`, with
        ``problem_report_passages``) over documents; its weights stay those of other
        queries."""
        cfg = self.config
        text = req.query.query
        return (
            (cfg.sentence_passages and is_sentence(text))
            or (cfg.problem_report_passages and is_problem_report(text))
        ) and self._over_documents(req)

    @staticmethod
    def _over_documents(req: RetrievalRequest) -> bool:
        """Whether no root of the search lies in the memories."""
        for root in req.roots:
            try:
                if urimod.context_type_of(root) is ContextType.MEMORY:
                    return False
            except TreehopError:
                return False
        return True

    async def _search(
        self, q: _Query, scope: Scope, limit: int, offload: bool = False
    ) -> list[ScoredNode]:
        hits: list[ScoredNode] = await self._store_call(
            self.store.search,
            q.req.vector,
            scope,
            limit,
            query_text=q.req.query.query,
            dense_weight=q.dense_weight,
            offload=offload,
        )
        return hits

    def _new_descent(self, q: _Query) -> Descent:
        cfg = self.config
        use_rerank = q.req.mode is RetrievalMode.THINKING and self.reranker is not None
        alpha = cfg.score_propagation_alpha
        use_bound = cfg.stop_rule is StopRule.BOUND
        return Descent(
            limit=q.req.limit,
            alpha=alpha,
            threshold=q.threshold,
            track=Track.RERANK if use_rerank else Track.VECTOR,
            collected=Collected(
                collapse=cfg.collapse_chunks
                if q.req.collapse_chunks is None
                else q.req.collapse_chunks,
                budget=self._slot_chars(q),
                passages=q.passages,
                join_adjacent=cfg.join_adjacent_hits,
                headless=cfg.headless_entry_slots,
                fill=q.req.limit if cfg.few_document_passages else 0,
            ),
            frontier=Frontier(SubtreeBounds(alpha), alpha, by_bound=use_bound),
            convergence=Convergence(cfg.max_convergence_rounds),
            use_bound=use_bound,
        )

    def _slots_settled(self, q: _Query, state: Descent, kth: float) -> bool:
        """The stop rule by passage slots (:meth:`~treehop.descent.Collected.
        passages_settled`), where the document count has not settled the top-k: a question's
        (or sentence's) passage slots over documents, or a topical query's filled slots
        (``few_document_passages``: asked only for the question's at first, a topical find
        over one file of 16,000 entries paged it for 200 rounds), alpha = 1, fewer
        documents than slots or the best directory left being paged, every directory left
        on the heap a document whose chunks are collected (what is unread is more of its
        chunks, as ingest writes a file: the tree context's parents stay the same), no
        memory turn in the store. Why: one document of many answers, fewer documents than
        the limit, was paged ``max_children_per_dir`` rows a round for ``max_rounds`` rounds
        while its first slots were long settled (bench/README.md, "Paging: a stop rule by
        slots"). It ranks every candidate, so while it fails it is asked at its 1st, 3rd,
        7th, 15th, ... chance only."""
        coll, cfg = state.collected, self.config
        passages = q.passages and coll.passages
        if not (coll.collapse and (passages or coll.fill > 0) and state.alpha >= 1.0):
            return False
        if not (kth == NEG_INF or state.frontier.top_paged()):
            return False  # (not the case it is for: fewer documents than slots, or paging)
        roots, visited = set(q.req.roots), state.visited
        # (an entry of a directory opened already, not a page of its rest, is skipped by the
        # loop when popped: it holds nothing unread)
        unread = {e.uri for e in state.frontier.entries() if e.seen or e.uri not in visited}
        if not roots.isdisjoint(unread):
            return False  # (a root left: not yet opened; the common case, asked first)
        if state.slot_wait > 0:
            state.slot_wait -= 1
            return False
        if self._may_hold_turns():
            return False
        state.slot_every *= 2  # (read only if this check fails: the descent stops otherwise)
        state.slot_wait = state.slot_every - 1
        docs = {c.document for c in coll.values() if c.chunk_index is not None}
        if not unread <= docs:
            return False
        pool = 0
        if q.question and cfg.question_chunk_window:
            pool = max(WINDOW_POOL, 3 * q.req.limit)
        if q.question and cfg.question_hub_weight > 0:
            pool = max(pool, HUB_POOL)
        own = q.question and cfg.question_grow_own
        penalty = cfg.question_document_penalty * q.dense_weight if q.question else 0.0
        hits, read = q.hits, state.read
        return coll.passages_settled(
            q.req.limit,
            state.frontier.best_bound(),
            _own_score(Track.VECTOR) if own else None,
            penalty,
            pool,
            lambda u: u in read or u in hits or u in roots,
        )

    def _slot_chars(self, q: _Query) -> int:
        """How much text a slot shows: ``question_context_chars`` for a passage slot (a
        question, or a sentence, over documents) when set, else ``document_context_chars``;
        inside an ``assemble_context`` block a passage slot shows at most about half the block
        (:func:`~treehop.context_assembly.context_slot_chars`); a request's ``slot_chars``
        overrides all of these."""
        if q.req.slot_chars is not None:
            return q.req.slot_chars
        cfg = self.config
        if q.passages and cfg.question_context_chars is not None:
            if q.req.context_tokens is not None:
                return context_slot_chars(
                    q.req.context_tokens, cfg.document_context_chars, cfg.question_context_chars
                )
            return cfg.question_context_chars
        return cfg.document_context_chars

    async def _global_search(
        self, q: _Query, state: Descent, n: int, result: QueryResult
    ) -> list[ScoredNode]:
        """The ``n`` best nodes inside the roots; everything else is bounded by the last.

        The search asks for ``DEEPER * n`` nodes as columns and keeps them for the first
        deeper step (:meth:`_deeper_global_search`); only the first ``n`` are built into
        hits (tag hops and a reranker read their nodes).
        """
        cols, new = await self._global_step(q, state, n, result)
        return cols.hits(new)

    async def _deeper_global_search(
        self, q: _Query, state: Descent, n: int, result: QueryResult
    ) -> None:
        """A "deeper" global step, when the bound cannot settle the top-k otherwise: one more
        search is cheaper than opening every directory. Its new hits join as the first ones
        did (vector track), as candidates whose nodes are built only if they are read."""
        cols, new = await self._global_step(q, state, n, result)
        uris, scores = cols.uris, cols.scores
        owns = [score_of(scores[i]) for i in new]
        if state.alpha >= 1.0:  # with alpha < 1 a hit waits for its parent to be opened
            self._collect_columns(q, state, cols, new, owns)
        q.hits.update(zip([uris[i] for i in new], owns, strict=True))
        state.frontier.rekey(state.track)

    async def _global_step(
        self, q: _Query, state: Descent, n: int, result: QueryResult
    ) -> tuple[HitColumns, list[int]]:
        """The columns of the ``n`` best nodes inside the roots (maybe more: only the first
        ``n`` count) and the positions of those that are new hits; the bound's floor moves
        to the ``n``-th score."""
        pre = q.prefetched
        if pre is not None and (n <= q.prefetch_limit or len(pre) < q.prefetch_limit):
            cols = pre  # asked for at least n, or it returned everything in scope
        else:
            ask = min(PREFETCH * n, MAX_GLOBAL_FETCH) if pre is None else n
            scope = q.scope.replaced(subtrees=tuple(q.req.roots))
            cols = await self._search_columns(q, scope, ask, offload=True)
            q.prefetched, q.prefetch_limit = cols, ask
            if pre is None:
                q.initial = (cols, ask)
        took = min(n, len(cols))
        assign(result, nodes_scored=result.nodes_scored + took)
        q.fetched = n
        # When fewer than asked came back, the search returned everything in scope.
        floor = cols.scores[n - 1] if len(cols) >= n else NEG_INF
        roots, hits, leaves = set(q.req.roots), q.hits, cols.leaves
        # A root is opened, not a hit, unless it is a leaf (a target naming one file or
        # chunk): then it is the one thing the search may find.
        new = [
            i
            for i, u in enumerate(cols.uris[:took])
            if (u not in roots or leaves[i]) and u not in hits
        ]
        # (the bounds read the hits' ancestors only when alpha < 1)
        matched = [i for i in new if cols.matches[i]] if state.alpha < 1.0 else []
        nodes = cols.load(matched) if matched else []
        state.frontier.bounds.update(
            floor, [(node, cols.scores[i]) for i, node in zip(matched, nodes, strict=True)]
        )
        return cols, new

    @staticmethod
    def _collect_columns(
        q: _Query, state: Descent, cols: HitColumns, new: list[int], owns: list[Score]
    ) -> None:
        """:meth:`_collect` of global hits read as columns (alpha = 1: their own scores are
        final), a node built only for a directory that must show it is a result unit. (One
        loop over a deeper step's ~30 hits, the columns read once: a method call per hit was
        a visible share of the step.)"""
        passes, track, add = state.passes, state.track, state.collected.add
        dirs = q.req.include_directories
        if LEAN_CANDIDATES and track is Track.VECTOR:
            load = cols.load
            admit = (
                None
                if dirs is False
                else (lambda i: True)
                if dirs is True
                else (lambda i: is_result_unit(load([i])[0]))
            )
            state.collected.add_global(new, owns, state.threshold, cols, admit)
            return
        uris, parents, chunks = cols.uris, cols.parent_uris, cols.chunk_indexes
        leaves, matches, vector_scores = cols.leaves, cols.matches, cols.vector_scores
        for i, own in zip(new, owns, strict=True):
            if not passes(own) or not matches[i]:
                continue
            leaf = leaves[i]
            if not (leaf or dirs is True or (dirs is None and is_result_unit(cols.load([i])[0]))):
                continue
            cand = Candidate.deferred_at(
                uris[i],
                parents[i],
                chunks[i],
                leaf,
                cols.load,
                i,
                own,
                own,
                vector_scores[i],
                FoundBy.GLOBAL,
            )
            add(cand, track)

    def _take_hits(
        self, q: _Query, state: Descent, hits: list[ScoredNode], rr: list[float] | None
    ) -> None:
        if LEAN_CANDIDATES and rr is None and state.alpha >= 1.0 and state.track is Track.VECTOR:
            self._take_vector_hits(q, state, hits)
            return
        for i, h in enumerate(hits):
            own = score_of(h.score, rr[i] if rr is not None else None)
            q.hits[h.node.uri] = own
            # With alpha = 1 a node's final score is its own: no need to wait for its parent.
            if state.alpha >= 1.0:
                self._collect(q, state, h, own, own, None, None)

    @staticmethod
    def _take_vector_hits(q: _Query, state: Descent, hits: list[ScoredNode]) -> None:
        """:meth:`_take_hits` on the vector track at alpha = 1 (every hit's final score is
        its own) without a reranker's scores: :meth:`_collect` of each hit written out (a
        global hit, found by the global step), the same candidates added in the same order.
        (Ten hits a find: the three calls per hit were a third of this step.)"""
        found, threshold = q.hits, state.threshold
        dirs = q.req.include_directories
        add, track, by_global = state.collected.add, state.track, FoundBy.GLOBAL
        for h in hits:
            own = score_of(h.score, None)
            node = h.node
            found[node.uri] = own
            if not own.vec > threshold or not h.matches:
                continue
            if node.is_leaf or dirs is True or (dirs is None and is_result_unit(node)):
                add(Candidate(node, own, own, h.vector_score, by_global), track)

    async def _start(
        self, q: _Query, state: Descent, hits: list[ScoredNode], result: QueryResult
    ) -> None:
        rr = None
        if state.track is Track.RERANK:  # (no rerank on the vector track: nothing to ask)
            rr = await self._rerank(q, state, [h.node for h in hits], result)
        self._take_hits(q, state, hits, rr)
        assign(result, starting_points=[(h.node.uri, h.score) for h in hits])
        if state.frontier.by_bound:
            # Bounded descent: everything flows from the roots, so every final score is the
            # same blend along the node's path, whichever way it was reached.
            for root in q.req.roots:
                state.frontier.push(root, None, state.track)
            return
        for uri, score in (await self._seed_starts(q, hits)).items():
            state.frontier.push(uri, score, state.track)

    async def _seed_starts(self, q: _Query, hits: list[ScoredNode]) -> dict[str, Score]:
        """The seed's starting points: directory hits and parents of leaf hits at their own
        scores, the roots at zero (the CONVERGENCE rule). A parent a concurrent write deleted
        since the global search (or a leaf's folder removed on its own earlier) is no
        starting point: the find goes on without it, never fails over a node the caller did
        not name (:meth:`_present_vectors`)."""
        roots = set(q.req.roots)
        starts: dict[str, Score] = {}
        parents: dict[str, float | None] = {}
        for h in hits:
            own = q.hits[h.node.uri]
            if not h.node.is_leaf:
                if h.node.uri not in starts or own.vec > starts[h.node.uri].vec:
                    starts[h.node.uri] = own
            elif (
                self.config.expand_leaf_parents
                and h.node.parent_uri not in roots
                and q.within_roots(h.node.parent_uri or "")
            ):
                # (the folder of a root that is a leaf lies outside the target: not opened)
                p = h.node.parent_uri
                assert p is not None
                prev = parents.get(p)
                parents[p] = own.rr if prev is None or own.rr is None else max(prev, own.rr)
        extra = [u for u in parents if u not in starts]
        found = await self._present_vectors(extra) if extra else None
        if found is not None:
            kept, pvecs = found
            own_vec = np.asarray(pvecs, np.float32) @ np.asarray(q.req.vector, np.float32)
            for i, v in zip(kept, own_vec.tolist(), strict=True):
                starts[extra[i]] = Score(float(v), parents[extra[i]])
        reranked = any(s.rr is not None for s in q.hits.values())
        for root in q.req.roots:
            starts.setdefault(root, Score(0.0, 0.0 if reranked else None))
        return starts

    async def _add_tag_hops(
        self, q: _Query, state: Descent, hits: list[ScoredNode], result: QueryResult
    ) -> None:
        """Tag hops, between the starting points and the descent (seed step 3b)."""
        hop_starts, metrics = await self._store_call(
            plan_tag_hops, self.store, hits, q.req.roots, q.scope, self.config
        )
        assign(result, tag_hops=metrics)
        for hs in hop_starts:
            start = q.hits[hs.source].scaled(self.config.tag_hop_score_factor)
            state.frontier.push(hs.uri, start, state.track, HopOrigin(hs.tag, hs.source))
            result.starting_points.append((hs.uri, start.vec))
        if result.tag_hops.triggered and self.config.tag_evidence_weight > 0:
            q.tag_evidence, leaves = await self._store_call(
                gather_tag_evidence,
                self.store,
                hits,
                q.req.roots,
                q.scope,
                self.config,
                lambda scope, n: self.store.search(
                    q.req.vector,
                    scope,
                    n,
                    query_text=q.req.query.query,
                    dense_weight=q.dense_weight,
                ),
                q.req.limit,
            )
            for hl in leaves:
                own = Score(hl.hit.score)
                self._collect(q, state, hl.hit, own, own, None, HopOrigin(hl.tag, hl.source))

    async def _rerank(
        self, q: _Query, state: Descent, nodes: Sequence[Node], result: QueryResult
    ) -> list[float] | None:
        """One rerank call for a batch; ``None`` on the vector track or after a failure."""
        if state.track is not Track.RERANK or not nodes:
            return None
        assert self.reranker is not None
        docs = [n.embedding_text()[:RERANK_DOC_CHARS] for n in nodes]
        result.rerank_calls += 1
        outcome = await safe_rerank(
            self.reranker, q.req.query.query, docs, self.config.rerank_timeout_s
        )
        if outcome.scores is None:
            state.fall_back(outcome.fallback_reason)
            return None
        return outcome.scores

    async def _open(
        self, q: _Query, state: Descent, entry: FrontierEntry, result: QueryResult
    ) -> None:
        """One round: score a directory's children, collect them, push its subdirectories."""
        cfg = self.config
        state.visited.add(entry.uri)
        state.rounds += 1
        result.rounds += 1
        result.searched_directories.append(entry.uri)
        scope = q.scope.replaced(parent_uri=entry.uri, exclude_uris=entry.seen)
        children = await self._search(q, scope, cfg.max_children_per_dir)
        result.nodes_scored += len(children)
        rr = await self._rerank(q, state, [c.node for c in children], result)
        if len(children) >= cfg.max_children_per_dir:
            # Truncated: the rest of this directory stays on the heap with the same bound.
            seen = entry.seen | {c.node.uri for c in children}
            state.frontier.push(entry.uri, entry.score, state.track, entry.hop, seen)
        best: list[tuple[str, float]] = []
        for i, c in enumerate(children):
            own = score_of(c.score, rr[i] if rr is not None else None)
            final = own.propagate(entry.score, state.alpha)
            if self._collect(q, state, c, own, final, entry.uri, entry.hop):
                best.append((c.node.uri, final.on(state.track)))
            if not c.node.is_leaf:
                state.read.add(c.node.uri)
                if c.node.uri not in state.visited:
                    self._push_directory(state, c.node.uri, final, entry.hop)
        if q.req.explain:
            self._trace(state, entry, len(children), best)

    def _collect(
        self,
        q: _Query,
        state: Descent,
        hit: ScoredNode,
        own: Score,
        final: Score,
        via: str | None,
        hop: HopOrigin | None,
    ) -> bool:
        """Add a scored node to the candidates if it may be returned; True if it passed."""
        node = hit.node
        if not state.passes(final):
            return False
        if hit.matches and self._may_take_slot(q, node):
            if hop is not None:
                found_by = FoundBy.TAG_HOP
            elif node.uri in q.hits:
                found_by, via = FoundBy.GLOBAL, None
            else:
                found_by = FoundBy.CHILD
            cand = Candidate(node, own, final, hit.vector_score, found_by, via, hop)
            state.collected.add(cand, state.track)
        return True

    @staticmethod
    def _may_take_slot(q: _Query, node: Node) -> bool:
        """``include_directories``: ``False`` leaves only, ``True`` every node, ``None`` the
        nodes that hold content of their own (:func:`~treehop.tree_scoring.is_result_unit`);
        a directory left out still routes the descent."""
        if node.is_leaf or q.req.include_directories is True:
            return True
        return q.req.include_directories is None and is_result_unit(node)

    def _push_directory(
        self, state: Descent, uri: str, final: Score, hop: HopOrigin | None
    ) -> None:
        # A subtree whose every node must score at or below the threshold is not opened; the
        # seed's rule (no bound) drops a directory whose own propagated score is below it.
        if state.frontier.by_bound and state.track is Track.VECTOR:
            if state.frontier.bounds.upper(uri, final, state.alpha) <= state.threshold:
                return
        elif not state.passes(final):
            return
        state.frontier.push(uri, final, state.track, hop)

    async def _present_vectors(self, uris: list[str]) -> tuple[list[int], Vector] | None:
        """``get_vectors(uris)`` for the nodes of ``uris`` that are still there: the
        positions kept and their vectors. The descent collected these nodes from earlier
        reads; a concurrent write may have deleted some since, and the store's
        ``NotFoundError`` for a node the caller never named must not fail the find. On a
        miss, one ``get`` says which are gone and the rest are read again; a second miss in
        a row (another delete meanwhile), or nothing left: ``None`` (the caller goes on
        without them). No extra call when nothing is missing.

        A store that reads the nodes still there in one snapshot (the embedded store's
        ``present_vectors``) answers in one call, a missing URI left out rather than raised:
        a question's chunk window asks for every chunk's next one, which past a file's last
        chunk never exists, and the miss-then-retry doubled that step's cost."""
        present = getattr(self.store, "present_vectors", None)
        if present is not None:
            at, vectors = await self._store_call(present, uris)
            kept = np.asarray(at, dtype=np.int64).tolist()
            return (kept, vectors) if kept else None
        try:
            return list(range(len(uris))), await self._store_call(self.store.get_vectors, uris)
        except NotFoundError:
            pass
        nodes = await self._store_call(self.store.get, uris)
        kept = [i for i, n in enumerate(nodes) if n is not None]
        if not kept:
            return None
        try:
            vectors = await self._store_call(self.store.get_vectors, [uris[i] for i in kept])
        except NotFoundError:
            return None
        return kept, vectors

    def _weight_max(self, q: _Query, state: Descent) -> None:
        """A question over documents with ``question_weight_max`` (off by default): each
        collected leaf scores the larger of its fusion at the question's dense weight and at
        the configured ``dense_weight`` (flat hybrid's), read back from its fused score and
        its cosine (:func:`~treehop.chunk_window.weight_max_scores`), before the chunk window.
        Its own and final scores both rise by the same amount. Vector track only."""
        if not (q.question and weight_max_on(self.config.question_weight_max)):
            return
        if state.track is not Track.VECTOR:
            return
        cands = [c for c in state.collected.values() if c.is_leaf]
        if not cands:
            return
        own = np.array([c.own.vec for c in cands], dtype=np.float64)
        cos = np.array([c.vector_score for c in cands], dtype=np.float64)
        best = weight_max_scores(own, cos, q.dense_weight, self.config.dense_weight)
        for i in np.flatnonzero(best > own).tolist():
            c = cands[i]
            gain = float(best[i] - own[i])
            c.own = score_of(c.own.vec + gain, c.own.rr)
            c.final = score_of(c.final.vec + gain, c.final.rr)

    async def _chunk_window(self, q: _Query, state: Descent) -> None:
        """A question over documents with ``question_chunk_window``: each of the best
        :data:`~treehop.chunk_window.WINDOW_POOL` collected chunks gains the query's dense
        weight times how much its window (itself with its previous and next chunk) is closer
        to the query than it is alone (:func:`~treehop.chunk_window.window_gains`). One
        read of the chunks' and their neighbours' vectors (a neighbour a write deleted, or
        past a document's last chunk, is left out: :meth:`_present_vectors`).
        Vector track only."""
        if not (q.question and self.config.question_chunk_window):
            return
        if state.track is not Track.VECTOR:
            return
        cands = [c for c in state.collected.values() if c.is_leaf and c.chunk_index is not None]
        pool = max(WINDOW_POOL, 3 * q.req.limit)
        if len(cands) > pool and not self._window_descent(q):
            cands = heapq.nlargest(pool, cands, key=operator.attrgetter("final.vec"))
        near = [neighbour_uris(c.uri, c.chunk_index) for c in cands]
        if not any(near):
            return
        row: dict[str, int] = {c.uri: i for i, c in enumerate(cands)}
        for pair in near:
            for u in pair:
                row.setdefault(u, len(row))
        uris = list(row)
        found = await self._present_vectors(uris)
        if found is None:
            return
        kept, vectors = found
        at = np.full(len(uris), -1, dtype=np.int64)
        at[np.asarray(kept, dtype=np.int64)] = np.arange(len(kept))
        own = at[: len(cands)]
        prev = np.array([at[row[n[0]]] if len(n) == 2 else -1 for n in near], dtype=np.int64)
        nxt = np.array([at[row[n[-1]]] if n else -1 for n in near], dtype=np.int64)
        ok = own >= 0
        if not ok.any():
            return
        gains = np.zeros(len(cands))
        gains[ok] = window_gains(q.req.vector, vectors, own[ok], prev[ok], nxt[ok])
        lifts = q.dense_weight * gains
        lifted = gains > 0
        if window_earned_on(self.config.question_window_earned):
            lifts = self._earned(q, state, cands, uris, at, near, vectors, lifts)
            lifted = lifts > 0
        for i in np.flatnonzero(lifted).tolist():
            c = cands[i]
            q.unlifted[c.uri] = c.final
            c.final = score_of(c.final.vec + float(lifts[i]), c.final.rr)

    @staticmethod
    def _earned(
        q: _Query,
        state: Descent,
        cands: list[Candidate],
        uris: list[str],
        at: npt.NDArray[np.int64],
        near: list[tuple[str, ...]],
        vectors: npt.NDArray[np.floating],
        lifts: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.float64]:
        """``question_window_earned``: each chunk's window lift capped at what a chunk of its
        window earns alone (:func:`~treehop.chunk_window.earned_lifts`). A neighbour the
        descent collected earns its score before the window (its fusion of cosine and BM25);
        one it did not collect earns the dense part of a fusion, the query's dense weight
        times its cosine (the least its fusion could be). A neighbour whose vector is gone
        earns nothing."""
        cos = unit_cosines(q.req.vector, vectors)
        earned = np.full(len(uris), -np.inf)
        for j, u in enumerate(uris):
            if at[j] < 0:
                continue
            c = state.collected.by_uri.get(u)
            if c is not None and c.is_leaf:
                earned[j] = c.final.vec
            else:
                earned[j] = q.dense_weight * float(cos[at[j]])
        row = {u: j for j, u in enumerate(uris)}
        prev = np.array([earned[row[n[0]]] if len(n) == 2 else -np.inf for n in near])
        nxt = np.array([earned[row[n[-1]]] if n else -np.inf for n in near])
        scores = np.array([c.final.vec for c in cands], dtype=np.float64)
        return earned_lifts(lifts, scores, prev, nxt)

    @staticmethod
    def _unlift(groups: list[list[Candidate]], unlifted: Mapping[str, Score]) -> None:
        """After the slots are ranked on the window-lifted scores: each slot's chunks get their
        own scores back and its face is its best chunk on them (the chunk that says most by
        itself, whose neighbours the slot and ``assemble_context`` grow over, best first),
        and the face carries the slot's score (its best lifted one: the list stays ordered).
        Why: a lifted chunk is often the one *beside* the answer (its window holds the
        answer); shown first or taken first as an extension, it spent a small budget on the
        wrong side of the answer."""
        for g in groups:
            if not any(c.uri in unlifted for c in g):
                continue
            slot = g[0].final
            for c in g:
                c.final = unlifted.get(c.uri, c.final)
            g.sort(key=operator.attrgetter("final.vec"), reverse=True)
            g[0].final = slot

    async def _hub_correction(self, q: _Query, state: Descent) -> None:
        """A question over documents, with ``question_hub_weight`` > 0 (an option, off by
        default): each collected leaf's score minus ``question_hub_weight`` times its
        hubness among the collected leaves (:func:`~treehop.hubness.hub_scores`), in dense
        units (times the query's dense weight). A chunk that resembles all the other
        candidates (an index, a list of links, an overview) gives way to the one that
        stands out. Vector track only (a reranker's scores are on another scale); one
        ``get_vectors`` call for the best ``HUB_POOL`` (100) collected leaves, which alone
        are compared and corrected. A leaf a concurrent write deleted since the descent
        collected it (the store's ``NotFoundError``) leaves the pool, and the others are
        compared among themselves: a race with a writer must not fail the find over a node
        the caller never named (a second miss in a row: no correction)."""
        weight = self.config.question_hub_weight
        if not q.question or weight <= 0 or state.track is not Track.VECTOR:
            return
        cands = [c for c in state.collected.values() if c.is_leaf]
        if len(cands) > HUB_POOL:
            cands = heapq.nlargest(HUB_POOL, cands, key=operator.attrgetter("final.vec"))
        if len(cands) < MIN_POOL:
            return
        found = await self._present_vectors([c.uri for c in cands])
        if found is None or len(found[0]) < MIN_POOL:
            return
        kept, vectors = found
        cands = [cands[i] for i in kept]
        hub = hub_scores(vectors)
        scale = weight * q.dense_weight
        for c, h in zip(cands, hub.tolist(), strict=True):
            c.final = score_of(c.final.vec - scale * h, c.final.rr)
        if q.context.active:
            # the tree context kept a represented directory just below its best leaf's final
            # score (``include_directories=True``); a hub's penalty may have lowered that
            # leaf under it: settle again against the corrected scores
            self._settle_directories(q, state)

    async def _tree_context(self, q: _Query, state: Descent, result: QueryResult) -> None:
        """Rescore the best leaves with their tree context (:mod:`treehop.tree_scoring`).

        The pool is the collected leaves plus the ``context_pool`` best leaves in scope; each
        pool leaf's parent is opened (its leaf children scored, as a descent round does), so a
        sibling or neighbour of a strong hit can enter the list on the tree's evidence. Vector
        track only: a reranker's scores would need a rerank call per sibling.

        The searches here (the pool, when the global answer cannot stand for it; the
        families and their parents, one search where the store answers exactly) are read as
        columns (:class:`~treehop.stores.base.HitColumns`): ~50-300 leaves are scored per
        query and most only inform their siblings, so a node is built only for a leaf that
        joins the list.
        """
        if not q.context.active or state.track is not Track.VECTOR:
            return
        pool_uris, parents, inner = await self._context_parents(q, state, result)
        await self._context_of_family(q, state, result, pool_uris, parents, inner)

    async def _context_parents(
        self, q: _Query, state: Descent, result: QueryResult
    ) -> tuple[list[str], list[str], list[str]]:
        """The tree context's pool (URIs), the parents whose families it scores (sorted)
        and those of them that are not roots (the inner parents)."""
        cfg = self.config
        pool_uris, pool_parents = await self._pool(q, max(cfg.context_pool, 3 * q.req.limit))
        assign(result, nodes_scored=result.nodes_scored + len(pool_uris))
        parents = sorted(
            {p for p in pool_parents if p}
            | {c.parent_uri for c in state.collected.values() if c.is_leaf and c.parent_uri}
        )
        roots = set(q.req.roots)
        inner = [p for p in parents if p not in roots]
        q.confined = not all(q.within_roots(p) for p in inner)
        return pool_uris, parents, inner

    def _family_arrays_ask(
        self, q: _Query, parents: list[str], inner: list[str]
    ) -> tuple[Scope, int, int] | None:
        """The scope and limit of the one array search that :meth:`_family` asks for these
        parents (:meth:`_inner_arrays`) and how many of its leaves the family may read as
        columns, or ``None`` where it asks another way (a root parent, no inner parent, no
        parent scores wanted, a store without arrays)."""
        if not inner or not self._arrays or not q.context.parent > 0:
            return None
        roots = q.req.roots
        if any(p in roots for p in parents):
            return None
        limit = min(self.config.max_children_per_dir * len(inner), MAX_GLOBAL_FETCH)
        return q.scope.replaced(subtrees=tuple(inner)), min(2 * limit, MAX_GLOBAL_FETCH), limit

    async def _context_of_family(
        self,
        q: _Query,
        state: Descent,
        result: QueryResult,
        pool_uris: list[str],
        parents: list[str],
        inner: list[str],
        both: HitArrays | None = None,
    ) -> None:
        """The rest of :meth:`_tree_context`: the family searched (``both``: the answer of
        its array search, already asked: :meth:`_family_arrays_ask`), scored, and the picked
        leaves placed."""
        cfg = self.config
        weights = q.context
        family, parent_scores = await self._family(
            q, parents, inner, weights.parent > 0, result, both
        )
        # Every family leaf informs the scores; the pool, the collected leaves and their
        # neighbours are ranked (a sibling neither in the pool nor next to a pool leaf scores
        # below its pool siblings on every term but the neighbour mean, and is left out).
        pool_set = set(pool_uris) | set(state.collected.by_uri)
        if isinstance(family, _FolderFamily):
            self._place_folder(q, state, family, pool_set, parent_scores)
            self._settle_directories(q, state)
            return
        sectioned = cfg.context_neighbour_sections and weights.neighbours > 0
        if isinstance(family, _ArrayFamily):
            scored, picked = family.score(pool_set, parent_scores, weights, sectioned)
        else:
            scored, picked = _score_family(family, pool_set, parent_scores, weights, sectioned)
        finals = self._session_evidence(
            q, scored, lambda: [c.parent_uris[i] or "" for c, i in picked], weights.total
        )
        finals = self._heading_evidence(q, picked, finals)
        # Each picked leaf gets its context score; the threshold is on its own relevance (its
        # context only reorders), so a leaf below it leaves the list. (Vector track: a
        # score passes when it is above the threshold.)
        by_uri, threshold = state.collected.by_uri, state.threshold
        get = by_uri.get
        for (cols, i), own, final in zip(picked, scored.own, finals, strict=True):
            uri = cols.uris[i]
            old = get(uri)
            if own > threshold and cols.matches[i]:
                if old is not None:
                    old.final = score_of(final)
                elif not q.confined or q.within_roots(uri):
                    by_uri[uri] = self._context_candidate(
                        q, cols, i, score_of(own), score_of(final)
                    )
            elif old is not None:
                del by_uri[uri]
        self._settle_directories(q, state)

    async def _pool(self, q: _Query, n: int) -> tuple[list[str], list[str | None]]:
        """The URIs and parents of the ``n`` best leaves inside the roots (the tree context's
        pool).

        Without a filter they are the best leaves of the last global search
        (:attr:`_Query.prefetched`): its scope is the pool's with directories admitted, so
        its leaves, in order, are the pool as long as it holds ``n`` of them or came back
        whole; one search fewer per find. With a filter (where a store's traversal answer
        adds non-matching directories) or too few leaves there, the pool is a search of its
        own.
        """
        pre = q.prefetched
        if pre is not None and not q.scope.filtered:
            at = list(compress(range(len(pre.leaves)), pre.leaves))[:n]
            if len(at) >= n or len(pre) < q.prefetch_limit:
                return [pre.uris[i] for i in at], [pre.parent_uris[i] for i in at]
        pool = await self._search_columns(
            q, q.scope.replaced(subtrees=tuple(q.req.roots), leaves_only=True), n
        )
        return pool.uris, pool.parent_uris

    def _session_evidence(
        self,
        q: _Query,
        scored: ContextColumns,
        parents: Callable[[], list[str]],
        total: float,
    ) -> list[float]:
        """The picked leaves' final scores, a memory turn's blended with its session's
        joined-text BM25 (:func:`~treehop.memory_context.session_lexical_scores`; the
        sessions are the inner families the tree context read whole). ``parents()``: the
        picked leaves' parent URIs (``""``: none), read only when a session scores."""
        weight = self.config.memory_session_weight
        if weight <= 0 or not isinstance(q.families, _Families) or not self._may_hold_turns():
            return scored.final
        sessions = session_lexical_scores(q.req.query.query, q.families, q.families.leaves)
        if not sessions:
            return scored.final
        return with_session_evidence(scored.final, parents(), sessions, weight, total)

    def _place_folder(
        self,
        q: _Query,
        state: Descent,
        family: _FolderFamily,
        pool: set[str],
        parent_scores: dict[str, float],
    ) -> None:
        """:meth:`_context_of_family`'s scoring and placing for one folder of files
        (:class:`_FolderFamily`): the same scores, the same candidates placed in the same
        order, read from the family search's arrays and its members' URIs (no columns
        built for the family: a picked leaf that joins the list is a deferred candidate on
        the search's ``load``). A folder of files has no heading paths (no heading
        evidence); its one parent is every picked leaf's (the session evidence's)."""
        weights = q.context
        scored, uris = family.score(pool, parent_scores, weights)
        parent = family.parent
        finals = self._session_evidence(
            q, scored, lambda: [parent] * len(scored.picked), weights.total
        )
        hits = family.hits
        assert hits.load is not None and hits.flags is not None
        at: list[int] = family.at.tolist()
        picked = scored.picked
        chosen = family.at[:0] if scored.at is None else family.at[scored.at]
        dense, matched = hits.flags(chosen)
        by_uri, threshold = state.collected.by_uri, state.threshold
        get, load, found = by_uri.get, hits.load, q.hits
        rows = zip(picked, scored.own, finals, matched, dense, strict=True)
        for j, own, final, match, vec in rows:
            uri = uris[j]
            old = get(uri)
            if own > threshold and match:
                if old is not None:
                    old.final = score_of(final)
                elif not q.confined or q.within_roots(uri):
                    globally = uri in found
                    by_uri[uri] = Candidate.deferred_at(
                        uri,
                        parent,
                        None,
                        True,
                        load,
                        at[j],
                        score_of(own),
                        score_of(final),
                        vec,
                        FoundBy.GLOBAL if globally else FoundBy.CHILD,
                        None if globally else parent,
                    )
            elif old is not None:
                del by_uri[uri]

    def _heading_evidence(
        self, q: _Query, picked: list[tuple[HitColumns, int]], finals: list[float]
    ) -> list[float]:
        """The picked leaves' final scores, a chunk's lifted by how well the query names its
        own section heading (:func:`~treehop.tree_scoring.heading_match`, times
        ``context_heading_weight``)."""
        weight = q.heading_weight
        if weight <= 0:
            return finals
        if all(cols.chunk_indexes[i] is None for cols, i in picked):
            return finals  # (no chunk, no heading path: a folder of files)
        terms = query_terms(q.req.query.query)
        if not terms:
            return finals
        out = list(finals)
        for j, path in enumerate(_picked_headings(picked)):
            if path:
                out[j] += weight * heading_match(terms, path)
        return out

    async def _search_columns(
        self, q: _Query, scope: Scope, limit: int, offload: bool = False
    ) -> HitColumns:
        hits: HitColumns = await self._store_call(
            search_columns,
            self.store,
            q.req.vector,
            scope,
            limit,
            query_text=q.req.query.query,
            dense_weight=q.dense_weight,
            offload=offload,
        )
        return hits

    async def _family(
        self,
        q: _Query,
        parents: list[str],
        inner: list[str],
        scored: bool,
        result: QueryResult,
        both: HitArrays | None = None,
    ) -> tuple[_Family | _ArrayFamily | _FolderFamily, dict[str, float]]:
        """The scored leaf children of ``parents`` (by URI: the search's columns and the
        position in them): one search for every inner parent's leaves (kept if direct
        children), one per root parent (a root's subtree is the whole scope); and, if
        ``scored``, the own scores of the directories in the inner parents' subtrees (the
        parents' scores, by URI).

        The inner search asks for the leaves and the directories at once
        (:meth:`_inner_family`): the same answer as a leaves-only search and a
        directories-only search, in one store call."""
        cfg = self.config
        wanted = set(parents)
        family: dict[str, tuple[HitColumns, int]] = {}
        for p in parents:
            if p not in q.req.roots:
                continue
            scope = q.scope.replaced(parent_uri=p, leaves_only=True)
            kids = await self._search_columns(q, scope, cfg.max_children_per_dir)
            result.nodes_scored += len(kids)
            for i, (u, pu) in enumerate(zip(kids.uris, kids.parent_uris, strict=True)):
                if pu in wanted:
                    family[u] = (kids, i)
        parent_scores: dict[str, float] = {}
        if not inner:
            return _Family.of(family), parent_scores
        limit = min(cfg.max_children_per_dir * len(inner), MAX_GLOBAL_FETCH)
        if not family and scored and self._arrays:
            got = await self._inner_arrays(q, inner, limit, wanted, parent_scores, result, both)
            if got is not None:
                return got, parent_scores
        cols, leaves, whole = await self._inner_family(q, inner, limit, scored, parent_scores)
        result.nodes_scored += len(leaves)
        if whole:
            # The inner search came back whole: it holds every leaf child of every inner
            # parent, scored in the scope the memory context would ask for them.
            q.families = _Families(cols, inner, leaves)
        parent_of = cols.parent_uris
        if not family and cols.parent_codes is not None and leaves:
            # one search holds the whole family: its members by parent code, each distinct
            # parent's URI looked up once (no dict of members by URI: the URIs of one
            # search are distinct)
            at = np.asarray(leaves, dtype=np.int64)
            _, first, inverse = np.unique(
                cols.parent_codes[at], return_index=True, return_inverse=True
            )
            kept = [parent_of[leaves[f]] in wanted for f in first.tolist()]
            picked = at[np.asarray(kept, dtype=bool)[inverse.reshape(-1)]]
            return _Family(cols, picked.tolist()), parent_scores
        uris = cols.uris
        family.update({uris[i]: (cols, i) for i in leaves if parent_of[i] in wanted})
        return _Family.of(family), parent_scores

    async def _inner_arrays(
        self,
        q: _Query,
        inner: list[str],
        limit: int,
        wanted: set[str],
        parent_scores: dict[str, float],
        result: QueryResult,
        asked: HitArrays | None = None,
    ) -> _Family | _ArrayFamily | _FolderFamily | None:
        """:meth:`_inner_family` (its one-search case, with directory scores) on a store
        that answers as arrays (:class:`~treehop.stores.base.HitArrays`), and the family it
        gives: a family of chunks stays arrays (:class:`_ArrayFamily`), any other is built
        as columns. ``None`` (``parent_scores`` left empty) where the one search cannot
        stand for both answers: the caller then searches as :meth:`_inner_family` does."""
        ask = min(2 * limit, MAX_GLOBAL_FETCH)
        # (``asked``: the answer of this search, asked already: :meth:`_family_arrays_ask`)
        both: HitArrays = (
            asked
            if asked is not None
            else await self._store_call(
                self.store.search_arrays,  # type: ignore[attr-defined]
                q.req.vector,
                q.scope.replaced(subtrees=tuple(inner)),
                ask,
                query_text=q.req.query.query,
                dense_weight=q.dense_weight,
            )
        )
        leaves = both.leaves.nonzero()[0]
        whole = len(both) < ask

        def directories() -> Iterable[tuple[str, float]]:
            dirs = (~both.leaves).nonzero()[0]
            return zip(both.uris(dirs), both.scores[dirs].tolist(), strict=True)

        if not _one_search_stands(
            q, inner, both.exact, whole, int(leaves.size), limit, directories, parent_scores
        ):
            return None
        leaves = leaves[:limit]
        assign(result, nodes_scored=result.nodes_scored + int(leaves.size))
        if whole and leaves.size < limit:
            q.families = _Families(lambda: both.columns(leaves), inner, range(leaves.size))
        codes = both.parent_codes
        if codes is None or not leaves.size or int(_max(both.chunks[leaves])) < 0:
            # no chunks (memory turns, whole files): the sibling order reads every name
            # (one search's URIs are distinct: its wanted members, in order, are the family)
            if FOLDER_FAMILY and codes is not None and leaves.size and both.load is not None:
                folder = _FolderFamily.of(both, leaves, codes, wanted)
                if folder is not None:
                    return folder
            kids = both.columns(leaves)
            of = kids.parent_uris
            if of and of.count(of[0]) == len(of) and of[0] in wanted:
                return _Family(kids, list(range(len(of))))  # (one folder, wanted: all of it)
            return _Family(kids, [i for i, p in enumerate(of) if p in wanted])
        # each distinct parent's URI read once: its members are kept if it is wanted
        distinct, inverse = unique_inverse(codes[leaves])
        names = both.parent_uris(distinct)
        kept = np.asarray([p in wanted for p in names], dtype=bool)
        at = leaves[kept[inverse.reshape(-1)]]
        by_code = dict(zip(distinct.tolist(), names, strict=True))
        return _ArrayFamily(both, at, by_code)

    async def _inner_family(
        self, q: _Query, inner: list[str], limit: int, scored: bool, parent_scores: dict[str, float]
    ) -> tuple[HitColumns, list[int], bool]:
        """The best ``limit`` leaves in the inner parents' subtrees (the columns, the leaves'
        positions in them, and whether those are all the leaves in scope); with ``scored``,
        ``parent_scores`` gets every directory's own score in those subtrees.

        One search of leaves and directories together, asking for twice the leaves: its
        answer is a prefix of the scope's ranking, so its leaves are a prefix of the leaves'
        ranking (the leaves-only search's answer when it holds ``limit`` of them or came back
        whole) and its directories a prefix of theirs (every directory when it came back
        whole). Only when it cannot stand for both do the two searches run as before; the
        answers, scores and order are the same either way."""
        subtrees = tuple(inner)
        if scored and self._exact_columns:
            ask = min(2 * limit, MAX_GLOBAL_FETCH)
            both = await self._search_columns(q, q.scope.replaced(subtrees=subtrees), ask)
            # (positions by flag with ``compress``: a C loop over up to thousands of rows)
            leaves = list(compress(range(len(both)), both.leaves))
            whole = len(both) < ask

            def directories() -> Iterable[tuple[str, float]]:
                dirs = filterfalse(both.leaves.__getitem__, range(len(both)))
                return ((both.uris[i], both.scores[i]) for i in dirs)

            if _one_search_stands(
                q, inner, both.exact, whole, len(leaves), limit, directories, parent_scores
            ):
                return both, leaves[:limit], whole and len(leaves) < limit
        kids = await self._search_columns(
            q, q.scope.replaced(subtrees=subtrees, leaves_only=True), limit
        )
        if scored:
            scope = q.scope.replaced(subtrees=subtrees, non_leaves_only=True)
            found = await self._search_columns(q, scope, MAX_GLOBAL_FETCH)
            parent_scores.clear()
            parent_scores.update(zip(found.uris, found.scores, strict=True))
        return kids, list(range(len(kids))), len(kids) < limit

    @staticmethod
    def _context_candidate(
        q: _Query, cols: HitColumns, i: int, own: Score, final: Score
    ) -> Candidate:
        """A leaf the tree context adds to the list: its node is built only if it is read
        (returned, or asked for its tags or metadata)."""
        uri = cols.uris[i]
        found_globally = uri in q.hits
        parent = cols.parent_uris[i]
        return Candidate.deferred_at(
            uri,
            parent,
            cols.chunk_indexes[i],
            cols.leaves[i],
            cols.load,
            i,
            own,
            final,
            cols.vector_scores[i],
            FoundBy.GLOBAL if found_globally else FoundBy.CHILD,
            None if found_globally else parent,
        )

    @staticmethod
    def _settle_directories(q: _Query, state: Descent) -> None:
        """A directory that a leaf below it beats: dropped (``include_directories=None``) or
        ranked just after that leaf (``True``)."""
        if q.req.include_directories is False:
            return
        for uri, leaf_final in represented_directories(state.collected.values()).items():
            if q.req.include_directories is None:
                del state.collected.by_uri[uri]
            else:
                d = state.collected.by_uri[uri]
                d.final = Score(min(d.final.vec, leaf_final - 1e-9))

    async def _memory_context(
        self, q: _Query, state: Descent, result: QueryResult
    ) -> tuple[list[list[Candidate]], list[list[ChunkContext]] | None]:
        """The result slots, each a ranked group (its hit first), and the turns each carries
        (``None``: none carries any): a memory turn carries its neighbouring turns, and a hit
        an earlier slot carries merges into it (:mod:`treehop.memory_context`)."""

        async def turns_of(sessions: tuple[str, ...]) -> list[ScoredNode]:
            scope = q.scope.replaced(subtrees=sessions, leaves_only=True)
            turns = await self._search(q, scope, MAX_SESSION_FETCH)
            result.nodes_scored += len(turns)
            return turns

        # (a question's slot grows to its own-best neighbour first: ``question_grow_own``)
        own = q.question and self.config.question_grow_own
        # (without turns only the first ``limit`` slots are read: filled slots of few
        # documents are built up to there, :func:`~treehop.descent.filled_top`)
        turns = self._may_hold_turns()
        groups = state.collected.ranked(
            state.track,
            _own_score(state.track) if own else None,
            None if turns else q.req.limit,
        )
        if q.unlifted:
            self._unlift(groups, q.unlifted)
        penalty = self.config.question_document_penalty
        if q.question and penalty > 0 and state.track is Track.VECTOR and len(groups) > 1:
            groups = self._spread(groups, penalty * q.dense_weight, q.req.limit)
        if not turns:
            # no turn can be a hit: gather_slots' slots are the first ``limit`` groups
            return groups[: q.req.limit], None  # (ranked's lists: new ones)
        slots = await gather_slots(
            groups,
            self.config.memory_context_chars,
            q.req.limit,
            turns_of,
            q.families,
            self._window_reader(q, result),
            q.within_roots,  # (a turn target's slot carries no turn outside it)
        )
        return [s.group for s in slots], [s.context() for s in slots]

    def _window_reader(
        self, q: _Query, result: QueryResult
    ) -> Callable[[Node, int], Awaitable[Window | None]] | None:
        """The memory context's reader of a turn hit's neighbours by the session's order
        (:class:`~treehop.memory_context.Window`), on a store that can read siblings by order
        (an optional capability, ``sibling_window``: the embedded store); ``None`` elsewhere
        (Milvus, VikingDB, a user's store), where each session is searched whole as before.
        The same slots either way; the window reads the few turns a slot takes, where the
        session search scored and returned up to ``MAX_SESSION_FETCH`` turns."""
        read = getattr(self.store, "sibling_window", None)
        if read is None:
            return None

        async def window(hit: Node, count: int) -> Window | None:
            parent = hit.parent_uri or ""
            scope = q.scope.replaced(subtrees=(parent,), leaves_only=True)
            found: SiblingWindow | None = await self._store_call(
                read,
                q.req.vector,
                scope,
                hit.uri,
                count,
                count,
                query_text=q.req.query.query,
                dense_weight=q.dense_weight,
            )
            if found is None:
                return None
            result.nodes_scored += len(found.before) + len(found.after)
            return Window.of(found, count)

        return window

    @staticmethod
    def _spread(groups: list[list[Candidate]], penalty: float, limit: int) -> list[list[Candidate]]:
        """``question_document_penalty``: the slots re-ranked so that each further slot of a
        document gives up ``penalty`` per slot of that document above it
        (:func:`~treehop.chunk_window.spread_over_documents`); a face whose score drops
        carries the adjusted score (the list stays ordered by score)."""
        order, adjusted = spread_over_documents(
            [g[0].final.vec for g in groups], [g[0].document for g in groups], penalty, limit
        )
        out = [groups[i] for i in order]
        for g, s in zip(out, adjusted, strict=True):
            if s != g[0].final.vec:
                g[0].final = score_of(s, g[0].final.rr)
        return out

    def _trace(
        self, state: Descent, entry: FrontierEntry, scored: int, best: list[tuple[str, float]]
    ) -> None:
        best.sort(key=lambda x: -x[1])
        state.trace.append(
            RoundTrace(
                round=state.rounds,
                popped=entry.uri,
                popped_score=entry.score.on(state.track) if entry.score is not None else 0.0,
                children_scored=scored,
                best_children=best[:5],
                rerank_fallback_reason=state.fallback_reason,
            )
        )

    def _finish(
        self,
        q: _Query,
        state: Descent,
        result: QueryResult,
        t0: float,
        groups: list[list[Candidate]],
        turns: list[list[ChunkContext]] | None,
    ) -> QueryResult:
        """One final ranking, one slot per document (or exchange), as MatchedContexts
        (``groups`` and ``turns``: :meth:`_memory_context`'s slots)."""
        out = self._matched_all(q, state, groups, turns)
        hits_produced = len([c for c in state.collected.values() if c.hop])
        tag_hop = FoundBy.TAG_HOP
        # (``models.assign``: the fields set as assignment sets them, without pydantic's
        # per-assignment handler lookup, ~0.5 us each, seven per find)
        hops = result.tag_hops
        assign(
            hops,
            hits_produced=hits_produced,
            hits_in_topk=len([m for m in out if m.found_by is tag_hop]),
        )
        reason = state.fallback_reason
        assign(
            result,
            matched_contexts=out,
            stop_reason=state.stop_reason,
            rerank_fallback=reason is not None,
            rerank_fallback_reason=reason,
            trace=state.trace,
            elapsed_ms=(time.perf_counter() - t0) * 1000,
        )
        return result

    def _matched_all(
        self,
        q: _Query,
        state: Descent,
        groups: Sequence[list[Candidate]],
        turns: Sequence[list[ChunkContext]] | None,
    ) -> list[MatchedContext]:
        """The results of the slots ``groups`` (each its hit first) in order, each carrying
        its ``turns`` (``None``: none carries any).

        Why all slots in one call: what is the same for every result of a find (the track,
        the fallback, the slot's character budget, the query) is read once, a score on the
        vector track is read as its field (:meth:`~treehop.descent.Score.on` read the enum
        member from its class per call), and without turns no slot object or sorted list is
        built: ~2 us of each result's ~5 us warm. The values are the same, field by field."""
        track = state.track
        reranked = track is Track.RERANK
        reason = state.fallback_reason
        fallback = reason is not None
        budget = self._slot_chars(q)
        across = q.passages and self.config.join_adjacent_hits
        better = _own_score(track) if self.config.grow_to_better_side else None
        query = q.req.query
        out: list[MatchedContext] = []
        for i, group in enumerate(groups):
            cand = group[0]
            node = cand.node
            final, own = cand.final, cand.own
            rest = group[1:]
            shown = _passage_shown(node, rest, budget, across, better) if rest else {}
            carried = [] if turns is None else turns[i]
            # (the model built from fields of their declared types: see :func:`_built_matched`)
            fields = {
                "uri": node.uri,
                "context_type": node.context_type,
                "is_leaf": node.is_leaf,
                "abstract": node.abstract,
                "score": final.on(track) if reranked else final.vec,
                "level": node.level,
                "parent_uri": node.parent_uri,
                "overview": node.overview,
                "content": node.content,
                "tags": list(node.tags),  # (copies, as validation makes them)
                "metadata": dict(node.metadata),
                "chunk_index": node.chunk_index,
                "vector_score": cand.vector_score,
                "own_score": own.on(track) if reranked else own.vec,
                "rerank_score": own.rr if reranked else None,
                "rerank_fallback": fallback,
                "rerank_fallback_reason": reason,
                "found_by": cand.found_by,
                "found_via": cand.found_via,
                "hop_tag": cand.hop.tag if cand.hop else None,
                "hop_source": cand.hop.source if cand.hop else None,
                "matched_queries": [query],
                # (validated construction: pydantic's ``model_construct`` is pure Python
                # and measured 4x slower than validating these five fields)
                "collapsed": [
                    _built_chunk(
                        (n := c.node).uri,
                        n.chunk_index,
                        c.final.on(track),
                        n.abstract,
                        n.content,
                        shown.get(n.uri),
                        c.own.on(track) if reranked else c.own.vec,
                    )
                    for c in rest
                ]
                + carried,
            }
            out.append(_built_matched(fields))
        return out


def _own_score(track: Track) -> Callable[[Candidate], float]:
    """A candidate's own score on ``track`` (before propagation, the tree context and the
    chunk window): which side a question's passage slot grows to first
    (:attr:`~treehop.config.RetrievalConfig.question_grow_own`). A chunk the reranker did
    not score is ``-inf`` there, and the slot falls back to the rank."""
    if track is Track.VECTOR:
        return _OWN_VEC
    return lambda c: c.own.on(track)


_OWN_VEC = operator.attrgetter("own.vec")


def _passage_shown(
    face: Node,
    rest: list[Candidate],
    budget: int,
    across: bool = False,
    better: Callable[[Candidate], float] | None = None,
) -> dict[str, int]:
    """The slot's other chunks that its text shows (by URI: the position relative to the
    face, in chunks): the run of consecutive chunks of the face's passage
    (:func:`~treehop.descent.same_passage`) around it, while the text stays within
    ``budget`` characters, the face's own included
    (:attr:`~treehop.config.RetrievalConfig.document_context_chars`;
    :attr:`~treehop.models.MatchedContext.slot_text` joins them in document order).
    ``better``: the run grows best-first, each step taking whichever side's next chunk
    scores higher on it (:attr:`~treehop.config.RetrievalConfig.grow_to_better_side`);
    ``None``: the nearer side first, the one before the face on a tie of distance.
    ``across``: a passage slot (:func:`~treehop.descent.passage_groups`) that joined
    adjacent hits across a passage mark under one heading path
    (:attr:`~treehop.config.RetrievalConfig.join_adjacent_hits`) shows them too."""
    at = face.chunk_index
    if at is None or not rest or budget <= len(face.content):
        return {}
    by_index = {
        c.chunk_index: c
        for c in rest
        if c.chunk_index is not None and c.parent_uri == face.parent_uri
    }
    room = budget - len(face.content)
    shown: dict[str, int] = {}
    ends: list[Node | None] = [face, face]  # the run's last chunk on each side
    steps = [1, 1]  # each side's next distance from the face
    signs = (-1, 1)
    while True:
        nexts: list[Candidate | None] = [None, None]
        for side in (0, 1):
            end = ends[side]
            if end is None:
                continue
            c = by_index.get(at + signs[side] * steps[side])
            if c is None or not (
                same_passage_nodes(end, c.node) or (across and weak_mark(end, c.node))
            ):
                ends[side] = None
                continue
            nexts[side] = c
        a, b = nexts
        if a is None and b is None:
            return shown
        if a is None or b is None:
            side = 0 if b is None else 1
        elif better is not None:
            side = 1 if better(b) > better(a) else 0
        else:
            side = 0 if steps[0] <= steps[1] else 1
        c = nexts[side]
        assert c is not None
        size = len(c.node.content) + 2
        if size > room:
            ends[side] = None
            continue
        room -= size
        shown[c.uri] = signs[side] * steps[side]
        ends[side] = c.node
        steps[side] += 1


_validate_matched = MatchedContext.__pydantic_validator__.validate_python
_MATCHED_FIELDS = frozenset(MatchedContext.model_fields)


def _built_matched(fields: dict[str, Any]) -> MatchedContext:
    """The :class:`MatchedContext` of ``fields`` (every field, in declaration order), set
    directly where each score is a ``float`` (or ``None``): the rest come from validated
    nodes, candidates and models (``tags`` and ``metadata`` copied, as validation copies
    them), so validating them again changes nothing. Why: validation was ~3.4 us of a
    result's ~9 us, and a find builds ten (the same object: fields, values, fields set).
    A score of another type (an ``int`` from a custom reranker) is validated as before."""
    a, b, c, d = (
        fields["score"],
        fields["vector_score"],
        fields["own_score"],
        fields["rerank_score"],
    )
    if not (
        (a is None or type(a) is float)
        and (b is None or type(b) is float)
        and (c is None or type(c) is float)
        and (d is None or type(d) is float)
    ):
        out: MatchedContext = _validate_matched(fields)
        return out
    if not _models.BUILT_MODELS:  # (pydantic's layout is not the one built_model sets)
        out = _validate_matched(fields)
        return out
    return built_model(MatchedContext, fields, set(_MATCHED_FIELDS))


_validate_chunk = ChunkContext.__pydantic_validator__.validate_python
_CHUNK_GIVEN = frozenset(
    {"uri", "chunk_index", "score", "own_score", "abstract", "content", "position"}
)

BUILT_CHUNKS = True
"""A result's collected chunks (:attr:`MatchedContext.collapsed`) are built directly from
their validated node and float scores (:func:`~treehop.models.built_model`), as the result
itself is (:func:`_built_matched`); ``False``: validated. Why: a default find at 100k
builds a dozen or more of them, each a cold pydantic validation after the graph search
(bench/README.md, "Issue 35: the lead's re-measure after stop 48's merges")."""


def _built_chunk(
    uri: str,
    chunk_index: int | None,
    score: float,
    abstract: str,
    content: str,
    position: int | None,
    own_score: float | None,
) -> ChunkContext:
    """``ChunkContext(uri=..., chunk_index=..., score=..., own_score=..., abstract=...,
    content=..., position=...)``: every value comes from a validated node, the slot's
    positions (ints) and the candidate's scores, so it is built directly where the scores
    are ``float`` (a custom reranker's ``int`` is validated, as before)."""
    if (
        BUILT_CHUNKS
        and _models.BUILT_MODELS
        and type(score) is float
        and (own_score is None or type(own_score) is float)
    ):
        return built_model(
            ChunkContext,
            {
                "uri": uri,
                "chunk_index": chunk_index,
                "score": score,
                "abstract": abstract,
                "content": content,
                "position": position,
                "carried": False,
                "own_score": own_score,
            },
            set(_CHUNK_GIVEN),
        )
    out: ChunkContext = _validate_chunk(
        {
            "uri": uri,
            "chunk_index": chunk_index,
            "score": score,
            "own_score": own_score,
            "abstract": abstract,
            "content": content,
            "position": position,
        }
    )
    return out


def _one_search_stands(
    q: _Query,
    inner: list[str],
    exact: bool,
    whole: bool,
    n_leaves: int,
    limit: int,
    directories: Callable[[], Iterable[tuple[str, float]]],
    parent_scores: dict[str, float],
) -> bool:
    """Whether one exact search of leaves and directories together (asked for twice the
    leaves; ``whole``: it came back with fewer) stands for both the leaves-only and the
    directories-only search of the inner parents; if so ``parent_scores`` holds its
    ``directories()`` scores, else it is left empty. Cut short, it may miss a directory the
    other search would score: every inner parent must be in it, and no root may lie below
    one (a root parent's score is read from here too)."""
    if not (exact and (whole or n_leaves >= limit)):
        return False
    parent_scores.update(directories())
    if whole or (all(p in parent_scores for p in inner) and not _nested(q.req.roots, inner)):
        return True
    parent_scores.clear()
    return False


class _Family:
    """The tree context's family: its leaf members in order, each a position in the
    columns of a search. The members mostly come from one search (the inner family,
    ``cols``, at positions ``at``, increasing: each search lists its hits once, in its
    order): a field of every member is then read with one
    ``itemgetter`` over their positions (a C loop; a family holds hundreds of leaves), and
    the search's parent and heading-path codes serve the arithmetic as arrays. Otherwise
    (``members``: a root parent's leaves came from searches of their own) a field is read
    member by member."""

    def __init__(
        self,
        cols: HitColumns | None,
        at: list[int],
        members: list[tuple[HitColumns, int]] | None = None,
    ) -> None:
        self.cols, self.at, self.members = cols, at, members

    @classmethod
    def of(cls, family: dict[str, tuple[HitColumns, int]]) -> _Family:
        """The family from its members by URI (first appearance first)."""
        members = list(family.values())
        first = members[0][0] if members else None
        if first is not None and all(c is first for c, _ in members):
            return cls(first, [i for _, i in members])
        return cls(None, [], members)

    def __len__(self) -> int:
        return len(self.at) if self.members is None else len(self.members)

    def source(self, j: int) -> tuple[HitColumns, int]:
        """Member ``j``: its search's columns and its position there."""
        if self.members is not None:
            return self.members[j]
        assert self.cols is not None
        return self.cols, self.at[j]

    def column(self, name: str) -> list[Any]:
        """One field of every member, in order (the search's own list where every one of
        its hits is a member: read, never written)."""
        if self.members is not None:
            return [getattr(c, name)[i] for c, i in self.members]
        if not self.at:
            return []
        whole: list[Any] = getattr(self.cols, name)
        if len(self.at) == len(whole) and self.at[-1] == len(whole) - 1:
            return whole  # (increasing positions, as many as hits: every hit, in order)
        get = operator.itemgetter(*self.at)
        if len(self.at) == 1:
            return [get(getattr(self.cols, name))]
        return list(get(getattr(self.cols, name)))

    def parent_codes(self) -> npt.NDArray[np.int64] | None:
        """The members' parents as integer codes, where their one search has them."""
        codes = None if self.cols is None else self.cols.parent_codes
        if codes is None or self.members is not None:
            return None
        return codes[np.asarray(self.at, dtype=np.int64)]

    def section_codes(self) -> SectionCodes | None:
        """The members' heading paths as codes, where their one search has them."""
        heading = None if self.cols is None else self.cols.heading_codes
        if heading is None or self.members is not None:
            return None
        at = np.asarray(self.at, dtype=np.int64)
        return lambda js: heading(at[js])


def _nested(roots: Sequence[str], parents: Sequence[str]) -> bool:
    """Whether a root lies below one of ``parents`` (in its URI subtree)."""
    return any(r.startswith((p + "/", p + "#")) for r in roots for p in parents)


class _Families(Mapping[str, Sequence[ScoredNode]]):
    """The inner parents' leaf children from the tree context's family search, by parent,
    built into hits only for a parent the memory context reads (a turn hit's session).

    The leaves are grouped by parent on the first read of one parent's leaves: a find over
    documents asks only which parents there are, and grouping its ~500 leaves was ~0.7 ms
    of each such find."""

    def __init__(
        self,
        kids: HitColumns | Callable[[], HitColumns],
        inner: Sequence[str],
        leaves: Sequence[int],
    ) -> None:
        self._kids_of = kids
        self._inner = dict.fromkeys(inner)
        self._leaves = leaves
        self._grouped: dict[str, list[int]] | None = None
        self._built: dict[str, list[ScoredNode]] = {}

    @property
    def _kids(self) -> HitColumns:
        """The family search's columns (built on first use where given as a builder)."""
        kids = self._kids_of
        if not isinstance(kids, HitColumns):
            kids = self._kids_of = kids()
        return kids

    def _at(self, parent: str) -> list[int]:
        """The positions in the search of ``parent``'s leaves (``KeyError``: not an inner
        parent)."""
        at = self._grouped
        if at is None:
            at = {p: [] for p in self._inner}
            parent_of = self._kids.parent_uris
            for i in self._leaves:  # the leaves' positions in ``kids``
                p = parent_of[i]
                if p is not None and p in at:
                    at[p].append(i)
            self._grouped = at
        return at[parent]

    def __getitem__(self, parent: str) -> Sequence[ScoredNode]:
        got = self._built.get(parent)
        if got is None:
            got = self._built[parent] = self._kids.hits(self._at(parent))  # KeyError: none
        return got

    def leaves(self, parent: str) -> list[Node]:
        """The parent's leaf children as nodes (no hits built)."""
        return self._kids.load(self._at(parent))

    def __contains__(self, parent: object) -> bool:
        return parent in self._inner

    def __iter__(self) -> Iterator[str]:
        return iter(self._inner)

    def __len__(self) -> int:
        return len(self._inner)


def _score_family(
    family: _Family,
    pool: set[str],
    parent_scores: dict[str, float],
    weights: ContextWeights,
    sectioned: bool,
) -> tuple[ContextColumns, list[tuple[HitColumns, int]]]:
    """The tree context's scores of a family read as columns (any store), and the picked
    members' columns and positions."""
    uris = family.column("uris")
    parent_of = family.column("parent_uris")
    cols = family.cols
    linked = family.members is None and cols is not None and cols.parent_codes is not None
    if not linked:  # (with codes every member has a parent URI)
        parent_of = [p or "" for p in parent_of]
    chunks = family.column("chunk_indexes")
    has_chunks = chunks.count(None) < len(chunks)
    # (the codes group chunk families only: not gathered for a folder of files)
    parent_codes = family.parent_codes() if linked and has_chunks else None
    # a family without chunks has no heading paths: every neighbour counts in full,
    # as without sections
    sectioned = sectioned and has_chunks
    codes = family.section_codes() if sectioned else None
    scored = context_columns(
        parent_of,
        None,
        family.column("scores"),
        parent_scores,
        weights,
        list(map(pool.__contains__, uris)),  # (a C loop: ``u in pool`` for each member)
        _sections(family) if sectioned and codes is None else None,
        laid_out=sibling_order(parent_of, uris, chunks, parent_codes),
        section_codes=codes,
    )
    at = family.at
    if family.members is None and cols is not None:  # (one search: no call per member)
        return scored, [(cols, at[j]) for j in scored.picked]
    return scored, [family.source(j) for j in scored.picked]


class _ParentsByCode(Sequence[str]):
    """The members' parent URIs, read through their parent codes (only the few that
    :func:`~treehop.tree_scoring.context_columns` reads: one per family)."""

    def __init__(self, codes: npt.NDArray[np.int64], by_code: dict[int, str]) -> None:
        self._codes, self._by_code = codes, by_code

    def __len__(self) -> int:
        return int(self._codes.size)

    @overload
    def __getitem__(self, j: int) -> str: ...

    @overload
    def __getitem__(self, j: slice) -> Sequence[str]: ...

    def __getitem__(self, j: int | slice) -> str | Sequence[str]:
        if isinstance(j, slice):
            return [self._by_code[c] for c in self._codes[j].tolist()]
        return self._by_code[int(self._codes[j])]


class _ArrayFamily:
    """A family of chunks held as arrays (:class:`~treehop.stores.base.HitArrays`): the
    members are positions ``at`` of one search, their parents integer codes (``by_code``:
    each code's URI); the members' URIs are decoded in one bulk call (to tell the pool's
    and the collected leaves apart; a hash lookup of those URIs cost more) or, in a family
    larger than the pool, the pool's URIs looked up (:attr:`HitArrays.among`), and only the
    picked members (those and their neighbours) become columns."""

    def __init__(self, hits: HitArrays, at: npt.NDArray[np.int64], by_code: dict[int, str]):
        self.hits, self.at, self.by_code = hits, at, by_code

    def score(
        self,
        pool: set[str],
        parent_scores: dict[str, float],
        weights: ContextWeights,
        sectioned: bool,
    ) -> tuple[ContextColumns, list[tuple[HitColumns, int]]]:
        """:func:`_score_family` on the arrays: the same scores, in the same order."""
        hits, at = self.hits, self.at
        assert hits.parent_codes is not None
        code = hits.parent_codes[at]
        if hits.among is not None and at.size > len(pool):
            # the pool's URIs looked up (~50) rather than every member's decoded (hundreds)
            asked = hits.among(at, pool)
        else:
            asked = np.fromiter((u in pool for u in hits.uris(at)), dtype=bool, count=at.size)
        scored = context_columns(
            _ParentsByCode(code, self.by_code),
            None,
            hits.scores[at],
            parent_scores,
            weights,
            asked,
            laid_out=self._layout(code),
            section_codes=(
                (lambda js: hits.heading_codes(at[js])) if sectioned and at.size else None
            ),
        )
        cols = hits.columns(at[np.asarray(scored.picked, dtype=np.int64)])
        return scored, [(cols, k) for k in range(len(cols))]

    def _layout(self, code: npt.NDArray[np.int64]) -> SiblingLayout:
        """:func:`~treehop.tree_scoring.sibling_order` of the members (parent codes
        ``code``): families of chunks by one stable sort on (parent, chunk index); a family
        with a leaf that is not a chunk (a whole file beside chunked ones) orders by name,
        so only its members' URIs are read. Families come out in another order than there
        (which changes no score), each in the same sibling order."""
        chunk = self.hits.chunks[self.at]
        _, family = unique_inverse(code)
        named = np.zeros(int(family.max(initial=-1)) + 1, dtype=bool)
        named[family[chunk < 0]] = True
        by_chunk = np.flatnonzero(~named[family])
        chunked = chunk_layout(family[by_chunk], chunk[by_chunk])
        if not named.any():
            return chunked
        order = by_chunk[np.asarray(chunked.order, dtype=np.int64)]
        by_name = np.flatnonzero(named[family])
        parent_of = [self.by_code[c] for c in code[by_name].tolist()]
        chunks: list[int | None] = [c if c >= 0 else None for c in chunk[by_name].tolist()]
        rest = sibling_order(parent_of, self.hits.uris(self.at[by_name]), chunks)
        return SiblingLayout(
            order.tolist() + by_name[np.asarray(rest.order, dtype=np.int64)].tolist(),
            chunked.sizes + rest.sizes,
        )


class _FolderFamily:
    """A family that is one folder of files (or one session of turns): the leaves of one
    parent in one array search (:class:`~treehop.stores.base.HitArrays`), none a chunk,
    at positions ``at`` of the search (best first). Its members' URIs are decoded once
    (the sibling order reads their names, the pool test and the placing their URIs) and no
    other column is built: the scores are read from the search's array, and a picked leaf
    that joins the list is placed as a deferred candidate on the search's ``load``
    (:meth:`HierarchicalRetriever._place_folder`).

    Why: this is the tree context of most finds over documents (one folder of ~50 files
    in 92% of them at 100k leaves), and its columns (six Python lists of every member,
    their parent codes grouped, the family's fields gathered again by position) were
    ~50 us of a ~1.1 ms find for values that ``context_columns`` reads as one array and
    the placing reads for the few leaves that join the list."""

    def __init__(self, hits: HitArrays, at: npt.NDArray[np.int64], parent: str) -> None:
        self.hits, self.at, self.parent = hits, at, parent

    @classmethod
    def of(
        cls,
        hits: HitArrays,
        leaves: npt.NDArray[np.int64],
        codes: npt.NDArray[np.int64],
        wanted: set[str],
    ) -> _FolderFamily | None:
        """The family of ``leaves`` (positions of ``hits``, none a chunk) where they share
        one parent and it is ``wanted``; ``None`` otherwise (several folders, or none
        wanted: :class:`_Family` reads those)."""
        code = codes[leaves]
        first = code[:1]
        if not bool(_all(code == first)):
            return None
        parent = hits.parent_uris(first)[0]
        return cls(hits, leaves, parent) if parent in wanted else None

    def score(
        self, pool: set[str], parent_scores: dict[str, float], weights: ContextWeights
    ) -> tuple[ContextColumns, list[str]]:
        """:func:`_score_family` of the folder (the same scores of the same members, in the
        same order), and the members' URIs."""
        uris = self.hits.uris(self.at)
        n = len(uris)
        parents = [self.parent] * n
        scored = context_columns(
            parents,
            None,
            self.hits.scores[self.at],
            parent_scores,
            weights,
            list(map(pool.__contains__, uris)),  # (a C loop: ``u in pool`` for each member)
            laid_out=sibling_order(parents, uris, [None] * n),
        )
        return scored, uris


FOLDER_FAMILY = True
"""The tree context reads one folder of files as :class:`_FolderFamily` (a switch for the
paired benchmark only: ``bench/bench_find_toggle.py --flag``)."""

LEAN_CANDIDATES = True
"""The global hits join the candidates in one loop each (:meth:`HierarchicalRetriever.
_take_vector_hits`, :meth:`~treehop.descent.Collected.add_global`) instead of a few calls
per hit (``False``: the general path; the tests and ``bench/bench_find_toggle.py --flag``
compare the two)."""


def _picked_headings(picked: Sequence[tuple[HitColumns, int]]) -> list[tuple[str, ...] | None]:
    """Each picked leaf's heading path (:func:`~treehop.tree_scoring.section_of`; ``None``
    for a leaf that is not a chunk), read per search as the store's heading codes where it
    has them, else from the chunks' nodes (other leaves have no heading path)."""
    out: list[tuple[str, ...] | None] = [None] * len(picked)
    groups: dict[int, tuple[HitColumns, list[int], list[int]]] = {}
    for j, (cols, i) in enumerate(picked):
        if cols.chunk_indexes[i] is not None:
            _, js, at = groups.setdefault(id(cols), (cols, [], []))
            js.append(j)
            at.append(i)
    for cols, js, at in groups.values():
        if cols.heading_codes is not None:
            codes, table = cols.heading_codes(np.asarray(at, dtype=np.int64))
            for j, c in zip(js, codes.tolist(), strict=True):
                if c >= 0:
                    out[j] = tuple(table[c])
        else:
            for j, node in zip(js, cols.load(at), strict=True):
                out[j] = section_of(node)
    return out


def _sections(family: _Family) -> Callable[[int], tuple[str, ...] | None]:
    """Family leaf ``j``'s heading path (:func:`~treehop.tree_scoring.section_of`), read
    when asked: a node is built only for a chunk next to a ranked leaf (other leaves have
    no heading path)."""

    def section(j: int) -> tuple[str, ...] | None:
        cols, i = family.source(j)
        if cols.chunk_indexes[i] is None:
            return None
        return section_of(cols.load([i])[0])

    return section
