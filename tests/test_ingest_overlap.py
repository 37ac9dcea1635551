"""The ingest's use of a second core and of ordinary memory pages: the embedded store writes a
large batch's BM25 postings in a thread beside its snapshot steps, and a write turns numpy's
huge-page hint off while it runs. Neither may change what is stored or leak past the write."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.embedders.base import BaseEmbedder, normalize_rows
from treehop.errors import StoreError
from treehop.ingest import writer as writer_mod
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import writes as emb_writes

R = "viking://resources"
WORDS = ["river", "stone", "cloud", "engine", "vector", "garden", "signal", "harbor", "orbit"]


def leaf(i: int) -> Node:
    words = [WORDS[(i * 7 + k * 3) % len(WORDS)] + str((i + k) % 13) for k in range(8)]
    text = " ".join(words)
    return Node(
        uri=f"{R}/d/n{i:05d}.md",
        parent_uri=f"{R}/d",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        abstract=text[:20],
        content=text,
        tags=[f"auto:{words[0]}"],
    )


def vectors(n: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    v = rng.standard_normal((n, 8)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def bm25_of(store: EmbeddedStore, queries: list[str]) -> list[np.ndarray]:
    lex = store.lexical
    assert lex is not None
    return [lex.score(q, size=lex.row_bound) for q in queries]


@pytest.mark.parametrize("path", [False, True])
def test_threaded_bm25_write_equals_the_serial_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: bool
) -> None:
    """A batch over the thread threshold (and a replacing batch after it) leaves the same
    postings, scores and snapshot as the same writes done in line."""
    t = emb_writes._LEX_THREAD_ROWS
    n = t + 200
    nodes = [leaf(i) for i in range(n)]
    vecs = vectors(n)
    again = [leaf(i).model_copy(update={"content": f"renamed harbor{i}"}) for i in range(300)]
    queries = ["river3 stone5", "harbor1", "renamed", "orbit12 cloud0 garden7"]

    def run(where: Path | None) -> tuple[list[np.ndarray], list[str], np.ndarray]:
        s = EmbeddedStore(where, ann_min_rows=None)
        s.upsert(nodes, vecs)
        # (300 texts replaced, and the last rows rewritten with new vectors: kills and appends)
        s.upsert(again + nodes[-t:], vectors(len(again) + t)[::-1])
        return bm25_of(s, queries), sorted(s.iter_uris(R)), s.get_vectors([nodes[5].uri])

    threaded = run(tmp_path / "a" if path else None)
    monkeypatch.setattr(emb_writes, "_LEX_THREAD_ROWS", 10**9)
    serial = run(tmp_path / "b" if path else None)
    for a, b in zip(threaded[0], serial[0], strict=True):
        assert np.array_equal(a, b)
    assert threaded[0][2].max() > 0  # the replaced texts are what is indexed
    assert threaded[1] == serial[1]
    assert np.array_equal(threaded[2], serial[2])


def test_threaded_bm25_error_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    """An error of the BM25 write in its thread surfaces from ``upsert`` (as it did in line),
    after the snapshot steps finished."""
    store = EmbeddedStore(None, ann_min_rows=None)
    lex = store.lexical
    assert lex is not None
    caller = threading.get_ident()
    seen: list[int] = []

    def broken(rows: object, texts: object) -> None:
        seen.append(threading.get_ident())
        raise StoreError("postings refused")

    monkeypatch.setattr(lex, "upsert", broken)
    n = emb_writes._LEX_THREAD_ROWS
    with pytest.raises(StoreError, match="postings refused"):
        store.upsert([leaf(i) for i in range(n)], vectors(n))
    assert seen and seen[0] != caller  # it did run in a thread of its own
    assert len(store) == n  # the snapshot steps completed before the error was raised


def test_a_failed_snapshot_step_takes_the_threaded_bm25_write_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the snapshot steps raise (no room for the tag lookup, say), the write is not
    published, and the BM25 side written beside them is taken back: the scores are those of
    the store before the write, and the same write, retried, indexes like a clean one."""
    t = emb_writes._LEX_THREAD_ROWS
    n = t + 50
    nodes = [leaf(i) for i in range(n)]
    again = [leaf(i).model_copy(update={"content": f"renamed harbor{i}"}) for i in range(40)]
    more = [leaf(i) for i in range(n, n + t)]
    queries = ["river3 stone5", "harbor1", "renamed", "orbit12 cloud0 garden7"]
    store = EmbeddedStore(None, ann_min_rows=None)
    store.upsert(nodes, vectors(n))
    before = bm25_of(store, queries)
    real = emb_writes._merged_tags

    def full(*a: object, **kw: object) -> object:
        raise MemoryError("no room for the tag lookup")

    monkeypatch.setattr(emb_writes, "_merged_tags", full)
    with pytest.raises(MemoryError):  # (40 replaced texts kill 40 rows; 1,024 appended)
        store.upsert(again + more, vectors(len(again) + t))
    assert len(store) == n
    after = bm25_of(store, queries)
    for a, b in zip(after, before, strict=True):
        assert np.array_equal(a[: b.size], b) and not a[b.size :].any()
    monkeypatch.setattr(emb_writes, "_merged_tags", real)
    store.upsert(again + more, vectors(len(again) + t))
    clean = EmbeddedStore(None, ann_min_rows=None)
    clean.upsert(nodes, vectors(n))
    clean.upsert(again + more, vectors(len(again) + t))
    for a, b in zip(bm25_of(store, queries), bm25_of(clean, queries), strict=True):
        assert np.array_equal(a, b)


class _Hashing(BaseEmbedder):
    name = "test-hashing-16"
    dimension = 16

    def embed(self, texts: list[str]) -> np.ndarray:  # type: ignore[override]
        out = np.zeros((len(texts), 16), np.float32)
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, sum(map(ord, w)) % 16] += 1.0
        return normalize_rows(out, len(texts), 16)


def test_huge_page_hint_is_off_during_a_write_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """numpy's huge-page hint is off while ``add_resource`` writes and back to what it was
    after (both when it was on and when the caller had turned it off)."""
    switch = writer_mod._HUGEPAGE_SWITCH
    if switch is None:
        pytest.fail("this numpy offers no huge-page switch; the test cannot observe it")
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"f{i}.md").write_text(f"notes about {WORDS[i]} and {WORDS[i + 1]}.\n")
    during: list[bool] = []
    inner = writer_mod.TreeWriter.write

    async def spy(self: writer_mod.TreeWriter, *a: object, **k: object) -> object:
        now = switch(False)
        switch(now)
        during.append(now)
        return await inner(self, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(writer_mod.TreeWriter, "write", spy)
    before = switch(True)
    try:
        with Treehop(embedder=_Hashing(), tagger=None) as th:
            th.add_resource(root, target_uri=R)
            assert switch(True) is True  # restored to on
            switch(False)
            (root / "f0.md").write_text("changed text about orbit.\n")
            th.add_resource(root, target_uri=R)
            assert switch(False) is False  # restored to off
    finally:
        switch(before)
    assert during == [False, False]
