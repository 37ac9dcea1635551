"""``bench/bench_limit59_screen.py``: why ``find()``'s first slots depend on ``limit``
(issue 33, stop 59, helper limit59; not kept, bench/README.md). The screen's rows and trace
rest on each patch doing exactly what it names and nothing outside its row, so each is
checked on a small corpus against the library call it stands for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_limit59_screen as scr
import bench_natural as bn
import bench_tree as bt
from treehop import Treehop
from treehop import client as tc
from treehop import hierarchical_retriever as hr

from treehop_test_doubles import BagOfWordsEmbedder


def _corpus(tmp_path: Path) -> Path:
    kb = tmp_path / "kb"
    kb.mkdir()
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    for i in range(8):
        paras = [
            f"Part {j} of file {i}. " + " ".join(words[(i * j + n) % 10] for n in range(40 + j))
            for j in range(30)
        ]
        (kb / f"f{i}.md").write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return kb


def _view(res: object) -> list[tuple[str, str, float]]:
    return [(m.uri, m.slot_text, m.score) for m in res.contexts()]  # type: ignore[attr-defined]


def test_the_rows_patch_what_they_name_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tc.AsyncTreehop, "_request", tc.AsyncTreehop.__dict__["_request"])
    monkeypatch.setattr(hr.HierarchicalRetriever, "_descend", hr.HierarchicalRetriever._descend)
    monkeypatch.setattr(hr.HierarchicalRetriever, "retrieve", hr.HierarchicalRetriever.retrieve)
    monkeypatch.setattr(bn, "ROWS", bn.ROWS)
    monkeypatch.setattr(bn.Runner, "_with_config", bn.Runner._with_config)
    kb = _corpus(tmp_path)
    emb = bt.MemoEmbedder(BagOfWordsEmbedder())
    th = Treehop(None, embedder=emb, tagger=None, chunk_chars=300)
    scope = "viking://resources/kb"
    q = "How does gamma follow beta and kappa?"
    try:
        th.add_resource(str(kb), target_uri=scope)
        base = th.find(q, target_uri=scope, limit=10)
        wide = th.find(q, target_uri=scope, limit=20)
        scr.install()
        # outside the rows: find() as before
        assert _view(th.find(q, target_uri=scope, limit=10)) == _view(base)
        bn.ACTIVE_ROW[0] = "find-ask2x"
        try:
            ask = th.find(q, target_uri=scope, limit=10)
        finally:
            bn.ACTIVE_ROW[0] = ""
        # ask2x is find(limit=20)'s first 10, slot for slot
        assert _view(ask) == _view(wide)[:10]
        bn.ACTIVE_ROW[0] = "find-d2x"
        try:
            d2x = th.find(q, target_uri=scope, limit=10)
        finally:
            bn.ACTIVE_ROW[0] = ""
        # d2x: 10 slots, its descent waited for 20 candidates (the stop reason names it)
        assert len(d2x.contexts()) == 10
        stops = {base.query_results[0].stop_reason, d2x.query_results[0].stop_reason}
        assert "top-20" in (d2x.query_results[0].stop_reason or "") or len(stops) == 1
        assert d2x.query_results[0].nodes_scored >= base.query_results[0].nodes_scored
        # pool2x: the pools are restored after the call
        pools = (hr.WINDOW_POOL, th.config.context_pool, th.config.global_search_topk)
        scr.MODE[0] = frozenset({"pool2x", "gstep"})
        try:
            th.find(q, target_uri=scope, limit=10)
        finally:
            scr.MODE[0] = frozenset()
        assert (hr.WINDOW_POOL, th.config.context_pool, th.config.global_search_topk) == pools
        assert _view(th.find(q, target_uri=scope, limit=10)) == _view(base)
    finally:
        th.close()


def test_report_counts_the_variants_that_reproduce_ask2x(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def rec(find: list[str], ask: list[str], d2x: list[str]) -> dict[str, object]:
        f = {"slots": find, "stop": "top-10 settled: x", "rounds": 1, "scored": 10}
        return {
            "set": "s",
            "qid": "q",
            "find": f,
            "ask2x": {**f, "slots": ask, "scored": 30},
            "d2x": {**f, "slots": d2x, "scored": 30},
            "pool2x": f,
            "d2x+pool2x": {**f, "slots": ask, "scored": 30},
            "gstep": f,
        }

    recs = [rec(["a", "b"], ["a", "c"], ["a", "c"]), rec(["a", "b"], ["b", "a"], ["a", "b"])]
    recs.append(rec(["a"], ["a"], ["a"]))
    p = tmp_path / "t.json"
    p.write_text(json.dumps(recs))
    scr.report([str(p)])
    out = capsys.readouterr().out
    assert "3 questions" in out
    assert "ask2x differs (order) on 2" in out
    assert "  d2x          1\n" in out and "  d2x+pool2x   2\n" in out
    assert "ask2x        differs from find: set 1, order 2" in out
