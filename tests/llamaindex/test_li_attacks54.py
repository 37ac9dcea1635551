"""Helper attacks54: the LlamaIndex memory block and messages of only invisible characters
(``add_messages`` now refuses them as it refuses blank ones)."""

from __future__ import annotations

import pytest
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


@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), -0.5, 1.5])
def test_a_hybrid_alpha_outside_0_1_is_refused(alpha: float) -> None:
    """A HYBRID query's ``alpha`` (LlamaIndex's dense share, 0..1) was clamped into
    treehop's ``dense_weight`` range without a check: NaN became 0.2 (``max(0.2, nan)``)
    and 5 became 1, silently. Now a value outside [0, 1] is refused, as ``dense_weight``
    out of its range is; 0..1 is clamped to the floor as before."""
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

    from llama_index.vector_stores.treehop import TreehopVectorStore
    from treehop.errors import InvalidQueryError

    emb = WordHashEmbedding()
    client = Treehop(None, embedder=LlamaIndexEmbedder(emb), tagger=None)
    try:
        vs = TreehopVectorStore(client=client)
        vs.add(
            [
                TextNode(text=t, id_=f"n{i}", embedding=emb.get_text_embedding(t))
                for i, t in enumerate(["alpha beta", "gamma delta"])
            ]
        )
        q = emb.get_text_embedding("alpha")

        def ask(a: float) -> object:
            return vs.query(
                VectorStoreQuery(
                    query_embedding=q,
                    query_str="alpha",
                    similarity_top_k=1,
                    mode=VectorStoreQueryMode.HYBRID,
                    alpha=a,
                )
            )

        with pytest.raises(InvalidQueryError):
            ask(alpha)
        assert ask(0.0) and ask(1.0)
    finally:
        client.close()
