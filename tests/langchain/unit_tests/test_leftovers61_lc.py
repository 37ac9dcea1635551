"""Items left open by stop 60, LangChain side (bench/README.md, "Leftovers, stop 61 (helper
leftovers61)"). Each test fails on 99b45f6."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from langchain_core.messages import ChatMessage

from langchain_treehop import LangChainChatLLM, LangChainEmbedder, TreehopRetriever
from treehop import Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import ScriptedChatModel, WordHashEmbeddings, load_sample_tree

PLAN = {"reasoning": "r", "queries": [{"query": "write an RFC", "context_type": "skill"}]}


@pytest.fixture
def planned(embeddings: WordHashEmbeddings) -> Iterator[tuple[Treehop, ScriptedChatModel]]:
    model = ScriptedChatModel(messages=iter([json.dumps(PLAN)] * 4))
    client = Treehop(
        None, embedder=LangChainEmbedder(embeddings), tagger=None, llm=LangChainChatLLM(model)
    )
    load_sample_tree(client)
    yield client, model
    client.close()


def test_chat_history_reads_chat_message_roles(
    planned: tuple[Treehop, ScriptedChatModel],
) -> None:
    # 99b45f6: a ChatMessage in chat_history was dropped whatever its role (only HumanMessage,
    # AIMessage, SystemMessage were read): the planner never saw ChatMessage(role="human")
    client, model = planned
    history = [
        ChatMessage(role="human", content="We are migrating billing to Postgres."),
        ChatMessage(role="ai", content="Understood, a Postgres migration."),
        ChatMessage(role="user", content="Keep it short."),
        ChatMessage(role="developer", content="Answer in English."),
        ChatMessage(role="tool", content="SECRET TOOL OUTPUT"),
        ChatMessage(role="function", content="SECRET FUNCTION OUTPUT"),
    ]
    r = TreehopRetriever(client=client, mode="search", k=3)
    assert r.invoke("how do I write it?", chat_history=history)
    prompt = str(model.seen[0][-1].content)
    assert "[user] We are migrating billing to Postgres." in prompt
    assert "[assistant] Understood, a Postgres migration." in prompt
    assert "[user] Keep it short." in prompt
    assert "[system] Answer in English." in prompt
    assert "SECRET" not in prompt  # tool traffic skipped, as a ToolMessage is
    assert client.aio.sessions.list_sessions() == []


def test_chat_history_refuses_an_unknown_role_before_any_session(
    planned: tuple[Treehop, ScriptedChatModel],
) -> None:
    client, model = planned
    r = TreehopRetriever(client=client, mode="search", k=3)
    with pytest.raises(InvalidQueryError, match=r"chat_history\[0\]: role 'bot'"):
        r.invoke("q", chat_history=[ChatMessage(role="bot", content="hi")])
    assert client.aio.sessions.list_sessions() == []
    assert model.seen == []
