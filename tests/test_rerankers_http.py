"""HTTPReranker against a fake ``/rerank`` server on 127.0.0.1 over real HTTP.

Covers both wire shapes, sync and async paths, batching, secrets, and every failure the
retriever's fallback must survive (timeout, 5xx with and without recovery, 429 Retry-After,
malformed JSON, wrong length, NaN), including what :func:`safe_rerank` reports for each.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence

import pytest

from treehop._http import RetryPolicy
from treehop.errors import RerankError
from treehop.rerankers import HTTPReranker, Reranker, safe_rerank

from fake_servers.rerank_servers import FakeRerankServer, Reply, overlap_score

FAST_RETRY = RetryPolicy(max_retries=2, backoff_s=0.001, max_backoff_s=0.01)
NO_RETRY = RetryPolicy(max_retries=0)

QUERY = "hierarchical retrieval with tags"
DOCS = [
    "a recipe for banana bread",
    "hierarchical retrieval walks a tree of directories",
    "tags connect retrieval across subtrees with hierarchical hops",
    "unrelated text about weather",
]
EXPECTED = [overlap_score(QUERY, d) for d in DOCS]


def run(reranker: HTTPReranker, mode: str, query: str, docs: Sequence[str]) -> list[float]:
    """Call the sync or the async path, so that each test checks both."""
    if mode == "sync":
        return reranker.rerank(query, docs)
    return asyncio.run(reranker.arerank(query, docs))


@pytest.fixture
def cohere() -> Iterator[FakeRerankServer]:
    with FakeRerankServer("cohere") as srv:
        yield srv


@pytest.fixture
def tei() -> Iterator[FakeRerankServer]:
    with FakeRerankServer("tei") as srv:
        yield srv


@pytest.fixture(autouse=True)
def _no_ambient_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TREEHOP_RERANK_API_KEY", raising=False)


# -- happy paths -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_cohere_shape_scores_come_back_in_input_order(cohere: FakeRerankServer, mode: str) -> None:
    rr = HTTPReranker(cohere.base_url, model="rerank-v3.5", api_key="sk-test", retry=NO_RETRY)
    scores = run(rr, mode, QUERY, DOCS)
    # The server answers sorted by relevance; the client must undo that through "index".
    assert scores == pytest.approx(EXPECTED)
    assert scores != sorted(scores, reverse=True)
    assert len(cohere.requests) == 1
    req = cohere.requests[0]
    assert req.path == "/rerank"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert req.json == {
        "model": "rerank-v3.5",
        "query": QUERY,
        "documents": DOCS,
        "top_n": len(DOCS),
        "return_documents": False,
    }


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_tei_shape(tei: FakeRerankServer, mode: str) -> None:
    rr = HTTPReranker(tei.base_url, flavor="tei", retry=NO_RETRY)
    assert run(rr, mode, QUERY, DOCS) == pytest.approx(EXPECTED)
    body = tei.requests[0].json
    assert body == {"query": QUERY, "texts": DOCS, "truncate": True}
    assert "authorization" not in tei.requests[0].headers  # keyless local server


def test_base_url_with_version_prefix_and_model_omitted(cohere: FakeRerankServer) -> None:
    rr = HTTPReranker(cohere.base_url + "/v1/", retry=NO_RETRY)
    assert rr.rerank(QUERY, DOCS) == pytest.approx(EXPECTED)
    assert cohere.requests[0].path == "/v1/rerank"
    assert "model" not in cohere.requests[0].json


def test_empty_documents_make_no_request(cohere: FakeRerankServer) -> None:
    rr = HTTPReranker(cohere.base_url)
    assert rr.rerank(QUERY, []) == []
    assert asyncio.run(rr.arerank(QUERY, [])) == []
    assert cohere.requests == []


def test_is_a_reranker_and_safe_rerank_passes_scores_through(cohere: FakeRerankServer) -> None:
    rr = HTTPReranker(cohere.base_url, retry=NO_RETRY)
    assert isinstance(rr, Reranker)
    outcome = asyncio.run(safe_rerank(rr, QUERY, DOCS, timeout_s=5))
    assert outcome.fallback_reason is None
    assert outcome.scores == pytest.approx(EXPECTED)


def test_length_bounds_on_query_and_documents(cohere: FakeRerankServer) -> None:
    rr = HTTPReranker(cohere.base_url, max_chars=10, max_query_chars=5, retry=NO_RETRY)
    rr.rerank("x" * 50, ["y" * 100, "short"])
    body = cohere.requests[0].json
    assert body["query"] == "x" * 5
    assert body["documents"] == ["y" * 10, "short"]


# -- batching --------------------------------------------------------------------------------


def test_one_request_per_call_without_a_batch_cap(cohere: FakeRerankServer) -> None:
    docs = [f"doc {i} retrieval" for i in range(60)]
    HTTPReranker(cohere.base_url, retry=NO_RETRY).rerank(QUERY, docs)
    assert len(cohere.requests) == 1
    assert len(cohere.requests[0].json["documents"]) == 60


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_batch_splits_into_the_minimum_number_of_calls(
    cohere: FakeRerankServer, mode: str
) -> None:
    docs = [*DOCS, "tags tags", "hierarchical"]  # 6 documents, cap 4 -> 2 calls of 3
    rr = HTTPReranker(cohere.base_url, max_batch=4, retry=NO_RETRY)
    scores = run(rr, mode, QUERY, docs)
    assert scores == pytest.approx([overlap_score(QUERY, d) for d in docs])
    sizes = sorted(len(r.json["documents"]) for r in cohere.requests)
    assert sizes == [3, 3]


# -- secrets ---------------------------------------------------------------------------------


def test_key_from_environment_and_never_in_repr(
    cohere: FakeRerankServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TREEHOP_RERANK_API_KEY", "env-secret-123")
    rr = HTTPReranker(cohere.base_url, retry=NO_RETRY)
    rr.rerank(QUERY, DOCS[:1])
    assert cohere.requests[0].headers["authorization"] == "Bearer env-secret-123"
    assert "env-secret-123" not in repr(rr)
    assert "env-secret-123" not in str(vars(rr))
    explicit = HTTPReranker(cohere.base_url, api_key="explicit-key", retry=NO_RETRY)
    explicit.rerank(QUERY, DOCS[:1])
    assert cohere.requests[1].headers["authorization"] == "Bearer explicit-key"


def test_key_not_in_error_messages() -> None:
    with FakeRerankServer() as srv:
        srv.script(Reply(401, {"message": "invalid api token"}))
        rr = HTTPReranker(srv.base_url, api_key="very-secret-key", retry=NO_RETRY)
        with pytest.raises(RerankError) as info:
            rr.rerank(QUERY, DOCS)
    assert "HTTP 401" in str(info.value)
    assert "very-secret-key" not in str(info.value)


# -- failures the fallback must survive ------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_5xx_is_retried_then_succeeds(cohere: FakeRerankServer, mode: str) -> None:
    cohere.script(Reply(503, {"message": "overloaded"}), Reply(502, "bad gateway"))
    rr = HTTPReranker(cohere.base_url, retry=FAST_RETRY)
    assert run(rr, mode, QUERY, DOCS) == pytest.approx(EXPECTED)
    assert len(cohere.requests) == 3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_5xx_retries_are_bounded(cohere: FakeRerankServer, mode: str) -> None:
    cohere.script(*[Reply(500, {"message": "boom"})] * 10)
    rr = HTTPReranker(cohere.base_url, retry=FAST_RETRY)
    with pytest.raises(RerankError, match="HTTP 500"):
        run(rr, mode, QUERY, DOCS)
    assert len(cohere.requests) == FAST_RETRY.max_retries + 1


def test_4xx_other_than_429_is_not_retried(cohere: FakeRerankServer) -> None:
    cohere.script(Reply(400, {"message": "bad model"}))
    with pytest.raises(RerankError, match="HTTP 400"):
        HTTPReranker(cohere.base_url, retry=FAST_RETRY).rerank(QUERY, DOCS)
    assert len(cohere.requests) == 1


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_429_honours_retry_after(cohere: FakeRerankServer, mode: str) -> None:
    cohere.script(Reply(429, {"message": "slow down"}, headers={"Retry-After": "0.3"}))
    # Own backoff is ~1 ms, so waiting >= 0.3 s can only come from Retry-After.
    policy = RetryPolicy(max_retries=1, backoff_s=0.001, max_backoff_s=2.0)
    rr = HTTPReranker(cohere.base_url, retry=policy)
    start = time.monotonic()
    assert run(rr, mode, QUERY, DOCS) == pytest.approx(EXPECTED)
    assert time.monotonic() - start >= 0.3
    assert len(cohere.requests) == 2


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_http_timeout_raises_rerank_error(cohere: FakeRerankServer, mode: str) -> None:
    cohere.script(Reply(200, {"results": []}, delay_s=2.0))
    rr = HTTPReranker(cohere.base_url, timeout_s=0.2, retry=NO_RETRY)
    start = time.monotonic()
    with pytest.raises(RerankError, match="timeout"):
        run(rr, mode, QUERY, DOCS)
    assert time.monotonic() - start < 1.5


def test_timeout_then_retry_succeeds(cohere: FakeRerankServer) -> None:
    cohere.script(Reply(200, {"results": []}, delay_s=2.0))
    rr = HTTPReranker(cohere.base_url, timeout_s=0.2, retry=FAST_RETRY)
    assert rr.rerank(QUERY, DOCS) == pytest.approx(EXPECTED)
    assert len(cohere.requests) == 2


def _results(scores: Sequence[object]) -> dict[str, object]:
    return {"results": [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]}


BAD_ANSWERS = {
    "malformed JSON": (Reply(200, '{"results": [{"index": 0,'), "malformed JSON"),
    "wrong length": (Reply(200, _results([0.1, 0.2])), "2 results for 4 documents"),
    "NaN": (
        Reply(
            200,
            '{"results": [{"index": 0, "relevance_score": NaN}, '
            '{"index": 1, "relevance_score": 0.1}, {"index": 2, "relevance_score": 0.2},'
            ' {"index": 3, "relevance_score": 0.3}]}',
        ),
        "non-finite",
    ),
    "infinity": (Reply(200, _results([0.1, float("inf"), 0.2, 0.3])), "non-finite"),
    "duplicate index": (
        Reply(200, {"results": [{"index": 0, "relevance_score": 0.1}] * 4}),
        "repeats index 0",
    ),
    "index out of range": (
        Reply(200, {"results": [{"index": i + 1, "relevance_score": 0.1} for i in range(4)]}),
        "invalid index 4",
    ),
    "string score": (Reply(200, _results(["0.1", 0.2, 0.3, 0.4])), "not a number"),
    "no results key": (Reply(200, {"id": "x", "meta": {}}), "no 'results'"),
    "wrong top-level type": (Reply(200, [1, 2, 3, 4]), "expected a JSON object"),
}


@pytest.mark.parametrize("case", sorted(BAD_ANSWERS))
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_answers_raise_rerank_error(cohere: FakeRerankServer, case: str, mode: str) -> None:
    reply, message = BAD_ANSWERS[case]
    cohere.script(reply)
    rr = HTTPReranker(cohere.base_url, retry=NO_RETRY)
    with pytest.raises(RerankError, match=message):
        run(rr, mode, QUERY, DOCS)


def test_tei_bad_answer_wrong_shape(tei: FakeRerankServer) -> None:
    tei.script(Reply(200, {"results": []}))
    with pytest.raises(RerankError, match="expected a list"):
        HTTPReranker(tei.base_url, flavor="tei", retry=NO_RETRY).rerank(QUERY, DOCS)


FALLBACKS = {
    "timeout": (Reply(200, {}, delay_s=2.0), "timeout"),
    "5xx": (Reply(500, {"message": "boom"}), "HTTP 500"),
    "malformed JSON": (Reply(200, "<html>oops</html>"), "malformed JSON"),
    "wrong length": (Reply(200, _results([0.5])), "1 results for 4 documents"),
    "NaN": (Reply(200, '{"results": [{"index": 0, "relevance_score": NaN}]}'), "1 results"),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_safe_rerank_reports_a_fallback_reason(cohere: FakeRerankServer, case: str) -> None:
    reply, reason = FALLBACKS[case]
    cohere.script(reply)
    rr = HTTPReranker(cohere.base_url, timeout_s=0.3, retry=NO_RETRY)
    outcome = asyncio.run(safe_rerank(rr, QUERY, DOCS, timeout_s=5))
    assert outcome.scores is None
    assert outcome.fallback_reason is not None
    assert reason in outcome.fallback_reason
    assert outcome.fallback_reason.startswith("error: RerankError")


def test_safe_rerank_nan_with_right_length_is_reported(cohere: FakeRerankServer) -> None:
    cohere.script(
        Reply(
            200,
            '{"results": [{"index": 0, "relevance_score": NaN}, '
            '{"index": 1, "relevance_score": 1}]}',
        )
    )
    rr = HTTPReranker(cohere.base_url, retry=NO_RETRY)
    outcome = asyncio.run(safe_rerank(rr, QUERY, DOCS[:2], timeout_s=5))
    assert outcome.scores is None
    assert outcome.fallback_reason is not None and "non-finite" in outcome.fallback_reason


def test_safe_rerank_overall_timeout_cuts_retries_short(cohere: FakeRerankServer) -> None:
    cohere.script(*[Reply(503, {}, delay_s=0.2)] * 10)
    policy = RetryPolicy(max_retries=5, backoff_s=0.2, max_backoff_s=0.2)
    rr = HTTPReranker(cohere.base_url, retry=policy)
    start = time.monotonic()
    outcome = asyncio.run(safe_rerank(rr, QUERY, DOCS, timeout_s=0.5))
    assert time.monotonic() - start < 1.5
    assert outcome.scores is None
    assert outcome.fallback_reason == "timeout after 0.5s"


def test_connection_refused_is_a_rerank_error() -> None:
    with FakeRerankServer() as srv:
        url = srv.base_url
    # The server is gone: nothing listens on that port any more.
    rr = HTTPReranker(url, retry=NO_RETRY, timeout_s=1)
    with pytest.raises(RerankError, match="ConnectError"):
        rr.rerank(QUERY, DOCS)


# -- construction ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"base_url": "localhost:8080"}, "http:// or https://"),
        ({"flavor": "voyage"}, "unknown rerank flavor"),
        ({"max_batch": 0}, "max_batch"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"max_chars": -1}, "max_chars"),
    ],
)
def test_bad_configuration_is_rejected(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"base_url": "http://127.0.0.1:1"} | kwargs
    with pytest.raises(RerankError, match=message):
        HTTPReranker(**args)  # type: ignore[arg-type]


def test_non_string_document_is_rejected(cohere: FakeRerankServer) -> None:
    with pytest.raises(RerankError, match="document 1 is not a string"):
        HTTPReranker(cohere.base_url).rerank(QUERY, ["ok", 3])  # type: ignore[list-item]
    assert cohere.requests == []
