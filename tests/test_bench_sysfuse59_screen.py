"""``bench/bench_sysfuse59_screen.py``: find()'s slots fused with flat hybrid's chunks (issue
33, stop 59, helper sysfuse59; not kept, bench/README.md). The screen's numbers rest on the
fused order each rule gives and on the hybrid list being flat hybrid's, so both are checked
on inputs whose answer is known.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_natural as bn
import bench_sysfuse59_screen as scr
import bench_tree as bt
from treehop import Treehop
from treehop import client as tc
from treehop.models import ChunkContext, ContextType, FindResult

from treehop_test_doubles import BagOfWordsEmbedder, leaf_hit


def test_rrf_lifts_a_hybrid_only_chunk_above_find_s_lower_slots() -> None:
    # find: slots 0..4; hybrid: its own chunk first, then find's slot 3, slot 0
    hybrid = [(None, 9.0), (3, 8.0), (0, 7.0)]
    order = scr.fuse_order([5.0, 4.0, 3.0, 2.0, 1.0], hybrid, "rrf", 60)
    # slot 0: 1/61 + 1/63; slot 3: 1/64 + 1/62; own chunk: 1/61; slots 1, 2, 4: 1/62 ...
    assert order == [("f", 0), ("f", 3), ("h", 0), ("f", 1), ("f", 2), ("f", 4)]
    # k 10: the same sums, steeper
    assert scr.fuse_order([5.0, 4.0, 3.0, 2.0, 1.0], hybrid, "rrf", 10)[:3] == [
        ("f", 0),
        ("f", 3),
        ("h", 0),
    ]


def test_a_slot_takes_its_best_hybrid_chunk_s_rank_once() -> None:
    # two hybrid chunks of slot 1 (its hit and a chunk it shows): ranked by the first
    order = scr.fuse_order([2.0, 1.0], [(1, 5.0), (1, 4.0)], "rrf", 60)
    assert order == [("f", 1), ("f", 0)]


def test_combsum_adds_min_max_normalised_scores() -> None:
    # find 0..1: 1.0, 0.5, 0.0; hybrid 0..1: own 1.0, slot 2 0.0 -> slot 0 1.0, own 1.0
    # (tie: find's slot first), slot 1 0.5, slot 2 0.0
    order = scr.fuse_order([0.9, 0.6, 0.3], [(None, 0.8), (2, 0.2)], "combsum", 0)
    assert order == [("f", 0), ("h", 0), ("f", 1), ("f", 2)]
    # one score alone normalises to 1 (no division by zero)
    assert scr.fuse_order([0.4], [(None, 0.1)], "combsum", 0) == [("f", 0), ("h", 0)]


def test_interleave_keeps_find_s_top_m_then_alternates() -> None:
    hybrid = [(0, 1.0), (None, 0.9), (4, 0.8), (None, 0.7)]
    order = scr.fuse_order([6.0, 5.0, 4.0, 3.0, 2.0, 1.0], hybrid, "interleave", 3)
    # find 0-2; then hybrid's first not placed (own 1), find 3, hybrid's slot 4, find 5
    # (find 4 already placed), hybrid's own 3
    assert order == [
        ("f", 0),
        ("f", 1),
        ("f", 2),
        ("h", 1),
        ("f", 3),
        ("f", 4),
        ("f", 5),
        ("h", 3),
    ]


def _slot(uri: str, score: float, shown: str | None = None, hidden: str | None = None) -> Any:
    collapsed = []
    if shown:
        collapsed.append(ChunkContext(uri=shown, score=score - 0.1, position=1))
    if hidden:
        collapsed.append(ChunkContext(uri=hidden, score=score - 0.2))
    return leaf_hit(uri, f"text of {uri}", score, collapsed=collapsed)


def _hit(uri: str, score: float) -> Any:
    node = SimpleNamespace(
        uri=uri,
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        level=2,
        parent_uri="viking://resources/kb/a.md",
        overview="",
        content=f"own text of {uri}",
        tags=[],
        metadata={},
        chunk_index=7,
    )
    return SimpleNamespace(node=node, score=score)


def test_fused_result_maps_shown_chunks_to_their_slot_and_gives_hidden_ones_their_own() -> None:
    base = FindResult(
        resources=[
            _slot("a#0", 0.9, shown="a#1", hidden="a#2"),
            _slot("b#0", 0.8),
            _slot("c#0", 0.7),
        ]
    )
    # hybrid: a#1 (shown in slot 0: is slot 0), a#2 (collapsed, not shown: its own slot),
    # c#0 (slot 2)
    hits = [_hit("a#1", 3.0), _hit("a#2", 2.0), _hit("c#0", 1.0)]
    got = scr.fused_result(base, hits, "rrf", 60, limit=3).contexts()
    # slot a: 1/61 + 1/61; slot c: 1/63 + 1/63; a#2: 1/62; b: 1/62 (find first on the tie)
    assert [m.uri for m in got] == ["a#0", "c#0", "b#0"]
    got = scr.fused_result(base, hits, "rrf", 60, limit=4).contexts()
    assert [m.uri for m in got] == ["a#0", "c#0", "b#0", "a#2"]
    own = got[-1]
    assert own.slot_text == "own text of a#2" and not own.collapsed
    # find's score scale: the r-th slot the r-th best score, below the last a step down
    assert [m.score for m in got[:3]] == [0.9, 0.8, 0.7]
    assert got[3].score < 0.7
    # the slots' texts are find's, untouched (a copy with a new score)
    assert got[1].slot_text == "text of c#0" and base.resources[2].score == 0.7


def test_the_rows_fuse_with_flat_hybrid_s_own_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tc.AsyncTreehop, "_find_checked", tc.AsyncTreehop._find_checked)
    monkeypatch.setattr(bn, "evaluate_set", bn.evaluate_set)
    monkeypatch.setattr(bn, "ROWS", bn.ROWS)
    monkeypatch.setattr(bn.Runner, "_with_config", bn.Runner._with_config)
    scr.install()
    kb = tmp_path / "kb"
    kb.mkdir()
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    for i in range(6):
        paras = [
            f"Part {j} of file {i}. " + " ".join(words[(i * j + n) % 10] for n in range(40 + j))
            for j in range(30)
        ]
        (kb / f"f{i}.md").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    emb = bt.MemoEmbedder(BagOfWordsEmbedder())
    th = Treehop(None, embedder=emb, tagger=None, chunk_chars=300)
    scope = "viking://resources/kb"
    try:
        th.add_resource(str(kb), target_uri=scope)
        flat = bn.Flat(th)
        q = "How does gamma follow beta and kappa?"
        emb.prepare([q])
        want = flat.hybrid(emb.queries[q], q, 10, 0.5, scope)
        base = th.find(q, target_uri=scope, limit=10)
        bn.ACTIVE_ROW[0] = "fuse-rrf60"
        try:
            fused = th.find(q, target_uri=scope, limit=10)
            call = th.aio._check_find(q, None, None, {"target_uri": scope, "limit": 10})
            hits = scr.hybrid_hits(th.aio, call)
        finally:
            bn.ACTIVE_ROW[0] = ""
        # the list fused is flat hybrid's (same leaves, w 0.5, same depth), chunk by chunk
        assert [h.node.content or h.node.abstract for h in hits] == want
        # and the row delivers exactly the fused order of find's slots and those chunks
        expect = scr.fused_result(base, hits, "rrf", 60, 10).contexts()
        assert [m.uri for m in fused.contexts()] == [m.uri for m in expect]
        assert [m.slot_text for m in fused.contexts()] == [m.slot_text for m in expect]
        # (a corpus where they differ: a chunk in no slot of find's becomes a slot of its own)
        assert [m.uri for m in expect] != [m.uri for m in base.contexts()]
        assert {m.uri for m in expect} - {m.uri for m in base.contexts()}
        # flat hybrid's top chunk is delivered in the first two slots (1/61 each side)
        texts = [m.slot_text for m in fused.contexts()]
        assert any(want[0] in t for t in texts[:2])
        # outside the fused rows find() is untouched
        again = th.find(q, target_uri=scope, limit=10)
        assert [m.uri for m in again.contexts()] == [m.uri for m in base.contexts()]
    finally:
        th.close()
