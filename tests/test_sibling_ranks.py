"""The store's kept sibling order (:attr:`~treehop.stores.base.HitArrays.sibling_ranks`).

The tree context lays a family of named leaves (a folder's files, a session's turns) out in
sibling order with every find; the embedded store keeps each row's rank among its parent's
children per snapshot, so a find no longer decodes and sorts the names. The ranks must order
any subset of a parent's children exactly as :func:`~treehop.tree_scoring.order_key` does
(ties included), a write must make them be computed again, and a find must return what it
returns without them.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_columnar_search import DIM, RES, _node
from treehop import RetrievalConfig
from treehop import hierarchical_retriever as hr
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, Node, TypedQuery
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import order_key, sibling_order, sibling_ranks

_STEMS = ["f", "f0", "turn-", "a", "b", "d1-", "x"]
_TAILS = ["", ".md", ".txt", "-2.md"]


def _names(draw_ints: list[tuple[int, int, int]]) -> list[str]:
    """Distinct file names of mixed shapes, with natural-order ties (``f01`` and ``f1``)."""
    out = []
    for stem, num, tail in draw_ints:
        out.append(f"{_STEMS[stem % len(_STEMS)]}{num}{_TAILS[tail % len(_TAILS)]}")
        if num < 10:
            out.append(f"{_STEMS[stem % len(_STEMS)]}0{num}{_TAILS[tail % len(_TAILS)]}")
    return list(dict.fromkeys(out))


def _folders(names: list[list[str]], seed: int) -> tuple[list[Node], np.ndarray]:
    """Folders of files (named ``names[k]``) under one resource root; the last folder also
    holds chunks of one file (a chunk beside named files orders by its index)."""
    rng = np.random.default_rng(seed)
    nodes = [_node(RES, None, ContextType.RESOURCE, 0, False)]
    for k, folder in enumerate(names):
        d = f"{RES}/dir{k}"
        nodes.append(_node(d, RES, ContextType.RESOURCE, 1, False))
        for name in folder:
            nodes.append(_node(f"{d}/{name}", d, ContextType.RESOURCE, 2, True, content="alpha"))
    vecs = rng.standard_normal((len(nodes), DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return nodes, vecs


def _store(nodes: list[Node], vecs: np.ndarray) -> EmbeddedStore:
    store = EmbeddedStore()
    store.upsert(nodes, vecs)
    return store


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 6), st.integers(0, 30), st.integers(0, 3)),
            min_size=1,
            max_size=25,
        ),
        min_size=1,
        max_size=3,
    ),
    st.integers(0, 2**16),
)
def test_ranks_order_every_subset_as_the_natural_key(
    folders: list[list[tuple[int, int, int]]], seed: int
) -> None:
    """For any hits of a search (a subset of each parent's children, in score order): equal
    ranks exactly where the keys are equal, and a stable sort by rank is the stable sort by
    key, so the layout from the ranks is :func:`sibling_order`'s family by family."""
    store = _store(*_folders([_names(f) for f in folders], seed))
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(DIM).astype(np.float32)
    for limit in (3, 10, 1000):
        arr = store.search_arrays(q, Scope(subtrees=(RES,), leaves_only=True), limit)
        assert arr.sibling_ranks is not None and arr.parent_codes is not None
        every = np.arange(len(arr), dtype=np.int64)
        ranks = arr.sibling_ranks(every, sibling_ranks).tolist()
        cols = arr.columns(every)
        keys = [order_key(u, c) for u, c in zip(cols.uris, cols.chunk_indexes, strict=True)]
        codes = arr.parent_codes.tolist()
        for i in range(len(arr)):
            for j in range(len(arr)):
                if codes[i] == codes[j]:
                    assert (ranks[i] < ranks[j]) == (keys[i] < keys[j])
                    assert (ranks[i] == ranks[j]) == (keys[i] == keys[j])
        fam = hr._Family(cols, list(range(len(cols))))
        fam.ranks = np.asarray(ranks, dtype=np.int64)
        got = fam.layout(cols.parent_uris, cols.uris, cols.chunk_indexes, cols.parent_codes)
        want = sibling_order(cols.parent_uris, cols.uris, cols.chunk_indexes, cols.parent_codes)
        assert _by_family(got, cols.parent_uris) == _by_family(want, cols.parent_uris)


def _by_family(layout: Any, parent_of: list[str]) -> dict[str, list[int]]:
    out, k = {}, 0
    for size in layout.sizes:
        seg = layout.order[k : k + size]
        out[parent_of[seg[0]]] = seg
        k += size
    return out


def _finds(store: EmbeddedStore, seed: int) -> list[list[tuple[Any, ...]]]:
    rng = np.random.default_rng(seed)
    retriever = HierarchicalRetriever(store, RetrievalConfig())
    out = []
    for i in range(6):
        req = RetrievalRequest(
            query=TypedQuery(query="alpha"),
            vector=rng.standard_normal(DIM).astype(np.float32),
            roots=[RES],
            limit=3 + i,
            dense_weight=1.0 if i % 2 else 0.7,
        )
        res = asyncio.run(retriever.retrieve(req))
        out.append([(m.uri, m.score, m.own_score, m.found_by) for m in res.matched_contexts])
    return out


_FOLDERS = [
    [f"f{i}.md" for i in range(1, 30)] + ["f01.md", "f02.md", "notes.txt"],
    [f"turn-{i:05d}" for i in range(40)],
]


@pytest.mark.parametrize("seed", range(4))
def test_find_with_kept_ranks_equals_find_without(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A find's results, order and scores are those of the names' own sort
    (:func:`sibling_order`), and the kept ranks are what lays the family out."""
    store = _store(*_folders(_FOLDERS, seed))
    used: list[bool] = []
    layout = hr._Family.layout

    def seen(self: hr._Family, *a: Any) -> Any:
        used.append(self.ranks is not None)
        return layout(self, *a)

    monkeypatch.setattr(hr._Family, "layout", seen)
    on = _finds(store, seed)
    assert used and all(used)
    monkeypatch.setattr(EmbeddedStore, "_found_arrays", _without_ranks(store))
    used.clear()
    off = _finds(store, seed)
    assert used and not any(used)
    assert on == off and any(on)


def _without_ranks(store: EmbeddedStore) -> Any:
    """The store's own ``_found_arrays`` with no kept ranks offered (the names' sort)."""
    found = type(store)._found_arrays

    def without(self: EmbeddedStore, *a: Any, **k: Any) -> Any:
        import dataclasses

        return dataclasses.replace(found(self, *a, **k), sibling_ranks=None)

    return without


def _between(store: EmbeddedStore, vec: np.ndarray, name: str) -> None:
    d = f"{RES}/dir0"
    node = _node(f"{d}/{name}", d, ContextType.RESOURCE, 2, True, content="alpha")
    store.upsert([node], vec[None, :])


def test_a_write_ranks_the_family_again() -> None:
    """After finds kept the ranks, a file added between two siblings, then a deletion,
    change the layout: each find after a write equals the find on a store built fresh with
    the same nodes (nothing kept), and differs from the find before the write."""
    nodes, vecs = _folders(_FOLDERS, 7)
    store = _store(nodes, vecs)
    before = _finds(store, 1)
    f4 = next(i for i, n in enumerate(nodes) if n.uri.endswith("/dir0/f4.md"))
    # ``f4x.md`` sorts between ``f4.md`` and ``f5.md``: f4's and f5's neighbours change
    arr = store.search_arrays(vecs[f4], Scope(subtrees=(f"{RES}/dir0",), leaves_only=True), 100)
    kept = arr.sibling_ranks(np.arange(len(arr), dtype=np.int64), sibling_ranks)  # type: ignore[misc]
    assert (kept >= 0).all()
    new_vec = vecs[f4] * 0.9 + 0.1 * vecs[f4 + 1]
    new_vec /= np.linalg.norm(new_vec)
    _between(store, new_vec, "f4x.md")
    added = store.get([f"{RES}/dir0/f4x.md"])[0]
    assert added is not None
    fresh_nodes = [*nodes, added]
    fresh_vecs = np.vstack([vecs, new_vec[None, :]])
    assert _finds(store, 1) == _finds(_store(fresh_nodes, fresh_vecs), 1)
    after = store.search_arrays(vecs[f4], Scope(subtrees=(f"{RES}/dir0",), leaves_only=True), 100)
    uris = after.uris(np.arange(len(after), dtype=np.int64))
    ranks = dict(
        zip(uris, after.sibling_ranks(np.arange(len(after)), sibling_ranks).tolist(), strict=True)  # type: ignore[misc]
    )
    assert ranks[f"{RES}/dir0/f4.md"] < ranks[f"{RES}/dir0/f4x.md"] < ranks[f"{RES}/dir0/f5.md"]
    # the find on the query nearest f4 changed with the new sibling
    probe = _near_find(store, vecs[f4])
    assert probe != before_probe_of(nodes, vecs, f4)
    store.delete([f"{RES}/dir0/f5.md"])
    keep = [i for i, n in enumerate(fresh_nodes) if not n.uri.endswith("/dir0/f5.md")]
    rebuilt = _store([fresh_nodes[i] for i in keep], fresh_vecs[keep])
    assert _finds(store, 1) == _finds(rebuilt, 1)
    assert _near_find(store, vecs[f4]) == _near_find(rebuilt, vecs[f4])
    assert before  # (the finds before the write ran on kept ranks)


def _near_find(store: EmbeddedStore, vec: np.ndarray) -> list[tuple[str, float]]:
    retriever = HierarchicalRetriever(store, RetrievalConfig())
    req = RetrievalRequest(
        query=TypedQuery(query="alpha"), vector=vec, roots=[RES], limit=8, dense_weight=0.7
    )
    res = asyncio.run(retriever.retrieve(req))
    return [(m.uri, m.score) for m in res.matched_contexts]


def before_probe_of(nodes: list[Node], vecs: np.ndarray, at: int) -> list[tuple[str, float]]:
    return _near_find(_store(nodes, vecs), vecs[at])


def test_the_kept_ranks_are_one_int32_column() -> None:
    """Bounded: however many finds, the kept ranks are one int32 per row of the snapshot."""
    store = _store(*_folders(_FOLDERS, 2))
    _finds(store, 3)
    _finds(store, 4)
    s = store._snap
    kept = [v for k, v in s.cache.items() if isinstance(k, tuple) and k[0] == "sibling_rank"]
    assert len(kept) == 1
    assert kept[0].dtype == np.int32 and kept[0].shape == (s.n,)
