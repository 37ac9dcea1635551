"""LangChainEmbedder and LangChainChatLLM: LangChain models inside treehop's core."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from langchain_treehop import LangChainChatLLM, LangChainEmbedder
from langchain_treehop.chat_models import JSON_INSTRUCTION
from treehop import AsyncTreehop, ContextType
from treehop.errors import EmbeddingError, LLMError
from treehop.intent_analysis import IntentAnalyzer
from treehop.llm.base import LLM, ChatMessage

from lc_helpers import ScriptedChatModel, SlowAsyncEmbeddings, WordHashEmbeddings, word_vector

# ---------------------------------------------------------------------------- embeddings


class ListEmbeddings(Embeddings):
    """Returns fixed rows, to feed the adapter malformed answers."""

    def __init__(self, rows: Any) -> None:
        self.rows = rows

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.rows  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.rows[0]  # type: ignore[no-any-return]


class BrokenEmbeddings(Embeddings):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise ConnectionError("embedding endpoint unreachable")

    def embed_query(self, text: str) -> list[float]:
        raise ConnectionError("embedding endpoint unreachable")


def test_embedder_normalises_rows_and_learns_the_dimension() -> None:
    emb = LangChainEmbedder(WordHashEmbeddings())
    assert emb.dimension == 0
    out = emb.embed(["alpha beta", "gamma"])
    assert out.shape == (2, 64) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    raw = np.asarray(word_vector("alpha beta"))
    np.testing.assert_allclose(out[0], raw / np.linalg.norm(raw), rtol=1e-5)
    assert emb.dimension == 64
    q = emb.embed_query("alpha beta")
    assert q.shape == (64,)
    np.testing.assert_allclose(q, out[0], rtol=1e-5)
    assert emb.embed([]).shape == (0, 64)


def test_embedder_rejects_bad_answers() -> None:
    with pytest.raises(EmbeddingError, match="dimension 3, expected 2"):
        e = LangChainEmbedder(ListEmbeddings([[1.0, 0.0, 0.0]]), dimension=2)
        e.embed(["x"])
    with pytest.raises(EmbeddingError, match="NaN or infinite"):
        LangChainEmbedder(ListEmbeddings([[float("nan"), 1.0]])).embed(["x"])
    with pytest.raises(EmbeddingError, match=r"shape \(1, 2\), expected \(2, dim\)"):
        LangChainEmbedder(ListEmbeddings([[1.0, 2.0]])).embed(["x", "y"])
    with pytest.raises(EmbeddingError, match="not numeric"):
        LangChainEmbedder(ListEmbeddings([["a", "b"]])).embed(["x"])
    with pytest.raises(EmbeddingError, match="ConnectionError: embedding endpoint unreachable"):
        LangChainEmbedder(BrokenEmbeddings()).embed_query("x")
    with pytest.raises(EmbeddingError, match="list of texts"):
        LangChainEmbedder(WordHashEmbeddings()).embed("one string")
    with pytest.raises(EmbeddingError, match="must be a langchain_core Embeddings"):
        LangChainEmbedder(object())  # type: ignore[arg-type]


def test_embedder_keeps_one_dimension_across_calls() -> None:
    class Growing(Embeddings):
        n = 2

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.n += 1
            return [[1.0] * self.n for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0] * self.n

    emb = LangChainEmbedder(Growing())
    emb.embed(["a"])
    with pytest.raises(EmbeddingError, match="dimension 4, expected 3"):
        emb.embed(["b"])


async def test_embedder_async_path_is_native() -> None:
    slow = SlowAsyncEmbeddings(delay_s=0.05)
    slow.forbid_sync_query = True
    emb = LangChainEmbedder(slow)
    rows = await emb.aembed(["alpha", "beta"])
    q = await emb.aembed_query("alpha")
    np.testing.assert_allclose(q, rows[0], rtol=1e-5)
    assert slow.sync_calls == 0 and slow.async_calls == 2


def test_embedder_name_pins_the_vector_space(tmp_path: Any) -> None:
    fake = DeterministicFakeEmbedding(size=16)
    assert LangChainEmbedder(fake).name == "langchain:DeterministicFakeEmbedding"
    assert LangChainEmbedder(fake, name="custom").name == "custom"

    async def build_and_reopen() -> None:
        client = AsyncTreehop(tmp_path, embedder=LangChainEmbedder(fake), tagger=None)
        await client.add_resource("alpha beta gamma\n", target_uri="viking://resources/a")
        await client.close()
        with pytest.raises(EmbeddingError, match="would mix vector spaces"):
            AsyncTreehop(tmp_path, embedder=LangChainEmbedder(WordHashEmbeddings()))
        reopened = AsyncTreehop(tmp_path, embedder=LangChainEmbedder(fake), tagger=None)
        assert len(reopened.store) > 0

    asyncio.run(build_and_reopen())


async def test_core_indexes_and_finds_with_a_langchain_embedder() -> None:
    emb = WordHashEmbeddings()
    client = AsyncTreehop(None, embedder=LangChainEmbedder(emb), tagger=None)
    await client.add_resource(
        "Kubernetes rollouts and readiness probes.\n", target_uri="viking://resources/ops/k8s"
    )
    await client.add_resource(
        "Gradient boosting with shallow trees.\n", target_uri="viking://resources/ml/gbm"
    )
    result = await client.find("readiness probes for kubernetes", include_directories=False)
    assert result.contexts()[0].uri == "viking://resources/ops/k8s"
    assert emb.async_calls > 0 and emb.sync_calls == 0  # the async client used the async API


# ---------------------------------------------------------------------------- chat models


def test_chat_llm_satisfies_the_protocol_and_converts_roles() -> None:
    model = ScriptedChatModel(messages=iter(["hello there"]))
    llm = LangChainChatLLM(model)
    assert isinstance(llm, LLM)
    answer = llm.complete(
        [
            ChatMessage(role="system", content="be brief"),
            ChatMessage(role="user", content="hi"),
            ChatMessage(role="assistant", content="hello"),
            ChatMessage(role="user", content="again"),
        ]
    )
    assert answer == "hello there"
    sent = model.seen[0]
    assert [type(m) for m in sent] == [SystemMessage, HumanMessage, AIMessage, HumanMessage]
    assert [m.content for m in sent] == ["be brief", "hi", "hello", "again"]
    assert llm.name == "langchain:generic-fake-chat-model"


def test_json_mode_asks_in_words_and_binds_provider_options() -> None:
    model = ScriptedChatModel(messages=iter(['{"a": 1}', '{"b": 2}', "plain"]))
    llm = LangChainChatLLM(model, json_mode_kwargs={"response_format": {"type": "json_object"}})
    assert llm.complete([ChatMessage(role="user", content="q")], json_mode=True) == '{"a": 1}'
    assert isinstance(model.seen[0][0], SystemMessage)
    assert model.seen[0][0].content == JSON_INSTRUCTION
    assert model.seen_kwargs[0]["response_format"] == {"type": "json_object"}
    plain = LangChainChatLLM(model)
    assert json.loads(plain.complete([ChatMessage(role="user", content="q")], json_mode=True))
    assert "response_format" not in model.seen_kwargs[1]
    assert plain.complete([ChatMessage(role="user", content="q")]) == "plain"
    assert not any(m.content == JSON_INSTRUCTION for m in model.seen[2])


async def test_chat_llm_errors_become_llm_errors() -> None:
    class Exploding(ScriptedChatModel):
        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            raise TimeoutError("provider timed out")

    llm = LangChainChatLLM(Exploding(messages=iter([])))
    with pytest.raises(LLMError, match="TimeoutError: provider timed out"):
        llm.complete([ChatMessage(role="user", content="q")])
    with pytest.raises(LLMError, match="TimeoutError: provider timed out"):
        await llm.acomplete([ChatMessage(role="user", content="q")])
    empty = LangChainChatLLM(ScriptedChatModel(messages=iter([AIMessage(content="")])))
    with pytest.raises(LLMError, match="empty answer"):
        await empty.acomplete([ChatMessage(role="user", content="q")])
    with pytest.raises(LLMError, match="must be a langchain BaseChatModel"):
        LangChainChatLLM(object())  # type: ignore[arg-type]


async def test_chat_llm_plans_queries_for_the_intent_analyzer() -> None:
    plan = {
        "reasoning": "the user wants a how-to and their own preference",
        "queries": [
            {
                "query": "write a SQL migration",
                "context_type": "skill",
                "intent": "how-to",
                "priority": 1,
            },
            {
                "query": "the user's preferred database",
                "context_type": "memory",
                "intent": "preference",
                "priority": 2,
            },
        ],
    }
    model = ScriptedChatModel(messages=iter([json.dumps(plan)]))
    analyzer = IntentAnalyzer(llm=LangChainChatLLM(model), timeout_s=5)
    result = await analyzer.analyze("how do I add a column to our database?")
    assert not result.fallback
    assert {(q.query, q.context_type, q.priority) for q in result.queries} == {
        ("write a SQL migration", ContextType.SKILL, 1),
        ("the user's preferred database", ContextType.MEMORY, 2),
    }
    assert result.planner == "langchain:generic-fake-chat-model"
    assert "how do I add a column" in str(model.seen[0][-1].content)
