"""VikingDBKnowledgeSource against the fake knowledge-base API on 127.0.0.1 (real SDK, real HTTP).

The fake checks the V4 signature (service ``air``), validates the request like the documented
API (query length, limit, dense_weight, retrieve_count >= limit, ...) and answers ``PointInfo``
lists, so these tests fail if an option is not sent, sent under the wrong name, or a field of
the answer is not mapped.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from treehop._http import RetryPolicy
from treehop.errors import InvalidFilterError, InvalidQueryError, InvalidURIError, StoreError
from treehop.models import ContextType, FindResult, MatchedContext
from treehop.postprocess import group_chunks
from treehop.stores.vikingdb import (
    VikingDBAuthError,
    VikingDBError,
    VikingDBInvalidRequestError,
    VikingDBNotFoundError,
    VikingDBPermissionError,
    VikingDBUnavailableError,
)
from treehop.vikingdb_knowledge import KnowledgeSearchOptions, VikingDBKnowledgeSource

from fake_servers.vikingdb_knowledge_setup import (
    IMAGE_ATTACHMENTS,
    PREFIX,
    costs_point,
    k8s_point,
    knowledge_server,
    make_knowledge_source,
    oauth_points,
    sent,
)
from fake_servers.vikingdb_server import FakeVikingDB, Reply

AK = "AKLTfake-knowledge-ak"
SK = "fake-knowledge-secret-DO-NOT-LEAK"
FAST = RetryPolicy(max_retries=2, backoff_s=0.001, max_backoff_s=0.005)

POINTS = [
    *oauth_points(),
    costs_point(
        "reports/2024 q1",  # an id with a slash and a space
        "quarterly report on token costs",
        attachments=IMAGE_ATTACHMENTS,
        extra={"chunk_source": "document", "original_coordinate": {"page_no": [1]}},
    ),
    k8s_point(),
]


@pytest.fixture
def srv() -> Iterator[FakeVikingDB]:
    with knowledge_server(AK, SK, POINTS) as server:
        yield server


def make_source(srv: FakeVikingDB, **kwargs: Any) -> VikingDBKnowledgeSource:
    return make_knowledge_source(srv, **{"ak": AK, "sk": SK, "retry": FAST, **kwargs})


@pytest.fixture
def src(srv: FakeVikingDB) -> VikingDBKnowledgeSource:
    return make_source(srv)


# ------------------------------------------------------------------------------------------
# Response mapping
# ------------------------------------------------------------------------------------------
def test_points_become_matched_contexts(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    res = src.find("validate OAuth access tokens", limit=3)
    assert isinstance(res, FindResult) and res.total == 3 == len(res.resources)
    assert res.memories == [] and res.skills == []
    top = res.resources[0]
    assert top.uri == f"{PREFIX}/doc_oauth#chunk-1"
    assert top.parent_uri == f"{PREFIX}/doc_oauth"
    assert top.context_type is ContextType.RESOURCE and top.is_leaf and top.level == 2
    assert top.content.startswith("validate OAuth access tokens")
    assert top.abstract == "Validation" and top.chunk_index == 1
    assert top.score == top.vector_score == 1.0 and top.rerank_score is None
    md = top.metadata
    assert md["point_id"] == "doc_oauth_1" and md["chunk_title"] == "Validation"
    assert md["collection_name"] == "handbook" and md["source"] == "vikingdb_knowledge"
    assert md["doc_info"]["doc_id"] == "doc_oauth" and md["doc_info"]["doc_name"] == "oauth.md"
    assert md["doc_info"]["doc_meta"] == [
        {"field_name": "year", "field_value": 2023},
        {"field_name": "team", "field_value": "security"},
    ]  # the JSON string is parsed
    assert md["doc_info"]["status"] == {"process_status": 0}
    assert "content" not in md and "score" not in md
    qr = res.query_results[0] if res.query_results else None
    assert qr is not None and qr.matched_contexts == res.resources and qr.nodes_scored == 3
    assert srv.auth_failures == []
    auth = srv.posts("/search_knowledge")[-1].headers["authorization"]
    assert f"Credential={AK}/" in auth and "/cn-beijing/air/request" in auth


def test_every_point_field_is_kept(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    res = src.find("quarterly report costs", limit=1, get_attachment_link=True)
    hit = res.resources[0]
    # a doc id with '/' and ' ' gets a reversible, URI-safe segment
    assert hit.uri == f"{PREFIX}/b64-cmVwb3J0cy8yMDI0IHEx#chunk-0"
    assert src.doc_id_of(hit.uri) == "reports/2024 q1"
    assert hit.metadata["chunk_attachment"] == [
        {"uuid": "img-1", "type": "image", "link": "https://tos.example/img-1"}
    ]
    assert hit.metadata["original_coordinate"] == {"page_no": [1]}
    assert hit.metadata["chunk_source"] == "document"
    assert sent(srv)["post_processing"] == {"get_attachment_link": True}


def test_rerank_scores_rank_and_threshold(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    res = src.find("validate OAuth tokens", mode="thinking", limit=2)
    post = sent(srv)["post_processing"]
    assert post == {"rerank_switch": True, "retrieve_count": 25}
    assert [m.score for m in res.resources] == [m.rerank_score for m in res.resources]
    assert all(m.vector_score is not None for m in res.resources)
    assert res.query_results and res.query_results[0].rerank_calls == 1
    top = res.resources[0].rerank_score
    assert top is not None
    seed = src.find(
        "validate OAuth tokens",
        mode="thinking",
        limit=40,
        rerank_model="doubao-seed-rerank",
        rerank_threshold=top,
        rerank_instruction="does it answer the question?",
        rerank_only_chunk=True,
    )
    assert sent(srv)["post_processing"] == {
        "rerank_switch": True,
        "retrieve_count": 40,  # max(limit, 25): the service's default 25 < limit is an error
        "rerank_model": "doubao-seed-rerank",
        "rerank_threshold": top,
        "rerank_instruction": "does it answer the question?",
        "rerank_only_chunk": True,
    }
    assert seed.total >= 1 and all((m.rerank_score or 0) >= top for m in seed.resources)


def test_request_options_are_sent_under_the_api_names(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    src.find(
        "token",
        limit=4,
        dense_weight=0.7,
        filter={"op": "range", "field": "year", "gte": 2023},
        chunk_diffusion_count=2,
        chunk_group=True,
        need_instruction=True,
        return_token_usage=True,
        image_query="https://example.com/a.png",
    )
    body = sent(srv)
    assert body["collection_name"] == "handbook" and body["project"] == "default"
    assert body["query"] == "token" and body["limit"] == 4 and body["dense_weight"] == 0.7
    assert body["image_query"] == "https://example.com/a.png"
    assert body["query_param"] == {"doc_filter": {"op": "range", "field": "year", "gte": 2023}}
    assert body["pre_processing"] == {"need_instruction": True, "return_token_usage": True}
    assert body["post_processing"] == {"chunk_diffusion_count": 2, "chunk_group": True}


def test_filters_diffusion_and_grouping_reach_the_results(
    src: VikingDBKnowledgeSource,
) -> None:
    res = src.find("token", filter={"op": "must", "field": "team", "conds": ["security"]})
    assert {m.parent_uri for m in res.resources} == {f"{PREFIX}/doc_oauth"}
    one = src.find("refresh tokens rotate", limit=1, chunk_diffusion_count=1)
    assert [m.chunk_index for m in one.resources] == [2, 1, 3]
    grouped = src.find("token costs kubernetes oauth", limit=6, chunk_group=True)
    by_doc = [m.parent_uri for m in grouped.resources]
    assert by_doc == sorted(by_doc, key=by_doc.index)  # each document's chunks together
    assert group_chunks(grouped.resources)  # parent_uri/chunk_index feed treehop's grouping


def test_target_uri_scopes_to_documents(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    q1 = src.doc_uri("reports/2024 q1")
    res = src.find(
        "token",
        target_uri=[f"{PREFIX}/doc_k8s", q1 + "#chunk-0"],
        filter={"op": "must", "field": "team", "conds": ["platform", "finance"]},
    )
    assert sent(srv)["query_param"]["doc_filter"] == {
        "op": "and",
        "conds": [
            {"op": "must", "field": "doc_id", "conds": ["doc_k8s", "reports/2024 q1"]},
            {"op": "must", "field": "team", "conds": ["platform", "finance"]},
        ],
    }
    assert {m.parent_uri for m in res.resources} == {f"{PREFIX}/doc_k8s", q1}
    with pytest.raises(InvalidURIError, match="not a document"):
        src.find("token", target_uri="viking://resources/other/doc")


def test_rewrite_becomes_the_query_plan(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    msgs = [
        {"role": "user", "content": "kubernetes"},
        {"role": "assistant", "content": "what about it?"},
    ]
    res = src.find("rollout", rewrite=True, messages=msgs)
    assert res.query_plan is not None and res.query_plan.planner == "vikingdb:rewrite"
    assert [q.query for q in res.query_plan.queries] == ["kubernetes rollout"]
    assert sent(srv)["pre_processing"] == {"rewrite": True, "messages": msgs}
    raw = src.search_knowledge("rollout", rewrite=True, messages=msgs, return_token_usage=True)
    assert raw.rewrite_query == "kubernetes rollout" and raw.count == len(raw.points)
    assert raw.token_usage["embedding_token_usage"] == {"prompt_tokens": 2}
    assert raw.request_id == "fake-kb" and raw.contexts[0].uri == f"{PREFIX}/doc_k8s#chunk-0"


def test_score_threshold_and_context_type(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    res = src.find("validate OAuth access tokens", score_threshold=0.5)
    assert res.total >= 1 and all(m.score >= 0.5 for m in res.resources)
    calls = len(srv.posts())
    empty = src.find("validate OAuth", context_type="memory")
    assert empty.total == 0 and len(srv.posts()) == calls  # a KB holds no memories: no call
    assert src.find("validate OAuth", context_type=ContextType.RESOURCE).total > 0


# ------------------------------------------------------------------------------------------
# Validation: typed errors, nothing sent
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"query": ""}, InvalidQueryError, "empty"),
        ({"query": "x" * 8001}, InvalidQueryError, "8000"),
        ({"limit": 0}, InvalidQueryError, "limit"),
        ({"limit": 1001}, InvalidQueryError, "limit"),
        ({"dense_weight": 0.1}, InvalidQueryError, "dense_weight"),
        ({"dense_weight": 1.5}, InvalidQueryError, "dense_weight"),
        ({"chunk_diffusion_count": 6}, InvalidQueryError, "chunk_diffusion_count"),
        ({"retrieve_count": 30}, InvalidQueryError, "retrieve_count applies only when rerank"),
        ({"mode": "thinking", "limit": 30, "retrieve_count": 20}, InvalidQueryError, ">= limit"),
        ({"rerank_model": "m3-v2-rerank"}, InvalidQueryError, "rerank is on"),
        ({"rerank_switch": True, "rerank_threshold": 0.5}, InvalidQueryError, "doubao-seed"),
        (
            {"rerank_switch": True, "rerank_model": "doubao-seed-rerank", "rerank_threshold": 2},
            InvalidQueryError,
            "rerank_threshold",
        ),
        (
            {
                "rerank_switch": True,
                "rerank_model": "doubao-seed-rerank",
                "rerank_instruction": "x" * 1025,
            },
            InvalidQueryError,
            "rerank_instruction",
        ),
        ({"rerank_only_chunk": True}, InvalidQueryError, "rerank is on"),
        ({"rewrite": True}, InvalidQueryError, "needs messages"),
        ({"messages": [{"role": "user", "content": "hi"}]}, InvalidQueryError, "rewrite"),
        (
            {"rewrite": True, "messages": [{"role": "system", "content": "hi"}]},
            InvalidQueryError,
            "role",
        ),
        ({"filter": {"op": "bogus"}}, InvalidFilterError, "unknown op"),
        ({"tags": ["ml"]}, InvalidQueryError, "no treehop tags"),
        (
            {"filter": {"op": "must", "field": "a", "conds": [1]}, "doc_filter": {}},
            InvalidQueryError,
            "not both",
        ),
        ({"bogus_option": 1}, InvalidQueryError, "bogus_option"),
        ({"explain": True}, InvalidQueryError, "none to trace"),
        ({"since": "2024-01-01"}, InvalidQueryError, "no timestamps"),
        ({"until": "2024-01-01"}, InvalidQueryError, "no timestamps"),
        ({"collapse_chunks": True}, InvalidQueryError, "chunk_group"),
        ({"tags_all": ["ml"]}, InvalidQueryError, "no treehop tags"),
        ({"include_directories": "yes"}, InvalidQueryError, "include_directories"),
        ({"target_uri": []}, InvalidURIError, "empty"),
        ({"mode": "fast"}, ValueError, "fast"),
    ],
)
def test_bad_options_are_refused_before_any_request(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource, kwargs: dict[str, Any], error: type, match: str
) -> None:
    kwargs = {"query": "token", **kwargs}
    before = len(srv.posts())
    with pytest.raises(error, match=match):
        src.find(**kwargs)
    assert len(srv.posts()) == before


def test_options_that_ask_for_nothing_are_honoured(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    """``explain=False``, ``collapse_chunks=False`` and either ``include_directories`` ask for
    nothing a knowledge base lacks (it has no directories): the same request is sent."""
    plain = src.find("token")
    body = sent(srv)
    same = src.find(
        "token", explain=False, collapse_chunks=False, include_directories=False, tags=[]
    )
    assert sent(srv) == body
    assert [m.uri for m in same.resources] == [m.uri for m in plain.resources]
    assert all(m.is_leaf for m in same.resources)


def test_defaults_apply_and_are_validated(srv: FakeVikingDB) -> None:
    src = make_source(srv, defaults={"limit": 2, "dense_weight": 0.4})
    assert src.find("token").total == 2 and sent(srv)["dense_weight"] == 0.4
    assert src.find("token", limit=3).total == 3
    with pytest.raises(InvalidQueryError, match="dense_weight"):
        make_source(srv, defaults={"dense_weight": 7})
    with pytest.raises(InvalidURIError):
        make_source(srv, uri_prefix="viking://~/memories/x")
    assert KnowledgeSearchOptions().payload("q") == {"query": "q", "limit": 10}


# ------------------------------------------------------------------------------------------
# Service errors
# ------------------------------------------------------------------------------------------
def test_unknown_knowledge_base_and_credentials(srv: FakeVikingDB) -> None:
    with pytest.raises(VikingDBNotFoundError, match="collection not exist") as info:
        make_source(srv, name="nope").find("token")
    assert info.value.code == 1000005
    with pytest.raises(VikingDBAuthError, match="unauthorized") as auth:
        make_source(srv, sk="wrong").find("token")
    assert "wrong" not in str(auth.value) and srv.auth_failures == ["signature mismatch"]
    srv.forbidden_aks.add(AK)
    with pytest.raises(VikingDBPermissionError, match="no permission"):
        make_source(srv).find("token")


def test_server_side_validation_and_http_200_error_codes(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    srv.script(Reply(400, {"code": 1000003, "message": "invalid request: doc_filter field"}))
    with pytest.raises(VikingDBInvalidRequestError, match="doc_filter field"):
        src.find("token")
    srv.script(Reply(200, {"code": 1000005, "message": "collection not exist", "data": None}))
    with pytest.raises(VikingDBNotFoundError, match="code=1000005"):
        src.find("token")
    srv.script(Reply(200, {"code": 0, "data": {"result_list": "broken"}}))
    with pytest.raises(VikingDBError, match="malformed response"):
        src.find("token")


def test_5xx_is_retried_and_4xx_is_not(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    before = len(srv.posts())
    srv.script(Reply(502, "bad gateway"), Reply(503, "busy"))
    assert src.find("token", limit=1).total == 1
    assert len(srv.posts()) == before + 3
    srv.script(*[Reply(500, {"code": 1000028, "message": "internal"})] * 3)
    with pytest.raises(VikingDBUnavailableError, match="http=500"):
        src.find("token")
    assert len(srv.posts()) == before + 6


def test_https_is_the_default_scheme(srv: FakeVikingDB) -> None:
    src = VikingDBKnowledgeSource(
        "handbook", host=srv.host, ak=AK, sk=SK, retry=RetryPolicy(max_retries=0)
    )
    assert src.scheme == "https"
    # TLS to a plain-HTTP port fails: the request really went out over https.
    with pytest.raises(VikingDBUnavailableError):
        src.find("token")
    assert srv.posts() == []


def test_keys_from_environment_and_never_in_repr(
    srv: FakeVikingDB, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLC_ACCESSKEY", AK)
    monkeypatch.setenv("VOLC_SECRETKEY", SK)
    src = make_source(srv, ak=None, sk=None)
    assert src.find("token", limit=1).total == 1
    assert SK not in repr(src) and AK not in repr(src)
    monkeypatch.delenv("VOLC_ACCESSKEY")
    with pytest.raises(StoreError, match="VOLC_ACCESSKEY"):
        make_source(srv, ak=None, sk=None)


# ------------------------------------------------------------------------------------------
# Async
# ------------------------------------------------------------------------------------------
async def test_async_find_runs_in_threads(src: VikingDBKnowledgeSource) -> None:
    queries = ["validate OAuth access tokens", "kubernetes rollout", "quarterly report costs"]
    results = await asyncio.gather(
        src.afind(queries[0], limit=1),
        src.aio.find(queries[1], limit=1),
        src.aio.find(queries[2], limit=1),
    )
    tops: list[MatchedContext] = [r.resources[0] for r in results]
    assert [m.parent_uri for m in tops] == [
        f"{PREFIX}/doc_oauth",
        f"{PREFIX}/doc_k8s",
        src.doc_uri("reports/2024 q1"),
    ]
    raw = await src.aio.search_knowledge("kubernetes rollout", limit=1)
    assert json.loads(json.dumps(raw.points))[0]["chunk_title"] == "Rollout"


def test_rerank_defaults_apply_only_to_reranked_calls() -> None:
    from treehop.vikingdb_knowledge import _options

    defaults = {"rerank_model": "doubao-seed-rerank", "rerank_threshold": 0.3}
    plain = _options(defaults, {})
    assert plain.rerank_model is None and plain.rerank_threshold is None
    reranked = _options(defaults, {"rerank_switch": True})
    assert reranked.rerank_model == "doubao-seed-rerank" and reranked.rerank_threshold == 0.3
    with pytest.raises(InvalidQueryError, match="rerank is on"):
        _options({}, {"rerank_model": "doubao-seed-rerank"})
    with pytest.raises(InvalidQueryError):
        _options({"rerank_model": "m3-v2-rerank", "rerank_threshold": 0.3}, {"rerank_switch": True})
