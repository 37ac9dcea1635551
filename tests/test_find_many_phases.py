"""``find_many`` in phases: every query's descent, then every tree context with the family
searches of all queries in one store call (``search_arrays_many``), then every conclusion.

Each answer must be the one a query gets alone: from the store, the same hits, order and
scores (to the bit) as ``search_arrays``; from the retriever, the same results as
``retrieve``; from the client, the same lists as ``find``. The batched path must run where
it applies (spied, never replaced) and be left where it does not (root parents, scopes the
graph answers, more candidates than asked)."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from test_columnar_search import COLUMN_FIELDS, DIM, MEM, RES, _query, _scopes, random_tree
from test_family_arrays import _sectioned_store
from test_find_many import R, _chunked_graph_store, _listing
from treehop import RetrievalConfig, Treehop
from treehop.errors import InvalidQueryError
from treehop.filters import TagFilter
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.stores.base import HitArrays, Scope
from treehop.stores.embedded import EmbeddedStore, family_batch

from treehop_test_doubles import BagOfWordsEmbedder


def _arrays_fields(arr: HitArrays) -> tuple[Any, ...]:
    """Everything a reader of ``HitArrays`` sees: the arrays (scores as bytes: equal to the
    bit), the flags, and what its closures give for every position and parent code."""
    every = np.arange(len(arr), dtype=np.int64)
    cols = arr.columns(every)
    codes = arr.parent_codes
    heads = arr.heading_codes(every) if len(arr) else None
    return (
        arr.leaves.tolist(),
        arr.scores.dtype,
        arr.scores.tobytes(),
        arr.chunks.tolist(),
        None if codes is None else codes.tolist(),
        None if codes is None else arr.parent_uris(codes),
        arr.exact,
        arr.uris(every),
        tuple(getattr(cols, name) for name in COLUMN_FIELDS),
        cols.exact,
        [n.uri for n in cols.load(range(len(cols)))],
        None if heads is None else (heads[0].tolist(), list(heads[1])),
        None if arr.among is None else arr.among(every, set(arr.uris(every)[::2])).tolist(),
    )


def _family_scopes(store: EmbeddedStore, rng: np.random.Generator) -> list[Scope]:
    """Scopes as the tree context asks them (the subtrees of a few parents: leaves and
    directories together), with and without a filter, and the kinds of :func:`_scopes`."""
    parents = sorted({n.parent_uri for n in store.iter_nodes() if n.is_leaf and n.parent_uri})
    picked = [
        tuple(
            sorted({str(p) for p in rng.choice(parents, size=min(k, len(parents)), replace=False)})
        )
        for k in (1, 2, 3)
    ]
    return [
        *(Scope(subtrees=p, traversal=True) for p in picked),
        Scope(subtrees=picked[1], tags=TagFilter(any_of=("auto:alpha",)), traversal=True),
        Scope(subtrees=picked[0], leaves_only=True),
        Scope(subtrees=("viking://resources/nowhere",)),  # nothing in scope
        *_scopes(store, rng),
    ]


def _spy_batched(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of small searches each batched scoring pass takes (the real one runs)."""
    sizes: list[int] = []
    real = family_batch._scored

    def spy(paths: Any, s: Any, small: dict[int, Any], lexical: Any) -> Any:
        sizes.append(len(small))
        return real(paths, s, small, lexical)

    monkeypatch.setattr(family_batch, "_scored", spy)
    return sizes


@pytest.mark.parametrize("seed", range(6))
def test_search_arrays_many_equals_search_arrays(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every answer of a mixed batch (scopes of every kind, dense and hybrid, no text, an
    empty text, limits below and above the candidates, a repeated query) holds what
    ``search_arrays`` gives the query alone, field by field, scores to the bit."""
    store, rng = random_tree(seed)
    sizes = _spy_batched(monkeypatch)
    scopes = _family_scopes(store, rng)
    texts = [None, "alpha beta", "", "gamma omega tau"]
    weights = [1.0, 0.6, 0.2, 0.85]
    limits = [500, 3, 40, 1, 120]
    qs, ss, ls, ts, ws = [], [], [], [], []
    for i in range(3 * len(scopes)):
        qs.append(_query(rng))
        ss.append(scopes[i % len(scopes)])
        ls.append(limits[i % len(limits)])
        ts.append(texts[i % len(texts)])
        ws.append(weights[(i // 2) % len(weights)])
    for j in (0, 4):  # a repeated query
        qs.append(qs[j])
        ss.append(ss[j])
        ls.append(ls[j])
        ts.append(ts[j])
        ws.append(ws[j])
    got = store.search_arrays_many(qs, ss, ls, query_texts=ts, dense_weights=ws)
    assert len(got) == len(qs)
    for q, scope, limit, text, weight, arr in zip(qs, ss, ls, ts, ws, got, strict=True):
        alone = store.search_arrays(q, scope, limit, query_text=text, dense_weight=weight)
        assert _arrays_fields(arr) == _arrays_fields(alone), (scope, limit, text, weight)
    assert len(sizes) == 1 and sizes[0] >= 3  # one batched pass took the small searches


def test_search_arrays_many_of_one_and_of_an_empty_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of one is that query's answer; an empty store answers every query empty."""
    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)  # (~1,250 rows: a folder's subtree is a small search)
    sizes = _spy_batched(monkeypatch)
    q = emb.embed(["alpha chunk3 kappa"])[0]
    scope = Scope(subtrees=(f"{RES}/d3",), traversal=True)
    args: dict[str, Any] = {"query_texts": ["alpha chunk3"], "dense_weights": [0.5]}
    (one,) = store.search_arrays_many([q], [scope], [100], **args)
    alone = store.search_arrays(q, scope, 100, query_text="alpha chunk3", dense_weight=0.5)
    assert _arrays_fields(one) == _arrays_fields(alone) and len(one) > 40
    assert sizes == [1]
    empty = EmbeddedStore()
    got = empty.search_arrays_many(
        [q, q], [scope, Scope()], [5, 5], query_texts=[None, "x"], dense_weights=[1.0, 0.5]
    )
    assert [len(a) for a in got] == [0, 0]


def test_search_arrays_many_checks_every_query_before_searching(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bad query anywhere in the batch (dimension, limit, weight, a missing entry) is an
    ``InvalidQueryError`` before any query is searched."""
    store = _sectioned_store()
    searched: list[int] = []
    real = family_batch._small_search

    def spy(*a: Any, **kw: Any) -> Any:
        searched.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(family_batch, "_small_search", spy)
    rng = np.random.default_rng(2)
    good = _query(rng)
    scope = Scope(subtrees=(RES,))
    bad_batches: list[tuple[list[Any], list[int], list[float]]] = [
        ([good, np.ones(DIM + 1, np.float32)], [5, 5], [1.0, 1.0]),
        ([good, good], [5, 0], [1.0, 1.0]),
        ([good, good], [5, 5], [1.0, 0.1]),
    ]
    for vectors, limits, weights in bad_batches:
        with pytest.raises(InvalidQueryError):
            store.search_arrays_many(
                vectors, [scope] * 2, limits, query_texts=[None, None], dense_weights=weights
            )
    with pytest.raises(InvalidQueryError):
        store.search_arrays_many(
            [good, good], [scope], [5, 5], query_texts=[None] * 2, dense_weights=[1.0] * 2
        )
    assert searched == []


def _requests(rng: np.random.Generator) -> list[RetrievalRequest]:
    """A mixed batch: dense and hybrid, limits, a tag filter, roots at the top (families
    below inner parents) and at a folder (its files' parent is a root: no array search),
    directories included, a question, and a repeated request."""
    tags = TagFilter(any_of=("auto:alpha", "auto:beta"))
    specs: list[dict[str, Any]] = [
        {},
        {"dense_weight": 0.6},
        {"limit": 3, "tags": tags},
        {"roots": [f"{RES}/d0"]},
        {"include_directories": True, "dense_weight": 0.8},
        {"query": "what is alpha beta?"},
        {"limit": 8},
        {"roots": [RES]},
    ]
    out = []
    for spec in specs:
        out.append(
            RetrievalRequest(
                query=TypedQuery(query=spec.pop("query", "alpha beta gamma")),
                vector=_query(rng),
                roots=spec.pop("roots", [RES, MEM]),
                limit=spec.pop("limit", 5),
                **spec,
            )
        )
    out.append(out[1])
    return out


def _results(results: list[Any]) -> list[list[tuple[Any, ...]]]:
    return [
        [
            (
                m.uri,
                m.score,
                m.own_score,
                m.vector_score,
                m.found_by,
                m.found_via,
                m.hop_tag,
                [(c.uri, c.score, c.position) for c in m.collapsed],
            )
            for m in r.matched_contexts
        ]
        + [(r.rounds, r.nodes_scored, r.stop_reason, r.searched_directories)]
        for r in results
    ]


@pytest.fixture
def family_batches(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every batched family search (``EmbeddedStore.search_arrays_many``) made
    while the test runs, in order."""
    calls: list[int] = []
    real = EmbeddedStore.search_arrays_many

    def spy(self: EmbeddedStore, vectors: Any, *a: Any, **kw: Any) -> Any:
        calls.append(len(vectors))
        return real(self, vectors, *a, **kw)

    monkeypatch.setattr(EmbeddedStore, "search_arrays_many", spy)
    return calls


@pytest.mark.parametrize("seed", range(8))
def test_retrieve_many_in_phases_equals_retrieve(seed: int, family_batches: list[int]) -> None:
    """Each request's result from the phased batch is the one ``retrieve`` gives it alone
    (hits, scores, provenance, collapsed chunks, rounds, nodes scored); the family
    searches of the requests with inner parents went through one batch call."""
    store = random_tree(seed)[0] if seed % 2 else _sectioned_store()
    hops: dict[str, Any] = {"tag_hop_trigger": "always", "tag_evidence_weight": 0.3}
    config = RetrievalConfig(**hops) if seed % 4 == 1 else RetrievalConfig()
    retriever = HierarchicalRetriever(store, config)
    reqs = _requests(np.random.default_rng(seed))
    many = asyncio.run(retriever.retrieve_many(reqs))
    alone = [asyncio.run(retriever.retrieve(r)) for r in reqs]
    assert _results(many) == _results(alone)
    assert len(family_batches) == 1 and 2 <= family_batches[0] < len(
        reqs
    )  # (a root-parent family: alone)


def test_a_batch_of_one_and_a_batch_without_tree_context() -> None:
    """One request, and a batch whose config has no tree context: each as ``retrieve``."""
    store = _sectioned_store()
    reqs = _requests(np.random.default_rng(5))
    for config in (
        RetrievalConfig(),
        RetrievalConfig(
            context_neighbour_weight=0.0, context_parent_weight=0.0, context_sibling_weight=0.0
        ),
        RetrievalConfig(context_parent_weight=0.0),  # no parent scores: the columns' path
    ):
        retriever = HierarchicalRetriever(store, config)
        for batch in (reqs[:1], reqs):
            many = asyncio.run(retriever.retrieve_many(batch))
            assert _results(many) == _results([asyncio.run(retriever.retrieve(r)) for r in batch])


@pytest.mark.parametrize("dense_weight", [1.0, 0.5])
def test_find_many_on_chunked_docs_equals_find(dense_weight: float) -> None:
    """Through the client, on the graph with a file of chunks (heading paths, collapsed
    chunks): every list of ``find_many`` is ``find``'s, a repeated query included."""
    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)
    queries = ["alpha chunk3", "what is gamma?", "alpha chunk3", "beta item3x4", "delta kappa"]
    config = RetrievalConfig(dense_weight=dense_weight)
    with Treehop(embedder=emb, store=store, config=config, tagger=None) as th:
        many = th.find_many(queries, limit=6)
        assert _listing(many[0]) == _listing(many[2])
        for q, got in zip(queries, many, strict=True):
            assert _listing(got) == _listing(th.find(q, limit=6))


def test_a_bad_query_vector_fails_the_batch_before_any_family_search(
    family_batches: list[int],
) -> None:
    """One query of the batch with a vector of another dimension: the batch raises
    ``InvalidQueryError`` and no family search of any query was made."""
    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)
    with Treehop(embedder=emb, store=store, tagger=None) as th:
        vectors = emb.embed(["alpha", "beta", "gamma"])
        bad = [vectors[0], vectors[1], np.ones(vectors.shape[1] + 3, np.float32)]
        with pytest.raises(InvalidQueryError):
            th.find_many(["alpha", "beta", "gamma"], query_vectors=bad)
        assert family_batches == []
        th.find_many(["alpha", "beta", "gamma"], query_vectors=vectors)
        assert family_batches and family_batches[0] >= 2


def test_tied_scores_are_ordered_by_row_as_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files with the same vector and text tie on every score: the batch orders them by
    row, as a search alone does (their rows were written in the reverse of their URI
    order, the order a subtree lists them in)."""
    from test_columnar_search import _node
    from treehop.models import ContextType

    rng = np.random.default_rng(4)
    nodes = [_node(RES, None, ContextType.RESOURCE, 0, False)]
    for d in range(30):
        nodes.append(_node(f"{RES}/d{d}", RES, ContextType.RESOURCE, 1, False))
        nodes.extend(
            _node(
                f"{RES}/d{d}/f{i:02d}.md",
                f"{RES}/d{d}",
                ContextType.RESOURCE,
                2,
                True,
                content="alpha beta",
            )
            for i in reversed(range(12))
        )
    vecs = rng.standard_normal((len(nodes), DIM)).astype(np.float32)
    vecs[2:14] = vecs[2]  # d0's files: one vector
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    store = EmbeddedStore()
    store.upsert(nodes, vecs)
    sizes = _spy_batched(monkeypatch)
    qs = [_query(rng) for _ in range(3)]
    scopes = [Scope(subtrees=(f"{RES}/d0",), traversal=True)] * 2 + [
        Scope(subtrees=(f"{RES}/d0", f"{RES}/d5"), leaves_only=True)
    ]
    texts, weights = ["alpha", None, "beta gamma"], [0.5, 1.0, 0.7]
    got = store.search_arrays_many(qs, scopes, [50] * 3, query_texts=texts, dense_weights=weights)
    for q, scope, text, w, arr in zip(qs, scopes, texts, weights, got, strict=True):
        alone = store.search_arrays(q, scope, 50, query_text=text, dense_weight=w)
        assert _arrays_fields(arr) == _arrays_fields(alone)
        ties = arr.uris(np.arange(len(arr), dtype=np.int64))
        assert [u for u in ties if u.startswith(f"{RES}/d0/")][:2] == [
            f"{RES}/d0/f11.md",
            f"{RES}/d0/f10.md",
        ]
    assert sizes == [3]


@pytest.mark.parametrize("seed", range(4))
def test_leaf_family_rows_many_equals_each_uris_own(seed: int) -> None:
    """The subtree rows found for many URIs at once are, URI by URI, what
    ``_leaf_family_rows`` finds for it alone (the same rows in the same order, or ``None``
    where it proves nothing): folders of files, files of chunks, a folder with a
    subfolder, a leaf, the root, URIs not stored, and a repeated URI; after writes that
    leave rows out of URI order (``random_tree`` rewrites and deletes some)."""
    from treehop.stores.embedded.snapshot import _leaf_family_rows

    if seed < 2:
        store, rng = random_tree(seed)
    else:
        store, rng = _chunked_graph_store(BagOfWordsEmbedder()), np.random.default_rng(seed)
    s = store._snap
    uris = [n.uri for n in store.iter_nodes()]
    rng.shuffle(uris)
    uris = [*uris, f"{RES}/nowhere", f"{RES}/d0/x", uris[0], RES]
    got = family_batch.leaf_family_rows_many(s, uris)
    proven = 0
    for uri, rows in zip(uris, got, strict=True):
        own = int(s.lookup([uri])[0])
        want = _leaf_family_rows(s, uri, own) if own >= 0 else None
        assert (rows is None) == (want is None), uri
        if rows is not None and want is not None:
            assert rows.tolist() == want.tolist()
            proven += 1
    assert proven >= 3


@pytest.mark.parametrize("seed", range(4))
def test_leaf_columns_built_with_the_batch_equal_each_answers_own(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``leaf_columns``: the columns of each answer's best leaves, built for the batch in
    one pass, equal what ``columns`` of those positions builds alone, field by field
    (parent codes and their dtype, nodes, heading codes); asked again, or for other
    positions, ``columns`` builds them as before; a family of chunks gets none built."""
    from test_find_many import _columns_fields

    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)
    rng = np.random.default_rng(seed)
    built: list[int] = []
    real = family_batch._leaf_columns

    def spy(*a: Any, **kw: Any) -> Any:
        out = real(*a, **kw)
        built.append(len(out))
        return out

    monkeypatch.setattr(family_batch, "_leaf_columns", spy)
    folders = [f"{R}/d{d}" for d in rng.choice(30, size=6, replace=False).tolist()]
    scopes = [
        Scope(subtrees=(folders[0],), traversal=True),
        Scope(subtrees=tuple(sorted(folders[1:3])), traversal=True),
        Scope(subtrees=(f"{R}/d3",), traversal=True),  # chunks: no columns built
        Scope(subtrees=(folders[3],), tags=TagFilter(any_of=("nothing",)), traversal=True),
        Scope(subtrees=tuple(sorted(folders[4:])), leaves_only=True),
    ]
    texts = ["alpha beta", None, "alpha chunk3", "gamma", "kappa delta"]
    weights = [0.5, 1.0, 0.7, 0.5, 0.9]
    counts = [100, 7, 100, 100, 30]
    vectors = emb.embed(["alpha beta gamma", "delta", "alpha chunk3", "kappa", "zeta beta"])
    got = store.search_arrays_many(
        list(vectors),
        scopes,
        [200] * 5,
        query_texts=texts,
        dense_weights=weights,
        leaf_columns=counts,
    )
    for j, arr in enumerate(got):
        alone = store.search_arrays(
            vectors[j], scopes[j], 200, query_text=texts[j], dense_weight=weights[j]
        )
        leaves = np.flatnonzero(arr.leaves)[: counts[j]]
        first = arr.columns(leaves)
        assert _columns_fields(first) == _columns_fields(alone.columns(leaves))
        again = arr.columns(leaves)
        assert again is not first and _columns_fields(again) == _columns_fields(first)
    assert built == [3]  # (not the chunked one, nor the filtered one: no leaf matches)


def test_the_collector_is_paused_for_a_batch_and_restored() -> None:
    """``collector_paused``: off inside (also while another thread's pause overlaps),
    restored to on after the last overlapping pause ends; left off where the caller had
    turned it off; restored after an exception; not paused when not asked. And a batch
    of finds runs with it paused."""
    import gc
    import threading

    from treehop import batched_context as bc

    assert gc.isenabled()
    inside = threading.Event()
    release = threading.Event()
    seen: list[bool] = []

    def other() -> None:
        with bc.collector_paused():
            inside.set()
            release.wait(10)
            seen.append(gc.isenabled())

    t = threading.Thread(target=other)
    with bc.collector_paused():
        assert not gc.isenabled()
        t.start()
        assert inside.wait(10)
    assert not gc.isenabled()  # the other thread's pause still holds
    release.set()
    t.join(10)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError), bc.collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
    with bc.collector_paused(False):
        assert gc.isenabled()
    gc.disable()
    try:
        with bc.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the caller's choice stands
    finally:
        gc.enable()


def test_a_batch_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """find_many's phases run with the collector off; it is back on after the batch."""
    import gc

    from treehop import batched_context as bc

    states: list[bool] = []
    real = bc._tree_contexts

    async def spy(*a: Any, **kw: Any) -> Any:
        states.append(gc.isenabled())
        return await real(*a, **kw)

    monkeypatch.setattr(bc, "_tree_contexts", spy)
    store = random_tree(3)[0]
    retriever = HierarchicalRetriever(store, RetrievalConfig())
    reqs = _requests(np.random.default_rng(3))
    many = asyncio.run(retriever.retrieve_many(reqs))
    assert states == [False] and gc.isenabled() and len(many) == len(reqs)


def test_each_steps_query_state_is_freed_before_the_collector_resumes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``retrieve_many`` runs each ``BATCH_STEP`` of requests in a frame of its own
    (``_retrieve_part``): when a step's pause of the collector ends, none of the step's
    resolved requests (``_Query``: global hits, prefetched columns, scored families) nor
    descents (``Descent``) is alive any more, so the resumed collector neither counts nor
    traverses them. (With the step's locals in ``retrieve_many``'s own frame, its resolved
    requests were alive at each resume.)"""
    import gc
    from collections.abc import Iterator
    from contextlib import contextmanager

    from treehop import hierarchical_retriever as hr
    from treehop.descent import Descent

    def alive() -> int:
        return sum(isinstance(o, (hr._Query, Descent)) for o in gc.get_objects())

    at_resume: list[tuple[bool, int]] = []
    real = hr.collector_paused

    @contextmanager
    def spy(pause: bool = True) -> Iterator[None]:
        with real(pause):
            yield
            at_resume.append((gc.isenabled(), alive()))

    monkeypatch.setattr(hr, "collector_paused", spy)
    monkeypatch.setattr(hr, "BATCH_STEP", 4)
    store = random_tree(5)[0]
    retriever = HierarchicalRetriever(store, RetrievalConfig())
    reqs = _requests(np.random.default_rng(5))[:8]
    alone = [asyncio.run(retriever.retrieve(r)) for r in reqs]
    gc.collect()
    before = alive()
    many = asyncio.run(retriever.retrieve_many(reqs))
    # two steps of 4 requests, each checked while the collector is still off
    assert at_resume == [(False, before)] * 2
    assert _results(many) == _results(alone)
