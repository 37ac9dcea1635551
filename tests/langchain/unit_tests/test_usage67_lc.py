"""Framework users' leftovers, round eight (LangChain): schemas, reprs and deep copies.

LangChain tooling (LangServe, ``with_types``, tracing, ``get_input_schema`` /
``get_output_schema``) calls a runnable's schema methods; ``TreehopRetriever.model_json_schema()``
raised ``PydanticInvalidForJsonSchema`` (its ``llm`` field, a chat model, holds callables).
LangGraph's ``TreehopStore`` printed an object address; ``copy.deepcopy`` of
``TreehopEmbeddings`` failed on the ONNX session's lock.
"""

from __future__ import annotations

import copy
import json
import pickle
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_treehop import (
    LangChainEmbedder,
    TreehopEmbeddings,
    TreehopRetrievalOptions,
    TreehopRetriever,
    TreehopStore,
    TreehopVectorStore,
    create_treehop_tools,
)
from treehop import Treehop
from treehop.errors import UnsupportedUseError

from lc_helpers import WordHashEmbeddings


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(
        path=tmp_path / "ix", embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None
    ) as c:
        yield c


@pytest.mark.parametrize("cls", [TreehopRetriever, TreehopRetrievalOptions])
def test_class_json_schemas_generate(cls: type[TreehopRetrievalOptions]) -> None:
    schema = cls.model_json_schema()
    json.dumps(schema)
    assert {"k", "mode", "metadata_filter"} <= set(schema["properties"])
    if cls is TreehopRetriever:
        assert "chat model" in schema["properties"]["llm"]["description"]
        assert "llm_api_key" in schema["properties"]


def _built(tmp_path: Path) -> str:
    """An index directory on disk (a retriever given ``path`` reads an existing one)."""
    with Treehop(path=tmp_path / "built", tagger=None) as c:
        c.add_resource("Backups run nightly.", name="ops")
    return str(tmp_path / "built")


def test_runnable_schemas_of_a_retriever_with_a_chat_model(client: Treehop, tmp_path: Path) -> None:
    """What LangServe / ``with_types`` read, on a retriever whose ``llm`` is set."""
    retriever = TreehopRetriever(path=_built(tmp_path), llm=FakeListChatModel(responses=["x"]), k=2)
    assert retriever.get_input_schema().model_json_schema()["type"] == "string"
    assert retriever.get_output_schema().model_json_schema()["type"] == "array"
    json.dumps(retriever.get_config_jsonschema())
    json.dumps(type(retriever).model_json_schema())
    for tool in create_treehop_tools(client):
        json.dumps(tool.get_input_schema().model_json_schema())
        json.dumps(tool.tool_call_schema.model_json_schema())


def test_store_repr_says_which_index_and_root(client: Treehop) -> None:
    store = TreehopStore(client, root="viking://~/memories/agent")
    shown = repr(store)
    assert shown.startswith("TreehopStore(root='viking://user/default/memories/agent'")
    assert repr(client) in shown and "object at 0x" not in shown
    # the vector store shows its client the same way
    assert repr(client) in repr(TreehopVectorStore(client=client))


def test_retriever_repr_keeps_the_api_key_out(client: Treehop, tmp_path: Path) -> None:
    key = "sk-usage67-secret-value"
    retriever = TreehopRetriever(path=_built(tmp_path), llm_model="m", llm_api_key=key)
    assert key not in repr(retriever) and key not in str(retriever)
    assert key not in json.dumps(type(retriever).model_json_schema())


def test_embeddings_deep_copy_shares_the_model() -> None:
    """``copy.deepcopy(TreehopEmbeddings())`` raised ``TypeError: cannot pickle
    '_thread.lock' object``; the copy now answers with the same (read-only) embedder."""
    emb = TreehopEmbeddings()
    twin = copy.deepcopy(emb)
    assert twin is not emb and twin.embedder is emb.embedder
    assert twin.embed_query("nightly backups") == emb.embed_query("nightly backups")
    holder = {"embedding": emb, "k": [1]}
    copied = copy.deepcopy(holder)  # (a config that deep-copies its parts)
    assert copied["embedding"].embedder is emb.embedder and copied["k"] is not holder["k"]


def test_stores_holding_a_client_still_refuse_a_deep_copy(client: Treehop) -> None:
    with pytest.raises(UnsupportedUseError):
        copy.deepcopy(TreehopStore(client))


def test_default_embeddings_pickle_as_the_default() -> None:
    """``pickle.dumps(TreehopEmbeddings())`` raised ``TypeError: cannot pickle
    '_thread.lock' object``; it now comes back as ``TreehopEmbeddings()`` (the process-wide
    model), as LlamaIndex's ``TreehopEmbedding`` does, and answers the same vectors."""
    emb = TreehopEmbeddings()
    back = pickle.loads(pickle.dumps(emb))
    assert isinstance(back, TreehopEmbeddings) and back.embedder is emb.embedder
    assert back.embed_query("nightly backups") == emb.embed_query("nightly backups")


def test_other_embedders_pickle_as_themselves() -> None:
    emb = TreehopEmbeddings(LangChainEmbedder(WordHashEmbeddings()))
    back = pickle.loads(pickle.dumps(emb))
    assert back.embedder.name == emb.embedder.name
    assert back.embedder is not emb.embedder
    assert back.embed_query("a b c") == emb.embed_query("a b c")
