"""Does find() lose the 1,000-token block to flat hybrid for want of BM25? (issue 33, stop 69).

    python bench/bench_natural.py --dev --sets <sets> --budgets 1000 --json run.json \
        --rows find,find-qw0.7,find-qw0.5,flat-hybrid,flat-dense
    python bench/ctx70_lexical_weight.py run.json [run2.json ...]

The hypothesis (a ranking one): a question-shaped query over documents is scored at
``question_dense_weight`` 0.8, flat hybrid at 0.5. On the stop-66 records
(``bench/data/natural_ctx66_whole_forward_dev.json``) 77 of the 92 questions whose answer
flat hybrid's 1,000-token block holds and find's does not for a ranking or retrieval cause
(``slot-not-reached``, ``not-in-slots``, ``collapsed``) are questions flat *dense*'s block
misses as well: the lexical term found them. If the lost answers are lexical, find() at a
lower question weight should reach them in its block.

This reads ``bench_natural.py --json`` runs (the rows' ``per_question`` values) and prints,
question by question on the untuned dev halves where find's ctx@1000 misses the goal line
(best flat row + 0.03), the losses to that set's best flat row by kind (``lexical``: flat
hybrid's block holds the answer and flat dense's does not) and how many each variant row
recovers and how many of find's wins it gives back; then the keep rule: each variant minus
``find``, paired per question, on the nine, the untuned sets and pooled (ctx@1000, nDCG@10),
and the goal-line count per row.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_natural as bn
import natural_sets as ns

GOAL = 0.03
FLAT = ("flat-hybrid", "flat-dense")
LEFT_OUT = frozenset({"doxygen-faq"})
"""Outside every pool, as ``pool_untuned.py`` leaves it out."""
CTX = "ctx@1000"
NDCG = "ndcg@10"


@dataclass
class SetRows:
    """One set's dev half: row -> metric -> qid -> value."""

    name: str
    rows: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    def qids(self) -> list[str]:
        return sorted(self.rows["find"][CTX])

    def mean(self, row: str, metric: str = CTX) -> float:
        return float(np.mean(list(self.rows[row][metric].values())))

    def best_flat(self) -> str:
        """The goal line's flat row: the better mean ctx@1000 of flat hybrid / flat dense."""
        return max(FLAT, key=self.mean)

    def meets(self, row: str) -> bool:
        """The per-set goal line for ``row``: its ctx@1000 at least the best flat row's + 0.03."""
        return self.mean(row) - self.mean(self.best_flat()) >= GOAL - 1e-9


def load(paths: Iterable[Path]) -> dict[str, SetRows]:
    """Every dev-half row of the runs, one entry per set (a later file's set wins); files
    holding a list (``--ranks`` output) are skipped here (:func:`load_ranks`)."""
    out: dict[str, SetRows] = {}
    for p in paths:
        data = json.loads(p.read_text())
        if isinstance(data, list):
            continue
        for r in data["rows"]:
            if r["half"] != "dev":
                continue
            s = out.setdefault(r["dataset"], SetRows(r["dataset"]))
            s.rows[r["row"]] = {m: dict(v) for m, v in r["per_question"].items()}
    return out


def load_ranks(paths: Iterable[Path]) -> dict[tuple[str, str], int | None]:
    """``bench_natural.py --ranks`` files: (row, qid) -> first answer rank (1-100, ``None``:
    none of the 100), dev halves only."""
    out: dict[tuple[str, str], int | None] = {}
    for p in paths:
        data = json.loads(p.read_text())
        if isinstance(data, list):
            out.update({(r["row"], r["qid"]): r["rank"] for r in data if r["half"] == "dev"})
    return out


def rank_bucket(x: int | None) -> str:
    return (
        "none"
        if x is None
        else "1"
        if x == 1
        else "2-3"
        if x <= 3
        else "4-10"
        if x <= 10
        else ">10"
    )


def kind(s: SetRows, q: str) -> str:
    """Why flat rows hold an answer find's block does not: ``lexical`` when flat hybrid's
    block holds it and flat dense's does not, ``dense`` the other way, ``both`` otherwise."""
    h = s.rows["flat-hybrid"][CTX][q]
    d = s.rows["flat-dense"][CTX][q]
    return "lexical" if h > d else "dense" if d > h else "both"


def trailing_diagnosis(s: SetRows, variants: Sequence[str]) -> dict[str, Any]:
    """On one set: find's losses and wins against the set's best flat row (ctx@1000, per
    question), the losses by :func:`kind`, and per variant the losses it recovers (its value
    above find's) and the wins it gives back (below find's)."""
    best = s.best_flat()
    losses = [q for q in s.qids() if s.rows["find"][CTX][q] < s.rows[best][CTX][q]]
    wins = [q for q in s.qids() if s.rows["find"][CTX][q] > s.rows[best][CTX][q]]
    out: dict[str, Any] = {"best": best, "losses": losses, "wins": wins, "kinds": {}}
    for q in losses:
        out["kinds"][q] = kind(s, q)
    for v in variants:
        f, x = s.rows["find"][CTX], s.rows[v][CTX]
        out[v] = {
            "recovered": [q for q in losses if x[q] > f[q]],
            "given_back": [q for q in wins if x[q] < f[q]],
            "moved_up": sum(x[q] > f[q] for q in s.qids()),
            "moved_down": sum(x[q] < f[q] for q in s.qids()),
        }
    return out


def paired(sets: Sequence[SetRows], v: str, metric: str) -> tuple[float, float, float, int, int]:
    d = np.array([s.rows[v][metric][q] - s.rows["find"][metric][q] for s in sets for q in s.qids()])
    m, lo, hi = bn.mean_interval(d)
    return m, lo, hi, int((d > 0).sum()), int((d < 0).sum())


def main(paths: Sequence[str]) -> None:
    sets = load(Path(p) for p in paths)
    ranks = load_ranks(Path(p) for p in paths)
    need = {"find", *FLAT}
    sets = {k: s for k, s in sets.items() if need <= set(s.rows)}
    variants = sorted(
        set.intersection(*(set(s.rows) for s in sets.values())) - need - {"flat-bm25"}
    )
    untuned = [s for k, s in sets.items() if k in ns.HELD_OUT_SETS and k not in LEFT_OUT]
    nine = [s for k, s in sets.items() if k in ns.NATURAL_SETS]
    print(f"{len(nine)} tuning sets, {len(untuned)} untuned dev halves; variants {variants}")

    trailing = [s for s in untuned if not s.meets("find")]
    print(f"\n## untuned dev halves where find misses the ctx@1000 line: {len(trailing)}")
    tot: dict[str, Any] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    lexical: list[str] = []
    for s in trailing:
        d = trailing_diagnosis(s, variants)
        tot["losses"] += len(d["losses"])
        tot["wins"] += len(d["wins"])
        for q, k in d["kinds"].items():
            kinds[k] += 1
            if k == "lexical":
                lexical.append(q)
        for v in variants:
            rec = d[v]["recovered"]
            tot[f"{v} recovered"] += len(rec)
            tot[f"{v} recovered lexical"] += sum(d["kinds"][q] == "lexical" for q in rec)
            tot[f"{v} given back"] += len(d[v]["given_back"])
            tot[f"{v} up"] += d[v]["moved_up"]
            tot[f"{v} down"] += d[v]["moved_down"]
    print(f"losses {tot['losses']} (by kind {dict(kinds)}), wins {tot['wins']}")
    for v in variants:
        print(
            f"  {v}: recovers {tot[f'{v} recovered']} of the losses "
            f"({tot[f'{v} recovered lexical']} lexical), gives back {tot[f'{v} given back']} "
            f"wins; every question of these sets: up {tot[f'{v} up']} / down {tot[f'{v} down']}"
        )

    if ranks and lexical:
        print("first answer rank on the lexical losses (rows: count per bucket)")
        for r in ("flat-hybrid", "flat-dense", "find", *variants):
            got = Counter(rank_bucket(ranks.get((r, q))) for q in lexical)
            line = ", ".join(f"{b} {got[b]}" for b in ("1", "2-3", "4-10", ">10", "none"))
            print(f"  {r}: {line}")

    print("\n## keep rule: variant - find, paired per question (mean, 95 % interval, won/lost)")
    for g, ss in (("nine", nine), ("untuned", untuned), ("pooled", nine + untuned)):
        if not ss:
            continue
        n = sum(len(s.qids()) for s in ss)
        means = "  ".join(
            f"{r} {np.mean([s.rows[r][CTX][q] for s in ss for q in s.qids()]):.4f}/"
            f"{np.mean([s.rows[r][NDCG][q] for s in ss for q in s.qids()]):.4f}"
            for r in ("find", *variants, *FLAT)
        )
        print(f"{g}: {len(ss)} sets, {n} questions; ctx@1000/nDCG@10: {means}")
        for v in variants:
            cells = []
            for metric in (CTX, NDCG):
                m, lo, hi, w, lost = paired(ss, v, metric)
                cells.append(f"{metric} {m:+.4f} ({lo:+.4f}..{hi:+.4f}) {w}/{lost}")
            print(f"  {v} - find: " + " | ".join(cells))
    print("\n## goal line (ctx@1000 >= best flat + 0.03), untuned dev halves")
    for r in ("find", *variants):
        print(f"  {r}: {sum(s.meets(r) for s in untuned)} of {len(untuned)}")


if __name__ == "__main__":
    main(sys.argv[1:])
