"""What ``DEEPER_TURNS`` costs on LoCoMo's memory finds (helper perf59).

The finds of ``check_memory_identity.py`` (five dev conversations; per question ``find`` with
``include_directories=False``, with the defaults, with ``limit=30``, with the question's
``since`` / ``until`` window where it names a time), each timed in one process with
``hierarchical_retriever.DEEPER_TURNS`` off and on, the order flipping every find (process
CPU per call). A find "takes" the deeper run when ``_deeper_turn_slots`` is called for it
(counted by a wrapper); for those, ``--repeat`` more off / on pairs. Prints p50 / p95 of
the on / off times and their ratio over the finds that take it, over the others (the
check alone) and over all finds, the share of all finds' CPU the deeper runs add, the
deeper descents per taking find, and the embedder calls per find with the flag off and on
(a rerun must not embed the query again).
Why: leftovers59 added the rerun; perf59 measures what it costs where it runs.

    OPENBLAS_NUM_THREADS=1 TREEHOP_BENCH_CACHE=/work/benchcache \\
    TREEHOP_LOCOMO=/work/shared/data/locomo/locomo5_dev.json \\
    PYTHONPATH=retrieval python bench/bench_deeper_turns_cost.py [--repeat 5] [--conversations N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from check_memory_identity import find_options, written
from datasets import default_embedder
from treehop import hierarchical_retriever as hr


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(p * (len(s) - 1)))]


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="more off/on pairs per taking find")
    ap.add_argument("--conversations", type=int, default=None)
    a = ap.parse_args(argv)
    emb = default_embedder()
    counts = {"embed": 0, "deeper": 0, "descents": 0}
    inner_embed = emb.embed

    def counting_embed(texts: Any) -> Any:
        counts["embed"] += 1
        return inner_embed(texts)

    emb.embed = counting_embed
    real_deeper = hr.HierarchicalRetriever._deeper_turn_slots
    real_descend = hr.HierarchicalRetriever._descend

    async def deeper(self: Any, *args: Any, **kw: Any) -> Any:
        counts["deeper"] += 1
        return await real_deeper(self, *args, **kw)

    async def descend(self: Any, *args: Any, **kw: Any) -> Any:
        if kw.get("descent_limit") is not None:
            counts["descents"] += 1
        return await real_descend(self, *args, **kw)

    hr.HierarchicalRetriever._deeper_turn_slots = deeper  # type: ignore[method-assign]
    hr.HierarchicalRetriever._descend = descend  # type: ignore[method-assign]

    async def timed(mem: Any, q: str, target: str, kw: dict[str, Any], flag: bool) -> float:
        hr.DEEPER_TURNS = flag
        t0 = time.process_time()
        await mem.find(q, target_uri=target, **kw)
        return (time.process_time() - t0) * 1e3

    rows: list[dict[str, Any]] = []
    embeds = {False: 0, True: 0}
    descents = 0
    async for conv, mem, target, sessions in written(emb, a.conversations):
        times = [st for _, st, _ in sessions]
        qs = [q["question"] for q in conv["qa"]]
        emb.embed(qs)  # (cached: the timed calls embed nothing new)
        for q in conv["qa"]:
            for kw in find_options(q["question"], times):
                t: dict[bool, list[float]] = {False: [], True: []}
                order = (False, True) if len(rows) % 2 == 0 else (True, False)
                took = False
                for flag in order:
                    e0, d0, n0 = counts["embed"], counts["deeper"], counts["descents"]
                    t[flag].append(await timed(mem, q["question"], target, kw, flag))
                    embeds[flag] += counts["embed"] - e0
                    if flag:
                        took = counts["deeper"] > d0
                        descents += counts["descents"] - n0
                if took:
                    for r in range(a.repeat):
                        for flag in order if r % 2 else order[::-1]:
                            t[flag].append(await timed(mem, q["question"], target, kw, flag))
                rows.append(
                    {
                        "took": took,
                        "off": statistics.median(t[False]),
                        "on": statistics.median(t[True]),
                    }
                )
    hr.DEEPER_TURNS = True
    taking = [r for r in rows if r["took"]]
    print(f"{len(rows)} finds, {len(taking)} take the deeper run, {descents} deeper descents")
    print(
        f"embedder calls per find: off {embeds[False] / len(rows):.3f}, "
        f"on {embeds[True] / len(rows):.3f}"
    )
    rest = [r for r in rows if not r["took"]]
    for name, rs in (("taking", taking), ("others", rest), ("all", rows)):
        if not rs:
            continue
        off = [r["off"] for r in rs]
        on = [r["on"] for r in rs]
        ratio = [r["on"] / r["off"] for r in rs]
        print(
            f"{name:7s} n={len(rs):5d}  off p50 {pct(off, 0.5):7.2f} p95 {pct(off, 0.95):7.2f} ms  "
            f"on p50 {pct(on, 0.5):7.2f} p95 {pct(on, 0.95):7.2f} ms  "
            f"p50 ratio {pct(on, 0.5) / pct(off, 0.5):.3f}  "
            f"p95 ratio {pct(on, 0.95) / pct(off, 0.95):.3f}  "
            f"median per-find ratio {statistics.median(ratio):.3f}  "
            f"sum on/off {sum(on) / sum(off):.4f}"
        )


if __name__ == "__main__":
    asyncio.run(main())
