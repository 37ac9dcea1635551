"""mode="search": the LLM plan (a LangChain chat model), sessions and chat history, the search
tool, and the search_knowledge controls through the retriever."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from langchain_treehop import (
    LangChainChatLLM,
    LangChainEmbedder,
    TreehopRetriever,
    add_documents,
    create_treehop_tools,
)
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import ScriptedChatModel, WordHashEmbeddings, aload_sample_tree, load_sample_tree

PLAN = {
    "reasoning": "a how-to for the user's project, in the user's preferred style",
    "queries": [
        {"query": "write an RFC", "context_type": "skill", "intent": "procedure", "priority": 1},
        {
            "query": "the user's communication preferences",
            "context_type": "memory",
            "intent": "preference",
            "priority": 2,
        },
    ],
}


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append((name, data))


def planner(n: int = 4) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter([json.dumps(PLAN)] * n))


@pytest.fixture
def planned_client(embeddings: WordHashEmbeddings) -> Iterator[tuple[Treehop, ScriptedChatModel]]:
    model = planner()
    client = Treehop(
        None, embedder=LangChainEmbedder(embeddings), tagger=None, llm=LangChainChatLLM(model)
    )
    load_sample_tree(client)
    yield client, model
    client.close()


def test_search_without_llm_falls_back_and_says_so(lc_client: Treehop) -> None:
    rec = Recorder()
    r = TreehopRetriever(client=lc_client, mode="search", k=5)
    docs = r.invoke("how should a code review comment be phrased", config={"callbacks": [rec]})
    assert len(docs) == 5  # fused per context type, cut to k overall
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    [(_, data)] = [e for e in rec.events if e[0] == "treehop_query_plan"]
    assert [e[0] for e in rec.events].count("treehop_descent") == 3  # one per typed query
    assert data["fallback"] is True and data["fallback_reason"] == "no LLM configured"
    assert {q["context_type"] for q in data["queries"]} == {"memory", "resource", "skill"}
    for d in docs:
        assert d.metadata["query"] == "how should a code review comment be phrased"


def test_search_plans_with_a_langchain_chat_model(
    planned_client: tuple[Treehop, ScriptedChatModel],
) -> None:
    client, model = planned_client
    rec = Recorder()
    r = TreehopRetriever(client=client, mode="search", k=6)
    docs = r.invoke("help me propose the new billing design", config={"callbacks": [rec]})
    plan_events = [d for n, d in rec.events if n == "treehop_query_plan"]
    assert len(plan_events) == 1
    plan = plan_events[0]
    assert plan["fallback"] is False
    assert plan["planner"] == "langchain:generic-fake-chat-model"
    assert [q["query"] for q in sorted(plan["queries"], key=lambda q: q["priority"])] == [
        "write an RFC",
        "the user's communication preferences",
    ]
    types = {d.metadata["context_type"] for d in docs}
    assert types == {"skill", "memory"}  # only what the plan asked for
    for d in docs:
        expected = (
            "write an RFC"
            if d.metadata["context_type"] == "skill"
            else ("the user's communication preferences")
        )
        assert d.metadata["query"] == expected
        assert d.metadata["matched_queries"][0]["context_type"] == d.metadata["context_type"]
    assert any(d.id == "viking://~/skills/create-rfc/SKILL.md" for d in docs)
    assert "help me propose the new billing design" in str(model.seen[0][-1].content)


def test_chat_history_becomes_a_throwaway_session(
    planned_client: tuple[Treehop, ScriptedChatModel],
) -> None:
    client, model = planned_client
    history = [
        HumanMessage("We are migrating the billing database to Postgres."),
        AIMessage("Understood, a Postgres migration."),
        AIMessage(content="", tool_calls=[{"name": "x", "args": {}, "id": "1"}]),
        ToolMessage(content="SECRET TOOL OUTPUT", tool_call_id="1"),
    ]
    r = TreehopRetriever(client=client, mode="search", k=3)
    assert r.invoke("how do I write it?", chat_history=history)
    prompt = str(model.seen[0][-1].content)
    assert "[user] We are migrating the billing database to Postgres." in prompt
    assert "[assistant] Understood, a Postgres migration." in prompt
    assert "SECRET TOOL OUTPUT" not in prompt
    assert client.aio.sessions.list_sessions() == []  # the temporary session is gone
    constructed = TreehopRetriever(client=client, mode="search", k=3, chat_history=history[:1])
    constructed.invoke("and the rollback?")
    assert "[user] We are migrating" in str(model.seen[1][-1].content)
    assert client.aio.sessions.list_sessions() == []


async def test_session_id_and_async_search(embeddings: WordHashEmbeddings) -> None:
    model = planner()
    client = AsyncTreehop(
        None, embedder=LangChainEmbedder(embeddings), tagger=None, llm=LangChainChatLLM(model)
    )
    await aload_sample_tree(client)
    sid = await client.create_session()
    await client.add_message(sid, "user", "I prefer terse answers with bullet points.")
    r = TreehopRetriever(client=client, mode="search", k=4, session_id=sid)
    docs = await r.ainvoke("summarise the rollout guide")
    assert len(docs) == 4
    assert "[user] I prefer terse answers with bullet points." in str(model.seen[0][-1].content)
    history = [HumanMessage("Our team ships on Fridays.")]
    await r.ainvoke("anything else?", session_id=None, chat_history=history)
    assert "[user] Our team ships on Fridays." in str(model.seen[1][-1].content)
    assert [s.session_id for s in client.sessions.list_sessions()] == [sid]


def test_search_argument_errors(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, mode="search")
    with pytest.raises(InvalidQueryError, match="session_id or chat_history, not both"):
        r.invoke("q", session_id="a" * 32, chat_history=[HumanMessage("hi")])
    with pytest.raises(InvalidQueryError, match="only apply to mode='search'"):
        r.invoke("q", mode="find", chat_history=[HumanMessage("hi")])
    with pytest.raises(InvalidQueryError, match="do not overlap"):
        r.invoke("q", target_uri="viking://resources/devops", context_types=["memory"])


def test_search_tool_in_a_graph(planned_client: tuple[Treehop, ScriptedChatModel]) -> None:
    client, _ = planned_client
    tools = create_treehop_tools(client, k=3)
    assert [t.name for t in tools] == [
        "treehop_find",
        "treehop_search",
        "treehop_ls",
        "treehop_read",
    ]
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile()
    ask = AIMessage(
        content="",
        tool_calls=[
            {"name": "treehop_search", "args": {"query": "draft a design proposal"}, "id": "s1"}
        ],
    )
    msg = app.invoke({"messages": [ask]})["messages"][-1]
    assert isinstance(msg, ToolMessage) and msg.status == "success"
    assert len(msg.artifact) == 3
    assert all(isinstance(d, Document) for d in msg.artifact)
    assert {d.metadata["context_type"] for d in msg.artifact} <= {"skill", "memory"}


def test_search_tool_uses_the_given_session(
    planned_client: tuple[Treehop, ScriptedChatModel],
) -> None:
    client, model = planned_client
    sid = client.create_session()
    client.add_message(sid, "user", "Remember: our RFCs go to the architecture board.")
    [search] = create_treehop_tools(client, include=["search"], session_id=sid)
    msg = search.invoke(
        {"type": "tool_call", "name": "treehop_search", "args": {"query": "next step?"}, "id": "x"}
    )
    assert isinstance(msg, ToolMessage) and msg.artifact
    prompt = str(model.seen[0][-1].content)
    assert "[user] Remember: our RFCs go to the architecture board." in prompt


def test_search_knowledge_controls_pass_through(embeddings: WordHashEmbeddings) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None, chunk_chars=300)
    try:
        body = "\n\n".join(
            f"## Part {i}\n" + (f"Topic {i} words. " * 25) + ("zebra crossing " if i == 3 else "")
            for i in range(7)
        )
        [uri] = add_documents(client, [Document(body, metadata={"source": "long.md"})])
        r = TreehopRetriever(client=client, k=1, include_directories=False)
        [hit] = r.invoke("zebra crossing")
        assert hit.metadata["chunk_index"] is not None
        assert hit.metadata["parent_uri"] == uri
        spread = r.invoke("zebra crossing", chunk_diffusion_count=1)
        assert spread[0].id == hit.id
        neighbours = spread[1:]
        assert neighbours and len(spread) > 1  # neighbours come on top of k
        assert {d.metadata["found_by"] for d in neighbours} == {"neighbour"}
        idx = hit.metadata["chunk_index"]
        assert {d.metadata["chunk_index"] for d in neighbours} <= {idx - 1, idx + 1}
        grouped = r.invoke("zebra crossing", k=3, chunk_group=True)
        chunk_ids = [d.metadata["chunk_index"] for d in grouped]
        assert chunk_ids == sorted(chunk_ids)  # one document, in reading order
        with pytest.raises(InvalidQueryError, match="retrieve_count applies only"):
            r.invoke("zebra crossing", retrieve_count=30)
    finally:
        client.close()
