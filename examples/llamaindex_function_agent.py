"""A LlamaIndex ``FunctionAgent`` over a treehop tree, with long-term memory in the same tree.

- ``treehop_find``: the :class:`TreehopRetriever` as a ``RetrieverTool`` (raw hits, each with
  its ``viking://`` URI);
- ``treehop_answer``: a :class:`TreehopQueryEngine` as a ``QueryEngineTool`` (an answer
  synthesised from the hits);
- memory: LlamaIndex's ``Memory`` with a :class:`TreehopMemoryBlock`: messages that leave the
  short-term buffer are stored as conversation turns in ``viking://~/memories``, and each LLM
  call gets a token-budgeted block of what is remembered about the latest message.

Run it (offline: LlamaIndex's ``MockFunctionCallingLLM`` scripted to call both tools, and
``MockLLM`` inside the query engine)::

    python examples/llamaindex_function_agent.py

With real models, pass them to :func:`build_agent` instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.llms import LLM, MockFunctionCallingLLM, MockLLM
from llama_index.core.memory import Memory
from llama_index.core.tools import BaseTool, QueryEngineTool, RetrieverTool

from llama_index.retrievers.treehop import TreehopQueryEngine, TreehopRetriever
from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock
from treehop import Treehop

SAMPLE_TREE = Path(__file__).resolve().parents[1] / "retrieval" / "treehop" / "sample_tree"


def load_resources(client: Treehop) -> None:
    for d in sorted((SAMPLE_TREE / "resources").iterdir()):
        client.add_resource(d, target_uri=f"viking://resources/{d.name}")


def build_agent(client: Treehop, llm: LLM, answer_llm: LLM) -> FunctionAgent:
    retriever = TreehopRetriever(client, similarity_top_k=3, target_uri="viking://resources")
    engine = TreehopQueryEngine.from_args(retriever, llm=answer_llm)
    tools: list[BaseTool | Callable[..., Any]] = [
        RetrieverTool.from_defaults(
            retriever,
            name="treehop_find",
            description="Search the documentation tree; returns passages with their URIs.",
        ),
        QueryEngineTool.from_defaults(
            engine,
            name="treehop_answer",
            description="Answer a question from the documentation tree.",
        ),
    ]
    return FunctionAgent(
        tools=tools, llm=llm, system_prompt="Answer from the tree; cite the viking:// URIs."
    )


def build_memory(client: Treehop, session_id: str) -> Memory:
    return Memory.from_defaults(
        session_id=session_id,
        token_limit=2000,
        memory_blocks=[TreehopMemoryBlock(client, max_tokens=300)],
    )


def scripted_llm(question: str, prompts: list[list[ChatMessage]]) -> MockFunctionCallingLLM:
    """Calls treehop_find, then treehop_answer, then answers with what the tools returned."""

    def script(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        prompts.append(list(messages))
        results = [m for m in messages if m.role == MessageRole.TOOL]
        if len(results) == 0:
            name = "treehop_find"
        elif len(results) == 1:
            name = "treehop_answer"
        else:
            return ChatMessage(role="assistant", content="ANSWER:\n" + (results[-1].content or ""))
        call = ToolCallBlock(
            tool_call_id=f"call-{len(results)}", tool_name=name, tool_kwargs={"input": question}
        )
        return ChatMessage(role="assistant", blocks=[call])

    return MockFunctionCallingLLM(response_generator=script)


async def run(client: Treehop, question: str, session_id: str = "demo") -> tuple[str, list[Any]]:
    prompts: list[list[ChatMessage]] = []
    agent = build_agent(client, scripted_llm(question, prompts), MockLLM())
    result = await agent.run(question, memory=build_memory(client, session_id))
    return str(result), prompts


def main() -> int:
    with Treehop(None) as client:
        load_resources(client)
        client.remember("The user is on the platform team and deploys with Kubernetes.")
        answer, _ = asyncio.run(run(client, "How do we roll out a deployment?"))
        print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
