"""Instrumentation events for the stages of a treehop retrieval that LlamaIndex has no event for.

Reranking itself is reported with LlamaIndex's own ``ReRankStartEvent``/``ReRankEndEvent``, so
existing handlers (tracing, observability backends) see it without knowing treehop. These events
add what only treehop does: the global vector step and the heap descent of every retrieval,
falling back from rerank to vector scores, hopping sideways through shared tags, and planning
queries from the conversation (``search`` mode). They are built only when a handler listens.

Each one is the core's typed stage event (:mod:`treehop.stage_events`) as a LlamaIndex
``BaseEvent``: the fields are inherited, so the two cannot drift.
"""

from __future__ import annotations

from llama_index.core.instrumentation.events import BaseEvent
from pydantic import Field

from treehop.stage_events import (
    DescentStage,
    GlobalSearchStage,
    IntentAnalysisStage,
    RerankFallbackStage,
    TagHopStage,
)


class _TreehopEvent(BaseEvent):
    @classmethod
    def class_name(cls) -> str:
        return cls.__name__


class TreehopRerankFallbackEvent(_TreehopEvent, RerankFallbackStage):
    """The reranker failed (error, timeout, bad scores); the results use vector scores.

    Emitted once per retrieval, between the rerank start and end events, so that a dashboard can
    tell a reranked result from one that silently degraded. ``reason`` is the first query's.
    """

    reason: str
    model_name: str


class TreehopTagHopEvent(_TreehopEvent, TagHopStage):
    """Tag hops added subtrees outside the vector neighbourhood for one typed query."""

    node_ids: list[str] = Field(default_factory=list)
    """URIs of the returned nodes that were reached through a hop."""


class TreehopQueryPlanEvent(_TreehopEvent, IntentAnalysisStage):
    """What intent analysis decided to look for (``search`` mode, or a source's rewrite)."""


class TreehopGlobalSearchEvent(_TreehopEvent, GlobalSearchStage):
    """Every retrieval: the starting points the global vector step picked for one query."""


class TreehopDescentEvent(_TreehopEvent, DescentStage):
    """Every retrieval: how the best-first descent went for one query."""
