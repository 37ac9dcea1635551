"""TreehopMemoryBlock inside LlamaIndex's Memory, and the FunctionAgent example (retriever and
query engine as tools) run offline with LlamaIndex's own mock LLMs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import Memory

from llama_index.retrievers.treehop import LlamaIndexEmbedder
from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock
from treehop import Treehop
from treehop.errors import InvalidQueryError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llamaindex_function_agent.py"
pytestmark = [
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211"),
]


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("llamaindex_function_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture
def client() -> Treehop:
    return Treehop(None, embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)


async def test_function_agent_example_uses_both_tools_and_the_memory(client: Treehop) -> None:
    ex = _example()
    ex.load_resources(client)
    client.remember("The user deploys kubernetes services with rollout plans.", name="team")
    question = "How do we roll out a kubernetes deployment?"
    answer, prompts = await ex.run(client, question)
    assert len(prompts) == 3
    # the retriever tool answered first, with hits headed by their URIs
    find_out = next(m for m in prompts[1] if m.role == MessageRole.TOOL).content or ""
    assert "viking://resources/devops" in find_out
    # then the query engine tool: MockLLM echoes the synthesis prompt, so the answer shows the
    # tree's context went into it
    assert answer.startswith("ANSWER:")
    assert "Kubernetes deployments" in answer and f"Query: {question}" in answer
    # the memory block put what is remembered into the first LLM call
    first = "\n".join(m.content or "" for m in prompts[0])
    assert "The user deploys kubernetes services with rollout plans." in first
    assert "[viking://~/memories/notes] (memory" in first and "- team: " in first


async def test_messages_leaving_short_term_memory_go_to_the_tree(client: Treehop) -> None:
    block = TreehopMemoryBlock(client, conversation_id="li")
    memory = Memory.from_defaults(
        session_id="chat-1",
        token_limit=60,
        chat_history_token_ratio=0.5,
        token_flush_size=20,
        memory_blocks=[block],
    )
    talk = [
        ChatMessage(role="user", content="My favourite hiking trail is the Levada do Rei."),
        ChatMessage(role="assistant", content="That trail on Madeira is beautiful."),
        ChatMessage(role="user", content="I also like sea kayaking around Lagos in summer."),
        ChatMessage(role="assistant", content="Lagos has great sea caves for kayaking."),
    ]
    await memory.aput_messages(talk)
    turns = client.ls("viking://~/memories/conversations/li/chat-1")
    texts = [client.read(e.uri) for e in turns]
    # each turn text is headed by its day, "(1 December 2026) user: ..."
    assert texts[0].partition(") ")[2] == "user: My favourite hiking trail is the Levada do Rei."
    assert all(t.partition(") ")[2].startswith(("user: ", "assistant: ")) for t in texts)
    # the remembered turns come back for a related question
    got = await block.aget([ChatMessage(role="user", content="which hiking trail do I like")])
    assert "Levada do Rei" in got
    # nothing to retrieve for: no user message
    assert await block.aget([ChatMessage(role="assistant", content="hi")]) == ""


async def test_empty_tree_and_bad_arguments(client: Treehop) -> None:
    block = TreehopMemoryBlock(client)
    assert await block.aget([ChatMessage(role="user", content="anything")]) == ""
    with pytest.raises(InvalidQueryError):
        TreehopMemoryBlock(object())  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError):
        TreehopMemoryBlock(client, conversation_id="../x")
