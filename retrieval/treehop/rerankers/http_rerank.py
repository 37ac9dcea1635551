"""A reranker for the common ``/rerank`` HTTP shape (Cohere, Jina, Voyage, vLLM, TEI, gateways).

Two wire shapes cover nearly every hosted or self-hosted cross-encoder service:

* ``flavor="cohere"`` (default): ``POST {base_url}/rerank`` with
  ``{"model", "query", "documents": [...], "top_n", "return_documents": false}`` answering
  ``{"results": [{"index", "relevance_score"}, ...]}``. Cohere v1/v2, Jina, vLLM and most
  OpenAI-compatible gateways speak it; Voyage answers the same items under ``"data"``.
* ``flavor="tei"``: Hugging Face text-embeddings-inference, ``POST {base_url}/rerank`` with
  ``{"query", "texts": [...], "truncate": true}`` answering ``[{"index", "score"}, ...]``.

Results come back sorted by relevance, not in input order, so the answer is mapped back through
``index``; a missing, duplicated or out-of-range index, a non-finite score or an answer of the
wrong size is a :class:`~treehop.errors.RerankError`, never a silently misaligned ranking. The
retriever wraps every call in :func:`~treehop.rerankers.base.safe_rerank`, which turns these
errors into a visible ``rerank_fallback`` instead of a failed search.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import ssl
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import httpx
from pydantic import SecretStr

from .._http import (
    DeadlineExceeded,
    HTTPStatusFailure,
    RetryPolicy,
    arequest,
    body_excerpt,
    check_deadline,
    check_seconds,
    close_client,
    deadline_scope,
    endpoint,
    error_text,
    request,
    sync_client,
    truncate,
)
from ..errors import RerankError
from ..redaction import redact, redact_url
from ..secrets import resolve_secret
from ..validation import shown_value
from .base import BaseReranker

Flavor = Literal["cohere", "tei"]

DEFAULT_API_KEY_ENV = "TREEHOP_RERANK_API_KEY"


@functools.cache
def shared_ssl_context() -> ssl.SSLContext:
    """One CA bundle load per process: building a context costs ~0.1 s of CPU, and an async
    client is created per call (see :class:`HTTPReranker`), so the context must be shared."""
    return httpx.create_ssl_context()


def new_client(timeout_s: float, owner: object) -> httpx.Client:
    """A pooled sync client that is closed when ``owner`` is garbage-collected.

    Rerankers are often built, used and dropped without ``close()``; the finaliser closes the
    pooled sockets instead of leaving them to ``ResourceWarning``.
    """
    return sync_client(timeout_s, verify=shared_ssl_context(), owner=owner)


def new_async_client(timeout_s: float) -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=timeout_s, verify=shared_ssl_context())


def check_positive(name: str, value: int | float | None, *, allow_none: bool = False) -> None:
    """Reject a non-positive size or duration at construction, not at the first search."""
    if value is None and allow_none:
        return
    if (
        value is None
        or isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not value > 0
    ):
        raise RerankError(f"{name} must be a positive number, got {shown_value(value)}")


def split_batches(n: int, max_batch: int | None) -> list[tuple[int, int]]:
    """``(start, stop)`` slices: one for all ``n`` documents unless the server caps the batch.

    The minimum ``ceil(n / cap)`` calls, with sizes differing by at most one, so that no call
    is a straggler with a single document (the slowest call bounds the async latency).
    """
    if n == 0:
        return []
    if max_batch is None or n <= max_batch:
        return [(0, n)]
    calls = -(-n // max_batch)
    base, extra = divmod(n, calls)
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(calls):
        stop = start + base + (1 if i < extra else 0)
        out.append((start, stop))
        start = stop
    return out


def describe_http_error(exc: Exception) -> str:
    """A short, secret-free (redacted) description of a transport or status failure."""
    if isinstance(exc, DeadlineExceeded):
        return f"deadline passed ({exc.deadline_s:g}s without a complete answer)"
    if isinstance(exc, HTTPStatusFailure):
        return f"HTTP {exc.response.status_code}: {body_excerpt(exc.response, 200)}"
    if isinstance(exc, httpx.TimeoutException):
        return f"timeout ({type(exc).__name__})"
    return error_text(exc)


def _finite_score(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RerankError(f"{where}: score is not a number: {value!r}")
    try:
        score = float(value)
    except OverflowError:  # an int past float range (JSON allows 10**400)
        raise RerankError(f"{where}: score outside float range") from None
    if not math.isfinite(score):
        raise RerankError(f"{where}: non-finite score {score!r}")
    return score


def parse_indexed_results(items: object, n: int, score_keys: Sequence[str]) -> list[float]:
    """Map ``[{"index": i, <score_key>: s}, ...]`` back to input order, checking coverage."""
    if not isinstance(items, list):
        raise RerankError(f"expected a list of results, got {type(items).__name__}")
    if len(items) != n:
        raise RerankError(f"reranker returned {len(items)} results for {n} documents")
    scores: list[float | None] = [None] * n
    for pos, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise RerankError(f"result {pos} is not an object: {item!r}"[:200])
        index = item.get("index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < n:
            raise RerankError(f"result {pos} has an invalid index {index!r} for {n} documents")
        if scores[index] is not None:
            raise RerankError(f"result {pos} repeats index {index}")
        raw = next((item[k] for k in score_keys if k in item), None)
        if raw is None:
            raise RerankError(f"result {pos} has no score (expected one of {list(score_keys)})")
        scores[index] = _finite_score(raw, f"result {pos}")
    # len(items) == n and no index repeats, so every slot is filled.
    return [s for s in scores if s is not None]


def decode_json(response: httpx.Response) -> Any:
    """The body as JSON, or a :class:`RerankError` naming the malformed answer."""
    try:
        return json.loads(response.content)
    except (ValueError, RecursionError) as exc:  # RecursionError: nesting past the limit
        snippet = body_excerpt(response, 120)
        raise RerankError(
            redact(f"malformed JSON from reranker: {exc}; body starts {snippet!r}")
        ) from None


class HTTPReranker(BaseReranker):
    """A cross-encoder behind the common ``/rerank`` HTTP API.

    Args:
        base_url: Everything before ``/rerank``, e.g. ``https://api.cohere.com/v2``,
            ``https://api.jina.ai/v1`` or ``http://127.0.0.1:8080`` for TEI.
        model: Sent as ``"model"`` (Cohere flavor only; omitted when ``None``, which a
            single-model vLLM server accepts).
        flavor: ``"cohere"`` (default) or ``"tei"``; see the module docstring.
        api_key: Bearer token. ``None`` reads ``api_key_env``; a keyless local server needs none.
        timeout_s: Per-attempt timeout of each socket operation.
        deadline_s: Total time of one :meth:`rerank` / :meth:`arerank` call: every batch
            (``max_batch``), retry and backoff together, so a direct call outside ``find`` is
            bounded too (inside ``find`` the retriever's ``rerank_timeout_s`` also applies).
            Past it the call raises :class:`~treehop.errors.RerankError`. ``None``: no total
            bound.
        retry: Bounded retries with backoff on connection errors, timeouts, 429 and 5xx.
        max_chars / max_query_chars: Cheap length bounds on each document and on the query, so
            one long chunk cannot push a request past the server's size limits.
        max_batch: The server's documents-per-request cap; ``None`` sends one request per call.
        path: The route under ``base_url`` (``/rerank``).
        client / async_client: Reuse an httpx client (connection pooling, proxies, mTLS). Without
            ``async_client`` each async call opens and closes its own client (cheap: the TLS
            context is shared), which is safe across event loops but costs one connection setup
            per heap round; pass a long-lived ``async_client`` to pool connections.
    """

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        flavor: Flavor = "cohere",
        api_key: str | SecretStr | None = None,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        timeout_s: float = 10.0,
        deadline_s: float | None = 20.0,
        retry: RetryPolicy | None = None,
        max_chars: int = 4000,
        max_query_chars: int = 2000,
        max_batch: int | None = None,
        path: str = "/rerank",
        headers: Mapping[str, str] | None = None,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
    ) -> None:
        if flavor not in ("cohere", "tei"):
            raise RerankError(
                f"unknown rerank flavor {shown_value(flavor)}; expected 'cohere' or 'tei'"
            )
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise RerankError(
                f"base_url must start with http:// or https://, got {redact_url(base_url)!r}"
            )
        check_seconds(timeout_s, RerankError, "timeout_s")
        check_positive("max_chars", max_chars)
        check_positive("max_query_chars", max_query_chars)
        check_positive("max_batch", max_batch, allow_none=True)
        # The URL as given (its credentials included) is used for the requests only, kept
        # as a SecretStr as the key is; ``base_url`` / ``url`` show it with a password
        # masked (helper leftovers63: they held it plain, where the repr masked it).
        self._url_sent = SecretStr(endpoint(base_url.rstrip("/"), path))
        self.base_url = redact_url(base_url.rstrip("/"))
        self.url = redact_url(self._url_sent.get_secret_value())
        self.model = model
        self.flavor: Flavor = flavor
        self._api_key = resolve_secret(api_key, api_key_env, error=RerankError)
        self.timeout_s = float(timeout_s)
        self.deadline_s = check_deadline(deadline_s, RerankError)
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_chars = max_chars
        self.max_query_chars = max_query_chars
        self.max_batch = max_batch
        self._extra_headers = dict(headers or {})
        self._client = client
        self._async_client = async_client
        self._own_client: httpx.Client | None = None
        self.name = f"http-rerank:{flavor}:{model or self.base_url}"

    def __repr__(self) -> str:
        key = "'**********'" if self._api_key is not None else "None"
        return (
            f"HTTPReranker(base_url={self.base_url!r}, flavor={self.flavor!r}, "
            f"model={self.model!r}, api_key={key}, max_batch={self.max_batch!r})"
        )

    # -- request / response shapes -------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", **self._extra_headers}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    def _payload(self, query: str, documents: Sequence[str]) -> dict[str, Any]:
        q = truncate(query, self.max_query_chars)
        docs = [truncate(d, self.max_chars) for d in documents]
        if self.flavor == "tei":
            # ``truncate`` lets TEI cut at its own token limit instead of answering 413.
            return {"query": q, "texts": docs, "truncate": True}
        payload: dict[str, Any] = {
            "query": q,
            "documents": docs,
            "top_n": len(docs),  # every score, or the ranking cannot be merged back
            "return_documents": False,
        }
        if self.model is not None:
            payload["model"] = self.model
        return payload

    def _parse(self, body: Any, n: int) -> list[float]:
        if self.flavor == "tei":
            return parse_indexed_results(body, n, ("score",))
        if not isinstance(body, Mapping):
            raise RerankError(f"expected a JSON object with 'results', got {type(body).__name__}")
        items = body.get("results", body.get("data"))
        if items is None:
            raise RerankError(f"answer has no 'results': keys {sorted(body)[:10]}")
        return parse_indexed_results(items, n, ("relevance_score", "score"))

    def _parse_redacted(self, body: Any, n: int) -> list[float]:
        # Parse errors quote the answer, which a hostile server controls: redact them.
        try:
            return self._parse(body, n)
        except RerankError as exc:
            raise RerankError(redact(str(exc))) from None

    @staticmethod
    def _check_documents(documents: Sequence[str]) -> None:
        for i, d in enumerate(documents):
            if not isinstance(d, str):
                raise RerankError(f"document {i} is not a string: {type(d).__name__}")

    # -- sync ------------------------------------------------------------------------------

    def _sync_client(self) -> httpx.Client:
        if self._client is not None:
            return self._client
        if self._own_client is None:
            self._own_client = new_client(self.timeout_s, self)
        return self._own_client

    def _call(self, client: httpx.Client, query: str, documents: Sequence[str]) -> list[float]:
        try:
            response = request(
                client,
                "POST",
                self._url_sent.get_secret_value(),
                json=self._payload(query, documents),
                headers=self._headers(),
                retry=self.retry,
                deadline_s=self.deadline_s,
            )
        except Exception as exc:  # (also httpx.InvalidURL, a non-ASCII header's UnicodeError)
            raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
        return self._parse_redacted(decode_json(response), len(documents))

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """Scores in input order; one request (or ``ceil(n / max_batch)``) per call."""
        self._check_documents(documents)
        client = self._sync_client()
        scores: list[float] = []
        # One deadline over all batches: each request's own scope ends no later than this one
        # (sequential batches each allowed the whole deadline held a call n times as long).
        with deadline_scope(self.deadline_s):
            for start, stop in split_batches(len(documents), self.max_batch):
                scores.extend(self._call(client, query, documents[start:stop]))
        return scores

    def close(self) -> None:
        """Close the sync client this reranker opened (an injected client stays open)."""
        if self._own_client is not None:
            close_client(self._own_client)  # (its finaliser forgotten too)
            self._own_client = None

    # -- async -----------------------------------------------------------------------------

    async def _acall(
        self, client: httpx.AsyncClient, query: str, documents: Sequence[str]
    ) -> list[float]:
        try:
            response = await arequest(
                client,
                "POST",
                self._url_sent.get_secret_value(),
                json=self._payload(query, documents),
                headers=self._headers(),
                retry=self.retry,
                deadline_s=self.deadline_s,
            )
        except Exception as exc:  # (also httpx.InvalidURL, a non-ASCII header's UnicodeError)
            raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
        return self._parse_redacted(decode_json(response), len(documents))

    async def _arerank_with(
        self, client: httpx.AsyncClient, query: str, documents: Sequence[str]
    ) -> list[float]:
        batches = split_batches(len(documents), self.max_batch)
        # Sent together, each under ``deadline_s`` from now (a wait for a pooled connection
        # included): the call as a whole ends within one deadline.
        parts = await asyncio.gather(
            *(self._acall(client, query, documents[a:b]) for a, b in batches)
        )
        return [s for part in parts for s in part]

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The async twin of :meth:`rerank`; split batches are sent concurrently."""
        self._check_documents(documents)
        if not documents:
            return []
        if self._async_client is not None:
            return await self._arerank_with(self._async_client, query, documents)
        async with new_async_client(self.timeout_s) as client:
            return await self._arerank_with(client, query, documents)
