"""What a question's chunk window and document spread cost a find (issue 33, round 9).

    python bench/bench_rank_cost.py --sets perlfaq,lsof-faq --passes 3

For every dev question of each natural set: one warming find (the query's caches), then one
find per configuration (``kept``: the defaults; ``no-spread``: ``question_document_penalty``
0; ``round8``: both steps off), the order rotated per question so that no configuration is
always first. Prints each configuration's p50 and mean wall time per find and the ratio of
p50s to ``round8``: ratios inside one run, since absolute times on a shared box are noisy.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
import datasets as ds  # noqa: E402
import natural_sets as ns  # noqa: E402

MODES: dict[str, dict[str, object]] = {
    "kept": {},
    "no-spread": {"question_document_penalty": 0.0},
    "round8": {"question_chunk_window": False, "question_document_penalty": 0.0},
}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--sets", default="perlfaq,lsof-faq")
    ap.add_argument("--passes", type=int, default=3)
    args = ap.parse_args(argv)
    cached = ds.default_embedder()
    for name in args.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        questions = bt.sampled_halves(nset.questions, None)[0]
        times: dict[str, list[float]] = {m: [] for m in MODES}
        with bn.indexed_set(nset, cached) as s:
            s.embedder.prepare([q.text for q in questions])
            cfg = s.th.config
            defaults = {k: getattr(cfg, k) for m in MODES.values() for k in m}
            names = list(MODES)
            for _ in range(args.passes):
                for qi, q in enumerate(questions):
                    s.th.find(q.text, target_uri=s.scope, limit=10)
                    for m in names[qi % len(names) :] + names[: qi % len(names)]:
                        for k, v in defaults.items():
                            setattr(cfg, k, MODES[m].get(k, v))
                        t0 = time.perf_counter()
                        s.th.find(q.text, target_uri=s.scope, limit=10)
                        times[m].append(time.perf_counter() - t0)
            for k, v in defaults.items():
                setattr(cfg, k, v)
        base = statistics.median(times["round8"])
        for m, xs in times.items():
            p50, mean = statistics.median(xs), statistics.fmean(xs)
            print(
                f"{name:14} {m:10} p50 {p50 * 1000:6.2f} ms  mean {mean * 1000:6.2f} ms"
                f"  p50 / round8 {p50 / base:4.2f}  ({len(xs)} finds)"
            )


if __name__ == "__main__":
    main()
