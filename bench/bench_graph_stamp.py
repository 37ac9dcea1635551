"""What the graph file's in-place-rewrite check costs (helper leftovers72a): the open of a
saved index with its graph (``load_ann`` included), one query through the graph view, and
the query guard alone (lease, size check, and -- with the check -- one ``stat``).

    OPENBLAS_NUM_THREADS=1 python bench/bench_graph_stamp.py --index /tmp/g20k [--rows 20000]
        [--opens 7] [--queries 2000] [--verify auto]

Builds ``--index`` once (``--rows`` 384-d rows in 20-leaf directories, the graph built to the
end and saved) when it holds no index, so that a second run -- with another ``PYTHONPATH``,
the code before the change, say -- times the same files. Prints the median and min of
``--opens`` opens (each a new store over the warm page cache, ``load_ann()`` waited for), the
median per-query wall time of ``--queries`` one-query searches of the view (rows of the
index as queries, so each first hit is known), and the median per-call time of the guard's
enter / exit over the same count. Wall times on a shared box: compare runs made one after
the other, alternating.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import clustered_tree, saved_graph_index


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--index", required=True)
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--opens", type=int, default=7)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--verify", default="auto")
    a = ap.parse_args()
    verify: bool | str = {"true": True, "false": False}.get(a.verify.lower(), a.verify)
    idx = Path(a.index)
    if not (idx / "CURRENT").exists():
        t0 = time.perf_counter()
        nodes, v = saved_graph_index(idx, max(1, a.rows // 20), 20, 384)
        print(f"built {len(nodes)} rows in {time.perf_counter() - t0:.1f} s")
    else:
        nodes, v = clustered_tree(max(1, a.rows // 20), 20, 384)  # (the same rows: seeded)
    graph = next(idx.glob("ann-*.bin"))
    print(f"graph file {graph.stat().st_size / 2**20:.1f} MiB")
    opens = []
    for _ in range(a.opens):
        t0 = time.perf_counter()
        r = EmbeddedStore(idx, ann_min_rows=0, lexical=False, verify=verify)  # type: ignore[arg-type]
        assert r.load_ann()
        opens.append(time.perf_counter() - t0)
        r.close()
    print(
        f"open+load_ann: median {statistics.median(opens) * 1e3:.1f} ms, "
        f"min {min(opens) * 1e3:.1f} ms"
    )
    r = EmbeddedStore(idx, ann_min_rows=0, lexical=False, verify=verify)  # type: ignore[arg-type]
    assert r.load_ann()
    ann = r._ann
    assert ann is not None and ann.mapped is not None and ann.guard is not None
    step = max(1, len(nodes) // a.queries)
    times, right = [], 0
    for i in range(0, len(nodes), step)[: a.queries]:
        t0 = time.perf_counter()
        got = r.search(v[i], Scope(), 3)
        times.append(time.perf_counter() - t0)
        right += bool(got) and got[0].node.uri == nodes[i].uri
    assert r.ann_damaged is None
    print(
        f"search (view): median {statistics.median(times) * 1e6:.0f} us over {len(times)}, "
        f"{right} first hits right"
    )
    guard = ann.guard
    g = []
    for _ in range(a.queries):
        t0 = time.perf_counter()
        with guard(ann):
            pass
        g.append(time.perf_counter() - t0)
    print(f"guard enter/exit: median {statistics.median(g) * 1e6:.1f} us")
    r.close()


if __name__ == "__main__":
    main()
