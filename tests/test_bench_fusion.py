"""The fusion formulas of ``bench/bench_fusion.py`` on hand-made scores (offline, no model).

What its table rests on: the attainable score is exactly the BM25 of an ideal document (one of
average length holding each query term once), a BM25 index at ``k1 = 0`` scores the IDF mass a
document matches, the dense-gap gate takes lexical credit only from leaves far behind the dense
leader, and reciprocal rank fusion gives a leaf without a lexical match no BM25 rank."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_fusion as bf
from treehop.lexical import LexicalIndex

DOCS = [
    "zebra quasar lantern meadow",  # every document 4 terms long: avgdl = 4
    "zebra harbor lantern meadow",
    "violet harbor lantern meadow",
    "violet orchid lantern meadow",
]


def _index(k1: float = 1.2) -> LexicalIndex:
    idx = LexicalIndex(k1=k1)
    idx.upsert(np.arange(len(DOCS)), DOCS)
    return idx


def test_attainable_is_the_ideal_documents_score() -> None:
    idx = _index()
    # document 0 is of average length and holds "zebra" and "quasar" once: the ideal one
    assert bf.attainable(idx, "zebra quasar") == pytest.approx(
        float(idx.score("zebra quasar", [0])[0]), rel=1e-5
    )
    # a common word adds little, an unknown one nothing
    rare = bf.attainable(idx, "quasar")
    common = bf.attainable(idx, "lantern")
    assert rare > 5 * common > 0
    assert bf.attainable(idx, "quasar nebulium") == pytest.approx(rare)


def test_k1_zero_scores_the_matched_idf_mass() -> None:
    cov = _index(k1=0.0)
    full = bf.attainable(cov, "zebra quasar")
    s = cov.score("zebra quasar", size=len(DOCS))
    assert s[0] == pytest.approx(full, rel=1e-5)  # both terms
    assert s[1] == pytest.approx(bf.attainable(cov, "zebra"), rel=1e-5)  # one of them
    assert s[2] == s[3] == 0.0


def test_dense_gap_gate_and_rrf() -> None:
    d = np.array([0.70, 0.65, 0.30])
    lex = np.array([0.0, 1.0, 5.0])
    cov = np.zeros(3)
    gated = bf._gate(0.8, 0.1)(d, lex, cov, 0.0)
    assert gated[2] == pytest.approx(0.8 * 0.30)  # 0.4 behind the leader: no lexical credit
    assert gated[1] == pytest.approx(0.8 * 0.65 + 0.2 * (1 / 5) * 0.5)  # half the gap allowed
    fused = bf._rrf(60, 1.0, 1.0)(d, lex, cov, 0.0)
    assert fused[0] == pytest.approx(1 / 61)  # no BM25 match: no BM25 rank
    assert fused[2] == pytest.approx(1 / 63 + 1 / 61)
    assert math.isclose(fused[1], 1 / 62 + 1 / 62)
    today = bf.VARIANTS["w0.8 /best (today)"](d, lex, cov, 0.0)
    assert today[2] == pytest.approx(0.8 * 0.30 + 0.2)
