"""LlamaIndex ``TreehopRetriever`` over an existing VikingDB knowledge base.

The real :class:`VikingDBKnowledgeSource` (the official SDK) talks over real HTTP to the fake
knowledge-base API on 127.0.0.1, which checks the V4 signature and the documented request
rules. There is no store behind a knowledge base: these tests pin what replaces the
store-dependent features (relationships from the result itself, rerank events from the
service's rerank) and that nothing the knowledge base cannot honour is silently dropped.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import llama_index.core.instrumentation as instrument
import pytest
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.schema import Document, NodeRelationship, NodeWithScore, RelatedNodeInfo
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from pydantic import Field

from llama_index.retrievers.treehop import (
    KnowledgeSource,
    TreehopQueryEngine,
    TreehopQueryPlanEvent,
    TreehopRetriever,
)
from treehop._http import RetryPolicy
from treehop.errors import InvalidFilterError, InvalidQueryError, InvalidURIError
from treehop.vikingdb_knowledge import VikingDBKnowledgeSource

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
from fake_servers.vikingdb_server import FakeVikingDB

AK = "AKLTfake-li-knowledge"
SK = "fake-li-knowledge-secret"
OAUTH = f"{PREFIX}/doc_oauth"
QUERY = "validate OAuth access tokens"

POINTS = [*oauth_points(), k8s_point(), costs_point(attachments=IMAGE_ATTACHMENTS)]


class Recorder(BaseEventHandler):
    events: list[BaseEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "KnowledgeRecorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder(events=[])
    root = instrument.get_dispatcher()
    root.add_event_handler(rec)
    yield rec
    root.event_handlers.remove(rec)


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


def ids(nodes: list[NodeWithScore]) -> list[str]:
    return [n.node.node_id for n in nodes]


def rel(n: NodeWithScore, kind: NodeRelationship) -> str | None:
    info = n.node.relationships.get(kind)
    assert info is None or isinstance(info, RelatedNodeInfo)
    return info.node_id if info is not None else None


# ------------------------------------------------------------------------------------------
# Nodes: PointInfo fields, provenance, relationships without a store
# ------------------------------------------------------------------------------------------
def test_point_info_becomes_nodes(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    assert isinstance(src, KnowledgeSource)
    r = TreehopRetriever(src, similarity_top_k=2)
    nodes = r.retrieve(QUERY)
    assert sent(srv)["limit"] == 2  # similarity_top_k is the knowledge base's limit
    assert ids(nodes) == [f"{OAUTH}#chunk-1", f"{OAUTH}#chunk-0"]
    top = nodes[0]
    assert top.score == 1.0 and top.node.get_content() == POINTS[1].content
    md = top.node.metadata
    assert md["uri"] == top.node.node_id and md["parent_uri"] == OAUTH
    assert md["chunk_index"] == 1 and md["context_type"] == "resource"
    assert md["retrieval_score"] == 1.0 and md["rerank_score"] is None
    assert md["point_id"] == "doc_oauth_1" and md["chunk_title"] == "Validation"
    assert md["doc_info"]["doc_meta"] == [
        {"field_name": "year", "field_value": 2023},
        {"field_name": "team", "field_value": "security"},
    ]
    assert md["source"] == "vikingdb_knowledge" and md["abstract"] == "Validation"
    # Relationships: the document is PARENT and SOURCE; chunk 0 is in the result, so it is
    # PREVIOUS of chunk 1; chunk 2 is not, so there is no NEXT (the service does not say how
    # many chunks a document has); no CHILD (chunks are leaves, and there is no store).
    assert rel(top, NodeRelationship.PARENT) == OAUTH
    assert top.node.ref_doc_id == OAUTH
    assert rel(top, NodeRelationship.PREVIOUS) == f"{OAUTH}#chunk-0"
    assert rel(top, NodeRelationship.NEXT) is None
    assert NodeRelationship.CHILD not in top.node.relationships
    second = nodes[1]
    assert rel(second, NodeRelationship.PREVIOUS) is None
    assert rel(second, NodeRelationship.NEXT) == f"{OAUTH}#chunk-1"


def test_neighbour_links_come_from_chunk_diffusion(
    srv: FakeVikingDB, src: VikingDBKnowledgeSource
) -> None:
    r = TreehopRetriever(src, similarity_top_k=1, chunk_diffusion_count=1)
    nodes = r.retrieve("refresh tokens rotate")
    assert sent(srv)["post_processing"] == {"chunk_diffusion_count": 1}
    assert ids(nodes) == [f"{OAUTH}#chunk-{i}" for i in (2, 1, 3)]
    hit, before, after = nodes
    assert rel(hit, NodeRelationship.PREVIOUS) == f"{OAUTH}#chunk-1"
    assert rel(hit, NodeRelationship.NEXT) == f"{OAUTH}#chunk-3"
    assert rel(before, NodeRelationship.PREVIOUS) is None  # chunk 0 not returned
    assert rel(before, NodeRelationship.NEXT) == f"{OAUTH}#chunk-2"
    assert rel(after, NodeRelationship.PREVIOUS) == f"{OAUTH}#chunk-2"
    assert rel(after, NodeRelationship.NEXT) is None
    bare = TreehopRetriever(
        src, similarity_top_k=1, chunk_diffusion_count=1, include_relationships=False
    ).retrieve("refresh tokens rotate")
    assert ids(bare) == ids(nodes)
    assert [set(n.node.relationships) for n in bare] == [{NodeRelationship.PARENT}] * 3


# ------------------------------------------------------------------------------------------
# Options: mapped onto search_knowledge
# ------------------------------------------------------------------------------------------
def test_options_map_onto_search_knowledge(srv: FakeVikingDB, recorder: Recorder) -> None:
    # The source validates its defaults alone: a rerank model needs rerank_switch with it.
    src = make_source(srv, defaults={"rerank_switch": True, "rerank_model": "doubao-seed-rerank"})
    filters = MetadataFilters(
        filters=[
            MetadataFilter(key="team", value=["security", "finance"], operator=FilterOperator.IN),
            MetadataFilter(key="year", value=2023, operator=FilterOperator.GTE),
        ]
    )
    r = TreehopRetriever(
        src,
        similarity_top_k=3,
        filters=filters,
        dense_weight=0.5,
        retrieval_mode="thinking",
        retrieve_count=30,
        rerank_threshold=0.3,
        chunk_group=True,
        score_threshold=0.3,
    )
    nodes = r.retrieve("access tokens")
    body = sent(srv)
    assert body["limit"] == 3 and body["dense_weight"] == 0.5
    assert body["query_param"] == {
        "doc_filter": {
            "op": "and",
            "conds": [
                {"op": "must", "field": "team", "conds": ["security", "finance"]},
                {"op": "range", "field": "year", "gte": 2023},
            ],
        }
    }
    assert body["post_processing"] == {
        "rerank_switch": True,
        "retrieve_count": 30,
        "rerank_model": "doubao-seed-rerank",
        "rerank_threshold": 0.3,
        "chunk_group": True,
    }
    assert nodes and {n.node.metadata["parent_uri"] for n in nodes} <= {
        OAUTH,
        f"{PREFIX}/doc_costs",
    }
    for n in nodes:  # the final score is the service's rerank score
        assert n.score == n.node.metadata["rerank_score"] and n.score is not None
        assert n.score >= 0.3 and n.node.metadata["retrieval_score"] is not None
    # LlamaIndex's own rerank events, named after the service's model
    starts = [e for e in recorder.events if isinstance(e, ReRankStartEvent)]
    ends = [e for e in recorder.events if isinstance(e, ReRankEndEvent)]
    assert [e.model_name for e in starts] == ["doubao-seed-rerank"] and starts[0].top_n == 3
    assert len(ends) == 1 and ids(ends[0].nodes) == ids(nodes)


def test_score_threshold_and_context_types(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    everything = TreehopRetriever(src, similarity_top_k=6).retrieve("access tokens")
    strong = TreehopRetriever(src, similarity_top_k=6, score_threshold=0.9).retrieve(
        "access tokens"
    )
    assert len(everything) == 6 and 0 < len(strong) < len(everything)
    assert all(n.score is not None and n.score >= 0.9 for n in strong)
    # a knowledge base holds resources: several context types keep the resources
    mixed = TreehopRetriever(src, similarity_top_k=2, context_types=["memory", "resource"])
    assert len(mixed.retrieve(QUERY)) == 2
    before = len(srv.posts())
    memories = TreehopRetriever(src, context_types="memory").retrieve(QUERY)
    assert memories == [] and len(srv.posts()) == before  # nothing to ask the service


def test_target_uri_scopes_to_documents(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    r = TreehopRetriever(src, similarity_top_k=5, target_uri=[f"{PREFIX}/doc_k8s"])
    assert ids(r.retrieve("access tokens")) == [f"{PREFIX}/doc_k8s#chunk-0"]
    assert sent(srv)["query_param"]["doc_filter"] == {
        "op": "must",
        "field": "doc_id",
        "conds": ["doc_k8s"],
    }


# ------------------------------------------------------------------------------------------
# What a knowledge base cannot honour is refused at construction
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"mode": "search"}, InvalidQueryError, "mode='search' needs a treehop client"),
        (
            {"filters": MetadataFilters(filters=[MetadataFilter(key="tags", value="ops")])},
            InvalidFilterError,
            "VikingDBKnowledgeSource has no treehop tags",
        ),
        ({"target_uri": "viking://resources/other/doc"}, InvalidURIError, "not a document"),
        ({"target_uri": ["viking://~/memories/x"]}, InvalidURIError, "not a document"),
        ({"chunk_diffusion_count": 6}, InvalidQueryError, "chunk_diffusion_count"),
        ({"similarity_top_k": 5, "retrieve_count": 4}, InvalidQueryError, "retrieve_count"),
        ({"dense_weight": 2.0}, InvalidQueryError, "dense_weight"),
    ],
)
def test_constructor_refuses_what_the_source_cannot_honour(
    srv: FakeVikingDB,
    src: VikingDBKnowledgeSource,
    kwargs: dict[str, Any],
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        TreehopRetriever(src, **kwargs)
    assert srv.posts() == []


def test_later_refusals_send_nothing(srv: FakeVikingDB, src: VikingDBKnowledgeSource) -> None:
    r = TreehopRetriever(src)
    with pytest.raises(InvalidFilterError, match="no treehop tags"):
        r.filters = MetadataFilters(filters=[MetadataFilter(key="tags", value="ops")])
    r.mode = "search"  # set after construction: still refused, at query time
    with pytest.raises(InvalidQueryError, match="answers find\\(\\) only"):
        r.retrieve(QUERY)
    r.mode = "find"
    r.retrieve_count = 30  # the source's own rule: retrieve_count needs its rerank on
    with pytest.raises(InvalidQueryError, match="applies only when rerank is on"):
        r.retrieve(QUERY)
    with pytest.raises(InvalidQueryError, match="read-only"):
        TreehopRetriever.from_defaults(src, documents=[Document(text="x")])
    assert srv.posts() == []


# ------------------------------------------------------------------------------------------
# Async, query plan, query engine, imports
# ------------------------------------------------------------------------------------------
async def test_aretrieve_runs_the_sdk_off_the_event_loop(
    src: VikingDBKnowledgeSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[threading.Thread] = []
    real_find = src.find

    def spy(query: str, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return real_find(query, **kwargs)

    monkeypatch.setattr(src, "find", spy)
    r = TreehopRetriever(src, similarity_top_k=1)
    got = await asyncio.gather(
        r.aretrieve(QUERY), r.aretrieve("kubernetes rollout"), r.aretrieve("quarterly costs")
    )
    assert [ids(nodes) for nodes in got] == [
        [f"{OAUTH}#chunk-1"],
        [f"{PREFIX}/doc_k8s#chunk-0"],
        [f"{PREFIX}/doc_costs#chunk-0"],
    ]
    assert len(threads) == 3 and threading.current_thread() not in threads
    assert ids(r.retrieve(QUERY)) == ids(got[0])
    assert threads[-1] is threading.current_thread()  # retrieve calls find directly


def test_rewritten_query_becomes_a_query_plan_event(srv: FakeVikingDB, recorder: Recorder) -> None:
    msgs = [{"role": "user", "content": "kubernetes"}]
    src = make_source(srv, defaults={"rewrite": True, "messages": msgs})
    nodes = TreehopRetriever(src, similarity_top_k=1).retrieve("rollout")
    assert ids(nodes) == [f"{PREFIX}/doc_k8s#chunk-0"]
    plans = [e for e in recorder.events if isinstance(e, TreehopQueryPlanEvent)]
    assert len(plans) == 1 and plans[0].planner == "vikingdb:rewrite"
    assert [q["query"] for q in plans[0].queries] == ["kubernetes rollout"]
    # quick mode and no rerank in the defaults: no rerank events
    assert not [e for e in recorder.events if isinstance(e, ReRankStartEvent)]


def test_query_engine_over_a_knowledge_base(src: VikingDBKnowledgeSource) -> None:
    engine = TreehopQueryEngine.from_client(src, retriever_kwargs={"similarity_top_k": 2})
    response = engine.query(QUERY)  # Settings.llm is a MockLLM (conftest)
    assert ids(response.source_nodes) == [f"{OAUTH}#chunk-1", f"{OAUTH}#chunk-0"]
    with pytest.raises(InvalidQueryError, match="mode='search'"):
        TreehopQueryEngine.from_client(src, retriever_kwargs={"mode": "search"})


def test_importing_the_integration_does_not_import_the_sdk() -> None:
    code = (
        "import sys, llama_index.retrievers.treehop\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in ('vikingdb', 'volcengine')]\n"
        "assert not loaded and 'treehop.vikingdb_knowledge' not in sys.modules, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
