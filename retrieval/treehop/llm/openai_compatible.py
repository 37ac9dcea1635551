"""A chat-completion client for OpenAI-compatible HTTP APIs, and the model configuration.

One wire format covers OpenAI, Volcengine Ark (``https://ark.cn-beijing.volces.com/api/v3``),
Ollama (``http://localhost:11434/v1``) and vLLM (``http://host:8000/v1``): ``POST
{base_url}/chat/completions`` with ``model``, ``messages``, ``temperature``, ``max_tokens`` and,
for JSON answers, ``response_format={"type": "json_object"}``.

Why a hand-written client rather than the ``openai`` package: the core must stay light
(``httpx`` is already a dependency), and we need the exact retry/timeout behaviour of
:mod:`treehop._http` shared with the other remote providers. Both the sync path
(:class:`httpx.Client`) and the async path (:class:`httpx.AsyncClient`) are real, so that an
async ``search()`` never parks a worker thread on a slow planner call.

The API key is held as a :class:`pydantic.SecretStr` and registered with
:mod:`treehop.redaction`; it is never part of ``repr()``, error messages or logs, even when a
server echoes it in an error page. ``deadline_s`` bounds one whole call (connect, all reads,
retries, backoff), so a server that trickles its answer cannot hold a caller past it. When no
key is given the client reads ``TREEHOP_LLM_API_KEY``, then ``OPENAI_API_KEY``; with neither,
no ``Authorization`` header is sent (local Ollama/vLLM need none).
"""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import suppress
from typing import Any

import httpx
from pydantic import ConfigDict, Field, SecretStr

from .._http import (
    MAX_SECONDS,
    DeadlineExceeded,
    HTTPStatusFailure,
    RetryPolicy,
    arequest,
    body_excerpt,
    check_deadline,
    check_seconds,
    close_client,
    close_with,
    endpoint,
    error_text,
    register_header_secrets,
    release,
    request,
    restore_without_pools,
    state_without_pools,
    sync_client,
)
from ..config_model import ConfigModel
from ..errors import LLMError
from ..redaction import redact, redact_url, register_url_secrets
from ..secrets import resolve_secret
from .base import BaseLLM, ChatMessage, ModelRegistry

API_KEY_ENV_VARS = ("TREEHOP_LLM_API_KEY", "OPENAI_API_KEY")
BASE_URL_ENV_VARS = ("TREEHOP_LLM_BASE_URL", "OPENAI_BASE_URL")
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def resolve_base_url(base_url: str | None) -> str:
    """The explicit URL, else the first non-empty env var of :data:`BASE_URL_ENV_VARS` (the
    CLI's variable, then the one the OpenAI SDKs read), else OpenAI's own endpoint. So one
    environment points every OpenAI-compatible client of a program (treehop's, LangChain's,
    LlamaIndex's) at the same server, such as a local vLLM or Ollama."""
    if base_url is not None:
        return base_url
    for name in BASE_URL_ENV_VARS:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return DEFAULT_BASE_URL


def resolve_api_key(api_key: str | SecretStr | None) -> SecretStr | None:
    """The explicit key, else the first non-empty env var of :data:`API_KEY_ENV_VARS`."""
    return resolve_secret(api_key, API_KEY_ENV_VARS, error=LLMError)


def _close_on_its_loop(client: httpx.AsyncClient, loop: asyncio.AbstractEventLoop) -> None:
    """Close ``client`` on ``loop``, the loop its pooled connections belong to, if that loop
    runs (a sync client's loop thread, the integrations' shared loop); from any thread, never
    waiting. A loop that is closed or stopped cannot close them: they are left as before."""
    if loop.is_closed() or not loop.is_running():
        return
    with suppress(RuntimeError):  # (closed meanwhile)
        asyncio.run_coroutine_threadsafe(client.aclose(), loop)


async def _loop_guard(
    client: httpx.AsyncClient, owner: weakref.ref[OpenAICompatibleLLM]
) -> AsyncGenerator[None, None]:
    """Ties ``client``, an async pool, to the life of the loop that first runs this generator:
    its ``finally`` closes the client on that loop when the loop finalises its async
    generators (``asyncio.run`` does before it closes the loop), or when the generator is
    dropped while its loop still runs (asyncio's finaliser hook schedules it there): the
    embedder's rule (``OpenAICompatibleEmbedder._loop_guard``). The model is held weakly,
    so a model dropped is still freed at once, not left to the cycle collector."""
    try:
        yield
    finally:
        model = owner()
        if model is not None and model._aclient is client:
            model._aclient = model._aclient_loop = model._aclient_guard = None
        release(client)  # (closed here: the model's finaliser no longer holds it, nor its loop)
        await client.aclose()


class OpenAICompatibleLLM(BaseLLM):
    """Chat completions over HTTP with timeouts and bounded retries on 429/5xx.

    ``base_url`` defaults to ``$TREEHOP_LLM_BASE_URL``, then ``$OPENAI_BASE_URL``, then
    OpenAI's endpoint (:func:`resolve_base_url`); the key to ``$TREEHOP_LLM_API_KEY`` then
    ``$OPENAI_API_KEY``.

    Every failure surfaces as :class:`~treehop.errors.LLMError` (HTTP status after retries,
    timeout, transport error, or an answer without text), so callers such as the intent
    analyzer can fall back on one exception type.

    Connections are pooled: call :meth:`close` / :meth:`aclose` (or use ``with`` / ``async
    with``). The async pool belongs to the event loop that opened it; a call from another loop
    opens a new pool. A pool not closed is closed on its loop when that loop finalises its
    async generators (``asyncio.run`` does, before it closes the loop), or when the model is
    dropped or the pool replaced while its loop runs; ``await aclose()`` closes it at once.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | SecretStr | None = None,
        temperature: float = 0.0,
        max_tokens: int | None = 1024,
        timeout_s: float = 30.0,
        deadline_s: float | None = 60.0,
        max_retries: int = 2,
        backoff_s: float = 0.25,
        json_mode_supported: bool = True,
        extra_headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise LLMError("model must be a non-empty string")
        base_url = resolve_base_url(base_url)
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise LLMError(f"base_url must be an http(s) URL, got {redact_url(base_url)!r}")
        if not isinstance(base_url, str):
            raise LLMError("base_url must be a string")
        timeout_s = check_seconds(timeout_s, LLMError, "timeout_s")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise LLMError("max_retries must be an int >= 0")
        backoff_s = check_seconds(backoff_s, LLMError, "backoff_s", zero=True)
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            raise LLMError("max_tokens must be >= 1 or None")
        self.deadline_s = check_deadline(deadline_s, LLMError)
        self.model = model
        self.name = model
        self._base_url = SecretStr(base_url.rstrip("/"))
        register_url_secrets(base_url)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        # json_mode_supported=False lets servers that reject ``response_format`` still be used;
        # the prompts ask for JSON in words as well, and the parsers tolerate prose around it.
        self.json_mode_supported = json_mode_supported
        self.retry = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
        self._api_key = resolve_api_key(api_key)
        self._extra_headers = dict(extra_headers or {})
        register_header_secrets(self._extra_headers)
        self._extra_body = dict(extra_body or {})
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        # An AsyncClient's connection pool belongs to the loop that opened it, so one is kept
        # per running loop (a new ``asyncio.run`` gets a fresh client instead of a dead pool).
        self._aclient: httpx.AsyncClient | None = None
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        self._aclient_guard: AsyncGenerator[None, None] | None = None  # (:func:`_loop_guard`)

    _POOLS = ("_client", "_aclient", "_aclient_loop", "_aclient_guard")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its lock and connection pools (:func:`state_without_pools`): a
        chain or agent shipped to another process, or deep-copied, took the LLM along and
        raised a raw ``TypeError``."""
        return state_without_pools(self, self._POOLS)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_without_pools(
            self, state, self._POOLS, url_key="_base_url", error=LLMError, secret_url=True
        )

    def __repr__(self) -> str:
        key = "set" if self._api_key is not None else "none"
        return (
            f"OpenAICompatibleLLM(model={self.model!r}, base_url={self.base_url!r}, api_key={key})"
        )

    @property
    def base_url(self) -> str:
        """The API root as shown: a password in it masked (``https://user:***@host/v1``,
        :func:`~treehop.redaction.redact_url`).

        Why (helper leftovers63): the reprs masked it, but this attribute, ``vars()`` and
        the pickled state held the URL as given, so a framework logging its components'
        settings, or a traceback's locals, showed the password. The URL as given is kept
        as a ``SecretStr`` (``_base_url``, as the API key is) and used for the requests
        only; a pickle carries it as it carries the key, so a copy in another process
        still authenticates."""
        return redact_url(self._base_url.get_secret_value())

    @property
    def url(self) -> str:
        """The chat completions endpoint as shown (its password masked, see
        :attr:`base_url`)."""
        return endpoint(self.base_url, "/chat/completions")

    def _request_url(self) -> str:
        """The endpoint the requests go to: the URL as given, its credentials included."""
        return endpoint(self._base_url.get_secret_value(), "/chat/completions")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", **self._extra_headers}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    def payload(
        self, messages: Sequence[ChatMessage], *, json_mode: bool = False
    ) -> dict[str, Any]:
        """The request body (public so that tests and debugging can see what is sent)."""
        if not messages:
            raise LLMError("at least one message is required")
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": self.temperature,
            "stream": False,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if json_mode and self.json_mode_supported:
            body["response_format"] = {"type": "json_object"}
        body.update(self._extra_body)
        return body

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = sync_client(self.timeout_s, owner=self)  # (closed when dropped)
            return self._client

    async def _async_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._aclient is not None and self._aclient_loop is loop:
                return self._aclient
        # A new pool for this loop, tied to the loop's life by :func:`_loop_guard` (helper
        # leftovers68a). Why: ``asyncio.run(llm.acomplete(...))`` then ``llm.close()`` left the
        # pool of a closed loop, which nothing can close any more, to the garbage collector
        # (an unclosed socket and transport: stop 67's last four ResourceWarnings). The
        # guard's first step runs to its ``yield`` without suspending, so this coroutine is
        # not interleaved with another of the same loop.
        client = httpx.AsyncClient(timeout=self.timeout_s)
        guard = _loop_guard(client, weakref.ref(self))
        await guard.__anext__()
        with self._lock:
            # (the pool of another loop, replaced: its guard, dropped here, is closed on
            # that loop if it still runs, else it was closed when that loop ended)
            self._aclient, self._aclient_loop, self._aclient_guard = client, loop, guard
        # Also closed on its loop when this model is dropped (helper leftovers67a). Why
        # both: a model dropped in a reference cycle takes its guard into the collector's
        # garbage with it, and the pool's sockets too where nothing else holds them (a
        # connection not reading is not in the loop's selector), so the collector
        # finalised them ("unclosed socket") before the guard's close could run; the
        # finaliser's registry holds the client, keeping it out of that garbage.
        closer = close_with(self, client, _close_on_its_loop, client, loop)
        closer.atexit = False  # (at exit the loop is going: nothing to schedule)
        return client

    def complete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        body = self.payload(messages, json_mode=json_mode)
        try:
            response = request(
                self._sync_client(),
                "POST",
                self._request_url(),
                json=body,
                headers=self._headers(),
                retry=self.retry,
                deadline_s=self.deadline_s,
            )
        except Exception as exc:
            raise _as_llm_error(exc, self.model) from None
        return _extract_text(response, self.model)

    async def acomplete(self, messages: Sequence[ChatMessage], *, json_mode: bool = False) -> str:
        body = self.payload(messages, json_mode=json_mode)
        try:
            response = await arequest(
                await self._async_client(),
                "POST",
                self._request_url(),
                json=body,
                headers=self._headers(),
                retry=self.retry,
                deadline_s=self.deadline_s,
            )
        except Exception as exc:
            raise _as_llm_error(exc, self.model) from None
        return _extract_text(response, self.model)

    def close(self) -> None:
        """Close the sync connection pool (the async one needs :meth:`aclose`)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            close_client(client)  # (its finaliser forgotten too: a pool per reuse was kept)

    async def aclose(self) -> None:
        """Close both pools; safe to call twice. The async pool of another loop is closed
        on that loop (dropping its guard schedules it there) if the loop still runs."""
        with self._lock:
            guard, loop = self._aclient_guard, self._aclient_loop
            self._aclient = self._aclient_loop = self._aclient_guard = None
        if guard is not None and loop is asyncio.get_running_loop():
            await guard.aclose()  # its ``finally`` closes the client
        self.close()

    def __enter__(self) -> OpenAICompatibleLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> OpenAICompatibleLLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _as_llm_error(exc: Exception, model: str) -> LLMError:
    """One typed, redacted error for every way a call can fail."""
    if isinstance(exc, LLMError):
        return LLMError(redact(str(exc)))
    if isinstance(exc, DeadlineExceeded):
        return LLMError(f"chat model {model!r}: deadline passed ({exc.deadline_s:g}s)")
    if isinstance(exc, HTTPStatusFailure):
        status = exc.response.status_code
        return LLMError(f"chat model {model!r}: HTTP {status}: {body_excerpt(exc.response)}")
    if isinstance(exc, httpx.TimeoutException):
        return LLMError(f"chat model {model!r}: timeout ({type(exc).__name__})")
    if isinstance(exc, httpx.HTTPError):
        return LLMError(redact(f"chat model {model!r}: transport error: {error_text(exc)}"))
    return LLMError(redact(f"chat model {model!r}: {error_text(exc)}"))


def _extract_text(response: httpx.Response, model: str) -> str:
    """``choices[0].message.content`` as text, or :class:`LLMError` naming what is missing."""
    try:
        return _extract_text_checked(response, model)
    except LLMError as exc:
        raise LLMError(redact(str(exc))) from None


def _extract_text_checked(response: httpx.Response, model: str) -> str:
    try:
        data = response.json()
    except (ValueError, RecursionError):  # RecursionError: nesting past the limit
        raise LLMError(
            f"chat model {model!r}: answer is not JSON: {body_excerpt(response, 200)!r}"
        ) from None
    if isinstance(data, dict) and "error" in data and "choices" not in data:
        raise LLMError(f"chat model {model!r}: error in answer: {str(data['error'])[:300]}")
    try:
        content = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(f"chat model {model!r}: answer has no choices[0].message.content") from None
    if isinstance(content, list):
        # Some servers return content parts: [{"type": "text", "text": "..."}].
        content = "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    if not isinstance(content, str):
        raise LLMError(f"chat model {model!r}: message content is {type(content).__name__}")
    return content


class LLMConfig(ConfigModel):
    """How to reach one OpenAI-compatible chat model."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    base_url: str | None = None
    """Falls back to ``TREEHOP_LLM_BASE_URL``, ``OPENAI_BASE_URL``, then OpenAI's endpoint."""
    api_key: SecretStr | None = None
    """Falls back to ``TREEHOP_LLM_API_KEY`` then ``OPENAI_API_KEY`` when unset."""
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=1024, ge=1)
    # (below MAX_SECONDS, as the model built from it takes: helper attacks68)
    timeout_s: float = Field(default=30.0, gt=0, lt=MAX_SECONDS)
    deadline_s: float | None = Field(default=60.0, gt=0, lt=MAX_SECONDS)
    max_retries: int = Field(default=2, ge=0, le=10)
    json_mode_supported: bool = True

    def __repr_args__(self) -> Any:
        """The fields as pydantic shows them (``repr``, ``str``), ``base_url`` through
        :func:`~treehop.redaction.redact_url`. Why (helper attacks68): a URL carrying
        credentials (``https://user:password@host/v1``, ``?key=...``) was shown whole by
        ``repr(LLMConfig(...))`` and so by ``ModelsConfig``'s, where the model built from it
        (``OpenAICompatibleLLM``'s repr) and the embedders show ``https://***@host``. The
        value itself is kept (``model_dump`` still writes what was given, to load again)."""
        for name, value in super().__repr_args__():
            yield name, (redact_url(value) if name == "base_url" and value else value)

    def build(self) -> OpenAICompatibleLLM:
        return OpenAICompatibleLLM(
            self.model,
            base_url=self.base_url,
            api_key=self.api_key,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            timeout_s=self.timeout_s,
            deadline_s=self.deadline_s,
            max_retries=self.max_retries,
            json_mode_supported=self.json_mode_supported,
        )


class ModelsConfig(ConfigModel):
    """The default chat model and the optional ``query_planner`` model for intent analysis.

    As in the seed, the planner falls back to the default model when it is not set.
    """

    model_config = ConfigDict(extra="forbid")

    default: LLMConfig | None = None
    query_planner: LLMConfig | None = None

    def build(self) -> ModelRegistry:
        return ModelRegistry(
            default=self.default.build() if self.default else None,
            query_planner=self.query_planner.build() if self.query_planner else None,
        )
