"""A LangChain 1.x ``create_agent`` whose long-term memories persist across runs in treehop.

- ``TreehopStore`` is the agent's LangGraph store: the ``remember`` tool writes a memory with
  ``runtime.store.put(("users", <user>, "memories"), ...)``, the ``recall`` tool searches it.
- ``TreehopContextMiddleware`` injects, before each model call, a token-budgeted context block
  retrieved for the latest user message — which includes those memories, because the store
  keeps them in the tree under ``viking://~/memories/store/...``.
- The index is a directory: a second run (a new process, a new client) finds what the first
  one stored.

Run it (offline, with a scripted model standing in for a real one)::

    python examples/langgraph_memory_agent.py /tmp/agent-index

With a real model, pass it to :func:`build_agent` instead (``init_chat_model("...")``).
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from pydantic import Field

from langchain_treehop import TreehopContextMiddleware, TreehopStore
from treehop import Treehop

USER = "ann"
NAMESPACE = ("users", USER, "memories")


@tool
def remember(fact: str, runtime: ToolRuntime) -> str:
    """Save a fact about the user for future conversations."""
    assert runtime.store is not None
    key = uuid.uuid5(uuid.NAMESPACE_URL, fact).hex[:12]
    runtime.store.put(NAMESPACE, key, {"text": fact})
    return f"Saved memory {key}."


@tool
def recall(query: str, runtime: ToolRuntime) -> str:
    """Search the saved facts about the user."""
    assert runtime.store is not None
    hits = runtime.store.search(NAMESPACE, query=query, limit=3)
    return "\n".join(f"- {h.value['text']}" for h in hits) or "No memories."


def build_agent(client: Treehop, model: BaseChatModel) -> Any:
    """The agent: tools over the store, context middleware, the store itself."""
    store = TreehopStore(client, index_fields=["text"])
    middleware = TreehopContextMiddleware(
        client, max_tokens=400, find_kwargs={"target_uri": "viking://~/memories"}
    )
    return create_agent(
        model,
        tools=[remember, recall],
        system_prompt="You are a helpful assistant with long-term memory.",
        middleware=[middleware],
        store=store,
    )


class ScriptedToolModel(GenericFakeChatModel):
    """A stand-in chat model: replays scripted messages (tool calls included), accepts tools,
    and keeps the prompts it was sent so that a test can check what the agent saw."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.prompts.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex}])


def first_run_model() -> ScriptedToolModel:
    return ScriptedToolModel(
        messages=iter(
            [_call("remember", {"fact": "Ann's sister Jo lives in Lisbon."}), AIMessage("Noted!")]
        )
    )


def second_run_model() -> ScriptedToolModel:
    return ScriptedToolModel(
        messages=iter([_call("recall", {"query": "sister"}), AIMessage("Jo lives in Lisbon.")]),
        prompts=[],
    )


def run(
    index: Path, model: BaseChatModel, text: str, thread_id: str, **client_kwargs: Any
) -> dict[str, Any]:
    """One conversation turn in a fresh client over the index at ``index``."""
    with Treehop(index, **client_kwargs) as client:
        agent = build_agent(client, model)
        result: dict[str, Any] = agent.invoke(
            {"messages": [{"role": "user", "content": text}]},
            config={"configurable": {"thread_id": thread_id}},
        )
        return result


def main(argv: Sequence[str]) -> int:
    index = Path(argv[0]) if argv else Path(".treehop-agent")
    out = run(index, first_run_model(), "Remember that my sister Jo lives in Lisbon.", "day-1")
    print("run 1:", out["messages"][-1].content)
    out = run(index, second_run_model(), "Where does my sister live?", "day-2")
    print("run 2 tool result:", out["messages"][-2].content)
    print("run 2 answer:", out["messages"][-1].content)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
