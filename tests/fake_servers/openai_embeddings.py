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
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fake_servers._http_base import FakeHTTPServer, RecordedRequest
from fake_servers._http_base import Reply as _BaseReply

__all__ = [
    "FakeOpenAIEmbeddingsServer",
    "RecordedRequest",
    "Reply",
    "expected_unit",
    "fake_vector",
]

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
class Reply(_BaseReply):
    """One scripted answer. The default ``Reply()`` is a normal, correct answer.

    A ``body`` overrides the answer: a dict/list is sent as JSON, a str as-is (malformed JSON).
    """

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


class FakeOpenAIEmbeddingsServer(FakeHTTPServer):
    """Start with ``with FakeOpenAIEmbeddingsServer(api_key=...) as srv:``; use ``srv.base_url``.

    Args:
        dim: the width of the vectors (``dimensions`` in a request overrides it, as OpenAI's
            text-embedding-3 models do).
        api_key: the bearer token to require; ``None`` accepts requests without one.
        default: the reply used when the script is empty.
    """

    def __init__(self, *, dim: int = 16, api_key: str | None = None, default: Reply | None = None):
        super().__init__()
        self.dim = dim
        self.api_key = api_key
        self.default = default if default is not None else Reply()

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def enqueue(self, *replies: Reply) -> None:
        self.script(*replies)

    def inputs(self) -> list[list[str]]:
        """The ``input`` list of every recorded request, in arrival order."""
        with self._lock:
            return [list(r.body["input"]) for r in self.requests if isinstance(r.body, dict)]

    def answer_body(self, body: dict[str, Any]) -> dict[str, Any]:
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

    def respond(self, req: RecordedRequest) -> _BaseReply:
        """Bad requests are refused (as the real API does) before a scripted reply is used."""
        body = req.body
        if req.path.partition("?")[0].rstrip("/") != "/v1/embeddings":
            return Reply.error(404, f"unknown path {req.path}")
        if self.api_key is not None and (
            req.headers.get("authorization") != f"Bearer {self.api_key}"
        ):
            return Reply.error(401, "Incorrect API key provided")
        inp = body.get("input") if isinstance(body, dict) else None
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("model"), str)
            or not (
                isinstance(inp, str)
                or (isinstance(inp, list) and all(isinstance(t, str) for t in inp))
            )
        ):
            return Reply.error(400, "body must have a model and an input string or list")
        if inp == "" or inp == [] or (isinstance(inp, list) and "" in inp):
            return Reply.error(400, "'$.input' is invalid: empty strings are not allowed")
        dims = body.get("dimensions")
        if dims is not None and (not isinstance(dims, int) or dims < 1):
            return Reply.error(400, "'dimensions' must be a positive integer")
        reply = self.next_scripted() or self.default
        if reply.body is not None:
            out: Any = reply.body
        elif reply.status == 200:
            out = self.answer_body(body)
            if isinstance(reply, Reply) and reply.transform is not None:
                out = reply.transform(out)
        else:
            out = {"error": {"message": "scripted failure", "code": reply.status}}
        return _BaseReply(reply.status, out, reply.delay_s, reply.headers, reply.together)
