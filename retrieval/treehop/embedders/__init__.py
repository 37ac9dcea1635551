"""Embedders: the protocol, the offline default (MiniLM int8 ONNX) and an OpenAI-compatible client.

Importing this package never imports onnxruntime or tokenizers: :class:`MiniLMEmbedder` loads
them on its first call, and raises :class:`~treehop.errors.EmbeddingError` naming the ``local``
extra when they are missing. :class:`OpenAICompatibleEmbedder` is imported on its first use:
its module imports httpx (with httpcore, trio and rich), which the offline default never
needs (helper leftovers75).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import BaseEmbedder, Embedder, Vectors, normalize_rows
from .local_minilm import MiniLMEmbedder, default_embedder

if TYPE_CHECKING:
    from .openai_compatible import OpenAICompatibleEmbedder


def __getattr__(name: str) -> Any:
    """:class:`OpenAICompatibleEmbedder`, imported on first use (PEP 562)."""
    if name == "OpenAICompatibleEmbedder":
        from .openai_compatible import OpenAICompatibleEmbedder

        globals()[name] = OpenAICompatibleEmbedder
        return OpenAICompatibleEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BaseEmbedder",
    "Embedder",
    "MiniLMEmbedder",
    "OpenAICompatibleEmbedder",
    "Vectors",
    "default_embedder",
    "normalize_rows",
]
