"""Paired screen of ``bench_context_diag.py`` variants against ``base`` from its
``--per-question`` file (issue 33, helper ctx58).

    python bench/ctx58_pair.py P.json [--changed out.json]

Per budget and variant: the pooled ctx of every row, the paired mean of variant minus
``base`` with its 95 % bootstrap interval (:func:`bench_natural.paired_interval`, questions
as the unit), questions won / lost, and the sets that moved (net answer-shares). With
``--changed``, the questions where a variant's score differs from ``base``'s (a small file
to commit in place of every question).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import bench_natural as bn


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("per_question", type=Path)
    ap.add_argument("--base", default="base")
    ap.add_argument("--changed", type=Path)
    args = ap.parse_args()
    rows = json.loads(args.per_question.read_text())
    score: dict[tuple[str, int], dict[str, float]] = defaultdict(dict)
    for r in rows:
        score[(r["row"], r["budget"])][f"{r['set']}\t{r['qid']}"] = float(r["score"])
    names = list(dict.fromkeys(r["row"] for r in rows))
    budgets = sorted({b for _, b in score})
    changed: list[dict[str, Any]] = []
    for b in budgets:
        base = score[(args.base, b)]
        print(f"\n@{b} ({len(base)} questions)")
        for n in names:
            s = score[(n, b)]
            mean = sum(s.values()) / max(1, len(s))
            line = f"  {n:>14}: {mean:.4f}"
            if n not in (args.base, "flat dense", "flat hybrid", "langchain"):
                pi = bn.paired_interval(s, base)
                won = [k for k in s if s[k] > base[k]]
                lost = [k for k in s if s[k] < base[k]]
                per_set: dict[str, float] = defaultdict(float)
                for k in won + lost:
                    per_set[k.split("\t")[0]] += s[k] - base[k]
                    changed.append(
                        {
                            "variant": n,
                            "budget": b,
                            "set": k.split("\t")[0],
                            "qid": k.split("\t")[1],
                            "base": base[k],
                            "variant_score": s[k],
                        }
                    )
                moved = ", ".join(f"{k} {v:+.1f}" for k, v in sorted(per_set.items()) if v)
                if pi is not None:
                    line += f"  {pi[0]:+.4f} ({pi[1]:+.4f}..{pi[2]:+.4f})"
                line += f"  won {len(won)} lost {len(lost)}  [{moved}]"
            print(line)
    if args.changed:
        args.changed.write_text(json.dumps(changed, indent=0) + "\n")


if __name__ == "__main__":
    main()
