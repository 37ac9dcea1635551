"""The ``search_knowledge`` post-processing controls, applied after the heap search.

- ``rerank_threshold``: drop hits whose rerank score is below it (only hits that were reranked);
- ``chunk_diffusion_count`` (0-5): add the n neighbouring chunks on each side of a chunk hit, in
  its file's chunk order, so that an answer split across chunk borders arrives whole;
- ``chunk_group``: regroup hits by document, documents ordered by their best hit, chunks of one
  document in reading order.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import InvalidQueryError
from .models import FoundBy, MatchedContext
from .stores.base import VectorStore
from .uri import CHUNK_MARK, within_any
from .validation import shown_value

MAX_DIFFUSION = 5


def check_controls(
    limit: int, retrieve_count: int | None, rerank_active: bool, chunk_diffusion_count: int
) -> int | None:
    """Validate the controls; returns the effective retrieve count (``None`` if unused)."""
    if (
        isinstance(chunk_diffusion_count, bool)
        or not isinstance(chunk_diffusion_count, int)
        or not (0 <= chunk_diffusion_count <= MAX_DIFFUSION)
    ):
        raise InvalidQueryError(
            f"chunk_diffusion_count must be an integer in 0..{MAX_DIFFUSION}, "
            f"got {shown_value(chunk_diffusion_count)}"
        )
    if retrieve_count is None:
        return max(limit, 25) if rerank_active else None
    if isinstance(retrieve_count, bool) or not isinstance(retrieve_count, int):
        raise InvalidQueryError(
            f"retrieve_count must be an integer, got {shown_value(retrieve_count)}"
        )
    if not rerank_active:
        raise InvalidQueryError(
            "retrieve_count applies only when rerank is on (mode='thinking' with a reranker)"
        )
    if not limit <= retrieve_count <= 1000:
        raise InvalidQueryError(
            f"retrieve_count must be >= limit ({limit}) and <= 1000, "
            f"got {shown_value(retrieve_count)}"
        )
    return retrieve_count


def apply_rerank_threshold(
    hits: Sequence[MatchedContext], threshold: float | None
) -> list[MatchedContext]:
    if threshold is None:
        return list(hits)
    return [h for h in hits if h.rerank_score is None or h.rerank_score >= threshold]


def diffuse_chunks(
    hits: Sequence[MatchedContext],
    store: VectorStore,
    n: int,
    scope: Sequence[str] | None = None,
) -> list[MatchedContext]:
    """Insert up to ``n`` neighbours on each side after every chunk hit (no duplicates).

    Runs on stored (resolved) URIs, before they are mapped back to the ``~`` display form.
    ``scope``: the search's roots (resolved); a neighbour outside every one is not added.
    Why: a ``target_uri`` naming one chunk searches that chunk, and diffusion used to add
    its neighbours -- chunks the caller left out -- to the result (only a chunk root can
    exclude a hit's sibling, so nothing is checked when no root is a chunk).
    """
    if n <= 0:
        return list(hits)
    roots = list(scope or ())
    confined = any(CHUNK_MARK in r for r in roots)
    seen = {h.uri for h in hits}
    out: list[MatchedContext] = []
    siblings_cache: dict[str, list[MatchedContext]] = {}
    for h in hits:
        out.append(h)
        if h.chunk_index is None or h.parent_uri is None:
            continue
        if h.parent_uri not in siblings_cache:
            kids = store.children(h.parent_uri)
            siblings_cache[h.parent_uri] = [
                MatchedContext(
                    uri=k.uri,
                    context_type=k.context_type,
                    is_leaf=k.is_leaf,
                    abstract=k.abstract,
                    score=h.score,
                    level=k.level,
                    parent_uri=h.parent_uri,
                    content=k.content,
                    tags=list(k.tags),
                    metadata=dict(k.metadata),
                    chunk_index=k.chunk_index,
                    found_by=FoundBy.NEIGHBOUR,
                    found_via=h.uri,
                    matched_queries=list(h.matched_queries),
                )
                for k in kids
                if k.chunk_index is not None
            ]
        for s in siblings_cache[h.parent_uri]:
            assert s.chunk_index is not None
            if 0 < abs(s.chunk_index - h.chunk_index) <= n and s.uri not in seen:
                if confined and not within_any(s.uri, roots):
                    continue
                seen.add(s.uri)
                out.append(s.model_copy(update={"score": h.score, "found_via": h.uri}))
    return out


def group_chunks(hits: Sequence[MatchedContext]) -> list[MatchedContext]:
    """Group by document (a chunk's file, else the hit itself), best document first."""
    groups: dict[str, list[MatchedContext]] = {}
    for h in hits:
        key = h.parent_uri if h.chunk_index is not None and h.parent_uri else h.uri
        groups.setdefault(key, []).append(h)
    ordered = sorted(groups.values(), key=lambda g: -max(x.score for x in g))
    out: list[MatchedContext] = []
    for g in ordered:
        out.extend(sorted(g, key=lambda x: (x.chunk_index is None, x.chunk_index or 0)))
    return out
