"""treehop: hierarchical, tag-hopping retrieval over trees of knowledge.

The pipeline stages, each in its own module:

- intent analysis -- :mod:`treehop.intent_analysis` (``search()`` only)
- hierarchical heap search -- :mod:`treehop.hierarchical_retriever`
- rerank with fallback -- :mod:`treehop.rerankers`
- tag hops -- :mod:`treehop.tag_hops` (tags written at ingest by :mod:`treehop.tagging`)
"""

from .client import AddResult, AsyncTreehop, Entry, Treehop
from .config import RetrievalConfig, StopRule, TagHopTrigger
from .embedders.base import BaseEmbedder, Embedder
from .errors import (
    EmbeddingError,
    IndexCorruptError,
    IngestError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    LLMError,
    NotFoundError,
    RerankError,
    StoreError,
    TreehopError,
)
from .filters import MetadataFilter, TagFilter
from .models import (
    ContextType,
    FindResult,
    FoundBy,
    MatchedContext,
    Node,
    QueryPlan,
    QueryResult,
    RetrievalMode,
    TypedQuery,
)
from .rerankers.base import BaseReranker, Reranker
from .stores.base import Scope, ScoredNode, StoreCapabilities, VectorStore
from .stores.embedded import EmbeddedStore

__version__ = "0.1.0"

__all__ = [
    "AddResult",
    "AsyncTreehop",
    "BaseEmbedder",
    "BaseReranker",
    "ContextType",
    "EmbeddedStore",
    "Embedder",
    "EmbeddingError",
    "Entry",
    "FindResult",
    "FoundBy",
    "IndexCorruptError",
    "IngestError",
    "InvalidFilterError",
    "InvalidQueryError",
    "InvalidTagError",
    "InvalidURIError",
    "LLMError",
    "MatchedContext",
    "MetadataFilter",
    "Node",
    "NotFoundError",
    "QueryPlan",
    "QueryResult",
    "RerankError",
    "Reranker",
    "RetrievalConfig",
    "RetrievalMode",
    "Scope",
    "ScoredNode",
    "StopRule",
    "StoreCapabilities",
    "StoreError",
    "TagFilter",
    "TagHopTrigger",
    "Treehop",
    "TreehopError",
    "TypedQuery",
    "VectorStore",
    "__version__",
]
