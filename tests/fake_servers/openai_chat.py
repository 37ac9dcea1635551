"""A scriptable fake of the OpenAI chat-completions API on 127.0.0.1, over real HTTP.

Each request to ``POST /v1/chat/completions`` takes the next scripted :class:`Reply` (or the
default one when the script is empty): a canned answer, an error status, a delay (for client
timeouts). Requests are recorded with their headers and JSON bodies so that tests can check
what the real client sent. Malformed requests get the 400 a real server would send.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    """A dict/list is sent as JSON, a str as-is."""
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def chat(cls, content: str | None, *, model: str = "fake-model", delay_s: float = 0.0) -> Reply:
        """A well-formed chat completion whose message content is ``content``."""
        return cls(
            body={
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
            delay_s=delay_s,
        )

    @classmethod
    def error(cls, status: int, message: str = "fake error", **headers: str) -> Reply:
        return cls(
            status=status,
            body={"error": {"message": message, "type": "fake_error", "code": status}},
            headers=dict(headers),
        )


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAIChatServer:
    """Start with ``with FakeOpenAIChatServer() as srv:``; point clients at ``srv.base_url``."""

    def __init__(self, default: Reply | None = None) -> None:
        self.default = default if default is not None else Reply.chat("ok")
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def start(self) -> FakeOpenAIChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, reply: Reply) -> None:
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                body = reply.body
                if isinstance(body, str):
                    data = body.encode()
                    ctype = "text/plain"
                else:
                    data = json.dumps(body).encode()
                    ctype = "application/json"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                server._record(
                    RecordedRequest(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(Reply.error(404, f"unknown path {self.path}"))
                    return
                if (
                    not isinstance(body, dict)
                    or not isinstance(body.get("model"), str)
                    or not isinstance(body.get("messages"), list)
                ):
                    self._send(Reply.error(400, "body must have a model and a messages list"))
                    return
                self._send(server._next_reply())

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # a sleeping (slow) handler must not block stop()
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
