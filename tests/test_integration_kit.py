"""The framework-neutral integration kit: what both adapters share, tested without a framework.

The loop runner, typed calls, the ``KnowledgeSource`` protocol (at run time and under
``mypy --strict``), ``FindResult.top`` and the stage events built from a result.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Unpack

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import AsyncTreehop, Treehop
from treehop import integration_kit as kit
from treehop.errors import ClientClosedError, IngestError, InvalidQueryError
from treehop.models import (
    ContextType,
    FindResult,
    FoundBy,
    MatchedContext,
    QueryPlan,
    QueryResult,
    TagHopMetrics,
    TypedQuery,
)
from treehop.search_options import SearchKwargs
from treehop.stage_events import (
    DescentStage,
    GlobalSearchStage,
    IntentAnalysisStage,
    RerankFallbackStage,
    TagHopStage,
    stage_events,
)
from treehop.validation import check_strings

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]


def hit(uri: str, score: float, found_by: FoundBy = FoundBy.GLOBAL, **kw: Any) -> MatchedContext:
    return MatchedContext(
        uri=uri,
        context_type=kw.pop("context_type", ContextType.RESOURCE),
        is_leaf=True,
        abstract=uri,
        score=score,
        found_by=found_by,
        **kw,
    )


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(
            "kubernetes rollbacks undo a deployment", target_uri="viking://resources/k8s"
        )
        th.add_resource("quarterly costs by team", target_uri="viking://resources/costs")
        yield th


# ---------------------------------------------------------------------------- FindResult.top


def test_top_counts_hits_not_their_neighbours_across_context_types() -> None:
    result = FindResult(
        resources=[
            hit("viking://resources/a#chunk-1", 0.9),
            hit("viking://resources/a#chunk-2", 0.9, FoundBy.NEIGHBOUR),
            hit("viking://resources/b", 0.5),
        ],
        memories=[hit("viking://user/default/memories/m", 0.7, context_type=ContextType.MEMORY)],
    )
    top2 = result.top(2)
    assert [m.uri for m in top2] == [
        "viking://resources/a#chunk-1",
        "viking://resources/a#chunk-2",  # the neighbour stays right after its hit, uncounted
        "viking://user/default/memories/m",
    ]
    assert [m.uri for m in result.top(1)] == [m.uri for m in top2[:2]]
    assert len(result.top(10)) == 4
    assert [m.uri for m in result.top(10, min_score=0.6)] == [m.uri for m in top2]


def test_top_hits_takes_a_source_result_whole(client: Treehop) -> None:
    result = FindResult(resources=[hit("viking://resources/a#chunk-1", 0.9), hit("x", 0.2)])
    assert len(kit.top_hits(client, result, 1)) == 1
    assert len(kit.top_hits(Notes(), result, 1)) == 2  # its service's neighbours are unmarked
    assert len(kit.top_hits(Notes(), result, 1, min_score=0.5)) == 1


@settings(max_examples=60, deadline=None)
@given(
    scores=st.lists(
        st.tuples(st.floats(0, 1, allow_nan=False), st.booleans()), min_size=0, max_size=12
    ),
    k=st.integers(1, 6),
    floor=st.none() | st.floats(0, 1, allow_nan=False),
)
def test_top_is_a_prefix_with_at_most_k_hits(
    scores: list[tuple[float, bool]], k: int, floor: float | None
) -> None:
    hits = [
        hit(f"viking://resources/h{i}", s, FoundBy.NEIGHBOUR if n else FoundBy.GLOBAL)
        for i, (s, n) in enumerate(scores)
    ]
    result = FindResult(resources=hits)
    top = result.top(k, min_score=floor)
    kept = [m for m in result.contexts() if floor is None or m.score >= floor]
    assert top == kept[: len(top)]  # best first, nothing skipped inside the cut
    assert sum(m.found_by is not FoundBy.NEIGHBOUR for m in top) <= k
    rest = kept[len(top) :]
    assert not rest or sum(m.found_by is not FoundBy.NEIGHBOUR for m in top) == k


@given(st.lists(st.text(max_size=5), max_size=5) | st.text(max_size=5))
def test_check_strings_accepts_lists_of_strings_only(values: list[str] | str) -> None:
    if isinstance(values, str):
        with pytest.raises(InvalidQueryError, match="not one string"):
            check_strings(values, "ids")
    else:
        assert check_strings(values, "ids") == values
        with pytest.raises(InvalidQueryError, match="ids must be strings, got int"):
            check_strings([*values, 1], "ids")
        # None is a bad value too (it was taken for "no bad value found")
        with pytest.raises(InvalidQueryError, match="ids must be strings, got NoneType"):
            check_strings([*values, None, []], "ids")


# ---------------------------------------------------------------------------- stage events


def test_stage_events_cover_every_stage_in_pipeline_order() -> None:
    tq = TypedQuery(query="rollback", context_type=ContextType.RESOURCE)
    qr = QueryResult(
        query=tq,
        starting_points=[("viking://resources/k8s", 0.8)],
        rounds=2,
        stop_reason="settled",
        searched_directories=["viking://resources", "viking://resources/k8s"],
        rerank_fallback=True,
        rerank_fallback_reason="timeout",
        tag_hops=TagHopMetrics(triggered=True, tags_used=["k8s"], hits_in_topk=1, hops_tried=2),
    )
    result = FindResult(
        query_plan=QueryPlan(queries=[tq], reasoning="asks about ops", planner="llm"),
        query_results=[qr],
    )
    events = stage_events("how do I roll back", result)
    assert [type(e) for e in events] == [
        IntentAnalysisStage,
        GlobalSearchStage,
        DescentStage,
        RerankFallbackStage,
        TagHopStage,
    ]
    assert [e.EVENT for e in events] == [
        "treehop_query_plan",
        "treehop_global_search",
        "treehop_descent",
        "treehop_rerank_fallback",
        "treehop_tag_hops",
    ]
    plan, start, descent, fallback, hops = events
    assert plan.payload()["queries"][0]["context_type"] == "resource"
    assert start.payload()["starting_points"] == [{"uri": "viking://resources/k8s", "score": 0.8}]
    assert isinstance(descent, DescentStage) and descent.rounds == 2
    assert isinstance(fallback, RerankFallbackStage) and fallback.first_reason == "timeout"
    assert isinstance(hops, TagHopStage) and hops.tags_used == ["k8s"] and hops.hops_tried == 2
    json.dumps([e.payload() for e in events])  # every payload is JSON-friendly


def test_a_plain_find_reports_its_global_step_and_descent(client: Treehop) -> None:
    events = stage_events("rollback", client.find("kubernetes rollback"))
    assert [type(e) for e in events] == [GlobalSearchStage, DescentStage]
    assert events[0].payload()["starting_points"]
    assert RerankFallbackStage(query="q").first_reason == "unknown"


# ---------------------------------------------------------------------------- running


def test_shared_loop_runs_from_inside_a_running_loop_and_restarts_after_close() -> None:
    async def where() -> str:
        return threading.current_thread().name

    async def caller() -> str:
        return kit.run_sync(where())  # asyncio.run would fail here: this thread runs a loop

    assert asyncio.run(caller()) == "treehop-loop"
    runner = kit._shared
    assert runner is not None
    runner.close()
    assert kit.run_sync(where()) == "treehop-loop" and kit._shared is not runner


def test_shared_loop_refuses_a_call_from_its_own_thread() -> None:
    async def inner() -> int:
        return 1

    async def reenter() -> int:
        return kit.run_sync(inner())

    with pytest.raises(ClientClosedError, match="own event loop"):
        kit.run_sync(reenter())


def test_typed_calls_run_on_either_client(client: Treehop) -> None:
    entries = kit.call(client, AsyncTreehop.ls, "viking://resources")
    assert {e.uri for e in entries} >= {"viking://resources/k8s", "viking://resources/costs"}
    aclient = client.aio
    assert kit.call(aclient, AsyncTreehop.read, "viking://resources/costs").startswith("quarterly")
    assert asyncio.run(kit.acall(client, AsyncTreehop.stat, "viking://resources/k8s")).is_leaf
    found = kit.find(client, "kubernetes rollback", limit=1)
    assert found.resources[0].uri == "viking://resources/k8s"
    assert (
        asyncio.run(kit.afind(aclient, "quarterly costs", limit=1))
        .resources[0]
        .uri.endswith("costs")
    )
    with pytest.raises(InvalidQueryError, match="unknown search option"):
        kit.find(client, "q", **{"limt": 1})  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- knowledge sources


class Notes:
    """A tiny read-only source: notes matched by shared words (a real protocol implementation,
    the shape of the VikingDB knowledge-base source, without a service)."""

    NOTES: ClassVar[dict[str, str]] = {
        "viking://resources/notes/a": "kubernetes rollback steps",
        "viking://resources/b": "x",
    }

    def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        if options.get("tags"):
            raise InvalidQueryError("notes have no tags")
        words = set(query.split())
        hits = [
            hit(uri, len(words & set(text.split())) / max(len(words), 1))
            for uri, text in self.NOTES.items()
        ]
        hits = sorted((h for h in hits if h.score > 0), key=lambda h: -h.score)
        return FindResult(resources=hits[: options.get("limit", 10)], total=len(hits))

    async def afind(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        return self.find(query, context_type=context_type, **options)


def test_one_check_says_what_a_knowledge_source_is(client: Treehop) -> None:
    notes = Notes()
    assert kit.is_knowledge_source(notes)
    assert not kit.is_knowledge_source(client) and not kit.is_knowledge_source(client.aio)
    assert not kit.is_knowledge_source(object())
    assert kit.check_retriever_client(notes) is notes
    with pytest.raises(InvalidQueryError, match="knowledge source with find"):
        kit.check_retriever_client(object())
    with pytest.raises(InvalidQueryError, match="client must be a treehop"):
        kit.check_client(notes)
    assert kit.find(notes, "kubernetes rollback").resources[0].uri.endswith("notes/a")
    assert asyncio.run(kit.afind(notes, "rollback", limit=1)).total == 1
    with pytest.raises(InvalidQueryError, match="no tags"):
        kit.find(notes, "rollback", tags=["ops"])


KNOWLEDGE_PROGRAM = """
from treehop.integration_kit import KnowledgeSource, find
from treehop.models import FindResult
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource


def conforms(src: VikingDBKnowledgeSource) -> KnowledgeSource:
    return src


def misspelt(src: KnowledgeSource) -> None:
    src.find("q", limt=5)


def wrong_type(src: KnowledgeSource) -> None:
    src.find("q", limit="5")


class NoOptions:
    def find(self, query: str) -> FindResult: return FindResult()
    async def afind(self, query: str) -> FindResult: return FindResult()


def not_a_source() -> KnowledgeSource:
    return NoOptions()


def kit_misspelt(src: KnowledgeSource) -> None:
    find(src, "q", limt=5)
"""


def test_mypy_strict_checks_the_knowledge_source_protocol(tmp_path: Path) -> None:
    """The protocol is typed with ``Unpack[SearchKwargs]``: a misspelt or mistyped option is a
    type error on any source, the VikingDB source conforms, and a ``find`` that takes no
    options does not."""
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent(KNOWLEDGE_PROGRAM))
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "c"), str(prog)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert sorted({int(e.split(":")[1]) for e in errors}) == [12, 16, 25, 29], proc.stdout
    assert sum('Unexpected keyword argument "limt"' in e for e in errors) == 2, proc.stdout


# ---------------------------------------------------------------------------- adapters' helpers


def test_shared_options_leave_unset_ones_to_the_core() -> None:
    class Settings:
        score_threshold = 0.2
        dense_weight = None
        include_directories = False
        chunk_diffusion_count = 0
        chunk_group = False
        collapse_chunks = False

    assert kit.shared_options(Settings()) == {
        "score_threshold": 0.2,
        "include_directories": False,
        "collapse_chunks": False,
    }


def test_documents_of_checks_the_batch_and_each_document() -> None:
    assert kit.documents_of(["a", "b"], str, "text") == ["a", "b"]
    with pytest.raises(IngestError, match="list of text objects"):
        kit.documents_of("a", str, "text")
    with pytest.raises(IngestError, match="document 1: expected a text, got int"):
        kit.documents_of(["a", 1], str, "text")
