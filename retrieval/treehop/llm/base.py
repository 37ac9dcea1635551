"""The chat-model protocol used by intent analysis and summarisation."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


@runtime_checkable
class LLM(Protocol):
    """A chat completion returning text. ``json_mode`` asks for a JSON object answer."""

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str: ...

    async def acomplete(
        self, messages: Sequence[ChatMessage], *, json_mode: bool = False
    ) -> str: ...


class BaseLLM:
    """Default async: the sync call in a worker thread."""

    name: str = "llm"

    def complete(
        self, messages: Sequence[ChatMessage], *, json_mode: bool = False
    ) -> str:  # pragma: no cover
        raise NotImplementedError

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        return await asyncio.to_thread(self.complete, messages, json_mode=json_mode)


class ModelRegistry:
    """Which chat model does which job.

    ``planner`` (intent analysis) is ``query_planner`` when set, else ``default``;
    ``summarizer`` (session summaries) is always ``default``. Either may be ``None``, in which
    case callers use their no-LLM fallbacks.
    """

    def __init__(self, default: LLM | None = None, query_planner: LLM | None = None) -> None:
        self.default = default
        self.query_planner = query_planner

    @property
    def planner(self) -> LLM | None:
        return self.query_planner if self.query_planner is not None else self.default

    @property
    def summarizer(self) -> LLM | None:
        return self.default

    def __repr__(self) -> str:
        return f"ModelRegistry(default={self.default!r}, query_planner={self.query_planner!r})"

    async def aclose(self) -> None:
        """Close every distinct model that has an ``aclose`` (shared instances once)."""
        seen: set[int] = set()
        for m in (self.default, self.query_planner):
            if m is None or id(m) in seen:
                continue
            seen.add(id(m))
            closer = getattr(m, "aclose", None)
            if closer is not None:
                await closer()

    def close(self) -> None:
        seen: set[int] = set()
        for m in (self.default, self.query_planner):
            if m is None or id(m) in seen:
                continue
            seen.add(id(m))
            closer = getattr(m, "close", None)
            if closer is not None:
                closer()
