"""A scriptable fake of the OpenAI chat-completions API on 127.0.0.1, over real HTTP.

Each request to ``POST /v1/chat/completions`` takes the next scripted :class:`Reply` (or the
default one when the script is empty): a canned answer, an error status, a delay (for client
timeouts). Requests are recorded with their headers and JSON bodies so that tests can check
what the real client sent. Malformed requests get the 400 a real server would send.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fake_servers._http_base import FakeHTTPServer, RecordedRequest
from fake_servers._http_base import Reply as _BaseReply

__all__ = ["FakeOpenAIChatServer", "RecordedRequest", "Reply"]


@dataclass
class Reply(_BaseReply):
    """A dict/list ``body`` is sent as JSON, a str as-is (as text/plain)."""

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


class FakeOpenAIChatServer(FakeHTTPServer):
    """Start with ``with FakeOpenAIChatServer() as srv:``; point clients at ``srv.base_url``."""

    text_content_type = "text/plain"

    def __init__(self, default: Reply | None = None) -> None:
        super().__init__()
        self.default = default if default is not None else Reply.chat("ok")

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def enqueue(self, *replies: Reply) -> None:
        self.script(*replies)

    def respond(self, req: RecordedRequest) -> _BaseReply:
        """Malformed requests are refused before a scripted reply is consumed."""
        if req.path.partition("?")[0].rstrip("/") != "/v1/chat/completions":
            return Reply.error(404, f"unknown path {req.path}")
        body = req.body
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("model"), str)
            or not isinstance(body.get("messages"), list)
        ):
            return Reply.error(400, "body must have a model and a messages list")
        return self.next_scripted() or self.default
