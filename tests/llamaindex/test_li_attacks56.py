"""Adversarial pass attacks56, LlamaIndex side (bench/README.md, "helper attacks56")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_index.core.schema import Document

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.retrievers.treehop.ingest import add_documents
from treehop import Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def client(tmp_path: Path) -> Any:
    c = Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0)
    yield c
    c.close()


@pytest.mark.parametrize("value", [5, 1.5, object(), 10**400], ids=["int", "float", "obj", "big"])
def test_retriever_context_types_that_are_not_types_are_typed(client: Any, value: Any) -> None:
    with pytest.raises(InvalidQueryError, match="context_types"):
        TreehopRetriever(client, context_types=value)


@pytest.mark.parametrize("key", ["uri_key", "path_key", "tags_key", "on_duplicate"])
@pytest.mark.parametrize("value", [[1], {"a": 1}, 5, object()], ids=["list", "dict", "int", "obj"])
def test_add_documents_placement_keys_that_are_not_strings_are_typed(
    client: Any, key: str, value: Any
) -> None:
    """``uri_key=[1]`` raised ``TypeError: unhashable type`` from the metadata lookup."""
    docs = [Document(text="doc text here", metadata={"file_path": "a/b.txt"})]
    with pytest.raises(InvalidQueryError, match=key):
        add_documents(client, docs, **{key: value})
    assert client.find("doc text").total == 0  # (nothing written)
