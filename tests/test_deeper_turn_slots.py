"""A memory find whose turn hits merge into fewer slots than ``limit`` while its descent
stopped on the bound is run again deeper (``HierarchicalRetriever._deeper_turn_slots``,
helper leftovers59; stop 57's fill, which appended turns scored outside the tree context, was
reverted).

The descent's bound counts candidates, each turn a key of its own, as a lower bound on the
slots; but turn hits that an earlier slot carries merge into it. One session of many short
turns that all match fills the global step's hits and the tree context's pool, the descent
settles on them before any session is opened, and the slots fold 40 of them into three:
``find(limit=5)`` returned three slots while other sessions held matching turns (LoCoMo dev:
20 of 4,107 finds; bench/README.md, "find() returns fewer than limit" and "Leftovers, stop
59"). The deeper run is an ordinary find whose descent waits for more candidates: every slot
scored by the tree context, as any find's."""

from __future__ import annotations

from typing import Any

import pytest

from treehop import hierarchical_retriever as hr

from treehop_test_doubles import chat_turns, pottery_memory, recorded_searches, slot_shape

QUERY = "pottery workshop"


@pytest.fixture
def mem() -> Any:
    # one session whose every (short) turn matches: the global step's hits and the tree
    # context's pool (30 leaves), three slots of 1,000 characters; sessions that match
    # less, each a few turns; and one that does not match at all
    c = pottery_memory()
    c.add_messages(
        chat_turns(5, "piano concert in berlin {i}"), conversation_id="c", session_id="off"
    )
    yield c
    c.close()


@pytest.mark.parametrize("limit", [4, 5, 8])
def test_merged_turn_hits_are_found_deeper_up_to_the_limit(
    mem: Any, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    monkeypatch.setattr(hr, "DEEPER_TURNS", False)
    short = mem.find(QUERY, context_type="memory", limit=limit)
    # (the case: the descent stopped on the bound with sessions unopened, and the hot
    # session's turns merged into three slots)
    assert [m.parent_uri.rsplit("/", 1)[-1] for m in short.contexts()] == ["hot"] * 3
    assert short.query_results[0].stop_reason.startswith(f"top-{limit} settled")
    monkeypatch.setattr(hr, "DEEPER_TURNS", True)
    res = mem.find(QUERY, context_type="memory", limit=limit)
    got = res.contexts()
    assert len(got) == limit
    # the hot session's slots first, as they were; then the sessions that match, each
    # session's three turns in one slot, then (limit 8) the one that shares only the turns'
    # date and speaker; no turn held twice; each new slot carrying its exchange
    assert slot_shape(res)[:3] == slot_shape(short)
    sessions = [m.parent_uri.rsplit("/", 1)[-1] for m in got[3:]]
    matching = [x for x in sessions if x != "off"]
    assert sessions[: len(matching)] == matching
    assert len(set(matching)) == len(matching) == min(4, limit - 3)
    held = [m.uri for m in got] + [t.uri for m in got for t in m.collapsed]
    assert len(held) == len(set(held))
    assert all(m.collapsed for m in got[3:])
    scores = [m.score for m in got]
    assert scores == sorted(scores, reverse=True)


def test_the_deeper_run_is_an_ordinary_find_with_a_deeper_descent(
    mem: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its slots, scores and carried turns are those of a find whose descent waits for the
    deeper run's candidates from the start: no score is made outside the ranking (stop 57's
    fill gave a filled slot its own score, not the tree context's). The descent limit
    doubles (10, 20, 40 here) while the run still stops on the bound short of the limit."""
    asked: list[int | None] = []
    descend = hr.HierarchicalRetriever._descend

    async def recorded(self: Any, req: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(kwargs.get("descent_limit"))
        return await descend(self, req, *args, **kwargs)

    monkeypatch.setattr(hr.HierarchicalRetriever, "_descend", recorded)
    res = slot_shape(mem.find(QUERY, context_type="memory", limit=5))
    assert len(res) == 5 and asked[0] is None
    assert asked[1:] == [5 * 2**i for i in range(1, len(asked))] and len(asked) > 1
    deepest = asked[-1]
    assert isinstance(deepest, int)
    new_descent = hr.HierarchicalRetriever._new_descent

    def deeper(self: Any, q: Any) -> Any:
        state = new_descent(self, q)
        state.limit = deepest
        return state

    monkeypatch.setattr(hr, "DEEPER_TURNS", False)
    monkeypatch.setattr(hr.HierarchicalRetriever, "_new_descent", deeper)
    assert slot_shape(mem.find(QUERY, context_type="memory", limit=5)) == res


def test_the_threshold_still_bounds_the_deeper_run(mem: Any) -> None:
    # above every other session's score: no turn of them may fill a slot
    res = mem.find(QUERY, context_type="memory", limit=8, score_threshold=0.6)
    assert [m.parent_uri.rsplit("/", 1)[-1] for m in res.contexts()] == ["hot"] * 3


def test_a_scope_without_more_turns_stays_short(mem: Any) -> None:
    hot = mem.find(QUERY, context_type="memory").contexts()[0].parent_uri
    res = mem.find(QUERY, target_uri=hot, limit=5)
    # (one session, all its turns in three slots: nothing left to fill with)
    assert len(res.contexts()) == 3


def test_find_many_goes_deeper_as_find_does(mem: Any) -> None:
    queries = [QUERY, "pottery class", "piano concert"]
    alone = [slot_shape(mem.find(q, context_type="memory", limit=6)) for q in queries]
    batch = [slot_shape(r) for r in mem.find_many(queries, context_type="memory", limit=6)]
    assert batch == alone
    assert len(alone[0]) == 6


def test_the_deeper_run_embeds_nothing_and_reuses_the_first_search(
    mem: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deeper run takes the query's vector from the request (the query is embedded
    once, as a find that does not go deeper), and starts from the first run's first global
    search, which it would ask again word for word (the same scope and size: the first step
    does not depend on the descent's limit): one store search fewer per deeper run (helper
    perf59). Its answer is the one a fresh search gives (the test above)."""
    searches = recorded_searches(monkeypatch)
    emb = mem.aio._embedder
    for flag in (False, True):
        monkeypatch.setattr(hr, "DEEPER_TURNS", flag)
        calls, searches[:] = emb.calls, []
        res = mem.find(QUERY, context_type="memory", limit=5)
        assert emb.calls == calls + 1
        assert len(res.contexts()) == (5 if flag else 3)
        if not flag:
            first = searches[0]
    # the deeper runs (two here) asked only deeper searches: no repeat of the first one
    assert searches[0] == first and searches.count(first) == 1
    assert len(searches) > 1
