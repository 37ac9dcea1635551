"""Paired CPU A/B of ``add_memory`` between two source trees (helper perf59).

    OPENBLAS_NUM_THREADS=1 python bench/bench_add_memory_ab.py OLD_CHECKOUT NEW_CHECKOUT \\
        [--prefill 200] [--calls 60] [--rounds 3]

One worker process per checkout (its own ``retrieval/``, run from its root), each with an
embedded store on disk (a fresh temporary folder) and the tests' bag-of-words embedder (the
write path without a model), holding ``--prefill`` named memories. Then, alternately (the
order flipping every call), the same calls: ``new`` (a fresh name), ``replace`` (a name
written before) and ``unnamed`` (no name), ``--calls`` of each a round; each worker reports
the call's process CPU time (the store's worker threads included) and its ``replaced``.
Round 0 warms; the medians are over the other rounds. Why: leftovers59 changed
``add_memory``'s checks (one read of the target's ancestors, a ``ContextVar`` into
``add_resource``); wall time on the shared 2-core machine moves 2x between runs.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time

import ab_workers as abw

KINDS = ("new", "replace", "unnamed")


def worker(prefill: int) -> None:
    """Answer ``<call index> <kind>`` lines with ``<CPU ms> <replaced>``."""
    sys.path.insert(0, "tests")
    from treehop import AsyncTreehop

    from treehop_test_doubles import BagOfWordsEmbedder

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="perf59_am_") as d:
            mem = AsyncTreehop(d, embedder=BagOfWordsEmbedder())
            for i in range(prefill):
                await mem.add_memory(
                    f"the user likes item {i} and visits place {i % 17}", name=f"p{i}"
                )
            print("ready", flush=True)
            for line in sys.stdin:
                i, kind = line.split()
                text = f"note {i}: the user mentioned {kind} plans for week {int(i) % 9}"
                name = {"new": f"n{i}", "replace": f"p{int(i) % prefill}", "unnamed": None}[kind]
                t0 = time.process_time()
                res = await mem.add_memory(text, name=name)
                print(f"{(time.process_time() - t0) * 1e3} {res.replaced}", flush=True)
            await mem.close()

    asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--prefill", type=int, default=200)
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    procs = abw.start_workers(__file__, {"old": a.old, "new": a.new}, "--worker", str(a.prefill))
    assert set(abw.first_lines(procs).values()) == {"ready"}
    t: dict[tuple[str, str], list[float]] = {}
    n = 0
    for r in range(a.rounds):
        for kind in KINDS:
            for i in range(a.calls):
                got = {}
                for name in abw.turns(i + r):
                    ms, replaced = abw.ask(procs[name], f"{n} {kind}")
                    got[name] = replaced
                    if r > 0:
                        t.setdefault((name, kind), []).append(float(ms))
                assert got["old"] == got["new"], (kind, got)
                n += 1
    for kind in KINDS:
        old, new = t[("old", kind)], t[("new", kind)]
        ratio = statistics.median(y / x for x, y in zip(old, new, strict=True))
        mo, mn = statistics.median(old), statistics.median(new)
        print(
            f"{kind:8s} n={len(old)} CPU p50 old {mo:.2f} ms  new {mn:.2f} ms  "
            f"new/old {mn / mo:.3f}  median per-call ratio {ratio:.3f}"
        )
    abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
    else:
        main()
