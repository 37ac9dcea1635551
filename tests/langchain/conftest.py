"""Fixtures for the LangChain integration tests: sample-tree clients over fake models.

The doubles live in ``lc_helpers`` (a uniquely named module, so test files never import a
``conftest`` that another test directory may shadow).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from treehop import AsyncTreehop, Treehop

from lc_helpers import (
    SAMPLE_TREE,
    WordHashEmbeddings,
    aload_sample_tree,
    load_sample_tree,
)


@pytest.fixture
def embeddings() -> WordHashEmbeddings:
    return WordHashEmbeddings()


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "sample_tree"
    shutil.copytree(SAMPLE_TREE, dst)
    return dst


@pytest.fixture
def lc_client(embeddings: WordHashEmbeddings) -> Iterator[Treehop]:
    """An in-memory sync client over the sample tree (devops and security tagged ``ops``)."""
    from langchain_treehop import LangChainEmbedder

    client = Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    load_sample_tree(client)
    yield client
    client.close()


@pytest.fixture
async def alc_client(embeddings: WordHashEmbeddings) -> AsyncTreehop:
    """A standalone native async client over the same sample tree."""
    from langchain_treehop import LangChainEmbedder

    client = AsyncTreehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    await aload_sample_tree(client)
    return client
