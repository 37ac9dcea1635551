"""LlamaIndex models inside treehop: ``LlamaIndexEmbedder`` and ``LlamaIndexLLM``."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from li_helpers import WordHashEmbedding, word_vector
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import CustomLLM, MockLLM
from pydantic import PrivateAttr

from llama_index.retrievers.treehop import LlamaIndexEmbedder, LlamaIndexLLM
from treehop import Treehop
from treehop.errors import EmbeddingError, LLMError
from treehop.intent_analysis import IntentAnalyzer
from treehop.llm.base import LLM as TreehopLLMProtocol
from treehop.llm.base import ChatMessage as THMessage
from treehop.models import ContextType


class ListEmbedding(WordHashEmbedding):
    """Returns whatever rows it is told to (to test the adapter's checks)."""

    _rows: list[list[float]] = PrivateAttr(default_factory=list)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._rows.pop(0)


def test_embedder_normalises_and_learns_dimension() -> None:
    emb = WordHashEmbedding()
    adapter = LlamaIndexEmbedder(emb)
    assert adapter.name == "llamaindex:WordHashEmbedding:unknown"
    assert adapter.dimension == 0
    texts = ["kubernetes deployment", "api keys", "kubernetes deployment"]
    vecs = adapter.embed(texts)
    assert vecs.shape == (3, 64) and vecs.dtype == np.float32
    assert adapter.dimension == 64
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, rtol=1e-5)
    raw = np.asarray(word_vector("api keys"))
    np.testing.assert_allclose(vecs[1], raw / np.linalg.norm(raw), rtol=1e-5)
    np.testing.assert_allclose(vecs[0], vecs[2])
    q = adapter.embed_query("api keys")
    assert q.shape == (64,)
    np.testing.assert_allclose(q, vecs[1], rtol=1e-5)
    assert adapter.embed([]).shape == (0, 64)


async def test_embedder_async_path_uses_the_models_async_api() -> None:
    emb = WordHashEmbedding()
    adapter = LlamaIndexEmbedder(emb, name="my-model", dimension=64)
    vecs = await adapter.aembed(["a b", "c d", "e"])
    q = await adapter.aembed_query("a b")
    assert emb.async_calls == 4 and emb.sync_calls == 0
    np.testing.assert_allclose(q, vecs[0], rtol=1e-5)
    assert adapter.name == "my-model"


def test_embedder_rejects_bad_answers() -> None:
    emb = ListEmbedding()
    adapter = LlamaIndexEmbedder(emb)
    emb._rows.extend([[1.0, 0.0, 0.0], [0.0, 1.0]])
    with pytest.raises(EmbeddingError, match="malformed"):
        adapter.embed(["x", "y"])
    emb._rows.clear()
    emb._rows.append([1.0, 2.0, 3.0])
    adapter.embed(["x"])
    assert adapter.dimension == 3
    emb._rows.append([1.0, 2.0])
    with pytest.raises(EmbeddingError, match="dimension 2, expected 3"):
        adapter.embed(["x"])
    emb._rows.append([float("nan"), 1.0, 2.0])
    with pytest.raises(EmbeddingError, match="NaN"):
        adapter.embed(["x"])
    with pytest.raises(EmbeddingError, match="BaseEmbedding"):
        LlamaIndexEmbedder("text-embedding-3-small")  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError, match="positive"):
        LlamaIndexEmbedder(emb, dimension=0)


def test_embedder_name_guards_the_index(tmp_path: Any) -> None:
    with Treehop(
        tmp_path / "idx", embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None
    ) as c:
        c.add_resource("some text\nmore", target_uri="viking://resources/t")
    with pytest.raises(EmbeddingError, match="mix vector spaces"):
        Treehop(tmp_path / "idx", embedder=LlamaIndexEmbedder(MockEmbedding(embed_dim=64)))


class JsonLLM(CustomLLM):
    """A chat LLM answering with a fixed text; records what it was sent and through which API."""

    answer: str = '{"queries": [{"query": "rotate api keys", "context_type": "resource"}]}'
    fail: bool = False
    _sent: list[list[ChatMessage]] = PrivateAttr(default_factory=list)
    _apis: list[str] = PrivateAttr(default_factory=list)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="json-llm", is_chat_model=True)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise AssertionError("chat models are called through chat()")

    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        raise AssertionError("not used")

    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self._apis.append("chat")
        return self._reply(messages)

    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        self._apis.append("achat")
        await asyncio.sleep(0)
        return self._reply(messages)

    def _reply(self, messages: Any) -> ChatResponse:
        if self.fail:
            raise ConnectionError("model endpoint unreachable")
        self._sent.append(list(messages))
        return ChatResponse(message=ChatMessage(role="assistant", content=self.answer))


def test_llm_adapter_speaks_the_treehop_protocol() -> None:
    llm = JsonLLM()
    adapter = LlamaIndexLLM(llm)
    assert isinstance(adapter, TreehopLLMProtocol)
    assert adapter.name == "llamaindex:JsonLLM:json-llm"
    out = adapter.complete(
        [THMessage(role="system", content="be brief"), THMessage(role="user", content="hi")],
        json_mode=True,
    )
    assert out == llm.answer
    sent = llm._sent[-1]
    assert [(m.role.value, m.content) for m in sent] == [("system", "be brief"), ("user", "hi")]
    assert llm._apis == ["chat"]


async def test_llm_adapter_plans_for_the_intent_analyzer() -> None:
    llm = JsonLLM()
    analyzer = IntentAnalyzer(LlamaIndexLLM(llm))
    plan = await analyzer.analyze("how do I rotate keys", context_types=[ContextType.RESOURCE])
    assert not plan.fallback
    assert [(q.query, q.context_type) for q in plan.queries] == [
        ("rotate api keys", ContextType.RESOURCE)
    ]
    assert llm._apis == ["achat"]  # the async path used the model's async API
    assert "how do I rotate keys" in (llm._sent[0][0].content or "")
    sync_plan = analyzer.analyze_sync("how do I rotate keys")
    assert sync_plan.queries[0].query == "rotate api keys"
    assert llm._apis == ["achat", "chat"]


async def test_llm_errors_become_llm_error_and_planner_falls_back() -> None:
    llm = JsonLLM(fail=True)
    adapter = LlamaIndexLLM(llm)
    with pytest.raises(LLMError, match="model endpoint unreachable"):
        adapter.complete([THMessage(role="user", content="x")])
    with pytest.raises(LLMError, match="ConnectionError"):
        await adapter.acomplete([THMessage(role="user", content="x")])
    plan = await IntentAnalyzer(adapter).analyze("rotate keys")
    assert plan.fallback and "unreachable" in (plan.fallback_reason or "")
    with pytest.raises(LLMError, match="llama_index LLM"):
        LlamaIndexLLM("gpt-4o")  # type: ignore[arg-type]


def test_llm_adapter_with_mock_llm() -> None:
    # MockLLM echoes its prompt: the completion-style prompt carries both messages in order.
    out = LlamaIndexLLM(MockLLM()).complete(
        [THMessage(role="system", content="S1"), THMessage(role="user", content="U1")]
    )
    assert out.index("S1") < out.index("U1")
