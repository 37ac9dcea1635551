"""The tree context's shortcuts give the answers of the paths they stand in for.

- ``sibling_order`` lays out every family as ``order_key`` orders it (chunks by index, names of one
  shape as plain strings, other families by the natural-order key).
- The embedded store finds the subtree of a directory of leaves through the parent links
  (``_leaf_family_rows``): the same rows, in the same order, as the two binary searches over
  the URI order, or no answer where the links cannot prove it.
- The tree context asks one search for the inner parents' leaves and directories where it
  read two: ``test_columnar_search.test_find_equals_the_object_path`` compares whole finds
  with the two-search path (a store without columns); here the search count is checked.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_columnar_search import DIM, MEM, RES, _node, _query, random_tree
from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, TypedQuery
from treehop.stores.base import HitArrays, HitColumns, Scope, Vector
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot
from treehop.tree_scoring import order_key, sibling_order

_NAME = st.text(alphabet="ab-_.0123456789\u0663", min_size=0, max_size=12)


@given(
    st.lists(
        st.tuples(st.sampled_from(["p", "q", ""]), _NAME, st.none() | st.integers(0, 5)),
        max_size=25,
    ),
    st.booleans(),
)
def test_sibling_order_lays_out_families_as_order_key(
    leaves: list[tuple[str, str, int | None]], chunks_apart: bool
) -> None:
    """The layout of a stable sort on (parent in order of first appearance, order_key), ties
    included (equal keys stay in input order, so equal must stay equal)."""
    if chunks_apart:  # families of only chunks or only names: the fast paths
        leaves = [(p + ("c" if c is not None else ""), n, c) for p, n, c in leaves]
    parents = [p for p, _, _ in leaves]
    uris = [f"viking://r/{p}/{n}" for p, n, _ in leaves]
    chunks = [c for _, _, c in leaves]
    code = {p: i for i, p in enumerate(dict.fromkeys(parents))}
    ref = [order_key(u, c) for u, c in zip(uris, chunks, strict=True)]
    want = sorted(range(len(leaves)), key=lambda i: (code[parents[i]], ref[i]))
    layout = sibling_order(parents, uris, chunks)
    assert layout.order == want
    assert layout.sizes == [parents.count(p) for p in code]


def test_sibling_order_of_one_shape_is_by_name() -> None:
    names = ["turn-00010", "turn-00009", "turn-00011", "d1-9.txt", "d1-10.txt"]
    parents = ["s", "s", "s", "t", "t"]
    uris = [f"viking://m/{p}/{n}" for p, n in zip(parents, names, strict=True)]
    # one shape: as strings; two shapes (9 and 10): natural order, 9 before 10
    assert sibling_order(parents, uris, [None] * 5).order == [1, 0, 2, 3, 4]


def _by_search(
    store: EmbeddedStore, uri: str, monkeypatch: pytest.MonkeyPatch
) -> np.ndarray[Any, Any]:
    with monkeypatch.context() as m:
        m.setattr(emb_search, "_leaf_family_rows", lambda *a: None)
        return store._subtree_rows_uncached(store._snap, uri)


@pytest.mark.parametrize("seed", range(8))
def test_subtree_rows_through_links_equal_the_uri_search(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, _ = random_tree(seed)
    s = store._snap
    uris = [n.uri for n in store.iter_nodes()] + [f"{RES}/ghost", f"{RES}/d0", f"{RES}/nope"]
    linked = 0
    for uri in uris:
        want = _by_search(store, uri, monkeypatch)
        got = store._subtree_rows_uncached(s, uri)
        assert got.tolist() == want.tolist(), uri
        own = int(s.lookup([uri])[0])
        linked += own >= 0 and emb_snapshot._leaf_family_rows(s, uri, own) is not None
    assert linked > 0  # sessions, chunked files: the links answered some


def test_subtree_rows_where_the_links_cannot_prove_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows the parent links miss or mislead: a descendant whose parent is not stored, a
    child whose URI is not under its parent, a sibling that sorts between a directory and
    its children, a file with chunks and a sub-path, a directory with a subdirectory."""
    d = f"{RES}/d01"
    res = ContextType.RESOURCE
    nodes = [
        _node(RES, None, res, 0, False),
        _node(d, RES, res, 1, False),
        _node(f"{d}/a.md", d, res, 2, True),
        _node(f"{d}/b.md", d, res, 2, True),
        _node(f"{d}.txt", RES, res, 1, True),  # sorts between d01 and d01/...
        _node(f"{d}/lost/x.md", f"{d}/lost", res, 2, True),  # parent not stored
        _node(f"{RES}/e", RES, res, 1, False),
        _node(f"{RES}/e/a", f"{RES}/e", res, 2, True),
        _node(f"{RES}/e-x", f"{RES}/e", res, 2, True),  # a child not under its parent's URI
        _node(f"{RES}/f.md", RES, res, 1, False),
        _node(f"{RES}/f.md#chunk-0", f"{RES}/f.md", res, 2, True, chunk_index=0),
        _node(f"{RES}/f.md#chunk-1", f"{RES}/f.md", res, 2, True, chunk_index=1),
        _node(f"{RES}/f.md/x", f"{RES}/f.md/y", res, 2, True),  # unlinked, under a file
        _node(f"{RES}/g.md", RES, res, 1, False),
        _node(f"{RES}/g.md#chunk-0", f"{RES}/g.md", res, 2, True, chunk_index=0),
        _node(f"{RES}/g.md.bak", RES, res, 1, True),  # sorts between g.md# and g.md/
        _node(f"{RES}/h", RES, res, 1, False),
        _node(f"{RES}/h/sub", f"{RES}/h", res, 2, False),
        _node(f"{RES}/h/sub/z", f"{RES}/h/sub", res, 2, True),
        _node(f"{RES}/k", RES, res, 1, False),
        _node(f"{RES}/k/1", f"{RES}/k", res, 2, True),
        _node(f"{RES}/k/2", f"{RES}/k", res, 2, True),
    ]
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((len(nodes), DIM)).astype(np.float32)
    store = EmbeddedStore()
    order = rng.permutation(len(nodes))
    store.upsert([nodes[i] for i in order], vecs[order])
    s = store._snap
    proved = set()
    for n in nodes:
        want = _by_search(store, n.uri, monkeypatch)
        assert store._subtree_rows_uncached(s, n.uri).tolist() == want.tolist(), n.uri
        if emb_snapshot._leaf_family_rows(s, n.uri, int(s.lookup([n.uri])[0])) is not None:
            proved.add(n.uri)
    # only the directories whose links give the whole subtree answer through them
    assert proved == {f"{RES}/k", f"{RES}/h/sub"}
    assert sorted(store._subtree_rows_uncached(s, d).tolist()) == sorted(
        s.lookup([d, f"{d}/a.md", f"{d}/b.md", f"{d}/lost/x.md"]).tolist()
    )


class SearchLog:
    """The embedded store, recording the scope of every columnar search."""

    def __init__(self, inner: EmbeddedStore) -> None:
        self._inner = inner
        self.capabilities = inner.capabilities
        self.scopes: list[Scope] = []

    def search_columns(self, vector: Vector, scope: Scope, limit: int, **kw: Any) -> HitColumns:
        self.scopes.append(scope)
        return self._inner.search_columns(vector, scope, limit, **kw)

    def search_arrays(self, vector: Vector, scope: Scope, limit: int, **kw: Any) -> HitArrays:
        self.scopes.append(scope)
        return self._inner.search_arrays(vector, scope, limit, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)


def test_tree_context_asks_one_search_for_leaves_and_parents() -> None:
    """With room for every leaf, the inner parents' leaves and their own scores come from
    one search of their subtrees (no directories-only search)."""
    store, rng = random_tree(2)
    log = SearchLog(store)
    retriever = HierarchicalRetriever(log, RetrievalConfig())
    for _ in range(4):
        req = RetrievalRequest(
            query=TypedQuery(query="alpha"), vector=_query(rng), roots=[RES, MEM], limit=5
        )
        assert asyncio.run(retriever.retrieve(req)).matched_contexts
    inner = [sc for sc in log.scopes if sc.subtrees and set(sc.subtrees).isdisjoint({RES, MEM})]
    assert inner and all(not sc.leaves_only and not sc.non_leaves_only for sc in inner)
    assert not any(sc.non_leaves_only for sc in log.scopes)


@given(st.lists(st.tuples(st.sampled_from(["p", "q", "r", ""]), st.integers(0, 6)), min_size=1))
def test_sibling_order_of_chunks_only_is_by_parent_then_index(
    leaves: list[tuple[str, int]],
) -> None:
    """Every leaf a chunk (the vectorised path): families in order of first appearance,
    each by chunk index, equal indexes in input order."""
    parents = [p for p, _ in leaves]
    chunks: list[int | None] = [c for _, c in leaves]
    uris = [f"viking://r/{p}/f#{c}" for p, c in leaves]
    code = {p: i for i, p in enumerate(dict.fromkeys(parents))}
    want = sorted(range(len(leaves)), key=lambda i: (code[parents[i]], leaves[i][1]))
    layout = sibling_order(parents, uris, chunks)
    assert layout.order == want
    assert layout.sizes == [parents.count(p) for p in code]
