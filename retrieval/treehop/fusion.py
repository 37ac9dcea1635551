"""Fusing the results of a plan's typed queries into one ranking per context type.

OpenViking concatenates the per-query lists, so a node found by two queries appears twice and
a node found only by a minor query can outrank the main need. Here each context type gets one
entry per URI, ranked by *priority-weighted reciprocal-rank fusion*::

    fused(d) = sum over queries q that found d of  w(priority_q) / (k + rank_q(d))
    w(p)     = 0.5 + 0.1 * p          (p = 1..5  ->  w = 0.6 .. 1.0)

Why RRF: the per-query scores are not comparable (one query may be reranked, another not; a
vague query has uniformly lower cosines), while ranks are. ``k = 60`` is the value of Cormack
et al. (2009), which flattens the head so that agreement between queries counts more than
winning one list.

Why this weight: priorities come from an LLM and are coarse, so they should reorder results
but not override evidence. With ``k = 60``, the top hit of a priority-1 query ties with about
the 41st hit of a priority-5 query (0.6/61 = 1/101.7), so within a normal ``limit`` the
essential query's hits lead; yet a URI that two priority-1 queries agree on at rank 1
(1.2/61) beats the single best hit of a priority-5 query (1/61). A linear ``p/5`` weight would
make a priority-1 hit worth less than the 300th hit of a priority-5 query, i.e. a strict
lexicographic order in which fusion no longer matters.

The fused score is divided by its ceiling -- the value of a URI ranked first by every query
that returned hits of that context type -- so it lies in (0, 1]: 1 means "the top hit of every
query", which also keeps scores of different context types on one scale when a caller merges
them. Ties are broken by the best raw score, then by URI, so the order is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .errors import InvalidQueryError
from .models import ContextType, MatchedContext, QueryResult, TypedQuery

DEFAULT_RRF_K = 60.0

RankedList = tuple[TypedQuery, Sequence[MatchedContext]]


def priority_weight(priority: int) -> float:
    """``0.5 + 0.1 * priority``: 0.6 for priority 1 up to 1.0 for priority 5 (see module doc)."""
    return 0.5 + 0.1 * min(5, max(1, int(priority)))


@dataclass
class _Entry:
    best: MatchedContext
    fused: float = 0.0
    vector_score: float | None = None
    rerank_score: float | None = None
    contributions: list[tuple[float, int, TypedQuery]] = field(default_factory=list)


def _max_opt(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def fuse(
    ranked_lists: Sequence[RankedList],
    *,
    k: float = DEFAULT_RRF_K,
    limit: int | None = None,
    weight: Callable[[int], float] = priority_weight,
) -> dict[ContextType, list[MatchedContext]]:
    """Fuse (typed query, hits) lists into one ranking per context type.

    Each list is ranked by its hits' ``score`` (best first; a URI repeated inside one list
    counts once, at its best rank). Hits are bucketed by their own ``context_type``. Every
    returned entry is a copy of the URI's best-scoring hit (its provenance: ``found_by`` ...)
    with ``vector_score`` and ``rerank_score`` the highest any query saw, ``score`` the
    normalised fused score, and ``matched_queries`` every typed query that found it, the
    biggest contributor first. Inputs are not modified.
    """
    if not k > 0:
        raise InvalidQueryError("k must be > 0")
    if limit is not None and limit < 1:
        raise InvalidQueryError("limit must be >= 1 or None")

    entries: dict[str, _Entry] = {}
    ceiling: dict[ContextType, float] = {}
    for list_index, (query, hits) in enumerate(ranked_lists):
        w = float(weight(query.priority))
        if not w > 0:
            raise InvalidQueryError(f"weight for priority {query.priority} must be > 0")
        ordered = sorted(hits, key=lambda h: h.score, reverse=True)
        seen: set[str] = set()
        types_in_list: set[ContextType] = set()
        rank = 0
        for hit in ordered:
            if hit.uri in seen:
                continue
            seen.add(hit.uri)
            rank += 1
            types_in_list.add(hit.context_type)
            contribution = w / (k + rank)
            entry = entries.get(hit.uri)
            if entry is None:
                entry = entries[hit.uri] = _Entry(best=hit)
            elif hit.score > entry.best.score:
                entry.best = hit
            entry.fused += contribution
            entry.vector_score = _max_opt(entry.vector_score, hit.vector_score)
            entry.rerank_score = _max_opt(entry.rerank_score, hit.rerank_score)
            entry.contributions.append((contribution, list_index, query))
        for ct in types_in_list:
            ceiling[ct] = ceiling.get(ct, 0.0) + w / (k + 1)

    buckets: dict[ContextType, list[_Entry]] = {ct: [] for ct in ContextType}
    for entry in entries.values():
        buckets[entry.best.context_type].append(entry)

    out: dict[ContextType, list[MatchedContext]] = {}
    for ct, bucket in buckets.items():
        bucket.sort(key=lambda e: (-e.fused, -e.best.score, e.best.uri))
        if limit is not None:
            bucket = bucket[:limit]
        fused_hits: list[MatchedContext] = []
        for e in bucket:
            matched: list[TypedQuery] = []
            for _, _, q in sorted(e.contributions, key=lambda c: (-c[0], c[1])):
                if q not in matched:
                    matched.append(q)
            fused_hits.append(
                e.best.model_copy(
                    update={
                        "score": e.fused / ceiling[ct],
                        "vector_score": e.vector_score,
                        "rerank_score": e.rerank_score,
                        "matched_queries": matched,
                    },
                    deep=True,
                )
            )
        out[ct] = fused_hits
    return out


def fuse_query_results(
    query_results: Sequence[QueryResult],
    *,
    k: float = DEFAULT_RRF_K,
    limit: int | None = None,
    weight: Callable[[int], float] = priority_weight,
) -> dict[ContextType, list[MatchedContext]]:
    """:func:`fuse` over the ``QueryResult`` of each typed query."""
    return fuse(
        [(r.query, r.matched_contexts) for r in query_results], k=k, limit=limit, weight=weight
    )
