"""Volcengine VikingDB rerank (models doubao-seed-rerank, base-multilingual-rerank, m3-v2-rerank).

The service is ``POST /api/knowledge/service/rerank`` on the knowledge-base host, signed with
Volcengine's HMAC-SHA256 "V4" scheme (service ``air``). The body is
``{"datas": [{"query", "content", "title"?}, ...], "rerank_model", "rerank_instruction"?}`` and
the answer ``{"code": 0, "message", "request_id", "data": {"scores": [...], "token_usage"}}``,
scores in input order. At most 200 items per request (``max_batch``).

Signing is delegated to the ``volcengine`` SDK's ``SignerV4`` (a dependency of
``vikingdb-python-sdk``) rather than re-implemented: a hand-written signer that drifts from the
service's canonicalisation fails only in production. The SDK is imported lazily so that
``import treehop.rerankers`` costs nothing for users of other providers. Requests are sent with
httpx so that timeouts and retries behave like every other provider; each attempt is signed
afresh, so a retry after a long backoff still carries a current ``X-Date``.

``rerank_threshold`` and ``rerank_only_chunk`` mirror VikingDB's ``search_knowledge`` knobs. The
standalone rerank API has no threshold, so the threshold is applied by the caller (the retriever
drops results whose score fails :meth:`VikingDBReranker.passes_threshold`); scores are always
returned for every document so that a fallback can still be decided on the whole batch.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import httpx
from pydantic import SecretStr

from .._http import (
    RETRY_STATUS,
    DeadlineExceeded,
    HTTPStatusFailure,
    RetryPolicy,
    asend_capped,
    attempt_timeout,
    check_deadline,
    check_seconds,
    close_client,
    deadline_scope,
    send_capped,
    truncate,
)
from ..errors import InvalidQueryError, RerankError
from ..redaction import redact
from ..secrets import resolve_secret
from .base import BaseReranker
from .http_rerank import (
    check_positive,
    decode_json,
    describe_http_error,
    new_async_client,
    new_client,
    split_batches,
)

DEFAULT_HOST: Final = "api-knowledgebase.mlp.cn-beijing.volces.com"
DEFAULT_REGION: Final = "cn-beijing"
SERVICE: Final = "air"
RERANK_PATH: Final = "/api/knowledge/service/rerank"
SEED_MODEL: Final = "doubao-seed-rerank"
KNOWN_MODELS: Final = frozenset({SEED_MODEL, "base-multilingual-rerank", "m3-v2-rerank"})
MAX_INSTRUCTION_CHARS: Final = 1024
MAX_DATAS_PER_REQUEST: Final = 200

#: The documented error codes of the knowledge-base API, with what the user should check.
ERROR_CODES: Final[Mapping[int, str]] = {
    1000001: "unauthorized: missing or invalid credentials (check VOLC_ACCESSKEY/VOLC_SECRETKEY)",
    1000002: "no permission: the access key may not call this API or project",
    1000003: "invalid request",
    1000005: "collection not exist",
}


_UNSENDABLE = (httpx.InvalidURL, UnicodeError)
"""What building a request raises for a bad ``host`` (``httpx.InvalidURL``, no
``httpx.HTTPError``) or a non-ASCII key in the signed headers (``UnicodeEncodeError``)."""


def _finite(value: int | float) -> bool:
    """Finite and a float (``math.isfinite(10**400)`` raises OverflowError; JSON allows it)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _error_message(code: object, message: object, request_id: object) -> str:
    known = ERROR_CODES.get(code) if isinstance(code, int) else None
    text = f"VikingDB rerank error {code}"
    text += f" ({known})" if known else ""
    if message:
        text += f": {str(message)[:200]}"
    if request_id:
        text += f" [request_id={str(request_id)[:100]}]"
    return redact(text)


def _load_signer() -> tuple[Any, Any, Any]:
    try:
        from volcengine.auth.SignerV4 import SignerV4  # type: ignore[import-untyped]
        from volcengine.base.Request import Request  # type: ignore[import-untyped]
        from volcengine.Credentials import Credentials  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - exercised only without the SDK
        raise RerankError(
            "VikingDBReranker needs the Volcengine signer: pip install vikingdb-python-sdk "
            f"(or volcengine); import failed: {exc}"
        ) from exc
    return SignerV4, Request, Credentials


class VikingDBReranker(BaseReranker):
    """The VikingDB knowledge-base rerank service behind the :class:`Reranker` protocol.

    Args:
        model: ``"base-multilingual-rerank"`` (default, VikingDB's default), ``"m3-v2-rerank"``
            or ``"doubao-seed-rerank"``. Other names are passed through for newer models.
        ak / sk: Access key pair; ``None`` reads ``VOLC_ACCESSKEY`` / ``VOLC_SECRETKEY``.
        session_token: STS token for temporary credentials (``VOLC_SESSIONTOKEN``).
        host / scheme / region: Where to send and how to scope the signature; point ``host`` at
            ``127.0.0.1:PORT`` with ``scheme="http"`` for a local stand-in.
        rerank_instruction: Task instruction (``doubao-seed-rerank`` only, at most 1024 chars).
        rerank_threshold: In [0, 1]; applied by the caller via :meth:`passes_threshold`.
        rerank_only_chunk: ``True`` scores the chunk alone; ``False`` (VikingDB's default) sends
            the chunk's title too when :meth:`rerank_with_titles` is given titles.
        endpoint_id: A dedicated inference endpoint, when the account uses one.
        max_batch: Items per request (the API allows 200).
        deadline_s: Total time of one rerank call, every batch, retry and backoff together
            (past it a :class:`~treehop.errors.RerankError`; ``None``: no total bound).
    """

    def __init__(
        self,
        *,
        model: str = "base-multilingual-rerank",
        ak: str | SecretStr | None = None,
        sk: str | SecretStr | None = None,
        session_token: str | SecretStr | None = None,
        host: str = DEFAULT_HOST,
        scheme: str = "https",
        region: str = DEFAULT_REGION,
        rerank_instruction: str | None = None,
        rerank_threshold: float | None = None,
        rerank_only_chunk: bool = False,
        endpoint_id: str | None = None,
        timeout_s: float = 10.0,
        deadline_s: float | None = 20.0,
        retry: RetryPolicy | None = None,
        max_chars: int = 4000,
        max_query_chars: int = 2000,
        max_batch: int = MAX_DATAS_PER_REQUEST,
        client: httpx.Client | None = None,
        async_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not model:
            raise InvalidQueryError("rerank model must be a non-empty string")
        if rerank_instruction is not None:
            if model != SEED_MODEL:
                # The service ignores it for other models; a silent no-op would mislead.
                raise InvalidQueryError(
                    f"rerank_instruction only works with model {SEED_MODEL!r}, not {model!r}"
                )
            if len(rerank_instruction) > MAX_INSTRUCTION_CHARS:
                raise InvalidQueryError(
                    f"rerank_instruction has {len(rerank_instruction)} characters; "
                    f"the limit is {MAX_INSTRUCTION_CHARS}"
                )
        if rerank_threshold is not None and not 0.0 <= rerank_threshold <= 1.0:
            raise InvalidQueryError(f"rerank_threshold must be in [0, 1], got {rerank_threshold}")
        if scheme not in ("http", "https"):
            raise RerankError(f"scheme must be 'http' or 'https', got {scheme!r}")
        if not host or "/" in host:
            raise RerankError(f"host must be a bare host[:port], got {host!r}")
        check_seconds(timeout_s, RerankError, "timeout_s")
        check_positive("max_chars", max_chars)
        check_positive("max_query_chars", max_query_chars)
        check_positive("max_batch", max_batch)
        if max_batch > MAX_DATAS_PER_REQUEST:
            raise RerankError(f"max_batch {max_batch} exceeds the API limit of 200 items")
        self._ak = resolve_secret(ak, "VOLC_ACCESSKEY", error=RerankError, what="ak")
        self._sk = resolve_secret(sk, "VOLC_SECRETKEY", error=RerankError, what="sk")
        self._session_token = resolve_secret(
            session_token, "VOLC_SESSIONTOKEN", error=RerankError, what="session_token"
        )
        if self._ak is None or self._sk is None:
            raise RerankError(
                "VikingDBReranker needs an access key pair: pass ak=/sk= or set "
                "VOLC_ACCESSKEY and VOLC_SECRETKEY"
            )
        self._signer, self._request_cls, self._credentials_cls = _load_signer()
        self.model = model
        self.host = host
        self.scheme = scheme
        self.region = region
        self.url = f"{scheme}://{host}{RERANK_PATH}"
        self.rerank_instruction = rerank_instruction
        self.rerank_threshold = rerank_threshold
        self.rerank_only_chunk = rerank_only_chunk
        self.endpoint_id = endpoint_id
        self.timeout_s = float(timeout_s)
        self.deadline_s = check_deadline(deadline_s, RerankError)
        self.retry = retry if retry is not None else RetryPolicy()
        self.max_chars = max_chars
        self.max_query_chars = max_query_chars
        self.max_batch = max_batch
        self._client = client
        self._async_client = async_client
        self._own_client: httpx.Client | None = None
        self.name = f"vikingdb-rerank:{model}"

    def __repr__(self) -> str:
        return (
            f"VikingDBReranker(model={self.model!r}, host={self.host!r}, region={self.region!r}, "
            f"ak='**********', sk='**********', rerank_threshold={self.rerank_threshold!r}, "
            f"rerank_only_chunk={self.rerank_only_chunk!r})"
        )

    def passes_threshold(self, score: float) -> bool:
        """Whether a result with this score is kept (always, when no threshold is set)."""
        return self.rerank_threshold is None or score >= self.rerank_threshold

    # -- request building ------------------------------------------------------------------

    def _body(self, query: str, documents: Sequence[str], titles: Sequence[str | None]) -> str:
        q = truncate(query, self.max_query_chars)
        datas: list[dict[str, str]] = []
        for doc, title in zip(documents, titles, strict=True):
            item = {"query": q, "content": truncate(doc, self.max_chars)}
            if title and not self.rerank_only_chunk:
                item["title"] = truncate(title, self.max_chars)
            datas.append(item)
        payload: dict[str, Any] = {"datas": datas, "rerank_model": self.model}
        if self.rerank_instruction is not None:
            payload["rerank_instruction"] = self.rerank_instruction
        if self.endpoint_id is not None:
            payload["endpoint_id"] = self.endpoint_id
        # The exact bytes are signed, so serialise once and send these bytes.
        return json.dumps(payload, ensure_ascii=False)

    def _signed_headers(self, body: str) -> dict[str, str]:
        """Sign one attempt with the Volcengine SDK's V4 signer (fresh ``X-Date``)."""
        assert self._ak is not None and self._sk is not None
        req = self._request_cls()
        req.set_schema(self.scheme)
        req.set_method("POST")
        req.set_host(self.host)
        req.set_path(RERANK_PATH)
        req.set_headers({"Accept": "application/json", "Content-Type": "application/json"})
        req.set_body(body)
        token = self._session_token.get_secret_value() if self._session_token else ""
        credentials = self._credentials_cls(
            self._ak.get_secret_value(), self._sk.get_secret_value(), SERVICE, self.region, token
        )
        self._signer.sign(req, credentials)
        return {str(k): str(v) for k, v in req.headers.items()}

    def _parse(self, response: httpx.Response, n: int) -> list[float]:
        body = decode_json(response)
        if not isinstance(body, Mapping):
            raise RerankError(f"expected a JSON object, got {type(body).__name__}")
        code = body.get("code")
        if code != 0:
            raise RerankError(_error_message(code, body.get("message"), body.get("request_id")))
        data = body.get("data", body.get("result"))
        scores = data.get("scores") if isinstance(data, Mapping) else None
        if not isinstance(scores, list):
            raise RerankError("VikingDB rerank answer has no data.scores list")
        if len(scores) != n:
            raise RerankError(f"VikingDB rerank returned {len(scores)} scores for {n} documents")
        out: list[float] = []
        for i, s in enumerate(scores):
            if isinstance(s, bool) or not isinstance(s, (int, float)) or not _finite(s):
                raise RerankError(
                    f"VikingDB rerank score {i} is not a finite number: {redact(repr(s))[:60]}"
                )
            out.append(float(s))
        return out

    def _status_error(self, response: httpx.Response) -> RerankError:
        """A non-2xx answer: use the API's error code when the body carries one."""
        try:
            body = json.loads(response.content)
        except (ValueError, RecursionError):
            body = None
        if isinstance(body, Mapping) and "code" in body:
            msg = _error_message(body.get("code"), body.get("message"), body.get("request_id"))
            return RerankError(f"{msg} (HTTP {response.status_code})")
        return RerankError(f"{self.name}: {describe_http_error(HTTPStatusFailure(response))}")

    def _prepare(
        self, documents: Sequence[str], titles: Sequence[str | None] | None
    ) -> list[str | None]:
        for i, d in enumerate(documents):
            if not isinstance(d, str):
                raise RerankError(f"document {i} is not a string: {type(d).__name__}")
        if titles is None:
            return [None] * len(documents)
        if len(titles) != len(documents):
            raise RerankError(f"{len(titles)} titles for {len(documents)} documents")
        return list(titles)

    # -- sync ------------------------------------------------------------------------------

    def _call(self, client: httpx.Client, body: str, n: int) -> list[float]:
        # Own retry loop (not _http.request): each attempt must be re-signed with a current
        # date, and the signed bytes must be sent verbatim, which ``json=`` cannot guarantee.
        content = body.encode("utf-8")
        with deadline_scope(self.deadline_s) as end:
            for attempt in range(self.retry.max_retries + 1):
                response: httpx.Response | None = None
                if end is not None and time.monotonic() >= end:
                    raise self._deadline_error()
                timeout = attempt_timeout(client.timeout, end)
                try:
                    response = send_capped(
                        client,
                        client.build_request(
                            "POST",
                            self.url,
                            content=content,
                            headers=self._signed_headers(body),
                            timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout,
                        ),
                    )
                except _UNSENDABLE as exc:  # no retry can help: the request cannot be built
                    raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
                except httpx.HTTPError as exc:
                    if end is not None and time.monotonic() >= end:
                        raise self._deadline_error() from None
                    if attempt == self.retry.max_retries:
                        raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
                else:
                    if response.status_code < 300:
                        return self._parse(response, n)
                    if (
                        response.status_code not in RETRY_STATUS
                        or attempt == self.retry.max_retries
                    ):
                        raise self._status_error(response)
                pause = self.retry.delay(attempt, response)
                if end is not None:
                    pause = min(pause, max(end - time.monotonic(), 0.0))
                time.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover

    def _deadline_error(self) -> RerankError:
        assert self.deadline_s is not None
        return RerankError(f"{self.name}: {describe_http_error(DeadlineExceeded(self.deadline_s))}")

    def rerank_with_titles(
        self, query: str, documents: Sequence[str], titles: Sequence[str | None] | None
    ) -> list[float]:
        """Score chunks with their titles (dropped when ``rerank_only_chunk``)."""
        all_titles = self._prepare(documents, titles)
        if self._client is None and self._own_client is None:
            self._own_client = new_client(self.timeout_s, self)
        client = self._client or self._own_client
        assert client is not None
        scores: list[float] = []
        # One deadline over all batches (each request's own scope ends no later than this):
        # past 200 documents the batches run in sequence, each once allowed the whole deadline.
        with deadline_scope(self.deadline_s):
            for a, b in split_batches(len(documents), self.max_batch):
                body = self._body(query, documents[a:b], all_titles[a:b])
                scores.extend(self._call(client, body, b - a))
        return scores

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """Scores in input order, one signed request per ``max_batch`` documents."""
        return self.rerank_with_titles(query, documents, None)

    def close(self) -> None:
        """Close the sync client this reranker opened (an injected client stays open)."""
        if self._own_client is not None:
            close_client(self._own_client)  # (its finaliser forgotten too)
            self._own_client = None

    # -- async -----------------------------------------------------------------------------

    async def _acall(self, client: httpx.AsyncClient, body: str, n: int) -> list[float]:
        if self.deadline_s is None:
            return await self._acall_attempts(client, body, n)
        try:
            async with asyncio.timeout(self.deadline_s):
                return await self._acall_attempts(client, body, n)
        except TimeoutError:
            raise self._deadline_error() from None

    async def _acall_attempts(self, client: httpx.AsyncClient, body: str, n: int) -> list[float]:
        content = body.encode("utf-8")
        for attempt in range(self.retry.max_retries + 1):
            response: httpx.Response | None = None
            try:
                response = await asend_capped(
                    client,
                    client.build_request(
                        "POST", self.url, content=content, headers=self._signed_headers(body)
                    ),
                )
            except _UNSENDABLE as exc:  # no retry can help: the request cannot be built
                raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
            except httpx.HTTPError as exc:
                if attempt == self.retry.max_retries:
                    raise RerankError(f"{self.name}: {describe_http_error(exc)}") from None
            else:
                if response.status_code < 300:
                    return self._parse(response, n)
                if response.status_code not in RETRY_STATUS or attempt == self.retry.max_retries:
                    raise self._status_error(response)
            await asyncio.sleep(self.retry.delay(attempt, response))
        raise AssertionError("unreachable")  # pragma: no cover

    async def _abatches(
        self,
        client: httpx.AsyncClient,
        query: str,
        documents: Sequence[str],
        titles: list[str | None],
    ) -> list[float]:
        calls = [
            self._acall(client, self._body(query, documents[a:b], titles[a:b]), b - a)
            for a, b in split_batches(len(documents), self.max_batch)
        ]
        parts = await asyncio.gather(*calls)
        return [s for part in parts for s in part]

    async def arerank_with_titles(
        self, query: str, documents: Sequence[str], titles: Sequence[str | None] | None
    ) -> list[float]:
        """The async twin of :meth:`rerank_with_titles`."""
        all_titles = self._prepare(documents, titles)
        if not documents:
            return []
        if self._async_client is not None:
            return await self._abatches(self._async_client, query, documents, all_titles)
        async with new_async_client(self.timeout_s) as client:
            return await self._abatches(client, query, documents, all_titles)

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The async twin of :meth:`rerank`."""
        return await self.arerank_with_titles(query, documents, None)
