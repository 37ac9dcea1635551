"""Embedders: the protocol, the offline default (MiniLM int8 ONNX) and an OpenAI-compatible client.

Importing this package never imports onnxruntime or tokenizers: :class:`MiniLMEmbedder` loads
them on its first call, and raises :class:`~treehop.errors.EmbeddingError` naming the ``local``
extra when they are missing.
"""

from .base import BaseEmbedder, Embedder, Vectors, normalize_rows
from .local_minilm import MiniLMEmbedder, default_embedder
from .openai_compatible import OpenAICompatibleEmbedder

__all__ = [
    "BaseEmbedder",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "Vectors",
    "default_embedder",
    "normalize_rows",
]
