"""Adversarial pass on stop 60's merged surface, LlamaIndex (helper attacks68).

Each test failed on main ``99b45f6``:

- ``TreehopMemoryBlock`` dropped, without a word, every message whose role it did not list:
  a ``FUNCTION`` turn (a tool's result, which LlamaIndex counts as ``TOOL``), Gemini's
  ``MODEL`` and Cohere's ``CHATBOT`` (the assistant's words), OpenAI's ``DEVELOPER``;
- a node storing a ``source_path`` that is not a string (a number, a list: the vector
  store's ``add`` keeps a node's metadata as given) showed no ``file_name`` / ``file_path``
  while the retriever's filters read them from it (leftovers60's one rule): ``file_name ==
  x`` selected a node showing no ``file_name``, ``IS_EMPTY`` missed nodes showing none.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.schema import Document
from llama_index.core.vector_stores.types import FilterOperator, MetadataFilter, MetadataFilters

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever, add_documents
from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock
from treehop import Treehop

pytestmark = [
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211"),
]


def _client() -> Treehop:
    return Treehop(None, embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)


async def test_the_memory_block_keeps_every_llamaindex_role() -> None:
    th = _client()
    block = TreehopMemoryBlock(th, conversation_id="li")
    said = {
        MessageRole.USER: ("user", "what is the weather in Lisbon"),
        MessageRole.FUNCTION: ("tool", "weather: sunny and 24 degrees"),
        MessageRole.MODEL: ("assistant", "it is sunny in Lisbon today"),
        MessageRole.CHATBOT: ("assistant", "bring sunglasses to Lisbon"),
        MessageRole.DEVELOPER: ("system", "answer in metric units"),
        MessageRole.TOOL: ("tool", "forecast: windy tomorrow"),
        MessageRole.ASSISTANT: ("assistant", "windy tomorrow then"),
        MessageRole.SYSTEM: ("system", "you are a travel helper"),
    }
    assert set(said) == set(MessageRole)  # (a role LlamaIndex adds is checked here too)
    await block.aput(
        [
            ChatMessage(role=role, content=text, additional_kwargs={"session_id": "s1"})
            for role, (_, text) in said.items()
        ]
    )
    entries = th.ls("viking://~/memories/conversations/li/s1")
    turns = [(th.read(e.uri) or "").partition(") ")[2] for e in entries]
    assert turns == [f"{role}: {text}" for role, text in said.values()]
    th.close()


@pytest.fixture
def odd_paths() -> Any:
    th = _client()
    for md in (
        {"source_path": 5, "name": "five"},
        {"source_path": ["a/b.txt"], "name": "listed"},
        {"source_path": "x/y.txt", "name": "texted"},
    ):
        add_documents(th, [Document(text=f"kubernetes rollback {md['name']}", metadata=md)])
    yield th
    th.close()


def _filter(key: str, op: FilterOperator, value: Any) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, operator=op, value=value)])


@pytest.mark.parametrize(
    ("key", "op", "value"),
    [
        ("file_name", FilterOperator.EQ, "five"),
        ("file_name", FilterOperator.EQ, "listed"),
        ("file_name", FilterOperator.IS_EMPTY, None),
        ("file_path", FilterOperator.IS_EMPTY, None),
        ("file_path", FilterOperator.EQ, 5),
        ("file_name", FilterOperator.NE, "texted"),
    ],
)
def test_a_non_string_source_path_shows_what_the_filter_reads(
    odd_paths: Treehop, key: str, op: FilterOperator, value: Any
) -> None:
    query = "kubernetes rollback"
    shown = {
        str(n.node.metadata.get("name")): n.node.metadata.get(key)
        for n in TreehopRetriever(odd_paths, similarity_top_k=10).retrieve(query)
    }
    assert set(shown) == {"five", "listed", "texted"}
    check = {
        FilterOperator.EQ: lambda v: v == value,
        FilterOperator.NE: lambda v: v != value,
        FilterOperator.IS_EMPTY: lambda v: v is None or v == "" or v == [],
    }[op]
    want = sorted(name for name, v in shown.items() if check(v))
    got = TreehopRetriever(odd_paths, similarity_top_k=10, filters=_filter(key, op, value))
    assert sorted(str(n.node.metadata.get("name")) for n in got.retrieve(query)) == want
