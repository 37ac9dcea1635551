"""VikingDBReranker against a fake VikingDB rerank endpoint on 127.0.0.1 over real HTTP.

The fake verifies the Volcengine V4 signature with its own implementation of the documented
algorithm, so these tests fail if the client's signing (done by the Volcengine SDK) is wrong,
stale on retries, or signs other bytes than it sends.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Iterator, Sequence

import httpx
import pytest

from treehop._http import RetryPolicy
from treehop.errors import InvalidQueryError, RerankError
from treehop.rerankers import Reranker, VikingDBReranker, safe_rerank

from fake_servers.rerank_servers import (
    FakeVikingDBRerankServer,
    Reply,
    overlap_score,
    viking_error,
)

AK = "AKLTfakeaccesskey"
SK = "fake-secret-key-DO-NOT-LEAK"
FAST_RETRY = RetryPolicy(max_retries=2, backoff_s=0.001, max_backoff_s=0.01)
NO_RETRY = RetryPolicy(max_retries=0)

QUERY = "你好 hierarchical retrieval"
DOCS = ["hierarchical trees", "nothing relevant", "你好 retrieval hierarchical", "retrieval"]
EXPECTED = [overlap_score(QUERY, d) for d in DOCS]


@pytest.fixture
def srv() -> Iterator[FakeVikingDBRerankServer]:
    with FakeVikingDBRerankServer(ak=AK, sk=SK) as server:
        yield server


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("VOLC_ACCESSKEY", "VOLC_SECRETKEY", "VOLC_SESSIONTOKEN"):
        monkeypatch.delenv(var, raising=False)


def make(srv: FakeVikingDBRerankServer, **kwargs: object) -> VikingDBReranker:
    args: dict[str, object] = {
        "ak": AK,
        "sk": SK,
        "host": srv.address,
        "scheme": "http",
        "retry": NO_RETRY,
    } | kwargs
    return VikingDBReranker(**args)  # type: ignore[arg-type]


def run(rr: VikingDBReranker, mode: str, query: str, docs: Sequence[str]) -> list[float]:
    if mode == "sync":
        return rr.rerank(query, docs)
    return asyncio.run(rr.arerank(query, docs))


# -- happy paths -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_signed_request_is_accepted_and_scores_keep_input_order(
    srv: FakeVikingDBRerankServer, mode: str
) -> None:
    rr = make(srv)
    assert isinstance(rr, Reranker)
    assert run(rr, mode, QUERY, DOCS) == pytest.approx(EXPECTED)
    assert srv.auth_failures == []
    (req,) = srv.requests
    assert req.path == "/api/knowledge/service/rerank"
    assert req.headers["authorization"].startswith(f"HMAC-SHA256 Credential={AK}/")
    body = req.json
    assert body == {
        "datas": [{"query": QUERY, "content": d} for d in DOCS],
        "rerank_model": "base-multilingual-rerank",
    }
    # Non-ASCII text is sent as UTF-8, and those exact bytes are the ones that were signed.
    assert "你好".encode() in req.raw_body
    assert req.headers["x-content-sha256"] == hashlib.sha256(req.raw_body).hexdigest()


def test_fake_server_rejects_a_tampered_body(srv: FakeVikingDBRerankServer) -> None:
    """The verifier is not a no-op: a valid signature over other bytes is refused."""
    rr = make(srv)
    rr.rerank(QUERY, DOCS[:1])
    good = srv.requests[0]
    tampered = good.raw_body.replace(b"hierarchical", b"HIERARCHICAL")
    headers = {k: v for k, v in good.headers.items() if k not in ("content-length", "host")}
    resp = httpx.post(srv.base_url + good.path, content=tampered, headers=headers)
    assert resp.status_code == 401
    assert resp.json()["code"] == 1000001
    assert srv.auth_failures == ["body hash mismatch"]
    headers["x-content-sha256"] = hashlib.sha256(tampered).hexdigest()
    resp = httpx.post(srv.base_url + good.path, content=tampered, headers=headers)
    assert resp.status_code == 401
    assert srv.auth_failures[-1] == "signature mismatch"


def test_region_is_part_of_the_signature(srv: FakeVikingDBRerankServer) -> None:
    with pytest.raises(RerankError, match="1000001"):
        make(srv, region="cn-shanghai").rerank(QUERY, DOCS)
    assert srv.auth_failures == ["wrong credential scope"]


def test_wrong_secret_key_maps_to_unauthorized_without_leaking(
    srv: FakeVikingDBRerankServer,
) -> None:
    rr = make(srv, sk="not-the-right-secret", retry=FAST_RETRY)
    with pytest.raises(RerankError) as info:
        rr.rerank(QUERY, DOCS)
    message = str(info.value)
    assert "1000001" in message and "unauthorized" in message and "HTTP 401" in message
    assert "not-the-right-secret" not in message
    assert srv.auth_failures == ["signature mismatch"]
    assert len(srv.requests) == 1  # a 401 is not retried


def test_model_instruction_and_endpoint_are_sent(srv: FakeVikingDBRerankServer) -> None:
    rr = make(
        srv,
        model="doubao-seed-rerank",
        rerank_instruction="Whether the document answers the query",
        endpoint_id="ep-123",
    )
    rr.rerank(QUERY, DOCS[:2])
    body = srv.requests[0].json
    assert body["rerank_model"] == "doubao-seed-rerank"
    assert body["rerank_instruction"] == "Whether the document answers the query"
    assert body["endpoint_id"] == "ep-123"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_titles_are_scored_unless_rerank_only_chunk(
    srv: FakeVikingDBRerankServer, mode: str
) -> None:
    docs = ["a chunk about trees", "another chunk"]
    titles = ["hierarchical retrieval guide", None]

    def call(rr: VikingDBReranker) -> list[float]:
        if mode == "sync":
            return rr.rerank_with_titles(QUERY, docs, titles)
        return asyncio.run(rr.arerank_with_titles(QUERY, docs, titles))

    with_titles = call(make(srv))
    assert srv.requests[-1].json["datas"] == [
        {"query": QUERY, "content": docs[0], "title": titles[0]},
        {"query": QUERY, "content": docs[1]},
    ]
    only_chunk = call(make(srv, rerank_only_chunk=True))
    assert srv.requests[-1].json["datas"] == [{"query": QUERY, "content": d} for d in docs]
    assert with_titles[0] > only_chunk[0]  # the title carried the matching words
    assert with_titles[1] == only_chunk[1]


def test_titles_must_match_documents(srv: FakeVikingDBRerankServer) -> None:
    with pytest.raises(RerankError, match="1 titles for 2 documents"):
        make(srv).rerank_with_titles(QUERY, ["a", "b"], ["t"])
    assert srv.requests == []


def test_threshold_is_exposed_for_the_caller(srv: FakeVikingDBRerankServer) -> None:
    rr = make(srv, model="doubao-seed-rerank", rerank_threshold=0.5)
    scores = rr.rerank(QUERY, DOCS)
    assert len(scores) == len(DOCS)  # every score comes back; the caller drops
    kept = [d for d, s in zip(DOCS, scores, strict=True) if rr.passes_threshold(s)]
    assert kept == [d for d, e in zip(DOCS, EXPECTED, strict=True) if e >= 0.5]
    assert 0 < len(kept) < len(DOCS)
    assert make(srv).passes_threshold(0.0)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_batch_splits_into_minimum_signed_calls(
    srv: FakeVikingDBRerankServer, mode: str
) -> None:
    docs = [f"retrieval doc {i}" if i % 2 else f"doc {i}" for i in range(7)]
    rr = make(srv, max_batch=3)
    assert run(rr, mode, QUERY, docs) == pytest.approx([overlap_score(QUERY, d) for d in docs])
    assert sorted(len(r.json["datas"]) for r in srv.requests) == [2, 2, 3]
    assert srv.auth_failures == []


def test_length_bounds(srv: FakeVikingDBRerankServer) -> None:
    make(srv, max_chars=8, max_query_chars=4).rerank("abcdefgh", ["0123456789abc"])
    assert srv.requests[0].json["datas"] == [{"query": "abcd", "content": "01234567"}]


def test_keys_from_environment_and_never_in_repr(
    srv: FakeVikingDBRerankServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLC_ACCESSKEY", AK)
    monkeypatch.setenv("VOLC_SECRETKEY", SK)
    rr = VikingDBReranker(host=srv.address, scheme="http", retry=NO_RETRY)
    assert rr.rerank(QUERY, DOCS) == pytest.approx(EXPECTED)
    assert SK not in repr(rr) and AK not in repr(rr)
    assert SK not in str(vars(rr))


def test_session_token_is_sent_and_signed(srv: FakeVikingDBRerankServer) -> None:
    make(srv, session_token="sts-token-xyz").rerank(QUERY, DOCS[:1])
    req = srv.requests[0]
    assert req.headers["x-security-token"] == "sts-token-xyz"
    assert "x-security-token" in req.headers["authorization"]
    assert srv.auth_failures == []


# -- error codes and failures ----------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, expected",
    [
        (viking_error(403, 1000002, "no permission"), "1000002 (no permission"),
        (viking_error(400, 1000003, "invalid request: datas"), "1000003 (invalid request)"),
        (viking_error(400, 1000005, "collection not exist"), "1000005 (collection not exist)"),
        (Reply(200, {"code": 1000003, "message": "bad model"}), "1000003 (invalid request)"),
        (Reply(404, "no such route"), "HTTP 404"),
    ],
)
def test_documented_error_codes_are_named(
    srv: FakeVikingDBRerankServer, reply: Reply, expected: str
) -> None:
    srv.script(reply)
    with pytest.raises(RerankError, match=re.escape(expected)):
        make(srv, retry=FAST_RETRY).rerank(QUERY, DOCS)
    assert len(srv.requests) == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_5xx_retried_and_each_attempt_is_signed(srv: FakeVikingDBRerankServer, mode: str) -> None:
    srv.script(Reply(503, {"code": 1000028, "message": "busy"}), Reply(500, "oops"))
    rr = make(srv, retry=FAST_RETRY)
    assert run(rr, mode, QUERY, DOCS) == pytest.approx(EXPECTED)
    assert len(srv.requests) == 3
    assert srv.auth_failures == []
    for req in srv.requests:  # the retries were signed too
        assert srv.verify(req) is None


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_5xx_retries_are_bounded(srv: FakeVikingDBRerankServer, mode: str) -> None:
    srv.script(*[Reply(502, "bad gateway")] * 5)
    with pytest.raises(RerankError, match="HTTP 502"):
        run(make(srv, retry=FAST_RETRY), mode, QUERY, DOCS)
    assert len(srv.requests) == 3


def test_429_retry_after(srv: FakeVikingDBRerankServer) -> None:
    srv.script(Reply(429, {"code": 1000029, "message": "rate"}, headers={"Retry-After": "0"}))
    assert make(srv, retry=FAST_RETRY).rerank(QUERY, DOCS) == pytest.approx(EXPECTED)
    assert len(srv.requests) == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_timeout(srv: FakeVikingDBRerankServer, mode: str) -> None:
    srv.script(Reply(200, {}, delay_s=2.0))
    with pytest.raises(RerankError, match="timeout"):
        run(make(srv, timeout_s=0.2), mode, QUERY, DOCS)


NAN_BODY = '{"code": 0, "data": {"scores": [0.1, NaN, 0.2, 0.3]}}'
BAD = {
    "malformed JSON": (Reply(200, "{not json"), "malformed JSON"),
    "wrong length": (Reply(200, {"code": 0, "data": {"scores": [0.1]}}), "1 scores for 4"),
    "NaN": (Reply(200, NAN_BODY), "not a finite number"),
    "no scores": (Reply(200, {"code": 0, "data": {}}), "no data.scores"),
    "not an object": (Reply(200, "[1, 2]"), "expected a JSON object"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_answers(srv: FakeVikingDBRerankServer, case: str, mode: str) -> None:
    reply, message = BAD[case]
    srv.script(reply)
    with pytest.raises(RerankError, match=message):
        run(make(srv), mode, QUERY, DOCS)


@pytest.mark.parametrize(
    "reply, reason",
    [
        (Reply(200, {}, delay_s=2.0), "timeout"),
        (Reply(500, "oops"), "HTTP 500"),
        (Reply(200, "{not json"), "malformed JSON"),
        (Reply(200, {"code": 0, "data": {"scores": [0.5]}}), "1 scores for 4"),
        (Reply(200, NAN_BODY), "not a finite number"),
        (viking_error(401, 1000001, "unauthorized"), "1000001"),
    ],
)
def test_safe_rerank_reports_fallback(
    srv: FakeVikingDBRerankServer, reply: Reply, reason: str
) -> None:
    srv.script(reply)
    outcome = asyncio.run(safe_rerank(make(srv, timeout_s=0.3), QUERY, DOCS, timeout_s=5))
    assert outcome.scores is None
    assert outcome.fallback_reason is not None and reason in outcome.fallback_reason
    assert SK not in outcome.fallback_reason


# -- configuration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"rerank_instruction": "be strict"}, InvalidQueryError, "only works with model"),
        (
            {"model": "doubao-seed-rerank", "rerank_instruction": "x" * 1025},
            InvalidQueryError,
            "limit is 1024",
        ),
        ({"rerank_threshold": 1.5}, InvalidQueryError, r"\[0, 1\]"),
        ({"model": ""}, InvalidQueryError, "non-empty"),
        ({"max_batch": 201}, RerankError, "limit of 200"),
        ({"scheme": "ftp"}, RerankError, "scheme"),
        ({"host": "http://x/y"}, RerankError, "bare host"),
        ({"sk": None}, RerankError, "VOLC_SECRETKEY"),
    ],
)
def test_bad_configuration(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    args: dict[str, object] = {"ak": AK, "sk": SK} | kwargs
    with pytest.raises(error, match=message):
        VikingDBReranker(**args)  # type: ignore[arg-type]
