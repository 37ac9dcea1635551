"""The retrieval pipeline read against the seed (helper review76): the rerank stage's fallback.

The seed: "if rerank returns an invalid result or the API call fails, fall back to the vector
scores". Three answers were taken as valid, or a deadline not held:

- ``validate_scores`` (every reranker's answer, in ``safe_rerank``) read a ``str``, ``bytes``,
  a mapping or a set as its list of scores: ``"12"`` for two documents ranked them 1.0 and
  2.0, ``{0: 0.9, 1: 0.1}`` ranked them by their indices, a set in its hash order;
- ``LLMReranker``'s answer keyed by passage number took two keys naming one passage (``"0"``
  and ``"00"``, ``" 0"``, a non-ASCII digit) as one grade, the later one, silently;
- ``safe_rerank``'s ``rerank_timeout_s`` waited for a reranker that ignores cancellation to
  finish, and then took its late answer as valid (the intent analyzer's deadline already
  abandons such a call).

Intent analysis: ``analyze_sync`` let a model's own ``CancelledError`` escape (``analyze``
falls back), and called a model's quick ``TimeoutError`` "timeout after 5s" (the deadline
had not passed; ``analyze`` names the error).

And the planner's input, the session's compressed summary: ``SessionStore.add_message`` (the
sync path) called the summary model with no deadline at all (``summary_timeout_s`` held only
on the async path, and there not against a model that ignores cancellation).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from test_hierarchical_retriever import RetrievalConfig, ScriptedReranker, run, tree
from treehop.errors import LLMError, RerankError
from treehop.intent_analysis import IntentAnalyzer
from treehop.llm.base import BaseLLM, ChatMessage
from treehop.models import RetrievalMode
from treehop.rerankers.base import safe_rerank, validate_scores
from treehop.rerankers.llm_rerank import parse_scores
from treehop.sessions import SessionStore

# -- validate_scores: an answer that is not a sequence of scores ---------------------------


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("12", "str"),
        (b"ab", "bytes"),
        ({0: 0.9, 1: 0.1}, "dict"),
        ({0.3, 0.9}, "set"),
        (frozenset({0.3, 0.9}), "frozenset"),
    ],
)
def test_an_answer_that_is_not_an_ordered_list_of_scores_is_invalid(
    answer: object, kind: str
) -> None:
    scores, reason = validate_scores(answer, 2)
    assert scores is None
    assert reason is not None and "expected a list of scores" in reason and kind in reason


@given(st.text(min_size=1, max_size=20))
def test_no_string_is_read_as_scores(text: str) -> None:
    assert validate_scores(text, len(text))[0] is None


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), max_size=20))
def test_a_list_tuple_or_generator_of_finite_scores_stands(values: list[float]) -> None:
    n = len(values)
    assert validate_scores(values, n) == (values, None)
    assert validate_scores(tuple(values), n) == (values, None)
    assert validate_scores((v for v in values), n) == (values, None)


def test_a_reranker_answering_a_string_falls_back_to_the_vector_scores() -> None:
    async def digits(docs: Sequence[str]) -> object:
        return "9" * len(docs)

    baseline = run(tree(), include_directories=False)
    res = run(
        tree(),
        reranker=ScriptedReranker(digits),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and "got str" in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]
    assert all(m.rerank_score is None for m in res.matched_contexts)


# -- LLMReranker: two keys naming one passage ------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        '{"0": 2, "00": 9, "1": 3}',
        '{"0": 2, " 0": 9, "1": 3}',
        '{"0": 2, "\u0660": 9, "1": 3}',  # ARABIC-INDIC DIGIT ZERO: int() reads it as 0
        '{"1": 3, "01": 9, "0": 2}',
    ],
)
def test_a_keyed_grade_answer_naming_a_passage_twice_is_invalid(answer: str) -> None:
    with pytest.raises(RerankError, match="twice"):
        parse_scores(answer, 2)


@given(
    st.lists(st.integers(0, 10), min_size=1, max_size=8),
    st.lists(st.integers(0, 3), min_size=8, max_size=8),
)
def test_a_keyed_grade_answer_stands_exactly_when_each_passage_is_named_once(
    grades: list[int], pads: list[int]
) -> None:
    n = len(grades)
    body = ", ".join(f'"{"0" * pads[i]}{i}": {g}' for i, g in enumerate(grades))
    assert parse_scores("{" + body + "}", n) == [g / 10 for g in grades]
    # the same passage named again, padded otherwise: refused, whatever grade it carries
    dup = f'"{"0" * (pads[0] + 1)}0": 10'
    with pytest.raises(RerankError):
        parse_scores("{" + body + ", " + dup + "}", n)


# -- safe_rerank: the deadline holds against a reranker that ignores cancellation ----------


class _Stubborn:
    """An async reranker that ignores a cancellation and answers late."""

    name = "stubborn"

    def __init__(self, late_s: float) -> None:
        self.late_s = late_s
        self.finished = False

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [0.5] * len(documents)

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(self.late_s)  # (what a client that swallows a cancel does)
        self.finished = True
        return [0.99] * len(documents)


def test_the_rerank_deadline_holds_when_the_reranker_ignores_cancellation() -> None:
    async def main() -> tuple[object, float, bool]:
        rr = _Stubborn(late_s=1.5)
        t0 = time.perf_counter()
        outcome = await safe_rerank(rr, "q", ["a", "b"], 0.1)  # type: ignore[arg-type]
        took = time.perf_counter() - t0
        finished_then = rr.finished
        await asyncio.sleep(1.7)  # the abandoned call ends on its own, no warning left
        return outcome, took, finished_then

    outcome, took, finished_then = asyncio.run(main())
    assert outcome.scores is None  # type: ignore[attr-defined]
    assert "timeout after 0.1s" in (outcome.fallback_reason or "")  # type: ignore[attr-defined]
    assert not finished_then and took < 1.2


def test_a_find_falls_back_in_time_when_the_reranker_ignores_cancellation() -> None:
    async def stubborn(docs: Sequence[str]) -> list[float]:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(1.5)
        return [0.99] * len(docs)

    cfg = RetrievalConfig(rerank_timeout_s=0.1)
    baseline = run(tree(), cfg, include_directories=False)
    t0 = time.perf_counter()
    res = run(
        tree(),
        cfg,
        reranker=ScriptedReranker(stubborn),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert time.perf_counter() - t0 < 1.4
    assert res.rerank_fallback and "timeout" in (res.rerank_fallback_reason or "")
    assert [m.score for m in res.matched_contexts] == [m.score for m in baseline.matched_contexts]
    assert res.rerank_calls == 1


def test_a_reranker_that_cancels_itself_falls_back_and_the_find_goes_on() -> None:
    async def cancels(docs: Sequence[str]) -> list[float]:
        raise asyncio.CancelledError

    baseline = run(tree(), include_directories=False)
    res = run(
        tree(),
        reranker=ScriptedReranker(cancels),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and "cancelled" in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]


def test_cancelling_the_caller_still_cancels_the_rerank_call() -> None:
    state = {"cancelled": False}

    class Slow:
        name = "slow"

        def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
            return [0.0] * len(documents)

        async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                state["cancelled"] = True
                raise
            return [0.0] * len(documents)

    async def main() -> None:
        task = asyncio.ensure_future(safe_rerank(Slow(), "q", ["a"], 10.0))  # type: ignore[arg-type]
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0)

    asyncio.run(main())
    assert state["cancelled"]


def test_a_reranker_whose_arerank_is_not_awaitable_falls_back() -> None:
    class NotAsync:
        name = "not-async"

        def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
            return [0.0] * len(documents)

        def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
            return [0.0] * len(documents)

    outcome = asyncio.run(safe_rerank(NotAsync(), "q", ["a"], 1.0))  # type: ignore[arg-type]
    assert outcome.scores is None and "error: TypeError" in (outcome.fallback_reason or "")


# -- the session summary the planner reads: summary_timeout_s on both paths -----------------


class _SlowSummarizer(BaseLLM):
    """Answers a summary after ``delay_s``; its async twin ignores a cancellation."""

    name = "slow-summarizer"

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        time.sleep(self.delay_s)
        return "LATE MODEL SUMMARY"

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        try:
            await asyncio.sleep(self.delay_s)
        except asyncio.CancelledError:
            await asyncio.sleep(self.delay_s)
        return "LATE MODEL SUMMARY"


def _folding_store(delay_s: float) -> SessionStore:
    return SessionStore(
        llm=_SlowSummarizer(delay_s), max_messages=2, keep_recent=1, summary_timeout_s=0.2
    )


def test_a_sync_add_message_holds_the_summary_deadline() -> None:
    store = _folding_store(delay_s=2.0)
    sid = store.create_session()
    store.add_message(sid, "user", "Sentence 0. Tail.")
    store.add_message(sid, "user", "Sentence 1. Tail.")
    t0 = time.perf_counter()
    store.add_message(sid, "user", "Sentence 2. Tail.")  # the fold
    assert time.perf_counter() - t0 < 1.5
    s = store.get(sid)
    assert s.summary_method == "extractive" and s.summary_fallback_reason == "timeout after 0.2s"
    assert "LATE" not in s.summary and "Sentence 0." in s.summary
    summary, recent = store.context_for_intent(sid)
    # (keep_recent=1 keeps one message verbatim; the planner still sees the last 5 there
    # are: helper pipeline77)
    assert [m.content for m in s.messages] == ["Sentence 2. Tail."]
    assert summary == s.summary and [m.content for m in recent] == [
        f"Sentence {i}. Tail." for i in range(3)
    ]


def test_an_async_add_message_abandons_a_summary_that_ignores_cancellation() -> None:
    async def main() -> tuple[SessionStore, str, float]:
        store = _folding_store(delay_s=1.5)
        sid = store.create_session()
        for i in range(2):
            await store.aadd_message(sid, "user", f"Sentence {i}. Tail.")
        t0 = time.perf_counter()
        await store.aadd_message(sid, "user", "Sentence 2. Tail.")
        return store, sid, time.perf_counter() - t0

    store, sid, took = asyncio.run(main())
    s = store.get(sid)
    assert took < 1.2
    assert s.summary_method == "extractive" and s.summary_fallback_reason == "timeout after 0.2s"
    assert "LATE" not in s.summary


def test_a_sync_summary_model_that_fails_in_time_still_falls_back_with_its_reason() -> None:
    class Down(BaseLLM):
        name = "down"

        def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
            raise TimeoutError("read timed out")

    store = SessionStore(llm=Down(), max_messages=2, keep_recent=1, summary_timeout_s=5.0)
    sid = store.create_session()
    for i in range(3):
        store.add_message(sid, "user", f"Sentence {i}. Tail.")
    s = store.get(sid)
    assert s.summary_method == "extractive"
    assert "read timed out" in (s.summary_fallback_reason or "")


# -- intent analysis: the sync path falls back as the async one does --------------------------


class _Faulty(BaseLLM):
    name = "faulty"

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        raise self.exc


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("boom"),
        TimeoutError("read timed out"),
        asyncio.CancelledError(),
        LLMError("rate limited"),
        ValueError("bad"),
    ],
    ids=type,
)
def test_the_sync_planner_falls_back_as_the_async_one_does(exc: BaseException) -> None:
    analyzer = IntentAnalyzer(_Faulty(exc), timeout_s=5.0)
    async_plan = asyncio.run(analyzer.analyze("how do I rotate logs", context_types=["resource"]))
    sync_plan = analyzer.analyze_sync("how do I rotate logs", context_types=["resource"])
    assert async_plan.fallback and sync_plan.fallback
    assert sync_plan.fallback_reason == async_plan.fallback_reason
    assert "timeout after" not in (sync_plan.fallback_reason or "")
    assert sync_plan.queries == async_plan.queries


def test_the_sync_planner_still_times_out_a_slow_model() -> None:
    class Slow(BaseLLM):
        name = "slow"

        def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
            time.sleep(1.0)
            return '{"queries": []}'

    t0 = time.perf_counter()
    plan = IntentAnalyzer(Slow(), timeout_s=0.1).analyze_sync("hi")
    assert time.perf_counter() - t0 < 0.8
    assert plan.fallback and plan.fallback_reason == "timeout after 0.1s"


@pytest.mark.parametrize("exc", [RuntimeError("model down"), asyncio.CancelledError()], ids=type)
def test_a_summary_model_fault_falls_back_alike_on_both_paths(exc: BaseException) -> None:
    def folded(sync: bool) -> tuple[str | None, str | None]:
        store = SessionStore(llm=_Faulty(exc), max_messages=2, keep_recent=1)
        sid = store.create_session()
        for i in range(3):
            if sync:
                store.add_message(sid, "user", f"Sentence {i}. Tail.")
            else:
                asyncio.run(store.aadd_message(sid, "user", f"Sentence {i}. Tail."))
        s = store.get(sid)
        return s.summary_method, s.summary_fallback_reason

    assert folded(sync=True) == folded(sync=False)
    assert folded(sync=True)[0] == "extractive"
