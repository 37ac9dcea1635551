"""What one step of a ``find()`` costs inside the find: the step run on a helper thread (its
CPU is not the calling thread's) against the same step run inline, paired query by query in
one process (issue 35 round 15).

    OPENBLAS_NUM_THREADS=1 python bench/bench_find_offload.py --index /work/idx/fast3-100k \\
        --step score_family --queries 300 --repeats 2

Why beside ``bench_find_profile.py --timers`` and micro-benchmarks: a find's Python after the
graph call runs on cold CPU caches (round 14: the family search 16.6 us in a warm loop, 58 us
after a 16 MB sweep), so a warm loop undercounts a step and a timer around it counts only the
step's own time, not what its code and data evict for the steps after it. Here the "on" side
runs the step on a helper thread (joined at once: the find waits for it, and its answer is the
same object), so the calling thread's thread CPU loses the step and every cache miss it
would have caused there; the "off" side starts and joins a thread that does nothing, then runs
the step inline, so both sides pay the same thread hand-off. The paired median difference is
the step's in-find cost: the most that making the step free could save. ``--step noop`` (a
helper thread that runs nothing on both sides) reads the method's bias and noise (+-15 us at a
load of 2-3 on this machine, 300 queries x 2).

Every find starts cold for its folders (``bench_find_toggle.cold``), and a query's two finds
lie ``--queries`` finds apart (not back to back: the second of two finds of one query in a row
runs ~70-80 us faster, its folder still in the core's caches); both sides' result lists are
compared. An async step runs on a fresh event loop in the helper thread.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import datasets as ds  # noqa: E402

ds.ensure_treehop_importable()

import bench_find_profile as bp  # noqa: E402
from bench_find_toggle import cold  # noqa: E402

_HR = "treehop.hierarchical_retriever"
_SP = "treehop.stores.embedded.search_paths"
STEPS: dict[str, tuple[str, str | None, str]] = {
    "noop": (_HR, None, "_score_family"),
    "tree_context": (_HR, "HierarchicalRetriever", "_tree_context"),
    "context_parents": (_HR, "HierarchicalRetriever", "_context_parents"),
    "family": (_HR, "HierarchicalRetriever", "_family"),
    "family_search": (_SP, "_SearchPaths", "search_arrays"),
    "score_family": (_HR, None, "_score_family"),
    "sibling_order": (_HR, None, "sibling_order"),
    "context_columns": (_HR, None, "context_columns"),
    "resolve": (_HR, "HierarchicalRetriever", "_resolve"),
    "tag_hops": (_HR, None, "plan_tag_hops"),
    "conclude": (_HR, "HierarchicalRetriever", "_conclude"),
    "matched_all": (_HR, "HierarchicalRetriever", "_matched_all"),
}
"""``--step`` -> (module, class or ``None``, attribute): what is patched. A module-level name
is patched where the retriever reads it (``hierarchical_retriever.sibling_order``)."""

OFFLOAD = [False]


def _on_thread(call: Callable[[], Any]) -> Any:
    box: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            box.append(call())
        except BaseException as exc:  # (raised again on the calling thread)
            errors.append(exc)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    if errors:
        raise errors[0]
    return box[0] if box else None


def patched(fn: Callable[..., Any], noop: bool) -> Callable[..., Any]:
    """``fn`` run on a helper thread while :data:`OFFLOAD` is on, else a thread that does
    nothing and then ``fn`` inline (``noop``: never offloaded)."""
    if inspect.iscoroutinefunction(fn):

        async def step_async(*args: Any, **kwargs: Any) -> Any:
            if OFFLOAD[0] and not noop:
                return _on_thread(
                    lambda: asyncio.new_event_loop().run_until_complete(fn(*args, **kwargs))
                )
            _on_thread(lambda: None)
            return await fn(*args, **kwargs)

        return step_async

    def step(*args: Any, **kwargs: Any) -> Any:
        if OFFLOAD[0] and not noop:
            return _on_thread(lambda: fn(*args, **kwargs))
        _on_thread(lambda: None)
        return fn(*args, **kwargs)

    return step


def install(step: str) -> None:
    module, cls, attr = STEPS[step]
    owner: Any = importlib.import_module(module)
    if cls is not None:
        owner = getattr(owner, cls)
    setattr(owner, attr, patched(getattr(owner, attr), step == "noop"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--step", choices=sorted(STEPS), required=True)
    ap.add_argument("--mode", default="default", choices=sorted(bp.MODES))
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    made, nq = bp.clients(args.index, args.index / "queries.npy")
    client = made[args.mode]
    store = client.store
    install(args.step)
    n = min(args.queries, nq)
    repeats = args.repeats + args.repeats % 2
    cpu: dict[tuple[int, int], float] = {}  # (query, repeat) -> thread CPU of its find
    lists: dict[bool, dict[int, Any]] = {False: {}, True: {}}
    for i in range(n):  # one pass first: every query's data as warm as in the timed passes
        cold(store)
        bp.find(client, i)
    for rep in range(repeats):
        for i in range(n):
            side = (i + rep) % 2 == 1
            OFFLOAD[0] = side
            cold(store)
            t = time.thread_time()
            got = client.find(f"q{i}", target_uri=bp.bl.TARGET, limit=10, include_directories=False)
            cpu[i, rep] = time.thread_time() - t
            lists[side].setdefault(i, [(h.uri, h.score) for h in got.resources])
    OFFLOAD[0] = False
    # Each query runs once inline and once offloaded in each two repeats, n finds apart (its
    # folder long gone from the core's caches in between: a query asked twice in a row runs
    # ~70-80 us faster the second time, which a same-query pair would mix into the step's
    # cost); the pairs are by query.
    diffs = []
    for rep in range(0, repeats, 2):
        for i in range(n):
            a, b = cpu[i, rep], cpu[i, rep + 1]
            diffs.append(a - b if i % 2 == 0 else b - a)  # (inline - offloaded)
    inline = statistics.median(
        cpu[i, r] for i in range(n) for r in range(repeats) if (i + r) % 2 == 0
    )
    off = statistics.median(cpu[i, r] for i in range(n) for r in range(repeats) if (i + r) % 2 == 1)
    diff = statistics.median(diffs) * 1e6
    same = sum(lists[False][i] == lists[True][i] for i in range(n))
    print(
        f"{args.step} ({args.mode}, {n} queries x {repeats}): inline {inline * 1e3:.3f} ms, "
        f"offloaded {off * 1e3:.3f} ms, in-find cost (paired by query) {diff:.1f} us; "
        f"lists identical {same}/{n}"
    )


if __name__ == "__main__":
    main()
