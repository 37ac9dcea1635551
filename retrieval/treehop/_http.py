"""Shared HTTP plumbing for remote providers: total deadlines, bounded retries, redaction.

Retries happen only where they can help: connection errors, timeouts, 429 and 5xx. A 4xx other
than 429 is the caller's fault and is raised at once. ``Retry-After`` is honoured (capped).

Why a *total* deadline on top of httpx's timeouts: httpx's ``read`` timeout bounds each socket
read, not the response, so a server that trickles one byte every half second keeps a call open
for as long as it likes, and retries multiply whatever a single attempt costs. ``deadline_s``
bounds the whole call -- connect, every read, every retry and every backoff sleep:

* async: the call runs under :func:`asyncio.timeout`; cancellation closes the connection;
* sync: the socket layer of the client's httpx transport is wrapped (:func:`sync_client`, or
  on first use for a caller's own ``httpx.Client``) so that every socket operation waits at
  most until the deadline; the read in progress fails as soon as it passes. A custom
  transport without httpcore's connection pool (a mock, a third-party transport) keeps only
  the per-attempt timeouts clamped to the time left and the retry loop's deadline check.

Answers are read with a size cap (:data:`MAX_RESPONSE_BYTES`, decoded bytes, so a
compression bomb counts at its real size): a server that streams without end, or declares a
huge ``Content-Length``, gets :class:`ResponseTooLarge` instead of the process's memory.

When the deadline passes, :class:`DeadlineExceeded` is raised; each provider turns it into its
own typed error (:class:`~treehop.errors.EmbeddingError`, ``LLMError``, ``RerankError``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import importlib
import importlib.util
import io
import random
import re
import ssl
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpcore
import httpx
from pydantic import SecretStr

from .errors import InvalidConfigError, TreehopError
from .redaction import (
    install_log_filter,
    redact,
    redact_url,
    register_secret,
    register_url_secrets,
)
from .secrets import SECRET_NAME_PARTS
from .validation import check_deadline as check_deadline  # (moved: importers keep this name)
from .validation import shown_value

install_log_filter()

RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_T = TypeVar("_T")
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
"""The largest answer (decoded) a remote client reads: 64 MiB, ample for a 2048-text batch of
1536-dimensional embeddings as JSON (~60 MB would need 3072 dimensions at full batch)."""
_REBUILT_DROP = frozenset({"content-encoding", "content-length", "transfer-encoding"})
MAX_ERROR_BODY_CHARS = 300


MAX_SECONDS = 1e7
"""The longest duration (a deadline, a socket timeout, a backoff) a remote client takes:
about 115 days. Past some 9e9 s a socket timeout overflows the platform's ``time_t``."""


def check_seconds(value: object, error: type[Exception], name: str, *, zero: bool = False) -> float:
    """A duration argument: a number in ``(0, MAX_SECONDS)`` (``[0, ...)`` with ``zero``),
    else ``error``. Why (helper attacks68): a socket timeout or a backoff was checked as
    ``> 0`` or not at all, so ``timeout_s=inf`` (or ``1e12``) made every sync call of the
    model fail with "OverflowError: timestamp out of range for platform time_t", and
    ``backoff_s`` of NaN, -1, ``None`` or ``"x"`` failed each retried call with an internal
    ``ValueError`` / ``TypeError`` (NaN hung an async call until its deadline, for good
    without one): accepted at construction, unusable at the first call."""
    # (compared before ``float()``: an int past float range, 10**400, raised OverflowError;
    # NaN fails every comparison)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and (value >= 0 if zero else value > 0) and value < MAX_SECONDS:  # type: ignore[operator]
        return float(value)  # type: ignore[arg-type]
    low = "non-negative" if zero else "positive"
    raise error(
        f"{name} must be a {low} number of seconds below {MAX_SECONDS:g}, got {shown_value(value)}"
    )


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` extra attempts after the first, exponential backoff with jitter.
    Checked when made (:class:`~treehop.errors.InvalidConfigError`): a backoff of NaN or
    -1 failed every retried call (helper attacks68)."""

    max_retries: int = 2
    backoff_s: float = 0.25
    max_backoff_s: float = 4.0

    def __post_init__(self) -> None:
        r = self.max_retries
        if isinstance(r, bool) or not isinstance(r, int) or r < 0:
            raise InvalidConfigError(f"max_retries must be an int >= 0, got {r!r:.100}")
        check_seconds(self.backoff_s, InvalidConfigError, "backoff_s", zero=True)
        check_seconds(self.max_backoff_s, InvalidConfigError, "max_backoff_s", zero=True)

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            ra = response.headers.get("retry-after")
            if ra:
                try:
                    value = float(ra)
                except ValueError:
                    value = -1.0
                if value == value and value >= 0:  # NaN and negatives are ignored
                    return min(value, self.max_backoff_s)
        base = min(self.backoff_s * (2**attempt), self.max_backoff_s)
        return float(base * (0.5 + random.random() / 2))


class HTTPStatusFailure(Exception):
    """A final non-success HTTP status after retries (carries the response).

    The message holds a redacted excerpt of the body: servers echo keys in 401 pages.
    """

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(
            f"HTTP {response.status_code} from {redact_url(response.request.url)}: "
            f"{body_excerpt(response)}"
        )


class ResponseTooLarge(httpx.HTTPError):
    """An answer larger than :data:`MAX_RESPONSE_BYTES` (declared or streamed)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"answer larger than {limit} bytes (MAX_RESPONSE_BYTES)")


class DeadlineExceeded(Exception):
    """The whole call (connect, reads, retries, backoff) ran past its deadline."""

    def __init__(self, deadline_s: float) -> None:
        self.deadline_s = deadline_s
        super().__init__(f"no complete answer within the {deadline_s:g}s deadline")


_LINE_BREAKS = re.compile(r"[\t\n\r]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _one_line(text: str) -> str:
    """``text`` on one line with C0 / C1 controls shown as U+FFFD. Why: a server's body (or
    an exception quoting its bytes) went into error messages as it was, and from there to a
    terminal (``treehop: error: ...``, ``plan: fallback (...)``, ``rerank fell back: ...``)
    and to logs: an answer of ``\x1b]0;...\x07\x1b[2J`` retitled and cleared the user's
    terminal."""
    return _CONTROLS.sub("\ufffd", _LINE_BREAKS.sub(" ", text))


def body_excerpt(response: httpx.Response, max_chars: int = MAX_ERROR_BODY_CHARS) -> str:
    """The start of a response body, on one line, redacted (for error messages)."""
    try:
        text = response.text
    except (httpx.ResponseNotRead, UnicodeDecodeError):  # pragma: no cover - defensive
        return "<unreadable body>"
    return _one_line(redact(text[: max_chars * 2]))[:max_chars]


def error_text(exc: BaseException, max_chars: int = MAX_ERROR_BODY_CHARS) -> str:
    """``Type: message`` of a transport failure, redacted, at most ``max_chars`` characters:
    the message may quote the server's bytes (h11 quotes an illegal status line whole: a
    server's 12,000 bytes of garbage made a 12,000-character error). An exception group
    (anyio wraps an async ``connect()``'s ``OverflowError`` for a port past 65535 in one) is
    told by its first leaf: "unhandled errors in a TaskGroup (1 sub-exception)" named no
    cause."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return _one_line(redact(f"{type(exc).__name__}: {exc}"))[:max_chars]


def state_without_pools(obj: object, pools: tuple[str, ...]) -> dict[str, Any]:
    """``obj``'s attributes for pickling, less its ``_lock`` and the connection pools named
    in ``pools``. Why: a client of an HTTP API held a ``threading.Lock`` and its pools, so
    ``pickle.dumps`` (multiprocessing, a cache, a framework that ships components to worker
    processes) raised a raw ``TypeError``; neither holds configuration, and a pool of sockets
    cannot cross a process: the copy opens its own on first use."""
    return {k: v for k, v in vars(obj).items() if k != "_lock" and k not in pools}


def register_header_secrets(headers: Mapping[Any, Any]) -> None:
    """Register the values of a client's extra headers whose names say they carry a
    credential (``api-key`` of Azure OpenAI, ``x-api-key``, ``Authorization``, a
    ``X-Auth-Token``), whole and, for ``Bearer X`` / ``Basic X``, the ``X``. Why (helper
    attacks71): a key given as a header rather than as ``api_key`` was never registered,
    and a server echoing it (``Incorrect api-key provided: ...``) put it whole into the
    client's error."""
    for name, value in headers.items():
        low = str(name).lower()
        if isinstance(value, str) and ("auth" in low or any(p in low for p in SECRET_NAME_PARTS)):
            register_secret(value)
            register_secret(value.strip().rpartition(" ")[2])


def restore_without_pools(
    obj: object,
    state: object,
    pools: tuple[str, ...],
    *,
    url_key: str,
    error: type[TreehopError],
    secret_url: bool = False,
) -> None:
    """The other half of :func:`state_without_pools`: the attributes back, a new lock, no
    pools; the URL's credentials and the API key registered with :mod:`treehop.redaction`
    again, since a new process's registry does not hold them (an error echoing the key
    would otherwise show it).

    A state this code did not write (another version's pickle, a modified one: not a dict
    of names, its URL under ``url_key`` not a string, its key neither a ``SecretStr`` nor
    ``None``) raises ``error`` naming the class, before anything is set. Why (helper
    attacks71): a raw ``KeyError`` / ``AttributeError`` / ``TypeError`` escaped, and a key
    given as a plain string would have been kept where every other path holds a
    ``SecretStr``, shown by a ``vars()`` or a traceback's locals."""
    what = type(obj).__name__
    if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
        raise error(f"cannot unpickle {what}: its state is not one treehop wrote")
    url, api_key = state.get(url_key), state.get("_api_key")
    if secret_url:  # (the URL kept as a SecretStr, its credentials with it: leftovers63)
        url = url.get_secret_value() if isinstance(url, SecretStr) else None
    if not isinstance(url, str) or not (api_key is None or isinstance(api_key, SecretStr)):
        raise error(
            f"cannot unpickle {what}: its state has no URL string or a key that is not a "
            "SecretStr (written by another version?); build it again with its settings"
        )
    vars(obj).update(state)
    vars(obj)["_lock"] = threading.Lock()
    for name in pools:
        vars(obj)[name] = None
    register_url_secrets(url)
    if api_key is not None:
        register_secret(api_key.get_secret_value())
    headers = state.get("_extra_headers")
    if isinstance(headers, Mapping):
        register_header_secrets(headers)


def endpoint(base_url: str, path: str) -> str:
    """``path`` appended to the path of ``base_url``, before its query (``?api-version=`` of
    Azure's endpoints, ``?key=`` of Google's); the URL's credentials registered as secrets
    (:func:`~treehop.redaction.register_url_secrets`). Why: the clients appended their route
    to the whole URL, so ``https://h/v1?key=K`` was sent as ``https://h/v1?key=K/embeddings``:
    the route went into the key (the request never reached the API) and a server echoing the
    key put it, unregistered, into the error."""
    register_url_secrets(base_url)
    sent = base_url.partition("#")[0]  # (a fragment is never sent: the route went into it)
    head, mark, query = sent.partition("?")
    head = head.rstrip("/")
    return f"{head}/{path.lstrip('/')}{mark}{query}"


def url_path(url: str) -> str:
    """The part of ``url`` before its query or fragment, without a trailing ``/``."""
    return url.partition("?")[0].partition("#")[0].rstrip("/")


# -- sync deadline enforcement ---------------------------------------------------------------

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "treehop_http_deadline", default=None
)


def _clamp(timeout: float | None, exc: type[Exception]) -> float | None:
    """``timeout`` limited to the time left before the current deadline (if any)."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise exc("the call's total deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every operation waits at most until the call's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(
            ssl_context, server_hostname, _clamp(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, inner: httpcore.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host,
            port,
            _clamp(timeout, httpcore.ConnectTimeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.NetworkStream:  # pragma: no cover - no unix sockets in treehop
        stream = self._inner.connect_unix_socket(
            path, _clamp(timeout, httpcore.ConnectTimeout), socket_options=socket_options
        )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:  # pragma: no cover - used by httpcore retries only
        self._inner.sleep(seconds)


def sync_client(
    timeout: float | httpx.Timeout,
    verify: ssl.SSLContext | bool = True,
    *,
    owner: object | None = None,
) -> httpx.Client:
    """An ``httpx.Client`` whose sockets honour the deadline of :func:`request`.

    The deadline-aware backend is installed on httpx's own connection pool (``_pool`` and
    ``_network_backend`` are private; the fault tests fail loudly should httpx rename them).

    ``owner``: the object the client is made for; the client is closed when ``owner`` is
    garbage-collected. Why (helper leftovers67a): an embedder or a chat model is often built,
    used and dropped without ``close()`` (the rerankers' rule, written for them alone), and
    its pooled keep-alive socket was left to the garbage collector: a ``ResourceWarning`` at
    whatever later moment collected it, a failure under warnings-as-errors (a test of stop
    66's CI run failed on one some earlier test had dropped)."""
    transport = httpx.HTTPTransport(verify=verify)
    _install_backend(transport)
    client = httpx.Client(timeout=timeout, transport=transport)
    if owner is not None:
        close_with(owner, client, client.close)
    return client


_CLOSERS: weakref.WeakKeyDictionary[Any, weakref.finalize[Any, Any]] = weakref.WeakKeyDictionary()
"""A pool -> the finaliser that closes it when its owner is collected (:func:`close_with`)."""


def close_with(
    owner: object, pool: object, close: Callable[..., Any], /, *args: Any
) -> weakref.finalize[Any, Any]:
    """Call ``close(*args)`` when ``owner`` is garbage-collected, unless :func:`release`
    (``pool``) comes first: the pool an owner closes itself must not stay registered.

    Why (helper attacks80): the finaliser holds its pool (and its loop) until the owner
    dies, so an owner that closes its pool and opens another (``close()`` then a new call;
    ``asyncio.run`` per call, a pool per loop) kept every pool it ever opened, with the
    closed loops: 100 ``asyncio.run(llm.acomplete(...))`` held 100 ``AsyncClient`` and
    100 closed event loops for the model's life."""
    closer = weakref.finalize(owner, close, *args)
    _CLOSERS[pool] = closer
    return closer


def release(pool: object) -> None:
    """Forget ``pool``'s finaliser (:func:`close_with`): its owner closed it, or will."""
    closer = _CLOSERS.pop(pool, None)
    if closer is not None:
        closer.detach()


def close_client(client: httpx.Client) -> None:
    """Close a pool :func:`sync_client` made for an owner, and forget its finaliser."""
    release(client)
    client.close()


def _install_backend(transport: object) -> bool:
    """Wrap an httpx transport's socket layer so that it honours :func:`deadline_scope`.

    Returns False for a transport without httpcore's pool (a custom or mock transport), which
    then keeps only the per-attempt clamping of :func:`request`.
    """
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, _DeadlineBackend):
        return True
    if pool is None or not isinstance(backend, httpcore.NetworkBackend):
        return False
    pool._network_backend = _DeadlineBackend(backend)
    return True


@contextmanager
def deadline_scope(deadline_s: float | None) -> Iterator[float | None]:
    """Sync code inside runs under a total deadline (yields its monotonic end, or ``None``).

    Sockets of clients made by :func:`sync_client` honour it; other code checks the end.
    A scope inside another ends no later than the outer one: a caller's total deadline over
    several requests (:class:`~treehop.rerankers.llm_rerank.LLMReranker`'s batches) holds
    inside each request's own scope.
    """
    if deadline_s is None:
        yield None
        return
    end = time.monotonic() + deadline_s
    outer = _DEADLINE.get()
    if outer is not None:
        end = min(end, outer)
    token = _DEADLINE.set(end)
    try:
        yield end
    finally:
        _DEADLINE.reset(token)


def attempt_timeout(client_timeout: httpx.Timeout, end: float | None) -> httpx.Timeout | None:
    """The client's timeouts, each clamped to the time left (``None``: unchanged)."""
    if end is None:
        return None
    left = max(end - time.monotonic(), 0.001)

    def clip(v: float | None) -> float:
        return left if v is None else min(v, left)

    return httpx.Timeout(
        connect=clip(client_timeout.connect),
        read=clip(client_timeout.read),
        write=clip(client_timeout.write),
        pool=clip(client_timeout.pool),
    )


def call_with_deadline(fn: Callable[[], _T], deadline_s: float | None) -> _T:
    """Run a blocking call that has no total deadline of its own, waiting at most ``deadline_s``.

    For SDKs (the VikingDB one) whose ``timeout`` bounds each socket read but not a response
    that trickles in: the call runs in a daemon thread and the caller stops waiting at the
    deadline (:class:`DeadlineExceeded`). The abandoned thread ends when the SDK's own
    per-read timeout fires; being a daemon, it never delays interpreter exit.
    """
    if deadline_s is None:
        return fn()
    future: concurrent.futures.Future[_T] = concurrent.futures.Future()

    def run() -> None:
        if not future.set_running_or_notify_cancel():  # pragma: no cover - never cancelled
            return
        try:
            future.set_result(fn())
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="treehop-deadline-call", daemon=True).start()
    try:
        return future.result(timeout=deadline_s)
    except concurrent.futures.TimeoutError:
        raise DeadlineExceeded(deadline_s) from None


# -- requests --------------------------------------------------------------------------------


def _declared_too_large(response: httpx.Response, limit: int) -> bool:
    declared = response.headers.get("content-length", "")
    return declared.isdigit() and int(declared) > limit


def _rebuilt(response: httpx.Response, body: bytes) -> httpx.Response:
    """A fully read response (public API only): the decoded body, headers without encoding."""
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _REBUILT_DROP]
    return httpx.Response(
        response.status_code, headers=headers, content=body, request=response.request
    )


@functools.cache
def _have_zstd() -> bool:
    return importlib.util.find_spec("zstandard") is not None


_INFLATE_WBITS = {"gzip": 31, "x-gzip": 31, "deflate": 15}
"""zlib's window bits for the HTTP codings treehop decodes itself (gzip: a gzip header;
deflate: a zlib header, or raw deflate as httpx also accepts)."""


@functools.cache
def _bounded_brotli() -> Any | None:
    """The brotli module httpx decodes ``br`` with, where its decoder can stop at an output
    limit (``process(data, output_buffer_limit=...)``: brotli >= 1.2, brotlicffi >= 1.2);
    ``None`` where there is none or it cannot be bounded (:func:`_brotli_unbounded`)."""
    for name in ("brotli", "brotlicffi"):  # (httpx's order)
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        try:
            module.Decompressor().process(b"", output_buffer_limit=1)
        except TypeError:
            return None
        return module
    return None


@functools.cache
def _brotli_unbounded() -> bool:
    """Whether httpx would decode ``br`` (a brotli module is installed) but treehop cannot
    bound it (an older module without an output limit)."""
    found = any(importlib.util.find_spec(n) is not None for n in ("brotli", "brotlicffi"))
    return found and _bounded_brotli() is None


def _own_codings(response: httpx.Response) -> list[str] | None:
    """The codings of an answer that treehop decodes itself, bounded (:func:`_decode_capped`),
    in the order they were applied; ``None`` where httpx's decoder is bounded enough.

    Why: httpx decodes each raw chunk whole, and the size cap is checked after each chunk.
    For one gzip or deflate coding (~1,000:1 at most) a chunk stays ~66 MB; but zstd encodes
    zeros ~40,000:1 (a 65 KB answer was 2 GiB, 4.2 GB peak), brotli ~660,000:1 (1 GiB of
    zeros is a 1,617-byte answer), and stacked codings multiply: ``Content-Encoding: gzip,
    gzip`` of 1 GiB of zeros is a 1,827-byte answer, which httpx decoded to 1 GiB in one step
    (2.1 GB peak, 5.7 s) before the cap was checked. A coding httpx does not know (``br``
    without a brotli module, ``x-foo``) is skipped as httpx skips it -- before, any such token
    sent the whole answer back to httpx's path, stacked gzips and all. zstd and br are decoded
    here only where their modules are installed (without them httpx does not decode them
    either); a br answer where the installed brotli cannot stop at a limit is refused
    (treehop does not ask for br there, :func:`_accept_encoding`)."""
    codings = _known_codings(response.headers.get("content-encoding", ""))
    if not codings or (len(codings) == 1 and codings[0] in _INFLATE_WBITS):
        return None
    return codings


def _known_codings(header: str) -> list[str]:
    """The codings of a ``Content-Encoding`` header that treehop decodes (bounded), in the
    order applied; a token it does not know is skipped, as httpx skips it."""
    codings = [c.strip().lower() for c in header.split(",") if c.strip()]
    if "br" in codings and _brotli_unbounded():
        raise httpx.DecodingError("a br answer this brotli module cannot decode bounded")
    known = (
        set(_INFLATE_WBITS)
        | ({"zstd"} if _have_zstd() else set())
        | ({"br"} if _bounded_brotli() is not None else set())
    )
    return [c for c in codings if c in known]


def accepted_codings() -> str:
    """An ``Accept-Encoding`` value of the codings treehop decodes bounded (for a client
    that is not httpx: the VikingDB SDK's ``requests`` session)."""
    out = ["gzip", "deflate"]
    if _have_zstd():
        out.append("zstd")
    if _bounded_brotli() is not None:
        out.append("br")
    return ", ".join(out)


def decode_capped(raw: bytes, content_encoding: str, limit: int = MAX_RESPONSE_BYTES) -> bytes:
    """A raw (still encoded) answer body decoded through its ``Content-Encoding``, each step
    held to ``limit`` bytes (:class:`ResponseTooLarge` past it; ``httpx.DecodingError`` for a
    broken body): what :func:`send_capped` does, for a client that is not httpx."""
    if len(raw) > limit:
        raise ResponseTooLarge(limit)
    codings = _known_codings(content_encoding)
    return _decode_capped(raw, codings, limit) if codings else raw


def _accept_encoding(req: httpx.Request) -> None:
    """Drop ``br`` from what ``req`` asks for where treehop cannot bound its decoding (httpx
    asks for it whenever any brotli module is installed), so such servers answer otherwise."""
    if not _brotli_unbounded() or "accept-encoding" not in req.headers:
        return
    asked = [c.strip() for c in req.headers["accept-encoding"].split(",")]
    req.headers["accept-encoding"] = ", ".join(c for c in asked if c and c.lower() != "br")


def _unbrotli(raw: bytes, limit: int) -> bytes:
    """A br body decoded to at most ``limit`` bytes (:class:`ResponseTooLarge` past it)."""
    module = _bounded_brotli()
    assert module is not None  # (only called for codings _own_codings kept)
    decoder = module.Decompressor()
    try:
        out = decoder.process(raw, output_buffer_limit=limit + 1)
    except module.error as exc:
        raise httpx.DecodingError(f"bad br body: {exc}") from None
    if len(out) > limit:
        raise ResponseTooLarge(limit)
    if not decoder.is_finished():
        raise httpx.DecodingError("bad br body: truncated")
    return bytes(out)


def _unzstd(raw: bytes, limit: int) -> bytes:
    """A zstd body decoded to at most ``limit`` bytes (:class:`ResponseTooLarge` past it)."""
    import zstandard  # (httpx decodes zstd only where zstandard is installed)

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw))
        out = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise httpx.DecodingError(f"bad zstd body: {exc}") from None
    if len(out) > limit:
        raise ResponseTooLarge(limit)
    return bytes(out)


def _inflate(raw: bytes, coding: str, limit: int) -> bytes:
    """A gzip or deflate body decoded to at most ``limit`` bytes."""
    wbits = _INFLATE_WBITS[coding]
    for bits in (wbits, -15) if coding == "deflate" else (wbits,):
        try:
            inflater = zlib.decompressobj(bits)
            out = inflater.decompress(raw, limit + 1)
            if len(out) <= limit and not inflater.unconsumed_tail:
                out += inflater.flush()
        except zlib.error as exc:
            if bits == -15 or coding != "deflate":
                raise httpx.DecodingError(f"bad {coding} body: {exc}") from None
            continue
        if len(out) > limit or inflater.unconsumed_tail:
            raise ResponseTooLarge(limit)
        return out
    raise AssertionError("unreachable")  # pragma: no cover


def _decode_capped(raw: bytes, codings: list[str], limit: int) -> bytes:
    """``raw`` decoded through ``codings`` (the last applied is undone first), each step
    held to ``limit`` bytes of output (:class:`ResponseTooLarge` past it)."""
    data = raw
    for coding in reversed(codings):
        if coding == "zstd":
            data = _unzstd(data, limit)
        elif coding == "br":
            data = _unbrotli(data, limit)
        else:
            data = _inflate(data, coding, limit)
    return data


def send_capped(client: httpx.Client, req: httpx.Request) -> httpx.Response:
    """Send ``req`` and read at most :data:`MAX_RESPONSE_BYTES` of its answer."""
    limit = MAX_RESPONSE_BYTES
    _accept_encoding(req)
    response = client.send(req, stream=True)
    try:
        if _declared_too_large(response, limit):
            raise ResponseTooLarge(limit)
        codings = _own_codings(response)
        if codings is not None:
            raw = bytearray()
            for chunk in response.iter_raw():
                raw += chunk
                if len(raw) > limit:
                    raise ResponseTooLarge(limit)
            return _rebuilt(response, _decode_capped(bytes(raw), codings, limit))
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > limit:
                raise ResponseTooLarge(limit)
    finally:
        response.close()
    return _rebuilt(response, bytes(body))


async def asend_capped(client: httpx.AsyncClient, req: httpx.Request) -> httpx.Response:
    """The async twin of :func:`send_capped`."""
    limit = MAX_RESPONSE_BYTES
    _accept_encoding(req)
    response = await client.send(req, stream=True)
    try:
        if _declared_too_large(response, limit):
            raise ResponseTooLarge(limit)
        codings = _own_codings(response)
        if codings is not None:
            raw = bytearray()
            async for chunk in response.aiter_raw():
                raw += chunk
                if len(raw) > limit:
                    raise ResponseTooLarge(limit)
            return _rebuilt(response, _decode_capped(bytes(raw), codings, limit))
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise ResponseTooLarge(limit)
    finally:
        await response.aclose()
    return _rebuilt(response, bytes(body))


async def arequest(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    json: Any = None,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy = RetryPolicy(),
    deadline_s: float | None = None,
) -> httpx.Response:
    """Send with retries; return a 2xx response or raise.

    Raises ``HTTPStatusFailure``, an ``httpx`` transport error, or :class:`DeadlineExceeded`
    when ``deadline_s`` (connect + all reads + retries + backoff) passes.
    """
    if deadline_s is None:
        return await _arequest(client, method, url, json, content, headers, retry)
    try:
        async with asyncio.timeout(deadline_s):
            return await _arequest(client, method, url, json, content, headers, retry)
    except TimeoutError:
        raise DeadlineExceeded(deadline_s) from None


async def _arequest(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    json: Any,
    content: bytes | None,
    headers: Mapping[str, str] | None,
    retry: RetryPolicy,
) -> httpx.Response:
    last_exc: Exception | None = None
    for attempt in range(retry.max_retries + 1):
        response: httpx.Response | None = None
        try:
            req = client.build_request(method, url, json=json, content=content, headers=headers)
            response = await asend_capped(client, req)
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
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    retry: RetryPolicy = RetryPolicy(),
    deadline_s: float | None = None,
) -> httpx.Response:
    """The sync twin of :func:`arequest` (same errors, same deadline)."""
    last_exc: Exception | None = None
    if deadline_s is not None:
        # A caller's own client gets the deadline-aware socket layer too. It only acts while
        # a deadline is set, so the client behaves as before for everything else.
        _install_backend(getattr(client, "_transport", None))
    with deadline_scope(deadline_s) as end:
        for attempt in range(retry.max_retries + 1):
            if end is not None and time.monotonic() >= end:
                assert deadline_s is not None
                raise DeadlineExceeded(deadline_s)
            response: httpx.Response | None = None
            try:
                timeout = attempt_timeout(client.timeout, end)
                req = client.build_request(
                    method,
                    url,
                    json=json,
                    content=content,
                    headers=headers,
                    timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout,
                )
                response = send_capped(client, req)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if end is not None and time.monotonic() >= end:
                    assert deadline_s is not None
                    raise DeadlineExceeded(deadline_s) from None
                last_exc = exc
            else:
                if response.status_code < 300:
                    return response
                if response.status_code not in RETRY_STATUS:
                    raise HTTPStatusFailure(response)
                last_exc = HTTPStatusFailure(response)
            if attempt < retry.max_retries:
                pause = retry.delay(attempt, response)
                if end is not None:
                    pause = min(pause, max(end - time.monotonic(), 0.0))
                time.sleep(pause)
    assert last_exc is not None
    raise last_exc


def truncate(text: str, max_chars: int) -> str:
    """Bound a text sent to a remote model (a cheap, tokenizer-free length bound)."""
    return text if len(text) <= max_chars else text[:max_chars]
