"""``mode="search"``: a LlamaIndex LLM plans the queries; sessions; the intent prompt."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import llama_index.core.instrumentation as instrument
import pytest
from li_helpers import WordHashEmbedding, load_sample_tree
from llama_index.core.base.llms.types import (
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import CustomLLM, MockLLM
from llama_index.core.prompts import PromptTemplate
from pydantic import Field, PrivateAttr

from llama_index.retrievers.treehop import (
    INTENT_PROMPT_KEY,
    TreehopQueryEngine,
    TreehopQueryPlanEvent,
    TreehopRetriever,
)
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.intent_analysis import DEFAULT_PROMPT_TEMPLATE
from treehop.llm.base import ChatMessage as TreehopChatMessage
from treehop.models import ContextType

PLAN = {
    "reasoning": "keys for the service and the user's habits",
    "queries": [
        {"query": "api key rotation", "context_type": "resource", "intent": "how", "priority": 5},
        {
            "query": "the user's code style",
            "context_type": "memory",
            "intent": "habits",
            "priority": 3,
        },
    ],
}


class PlannerLLM(CustomLLM):
    """A LlamaIndex LLM that answers every prompt with a fixed plan and records the prompts."""

    answer: str = Field(default=json.dumps(PLAN))
    _prompts: list[str] = PrivateAttr(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="planner-under-test")

    @property
    def prompts(self) -> list[str]:
        return self._prompts

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        self._prompts.append(prompt)
        return CompletionResponse(text=self.answer)

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        yield self.complete(prompt)


class Recorder(BaseEventHandler):
    events: list[BaseEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "SearchRecorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    root = instrument.get_dispatcher()
    root.add_event_handler(rec)
    yield rec
    root.event_handlers.remove(rec)


@pytest.fixture
def planner() -> PlannerLLM:
    return PlannerLLM()


@pytest.fixture
def search_retriever(planner: PlannerLLM) -> Iterator[TreehopRetriever]:
    retriever = TreehopRetriever.from_defaults(
        embed_model=WordHashEmbedding(),
        llm=planner,
        client_kwargs={"tagger": None},
        mode="search",
        similarity_top_k=6,
    )
    assert isinstance(retriever.client, Treehop)
    load_sample_tree(retriever.client)
    yield retriever
    retriever.client.close()


def test_search_follows_the_llamaindex_planner(
    search_retriever: TreehopRetriever, planner: PlannerLLM, recorder: Recorder
) -> None:
    nodes = search_retriever.retrieve("what do I need for rotating keys?")
    assert len(planner.prompts) == 1
    assert "what do I need for rotating keys?" in planner.prompts[0]
    kinds = {n.node.metadata["context_type"] for n in nodes}
    assert kinds == {"resource", "memory"}
    # search() limits each context type; similarity_top_k caps the total, best first.
    assert len(nodes) == 6
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    by_query = {q["query"] for n in nodes for q in n.node.metadata["matched_queries"]}
    assert by_query <= {"api key rotation", "the user's code style"}
    assert {n.node.metadata["query"] for n in nodes} == {
        "api key rotation",
        "the user's code style",
    }
    plans = [e for e in recorder.events if isinstance(e, TreehopQueryPlanEvent)]
    assert len(plans) == 1
    assert [q["query"] for q in plans[0].queries] == ["api key rotation", "the user's code style"]
    assert plans[0].fallback is False
    assert plans[0].planner == "llamaindex:PlannerLLM:planner-under-test"


async def test_search_async_and_context_types(
    search_retriever: TreehopRetriever, planner: PlannerLLM
) -> None:
    search_retriever.context_types = (ContextType.MEMORY,)
    nodes = await search_retriever.aretrieve("rotating keys, my style")
    assert nodes and {n.node.metadata["context_type"] for n in nodes} == {"memory"}
    assert "Context types you may use here: memory\n" in planner.prompts[-1]


def test_session_context_reaches_the_planner(
    search_retriever: TreehopRetriever, planner: PlannerLLM
) -> None:
    client = search_retriever.client
    assert isinstance(client, Treehop)
    sid = client.create_session()
    client.add_message(sid, "user", "we deploy the billing service on kubernetes")
    client.add_message(sid, "assistant", "noted: billing runs on kubernetes")
    search_retriever.session_id = sid
    search_retriever.retrieve("how do I rotate its keys?")
    assert "we deploy the billing service on kubernetes" in planner.prompts[-1]
    search_retriever.session_id = None
    search_retriever.retrieve("how do I rotate its keys?")
    assert "billing" not in planner.prompts[-1]


def test_small_talk_plan_retrieves_nothing(planner: PlannerLLM) -> None:
    planner.answer = json.dumps({"reasoning": "greeting", "queries": []})
    retriever = TreehopRetriever.from_defaults(
        embed_model=WordHashEmbedding(), llm=planner, client_kwargs={"tagger": None}, mode="search"
    )
    load_sample_tree(retriever.client)  # type: ignore[arg-type]
    assert retriever.retrieve("hi there!") == []


def test_planner_failure_falls_back_and_says_so(recorder: Recorder) -> None:
    retriever = TreehopRetriever.from_defaults(
        embed_model=WordHashEmbedding(),
        llm=PlannerLLM(answer="not json at all"),
        client_kwargs={"tagger": None},
        mode="search",
    )
    load_sample_tree(retriever.client)  # type: ignore[arg-type]
    nodes = retriever.retrieve("rotate api keys")
    assert nodes
    plan = [e for e in recorder.events if isinstance(e, TreehopQueryPlanEvent)][-1]
    assert plan.fallback is True and plan.fallback_reason


def test_get_prompts_is_the_exact_planner_prompt(search_retriever: TreehopRetriever) -> None:
    prompts = search_retriever.get_prompts()
    assert set(prompts) == {INTENT_PROMPT_KEY}
    prompt = prompts[INTENT_PROMPT_KEY]
    assert isinstance(prompt, PromptTemplate)
    assert set(prompt.template_vars) == {
        "query",
        "summary",
        "recent_messages",
        "context_types",
        "max_queries",
    }
    analyzer = search_retriever.client.aio.intent_analyzer  # type: ignore[union-attr]
    sent = analyzer.build_messages(
        "rotate keys",
        "earlier: billing",
        [TreehopChatMessage(role="user", content="hello")],
        [ContextType.RESOURCE, ContextType.MEMORY],
    )[0].content
    formatted = prompt.format(
        query="rotate keys",
        summary="earlier: billing",
        recent_messages="[user] hello",
        context_types="resource, memory",
        max_queries="5",
    )
    assert formatted == sent
    # A LlamaIndex-style round trip changes nothing.
    search_retriever.update_prompts({INTENT_PROMPT_KEY: prompt})
    assert analyzer.prompt_template == DEFAULT_PROMPT_TEMPLATE


def test_update_prompts_changes_what_the_planner_sees(
    search_retriever: TreehopRetriever, planner: PlannerLLM
) -> None:
    custom = PromptTemplate(
        "Plan for {query} (types: {context_types}); costs $5. Answer JSON like "
        '{"queries": [{"query": "...", "context_type": "resource"}]}'
    )
    search_retriever.update_prompts({INTENT_PROMPT_KEY: custom})
    search_retriever.retrieve("rotate keys")
    # (a completion model gets the chat as "user: ...")
    assert "user: Plan for rotate keys (types: memory, resource, skill)" in planner.prompts[-1]
    assert "costs $5." in planner.prompts[-1]
    assert '{"queries": [{"query": "...", "context_type": "resource"}]}' in planner.prompts[-1]
    # Partially formatted variables are baked in.
    partial = PromptTemplate("At most {max_queries} for {query} in {summary}").partial_format(
        summary="a $ummary"
    )
    search_retriever.update_prompts({INTENT_PROMPT_KEY: partial})
    search_retriever.retrieve("rotate keys")
    assert "user: At most 5 for rotate keys in a $ummary\n" in planner.prompts[-1]


@pytest.mark.parametrize(
    ("template", "match"),
    [
        ("no query here {summary}", "must contain"),
        ("{query} and {unknown_var}", "unknown variables"),
    ],
)
def test_update_prompts_rejects_bad_templates(
    search_retriever: TreehopRetriever, template: str, match: str
) -> None:
    with pytest.raises(InvalidQueryError, match=match):
        search_retriever.update_prompts({INTENT_PROMPT_KEY: PromptTemplate(template)})


def test_query_engine_exposes_the_retriever_prompt(
    search_retriever: TreehopRetriever, planner: PlannerLLM
) -> None:
    engine = TreehopQueryEngine.from_args(search_retriever, llm=MockLLM())
    key = f"retriever:{INTENT_PROMPT_KEY}"
    assert key in engine.get_prompts()
    assert "response_synthesizer:text_qa_template" in engine.get_prompts()
    engine.update_prompts({key: PromptTemplate("Only this: {query}")})
    engine.query("rotate keys")
    assert planner.prompts[-1].startswith("user: Only this: rotate keys\n")


def test_find_mode_rejects_search_only_options(client: Treehop) -> None:
    with pytest.raises(InvalidQueryError, match="session_id"):
        TreehopRetriever(client, mode="find", session_id="abc")
    # find mode still exposes the client's planner prompt (it is the same client).
    assert INTENT_PROMPT_KEY in TreehopRetriever(client).get_prompts()
