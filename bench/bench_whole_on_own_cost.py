"""What ``assemble_context``'s ``WHOLE_ON_OWN`` check costs a call (the default MiniLM token
counter), on natural-set dev halves.

    TREEHOP_BENCH_CACHE=/work/benchcache OPENBLAS_NUM_THREADS=1 \\
        python bench/bench_whole_on_own_cost.py --sets django-faq,gitfaq

Per question: the ``FindResult`` ``assemble_context(max_tokens=500)`` builds its block from,
one call (the packer's line cache warm, as for a repeated question), then 5 calls with
``WHOLE_ON_OWN`` on and 5 off, alternating, process CPU; per set the mean of the per-question
medians, and the same over the questions where the check reaches its token count (top slot
with extensions, the next hit's own score above the top's). Run it under two source trees
(``PYTHONPATH``) to compare them.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_context_diag as cd
import bench_natural as bn
import bench_tree as bt
import datasets as ds
import natural_sets as ns
import treehop.context_assembly as ca


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default="django-faq,gitfaq")
    ap.add_argument("--budget", type=int, default=500)
    a = ap.parse_args()
    cached = ds.default_embedder()
    counter = ca.default_token_counter()
    for name in a.sets.split(","):
        nset = ns.load_natural_set(name, cached)
        with bn.indexed_set(nset, cached) as ix:
            dev, _ = bt.sampled_halves(nset.questions, 0)
            ix.embedder.prepare([q.text for q in dev])
            on_all, off_all, on_f, off_f = [], [], [], []
            for q in dev:
                found = cd.found_for(ix.th, q.text, a.budget, ix.scope, bn.CachedCounter(counter))
                ranked = found.contexts()
                fires = (
                    len(ranked) > 1
                    and not ca._is_turn(ranked[0])
                    and bool(ranked[0].collapsed)
                    and ranked[0].own_score is not None
                    and ranked[1].own_score is not None
                    and ranked[0].own_score < ranked[1].own_score
                )
                ca.assemble_context(found, max_tokens=a.budget, query=q.text)
                t: dict[bool, list[float]] = {True: [], False: []}
                for r in range(5):
                    for v in (True, False) if r % 2 == 0 else (False, True):
                        ca.WHOLE_ON_OWN = v
                        s = time.process_time()
                        ca.assemble_context(found, max_tokens=a.budget, query=q.text)
                        t[v].append((time.process_time() - s) * 1e3)
                ca.WHOLE_ON_OWN = True
                on, off = statistics.median(t[True]), statistics.median(t[False])
                on_all.append(on)
                off_all.append(off)
                if fires:
                    on_f.append(on)
                    off_f.append(off)
            m = statistics.mean
            print(
                f"{name}: n={len(dev)} repeat assemble_context mean ms: on {m(on_all):.3f} "
                f"off {m(off_all):.3f} (+{m(on_all) - m(off_all):.3f}); where the check counts "
                f"(n={len(on_f)}): on {m(on_f) if on_f else 0:.3f} "
                f"off {m(off_f) if off_f else 0:.3f}"
            )


if __name__ == "__main__":
    main()
