"""``bench/bench_top_slot_bet.py``: what a block could read about its top two slots before
packing them (issue 33, helper ctxsmall, stop 53). The features are the evidence the
README's table of the top slot's bet rests on, so each is checked on slots whose values
are known: the score gap, the best extension's own score, one document or two, query terms
only the extensions hold, and whether every extension follows the hit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_top_slot_bet as bet
from treehop.context_assembly import HeuristicCounter
from treehop.models import ChunkContext, ContextType, MatchedContext


def _slot(uri: str, score: float, content: str, ext: list[ChunkContext]) -> MatchedContext:
    return MatchedContext(
        uri=uri,
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=score,
        content=content,
        own_score=score - 0.1,
        collapsed=ext,
    )


def test_features_of_a_top_slot_and_the_next_hit() -> None:
    ext = [
        ChunkContext(
            uri="r/faq.md#chunk-3",
            score=0.5,
            content="rotate the logfile daily",
            position=1,
            own_score=0.45,
        ),
        ChunkContext(
            uri="r/faq.md#chunk-1",
            score=0.4,
            content="an unrelated preamble",
            position=-1,
            own_score=0.30,
        ),
    ]
    top = _slot("r/faq.md#chunk-2", 0.8, "How the logfile grows", ext)
    nxt = _slot("r/manual.md#chunk-7", 0.7, "daily rotation of logs", [])
    f = bet.features([top, nxt], "rotate logfile daily", HeuristicCounter())
    assert f["gap"] == pytest.approx(0.1)
    assert f["ext_best_own"] == pytest.approx(0.45)
    assert f["next_own"] == pytest.approx(0.6)
    assert f["same_doc"] is False
    # "logfile" is in the hit; "rotat" and "daili" (stems) only in the extension after it
    assert f["ext_new_terms"] == 2
    assert f["n_ext"] == 2
    assert f["ext_after_only"] is False
    assert f["top_tokens"] > f["next_tokens"] > 0


def test_one_document_and_extensions_after_the_hit() -> None:
    ext = [ChunkContext(uri="r/a.md#chunk-1", score=0.5, content="more", position=1)]
    top = _slot("r/a.md#chunk-0", 0.9, "text", ext)
    nxt = _slot("r/a.md#chunk-5", 0.85, "other", [])
    f = bet.features([top, nxt], "q", HeuristicCounter())
    assert f["same_doc"] is True
    assert f["ext_after_only"] is True
    assert f["ext_best_own"] is None  # an extension without an own score
