"""``bench/bench_adaptive58_screen.py`` offline (no model): its rules on a real
``LexicalIndex`` and hand-made vectors, its report on hand-made result files, its guard.

What the screen's numbers rest on: the idf is the index's own, a term is rare against the
median posting, "in the dense top 5" means a posting in one of the five best-cosine rows,
each rule maps to the grid's weights (and adaptive57's rows keep their own rule once this
screen's rules are installed); the run mode refuses a test half except the derived set's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_adaptive57_screen as ad
import bench_adaptive58_screen as a58
import bench_natural as bn
from treehop.lexical import LexicalIndex

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")
DOCS = ["common word here"] * 6 + ["common zebra", "common okapi quagga"]
"""Postings: common 8, word 6, here 6, zebra 1, okapi 1, quagga 1 (median posting df 6)."""


def _index() -> LexicalIndex:
    lex = LexicalIndex()
    lex.upsert(np.arange(len(DOCS)), DOCS)
    ad._MEDIAN_DF.clear()  # (keyed by id(): a collected index's id may come back)
    return lex


def _flat(top: list[int]) -> SimpleNamespace:
    """The rules read a flat's BM25 index and its leaf vectors: rows ``top`` get the best
    cosines with the query vector ``e0`` (in that order), the rest none."""
    matrix = np.zeros((len(DOCS), 2), np.float32)
    matrix[:, 1] = 1.0
    for rank, row in enumerate(top):
        matrix[row] = [1.0 - 0.01 * rank, 0.0]
    return SimpleNamespace(lexical=_index(), matrix=matrix)


E0 = np.array([1.0, 0.0], np.float32)


def test_query_terms_use_the_index_idf_and_the_median_posting() -> None:
    lex = _index()
    terms = a58.query_terms(lex, "Common zebra? what okapi")
    assert [(t.text, t.df, t.rare) for t in terms] == [
        ("common", 8, False),
        ("okapi", 1, True),
        ("zebra", 1, True),
    ]
    ids, weights = lex._query_terms(lex.tokenize("common okapi zebra"))
    own = {lex._terms[int(i)]: float(w) for i, w in zip(ids, weights, strict=True)}
    assert {t.text: t.idf for t in terms} == pytest.approx(own)
    assert a58.query_terms(lex, "unknownterm") == []
    # the idf share of the rare terms, not their count (2 of 3 terms)
    share = a58.idf_share(terms, [t.rare for t in terms])
    assert share == pytest.approx((terms[1].idf + terms[2].idf) / sum(t.idf for t in terms))
    assert share > 2 / 3
    assert a58.idf_share([], []) == 0.0


def test_dense_presence_reads_the_postings_of_the_top_rows() -> None:
    lex = _index()
    terms = a58.query_terms(lex, "common zebra okapi")
    got = {t.text: t.in_dense for t in a58.with_dense_presence(lex, terms, [0, 1, 6])}
    assert got == {"common": None, "zebra": True, "okapi": False}  # (common: not rare)
    got = {t.text: t.in_dense for t in a58.with_dense_presence(lex, terms, [7])}
    assert got == {"common": None, "zebra": False, "okapi": True}


def test_rules_map_to_the_grid() -> None:
    def term(text: str, idf: float, rare: bool, in_dense: bool | None = None) -> a58.Term:
        return a58.Term(text, 1, idf, rare, in_dense)

    covered = [term("a", 1.0, False), term("b", 3.0, True, True)]
    missing = [term("a", 1.0, False), term("b", 3.0, True, False)]
    assert a58.rule_weight("find-rareidf", covered) == pytest.approx(0.8 - 0.2 * 0.75)
    assert a58.rule_weight("find-rareidf", missing) == pytest.approx(0.8 - 0.2 * 0.75)
    assert a58.rule_weight("find-absent", covered) == ad.HIGH
    assert a58.rule_weight("find-absent", missing) == ad.LOW
    assert a58.rule_weight("find-absent7", missing) == ad.MID
    assert a58.rule_weight("find-absentidf", covered) == ad.HIGH
    assert a58.rule_weight("find-absentidf", missing) == pytest.approx(0.8 - 0.2 * 0.75)
    assert a58.rule_weight("find-absent", [term("a", 1.0, False)]) == ad.HIGH
    with pytest.raises(ValueError, match="not a rule"):
        a58.rule_weight("find-margin", covered)


def test_weight_for_looks_in_the_dense_top_five() -> None:
    # dense top 5 = rows 0-4 (row 6 has "zebra", row 7 "okapi", neither in it)
    flat = _flat([0, 1, 2, 3, 4])
    assert a58.weight_for("find-absent", flat, E0, "common zebra") == ad.LOW  # type: ignore[arg-type]
    assert a58.weight_for("find-absent7", flat, E0, "common zebra") == ad.MID  # type: ignore[arg-type]
    assert a58.weight_for("find-absent", flat, E0, "word here") == ad.HIGH  # type: ignore[arg-type]
    # row 6 fifth best: "zebra" is covered, "okapi" not; a sixth-best row 7 does not count
    flat = _flat([0, 1, 2, 3, 6, 7])
    assert a58.weight_for("find-absent", flat, E0, "common zebra") == ad.HIGH  # type: ignore[arg-type]
    assert a58.weight_for("find-absent", flat, E0, "okapi") == ad.LOW  # type: ignore[arg-type]
    rare = a58.weight_for("find-rareidf", flat, E0, "common zebra")  # type: ignore[arg-type]
    assert ad.LOW < rare < 0.8 - 0.2 * 0.5  # (idf-weighted: below find-rare's 0.7)


def test_install_keeps_adaptive57s_rows_on_their_rule() -> None:
    a58.install()
    assert set(a58.MINE) <= set(ad.VARIANTS)
    assert {r.key for r in bn.ROWS} >= {"find-rare", *a58.MINE}
    flat = _flat([0, 1, 2, 3, 4])
    assert ad.weight_for("find-absent", flat, E0, "common zebra") == ad.LOW  # type: ignore[arg-type]
    assert ad.weight_for("find-rare", flat, E0, "common zebra") == pytest.approx(0.7)  # type: ignore[arg-type]


def _row(dataset: str, half: str, key: str, values: dict[str, float]) -> dict[str, object]:
    mean = float(np.mean(list(values.values())))
    return {
        "dataset": dataset,
        "half": half,
        "row": key,
        "n": len(values),
        "p50_ms": 2.0,
        **dict.fromkeys(METRICS, mean),
        "per_question": {m: dict(values) for m in METRICS},
    }


def test_report_gives_each_half(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = []
    for key, dev, test in [
        ("find", {"q1": 1.0, "q2": 0.0}, {"q3": 1.0, "q4": 1.0, "q5": 0.0}),
        ("find-rare", {"q1": 1.0, "q2": 1.0}, {"q3": 1.0, "q4": 1.0, "q5": 0.0}),
        ("find-absent", {"q1": 0.0, "q2": 0.0}, {"q3": 0.0, "q4": 1.0, "q5": 0.0}),
    ]:
        rows += [_row("s", "dev", key, dev), _row("s", "test", key, test)]
    path = tmp_path / "derived.json"
    path.write_text(json.dumps({"rows": rows}))
    a58.report(path)
    out = capsys.readouterr().out
    assert "### derived.json: 1 sets, 2 dev questions" in out
    assert "### derived (test half).json: 1 sets, 3 dev questions" in out
    assert "| find-rare | 1 / 0 / 0 |" in out  # (the dev half)
    assert "| find-rare | 0 / 0 / 1 |" in out  # (the test half)
    mean, lo, hi = bn.mean_interval(np.array([-1.0, 0.0, 0.0]))
    assert f"| find-absent | {mean:+.4f} ({lo:+.4f}..{hi:+.4f}) |" in out
    assert list(tmp_path.iterdir()) == [path]  # (the scratch file is gone)


@pytest.mark.parametrize(
    "argv",
    [
        ["--test"],
        ["--sets", "nut-faq"],
        ["--dev", "--test"],
        ["--sets", "pytest-derived,nut-faq"],
        ["--sets=nut-faq", "--test"],
    ],
)
def test_run_mode_refuses_anything_but_dev(argv: list[str]) -> None:
    with pytest.raises(SystemExit, match="dev halves only"):
        a58.main(argv)


@pytest.mark.parametrize(
    "argv", [["--sets", "pytest-derived"], ["--sets=pytest-derived", "--test"], ["--dev"]]
)
def test_the_derived_set_may_run_both_halves(argv: list[str]) -> None:
    a58.check_halves(argv)  # (no SystemExit)
