"""An embedder for any server that speaks OpenAI's ``POST /embeddings``.

One client covers OpenAI, Volcengine Ark (``https://ark.cn-beijing.volces.com/api/v3``), Ollama
(``http://localhost:11434/v1``), vLLM and TEI's OpenAI route: they all take
``{"model": ..., "input": [...]}`` and answer ``{"data": [{"index": i, "embedding": [...]}]}``.

Why it is written this way:

* Real sync (``httpx.Client``) and real async (``httpx.AsyncClient``) paths: an async caller
  must not tie up a worker thread per request, and async batches go out concurrently.
* Timeouts and bounded retries (429 and 5xx, ``Retry-After`` honoured) come from
  :mod:`treehop._http`, shared with the other remote providers.
* Rows are put in order by their ``index`` field, not by their position: the API does not
  promise that ``data`` comes back sorted.
* Every answer is checked (row count, width, finiteness) so that a misbehaving server raises
  :class:`~treehop.errors.EmbeddingError` instead of silently corrupting an index.
* The API key is a :class:`pydantic.SecretStr`; it is read only when a request is built, never
  shown by ``repr``/``str``, and registered with :mod:`treehop.redaction`, so error messages
  (which quote the server's answer) never carry it, even when the server echoes it.
* ``deadline_s`` bounds a whole :meth:`~OpenAICompatibleEmbedder.embed` /
  :meth:`~OpenAICompatibleEmbedder.aembed` call: every batch (``max_batch``), every read,
  retry and backoff together, the wait for a free ``max_concurrency`` slot included. A server
  that trickles its answer byte by byte cannot hold ``find()`` past it, and a call of many
  batches is not allowed the deadline once per batch (the project's rule: one total deadline
  per remote call). Ingest embeds :data:`~treehop.ingest.writer.EMBED_BATCH` texts per call,
  so the deadline bounds each of those calls, never a whole ``add_resource``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
import threading
from collections.abc import AsyncGenerator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import httpx
import numpy as np
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
    register_header_secrets,
    request,
    restore_without_pools,
    state_without_pools,
    sync_client,
    truncate,
    url_path,
)
from ..errors import EmbeddingError, UnsupportedUseError
from ..redaction import redact, redact_url, register_url_secrets
from ..secrets import resolve_secret
from .base import BaseEmbedder, Vectors, normalize_rows

API_KEY_ENV_VARS = ("TREEHOP_EMBEDDING_API_KEY", "OPENAI_API_KEY")
"""Where the key is looked up, in order, when none is passed."""
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MAX_BATCH = 64
DEFAULT_MAX_INPUT_CHARS = 8000
"""A cheap bound under the usual 8192-token input limit, so one long chunk is not a 400."""
_PROBE_TEXT = "dimension probe"


class OpenAICompatibleEmbedder(BaseEmbedder):
    """Embeddings from an OpenAI-compatible HTTP endpoint, batched, with timeouts and retries.

    Args:
        model: the model name the server expects (``text-embedding-3-small``,
            ``doubao-embedding-...``, ``nomic-embed-text``, ...).
        base_url: the API root; ``/embeddings`` is appended (a URL that already ends in
            ``/embeddings`` is used as is).
        api_key: a ``str`` or ``SecretStr``; when ``None`` the environment variables
            ``TREEHOP_EMBEDDING_API_KEY`` then ``OPENAI_API_KEY`` are read. With no key at all
            no ``Authorization`` header is sent (local Ollama, TEI, vLLM).
        dimension: the expected vector width. When ``None`` it is learnt from the first answer
            (:attr:`dimension` reads 0 until then; :meth:`discover_dimension` probes).
        send_dimensions: also send ``"dimensions": dimension`` (OpenAI ``text-embedding-3``
            and some others can shorten vectors server-side); needs ``dimension``.
        max_batch: texts per request (OpenAI accepts up to 2048).
        max_concurrency: async requests in flight at once for one ``aembed`` call.
        timeout_s: per-attempt timeout of each socket operation (connect, read, write, pool).
        deadline_s: total time of one :meth:`embed` / :meth:`aembed` call: all its batches,
            retries and backoff together (``None``: no total bound). Past it the call raises
            :class:`EmbeddingError`. Ingest calls the embedder once per 64 texts, so a long
            ``add_resource`` is bounded per call, not as a whole; a direct call with
            thousands of texts gets one deadline for all of them (call it in slices, or raise
            ``deadline_s``, where the server needs longer).
        retry: how often and how long to retry 429/5xx/connection errors.
        max_input_chars: texts longer than this are cut (``None``: send whole texts).
        headers: extra headers (for example ``OpenAI-Organization``).
        extra_body: extra JSON fields merged into every request (``encoding_format``, ...).
        name: the identifier stored with an index (default ``openai-compatible:<model>``).
        http_client / async_http_client: bring your own httpx clients (for proxies, custom
            TLS); they are then not closed by :meth:`close` / :meth:`aclose`.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | SecretStr | None = None,
        dimension: int | None = None,
        send_dimensions: bool = False,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_concurrency: int = 4,
        timeout_s: float = 30.0,
        deadline_s: float | None = 60.0,
        retry: RetryPolicy | None = None,
        max_input_chars: int | None = DEFAULT_MAX_INPUT_CHARS,
        headers: Mapping[str, str] | None = None,
        extra_body: Mapping[str, Any] | None = None,
        name: str | None = None,
        http_client: httpx.Client | None = None,
        async_http_client: httpx.AsyncClient | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise EmbeddingError("model must be a non-empty string")
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise EmbeddingError(f"base_url must be an http(s) URL, got {redact_url(base_url)!r}")
        if dimension is not None and (not isinstance(dimension, int) or dimension < 1):
            raise EmbeddingError("dimension must be a positive int or None")
        if send_dimensions and dimension is None:
            raise EmbeddingError("send_dimensions=True needs dimension")
        if not isinstance(max_batch, int) or not 1 <= max_batch <= 2048:
            raise EmbeddingError("max_batch must be an int in [1, 2048]")
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise EmbeddingError("max_concurrency must be a positive int")
        timeout_s = check_seconds(timeout_s, EmbeddingError, "timeout_s")
        self._deadline_s = check_deadline(deadline_s, EmbeddingError)
        if max_input_chars is not None and max_input_chars < 1:
            raise EmbeddingError("max_input_chars must be positive or None")

        self._model = model
        if url_path(base_url).endswith("/embeddings"):
            register_url_secrets(base_url)
            sent = base_url.rstrip("/")
        else:
            sent = endpoint(base_url, "/embeddings")
        # The endpoint as given (its credentials included) is used for the requests only,
        # kept as a SecretStr as the key is; ``_url`` (in every message, ``url``) is the
        # same with a password masked. Why (helper leftovers63): ``url``, ``vars()`` and
        # the pickled state held the password, which the repr already masked, and some
        # messages named ``_url`` unredacted.
        self._url_sent = SecretStr(sent)
        self._url = redact_url(sent)
        self._api_key = resolve_secret(api_key, API_KEY_ENV_VARS, error=EmbeddingError)
        self._dimension = dimension
        self._send_dimensions = send_dimensions
        self._max_batch = max_batch
        self._max_concurrency = max_concurrency
        self._timeout = httpx.Timeout(timeout_s)
        self._retry = retry or RetryPolicy()
        self._max_input_chars = max_input_chars
        self._extra_headers = dict(headers or {})
        register_header_secrets(self._extra_headers)
        self._extra_body = dict(extra_body or {})
        if name is None:
            name = f"openai-compatible:{model}"
            if send_dimensions:
                name = f"{name}:d{dimension}"
        self._name = name

        self._lock = threading.Lock()
        self._client = http_client
        self._owns_client = http_client is None
        self._user_aclient = async_http_client
        self._aclient: httpx.AsyncClient | None = None  # ours, bound to ``_aclient_loop``
        self._aclient_loop: asyncio.AbstractEventLoop | None = None
        self._aclient_guard: AsyncGenerator[None, None] | None = None

    # -- identity ----------------------------------------------------------

    @property
    def name(self) -> str:  # type: ignore[override]
        return self._name

    @property
    def dimension(self) -> int:  # type: ignore[override]
        """The vector width, or 0 while unknown (not given and no answer seen yet).

        Reading it never sends a request: ``isinstance(x, Embedder)`` reads every protocol
        member on Python 3.11, and a type check must not hit the network. Use
        :meth:`discover_dimension` / :meth:`adimension` to learn it on demand.
        """
        return self._dimension or 0

    def discover_dimension(self) -> int:
        """The vector width, learnt with one small request if it is not known yet."""
        if self._dimension is None:
            self.embed([_PROBE_TEXT])
        assert self._dimension is not None
        return self._dimension

    async def adimension(self) -> int:
        """The async twin of :meth:`discover_dimension`."""
        if self._dimension is None:
            await self.aembed([_PROBE_TEXT])
        assert self._dimension is not None
        return self._dimension

    @property
    def model(self) -> str:
        return self._model

    @property
    def url(self) -> str:
        """The embeddings endpoint as shown: a password in it masked (the requests use the
        URL as given, kept private)."""
        return self._url

    @property
    def max_batch(self) -> int:
        return self._max_batch

    def __repr__(self) -> str:
        # The key is deliberately absent; only whether one is set.
        return (
            f"OpenAICompatibleEmbedder(model={self._model!r}, url={self._url!r}, "
            f"dimension={self._dimension}, max_batch={self._max_batch}, "
            f"api_key={'set' if self._api_key else 'none'})"
        )

    __str__ = __repr__

    _POOLS = ("_client", "_aclient", "_aclient_loop", "_aclient_guard", "_user_aclient")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its lock and the pools it opened (:func:`state_without_pools`;
        ``pickle.dumps`` raised a raw ``TypeError``). One given a caller's ``http_client`` /
        ``async_http_client`` is refused by name: those hold the caller's sockets and
        settings, which cannot cross a process."""
        if not self._owns_client or self._user_aclient is not None:
            raise UnsupportedUseError(
                "an OpenAICompatibleEmbedder given its own http_client / async_http_client "
                "cannot be pickled (a client's connections cannot cross a process); build it "
                "with the same settings in the other process"
            )
        return state_without_pools(self, self._POOLS)

    def __setstate__(self, state: dict[str, Any]) -> None:
        restore_without_pools(
            self, state, self._POOLS, url_key="_url_sent", error=EmbeddingError, secret_url=True
        )
        self._owns_client = True

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A copy configured the same, with its own lock and connection pools; a caller's
        ``http_client`` / ``async_http_client`` is shared, not copied. Why (helper
        attacks70): deep-copying raised a raw ``TypeError: cannot pickle '_thread.lock'
        object``, and a chain or agent config that deep-copies its parts copies the
        embedder too. A lock or a pool holds no configuration, and a pool of sockets (or
        an event loop's async client) cannot be duplicated: the copy opens its own."""
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        skip = {"_lock", "_client", "_user_aclient", "_aclient", "_aclient_loop", "_aclient_guard"}
        for key, value in self.__dict__.items():
            if key not in skip:
                new.__dict__[key] = copy.deepcopy(value, memo)
        new._lock = threading.Lock()
        new._user_aclient = self._user_aclient
        new._client = None if self._owns_client else self._client
        new._aclient = new._aclient_loop = new._aclient_guard = None
        return new

    # -- lifecycle ---------------------------------------------------------

    def close(self) -> None:
        """Close the sync client (if this embedder created it)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None and self._owns_client:
            close_client(client)  # (its finaliser forgotten too: a pool per reuse was kept)

    async def aclose(self) -> None:
        """Close both clients this embedder created."""
        guard, self._aclient_guard = self._aclient_guard, None
        loop = self._aclient_loop
        self._aclient = self._aclient_loop = None
        if guard is not None and loop is asyncio.get_running_loop():
            await guard.aclose()  # its ``finally`` closes the client
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _sync_client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = sync_client(self._timeout, owner=self)  # (closed when dropped)
                self._owns_client = True
            return self._client

    async def _async_client(self) -> httpx.AsyncClient:
        if self._user_aclient is not None:
            return self._user_aclient
        loop = asyncio.get_running_loop()
        if self._aclient is not None and self._aclient_loop is loop:
            return self._aclient
        # An AsyncClient's pooled connections belong to the event loop that opened them, so
        # each loop gets its own client (``asyncio.run`` twice must work). The client is tied
        # to its loop's life through an async generator: ``asyncio.run`` finalises pending
        # async generators before it closes the loop, which runs ``_loop_guard``'s ``finally``
        # and closes the client while its loop can still do so (no leaked sockets).
        client = httpx.AsyncClient(timeout=self._timeout)
        guard = self._loop_guard(client)
        await guard.__anext__()
        self._aclient, self._aclient_loop, self._aclient_guard = client, loop, guard
        return client

    async def _loop_guard(self, client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            if self._aclient is client:
                self._aclient = self._aclient_loop = self._aclient_guard = None
            await client.aclose()

    # -- embedding ---------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` with one request per ``max_batch`` texts, in order, all under one
        ``deadline_s`` (each request's own scope ends no later than the call's)."""
        items, sent = self._prepare(texts)
        with deadline_scope(self._deadline_s):
            if items and not sent and self._dimension is None:
                self.embed([_PROBE_TEXT])  # only blanks, width unknown: one probe learns it
            client = self._sync_client()
            parts = [
                self._parse(self._post_sync(client, batch), len(batch))
                for batch in self._batches(items, sent)
            ]
        return self._assemble(items, sent, parts)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; batches go out concurrently (at most ``max_concurrency``), the
        whole call (batches queued behind the gate included) under one ``deadline_s``."""
        items, sent = self._prepare(texts)
        if self._deadline_s is None:
            return await self._aembed(items, sent)
        try:
            async with asyncio.timeout(self._deadline_s):
                return await self._aembed(items, sent)
        except TimeoutError:
            raise self._wrap(DeadlineExceeded(self._deadline_s)) from None

    async def _aembed(self, items: list[str], sent: list[int]) -> Vectors:
        if items and not sent and self._dimension is None:
            await self._aembed([_PROBE_TEXT], [0])  # only blanks, width unknown: one probe
        client = await self._async_client()
        gate = asyncio.Semaphore(self._max_concurrency)

        async def one(batch: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
            async with gate:
                payload = await self._post_async(client, batch)
            return self._parse(payload, len(batch))

        # A TaskGroup (not gather) so that one failed batch cancels the others in flight.
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(one(b)) for b in self._batches(items, sent)]
        except BaseExceptionGroup as eg:
            raise _first_leaf(eg) from None
        return self._assemble(items, sent, [t.result() for t in tasks])

    # -- internals ---------------------------------------------------------

    def _prepare(self, texts: Sequence[str]) -> tuple[list[str], list[int]]:
        """Validate; return the texts and the positions of the non-blank ones to send.

        Blank texts are not sent (OpenAI rejects empty strings with a 400) and get a zero
        vector: nothing in them can match anything.
        """
        if isinstance(texts, (str, bytes)):
            raise EmbeddingError("embed() takes a sequence of strings, not a single string")
        items = list(texts)
        sent: list[int] = []
        for i, t in enumerate(items):
            if not isinstance(t, str):
                raise EmbeddingError(f"texts[{i}] is {type(t).__name__}, expected str")
            if t.strip():
                sent.append(i)
        return items, sent

    def _batches(self, items: list[str], sent: list[int]) -> list[list[str]]:
        cap = self._max_input_chars
        texts = [items[i] if cap is None else truncate(items[i], cap) for i in sent]
        step = self._max_batch
        return [texts[s : s + step] for s in range(0, len(texts), step)]

    def _assemble(
        self,
        items: list[str],
        sent: list[int],
        parts: list[np.ndarray[Any, np.dtype[np.float32]]],
    ) -> Vectors:
        if not items:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        dim = self._dimension
        assert dim is not None
        out = np.zeros((len(items), dim), dtype=np.float32)
        if sent:
            out[np.asarray(sent, dtype=np.intp)] = np.concatenate(parts, axis=0)
        return out

    def _body(self, batch: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {**self._extra_body, "model": self._model, "input": batch}
        if self._send_dimensions:
            body["dimensions"] = self._dimension
        return body

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", **self._extra_headers}
        if self._api_key is not None:
            headers["Authorization"] = f"Bearer {self._api_key.get_secret_value()}"
        return headers

    def _post_sync(self, client: httpx.Client, batch: list[str]) -> Any:
        try:
            response = request(
                client,
                "POST",
                self._url_sent.get_secret_value(),
                json=self._body(batch),
                headers=self._headers(),
                retry=self._retry,
                deadline_s=self._deadline_s,
            )
        except Exception as exc:
            raise self._wrap(exc) from None
        return self._json(response)

    async def _post_async(self, client: httpx.AsyncClient, batch: list[str]) -> Any:
        try:
            response = await arequest(
                client,
                "POST",
                self._url_sent.get_secret_value(),
                json=self._body(batch),
                headers=self._headers(),
                retry=self._retry,
                deadline_s=self._deadline_s,
            )
        except Exception as exc:
            raise self._wrap(exc) from None
        return self._json(response)

    def _wrap(self, exc: Exception) -> EmbeddingError:
        """Turn a transport or status failure into an EmbeddingError with a useful message."""
        attempts = self._retry.max_retries + 1
        if isinstance(exc, DeadlineExceeded):
            msg = (
                f"embedding call to {self._url} got no complete answer within its "
                f"{exc.deadline_s:g}s deadline (deadline_s, one embed call's batches together)"
            )
        elif isinstance(exc, HTTPStatusFailure):
            code = exc.response.status_code
            body = body_excerpt(exc.response)
            hint = " (check the API key)" if code in (401, 403) else ""
            msg = f"embedding request to {self._url} failed: HTTP {code}{hint}: {body}"
            if code == 429 or code >= 500:
                msg += f" (after {attempts} attempts)"
        elif isinstance(exc, httpx.TimeoutException):
            msg = (
                f"embedding request to {self._url} timed out after "
                f"{self._timeout.read}s ({attempts} attempts)"
            )
        elif isinstance(exc, httpx.HTTPError):
            msg = f"embedding request to {self._url} failed ({attempts} attempts): "
            msg += error_text(exc)
        else:
            msg = f"embedding request to {self._url} failed: {error_text(exc)}"
        return EmbeddingError(redact(msg))

    def _scrub(self, text: str) -> str:
        return redact(text)

    def _json(self, response: httpx.Response) -> Any:
        try:
            return response.json()
        except (ValueError, RecursionError):  # RecursionError: nesting past the limit
            raise EmbeddingError(
                self._scrub(
                    f"embedding server {self._url} sent a non-JSON answer "
                    f"(HTTP {response.status_code}): {body_excerpt(response, 200)!r}"
                )
            ) from None

    def _parse(self, payload: Any, expected: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        """Check one answer and return its rows in request order, L2-normalised.

        Messages quote parts of the answer (keys, values), which a hostile server controls,
        so they are redacted like every other remote text.
        """
        try:
            return self._parse_checked(payload, expected)
        except EmbeddingError as exc:
            raise EmbeddingError(redact(str(exc))) from None

    def _parse_checked(self, payload: Any, expected: int) -> np.ndarray[Any, np.dtype[np.float32]]:
        data = payload.get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise EmbeddingError(
                f"embedding answer from {self._url} has no 'data' list "
                f"(got {type(payload).__name__} with keys {_keys(payload)})"
            )
        if len(data) != expected:
            raise EmbeddingError(
                f"embedding answer from {self._url} has {len(data)} rows for {expected} inputs"
            )
        if not all(isinstance(row, dict) for row in data):
            raise EmbeddingError(f"embedding answer from {self._url}: 'data' rows must be objects")
        indices = [row.get("index") for row in data]
        if all(i is None for i in indices):
            order = list(range(expected))  # no index at all: trust the list order
        else:
            order = [i if type(i) is int else -1 for i in indices]
        if sorted(order) != list(range(expected)):
            raise EmbeddingError(
                f"embedding answer from {self._url}: 'index' fields {indices[:10]} are not "
                f"a permutation of 0..{expected - 1}"
            )
        rows: list[Any] = [None] * expected
        for pos, row in zip(order, data, strict=True):
            rows[pos] = _decode(row.get("embedding"))
        widths = {len(r) for r in rows}
        if len(widths) != 1:
            raise EmbeddingError(
                f"embedding answer from {self._url} has rows of different widths {sorted(widths)}"
            )
        width = widths.pop()
        if width == 0:
            raise EmbeddingError(f"embedding answer from {self._url} has empty vectors")
        known = self._dimension
        if known is not None and width != known:
            raise self._width_error(width, known)
        try:
            mat = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError, OverflowError) as exc:  # Overflow: an int like 10**400
            raise EmbeddingError(
                f"embedding answer from {self._url} has non-numeric values: {exc}"
            ) from None
        out = normalize_rows(mat, expected, known or width)
        # The width is learned only from an answer that passed every check: learned before
        # the values were read, one answer of ``["x"]`` or NaN fixed it at 1 for good, and
        # every later (good) answer was refused as the wrong width.
        if known is None:
            with self._lock:
                if self._dimension is None:
                    self._dimension = width
                elif self._dimension != width:  # (another batch of this call learned first)
                    raise self._width_error(width, self._dimension)
        return out

    def _width_error(self, width: int, expected: int) -> EmbeddingError:
        return EmbeddingError(
            f"embedding answer from {self._url} has {width}-dimensional vectors, expected "
            f"{expected} (model {self._model!r}; check dimension=...)"
        )


def _decode(embedding: Any) -> Any:
    """A row's vector: a JSON list, or base64 little-endian float32 (``encoding_format``)."""
    if isinstance(embedding, list):
        return embedding
    if isinstance(embedding, str):
        try:
            raw = base64.b64decode(embedding, validate=True)
        except (binascii.Error, ValueError):
            raise EmbeddingError("an 'embedding' string is not valid base64") from None
        if len(raw) % 4:
            raise EmbeddingError("a base64 'embedding' is not a whole number of float32")
        return np.frombuffer(raw, dtype="<f4").tolist()
    raise EmbeddingError(f"a row's 'embedding' is {type(embedding).__name__}, expected a list")


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc


def _keys(payload: Any) -> list[str]:
    return sorted(map(str, payload))[:10] if isinstance(payload, dict) else []
