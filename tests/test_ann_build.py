"""How the store's background worker builds the graph (issue 35 item 3: its rate against
usearch's own ``add``): a build that ends in a sweep adds its chunks without checking each
of them first (the sweep searches every label anyway), and still records, by its end, every
label the graph cannot reach; a small addition to a swept graph checks its chunks as before."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from treehop.models import Node
from treehop.stores import _ann
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_leaf

R = "viking://resources"


def leaf(uri: str) -> Node:
    return resource_leaf(uri, uri)


def clustered(n: int, seed: int) -> np.ndarray:
    """16-d rows in tight clusters: with 8 links, dozens of them unreachable."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, 16))
    v = centres[rng.integers(0, 30, n)] + 0.15 * rng.standard_normal((n, 16))
    out: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


def missed(store: EmbeddedStore) -> set[int]:
    """The labels that a search of their own vector, ``EF`` wide, does not return."""
    ann = store._ann
    assert ann is not None
    own = store._snap.vectors_of(ann.row)
    keys = np.asarray(ann.index.search(own, _ann.EF).keys).reshape(ann.count, -1)
    return set(np.flatnonzero(~(keys == np.arange(ann.count)[:, None]).any(axis=1)).tolist())


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, int]]]:
    """Every reachability search the graph runs, as (who, labels): ``extend`` (a chunk's
    own check) or ``sweep``; the real searches run (this only records the calls)."""
    monkeypatch.setattr(_ann, "CONNECTIVITY", 8)
    monkeypatch.setattr(_ann, "CHUNK", 256)
    calls: list[tuple[str, int]] = []
    real_unreachable = _ann.AnnIndex._unreachable
    real_sweep = _ann.AnnIndex.sweep
    in_sweep: list[bool] = [False]

    def unreachable(self: _ann.AnnIndex, labels: Any, vecs: Any, threads: int) -> Any:
        calls.append(("sweep" if in_sweep[0] else "extend", int(labels.size)))
        return real_unreachable(self, labels, vecs, threads)

    def sweep(self: _ann.AnnIndex, *a: Any) -> bool:
        in_sweep[0] = True
        try:
            return real_sweep(self, *a)
        finally:
            in_sweep[0] = False

    monkeypatch.setattr(_ann.AnnIndex, "_unreachable", unreachable)
    monkeypatch.setattr(_ann.AnnIndex, "sweep", sweep)
    yield calls


def test_sweep_follows_growth_past_the_sweep_threshold() -> None:
    ann = _ann.AnnIndex.new(8)
    assert ann.count == ann.swept == 0
    assert not ann.sweep_follows(_ann.CATCH_UP_ROWS - 1)
    assert ann.sweep_follows(_ann.CATCH_UP_ROWS)
    ann.swept = ann.count = 100_000  # (as after a sweep of a 100k graph)
    step = int(_ann.SWEEP_GROWTH * 100_000)
    assert not ann.sweep_follows(step - 1) and ann.sweep_follows(step)
    assert ann.sweep_follows(0) == ann.needs_sweep() is False


def test_a_first_build_checks_every_label_once_in_its_sweep(
    checks: list[tuple[str, int]],
) -> None:
    for seed in range(2):
        checks.clear()
        store = EmbeddedStore(ann_min_rows=0, lexical=False)
        uris = [f"{R}/c/f{i}.md" for i in range(3000)]
        store.upsert([leaf(u) for u in uris], clustered(3000, seed))
        assert store.wait_ann(timeout=60)
        ann = store._ann
        assert ann is not None and ann.count == ann.swept == 3000
        # no chunk was checked on its own; the sweep searched each label once
        assert [who for who, _ in checks] == ["sweep"] * len(checks)
        assert sum(k for _, k in checks) == 3000
        # and it recorded exactly the labels the graph cannot reach: all rows are found
        assert sorted(ann.orphans.tolist()) == sorted(missed(store))
        assert ann.orphans.size  # (8 links: some are unreachable, so this proves something)
        vecs = store.get_vectors(uris)
        for uri, v in zip(uris, vecs, strict=True):
            assert store.search(v, Scope(), 1)[0].node.uri == uri
        store.close()


def test_a_small_addition_to_a_swept_graph_checks_its_chunks(
    checks: list[tuple[str, int]],
) -> None:
    store = EmbeddedStore(ann_min_rows=0, lexical=False)
    store.upsert([leaf(f"{R}/a/f{i}.md") for i in range(3000)], clustered(3000, 5))
    assert store.wait_ann(timeout=60)
    checks.clear()
    # 600 rows: below the sweep threshold (25% of 3,000, at least CATCH_UP_ROWS)
    new = [f"{R}/b/f{i}.md" for i in range(600)]
    store.upsert([leaf(u) for u in new], clustered(600, 6))
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None and ann.count == 3600 and ann.swept == 3000
    assert [who for who, _ in checks] == ["extend"] * len(checks)
    assert sum(k for _, k in checks) == 600
    # the new labels that their own search misses became orphans when added
    fresh = {lab for lab in missed(store) if lab >= 3000}
    assert fresh <= set(ann.orphans.tolist())
    vecs = store.get_vectors(new)
    for uri, v in zip(new, vecs, strict=True):
        assert store.search(v, Scope(), 1)[0].node.uri == uri
    store.close()


def test_a_bulk_build_stopped_early_ends_in_a_sweep_in_the_next_process(
    tmp_path: Path, checks: list[tuple[str, int]]
) -> None:
    """``close()`` halts the build after its chunk; the graph is saved with ``swept`` where
    it was, so the process that resumes it sweeps it when it catches up."""
    path = tmp_path / "idx"
    store = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    uris = [f"{R}/c/f{i}.md" for i in range(3000)]
    store.upsert([leaf(u) for u in uris], clustered(3000, 7))
    store.close()  # (the worker is halted after its current chunk, then the graph saved)
    again = EmbeddedStore(path, ann_min_rows=0, lexical=False)
    assert again.wait_ann(timeout=60)
    ann = again._ann
    assert ann is not None and ann.count == ann.swept == 3000
    assert sorted(ann.orphans.tolist()) == sorted(missed(again))
    vecs = again.get_vectors(uris)
    for uri, v in zip(uris, vecs, strict=True):
        assert again.search(v, Scope(), 1)[0].node.uri == uri
    again.close()
