"""``bench/ctx61_face_ratio.py``: the per-set and per-question tables the README's ctx61
section is read from. A hybrid piece's tokens are the block's used tokens over its pieces,
a set's slot ratio is its faces' slot texts over that, Spearman's rho ranks ties together,
and a question lands in the group its top face's share of the block names."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx61_face_ratio as fr


def _face(tokens: int, hit: int, slot_tokens: int) -> dict[str, int]:
    return {
        "slot": 0,
        "tokens": tokens,
        "hit": hit,
        "ext": tokens - hit,
        "slot_tokens": slot_tokens,
    }


def _row(s: str, q: int, find: float, hybrid: float, top: dict[str, int]) -> dict[str, object]:
    return {
        "set": s,
        "qid": f"{s}:{q}",
        "budget": 1000,
        "find": find,
        "hybrid": hybrid,
        "hybrid_pieces": 5,
        "hybrid_unused": 100,
        "faces": [top, _face(200, 200, 400)],
        "n_faces": 2,
        "layout": 20,
    }


def test_per_set_accounting_and_groups(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        _row("a-faq", 0, 1.0, 0.0, _face(600, 200, 600)),  # top face 60 % of the block
        _row("a-faq", 1, 0.0, 1.0, _face(100, 100, 100)),  # 10 %, hit only
        {**_row("b-faq", 0, 0.0, 0.0, _face(300, 150, 450)), "budget": 500},  # other budget
    ]
    f = tmp_path / "acc.json"
    f.write_text(json.dumps(rows))
    (a,) = fr.per_set(rows, 1000)
    assert a["set"] == "a-faq" and a["n"] == 2
    assert a["piece_tok"] == pytest.approx(900 / 5)  # (1000 - 100) tokens over 5 pieces
    assert a["faces"] == 2 and a["pieces"] == 5
    assert a["slot_tok"] == pytest.approx((600 + 400 + 100 + 400) / 4)
    assert a["top_tok"] == pytest.approx(350) and a["ext_tok"] == pytest.approx(200)
    fr.main([str(f)])
    out = capsys.readouterr().out
    assert "a-faq (2) | 0.500 / 0.500 (+0.000) | 2.00 / 5.00" in out
    assert "b-faq" not in out
    big = next(x for x in out.splitlines() if "top face >= 1/2 of block" in x)
    assert "1 questions" in big and "ahead 1 behind 0" in big
    small = next(x for x in out.splitlines() if "top face < 1/4 of block" in x)
    assert "ahead 0 behind 1" in small
    assert "top face hit only: 1 questions" in out


def test_spearman_ranks_ties_together() -> None:
    assert fr.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert fr.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ties share their average rank: x's two middle values are one rank
    assert fr.spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)
    assert fr.spearman([1, 2], [2, 1]) != fr.spearman([1, 2], [2, 1])  # nan under 3 points


def test_gates_count_what_no_whole_wins_and_loses_where_the_gate_fires(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        _row("a-faq", 0, 0.0, 1.0, _face(600, 200, 600)),  # top text 600 / 180 = 3.3 pieces
        _row("a-faq", 1, 1.0, 1.0, _face(300, 200, 300)),  # 1.7 pieces
    ]
    per_q = [
        {"set": "a-faq", "qid": "a-faq:0", "row": "base", "budget": 1000, "score": 0.0},
        {"set": "a-faq", "qid": "a-faq:0", "row": "no-whole", "budget": 1000, "score": 1.0},
        {"set": "a-faq", "qid": "a-faq:1", "row": "base", "budget": 1000, "score": 1.0},
        {"set": "a-faq", "qid": "a-faq:1", "row": "no-whole", "budget": 1000, "score": 0.0},
    ]
    acc, pq = tmp_path / "acc.json", tmp_path / "p.json"
    acc.write_text(json.dumps(rows))
    pq.write_text(json.dumps(per_q))
    fr.main([str(acc), "--gates", str(pq)])
    out = capsys.readouterr().out
    assert "no-whole against base: won 1, lost 1, net +0.0" in out
    line = next(x for x in out.splitlines() if "top slot text / the set's hybrid piece" in x)
    # the gate at 2 and 3 pieces fires on the won question only; at 1.5 on both
    assert ">= 1.5: 1 / 1, >= 2.0: 1 / 0, >= 2.5: 1 / 0, >= 3.0: 1 / 0" in line
    ext = next(x for x in out.splitlines() if "top extension / top hit" in x)
    assert ">= 1.0: 1 / 0, >= 1.5: 1 / 0" in ext and ">= 0.5: 1 / 1" in ext
