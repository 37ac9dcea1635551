"""Paired CPU A/B of ``find(limit=10)`` on natural sets' dev questions between two source
trees (helper perf59).

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
        python bench/bench_natural_find_ab.py OLD_CHECKOUT NEW_CHECKOUT [--sets cranfield,...]
        [--rounds 4]

One worker process per checkout (its own ``retrieval/``, run from its root) indexes each set
as ``bench_natural.py`` does (``indexed_set``: the cached MiniLM, the default config) and
answers its dev questions, fed alternately (the order flipping every question); each call's
process CPU time is reported with a hash of the answer (URIs and scores), which must be
equal in both. Round 0 warms; the medians are over the other rounds. Why:
``bench_natural.py``'s p50 column is wall time over one call a question, which moved
0.86-1.28x between two runs of the same pair of trees on the shared 2-core machine.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import time

import ab_workers as abw

DEFAULT_SETS = (
    "django-faq,gitfaq,lsof-faq,perlfaq,cranfield,fetchmail-faq,zsh-faq,borg-faq,ffmpeg-faq"
)


def worker(name: str) -> None:
    """Answer ``<question index>`` lines with ``<CPU ms> <answer hash>``."""
    sys.path.insert(0, "bench")
    import bench_natural as bn
    import bench_tree as bt
    import natural_sets as ns

    cached = bn.bench_embedder("")
    nset = ns.load_natural_set(name, cached)
    with bn.indexed_set(nset, cached) as ix:
        qs = bt.sampled_halves(nset.questions, None)[0]
        ix.embedder.prepare([q.text for q in qs])
        print(len(qs), flush=True)
        for line in sys.stdin:
            q = qs[int(line)]
            t0 = time.process_time()
            res = ix.th.find(q.text, target_uri=ix.scope, limit=10)
            ms = (time.process_time() - t0) * 1e3
            got = repr([(m.uri, m.score) for m in res.contexts()]).encode()
            print(f"{ms} {hashlib.sha256(got).hexdigest()[:12]}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--sets", default=DEFAULT_SETS)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    for name in a.sets.split(","):
        procs = abw.start_workers(__file__, {"old": a.old, "new": a.new}, "--worker", name)
        ns = {t: int(line) for t, line in abw.first_lines(procs).items()}
        assert ns["old"] == ns["new"], ns
        t: dict[str, list[float]] = {"old": [], "new": []}
        for r in range(a.rounds):
            for i in range(ns["old"]):
                got = {}
                for tree in abw.turns(i + r):
                    ms, h = abw.ask(procs[tree], f"{i}")
                    got[tree] = h
                    if r > 0:
                        t[tree].append(float(ms))
                assert got["old"] == got["new"], (name, i)
        old, new = t["old"], t["new"]
        ratio = statistics.median(y / x for x, y in zip(old, new, strict=True))
        mo, mn = statistics.median(old), statistics.median(new)
        print(
            f"{name:14s} n={len(old)} CPU p50 old {mo:.2f} ms  new {mn:.2f} ms  "
            f"new/old {mn / mo:.3f}  median per-query ratio {ratio:.3f}  answers equal",
            flush=True,
        )
        abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(sys.argv[sys.argv.index("--worker") + 1])
    else:
        main()
