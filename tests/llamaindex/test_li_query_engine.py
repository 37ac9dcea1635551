"""TreehopQueryEngine with LlamaIndex's MockLLM: answers, streaming, async, tools, agents.

``MockLLM`` answers with the prompt it was given, so the answer shows exactly which context the
synthesizer put in front of the model: the retrieved texts, the LLM-visible metadata, and none of
the internal provenance keys.
"""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core import Settings
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.postprocessor import SimilarityPostprocessor
from llama_index.core.prompts import PromptTemplate
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.response_synthesizers import ResponseMode
from llama_index.core.tools import QueryEngineTool, RetrieverTool

from llama_index.retrievers.treehop import TreehopQueryEngine, TreehopRetriever
from treehop import Treehop

QUERY = "how do I rotate api keys"
KEYS_URI = "viking://resources/security/auth/api-keys.md"


@pytest.fixture
def retriever(client: Treehop) -> TreehopRetriever:
    return TreehopRetriever(client, similarity_top_k=3)


def _assert_context_of(answer: str, retriever: TreehopRetriever, client: Treehop) -> None:
    nodes = retriever.retrieve(QUERY)
    assert KEYS_URI in [n.node.node_id for n in nodes]
    key_text = client.read(KEYS_URI)
    assert key_text.splitlines()[0] in answer
    assert f"uri: {KEYS_URI}" in answer  # LLM-visible provenance
    for hidden in ("vector_score", "retrieval_score", "found_by", "rerank_fallback"):
        assert hidden not in answer


def test_query_engine_answers_from_retrieved_context(
    retriever: TreehopRetriever, client: Treehop
) -> None:
    engine = TreehopQueryEngine.from_args(retriever, llm=MockLLM())
    assert isinstance(engine, RetrieverQueryEngine)
    response = engine.query(QUERY)
    assert isinstance(response, Response)
    assert QUERY in str(response)
    _assert_context_of(str(response), retriever, client)
    assert [n.node.node_id for n in response.source_nodes] == [
        n.node.node_id for n in retriever.retrieve(QUERY)
    ]


def test_streaming_sync(retriever: TreehopRetriever, client: Treehop) -> None:
    engine = TreehopQueryEngine.from_args(retriever, llm=MockLLM(), streaming=True)
    response = engine.query(QUERY)
    assert isinstance(response, StreamingResponse)
    tokens = list(response.response_gen)
    assert len(tokens) > 10  # it really streamed, token by token
    _assert_context_of("".join(tokens), retriever, client)
    assert KEYS_URI in [n.node.node_id for n in response.source_nodes]


async def test_streaming_async(retriever: TreehopRetriever, client: Treehop) -> None:
    engine = retriever.as_query_engine(llm=MockLLM(), streaming=True)
    assert isinstance(engine, TreehopQueryEngine)
    response = await engine.aquery(QUERY)
    assert isinstance(response, AsyncStreamingResponse)
    tokens = [t async for t in response.async_response_gen()]
    assert len(tokens) > 10
    _assert_context_of("".join(tokens), retriever, client)


@pytest.mark.parametrize(
    "mode", [ResponseMode.COMPACT, ResponseMode.REFINE, ResponseMode.TREE_SUMMARIZE]
)
async def test_response_modes_and_use_async(
    retriever: TreehopRetriever, client: Treehop, mode: ResponseMode
) -> None:
    engine = TreehopQueryEngine.from_args(
        retriever, llm=MockLLM(), response_mode=mode, use_async=True
    )
    response = await engine.aquery(QUERY)
    assert len(response.source_nodes) == 3
    assert str(response)
    sync_response = engine.query(QUERY)
    assert [n.node.node_id for n in sync_response.source_nodes] == [
        n.node.node_id for n in response.source_nodes
    ]


def test_custom_template_and_node_postprocessors(retriever: TreehopRetriever) -> None:
    scores = [n.score or 0.0 for n in retriever.retrieve(QUERY)]
    cutoff = (scores[0] + scores[-1]) / 2
    template = PromptTemplate("CONTEXT<<{context_str}>> Q<<{query_str}>>")
    engine = TreehopQueryEngine.from_args(
        retriever,
        llm=MockLLM(),
        text_qa_template=template,
        node_postprocessors=[SimilarityPostprocessor(similarity_cutoff=cutoff)],
    )
    response = engine.query(QUERY)
    kept = [n.score or 0.0 for n in response.source_nodes]
    assert kept and all(s >= cutoff for s in kept) and len(kept) < len(scores)
    assert str(response).startswith("CONTEXT<<") and f"Q<<{QUERY}>>" in str(response)


def test_from_args_refuses_unknown_arguments(retriever: TreehopRetriever) -> None:
    with pytest.raises(TypeError, match="similarity_top_k"):
        TreehopQueryEngine.from_args(retriever, llm=MockLLM(), similarity_top_k=2)


def test_from_client(client: Treehop) -> None:
    engine = TreehopQueryEngine.from_client(
        client, retriever_kwargs={"similarity_top_k": 1}, llm=MockLLM()
    )
    response = engine.query(QUERY)
    assert len(response.source_nodes) == 1
    assert isinstance(engine.treehop_retriever, TreehopRetriever)


def test_uses_settings_llm_by_default(retriever: TreehopRetriever) -> None:
    # The fixture put a MockLLM in Settings; the engine must pick it up (and not OpenAI).
    Settings.llm = MockLLM(max_tokens=3)
    response = retriever.as_query_engine().query(QUERY)
    assert str(response).strip() == "text text text"


def test_retriever_tool(retriever: TreehopRetriever, client: Treehop) -> None:
    tool = RetrieverTool.from_defaults(retriever, name="treehop", description="the tree")
    out = tool.call(QUERY)
    assert out.tool_name == "treehop"
    assert [n.node.node_id for n in out.raw_output] == [
        n.node.node_id for n in retriever.retrieve(QUERY + "\n")
    ]
    assert client.read(out.raw_output[0].node.node_id).splitlines()[0] in out.content
    assert "vector_score" not in out.content


async def test_retriever_tool_async(retriever: TreehopRetriever) -> None:
    tool = RetrieverTool.from_defaults(retriever)
    out = await tool.acall(QUERY)
    assert len(out.raw_output) == 3
    assert out.content


def test_query_engine_tool(retriever: TreehopRetriever, client: Treehop) -> None:
    engine = TreehopQueryEngine.from_args(retriever, llm=MockLLM())
    tool = QueryEngineTool.from_defaults(engine, name="kb", description="answers from the tree")
    out = tool.call(input=QUERY)
    assert out.tool_name == "kb"
    _assert_context_of(out.content, retriever, client)


# LlamaIndex's workflow engine inspects agent objects with inspect.getmembers, which touches
# pydantic's deprecated attributes; the warnings are theirs, not ours.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
async def test_function_agent_calls_the_tool() -> None:
    """A LlamaIndex agent calls the retriever tool and answers from what it returned."""
    from li_helpers import WordHashEmbedding, load_sample_tree

    from llama_index.retrievers.treehop import LlamaIndexEmbedder

    seen_tool_output: list[str] = []

    def script(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        tool_msgs = [m for m in messages if m.role == MessageRole.TOOL]
        if tool_msgs:
            seen_tool_output.append(tool_msgs[-1].content or "")
            return ChatMessage(role="assistant", content="ANSWER: " + (tool_msgs[-1].content or ""))
        call = ToolCallBlock(
            tool_call_id="call-1", tool_name="treehop_search", tool_kwargs={"input": QUERY}
        )
        return ChatMessage(role="assistant", blocks=[call])

    with Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None) as c:
        load_sample_tree(c)
        retriever = TreehopRetriever(c, similarity_top_k=2)
        tool = RetrieverTool.from_defaults(
            retriever, name="treehop_search", description="Search the knowledge tree"
        )
        agent = FunctionAgent(tools=[tool], llm=MockFunctionCallingLLM(response_generator=script))
        result = await agent.run("How do I rotate our API keys?")
        expected = await retriever.aretrieve(f"input is {QUERY}\n")
    assert seen_tool_output, "the agent never called the tool"
    assert f"uri: {expected[0].node.node_id}" in seen_tool_output[0]
    assert str(result).startswith("ANSWER: ")
    assert expected[0].node.get_content() in str(result)
