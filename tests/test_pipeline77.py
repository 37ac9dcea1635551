"""The retrieval pipeline's leftovers against the seed (helper pipeline77).

The seed: intent analysis reads the session's summary and its last 5 messages and answers
0-5 typed queries; rerank falls back to the vector scores on an invalid answer; the heap
search says why it stopped. Helper review76 / review77 left six things as they were:

1. the planner's ``intent`` / ``reasoning`` strings had no length cap: a model answering a
   megabyte of either passed it whole into the plan (now cut, with a ``[parser]`` note);
2. a ``query_planner`` set on a client after it was built was ignored (now used by the next
   ``search()``, sync and async alike; a non-LLM is refused as the constructor refuses it);
3. ``SessionStore(keep_recent=k)``, ``k < 5``: the planner saw ``k`` messages after a fold
   (``keep_recent`` now governs storage only; the planner sees the last 5);
4. ``validate_scores`` took booleans and numeric strings as scores (now an invalid answer);
5. the stop reason "top-N unchanged" named the request's limit where the rule waited for a
   larger one (now the limit that applied);
6. an abandoned sync summary / planner call was a ``ThreadPoolExecutor`` worker, joined at
   interpreter exit (now a daemon thread).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_hierarchical_retriever import ScriptedReranker, conv, request, run, tree, wide_tree
from treehop import AsyncTreehop, Treehop
from treehop import intent_analysis as ia
from treehop.errors import InvalidQueryError
from treehop.hierarchical_retriever import HierarchicalRetriever
from treehop.intent_analysis import IntentAnalyzer, parse_plan
from treehop.llm.base import BaseLLM, ChatMessage
from treehop.models import RetrievalMode
from treehop.rerankers.base import validate_scores
from treehop.sessions import SessionStore

# -- 1. intent / reasoning capped ---------------------------------------------------------


def _answer(intent: str, reasoning: object) -> str:
    q = {"query": "RFC template", "context_type": "resource", "intent": intent, "priority": 4}
    return json.dumps({"reasoning": reasoning, "queries": [q]})


def test_a_megabyte_of_intent_and_reasoning_is_cut_and_noted() -> None:
    queries, reasoning = parse_plan(_answer("x" * 1_000_000, "why " * 250_000))
    assert len(queries) == 1 and len(queries[0].intent) == ia.MAX_INTENT_CHARS
    assert queries[0].intent == "x" * ia.MAX_INTENT_CHARS
    model_part, _, notes = reasoning.partition("\n[parser] ")
    assert len(model_part) <= ia.MAX_REASONING_CHARS
    assert f"intent cut to {ia.MAX_INTENT_CHARS}" in notes
    assert f"reasoning cut to {ia.MAX_REASONING_CHARS}" in notes


def test_a_reasoning_that_is_not_a_string_is_cut_too() -> None:
    _, reasoning = parse_plan(_answer("find it", ["step"] * 200_000))
    assert len(reasoning.partition("\n[parser] ")[0]) <= ia.MAX_REASONING_CHARS


def test_many_dropped_queries_write_a_bounded_parser_line() -> None:
    bad = [{"query": "q", "context_type": "nope"}] * 50_000
    good = {"query": "RFC template", "context_type": "resource", "priority": 5}
    queries, reasoning = parse_plan(json.dumps({"reasoning": "r", "queries": [*bad, good]}))
    assert [q.query for q in queries] == ["RFC template"]
    assert len(reasoning) <= len("r\n[parser] ") + ia.MAX_PARSER_NOTES_CHARS


def test_short_intent_and_reasoning_stand_as_written() -> None:  # (control)
    queries, reasoning = parse_plan(_answer("the  template", "The user wants it."))
    assert queries[0].intent == "the template" and reasoning == "The user wants it."


def _long_text(most: int) -> st.SearchStrategy[str]:
    """Text around a cap: a few drawn characters, a long run of one piece, a few more (long
    drawn texts are slow to generate)."""
    piece = st.sampled_from(["a", " ", "\u00e9 ", "\n\t", "xy"])
    return st.builds(
        lambda head, p, n, tail: head + p * n + tail,
        st.text(max_size=12),
        piece,
        st.integers(0, most),
        st.text(max_size=12),
    )


@settings(max_examples=60, deadline=None)
@given(intent=_long_text(400), reasoning=_long_text(2010))  # (around the 200 / 2,000 caps)
def test_every_plan_holds_the_caps(intent: str, reasoning: str) -> None:
    queries, said = parse_plan(_answer(intent, reasoning))
    assert len(queries) == 1
    normal = " ".join(intent.split())
    assert queries[0].intent == normal[: ia.MAX_INTENT_CHARS]
    model_part = said.partition("\n[parser] ")[0] if "\n[parser] " in said else said
    assert len(model_part) <= ia.MAX_REASONING_CHARS
    cut = len(normal) > ia.MAX_INTENT_CHARS or len(reasoning) > ia.MAX_REASONING_CHARS
    assert ("cut to" in said) is cut


# -- 2. a query_planner set after the client is built --------------------------------------


class Planner(BaseLLM):
    def __init__(self, name: str, answer: dict[str, object]) -> None:
        self.name = name
        self.answer = json.dumps(answer)
        self.calls = 0

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        self.calls += 1
        return self.answer


SMALL_TALK = {"reasoning": "a greeting", "queries": []}


@pytest.mark.parametrize("sync", [True, False])
@pytest.mark.parametrize("how", ["client", "models"])
def test_a_planner_set_after_the_client_is_built_plans_the_next_search(
    bow: object, sync: bool, how: str
) -> None:
    first, later = Planner("first", SMALL_TALK), Planner("later", SMALL_TALK)

    def set_planner(client: object) -> None:
        if how == "client":
            client.query_planner = later  # type: ignore[attr-defined]
        else:
            client.models.query_planner = later  # type: ignore[attr-defined]

    if sync:
        with Treehop(embedder=bow, tagger=None, query_planner=first) as th:
            set_planner(th)
            plan = th.search("hello there").query_plan
            assert th.query_planner is later
    else:

        async def main() -> object:
            client = AsyncTreehop(embedder=bow, tagger=None, query_planner=first)
            try:
                set_planner(client)
                assert client.query_planner is later
                return (await client.search("hello there")).query_plan
            finally:
                await client.aclose()

        plan = asyncio.run(main())
    assert plan is not None and plan.planner == "later"  # type: ignore[attr-defined]
    assert (first.calls, later.calls) == (0, 1)


@pytest.mark.parametrize("sync", [True, False])
def test_a_planner_set_on_a_client_built_without_one_is_used(bow: object, sync: bool) -> None:
    later = Planner("later", SMALL_TALK)
    if sync:
        with Treehop(embedder=bow, tagger=None) as th:
            assert th.search("hello").query_plan.fallback  # type: ignore[union-attr]
            th.query_planner = later
            plan = th.search("hello").query_plan
    else:

        async def main() -> object:
            client = AsyncTreehop(embedder=bow, tagger=None)
            try:
                client.query_planner = later
                return (await client.search("hello")).query_plan
            finally:
                await client.aclose()

        plan = asyncio.run(main())
    assert plan is not None and not plan.fallback and plan.planner == "later"  # type: ignore[attr-defined]


@pytest.mark.parametrize("sync", [True, False])
def test_setting_no_llm_as_the_planner_is_refused_alike(bow: object, sync: bool) -> None:
    first = Planner("first", SMALL_TALK)
    client: object = (
        Treehop(embedder=bow, tagger=None, query_planner=first)
        if sync
        else AsyncTreehop(embedder=bow, tagger=None, query_planner=first)
    )
    try:
        with pytest.raises(InvalidQueryError, match="query_planner must implement"):
            client.query_planner = "gpt-4o"  # type: ignore[attr-defined]
        assert client.query_planner is first  # type: ignore[attr-defined]
        client.query_planner = None  # type: ignore[attr-defined]
        assert client.models.planner is None  # type: ignore[attr-defined]
    finally:
        if sync:
            client.close()  # type: ignore[attr-defined]
        else:
            asyncio.run(client.aclose())  # type: ignore[attr-defined]


def test_an_analyzer_of_its_own_keeps_its_model() -> None:  # (control: no registry)
    mine = Planner("mine", SMALL_TALK)
    analyzer = IntentAnalyzer(mine)
    assert analyzer.llm is mine and analyzer.planner_name == "mine"
    assert not asyncio.run(analyzer.analyze("hello")).fallback


# -- 3. the planner sees the last 5 messages whatever keep_recent keeps ---------------------


class Recorder(BaseLLM):
    name = "recorder"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        if json_mode:
            self.prompts.append(messages[-1].content)
            return json.dumps(SMALL_TALK)
        return "MODEL SUMMARY"

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return self.complete(messages, json_mode=json_mode)


@pytest.mark.parametrize("sync", [True, False])
@pytest.mark.parametrize("keep_recent", [1, 2, 4])
def test_the_planner_sees_the_last_five_messages_below_keep_recent_five(
    sync: bool, keep_recent: int
) -> None:
    llm = Recorder()
    store = SessionStore(llm=llm, max_messages=6, keep_recent=keep_recent)
    sid = store.create_session()
    texts = [f"message number {i}" for i in range(13)]
    for t in texts:
        if sync:
            store.add_message(sid, "user", t)
        else:
            asyncio.run(store.aadd_message(sid, "user", t))
    session = store.get(sid)
    assert session.folded_count > 0 and session.summary == "MODEL SUMMARY"
    assert len(session.messages) < 5  # (what keep_recent keeps: storage)
    summary, recent = store.context_for_intent(sid)
    assert [m.content for m in recent] == texts[-5:]
    analyzer = IntentAnalyzer(llm)
    if sync:
        analyzer.analyze_sync("what next?", summary, recent)
    else:
        asyncio.run(analyzer.analyze("what next?", summary, recent))
    prompt = llm.prompts[-1]
    assert all(t in prompt for t in texts[-5:]) and texts[-6] not in prompt
    # a reopened store reads the same window (the tail is saved with the session)
    again = SessionStore(store.state, max_messages=6, keep_recent=keep_recent)
    assert [m.content for m in again.context_for_intent(sid)[1]] == texts[-5:]


def test_keep_recent_five_or_more_saves_no_tail() -> None:  # (control: the default)
    store = SessionStore(llm=Recorder(), max_messages=6, keep_recent=5)
    sid = store.create_session()
    for i in range(13):
        store.add_message(sid, "user", f"m{i}")
    assert store.get(sid).intent_tail == []
    assert [m.content for m in store.context_for_intent(sid)[1]] == [f"m{i}" for i in range(8, 13)]


# -- 4. booleans and numeric strings are no scores ------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        [True, False],
        [0.5, True],
        np.array([True, False]),
        ["0.9", "0.1"],
        [0.9, " 1e3 "],
        [b"1", 0.2],
        [np.str_("0.3"), 0.2],
    ],
)
def test_booleans_and_numeric_strings_are_an_invalid_answer(answer: object) -> None:
    scores, reason = validate_scores(answer, 2)
    assert scores is None and reason is not None and "non-numeric score" in reason


def test_a_reranker_answering_booleans_falls_back_to_the_vector_scores() -> None:
    async def flags(docs: Sequence[str]) -> object:
        return [("eval" in d) for d in docs]

    baseline = run(tree(), include_directories=False)
    res = run(
        tree(),
        reranker=ScriptedReranker(flags),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and "(a bool)" in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]


number = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(10**12), max_value=10**12),
)
item = st.one_of(number, st.booleans(), st.text(max_size=8), number.map(str))


@settings(max_examples=100, deadline=None)
@given(st.lists(item, max_size=6))
def test_an_answer_stands_exactly_when_every_item_is_a_real_number(items: list[object]) -> None:
    scores, reason = validate_scores(items, len(items))
    numbers_only = all(not isinstance(x, (bool, str)) for x in items)
    assert (scores is not None) is numbers_only
    if scores is not None:
        assert scores == [float(x) for x in items]  # type: ignore[arg-type]
    else:
        assert reason is not None


# -- 5. the stop reason names the limit that applied ----------------------------------------


def test_the_convergence_stop_names_the_limit_the_descent_waited_for() -> None:
    r = HierarchicalRetriever(wide_tree(), conv(global_search_topk=3, max_convergence_rounds=3))

    async def main() -> tuple[str, int]:
        _, state, _ = await r._descend(request(include_directories=True), descent_limit=8)
        return state.stop_reason, state.limit

    reason, limit = asyncio.run(main())
    assert limit == 8 and reason == "top-8 unchanged for 3 rounds"


def test_the_convergence_stop_of_a_plain_find_names_its_limit() -> None:  # (control)
    res = run(
        wide_tree(), conv(global_search_topk=3, max_convergence_rounds=3), include_directories=True
    )
    assert res.stop_reason == "top-5 unchanged for 3 rounds"


# -- 6. an abandoned sync model call does not hold the interpreter's exit ------------------


class Stuck(BaseLLM):
    name = "stuck"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        self.entered.set()
        self.release.wait(10)
        return "late"

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return self.complete(messages, json_mode=json_mode)


def _abandoned(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix) and t.is_alive()]


def test_an_abandoned_sync_summary_call_is_a_daemon_thread() -> None:
    import concurrent.futures.thread as cft

    llm = Stuck()
    store = SessionStore(llm=llm, max_messages=2, keep_recent=1, summary_timeout_s=0.1)
    sid = store.create_session()
    try:
        for i in range(3):
            store.add_message(sid, "user", f"Sentence {i}.")
        assert llm.entered.is_set()
        assert store.get(sid).summary_fallback_reason == "timeout after 0.1s"
        left = _abandoned("treehop-summary")
        assert left and all(t.daemon for t in left)
        # (what the interpreter joins at exit: no executor worker of ours is registered)
        assert not any(t.name.startswith("treehop-") for t in cft._threads_queues)
    finally:
        llm.release.set()


def test_an_abandoned_sync_planner_call_is_a_daemon_thread() -> None:
    import concurrent.futures.thread as cft

    llm = Stuck()
    try:
        plan = IntentAnalyzer(llm, timeout_s=0.1).analyze_sync("find the RFC template")
        assert plan.fallback and plan.fallback_reason == "timeout after 0.1s"
        left = _abandoned("treehop-planner")
        assert left and all(t.daemon for t in left)
        assert not any(t.name.startswith("treehop-") for t in cft._threads_queues)
    finally:
        llm.release.set()


def test_a_sync_planner_answering_in_time_is_used() -> None:  # (control)
    plan = IntentAnalyzer(Recorder(), timeout_s=2).analyze_sync("hi")
    assert not plan.fallback and plan.queries == []
