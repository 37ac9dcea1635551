"""Fixtures for the LlamaIndex integration tests (helpers live in ``li_helpers``).

``Settings.llm`` and ``Settings.embed_model`` are replaced by mocks for every test, because
LlamaIndex's defaults call OpenAI and nothing here may reach the network.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from li_helpers import FILTER_DOCS, SAMPLE_TREE, WordHashEmbedding, load_sample_tree
from llama_index.core import Settings
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import Document

from llama_index.retrievers.treehop import LlamaIndexEmbedder, add_documents
from treehop import AsyncTreehop, Treehop


@pytest.fixture(autouse=True)
def offline_settings() -> Iterator[None]:
    """Mock LlamaIndex's global models (its defaults would call OpenAI)."""
    old_llm, old_embed = Settings._llm, Settings._embed_model
    Settings.llm = MockLLM()
    Settings.embed_model = MockEmbedding(embed_dim=8)
    yield
    Settings._llm, Settings._embed_model = old_llm, old_embed


@pytest.fixture
def word_embedding() -> WordHashEmbedding:
    return WordHashEmbedding()


@pytest.fixture
def client(word_embedding: WordHashEmbedding) -> Iterator[Treehop]:
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as c:
        load_sample_tree(c)
        yield c


@pytest.fixture
def filter_client(word_embedding: WordHashEmbedding) -> Iterator[Treehop]:
    docs = [
        Document(
            text=d["text"], metadata={"uri": f"viking://resources/k8s/{d['name']}", **d["meta"]}
        )
        for d in FILTER_DOCS
    ]
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as c:
        add_documents(c, docs)
        yield c


@pytest.fixture
async def aclient(word_embedding: WordHashEmbedding) -> AsyncTreehop:
    c = AsyncTreehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None)
    res = SAMPLE_TREE / "resources"
    await c.add_resource(res / "devops", target_uri="viking://resources", tags=["ops"])
    await c.add_resource(res / "security", target_uri="viking://resources")
    return c
