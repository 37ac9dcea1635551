"""Per-question lexical signals for a per-question dense weight (issue 33, stop 70).

    python bench/qw71_signals.py --sets <sets> --json signals.json     # dev halves only
    python bench/qw71_signals.py --report signals.json run.json [run2.json ...]
    python bench/qw71_signals.py --report signals.json run.json ... --sweep z:find-qw0.7

quality70 (``bench/ctx70_lexical_weight.py``) found that most answers find's 1,000-token block
loses to flat hybrid on the untuned dev halves are *lexical*, and that a global lower
``question_dense_weight`` trades them one for one against dense wins. The open idea: choose the
weight per question from what the query's own BM25 says, without labels. Because ``find()``'s
result for a question depends only on its weight, a rule that picks 0.8 or a lower weight per
question can be scored exactly from a run that already holds ``find`` and ``find-qw0.7`` /
``find-qw0.5`` per question (quality70's ``natural_qw70_screen_dev_*.json``): the rule's value
on a question is the value of the row it picks. This script computes the signals (on the
dev half only: the test questions are never embedded, scored or read) and scores the rules.

Signals, each scale-free, from treehop's BM25 over the set's leaves (the flat rows' index,
``bench_natural.Flat``) and the leaves' vectors:

* ``margin``: ``(s1 - s2) / s1`` of the two best leaf BM25 scores (0 with no match): how far
  the lexical leader stands above the next leaf. A peaked BM25 says one leaf holds the
  question's rare words.
* ``z``: the leader's BM25 in standard deviations above the mean over the leaves that match.
* ``agree``: the BM25 leader's rank in the dense order (1 = the dense leader too): whether
  the dense score rules the lexical leader out.

The report prints each signal's separation (ROC AUC) of the questions a lower weight helps
from those it hurts, then the named rules (:data:`RULES`, cuts named before the screen) on
the nine, the untuned sets and pooled. ``--sweep`` prints a signal's deciles as cuts, post
hoc: a bound on what the signal could do, and, run on one run file's sets at a time, a
cross-check of a cut picked on one half of the sets on the other; never a kept constant.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_natural as bn
import bench_tree as bt
import natural_sets as ns

CTX = "ctx@1000"
NDCG = "ndcg@10"
LEFT_OUT = frozenset({"doxygen-faq"})  # outside every pool, as pool_untuned.py leaves it


def leaf_signals(bm25: np.ndarray, dense: np.ndarray) -> dict[str, float]:
    """The signals of one query from its BM25 and dense score of every leaf."""
    order = np.sort(bm25)[::-1]
    s1 = float(order[0]) if len(order) else 0.0
    s2 = float(order[1]) if len(order) > 1 else 0.0
    margin = (s1 - s2) / s1 if s1 > 0 else 0.0
    hit = bm25[bm25 > 0]
    z = float((s1 - hit.mean()) / hit.std()) if len(hit) > 1 and hit.std() > 0 else 0.0
    agree = 0.0
    if s1 > 0:
        lead = int(np.argmax(bm25))
        agree = float(1 + np.count_nonzero(dense > dense[lead]))
    return {"margin": margin, "z": z, "agree": agree, "matched": float(len(hit))}


def compute(names: Sequence[str], out: Path) -> None:
    cached = bn.bench_embedder("")
    got: dict[str, dict[str, dict[str, float]]] = (
        json.loads(out.read_text()) if out.exists() else {}
    )
    for name in names:
        if name in got or name in LEFT_OUT:
            continue
        nset = ns.load_natural_set(name, cached)
        dev_qs, _ = bt.sampled_halves(nset.questions, 0)  # the dev half only
        with bn.indexed_set(nset, cached) as ix:
            ix.embedder.prepare([q.text for q in dev_qs])
            per: dict[str, dict[str, float]] = {}
            for q in dev_qs:
                vec = np.asarray(ix.embedder.embed_query(q.text), dtype=np.float32)
                bm25 = np.asarray(ix.flat.lexical.score(q.text), dtype=np.float64)
                per[q.qid] = leaf_signals(bm25, ix.flat.matrix @ vec)
        got[name] = per
        out.write_text(json.dumps(got, indent=0) + "\n")  # after every set
        print(f"{name}: {len(per)} dev questions", flush=True)


def load_rows(files: Sequence[Path]) -> dict[str, dict[str, dict[str, dict[str, float]]]]:
    """set -> row -> metric -> qid -> value, dev halves only, whole-set rows only."""
    out: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    for f in files:
        for r in json.loads(f.read_text())["rows"]:
            if r["half"] != "dev" or "/" in r["dataset"] or r["dataset"] in LEFT_OUT:
                continue
            out.setdefault(r["dataset"], {})[r["row"]] = r["per_question"]
    return out


Rule = Callable[[dict[str, float]], bool]

RULES: dict[str, Rule] = {
    # named before the screen, each a conventional cut, none fitted: a leader twice the
    # runner-up; a three-sigma leader; the lexical leader inside the dense top 10 (the
    # block's reach); both of the first and third
    "margin>=0.5": lambda s: s["margin"] >= 0.5,
    "z>=3": lambda s: s["z"] >= 3.0,
    "agree<=10": lambda s: 0 < s["agree"] <= 10,
    "margin>=0.5&agree<=10": lambda s: s["margin"] >= 0.5 and 0 < s["agree"] <= 10,
}


def separation(up: Sequence[float], down: Sequence[float]) -> float:
    """The probability that a question the lower weight helps has a larger signal than one
    it hurts (ties half): the ROC AUC of the signal, threshold-free; 0.5 = no separation,
    and a rule on the signal can do no better than its AUC allows."""
    if not up or not down:
        return float("nan")
    u = np.asarray(up, dtype=np.float64)[:, None]
    d = np.asarray(down, dtype=np.float64)[None, :]
    return float(((u > d).sum() + 0.5 * (u == d).sum()) / (u.size * d.size))


def print_separation(
    sigs: dict[str, dict[str, dict[str, float]]],
    rows: dict[str, dict[str, dict[str, dict[str, float]]]],
    low: str,
) -> None:
    """Per signal and metric: the questions ``low`` helps and hurts, and the signal's AUC."""
    for m in (CTX, NDCG):
        up: dict[str, list[float]] = {}
        down: dict[str, list[float]] = {}
        for sname, srows in rows.items():
            if sname not in sigs or low not in srows:
                continue
            for qid, s in sigs[sname].items():
                if qid not in srows["find"][m]:
                    continue
                diff = srows[low][m][qid] - srows["find"][m][qid]
                side = up if diff > 0 else down if diff < 0 else None
                if side is None:
                    continue
                for k, v in s.items():
                    side.setdefault(k, []).append(v)
        n_up = len(next(iter(up.values()), []))
        n_down = len(next(iter(down.values()), []))
        aucs = ", ".join(f"{k} {separation(up[k], down.get(k, [])):.3f}" for k in sorted(up))
        print(f"| {low} | {m} | up {n_up} / down {n_down} | AUC: {aucs} |")


def report(sig_file: Path, runs: Sequence[Path]) -> None:
    sigs = json.loads(sig_file.read_text())
    rows = load_rows(runs)
    nine = set(ns.NATURAL_SETS)
    print("\n### which questions a lower weight helps: the signals' separation (pooled dev)")
    for low in ("find-qw0.7", "find-qw0.5"):
        print_separation(sigs, rows, low)
    for low in ("find-qw0.7", "find-qw0.5"):
        print(f"\n### per question: {low} where the rule fires, else find (minus find)")
        for rname, rule in RULES.items():
            for pool_name, pick in (
                ("nine", lambda s: s in nine),
                ("untuned", lambda s: s not in nine),
                ("pooled", lambda s: True),
            ):
                d, fired = rule_diffs(sigs, rows, low, rule, pick)
                parts = []
                for m in (CTX, NDCG):
                    a = d[m]
                    if len(a) == 0:
                        parts.append("-")
                        continue
                    mean, lo, hi = bn.mean_interval(a)
                    parts.append(
                        f"{m} {mean:+.4f} ({lo:+.4f}..{hi:+.4f}) "
                        f"{int((a > 0).sum())}/{int((a < 0).sum())}"
                    )
                n = len(d[CTX])
                print(f"| {rname} | {pool_name} ({n}, fires {fired}) | {' | '.join(parts)} |")


def rule_diffs(
    sigs: dict[str, dict[str, dict[str, float]]],
    rows: dict[str, dict[str, dict[str, dict[str, float]]]],
    low: str,
    rule: Rule,
    pick: Callable[[str], bool],
) -> tuple[dict[str, np.ndarray], int]:
    """Per question of the picked sets (those with signals and a ``low`` row): the rule's
    value (``low``'s where the rule fires, ``find``'s elsewhere) minus ``find``'s, per
    metric; and how many questions it fires on. Exact, since ``find()``'s answer to a
    question depends only on the weight it runs at."""
    d: dict[str, list[float]] = {CTX: [], NDCG: []}
    fired = 0
    for sname, srows in rows.items():
        if not pick(sname) or sname not in sigs or low not in srows:
            continue
        for qid, s in sigs[sname].items():
            if qid not in srows["find"][CTX]:
                continue
            on = rule(s)
            fired += on
            for m in (CTX, NDCG):
                base = srows["find"][m][qid]
                d[m].append((srows[low][m][qid] if on else base) - base)
    return {m: np.asarray(v, dtype=np.float64) for m, v in d.items()}, fired


def sweep(sig_file: Path, runs: Sequence[Path], signal: str, low: str) -> None:
    """Post hoc, for the bound only (never a kept constant): the rule ``signal >= t`` at
    each decile ``t`` of the signal over the pooled dev questions, pooled and nine."""
    sigs = json.loads(sig_file.read_text())
    rows = load_rows(runs)
    nine = set(ns.NATURAL_SETS)
    values = [s[signal] for per in sigs.values() for s in per.values()]
    for t in np.unique(np.percentile(values, np.arange(10, 100, 10))):
        parts = []
        for pick in (lambda n: True, lambda n: n in nine):
            d, fired = rule_diffs(sigs, rows, low, lambda s, t=t: s[signal] >= t, pick)
            for m in (CTX, NDCG):
                mean, lo, hi = bn.mean_interval(d[m])
                parts.append(f"{m} {mean:+.4f} ({lo:+.4f}..{hi:+.4f})")
            parts.append(f"fires {fired}")
        pooled, of_nine = " ".join(parts[:3]), " ".join(parts[3:])
        print(f"| {signal} >= {t:.3g} | {low} | pooled {pooled} | nine {of_nine} |")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--report", nargs="+", type=Path)
    ap.add_argument("--sweep", help="SIGNAL:ROW, with --report's files (post hoc bound)")
    args = ap.parse_args(argv)
    if args.report and args.sweep:
        signal, _, low = args.sweep.partition(":")
        sweep(args.report[0], args.report[1:], signal, low)
    elif args.report:
        report(args.report[0], args.report[1:])
    else:
        compute([s for s in args.sets.split(",") if s], args.json)


if __name__ == "__main__":
    main()
