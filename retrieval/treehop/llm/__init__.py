"""Chat models: the :class:`LLM` protocol, the OpenAI-compatible HTTP client, and configuration."""

from __future__ import annotations

from .base import LLM, BaseLLM, ChatMessage
from .openai_compatible import (
    API_KEY_ENV_VARS,
    LLMConfig,
    ModelRegistry,
    ModelsConfig,
    OpenAICompatibleLLM,
)

__all__ = [
    "API_KEY_ENV_VARS",
    "LLM",
    "BaseLLM",
    "ChatMessage",
    "LLMConfig",
    "ModelRegistry",
    "ModelsConfig",
    "OpenAICompatibleLLM",
]
