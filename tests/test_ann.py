"""Approximate global search (the usearch graph of :mod:`treehop.stores._ann`) on a large store:
close to exact, scoped searches exact, the graph kept out of the write path (extended by a
background worker; rows it does not cover yet searched exactly), persisted and reopened
memory-mapped, a damaged graph rebuilt, never served."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from treehop.models import Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import clustered_tree, resource_leaf

R = "viking://resources"


def build(ann_min_rows: int | None, n_dirs: int = 40, per_dir: int = 50) -> EmbeddedStore:
    store = EmbeddedStore(ann_min_rows=ann_min_rows, lexical=False)
    store.upsert(*clustered_tree(n_dirs, per_dir))
    if ann_min_rows is not None:
        assert store.wait_ann(timeout=60)
    return store


def test_ann_global_search_matches_exact() -> None:
    exact, approx = build(None), build(0)
    rng = np.random.default_rng(1)
    recall = []
    for _ in range(20):
        q = rng.standard_normal(32).astype(np.float32)
        q /= np.linalg.norm(q)
        a = [h.node.uri for h in exact.search(q, Scope(subtrees=(R,)), 10)]
        b = [h.node.uri for h in approx.search(q, Scope(subtrees=(R,)), 10)]
        recall.append(len(set(a) & set(b)) / 10)
        # scores of what the ANN returns are exact cosines, in order
        hits = approx.search(q, Scope(), 10)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        for h in hits:
            assert h.score == pytest.approx(
                float(approx.get_vectors([h.node.uri])[0] @ q), abs=1e-5
            )
    assert approx._ann is not None  # the ANN path really ran
    assert np.mean(recall) >= 0.95


def test_ann_respects_filters_and_leaves_scoped_search_exact() -> None:
    approx = build(0)
    q = np.zeros(32, np.float32)
    q[0] = 1.0
    leaves = approx.search(q, Scope(subtrees=(R,), leaves_only=True), 10)
    assert len(leaves) == 10 and all(h.node.is_leaf for h in leaves)
    dirs = approx.search(q, Scope(non_leaves_only=True), 5)
    assert len(dirs) == 5 and not any(h.node.is_leaf for h in dirs)
    exact = build(None)
    kids_a = [h.node.uri for h in approx.search(q, Scope(parent_uri=f"{R}/d3"), 7)]
    kids_e = [h.node.uri for h in exact.search(q, Scope(parent_uri=f"{R}/d3"), 7)]
    assert kids_a == kids_e


def leaf(uri: str) -> Node:
    return resource_leaf(uri, uri)


def unit(n: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((n, 32)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_ann_is_extended_incrementally_not_rebuilt() -> None:
    approx = build(0)
    q = np.zeros(32, np.float32)
    q[5] = 1.0
    approx.search(q, Scope(), 5)
    first = approx._ann
    assert first is not None and first.count == len(approx) and first.mutable
    approx.upsert([leaf(f"{R}/d0/new.md")], q[None, :])
    # a fresh row is found at once (searched exactly beside the graph) ...
    assert approx.search(q, Scope(), 1)[0].node.uri == f"{R}/d0/new.md"
    assert approx._ann is first and first.count == 2040
    # ... and a replaced row's old version is never returned
    approx.upsert([leaf(f"{R}/d0/new.md")], -q[None, :])
    assert all(h.node.uri != f"{R}/d0/new.md" for h in approx.search(q, Scope(), 20))
    # enough new rows are added to the same graph by the worker, not a rebuilt one
    many = unit(2100, 2)
    approx.upsert([leaf(f"{R}/d1/m{i}.md") for i in range(2100)], many)
    assert approx.wait_ann(timeout=60)
    assert approx._ann is first and first.count > 4000
    hit = approx.search(many[7], Scope(), 1)[0]
    assert hit.node.uri == f"{R}/d1/m7.md"


def test_writes_never_wait_for_the_graph_and_uncovered_rows_are_searched_exactly() -> None:
    approx = build(0)
    ann = approx._ann
    assert ann is not None and ann.upto == len(approx)
    covered = [f"{R}/d{d}/f{i}.md" for d in range(3) for i in range(5)]
    cvecs = approx.get_vectors(covered)
    # a reader holds the graph: the worker cannot add a single row until it lets go
    ann.lock.acquire_read()
    try:
        many = unit(3000, 3)
        approx.upsert([leaf(f"{R}/d9/n{i}.md") for i in range(3000)], many)
        assert approx.delete(covered) == len(covered)
        # the writes returned while the graph could not grow: they did not wait for it
        assert ann.count == 2040 and ann.upto == 2040
        for i in (0, 1234, 2999):
            assert approx.search(many[i], Scope(), 1)[0].node.uri == f"{R}/d9/n{i}.md"
        batch = approx.search_batch(many[:8], Scope(), 3)
        assert [b[0].node.uri for b in batch] == [f"{R}/d9/n{i}.md" for i in range(8)]
        for v in cvecs:  # deleted rows are still in the graph, never in an answer
            got = {h.node.uri for h in approx.search(v, Scope(), 20)}
            assert not got & set(covered)
    finally:
        ann.lock.release_read()
    assert approx.wait_ann(timeout=60)
    assert approx._ann is ann and ann.count == 2040 + 3000 and ann.upto == approx._snap.n
    for i in (5, 2500):
        assert approx.search(many[i], Scope(), 1)[0].node.uri == f"{R}/d9/n{i}.md"
    for v in cvecs:
        assert not {h.node.uri for h in approx.search(v, Scope(), 20)} & set(covered)


def saved(path: object) -> tuple[EmbeddedStore, EmbeddedStore]:
    mem = build(0)
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)  # type: ignore[arg-type]
    nodes = list(mem.iter_nodes())
    store.upsert(nodes, mem.get_vectors([n.uri for n in nodes]))
    assert store.wait_ann(timeout=60)
    store.save()
    return mem, store


def test_ann_is_saved_and_reopened_memory_mapped_and_extended(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "idx"
    mem, store = saved(path)
    assert len(list(path.glob("ann-*.bin"))) == 1
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    ann = again._ann  # opened with the index, memory-mapped: no rebuild, no load
    assert ann is not None and not ann.mutable and ann.count == len(mem)
    q = mem.get_vectors([f"{R}/d3/f4.md"])[0]
    assert again.search(q, Scope(), 1)[0].node.uri == f"{R}/d3/f4.md"
    # new rows: the worker continues on an in-memory copy of the mapped graph
    many = unit(2500, 4)
    again.upsert([leaf(f"{R}/d8/n{i}.md") for i in range(2500)], many)
    assert again.search(many[3], Scope(), 1)[0].node.uri == f"{R}/d8/n3.md"
    assert again.wait_ann(timeout=60)
    grown = again._ann
    assert grown is not None and grown.mutable and grown.count == len(mem) + 2500
    again.save()
    assert len(list(path.glob("ann-*.bin"))) == 2  # the new file and the previous one
    third = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert third._ann is not None and third._ann.count == len(mem) + 2500
    assert third.search(many[2400], Scope(), 1)[0].node.uri == f"{R}/d8/n2400.md"
    # a save with no new rows persists a graph the worker grew since the last save
    third.close()
    again.close()
    store.close()


def test_a_graph_grown_after_the_last_save_is_saved_by_the_next_save(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "idx"
    s = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    s.upsert([leaf(f"{R}/a/f{i}.md") for i in range(3000)], unit(3000, 6))
    s.save()  # rows committed; the graph may still be building
    assert s.wait_ann(timeout=60)
    s.save()  # no new rows: a generation that persists the graph
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again._ann is not None and again._ann.count == 3000


def test_a_damaged_graph_is_never_served_and_is_rebuilt(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "idx"
    mem, store = saved(path)
    store.close()
    f = next(path.glob("ann-*.bin"))
    raw = bytearray(f.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    f.write_bytes(bytes(raw))
    exact = build(None)
    s = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert s.ann_damaged is not None and "checksum" in s.ann_damaged
    rng = np.random.default_rng(7)
    for _ in range(5):  # exact answers while it is rebuilt (uncovered rows are searched exactly)
        q = rng.standard_normal(32).astype(np.float32)
        want = [h.node.uri for h in exact.search(q, Scope(), 5)]
        assert [h.node.uri for h in s.search(q, Scope(), 5)] == want
    assert s.wait_ann(timeout=60)
    assert s._ann is not None and s._ann.count == len(mem)
    s.save()  # the rebuilt graph replaces the damaged file
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again.ann_damaged is None and again._ann is not None
    assert again._ann.count == len(mem)
    # a file that is not a usearch index at all (checksums trusted): rebuilt too, not served
    s.close()
    f = path / again._committed["ann"]["file"]  # type: ignore[index]
    again.close()
    f.write_bytes(b"\0" * f.stat().st_size)
    trusting = EmbeddedStore(path, ann_min_rows=0, lexical=False, verify=False)
    assert trusting.ann_damaged is not None and trusting._ann is None
    q = mem.get_vectors([f"{R}/d5/f6.md"])[0]
    assert trusting.search(q, Scope(), 1)[0].node.uri == f"{R}/d5/f6.md"


ANN_WRITER = """
import sys, numpy as np
from treehop.models import Node, ContextType
from treehop.stores import _ann
from treehop.stores.embedded import EmbeddedStore
_ann.CATCH_UP_ROWS = 64  # the graph grows (and is rewritten) at every save
_ann.CHUNK = 64
path, tag = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(sum(map(ord, tag)))
s = EmbeddedStore(path, lock_timeout=60, ann_min_rows=0, lexical=False)
for i in range(1000):
    uris = [f"viking://resources/{tag}/r{i}-{j}.md" for j in range(150)]
    nodes = [Node(uri=u, parent_uri=f"viking://resources/{tag}", context_type=ContextType.RESOURCE,
                  level=2, is_leaf=True, content=u) for u in uris]
    v = rng.standard_normal((150, 16)).astype(np.float32)
    s.upsert(nodes, v / np.linalg.norm(v, axis=1, keepdims=True))
    s.wait_ann(timeout=60)
    s.save()
    print(i, flush=True)
"""


def test_sigkill_during_graph_saves_leaves_a_consistent_index(tmp_path: object) -> None:
    import os
    import random
    import subprocess
    import sys
    import time
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{repo / 'retrieval'}{os.pathsep}{repo / 'integrations'}"}
    path = Path(str(tmp_path)) / "idx"
    rng = random.Random(5)
    committed: list[str] = []
    for round_ in range(3):
        p = subprocess.Popen(
            [sys.executable, "-c", ANN_WRITER, str(path), f"k{round_}"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert p.stdout is not None
        assert p.stdout.readline().strip() == "0"  # one save with a graph has committed
        time.sleep(rng.uniform(0.0, 0.5))
        p.kill()
        rest = p.stdout.read()
        p.wait()
        done = [0] + [int(x) for x in rest.split()]
        committed += [f"{R}/k{round_}/r{i}-{j}.md" for i in done for j in (0, 77, 149)]
        s = EmbeddedStore(path, ann_min_rows=0, lexical=False)
        assert s.ann_damaged is None and s._ann is not None and s._ann.count > 0
        assert not [n for n in os.listdir(path) if n.startswith(".tmp-")]
        assert s.wait_ann(timeout=60)
        # every graph label still names the row it was built from (a graph saved by a killed
        # writer must never point a label at another row): the graph's own (int8) copy of
        # each vector matches the stored row's vector
        ann = s._ann
        assert ann is not None and ann.count == s._snap.n
        graph = np.asarray(ann.index.get(np.arange(ann.count, dtype=np.uint64), dtype=np.float32))
        stored = s._snap.vectors_of(ann.row)
        cos = (graph * stored).sum(1) / np.linalg.norm(graph, axis=1)
        assert float(cos.min()) > 0.98
        # and every committed row is served: each finds itself first
        for uri in committed:
            v = s.get_vectors([uri])[0]
            assert s.search(v, Scope(), 1)[0].node.uri == uri
        s.close()


def _hits_of(hits: list[Any]) -> list[tuple[Any, ...]]:
    return [(h.node.uri, h.score, h.vector_score, h.lexical_score, h.matches) for h in hits]


def test_batch_on_the_graph_equals_one_query_at_a_time() -> None:
    approx = build(0)
    approx.upsert([leaf(f"{R}/d2/t{i}.md") for i in range(300)], unit(300, 8))  # a tail
    approx.delete([f"{R}/d{d}/f{i}.md" for d in range(4) for i in range(10)])
    qs = unit(16, 9)
    for scope in (Scope(), Scope(subtrees=(R,), leaves_only=True)):
        batch = approx.search_batch(qs, scope, 10)
        for q, got in zip(qs, batch, strict=True):
            one = approx.search(q, scope, 10)
            assert _hits_of(got) == _hits_of(one)  # rows and scores, to the bit
            assert all(h.matches for h in got)


def test_batch_with_many_orphans_and_a_tail_equals_one_query_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The batch's own ways to the one-query answer: the orphans found through one search of
    their 8-bit codes for the whole batch, or scored all when there are no codes; the tail
    the graph does not cover yet; removed rows; the queries it hands to the one-query step
    (a zero vector, a limit the graph's answer cannot fill)."""
    import time

    from treehop.stores import _ann

    monkeypatch.setattr(_ann, "ORPHAN_CODES_MIN", 1)
    store = build(0)
    ann = store._ann
    assert ann is not None
    rng = np.random.default_rng(12)
    # a third of the labels scored exactly beside the graph, as rows it cannot reach are
    ann.orphans = np.sort(rng.choice(ann.count, 700, replace=False)).astype(np.int64)
    uris = [n.uri for n in store.iter_nodes()]
    vecs = store.get_vectors(uris)
    near = vecs[rng.choice(len(uris), 20, replace=False)]
    qs = np.concatenate([near + 0.2 * unit(20, 13), unit(8, 14), np.zeros((1, 32), np.float32)])
    qs = qs.astype(np.float32)
    store.search(qs[0], Scope(), 10)  # the first gather starts the codes' build
    deadline = time.monotonic() + 30
    while ann.orphan_codes() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ann.orphan_codes() is not None
    many = []
    real = _ann.OrphanCodes.reaching_many

    def spy(self: Any, *a: Any, **kw: Any) -> Any:
        many.append(1)
        return real(self, *a, **kw)

    monkeypatch.setattr(_ann.OrphanCodes, "reaching_many", spy)
    ann.lock.acquire_read()  # the worker cannot cover the rows written below: they stay a tail
    try:
        tail = unit(300, 15)
        store.upsert([leaf(f"{R}/d5/t{i}.md") for i in range(300)], tail)
        store.delete([u for u in uris[::9] if u.endswith(".md")])
        # a folder removed whole: near its rows, most of the graph's answer is removed rows
        gone = [i for i, u in enumerate(uris) if u.startswith(f"{R}/d7/")]
        store.delete([uris[i] for i in gone])
        assert ann.upto < store._snap.n
        qs = np.concatenate([qs, tail[:3] + 0.1 * unit(3, 16), vecs[gone[:3]]])
        qs = qs.astype(np.float32)
        for codes, packed in ((True, True), (True, False), (False, False)):
            with monkeypatch.context() as m:
                if not codes:
                    m.setattr(_ann.AnnIndex, "orphan_codes", lambda self: None)
                if not packed:
                    m.setattr(_ann.OrphanCodes, "bounds_many", lambda self, *a: None)
                many.clear()
                for scope in (Scope(), Scope(subtrees=(R,), leaves_only=True)):
                    for limit in (1, 10, 40, 1000):
                        batch = store.search_batch(qs, scope, limit)
                        for q, got in zip(qs, batch, strict=True):
                            ann.recent.clear()
                            one = store.search(q, scope, limit)
                            assert _hits_of(got) == _hits_of(one)
                assert bool(many) == (codes and not packed)
    finally:
        ann.lock.release_read()


def test_siblings_of_the_best_candidates_join_them() -> None:
    from treehop.stores.embedded import search_paths as emb_search

    store = build(None, n_dirs=6, per_dir=20)
    big = [leaf(f"{R}/big/f{i}.md") for i in range(emb_search._SIBLING_MAX + 1)]
    store.upsert(big, unit(len(big), 10))
    store.delete([f"{R}/d1/f3.md"])
    s = store._snap
    rows = s.lookup([f"{R}/d1/f0.md", f"{R}/d1/f1.md", f"{R}/big/f0.md"])
    full = s.alive[: s.n].copy()
    full[s.lookup([f"{R}/d1/f5.md"])] = False  # outside the scope
    dense = np.array([0.9, 0.8, 0.7], np.float32)
    got = set(s.uris_of(emb_search._sibling_rows(s, rows, dense, full)))
    want = {f"{R}/d1/f{i}.md" for i in range(20)} - {f"{R}/d1/f{i}.md" for i in (0, 1, 3, 5)}
    assert got == want  # not the candidates, the deleted or ineligible rows, nor a huge folder


def test_compaction_renumbers_the_graph_labels(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "idx"
    mem, store = saved(path)
    gone = [f"{R}/d{d}/f{i}.md" for d in range(40) for i in range(28)]  # 1,120 of 2,040 rows
    store.delete(gone)
    store.save()  # dead rows outnumber live ones: the save compacts (renumbers every row)
    assert store._snap.n == len(mem) - len(gone)
    keep = [f"{R}/d{d}/f{i}.md" for d in (0, 17, 39) for i in (28, 40, 49)]
    for s in (store, EmbeddedStore(path, ann_min_rows=0, lexical=False)):
        assert s._ann is not None and s._ann.count == len(mem)  # the same graph, not rebuilt
        for uri, v in zip(keep, mem.get_vectors(keep), strict=True):
            hits = s.search(v, Scope(), 10)
            assert hits[0].node.uri == uri
            assert not {h.node.uri for h in hits} & set(gone)


@pytest.mark.parametrize("seed", range(20))
def test_unique_ints_equals_numpy_unique(seed: int) -> None:
    from treehop.stores.embedded.layout import _unique_ints

    rng = np.random.default_rng(seed)
    a = rng.integers(-5, 40, size=int(rng.integers(0, 60)), dtype=np.int64)
    np.testing.assert_array_equal(_unique_ints(a), np.unique(a))


def test_wait_ann_adds_a_tail_shorter_than_the_catch_up_threshold() -> None:
    from treehop.stores import _ann

    store = build(0)  # built and caught up
    tail = _ann.CATCH_UP_ROWS // 2  # writes leave this to the exact scan, no worker starts
    store.upsert([leaf(f"{R}/d3/tail{i}.md") for i in range(tail)], unit(tail, 11))
    ann = store._ann
    assert ann is not None and ann.upto < store._snap.n
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None and ann.upto == store._snap.n


def clustered_store(seed: int, n: int = 3000) -> EmbeddedStore:
    """16-d rows in tight clusters."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, 16))
    v = centres[rng.integers(0, 30, n)] + 0.15 * rng.standard_normal((n, 16))
    store = EmbeddedStore(ann_min_rows=0, lexical=False)
    store.upsert(
        [leaf(f"{R}/c{seed}/f{i}.md") for i in range(n)],
        (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32),
    )
    assert store.wait_ann(timeout=60)
    return store


def test_rows_the_graph_cannot_reach_are_found_by_the_exact_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from treehop.stores import _ann

    # 8 links leave dozens of the 3,000 rows unreachable; one chunk: nothing is added after
    # the check, so what it recorded is all the graph misses
    monkeypatch.setattr(_ann, "CONNECTIVITY", 8)
    monkeypatch.setattr(_ann, "CHUNK", 4096)
    for seed in range(2):
        store = clustered_store(seed)
        ann = store._ann
        assert ann is not None and ann.count == 3000
        missed = _missed(store)
        assert missed  # the graph did lose rows
        assert sorted(ann.orphans.tolist()) == sorted(missed)
        uris = [n.uri for n in store.iter_nodes()]
        vecs = store.get_vectors(uris)
        for uri, v in zip(uris, vecs, strict=True):
            assert store.search(v, Scope(), 1)[0].node.uri == uri
        got = store.search_batch(vecs, Scope(), 1)
        assert [hits[0].node.uri for hits in got] == uris


def test_an_orphan_row_is_served_even_when_the_graph_has_lost_it(tmp_path: object) -> None:
    from pathlib import Path

    store = build(0)
    ann = store._ann
    assert ann is not None
    uri = f"{R}/d7"  # a folder: the leaves' sibling step does not reach it
    row = int(store._snap.lookup([uri])[0])
    label = int(np.flatnonzero(ann.row == row)[0])
    v = store.get_vectors([uri])[0]
    ann.index.remove(label)  # the graph can no longer return it
    # nor any other folder: a folder among the graph's candidates would bring its siblings,
    # d7 among them, into the exact rescoring (the sibling step), whatever the graph holds
    folders = store._snap.lookup([f"{R}/d{d}" for d in range(40)])
    for r in folders:
        lb = int(np.flatnonzero(ann.row == int(r))[0])
        if lb != label:
            ann.index.remove(lb)
    ann.orphans = np.array([], np.int64)  # (a threaded build may have found it unreachable)
    ann.recent.clear()
    assert store.search(v, Scope(), 1)[0].node.uri != uri
    ann.orphans = np.array([label], np.int64)
    ann.recent.clear()
    assert store.search(v, Scope(), 1)[0].node.uri == uri
    assert store.search_batch(np.stack([v, v]), Scope(), 1)[1][0].node.uri == uri
    # a compaction renumbers the rows: the orphan label follows its row
    path = Path(str(tmp_path)) / "compacted"
    _, disk = saved(path)
    ann = disk._ann
    assert ann is not None
    label = int(np.flatnonzero(ann.row == int(disk._snap.lookup([uri])[0]))[0])
    ann.index.remove(label)
    ann.orphans = np.array([label], np.int64)
    ann.recent.clear()
    assert disk.search(v, Scope(), 1)[0].node.uri == uri
    disk.delete([f"{R}/d{d}/f{i}.md" for d in range(40) for i in range(30)])
    disk.save()  # dead rows outnumber live ones: compacted
    assert int(disk._snap.lookup([uri])[0]) != row and disk._snap.n < 2040
    assert disk.search(v, Scope(), 1)[0].node.uri == uri
    assert disk.search_batch(np.stack([v]), Scope(), 1)[0][0].node.uri == uri
    disk.close()
    # the orphan labels are saved with the graph and read back with it
    path = Path(str(tmp_path)) / "idx"
    _, disk = saved(path)
    assert disk._ann is not None
    disk._ann.orphans = np.array([3, 17], np.int64)
    disk._ann_file = None  # rewrite the graph file at the next save
    disk.save()
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again._ann is not None and again._ann.orphans.tolist() == [3, 17]
    again.close()
    disk.close()


def test_orphan_labels_of_an_older_or_damaged_index_file(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from treehop.errors import IndexCorruptError
    from treehop.stores.embedded import writes as emb_writes

    real = emb_writes._lookup_arrays
    # an index file written before orphans were recorded has no such array: none known
    monkeypatch.setattr(
        emb_writes,
        "_lookup_arrays",
        lambda s, a: {k: v for k, v in real(s, a).items() if k != "ann_orphan"},
    )
    old = Path(str(tmp_path)) / "old"
    mem, store = saved(old)
    store.close()
    again = EmbeddedStore(old, ann_min_rows=0, lexical=False)
    assert again._ann is not None and again._ann.orphans.size == 0
    v = mem.get_vectors([f"{R}/d2"])[0]
    assert again.search(v, Scope(), 1)[0].node.uri == f"{R}/d2"
    again.close()
    # a label past the graph's end is a damaged index, not an IndexError later
    monkeypatch.setattr(emb_writes, "_lookup_arrays", real)
    bad = Path(str(tmp_path)) / "bad"
    _, store = saved(bad)
    assert store._ann is not None
    store._ann.orphans = np.array([3], np.int64)
    store._ann_file = None
    store.save()
    store.close()
    meta = store._committed["index"]  # type: ignore[index]
    off, count = meta["arrays"]["ann_orphan"]
    assert count == 1
    f = bad / meta["file"]
    raw = bytearray(f.read_bytes())
    raw[off : off + 8] = np.array([10**6], np.int64).tobytes()
    f.write_bytes(bytes(raw))
    with pytest.raises(IndexCorruptError, match="orphan"):
        EmbeddedStore(bad, ann_min_rows=0, lexical=False, verify=False)
    with pytest.raises(IndexCorruptError):  # and its checksum says so when verified
        EmbeddedStore(bad, ann_min_rows=0, lexical=False)


def test_a_save_during_a_chunks_check_writes_a_consistent_graph(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time
    from pathlib import Path

    from treehop.stores import _ann

    monkeypatch.setattr(_ann, "CHUNK", 64)
    path = Path(str(tmp_path)) / "idx"
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    store.upsert([leaf(f"{R}/a/f{i}.md") for i in range(640)], unit(640, 12))
    assert store.wait_ann(timeout=60)
    store.save()
    checking = threading.Event()
    real = _ann.AnnIndex._unreachable

    def slow(self: _ann.AnnIndex, labels: np.ndarray, vecs: np.ndarray, threads: int) -> np.ndarray:
        # once the published graph has grown enough that a save rewrites its file, hold the
        # next chunk in its check (its labels are in the index, not yet in ``row``)
        if self.count >= 640 + _ann.CATCH_UP_ROWS and not checking.is_set():
            checking.set()
            time.sleep(0.5)
        return real(self, labels, vecs, threads)

    monkeypatch.setattr(_ann.AnnIndex, "_unreachable", slow)
    many = _ann.CATCH_UP_ROWS + 200  # (the writes' threshold is bound at import: 2,048)
    store.upsert([leaf(f"{R}/b/f{i}.md") for i in range(many)], unit(many, 13))  # the worker
    assert checking.wait(timeout=60)
    store.save()  # while the second chunk is in the graph and being checked
    assert store.wait_ann(timeout=60)
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again.ann_damaged is None and again._ann is not None
    assert again._ann.count == len(again._ann.row)
    again.close()
    store.close()


def _missed(store: EmbeddedStore, width: int | None = None) -> set[int]:
    """The labels that a search of their own vector, ``width`` (default ``EF``) wide, does
    not return."""
    from treehop.stores import _ann

    ann = store._ann
    assert ann is not None
    own = store._snap.vectors_of(ann.row)
    keys = np.asarray(ann.index.search(own, width or _ann.EF).keys).reshape(ann.count, -1)
    return set(np.flatnonzero(~(keys == np.arange(ann.count)[:, None]).any(axis=1)).tolist())


def _answers(store: EmbeddedStore, queries: np.ndarray, limit: int) -> list[list[Any]]:
    """Each query's hits (URI, score), every graph search fresh (no kept beam)."""
    ann = store._ann
    assert ann is not None
    out = []
    for q in queries:
        ann.recent.clear()
        out.append([(h.node.uri, h.score) for h in store.search(q, Scope(), limit)])
    return out


def test_orphans_found_through_their_8_bit_codes_give_the_same_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from treehop.stores import _ann
    from treehop.stores.embedded import search_paths as emb_search

    monkeypatch.setattr(_ann, "CONNECTIVITY", 8)
    monkeypatch.setattr(_ann, "CHUNK", 4096)
    monkeypatch.setattr(_ann, "ORPHAN_CODES_MIN", 1)  # (dozens of orphans here, not 8,670)
    used = []
    real = emb_search._reaching_orphans

    def spy(*a: object, **kw: object) -> object:
        got = real(*a, **kw)  # type: ignore[arg-type]
        used.append(got is not None)
        return got

    monkeypatch.setattr(emb_search, "_reaching_orphans", spy)
    for seed in range(2):
        store = clustered_store(seed)
        ann = store._ann
        assert ann is not None and ann.orphans.size
        uris = [n.uri for n in store.iter_nodes()]
        vecs = store.get_vectors(uris)
        rng = np.random.default_rng(seed)
        noisy = vecs[:200] + 0.3 * rng.standard_normal((200, vecs.shape[1])).astype(np.float32)
        queries = np.concatenate([vecs[ann.row[ann.orphans]], noisy])
        store.search(queries[0], Scope(), 10)  # the first gather starts the codes' build
        deadline = time.monotonic() + 30
        while ann.orphan_codes() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ann.orphan_codes() is not None

        for limit in (1, 10, 40):
            used.clear()
            with_codes = _answers(store, queries, limit)
            assert used and all(used)  # every step found its orphans through the codes
            with monkeypatch.context() as m:
                m.setattr(_ann.AnnIndex, "orphan_codes", lambda self: None)
                assert _answers(store, queries, limit) == with_codes
        s = store._snap
        for q, r in zip(queries, ann.row[ann.orphans].tolist(), strict=False):
            assert store.search(q, Scope(), 1)[0].node.uri == store._node(s, r).uri


def test_orphans_are_the_rows_a_query_as_wide_as_the_graphs_cannot_reach(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from treehop.stores import _ann
    from treehop.stores.embedded import store as emb_store

    # a graph whose queries search wider than EF (as at 1M rows): a label missed EF wide
    # but found as wide as a query searches is reachable, and is not scored exactly
    monkeypatch.setattr(_ann, "CONNECTIVITY", 8)
    monkeypatch.setattr(_ann, "CHUNK", 4096)
    monkeypatch.setattr(_ann, "EF_ROWS", 300)
    # one build thread: a graph built on two is a different graph each run (the order the
    # threads insert in), and whether a narrow miss is found wide is a property of the graph
    monkeypatch.setattr(emb_store.os, "cpu_count", lambda: 1)
    fewer = 0
    for seed in range(2):
        store = clustered_store(seed)
        ann = store._ann
        assert ann is not None and ann.count == 3000
        width = _ann.search_width(ann.count)
        assert width > _ann.EF
        narrow, wide = _missed(store), _missed(store, width)
        assert sorted(ann.orphans.tolist()) == sorted(narrow & wide)
        fewer += len(narrow) - len(narrow & wide)
        uris = [n.uri for n in store.iter_nodes()]
        vecs = store.get_vectors(uris)
        got = store.search_batch(vecs, Scope(), 1)
        assert [hits[0].node.uri for hits in got] == uris
        for uri, v in zip(uris, vecs, strict=True):
            assert store.search(v, Scope(), 1)[0].node.uri == uri
    assert fewer > 0  # fewer rows scored exactly per query


def test_rows_newer_rows_made_unreachable_are_found_by_the_sweep(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from treehop.stores import _ann

    # 8 links, chunks of 64: rows checked when added lose their links to later chunks
    monkeypatch.setattr(_ann, "CONNECTIVITY", 8)
    monkeypatch.setattr(_ann, "CHUNK", 64)
    late = 0
    with monkeypatch.context() as m:  # without sweeps, rows are lost after their check
        m.setattr(_ann.AnnIndex, "needs_sweep", lambda self: False)
        for seed in range(2):
            store = clustered_store(seed)
            assert store._ann is not None and store._ann.swept == 0
            late += len(_missed(store) - set(store._ann.orphans.tolist()))
    assert late > 0
    for seed in range(2):
        store = clustered_store(seed)
        ann = store._ann
        assert ann is not None and ann.swept == ann.count == 3000
        assert sorted(ann.orphans.tolist()) == sorted(_missed(store))
        uris = [n.uri for n in store.iter_nodes()]
        vecs = store.get_vectors(uris)
        got = store.search_batch(vecs, Scope(), 1)
        assert [hits[0].node.uri for hits in got] == uris
        for uri, v in zip(uris, vecs, strict=True):
            assert store.search(v, Scope(), 1)[0].node.uri == uri


def test_a_sweep_runs_after_growth_is_saved_and_stops_when_asked(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from treehop.stores import _ann

    monkeypatch.setattr(_ann, "CHUNK", 256)
    path = Path(str(tmp_path)) / "idx"
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    store.upsert([leaf(f"{R}/a/f{i}.md") for i in range(3000)], unit(3000, 21))
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None and ann.swept == 3000
    # growth below the threshold (25%, at least CATCH_UP_ROWS) waits; past it, a sweep runs
    store.upsert([leaf(f"{R}/b/f{i}.md") for i in range(500)], unit(500, 22))
    assert store.wait_ann(timeout=60)
    assert store._ann is not None and store._ann.swept == 3000 and store._ann.count == 3500
    store.upsert([leaf(f"{R}/c/f{i}.md") for i in range(2100)], unit(2100, 23))
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None and ann.count == 5600 and ann.swept == 5600
    store.save()
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again._ann is not None and again._ann.swept == 5600
    assert again._ann.orphans.tolist() == ann.orphans.tolist()
    # a sweep asked to stop changes nothing
    again._ann.swept = 0
    before = again._ann.orphans
    calls = iter([True, True, False])
    assert not again._ann.sweep(again._snap.vectors_of, 1, lambda: next(calls))
    assert again._ann.swept == 0 and again._ann.orphans is before
    again.close()
    store.close()
    # a graph saved before sweeps existed counts as swept: no search of it all at open
    real = EmbeddedStore._save_ann

    def older(self: EmbeddedStore, *a: object) -> object:
        entry = real(self, *a)  # type: ignore[arg-type]
        if entry is not None:
            entry.pop("swept")
        return entry

    monkeypatch.setattr(EmbeddedStore, "_save_ann", older)
    path = Path(str(tmp_path)) / "old"
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    store.upsert([leaf(f"{R}/a/f{i}.md") for i in range(3000)], unit(3000, 24))
    assert store.wait_ann(timeout=60)
    store.save()
    store.close()
    old = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert old._ann is not None and old._ann.swept == old._ann.count == 3000
    old.close()


@pytest.mark.parametrize("threaded", [False, True])
def test_an_open_gathers_the_orphans_and_their_codes_before_the_first_search(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch, threaded: bool
) -> None:
    """The first global step after an open used to gather the orphans' scattered rows and
    start their codes in a thread: the open does it now (in its warm-up thread from 100k
    rows, inline below), and the answers are those of a store that gathers them itself."""
    from pathlib import Path

    from treehop.stores import _ann
    from treehop.stores.embedded import ann_worker as emb_ann

    monkeypatch.setattr(_ann, "ORPHAN_CODES_MIN", 1)
    if threaded:
        monkeypatch.setattr(emb_ann, "_WARM_INLINE_ROWS", 0)
    path = Path(str(tmp_path)) / "idx"
    mem, disk = saved(path)
    assert disk._ann is not None
    labels = np.array([3, 17, 40, 41], np.int64)
    disk._ann.orphans = labels
    disk._ann_file = None  # rewrite the graph file (with its orphans) at the next save
    disk.save()
    disk.close()

    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    ann = again._ann
    assert ann is not None and ann.orphans.tolist() == labels.tolist()
    kept = ann._orphan_vecs  # before any search
    assert kept is not None and kept[0] is ann.orphans
    s = again._snap
    rows = ann.row[labels]
    np.testing.assert_array_equal(kept[1], s.vectors_of(rows))
    assert ann.orphan_codes() is not None  # built by the open, not by a thread after it
    qs = mem.get_vectors([f"{R}/d3/f4.md", f"{R}/d1/f0.md"]) + 0.05
    warm = [[(h.node.uri, h.score) for h in again.search(q, Scope(), 10)] for q in qs]
    warm_batch = again.search_batch(qs, Scope(), 10)
    again.close()

    # the same answers from an open that leaves the gather to the first search
    monkeypatch.setattr(_ann.AnnIndex, "adopt_orphans", lambda self, w: False)
    cold = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert cold._ann is not None and cold._ann._orphan_vecs is None
    assert [[(h.node.uri, h.score) for h in cold.search(q, Scope(), 10)] for q in qs] == warm
    got = cold.search_batch(qs, Scope(), 10)
    assert [[(h.node.uri, h.score) for h in r] for r in got] == [
        [(h.node.uri, h.score) for h in r] for r in warm_batch
    ]
    cold.close()


def test_orphans_gathered_for_other_labels_or_rows_are_not_adopted() -> None:
    from treehop.stores._ann import AnnIndex, WarmOrphans

    store = clustered_store(0, n=400)
    ann = store._ann
    assert ann is not None
    labels = np.array([5, 9], np.int64)
    s = store._snap
    fresh = AnnIndex(ann.index, ann.row, ann.upto, mutable=False, orphans=labels)
    other = WarmOrphans.gather(ann.row, np.array([5, 10], np.int64), s.vectors_of)
    assert not fresh.adopt_orphans(other)  # other labels
    moved = ann.row.copy()
    moved[9] = moved[8]
    stale = WarmOrphans.gather(moved, labels, s.vectors_of)
    assert not fresh.adopt_orphans(stale)  # the rows moved since (a compaction)
    assert fresh._orphan_vecs is None
    good = WarmOrphans.gather(ann.row, labels, s.vectors_of)
    assert fresh.adopt_orphans(good)
    rows, vecs = fresh.orphan_rows(s.n, s.vectors_of)
    assert vecs is good.vecs and rows.tolist() == ann.row[labels].tolist()
    assert not fresh.adopt_orphans(good)  # only once: what a search gathered stays
