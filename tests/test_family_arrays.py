"""The tree context's family search as arrays (:class:`~treehop.stores.base.HitArrays`).

The embedded store answers the family search as numpy arrays (parent codes, chunk indexes,
heading-path codes) and builds Python values only for the positions asked; the retriever
scores a family of chunks on those arrays. Both must give exactly what the columns' path
gives: the same hits, order and scores from the store, the same results from a find.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from test_columnar_search import (
    COLUMN_FIELDS,
    DIM,
    MEM,
    RES,
    _node,
    _query,
    _scopes,
    random_tree,
)
from treehop import RetrievalConfig
from treehop import hierarchical_retriever as hr
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, TypedQuery
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import section_of


@pytest.mark.parametrize("seed", range(6))
def test_search_arrays_hold_what_search_columns_holds(seed: int) -> None:
    """Every field of every hit, in order, for scopes of every kind (filters, orphans whose
    parent is not stored, subtrees, excluded URIs)."""
    store, rng = random_tree(seed)
    for scope in _scopes(store, rng):
        q = _query(rng)
        for text, weight in ((None, 1.0), ("alpha beta", 0.6)):
            cols = store.search_columns(q, scope, 40, query_text=text, dense_weight=weight)
            arr = store.search_arrays(q, scope, 40, query_text=text, dense_weight=weight)
            n = len(cols)
            assert len(arr) == n
            every = np.arange(n, dtype=np.int64)
            got = arr.columns(every)
            for name in COLUMN_FIELDS:
                assert getattr(got, name) == getattr(cols, name), name
            assert arr.exact == cols.exact
            assert arr.uris(every) == cols.uris
            assert arr.leaves.tolist() == cols.leaves
            assert arr.scores.tolist() == cols.scores
            assert [None if c < 0 else c for c in arr.chunks.tolist()] == cols.chunk_indexes
            # a subset, in the order asked
            some = every[::-1][: max(n // 2, 1)] if n else every
            assert arr.columns(some).uris == [cols.uris[i] for i in some.tolist()]
            if arr.parent_codes is None:
                assert cols.parent_codes is None  # a hit's parent is not stored
                continue
            codes = arr.parent_codes.tolist()
            assert arr.parent_uris(arr.parent_codes) == cols.parent_uris
            for i in range(n):  # equal codes exactly where the parents are equal
                for j in range(n):
                    same = cols.parent_uris[i] == cols.parent_uris[j]
                    assert (codes[i] == codes[j]) == same


def _sectioned_store() -> EmbeddedStore:
    """Two files of chunks with heading paths (shared, partly shared, missing) and a whole
    file beside them."""
    rng = np.random.default_rng(3)
    doc = f"{RES}/docs"
    nodes = [_node(RES, None, ContextType.RESOURCE, 0, False)]
    nodes.append(_node(doc, RES, ContextType.RESOURCE, 1, False))
    paths: list[list[str] | None] = [
        ["Guide", "Install"],
        ["Guide", "Install"],
        ["Guide", "Run"],
        ["Other"],
        None,
        ["Guide"],
    ]
    for f in range(2):
        fu = f"{doc}/page-{f}.rst"
        nodes.append(_node(fu, doc, ContextType.RESOURCE, 1, False))
        for c, path in enumerate(paths):
            meta = {} if path is None else {"heading_path": path}
            nodes.append(
                _node(
                    f"{fu}#chunk-{c}",
                    fu,
                    ContextType.RESOURCE,
                    2,
                    True,
                    chunk_index=c,
                    content="alpha",
                    metadata=meta,
                )
            )
    nodes.append(_node(f"{doc}/notes.md", doc, ContextType.RESOURCE, 2, True, content="beta"))
    vecs = rng.standard_normal((len(nodes), DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = EmbeddedStore()
    store.upsert(nodes, vecs)
    return store


def test_heading_codes_stand_for_the_heading_paths() -> None:
    """A code per heading path (-1: none), the same on every later ask (the derived column),
    and the table holds the path itself."""
    store = _sectioned_store()
    rng = np.random.default_rng(0)
    for _ in range(3):
        arr = store.search_arrays(_query(rng), Scope(subtrees=(RES,)), 100)
        cols = arr.columns(np.arange(len(arr), dtype=np.int64))
        nodes = cols.load(range(len(cols)))
        every = np.arange(len(arr), dtype=np.int64)
        codes, table = arr.heading_codes(every)
        twice, _ = arr.heading_codes(np.concatenate([every, every]))
        assert twice.tolist() == codes.tolist() * 2
        for node, code in zip(nodes, codes.tolist(), strict=True):
            want = section_of(node)
            assert (table[code] if code >= 0 else None) == want
        by_path: dict[Any, set[int]] = {}
        for node, code in zip(nodes, codes.tolist(), strict=True):
            by_path.setdefault(section_of(node), set()).add(code)
        assert all(len(c) == 1 for c in by_path.values())  # one code per path


def _finds(store: EmbeddedStore, arrays: bool, seed: int) -> list[list[tuple[Any, ...]]]:
    rng = np.random.default_rng(seed)
    retriever = HierarchicalRetriever(store, RetrievalConfig())
    assert retriever._arrays  # the embedded store has the capability
    retriever._arrays = arrays
    out = []
    for i in range(6):
        req = RetrievalRequest(
            query=TypedQuery(query="alpha beta"),
            vector=_query(rng),
            roots=[RES, MEM],
            limit=3 + i,
            dense_weight=1.0 if i % 2 else 0.7,
        )
        res = asyncio.run(retriever.retrieve(req))
        out.append(
            [
                (
                    m.uri,
                    m.score,
                    m.own_score,
                    m.found_by,
                    m.found_via,
                    [(c.uri, c.score, c.position) for c in m.collapsed],
                )
                for m in res.matched_contexts
            ]
        )
    return out


@pytest.mark.parametrize("seed", range(8))
def test_find_on_arrays_equals_find_on_columns(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same results, order and scores whether the tree context reads its family as
    arrays or as columns; the arrays' path does run."""
    store = random_tree(seed)[0] if seed % 2 else _sectioned_store()
    ran = []
    score = hr._ArrayFamily.score

    def counted(self: hr._ArrayFamily, *a: Any, **k: Any) -> Any:
        ran.append(1)
        return score(self, *a, **k)

    monkeypatch.setattr(hr._ArrayFamily, "score", counted)
    on = _finds(store, True, seed)
    if seed % 2 == 0:  # (a random tree's families may all be whole files: no arrays)
        assert ran
    ran.clear()
    off = _finds(store, False, seed)
    assert not ran
    assert on == off
    assert any(on)
