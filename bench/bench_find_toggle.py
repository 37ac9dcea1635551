"""Paired, in one process: ``find()`` at 100k with one of this round's changes switched off
(``old``) and on (``new``), paired by query (issue 35 round 14; round 15: a query's two finds
are a whole pass apart, not back to back).

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
import importlib
import operator
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

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


def _flag(name: str) -> Callable[[bool], None]:
    """``--flag``: set ``module.NAME`` to the side's value."""
    module, attr = name.rsplit(".", 1)
    owner = importlib.import_module(module)
    return lambda on: setattr(owner, attr, on)


_REDUCED = {
    "treehop.hierarchical_retriever": ("_max", "_all"),
    "treehop.tree_scoring": ("_max",),
    "treehop.stores.base": ("_all",),
    "treehop.stores.embedded.layout": ("_max",),
    "treehop.stores.embedded.search_paths": ("_max", "_all"),
    "treehop.stores.embedded.snapshot": ("_max", "_min", "_sum", "_all"),
}
"""The modules whose ``_max``/``_min``/``_sum``/``_all`` are the ufunc reductions (round 16)."""
_UFUNC = {
    "_max": np.maximum.reduce,
    "_min": np.minimum.reduce,
    "_sum": np.add.reduce,
    "_all": np.logical_and.reduce,
}


def _toggle_reduce(on: bool) -> None:
    """off: each alias calls the array method (``a.max()``: numpy's ``_methods`` frame), as
    the code did before round 16, through ``operator.methodcaller`` (a C call; the one
    call with a keyword, ``_optional``'s ``initial=-1``, through a lambda); on: the ufunc
    reduction."""
    for name, attrs in _REDUCED.items():
        owner = importlib.import_module(name)
        for attr in attrs:
            old: Callable[..., Any] = operator.methodcaller(attr[1:])
            if name.endswith(".layout"):
                old = lambda a, **kw: a.max(**kw)  # noqa: E731
            setattr(owner, attr, _UFUNC[attr] if on else old)


CHANGES: dict[str, Callable[[bool], None]] = {
    "keep_rows": _toggle_keep_rows,
    "reduce": _toggle_reduce,
}


def cold(store: Any) -> None:
    """Forget the per-snapshot answers a repeated query or folder would reuse."""
    forget_answers(store)
    cache = store._snap.cache
    for key in [k for k in list(cache) if k[0] in ("subtree", "rows", "subtrees", "dir_uris")]:
        cache.pop(key, None)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--index", type=Path, required=True)
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--change", choices=sorted(CHANGES))
    what.add_argument(
        "--flag",
        metavar="MODULE.NAME",
        help="a module attribute set False (old) and True (new): a change written behind a "
        "flag while it is measured, e.g. treehop.tree_scoring.ONE_PLAIN",
    )
    ap.add_argument("--mode", default="default", choices=sorted(bp.MODES))
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    made, nq = bp.clients(args.index, args.index / "queries.npy")
    client = made[args.mode]
    store = client.store
    toggle = CHANGES[args.change] if args.change else _flag(args.flag)
    n = min(args.queries, nq)
    repeats = args.repeats + args.repeats % 2
    cpu: dict[tuple[int, int], float] = {}  # (query, pass) -> thread CPU of its find
    lists: dict[str, dict[int, Any]] = {"old": {}, "new": {}}
    for i in range(n):  # one pass first: every query's data as warm as in the timed passes
        cold(store)
        bp.find(client, i)
    for rep in range(repeats):
        for i in range(n):
            side = "new" if (i + rep) % 2 else "old"
            toggle(side == "new")
            cold(store)
            t = time.thread_time()
            got = client.find(f"q{i}", target_uri=bp.bl.TARGET, limit=10, include_directories=False)
            cpu[i, rep] = time.thread_time() - t
            lists[side].setdefault(i, [(h.uri, h.score) for h in got.resources])
    toggle(True)
    # A query's old and new finds are n finds apart, in two passes (old first for half the
    # queries, new first for the other half): a query asked twice in a row runs ~70-80 us
    # faster the second time (its folder still in the core's caches), which made same-query
    # back-to-back pairs bimodal (+-75 us by which side ran first; round 15).
    diffs = [
        (cpu[i, rep] - cpu[i, rep + 1]) * (1 if i % 2 == 0 else -1)
        for rep in range(0, repeats, 2)
        for i in range(n)
    ]
    side_of = {(i, r): "new" if (i + r) % 2 else "old" for i in range(n) for r in range(repeats)}
    old, new = (
        statistics.median(t for k, t in cpu.items() if side_of[k] == s) * 1e3
        for s in ("old", "new")
    )
    diff = statistics.median(diffs) * 1e6
    same = sum(lists["old"][i] == lists["new"][i] for i in range(n))
    print(
        f"{args.change or args.flag} ({args.mode}, {n} queries x {repeats}): old {old:.3f} ms, "
        f"new {new:.3f} ms, new/old {new / old:.3f}, paired median old-new {diff:.1f} us; "
        f"lists identical {same}/{n}"
    )


if __name__ == "__main__":
    main()
