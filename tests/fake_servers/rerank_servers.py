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

import re
from collections.abc import Callable

from fake_servers._http_base import FakeHTTPServer, RecordedRequest, Reply
from fake_servers.volc_auth import expected_signature, verify_v4

__all__ = [
    "FakeRerankServer",
    "FakeVikingDBRerankServer",
    "RecordedRequest",
    "Reply",
    "expected_signature",
    "overlap_score",
    "viking_error",
]

ScoreFn = Callable[[str, str], float]


def overlap_score(query: str, document: str) -> float:
    """Share of the query's words found in the document: a deterministic stand-in model."""
    q = set(re.findall(r"\w+", query.lower()))
    d = set(re.findall(r"\w+", document.lower()))
    return len(q & d) / len(q) if q else 0.0


class FakeRerankServer(FakeHTTPServer):
    """``POST /rerank`` in the Cohere/Jina/vLLM shape (``flavor="cohere"``) or TEI's."""

    def __init__(self, flavor: str = "cohere", score_fn: ScoreFn = overlap_score) -> None:
        super().__init__()
        self.flavor = flavor
        self.score_fn = score_fn

    def answer(self, req: RecordedRequest) -> Reply:
        if not req.path.partition("?")[0].endswith("/rerank"):
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


def viking_error(status: int, code: int, message: str) -> Reply:
    return Reply(status, {"code": code, "message": message, "request_id": "fake-req"})


class FakeVikingDBRerankServer(FakeHTTPServer):
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

    def verify(self, req: RecordedRequest) -> str | None:
        """``None`` when the signature is valid, else why not."""
        return verify_v4(
            req,
            ak=self.ak,
            sk=self.sk,
            region=self.region,
            service=self.service,
            max_skew_s=self.max_skew_s,
        )

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
