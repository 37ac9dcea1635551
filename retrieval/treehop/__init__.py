"""treehop: hierarchical, tag-hopping retrieval over trees of knowledge.

The pipeline stages, each in its own module:

- intent analysis -- :mod:`treehop.intent_analysis` (``search()`` only)
- hierarchical heap search -- :mod:`treehop.hierarchical_retriever`
- rerank with fallback -- :mod:`treehop.rerankers`
- tag hops -- :mod:`treehop.tag_hops` (tags written at ingest by :mod:`treehop.tagging`)
"""

from .client import AddResult, AsyncTreehop, Entry, Treehop
from .config import RetrievalConfig, StopRule, TagHopTrigger
from .context_assembly import AssembledContext, ContextSection, assemble_context
from .embedders.base import BaseEmbedder, Embedder
from .errors import (
    ClientClosedError,
    DuplicateFilterKeyError,
    EmbeddingError,
    IndexCorruptError,
    IndexRecoveryError,
    IngestError,
    InputTooLargeError,
    InvalidConfigError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidTagError,
    InvalidURIError,
    LLMError,
    NotFoundError,
    PartialWriteError,
    RecoveryWarning,
    RerankError,
    SessionNotFoundError,
    StoreError,
    TreehopError,
    TreehopWarning,
    UnknownArgumentError,
    UnsupportedUseError,
)
from .filters import MetadataFilter, TagFilter
from .memory import LLMMemoryExtractor, MemoryWriteResult
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
from .reader_processes import ReaderPool
from .rerankers.base import BaseReranker, Reranker
from .stores.base import RecoveryRecord, Scope, ScoredNode, StoreCapabilities, VectorStore
from .stores.embedded import EmbeddedStore

__version__ = "0.1.0"

__all__ = [
    "AddResult",
    "AssembledContext",
    "AsyncTreehop",
    "BaseEmbedder",
    "BaseReranker",
    "ClientClosedError",
    "ContextSection",
    "ContextType",
    "DuplicateFilterKeyError",
    "EmbeddedStore",
    "Embedder",
    "EmbeddingError",
    "Entry",
    "FindResult",
    "FoundBy",
    "IndexCorruptError",
    "IndexRecoveryError",
    "IngestError",
    "InputTooLargeError",
    "InvalidConfigError",
    "InvalidFilterError",
    "InvalidQueryError",
    "InvalidTagError",
    "InvalidURIError",
    "LLMError",
    "LLMMemoryExtractor",
    "MatchedContext",
    "MemoryWriteResult",
    "MetadataFilter",
    "Node",
    "NotFoundError",
    "PartialWriteError",
    "QueryPlan",
    "QueryResult",
    "ReaderPool",
    "RecoveryRecord",
    "RecoveryWarning",
    "RerankError",
    "Reranker",
    "RetrievalConfig",
    "RetrievalMode",
    "Scope",
    "ScoredNode",
    "SessionNotFoundError",
    "StopRule",
    "StoreCapabilities",
    "StoreError",
    "TagFilter",
    "TagHopTrigger",
    "Treehop",
    "TreehopError",
    "TreehopWarning",
    "TypedQuery",
    "UnknownArgumentError",
    "UnsupportedUseError",
    "VectorStore",
    "__version__",
    "assemble_context",
]
