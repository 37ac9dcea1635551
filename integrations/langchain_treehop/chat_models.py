"""``LangChainChatLLM``: any LangChain chat model as treehop's LLM (intent analysis, summaries).

Treehop's :class:`~treehop.llm.base.LLM` protocol is deliberately small: messages in, text out,
and a ``json_mode`` flag when a JSON object is wanted. JSON mode is not one switch across
LangChain providers (``response_format`` for OpenAI, ``format="json"`` for Ollama, nothing for
many others), so this adapter always asks in words (a system instruction) and, when you give
``json_mode_kwargs``, also binds those provider options. Treehop's parsers tolerate prose or
code fences around the JSON, and a planner answer that still does not parse falls back to the
raw query, so a model without a JSON switch works too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from treehop.errors import LLMError
from treehop.llm.base import ChatMessage
from treehop.redaction import redact_exception
from treehop.secrets import register_object_secrets

JSON_INSTRUCTION = (
    "Answer with one JSON object only: no prose before or after it and no code fences."
)
_MODEL_ATTRS = ("model_name", "model", "model_id", "deployment_name")


def default_name(model: BaseChatModel) -> str:
    """``langchain:<llm type>:<model>``, e.g. ``langchain:openai-chat:gpt-4o-mini``."""
    try:
        kind = model._llm_type
    except Exception:  # some test doubles leave it abstract
        kind = type(model).__name__
    name = next(
        (str(v) for a in _MODEL_ATTRS if isinstance(v := getattr(model, a, None), str) and v),
        None,
    )
    return f"langchain:{kind}:{name}" if name else f"langchain:{kind}"


class LangChainChatLLM:
    """Wraps a LangChain ``BaseChatModel`` in treehop's LLM protocol.

    Args:
        model: the chat model (``ChatOpenAI``, ``ChatAnthropic``, ``ChatOllama``, ...).
        json_mode_kwargs: provider options bound when treehop asks for JSON, e.g.
            ``{"response_format": {"type": "json_object"}}`` (OpenAI) or
            ``{"format": "json"}`` (Ollama).
        name: the name recorded in query plans (``QueryPlan.planner``).

    Every failure of the model surfaces as :class:`~treehop.errors.LLMError`, the one type the
    intent analyzer and the session summariser fall back on.
    """

    def __init__(
        self,
        model: BaseChatModel,
        *,
        json_mode_kwargs: Mapping[str, Any] | None = None,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise LLMError(f"model must be a langchain BaseChatModel, got {type(model).__name__}")
        self.model = model
        register_object_secrets(model)  # its errors may echo its key (_failed redacts)
        self.json_mode_kwargs = dict(json_mode_kwargs or {})
        self.name = name or default_name(model)

    def __repr__(self) -> str:
        return f"LangChainChatLLM(name={self.name!r})"

    def to_messages(
        self, messages: Sequence[ChatMessage], *, json_mode: bool = False
    ) -> list[BaseMessage]:
        """Treehop chat messages as LangChain messages (plus the JSON instruction)."""
        out: list[BaseMessage] = []
        if json_mode:
            out.append(SystemMessage(content=JSON_INSTRUCTION))
        for m in messages:
            if not isinstance(m, ChatMessage):
                raise LLMError(f"messages must be treehop ChatMessage, got {type(m).__name__}")
            if m.role == "system":
                out.append(SystemMessage(content=m.content))
            elif m.role == "assistant":
                out.append(AIMessage(content=m.content))
            else:
                out.append(HumanMessage(content=m.content))
        return out

    def _runnable(self, json_mode: bool) -> Runnable[Any, Any]:
        if json_mode and self.json_mode_kwargs:
            return self.model.bind(**self.json_mode_kwargs)
        return self.model

    def _text(self, answer: object) -> str:
        if not isinstance(answer, BaseMessage):
            raise LLMError(f"{self.name} returned {type(answer).__name__}, not a message")
        text = str(answer.text).strip()
        if not text:
            raise LLMError(f"{self.name} returned an empty answer")
        return text

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        lc_messages = self.to_messages(messages, json_mode=json_mode)
        try:
            answer = self._runnable(json_mode).invoke(lc_messages)
        except LLMError:
            raise
        except Exception as exc:
            raise _failed(self.name, exc) from None
        return self._text(answer)

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        lc_messages = self.to_messages(messages, json_mode=json_mode)
        try:
            answer = await self._runnable(json_mode).ainvoke(lc_messages)
        except LLMError:
            raise
        except Exception as exc:
            raise _failed(self.name, exc) from None
        return self._text(answer)


def _failed(name: str, exc: Exception) -> LLMError:
    """The model's failure, redacted and bounded (raised ``from None``: the provider's
    exception may quote its key or a signed URL, and a chained cause prints it whole)."""
    return LLMError(f"{name} failed: {redact_exception(exc)}"[:1000])
