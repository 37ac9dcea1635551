"""Typed events for the stages of one retrieval, built once from a :class:`FindResult`.

Why in the core: tracing a retrieval (which starting points the global step picked, how the
descent went, whether the rerank fell back to vector scores, where tag hops led, what intent
analysis planned) is the same whatever framework listens. The LangChain adapter turns these
into custom callback events (:attr:`StageEvent.EVENT` names them, :meth:`payload` is the
JSON-friendly data) and the LlamaIndex adapter into instrumentation events (its event classes
inherit these fields), so neither builds payloads of its own and they cannot drift.

Building them costs no search work: everything comes from the per-query
:class:`~treehop.models.QueryResult`\\ s and the plan the result already carries. Adapters build
them only when a handler listens.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from .models import FindResult

__all__ = [
    "DescentStage",
    "GlobalSearchStage",
    "IntentAnalysisStage",
    "RerankFallbackStage",
    "StageEvent",
    "TagHopStage",
    "stage_events",
]


class StageEvent(BaseModel):
    """One stage of a retrieval; :attr:`EVENT` is its event name."""

    EVENT: ClassVar[str] = ""
    query: str

    def payload(self) -> dict[str, Any]:
        """The event as JSON-friendly data."""
        return self.model_dump(mode="json")


class IntentAnalysisStage(StageEvent):
    """What intent analysis decided to look for (``search()``, or a source's rewrite)."""

    EVENT: ClassVar[str] = "treehop_query_plan"
    queries: list[dict[str, Any]] = Field(default_factory=list)
    reasoning: str = ""
    fallback: bool = False
    fallback_reason: str | None = None
    planner: str | None = None


class GlobalSearchStage(StageEvent):
    """The starting points the global vector step picked for one typed query, best first."""

    EVENT: ClassVar[str] = "treehop_global_search"
    starting_points: list[tuple[str, float]] = Field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "starting_points": [{"uri": u, "score": float(s)} for u, s in self.starting_points],
        }


class DescentStage(StageEvent):
    """How the best-first descent went for one typed query."""

    EVENT: ClassVar[str] = "treehop_descent"
    rounds: int = 0
    stop_reason: str = ""
    nodes_scored: int = 0
    searched_directories: list[str] = Field(default_factory=list)
    rerank_calls: int = 0
    elapsed_ms: float = 0.0


class RerankFallbackStage(StageEvent):
    """The reranker failed (error, timeout, bad scores) and the results use vector scores."""

    EVENT: ClassVar[str] = "treehop_rerank_fallback"
    queries: list[dict[str, str | None]] = Field(default_factory=list)
    """``{"query": ..., "reason": ...}`` for every typed query that fell back."""

    @property
    def first_reason(self) -> str:
        """The first reason given (``"unknown"`` when none was)."""
        return next((str(q["reason"]) for q in self.queries if q.get("reason")), "unknown")


class TagHopStage(StageEvent):
    """Tag hops added subtrees outside the vector neighbourhood for one typed query."""

    EVENT: ClassVar[str] = "treehop_tag_hops"
    trigger_reason: str = ""
    tags_used: list[str] = Field(default_factory=list)
    subtrees_added: list[str] = Field(default_factory=list)
    hops_tried: int = 0
    hits_produced: int = 0
    hits_in_topk: int = 0


_DESCENT_FIELDS = set(DescentStage.model_fields) - {"query"}
_HOP_FIELDS = set(TagHopStage.model_fields) - {"query"}


def stage_events(
    query: str, result: FindResult, display: Callable[[str], str] | None = None
) -> list[StageEvent]:
    """The stage events of one retrieval, in pipeline order.

    The plan (when there was one); the global step and the descent of every typed query; one
    rerank fallback when any query fell back; the tag hops of every query that hopped.
    ``display`` (the client's :meth:`~treehop.AsyncTreehop.display`) writes the URIs of the
    starting points, searched directories and hop subtrees as the hits' own URIs are written
    (``viking://~/memories/...``, not the resolved ``viking://user/<name>/...``), so a
    listener can match them with the returned documents' ids.
    """
    show = display or (lambda u: u)
    events: list[StageEvent] = []
    plan = result.query_plan
    if plan is not None:
        events.append(
            IntentAnalysisStage(
                query=query,
                queries=[q.model_dump(mode="json") for q in plan.queries],
                reasoning=plan.reasoning,
                fallback=plan.fallback,
                fallback_reason=plan.fallback_reason,
                planner=plan.planner,
            )
        )
    qrs = result.query_results or []
    for qr in qrs:
        q = qr.query.query
        starts = [(show(u), s) for u, s in qr.starting_points]
        events.append(GlobalSearchStage(query=q, starting_points=starts))
        descent = qr.model_dump(include=_DESCENT_FIELDS)
        descent["searched_directories"] = [show(u) for u in descent["searched_directories"]]
        events.append(DescentStage(query=q, **descent))
    fell_back = [
        {"query": qr.query.query, "reason": qr.rerank_fallback_reason}
        for qr in qrs
        if qr.rerank_fallback
    ]
    if fell_back:
        events.append(RerankFallbackStage(query=query, queries=fell_back))
    for qr in qrs:
        hops = qr.tag_hops
        if hops.triggered:
            hop = hops.model_dump(include=_HOP_FIELDS)
            hop["subtrees_added"] = [show(u) for u in hop["subtrees_added"]]
            events.append(TagHopStage(query=qr.query.query, **hop))
    return events
