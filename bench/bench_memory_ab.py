"""Paired CPU A/B of memory ``find()`` and ``assemble_context()`` between two source trees.

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
        python bench/bench_memory_ab.py OLD_CHECKOUT NEW_CHECKOUT [--conversations 2] [--rounds 3]

One worker process per checkout (its own ``retrieval/``, run from its root), each writing the
first ``--conversations`` LoCoMo conversations through ``bench_memory``'s write path, then fed
the same questions alternately (the order flipping every question), one call at a time; each
reports the call's process CPU time. Round 0 warms; the medians are over the other rounds.
Why: on the shared 2-core machine ``bench_memory.py --context-table``'s wall p50s swung 2x
between runs of the same tree (helper perf57); paired CPU times move together.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import ab_workers as abw


def worker(n_convs: int) -> None:
    """Answer ``<question index> <find|assemble>`` lines with the call's CPU milliseconds."""
    sys.path.insert(0, "bench")
    import bench_memory as bm
    from datasets import default_embedder
    from treehop import AsyncTreehop

    emb = default_embedder()

    async def main() -> None:
        asks = []
        for conv in bm.load_conversations(n_convs):
            cid = conv["sample_id"]
            mem = AsyncTreehop(None, embedder=emb, tagger="auto")
            await bm.add_conversation(mem, cid, bm.sessions_of(conv))
            target = f"viking://~/memories/conversations/{cid}"
            qs = [
                q["question"]
                for q in conv["qa"]
                if q.get("category") != 5 and bm.evidence_ids(q.get("evidence", []))
            ]
            emb.embed(qs)  # (cached: the timed calls embed nothing new)
            asks += [(mem, target, q) for q in qs]
        print(len(asks), flush=True)
        for line in sys.stdin:
            i, kind = line.split()
            mem, target, q = asks[int(i)]
            t0 = time.process_time()
            if kind == "find":
                await mem.find(q, target_uri=target)
            else:
                await mem.assemble_context(q, max_tokens=500, target_uri=target)
            print((time.process_time() - t0) * 1e3, flush=True)

    asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--conversations", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    procs = abw.start_workers(
        __file__, {"old": a.old, "new": a.new}, "--worker", str(a.conversations)
    )
    ns = {n: int(line) for n, line in abw.first_lines(procs).items()}
    assert ns["old"] == ns["new"], ns
    t: dict[tuple[str, str], list[float]] = {}
    for r in range(a.rounds):
        for kind in ("find", "assemble"):
            for i in range(ns["old"]):
                for name in abw.turns(i + r):
                    ms = float(abw.ask(procs[name], f"{i} {kind}")[0])
                    if r > 0:
                        t.setdefault((name, kind), []).append(ms)
    for kind in ("find", "assemble"):
        old, new = t[("old", kind)], t[("new", kind)]
        ratio = statistics.median(y / x for x, y in zip(old, new, strict=True))
        mo, mn = statistics.median(old), statistics.median(new)
        print(
            f"{kind:9s} n={len(old)} CPU p50 old {mo:.2f} ms  new {mn:.2f} ms  "
            f"new/old {mn / mo:.3f}  median per-query ratio {ratio:.3f}"
        )
    abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
    else:
        main()
