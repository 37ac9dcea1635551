"""How long the graph's writer holds the lock searches wait for: a chunk that took longer than
``HOLD_S`` makes the next one smaller (many identical vectors made usearch's insertion 10-15x
slower: a 1,024-row chunk held the lock 2.8 s and finds waited seconds), a quick one lets the
next grow back to ``CHUNK``; the graph ends up the same size and maps every row."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pytest

from treehop.stores import _ann
from treehop.stores._ann import AnnIndex, next_chunk

DIM = 16


def test_next_chunk_shrinks_in_proportion_and_grows_back() -> None:
    h = _ann.HOLD_S
    assert next_chunk(1024, 4 * h) == 256
    assert next_chunk(1024, 1000 * h) == _ann.MIN_CHUNK
    assert next_chunk(256, 0.1 * h) == 512
    assert next_chunk(1024, 0.1 * h) == _ann.CHUNK
    assert next_chunk(300, 0.75 * h) == 300


def test_slow_insertions_hold_the_lock_in_smaller_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 3000
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ann = AnnIndex.new(DIM)
    sizes: list[int] = []
    add = ann.index.add

    def slow_add(labels: Any, v: Any, **kw: Any) -> Any:
        sizes.append(len(labels))
        time.sleep(len(labels) * 0.2 / 1024)  # (1,024 rows: 0.2 s, over HOLD_S / 2)
        return add(labels, v, **kw)

    monkeypatch.setattr(ann.index, "add", slow_add)
    monkeypatch.setattr(_ann, "HOLD_S", 0.05)
    assert ann.extend(np.arange(n, dtype=np.int64), lambda r: vecs[r], n, 1, lambda: True)
    assert sizes[0] == _ann.CHUNK
    assert max(sizes[1:]) < _ann.CHUNK // 2  # (every later chunk held the lock for less)
    assert sum(sizes) == n and ann.count == n and ann.upto == n
    assert ann.row.tolist() == list(range(n))
    assert ann.chunk_rows < _ann.CHUNK // 2  # (the next extend starts from what a chunk cost)
    found = [int(ann.query(vecs[i], 1)[0]) for i in range(0, n, 60)]
    assert np.mean([f == i for f, i in zip(found, range(0, n, 60), strict=True)]) > 0.9


def test_a_waiting_search_goes_before_the_writers_next_chunk() -> None:
    """The worker releases the lock and asks for it again at once; a search that waited for
    the chunk gets the lock first (it waited through chunk after chunk before)."""
    import threading

    lock = _ann.RWLock()
    order: list[str] = []
    lock.acquire_write()

    def search() -> None:
        lock.acquire_read()
        order.append("search")
        time.sleep(0.05)
        lock.release_read()

    t = threading.Thread(target=search)
    t.start()
    deadline = time.monotonic() + 5
    while lock._waiting == 0 and time.monotonic() < deadline:  # (the search waits)
        time.sleep(0.001)
    assert lock._waiting == 1
    lock.release_write()
    lock.acquire_write()  # (the next chunk)
    order.append("next chunk")
    lock.release_write()
    t.join(5)
    assert order == ["search", "next chunk"]
