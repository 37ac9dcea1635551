"""Instrumentation events for the stages of a treehop retrieval that LlamaIndex has no event for.

Reranking itself is reported with LlamaIndex's own ``ReRankStartEvent``/``ReRankEndEvent``, so
existing handlers (tracing, observability backends) see it without knowing treehop. These events
add what only treehop does: the global vector step and the heap descent of every retrieval,
falling back from rerank to vector scores, hopping sideways through shared tags, and planning
queries from the conversation (``search`` mode). They are built only when a handler listens.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.instrumentation.events import BaseEvent
from pydantic import Field


class TreehopRerankFallbackEvent(BaseEvent):
    """The reranker failed (error, timeout, bad scores); the results use vector scores.

    Emitted once per retrieval, between the rerank start and end events, so that a dashboard can
    tell a reranked result from one that silently degraded.
    """

    query: str
    reason: str
    model_name: str

    @classmethod
    def class_name(cls) -> str:
        return "TreehopRerankFallbackEvent"


class TreehopTagHopEvent(BaseEvent):
    """Tag hops added subtrees outside the vector neighbourhood for one typed query."""

    query: str
    trigger_reason: str = ""
    tags_used: list[str] = Field(default_factory=list)
    subtrees_added: list[str] = Field(default_factory=list)
    hops_tried: int = 0
    hits_produced: int = 0
    hits_in_topk: int = 0
    #: URIs of the returned nodes that were reached through a hop.
    node_ids: list[str] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "TreehopTagHopEvent"


class TreehopQueryPlanEvent(BaseEvent):
    """What intent analysis decided to look for (``search`` mode only)."""

    query: str
    queries: list[dict[str, Any]] = Field(default_factory=list)
    reasoning: str = ""
    fallback: bool = False
    fallback_reason: str | None = None
    planner: str | None = None

    @classmethod
    def class_name(cls) -> str:
        return "TreehopQueryPlanEvent"


class TreehopGlobalSearchEvent(BaseEvent):
    """Every retrieval: the starting points the global vector step picked for one query."""

    query: str
    #: ``(uri, score)`` of each starting point, best first.
    starting_points: list[tuple[str, float]] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "TreehopGlobalSearchEvent"


class TreehopDescentEvent(BaseEvent):
    """Every retrieval: how the best-first descent went for one query."""

    query: str
    rounds: int = 0
    stop_reason: str = ""
    nodes_scored: int = 0
    searched_directories: list[str] = Field(default_factory=list)
    rerank_calls: int = 0
    elapsed_ms: float = 0.0

    @classmethod
    def class_name(cls) -> str:
        return "TreehopDescentEvent"
