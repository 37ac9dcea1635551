"""Which score a lower slot's extension competes with the next hit on (``EXTENSION_SCORE``;
issue 33, round 11).

A lower document slot's extensions (the chunks of its passage around its hit) are offered to
the budget as soon as their score reaches the next hit's (``EXTENSION_ORDER`` ``score``).
The score a chunk was ranked by may carry its neighbour's evidence (the chunk window lifts
the chunk beside a good one, and that neighbour is the slot's own hit), so the retriever
records each collected chunk's own score on :class:`ChunkContext` and the switch says which
one an extension bids with: ``final`` (the default, as before), ``own``, or ``own-both``
(the hits bid with their own scores too).
"""

from __future__ import annotations

import numpy as np
import pytest

import treehop.context_assembly as ca
from test_passage_grow_own import DOC, QUESTION, R, _guide, _unit
from treehop import RetrievalConfig, Treehop
from treehop.context_assembly import assemble_context
from treehop.models import ChunkContext, ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = "viking://resources/docs"


def _slot(
    doc: str,
    i: int,
    content: str,
    score: float,
    own: float | None = None,
    exts: list[ChunkContext] | None = None,
) -> MatchedContext:
    return MatchedContext(
        uri=f"{ROOT}/{doc}#chunk-{i}",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        content=content,
        score=score,
        own_score=own,
        chunk_index=i,
        collapsed=exts or [],
    )


def _lifted_extension() -> list[MatchedContext]:
    """A top slot; slot B whose +1 chunk ranks 0.75 (lifted by B's hit) but scores 0.40 on
    its own; hit C at 0.70 (0.72 on its own); hit D at 0.60 (0.80 on its own)."""
    ext = ChunkContext(
        uri=f"{ROOT}/b.md#chunk-8",
        chunk_index=8,
        score=0.75,
        own_score=0.40,
        content="B's neighbour talks about something else.",
        position=1,
    )
    return [
        _slot("a.md", 3, "Top hit.", 0.9, 0.9),
        _slot("b.md", 7, "Hit B.", 0.8, 0.8, [ext]),
        _slot("c.md", 2, "Hit C.", 0.70, 0.72),
        _slot("d.md", 5, "Hit D.", 0.60, 0.80),
    ]


def _order(monkeypatch: pytest.MonkeyPatch, mode: str) -> list[str]:
    monkeypatch.setattr(ca, "EXTENSION_SCORE", mode)
    out = assemble_context(_lifted_extension(), max_tokens=500)
    return [u.rsplit("/", 1)[-1] for u in out.uris]


def test_the_default_bids_with_the_ranked_score(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ca.EXTENSION_SCORE == "final"
    # 0.75 >= C's 0.70: B's neighbour goes before C
    assert _order(monkeypatch, "final") == [
        "a.md#chunk-3",
        "b.md#chunk-7",
        "b.md#chunk-8",
        "c.md#chunk-2",
        "d.md#chunk-5",
    ]


def test_own_bids_with_the_extensions_own_score(monkeypatch: pytest.MonkeyPatch) -> None:
    # 0.40 is below every later hit's ranked score: the neighbour goes last
    assert _order(monkeypatch, "own") == [
        "a.md#chunk-3",
        "b.md#chunk-7",
        "c.md#chunk-2",
        "d.md#chunk-5",
        "b.md#chunk-8",
    ]


def test_own_both_compares_own_with_own(monkeypatch: pytest.MonkeyPatch) -> None:
    ext = _lifted_extension()
    ext[1].collapsed[0].own_score = 0.75  # now above C's own 0.72, below D's own 0.80
    monkeypatch.setattr(ca, "EXTENSION_SCORE", "own-both")
    out = [u.rsplit("/", 1)[-1] for u in assemble_context(ext, max_tokens=500).uris]
    assert out.index("b.md#chunk-8") < out.index("c.md#chunk-2")
    # the hits keep their rank order; only where the extension bids changes
    assert [u for u in out if u != "b.md#chunk-8"] == [
        "a.md#chunk-3",
        "b.md#chunk-7",
        "c.md#chunk-2",
        "d.md#chunk-5",
    ]


def test_an_extension_without_an_own_score_bids_with_its_score(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hits = _lifted_extension()
    hits[1].collapsed[0].own_score = None
    monkeypatch.setattr(ca, "EXTENSION_SCORE", "own")
    out = [u.rsplit("/", 1)[-1] for u in assemble_context(hits, max_tokens=500).uris]
    assert out.index("b.md#chunk-8") < out.index("c.md#chunk-2")


def test_find_records_each_collected_chunks_own_score() -> None:
    """Through a client's ``find()``: the top slot is chunk 2 with both neighbours, and each
    carries its own fused score: its cosine along the query's axis (0.35 and 0.45, BM25 adds
    nothing) times the question's dense weight."""
    cfg = RetrievalConfig()
    with Treehop(embedder=BagOfWordsEmbedder(), store=_guide(), config=cfg, tagger=None) as th:
        found = th.find(
            QUESTION, query_vector=_unit((0, 1.0)), target_uri=R, limit=3, slot_chars=2000
        )
        top = found.resources[0]
        assert top.uri == f"{DOC}#chunk-2"
        by_index = {c.chunk_index: c for c in top.collapsed}
        assert {1, 3} <= set(by_index)
        w = cfg.question_dense_weight
        assert w is not None
        for i, cos in ((1, 0.35), (3, 0.45)):
            own = by_index[i].own_score
            assert own is not None and np.isfinite(own)
            assert own == pytest.approx(w * cos, abs=1e-3)
