"""Rows the HNSW graph cannot reach, with and without the sweep (``stores/_ann.py``).

    python bench/bench_ann_reach.py                  # 100k leaves, ~2 min on 2 cores
    python bench/bench_ann_reach.py --leaves 30000

Builds bench_store's synthetic clustered tree (384-d) in an in-memory store twice, once with
``AnnIndex.sweep`` disabled, lets the background worker build the graph (wall and process
CPU), then searches every row's own vector ``EF`` wide and prints how many rows the graph
cannot reach (an exact duplicate's row, an alias of an earlier node, is reached through that
node), how many of them the store records as orphans (scored exactly), and how many
are lost (unreachable and not recorded). usearch builds with several threads are not
deterministic, so the unreachable counts differ between builds; "lost" is the number that
matters (0: every row can be returned).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import datasets as ds

ds.ensure_treehop_importable()

import bench_latency as bl  # noqa: E402
from treehop.stores import _ann  # noqa: E402
from treehop.stores.embedded import DEFAULT_ANN_MIN_ROWS, EmbeddedStore  # noqa: E402


def unreachable(store: EmbeddedStore) -> set[int]:
    ann = store._ann
    assert ann is not None
    own = store._snap.vectors_of(ann.row)
    owner = ann.owner  # an exact duplicate is an alias: reached when its owner's node is
    missed: set[int] = set()
    for s in range(0, ann.count, 8192):
        labels = np.arange(s, min(s + 8192, ann.count))
        got = ann.index.search(own[s : s + 8192], _ann.EF, threads=2)
        keys = np.asarray(got.keys).reshape(labels.size, -1)
        nodes = owner[labels]
        missed |= set(labels[~(keys == nodes[:, None]).any(axis=1)].tolist())
    return missed


def run(leaves: int, sweep: bool) -> None:
    syn = bl.make_tree(bl.shape_for(leaves), 384, 0, [1.0, 0.8, 1.2])
    real = _ann.AnnIndex.needs_sweep
    if not sweep:
        _ann.AnnIndex.needs_sweep = lambda self: False  # type: ignore[method-assign]
    try:
        store = EmbeddedStore(None, ann_min_rows=None, lexical=False)
        for i in range(0, len(syn.nodes), 5000):
            store.upsert(syn.nodes[i : i + 5000], syn.vectors[i : i + 5000])
        store.ann_min_rows = min(DEFAULT_ANN_MIN_ROWS, len(syn.nodes) // 2)
        t0, c0 = time.perf_counter(), time.process_time()
        store.upsert(syn.nodes[:1], syn.vectors[:1])  # a write: the worker builds the graph
        store.wait_ann()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        _ann.AnnIndex.needs_sweep = real  # type: ignore[method-assign]
    missed = unreachable(store)
    assert store._ann is not None
    recorded = set(store._ann.orphans.tolist())
    print(
        f"{'with' if sweep else 'without':<8} sweep  rows {store._ann.count:>8}  "
        f"unreachable {len(missed):>5}  recorded {len(missed & recorded):>5}  "
        f"lost {len(missed - recorded):>4}  build {wall:.0f} s wall / {cpu:.0f} s CPU",
        flush=True,
    )
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--leaves", type=int, default=100_000)
    args = ap.parse_args()
    for sweep in (False, True):
        run(args.leaves, sweep)


if __name__ == "__main__":
    main()
