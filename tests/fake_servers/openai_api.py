"""A fake of the OpenAI chat API for whole programs (the docs' examples), over loopback HTTP.

:class:`~fake_servers.openai_chat.FakeOpenAIChatServer` answers one client's scripted calls;
an example program uses the official clients (``openai`` under LangChain's ``ChatOpenAI`` and
LlamaIndex's ``OpenAI``, treehop's ``OpenAICompatibleLLM``), which also stream. So this one
answers ``POST /v1/chat/completions`` with a fixed text either as one JSON completion or, when
the request says ``"stream": true``, as the server-sent events the real API sends
(``data: {chunk}`` lines, then ``data: [DONE]``). ``POST /v1/embeddings`` answers as
:class:`~fake_servers.openai_embeddings.FakeOpenAIEmbeddingsServer` does (deterministic
hashed-word vectors, ``dimensions`` honoured), also for inputs given as token ids (LangChain's
``OpenAIEmbeddings`` sends those). Requests are recorded; malformed ones get a 400, as from
the real API.
"""

from __future__ import annotations

import json
import time
from typing import Any

from fake_servers._http_base import FakeHTTPServer, RecordedRequest, Reply
from fake_servers.openai_embeddings import fake_vector

__all__ = ["FakeOpenAIServer"]


class FakeOpenAIServer(FakeHTTPServer):
    """Every chat completion answers ``answer``; point clients at :attr:`base_url`."""

    text_content_type = "text/event-stream"

    def __init__(self, answer: str = "The answer, from the context.") -> None:
        super().__init__()
        self.answer_text = answer

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def _completion(self, model: str) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.answer_text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    def _stream(self, model: str) -> str:
        def chunk(delta: dict[str, Any], finish: str | None) -> str:
            body = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(body)}\n\n"

        words = self.answer_text.split(" ")
        parts = [chunk({"role": "assistant", "content": ""}, None)]
        parts += [
            chunk({"content": w + (" " if i < len(words) - 1 else "")}, None)
            for i, w in enumerate(words)
        ]
        parts.append(chunk({}, "stop"))
        return "".join(parts) + "data: [DONE]\n\n"

    def _embeddings(self, body: Any) -> Reply:
        inp = body.get("input") if isinstance(body, dict) else None
        items = [inp] if isinstance(inp, str) else inp
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("model"), str)
            or not isinstance(items, list)
            or not items
            or not all(
                (isinstance(t, str) and t)
                or (isinstance(t, list) and t and all(isinstance(i, int) for i in t))
                for t in items
            )
        ):
            return Reply(400, {"error": {"message": "model and a non-empty input are required"}})
        dim = int(body.get("dimensions") or 1536)
        data = [
            {
                "object": "embedding",
                "index": i,
                # token ids stand for their text: the same ids, the same vector
                "embedding": [
                    float(x)
                    for x in fake_vector(t if isinstance(t, str) else " ".join(map(str, t)), dim)
                ],
            }
            for i, t in enumerate(items)
        ]
        usage = {"prompt_tokens": len(items), "total_tokens": len(items)}
        return Reply(200, {"object": "list", "data": data, "model": body["model"], "usage": usage})

    def respond(self, req: RecordedRequest) -> Reply:
        if req.path.partition("?")[0].rstrip("/") == "/v1/embeddings":
            return self._embeddings(req.body)
        if req.path.partition("?")[0].rstrip("/") != "/v1/chat/completions":
            return Reply(404, {"error": {"message": f"unknown path {req.path}"}})
        body = req.body
        if (
            not isinstance(body, dict)
            or not isinstance(body.get("model"), str)
            or not isinstance(body.get("messages"), list)
            or not body["messages"]
        ):
            return Reply(400, {"error": {"message": "body must have a model and messages"}})
        if body.get("stream"):
            return Reply(200, self._stream(body["model"]))
        return Reply(200, self._completion(body["model"]))
