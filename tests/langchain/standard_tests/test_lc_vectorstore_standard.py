"""LangChain's own standard vector-store test-suite, run offline against an in-memory tree.

``VectorStoreIntegrationTests`` is used as published: no test is overridden or skipped, sync
and async both run. The suite's own deterministic embedding model
(``DeterministicFakeEmbedding``) is used, as the suite asks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import VectorStoreIntegrationTests

from langchain_treehop import TreehopVectorStore


class TestTreehopVectorStoreStandard(VectorStoreIntegrationTests):
    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:  # type: ignore[override]
        store = TreehopVectorStore(embedding=self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class TestTreehopVectorStoreStandardScoped(VectorStoreIntegrationTests):
    """The same suite in a sub-collection of an index that already holds other documents:
    searches, deletes and ``get_by_ids`` must stay inside ``base_uri``."""

    @pytest.fixture
    def vectorstore(self) -> Iterator[VectorStore]:  # type: ignore[override]
        other = TreehopVectorStore(
            embedding=self.get_embeddings(), base_uri="viking://resources/other"
        )
        other.add_texts(["foo", "bar", "unrelated"], ids=["1", "2", "x"])
        store = TreehopVectorStore(client=other.client, base_uri="viking://resources/suite")
        try:
            yield store
        finally:
            other.close()
