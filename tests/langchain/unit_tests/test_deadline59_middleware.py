"""``TreehopContextMiddleware(k=0)`` injects nothing, as LangChain retrievers read ``k=0``
(helper deadline59).

``VectorStoreRetriever`` over ``InMemoryVectorStore`` answers ``[]`` for ``k=0``, and so does
our ``TreehopRetriever`` (usage58). The middleware refused 0 at construction; now 0 means no
context: no ``find()``, the model call unchanged, turns still recorded when asked.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.vectorstores import InMemoryVectorStore

from langchain_treehop import LangChainEmbedder, TreehopContextMiddleware
from langchain_treehop.middleware import session_for_thread
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import ScriptedChatModel, WordHashEmbeddings, count_context_calls


def _system_text(messages: list[Any]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, SystemMessage))


def test_langchain_reads_k_zero_as_no_documents() -> None:
    # The reference this follows: LangChain's own retriever over its own store.
    store = InMemoryVectorStore.from_texts(["Jo lives in Lisbon."], WordHashEmbeddings())
    assert store.as_retriever(search_kwargs={"k": 0}).invoke("Lisbon") == []


def test_middleware_k_zero_injects_nothing_and_still_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    client.add_messages(
        [{"speaker": "Ann", "content": "My sister Jo lives in Lisbon and surfs."}],
        conversation_id="old",
        session_id="s1",
        session_time="2024-01-01",
    )
    calls = count_context_calls(monkeypatch)
    mw = TreehopContextMiddleware(client, k=0, record_turns=True, conversation_id="assistant")
    assert mw.k == 0
    model = ScriptedChatModel(messages=iter([AIMessage("Lisbon, I think.")]))
    agent = create_agent(model, tools=[], system_prompt="Be brief.", middleware=[mw])
    cfg = {"configurable": {"thread_id": "thread-0"}}
    agent.invoke({"messages": [HumanMessage("where does my sister Jo live")]}, config=cfg)
    assert calls == []
    assert _system_text(model.seen[0]) == "Be brief."
    turns = client.ls(
        f"viking://~/memories/conversations/assistant/{session_for_thread('thread-0')}"
    )
    assert len(turns) == 2
    # the same agent with k=3 does inject the memory (the index has it)
    model3 = ScriptedChatModel(messages=iter([AIMessage("Lisbon.")]))
    mw3 = TreehopContextMiddleware(client, k=3, find_kwargs={"target_uri": "viking://~/memories"})
    create_agent(model3, tools=[], system_prompt="Be brief.", middleware=[mw3]).invoke(
        {"messages": [HumanMessage("where does my sister Jo live")]}
    )
    assert "Jo lives in Lisbon" in _system_text(model3.seen[0])
    client.close()


async def test_middleware_k_zero_async_leaves_the_request_alone() -> None:
    client = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    await client.add_messages(
        [{"speaker": "Ann", "content": "I say hello to everyone."}],
        conversation_id="old",
        session_id="s1",
        session_time="2024-01-01",
    )
    model = ScriptedChatModel(messages=iter([AIMessage("hi")]))
    mw = TreehopContextMiddleware(client, k=0, find_kwargs={"target_uri": "viking://~/memories"})
    agent = create_agent(model, tools=[], system_prompt="Sys.", middleware=[mw])
    await agent.ainvoke({"messages": [HumanMessage("hello")]})
    assert _system_text(model.seen[0]) == "Sys."
    await client.close()


@pytest.mark.parametrize("k", [-1, True, 0.0, 1.5, "0"])
def test_middleware_k_still_refuses_what_is_not_a_count(k: object) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    with pytest.raises(InvalidQueryError, match="k"):
        TreehopContextMiddleware(client, k=k)  # type: ignore[arg-type]
    client.close()
