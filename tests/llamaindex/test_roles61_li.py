"""Every LlamaIndex ``MessageRole`` is a turn of treehop's (stop 61, the lead).

``add_messages`` takes LlamaIndex's ``ChatMessage`` objects. ``MODEL`` (Gemini's) and
``CHATBOT`` (Cohere's) were refused as unknown roles, and so were ``DEVELOPER`` and
``FUNCTION`` although the strings ``"developer"`` / ``"function"`` were accepted: the role
is a ``str`` enum, which a dict looks up by its member name's hash."""

from __future__ import annotations

import pytest
from llama_index.core.llms import ChatMessage, MessageRole

from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder

EXPECTED = {
    MessageRole.SYSTEM: "system",
    MessageRole.DEVELOPER: "system",
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.MODEL: "assistant",
    MessageRole.CHATBOT: "assistant",
    MessageRole.FUNCTION: "tool",
    MessageRole.TOOL: "tool",
}


def test_every_llamaindex_role_is_stored_as_treehops() -> None:
    assert set(EXPECTED) == set(MessageRole)  # (a role LlamaIndex adds fails here first)
    th = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    roles = list(MessageRole)
    th.add_messages(
        [ChatMessage(role=r, content=f"turn {i}") for i, r in enumerate(roles)],
        conversation_id="c",
        session_id="s1",
    )
    said = [
        th.read(e.uri).partition(") ")[2] for e in th.ls("viking://~/memories/conversations/c/s1")
    ]
    assert said == [f"{EXPECTED[r]}: turn {i}" for i, r in enumerate(roles)]
    th.close()


def test_an_unknown_role_is_still_refused_whole_and_named() -> None:
    th = Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None)
    with pytest.raises(InvalidQueryError, match=r"messages\[1\]: role 'Model' is not one of"):
        th.add_messages(
            [{"role": "model", "content": "fine"}, {"role": "Model", "content": "case matters"}],
            conversation_id="c",
        )
    assert len(th.store) == 0
    th.close()
