"""Fake rerank services on 127.0.0.1 speaking the real wire protocols over real HTTP.

* :class:`FakeRerankServer` answers ``POST /rerank`` in the Cohere shape
  (``{"results": [{"index", "relevance_score"}]}``, sorted by score like the real services) or
  the TEI shape (``[{"index", "score"}]``).
* :class:`FakeVikingDBRerankServer` answers ``POST /api/knowledge/service/rerank`` and verifies
  the Volcengine HMAC-SHA256 V4 signature by recomputing it here, independently of the SDK that
  the client uses: a request whose signature does not match gets the service's 401 /
  ``1000001`` answer.

Both take a script of :class:`Reply` objects (an error status, a delay, a malformed body) that
is consumed one per request before the well-behaved default answer applies, and record every
request so tests can check what the real client sent.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote

ScoreFn = Callable[[str, str], float]


def overlap_score(query: str, document: str) -> float:
    """Share of the query's words found in the document: a deterministic stand-in model."""
    q = set(re.findall(r"\w+", query.lower()))
    d = set(re.findall(r"\w+", document.lower()))
    return len(q & d) / len(q) if q else 0.0


@dataclass
class Reply:
    """One scripted answer. ``body`` dict/list is sent as JSON, str/bytes as-is."""

    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-case names, as HTTP header names are case-insensitive."""
    raw_body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.raw_body)


class _Server:
    """A threaded HTTP server with a reply script; subclasses compute the default answer."""

    def __init__(self) -> None:
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def base_url(self) -> str:
        return f"http://{self.address}"

    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one before the default applies."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length) if length else b""
                req = RecordedRequest(
                    method="POST",
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw_body=raw,
                )
                with outer._lock:
                    outer.requests.append(req)
                    reply = outer._script.popleft() if outer._script else None
                if reply is None:
                    reply = outer.answer(req)
                if reply.delay_s:
                    outer._stopping.wait(reply.delay_s)
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                body = reply.body
                if isinstance(body, bytes):
                    data = body
                elif isinstance(body, str):
                    data = body.encode("utf-8")
                else:
                    data = json.dumps(body).encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # a client that timed out and closed is expected here

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> _Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, req: RecordedRequest) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError


class FakeRerankServer(_Server):
    """``POST /rerank`` in the Cohere/Jina/vLLM shape (``flavor="cohere"``) or TEI's."""

    def __init__(self, flavor: str = "cohere", score_fn: ScoreFn = overlap_score) -> None:
        super().__init__()
        self.flavor = flavor
        self.score_fn = score_fn

    def __enter__(self) -> FakeRerankServer:
        self.start()
        return self

    def answer(self, req: RecordedRequest) -> Reply:
        if not req.path.endswith("/rerank"):
            return Reply(404, {"message": f"no route {req.path}"})
        try:
            body = req.json
        except ValueError:
            return Reply(400, {"message": "invalid JSON body"})
        query = body.get("query")
        docs = body.get("texts" if self.flavor == "tei" else "documents")
        if not isinstance(query, str) or not isinstance(docs, list) or not docs:
            return Reply(422, {"message": "query and a non-empty document list are required"})
        scores = [self.score_fn(query, d) for d in docs]
        ranked = sorted(range(len(docs)), key=lambda i: -scores[i])  # services sort by score
        if self.flavor == "tei":
            return Reply(200, [{"index": i, "score": scores[i]} for i in ranked])
        top_n = body.get("top_n") or len(docs)
        results = [{"index": i, "relevance_score": scores[i]} for i in ranked[:top_n]]
        return Reply(200, {"id": "fake", "results": results, "meta": {"billed_units": {}}})


# -- VikingDB --------------------------------------------------------------------------------


def _hmac(key: bytes, msg: str) -> bytes:
    return hmac.new(key, msg.encode("utf-8"), hashlib.sha256).digest()


def expected_signature(
    *,
    sk: str,
    method: str,
    path: str,
    query: str,
    headers: dict[str, str],
    signed_headers: list[str],
    body: bytes,
    x_date: str,
    region: str,
    service: str,
) -> str:
    """The Volcengine V4 signature, computed from the documented algorithm (not the SDK).

    canonical request = method, URI-encoded path, sorted query, ``name:value`` lines of the
    signed headers (lower-case names, sorted), the signed header list, hex SHA-256 of the body;
    string to sign = ``HMAC-SHA256``, X-Date, ``date/region/service/request``, hex SHA-256 of
    the canonical request; key = HMAC chain of the secret key over date, region, service,
    ``request``.
    """
    lower = {k.lower(): v for k, v in headers.items()}
    canonical_headers = "".join(f"{name}:{lower[name]}\n" for name in signed_headers)
    canonical = "\n".join(
        [
            method,
            quote(path).replace("%2F", "/"),
            query,
            canonical_headers,
            ";".join(signed_headers),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    date = x_date[:8]
    scope = f"{date}/{region}/{service}/request"
    to_sign = "\n".join(
        ["HMAC-SHA256", x_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = _hmac(_hmac(_hmac(_hmac(sk.encode("utf-8"), date), region), service), "request")
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


_AUTH = re.compile(
    r"^HMAC-SHA256 Credential=(?P<ak>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/(?P<service>[^/]+)"
    r"/request, SignedHeaders=(?P<signed>[^,]+), Signature=(?P<sig>[0-9a-f]{64})$"
)


def viking_error(status: int, code: int, message: str) -> Reply:
    return Reply(status, {"code": code, "message": message, "request_id": "fake-req"})


class FakeVikingDBRerankServer(_Server):
    """VikingDB's knowledge-base rerank endpoint, with signature verification."""

    PATH = "/api/knowledge/service/rerank"

    def __init__(
        self,
        *,
        ak: str,
        sk: str,
        region: str = "cn-beijing",
        service: str = "air",
        score_fn: ScoreFn = overlap_score,
        max_skew_s: float = 900.0,
    ) -> None:
        super().__init__()
        self.ak, self.sk, self.region, self.service = ak, sk, region, service
        self.score_fn = score_fn
        self.max_skew_s = max_skew_s
        self.auth_failures: list[str] = []

    def __enter__(self) -> FakeVikingDBRerankServer:
        self.start()
        return self

    def verify(self, req: RecordedRequest) -> str | None:
        """``None`` when the signature is valid, else why not."""
        auth = req.headers.get("authorization", "")
        m = _AUTH.match(auth)
        if m is None:
            return "malformed Authorization header"
        if m["ak"] != self.ak:
            return "unknown access key"
        if (m["region"], m["service"]) != (self.region, self.service):
            return "wrong credential scope"
        x_date = req.headers.get("x-date", "")
        try:
            when = dt.datetime.strptime(x_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
        except ValueError:
            return "malformed X-Date"
        if abs((dt.datetime.now(dt.UTC) - when).total_seconds()) > self.max_skew_s:
            return "X-Date outside the allowed skew"
        if m["date"] != x_date[:8]:
            return "credential date differs from X-Date"
        signed = m["signed"].split(";")
        if signed != sorted(signed) or not set(signed) <= set(req.headers):
            return "signed headers missing or unsorted"
        if not {"x-date", "x-content-sha256"} <= set(signed):
            return "X-Date and X-Content-Sha256 must be signed"
        if req.headers.get("x-content-sha256") != hashlib.sha256(req.raw_body).hexdigest():
            return "body hash mismatch"
        path, _, query = req.path.partition("?")
        want = expected_signature(
            sk=self.sk,
            method=req.method,
            path=path,
            query=query,
            headers=req.headers,
            signed_headers=signed,
            body=req.raw_body,
            x_date=x_date,
            region=self.region,
            service=self.service,
        )
        if not hmac.compare_digest(want, m["sig"]):
            return "signature mismatch"
        return None

    def answer(self, req: RecordedRequest) -> Reply:
        if req.path.partition("?")[0] != self.PATH:
            return Reply(404, {"code": 1000003, "message": f"no route {req.path}"})
        problem = self.verify(req)
        if problem is not None:
            self.auth_failures.append(problem)
            return viking_error(401, 1000001, "unauthorized")
        try:
            body = req.json
        except ValueError:
            return viking_error(400, 1000003, "invalid request: body is not JSON")
        datas = body.get("datas")
        if not isinstance(datas, list) or not 1 <= len(datas) <= 200:
            return viking_error(400, 1000003, "invalid request: datas must hold 1-200 items")
        if not isinstance(body.get("rerank_model"), str):
            return viking_error(400, 1000003, "invalid request: rerank_model")
        scores = []
        for item in datas:
            if not isinstance(item, dict) or "query" not in item or "content" not in item:
                return viking_error(400, 1000003, "invalid request: datas item")
            text = item["content"]
            if item.get("title"):
                text = f"{item['title']}\n{text}"
            scores.append(self.score_fn(str(item["query"]), text))
        return Reply(
            200,
            {
                "code": 0,
                "message": "success",
                "request_id": "fake-req",
                "data": {"scores": scores, "token_usage": 7 * len(datas)},
            },
        )
