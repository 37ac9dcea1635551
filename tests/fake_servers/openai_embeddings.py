"""A scriptable fake of OpenAI's embeddings API on 127.0.0.1, over real HTTP.

``POST /v1/embeddings`` takes ``{"model": str, "input": str | [str], "dimensions"?: int,
"encoding_format"?: "float" | "base64"}`` and answers ``{"object": "list", "data": [{"object":
"embedding", "index": i, "embedding": [...]}], "model": ..., "usage": {...}}`` like the real API.
Vectors are deterministic functions of the text (a bag of hashed words, deliberately *not*
unit length, so that clients must normalise), so tests can compute what each row should be.

Each request takes the next scripted :class:`Reply` (the default when the script is empty): a
normal answer, an error status with headers (``Retry-After``), a delay (client timeouts), a raw
body (malformed JSON) or a transformation of the normal answer (drop a row, shuffle rows, ...).
Requests are recorded with headers and bodies. A wrong bearer token gets a 401 and malformed
requests (no model, an empty string in ``input``) get the 400 the real API sends.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

_WORD = re.compile(r"\w+")

Transform = Callable[[dict[str, Any]], dict[str, Any]]


def fake_vector(text: str, dim: int) -> np.ndarray:
    """The unnormalised vector the fake gives ``text``: a sum of hashed word directions."""
    out = np.zeros(dim, dtype=np.float64)
    for word in _WORD.findall(text.lower()) or [text]:
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little")
        out += np.random.default_rng(seed).standard_normal(dim)
    return out * 3.0


def expected_unit(text: str, dim: int) -> np.ndarray:
    v = fake_vector(text, dim)
    return (v / np.linalg.norm(v)).astype(np.float32)


@dataclass
class Reply:
    """One scripted answer. The default ``Reply()`` is a normal, correct answer."""

    status: int = 200
    body: Any = None
    """Overrides the answer: a dict/list is sent as JSON, a str as-is (malformed JSON)."""
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    transform: Transform | None = None
    """Applied to the normal answer (for wrong row counts, shuffled rows, wrong widths)."""

    @classmethod
    def error(cls, status: int, message: str = "fake error", **headers: str) -> Reply:
        return cls(
            status=status,
            body={"error": {"message": message, "type": "fake_error", "code": status}},
            headers={k.replace("_", "-"): v for k, v in headers.items()},
        )

    @classmethod
    def slow(cls, delay_s: float) -> Reply:
        return cls(delay_s=delay_s)

    @classmethod
    def malformed(cls) -> Reply:
        return cls(body='{"data": [ {"index": 0, "embedding": [0.1, ')

    @classmethod
    def drop_last_row(cls) -> Reply:
        return cls(transform=lambda ans: {**ans, "data": ans["data"][:-1]})

    @classmethod
    def reversed_rows(cls) -> Reply:
        return cls(transform=lambda ans: {**ans, "data": ans["data"][::-1]})


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: Any


class FakeOpenAIEmbeddingsServer:
    """Start with ``with FakeOpenAIEmbeddingsServer(api_key=...) as srv:``; use ``srv.base_url``.

    Args:
        dim: the width of the vectors (``dimensions`` in a request overrides it, as OpenAI's
            text-embedding-3 models do).
        api_key: the bearer token to require; ``None`` accepts requests without one.
        default: the reply used when the script is empty.
    """

    def __init__(self, *, dim: int = 16, api_key: str | None = None, default: Reply | None = None):
        self.dim = dim
        self.api_key = api_key
        self.default = default if default is not None else Reply()
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

    def inputs(self) -> list[list[str]]:
        """The ``input`` list of every recorded request, in arrival order."""
        with self._lock:
            return [list(r.body["input"]) for r in self.requests if isinstance(r.body, dict)]

    def _next_reply(self) -> Reply:
        with self._lock:
            return self._script.popleft() if self._script else self.default

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The correct answer to a valid request body."""
        texts = [body["input"]] if isinstance(body["input"], str) else body["input"]
        dim = int(body.get("dimensions") or self.dim)
        as_b64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vec = fake_vector(text, dim)
            emb: Any = (
                base64.b64encode(vec.astype("<f4").tobytes()).decode()
                if as_b64
                else [float(x) for x in vec]
            )
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }

    def start(self) -> FakeOpenAIEmbeddingsServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str], delay: float) -> None:
                if delay:
                    time.sleep(delay)
                if isinstance(body, str):
                    data, ctype = body.encode(), "application/json"
                else:
                    data, ctype = json.dumps(body).encode(), "application/json"
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

            def _error(self, status: int, message: str) -> None:
                r = Reply.error(status, message)
                self._send(r.status, r.body, r.headers, 0.0)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                headers = {k.lower(): v for k, v in self.headers.items()}
                server._record(RecordedRequest(self.path, headers, body))
                if self.path.rstrip("/") != "/v1/embeddings":
                    self._error(404, f"unknown path {self.path}")
                    return
                if server.api_key is not None and (
                    headers.get("authorization") != f"Bearer {server.api_key}"
                ):
                    self._error(401, "Incorrect API key provided")
                    return
                inp = body.get("input") if isinstance(body, dict) else None
                if (
                    not isinstance(body, dict)
                    or not isinstance(body.get("model"), str)
                    or not (
                        isinstance(inp, str)
                        or (isinstance(inp, list) and all(isinstance(t, str) for t in inp))
                    )
                ):
                    self._error(400, "body must have a model and an input string or list")
                    return
                if inp == "" or inp == [] or (isinstance(inp, list) and "" in inp):
                    self._error(400, "'$.input' is invalid: empty strings are not allowed")
                    return
                dims = body.get("dimensions")
                if dims is not None and (not isinstance(dims, int) or dims < 1):
                    self._error(400, "'dimensions' must be a positive integer")
                    return
                reply = server._next_reply()
                if reply.body is not None:
                    out: Any = reply.body
                elif reply.status == 200:
                    out = server.answer(body)
                    if reply.transform is not None:
                        out = reply.transform(out)
                else:
                    out = {"error": {"message": "scripted failure", "code": reply.status}}
                self._send(reply.status, out, reply.headers, reply.delay_s)

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

    def __enter__(self) -> FakeOpenAIEmbeddingsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
