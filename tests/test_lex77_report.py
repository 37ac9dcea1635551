"""bench/lex77_report.py (helper quality77): the AUC with ties half, one record per question
across run files (the reversed runs overlap the forward ones), the pools, the signals."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import lex77_report as lr


def test_auc_counts_ties_half() -> None:
    assert lr.auc([2.0, 3.0], [1.0]) == 1.0
    assert lr.auc([1.0], [2.0, 3.0]) == 0.0
    assert lr.auc([1.0], [1.0]) == 0.5
    assert lr.auc([1.0, 2.0], [1.0, 2.0]) == pytest.approx(0.5)
    assert lr.auc([], [1.0]) != lr.auc([], [1.0])  # NaN


def test_load_keeps_the_first_record_of_a_question(tmp_path: Path) -> None:
    a = tmp_path / "a.json"
    b = tmp_path / "b.json"
    a.write_text(json.dumps({"records": [{"set": "s", "qid": "1", "v": 1}]}))
    b.write_text(
        json.dumps(
            {"records": [{"set": "s", "qid": "1", "v": 2}, {"set": "s", "qid": "2", "v": 3}]}
        )
    )
    got = lr.load([a, b])
    assert [(r["qid"], r["v"]) for r in got] == [("1", 1), ("2", 3)]


def test_pools_leave_doxygen_out() -> None:
    recs = [{"set": "django-faq"}, {"set": "doxygen-faq"}, {"set": "sylpheed-faq"}]
    got = lr.pools(recs)
    assert [r["set"] for r in got["nine"]] == ["django-faq"]
    assert [r["set"] for r in got["untuned"]] == ["sylpheed-faq"]
    assert [r["set"] for r in got["pooled"]] == ["django-faq", "sylpheed-faq"]


def test_the_signals() -> None:
    r = {"lex_best@1000": 4.0, "lex_top@1000": 1.0, "vec_top@1000": 0.7, "vec_best@1000": 0.5}
    assert lr.lead_share(r) == pytest.approx(0.75)
    assert lr.lead_share({"lex_best@1000": 0.0, "lex_top@1000": 0.0}) == 0.0
    assert lr.dense_margin(r) == pytest.approx(0.2)
    assert lr.dense_margin({"vec_top@1000": None}) == 0.0
