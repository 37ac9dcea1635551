"""Session evidence for memory turns: BM25 of a turn's whole session (its turns' joined text)
joins the turn's tree-context score (``treehop.memory_context.session_lexical_scores``)."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.lexical import LexicalIndex
from treehop.memory_context import session_lexical_scores, with_session_evidence
from treehop.models import ContextType, Node, TypedQuery
from treehop.stores.base import ScoredNode
from treehop.stores.embedded import EmbeddedStore
from treehop.uri import ancestors_of, parent_of

CHAT = "viking://user/u/memories/chat"


def turn(uri: str, text: str, kind: str | None = "turn", score: float = 0.5) -> ScoredNode:
    node = Node(
        uri=uri,
        parent_uri=parent_of(uri),
        context_type=ContextType.MEMORY,
        level=2,
        is_leaf=True,
        content=text,
        metadata={"kind": kind} if kind else {},
        ancestors=ancestors_of(uri),
    )
    return ScoredNode(node=node, score=score, vector_score=score)


def scores(query: str, sessions: dict[str, list[ScoredNode]]) -> dict[str, float]:
    return session_lexical_scores(query, sessions, lambda p: [h.node for h in sessions[p]])


def test_a_session_whose_turns_hold_the_words_together_scores_best() -> None:
    a, b, c = (f"{CHAT}/session-0{i}" for i in (1, 2, 3))
    sessions = {
        # the question's words spread over two turns of one exchange
        a: [
            turn(f"{a}/t1", "Where did Caroline go on Saturday?"),
            turn(f"{a}/t2", "The support group"),
        ],
        # one of the words, twice
        b: [turn(f"{b}/t1", "Caroline baked bread"), turn(f"{b}/t2", "Caroline again")],
        # none of them
        c: [turn(f"{c}/t1", "Melanie paints"), turn(f"{c}/t2", "Nice colours")],
    }
    got = scores("Caroline support group", sessions)
    assert got[a] == 1.0
    assert 0.0 < got[b] < 1.0
    assert got[c] == 0.0
    # the same texts again (tokens from the cache) give the same scores
    assert scores("Caroline support group", sessions) == got


def test_only_turns_of_memory_sessions_count() -> None:
    s1, s2 = f"{CHAT}/session-01", f"{CHAT}/session-02"
    doc = "viking://resources/guide.md"
    leaves = {
        # a note is not part of the exchange: its words do not count for its session
        s1: [turn(f"{s1}/note", "support group", kind=None).node, turn(f"{s1}/t1", "hi").node],
        s2: [turn(f"{s2}/t1", "a group hug").node],
    }
    read: list[str] = []

    def leaves_of(parent: str) -> list[Node]:
        read.append(parent)  # a document's leaves must never be read (built for nothing)
        return leaves.get(parent, [])

    got = session_lexical_scores("support group", [s1, doc, s2, "not a uri"], leaves_of)
    assert got == {s1: 0.0, s2: 1.0}
    assert read == [s1, s2]
    # no session holds a query word: no evidence, no score at all
    assert session_lexical_scores("zebra", [s1, s2], leaves_of) == {}
    assert session_lexical_scores("support", [], leaves_of) == {}


def test_session_evidence_is_a_weighted_mean() -> None:
    out = with_session_evidence(
        [0.5, 0.4, 0.3], ["s1", "s2", "doc"], {"s1": 1.0, "s2": 0.0}, 0.2, 1.85
    )
    assert out == pytest.approx([(0.5 * 1.85 + 0.2) / 2.05, 0.4 * 1.85 / 2.05, 0.3])


def at(cos: float, axis: int) -> np.ndarray:
    v = np.zeros(4, np.float32)
    v[0], v[axis] = cos, math.sqrt(1 - cos * cos)
    return v


def chat_store() -> EmbeddedStore:
    """Two sessions with the same shape; session-02's first turn is a little closer to the
    query, but only session-01's turns hold the question's words."""
    texts = {
        "session-01": ["Where did Caroline go?", "To the support group", "Sounds good"],
        "session-02": ["We went hiking", "The weather was fine", "See you"],
    }
    cos = {"session-01": [0.70, 0.30, 0.10], "session-02": [0.72, 0.30, 0.10]}
    spec: dict[str, tuple[np.ndarray, str]] = {CHAT: (at(0.0, 3), "")}
    for s, lines in texts.items():
        spec[f"{CHAT}/{s}"] = (at(0.0, 2), "")
        for i, line in enumerate(lines):
            spec[f"{CHAT}/{s}/turn-{i}"] = (at(cos[s][i], 1), line)
    nodes = [
        Node(
            uri=u,
            parent_uri=parent_of(u) if u != CHAT else None,
            context_type=ContextType.MEMORY,
            level=2 if "turn" in u else 1,
            is_leaf="turn" in u,
            abstract=text or u.rsplit("/", 1)[-1],
            content=text,
            metadata={"kind": "turn"} if "turn" in u else {},
            ancestors=ancestors_of(u),
        )
        for u, (_, text) in spec.items()
    ]
    store = EmbeddedStore()
    store.upsert(nodes, np.stack([v for v, _ in spec.values()]))
    return store


@pytest.mark.parametrize(("weight", "first"), [(0.2, "session-01"), (0.0, "session-02")])
def test_find_lifts_the_turn_whose_session_holds_the_words(weight: float, first: str) -> None:
    cfg = RetrievalConfig(memory_session_weight=weight, memory_context_chars=0)
    req = RetrievalRequest(
        query=TypedQuery(query="Caroline support group"),
        vector=np.array([1, 0, 0, 0], np.float32),
        roots=[CHAT],
        limit=2,
        dense_weight=1.0,
    )
    res = asyncio.run(HierarchicalRetriever(chat_store(), cfg).retrieve(req))
    got = [m.uri.removeprefix(CHAT + "/") for m in res.matched_contexts]
    assert got[0] == f"{first}/turn-0"


words = st.sampled_from(["caroline", "support", "group", "paint", "lake", "dog", "the"])


@settings(deadline=None)  # timing is not what is tested (the machine may be loaded)
@given(
    st.lists(st.lists(st.lists(words, max_size=6), min_size=1, max_size=4), min_size=1, max_size=5),
    st.lists(words, min_size=1, max_size=4),
)
def test_scores_are_the_lexical_index_bm25_of_the_joined_turns(
    sessions: list[list[list[str]]], query: list[str]
) -> None:
    """The per-turn counts give what the store's BM25 (a LexicalIndex over each session's
    joined text, the sessions as the collection) gives, divided by the best."""
    leaves = {
        f"{CHAT}/session-{i:02d}": [
            turn(f"{CHAT}/session-{i:02d}/t{j}", " ".join(t)).node for j, t in enumerate(turns)
        ]
        for i, turns in enumerate(sessions)
    }
    q = " ".join(query)
    got = session_lexical_scores(q, list(leaves), leaves.__getitem__)
    joined = {p: " ".join(n.content for n in ns) for p, ns in leaves.items()}
    index = LexicalIndex()
    # a session whose turns hold no token (stop words only) has no text to score
    kept = [p for p, text in joined.items() if index.tokenize(text)]
    if kept:
        index.upsert(list(range(len(kept))), [joined[p] for p in kept])
    want = index.score(q, list(range(len(kept)))) if kept else np.zeros(0)
    if not kept or float(want.max()) <= 0:
        assert got == {}
        return
    assert set(got) == set(kept)
    for p, v in zip(kept, (want / want.max()).tolist(), strict=True):
        assert got[p] == pytest.approx(v, rel=1e-5, abs=1e-6)
