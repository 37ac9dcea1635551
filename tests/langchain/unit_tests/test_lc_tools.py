"""create_treehop_tools inside LangGraph: ToolNode, a hand-built graph and create_agent."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langchain_treehop import create_treehop_tools
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import ScriptedChatModel

DEPLOYMENTS = "viking://resources/devops/kubernetes/deployments.md"


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def by_name(tools: list[BaseTool]) -> dict[str, BaseTool]:
    return {t.name: t for t in tools}


def tool_graph(tools: list[BaseTool]) -> Any:
    """The smallest LangGraph graph around a ToolNode (a ToolNode runs only inside a graph)."""
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    return graph.compile()


def run_node(tools: list[BaseTool], message: AIMessage) -> ToolMessage:
    out = tool_graph(tools).invoke({"messages": [message]})
    msg = out["messages"][-1]
    assert isinstance(msg, ToolMessage)
    return msg


def test_tool_names_schemas_and_options(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, include=["find", "ls", "read"])
    assert [t.name for t in tools] == ["treehop_find", "treehop_ls", "treehop_read"]
    t = by_name(tools)
    assert set(t["treehop_find"].args) == {"query"}
    assert set(t["treehop_ls"].args) == {"uri"}
    assert set(t["treehop_read"].args) == {"uri"}
    assert all(x.response_format == "content_and_artifact" for x in tools)
    assert "viking://" in t["treehop_ls"].description
    named = create_treehop_tools(lc_client, include=["ls"], name_prefix="kb_")
    assert [x.name for x in named] == ["kb_ls"]
    bad: list[tuple[dict[str, Any], str]] = [
        ({"include": ["grep"]}, "include must name some of"),
        ({"include": []}, "include must name some of"),
        ({"name_prefix": "has space"}, "name_prefix"),
        ({"read_max_chars": 0}, "read_max_chars must be a positive integer"),
        ({"mode": "search"}, "'mode' is set by create_treehop_tools"),
    ]
    for kwargs, message in bad:
        with pytest.raises(InvalidQueryError, match=message):
            create_treehop_tools(lc_client, **kwargs)
    with pytest.raises(InvalidQueryError, match="must be a treehop"):
        create_treehop_tools("not a client")  # type: ignore[arg-type]


def test_find_tool_in_a_tool_node_returns_text_and_documents(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, k=3, include=["find"], include_directories=False)
    msg = run_node(tools, call("treehop_find", {"query": "kubernetes rollout readiness probes"}))
    assert msg.status == "success"
    docs = msg.artifact
    assert len(docs) == 3 and all(isinstance(d, Document) for d in docs)
    assert DEPLOYMENTS in [d.id for d in docs]
    # The model sees each hit headed by its URI, in rank order, then its text.
    blocks = str(msg.content).split("\n\n[")
    assert str(msg.content).startswith(f"[{docs[0].id}]\n{docs[0].page_content[:40]}")
    assert len(blocks) >= 3
    for d in docs:
        assert f"[{d.id}]" in str(msg.content)


def test_retriever_kwargs_scope_the_tools(lc_client: Treehop) -> None:
    tools = create_treehop_tools(
        lc_client, k=5, include=["find"], target_uri="viking://resources/security"
    )
    msg = run_node(tools, call("treehop_find", {"query": "kubernetes rollout"}))
    assert msg.artifact and all(
        d.id.startswith("viking://resources/security") for d in msg.artifact
    )


def test_ls_and_read_walk_the_tree(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, include=["ls", "read"], read_max_chars=60)
    root = run_node(tools, call("treehop_ls", {}))
    assert root.status == "success"
    assert "viking://resources/devops (directory, 3 children)" in str(root.content)
    assert {e["uri"] for e in root.artifact} == {
        f"viking://resources/{n}"
        for n in ["data-engineering", "devops", "docs-templates", "machine-learning", "security"]
    }
    k8s = run_node(tools, call("treehop_ls", {"uri": "viking://resources/devops/kubernetes"}))
    assert f"- {DEPLOYMENTS} (file): " in str(k8s.content)
    page = run_node(tools, call("treehop_read", {"uri": DEPLOYMENTS}))
    full = lc_client.read(DEPLOYMENTS)
    assert page.artifact == {"uri": DEPLOYMENTS, "text": full, "truncated": True}
    assert str(page.content).startswith(full[:60])
    assert f"[truncated: showing 60 of {len(full)} characters" in str(page.content)


def test_tool_errors_reach_the_model_with_a_hint(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, include=["find", "ls", "read"])
    missing = run_node(tools, call("treehop_read", {"uri": "viking://resources/devops/nope.md"}))
    assert missing.status == "error"
    assert "NotFoundError" in str(missing.content)
    assert "list its parent directory with treehop_ls" in str(missing.content)
    leaf = run_node(tools, call("treehop_ls", {"uri": DEPLOYMENTS}))
    assert leaf.status == "error" and "open it with treehop_read" in str(leaf.content)
    bad_uri = run_node(tools, call("treehop_ls", {"uri": "resources/devops"}))
    assert bad_uri.status == "error" and "URIs look like viking://resources" in str(bad_uri.content)
    empty = run_node(tools, call("treehop_find", {"query": "  "}))
    assert empty.status == "error" and "query is empty" in str(empty.content)
    raising = create_treehop_tools(lc_client, include=["ls"], handle_tool_error=False)
    with pytest.raises(Exception, match="NotFoundError"):
        raising[0].invoke({"uri": "viking://resources/nope"})


async def test_tools_run_async_on_the_async_client(alc_client: AsyncTreehop) -> None:
    tools = create_treehop_tools(alc_client, k=2, include=["find", "ls", "read"])
    out = await tool_graph(tools).ainvoke(
        {
            "messages": [
                AIMessage(
                    content="",
                    tool_calls=[
                        {"name": "treehop_find", "args": {"query": "oauth tokens"}, "id": "a"},
                        {"name": "treehop_ls", "args": {"uri": "viking://~/skills"}, "id": "b"},
                        {"name": "treehop_read", "args": {"uri": DEPLOYMENTS}, "id": "c"},
                    ],
                )
            ]
        }
    )
    msgs = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert len(msgs["a"].artifact) == 2
    assert "viking://~/skills/create-rfc" in str(msgs["b"].content)
    assert msgs["c"].artifact["text"] == await alc_client.read(DEPLOYMENTS)


def test_a_hand_built_graph_routes_tool_calls(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, k=2, include=["find", "read"])
    model = ScriptedChatModel(
        messages=iter(
            [
                call("treehop_find", {"query": "kubernetes rollout readiness"}),
                call("treehop_read", {"uri": DEPLOYMENTS}, "c2"),
                AIMessage(content="Use a RollingUpdate with readiness probes."),
            ]
        )
    )

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app = graph.compile()
    final = app.invoke({"messages": [HumanMessage("How do I roll out safely?")]})
    tool_msgs = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tool_msgs] == ["treehop_find", "treehop_read"]
    assert final["messages"][-1].content == "Use a RollingUpdate with readiness probes."
    assert "RollingUpdate" in tool_msgs[1].artifact["text"]
    # The model's second turn saw the find tool's text, URIs included.
    assert any(f"[{d.id}]" in str(m.content) for m in model.seen[1] for d in tool_msgs[0].artifact)


async def test_create_agent_walks_the_tree(lc_client: Treehop) -> None:
    tools = create_treehop_tools(lc_client, k=3)
    model = ScriptedChatModel(
        messages=iter(
            [
                call("treehop_ls", {"uri": "viking://resources"}, "t1"),
                call("treehop_ls", {"uri": "viking://resources/devops/kubernetes"}, "t2"),
                call("treehop_read", {"uri": DEPLOYMENTS}, "t3"),
                AIMessage(content="Roll out with RollingUpdate; gate traffic on readiness."),
            ]
        )
    )
    agent = create_agent(model, tools, system_prompt="Answer from the knowledge tree.")
    final = await agent.ainvoke({"messages": [HumanMessage("How do we deploy to k8s?")]})
    tool_msgs = [m for m in final["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in tool_msgs] == ["t1", "t2", "t3"]
    assert all(m.status == "success" for m in tool_msgs)
    assert DEPLOYMENTS in str(tool_msgs[1].content)
    assert tool_msgs[2].artifact["text"] == lc_client.read(DEPLOYMENTS)
    assert final["messages"][-1].content.startswith("Roll out with RollingUpdate")


def test_ls_shows_a_chunked_file_as_a_file(tmp_path: Any) -> None:
    """A long file is stored as chunks under its file node: the tool calls it a file with N
    chunks, not a directory with N children (the model would try to open it as a folder)."""
    from treehop_test_doubles import BagOfWordsEmbedder

    site = tmp_path / "site"
    site.mkdir()
    para = "Vacuum reclaims storage occupied by dead tuples. " * 8
    (site / "guide.md").write_text("# Guide\n\n" + "\n\n".join([para] * 10))
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder()) as client:
        client.add_resource(site)
        n = len(client.ls("viking://resources/site/guide.md"))
        tools = create_treehop_tools(client, include=["ls"])
        out = run_node(tools, call("treehop_ls", {"uri": "viking://resources/site"}))
    assert n > 1
    assert f"viking://resources/site/guide.md (file, {n} chunks)" in str(out.content)
    assert "directory" not in str(out.content)
    assert out.artifact[0]["kind"] == "file"
