"""LangChain ``TreehopRetriever`` over an existing VikingDB knowledge base.

The real :class:`VikingDBKnowledgeSource` (the official SDK) talks over real HTTP to the fake
knowledge-base API on 127.0.0.1, which checks the V4 signature and the documented request
rules, so these tests fail if a retriever option is not mapped onto its ``search_knowledge``
name, if a ``PointInfo`` field does not reach the ``Document``, or if an option the knowledge
base cannot honour is silently dropped.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from pydantic import ValidationError

from langchain_treehop import PROVENANCE_KEYS, KnowledgeSource, TreehopRetriever
from treehop._http import RetryPolicy
from treehop.errors import InvalidQueryError, InvalidURIError
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource

from fake_servers.vikingdb_knowledge_setup import (
    PREFIX,
    costs_point,
    k8s_point,
    knowledge_server,
    make_knowledge_source,
    oauth_points,
    sent,
)
from fake_servers.vikingdb_server import FakeVikingDB

AK = "AKLTfake-lc-knowledge"
SK = "fake-lc-knowledge-secret"
OAUTH = f"{PREFIX}/doc_oauth"
QUERY = "validate OAuth access tokens"

POINTS = [*oauth_points(), k8s_point(extra={"chunk_source": "document"}), costs_point()]


@pytest.fixture
def srv() -> Iterator[FakeVikingDB]:
    with knowledge_server(AK, SK, POINTS) as server:
        yield server


def make_source(srv: FakeVikingDB, **kwargs: Any) -> VikingDBKnowledgeSource:
    return make_knowledge_source(srv, ak=AK, sk=SK, retry=RetryPolicy(max_retries=0), **kwargs)


@pytest.fixture
def src(srv: FakeVikingDB) -> Iterator[VikingDBKnowledgeSource]:
    source = make_source(srv)
    yield source
    source.close()


def chunks(docs: list[Document]) -> list[tuple[str, int]]:
    return [(d.metadata["parent_uri"], d.metadata["chunk_index"]) for d in docs]


class EventRecorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append((name, data))


# ------------------------------------------------------------------------------------------
# Results: PointInfo fields reach the Documents
# ------------------------------------------------------------------------------------------
def test_point_info_becomes_documents(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    assert isinstance(src, KnowledgeSource)
    docs = TreehopRetriever(client=src, k=2).invoke(QUERY)
    assert sent(srv)["limit"] == 2  # k is the knowledge base's limit
    assert len(docs) == 2
    top = docs[0]
    assert top.id == f"{OAUTH}#chunk-1"
    assert top.page_content == POINTS[1].content
    md = top.metadata
    assert set(PROVENANCE_KEYS) <= set(md)
    assert md["parent_uri"] == OAUTH and md["chunk_index"] == 1
    assert md["context_type"] == "resource" and md["is_leaf"] is True
    assert md["score"] == md["vector_score"] == 1.0 and md["rerank_score"] is None
    assert md["found_by"] == "global" and md["abstract"] == "Validation"
    assert md["point_id"] == "doc_oauth_1" and md["chunk_title"] == "Validation"
    assert md["source"] == "vikingdb_knowledge" and md["collection_name"] == "handbook"
    assert md["doc_info"]["doc_name"] == "oauth.md"
    assert md["doc_info"]["doc_meta"] == [
        {"field_name": "year", "field_value": 2023},
        {"field_name": "team", "field_value": "security"},
    ]
    assert docs[1].metadata["score"] <= md["score"]
    # page_content follows content_field: the chunk title is the abstract
    titles = TreehopRetriever(client=src, k=1, content_field="abstract").invoke(QUERY)
    assert [d.page_content for d in titles] == ["Validation"]
    assert srv.auth_failures == []


def test_options_map_onto_search_knowledge(srv: FakeVikingDB) -> None:
    # The source validates its defaults alone: a rerank model needs rerank_switch with it.
    src = make_source(srv, defaults={"rerank_switch": True, "rerank_model": "doubao-seed-rerank"})
    r = TreehopRetriever(
        client=src,
        k=3,
        metadata_filter={"op": "must", "field": "team", "conds": ["security", "finance"]},
        dense_weight=0.5,
        retrieval_mode="thinking",
        retrieve_count=30,
        rerank_threshold=0.3,
        chunk_diffusion_count=1,
        chunk_group=True,
    )
    docs = r.invoke("access tokens")
    body = sent(srv)
    assert body["limit"] == 3 and body["dense_weight"] == 0.5
    assert body["query_param"] == {
        "doc_filter": {"op": "must", "field": "team", "conds": ["security", "finance"]}
    }
    assert body["post_processing"] == {
        "rerank_switch": True,
        "retrieve_count": 30,
        "rerank_model": "doubao-seed-rerank",
        "rerank_threshold": 0.3,
        "chunk_diffusion_count": 1,
        "chunk_group": True,
    }
    assert docs and {d.metadata["parent_uri"] for d in docs} <= {OAUTH, f"{PREFIX}/doc_costs"}
    # reranked: the score is the service's rerank score, the vector score is kept
    primary = [d for d in docs if d.metadata["rerank_score"] is not None]
    assert primary and all(d.metadata["score"] == d.metadata["rerank_score"] for d in primary)
    assert all(d.metadata["rerank_score"] >= 0.3 for d in primary)
    assert all(d.metadata["vector_score"] is not None for d in docs)
    # grouped by document, each document's chunks in reading order
    order = chunks(docs)
    by_doc = [p for p, _ in order]
    assert by_doc == sorted(by_doc, key=by_doc.index)
    for parent in set(by_doc):
        ids = [i for p, i in order if p == parent]
        assert ids == sorted(ids)


def test_per_call_overrides_and_score_threshold(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    r = TreehopRetriever(client=src, k=6)
    everything = r.invoke("access tokens")
    assert len(everything) == 6 and sent(srv)["limit"] == 6
    strong = r.invoke("access tokens", score_threshold=0.9)
    assert strong and len(strong) < len(everything)
    assert all(d.metadata["score"] >= 0.9 for d in strong)
    weak = [d for d in everything if d.metadata["score"] < 0.9]
    assert weak  # the threshold really removed hits
    filtered = r.invoke(
        "access tokens", k=2, metadata_filter={"op": "range", "field": "year", "gte": 2024}
    )
    assert sent(srv)["limit"] == 2
    assert sent(srv)["query_param"]["doc_filter"] == {"op": "range", "field": "year", "gte": 2024}
    assert [d.metadata["parent_uri"] for d in filtered] == [f"{PREFIX}/doc_costs"]


def test_chunk_diffusion_neighbours_come_on_top_of_k(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    r = TreehopRetriever(client=src, k=1, chunk_diffusion_count=1)
    assert chunks(r.invoke("refresh tokens rotate")) == [(OAUTH, 2), (OAUTH, 1), (OAUTH, 3)]
    assert sent(srv)["post_processing"] == {"chunk_diffusion_count": 1}
    grouped = r.invoke("refresh tokens rotate", chunk_group=True)
    assert chunks(grouped) == [(OAUTH, 1), (OAUTH, 2), (OAUTH, 3)]


def test_target_uri_scopes_to_documents(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    r = TreehopRetriever(client=src, k=5, target_uri=f"{PREFIX}/doc_k8s")
    docs = r.invoke("access tokens")
    assert [d.id for d in docs] == [f"{PREFIX}/doc_k8s#chunk-0"]
    assert docs[0].metadata["chunk_source"] == "document"
    assert sent(srv)["query_param"]["doc_filter"] == {
        "op": "must",
        "field": "doc_id",
        "conds": ["doc_k8s"],
    }
    both = r.invoke("access tokens", target_uri=[OAUTH, f"{PREFIX}/doc_costs"])
    assert {d.metadata["parent_uri"] for d in both} == {OAUTH, f"{PREFIX}/doc_costs"}


def test_a_knowledge_base_holds_resources_only(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    r = TreehopRetriever(client=src, k=3)
    assert r.invoke(QUERY, context_types=["memory"]) == []
    assert srv.posts() == []  # nothing to ask the service for
    assert len(r.invoke(QUERY, context_types=["resource"])) == 3


# ------------------------------------------------------------------------------------------
# What a knowledge base cannot honour is refused, never dropped
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "search"}, "mode='search' needs a treehop client"),
        ({"tag_filter": ["ops"]}, "VikingDBKnowledgeSource has no treehop tags"),
        ({"tag_filter_all": "ops;security"}, "no treehop tags"),
        ({"target_uri": "viking://resources/other/doc"}, "not a document of knowledge base"),
        ({"target_uri": f"{PREFIX}/a/b"}, "does not name one document"),
    ],
)
def test_constructor_refuses_what_the_source_cannot_honour(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        TreehopRetriever(client=src, **kwargs)
    assert srv.posts() == []


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"mode": "search"}, InvalidQueryError, "answers find\\(\\) only"),
        ({"tag_filter": ["ops"]}, InvalidQueryError, "no treehop tags"),
        ({"target_uri": "viking://resources/other/doc"}, InvalidURIError, "not a document"),
        # the source's own rules: retrieve_count needs its rerank (retrieval_mode="thinking")
        ({"retrieve_count": 30}, InvalidQueryError, "applies only when rerank is on"),
        ({"retrieval_mode": "thinking", "rerank_threshold": 0.5}, InvalidQueryError, "seed"),
        ({"dense_weight": 0.1}, InvalidQueryError, "dense_weight"),
    ],
)
def test_per_call_refusals_send_nothing(
    srv: FakeVikingDB,
    src: VikingDBKnowledgeSource,
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    r = TreehopRetriever(client=src)
    with pytest.raises(error, match=message):
        r.invoke(QUERY, **kwargs)
    assert srv.posts() == []


def test_other_clients_are_still_refused() -> None:
    class FindOnly:  # find but no async path
        def find(self, query: str, **kwargs: Any) -> None:
            return None

    with pytest.raises(ValidationError, match="instance of KnowledgeSource"):
        TreehopRetriever(client=FindOnly())


# ------------------------------------------------------------------------------------------
# Async, events, tracing
# ------------------------------------------------------------------------------------------
async def test_ainvoke_runs_the_sdk_off_the_event_loop(
    src: VikingDBKnowledgeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real_find = src.find

    def spy(query: str, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return real_find(query, **kwargs)

    monkeypatch.setattr(src, "find", spy)
    r = TreehopRetriever(client=src, k=1)
    got = await asyncio.gather(
        r.ainvoke(QUERY), r.ainvoke("kubernetes rollout"), r.ainvoke("quarterly report costs")
    )
    assert [docs[0].metadata["parent_uri"] for docs in got] == [
        OAUTH,
        f"{PREFIX}/doc_k8s",
        f"{PREFIX}/doc_costs",
    ]
    assert len(threads) == 3 and threading.current_thread() not in threads
    sync = r.invoke(QUERY)
    assert [d.id for d in sync] == [d.id for d in got[0]]
    assert threads[-1] is threading.current_thread()  # invoke calls find directly


def test_rewritten_query_is_traced_as_the_query_plan(srv: FakeVikingDB) -> None:
    msgs = [{"role": "user", "content": "kubernetes"}]
    src = make_source(srv, defaults={"rewrite": True, "messages": msgs})
    rec = EventRecorder()
    docs = TreehopRetriever(client=src, k=1).invoke("rollout", config={"callbacks": [rec]})
    assert [d.metadata["parent_uri"] for d in docs] == [f"{PREFIX}/doc_k8s"]
    assert sent(srv)["pre_processing"] == {"rewrite": True, "messages": msgs}
    assert rec.events[0][0] == "treehop_query_plan"
    data = rec.events[0][1]
    assert data["planner"] == "vikingdb:rewrite"
    assert [q["query"] for q in data["queries"]] == ["kubernetes rollout"]


def test_ls_params_name_the_knowledge_source(src: VikingDBKnowledgeSource) -> None:
    params = TreehopRetriever(client=src)._get_ls_params()
    assert params["ls_vector_store_provider"] == "VikingDBKnowledgeSource"
    assert "ls_embedding_provider" not in params


def test_importing_the_integration_does_not_import_the_sdk() -> None:
    code = (
        "import sys, langchain_treehop\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('vikingdb', 'volcengine')]\n"
        "assert not loaded and 'treehop.vikingdb_knowledge' not in sys.modules, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
