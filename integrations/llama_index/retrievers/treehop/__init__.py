"""LlamaIndex integration of treehop: retriever, query engine, model adapters, ingest, and the
``Memory`` block (exported here as LangChain's middleware is from ``langchain_treehop``: the
first import a user tries).

Importable as ``llama_index.retrievers.treehop`` (a namespace package next to
``llama_index.core``), installed with the ``llamaindex`` extra
(``pip install -e ".[llamaindex]"`` from a clone of the repository).
"""

from treehop.integration_kit import KnowledgeSource

from .adapters import LlamaIndexEmbedder, LlamaIndexLLM, TreehopEmbedding
from .base import DEFAULT_SIMILARITY_TOP_K, TreehopRetriever
from .events import (
    TreehopDescentEvent,
    TreehopGlobalSearchEvent,
    TreehopQueryPlanEvent,
    TreehopRerankFallbackEvent,
    TreehopTagHopEvent,
)
from .filters import TreehopFilterArgs, to_treehop_filters
from .ingest import aadd_documents, add_documents
from .memory_block import TreehopMemoryBlock
from .nodes import EXCLUDED_EMBED_KEYS, EXCLUDED_LLM_KEYS
from .prompts import INTENT_PROMPT_KEY
from .query_engine import TreehopQueryEngine

__all__ = [
    "DEFAULT_SIMILARITY_TOP_K",
    "EXCLUDED_EMBED_KEYS",
    "EXCLUDED_LLM_KEYS",
    "INTENT_PROMPT_KEY",
    "KnowledgeSource",
    "LlamaIndexEmbedder",
    "LlamaIndexLLM",
    "TreehopDescentEvent",
    "TreehopEmbedding",
    "TreehopFilterArgs",
    "TreehopGlobalSearchEvent",
    "TreehopMemoryBlock",
    "TreehopQueryEngine",
    "TreehopQueryPlanEvent",
    "TreehopRerankFallbackEvent",
    "TreehopRetriever",
    "TreehopTagHopEvent",
    "aadd_documents",
    "add_documents",
    "to_treehop_filters",
]
