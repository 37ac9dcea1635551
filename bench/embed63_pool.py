"""Pool an embedder screen (helper embed63): the same rows on the same dev questions with the
default MiniLM and with a candidate, every question weighing the same.

    python bench/embed63_pool.py --base MINILM.json [...] --cand E5.json [...]

The files are ``--json`` outputs of ``bench_natural.py`` (MiniLM) and
``bench_embed63_screen.py --candidate`` (candidate). Only the (set, half, row) present in
both are pooled. Printed: each row's pooled means with each embedder, candidate minus
MiniLM per row with a paired 95 % bootstrap interval (``bench_natural.mean_interval`` over
the per-question differences), find() minus each other row with each embedder (whether
find()'s lead holds), and the median over sets of each row's p50 latency.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_natural import mean_interval  # noqa: E402

METRICS = ("ndcg@10", "ctx@500", "ctx@1000", "ctx@2000")


def load(files: list[str]) -> dict[tuple[str, str, str], dict[str, Any]]:
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for f in files:
        for r in json.loads(Path(f).read_text())["rows"]:
            if "/" not in r["dataset"] and "per_question" in r:
                out[(r["dataset"], r["half"], r["row"])] = r
    return out


def per_q(rows: list[dict[str, Any]], m: str) -> dict[str, float]:
    return {f"{r['dataset']}:{q}": v for r in rows for q, v in r["per_question"][m].items()}


def cell(d: list[float]) -> str:
    mu, lo, hi = mean_interval(np.asarray(d, dtype=np.float64))
    return f"{mu:+.3f} ({lo:+.3f}..{hi:+.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", nargs="+", required=True)
    ap.add_argument("--cand", nargs="+", required=True)
    args = ap.parse_args()
    base, cand = load(args.base), load(args.cand)
    keys = sorted(set(base) & set(cand))
    names = sorted({k[2] for k in keys}, key=lambda n: (n != "find", n))
    sets = sorted({k[0] for k in keys})
    print(f"{len(sets)} sets: {', '.join(sets)}")
    for name in names:
        ks = [k for k in keys if k[2] == name]
        b = [base[k] for k in ks]
        c = [cand[k] for k in ks]
        n = sum(r["n"] for r in b)
        line = [f"{name:12s} n={n:4d}"]
        for m in METRICS:
            if m not in b[0]["per_question"]:
                continue
            pb, pc = per_q(b, m), per_q(c, m)
            common = sorted(set(pb) & set(pc))
            mb = np.mean([pb[q] for q in common])
            mc = np.mean([pc[q] for q in common])
            line.append(f"{m} {mb:.3f}->{mc:.3f} {cell([pc[q] - pb[q] for q in common])}")
        pb50 = np.median([r["p50_ms"] for r in b])
        pc50 = np.median([r["p50_ms"] for r in c])
        line.append(f"p50 {pb50:.1f}->{pc50:.1f} ms")
        print("  ".join(line))
    for label, src in (("MiniLM", base), ("candidate", cand)):
        for other in names:
            if other == "find":
                continue
            ks = [k for k in keys if k[2] == other and (k[0], k[1], "find") in src]
            parts = []
            for m in ("ndcg@10", "ctx@500", "ctx@1000"):
                pf = per_q([src[(k[0], k[1], "find")] for k in ks], m)
                po = per_q([src[k] for k in ks], m)
                parts.append(f"{m} {cell([pf[q] - po[q] for q in sorted(set(pf) & set(po))])}")
            print(f"{label:9s} find - {other:12s} " + " | ".join(parts))
    print("per set, nDCG@10 MiniLM -> candidate:")
    for s in sets:
        bits = [
            f"{k[2]} {base[k]['ndcg@10']:.3f}->{cand[k]['ndcg@10']:.3f}" for k in keys if k[0] == s
        ]
        print(f"  {s:16s} " + "  ".join(bits))


if __name__ == "__main__":
    main()
