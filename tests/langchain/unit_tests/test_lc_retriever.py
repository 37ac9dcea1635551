"""TreehopRetriever: documents and provenance, per-call arguments, filters, async, tracing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from pydantic import SecretStr, ValidationError

from langchain_treehop import (
    PROVENANCE_KEYS,
    LangChainEmbedder,
    TreehopRetriever,
)
from treehop import AsyncTreehop, ContextType, RetrievalConfig, TagHopTrigger, Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError, NotFoundError
from treehop.rerankers.base import BaseReranker

from lc_helpers import SlowAsyncEmbeddings, WordHashEmbeddings, aload_sample_tree, load_sample_tree

QUERY = "kubernetes deployment rollout readiness probes"


class EventRecorder(BaseCallbackHandler):
    """Records custom events and retriever runs."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any, UUID]] = []
        self.retriever_runs: list[UUID] = []

    def on_retriever_start(self, serialized: Any, query: str, *, run_id: UUID, **kw: Any) -> None:
        self.retriever_runs.append(run_id)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kw: Any) -> None:
        self.events.append((name, data, run_id))


def uris(docs: Sequence[Document]) -> list[str | None]:
    return [d.id for d in docs]


# ---------------------------------------------------------------------------- documents


def test_documents_carry_uri_text_and_full_provenance(lc_client: Treehop) -> None:
    docs = TreehopRetriever(client=lc_client, k=5).invoke(QUERY)
    assert len(docs) == 5
    scores = [d.metadata["score"] for d in docs]
    assert scores == sorted(scores, reverse=True)
    top_leaf = next(d for d in docs if d.metadata["is_leaf"])
    node = lc_client.stat(top_leaf.id or "")
    assert top_leaf.page_content == node.content  # auto: a leaf gives its full content
    for d in docs:
        assert d.id == d.metadata["uri"]
        assert d.id is not None and d.id.startswith("viking://resources/")
        assert set(PROVENANCE_KEYS) <= set(d.metadata)
        assert d.metadata["context_type"] == "resource"
        assert d.metadata["found_by"] in {"global", "child", "tag_hop", "neighbour"}
        assert d.metadata["query"] == QUERY
        assert d.metadata["matched_queries"][0]["query"] == QUERY
        assert d.metadata["rerank_fallback"] is False
        assert isinstance(d.metadata["vector_score"], float)
        if not d.metadata["is_leaf"]:
            # A directory's page_content is its overview, the summary of its subtree.
            assert d.page_content == lc_client.stat(d.id).overview


def test_the_deployment_page_is_found(lc_client: Treehop) -> None:
    docs = TreehopRetriever(client=lc_client, k=5, include_directories=False).invoke(QUERY)
    assert "viking://resources/devops/kubernetes/deployments.md" in uris(docs)
    assert all(d.metadata["is_leaf"] for d in docs)


@pytest.mark.parametrize("field", ["abstract", "overview", "content"])
def test_content_field_picks_the_text(lc_client: Treehop, field: str) -> None:
    docs = TreehopRetriever(client=lc_client, k=4).invoke(QUERY, content_field=field)
    for d in docs:
        node = lc_client.stat(d.id or "")
        expected = getattr(node, field) or node.overview or node.abstract or node.content
        assert d.page_content == expected


def test_node_metadata_is_merged_under_provenance(lc_client: Treehop) -> None:
    docs = TreehopRetriever(client=lc_client, k=3, include_directories=False).invoke(QUERY)
    for d in docs:
        assert d.metadata["kind"] == "markdown"  # written by the tree builder
        assert d.metadata["source_path"].endswith(".md")


# ---------------------------------------------------------------------------- k and kwargs


def test_k_from_constructor_and_per_call(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=2)
    assert len(r.invoke(QUERY)) == 2
    assert len(r.invoke(QUERY, k=6)) == 6
    assert len(r.invoke(QUERY)) == 2  # a per-call k does not stick
    assert uris(r.invoke(QUERY, k=6))[:2] == uris(r.invoke(QUERY))


def test_bad_per_call_arguments_raise_typed_errors(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client)
    with pytest.raises(InvalidQueryError, match="k: Input should be greater than or equal to 0"):
        r.invoke(QUERY, k=-1)  # (k=0 is [], as LangChain's VectorStoreRetriever: test_usage58)
    with pytest.raises(InvalidQueryError, match=r"\['limit'\]\. Use k instead of limit\."):
        r.invoke(QUERY, limit=3)
    with pytest.raises(InvalidQueryError, match=r"Use tag_filter .* instead of tags"):
        r.invoke(QUERY, tags=["ops"])  # 'tags' is LangChain's callback field, not a filter
    with pytest.raises(InvalidQueryError, match=r"\['colour'\]\. Per-call arguments are: mode"):
        r.invoke(QUERY, colour="red")
    with pytest.raises(InvalidQueryError, match="unknown op"):
        r.invoke(QUERY, metadata_filter={"op": "equals", "field": "x", "conds": [1]})
    with pytest.raises(InvalidQueryError, match="query is empty"):
        r.invoke("   ")


def test_constructor_validation(lc_client: Treehop, tmp_path: Path) -> None:
    # Constructor errors are pydantic ValidationErrors (as for every LangChain component)
    # carrying treehop's message; per-call errors are treehop's typed errors.
    cases: list[tuple[dict[str, Any], str]] = [
        ({}, r"needs client=\.\.\. or path="),
        ({"client": lc_client, "path": str(tmp_path)}, "give client or path, not both"),
        (
            {"client": lc_client, "embedding": WordHashEmbeddings()},
            "applies only when the retriever",
        ),
        ({"client": lc_client, "user": "bob"}, "user applies only when the retriever"),
        ({"client": lc_client, "tag_filter": [" "]}, "empty tag"),
        ({"client": lc_client, "metadata_filter": {"op": "must", "field": "x"}}, "'conds'"),
        ({"client": lc_client, "session_id": "abc"}, "only apply to mode='search'"),
        ({"client": lc_client, "context_types": ["resource", "memory"]}, "one context type"),
        ({"client": lc_client, "target_uri": "resources/devops"}, "not a viking:// URI"),
        ({"client": lc_client, "limit": 3}, "Extra inputs are not permitted"),
        ({"client": lc_client, "k": -1}, "greater than or equal to 0"),  # (1001: usage60)
        ({"client": lc_client, "content_field": "body"}, "content_field must be one of"),
        ({"client": object()}, "Input should be an instance of Treehop"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValidationError, match=message):
            TreehopRetriever(**kwargs)


# ---------------------------------------------------------------------------- filters and scope


def test_tag_filter_keeps_only_tagged_nodes(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=10)
    unfiltered = r.invoke("machine learning model training and deployment")
    assert any("ops" not in {t.split(":")[1] for t in d.metadata["tags"]} for d in unfiltered)
    filtered = r.invoke("machine learning model training and deployment", tag_filter="ops")
    assert filtered
    for d in filtered:
        assert "user:ops" in d.metadata["tags"]
        assert d.id is not None and d.id.startswith(
            ("viking://resources/devops", "viking://resources/security")
        )
    constructed = TreehopRetriever(client=lc_client, k=10, tag_filter=["USER:Ops"])
    assert uris(constructed.invoke("machine learning model training and deployment")) == uris(
        filtered
    )


def test_tag_filter_all_needs_every_tag(lc_client: Treehop) -> None:
    lc_client.add_resource(
        "Pager rotations for the platform team.",
        target_uri="viking://resources/oncall.md",
        tags="oncall",
    )
    r = TreehopRetriever(client=lc_client, k=10)
    assert r.invoke(QUERY, tag_filter_all=["ops", "oncall"]) == []  # no node has both
    assert r.invoke(QUERY, tag_filter_all=["ops"])


def test_unknown_tag_is_an_error_like_an_unknown_field(lc_client: Treehop) -> None:
    # A tag no node has would match nothing, as a metadata field no node has would: both are
    # typed errors naming what exists, never a silent [].
    r = TreehopRetriever(client=lc_client, k=10)
    with pytest.raises(InvalidFilterError, match=r"tag\(s\) \['no-such-tag'\].*ops"):
        r.invoke(QUERY, tag_filter_all=["ops", "no-such-tag"])
    with pytest.raises(InvalidFilterError, match="no-such-tag"):
        r.invoke(QUERY, tag_filter=["no-such-tag"])
    with pytest.raises(InvalidFilterError, match="no-such-field"):
        r.invoke(QUERY, metadata_filter={"no-such-field": 1})


async def test_unknown_tag_is_an_error_async(alc_client: AsyncTreehop) -> None:
    r = TreehopRetriever(client=alc_client, k=10)
    with pytest.raises(InvalidFilterError, match="kubernets"):
        await r.ainvoke(QUERY, tag_filter=["user:kubernets"])
    assert await r.ainvoke(QUERY, tag_filter=["user:ops"])  # a source prefix is ignored


def test_unknown_field_message_hides_internal_fields(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=10)
    with pytest.raises(InvalidFilterError) as err:
        r.invoke(QUERY, metadata_filter={"yeer": 2023})
    message = str(err.value)
    assert "source_path" in message  # a field the user can filter on is listed
    for internal in ("implicit", "overview_from", "treehop_id", "treehop_order"):
        assert internal not in message


def test_target_uri_and_context_type_scope(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=10)
    docs = r.invoke(QUERY, target_uri="viking://resources/security")
    assert docs
    assert all((d.id or "").startswith("viking://resources/security") for d in docs)
    two = r.invoke(
        QUERY, target_uri=["viking://resources/security", "viking://~/skills"], score_threshold=-1.0
    )
    assert {d.metadata["context_type"] for d in two} <= {"resource", "skill"}
    assert any(d.metadata["context_type"] == "skill" for d in two)
    memories = r.invoke("how does the user like code reviews", context_types="memory")
    as_enum = r.invoke("how does the user like code reviews", context_types=[ContextType.MEMORY])
    assert uris(as_enum) == uris(memories)
    assert memories and all(d.metadata["context_type"] == "memory" for d in memories)
    assert all((d.id or "").startswith("viking://~/memories") for d in memories)
    with pytest.raises(NotFoundError, match="unknown target"):
        r.invoke(QUERY, target_uri="viking://resources/nope")


def test_score_threshold_drops_weak_hits(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=20)
    everything = r.invoke(QUERY)
    cut = everything[2].metadata["score"]
    kept = r.invoke(QUERY, score_threshold=cut)
    assert 0 < len(kept) < len(everything)
    assert all(d.metadata["score"] >= cut for d in kept)


def test_metadata_filter_reaches_the_core(lc_client: Treehop) -> None:
    r = TreehopRetriever(client=lc_client, k=20, include_directories=False)
    only_chinese = {"op": "must", "field": "name", "conds": ["单点登录.md"]}
    docs = r.invoke("single sign-on login", metadata_filter=only_chinese)
    assert uris(docs) == ["viking://resources/security/auth/单点登录.md"]


# ---------------------------------------------------------------------------- async


async def test_ainvoke_matches_invoke_on_both_clients(
    lc_client: Treehop, alc_client: AsyncTreehop
) -> None:
    sync_r = TreehopRetriever(client=lc_client, k=5)
    async_r = TreehopRetriever(client=alc_client, k=5)
    expected = uris(await asyncio.to_thread(sync_r.invoke, QUERY))
    assert uris(await sync_r.ainvoke(QUERY)) == expected  # a sync client's .aio
    assert uris(await async_r.ainvoke(QUERY)) == expected
    assert uris(await async_r.ainvoke(QUERY, k=2)) == expected[:2]
    assert uris(await asyncio.to_thread(async_r.invoke, QUERY)) == expected


async def test_ainvoke_does_not_block_the_event_loop() -> None:
    slow = SlowAsyncEmbeddings(delay_s=0.3)
    client = AsyncTreehop(None, embedder=LangChainEmbedder(slow), tagger=None)
    await aload_sample_tree(client)
    slow.forbid_sync_query = True
    r = TreehopRetriever(client=client, k=3)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    tick_task = asyncio.create_task(ticker())
    t0 = time.perf_counter()
    results = await asyncio.gather(*(r.ainvoke(QUERY) for _ in range(4)))
    elapsed = time.perf_counter() - t0
    tick_task.cancel()
    assert all(len(docs) == 3 for docs in results)
    # Four queries awaiting 0.3 s each overlap: well under the 1.2 s a serial path would take.
    assert elapsed < 0.9, elapsed
    assert ticks >= 10  # the loop kept running while the queries waited


async def test_sync_invoke_works_inside_a_running_loop(alc_client: AsyncTreehop) -> None:
    # As in Jupyter: sync code called while this thread's loop is running.
    r = TreehopRetriever(client=alc_client, k=2)
    docs = r.invoke(QUERY)
    assert len(docs) == 2


# ---------------------------------------------------------------------------- tracing


class FailingReranker(BaseReranker):
    name = "failing"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        raise RuntimeError("reranker is down")


def test_rerank_fallback_is_traced_and_recorded(embeddings: WordHashEmbeddings) -> None:

    client = Treehop(
        None, embedder=LangChainEmbedder(embeddings), tagger=None, reranker=FailingReranker()
    )
    try:
        load_sample_tree(client)
        rec = EventRecorder()
        r = TreehopRetriever(client=client, k=3, retrieval_mode="thinking")
        docs = r.invoke(QUERY, config={"callbacks": [rec]})
        assert docs and all(d.metadata["rerank_fallback"] for d in docs)
        assert all("reranker is down" in (d.metadata["rerank_fallback_reason"] or "") for d in docs)
        names = [e[0] for e in rec.events]
        assert names == ["treehop_global_search", "treehop_descent", "treehop_rerank_fallback"]
        data, run_id = rec.events[2][1], rec.events[2][2]
        assert "reranker is down" in data["queries"][0]["reason"]
        assert run_id == rec.retriever_runs[0]  # attached to the retriever's run
        # quick mode never reranks, so nothing falls back: only the two stages of every find
        rec2 = EventRecorder()
        quick = r.invoke(QUERY, retrieval_mode="quick", config={"callbacks": [rec2]})
        assert not any(d.metadata["rerank_fallback"] for d in quick)
        assert [e[0] for e in rec2.events] == ["treehop_global_search", "treehop_descent"]
    finally:
        client.close()


async def test_tag_hops_are_traced(embeddings: WordHashEmbeddings) -> None:
    # The seed's stop rule: under the default bound the exact top-k needs no hop to be reached.
    config = RetrievalConfig(
        tag_hop_trigger=TagHopTrigger.ALWAYS, global_search_topk=3, stop_rule="convergence"
    )
    client = AsyncTreehop(None, embedder=LangChainEmbedder(embeddings), tagger=None, config=config)
    await aload_sample_tree(client)
    rec = EventRecorder()
    r = TreehopRetriever(client=client, k=10, target_uri="viking://resources")
    docs = await r.ainvoke(QUERY, config={"callbacks": [rec]})
    hops = [e for e in rec.events if e[0] == "treehop_tag_hops"]
    assert len(hops) == 1
    data = hops[0][1]
    assert data["query"] == QUERY
    assert "ops" in data["tags_used"]
    assert data["subtrees_added"]
    hopped = [d for d in docs if d.metadata["found_by"] == "tag_hop"]
    assert hopped
    assert data["hits_in_topk"] == len(hopped)
    for d in hopped:
        assert d.metadata["hop_tag"] == "ops"
        assert d.metadata["hop_source"]


async def test_astream_events_exposes_custom_events(embeddings: WordHashEmbeddings) -> None:
    # The seed's stop rule: under the default bound the exact top-k needs no hop to be reached.
    config = RetrievalConfig(
        tag_hop_trigger=TagHopTrigger.ALWAYS, global_search_topk=3, stop_rule="convergence"
    )
    client = AsyncTreehop(None, embedder=LangChainEmbedder(embeddings), tagger=None, config=config)
    await aload_sample_tree(client)
    r = TreehopRetriever(client=client, k=5, target_uri="viking://resources")
    names = [
        ev["name"]
        async for ev in r.astream_events(QUERY, version="v2")
        if ev["event"] == "on_custom_event"
    ]
    assert names == ["treehop_global_search", "treehop_descent", "treehop_tag_hops"]


def test_every_find_reports_its_stages(lc_client: Treehop) -> None:
    rec = EventRecorder()
    docs = TreehopRetriever(client=lc_client, k=3).invoke(QUERY, config={"callbacks": [rec]})
    events = {name: data for name, data, _ in rec.events}
    assert list(events) == ["treehop_global_search", "treehop_descent"]
    starts = events["treehop_global_search"]["starting_points"]
    assert starts and all(s["uri"].startswith("viking://") for s in starts)
    descent = events["treehop_descent"]
    # The settled-top-k stop rule may need no round at all (nothing left can enter the top-k);
    # the event still reports the descent and why it stopped.
    assert descent["stop_reason"]
    assert descent["rounds"] == len(descent["searched_directories"])
    assert descent["nodes_scored"] >= len(docs)


def test_stage_events_cost_nothing_without_listeners(
    lc_client: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_treehop import retrievers

    def boom(*args: object) -> None:
        raise AssertionError("events were built with nobody listening")

    monkeypatch.setattr(retrievers, "stage_events", boom)
    assert TreehopRetriever(client=lc_client, k=2).invoke(QUERY)


def test_ls_params_name_store_and_embedder(lc_client: Treehop) -> None:
    params = TreehopRetriever(client=lc_client)._get_ls_params()
    assert params == {
        "ls_retriever_name": "treehop",
        "ls_vector_store_provider": "EmbeddedStore",
        "ls_embedding_provider": "WordHashEmbeddings",
        "ls_embedding_model": "langchain:WordHashEmbeddings",
    }


# ---------------------------------------------------------------------------- from_path


def test_from_path_opens_an_index_with_langchain_embeddings(
    tmp_path: Path, embeddings: WordHashEmbeddings
) -> None:

    index = tmp_path / "index"
    with Treehop(index, embedder=LangChainEmbedder(embeddings), tagger=None) as client:
        load_sample_tree(client)
        expected = uris(TreehopRetriever(client=client, k=3).invoke(QUERY))
    r = TreehopRetriever.from_path(index, embedding=WordHashEmbeddings(), k=3)
    assert isinstance(r.client, AsyncTreehop)
    assert uris(r.invoke(QUERY)) == expected
    assert uris(asyncio.run(r.ainvoke(QUERY))) == expected

    class OtherEmbeddings(WordHashEmbeddings):
        pass

    with pytest.raises(EmbeddingError, match="would mix vector spaces"):
        TreehopRetriever.from_path(index, embedding=OtherEmbeddings())


def test_llm_api_key_is_secret_with_env_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embeddings: WordHashEmbeddings
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("TREEHOP_LLM_API_KEY", "sk-from-env")
    index = tmp_path / "i"  # (a retriever opens a saved index only: usage57)
    with Treehop(index, embedder=LangChainEmbedder(embeddings), tagger=None) as client:
        load_sample_tree(client)
    r = TreehopRetriever.from_path(index, embedding=embeddings, llm_model="m")
    assert isinstance(r.llm_api_key, SecretStr)
    assert r.llm_api_key.get_secret_value() == "sk-from-env"
    assert "sk-from-env" not in repr(r) and "sk-from-env" not in str(r.model_dump())
    explicit = TreehopRetriever.from_path(
        index, embedding=embeddings, llm_model="m", llm_api_key="sk-given"
    )
    assert explicit.llm_api_key is not None
    assert explicit.llm_api_key.get_secret_value() == "sk-given"
    monkeypatch.delenv("TREEHOP_LLM_API_KEY")
    none = TreehopRetriever.from_path(index, embedding=embeddings)
    assert none.llm_api_key is None


def test_llm_model_plans_over_http_with_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embeddings: WordHashEmbeddings
) -> None:
    """from_path(llm_model=...) builds treehop's OpenAI-compatible planner; the SecretStr key
    (given, or from the environment) is what goes over the wire, on 127.0.0.1."""
    import json

    from fake_servers.openai_chat import FakeOpenAIChatServer, Reply

    index = tmp_path / "index"
    with Treehop(index, embedder=LangChainEmbedder(embeddings), tagger=None) as client:
        load_sample_tree(client)
    plan = {
        "reasoning": "r",
        "queries": [
            {"query": "write an RFC", "context_type": "skill", "intent": "how-to", "priority": 1}
        ],
    }
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("TREEHOP_LLM_API_KEY", "sk-env")
    with FakeOpenAIChatServer(default=Reply.chat(json.dumps(plan))) as server:
        for given, expected in [("sk-given", "Bearer sk-given"), (None, "Bearer sk-env")]:
            kwargs = {"llm_api_key": given} if given else {}
            r = TreehopRetriever.from_path(
                index,
                embedding=embeddings,
                llm_model="fake-model",
                llm_base_url=server.base_url,
                mode="search",
                k=2,
                **kwargs,
            )
            docs = r.invoke("I need to propose a design change")
            assert docs and {d.metadata["context_type"] for d in docs} == {"skill"}
            assert docs[0].metadata["query"] == "write an RFC"
            sent = server.requests[-1]
            assert sent.headers["authorization"] == expected
            assert sent.body["model"] == "fake-model"


def test_search_kwargs_as_for_any_vector_store_retriever(lc_client: Treehop) -> None:
    r = TreehopRetriever(
        client=lc_client,
        search_kwargs={"k": 2, "tags": ["ops"], "filter": None, "target_uri": "viking://resources"},
    )
    assert r.k == 2 and r.tag_filter == ["ops"]
    docs = r.invoke(QUERY)
    assert len(docs) == 2 and all(d.id.startswith("viking://resources/") for d in docs)
    with pytest.raises(ValidationError, match="unknown search_kwargs key"):
        TreehopRetriever(client=lc_client, search_kwargs={"nprobe": 3})
    # (usage61: fetch_k is MMR's, search_type="mmr"; without it, refused saying so)
    with pytest.raises(ValidationError, match="fetch_k only applies to search_type='mmr'"):
        TreehopRetriever(client=lc_client, search_kwargs={"fetch_k": 3})
    with pytest.raises(ValidationError, match="given twice"):
        TreehopRetriever(client=lc_client, k=3, search_kwargs={"k": 2})


def test_passages_by_default_directories_on_request(lc_client: Treehop) -> None:
    plain = TreehopRetriever(client=lc_client, k=4).invoke(QUERY)
    assert plain and all(d.metadata["is_leaf"] for d in plain)
    both = TreehopRetriever(client=lc_client, k=10, include_directories=True).invoke(QUERY)
    assert any(not d.metadata["is_leaf"] for d in both)


def test_metadata_filter_fields_are_checked(lc_client: Treehop) -> None:
    lc_client.add_resource(
        "kubernetes rollout notes",
        target_uri="viking://resources/notes/k8s",
        metadata={"lang": "en"},
    )
    r = TreehopRetriever(client=lc_client, k=3)
    # Chroma-style filters work as in any LangChain store.
    docs = r.invoke("kubernetes rollout", metadata_filter={"lang": {"$in": ["en"]}})
    assert [d.id for d in docs] == ["viking://resources/notes/k8s"]
    with pytest.raises(InvalidFilterError, match="lnag"):
        r.invoke("kubernetes rollout", metadata_filter={"lnag": "en"})
    with pytest.raises(InvalidFilterError, match="provenance"):
        r.invoke("kubernetes rollout", metadata_filter={"found_by": "global"})
