"""Processes that ingest and exit: a clean exit code every time, and a graph kept for the next.

Why: a process that ran ``add_resource`` and then ``close()`` used to die at interpreter
shutdown with ``terminate called without an active exception`` (SIGABRT): the HNSW worker, a
daemon thread inside usearch (C++), was still running when the interpreter ended its threads
(the save inside ``close()`` started it again). And the graph it had built was lost, so every
later process searched exactly. These tests run real interpreters: the abort only happens at
a real shutdown.

Every process adds files to an index whose graph threshold is lowered (``ann_min_rows=40``,
``ann_catch_up=16``) so that each write starts the graph worker and it is busy when the
process closes or exits.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

REPO = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join([str(REPO / "retrieval"), str(REPO / "integrations")]),
    "OPENBLAS_NUM_THREADS": "1",
}
TARGET = "viking://resources/docs"

CHILD = r"""
import hashlib, sys
import numpy as np
from treehop import Treehop
from treehop.embedders.base import BaseEmbedder, normalize_rows
from treehop.stores.embedded import EmbeddedStore


class HashEmbedder(BaseEmbedder):
    name = "test-hash-32"
    dimension = 32

    def embed(self, texts):
        out = np.zeros((len(texts), 32))
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.md5(t.encode()).digest()[:8], "little")
            out[i] = np.random.default_rng(seed).standard_normal(32)
        return normalize_rows(out, len(texts), 32)


idx, src, mode = sys.argv[1:4]
store = EmbeddedStore(idx, ann_min_rows=40)
store.ann_catch_up = 16
opened = store._ann.count if store._ann is not None else 0
th = Treehop(store=store, embedder=HashEmbedder(), tagger=None)
used = False
if opened:
    # a find with the graph open: its global step asks the graph (kept in ``recent``)
    store._ann.recent.clear()
    th.find("alpha beta gamma", target_uri="viking://resources/docs", limit=5)
    used = bool(store._ann.recent)
th.add_resource(src, target_uri="viking://resources/docs/" + src.rsplit("/", 1)[-1])
print(opened, int(used), flush=True)
if mode == "close":
    th.close()
"""

WORDS = [f"w{i}" for i in range(400)] + ["alpha", "beta", "gamma"]


def _files(d: Path, n: int, seed: int) -> Path:
    rng = random.Random(seed)
    d.mkdir(parents=True)
    for i in range(n):
        paras = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(3)]
        (d / f"f{i:03d}.md").write_text("\n\n".join(paras))
    return d


def _run(idx: Path, src: Path, mode: str) -> tuple[int, str, str]:
    p = subprocess.run(
        [sys.executable, "-c", CHILD, str(idx), str(src), mode],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return p.returncode, p.stdout, p.stderr


def _lane(tmp: Path, lane: int, rounds: int) -> list[tuple[int, str, str]]:
    """``rounds`` processes one after another on one index, each adding a new directory."""
    idx = tmp / f"idx{lane}"
    out = []
    for r in range(rounds):
        src = _files(tmp / f"src{lane}-{r}", 60, seed=lane * 100 + r)
        out.append(_run(idx, src, "close"))
    return out


def test_twenty_ingesting_processes_exit_cleanly_and_each_next_one_uses_the_graph(
    tmp_path: Path,
) -> None:
    lanes, rounds = 4, 5
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda i: _lane(tmp_path, i, rounds), range(lanes)))
    for lane, runs in enumerate(results):
        for r, (rc, out, err) in enumerate(runs):
            assert rc == 0, f"lane {lane} round {r}: exit {rc}\n{err[-2000:]}"
            assert "terminate called" not in err
            opened, used = (int(x) for x in out.split())
            if r == 0:
                assert opened == 0
            else:  # the graph the previous process built was saved, opened and searched
                assert opened > 0 and used == 1, f"lane {lane} round {r}: {out!r}"
    # and the last one's graph is there for the next process too
    for lane in range(lanes):
        s = EmbeddedStore(tmp_path / f"idx{lane}", ann_min_rows=40)
        try:
            assert s._ann is not None and s._ann.count >= 200
            assert s._ann.upto > 0
        finally:
            s.close()


def test_a_process_that_exits_without_closing_exits_cleanly_and_saves_its_graph(
    tmp_path: Path,
) -> None:
    idx = tmp_path / "idx"
    rc, out, err = _run(idx, _files(tmp_path / "a", 60, seed=1), "close")
    assert rc == 0, err[-2000:]
    s = EmbeddedStore(idx, ann_min_rows=40)
    before = s._ann.count if s._ann is not None else 0
    s.close()
    # no close(): the at-exit hook stops the worker, joins it and saves the graph it grew
    rc, out, err = _run(idx, _files(tmp_path / "b", 120, seed=2), "exit")
    assert rc == 0, err[-2000:]
    assert "terminate called" not in err
    assert int(out.split()[0]) == before > 0
    s = EmbeddedStore(idx, ann_min_rows=40)
    try:
        ann = s._ann
        assert ann is not None and ann.count > before  # the exiting process's progress
        # a search of a stored row's own vector goes through the graph and finds the row
        row = int(ann.row[ann.count - 1])
        uri = s._snap.uri(row)
        v = s.get_vectors([uri])[0]
        ann.recent.clear()
        hits = s.search(np.asarray(v), Scope(), 1)
        assert hits[0].node.uri == uri and ann.recent
    finally:
        s.close()


WRITER_AFTER_MAIN = r"""
import sys, threading, time
import numpy as np
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore

store = EmbeddedStore(sys.argv[1], ann_min_rows=40, lexical=False)
store.ann_catch_up = 16
rng = np.random.default_rng(0)


def node(i):
    return Node(uri=f"viking://resources/d/f{i}.md", parent_uri="viking://resources/d",
                context_type=ContextType.RESOURCE, level=2, is_leaf=True, content=str(i))


def writes():
    # a non-daemon thread still writing while the interpreter shuts down: the exit hook
    # runs before such threads are joined, so these writes come after it
    for b in range(40):
        v = rng.standard_normal((64, 32)).astype(np.float32)
        store.upsert([node(b * 64 + i) for i in range(64)], v)
        time.sleep(0.01)
    store.save()
    print("saved", flush=True)


threading.Thread(target=writes).start()
"""


def test_writes_after_the_exit_hook_start_no_graph_thread_and_the_process_exits_cleanly(
    tmp_path: Path,
) -> None:
    p = subprocess.run(
        [sys.executable, "-c", WRITER_AFTER_MAIN, str(tmp_path / "idx")],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "terminate called" not in p.stderr and p.stdout.strip() == "saved"
    s = EmbeddedStore(tmp_path / "idx", ann_min_rows=40, lexical=False)
    try:
        assert len(s) == 40 * 64
    finally:
        s.close()
