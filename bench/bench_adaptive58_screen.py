"""The per-query question fusion weight, next screen: IDF-weighted rare terms, and rare
terms the dense top hits lack. Issue 33, stop 58 (helper ``adaptive58``).

``adaptive57``'s ``find-rare`` (``w = 0.8 - 0.2 * share``, the share of the question's
BM25 terms rarer than the corpus's median posting) gained ctx@1000 on the 28 untuned dev
halves but lost nDCG@10 on the nine tuning sets' dev halves (perlfaq, borg-faq): a rare word
is not yet evidence that BM25 knows something dense does not. Two refinements, each from
``adaptive57``'s "next stop could try":

* ``find-rareidf`` (a): the rare share counted on IDF-weighted terms (each term weighs its
  BM25 idf's share of the query's total idf; the same idf the index scores with), then
  ``find-rare``'s map ``w = 0.8 - 0.2 * share``.
* ``find-absent`` (b): a rare term (document frequency below the median posting's, present
  in the corpus) that occurs in *none* of the dense top-5 leaves: BM25 has evidence the
  dense side lacks -> 0.6, else 0.8.
* ``find-absent7``: ``find-absent`` lowering to 0.7 (the grid's other value) instead.
* ``find-absentidf`` (a + b): ``w = 0.8 - 0.2 * s``, ``s`` the idf share of the rare terms
  absent from the dense top 5 (a rare term dense already covers counts as not rare).

No fitted constant: the weights are ``fusion57``'s grid (0.8, 0.7, 0.6; the idf rules move
between its ends as ``find-rare`` does), the cut-offs a median posting and ``adaptive57``'s
top 5. The machinery is ``bench_adaptive57_screen``'s, imported: its ``install`` patches
``HierarchicalRetriever._resolve`` for the screen's rows only (question-shaped queries over
documents that resolved to ``question_dense_weight``); this script adds its rules to that
module's rule table (``VARIANTS`` and ``weight_for``). ``retrieval/`` is not changed. The
dense top 5 are ``bench_natural.Flat``'s cosine over every leaf of the set (the client's own
vectors); a term "occurs" in a leaf when the set's BM25 index has a posting of it there.

Run mode (every other argument goes to ``bench_natural.py``): ``--dev`` only, except the
second query kind (``--sets pytest-derived`` alone), which may run both halves::

    export TREEHOP_BENCH_CACHE=/work/benchcache OPENBLAS_NUM_THREADS=1
    R=find,find-rare,find-rareidf,find-absent,find-absent7,find-absentidf
    python bench/bench_adaptive58_screen.py --dev --rows $R --json NINE.json
    python bench/bench_adaptive58_screen.py --dev --sets $U --rows $R --json UNTUNED.json
    python bench/bench_adaptive58_screen.py --sets pytest-derived --rows $R --json DERIVED.json

Report mode: ``--report FILE...`` (``bench_fusion57_screen.report`` per file, every half it
holds; latency column). Explain mode: ``--explain JSON SET[,SET]`` reads a run's per-question
nDCG@10 of ``find`` and ``find-rare`` and prints, for each question that moved, its rare
terms, which of them the dense top 5 hold, each rule's weight, and the rank of the first
answer in flat dense / flat BM25 (what ``find-rare``'s losses are).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_adaptive57_screen as ad  # noqa: E402
import bench_fusion57_screen as fs  # noqa: E402
import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import natural_sets as ns  # noqa: E402

MINE = ("find-rareidf", "find-absent", "find-absent7", "find-absentidf")
COMPARED = ("find-rare", *MINE)
"""The rows the report sets against ``find`` (``find-rare``: adaptive57's, side by side)."""
HIGH, MID, LOW = ad.HIGH, ad.MID, ad.LOW
DENSE_K = ad.AGREE_K
"""The dense top hits whose text a rare term is looked for in (adaptive57's top 5)."""


@dataclass(frozen=True)
class Term:
    """One known query term: its document frequency, BM25 idf, rarity and whether the dense
    top hits hold it (``None``: not looked up)."""

    text: str
    df: int
    idf: float
    rare: bool
    in_dense: bool | None = None


def query_terms(lexical: Any, text: str) -> list[Term]:
    """``text``'s distinct BM25 terms that the corpus knows, with the index's own idf
    (``log1p((N - df + 0.5) / (df + 0.5))``) and ``rare``: below the median posting's df
    (``bench_adaptive57_screen.median_posting_df``, cached per index as ``rare_share``)."""
    key = id(lexical)
    if key not in ad._MEDIAN_DF:
        ad._MEDIAN_DF[key] = ad.median_posting_df(np.asarray(lexical._df))
    med = ad._MEDIAN_DF[key]
    n = float(len(lexical))
    out = []
    for t in sorted(set(lexical.tokenize(text))):
        df = lexical.document_frequency(t)
        if df > 0:
            idf = float(np.log1p((n - df + 0.5) / (df + 0.5)))
            out.append(Term(t, df, idf, df < med))
    return out


def with_dense_presence(lexical: Any, terms: Sequence[Term], top: Sequence[int]) -> list[Term]:
    """``terms`` with ``in_dense`` set for the rare ones: whether the BM25 index has a
    posting of the term in any of the leaf rows ``top`` (the dense top hits)."""
    rows = np.asarray(sorted(top), dtype=np.int64)
    out = []
    for t in terms:
        if t.rare and rows.size:
            hit = bool((lexical.score_tokens([t.text], rows) > 0).any())
            out.append(Term(t.text, t.df, t.idf, t.rare, hit))
        else:
            out.append(t)
    return out


def idf_share(terms: Sequence[Term], counted: Sequence[bool]) -> float:
    """The share of the terms' total idf that the ``counted`` ones carry (0 when none)."""
    total = sum(t.idf for t in terms)
    if total <= 0:
        return 0.0
    return sum(t.idf for t, c in zip(terms, counted, strict=True) if c) / total


def rule_weight(row: str, terms: Sequence[Term]) -> float:
    """The weight ``row``'s rule gives a question with these ``terms`` (``in_dense`` set
    for the rare ones where the rule reads it)."""
    if row == "find-rareidf":
        return HIGH - (HIGH - LOW) * idf_share(terms, [t.rare for t in terms])
    absent = [t.rare and t.in_dense is False for t in terms]
    if row == "find-absentidf":
        return HIGH - (HIGH - LOW) * idf_share(terms, absent)
    if row in ("find-absent", "find-absent7"):
        return (LOW if row == "find-absent" else MID) if any(absent) else HIGH
    raise ValueError(f"not a rule of this screen: {row!r}")


def dense_top(flat: bn.Flat, vec: npt.NDArray[np.float32], k: int = DENSE_K) -> set[int]:
    """The leaf rows of ``flat``'s ``k`` best cosines."""
    return ad.top_ids(flat.matrix @ np.asarray(vec, dtype=np.float32).reshape(-1), k)


def weight_for(row: str, flat: bn.Flat, vec: npt.NDArray[np.float32], text: str) -> float:
    """This screen's rules, adaptive57's for its own rows (installed as its ``weight_for``)."""
    if row not in MINE:
        return _ADAPTIVE57_WEIGHT(row, flat, vec, text)
    terms = query_terms(flat.lexical, text)
    if row != "find-rareidf" and any(t.rare for t in terms):
        terms = with_dense_presence(flat.lexical, terms, sorted(dense_top(flat, vec)))
    return rule_weight(row, terms)


_ADAPTIVE57_WEIGHT = ad.weight_for


def install() -> None:
    """Add this screen's rules to adaptive57's rule table, then its ``install`` (rows, the
    ``_resolve`` patch; idempotent)."""
    ad.VARIANTS = (*ad.VARIANTS, *(k for k in MINE if k not in ad.VARIANTS))
    ad.weight_for = weight_for
    ad.install()


def check_halves(argv: Sequence[str]) -> None:
    """Refuse anything but the dev halves, except the second query kind's set alone (its
    both halves are this screen's other-kind check; no untuned test half is read)."""
    sets = ""
    for i, a in enumerate(argv):
        if a == "--sets" and i + 1 < len(argv):
            sets = argv[i + 1]
        elif a.startswith("--sets="):
            sets = a.split("=", 1)[1]
    derived = bool(sets) and set(sets.split(",")) <= set(ns.DERIVED_SETS)
    if ("--test" in argv or "--dev" not in argv) and not derived:
        raise SystemExit(
            "dev halves only: pass --dev (the untuned test halves stay held out; "
            f"both halves only for --sets {','.join(ns.DERIVED_SETS)})"
        )


def report(path: Path) -> None:
    """Each half the file holds: ``bench_fusion57_screen.report`` of ``COMPARED`` (which
    reads rows marked dev: another half's rows go to it relabelled, in a scratch file)."""
    rows = json.loads(path.read_text())["rows"]
    for half in sorted({r["half"] for r in rows}):
        if half == "dev":
            fs.report(path, COMPARED, extra=(), latency=True)
            continue
        with tempfile.TemporaryDirectory() as tmp:
            scratch = Path(tmp) / f"{path.stem} ({half} half).json"
            mine = [dict(r, half="dev") for r in rows if r["half"] == half]
            scratch.write_text(json.dumps({"rows": mine}))
            fs.report(scratch, COMPARED, extra=(), latency=True)


def _first_rank(texts: Sequence[str], answers: Sequence[str], judge: bn.Judge) -> int | None:
    for i, t in enumerate(texts, 1):
        if judge.units(t, answers):
            return i
    return None


def explain(path: Path, sets: Sequence[str]) -> None:
    """What ``find-rare`` lost and won on ``sets`` (see the module docstring)."""
    rows = json.loads(path.read_text())["rows"]
    per = {
        (r["dataset"], r["row"]): r["per_question"]["ndcg@10"] for r in rows if r["half"] == "dev"
    }
    cached = bn.bench_embedder("")
    for name in sets:
        base, rare = per[(name, "find")], per[(name, "find-rare")]
        nset = ns.load_natural_set(name, cached)
        dev, _ = bt.sampled_halves(nset.questions, 0)
        with bn.indexed_set(nset, cached) as ix:
            ix.embedder.prepare([q.text for q in dev])
            judge = bn.Judge()
            print(f"\n### {name}: find-rare minus find, nDCG@10, per question that moved\n")
            print(
                "| qid | delta | dense / bm25 rank | w rare / idf / absent "
                "| rare terms (+: in dense top 5) | question |"
            )
            print("|---|---|---|---|---|---|")
            tally: dict[str, list[int]] = {"lost": [0, 0, 0], "won": [0, 0, 0]}
            for q in dev:
                d = rare[q.qid] - base[q.qid]
                if abs(d) <= ad.TIE:
                    continue
                vec = ix.embedder.queries[q.text]
                terms = query_terms(ix.flat.lexical, q.text)
                terms = with_dense_presence(ix.flat.lexical, terms, sorted(dense_top(ix.flat, vec)))
                answers = [a for a, _ in q.answers]
                dr = _first_rank(ix.flat.dense(vec, 10), answers, judge)
                br = _first_rank(ix.flat.bm25(q.text, 10), answers, judge)
                w = [
                    ad.HIGH - (ad.HIGH - ad.LOW) * ad.rare_share(ix.flat.lexical, q.text),
                    rule_weight("find-rareidf", terms),
                    rule_weight("find-absent", terms),
                ]
                rt = " ".join(f"{t.text}{'+' if t.in_dense else ''}" for t in terms if t.rare)
                side = "lost" if d < 0 else "won"
                tally[side][0] += 1
                tally[side][1] += dr == 1
                tally[side][2] += w[2] == HIGH
                print(
                    f"| {q.qid} | {d:+.3f} | {dr or '-'} / {br or '-'} | "
                    + " / ".join(f"{x:.2f}" for x in w)
                    + f" | {rt} | {q.text[:70]} |"
                )
            for side, (n, dense1, kept) in tally.items():
                print(
                    f"\n{name}: {side} {n}: flat dense ranks the answer first in {dense1}; "
                    f"find-absent keeps 0.8 on {kept}"
                )


def main(argv: Sequence[str]) -> None:
    if argv[:1] == ["--report"]:
        for f in argv[1:]:
            report(Path(f))
        return
    if argv[:1] == ["--explain"]:
        explain(Path(argv[1]), argv[2].split(","))
        return
    check_halves(argv)
    install()
    bn.main(argv)
    for row in ad.VARIANTS:
        if ad.COST_MS[row]:
            cost = np.array(ad.COST_MS[row])
            print(
                f"{row}: weights {dict(sorted(ad.CHOSEN[row].items()))}; signal cost per "
                f"question mean {cost.mean():.3f} ms, p50 {np.median(cost):.3f} ms, "
                f"max {cost.max():.2f} ms"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
