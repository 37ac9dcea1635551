"""The unsaved vectors grow in blocks (``embedded.snapshot._Tail``), never copied whole.

Why these tests: a bulk ingest appends millions of rows before its save; the blocks must
read back as the one array they replace (gathers across blocks, products per block, the
bytes a save appends), and a published snapshot must keep its rows while later writes fill
the blocks past it. The block size is lowered so that a few dozen rows span many blocks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import snapshot as emb_snapshot

from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(emb_snapshot, "_TAIL_BLOCK", 8)
    return 8


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 30), min_size=1, max_size=12), seed=st.integers(0, 99))
def test_a_tail_reads_back_as_the_array_it_replaces(sizes: list[int], seed: int) -> None:
    old = emb_snapshot._TAIL_BLOCK
    emb_snapshot._TAIL_BLOCK = 8
    try:
        dim = 3
        rng = np.random.default_rng(seed)
        tail = emb_snapshot._Tail(dim)
        ref = np.zeros((0, dim), np.float32)
        snaps: list[tuple[emb_snapshot._Tail, np.ndarray]] = []
        for k in sizes:
            new = rng.standard_normal((k, dim)).astype(np.float32)
            tail = tail.with_rows(ref.shape[0], new)
            ref = np.concatenate([ref, new])
            snaps.append((tail, ref.copy()))
            n = ref.shape[0]
            assert tail.capacity >= n
            assert all(b.shape[0] == 8 for b in tail.blocks[:-1])
            if n:
                t = rng.integers(0, n, size=min(n, 17))
                assert np.array_equal(tail.take(t), ref[t])
                lo, hi = sorted(int(x) for x in rng.integers(0, n + 1, size=2))
                assert tail.tobytes(lo, hi) == ref[lo:hi].tobytes()
                parts = tail.parts(n)
                assert np.array_equal(np.concatenate(parts), ref)
        # every earlier tail still reads its own rows (later writes only filled rows past them)
        for t_old, r_old in snaps:
            if r_old.shape[0]:
                assert np.array_equal(np.concatenate(t_old.parts(r_old.shape[0])), r_old)
    finally:
        emb_snapshot._TAIL_BLOCK = old


def test_a_store_ingested_in_small_writes_across_blocks_searches_saves_and_reopens(
    tmp_path: Path, small_blocks: int
) -> None:
    n = 61
    v = vecs(n, seed=3)
    nodes = [leaf(f"viking://resources/d/f{i:03d}.md") for i in range(n)]
    s = EmbeddedStore(tmp_path / "idx", ann_min_rows=None, lexical=False)
    s.upsert(nodes[:5], v[:5])
    s.save()  # (rows 0-4 in the base, the rest in the tail's blocks)
    for i in range(5, n, 7):
        s.upsert(nodes[i : i + 7], v[i : i + 7])
    assert len(s._snap.tail_vecs.blocks) > 3
    got = s.get_vectors([nd.uri for nd in nodes])
    assert np.array_equal(got, v)
    for i in (0, 6, 30, 60):
        assert s.search(v[i], Scope(), 1)[0].node.uri == nodes[i].uri
    s.close()
    r = EmbeddedStore(tmp_path / "idx", ann_min_rows=None, lexical=False)
    assert np.array_equal(r.get_vectors([nd.uri for nd in nodes]), v)
    for i in (1, 13, 59):
        assert r.search(v[i], Scope(), 1)[0].node.uri == nodes[i].uri
    r.close()


@settings(max_examples=40, deadline=None)
@given(
    first=st.sets(st.integers(0, 999), min_size=80, max_size=120),
    batches=st.lists(st.sets(st.integers(0, 1999), min_size=1, max_size=9), max_size=6),
)
def test_the_uri_order_stays_sorted_across_small_writes(
    first: set[int], batches: list[set[int]]
) -> None:
    """Small writes merge their URIs into the URI order by a search that starts where the
    previous new URI landed (``_merged_by_uri``): replacements, new URIs between stored ones,
    before the first and after the last all keep the order a full sort gives."""
    s = EmbeddedStore(None, ann_min_rows=None, lexical=False)

    def uri(i: int) -> str:
        return f"viking://resources/d/f{i:04d}.md"

    firsts = sorted(first)
    s.upsert([leaf(uri(i)) for i in firsts], vecs(len(firsts), seed=1))
    for j, b in enumerate(batches):
        ids = sorted(b)
        s.upsert([leaf(uri(i)) for i in ids], vecs(len(ids), seed=10 + j))
        snap = s._snap
        got = snap.uris_of(snap.by_uri)
        assert got == sorted(got)
        assert len(got) == snap.live == len(set(firsts).union(*batches[: j + 1]))
