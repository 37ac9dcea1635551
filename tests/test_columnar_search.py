"""The columnar search path (``search_columns``, deferred candidate nodes) against the object
path it replaced, on random trees.

The retriever's tree context reads its pool, families and parents as
:class:`~treehop.stores.base.HitColumns` and builds a node only for a candidate it keeps. The
hits, their order and every score must be what ``store.search`` returns, and a ``find`` must
return exactly what it returns when the store answers with objects (any store without
``search_columns``: the default in ``stores/base.py``, the path Milvus and VikingDB take).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import RetrievalConfig
from treehop.filters import MetadataFilter, TagFilter
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, MatchedContext, Node, QueryResult, TypedQuery
from treehop.search_options import SearchOptions
from treehop.stores.base import (
    HitArrays,
    HitColumns,
    Scope,
    ScoredNode,
    StoreCapabilities,
    Vector,
    build_frozen,
    search_columns,
)
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import _name_key
from treehop.uri import ancestors_of

DIM = 16
RES = "viking://resources"
MEM = "viking://user/u1/memories"
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "tau"]


def _node(
    uri: str, parent: str | None, ctype: ContextType, level: int, leaf: bool, **kw: Any
) -> Node:
    return Node(
        uri=uri,
        parent_uri=parent,
        context_type=ctype,
        level=level,
        is_leaf=leaf,
        abstract=kw.pop("abstract", uri.rsplit("/", 1)[-1]),
        ancestors=ancestors_of(uri),
        **kw,
    )


def random_tree(seed: int) -> tuple[EmbeddedStore, np.random.Generator]:
    """Resources (folders of files, some chunked, natural-order names), orphans (their parent
    never stored) and memory sessions of turns, with tags, metadata and clustered vectors;
    then a rewrite of some rows and deletions (a leaf, a folder whose files stay), so that
    rows and parent links are not in insertion order and some parents are not stored."""
    rng = np.random.default_rng(seed)
    nodes: list[Node] = [
        _node(RES, None, ContextType.RESOURCE, 0, False),
        _node(MEM, None, ContextType.MEMORY, 0, False),
    ]
    centres: list[np.ndarray] = [rng.standard_normal(DIM), rng.standard_normal(DIM)]

    def add(n: Node, centre: np.ndarray, spread: float) -> np.ndarray:
        nodes.append(n)
        v = centre + spread * rng.standard_normal(DIM)
        centres.append(v)
        return v

    for d in range(int(rng.integers(2, 5))):
        du = f"{RES}/d{d}"
        dv = add(_node(du, RES, ContextType.RESOURCE, 1, False), rng.standard_normal(DIM), 0.0)
        for f in range(int(rng.integers(1, 9))):
            words = rng.choice(WORDS, size=3).tolist()
            tags = [f"auto:{w}" for w in words[:2]]
            fu = f"{du}/file-{int(rng.integers(0, 30))}-{f}.md"
            if rng.random() < 0.3:  # a chunked document
                fv = add(
                    _node(fu, du, ContextType.RESOURCE, 1, False, overview=" ".join(words)),
                    dv,
                    0.6,
                )
                for c in range(int(rng.integers(1, 6))):
                    add(
                        _node(
                            f"{fu}#chunk-{c}",
                            fu,
                            ContextType.RESOURCE,
                            2,
                            True,
                            chunk_index=c,
                            content=f"{' '.join(words)} chunk {c}",
                            tags=tags,
                        ),
                        fv,
                        0.5,
                    )
            else:
                add(
                    _node(
                        fu,
                        du,
                        ContextType.RESOURCE,
                        2,
                        True,
                        content=" ".join(words),
                        tags=tags,
                        metadata={"year": int(rng.integers(2000, 2004))},
                    ),
                    dv,
                    0.6,
                )
    for s in range(int(rng.integers(1, 4))):
        su = f"{MEM}/session-{s}"
        sv = add(_node(su, MEM, ContextType.MEMORY, 1, False), rng.standard_normal(DIM), 0.0)
        for t in range(int(rng.integers(2, 14))):
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 40))).tolist())
            add(
                _node(
                    f"{su}/turn-{t:05d}",
                    su,
                    ContextType.MEMORY,
                    2,
                    True,
                    content=text,
                    metadata={"kind": "turn"},
                ),
                sv,
                0.7,
            )
    # orphans: leaves whose parent directory is not stored
    ghost = f"{RES}/ghost"
    gv = rng.standard_normal(DIM)
    for g in range(int(rng.integers(1, 4))):
        add(
            _node(f"{ghost}/note-{g}.md", ghost, ContextType.RESOURCE, 2, True, content="alpha"),
            gv,
            0.5,
        )
    vecs = np.stack(centres).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = EmbeddedStore()
    order = rng.permutation(len(nodes))  # children may be written before their parents
    store.upsert([nodes[i] for i in order], vecs[order])
    # rewrite a few rows (new rows; parent links move) and delete one leaf
    redo = rng.choice(len(nodes), size=min(5, len(nodes)), replace=False)
    store.upsert([nodes[i] for i in redo], vecs[redo])
    leaves = [n.uri for n in nodes if n.is_leaf]
    store.delete([leaves[int(rng.integers(0, len(leaves)))]])
    # a deleted folder leaves its files in place, linked to no stored parent
    store.delete([f"{RES}/d0"])
    return store, rng


def _query(rng: np.random.Generator) -> Vector:
    q = rng.standard_normal(DIM).astype(np.float32)
    out: Vector = q / np.linalg.norm(q)
    return out


def _scopes(store: EmbeddedStore, rng: np.random.Generator) -> list[Scope]:
    dirs = [n.uri for n in store.iter_nodes() if not n.is_leaf]
    some = tuple(sorted(set(rng.choice(dirs, size=min(3, len(dirs)), replace=False).tolist())))
    leaf = next(n.uri for n in store.iter_nodes() if n.is_leaf)
    return [
        Scope(subtrees=(RES, MEM), traversal=True),
        Scope(subtrees=(RES,), leaves_only=True),
        Scope(subtrees=some, leaves_only=True),
        Scope(subtrees=some, non_leaves_only=True),
        Scope(parent_uri=some[0]),
        Scope(subtrees=(RES,), tags=TagFilter(any_of=("auto:alpha", "auto:beta")), traversal=True),
        Scope(
            subtrees=(RES,),
            metadata=MetadataFilter.parse({"op": "range", "field": "year", "gte": 2001}),
        ),
        Scope(subtrees=(RES, MEM), exclude_uris=frozenset({leaf})),
        Scope(),
    ]


COLUMN_FIELDS = (
    "uris",
    "parent_uris",
    "chunk_indexes",
    "leaves",
    "scores",
    "vector_scores",
    "lexical_scores",
    "matches",
)
"""The per-hit values of :class:`HitColumns` that two answers to one search must share."""


def _same(cols: HitColumns, hits: Sequence[ScoredNode]) -> None:
    ref = HitColumns.from_hits(hits)
    for name in COLUMN_FIELDS:
        assert getattr(cols, name) == getattr(ref, name), name
    assert cols.hits(range(len(cols))) == list(hits)


@pytest.mark.parametrize("seed", range(6))
def test_search_columns_equal_search(seed: int) -> None:
    store, rng = random_tree(seed)
    for scope in _scopes(store, rng):
        for limit in (1, 3, 50):
            q = _query(rng)
            store._node_cache.clear()  # cold rows: fields decoded from the URI blob
            _same(store.search_columns(q, scope, limit), store.search(q, scope, limit))
            # hot rows (their nodes built by the search above): fields read from the nodes
            _same(store.search_columns(q, scope, limit), store.search(q, scope, limit))
            # hybrid: BM25 joins the dense scores
            kw: dict[str, Any] = {"query_text": "alpha gamma", "dense_weight": 0.6}
            _same(store.search_columns(q, scope, limit, **kw), store.search(q, scope, limit, **kw))


class ObjectsOnly:
    """The store behind the :class:`~treehop.stores.base.VectorStore` protocol only: no
    ``search_columns``, so the retriever takes the default in ``stores/base.py`` (hits built
    by ``search`` and wrapped), the path of every remote store."""

    def __init__(self, inner: EmbeddedStore) -> None:
        self._inner = inner
        self.capabilities = StoreCapabilities(hybrid=True, concurrent_reads=False)

    def __getattr__(self, name: str) -> Any:
        if name == "search_columns":
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)


def _outcome(r: QueryResult) -> list[tuple[Any, ...]]:
    return [
        (
            m.uri,
            m.score,
            m.own_score,
            m.vector_score,
            m.found_by,
            m.found_via,
            [(c.uri, c.score, c.position, c.carried) for c in m.collapsed],
        )
        for m in r.matched_contexts
    ]


@pytest.mark.parametrize("seed", range(8))
def test_find_equals_the_object_path(seed: int) -> None:
    store, rng = random_tree(seed)
    cfg = RetrievalConfig(
        context_pool=int(rng.integers(3, 12)), max_children_per_dir=int(rng.integers(2, 8))
    )
    columnar = HierarchicalRetriever(store, cfg)
    objects = HierarchicalRetriever(ObjectsOnly(store), cfg)  # type: ignore[arg-type]
    assert hasattr(store, "search_columns") and not hasattr(objects.store, "search_columns")
    for _ in range(6):
        q = _query(rng)
        for include_dirs in (None, False, True):
            req = RetrievalRequest(
                query=TypedQuery(query="alpha turn"),
                vector=q,
                roots=[RES, MEM],
                limit=int(rng.integers(2, 9)),
                dense_weight=float(rng.choice([1.0, 0.7])),
                include_directories=include_dirs,
            )
            a = asyncio.run(columnar.retrieve(req))
            b = asyncio.run(objects.retrieve(req))
            assert _outcome(a) == _outcome(b)
            assert a.nodes_scored == b.nodes_scored
            for m in a.matched_contexts:  # built without validation: equal to a validated one
                assert MatchedContext.model_validate_json(m.model_dump_json()) == m
            assert a.matched_contexts, "a random tree always has hits"


@pytest.mark.parametrize("seed", range(8))
def test_find_scores_equal_the_tree_context_formula(seed: int) -> None:
    """An oracle independent of the retriever's code: every returned leaf scores
    ``(own + wN*N + wP*P + wS*S) / (1 + wN + wP + wS)`` with ``N`` the mean own score of its
    previous and next sibling leaves (natural order), ``S`` the best sibling's, ``P`` its
    stored non-root parent's (else 0), all computed here from the stored vectors."""
    store, rng = random_tree(seed)
    cfg = RetrievalConfig(context_pool=int(rng.integers(3, 12)))
    nodes = list(store.iter_nodes())
    by_uri = {n.uri: n for n in nodes}
    vecs = store.get_vectors([n.uri for n in nodes]).astype(np.float64)
    siblings: dict[str, list[Node]] = {}
    for n in nodes:
        if n.is_leaf and n.parent_uri:
            siblings.setdefault(n.parent_uri, []).append(n)
    for kids in siblings.values():
        kids.sort(
            key=lambda n: (
                (n.chunk_index, ()) if n.chunk_index is not None else _reference_key(n.uri)
            )
        )
    w = cfg.context_neighbour_weight, cfg.context_parent_weight, cfg.context_sibling_weight
    retriever = HierarchicalRetriever(store, cfg)
    for _ in range(6):
        q = _query(rng)
        own = dict(zip(by_uri, (vecs @ q.astype(np.float64)).tolist(), strict=True))
        req = RetrievalRequest(
            query=TypedQuery(query="q"),
            vector=q,
            roots=[RES, MEM],
            limit=int(rng.integers(2, 9)),
            dense_weight=1.0,
            include_directories=False,
        )
        got = asyncio.run(retriever.retrieve(req)).matched_contexts
        assert got
        for m in got:
            kids = siblings[m.parent_uri or ""]
            at = [k.uri for k in kids].index(m.uri)
            near = [own[k.uri] for k in kids[max(at - 1, 0) : at + 2] if k.uri != m.uri]
            n_mean = sum(near) / len(near) if near else own[m.uri]
            best = max(own[k.uri] for k in kids)
            parent = m.parent_uri
            p = own[parent] if parent in by_uri and parent not in (RES, MEM) else 0.0
            want = (own[m.uri] + w[0] * n_mean + w[1] * p + w[2] * best) / (1 + sum(w))
            assert m.score == pytest.approx(want, abs=1e-5)
            assert m.own_score == pytest.approx(own[m.uri], abs=1e-5)
        scores = [m.score for m in got]
        assert scores == sorted(scores, reverse=True)


def test_default_wraps_hits_of_stores_without_columns() -> None:
    store, rng = random_tree(3)
    q = _query(rng)
    scope = Scope(subtrees=(RES,), leaves_only=True)
    via_default = search_columns(ObjectsOnly(store), q, scope, 7)  # type: ignore[arg-type]
    _same(via_default, store.search(q, scope, 7))


_TOKEN = re.compile(r"(\d+)")


def _reference_key(uri: str) -> tuple[int, tuple[int | str, ...]]:
    """The natural-order key as first written: every split part tested with ``isdigit``."""
    name = uri.rsplit("/", 1)[-1]
    return (-1, tuple(int(t) if t.isdigit() else t for t in _TOKEN.split(name)))


@given(st.text(alphabet="ab-_./#0123456789", max_size=30))
def test_name_key_equals_reference(uri: str) -> None:
    assert _name_key.__wrapped__(uri) == _reference_key(uri)


def test_search_in_a_few_small_subtrees_of_a_large_index() -> None:
    """Rows of a few small subtrees are merged by sorting them, not by a mask over every row
    (the tree context's parents): the hits are exactly the nodes the scope admits."""
    nodes = [_node(RES, None, ContextType.RESOURCE, 0, False)]
    for d in range(40):
        du = f"{RES}/d{d}"
        nodes.append(_node(du, RES, ContextType.RESOURCE, 1, False))
        nodes += [
            _node(f"{du}/f{f}.md", du, ContextType.RESOURCE, 2, True, content="x")
            for f in range(50)
        ]
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((len(nodes), DIM)).astype(np.float32)
    store = EmbeddedStore()
    store.upsert(nodes, vecs / np.linalg.norm(vecs, axis=1, keepdims=True))
    scope = Scope(subtrees=(f"{RES}/d7", f"{RES}/d1", f"{RES}/d7/f3.md"))
    want = {n.uri for n in nodes if scope.admits(n)}
    got = store.search_columns(_query(rng), scope, 1000)
    assert set(got.uris) == want and len(got.uris) == len(want) == 102


class GlobalSearchCounter:
    """The embedded store, counting the searches of the roots' whole subtrees whichever
    method asks them: the global step's (``global_searches``) and the tree context pool's
    (leaves only, ``pool_searches``)."""

    def __init__(self, inner: EmbeddedStore, roots: Sequence[str]) -> None:
        self._inner = inner
        self._roots = tuple(roots)
        self.capabilities = inner.capabilities
        self.global_searches = self.pool_searches = 0

    def _count(self, scope: Scope) -> None:
        if scope.subtrees != self._roots or scope.parent_uri is not None:
            return
        if scope.leaves_only:
            self.pool_searches += 1
        elif not scope.non_leaves_only:
            self.global_searches += 1

    def search(self, vector: Vector, scope: Scope, limit: int, **kw: Any) -> list[ScoredNode]:
        self._count(scope)
        return self._inner.search(vector, scope, limit, **kw)

    def search_columns(self, vector: Vector, scope: Scope, limit: int, **kw: Any) -> HitColumns:
        self._count(scope)
        return self._inner.search_columns(vector, scope, limit, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __len__(self) -> int:
        return len(self._inner)


@pytest.mark.parametrize("seed", range(8))
def test_global_answer_kept_for_deeper_step_and_pool(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first global search asks for ``DEEPER`` times the first step's nodes; the first
    deeper step and the tree context's pool read its answer instead of searching again. The
    old algorithm (``PREFETCH = 1``: every global step searches the store; the pool a search
    of its own, as written here) must give the same results, scores, provenance and nodes
    scored, on either score-propagation regime, with and without a filter; and the kept
    answer must have saved searches."""
    import treehop.hierarchical_retriever as hr

    async def searched_pool(
        self: HierarchicalRetriever, q: Any, n: int
    ) -> tuple[list[str], list[str | None]]:
        scope = replace(q.scope, subtrees=tuple(q.req.roots), leaves_only=True)
        pool = await self._search_columns(q, scope, n)
        return pool.uris, pool.parent_uris

    kept_pool = HierarchicalRetriever._pool
    store, rng = random_tree(seed)
    roots = [RES, MEM]
    counted = GlobalSearchCounter(store, roots)
    saved_global = saved_pool = 0
    for _ in range(8):
        cfg = RetrievalConfig(
            global_search_topk=int(rng.choice([1, 2, 3, 8, 12])),
            score_propagation_alpha=float(rng.choice([1.0, 0.7])),
            context_pool=int(rng.integers(3, 12)),
        )
        retriever = HierarchicalRetriever(counted, cfg)  # type: ignore[arg-type]
        req = RetrievalRequest(
            query=TypedQuery(query="alpha turn"),
            vector=_query(rng),
            roots=roots,
            limit=int(rng.integers(2, 9)),
            dense_weight=float(rng.choice([1.0, 0.7])),
            include_directories=[None, False, True][int(rng.integers(0, 3))],
            tags=TagFilter(any_of=("auto:alpha",)) if rng.random() < 0.3 else TagFilter(),
        )
        out = []
        for prefetch, pool in ((1, searched_pool), (hr.DEEPER, kept_pool)):
            monkeypatch.setattr(hr, "PREFETCH", prefetch)
            monkeypatch.setattr(HierarchicalRetriever, "_pool", pool)
            counted.global_searches = counted.pool_searches = 0
            store._node_cache.clear()
            res = asyncio.run(retriever.retrieve(req))
            out.append((res, counted.global_searches, counted.pool_searches))
        (old, old_g, old_p), (new, new_g, new_p) = out
        assert _outcome(new) == _outcome(old)
        assert new.nodes_scored == old.nodes_scored
        assert new.starting_points == old.starting_points
        assert new.stop_reason == old.stop_reason
        assert new_g <= old_g and new_p <= old_p
        saved_global += old_g - new_g
        saved_pool += old_p - new_p
    assert saved_global > 0, "some query went deeper and read the kept answer"
    assert saved_pool > 0, "some pool was read from the kept answer"


@pytest.mark.parametrize("cls", [ScoredNode, HitColumns, HitArrays, Scope, SearchOptions])
def test_build_frozen_builds_what_the_constructor_does(cls: type[Any]) -> None:
    """The retriever's hits, columns and scopes are built without the frozen dataclass's
    ``__init__`` (:func:`build_frozen`): only valid while the class sets nothing up in a
    ``__post_init__`` and keeps its fields in ``__dict__``."""
    from dataclasses import fields

    assert not hasattr(cls, "__post_init__") and "__slots__" not in cls.__dict__
    values = {f.name: (f"v-{f.name}",) for f in fields(cls)}  # (hashable, distinct)
    fast, slow = build_frozen(cls, **values), cls(**values)
    assert type(fast) is cls and fast == slow and repr(fast) == repr(slow)
    assert hash(fast) == hash(slow) and vars(fast) == vars(slow)
    with pytest.raises(AttributeError):
        fast.__setattr__(fields(cls)[0].name, None)


def test_scope_replaced_is_dataclasses_replace() -> None:
    scope = Scope(subtrees=("viking://resources/a",), tags=TagFilter(("x",)), traversal=True)
    for changes in (
        {"subtrees": ("viking://resources/b",)},
        {"parent_uri": "viking://resources/a", "leaves_only": True},
        {"exclude_uris": frozenset({"viking://resources/a/f"}), "non_leaves_only": True},
        {},
    ):
        got = scope.replaced(**changes)
        assert got == replace(scope, **changes) and hash(got) == hash(replace(scope, **changes))
        assert got is not scope and scope.subtrees == ("viking://resources/a",)
    with pytest.raises(TypeError, match="leaf_only"):
        scope.replaced(leaf_only=True)


def test_result_models_built_by_their_validator_equal_init() -> None:
    """The retriever builds each result with the model's validator (no ``__init__``): the
    same model, fields set and validation included."""
    from treehop.hierarchical_retriever import _validate_chunk, _validate_matched
    from treehop.models import ChunkContext

    chunk = {"uri": "viking://resources/a#chunk-2", "chunk_index": 2, "score": 0.5}
    fields: dict[str, Any] = {
        "uri": "viking://resources/a",
        "context_type": ContextType.RESOURCE,
        "is_leaf": True,
        "abstract": "a",
        "score": 0.75,
        "tags": ["t"],
        "metadata": {"k": 1},
        "matched_queries": [TypedQuery(query="q")],
        "collapsed": [_validate_chunk(chunk)],
    }
    got, want = _validate_matched(fields), MatchedContext(**fields)
    assert type(got) is MatchedContext and got == want
    assert got.model_fields_set == want.model_fields_set and got.collapsed[0] == ChunkContext(
        **chunk
    )
    with pytest.raises(ValueError):
        _validate_matched({**fields, "score": "high"})  # validated: not a number


@pytest.mark.parametrize("seed", range(6))
def test_few_columns_equal_the_general_path(
    seed: int, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few hits' columns on Python ints (``_few_parents``: a global step's ~40 hits) equal
    the general path's (``unique_inverse`` and one gather with the parents), every field and
    the parent codes to the dtype, on saved rows (the URI blob), rows written since and
    unlinked parents (orphans, roots), with each parent URI cold (not kept) and kept."""
    from treehop.stores.embedded import search_paths

    mem, rng = random_tree(seed)
    nodes = list(mem.iter_nodes())
    vecs = np.asarray(mem.get_vectors([n.uri for n in nodes]), dtype=np.float32)
    store = EmbeddedStore(tmp_path / "idx")
    store.upsert(nodes, vecs)
    store.save()
    store.close()
    store = EmbeddedStore(tmp_path / "idx")
    late = [n for n in nodes if n.is_leaf][: 1 + seed % 3]  # rewritten: tail rows
    store.upsert(late, vecs[[nodes.index(n) for n in late]])
    taken = []
    few = search_paths._few_parents

    def counted(*a: Any) -> Any:
        out = few(*a)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(search_paths, "_few_parents", counted)

    def answer(on: bool, q: Vector, scope: Scope, limit: int, kw: dict[str, Any]) -> Any:
        monkeypatch.setattr(search_paths, "FEW_COLUMNS", on)
        store._snap.cache.pop(("dir_uris",), None)
        cold = store.search_columns(q, scope, limit, **kw)
        kept = store.search_columns(q, scope, limit, **kw)
        codes = [c.parent_codes for c in (cold, kept)]
        return (
            [[getattr(c, f) for f in COLUMN_FIELDS] for c in (cold, kept)],
            [None if a is None else (a.tolist(), a.dtype) for a in codes],
            [c.hits(range(len(c))) for c in (cold, kept)],
        )

    for scope in _scopes(store, rng):
        for limit in (1, 3, 40, 64, 65):
            q = _query(rng)
            for kw in ({}, {"query_text": "alpha gamma", "dense_weight": 0.6}):
                assert answer(False, q, scope, limit, kw) == answer(True, q, scope, limit, kw)
    assert any(taken) and not all(taken)  # both: the few path and its fallback
