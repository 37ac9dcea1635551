"""Neighbour evidence between chunks of a sectioned document counts in proportion to the
section the two chunks share (``treehop.tree_scoring.section_overlap``), in the scoring
function and in ``find()``."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, Node, TypedQuery
from treehop.stores.base import ScoredNode
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import (
    ContextWeights,
    context_columns,
    context_scores,
    section_of,
    section_overlap,
)
from treehop.uri import ancestors_of

DOC = "viking://resources/docs"


def test_overlap_is_the_shared_share_of_the_heading_path() -> None:
    assert section_overlap(("Gunicorn", "Running"), ("Gunicorn", "Running")) == 1.0
    assert section_overlap(("Gunicorn", "Running"), ("Gunicorn", "Async")) == 0.5
    assert section_overlap(("A", "B", "C"), ("A", "B", "D")) == pytest.approx(2 / 3)
    assert section_overlap(("A",), ("A", "B")) == 0.5  # the page intro and its first section
    assert section_overlap(("A", "x"), ("B", "x")) == 0.0  # another top-level heading
    # no heading path (turns, whole files, unsectioned text): the neighbour counts in full
    assert section_overlap(None, ("A",)) == section_overlap((), ()) == 1.0


paths = st.lists(st.sampled_from(["a", "b", "c"]), max_size=4).map(tuple)


@settings(deadline=None)  # timing is not what is tested (the machine may be loaded)
@given(paths, paths)
def test_overlap_is_symmetric_bounded_and_one_only_within_a_section(
    a: tuple[str, ...], b: tuple[str, ...]
) -> None:
    v = section_overlap(a, b)
    assert v == section_overlap(b, a)
    assert 0.0 <= v <= 1.0
    assert (v == 1.0) == (a == b)


def chunk(file: str, i: int, score: float, path: list[str] | None) -> ScoredNode:
    node = Node(
        uri=f"{DOC}/{file}#chunk-{i}",
        parent_uri=f"{DOC}/{file}",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        chunk_index=i,
        metadata={} if path is None else {"heading_path": path},
    )
    return ScoredNode(node=node, score=score, vector_score=score)


def test_a_neighbour_under_another_heading_lends_no_evidence() -> None:
    leaves = [
        chunk("a.md", 0, 0.1, ["Intro"]),
        chunk("a.md", 1, 0.9, ["Setup", "Install"]),
        chunk("a.md", 2, 0.5, ["Setup", "Install"]),  # the same section, split by size
        chunk("a.md", 3, 0.7, ["Setup", "Run"]),
    ]
    w = ContextWeights(neighbours=1.0)
    rows = {r.hit.node.chunk_index: r for r in context_scores(leaves, {}, w, sections=True)}
    # chunk 1: chunk 0 (another top-level section) weighs 0, chunk 2 weighs 1: the
    # neighbour mean is chunk 2's score, at half the neighbour weight (one of two counts)
    assert rows[1].neighbours == pytest.approx(0.5)
    assert rows[1].final == pytest.approx((0.9 + 0.5 * 0.5) / 1.5)
    # chunk 2: chunk 1 weighs 1, chunk 3 (a sibling subsection) 0.5; neighbour weight 0.75
    assert rows[2].neighbours == pytest.approx((0.9 + 0.5 * 0.7) / 1.5)
    assert rows[2].final == pytest.approx((0.5 + 0.75 * rows[2].neighbours) / 1.75)
    # chunk 0: its only neighbour is another section: the neighbour term drops out
    assert rows[0].final == pytest.approx(0.1)
    # without sections (the old rule) every neighbour counts in full
    plain = {r.hit.node.chunk_index: r for r in context_scores(leaves, {}, w)}
    assert plain[1].neighbours == pytest.approx((0.1 + 0.5) / 2)
    # chunks without heading paths keep the old rule with sections on
    bare = [chunk("b.md", i, s, None) for i, s in enumerate([0.1, 0.9, 0.5])]
    on = context_scores(bare, {}, w, sections=True)
    off = context_scores(bare, {}, w)
    assert [r.final for r in on] == pytest.approx([r.final for r in off])


def test_section_of_reads_chunks_only() -> None:
    assert section_of(chunk("a.md", 0, 0.0, ["A", "B"]).node) == ("A", "B")
    assert section_of(chunk("a.md", 0, 0.0, None).node) is None
    whole = Node(
        uri=f"{DOC}/c.md",
        parent_uri=DOC,
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        metadata={"heading_path": ["C"]},
    )
    assert section_of(whole) is None


def at(cos: float) -> np.ndarray:
    """A unit vector at cosine ``cos`` to the query (1, 0, 0, 0)."""
    return np.array([cos, math.sqrt(1 - cos * cos), 0, 0], np.float32)


def sectioned_store() -> EmbeddedStore:
    """a.md answers the query in one section (0.9) between two unrelated sections (0);
    b.md is about the query throughout (three chunks of one section at 0.78)."""
    spec: dict[str, tuple[np.ndarray, int | None, list[str] | None]] = {
        DOC: (np.array([0, 0, 1, 0], np.float32), None, None),
        f"{DOC}/a.md": (np.array([0, 0, 1, 0], np.float32), None, None),
        f"{DOC}/b.md": (np.array([0, 0, 1, 0], np.float32), None, None),
    }
    for i, (cos, path) in enumerate(
        [(0.0, ["A", "Intro"]), (0.9, ["A", "Target"]), (0.0, ["A", "Other"])]
    ):
        spec[f"{DOC}/a.md#chunk-{i}"] = (at(cos), i, path)
    for i in range(3):
        spec[f"{DOC}/b.md#chunk-{i}"] = (at(0.78), i, ["B"])
    return paged_store(spec, {"chunks": 3})


def paged_store(
    spec: dict[str, tuple[np.ndarray, int | None, list[str] | None]],
    file_metadata: dict[str, object] | None = None,
) -> EmbeddedStore:
    """An embedded store of ``DOC``, its pages and their chunks: ``spec`` maps each URI to its
    vector, chunk index (``None``: the folder or a page) and heading path."""
    nodes = [
        Node(
            uri=u,
            parent_uri=None if u == DOC else (DOC if ci is None else u.split("#")[0]),
            context_type=ContextType.RESOURCE,
            level=1 if ci is None else 2,
            is_leaf=ci is not None,
            chunk_index=ci,
            abstract=u,
            metadata=dict(file_metadata or {})
            if u.endswith(".md")
            else ({"heading_path": p} if p else {}),
            ancestors=ancestors_of(u.split("#")[0]) if ci is not None else ancestors_of(u),
        )
        for u, (_, ci, p) in spec.items()
    ]
    store = EmbeddedStore()
    store.upsert(nodes, np.stack([v for v, _, _ in spec.values()]))
    return store


@pytest.mark.parametrize(("sections", "first"), [(True, "a.md"), (False, "b.md")])
def test_find_ranks_the_named_section_over_a_topical_page(sections: bool, first: str) -> None:
    cfg = RetrievalConfig(context_neighbour_sections=sections)
    req = RetrievalRequest(
        query=TypedQuery(query="q"),
        vector=np.array([1, 0, 0, 0], np.float32),
        roots=[DOC],
        limit=2,
        dense_weight=1.0,
    )
    res = asyncio.run(HierarchicalRetriever(sectioned_store(), cfg).retrieve(req))
    files = [m.uri.split("#")[0].rsplit("/", 1)[-1] for m in res.matched_contexts]
    assert files == [first, "b.md" if first == "a.md" else "a.md"]


@settings(deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2), st.sampled_from([None, ("A",), ("A", "x"), ("A", "y"), ("B",)])
        ),
        min_size=1,
        max_size=30,
    ),
    st.lists(st.floats(0, 1), min_size=30, max_size=30),
    st.sets(st.integers(0, 29), max_size=5),
)
def test_section_weights_read_lazily_equal_the_full_computation(
    spec: list[tuple[int, tuple[str, ...] | None]], scores: list[float], asked: set[int]
) -> None:
    """Heading paths are read only for pairs that touch a returned leaf; the returned leaves'
    scores equal those of the computation over every leaf."""
    parents = [f"{DOC}/f{f}.md" for f, _ in spec]
    keys = [(i, ()) for i in range(len(spec))]
    paths = [p for _, p in spec]
    own = scores[: len(spec)]
    w = ContextWeights(0.35, 0.1, 0.4)
    full = context_columns(parents, keys, own, {}, w, None, paths.__getitem__)
    reads: list[int] = []

    def section(i: int) -> tuple[str, ...] | None:
        reads.append(i)
        return paths[i]

    keep = [i in asked for i in range(len(spec))]
    part = context_columns(parents, keys, own, {}, w, keep, section)
    by_full = dict(zip(full.picked, full.final, strict=True))
    for i, f in zip(part.picked, part.final, strict=True):
        assert f == pytest.approx(by_full[i])
    family = {p: [i for i, q in enumerate(parents) if q == p] for p in parents}

    def around(i: int) -> set[int]:
        f = family[parents[i]]
        k = f.index(i)
        return set(f[max(k - 1, 0) : k + 2])

    assert set(reads) <= {j for i in part.picked for j in around(i)}
    assert len(reads) == len(set(reads))  # each path read once
