"""Review of stop 77's merged code (helper review78a): pipeline77, leftovers77, quality83.

1. ``validate_scores`` never raises on a plug-in's answer (a lazy answer whose items raise,
   an item whose ``__float__`` or ``repr`` raises, an endless iterator) and bounds its
   reason; a search with such a reranker falls back to the vector scores.
2. ``_plugins.in_daemon_thread``: a thread that cannot be started is the call's failure
   (the sync fold and the sync plan fall back), not a raw ``RuntimeError``.
3. ``EmbeddedStore._clear_dead_records`` keeps a committed index's records where its
   ``CURRENT`` is damaged or gone (a store opened before the first commit removed them).
4. A planner's JSON ``"\\ud800"`` escapes become U+FFFD in the plan's query, intent and
   reasoning (a search planned so returned a result ``model_dump_json`` refused).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_hierarchical_retriever import ScriptedReranker, run, tree
from treehop import AsyncTreehop, Treehop
from treehop._plugins import in_daemon_thread
from treehop.errors import TreehopError
from treehop.intent_analysis import IntentAnalyzer, PlanParseError, parse_plan
from treehop.llm.base import BaseLLM, ChatMessage
from treehop.models import RetrievalMode
from treehop.rerankers.base import validate_scores
from treehop.sessions import SessionStore


# -- 1. validate_scores reads a plug-in's answer without raising ----------------------------
class _FloatRaises:
    def __float__(self) -> float:
        raise RuntimeError("no float here")


class _ReprRaises:
    def __float__(self) -> float:
        raise TypeError("not a number")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


class _SliceRaises(str):
    def __getitem__(self, key: Any) -> str:
        raise RuntimeError("no slice")


def _raises_midway() -> Any:
    yield 0.5
    raise KeyError("the second score")


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda: map(float, ["0.5", "x"]), id="lazy-map-ValueError"),
        pytest.param(_raises_midway, id="generator-KeyError"),
        pytest.param(lambda: [_FloatRaises(), 0.1], id="float-RuntimeError"),
        pytest.param(lambda: [_ReprRaises(), 0.1], id="repr-RuntimeError"),
        pytest.param(lambda: [_SliceRaises("0.9"), 0.1], id="str-subclass-slice"),
    ],
)
def test_an_answer_failing_while_read_is_an_invalid_answer(answer: Any) -> None:
    scores, reason = validate_scores(answer(), 2)
    assert scores is None and reason is not None and reason.startswith("invalid answer")
    assert len(reason) <= 500


def test_a_long_lazy_answer_is_read_only_one_past_the_count() -> None:
    read = itertools.count()
    long_answer = (float(next(read) % 2) for _ in range(100_000))  # (endless, bounded here)
    scores, reason = validate_scores(long_answer, 3)
    assert scores is None and reason is not None and "more than 3 scores" in reason
    assert next(read) == 4  # (four items read: one past the three expected)


class _LyingList(list):  # type: ignore[type-arg]
    """Says it holds two scores; its iterator gives 10**6 (or none)."""

    def __init__(self, n: int) -> None:
        super().__init__([0.5, 0.5])
        self.n = n

    def __iter__(self) -> Any:
        return iter([0.25] * self.n)


@pytest.mark.parametrize("n", [1_000_000, 0])
def test_a_list_whose_iterator_disagrees_with_its_length_is_invalid(n: int) -> None:
    scores, reason = validate_scores(_LyingList(n), 2)
    assert scores is None and reason is not None and "scores read for 2 documents" in reason


def test_a_huge_item_is_shown_bounded() -> None:
    scores, reason = validate_scores([[0.0] * 100_000, 1.0], 2)
    assert scores is None and reason is not None and "non-numeric score" in reason
    assert len(reason) < 200


def test_a_generator_of_numbers_still_stands() -> None:  # (control)
    assert validate_scores((x / 10 for x in range(3)), 3) == ([0.0, 0.1, 0.2], None)
    assert validate_scores(iter([0.5]), 2) == (None, "invalid answer: 1 scores for 2 documents")


_items = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(),
    st.booleans(),
    st.text(max_size=50),
    st.binary(max_size=20),
    st.none(),
    st.lists(st.floats(), max_size=3),
    st.builds(_FloatRaises),
    st.builds(_ReprRaises),
)


@settings(max_examples=60, deadline=None)
@given(items=st.lists(_items, max_size=6), lazy=st.booleans(), expected=st.integers(0, 6))
def test_validate_scores_never_raises_and_answers_one_of_the_two(
    items: list[object], lazy: bool, expected: int
) -> None:
    answer: object = iter(items) if lazy else items
    scores, reason = validate_scores(answer, expected)
    assert (scores is None) != (reason is None)
    if scores is not None:
        assert len(scores) == expected and all(isinstance(s, float) for s in scores)
    else:
        assert reason is not None and len(reason) <= 500


def test_a_reranker_answering_a_failing_lazy_map_falls_back_to_the_vector_scores() -> None:
    async def lazy(docs: Sequence[str]) -> object:
        return map(float, ["0.5" if "eval" in d else "high" for d in docs])

    baseline = run(tree(), include_directories=False)
    res = run(
        tree(),
        reranker=ScriptedReranker(lazy),
        mode=RetrievalMode.THINKING,
        include_directories=False,
    )
    assert res.rerank_fallback and "reading it failed" in (res.rerank_fallback_reason or "")
    assert [m.uri for m in res.matched_contexts] == [m.uri for m in baseline.matched_contexts]


# -- 2. a thread that cannot be started is the call's failure -------------------------------
class _Answers(BaseLLM):
    name = "answers"

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return '{"queries": []}' if json_mode else "A summary."

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return self.complete(messages, json_mode=json_mode)


@pytest.fixture
def no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)


def test_in_daemon_thread_tells_a_failed_start_through_its_future(no_threads: None) -> None:
    future = in_daemon_thread(lambda: 1, name="treehop-test")
    assert future.done()
    with pytest.raises(RuntimeError, match="can't start new thread"):
        future.result(timeout=0)


def test_a_sync_fold_without_a_thread_falls_back_to_extractive(no_threads: None) -> None:
    store = SessionStore(llm=_Answers(), max_messages=2, keep_recent=1)
    sid = store.create_session()
    for i in range(3):
        store.add_message(sid, "user", f"Sentence number {i}.")
    got = store.get(sid)
    assert got.summary_method == "extractive" and got.folded_count == 2
    assert "can't start new thread" in (got.summary_fallback_reason or "")


def test_a_sync_plan_without_a_thread_falls_back(no_threads: None) -> None:
    plan = IntentAnalyzer(_Answers(), timeout_s=2).analyze_sync("find the RFC template")
    assert plan.fallback and "can't start new thread" in (plan.fallback_reason or "")


def test_a_sync_plan_with_a_thread_is_used() -> None:  # (control)
    plan = IntentAnalyzer(_Answers(), timeout_s=2).analyze_sync("find the RFC template")
    assert not plan.fallback and plan.queries == []


# -- 3. a dead creator's clean-up never removes a committed index's records -----------------
DOC = "viking://resources/doc"


def _committed_by_another(tmp_path: Any, current: str) -> tuple[Any, Any]:
    """An index committed by a client while a direct store opened before it (nothing
    committed then) stays open; then its ``CURRENT`` is damaged or gone (an open reads the
    newest manifest then). Returns (the early store, the index path)."""
    from treehop import Treehop
    from treehop.stores.embedded import EmbeddedStore

    from treehop_test_doubles import BagOfWordsEmbedder

    folder = tmp_path / "doc"
    folder.mkdir()
    for i in range(2):
        (folder / f"f{i}.md").write_text(f"# File {i}\n\nThe text of file {i} about topic{i}.\n")
    idx = tmp_path / "idx"
    early = EmbeddedStore(str(idx))
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(folder), target_uri=DOC)
    if current == "damaged":
        (idx / "CURRENT").write_text("not a generation\n")
    else:
        (idx / "CURRENT").unlink()
    return early, idx


@pytest.mark.parametrize("current", ["damaged", "missing"])
def test_a_committed_index_with_no_readable_current_keeps_its_records(
    tmp_path: Any, current: str
) -> None:
    from treehop.ingest.writer import _call_tags_key, _manifest_key

    from treehop_test_doubles import store_leaf, unit_vectors

    early, idx = _committed_by_another(tmp_path, current)
    records = [idx / "state" / _manifest_key(DOC), idx / "state" / _call_tags_key(DOC)]
    assert all(r.is_file() for r in records)  # (the premise)
    try:
        with contextlib.suppress(TreehopError):  # (what the write then meets: not this test's)
            early.upsert([store_leaf("viking://resources/a.md")], unit_vectors(1, dim=8))
            early.save()
        assert all(r.is_file() for r in records)
        assert early._clear_dead_records(holding_writes=False) == []
        assert all(r.is_file() for r in records)
    finally:
        early.discard_unsaved()
        early.close()


# -- 4. a planner's lone surrogates do not reach the plan ------------------------------------
def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


SURROGATE_PLAN = json.dumps(
    {
        "reasoning": "why \ud800",
        "queries": [
            {"query": "alpha \udc00 beta", "context_type": "resource", "intent": "x\ud83d"},
        ],
    }
)


def test_a_plan_holds_no_lone_surrogate() -> None:
    queries, reasoning = parse_plan(SURROGATE_PLAN)
    assert [q.query for q in queries] == ["alpha \ufffd beta"]
    assert queries[0].intent == "x\ufffd" and reasoning == "why \ufffd"


def test_a_valid_pair_stands() -> None:  # (control: a real astral character is kept)
    answer = json.dumps({"queries": [{"query": "snake \U0001f40d", "context_type": "resource"}]})
    assert parse_plan(answer)[0][0].query == "snake \U0001f40d"


_texty = st.lists(  # (``st.text`` leaves lone surrogates out of any alphabet)
    st.one_of(st.characters(codec="utf-8"), st.sampled_from("\ud800\udbff\udc00\udfff")),
    min_size=1,
    max_size=30,
).map("".join)


@settings(max_examples=50, deadline=None)
@given(query=_texty, intent=_texty, reasoning=_texty)
def test_every_plan_text_is_utf8(query: str, intent: str, reasoning: str) -> None:
    answer = json.dumps(
        {
            "reasoning": reasoning,
            "queries": [{"query": query, "context_type": "resource", "intent": intent}],
        }
    )
    try:
        queries, said = parse_plan(answer)
    except PlanParseError:  # (a query of blanks only: dropped, no plan)
        assert not query.strip()
        return
    assert _utf8(said) and all(_utf8(q.query) and _utf8(q.intent) for q in queries)


class _SurrogatePlanner(BaseLLM):
    name = "surrogates"

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return SURROGATE_PLAN

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return SURROGATE_PLAN


@pytest.mark.parametrize("sync", [True, False])
def test_a_search_planned_with_surrogates_writes_as_json(bow: object, sync: bool) -> None:
    planner = _SurrogatePlanner()
    if sync:
        with Treehop(embedder=bow, tagger=None, query_planner=planner) as th:
            res = th.search("alpha beta")
    else:

        async def main() -> Any:
            client = AsyncTreehop(embedder=bow, tagger=None, query_planner=planner)
            try:
                return await client.search("alpha beta")
            finally:
                await client.aclose()

        res = asyncio.run(main())
    assert res.query_plan is not None and not res.query_plan.fallback
    assert "\ufffd" in res.model_dump_json()
