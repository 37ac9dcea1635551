"""TreehopContextMiddleware inside real ``create_agent`` graphs (scripted offline chat model),
and the example agent whose memories persist across runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool

from langchain_treehop import LangChainEmbedder, TreehopContextMiddleware
from langchain_treehop.middleware import session_for_thread
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import ScriptedChatModel, WordHashEmbeddings, count_context_calls

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langgraph_memory_agent.py"


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("langgraph_memory_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _system_text(messages: list[Any]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


@pytest.fixture
def client() -> Treehop:
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_messages(
        [
            {"speaker": "Ann", "content": "My sister Jo lives in Lisbon and surfs."},
            {"speaker": "Ann", "content": "I am allergic to peanuts."},
        ],
        conversation_id="old",
        session_id="s1",
        session_time="2024-01-01",
    )
    return c


def test_example_agent_memories_persist_across_runs(tmp_path: Path) -> None:
    ex = _load_example()
    emb = LangChainEmbedder(WordHashEmbeddings())
    index = tmp_path / "idx"
    m1 = ex.first_run_model()
    out1 = ex.run(index, m1, "Remember that my sister Jo lives in Lisbon.", "day-1", embedder=emb)
    assert out1["messages"][-1].content == "Noted!"
    m2 = ex.second_run_model()
    out2 = ex.run(index, m2, "Where does my sister live?", "day-2", embedder=emb)
    # the recall tool found the memory written by the first run, through the tree search
    assert "Ann's sister Jo lives in Lisbon." in out2["messages"][-2].content
    # and the middleware had already put it into the first prompt of the second run
    first_prompt = _system_text(m2.prompts[0])
    assert "Ann's sister Jo lives in Lisbon." in first_prompt
    assert "[viking://~/memories/store/users/ann/memories] (memory" in first_prompt
    assert "\n- @" in first_prompt


def test_context_injected_once_per_turn_and_deduped_across_turns(
    client: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = count_context_calls(monkeypatch)

    @tool
    def noop(x: str) -> str:
        """Does nothing."""
        return "done"

    model = ScriptedChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[{"name": "noop", "args": {"x": "1"}, "id": "c1"}]),
                AIMessage("Jo lives in Lisbon."),
                AIMessage("Still Lisbon."),
            ]
        )
    )
    mw = TreehopContextMiddleware(
        client, max_tokens=120, tiers=["content"], find_kwargs={"target_uri": "viking://~/memories"}
    )
    agent = create_agent(model, tools=[noop], system_prompt="Be brief.", middleware=[mw])
    cfg = {"configurable": {"thread_id": "thread-1"}}
    agent.invoke({"messages": [HumanMessage("where does my sister Jo live")]}, config=cfg)
    # two model calls (before and after the tool), one retrieval
    assert len(model.seen) == 2 and calls == ["where does my sister Jo live"]
    for prompt in model.seen:
        text = _system_text(prompt)
        assert text.startswith("Be brief.")
        assert "Ann: My sister Jo lives in Lisbon and surfs." in text
    # the agent's state keeps the user's messages as written
    second = agent.invoke({"messages": [HumanMessage("where does my sister Jo live?")]}, config=cfg)
    assert all(not isinstance(m, SystemMessage) for m in second["messages"])
    # the next turn of the same thread does not get the same memory again
    assert "My sister Jo lives in Lisbon" not in _system_text(model.seen[2])
    # another thread does
    model2 = ScriptedChatModel(messages=iter([AIMessage("Lisbon.")]))
    agent2 = create_agent(model2, tools=[], middleware=[mw])
    agent2.invoke(
        {"messages": [HumanMessage("where does my sister Jo live")]},
        config={"configurable": {"thread_id": "thread-2"}},
    )
    assert "My sister Jo lives in Lisbon" in _system_text(model2.seen[0])


async def test_async_agent_records_turns_as_memory() -> None:
    aclient = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    model = ScriptedChatModel(messages=iter([AIMessage("Your flight is on Friday.")]))
    mw = TreehopContextMiddleware(aclient, record_turns=True, conversation_id="assistant")
    agent = create_agent(model, tools=[], middleware=[mw])
    await agent.ainvoke(
        {"messages": [HumanMessage("When is my flight to Oslo?")]},
        config={"configurable": {"thread_id": "chat 7/β"}},
    )
    session = session_for_thread("chat 7/β")
    assert session.startswith("t-")
    turns = await aclient.ls(f"viking://~/memories/conversations/assistant/{session}")
    texts = [await aclient.read(e.uri) for e in turns]
    # each turn text is headed by its day, "(1 December 2026) user: ..."
    assert all(t.startswith("(") for t in texts)
    assert [t.partition(") ")[2] for t in texts] == [
        "user: When is my flight to Oslo?",
        "assistant: Your flight is on Friday.",
    ]
    # the recorded turn is found by a later search, with its time
    hits = await aclient.find("flight to Oslo", include_directories=False)
    assert hits.memories and "timestamp" in hits.memories[0].metadata
    await aclient.close()


def test_no_user_message_and_empty_index_leave_the_request_alone() -> None:
    empty = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    model = ScriptedChatModel(messages=iter([AIMessage("hi")]))
    mw = TreehopContextMiddleware(empty, find_kwargs={"target_uri": "viking://~/memories"})
    agent = create_agent(model, tools=[], system_prompt="Sys.", middleware=[mw])
    agent.invoke({"messages": [HumanMessage("hello")]})
    assert _system_text(model.seen[0]) == "Sys."


def test_invalid_settings_are_refused(client: Treehop) -> None:
    for kw in (
        {"max_tokens": -1},
        {"k": -1},
        {"k": True},
        {"quotas": {"nope": 1}},
        {"conversation_id": "a/b"},
        {"find_kwargs": {"limit": 3}},
    ):
        with pytest.raises(InvalidQueryError):
            TreehopContextMiddleware(client, **kw)
    with pytest.raises(InvalidQueryError):
        TreehopContextMiddleware(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("role", ["human", "user"])
def test_a_chat_message_of_the_user_gets_context_and_is_recorded(
    client: Treehop, role: str
) -> None:
    # LangChain reads ChatMessage(role="human") / "user" as the user's turn; the middleware
    # looked for HumanMessage only: no context was injected and no turn recorded.
    from langchain_core.messages import ChatMessage

    model = ScriptedChatModel(messages=iter([AIMessage("Lisbon.")]))
    mw = TreehopContextMiddleware(
        client,
        max_tokens=120,
        tiers=["content"],
        find_kwargs={"target_uri": "viking://~/memories"},
        record_turns=True,
        conversation_id="lc",
    )
    agent = create_agent(model, tools=[], middleware=[mw])
    agent.invoke(
        {"messages": [ChatMessage(role=role, content="where does my sister Jo live")]},
        config={"configurable": {"thread_id": f"chat-{role}"}},
    )
    assert "Ann: My sister Jo lives in Lisbon and surfs." in _system_text(model.seen[0])
    turns = client.ls(f"viking://~/memories/conversations/lc/chat-{role}")
    said = [client.read(e.uri).partition(") ")[2] for e in turns]
    assert said == ["user: where does my sister Jo live", "assistant: Lisbon."]


def test_a_chat_message_of_another_role_is_not_the_users_turn(client: Treehop) -> None:
    from langchain_core.messages import ChatMessage

    model = ScriptedChatModel(messages=iter([AIMessage("ok")]))
    mw = TreehopContextMiddleware(client, find_kwargs={"target_uri": "viking://~/memories"})
    agent = create_agent(model, tools=[], system_prompt="Sys.", middleware=[mw])
    agent.invoke({"messages": [ChatMessage(role="bot", content="where does my sister Jo live")]})
    assert _system_text(model.seen[0]) == "Sys."
