"""Hubness among a question's candidates (``treehop.hubness``, ``question_hub_weight``).

A chunk that resembles every other candidate (an index, a list of links, an overview) ranks
near the top for many questions without answering them; a question over documents takes
``question_hub_weight`` times its hubness off its score, so an answer that stands out from
the crowd wins a near-tie. Keyword queries are not touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treehop import AsyncTreehop, InvalidConfigError, RetrievalConfig, Treehop
from treehop.embedders.base import BaseEmbedder, Vectors, normalize_rows
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.hubness import HUB_NEIGHBOURS, HUB_POOL, MIN_POOL, hub_scores
from treehop.models import Node, TypedQuery
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_folder, resource_leaf, resource_root

R = "viking://resources"
DIM = 16


def _unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


def test_the_hub_scores_highest_and_the_outlier_lowest() -> None:
    cluster = [_unit((1, 1.0), (8 + i, 0.2)) for i in range(6)]
    hub = _unit((1, 1.0))  # the centre of the cluster: near every member
    outlier = _unit((5, 1.0))
    h = hub_scores(np.stack([*cluster, hub, outlier]))
    assert h.argmax() == len(cluster)
    assert h.argmin() == len(cluster) + 1
    assert h.sum() == pytest.approx(0.0, abs=1e-9)  # centred: moves rows against each other


def test_too_few_rows_carry_no_correction() -> None:
    for n in range(MIN_POOL):
        assert hub_scores(np.ones((n, 4))).tolist() == [0.0] * n


def test_k_is_capped_and_zero_rows_do_not_fail() -> None:
    x = np.stack([_unit((0, 1.0)), _unit((1, 1.0)), np.zeros(DIM, np.float32)])
    h = hub_scores(x, k=HUB_NEIGHBOURS)  # 10 neighbours asked, 2 exist
    assert np.isfinite(h).all() and h.shape == (3,)


def test_a_vector_that_is_not_a_matrix_is_refused() -> None:
    with pytest.raises(ValueError):
        hub_scores(np.ones(4))


@settings(max_examples=50, deadline=None)
@given(
    arrays(np.float64, (7, 5), elements=st.floats(-1, 1, allow_nan=False)),
    st.permutations(list(range(7))),
    arrays(np.float64, (7,), elements=st.floats(0.1, 10)),
)
def test_order_and_length_do_not_matter(x: np.ndarray, perm: list[int], scale: np.ndarray) -> None:
    """A candidate's hubness is its own: the same whatever order the candidates come in,
    and whatever the vectors' lengths (cosines)."""
    x = x + np.eye(7, 5)  # (no zero rows)
    h = hub_scores(x)
    assert np.allclose(hub_scores(x[perm]), h[perm], atol=1e-6)
    assert np.allclose(hub_scores(x * scale[:, None]), h, atol=1e-6)


def _store() -> EmbeddedStore:
    """A question's answer (cosine 0.70, a direction of its own) and an overview chunk just
    ahead of it (0.72) that resembles the five other candidates of its section."""

    def leaf(name: str, text: str) -> Node:
        return resource_leaf(f"{R}/docs/{name}", text)

    nodes = [
        resource_root(),
        resource_folder(f"{R}/docs"),
        leaf("answer.md", "Pin the compiler version in the toolchain file."),
        leaf("overview.md", "Contents: installing, upgrading, platforms, packaging, release."),
        *(leaf(f"part{i}.md", f"Part {i} of the installation chapter.") for i in range(5)),
    ]
    vectors = np.stack(
        [
            _unit((7, 1.0)),
            _unit((6, 1.0)),
            _unit((0, 0.70), (5, 0.714)),
            _unit((0, 0.72), (1, 0.694)),
            *(_unit((0, 0.4), (1, 0.9), (8 + i, 0.15)) for i in range(5)),
        ]
    )
    store = EmbeddedStore()
    store.upsert(nodes, vectors)
    return store


def _ranked(store: EmbeddedStore, query: str, cfg: RetrievalConfig) -> list[tuple[str, float]]:
    req = RetrievalRequest(
        query=TypedQuery(query=query), vector=_unit((0, 1.0)), roots=[R], limit=3
    )
    result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
    return [(m.uri.rsplit("/", 1)[-1], m.score) for m in result.matched_contexts]


def test_a_question_prefers_the_answer_to_the_hub() -> None:
    store = _store()
    on = RetrievalConfig(question_hub_weight=0.25)
    assert _ranked(store, "Why does my build fail?", on)[0][0] == "answer.md"
    off = RetrievalConfig(question_hub_weight=0.0)
    assert _ranked(store, "Why does my build fail?", off)[0][0] == "overview.md"


def test_off_by_default() -> None:
    """The default leaves a question's ranking as it was (the held-out halves did not
    confirm the dev gain): the same list and scores as weight 0."""
    store = _store()
    q = "Why does my build fail?"
    assert _ranked(store, q, RetrievalConfig()) == _ranked(
        store, q, RetrievalConfig(question_hub_weight=0.0)
    )


def test_keyword_queries_are_not_corrected() -> None:
    """The same list and scores at any hub weight: the correction is for questions."""
    store = _store()
    base = _ranked(store, "build failure", RetrievalConfig(question_hub_weight=0.0))
    for w in (0.25, 1.0):
        assert _ranked(store, "build failure", RetrievalConfig(question_hub_weight=w)) == base


def test_only_the_best_hub_pool_leaves_are_compared() -> None:
    """A descent that collects more than ``HUB_POOL`` leaves corrects the best 100 only:
    the others keep their scores (and the product stays 100 x 100)."""
    rng = np.random.default_rng(7)
    n = HUB_POOL + 30
    nodes = [
        resource_root(),
        resource_folder(f"{R}/docs"),
    ]
    vectors = [_unit((7, 1.0)), _unit((6, 1.0))]
    for i in range(n):
        nodes.append(resource_leaf(f"{R}/docs/n{i:03d}.md", f"note {i}"))
        v = rng.normal(size=DIM).astype(np.float32)
        v[0] = 3.0 - 2.0 * i / n  # a spread of cosines with the query, all positive
        vectors.append(v / np.linalg.norm(v))
    store = EmbeddedStore()
    store.upsert(nodes, np.stack(vectors))

    def scores(w: float) -> dict[str, float]:
        req = RetrievalRequest(
            query=TypedQuery(query="Why does my build fail?"),
            vector=_unit((0, 1.0)),
            roots=[R],
            limit=n,
        )
        cfg = RetrievalConfig(question_hub_weight=w)
        result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
        return {m.uri: m.score for m in result.matched_contexts}

    off, on = scores(0.0), scores(0.5)
    assert len(off) > HUB_POOL and off.keys() == on.keys()
    changed = [u for u in off if on[u] != pytest.approx(off[u], abs=1e-12)]
    assert HUB_POOL - 5 <= len(changed) <= HUB_POOL
    best = sorted(off, key=off.__getitem__, reverse=True)
    assert set(best[-20:]).isdisjoint(changed)  # the weakest are outside the pool


class _QueryEmbedder(BaseEmbedder):
    """Every text embeds as the test's query direction (the store's vectors are given)."""

    name = "test-hub-query"
    dimension = DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        return normalize_rows(np.tile(_unit((0, 1.0)), (len(texts), 1)), len(texts), DIM)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf"), -0.01, 1.01, "x"])
def test_the_weight_is_validated_when_built_and_when_assigned(bad: object) -> None:
    """Not a number, out of [0, 1] or not a float: refused like every other config field
    (treehop's ``InvalidConfigError``, a ``ValueError``), at construction and at assignment
    (``validate_assignment``: a client's config may be changed in place)."""
    with pytest.raises(InvalidConfigError, match="question_hub_weight"):
        RetrievalConfig(question_hub_weight=bad)
    cfg = RetrievalConfig()
    with pytest.raises(InvalidConfigError, match="question_hub_weight"):
        cfg.question_hub_weight = bad  # type: ignore[assignment]
    assert cfg.question_hub_weight == 0.0


def test_the_weight_reaches_find_from_the_sync_and_async_clients() -> None:
    """The option is a client's config (``config=``), as every ranking knob is: the sync and
    async clients give a question the same corrected list; the JSON a reader-process pool is
    started with carries it; a config changed in place takes effect at the next find."""
    cfg = RetrievalConfig(question_hub_weight=0.25)
    assert RetrievalConfig.model_validate_json(cfg.model_dump_json()) == cfg
    q = "Why does my build fail?"
    th = Treehop(store=_store(), embedder=_QueryEmbedder(), tagger=None, config=cfg)
    try:
        sync = [(m.uri, m.score) for m in th.find(q, limit=3).contexts()]
        th.config.question_hub_weight = 0.0
        off = [(m.uri, m.score) for m in th.find(q, limit=3).contexts()]
    finally:
        th.close()
    assert sync[0][0].endswith("answer.md") and off[0][0].endswith("overview.md")

    async def run() -> list[tuple[str, float]]:
        on = RetrievalConfig(question_hub_weight=0.25)  # (``cfg`` was changed in place)
        ath = AsyncTreehop(store=_store(), embedder=_QueryEmbedder(), tagger=None, config=on)
        try:
            return [(m.uri, m.score) for m in (await ath.find(q, limit=3)).contexts()]
        finally:
            await ath.close()

    assert asyncio.run(run()) == sync


class _DeletingStore(EmbeddedStore):
    """A real store where a concurrent writer deletes ``victim`` just as the hub correction
    asks for its candidates' vectors (the race a find can meet on a shared index)."""

    victim: str | None = None

    def _race(self, uris: Sequence[str]) -> None:
        if self.victim is not None and self.victim in uris:
            self.delete([self.victim])
            self.victim = None

    def get_vectors(self, uris: Sequence[str]) -> Vectors:
        self._race(uris)
        return super().get_vectors(uris)

    def present_vectors(self, uris: Sequence[str]) -> tuple[Any, Vectors]:
        self._race(uris)
        return super().present_vectors(uris)


class _DeletingProtocolStore(_DeletingStore):
    """The same race in a store that offers only the protocol's ``get_vectors`` (as a remote
    store does): the retriever's miss, ``get`` and second read."""

    present_vectors = None  # type: ignore[assignment]


@pytest.mark.parametrize("racing_cls", [_DeletingStore, _DeletingProtocolStore])
def test_a_candidate_deleted_during_the_find_does_not_fail_it(
    racing_cls: type[_DeletingStore],
) -> None:
    """A leaf the descent collected and a concurrent write deleted before the correction
    reads the vectors: the find still answers, the remaining candidates compared among
    themselves (was: the store's ``NotFoundError`` for a node the caller never named)."""
    plain = _store()
    racing = racing_cls()
    racing.upsert(list(plain.iter_nodes()), plain.get_vectors([n.uri for n in plain.iter_nodes()]))
    racing.victim = f"{R}/docs/part0.md"
    cfg = RetrievalConfig(question_hub_weight=0.25)
    got = dict(_ranked(racing, "Why does my build fail?", cfg))
    assert racing.victim is None and next(iter(got)) == "answer.md"
    # the others corrected as in a store where part0 was never there (part0 itself, which
    # the find had already collected, keeps its uncorrected score, as any leaf a write
    # deletes after the descent read it)
    plain.delete([f"{R}/docs/part0.md"])
    without = dict(_ranked(plain, "Why does my build fail?", cfg))
    for name in ("answer.md", "overview.md"):
        assert got[name] == pytest.approx(without[name], abs=1e-9)


def test_a_kept_directory_still_ranks_after_the_leaf_that_represents_it() -> None:
    """``include_directories=True`` with the tree context on (``question_context_scale``):
    a directory that a leaf below it beats ranks just after that leaf's final score. The
    hub correction then lowers the leaf (a hub, ``overview.md``); the directory must follow
    it down, not stay above its own best leaf."""

    root = resource_root()
    nodes = [
        root.model_copy(update={"abstract": R}),
        resource_folder(f"{R}/docs", abstract=f"{R}/docs"),
        resource_folder(f"{R}/faq", abstract=f"{R}/faq"),
        resource_leaf(f"{R}/faq/answer.md", "Pin the compiler version."),
        resource_leaf(f"{R}/docs/overview.md", "Contents: installing, upgrading."),
        *(resource_leaf(f"{R}/docs/part{i}.md", f"Part {i}.") for i in range(5)),
    ]
    vectors = np.stack(
        [
            _unit((7, 1.0)),
            _unit((0, 0.9), (6, 1.0)),  # below overview.md on its own score: represented
            _unit((5, 1.0)),
            _unit((0, 0.70), (5, 0.714)),
            _unit((0, 0.72), (1, 0.694)),
            *(_unit((0, 0.4), (1, 0.9), (8 + i, 0.15)) for i in range(5)),
        ]
    )
    store = EmbeddedStore()
    store.upsert(nodes, vectors)

    def ranked(w: float) -> list[tuple[str, float]]:
        req = RetrievalRequest(
            query=TypedQuery(query="Why does my build fail?"),
            vector=_unit((0, 1.0)),
            roots=[R],
            limit=5,
            include_directories=True,
        )
        cfg = RetrievalConfig(question_hub_weight=w, question_context_scale=1.0)
        result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
        return [(m.uri.rsplit("/", 1)[-1], m.score) for m in result.matched_contexts]

    for w in (0.0, 0.25):
        names = [n for n, _ in ranked(w)]
        assert names.index("docs") == names.index("overview.md") + 1, (w, names)
    scores = dict(ranked(0.25))
    assert scores["docs"] == pytest.approx(scores["overview.md"] - 1e-9, abs=1e-12)
    assert ranked(0.25)[0][0] == "answer.md"  # (the correction itself still acts)


def test_the_pool_does_not_depend_on_the_order_leaves_were_written() -> None:
    """Ten leaves with the same text (the same vector, so the same score) straddle the
    pool's edge: which of them are compared and corrected must not depend on the order
    the index was written in (the store breaks equal scores by row), so two indexes of the
    same nodes give the same scores."""
    rng = np.random.default_rng(11)
    folder = resource_folder(f"{R}/docs")
    root = resource_root()
    leaves: list[tuple[Node, np.ndarray]] = []
    same = rng.normal(size=DIM).astype(np.float32)
    same[0] = 1.0
    for i in range(HUB_POOL + 20):
        v = rng.normal(size=DIM).astype(np.float32)
        v[0] = 3.0 - 2.0 * i / (HUB_POOL + 20)
        if HUB_POOL - 5 <= i < HUB_POOL + 5:
            v = same  # (equal scores across the 100th place)
        node = resource_leaf(f"{R}/docs/n{i:03d}.md", f"note {i}")
        leaves.append((node, v / np.linalg.norm(v)))

    def scores(order: list[tuple[Node, np.ndarray]]) -> dict[str, float]:
        store = EmbeddedStore()
        store.upsert([root, folder], np.stack([_unit((7, 1.0)), _unit((6, 1.0))]))
        store.upsert([n for n, _ in order], np.stack([v for _, v in order]))
        req = RetrievalRequest(
            query=TypedQuery(query="Why does my build fail?"),
            vector=_unit((0, 1.0)),
            roots=[R],
            limit=len(order),
        )
        cfg = RetrievalConfig(question_hub_weight=0.5)
        result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
        return {m.uri: m.score for m in result.matched_contexts}

    forward, backward = scores(leaves), scores(leaves[::-1])
    assert forward.keys() == backward.keys() and len(forward) == HUB_POOL + 20
    for uri, s in forward.items():
        assert backward[uri] == pytest.approx(s, abs=1e-6), uri
