"""Shared HTTP plumbing for remote providers: timeouts and bounded retries with backoff.

Retries happen only where they can help: connection errors, timeouts, 429 and 5xx. A 4xx other
than 429 is the caller's fault and is raised at once. ``Retry-After`` is honoured (capped).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` extra attempts after the first, exponential backoff with jitter."""

    max_retries: int = 2
    backoff_s: float = 0.25
    max_backoff_s: float = 4.0

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            ra = response.headers.get("retry-after")
            if ra:
                try:
                    return min(float(ra), self.max_backoff_s)
                except ValueError:
                    pass
        base = min(self.backoff_s * (2**attempt), self.max_backoff_s)
        return float(base * (0.5 + random.random() / 2))


class HTTPStatusFailure(Exception):
    """A final non-success HTTP status after retries (carries the response)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        body = response.text[:300]
        super().__init__(f"HTTP {response.status_code} from {response.request.url}: {body}")


async def arequest(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy = RetryPolicy(),
) -> httpx.Response:
    """Send with retries; return a 2xx response or raise (``HTTPStatusFailure`` / httpx)."""
    last_exc: Exception | None = None
    for attempt in range(retry.max_retries + 1):
        response: httpx.Response | None = None
        try:
            response = await client.request(method, url, json=json, headers=headers)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            last_exc = exc
        else:
            if response.status_code < 300:
                return response
            if response.status_code not in RETRY_STATUS:
                raise HTTPStatusFailure(response)
            last_exc = HTTPStatusFailure(response)
        if attempt < retry.max_retries:
            await asyncio.sleep(retry.delay(attempt, response))
    assert last_exc is not None
    raise last_exc


def request(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    json: Any = None,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy = RetryPolicy(),
) -> httpx.Response:
    """The sync twin of :func:`arequest`."""
    last_exc: Exception | None = None
    for attempt in range(retry.max_retries + 1):
        response: httpx.Response | None = None
        try:
            response = client.request(method, url, json=json, headers=headers)
        except (httpx.TimeoutException, httpx.TransportError) as exc:
            last_exc = exc
        else:
            if response.status_code < 300:
                return response
            if response.status_code not in RETRY_STATUS:
                raise HTTPStatusFailure(response)
            last_exc = HTTPStatusFailure(response)
        if attempt < retry.max_retries:
            time.sleep(retry.delay(attempt, response))
    assert last_exc is not None
    raise last_exc


def truncate(text: str, max_chars: int) -> str:
    """Bound a text sent to a remote model (a cheap, tokenizer-free length bound)."""
    return text if len(text) <= max_chars else text[:max_chars]
