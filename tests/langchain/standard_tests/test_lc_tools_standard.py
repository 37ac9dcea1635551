"""LangChain's standard tool test-suites (``ToolsUnitTests`` and ``ToolsIntegrationTests``),
used as published, on every tool ``create_treehop_tools`` builds, over an in-memory sample tree
with a deterministic offline embedder."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_treehop import LangChainEmbedder, create_treehop_tools
from treehop import Treehop

from lc_helpers import WordHashEmbeddings, load_sample_tree

_CLIENT: dict[str, Treehop] = {}


@pytest.fixture(scope="module", autouse=True)
def _sample_client() -> Iterator[None]:
    client = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    load_sample_tree(client)
    _CLIENT["c"] = client
    yield
    _CLIENT.clear()
    client.close()


def _tool(kind: str) -> BaseTool:
    tools = create_treehop_tools(_CLIENT["c"], k=3, include=[kind])
    assert len(tools) == 1
    return tools[0]


class _Find:
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("find")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "kubernetes deployment rollout"}


class _Search:
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("search")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "how do I rotate api keys"}


class _Ls:
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("ls")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"uri": "viking://resources"}


class _Read:
    @property
    def tool_constructor(self) -> BaseTool:
        return _tool("read")

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"uri": "viking://resources/devops"}


class TestFindToolUnit(_Find, ToolsUnitTests):
    pass


class TestSearchToolUnit(_Search, ToolsUnitTests):
    pass


class TestLsToolUnit(_Ls, ToolsUnitTests):
    pass


class TestReadToolUnit(_Read, ToolsUnitTests):
    pass


class TestFindToolIntegration(_Find, ToolsIntegrationTests):
    pass


class TestSearchToolIntegration(_Search, ToolsIntegrationTests):
    pass


class TestLsToolIntegration(_Ls, ToolsIntegrationTests):
    pass


class TestReadToolIntegration(_Read, ToolsIntegrationTests):
    pass
