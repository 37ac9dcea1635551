"""A question's passage slot grows to its own-best neighbour first (``question_grow_own``;
issue 33, round 10).

A passage slot opens at its best-ranked chunk and grows over its passage's neighbours while
its text fits. The rank a neighbour has is not its own evidence: the chunk window lifts the
chunk *beside* a good chunk (its window holds that chunk), so when the budget holds one side
only, growing to the better-ranked side took the text before the answer instead of the
answer's continuation. With ``question_grow_own`` the side whose chunk is better on its own
score goes first; the slots, their faces and their order stay the rank's.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from treehop import RetrievalConfig, Treehop
from treehop.descent import Candidate, passage_groups
from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder, chunk_candidate, resource_folder, resource_root

R = "viking://resources"
DOC = f"{R}/docs/guide.md"
DIM = 16
QUESTION = "Why does my build fail?"


def _chunk(i: int, own: float, final: float) -> Candidate:
    """A chunk of ``guide.md``'s one passage (start 0); ``own`` its own score, ``final`` the
    score it ranks on (a lifted one, say)."""
    return chunk_candidate(DOC, i, own, final, heading_path=["Guide"], passage_start=0)


def _indexes(groups: list[list[Candidate]]) -> list[list[int | None]]:
    return [[c.chunk_index for c in g] for g in groups]


def _own(c: Candidate) -> float:
    return c.own.vec


SIZE = len("text of chunk 0")
TWO = 2 * SIZE + 2  # the face and one neighbour


def _disagreeing() -> list[Candidate]:
    """Chunk 2 is best on both scores; of its neighbours chunk 1 ranks higher (0.84, lifted
    from 0.35) and chunk 3 is better on its own (0.45 against 0.35). Ranked order."""
    return [_chunk(2, 0.9, 0.9), _chunk(1, 0.35, 0.84), _chunk(3, 0.45, 0.6)]


def test_the_slot_grows_to_the_side_better_on_its_own_score() -> None:
    items = _disagreeing()
    assert _indexes(passage_groups(items, TWO, grow_key=_own)) == [[2, 3], [1]]
    # without the key (every other caller): the better-ranked side, as before
    assert _indexes(passage_groups(items, TWO)) == [[2, 1], [3]]
    # room for both sides: the same slot either way
    assert _indexes(passage_groups(items, 3 * SIZE + 4, grow_key=_own)) == [[2, 1, 3]]


def test_a_tie_or_a_missing_own_score_falls_back_to_the_rank() -> None:
    tie = [_chunk(2, 0.9, 0.9), _chunk(1, 0.45, 0.84), _chunk(3, 0.45, 0.6)]
    assert _indexes(passage_groups(tie, TWO, grow_key=_own)) == [[2, 1], [3]]
    # a chunk without an own score on the key's track (a reranker's -inf): the rank decides
    items = _disagreeing()
    missing = {id(items[2]): -math.inf}
    key = lambda c: missing.get(id(c), c.own.vec)  # noqa: E731
    assert _indexes(passage_groups(items, TWO, grow_key=key)) == [[2, 1], [3]]


def test_one_side_only_is_grown_to_whatever_its_score() -> None:
    """The key orders two sides that both fit; it never stops a slot from growing."""
    items = [_chunk(0, 0.9, 0.9), _chunk(1, 0.1, 0.2)]
    assert _indexes(passage_groups(items, TWO, grow_key=_own)) == [[0, 1]]


# --------------------------------------------------------------- through the retriever


def _unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


def _guide() -> EmbeddedStore:
    """``guide.md``: one passage of five chunks whose texts share no word with the question
    (BM25 adds nothing). Along the query's axis: chunk 2 (the face) 0.9 on its own; chunk 1
    only 0.35, but its window (chunks 0-2) is 0.84, so the window lifts it over chunk 3
    (0.45 on its own, its window 0.61: chunk 4 points away from the query)."""
    chunks = [
        _unit((0, 0.7), (1, 0.714)),
        _unit((0, 0.35), (2, 0.937)),
        _unit((0, 0.9), (3, 0.436)),
        _unit((0, 0.45), (4, 0.893)),
        _unit((0, -0.3), (5, 0.954)),
    ]
    nodes = [resource_root(), resource_folder(f"{R}/docs")]
    vectors = [_unit((15, 1.0)), _unit((14, 1.0))]
    nodes.append(
        Node(
            uri=DOC,
            parent_uri=f"{R}/docs",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=False,
            abstract="guide.md",
        )
    )
    vectors.append(_unit((13, 1.0)))
    for i, v in enumerate(chunks):
        nodes.append(
            Node(
                uri=f"{DOC}#chunk-{i}",
                parent_uri=DOC,
                context_type=ContextType.RESOURCE,
                level=2,
                is_leaf=True,
                content=f"paragraph number {i}",
                chunk_index=i,
                metadata={"heading_path": ["Guide"], "passage_start": 0},
            )
        )
        vectors.append(v)
    store = EmbeddedStore()
    store.upsert(nodes, np.stack(vectors))
    return store


@pytest.mark.parametrize(("grow_own", "shown"), [(True, 3), (False, 1)])
def test_find_shows_the_faces_own_best_neighbour(grow_own: bool, shown: int) -> None:
    """A client's ``find()`` of a question: the top slot is chunk 2 with the one neighbour
    its text has room for, chunk 3 (better on its own) with the option, chunk 1 (better
    ranked, lifted by chunk 2's window) without it. A keyword query is not touched."""
    room = 2 * len("paragraph number 0") + 2
    cfg = RetrievalConfig(question_grow_own=grow_own)
    with Treehop(embedder=BagOfWordsEmbedder(), store=_guide(), config=cfg, tagger=None) as th:
        found = th.find(
            QUESTION, query_vector=_unit((0, 1.0)), target_uri=R, limit=3, slot_chars=room
        )
        top = found.resources[0]
        assert top.uri == f"{DOC}#chunk-2"
        assert [c.chunk_index for c in top.collapsed] == [shown]
        assert f"paragraph number {shown}" in top.slot_text
        keywords = th.find(
            "build failure", query_vector=_unit((0, 1.0)), target_uri=R, limit=3, slot_chars=room
        )
        th.config.question_grow_own = not grow_own
        again = th.find(
            "build failure", query_vector=_unit((0, 1.0)), target_uri=R, limit=3, slot_chars=room
        )
        assert [(m.uri, [c.uri for c in m.collapsed]) for m in keywords.resources] == [
            (m.uri, [c.uri for c in m.collapsed]) for m in again.resources
        ]
