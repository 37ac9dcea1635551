"""A question's chunk window and slots spread over documents (``treehop.chunk_window``,
``question_chunk_window``, ``question_document_penalty``; issue 33, round 9).

A chunk of a question's answer often says less than the stretch around it (the answer
continues into the next chunk, its subject is named in the one before): a question over
documents scores each of its best chunks on the larger of its own cosine and its window's
(itself with its previous and next chunk). A slot is ranked on that, and shows its chunks on
their own scores. Raising chunks by their neighbourhood lifts a coherent page's many sections
together, so each further slot of a document gives up a little per slot of it above.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from treehop import InvalidConfigError, RetrievalConfig
from treehop.chunk_window import neighbour_uris, spread_over_documents, window_gains
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, Node, TypedQuery
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_folder, resource_leaf, resource_root

R = "viking://resources"
DIM = 16
QUESTION = "Why does my build fail?"
KEYWORDS = "build failure"


def _unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


# ---------------------------------------------------------------------------- the pieces


def test_neighbour_uris_are_the_previous_and_next_chunk_of_the_file() -> None:
    f = f"{R}/docs/a.md"
    assert neighbour_uris(f"{f}#chunk-0", 0) == (f"{f}#chunk-1",)
    assert neighbour_uris(f"{f}#chunk-7", 7) == (f"{f}#chunk-6", f"{f}#chunk-8")
    assert neighbour_uris(f, None) == ()  # a whole file: no chunk neighbours
    assert neighbour_uris(f"{f}#chunk-3", 4) == ()  # a URI another store named
    assert neighbour_uris(f"{R}/docs/x", 2) == ()


def test_the_window_gain_is_its_cosine_over_the_chunks_own() -> None:
    q = _unit((0, 1.0))
    rows = np.stack(
        [_unit((0, 0.6), (1, 0.8)), _unit((0, 0.6), (2, 0.8)), _unit((0, 0.6), (3, 0.8))]
    )
    own, prev, nxt = np.array([0, 1, 2]), np.array([-1, 0, 1]), np.array([1, 2, -1])
    got = window_gains(q, rows, own, prev, nxt)
    middle = rows.sum(axis=0)
    assert got[1] == pytest.approx(middle[0] / np.linalg.norm(middle) - 0.6, abs=1e-6)
    edge = rows[0] + rows[1]
    assert got[0] == pytest.approx(edge[0] / np.linalg.norm(edge) - 0.6, abs=1e-6)
    assert got[1] > got[0] > 0  # three diverse chunks that share the query's direction
    # a chunk without neighbours, and one that says it best, gain nothing
    lone = window_gains(q, rows, np.array([0]), np.array([-1]), np.array([-1]))
    assert lone.tolist() == [0.0]
    best = np.stack([_unit((0, 1.0)), _unit((5, 1.0))])
    assert window_gains(q, best, np.array([0]), np.array([-1]), np.array([1])).tolist() == [0.0]


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, (6, 5), elements=st.floats(-1, 1, allow_nan=False)),
    arrays(np.float64, (6,), elements=st.floats(0.1, 10)),
    st.lists(st.integers(-1, 5), min_size=6, max_size=6),
)
def test_window_gains_are_cosines_never_negative(
    x: np.ndarray, scale: np.ndarray, links: list[int]
) -> None:
    """A gain is never negative and does not depend on the stored vectors' lengths."""
    x = x + np.eye(6, 5)
    # (no zero or near-zero rows: a norm under 1e-12 is clamped by design, so such a
    # degenerate row's cosine depends on its length; an embedder never stores one)
    assume(bool((np.linalg.norm(x * scale[:, None], axis=1) > 1e-3).all()))
    q = np.ones(5)
    own = np.arange(6)
    prev = np.array(links)
    nxt = np.roll(prev, 1)
    got = window_gains(q, x, own, prev, nxt)
    assert (got >= 0).all()
    assert np.allclose(window_gains(q, x * scale[:, None], own, prev, nxt), got, atol=1e-5)


def test_spread_gives_way_to_another_documents_slot() -> None:
    order, adjusted = spread_over_documents([1.0, 0.99, 0.98, 0.97], ["a", "a", "a", "b"], 0.03)
    assert order == [0, 3, 1, 2]
    assert adjusted == pytest.approx([1.0, 0.97, 0.96, 0.92])
    # a document's second slot still goes first when it is clearly better
    order, _ = spread_over_documents([1.0, 0.99, 0.5], ["a", "a", "b"], 0.03)
    assert order == [0, 1, 2]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.floats(-1, 1), st.sampled_from("abcd")), min_size=0, max_size=30),
    st.floats(0, 0.5),
)
def test_spread_is_a_reordering_with_scores_that_never_rise(
    slots: list[tuple[float, str]], penalty: float
) -> None:
    slots = sorted(slots, key=lambda s: -s[0])
    scores, docs = [s for s, _ in slots], [d for _, d in slots]
    order, adjusted = spread_over_documents(scores, docs, penalty)
    assert sorted(order) == list(range(len(slots)))
    assert adjusted == sorted(adjusted, reverse=True)  # (a reader may sort by score)
    seen: dict[str, int] = {}
    for i, a in zip(order, adjusted, strict=True):
        assert a == pytest.approx(scores[i] - penalty * seen.get(docs[i], 0))
        seen[docs[i]] = seen.get(docs[i], 0) + 1
    if penalty == 0:
        assert order == list(range(len(slots)))
    # a find chooses only its ``limit`` slots greedily: the same first slots, the rest after
    for first in (0, 1, 3):
        part, part_adjusted = spread_over_documents(scores, docs, penalty, first)
        assert sorted(part) == list(range(len(slots)))
        assert part[:first] == order[:first]
        assert part_adjusted == sorted(part_adjusted, reverse=True)


# ------------------------------------------------------------------------ in the retriever


def _chunk(doc: str, i: int, text: str, start: int) -> Node:
    return Node(
        uri=f"{doc}#chunk-{i}",
        parent_uri=doc,
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        content=text,
        chunk_index=i,
        metadata={"passage_start": start},
    )


def _file(uri: str) -> Node:
    return Node(
        uri=uri,
        parent_uri=uri.rsplit("/", 1)[0],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=False,
        abstract=uri.rsplit("/", 1)[-1],
    )


def _store(
    chunks: Sequence[tuple[str, int, np.ndarray, int]], files: dict[str, np.ndarray]
) -> EmbeddedStore:
    """A root, ``docs/``, chunked files (``chunks``: file name, index, vector, passage start;
    the texts share no word with the queries, so BM25 adds nothing) and whole files."""
    nodes = [resource_root(), resource_folder(f"{R}/docs")]
    vectors = [_unit((15, 1.0)), _unit((14, 1.0))]
    for name in dict.fromkeys(c[0] for c in chunks):
        nodes.append(_file(f"{R}/docs/{name}"))
        vectors.append(_unit((13, 1.0)))
    for name, i, v, start in chunks:
        nodes.append(_chunk(f"{R}/docs/{name}", i, f"paragraph {name} {i}", start))
        vectors.append(v)
    for name, v in files.items():
        nodes.append(resource_leaf(f"{R}/docs/{name}", f"note {name}"))
        vectors.append(v)
    store = EmbeddedStore()
    store.upsert(nodes, np.stack(vectors))
    return store


def _find(
    store: EmbeddedStore, query: str, cfg: RetrievalConfig, limit: int = 3
) -> list[tuple[str, float, list[tuple[str, float]]]]:
    req = RetrievalRequest(
        query=TypedQuery(query=query), vector=_unit((0, 1.0)), roots=[R], limit=limit
    )
    result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
    return [
        (
            m.uri.rsplit("/", 1)[-1],
            m.score,
            [(c.uri.rsplit("/", 1)[-1], c.score) for c in m.collapsed],
        )
        for m in result.matched_contexts
    ]


def _spread_answer() -> EmbeddedStore:
    """``guide.md``: one answer in three chunks, each 0.6 to the query on its own but each
    along another direction (their window: 0.79); ``faq.md``: a whole file at 0.7."""
    return _store(
        [
            ("guide.md", 0, _unit((0, 0.6), (1, 0.8)), 0),
            ("guide.md", 1, _unit((0, 0.62), (2, 0.78)), 0),
            ("guide.md", 2, _unit((0, 0.6), (3, 0.8)), 0),
        ],
        {"faq.md": _unit((0, 0.7), (5, 0.714))},
    )


def test_a_question_ranks_an_answer_spread_over_chunks_on_its_window() -> None:
    store = _spread_answer()
    on = _find(store, QUESTION, RetrievalConfig())
    assert on[0][0] == "guide.md#chunk-1"
    off = _find(store, QUESTION, RetrievalConfig(question_chunk_window=False))
    assert off[0][0] == "faq.md"
    # the slot is ranked on its window, its chunks are shown on their own scores
    w = RetrievalConfig().question_dense_weight or 0.0
    window = np.stack(
        [_unit((0, 0.6), (1, 0.8)), _unit((0, 0.62), (2, 0.78)), _unit((0, 0.6), (3, 0.8))]
    ).sum(0)
    lifted = w * float(window[0] / np.linalg.norm(window))
    assert on[0][1] == pytest.approx(lifted, abs=1e-5)
    own = dict((u, s) for _, _, coll in off for u, s in coll)
    for uri, score in on[0][2]:
        assert score == pytest.approx(own.get(uri, score), abs=1e-6)
        assert score < on[0][1]
    scores = [s for _, s, _ in on]
    assert scores == sorted(scores, reverse=True)


def test_the_face_is_the_chunk_that_says_most_by_itself() -> None:
    """Chunk 2 is the answer (0.8 on its own); chunk 1 beside it is weak alone but its window
    (chunks 0-2) is the best: the slot ranks on that window and still shows chunk 2 first."""
    store = _store(
        [
            ("guide.md", 0, _unit((0, 0.75), (1, 0.661)), 0),
            ("guide.md", 1, _unit((0, 0.3), (2, 0.954)), 0),
            ("guide.md", 2, _unit((0, 0.8), (3, 0.6)), 0),
            ("guide.md", 3, _unit((0, 0.1), (4, 0.995)), 0),
        ],
        {},
    )
    top = _find(store, QUESTION, RetrievalConfig(), limit=1)[0]
    assert top[0] == "guide.md#chunk-2"


def test_keyword_queries_are_not_touched() -> None:
    """The same list and scores whatever the question-only options say."""
    store = _spread_answer()
    base = _find(
        store, KEYWORDS, RetrievalConfig(question_chunk_window=False, question_document_penalty=0.0)
    )
    assert _find(store, KEYWORDS, RetrievalConfig()) == base
    assert _find(store, KEYWORDS, RetrievalConfig(question_document_penalty=0.5)) == base


def test_a_documents_further_slots_give_way_to_another_document() -> None:
    """Three answers of ``ref.md`` (0.80, 0.79, 0.78, each a passage of its own) and one of
    ``faq.md`` (0.775): with the penalty the FAQ's slot comes second."""
    store = _store(
        [
            ("ref.md", 0, _unit((0, 0.80), (1, 0.6)), 0),
            ("ref.md", 1, _unit((6, 1.0)), 1),  # (unrelated answers between them)
            ("ref.md", 2, _unit((0, 0.79), (2, 0.613)), 2),
            ("ref.md", 3, _unit((7, 1.0)), 3),
            ("ref.md", 4, _unit((0, 0.78), (3, 0.626)), 4),
        ],
        {"faq.md": _unit((0, 0.775), (5, 0.632))},
    )
    alone = RetrievalConfig(question_chunk_window=False)
    spread = [u for u, _, _ in _find(store, QUESTION, alone, limit=4)]
    assert spread[:2] == ["ref.md#chunk-0", "faq.md"]
    flat = RetrievalConfig(question_chunk_window=False, question_document_penalty=0.0)
    assert [u for u, _, _ in _find(store, QUESTION, flat, limit=4)][:3] == [
        "ref.md#chunk-0",
        "ref.md#chunk-2",
        "ref.md#chunk-4",
    ]
    got = _find(store, QUESTION, alone, limit=4)
    assert [s for _, s, _ in got] == sorted((s for _, s, _ in got), reverse=True)


@pytest.mark.parametrize("bad", [float("nan"), -0.01, 1.01, "x"])
def test_the_penalty_is_validated(bad: object) -> None:
    with pytest.raises(InvalidConfigError, match="question_document_penalty"):
        RetrievalConfig(question_document_penalty=bad)


class _StoreWithoutPresentVectors(EmbeddedStore):
    """A store that offers only the protocol's ``get_vectors`` (as a remote store does): a
    missing neighbour (past a file's last chunk) is the store's ``NotFoundError``."""

    present_vectors = None  # type: ignore[assignment]


def test_a_store_without_present_vectors_gives_the_same_list() -> None:
    """The retriever falls back to ``get_vectors`` and its retry without the missing URIs
    (``guide.md#chunk-3`` does not exist): the same list and scores."""
    plain = _spread_answer()
    other = _StoreWithoutPresentVectors()
    other.upsert(list(plain.iter_nodes()), plain.get_vectors([n.uri for n in plain.iter_nodes()]))
    assert _find(other, QUESTION, RetrievalConfig()) == _find(plain, QUESTION, RetrievalConfig())
