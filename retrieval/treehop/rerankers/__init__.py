"""Rerankers: the protocol, the fallback, and the providers behind it.

Importing this package is cheap: the providers load onnxruntime, tokenizers, sentence-transformers
or the Volcengine signer only when one is constructed.
"""

from __future__ import annotations

from .base import BaseReranker, Reranker, RerankOutcome, safe_rerank, validate_scores
from .cross_encoder import CrossEncoderReranker
from .http_rerank import HTTPReranker
from .llm_rerank import LLMReranker
from .vikingdb_rerank import VikingDBReranker

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
