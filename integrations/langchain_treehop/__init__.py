"""LangChain and LangGraph integration for treehop.

- :class:`TreehopRetriever`: treehop's ``find()`` / ``search()`` as a LangChain retriever, over
  a treehop client or a read-only :class:`KnowledgeSource` (an existing VikingDB knowledge base).
- :func:`create_treehop_tools`: find, search, ls and read tools for LangGraph agents.
- :class:`LangChainEmbedder` / :class:`LangChainChatLLM`: LangChain models inside treehop.
- :class:`TreehopEmbeddings`: treehop's offline MiniLM (or any treehop embedder) as a
  LangChain ``Embeddings``.
- :func:`add_documents` / :func:`aadd_documents`: LangChain ``Document``s into the tree.
- :class:`TreehopVectorStore`: a LangChain ``VectorStore`` (ids, upsert, delete, MMR,
  ``as_retriever``) whose searches run the tree search.
- :class:`TreehopStore`: LangGraph's long-term memory ``BaseStore`` on the tree (needs
  ``langgraph``).
- :class:`TreehopContextMiddleware`: token-budgeted treehop context for ``create_agent``
  (needs ``langchain``).

The last two are imported on first use, so that ``langchain-core`` alone is enough for the rest.
"""

from typing import TYPE_CHECKING, Any

from treehop.integration_kit import KnowledgeSource

from .chat_models import LangChainChatLLM
from .documents import (
    PROVENANCE_KEYS,
    aadd_documents,
    add_documents,
    context_to_document,
    page_content_of,
    provenance_metadata,
)
from .embeddings import LangChainEmbedder, TreehopEmbeddings
from .retrievers import (
    EVENT_DESCENT,
    EVENT_GLOBAL_SEARCH,
    EVENT_QUERY_PLAN,
    EVENT_RERANK_FALLBACK,
    EVENT_TAG_HOPS,
    TreehopRetrievalOptions,
    TreehopRetriever,
)
from .tools import TreehopToolException, create_treehop_tools
from .vectorstores import TreehopVectorStore

if TYPE_CHECKING:
    from .middleware import TreehopContextMiddleware
    from .store import InvalidStoreNamespaceError, TreehopStore

__all__ = [
    "EVENT_DESCENT",
    "EVENT_GLOBAL_SEARCH",
    "EVENT_QUERY_PLAN",
    "EVENT_RERANK_FALLBACK",
    "EVENT_TAG_HOPS",
    "PROVENANCE_KEYS",
    "InvalidStoreNamespaceError",
    "KnowledgeSource",
    "LangChainChatLLM",
    "LangChainEmbedder",
    "TreehopContextMiddleware",
    "TreehopEmbeddings",
    "TreehopRetrievalOptions",
    "TreehopRetriever",
    "TreehopStore",
    "TreehopToolException",
    "TreehopVectorStore",
    "aadd_documents",
    "add_documents",
    "context_to_document",
    "create_treehop_tools",
    "page_content_of",
    "provenance_metadata",
]


def __getattr__(name: str) -> Any:
    """Import the store and the middleware on first use (they need langgraph / langchain)."""
    if name == "TreehopStore":
        from .store import TreehopStore

        return TreehopStore
    if name == "InvalidStoreNamespaceError":
        from .store import InvalidStoreNamespaceError

        return InvalidStoreNamespaceError
    if name == "TreehopContextMiddleware":
        from .middleware import TreehopContextMiddleware

        return TreehopContextMiddleware
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
