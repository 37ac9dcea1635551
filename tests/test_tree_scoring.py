"""Tree context scoring: a leaf's final score takes its neighbours', best sibling's and
parent's own scores (``treehop.tree_scoring``), and ``find()``'s descent applies it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from treehop import RetrievalConfig
from treehop.descent import Candidate, Score
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.ingest.tree_builder import TreeBuilder
from treehop.models import ContextType, FoundBy, Node, TypedQuery
from treehop.stores.base import ScoredNode
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import (
    ContextScored,
    ContextWeights,
    context_scores,
    is_result_unit,
    represented_directories,
    sibling_order_key,
)
from treehop.uri import ancestors_of, parent_of

S = "viking://user/u/memories/chat/session-01"


def hit(uri: str, score: float, chunk: int | None = None) -> ScoredNode:
    node = Node(
        uri=uri,
        parent_uri=parent_of(uri) if chunk is None else uri.split("#")[0],
        context_type=ContextType.MEMORY,
        level=2,
        is_leaf=True,
        chunk_index=chunk,
    )
    return ScoredNode(node=node, score=score, vector_score=score)


def by_name(rows: list[ContextScored]) -> dict[str, ContextScored]:
    return {r.hit.node.uri.rsplit("/", 1)[-1]: r for r in rows}


def test_zero_weights_keep_the_own_score() -> None:
    rows = context_scores([hit(f"{S}/turn-1", 0.3), hit(f"{S}/turn-2", 0.9)], {}, ContextWeights())
    assert [r.final for r in rows] == pytest.approx([0.3, 0.9])


def test_neighbours_are_the_adjacent_turns_in_natural_order() -> None:
    # turn-10 comes after turn-9 (natural order), so turn-9's neighbours are 8 and 10.
    leaves = [hit(f"{S}/turn-{i}", s) for i, s in [(10, 0.8), (8, 0.2), (9, 0.1), (11, 0.0)]]
    w = ContextWeights(neighbours=1.0)
    rows = by_name(context_scores(leaves, {}, w))
    assert rows["turn-9"].neighbours == pytest.approx((0.2 + 0.8) / 2)
    assert rows["turn-8"].neighbours == pytest.approx(0.1)
    assert rows["turn-9"].final == pytest.approx((0.1 + 0.5) / 2)


def test_chunks_are_ordered_by_chunk_index_not_by_uri() -> None:
    f = "viking://resources/doc.md"
    leaves = [hit(f"{f}#chunk-{i}", s, chunk=i) for i, s in [(2, 0.9), (10, 0.5), (1, 0.1)]]
    assert sorted(leaves, key=sibling_order_key)[-1].node.chunk_index == 10
    rows = {r.hit.node.chunk_index: r for r in context_scores(leaves, {}, ContextWeights(1.0))}
    assert rows[1].neighbours == pytest.approx(0.9)
    assert rows[2].neighbours == pytest.approx((0.1 + 0.5) / 2)


def test_best_sibling_and_parent_evidence_stay_within_one_parent() -> None:
    other = "viking://user/u/memories/chat/session-02"
    leaves = [hit(f"{S}/turn-1", 0.9), hit(f"{S}/turn-2", 0.1), hit(f"{other}/turn-1", 0.2)]
    w = ContextWeights(parent=1.0, best_sibling=1.0)
    rows = context_scores(leaves, {S: 0.5}, w)
    best = {r.hit.node.uri: r.best_sibling for r in rows}
    par = {r.hit.node.uri: r.parent for r in rows}
    assert best[f"{S}/turn-2"] == pytest.approx(0.9)
    assert best[f"{other}/turn-1"] == pytest.approx(0.2)
    assert par[f"{S}/turn-2"] == 0.5 and par[f"{other}/turn-1"] == 0.0
    # A weighted mean: on the scale of the own scores.
    assert all(min(0, r.own) <= r.final <= 1 for r in rows)


def test_keep_returns_the_kept_leaves_and_their_neighbours_only() -> None:
    leaves = [hit(f"{S}/turn-{i}", 0.1 * i) for i in range(1, 8)]
    rows = context_scores(leaves, {}, ContextWeights(1.0), keep={f"{S}/turn-4"})
    assert sorted(by_name(rows)) == ["turn-3", "turn-4", "turn-5"]


# --------------------------------------------------------------------------------- retriever

DIM = 4
Q = np.array([1, 0, 0, 0], np.float32)


def unit(*x: float) -> np.ndarray:
    v = np.asarray(x, np.float32)
    return v / np.linalg.norm(v)


def memory_store() -> EmbeddedStore:
    """Two sessions. In session-01 the question is asked by turn-2 (close to the query), and
    answered by turn-3 ("Yes, last Saturday"), which on its own is far from the query; in
    session-02, turn-1 is a stray mention, a bit closer to the query than the answer."""
    root = "viking://user/u/memories/chat"
    spec = {
        root: unit(0, 0, 0, 1),
        f"{root}/session-01": unit(0.2, 0, 1, 0),
        f"{root}/session-01/turn-1": unit(0.1, 1, 0, 0),
        f"{root}/session-01/turn-2": unit(0.95, 0.3, 0, 0),
        f"{root}/session-01/turn-3": unit(0.3, 0, 1, 0),
        f"{root}/session-01/turn-4": unit(0.0, 1, 0.2, 0),
        f"{root}/session-02": unit(0.1, 0, 0, 1),
        f"{root}/session-02/turn-1": unit(0.4, 0, 0, 1),
        f"{root}/session-02/turn-2": unit(0.0, 0, 0, 1),
    }
    nodes = [
        Node(
            uri=u,
            parent_uri=parent_of(u) if u != root else None,
            context_type=ContextType.MEMORY,
            level=2 if "turn" in u else 1,
            is_leaf="turn" in u,
            abstract=u.rsplit("/", 1)[-1],
            content=u if "turn" in u else "",
            ancestors=ancestors_of(u),
        )
        for u in spec
    ]
    store = EmbeddedStore()
    store.upsert(nodes, np.stack(list(spec.values())))
    return store


def retrieve(cfg: RetrievalConfig) -> list[tuple[str, FoundBy]]:
    r = HierarchicalRetriever(memory_store(), cfg)
    req = RetrievalRequest(
        query=TypedQuery(query="q"),
        vector=Q,
        roots=["viking://user/u/memories/chat"],
        limit=3,
        dense_weight=1.0,
        include_directories=False,
    )
    res = asyncio.run(r.retrieve(req))
    return [(m.uri.split("chat/")[1], m.found_by) for m in res.matched_contexts]


def test_find_lifts_the_answer_next_to_a_strong_hit() -> None:
    # Turns alone (memory_context_chars=0): this tests the ranking, not the slots.
    off = RetrievalConfig(
        context_neighbour_weight=0,
        context_parent_weight=0,
        context_sibling_weight=0,
        memory_context_chars=0,
    )
    flat = [u for u, _ in retrieve(off)]
    assert flat == ["session-01/turn-2", "session-02/turn-1", "session-01/turn-3"]
    with_tree = retrieve(RetrievalConfig(memory_context_chars=0))
    # The answer outranks the stray mention because its neighbour and sibling asked.
    assert [u for u, _ in with_tree][:2] == ["session-01/turn-2", "session-01/turn-3"]
    assert dict(with_tree)["session-01/turn-2"] is FoundBy.GLOBAL


def cand(uri: str, own: float, final: float, leaf: bool = True) -> Candidate:
    node = Node(
        uri=uri,
        parent_uri=parent_of(uri),
        context_type=ContextType.RESOURCE,
        level=2 if leaf else 1,
        is_leaf=leaf,
        ancestors=ancestors_of(uri),
    )
    return Candidate(node, Score(own), Score(final), own, FoundBy.GLOBAL)


def test_a_directory_keeps_its_slot_only_above_every_leaf_below_it() -> None:
    r = "viking://resources"
    cands = [
        # k8s: its leaf is more relevant on its own (though its blended final is lower).
        cand(f"{r}/k8s", 0.70, 0.70, leaf=False),
        cand(f"{r}/k8s/deploy.md", 0.75, 0.67),
        # skills/rfc: beats everything collected below it (a skill's folder is the answer).
        cand(f"{r}/rfc", 0.60, 0.60, leaf=False),
        cand(f"{r}/rfc/deep/SKILL.md", 0.40, 0.45),
        # ops: nothing collected below it.
        cand(f"{r}/ops", 0.30, 0.30, leaf=False),
    ]
    assert represented_directories(cands) == {f"{r}/k8s": pytest.approx(0.67)}


# ------------------------------------------------------------------- which nodes take a slot


def node(uri: str, leaf: bool, ctype: ContextType = ContextType.RESOURCE, **meta: object) -> Node:
    return Node(
        uri=uri,
        parent_uri=parent_of(uri),
        context_type=ctype,
        level=2 if leaf else 1,
        is_leaf=leaf,
        metadata=dict(meta),
        ancestors=ancestors_of(uri),
    )


def test_only_nodes_with_content_of_their_own_are_result_units() -> None:
    r, sk = "viking://resources", "viking://user/u/skills"
    assert is_result_unit(node(f"{r}/a/page.md", True))
    assert is_result_unit(node(f"{r}/guide", False, overview_from="README.md"))
    # Overviews generated from the children: routing aids, no slot.
    assert not is_result_unit(node(f"{r}/topic-07", False, overview_from="children"))
    assert not is_result_unit(node(f"{r}/implicit", False, implicit=True))
    assert not is_result_unit(node(f"{r}/a/long.md", False, chunks=4))
    # A skill is its folder, whatever wrote its overview; a folder inside a skill is not.
    assert is_result_unit(node(f"{sk}/create-rfc", False, ContextType.SKILL))
    assert not is_result_unit(node(f"{sk}/create-rfc/scripts", False, ContextType.SKILL))


def test_ingest_records_where_a_directory_overview_came_from(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "README.md").write_text("# Guide\n\nHow we deploy services.\n")
    (tmp_path / "guide" / "deploy.md").write_text("# Deploy\n\nRoll out with care.\n")
    (tmp_path / "topic").mkdir()
    (tmp_path / "topic" / "a.md").write_text("# A\n\nFirst note.\n")
    built = TreeBuilder().build_directory(tmp_path, "viking://resources/t", ContextType.RESOURCE)
    dirs = {n.uri.rsplit("/", 1)[-1]: n for n in built.nodes if not n.is_leaf}
    assert dirs["guide"].metadata["overview_from"] == "README.md"
    assert dirs["topic"].metadata["overview_from"] == "children"
    assert is_result_unit(dirs["guide"]) and not is_result_unit(dirs["topic"])


def slot_store() -> tuple[EmbeddedStore, dict[str, str]]:
    """Three folders whose own vectors beat every leaf below them: a topic cluster (overview
    generated from its children), a folder with its own README, and a skill."""
    r, sk = "viking://resources", "viking://user/u/skills"
    spec = {
        f"{r}/topic": (unit(1, 0.05, 0, 0), {"overview_from": "children"}, ContextType.RESOURCE),
        f"{r}/topic/a.md": (unit(0.6, 1, 0, 0), {}, ContextType.RESOURCE),
        f"{r}/guide": (unit(1, 0, 0.1, 0), {"overview_from": "README.md"}, ContextType.RESOURCE),
        f"{r}/guide/README.md": (unit(0.5, 0, 1, 0), {}, ContextType.RESOURCE),
        f"{sk}/rfc": (unit(1, 0, 0, 0.15), {"overview_from": "children"}, ContextType.SKILL),
        f"{sk}/rfc/SKILL.md": (unit(0.5, 0, 0, 1), {}, ContextType.SKILL),
    }
    nodes = [node(u, u.endswith(".md"), ct, **m) for u, (_, m, ct) in spec.items()]
    store = EmbeddedStore()
    store.upsert(nodes, np.stack([v for v, _, _ in spec.values()]))
    return store, {"resources": r, "skills": sk}


@pytest.mark.parametrize(
    ("include", "expected"),
    [
        (None, {"guide", "guide/README.md", "topic/a.md", "rfc", "rfc/SKILL.md"}),
        (True, {"topic", "guide", "guide/README.md", "topic/a.md", "rfc", "rfc/SKILL.md"}),
        (False, {"guide/README.md", "topic/a.md", "rfc/SKILL.md"}),
    ],
)
def test_a_generated_summary_directory_gives_no_slot_a_skill_directory_does(
    include: bool | None, expected: set[str]
) -> None:
    store, roots = slot_store()
    got: set[str] = set()
    for root in roots.values():
        req = RetrievalRequest(
            query=TypedQuery(query="q"),
            vector=Q,
            roots=[root],
            limit=10,
            dense_weight=1.0,
            include_directories=include,
        )
        res = asyncio.run(HierarchicalRetriever(store, RetrievalConfig()).retrieve(req))
        got |= {m.uri.removeprefix(root + "/") for m in res.matched_contexts}
    assert got == expected


def _context_scores_per_parent(
    leaves: list[ScoredNode],
    parent_scores: dict[str, float],
    w: ContextWeights,
    keep: set[str],
) -> list[tuple[str, float, float, float, float, float]]:
    """The algorithm context_scores replaced (one Python sort per parent), kept as the
    reference its one-sort version must equal bit for bit."""
    by_parent: dict[str, list[int]] = {}
    for i, h in enumerate(leaves):
        by_parent.setdefault(h.node.parent_uri or "", []).append(i)
    own = np.array([h.score for h in leaves], dtype=np.float64)
    prev = np.full(len(leaves), -1)
    nxt = np.full(len(leaves), -1)
    best = np.empty(len(leaves))
    par = np.zeros(len(leaves))
    for p, members in by_parent.items():
        order = np.asarray(sorted(members, key=lambda i: sibling_order_key(leaves[i])))
        prev[order[1:]] = order[:-1]
        nxt[order[:-1]] = order[1:]
        best[order] = own[order].max()
        par[order] = parent_scores.get(p, 0.0)
    has_p, has_n = prev >= 0, nxt >= 0
    count = has_p.astype(np.float64) + has_n
    total = np.where(has_p, own[prev], 0.0) + np.where(has_n, own[nxt], 0.0)
    neigh = np.where(count > 0, total / np.maximum(count, 1.0), own)
    final = (own + w.neighbours * neigh + w.parent * par + w.best_sibling * best) / w.total
    mask = np.array([h.node.uri in keep for h in leaves])
    near = mask.copy()
    near[prev[mask & has_p]] = True
    near[nxt[mask & has_n]] = True
    return [
        (leaves[i].node.uri, own[i], neigh[i], par[i], best[i], final[i])
        for i in np.flatnonzero(near).tolist()
    ]


@pytest.mark.parametrize("seed", range(6))
def test_one_sort_equals_the_per_parent_algorithm_on_a_random_tree(seed: int) -> None:
    rng = np.random.default_rng(seed)
    parents = [f"viking://resources/d{i}" for i in range(int(rng.integers(1, 12)))]
    leaves = []
    for j in range(int(rng.integers(1, 120))):
        p = parents[int(rng.integers(len(parents)))]
        if rng.random() < 0.3:  # a chunk of a file named after the parent
            leaves.append(hit(f"{p}#chunk-{j}", float(rng.random()), chunk=int(rng.integers(50))))
        else:
            leaves.append(hit(f"{p}/t-{rng.integers(30)}-{j}.md", float(rng.random())))
    rng.shuffle(leaves)
    scores = {p: float(rng.random()) for p in parents if rng.random() < 0.7}
    keep = {h.node.uri for h in leaves if rng.random() < 0.3}
    w = ContextWeights(*rng.random(3).tolist())
    got = [
        (r.hit.node.uri, r.own, r.neighbours, r.parent, r.best_sibling, r.final)
        for r in context_scores(leaves, scores, w, keep)
    ]
    assert got == _context_scores_per_parent(leaves, scores, w, keep)


@pytest.mark.parametrize("seed", range(6))
def test_one_family_scores_as_it_does_beside_others(seed: int) -> None:
    """Leaves of one parent alone (their own path: no per-family arithmetic) score exactly
    as the same leaves do beside other families (which share no evidence with them)."""
    rng = np.random.default_rng(seed)
    mine, other = "viking://resources/a", "viking://resources/b"
    leaves = [
        hit(f"{mine}#chunk-{j}", float(rng.random()), chunk=int(rng.integers(50)))
        if rng.random() < 0.3
        else hit(f"{mine}/t-{rng.integers(30)}-{j}.md", float(rng.random()))
        for j in range(int(rng.integers(1, 60)))
    ]
    others = [hit(f"{other}/x-{j}.md", float(rng.random())) for j in range(5)]
    scores = {mine: float(rng.random()), other: float(rng.random())}
    keep = {h.node.uri for h in leaves if rng.random() < 0.5}
    w = ContextWeights(*rng.random(3).tolist())

    def rows(given: list[ScoredNode]) -> list[tuple[str, float, float, float, float, float]]:
        return [
            (r.hit.node.uri, r.own, r.neighbours, r.parent, r.best_sibling, r.final)
            for r in context_scores(given, scores, w, keep)
            if r.hit.node.uri.startswith(mine)
        ]

    alone = rows(leaves)
    assert alone and alone == rows(others[:2] + leaves + others[2:])
    assert {r[3] for r in alone} == {scores[mine]}  # the parent's own score
    assert {r[4] for r in alone} == {max(h.score for h in leaves)}  # the best sibling
