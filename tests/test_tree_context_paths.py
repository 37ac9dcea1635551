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

from test_columnar_search import DIM, MEM, RES, _node, _outcome, _query, random_tree
from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, TypedQuery
from treehop.stores.base import HitArrays, HitColumns, Scope, Vector
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded import snapshot as emb_snapshot
from treehop.tree_scoring import (
    ContextWeights,
    SiblingLayout,
    context_columns,
    order_key,
    sibling_order,
)

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


_SCORE = st.sampled_from([0.0, -0.0, 0.5, -0.25, 1.0]) | st.floats(-1.0, 1.0, width=32)


_PATH = st.none() | st.sampled_from([("A",), ("A", "b"), ("A", "c"), ("D",), ("A", "b", "x")])


@given(
    st.lists(
        st.tuples(_SCORE, st.booleans(), _PATH, st.sampled_from(["p", "p", "q", "r"])),
        min_size=1,
        max_size=30,
    ),
    st.randoms(use_true_random=False),
    st.tuples(st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.floats(0.0, 2.0)),
    st.none() | st.floats(-1.0, 1.0),
    st.booleans(),
    st.sampled_from(["none", "paths", "codes"]),
)
def test_one_family_context_equals_the_general_path(
    leaves: list[tuple[float, bool, tuple[str, ...] | None, str]],
    rnd: Any,
    w: tuple[float, float, float],
    parent_score: float | None,
    ask_all: bool,
    sectioned: str,
) -> None:
    """Leaves laid out (one family, the tree context's common case, or a few; computed in
    sibling order with slices) give the very floats, to the bit, that the keyed path gives
    from order keys: picked leaves, own and final scores and every evidence term; with
    heading paths read lazily or as codes, each asked for the same leaves in the same
    order."""
    n = len(leaves)
    parent_of = [f for _, _, _, f in leaves]
    rank_of = list(range(n))
    rnd.shuffle(rank_of)  # each leaf's place among its siblings
    # the layout: families in order of first appearance, each in sibling order
    families = list(dict.fromkeys(parent_of))
    order = [
        i for f in families for i in sorted(range(n), key=rank_of.__getitem__) if parent_of[i] == f
    ]
    sizes = [parent_of.count(f) for f in families]
    scores = [s for s, _, _, _ in leaves]
    keep = None if ask_all else [k for _, k, _, _ in leaves]
    weights = ContextWeights(*w)
    parents = {} if parent_score is None else {"p": parent_score, "r": -parent_score / 2}
    paths = [p for _, _, p, _ in leaves]
    table = sorted({p for p in paths if p is not None})
    codes = np.array([-1 if p is None else table.index(p) for p in paths], dtype=np.int64)

    def run(laid: bool) -> tuple[Any, list[Any]]:
        asked: list[Any] = []

        def section(i: int) -> tuple[str, ...] | None:
            asked.append(i)
            return paths[i]

        def section_codes(js: Any) -> tuple[Any, list[tuple[str, ...]]]:
            asked.append(js.tolist())
            return codes[js], table

        keys = None if laid else [(rank_of[i], ()) for i in range(n)]
        got = context_columns(
            parent_of,
            keys,
            scores,
            parents,
            weights,
            keep,
            section if sectioned == "paths" else None,
            laid_out=SiblingLayout(order, sizes) if laid else None,
            section_codes=section_codes if sectioned == "codes" else None,
        )
        return got, asked

    fast, fast_asked = run(True)
    general, general_asked = run(False)
    assert fast_asked == general_asked

    def bits(xs: list[float]) -> bytes:
        return np.asarray(xs, dtype=np.float64).tobytes()

    assert fast.picked == general.picked
    for a, b in (
        (fast.own, general.own),
        (fast.final, general.final),
        (fast.neighbours, general.neighbours),
        (fast.parent, general.parent),
        (fast.best_sibling, general.best_sibling),
    ):
        assert bits(a) == bits(b)


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


@pytest.mark.parametrize("n", [1, 2, 3, 7, 50])
@pytest.mark.parametrize("ask", ["all", "some", "none", "ends"])
def test_one_plain_family_equals_the_general_path(n: int, ask: str) -> None:
    """One family without sections (a folder of files: most finds' tree context) laid out
    gives the keyed path's floats to the bit: picked leaves, own and final scores, and the
    evidence terms, which it builds only when they are read."""
    rnd = np.random.default_rng(n)
    scores = rnd.uniform(-1, 1, n).astype(np.float32).tolist()
    scores[0] = -0.0  # (an end's ``other + 0.0`` turns a -0.0 neighbour into 0.0)
    if n > 2:
        scores[2] = 0.0
    rank_of = rnd.permutation(n).tolist()
    order = sorted(range(n), key=rank_of.__getitem__)
    parent_of = ["viking://r/p"] * n
    keep: list[bool] | None = {
        "all": None,
        "some": (rnd.uniform(0, 1, n) < 0.4).tolist(),
        "none": [False] * n,
        "ends": [i in (order[0], order[-1]) for i in range(n)],
    }[ask]
    weights = ContextWeights(0.7, 0.3, 0.2)
    parents = {"viking://r/p": 0.41}

    def run(laid: bool) -> Any:
        return context_columns(
            parent_of,
            None if laid else [(rank_of[i], ()) for i in range(n)],
            scores,
            parents,
            weights,
            keep,
            laid_out=SiblingLayout(order, [n]) if laid else None,
        )

    fast, general = run(True), run(False)
    assert not fast.terms  # (built at the first read)

    def bits(xs: list[float]) -> bytes:
        return np.asarray(xs, dtype=np.float64).tobytes()

    assert fast.picked == general.picked
    for name in ("own", "final", "neighbours", "parent", "best_sibling"):
        assert bits(getattr(fast, name)) == bits(getattr(general, name)), name


def folder_tree(seed: int) -> tuple[EmbeddedStore, np.random.Generator]:
    """Folders of many files and sessions of many turns, each clustered round its own
    centre (a query near one of them finds its best leaves in one folder), with tags, a
    chunked file in one folder and natural-order names."""
    rng = np.random.default_rng(seed)
    nodes = [
        _node(RES, None, ContextType.RESOURCE, 0, False),
        _node(MEM, None, ContextType.MEMORY, 0, False),
    ]
    vecs = [rng.standard_normal(DIM), rng.standard_normal(DIM)]
    words = ["alpha", "beta", "gamma", "delta"]
    for d in range(3):
        du, centre = f"{RES}/d{d}", rng.standard_normal(DIM)
        nodes.append(_node(du, RES, ContextType.RESOURCE, 1, False))
        vecs.append(centre)
        for f in range(int(rng.integers(15, 40))):
            fu = f"{du}/file-{f}.md"
            tags = [f"auto:{words[int(rng.integers(0, 4))]}"]
            if d == 2 and f == 0:  # (a chunked file: its folder is not all files)
                nodes.append(_node(fu, du, ContextType.RESOURCE, 1, False))
                vecs.append(centre)
                for c in range(3):
                    nodes.append(
                        _node(
                            f"{fu}#chunk-{c}",
                            fu,
                            ContextType.RESOURCE,
                            2,
                            True,
                            chunk_index=c,
                            content="alpha chunk",
                            tags=tags,
                        )
                    )
                    vecs.append(centre + 0.4 * rng.standard_normal(DIM))
                continue
            nodes.append(
                _node(fu, du, ContextType.RESOURCE, 2, True, content="alpha file", tags=tags)
            )
            vecs.append(centre + 0.4 * rng.standard_normal(DIM))
    for t in range(2):
        su, centre = f"{MEM}/session-{t}", rng.standard_normal(DIM)
        nodes.append(_node(su, MEM, ContextType.MEMORY, 1, False))
        vecs.append(centre)
        for k in range(int(rng.integers(10, 30))):
            text = " ".join(rng.choice(words, size=int(rng.integers(1, 20))).tolist())
            nodes.append(_node(f"{su}/turn-{k:05d}", su, ContextType.MEMORY, 2, True, content=text))
            vecs.append(centre + 0.4 * rng.standard_normal(DIM))
    arr = np.stack(vecs).astype(np.float32)
    arr /= np.linalg.norm(arr, axis=1, keepdims=True)
    store = EmbeddedStore()
    order = rng.permutation(len(nodes))
    store.upsert([nodes[i] for i in order], arr[order])
    return store, rng


@pytest.mark.parametrize("seed", range(6))
def test_folder_family_equals_the_columns_path(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A family that is one folder of files (or one session of turns) read as arrays
    (``_FolderFamily``: no columns, picked leaves placed on the search's ``load``) gives the
    finds of the columns path it stands in for: the same hits, scores, own and dense scores,
    provenance and nodes, with and without a filter (the filter flags), over documents and
    memory sessions (the session evidence), with directories or not; and the folder path
    is taken."""
    from treehop import hierarchical_retriever as hr
    from treehop.filters import TagFilter

    store, rng = folder_tree(seed)
    leaves = [n.uri for n in store.iter_nodes() if n.is_leaf]
    taken = 0
    score = hr._FolderFamily.score

    def counted(self: Any, *args: Any) -> Any:
        nonlocal taken
        taken += 1
        return score(self, *args)

    monkeypatch.setattr(hr._FolderFamily, "score", counted)
    for k in range(10):
        cfg = RetrievalConfig(
            context_pool=int(rng.integers(1, 12)), max_children_per_dir=int(rng.integers(4, 40))
        )
        retriever = HierarchicalRetriever(store, cfg)
        # (most queries near one stored leaf: its folder is then the family)
        q = _query(rng)
        if k % 3:
            near = store.get_vectors([leaves[int(rng.integers(0, len(leaves)))]])[0]
            q = (near + 0.2 * q).astype(np.float32)
            q /= np.linalg.norm(q)
        for include_dirs, roots, tags in (
            (None, [RES, MEM], TagFilter()),
            (False, [MEM], TagFilter()),
            (True, [RES], TagFilter()),
            (False, [RES, MEM], TagFilter(any_of=["auto:alpha", "auto:beta"])),
        ):
            req = RetrievalRequest(
                query=TypedQuery(query="alpha turn"),
                vector=q,
                roots=roots,
                limit=int(rng.integers(2, 9)),
                dense_weight=float(rng.choice([1.0, 0.7])),
                include_directories=include_dirs,
                tags=tags,
            )
            got = []
            for on in (False, True):
                monkeypatch.setattr(hr, "FOLDER_FAMILY", on)
                r = asyncio.run(retriever.retrieve(req))
                nodes = [m.model_dump_json() for m in r.matched_contexts]
                got.append((_outcome(r), r.nodes_scored, nodes))
            assert got[0] == got[1]
    assert taken, "some family is one folder of files"
