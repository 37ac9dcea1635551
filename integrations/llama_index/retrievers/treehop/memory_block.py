"""``TreehopMemoryBlock``: a LlamaIndex long-term memory block on treehop's memory path.

LlamaIndex's ``Memory`` keeps a short-term FIFO of chat messages and, when it overflows, hands
the oldest messages to its *memory blocks* (``aput``); before each LLM call it asks every block
for content to insert (``aget``). This block maps both onto treehop:

- ``aput`` stores the ejected messages through :meth:`treehop.AsyncTreehop.add_messages` — the
  same conversation → session → turn write path (speakers, timestamps) every other integration
  uses; the LlamaIndex ``session_id`` is the treehop session;
- ``aget`` retrieves for the latest user message and returns a token-budgeted block from
  :meth:`treehop.AsyncTreehop.assemble_context` over ``viking://~/memories`` (or the given
  scope).

The block is re-inserted fresh before every LLM call and never becomes chat history, so it does
not drop what it injected before (no dedup across turns here, unlike the LangChain middleware,
whose context does stay in the model's view).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory.memory import BaseMemoryBlock
from pydantic import ConfigDict, Field, PrivateAttr

from treehop import AsyncTreehop, Treehop
from treehop import integration_kit as kit
from treehop.context_assembly import TIERS, check_budget
from treehop.errors import InvalidQueryError, NotFoundError
from treehop.integration_kit import memory_query, memory_turns
from treehop.memory import check_id
from treehop.validation import check_limit

_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_ROLES = {
    MessageRole.USER: "user",
    MessageRole.ASSISTANT: "assistant",
    MessageRole.SYSTEM: "system",
    MessageRole.TOOL: "tool",
    MessageRole.FUNCTION: "tool",
    MessageRole.MODEL: "assistant",
    MessageRole.CHATBOT: "assistant",
    MessageRole.DEVELOPER: "system",
}
"""Every LlamaIndex role as treehop's. Why the last four (helper attacks68): a role missing
here was dropped by ``_aput`` without a word, so a ``FUNCTION`` turn (a tool's result in the
legacy form, which LlamaIndex counts as ``TOOL``), Gemini's ``MODEL`` and Cohere's
``CHATBOT`` (the assistant's words) and OpenAI's ``DEVELOPER`` (its system prompt) were
never remembered; LangChain's ``FunctionMessage`` is a ``tool`` turn the same way."""


def _session(session_id: object) -> str | None:
    """A message's ``additional_kwargs["session_id"]`` as treehop's session id: a safe id as
    it is, any other text digested, an int or a UUID by its text. Why: those kwargs hold
    anything; an int raised a raw ``TypeError`` from the regex and a lone surrogate a
    ``UnicodeEncodeError`` out of ``aput``, with nothing remembered."""
    if session_id is None:
        return None
    if isinstance(session_id, uuid.UUID) or (
        type(session_id) is int and -(2**63) <= session_id < 2**63
    ):
        session_id = str(session_id)
    if not isinstance(session_id, str):
        raise InvalidQueryError(
            "a message's additional_kwargs['session_id'] must be a string, an int or a UUID, "
            f"got {type(session_id).__name__}"
        )
    if _SAFE.match(session_id):
        return session_id
    return "s-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class TreehopMemoryBlock(BaseMemoryBlock[str]):
    """Long-term memory in a treehop tree (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = Field(default="treehop_memory")
    description: str | None = Field(
        default="What is remembered from earlier conversations, retrieved for the latest message."
    )
    max_tokens: int = Field(default=800, ge=1)
    k: int = Field(default=10, ge=1, le=1000)
    target_uri: str = Field(default="viking://~/memories")
    conversation_id: str = Field(default="llamaindex")
    _client: AsyncTreehop = PrivateAttr()

    def __init__(self, client: Treehop | AsyncTreehop, **data: Any) -> None:
        # pydantic's default ``extra="ignore"`` dropped a keyword it did not know
        # (``TreehopMemoryBlock(client, top_k=3)`` retrieved 10, in silence), and its lax
        # mode read ``k=True`` / ``3.0`` / ``"3"`` as 1 / 3 / 3 (helper leftovers63b): both
        # refused as the kit's other components refuse them.
        unknown = [name for name in data if name not in type(self).model_fields]
        if unknown:
            raise kit.unknown_arguments("TreehopMemoryBlock", unknown, _TAKES, synonyms=_SYNONYMS)
        if "k" in data:
            check_limit(data["k"], "k")
        if "max_tokens" in data:
            check_budget(data["max_tokens"], None, TIERS)
        super().__init__(**data)
        if not isinstance(client, (Treehop, AsyncTreehop)):
            raise InvalidQueryError("client must be a treehop.Treehop or treehop.AsyncTreehop")
        check_id(self.conversation_id, "conversation_id")
        self._client = client.aio if isinstance(client, Treehop) else client
        self._client.resolve(self.target_uri)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        text = next(
            (
                (m.content or "").strip()
                for m in reversed(messages or [])
                if m.role == MessageRole.USER and (m.content or "").strip()
            ),
            "",
        )
        query = memory_query(text) if text else None  # (kit.memory_query: check-safe)
        if not query:
            return ""
        try:
            ctx = await self._client.assemble_context(
                query,
                max_tokens=self.max_tokens,
                target_uri=self.target_uri,
                limit=self.k,
            )
        except NotFoundError:  # nothing remembered yet
            return ""
        return ctx.text

    async def _aput(self, messages: list[ChatMessage]) -> None:
        # (a long message as several turns, a lone surrogate as U+FFFD: kit.memory_turns)
        turns = [
            t
            for m in messages
            if m.role in _ROLES
            for t in memory_turns(_ROLES[m.role], m.content or "")
        ]
        if not turns:
            return
        session = next(
            (m.additional_kwargs.get("session_id") for m in messages if m.additional_kwargs),
            None,
        )
        await self._client.add_messages(
            turns, conversation_id=self.conversation_id, session_id=_session(session)
        )


_TAKES = tuple(TreehopMemoryBlock.model_fields)
"""The keywords :class:`TreehopMemoryBlock` takes beside ``client`` (named in its error)."""
_SYNONYMS = {
    "top_k": "k",
    "similarity_top_k": "k",
    "limit": "k",
    "token_limit": "max_tokens",
    "max_token_limit": "max_tokens",
}
"""Other components' names for the block's ``k`` and ``max_tokens`` (LlamaIndex's
retrievers' ``similarity_top_k``, its memory's ``token_limit``)."""


__all__ = ["TreehopMemoryBlock"]
