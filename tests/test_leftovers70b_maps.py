"""Reads of mapped files that no store call's size check covered, cut short by another
program (helper leftovers70b, bench/README.md "(helper leftovers70b)").

Left open by leftovers69b: the graph worker reads the mapped vectors 1,024 rows at a time
(1.5 MiB at 384 dimensions: under the 4 MiB from which a read holds a read lease) between
store calls, so no call's ``check_mapped`` covers it; and the saved HNSW graph opens as
usearch's own memory map (``Index.restore(view=True)``), which nothing checked at all. Read
past the end of a file cut short, a map is SIGBUS, which kills the process. Now the
worker's reads check the size and hold a lease (``_Snap.vectors_held``), a search checks
the graph file's size first, and a cut graph is dropped and rebuilt from the vectors.

Each test fails on 4b7966c0 unless it says it is a control (the crashes run in a child: a
signal there is a return code, not a dead test run). ``truncate`` is coreutils', another
program, as a careless user's would be.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded.column_files import _LEASES

from treehop_test_doubles import child_process, clustered_tree

_BUILD = r"""
import subprocess, sys
from pathlib import Path
from treehop.errors import IndexCorruptError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop_test_doubles import clustered_tree

idx = Path(sys.argv[1])
nodes, v = clustered_tree(SHAPE)
s = EmbeddedStore(idx, ann_min_rows=GRAPH, lexical=False)
s.upsert(nodes, v)
s.save()
if WITH_GRAPH:
    assert s.wait_ann(timeout=300)
    s.save()  # (the graph file written)
s.close()
"""

_WORKER = (
    _BUILD.replace("WITH_GRAPH", "False")
    .replace("GRAPH", "None")
    .replace("SHAPE", "20, 150, 384")  # (4.6 MB: mapped)
    + r"""
r = EmbeddedStore(idx, ann_min_rows=0, lexical=False)  # no graph saved: none built yet
data = sorted(idx.glob("data-*"))[-1]
subprocess.run(["truncate", "-s", "0", str(data / "vectors.bin")], check=True)
for call in (lambda: r.wait_ann(timeout=300), lambda: r.search(v[5], Scope(), 3)):
    try:  # (wait_ann starts the worker, which reads the map; then a call of its own)
        print("no error", call(), flush=True)
    except IndexCorruptError as exc:
        print("typed", "cut short by another program" in str(exc), flush=True)
"""
)


_GRAPH = (
    _BUILD.replace("WITH_GRAPH", "True")
    .replace("GRAPH", "0")
    .replace("SHAPE", "10, 60, 32")  # (any graph is mapped)
    + r"""
r = EmbeddedStore(idx, ann_min_rows=0, lexical=False)
assert r._ann is not None and not r._ann.mutable  # (the saved graph, opened as a view)
(graph,) = idx.glob("ann-*.bin")
subprocess.run(["truncate", "-s", "4096", str(graph)], check=True)
if sys.argv[2] == "search":
    hits = r.search(v[5], Scope(), 3)
    print(hits[0].node.uri == nodes[5].uri, "cut short" in (r.ann_damaged or ""), flush=True)
else:  # a write: the worker copies the view before it extends it
    r.upsert(nodes[5:6], v[6:7])
    r.save()
print("rebuilt", r.wait_ann(timeout=300), r._ann is not None and r._ann.mutable, flush=True)
r.save()
r.close()
again = EmbeddedStore(idx, ann_min_rows=0, lexical=False)
assert again.load_ann() and again.ann_damaged is None, again.ann_damaged
print(again.search(v[7], Scope(), 1)[0].node.uri == nodes[7].uri, flush=True)
"""
)


def test_the_graph_worker_stops_at_vectors_cut_short_and_the_next_call_says_so(
    tmp_path: Path,
) -> None:
    """4b7966c0: rc -7 (SIGBUS) in the worker's first chunk read. ``wait_ann`` says why the
    graph was not built (without it, it started worker after worker until its timeout)."""
    got = child_process(_WORKER, str(tmp_path / "idx"), timeout=500)
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr[-2000:])
    assert got.stdout.split("\n") == ["typed True", "typed True", ""], got.stdout
    assert "Exception in thread" not in got.stderr, got.stderr[-2000:]


@pytest.mark.parametrize("then", ["search", "write"])
def test_a_graph_file_cut_short_is_dropped_and_rebuilt_not_sigbus(
    tmp_path: Path, then: str
) -> None:
    """4b7966c0: rc -7 (SIGBUS): a search reads usearch's map past the file's end; a write's
    worker copies the whole map. Now the search answers exactly (the graph dropped,
    ``ann_damaged`` says why), the worker rebuilds it from the vectors, and the next save
    writes a graph the next open loads."""
    got = child_process(_GRAPH, str(tmp_path / "idx"), then, timeout=500)
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr[-2000:])
    first = ["True True"] if then == "search" else []
    assert got.stdout.split("\n") == [*first, "rebuilt True True", "True", ""], got.stdout
    assert "Exception in thread" not in got.stderr, got.stderr[-2000:]


@pytest.mark.skipif(not _LEASES, reason="no read leases on this platform")
def test_the_workers_long_graph_reads_hold_a_read_lease(tmp_path: Path) -> None:
    """While the worker copies or sweeps a graph view, another program's ``truncate`` of the
    file is refused (coreutils opens it non-blocking: "Resource temporarily unavailable"),
    and goes through once the read is over. 4b7966c0: no such guard (``_graph_held``)."""
    from treehop.stores.embedded.ann_worker import _graph_held  # (here: absent on the base)

    path = tmp_path / "idx"
    nodes, v = clustered_tree(4, 20, 16)
    s = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    s.upsert(nodes, v)
    s.save()
    assert s.wait_ann(timeout=60)
    s.save()
    s.close()
    r = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    ann = r._ann
    assert ann is not None and ann.mapped is not None
    (graph,) = path.glob("ann-*.bin")
    with _graph_held(ann):
        held = subprocess.run(["truncate", "-s", "0", str(graph)], capture_output=True, text=True)
    assert held.returncode != 0 and "temporarily unavailable" in held.stderr, held
    assert graph.stat().st_size > 0
    subprocess.run(["truncate", "-s", "0", str(graph)], check=True)  # (let go: it goes through)
    r.close()
