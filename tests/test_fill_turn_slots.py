"""A memory find whose turn hits merge into fewer slots than ``limit`` fills the rest with the
next-best turns in scope (``HierarchicalRetriever._filled_turn_slots``).

The descent's bound counts candidates, each turn a key of its own, as a lower bound on the
slots; but turn hits that an earlier slot carries merge into it. One session of many short
turns that all match fills the global step's hits and the tree context's pool, the descent
settles on them before any session is opened, and the slots fold 40 of them into three:
``find(limit=5)`` returned three slots while other sessions held matching turns (LoCoMo: 3
of 2,997 dev finds; bench/README.md, "find() returns fewer than limit")."""

from __future__ import annotations

from typing import Any

import pytest

from treehop import FoundBy, Treehop
from treehop import hierarchical_retriever as hr

from treehop_test_doubles import BagOfWordsEmbedder

QUERY = "pottery workshop"


def _turns(n: int, text: str) -> list[dict[str, Any]]:
    return [
        {"speaker": ("Ann", "Bob")[i % 2], "content": text.format(i=i), "timestamp": 1e9 + i}
        for i in range(n)
    ]


@pytest.fixture
def mem() -> Any:
    c = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    # one session whose every (short) turn matches: the global step's hits and the tree
    # context's pool (30 leaves), three slots of 1,000 characters
    c.add_messages(
        _turns(40, "pottery workshop pottery {i}"), conversation_id="c", session_id="hot"
    )
    # sessions that match less, each a few turns; and one that does not match at all
    for s in ("s1", "s2", "s3", "s4"):
        c.add_messages(
            _turns(3, "we went hiking, then a pottery class " + s + " {i}"),
            conversation_id="c",
            session_id=s,
        )
    c.add_messages(_turns(5, "piano concert in berlin {i}"), conversation_id="c", session_id="off")
    yield c
    c.close()


def _shape(res: Any) -> list[Any]:
    return [
        (m.uri, m.score, m.own_score, [(t.uri, t.position, t.carried) for t in m.collapsed])
        for m in res.contexts()
    ]


@pytest.mark.parametrize("limit", [4, 5, 8])
def test_merged_turn_hits_are_filled_up_to_the_limit(
    mem: Any, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(hr, "FILL_TURNS", False)
    short = mem.find(QUERY, context_type="memory", limit=limit)
    # (the case: the descent stopped with sessions unopened, and the hot session's turns
    # merged into three slots)
    assert [m.parent_uri.rsplit("/", 1)[-1] for m in short.contexts()] == ["hot"] * 3
    monkeypatch.setattr(hr, "FILL_TURNS", True)
    res = mem.find(QUERY, context_type="memory", limit=limit)
    got = res.contexts()
    assert len(got) == limit
    # the slots made before stay first, as they were
    assert _shape(res)[:3] == _shape(short)
    # the new slots: the next-best turns, of the sessions that match, each session's three
    # turns in one slot, then (limit 8) the one that shares only the turns' date and
    # speaker; no turn held twice; each carrying its exchange, ranked after the first slots
    sessions = [m.parent_uri.rsplit("/", 1)[-1] for m in got[3:]]
    matching = [x for x in sessions if x != "off"]
    assert sessions[: len(matching)] == matching
    assert len(set(matching)) == len(matching) == min(4, limit - 3)
    held = [m.uri for m in got] + [t.uri for m in got for t in m.collapsed]
    assert len(held) == len(set(held))
    assert all(m.found_by is FoundBy.GLOBAL and m.collapsed for m in got[3:])
    scores = [m.score for m in got]
    assert scores == sorted(scores, reverse=True)
    assert all(m.own_score >= m.score for m in got[3:])


def test_the_threshold_still_bounds_the_fill(mem: Any) -> None:
    # above every other session's score: no turn of them may fill a slot
    res = mem.find(QUERY, context_type="memory", limit=8, score_threshold=0.6)
    assert [m.parent_uri.rsplit("/", 1)[-1] for m in res.contexts()] == ["hot"] * 3


def test_a_scope_without_more_turns_stays_short(mem: Any) -> None:
    hot = mem.find(QUERY, context_type="memory").contexts()[0].parent_uri
    res = mem.find(QUERY, target_uri=hot, limit=5)
    # (one session, all its turns in three slots: nothing left to fill with)
    assert len(res.contexts()) == 3


def test_find_many_fills_as_find_does(mem: Any) -> None:
    queries = [QUERY, "pottery class", "piano concert"]
    alone = [_shape(mem.find(q, context_type="memory", limit=6)) for q in queries]
    batch = [_shape(r) for r in mem.find_many(queries, context_type="memory", limit=6)]
    assert batch == alone
    assert len(alone[0]) == 6
