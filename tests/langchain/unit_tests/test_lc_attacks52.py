"""Helper attacks52: the LangChain wrappers over a store of one long file, whose topical
finds fill their ``limit`` with passage slots (``few_document_passages``): every filled
slot reaches the caller, each with its own text; and a thread id with a trailing newline
is a digest, not a session id."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_treehop import LangChainEmbedder, TreehopRetriever, TreehopVectorStore
from langchain_treehop.middleware import session_for_thread
from treehop import Treehop

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import ONE_BOOK_QUERY, one_long_book

QUERY = ONE_BOOK_QUERY


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = Treehop(embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None, chunk_chars=300)
    c.add_resource(one_long_book(tmp_path / "docs"), target_uri="viking://resources/one")
    yield c
    c.close()


@pytest.mark.parametrize("k", [1, 4, 10])
def test_every_filled_slot_of_one_file_reaches_the_caller(client: Treehop, k: int) -> None:
    want = [m.slot_text for m in client.find(QUERY, limit=k).top(k)]
    assert len(want) == k and len(set(want)) == k  # (one file, k passage slots)
    docs = TreehopRetriever(client=client, k=k).invoke(QUERY)
    assert [d.page_content for d in docs] == want
    # (a vector store returns the k best records it stored, leaves only: k of them, each
    # its own record, not passage slots)
    vs = TreehopVectorStore(client=client)
    got = vs.similarity_search(QUERY, k=k)
    assert len(got) == k and len({d.id for d in got}) == k
    assert len(vs.similarity_search_with_score(QUERY, k=k)) == k
    assert len(vs.max_marginal_relevance_search(QUERY, k=k, fetch_k=2 * k)) == k


def test_a_thread_id_with_a_trailing_newline_is_a_digest() -> None:
    assert session_for_thread("t1") == "t1"
    assert session_for_thread("t1\n") != "t1\n"
    assert session_for_thread("t1\n").startswith("t-")


async def test_a_long_answer_is_recorded_whole_not_raised() -> None:
    """``record_turns`` wrote the turn with ``add_messages``, which refuses a message over
    20,000 characters (or holding a lone surrogate): a long model answer made the agent run
    raise after it had answered, and nothing of the turn was kept. The text is now recorded
    as consecutive turns of at most 20,000 characters (a lone surrogate as U+FFFD)."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage

    from langchain_treehop import TreehopContextMiddleware
    from treehop import AsyncTreehop

    from lc_helpers import ScriptedChatModel

    aclient = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    answer = " ".join(f"word{i}" for i in range(9_000))  # (~80,000 characters)
    model = ScriptedChatModel(messages=iter([AIMessage(answer)]))
    mw = TreehopContextMiddleware(aclient, record_turns=True, conversation_id="assistant")
    agent = create_agent(model, tools=[], middleware=[mw])
    question = "Tell me everything \ud800 please."
    out = await agent.ainvoke(
        {"messages": [HumanMessage(question)]}, config={"configurable": {"thread_id": "t1"}}
    )
    assert out["messages"][-1].content == answer
    turns = await aclient.ls("viking://~/memories/conversations/assistant/t1")
    texts = [(await aclient.read(e.uri)).partition(") ")[2] for e in turns]
    assert texts[0] == "user: Tell me everything \ufffd please."
    said = [t.removeprefix("assistant: ") for t in texts[1:]]
    assert len(said) >= 4 and all(len(t) <= 20_000 for t in said)
    assert " ".join(said).split() == answer.split()
    await aclient.close()


@pytest.mark.parametrize(
    "text", ["x" * 8_001 + " flight", "flight\x00Oslo", "\u200b"], ids=["long", "nul", "invisible"]
)
async def test_a_hostile_user_message_runs_the_agent(text: str) -> None:
    """The latest user message was the context's query whole: past 8,000 characters, with
    a NUL or only invisible characters the agent's run raised at its first model call."""
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, HumanMessage

    from langchain_treehop import TreehopContextMiddleware
    from treehop import AsyncTreehop

    from lc_helpers import ScriptedChatModel

    aclient = AsyncTreehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    await aclient.add_messages([{"content": "My flight to Oslo is on Friday."}])
    model = ScriptedChatModel(messages=iter([AIMessage("ok")]))
    agent = create_agent(model, tools=[], middleware=[TreehopContextMiddleware(aclient)])
    out = await agent.ainvoke({"messages": [HumanMessage(text)]})
    assert out["messages"][-1].content == "ok"
    await aclient.close()
