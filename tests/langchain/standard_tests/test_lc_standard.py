"""LangChain's own standard retriever test-suite, run offline against an in-memory tree.

``RetrieversIntegrationTests`` is used as published: no test is overridden or skipped. The
suite builds the retriever from ``retriever_constructor(**retriever_constructor_params)``, so
the params carry a client opened once for the class (over the sample tree, with a
deterministic offline embedder).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_treehop import LangChainEmbedder, TreehopRetriever
from treehop import Treehop

from lc_helpers import WordHashEmbeddings, load_sample_tree


class _SampleTreeClient:
    """Opens one client per test class (the suite calls the constructor many times)."""

    client: Treehop | None = None

    @pytest.fixture(autouse=True, scope="class")
    @classmethod
    def _open_client(cls) -> Iterator[None]:
        # (a class method: pytest 9.1 deprecates class-scoped fixtures on instances)
        client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
        load_sample_tree(client)
        cls.client = client
        yield
        cls.client = None
        client.close()


class TestTreehopRetrieverStandard(_SampleTreeClient, RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[TreehopRetriever]:
        return TreehopRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        assert self.client is not None
        return {"client": self.client, "k": 4}

    @property
    def retriever_query_example(self) -> str:
        return "kubernetes deployment rollout"


class TestTreehopRetrieverStandardScoped(_SampleTreeClient, RetrieversIntegrationTests):
    """The same suite with a scoped, tag-filtered retriever: k must still be honoured."""

    @property
    def retriever_constructor(self) -> type[TreehopRetriever]:
        return TreehopRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        assert self.client is not None
        return {
            "client": self.client,
            "target_uri": ["viking://resources/devops", "viking://resources/security"],
            "tag_filter": ["ops"],
            "content_field": "abstract",
        }

    @property
    def retriever_query_example(self) -> str:
        return "incident response and api keys"
