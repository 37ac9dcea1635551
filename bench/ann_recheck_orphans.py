"""Re-check a saved graph's orphans (``stores/_ann.py``: ``AnnIndex._unreachable``) with the
current rule and save them: what the next sweep of the graph would record, without waiting
for the growth that starts it.

    python bench/ann_recheck_orphans.py /tmp/ann-1m/idx-1000000

An index whose last sweep covered its labels (bench_store's 1M build ends with one; labels
added after it were checked when added, by the same rule) holds the labels the previous rule
(``EF`` wide only) missed; the current rule searches those again as wide as a query
searches, so re-checking them gives what a sweep under the current rule records. It
rewrites the index's orphan array only (a new generation; the graph file stays). Copy the
index first to keep the old one.
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

from treehop.stores.embedded import EmbeddedStore  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("index", type=Path)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    store = EmbeddedStore(args.index)
    store.load_ann()
    store.wait_verified()
    store.wait_ann()
    ann = store._ann
    assert ann is not None, "the index has no graph"
    # (labels past ``swept`` were checked when added, by the same rule as the sweep)
    print(f"labels {ann.count}, swept {ann.swept}")
    labels = ann.orphans
    rows = ann.row[labels]
    kept = rows >= 0
    t0 = time.perf_counter()
    vecs = np.ascontiguousarray(store._snap.vectors_of(rows[kept]), dtype=np.float32)
    found = ann._unreachable(labels[kept].astype(np.uint64), vecs, args.threads)
    new = np.sort(np.concatenate([found, labels[~kept]]))
    print(f"orphans {labels.size} -> {new.size} ({time.perf_counter() - t0:.1f} s)")
    ann.orphans = new
    ann.recent.clear()
    store._begin_write()  # a generation with the same rows: the manifest's orphan array
    store._dirty = True
    store.save()
    store.close()


if __name__ == "__main__":
    main()
