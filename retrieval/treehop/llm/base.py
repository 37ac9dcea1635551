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
