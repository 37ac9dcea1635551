"""``bench/bench_context_flags.py --per-question`` (helper leftovers59): every row's answer
score per question and budget, in ``bench_context_diag.py``'s format, so ``ctx58_pair.py``
pairs two layout variants question by question (the other block scripts had the flag; this
one printed only the means). Run end to end on the tiny hand-made set of
``test_bench_natural.py`` with the bag-of-words embedder: the file holds one score per
(row, question, budget) of the half, and its means are the table's."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_context_flags as flags
import bench_tree as bt
import datasets as ds
import natural_sets as ns
from test_bench_natural import _tiny_set

from treehop_test_doubles import BagOfWordsEmbedder


def test_per_question_holds_every_rows_score_and_the_tables_means(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nset = _tiny_set(tmp_path / "tiny")
    monkeypatch.setattr(ns, "load_natural_set", lambda name, cached: nset)
    monkeypatch.setattr(ds, "default_embedder", BagOfWordsEmbedder)
    out = tmp_path / "p.json"
    flags.main(["--dev", "--sets", "tiny", "--variants", "r4,old", "--per-question", str(out)])
    rows = json.loads(out.read_text())
    dev = [q.qid for q in bt.sampled_halves(nset.questions, None)[0]]
    names = ["flat dense", "flat hybrid", "r4", "old"]
    assert dev and len(rows) == len(names) * len(dev) * len(flags.BUDGETS)
    assert {(r["set"], r["row"], r["qid"], r["budget"]) for r in rows} == {
        ("tiny", n, q, b) for n in names for q in dev for b in flags.BUDGETS
    }
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
    assert any(r["score"] > 0 for r in rows)
    table = capsys.readouterr().out
    for n in names:
        [line] = [x for x in table.splitlines() if re.match(rf"\| tiny \| dev \| \d+ \| {n} \|", x)]
        printed = [float(c) for c in line.strip(" |").split(" | ")[4:]]
        means = [
            sum(r["score"] for r in rows if r["row"] == n and r["budget"] == b) / len(dev)
            for b in flags.BUDGETS
        ]
        assert printed == pytest.approx(means, abs=5e-4)
