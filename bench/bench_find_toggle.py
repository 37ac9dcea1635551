"""Paired, in one process: ``find()`` at 100k with one of this round's changes switched off
(``old``) and on (``new``), query by query, the order alternating (issue 35 round 14).

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_toggle.py --index /work/idx/fast3-100k \\
        --change keep_rows --mode default --queries 300 --repeats 3

Each find starts cold for its folders, as a find over a large index mostly does (the store's
per-snapshot caches of subtree rows, looked-up rows and subtree sets are emptied, and the
graph answers kept for a repeated query dropped, before every timed call, on both sides),
so the row says what a change is worth on a folder no earlier query asked. Thread CPU of
the calling thread; prints the medians, the paired median difference and whether both
sides' result lists were identical.

``--change``: ``keep_rows`` (:meth:`_Snap._keep_rows`: off = the directory URIs' rows are
not kept as lookup answers).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_find_profile as bp  # noqa: E402
from bench_find_overhead import forget_answers  # noqa: E402
from treehop.stores.embedded.snapshot import _Snap  # noqa: E402


def _toggle_keep_rows(on: bool) -> None:
    _Snap._keep_rows = KEEP_ROWS if on else (lambda self, decoded: None)  # type: ignore[method-assign]


KEEP_ROWS = _Snap._keep_rows
CHANGES: dict[str, Callable[[bool], None]] = {"keep_rows": _toggle_keep_rows}


def cold(store: Any) -> None:
    """Forget the per-snapshot answers a repeated query or folder would reuse."""
    forget_answers(store)
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("subtree", "rows", "subtrees", "dir_uris")]:
        cache.pop(key, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--change", choices=sorted(CHANGES), required=True)
    ap.add_argument("--mode", default="default", choices=sorted(bp.MODES))
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    made, nq = bp.clients(args.index, args.index / "queries.npy")
    client = made[args.mode]
    store = client.store
    toggle = CHANGES[args.change]
    n = min(args.queries, nq)
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    lists: dict[str, list[Any]] = {"old": [], "new": []}
    for i in range(20):  # warm the code paths
        cold(store)
        bp.find(client, i)
    for rep in range(args.repeats):
        for i in range(n):
            for side in ("old", "new") if (i + rep) % 2 == 0 else ("new", "old"):
                toggle(side == "new")
                cold(store)
                t = time.thread_time()
                got = client.find(
                    f"q{i}", target_uri=bp.bl.TARGET, limit=10, include_directories=False
                )
                cpu[side].append(time.thread_time() - t)
                if rep == 0:
                    lists[side].append([(h.uri, h.score) for h in got.resources])
    toggle(True)
    old, new = (statistics.median(cpu[s]) * 1e3 for s in ("old", "new"))
    diff = statistics.median([a - b for a, b in zip(cpu["old"], cpu["new"], strict=True)]) * 1e6
    same = sum(a == b for a, b in zip(lists["old"], lists["new"], strict=True))
    print(
        f"{args.change} ({args.mode}, {n} queries x {args.repeats}): old {old:.3f} ms, "
        f"new {new:.3f} ms, new/old {new / old:.3f}, paired median old-new {diff:.1f} us; "
        f"lists identical {same}/{n}"
    )


if __name__ == "__main__":
    main()
