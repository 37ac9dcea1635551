"""Chat models: the :class:`LLM` protocol, the OpenAI-compatible HTTP client, and configuration.

The OpenAI-compatible client's names (:class:`OpenAICompatibleLLM`, :class:`LLMConfig`,
:class:`ModelsConfig`, ``API_KEY_ENV_VARS``) are imported on their first use: that module
imports httpx (with httpcore, trio and rich, ~1.5-3 s on a loaded machine), which a client
without a remote model never needs (``import treehop``; helper leftovers75).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import LLM, BaseLLM, ChatMessage, ModelRegistry

if TYPE_CHECKING:
    from .openai_compatible import (
        API_KEY_ENV_VARS,
        LLMConfig,
        ModelsConfig,
        OpenAICompatibleLLM,
    )

_REMOTE = frozenset({"API_KEY_ENV_VARS", "LLMConfig", "ModelsConfig", "OpenAICompatibleLLM"})


def __getattr__(name: str) -> Any:
    """The OpenAI-compatible client's names, imported on first use (PEP 562)."""
    if name in _REMOTE:
        from . import openai_compatible

        value = getattr(openai_compatible, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
