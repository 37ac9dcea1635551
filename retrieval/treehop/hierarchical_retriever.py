"""Stage 2 (and 3): the hierarchical heap search, with rerank and its fallback.

The algorithm of the seed design, step by step:

1. roots: the context type's root directory, or the caller's target directories;
2. a global vector search (``global_search_topk``) inside the roots picks starting points;
3. starting points (directory hits, parents of leaf hits, the roots) are merged and scored
   (reranked in THINKING mode when a reranker is set); tag hops may add sideways subtrees here;
4. best-first descent: pop the best directory, score its children, propagate
   ``alpha*child + (1-alpha)*parent``, keep those above the threshold, push directories; stop when
   the top-k has not changed for ``max_convergence_rounds`` rounds or the heap is empty;
5. convert to :class:`~treehop.models.MatchedContext`, leaves included.

Two score tracks are kept for every candidate: one from vector scores and one from rerank
scores. If any rerank call fails, the query falls back to the vector track as a whole, so that
scores of different scales are never mixed, and the result says so.
"""

from __future__ import annotations

import asyncio
import dataclasses
import heapq
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from .config import RetrievalConfig
from .filters import MetadataFilter, TagFilter
from .models import (
    ContextType,
    FoundBy,
    MatchedContext,
    Node,
    QueryResult,
    RetrievalMode,
    RoundTrace,
    TypedQuery,
)
from .rerankers.base import Reranker, safe_rerank
from .stores.base import Scope, ScoredNode, Vector, VectorStore
from .tag_hops import HopStart, plan_tag_hops

T = TypeVar("T")
RERANK_DOC_CHARS = 2000


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
    context_types: tuple[ContextType, ...] = ()
    include_directories: bool = True
    dense_weight: float | None = None
    explain: bool = False


@dataclass
class _Candidate:
    node: Node
    vector_score: float
    rerank_score: float | None
    final_vec: float
    final_rr: float | None
    found_by: FoundBy
    found_via: str | None
    matches: bool
    hop: HopStart | None = None


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

    async def _store_call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self.store.capabilities.remote:
            return await asyncio.to_thread(fn, *args, **kwargs)
        return fn(*args, **kwargs)

    async def retrieve(self, req: RetrievalRequest) -> QueryResult:
        cfg = self.config
        t0 = time.perf_counter()
        threshold = cfg.score_threshold if req.score_threshold is None else req.score_threshold
        dense_weight = cfg.dense_weight if req.dense_weight is None else req.dense_weight
        use_rerank = req.mode is RetrievalMode.THINKING and self.reranker is not None
        result = QueryResult(query=req.query)
        alpha = cfg.score_propagation_alpha
        query_text = req.query.query
        base_scope = Scope(
            context_types=req.context_types,
            tags=req.tags,
            metadata=req.metadata,
            traversal=True,
        )
        fallback_reason: str | None = None

        async def rerank(nodes: Sequence[Node]) -> list[float] | None:
            nonlocal use_rerank, fallback_reason
            if not use_rerank or not nodes:
                return None
            assert self.reranker is not None
            docs = [n.embedding_text()[:RERANK_DOC_CHARS] for n in nodes]
            result.rerank_calls += 1
            outcome = await safe_rerank(self.reranker, query_text, docs, cfg.rerank_timeout_s)
            if outcome.scores is None:
                use_rerank = False
                fallback_reason = outcome.fallback_reason
                return None
            return outcome.scores

        # Step 2: global search inside the roots.
        global_scope = _replace(base_scope, subtrees=tuple(req.roots))
        hits: list[ScoredNode] = await self._store_call(
            self.store.search,
            req.vector,
            global_scope,
            cfg.global_search_topk,
            query_text=query_text,
            dense_weight=dense_weight,
        )
        result.nodes_scored += len(hits)
        root_set = set(req.roots)
        hits = [h for h in hits if h.node.uri not in root_set]

        # Step 3: merge starting points and score them (one rerank call for the batch).
        rr = await rerank([h.node for h in hits])
        collected: dict[str, _Candidate] = {}
        starts: dict[str, tuple[float, float | None]] = {}
        leaf_parents: dict[str, float | None] = {}
        for i, h in enumerate(hits):
            r = rr[i] if rr is not None else None
            cand = _Candidate(
                h.node, h.vector_score, r, h.score, r, FoundBy.GLOBAL, None, h.matches
            )
            # The threshold applies to global hits as to children: no result falls below it.
            passes = _active(cand, use_rerank) > threshold
            if passes and h.matches and (h.node.is_leaf or req.include_directories):
                collected[h.node.uri] = cand
            if not h.node.is_leaf:
                _best_start(starts, h.node.uri, h.score, r)
            elif (
                cfg.expand_leaf_parents and h.node.parent_uri and h.node.parent_uri not in root_set
            ):
                prev_r = leaf_parents.get(h.node.parent_uri)
                leaf_parents[h.node.parent_uri] = (
                    r if prev_r is None or r is None else max(r, prev_r)
                )
        # Parents of leaf hits start from their own vector score (what they would have scored as
        # a hit), so that propagation blends each child with its real parent's score.
        extra = [u for u in leaf_parents if u not in starts]
        if extra:
            pvecs = await self._store_call(self.store.get_vectors, extra)
            own = np.asarray(pvecs, dtype=np.float32) @ np.asarray(req.vector, dtype=np.float32)
            for u, s in zip(extra, own.tolist(), strict=True):
                _best_start(starts, u, float(s), leaf_parents[u])
        for root in req.roots:
            starts.setdefault(root, (0.0, 0.0 if rr is not None else None))

        # Step 3b: tag hops, between merging the starting points and the descent.
        hop_starts, hop_metrics = await self._store_call(
            plan_tag_hops, self.store, hits, req.roots, base_scope, cfg
        )
        result.tag_hops = hop_metrics
        hop_by_uri = {h.uri: h for h in hop_starts}

        seq = itertools.count()
        heap: list[tuple[float, int, str, float, float | None, HopStart | None]] = []

        def push(uri: str, fv: float, fr: float | None, hop: HopStart | None) -> None:
            key = fr if (use_rerank and fr is not None) else fv
            heapq.heappush(heap, (-key, next(seq), uri, fv, fr, hop))

        for uri, (fv, fr) in starts.items():
            push(uri, fv, fr, None)
        for hs in hop_starts:
            push(hs.uri, hs.start_score, hs.start_score if rr is not None else None, hs)
        result.starting_points = [(u, s[0]) for u, s in starts.items()] + [
            (h.uri, h.start_score) for h in hop_starts
        ]

        # Step 4: best-first descent.
        visited: set[str] = set()
        prev_top: tuple[str, ...] | None = None
        unchanged = 0
        stop_reason = "heap empty"
        while heap:
            if result.rounds >= cfg.max_rounds:
                stop_reason = f"max_rounds ({cfg.max_rounds}) reached"
                break
            _, _, uri, parent_v, parent_r, hop = heapq.heappop(heap)
            if uri in visited:
                continue
            visited.add(uri)
            result.rounds += 1
            result.searched_directories.append(uri)
            children: list[ScoredNode] = await self._store_call(
                self.store.search,
                req.vector,
                _replace(base_scope, parent_uri=uri),
                cfg.max_children_per_dir,
                query_text=query_text,
                dense_weight=dense_weight,
            )
            result.nodes_scored += len(children)
            was_reranking = use_rerank
            crr = await rerank([c.node for c in children])
            if was_reranking and not use_rerank:
                # The reranker just failed: re-key the heap on the vector track.
                heap = [(-e[3], e[1], e[2], e[3], e[4], e[5]) for e in heap]
                heapq.heapify(heap)
            hop_here = hop or hop_by_uri.get(uri)
            trace_children: list[tuple[str, float]] = []
            for i, c in enumerate(children):
                fv = alpha * c.score + (1 - alpha) * parent_v
                r = crr[i] if crr is not None else None
                fr = None
                if r is not None:
                    fr = alpha * r + (1 - alpha) * (parent_r if parent_r is not None else 0.0)
                active = fr if (use_rerank and fr is not None) else fv
                if not active > threshold:
                    continue
                trace_children.append((c.node.uri, active))
                node = c.node
                if c.matches and (node.is_leaf or req.include_directories):
                    prev = collected.get(node.uri)
                    found_by = FoundBy.TAG_HOP if hop_here is not None else FoundBy.CHILD
                    cand = _Candidate(
                        node, c.vector_score, r, fv, fr, found_by, uri, True, hop_here
                    )
                    if prev is None or _better(cand, prev, use_rerank):
                        collected[node.uri] = cand
                if not node.is_leaf and node.uri not in visited:
                    push(node.uri, fv, fr, hop_here)
            if req.explain:
                trace_children.sort(key=lambda x: -x[1])
                result.trace.append(
                    RoundTrace(
                        round=result.rounds,
                        popped=uri,
                        popped_score=parent_r if use_rerank and parent_r is not None else parent_v,
                        children_scored=len(children),
                        best_children=trace_children[:5],
                        rerank_fallback_reason=fallback_reason,
                    )
                )
            top = tuple(_ranked_uris(collected, use_rerank)[: req.limit])
            # Convergence counts only once the top-k is full: a partial top-k that stops
            # changing means the popped directories held nothing, not that the best is found.
            if top == prev_top and len(top) >= req.limit:
                # A round inside a hopped-to subtree that changes nothing does not spend the
                # direct search's convergence budget (measured: counting it made hops cost
                # recall@100 on ordinary queries, bench/bench_tag_hops.py).
                if hop_here is None:
                    unchanged += 1
                if unchanged >= cfg.max_convergence_rounds:
                    stop_reason = (
                        f"top-{req.limit} unchanged for {cfg.max_convergence_rounds} rounds"
                    )
                    break
            else:
                unchanged = 0
                prev_top = top

        # Step 5: MatchedContexts.
        fell_back = fallback_reason is not None
        ranked = sorted(collected.values(), key=lambda c: _active(c, use_rerank), reverse=True)[
            : req.limit
        ]
        out: list[MatchedContext] = []
        for cand in ranked:
            out.append(
                MatchedContext(
                    uri=cand.node.uri,
                    context_type=cand.node.context_type,
                    is_leaf=cand.node.is_leaf,
                    abstract=cand.node.abstract,
                    score=_active(cand, use_rerank),
                    level=cand.node.level,
                    parent_uri=cand.node.parent_uri,
                    overview=cand.node.overview,
                    content=cand.node.content,
                    tags=list(cand.node.tags),
                    metadata=dict(cand.node.metadata),
                    chunk_index=cand.node.chunk_index,
                    vector_score=cand.vector_score,
                    rerank_score=cand.rerank_score if use_rerank else None,
                    rerank_fallback=fell_back,
                    rerank_fallback_reason=fallback_reason,
                    found_by=cand.found_by,
                    found_via=cand.found_via,
                    hop_tag=cand.hop.tag if cand.hop else None,
                    hop_source=cand.hop.source if cand.hop else None,
                    matched_queries=[req.query],
                )
            )
        hop_hits = [c for c in collected.values() if c.hop is not None]
        result.tag_hops.hits_produced = len(hop_hits)
        result.tag_hops.hits_in_topk = sum(1 for m in out if m.found_by is FoundBy.TAG_HOP)
        result.matched_contexts = out
        result.stop_reason = stop_reason
        result.rerank_fallback = fell_back
        result.rerank_fallback_reason = fallback_reason
        result.elapsed_ms = (time.perf_counter() - t0) * 1000
        return result


def _replace(scope: Scope, **changes: Any) -> Scope:
    return dataclasses.replace(scope, **changes)


def _best_start(
    starts: dict[str, tuple[float, float | None]], uri: str, v: float, r: float | None
) -> None:
    prev = starts.get(uri)
    if prev is None or v > prev[0]:
        starts[uri] = (v, r if prev is None or r is None or prev[1] is None else max(r, prev[1]))


def _active(c: _Candidate, use_rerank: bool) -> float:
    return c.final_rr if (use_rerank and c.final_rr is not None) else c.final_vec


def _better(new: _Candidate, old: _Candidate, use_rerank: bool) -> bool:
    """A node reached twice keeps its best score; a direct path beats a hop on ties."""
    a, b = _active(new, use_rerank), _active(old, use_rerank)
    # Scores of one node computed by different matrix products differ in the last bits.
    if abs(a - b) > 1e-6:
        return a > b
    return old.hop is not None and new.hop is None


def _ranked_uris(collected: dict[str, _Candidate], use_rerank: bool) -> list[str]:
    items = list(collected.values())
    if not items:
        return []
    keys = np.fromiter((_active(c, use_rerank) for c in items), dtype=np.float64, count=len(items))
    order = np.argsort(-keys, kind="stable")
    return [items[i].node.uri for i in order]
