"""LlamaIndex vector store over a treehop tree.

Importable as ``llama_index.vector_stores.treehop`` (a namespace package next to
``llama_index.core``, like every ``llama-index-vector-stores-*`` package); installed with the
``llamaindex`` extra (``pip install -e ".[llamaindex]"`` from a clone of the repository).
"""

from .base import TreehopEmbedding, TreehopVectorStore

__all__ = ["TreehopEmbedding", "TreehopVectorStore"]
