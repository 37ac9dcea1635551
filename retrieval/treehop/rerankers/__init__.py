"""Rerankers: the protocol, the fallback, and the providers behind it.

Importing this package is cheap: the providers load onnxruntime, tokenizers, sentence-transformers
or the Volcengine signer only when one is constructed, and their modules (which import httpx,
with httpcore, trio and rich) only on a provider's first use (helper leftovers75).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .base import BaseReranker, Reranker, RerankOutcome, safe_rerank, validate_scores

if TYPE_CHECKING:
    from .cross_encoder import CrossEncoderReranker
    from .http_rerank import HTTPReranker
    from .llm_rerank import LLMReranker
    from .vikingdb_rerank import VikingDBReranker

_PROVIDERS = {
    "CrossEncoderReranker": "cross_encoder",
    "HTTPReranker": "http_rerank",
    "LLMReranker": "llm_rerank",
    "VikingDBReranker": "vikingdb_rerank",
}


def __getattr__(name: str) -> Any:
    """A provider's class, its module imported on first use (PEP 562)."""
    module = _PROVIDERS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "BaseReranker",
    "CrossEncoderReranker",
    "HTTPReranker",
    "LLMReranker",
    "RerankOutcome",
    "Reranker",
    "VikingDBReranker",
    "safe_rerank",
    "validate_scores",
]
