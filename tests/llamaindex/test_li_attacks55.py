"""Adversarial pass attacks55, LlamaIndex side (bench/README.md, "helper attacks55")."""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.llms import CompletionResponse, CustomLLM, LLMMetadata
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from llama_index.retrievers.treehop.adapters import LlamaIndexEmbedder, LlamaIndexLLM
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import LLMError, TreehopError
from treehop.llm import ChatMessage


@pytest.mark.parametrize(
    "embedding", [[float("nan")] * 4, [0.0] * 4, [[1.0, 2.0], [3.0, 4.0]]], ids=repr
)
def test_a_bad_query_embedding_is_refused_by_an_empty_store_too(embedding: Any) -> None:
    """An empty store answered an empty result to a vector a filled one refuses."""
    store = TreehopVectorStore(embed_model=WordHashEmbedding(), tagger=None)
    with pytest.raises(TreehopError):
        store.query(VectorStoreQuery(query_embedding=embedding, similarity_top_k=1))


# -- a LlamaIndex model's key in its own error ---------------------------------------------------

KEY = "sk-proj-Qz7LlamaIndexKey0123456789"


def _texts(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc), "".join(traceback.format_exception(exc))]


def _echo(key: str) -> RuntimeError:
    return RuntimeError(f"Error code: 401 - Incorrect API key provided: {key}")


class _EchoingLLM(CustomLLM):
    """LlamaIndex keeps ``api_key`` as a plain str field; its 401 quotes it."""

    api_key: str = ""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="echoing")

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise _echo(self.api_key)

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise _echo(self.api_key)


class _EchoingEmbedding(WordHashEmbedding):
    api_key: str = ""

    def _get_query_embedding(self, query: str) -> list[float]:
        raise _echo(self.api_key)


def test_a_llamaindex_llm_key_reaches_no_error() -> None:
    """``LlamaIndexLLM`` quoted the model's exception whole and chained it."""
    llm = LlamaIndexLLM(_EchoingLLM(api_key=KEY))
    with pytest.raises(LLMError) as info:
        llm.complete([ChatMessage(role="user", content="hi")])
    for text in _texts(info.value):
        assert KEY not in text and KEY[8:20] not in text


def test_a_llamaindex_embedding_key_reaches_no_find_error() -> None:
    """The client's guard redacts an embedder's exception, but only keys it knows."""
    client = Treehop(embedder=LlamaIndexEmbedder(_EchoingEmbedding(api_key=KEY)), tagger=None)
    with pytest.raises(TreehopError) as info:
        client.find("alpha")
    for text in _texts(info.value):
        assert KEY not in text and KEY[8:20] not in text


@pytest.mark.parametrize("alpha", [10**400, float("nan"), float("inf")], ids=["big", "nan", "inf"])
def test_a_hybrid_alpha_that_is_no_finite_float_is_refused(alpha: float) -> None:
    """``float(10**400)`` escaped OverflowError from ``query``; NaN was clamped to 0.2."""
    emb = WordHashEmbedding()
    store = TreehopVectorStore(embed_model=emb, tagger=None)
    store.add(
        [TextNode(id_="n1", text="alpha beta", embedding=emb.get_text_embedding("alpha beta"))]
    )
    q = VectorStoreQuery(
        query_str="alpha",
        query_embedding=emb.get_text_embedding("alpha"),
        similarity_top_k=1,
        mode=VectorStoreQueryMode.HYBRID,
        alpha=alpha,
    )
    with pytest.raises(TreehopError, match="alpha"):
        store.query(q)


@pytest.mark.parametrize("kwarg", ["mmr_prefetch_k", "mmr_prefetch_factor"])
def test_an_mmr_prefetch_past_float_range_is_refused(kwarg: str) -> None:
    """``_positive`` compared ``10**400 < math.inf`` (true: exact) and then ``float()`` of
    it raised OverflowError."""
    emb = WordHashEmbedding()
    store = TreehopVectorStore(embed_model=emb, tagger=None)
    store.add([TextNode(id_="n1", text="alpha", embedding=emb.get_text_embedding("alpha"))])
    q = VectorStoreQuery(
        query_embedding=emb.get_text_embedding("alpha"),
        similarity_top_k=1,
        mode=VectorStoreQueryMode.MMR,
    )
    with pytest.raises(TreehopError, match=kwarg):
        store.query(q, **{kwarg: 10**400})


def test_a_start_char_idx_past_float_range_is_refused_before_any_write() -> None:
    emb = WordHashEmbedding()
    store = TreehopVectorStore(embed_model=emb, tagger=None)
    vec = emb.get_text_embedding("alpha")
    nodes = [
        TextNode(id_="ok", text="alpha", embedding=vec),
        TextNode(id_="big", text="alpha", embedding=vec, start_char_idx=10**400),
    ]
    with pytest.raises(TreehopError, match="start_char_idx"):
        store.add(nodes)
    assert store.get_nodes(node_ids=["ok", "big"]) == []
