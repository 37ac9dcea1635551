"""Helper attacks52: the LlamaIndex wrappers over a store of one long file, whose topical
finds fill their ``limit`` with passage slots (``few_document_passages``): every filled
slot reaches the caller; and a session id with a trailing newline is a digest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from li_helpers import WordHashEmbedding

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from llama_index.retrievers.treehop.memory_block import _session
from treehop import Treehop

from treehop_test_doubles import ONE_BOOK_QUERY, one_long_book

QUERY = ONE_BOOK_QUERY


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None, chunk_chars=300)
    c.add_resource(one_long_book(tmp_path / "docs"), target_uri="viking://resources/one")
    yield c
    c.close()


@pytest.mark.parametrize("k", [1, 4, 10])
def test_every_filled_slot_of_one_file_reaches_the_caller(client: Treehop, k: int) -> None:
    want = [m.slot_text for m in client.find(QUERY, limit=k).top(k)]
    assert len(want) == k and len(set(want)) == k
    nodes = TreehopRetriever(client, similarity_top_k=k).retrieve(QUERY)
    assert [n.node.get_content() for n in nodes] == want


def test_a_session_id_with_a_trailing_newline_is_a_digest() -> None:
    assert _session("s1") == "s1"
    assert _session("s1\n") != "s1\n"
    assert str(_session("s1\n")).startswith("s-")


async def test_a_long_message_is_stored_whole_with_its_batch(tmp_path: Path) -> None:
    """``aput`` gave ``add_messages`` each message whole: one over 20,000 characters (a
    pasted document) or with a lone surrogate made the whole batch raise, its short
    messages lost too. It is now stored as consecutive turns of at most 20,000 characters."""
    from llama_index.core.base.llms.types import ChatMessage

    from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock

    client = Treehop(None, embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    block = TreehopMemoryBlock(client, conversation_id="li")
    long_text = " ".join(f"word{i}" for i in range(6_000))  # (~53,000 characters)
    await block._aput(
        [
            ChatMessage(role="user", content="short one"),
            ChatMessage(role="user", content=long_text),
            ChatMessage(role="assistant", content="noted \ud800 it"),
        ]
    )
    sessions = client.ls("viking://~/memories/conversations/li")
    turns = client.ls(sessions[0].uri)
    texts = [client.read(e.uri).partition(") ")[2] for e in turns]
    assert texts[0] == "user: short one" and texts[-1] == "assistant: noted \ufffd it"
    middle = [t.removeprefix("user: ") for t in texts[1:-1]]
    assert len(middle) >= 3 and all(len(t) <= 20_000 for t in middle)
    assert " ".join(middle).split() == long_text.split()
    client.close()


@pytest.mark.parametrize(
    "text",
    ["x" * 8_001 + " hiking", "hiking \ud800 trail", "hiking\x00trail", "\u200b"],
    ids=["long", "surrogate", "nul", "invisible"],
)
async def test_a_hostile_user_message_gets_context_or_none(text: str) -> None:
    """The latest user message went to ``assemble_context`` whole: 8,001 characters, a NUL
    or a lone surrogate raised out of ``aget`` (the agent's step with it)."""
    from llama_index.core.base.llms.types import ChatMessage

    from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock

    client = Treehop(None, embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    client.add_messages([{"content": "My favourite hiking trail is the Levada do Rei."}])
    block = TreehopMemoryBlock(client, conversation_id="default")
    got = await block._aget([ChatMessage(role="user", content=text)])
    assert isinstance(got, str)
    client.close()
