"""``find_many``: a batch of finds, each answer the one ``find()`` gives (hits, order, scores,
provenance), the whole batch checked before any work, the queries embedded in one call where
that gives the same vectors, and the first global step of every query one store call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, EmbeddedStore, RetrievalConfig, Treehop
from treehop.client import MAX_FIND_MANY
from treehop.embedders.base import BaseEmbedder, Vectors
from treehop.errors import InvalidQueryError, NotFoundError
from treehop.models import ContextType, FindResult, Node
from treehop.stores import _ann
from treehop.stores.base import Scope
from treehop.stores.embedded.search_paths import _SIBLING_PARENTS, _top_ties

from treehop_test_doubles import BagOfWordsEmbedder

R = "viking://resources"
QUERIES = [
    "rotate the signing keys",
    "how do I roll back a deployment?",  # question-shaped: another dense weight
    "kubernetes pods crash",
    "rotate the signing keys",  # twice
    "tls certificates",
]


def _listing(res: FindResult) -> list[tuple[Any, ...]]:
    hits = [*res.resources, *res.memories, *res.skills]
    return [
        (
            m.uri,
            m.score,
            m.own_score,
            m.vector_score,
            m.found_by,
            m.found_via,
            [(c.uri, c.score) for c in m.collapsed],
        )
        for m in hits
    ]


@pytest.fixture
def th(bow: BagOfWordsEmbedder, sample_tree: Path):  # type: ignore[no-untyped-def]
    with Treehop(embedder=bow, tagger=None) as client:
        client.add_resource(sample_tree / "resources" / "security", target_uri=R)
        client.add_resource(sample_tree / "resources" / "devops", target_uri=R)
        yield client


@pytest.mark.parametrize(
    "options",
    [{}, {"limit": 3}, {"target_uri": f"{R}/devops", "include_directories": True}],
)
def test_sync_find_many_equals_one_find_each(th: Treehop, options: dict[str, Any]) -> None:
    th.store.save()
    many = th.find_many(QUERIES, **options)
    assert len(many) == len(QUERIES)
    for q, got in zip(QUERIES, many, strict=True):
        assert _listing(got) == _listing(th.find(q, **options))
        assert got.query_results[0].query.query == q
    assert _listing(many[0]) and _listing(many[0]) == _listing(many[3])


async def test_async_find_many_equals_one_find_each(
    bow: BagOfWordsEmbedder, sample_tree: Path
) -> None:
    client = AsyncTreehop(embedder=bow, tagger=None)
    await client.add_resource(sample_tree / "resources" / "security", target_uri=R)
    bow.calls = 0
    many = await client.find_many(QUERIES, limit=4)
    assert bow.calls == 1  # one embedder call for the batch
    for q, got in zip(QUERIES, many, strict=True):
        assert _listing(got) == _listing(await client.find(q, limit=4))
    await client.close()


def test_sync_find_many_embeds_once(th: Treehop, bow: BagOfWordsEmbedder) -> None:
    bow.calls = bow.texts_embedded = 0
    th.find_many(QUERIES)
    assert (bow.calls, bow.texts_embedded) == (1, len(QUERIES))


class InstructedEmbedder(BagOfWordsEmbedder):
    """A model with a query instruction: ``embed_query`` is not ``embed`` of one text."""

    def __init__(self) -> None:
        super().__init__()
        self.query_calls = 0

    def embed_query(self, text: str) -> Vectors:
        self.query_calls += 1
        return np.asarray(self.embed([f"query: {text}"])[0], dtype=np.float32)

    async def aembed_query(self, text: str) -> Vectors:
        return self.embed_query(text)


@pytest.mark.parametrize("use_async", [False, True])
def test_an_embedder_with_a_query_instruction_embeds_each_query_as_a_query(
    sample_tree: Path, use_async: bool
) -> None:
    emb = InstructedEmbedder()
    with Treehop(embedder=emb, tagger=None) as client:
        client.add_resource(sample_tree / "resources" / "security", target_uri=R)
        emb.query_calls = 0
        run = client.run
        many = run(client.aio.find_many(QUERIES)) if use_async else client.find_many(QUERIES)
        assert emb.query_calls == len(QUERIES)
        for q, got in zip(QUERIES, many, strict=True):
            # (the sync client checks and normalises the vector it embedded, as its find does)
            one = run(client.aio.find(q)) if use_async else client.find(q)
            assert _listing(got) == _listing(one)


@pytest.mark.parametrize(
    ("queries", "kwargs", "match"),
    [
        ([], {}, "empty"),
        ("one string", {}, "list of strings"),
        (b"bytes", {}, "list of strings"),
        (None, {}, "list of strings"),
        (["ok", 3], {}, r"queries\[1\]: query must be a string"),
        (["ok", "   "], {}, r"queries\[1\]: query is empty"),
        (["ok", "x" * 8001], {}, r"queries\[1\].*8000"),
        (["ok"] * (MAX_FIND_MANY + 1), {}, "at most"),
        (["ok", "ok"], {"limit": 0}, "between 1 and 1000"),
        (["ok", "ok"], {"query_vectors": [[1.0] * 64]}, "2 queries"),
        (["ok"], {"query_vectors": [[0.0] * 64]}, r"query_vectors\[0\]"),
        (["ok"], {"query_vectors": [[1.0] * 3]}, "dimensions"),
        (["ok"], {"query_vectors": "vec"}, "list of vectors"),
        (["a", "b"], {"query_vectors": [[1.0] * 64, [1.0] * 32]}, "dimensions"),
        (["ok"], {"context_type": "nope"}, "context_type"),
    ],
)
def test_the_whole_batch_is_checked_before_any_work(
    th: Treehop, queries: Any, kwargs: dict[str, Any], match: str
) -> None:
    emb = th.aio._embedder.inner  # type: ignore[attr-defined]
    assert isinstance(emb, BagOfWordsEmbedder)
    before = emb.calls
    for call in (th.find_many, lambda *a, **k: th.run(th.aio.find_many(*a, **k))):
        with pytest.raises(InvalidQueryError, match=match):
            call(queries, **kwargs)
    assert emb.calls == before  # nothing was embedded


def test_an_unknown_target_fails_the_batch(th: Treehop) -> None:
    with pytest.raises(NotFoundError):
        th.find_many(["a", "b"], target_uri=f"{R}/nope")


def test_query_vectors_stand_for_the_embedder(th: Treehop, bow: BagOfWordsEmbedder) -> None:
    vecs = bow.embed(QUERIES[:2])
    bow.calls = 0
    many = th.find_many(["", QUERIES[1]], query_vectors=vecs)
    assert bow.calls == 0
    assert _listing(many[0]) == _listing(th.find("", query_vector=vecs[0]))
    assert _listing(many[1]) == _listing(th.find(QUERIES[1], query_vector=vecs[1]))


# ---------------------------------------------------------------------- on the graph
WORDS = ["alpha", "beta", "gamma", "delta", "kappa", "sigma", "omega", "theta", "lambda", "zeta"]


def _graph_store(path: Path | None, emb: BaseEmbedder) -> EmbeddedStore:
    """A store whose global step searches the usearch graph (``ann_min_rows=0``), BM25 on,
    with rows the graph does not cover yet (a tail written while it is busy)."""
    rng = np.random.default_rng(3)
    store = EmbeddedStore(path, ann_min_rows=0)
    nodes, texts = [], []
    for d in range(30):
        nodes.append(
            Node(
                uri=f"{R}/d{d}",
                parent_uri=R,
                context_type=ContextType.RESOURCE,
                level=1,
                is_leaf=False,
                abstract=f"folder {WORDS[d % 10]}",
            )
        )
        texts.append(f"folder {WORDS[d % 10]}")
        for i in range(40):
            text = " ".join(rng.choice(WORDS, 4)) + f" item{d}x{i}"
            nodes.append(
                Node(
                    uri=f"{R}/d{d}/f{i}.md",
                    parent_uri=f"{R}/d{d}",
                    context_type=ContextType.RESOURCE,
                    level=2,
                    is_leaf=True,
                    content=text,
                    abstract=text,
                )
            )
            texts.append(text)
    store.upsert(nodes, emb.embed(texts))
    assert store.wait_ann(timeout=60)
    return store


@pytest.mark.parametrize("dense_weight", [1.0, 0.5])
def test_find_many_on_the_graph_equals_one_find_each(
    dense_weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    assert store._ann is not None
    calls: list[int] = []
    real = EmbeddedStore.search_columns_batch

    def spy(self: EmbeddedStore, vectors: Any, *a: Any, **kw: Any) -> Any:
        calls.append(len(vectors))
        return real(self, vectors, *a, **kw)

    monkeypatch.setattr(EmbeddedStore, "search_columns_batch", spy)
    queries = ["alpha beta", "gamma item3x4", "what is omega theta?", "zeta", "alpha beta"]
    config = RetrievalConfig(dense_weight=dense_weight)
    with Treehop(embedder=emb, store=store, config=config, tagger=None) as th:
        many = th.find_many(queries, limit=5)
        assert sum(calls) == len(queries)  # every first step made by the batch
        for q, got in zip(queries, many, strict=True):
            store._ann.recent.clear()
            assert _listing(got) == _listing(th.find(q, limit=5))


def test_a_large_batch_goes_in_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """More queries than ``BATCH_STEP``: the first steps in batches of it, every answer
    still the one find gives."""
    from treehop import hierarchical_retriever as hr

    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    calls: list[int] = []
    real = EmbeddedStore.search_columns_batch

    def spy(self: EmbeddedStore, vectors: Any, *a: Any, **kw: Any) -> Any:
        calls.append(len(vectors))
        return real(self, vectors, *a, **kw)

    monkeypatch.setattr(EmbeddedStore, "search_columns_batch", spy)
    queries = [f"{WORDS[i % 10]} {WORDS[(3 * i) % 10]} item{i % 30}x{i % 40}" for i in range(70)]
    config = RetrievalConfig(dense_weight=1.0)
    with Treehop(embedder=emb, store=store, config=config, tagger=None) as th:
        many = th.find_many(queries, limit=3)
        assert calls == [hr.BATCH_STEP, hr.BATCH_STEP, 70 - 2 * hr.BATCH_STEP]
        for q, got in zip(queries, many, strict=True):
            assert _listing(got) == _listing(th.find(q, limit=3))


def _scored(c: Any) -> tuple[Any, ...]:
    """A search answer's hits and their scores (``HitColumns``), to compare two answers."""
    return (c.uris, c.scores, c.vector_scores, c.lexical_scores)


def _placed(c: Any) -> tuple[Any, ...]:
    """Where a search answer's hits sit: parents, leaf flags, matches, exactness."""
    return (c.parent_uris, c.leaves, c.matches, c.exact)


def _write_a_tail(store: EmbeddedStore, emb: BagOfWordsEmbedder) -> None:
    """20 new leaves and 10 deletions, written while the caller holds the graph's read lock:
    rows the graph worker cannot cover yet (a tail searched exactly) and holes in it."""
    store.upsert(
        [
            Node(
                uri=f"{R}/d1/new{i}.md",
                parent_uri=f"{R}/d1",
                context_type=ContextType.RESOURCE,
                level=2,
                is_leaf=True,
                content=f"alpha new{i}",
            )
            for i in range(20)
        ],
        emb.embed([f"alpha new{i}" for i in range(20)]),
    )
    store.delete([f"{R}/d2/f{i}.md" for i in range(10)])


@pytest.mark.parametrize("dense_weight", [1.0, 0.5])
def test_search_columns_batch_equals_search_columns(dense_weight: float) -> None:
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    ann = store._ann
    assert ann is not None
    texts = ["alpha beta", "gamma item3x4", "omega", "", "zeta kappa sigma"]
    qs = emb.embed(texts)
    qs[3] = 0.0  # a zero query goes the one-query way
    ann.lock.acquire_read()  # the worker cannot cover what is written now: a tail
    try:
        _write_a_tail(store, emb)
        assert ann.upto < store._snap.n
        for scope in (Scope(subtrees=(R,), traversal=True), Scope(leaves_only=True)):
            for limit in (1, 10, 40):
                batch = store.search_columns_batch(
                    qs, scope, limit, query_texts=texts, dense_weight=dense_weight
                )
                for q, t, got in zip(qs, texts, batch, strict=True):
                    ann.recent.clear()
                    one = store.search_columns(
                        q, scope, limit, query_text=t, dense_weight=dense_weight
                    )
                    assert _scored(got) == _scored(one) and _placed(got) == _placed(one)
    finally:
        ann.lock.release_read()
    with pytest.raises(InvalidQueryError):
        store.search_columns_batch(qs[0], Scope(), 3)
    with pytest.raises(InvalidQueryError):
        store.search_columns_batch(qs, Scope(), 3, query_texts=["a"])


def test_find_many_on_a_store_without_the_batch_call(
    th: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store without ``search_columns_batch`` (a remote one, a user's own) answers every
    first step itself, with the same results."""
    owner = next(c for c in EmbeddedStore.__mro__ if "search_columns_batch" in vars(c))
    monkeypatch.delattr(owner, "search_columns_batch")
    assert not hasattr(th.store, "search_columns_batch")
    many = th.find_many(QUERIES, limit=4)
    for q, got in zip(QUERIES, many, strict=True):
        assert _listing(got) == _listing(th.find(q, limit=4))


@pytest.mark.parametrize("orphans", [0, 12, 300])
def test_hybrid_batch_shares_the_step_and_equals_search_columns(
    orphans: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hybrid global step of a batch (``_hybrid_batch``: one graph call, the orphans,
    the candidates' and siblings' scores each one product for the batch) gives every query
    the answer of its own call, to the bit: with BM25 rows joining the candidates, graph
    rows the graph cannot reach (none, fewer than a query fetches, more: then each query's
    best), rows the graph does not cover yet and deleted ones; and only the queries that
    must go the one-query way do (no text: dense only; tied best rows).

    The graph keeps every row a node of its own here (``_ann.DEDUPE`` off): the bag-of-words
    rows repeat vectors, and a query whose hits have exact copies goes the one-query way too
    (``tests/test_ann_duplicates.py`` holds batches with copies equal to their queries)."""
    monkeypatch.setattr(_ann, "DEDUPE", False)
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    ann = store._ann
    assert ann is not None
    texts = [
        "alpha beta",
        "gamma item3x4",
        "what is omega theta?",
        "",  # no text: the one-query way
        "zeta kappa sigma item7x1",
        "unmatched words only",
        "alpha beta",  # twice
        "folder delta",
    ]
    qs = emb.embed(texts)
    qs[5] = emb.embed(["lambda"])[0]  # its BM25 finds nothing: its dense query still counts
    ann.lock.acquire_read()  # the worker cannot cover what is written now: a tail
    try:
        _write_a_tail(store, emb)
        rng = np.random.default_rng(orphans)
        ann.orphans = np.sort(rng.choice(ann.count, orphans, replace=False)).astype(np.int64)
        ann.recent.clear()
        assert ann.upto < store._snap.n
        one_query: list[int] = []
        real_top = type(store)._search_top

        def spy(self: EmbeddedStore, s: Any, q: Any, *a: Any, **kw: Any) -> Any:
            one_query.append(1)
            return real_top(self, s, q, *a, **kw)

        for scope in (Scope(subtrees=(R,), traversal=True), Scope(leaves_only=True)):
            for limit in (1, 10, 40, 120):
                monkeypatch.setattr(type(store), "_search_top", spy)
                one_query.clear()
                batch = store.search_columns_batch(
                    qs, scope, limit, query_texts=texts, dense_weight=0.5
                )
                # the query with no text, and at most one whose best rows tie (bag-of-words
                # vectors give equal cosines): the other six share the step
                assert 1 <= len(one_query) <= 2
                monkeypatch.undo()
                for q, t, got in zip(qs, texts, batch, strict=True):
                    ann.recent.clear()
                    one = store.search_columns(q, scope, limit, query_text=t, dense_weight=0.5)
                    assert _scored(got) == _scored(one) and _placed(got) == _placed(one)
    finally:
        ann.lock.release_read()


def test_hybrid_batch_where_every_query_goes_its_own_way() -> None:
    """No query of the batch shares the step (none has a text): the shared arrays are empty
    and every answer is still its own call's."""
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    ann = store._ann
    assert ann is not None
    qs = emb.embed(["alpha beta", "omega"])
    scope = Scope(subtrees=(R,), traversal=True)
    s = store._snap
    got = store._hybrid_batch(s, qs, [None, ""], scope, None, 10, 0.5, ann)
    for q, cols in zip(qs, got, strict=True):
        ann.recent.clear()
        one = store.search_columns(q, scope, 10, dense_weight=0.5)
        assert (cols.uris, cols.scores, cols.vector_scores) == (
            one.uris,
            one.scores,
            one.vector_scores,
        )
        assert len(cols.uris) == 10


@pytest.mark.parametrize("dense_weight", [1.0, 0.5])
def test_a_batch_query_with_tied_best_rows_goes_its_own_way(
    dense_weight: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same text in ten folders: a query for it has ten equal best scores, whose order
    (and so which parents' siblings join) the one-query step's sort decides. Such a query
    goes the one-query way in a batch (dense and hybrid), and every answer stays its own."""
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    ann = store._ann
    assert ann is not None
    dup = "kappa sigma omega duplicate"
    store.upsert(
        [
            Node(
                uri=f"{R}/d{d}/dup.md",
                parent_uri=f"{R}/d{d}",
                context_type=ContextType.RESOURCE,
                level=2,
                is_leaf=True,
                content=dup,
                abstract=dup,
            )
            for d in range(10)
        ],
        emb.embed([dup] * 10),
    )
    assert store.wait_ann(timeout=60)
    texts = [dup, "alpha beta", "gamma item3x4"]
    qs = emb.embed(texts)
    scope = Scope(subtrees=(R,), traversal=True)
    one_query: list[int] = []
    real_top = type(store)._search_top
    real_cols = type(store).search_columns

    def spy_top(self: EmbeddedStore, s: Any, q: Any, *a: Any, **kw: Any) -> Any:
        one_query.append(1)
        return real_top(self, s, q, *a, **kw)

    def spy_cols(self: EmbeddedStore, q: Any, *a: Any, **kw: Any) -> Any:
        one_query.append(1)
        return real_cols(self, q, *a, **kw)

    for limit in (5, 40):
        ann.recent.clear()
        monkeypatch.setattr(type(store), "_search_top", spy_top)
        monkeypatch.setattr(type(store), "search_columns", spy_cols)
        one_query.clear()
        batch = store.search_columns_batch(
            qs, scope, limit, query_texts=texts, dense_weight=dense_weight
        )
        monkeypatch.undo()
        assert one_query  # the tied query went its own way
        for q, t, got in zip(qs, texts, batch, strict=True):
            ann.recent.clear()
            one = store.search_columns(q, scope, limit, query_text=t, dense_weight=dense_weight)
            assert _scored(got) == _scored(one)


@pytest.mark.parametrize("bad", [np.nan, np.inf, 0.0])
def test_a_hybrid_batch_query_with_a_zero_or_non_finite_vector_goes_its_own_way(
    bad: float,
) -> None:
    """The store's batch call takes vectors as given (the clients refuse such a query
    vector, the store does not): a NaN or infinite one scores NaN everywhere, which no tie
    check sees and the one-query sort orders its own way; like the dense batch, the hybrid
    one sends it (and a zero vector) the one-query way, and every answer stays its own."""
    emb = BagOfWordsEmbedder()
    store = _graph_store(None, emb)
    ann = store._ann
    assert ann is not None
    texts = ["alpha beta", "gamma item3x4", "zeta kappa"]
    qs = emb.embed(texts).copy()
    qs[1] = bad
    scope = Scope(subtrees=(R,), traversal=True)
    batch = store.search_columns_batch(qs, scope, 10, query_texts=texts, dense_weight=0.5)
    for q, t, got in zip(qs, texts, batch, strict=True):
        ann.recent.clear()
        one = store.search_columns(q, scope, 10, query_text=t, dense_weight=0.5)
        assert got.uris == one.uris and len(one.uris) == 10
        for a, b in (
            (got.scores, one.scores),
            (got.vector_scores, one.vector_scores),
            (got.lexical_scores, one.lexical_scores),
        ):
            assert np.array_equal(np.array(a, float), np.array(b, float), equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.sampled_from([0.1, 0.25, 0.5, 0.75, 0.9, -0.3, 0.0]), max_size=40),
        min_size=1,
        max_size=5,
    ),
    noise=st.integers(0, 2**31 - 1),
)
def test_without_a_top_tie_both_sorts_read_the_same_best_rows(
    rows: list[list[float]], noise: int
) -> None:
    """What ``_top_ties`` guarantees the batch steps: where it finds no two equal scores
    among a query's ``4 * _SIBLING_PARENTS + 1`` best, the one-query order (an unstable
    ``argsort`` of all scores) and the batch's (``argpartition``, then a stable sort of the
    part) name the same best rows in the same order; where the scores do tie there, it says
    so. Scores drawn from a few values (many ties), half of them made distinct."""
    m = 4 * _SIBLING_PARENTS
    rng = np.random.default_rng(noise)
    width = max(len(r) for r in rows)
    score = np.full((len(rows), width), -np.inf, dtype=np.float32)
    ok = np.zeros((len(rows), width), dtype=bool)
    for i, r in enumerate(rows):
        x = np.array(r, dtype=np.float32)
        if i % 2:
            x += rng.uniform(0, 1e-3, x.size).astype(np.float32)
        score[i, : x.size] = x
        ok[i, : x.size] = True
    tied = _top_ties(score, ok, m)
    for i, r in enumerate(rows):
        real = score[i, : len(r)]
        best = np.sort(real)[::-1][: m + 1]
        assert tied[i] == bool((best[1:] == best[:-1]).any())
        if tied[i] or not len(r):
            continue
        k = min(m, len(r))
        one = np.argsort(-real)[:k]
        part = np.argpartition(-real, k - 1)[:k] if k < len(r) else np.arange(len(r))
        batch = part[np.argsort(-real[part], kind="stable")]
        assert one.tolist() == batch.tolist()


# ------------------------------------------------------------ batched columns
def _columns_fields(cols: Any) -> tuple[Any, ...]:
    """Every field of a ``HitColumns`` that a reader sees, the parent codes as a list with
    their dtype, and the nodes and heading codes its closures give for every position."""
    at = list(range(len(cols.uris)))
    codes = cols.parent_codes
    heads = cols.heading_codes(np.asarray(at, np.int64)) if at else None
    return (
        cols.uris,
        cols.parent_uris,
        cols.chunk_indexes,
        cols.leaves,
        cols.scores,
        cols.vector_scores,
        cols.lexical_scores,
        cols.matches,
        cols.exact,
        None if codes is None else (codes.dtype, codes.tolist()),
        [n.uri for n in cols.load(at)],
        None if heads is None else (heads[0].tolist(), list(heads[1])),
    )


def _chunked_graph_store(emb: BaseEmbedder) -> EmbeddedStore:
    """:func:`_graph_store` with a file of chunks (chunk indexes, heading paths) under d3."""
    store = _graph_store(None, emb)
    texts = [f"alpha chunk{i} " + WORDS[i % 10] for i in range(12)]
    store.upsert(
        [
            Node(
                uri=f"{R}/d3/guide.md#chunk-{i}",
                parent_uri=f"{R}/d3",
                context_type=ContextType.RESOURCE,
                level=2,
                is_leaf=True,
                chunk_index=i,
                content=t,
                abstract=t,
                metadata={"heading_path": ["Guide", f"Part {i // 4}"]},
            )
            for i, t in enumerate(texts)
        ],
        emb.embed(texts),
    )
    return store


def test_batched_columns_equal_each_answers_own() -> None:
    """``_columns_many`` (find_many's first step builds every answer's columns in one
    pass) gives each answer the columns its own ``_columns`` call gives, field by field:
    order (equal scores broken by row), URIs, parents, chunk indexes, leaves, scores, the
    parent codes (each answer's own ranks: answers share parents here), nodes and heading
    codes; an answer with a row whose parent is not stored, or no hit, is built alone."""
    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)
    s = store._snap
    rng = np.random.default_rng(7)
    leaf_rows = np.flatnonzero(s.cols["leaf"][: s.n] & s.alive[: s.n]).astype(np.int64)
    dir_rows = np.flatnonzero(~s.cols["leaf"][: s.n] & s.alive[: s.n]).astype(np.int64)
    assert dir_rows.size and (s.parent_row[dir_rows] < 0).all()  # the root is not stored
    chunk_rows = leaf_rows[s.cols["chunk"][leaf_rows] >= 0]
    assert chunk_rows.size == 12
    matches = rng.random(s.n) < 0.8
    for trial in range(20):
        items: list[Any] = []
        for k in range(6):
            pool = leaf_rows if k != 2 else np.concatenate([chunk_rows, leaf_rows[:60]])
            cand = rng.choice(pool, int(rng.integers(1, 60)), replace=False).astype(np.int64)
            if k == 4 and trial % 2:
                cand = np.concatenate([cand, dir_rows[:3]])  # an unlinked parent: alone
            score = rng.integers(0, 5, cand.size).astype(np.float32) / 4  # ties
            dense = rng.random(cand.size).astype(np.float32)
            lex = None if k % 3 == 0 else rng.random(cand.size).astype(np.float32)
            top = rng.permutation(cand.size)[: int(rng.integers(0 if k == 5 else 1, 30))]
            items.append((cand, top.astype(np.int64), score, dense, lex))
        for m in (None, matches):
            built = store._columns_many(s, items, m)
            assert len(built) == len(items)
            for item, got in zip(items, built, strict=True):
                one = store._columns(s, *item, m, False)
                assert _columns_fields(got) == _columns_fields(one)


@pytest.mark.parametrize("dense_weight", [1.0, 0.5])
def test_search_columns_batch_gives_the_same_codes_and_chunks(dense_weight: float) -> None:
    """The batch step's columns carry the parent codes, chunk indexes, nodes and heading
    codes of each query's own call (the tree context and the result read them)."""
    emb = BagOfWordsEmbedder()
    store = _chunked_graph_store(emb)
    assert store.wait_ann(timeout=60)
    ann = store._ann
    assert ann is not None
    texts = ["alpha chunk3 delta", "alpha beta", "gamma item3x4", "chunk7 alpha", "omega"]
    qs = emb.embed(texts)
    for scope in (Scope(subtrees=(R,), traversal=True), Scope(leaves_only=True)):
        for limit in (5, 40):
            batch = store.search_columns_batch(
                qs, scope, limit, query_texts=texts, dense_weight=dense_weight
            )
            for q, t, got in zip(qs, texts, batch, strict=True):
                ann.recent.clear()
                one = store.search_columns(q, scope, limit, query_text=t, dense_weight=dense_weight)
                assert _columns_fields(got) == _columns_fields(one)
