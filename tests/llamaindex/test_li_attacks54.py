"""Helper attacks54: the LlamaIndex memory block and messages of only invisible characters
(``add_messages`` now refuses them as it refuses blank ones)."""

from __future__ import annotations

from li_helpers import WordHashEmbedding

from llama_index.retrievers.treehop import LlamaIndexEmbedder
from treehop import Treehop
from treehop.integration_kit import memory_turns


def test_memory_turns_drops_what_has_no_visible_character() -> None:
    """``memory_turns`` kept any piece that was not whitespace: a message ``"\\u200b"`` (or
    a 20,000-character cut of zero-width characters in a long one) went to ``add_messages``,
    which refuses content without a visible character, so the framework's memory raised."""
    assert memory_turns("user", "\u200b\ufeff") == []
    assert memory_turns("user", "\x00\x01") == []
    long = "hello " + "\u200b" * 45_000 + " bye"
    assert [t["content"].strip("\u200b ") for t in memory_turns("user", long)] == ["hello", "bye"]


async def test_an_invisible_message_does_not_lose_its_batch() -> None:
    from llama_index.core.base.llms.types import ChatMessage

    from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock

    client = Treehop(None, embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    try:
        block = TreehopMemoryBlock(client, conversation_id="li")
        await block._aput(
            [
                ChatMessage(role="user", content="short one"),
                ChatMessage(role="assistant", content="\u200b"),
                ChatMessage(role="user", content="another"),
            ]
        )
        sessions = client.ls("viking://~/memories/conversations/li")
        turns = client.ls(sessions[0].uri)
        texts = [client.read(e.uri).partition(") ")[2] for e in turns]
        assert texts == ["user: short one", "user: another"]
    finally:
        client.close()
