"""A find's result models, built directly from values already of their declared types
(issue 35 round 12: ``HierarchicalRetriever._matched_all`` and ``_finish``'s fields), are
the models validation builds: every value, its type, the fields set, the dump and
``__dict__`` order; on the vector and the rerank track, with collapsed chunks; and a result
whose values are of other types is validated as before."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from treehop import RetrievalConfig
from treehop.descent import Candidate, Descent, Track
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import (
    ChunkContext,
    ContextType,
    MatchedContext,
    Node,
    QueryResult,
    RetrievalMode,
    TagHopMetrics,
    TypedQuery,
    assign,
)
from treehop.rerankers.base import BaseReranker
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import HAND_ROOT as R
from treehop_test_doubles import hand_placed_store as build
from treehop_test_doubles import hand_vector as vec

NO_CONTEXT: dict[str, Any] = {
    "context_neighbour_weight": 0.0,
    "context_parent_weight": 0.0,
    "context_sibling_weight": 0.0,
}


def _store() -> EmbeddedStore:
    """Two files, one in three chunks (a slot with collapsed chunks), tags and metadata."""
    store = build(
        {
            R: (vec((7, 1.0)), []),
            f"{R}/a": (vec((0, 1.0), (1, 1.0)), ["red"]),
            f"{R}/b.md": (vec((0, 0.8), (2, 0.6)), ["green", "blue"]),
            f"{R}/c.md": (vec((0, 0.5), (3, 0.8)), []),
        }
    )
    chunks = [
        Node(
            uri=f"{R}/a#chunk-{i}",
            parent_uri=f"{R}/a",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            abstract=f"part {i}",
            content=f"part {i} text",
            chunk_index=i,
            ancestors=[R, f"{R}/a"],
            tags=["red"],
            metadata={"passage_start": 0, "heading_path": ["A", "B"]},
        )
        for i in range(3)
    ]
    store.upsert(chunks, np.stack([vec((0, 1.0)), vec((0, 0.9), (1, 0.2)), vec((0, 0.1), (3, 1))]))
    return store


class _Scripted(BaseReranker):
    name = "scripted"

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [0.25 + 0.5 * ("part 2" in d) + 0.125 * ("b.md" in d) for d in documents]


def _reference(q: Any, state: Descent, group: list[Candidate], turns: list[ChunkContext]) -> Any:
    """The result of one slot as the round-11 code built it: every field validated, each
    score read through ``Score.on`` of the descent's track."""
    track = state.track
    cand, rest = group[0], group[1:]
    node = cand.node
    return MatchedContext(
        uri=node.uri,
        context_type=node.context_type,
        is_leaf=node.is_leaf,
        abstract=node.abstract,
        score=cand.final.on(track),
        level=node.level,
        parent_uri=node.parent_uri,
        overview=node.overview,
        content=node.content,
        tags=node.tags,
        metadata=node.metadata,
        chunk_index=node.chunk_index,
        vector_score=cand.vector_score,
        own_score=cand.own.on(track),
        rerank_score=cand.own.rr if track is Track.RERANK else None,
        rerank_fallback=state.fallback_reason is not None,
        rerank_fallback_reason=state.fallback_reason,
        found_by=cand.found_by,
        found_via=cand.found_via,
        hop_tag=cand.hop.tag if cand.hop else None,
        hop_source=cand.hop.source if cand.hop else None,
        matched_queries=[q.req.query],
        collapsed=[
            ChunkContext(
                uri=c.node.uri,
                chunk_index=c.node.chunk_index,
                score=c.final.on(track),
                abstract=c.node.abstract,
                content=c.node.content,
                position=None,
                own_score=c.own.on(track),
            )
            for c in rest
        ]
        + turns,
    )


def _same_model(got: Any, want: Any) -> None:
    assert type(got) is type(want)
    assert got == want
    assert got.model_fields_set == want.model_fields_set
    assert list(vars(got)) == list(vars(want))
    assert [type(v) for v in vars(got).values()] == [type(v) for v in vars(want).values()]
    assert got.model_dump_json() == want.model_dump_json()
    assert repr(got) == repr(want)
    back = pickle.loads(pickle.dumps(got))
    assert back == want and back.model_fields_set == want.model_fields_set


@pytest.mark.parametrize("reranked", [False, True])
@pytest.mark.parametrize("slot_chars", [None, 0])
def test_a_finds_results_are_the_validated_models(
    monkeypatch: pytest.MonkeyPatch, reranked: bool, slot_chars: int | None
) -> None:
    """Every result ``_matched_all`` builds equals the one built by validation with its
    scores read on the descent's track (the rerank track's scores are the reranker's, not
    the vector field), a chunk slot's collapsed chunks included (``slot_chars=0``: none
    shown in the slot's text, so each position is ``None`` as in the reference)."""
    seen: list[tuple[Any, ...]] = []
    built = HierarchicalRetriever._matched_all

    def spy(self: Any, q: Any, state: Any, groups: Any, turns: Any) -> Any:
        out = built(self, q, state, groups, turns)
        seen.append((q, state, groups, turns, out))
        return out

    monkeypatch.setattr(HierarchicalRetriever, "_matched_all", spy)
    # (document slots: one chunked file among fewer files than the limit folds its chunks)
    cfg = RetrievalConfig(**NO_CONTEXT, few_document_passages=False)
    r = HierarchicalRetriever(_store(), cfg, _Scripted() if reranked else None)
    req = RetrievalRequest(
        query=TypedQuery(query="part"),
        vector=vec((0, 1.0)),
        roots=[R],
        limit=5,
        dense_weight=1.0,
        include_directories=False,
        mode=RetrievalMode.THINKING if reranked else RetrievalMode.QUICK,
        slot_chars=slot_chars,
    )
    res = asyncio.run(r.retrieve(req))
    assert len(seen) == 1
    q, state, groups, turns, out = seen[0]
    assert (state.track is Track.RERANK) is reranked
    assert out == res.matched_contexts and len(out) >= 3
    assert any(m.collapsed for m in out)  # (the chunked file's slot)
    if reranked:  # (the rerank scores differ from the vector scores: a wrong read shows)
        assert all(m.rerank_score is not None and m.score != m.vector_score for m in out)
    for i, (group, m) in enumerate(zip(groups, out, strict=True)):
        want = _reference(q, state, group, [] if turns is None else turns[i])
        if slot_chars is None:  # (a shown chunk's position: the slot's, checked as is)
            want = want.model_copy(
                update={
                    "collapsed": [
                        w.model_copy(update={"position": g.position})
                        for w, g in zip(want.collapsed, m.collapsed, strict=True)
                    ]
                }
            )
        _same_model(m, want)
        assert m.tags is not group[0].node.tags and m.metadata is not group[0].node.metadata


def test_the_finished_fields_are_set_as_assignment_sets_them() -> None:
    """``models.assign`` (how the retriever sets a result's finished fields) is an
    assignment to a model that validates none: the same values,
    the same fields marked set, the same ``__dict__`` order, on a fresh result and on one
    whose fields were set before."""
    for start in ({"query": TypedQuery(query="q")}, {"query": TypedQuery(query="q"), "rounds": 2}):
        got, want = QueryResult(**start), QueryResult(**start)
        values = {
            "matched_contexts": [],
            "stop_reason": "done",
            "rerank_fallback": True,
            "rerank_fallback_reason": "timeout",
            "elapsed_ms": 1.5,
        }
        assign(got, **values)
        for k, v in values.items():
            setattr(want, k, v)
        _same_model(got, want)
        hops, hops_want = TagHopMetrics(), TagHopMetrics()
        assign(hops, hits_produced=3)
        hops_want.hits_produced = 3
        _same_model(hops, hops_want)
