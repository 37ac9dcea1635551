"""The plumbing every fake server shares: a threaded ``http.server`` on ``127.0.0.1:0``.

Each fake differs only in how it answers a request, so the socket handling, the request log,
the reply script and the start/stop lifecycle live here once. A subclass implements
:meth:`FakeHTTPServer.answer` (and :meth:`FakeHTTPServer.answer_get` if it serves GETs);
:meth:`FakeHTTPServer.respond` decides whether a scripted reply comes before validation (the
default: a scripted 5xx is sent whatever the request) or after it (override it).
"""

from __future__ import annotations

import json
import socket
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass
class Reply:
    """One answer: ``body`` dict/list is sent as JSON, str/bytes as-is (malformed bodies)."""

    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    """Slept (interruptibly: :meth:`FakeHTTPServer.stop` cuts it short) before answering."""
    headers: dict[str, str] = field(default_factory=dict)
    together: int = 0
    """When set, the answer waits until this many requests have been in flight at once
    (then goes at once), ``delay_s`` at most: a concurrency test then checks
    :attr:`FakeHTTPServer.max_in_flight`, an event, not a wall-clock bound ("4 requests
    of 0.4 s answered within 1.2 s" failed on a loaded machine)."""


@dataclass
class RecordedRequest:
    """What the client sent; header names are lower-case (HTTP names are case-insensitive)."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes

    @property
    def raw(self) -> bytes:
        return self.raw_body

    @property
    def json(self) -> Any:
        """The body parsed as JSON; ``ValueError`` when it is not JSON (or empty)."""
        return json.loads(self.raw_body)

    @property
    def body(self) -> Any:
        """The body parsed as JSON, ``None`` when it is not JSON."""
        try:
            return json.loads(self.raw_body)
        except ValueError:
            return None


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a sleeping (slow) handler must not block stop()

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that timed out and closed is expected in these tests


class FakeHTTPServer:
    """A threaded HTTP server with a request log and a reply script.

    Use as a context manager (or :meth:`start` / :meth:`stop`); :attr:`address` is
    ``127.0.0.1:PORT`` once started.
    """

    text_content_type = "application/json"
    """The Content-Type sent with a str/bytes body (some fakes send plain text)."""

    def __init__(self) -> None:
        self._script: deque[Reply] = deque()
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self.requests: list[RecordedRequest] = []
        self._arrivals = threading.Condition(self._lock)
        self._in_flight = 0
        self.max_in_flight = 0
        """The most POSTs being answered at once so far."""
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- script -----------------------------------------------------------------------------
    def script(self, *replies: Reply) -> None:
        """Queue replies; each request takes the next one before the default applies."""
        with self._lock:
            self._script.extend(replies)

    def next_scripted(self) -> Reply | None:
        with self._lock:
            return self._script.popleft() if self._script else None

    # -- answering (subclasses) -------------------------------------------------------------
    def respond(self, req: RecordedRequest) -> Reply:
        """The reply to a POST: the next scripted one, else :meth:`answer`."""
        scripted = self.next_scripted()
        return scripted if scripted is not None else self.answer(req)

    def answer(self, req: RecordedRequest) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    def answer_get(self, req: RecordedRequest) -> Reply:
        return Reply(501, {"message": f"GET {req.path} is not supported"})

    # -- lifecycle --------------------------------------------------------------------------
    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (servers with a path prefix extend it)."""
        return f"http://{self.address}"

    def start(self) -> Self:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet test output
                return

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in two writes; without NODELAY, Nagle's algorithm
                # and the client's delayed ACK add ~40 ms to every response.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _record(self, method: str) -> RecordedRequest:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                req = RecordedRequest(
                    method, self.path, {k.lower(): v for k, v in self.headers.items()}, raw
                )
                with outer._lock:
                    outer.requests.append(req)
                return req

            def do_GET(self) -> None:
                self._send(outer.answer_get(self._record("GET")))

            def do_POST(self) -> None:
                req = self._record("POST")
                with outer._arrivals:
                    outer._in_flight += 1
                    outer.max_in_flight = max(outer.max_in_flight, outer._in_flight)
                    outer._arrivals.notify_all()
                try:
                    self._send(outer.respond(req))
                finally:
                    with outer._arrivals:
                        outer._in_flight -= 1

            def _send(self, reply: Reply) -> None:
                if reply.together:
                    with outer._arrivals:
                        outer._arrivals.wait_for(
                            lambda: (
                                outer.max_in_flight >= reply.together or outer._stopping.is_set()
                            ),
                            timeout=reply.delay_s,
                        )
                elif reply.delay_s:
                    outer._stopping.wait(reply.delay_s)
                body = reply.body
                if isinstance(body, bytes | str):
                    data = body if isinstance(body, bytes) else body.encode("utf-8")
                    ctype = outer.text_content_type
                else:
                    data, ctype = json.dumps(body).encode("utf-8"), "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test); nothing to answer

        self._stopping.clear()
        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._arrivals:
            self._arrivals.notify_all()
        if self._thread is not None and self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
