"""Adversarial pass attacks55, LangChain side (bench/README.md, "helper attacks55")."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, SecretStr

from langchain_treehop import TreehopVectorStore
from langchain_treehop.chat_models import LangChainChatLLM
from langchain_treehop.embeddings import LangChainEmbedder
from langchain_treehop.tools import MAX_LIST_ENTRIES, create_treehop_tools
from treehop import Treehop
from treehop.errors import EmbeddingError, LLMError, TreehopError
from treehop.llm import ChatMessage

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder


@pytest.mark.parametrize("emptied", [False, True], ids=["new", "emptied"])
@pytest.mark.parametrize("query", [5, None, ["alpha"], "\x00", "   "], ids=repr)
def test_a_bad_query_is_refused_by_an_empty_store_too(query: Any, emptied: bool) -> None:
    """An empty store answered ``[]`` to any query (the early return for a scope nothing was
    added under came before the query's checks); a filled one raised a typed error."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    if emptied:
        store.add_texts(["alpha beta"], ids=["x"])
        store.delete(["x"])
    with pytest.raises(TreehopError):
        store.similarity_search(query, k=1)


@pytest.mark.parametrize("vector", [[float("nan")] * 4, [0.0] * 4, [], [[1.0, 2.0], [3.0, 4.0]]])
def test_a_bad_vector_is_refused_by_an_empty_store_too(vector: Any) -> None:
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    with pytest.raises(TreehopError):
        store.similarity_search_by_vector(vector, k=1)


# -- a LangChain model's key in its own error ---------------------------------------------------

KEY = "sk-proj-Qz7LangChainKey0123456789"


def _texts(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc), "".join(traceback.format_exception(exc))]


class _EchoingEmbeddings(Embeddings, BaseModel):
    """A provider whose 401 error quotes the key it was given (as some gateways do)."""

    api_key: SecretStr

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise RuntimeError(
            f"Error code: 401 - Incorrect API key provided: {self.api_key.get_secret_value()}"
        )

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class _EchoingChat(BaseChatModel):
    api_key: SecretStr

    @property
    def _llm_type(self) -> str:
        return "echoing"

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
        raise RuntimeError(
            f"Error code: 401 - Incorrect API key provided: {self.api_key.get_secret_value()}"
        )


def test_a_langchain_embeddings_key_reaches_no_error() -> None:
    """``LangChainEmbedder`` quoted the model's exception whole and chained it: a provider's
    401 echoing the key put it in the EmbeddingError (the client's guard lets a TreehopError
    through as it is)."""
    emb = LangChainEmbedder(_EchoingEmbeddings(api_key=SecretStr(KEY)))
    with pytest.raises(EmbeddingError) as info:
        emb.embed_query("alpha")
    for text in _texts(info.value):
        assert KEY not in text and KEY[8:20] not in text


def test_a_langchain_chat_model_key_reaches_no_error() -> None:
    llm = LangChainChatLLM(_EchoingChat(api_key=SecretStr(KEY)))
    with pytest.raises(LLMError) as info:
        llm.complete([ChatMessage(role="user", content="hi")])
    for text in _texts(info.value):
        assert KEY not in text and KEY[8:20] not in text


def test_the_ls_tool_shows_at_most_max_list_entries(tmp_path: Path) -> None:
    """The MCP ``ls`` is capped at 1,000 entries (attacks53); the LangChain ``ls`` tool put
    every entry of a directory, with its abstract, into the agent's context. The artifact
    keeps them all."""
    src = tmp_path / "src"
    src.mkdir()
    n = MAX_LIST_ENTRIES + 7
    for i in range(n):
        (src / f"f{i:04d}.txt").write_text(f"note {i} alpha")
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as client:
        client.add_resource(src, target_uri="viking://resources/src")
        ls = create_treehop_tools(client, include=["ls"], ls_max_chars=10**7)[0]  # (entries alone)
        msg = ls.invoke(
            {
                "type": "tool_call",
                "id": "1",
                "name": ls.name,
                "args": {"uri": "viking://resources/src"},
            }
        )
    content = str(msg.content)
    assert content.count("\n- viking://") == MAX_LIST_ENTRIES
    assert "f0000.txt" in content and f"f{n - 1:04d}.txt" not in content
    assert "7 more entries" in content
    assert len(msg.artifact) == n
