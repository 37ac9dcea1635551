"""The saved HNSW graph's file cut short by another program *while* searches read it, and
a column file cut during an open (helper leftovers71a, bench/README.md "(helper
leftovers71a)").

Left open by leftovers70b: a search checked the graph file's size before it read usearch's
view (``Index.restore(view=True)``), but the search itself (C++, the GIL released) read the
map unguarded: a cut made while it ran killed the process with SIGBUS. Now each graph query
of a view holds a read lease on the file for its length (another program's ``truncate``
waits, or fails at once when it opens non-blocking as coreutils' does), and a cut found
when the lease is taken drops the graph: the search answers exactly, as after a cut seen
between searches.

Each test fails on a62913ab (3 of 3 runs) unless it says it is a control (the crashes run
in a child: a signal there is a return code, not a dead test run). ``truncate`` is
coreutils', another program, as a careless user's would be.
"""

from __future__ import annotations

from pathlib import Path

from treehop_test_doubles import child_process

_SEARCHING = r"""
import subprocess, sys, threading, time
from pathlib import Path
import numpy as np
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop_test_doubles import clustered_tree

idx = Path(sys.argv[1])
nodes, v = clustered_tree(40, 150, 64)
s = EmbeddedStore(idx, ann_min_rows=0)
s.upsert(nodes, v)
s.save()
assert s.wait_ann(timeout=300)
s.save()  # (the graph file written)
s.close()

r = EmbeddedStore(idx, ann_min_rows=0)
assert r._ann is not None and r._ann.mapped is not None  # (the saved graph, a view)
(graph,) = idx.glob("ann-*.bin")
qs = np.ascontiguousarray(v[::10])
texts = [f"doc {i // 151} {i % 151}" for i in range(0, len(nodes), 10)]
stop = threading.Event()
errors = []
calls = [0] * 6

def loop(i, call):
    try:
        while not stop.is_set():
            call()
            calls[i] += 1
    except BaseException as exc:
        errors.append(repr(exc))

threads = [
    threading.Thread(target=loop, args=(0, lambda: r.search_batch(qs, Scope(), 10))),
    threading.Thread(target=loop, args=(1, lambda: r.search_columns_batch(
        qs, Scope(), 10, query_texts=texts, dense_weight=0.7))),
    threading.Thread(target=loop, args=(2, lambda: r.search(v[5], Scope(), 10))),
    threading.Thread(target=loop, args=(3, lambda: r.search_batch(
        qs, Scope(), 10, query_texts=texts, dense_weight=0.7))),
    # (two batches of every vector: most of their time is in usearch's search)
    threading.Thread(target=loop, args=(4, lambda: r.search_batch(v, Scope(), 10))),
    threading.Thread(target=loop, args=(5, lambda: r.search_batch(v, Scope(), 10))),
]
for t in threads:
    t.start()
time.sleep(1.0)
cut = False
end = time.monotonic() + 60
while not cut and time.monotonic() < end:  # (refused while a search holds its lease)
    cut = subprocess.run(["truncate", "-s", "0", str(graph)], capture_output=True).returncode == 0
seen = list(calls)
time.sleep(1.0)
stop.set()
for t in threads:
    t.join()
print("cut", cut, graph.stat().st_size, flush=True)
print("errors", errors, flush=True)
print("went on", all(b > a for a, b in zip(seen, calls)), flush=True)
print("dropped", "by another program" in (r.ann_damaged or ""), flush=True)
hits = r.search(v[5], Scope(), 3)
print("answers", hits[0].node.uri == nodes[5].uri, flush=True)
r.close()
"""


def test_a_graph_file_cut_while_searches_read_it_is_no_sigbus(tmp_path: Path) -> None:
    """Six threads search the graph view (one-query, batch dense, batch hybrid, columns
    batch) while another program cuts its file to 0 bytes. a62913ab: rc -7 (SIGBUS) inside
    usearch's search. Now the cut waits for the searches in flight (their leases; a search
    that finds the file open for writing, a cut under way, takes no lease and drops the
    graph), every thread goes on answering (exactly: the graph dropped, ``ann_damaged``
    says why), nothing raised. On the way: a batch's graph answers handed to a one-query
    step after another thread dropped that graph and the worker built a new one were read
    as the new graph's labels (``IndexError``)."""
    got = child_process(_SEARCHING, str(tmp_path / "idx"), timeout=500)
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr[-2000:])
    assert got.stdout.split("\n") == [
        "cut True 0",
        "errors []",
        "went on True",
        "dropped True",
        "answers True",
        "",
    ], got.stdout
    assert "Exception in thread" not in got.stderr, got.stderr[-2000:]
