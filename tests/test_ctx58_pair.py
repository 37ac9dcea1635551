"""``bench/ctx58_pair.py``: the paired screen the README's ctx58 table is read from. A variant
that wins one question and loses none is reported with that mean, its counts and its set; a
flat row is not paired; ``--changed`` lists exactly the moved question."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import ctx58_pair


def test_a_variant_is_paired_against_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = []
    for q in range(4):
        for row, score in (("flat hybrid", 1.0), ("base", 0.0), ("rule", 1.0 if q == 2 else 0.0)):
            rows.append(
                {"set": "a-faq", "qid": f"a:{q}", "row": row, "budget": 500, "score": score}
            )
    per_q = tmp_path / "p.json"
    per_q.write_text(json.dumps(rows))
    changed = tmp_path / "c.json"
    monkeypatch.setattr(sys, "argv", ["ctx58_pair.py", str(per_q), "--changed", str(changed)])
    ctx58_pair.main()
    out = capsys.readouterr().out
    rule = next(line for line in out.splitlines() if line.strip().startswith("rule:"))
    assert "0.2500  +0.2500" in rule and "won 1 lost 0" in rule and "a-faq +1.0" in rule
    hybrid = next(line for line in out.splitlines() if "flat hybrid:" in line)
    assert "won" not in hybrid
    moved = json.loads(changed.read_text())
    assert moved == [
        {
            "variant": "rule",
            "budget": 500,
            "set": "a-faq",
            "qid": "a:2",
            "base": 0.0,
            "variant_score": 1.0,
        }
    ]
