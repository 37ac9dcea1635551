"""``bench/bench_context_diag.py --against``: why one ranking's block misses an answer the
other ranking's block holds (issue 33, round 9, "context after the ranking").

The causes are read from the two slot lists alone (faces best first, each list's first slot
whose text holds an answer), so the report says whether a ranking change cost the block by
moving the answer's slot down, by changing what that slot's text holds, or by dropping it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_context_diag as diag

A, B, C, D = "doc/a.md#chunk-1", "doc/b.md#chunk-4", "doc/c.md", "doc/b.md#chunk-3"


def test_the_same_face_ranked_lower_is_moved_down() -> None:
    assert diag.ab_cause([A, C, B], 2, [A, B, C], 1) == "moved down"


def test_the_same_face_at_the_same_rank_is_packing() -> None:
    assert diag.ab_cause([A, B, D], 1, [A, B, C], 1) == "same rank, packed differently"
    assert diag.ab_cause([B, A], 0, [A, B], 1) == "same rank, packed differently"


def test_the_answer_face_whose_slot_lacks_it_is_extent() -> None:
    # B is a face in both lists, but here another slot (C) is the first holding an answer
    assert diag.ab_cause([A, B, C], 2, [A, B, C], 1) == "extent"
    # ... or none holds it: B's slot here grew over other chunks
    assert diag.ab_cause([A, B], None, [A, B], 1) == "extent"


def test_no_slot_or_another_face() -> None:
    assert diag.ab_cause([A, C], None, [A, B], 1) == "no answer slot"
    assert diag.ab_cause([A, D, C], 2, [A, B, C], 1) == "other face"
    assert diag.ab_cause([A], None, [A], None) == "partial"


def test_config_values_are_python_literals() -> None:
    got = diag._config_values("question_chunk_window=False, question_document_penalty=0.0,x=abc")
    assert got == {"question_chunk_window": False, "question_document_penalty": 0.0, "x": "abc"}
    assert diag._config_values("") == {}


def test_the_top_half_gate_variant_bids_an_oversized_top_slot() -> None:
    """``top-half-gate`` (helper ctx58): the top slot whose text is over half the block loses
    its whole offer, so the next hit goes in before its extension; a block twice as large
    keeps main's block. ``_apply`` restores main's function."""
    import treehop.context_assembly as ca
    from treehop.context_assembly import HeuristicCounter, assemble_context
    from treehop.models import ChunkContext, ContextType, FindResult, MatchedContext

    def words(tag: str, n: int) -> str:
        return " ".join(f"{tag}{i}" for i in range(n)) + "."

    r = "viking://resources/docs"
    top = MatchedContext(
        uri=f"{r}/faq.md#chunk-2",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.9,
        content=words("top", 30),
        chunk_index=2,
        collapsed=[
            ChunkContext(uri=f"{r}/faq.md#chunk-3", score=0.5, content=words("t", 30), position=1)
        ],
    )
    nxt = MatchedContext(
        uri=f"{r}/man.md#chunk-7",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=0.8,
        content=words("o", 12),
        chunk_index=7,
    )
    found = FindResult(resources=[top, nxt], total=2)
    c = HeuristicCounter()
    budget = c.count(top.slot_text) + 10
    assert budget / 2 < c.count(top.slot_text)
    assert c.count(top.content) + c.count(nxt.content) + 10 <= budget
    assert c.count(top.slot_text) + c.count(nxt.content) > budget
    saved = {"_whole_slots": ca._whole_slots}
    blocks = {}
    for v in ("base", "top-half-gate"):
        diag._apply(diag.VARIANTS[v], saved)
        try:
            blocks[v] = [
                assemble_context(found, max_tokens=b, token_counter=c) for b in (budget, 3 * budget)
            ]
        finally:
            diag._apply({}, saved)
    assert ca._whole_slots is saved["_whole_slots"]
    assert nxt.uri not in blocks["base"][0].uris
    assert nxt.uri in blocks["top-half-gate"][0].uris
    assert f"{r}/faq.md#chunk-3" not in blocks["top-half-gate"][0].uris
    assert blocks["base"][1].text == blocks["top-half-gate"][1].text
