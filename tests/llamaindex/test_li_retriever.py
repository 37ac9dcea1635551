"""TreehopRetriever: class contract, top-k, nodes, relationships, provenance, events."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
import pytest
from li_helpers import SAMPLE_TREE, WordHashEmbedding
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager, CBEventType, LlamaDebugHandler
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.instrumentation.events.rerank import ReRankEndEvent, ReRankStartEvent
from llama_index.core.schema import MetadataMode, NodeRelationship, TextNode
from pydantic import Field

from llama_index.retrievers.treehop import (
    EXCLUDED_EMBED_KEYS,
    EXCLUDED_LLM_KEYS,
    LlamaIndexEmbedder,
    TreehopRerankFallbackEvent,
    TreehopRetriever,
    TreehopTagHopEvent,
    add_documents,
)
from treehop import RetrievalConfig, Treehop
from treehop.config import TagHopTrigger
from treehop.errors import InvalidQueryError, InvalidURIError, NotFoundError
from treehop.rerankers.base import BaseReranker


class Recorder(BaseEventHandler):
    """Collects every instrumentation event while registered."""

    events: list[BaseEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Recorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder(events=[])
    root = instrument.get_dispatcher()
    root.add_event_handler(rec)
    yield rec
    root.event_handlers.remove(rec)


class KeywordReranker(BaseReranker):
    """Prefers documents about the model registry (so rerank visibly reorders)."""

    name = "test-keyword-reranker"

    def __init__(self) -> None:
        self.calls = 0

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        self.calls += 1
        return [1.0 if "registry" in d.lower() else 0.1 for d in documents]


class BrokenReranker(BaseReranker):
    name = "test-broken-reranker"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        raise RuntimeError("reranker is down")


def test_class() -> None:
    names_of_base_classes = [b.__name__ for b in TreehopRetriever.__mro__]
    assert BaseRetriever.__name__ in names_of_base_classes
    # The public entry points stay LlamaIndex's own (events, callbacks, recursion).
    assert "retrieve" not in vars(TreehopRetriever)
    assert "aretrieve" not in vars(TreehopRetriever)
    assert "_retrieve" in vars(TreehopRetriever) and "_aretrieve" in vars(TreehopRetriever)


def test_importable_as_llama_index_namespace_package() -> None:
    import llama_index.core

    import llama_index.retrievers.treehop as pkg

    # The integration merges into llama_index's namespace without shadowing the core.
    assert Path(pkg.__file__).parent.name == "treehop"
    assert (Path(pkg.__file__).parent / "py.typed").exists()
    assert not (Path(pkg.__file__).parents[1] / "__init__.py").exists()
    assert not (Path(pkg.__file__).parents[2] / "__init__.py").exists()
    assert llama_index.core.__file__ is not None


@pytest.mark.parametrize("k", [1, 3, 7])
def test_similarity_top_k(client: Treehop, k: int) -> None:
    retriever = TreehopRetriever(client, similarity_top_k=k)
    nodes = retriever.retrieve("kubernetes deployments and rollbacks")
    assert len(nodes) == k
    scores = [n.score for n in nodes]
    assert scores == sorted(scores, reverse=True)
    # The same top-k treehop itself returns, in the same order.
    direct = client.find(
        "kubernetes deployments and rollbacks", limit=k, include_directories=False
    ).contexts()
    assert [n.node.node_id for n in nodes] == [m.uri for m in direct]
    retriever.similarity_top_k = 2
    assert len(retriever.retrieve("kubernetes deployments and rollbacks")) == 2


@pytest.mark.parametrize("bad", [-1, "1001", 2.5, True, 0.0])  # (1001: every node, usage60)
def test_similarity_top_k_is_validated(client: Treehop, bad: Any) -> None:
    with pytest.raises(InvalidQueryError, match="similarity_top_k"):
        TreehopRetriever(client, similarity_top_k=bad)


def test_nodes_text_metadata_and_provenance(client: Treehop) -> None:
    nodes = TreehopRetriever(client, similarity_top_k=5).retrieve("rotate api keys")
    by_id = {n.node.node_id: n for n in nodes}
    hit = by_id["viking://resources/security/auth/api-keys.md"]
    node = hit.node
    assert isinstance(node, TextNode)
    assert node.text == client.read("viking://resources/security/auth/api-keys.md")
    md = node.metadata
    assert md["uri"] == node.node_id
    assert md["context_type"] == "resource"
    assert md["is_leaf"] is True and md["level"] == 2
    assert md["parent_uri"] == "viking://resources/security/auth"
    assert md["found_by"] in {"global", "child"}
    assert md["score"] == pytest.approx(hit.score)
    # Quick mode: nothing reranked, so the pre-rerank score is the vector score.
    assert md["rerank_score"] is None
    assert md["retrieval_score"] == md["vector_score"] is not None
    assert md["rerank_fallback"] is False
    assert md["query"] == "rotate api keys"
    assert md["matched_queries"][0]["query"] == "rotate api keys"
    assert "user:security" in md["tags"]
    assert md["name"] == "api-keys.md"  # stored metadata comes along
    assert md["abstract"]


def test_internal_keys_hidden_from_llm_and_embeddings(client: Treehop) -> None:
    node = TreehopRetriever(client, similarity_top_k=1).retrieve("rotate api keys")[0].node
    llm_text = node.get_content(metadata_mode=MetadataMode.LLM)
    embed_text = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert f"uri: {node.node_id}" in llm_text  # the LLM can cite where a text comes from
    for key in ("vector_score", "retrieval_score", "found_by", "rerank_fallback", "abstract"):
        assert key in node.metadata
        assert f"{key}:" not in llm_text
        assert f"{key}:" not in embed_text
    assert "uri:" not in embed_text
    # (an ingested file's file_name / file_path repeat name / source_path: left out too)
    assert node.excluded_llm_metadata_keys == [*EXCLUDED_LLM_KEYS, "file_name", "file_path"]
    assert node.excluded_embed_metadata_keys == [*EXCLUDED_EMBED_KEYS, "file_name", "file_path"]


def test_passages_by_default_directories_on_request(client: Treehop) -> None:
    query = "kubernetes deployments incident response"
    plain = TreehopRetriever(client, similarity_top_k=3).retrieve(query)
    assert len(plain) == 3 and all(n.node.metadata["is_leaf"] for n in plain)
    both = TreehopRetriever(client, similarity_top_k=10, include_directories=True).retrieve(query)
    assert any(not n.node.metadata["is_leaf"] for n in both)


def test_relationships_follow_the_tree(client: Treehop) -> None:
    retriever = TreehopRetriever(client, similarity_top_k=10, include_directories=True)
    nodes = retriever.retrieve("kubernetes deployments incident response")
    dirs = [n.node for n in nodes if not n.node.metadata["is_leaf"]]
    leaves = [n.node for n in nodes if n.node.metadata["is_leaf"]]
    assert dirs and leaves
    for d in dirs:
        kids = client.ls(d.node_id)
        child_ids = [c.node_id for c in d.child_nodes or []]
        assert sorted(child_ids) == sorted(e.uri for e in kids)
        assert d.parent_node is not None
        parent_uri = client.stat(d.node_id).parent_uri
        assert parent_uri is not None
        assert d.parent_node.node_id == client.aio.display(parent_uri)
    for leaf in leaves:
        assert leaf.child_nodes is None
        parent = leaf.parent_node
        assert parent is not None
        assert leaf.node_id in [e.uri for e in client.ls(parent.node_id)]

    plain = TreehopRetriever(client, similarity_top_k=10, include_relationships=False)
    for n in plain.retrieve("kubernetes deployments incident response"):
        assert NodeRelationship.CHILD not in n.node.relationships


def test_chunks_link_previous_next_and_source_document(word_embedding: WordHashEmbedding) -> None:
    from llama_index.core.schema import Document

    sections = [f"## Part {i}\n" + (f"glacier section {i} moraine " * 60) for i in range(4)]
    doc = Document(
        text="\n\n".join(sections),
        id_="doc-glacier",
        metadata={"uri": "viking://resources/geo/glaciers.md"},
    )
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as c:
        add_documents(c, [doc])
        chunks = sorted(
            (k for k in c.store.children("viking://resources/geo/glaciers.md")),
            key=lambda k: k.chunk_index or 0,
        )
        assert len(chunks) >= 3
        # One document, fewer than top_k: each section is a passage slot of its own
        # (few_document_passages); every chunk is asked for by collapse_chunks=False below.
        one = TreehopRetriever(c, similarity_top_k=20, include_directories=False)
        got = [n.node.node_id for n in one.retrieve("glacier section moraine")]
        assert len(got) == len(sections) and len(set(got)) == len(got)
        retriever = TreehopRetriever(
            c, similarity_top_k=20, include_directories=False, collapse_chunks=False
        )
        nodes = {n.node.node_id: n.node for n in retriever.retrieve("glacier section moraine")}
    first, last = chunks[0].uri, chunks[-1].uri
    middle = chunks[1].uri
    assert {first, middle, last} <= set(nodes)
    assert nodes[first].prev_node is None
    assert nodes[first].next_node is not None and nodes[first].next_node.node_id == middle
    assert nodes[middle].prev_node is not None and nodes[middle].prev_node.node_id == first
    assert nodes[last].next_node is None
    for n in nodes.values():
        assert n.parent_node is not None
        assert n.parent_node.node_id == "viking://resources/geo/glaciers.md"
        # The LlamaIndex document the text came from, as in any LlamaIndex index.
        assert n.ref_doc_id == "doc-glacier"


def test_target_uri_and_context_types(client: Treehop) -> None:
    scoped = TreehopRetriever(client, similarity_top_k=10, target_uri="viking://resources/devops")
    ids = [n.node.node_id for n in scoped.retrieve("keys and deployments")]
    assert ids and all(i.startswith("viking://resources/devops/") for i in ids)

    several = TreehopRetriever(
        client,
        similarity_top_k=30,
        target_uri=["viking://resources/devops", "viking://resources/security"],
    )
    tops = {i.split("/")[3] for i in (n.node.node_id for n in several.retrieve("keys deploy"))}
    assert tops == {"devops", "security"}

    memories = TreehopRetriever(client, similarity_top_k=5, context_types="memory")
    got = memories.retrieve("code style preferences")
    assert got and all(n.node.metadata["context_type"] == "memory" for n in got)
    assert all(n.node.node_id.startswith("viking://~/memories") for n in got)

    both = TreehopRetriever(client, similarity_top_k=50, context_types=["memory", "resource"])
    kinds = {n.node.metadata["context_type"] for n in both.retrieve("style of code and keys")}
    assert kinds == {"memory", "resource"}


def test_bad_arguments_raise_typed_errors(client: Treehop) -> None:
    with pytest.raises(InvalidURIError):
        TreehopRetriever(client, target_uri="viking://resources/../etc")
    with pytest.raises(InvalidQueryError, match="mode"):
        TreehopRetriever(client, mode="lookup")  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="session_id only applies"):
        TreehopRetriever(client, session_id="s1")
    with pytest.raises(InvalidQueryError, match="unknown context type"):
        TreehopRetriever(client, context_types=["documents"])
    with pytest.raises(ValueError, match="fast"):
        TreehopRetriever(client, retrieval_mode="fast")
    with pytest.raises(InvalidQueryError, match=r"treehop\.Treehop"):
        TreehopRetriever(object())  # type: ignore[arg-type]
    missing = TreehopRetriever(client, target_uri="viking://resources/nowhere")
    with pytest.raises(NotFoundError):
        missing.retrieve("anything")
    with pytest.raises(InvalidQueryError, match="empty"):
        TreehopRetriever(client).retrieve("   ")


def test_from_defaults_opens_a_client_and_ingests(tmp_path: Path) -> None:
    from llama_index.core.schema import Document

    emb = WordHashEmbedding()
    docs = [
        Document(
            text="the tide tables for the harbour", metadata={"uri": "viking://resources/sea/tides"}
        ),
        Document(
            text="lighthouse maintenance schedule", metadata={"uri": "viking://resources/sea/light"}
        ),
    ]
    retriever = TreehopRetriever.from_defaults(
        path=tmp_path / "idx", embed_model=emb, documents=docs, similarity_top_k=1
    )
    assert isinstance(retriever.client, Treehop)
    assert retriever.client.aio.embedder.name == "llamaindex:WordHashEmbedding:unknown"
    assert emb.async_calls > 0  # the LlamaIndex model embedded, through its async API
    top = retriever.retrieve("when is the tide in the harbour")
    assert [n.node.node_id for n in top] == ["viking://resources/sea/tides"]
    retriever.client.close()
    # Re-opened from disk, the same answer.
    again = TreehopRetriever.from_defaults(path=tmp_path / "idx", embed_model=emb)
    assert again.retrieve("lighthouse")[0].node.node_id == "viking://resources/sea/light"
    again.client.close()
    with pytest.raises(InvalidQueryError, match="existing client"):
        TreehopRetriever.from_defaults(again.client, embed_model=emb)


def _rerank_client(reranker: BaseReranker) -> Treehop:
    c = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None, reranker=reranker)
    c.add_resource(SAMPLE_TREE / "resources" / "devops", target_uri="viking://resources")
    return c


def test_rerank_events_and_retrieval_score(recorder: Recorder) -> None:
    reranker = KeywordReranker()
    with _rerank_client(reranker) as c:
        quick = TreehopRetriever(c, similarity_top_k=3)
        vector_top = quick.retrieve("kubernetes deployments")[0]
        assert "registry" not in vector_top.node.get_content().lower()
        assert reranker.calls == 0
        assert not [e for e in recorder.events if isinstance(e, ReRankStartEvent)]

        debug = LlamaDebugHandler()
        thinking = TreehopRetriever(
            c,
            similarity_top_k=3,
            retrieval_mode="thinking",
            callback_manager=CallbackManager([debug]),
        )
        nodes = thinking.retrieve("kubernetes deployments")
    assert reranker.calls > 0
    starts = [e for e in recorder.events if isinstance(e, ReRankStartEvent)]
    ends = [e for e in recorder.events if isinstance(e, ReRankEndEvent)]
    assert len(starts) == 1 and len(ends) == 1
    assert starts[0].model_name == "test-keyword-reranker" and starts[0].top_n == 3
    assert [n.node.node_id for n in ends[0].nodes] == [n.node.node_id for n in nodes]
    assert recorder.events.index(starts[0]) < recorder.events.index(ends[0])
    assert not [e for e in recorder.events if isinstance(e, TreehopRerankFallbackEvent)]
    # Reranked: the score is the rerank track, the vector score is kept as retrieval_score.
    top = nodes[0].node.metadata
    assert "registry" in nodes[0].node.get_content().lower()
    assert nodes[0].score == pytest.approx(1.0)
    assert top["rerank_score"] is not None
    assert top["retrieval_score"] == top["vector_score"]
    assert top["retrieval_score"] != pytest.approx(nodes[0].score)
    # The legacy callback system sees the reranking too.
    pairs = debug.get_event_pairs(CBEventType.RERANKING)
    assert len(pairs) == 1


def test_rerank_fallback_event(recorder: Recorder, capsys: pytest.CaptureFixture[str]) -> None:
    with _rerank_client(BrokenReranker()) as c:
        retriever = TreehopRetriever(c, similarity_top_k=3, retrieval_mode="thinking", verbose=True)
        nodes = retriever.retrieve("kubernetes deployments")
    fallbacks = [e for e in recorder.events if isinstance(e, TreehopRerankFallbackEvent)]
    assert len(fallbacks) == 1
    assert "reranker is down" in fallbacks[0].reason
    assert fallbacks[0].model_name == "test-broken-reranker"
    kinds = [
        type(e)
        for e in recorder.events
        if isinstance(e, ReRankStartEvent | ReRankEndEvent | TreehopRerankFallbackEvent)
    ]
    assert kinds == [ReRankStartEvent, TreehopRerankFallbackEvent, ReRankEndEvent]
    assert all(n.node.metadata["rerank_fallback"] for n in nodes)
    assert "reranker is down" in nodes[0].node.metadata["rerank_fallback_reason"]
    assert "rerank fell back" in capsys.readouterr().out


def test_tag_hop_event(recorder: Recorder, word_embedding: WordHashEmbedding) -> None:
    config = RetrievalConfig(
        tag_hop_trigger=TagHopTrigger.ALWAYS,
        global_search_topk=3,
        score_threshold=-1.0,
        stop_rule="convergence",  # hops decide reach only under the seed's stop rule
    )
    res = SAMPLE_TREE / "resources"
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None, config=config) as c:
        c.add_resource(res / "devops", target_uri="viking://resources", tags=["platform"])
        c.add_resource(res / "security", target_uri="viking://resources")
        c.add_resource(res / "machine-learning", target_uri="viking://resources", tags=["platform"])
        nodes = TreehopRetriever(c, similarity_top_k=10).retrieve("kubernetes deployments rollout")
    hops = [e for e in recorder.events if isinstance(e, TreehopTagHopEvent)]
    assert len(hops) == 1
    hop = hops[0]
    assert hop.tags_used == ["platform"]
    assert hop.subtrees_added == ["viking://resources/machine-learning"]
    hopped = [n for n in nodes if n.node.metadata["found_by"] == "tag_hop"]
    assert hopped and hop.node_ids == [n.node.node_id for n in hopped]
    assert hop.hits_in_topk == len(hopped)
    for n in hopped:
        assert n.node.node_id.startswith("viking://resources/machine-learning/")
        assert n.node.metadata["hop_tag"] == "platform"
        assert n.node.metadata["hop_source"].startswith("viking://resources/devops")


def test_sync_retrieve_with_async_client_inside_running_loop(
    word_embedding: WordHashEmbedding,
) -> None:
    """A sync ``retrieve`` on an AsyncTreehop works even where a loop already runs (Jupyter)."""
    import asyncio

    from treehop import AsyncTreehop

    async def main() -> list[str]:
        c = AsyncTreehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None)
        await c.add_resource(
            SAMPLE_TREE / "resources" / "security", target_uri="viking://resources"
        )
        retriever = TreehopRetriever(c, similarity_top_k=2)
        ids = [n.node.node_id for n in retriever.retrieve("api keys rotation")]
        found = await c.find("api keys rotation", limit=2, include_directories=False)
        expected = [m.uri for m in found.contexts()]
        assert ids == expected and len(ids) == 2
        return ids

    assert len(asyncio.run(main())) == 2


def test_load_sample_tree_fixture_is_complete(client: Treehop) -> None:
    # Guards the other tests: the fixture tree has the subtrees they rely on.
    tops = {e.uri for e in client.ls("viking://resources")}
    assert tops == {
        "viking://resources/devops",
        "viking://resources/security",
        "viking://resources/machine-learning",
    }


def test_core_controls_pass_through(word_embedding: WordHashEmbedding) -> None:
    from llama_index.core.schema import Document

    sections = [f"## Part {i}\n" + (f"fjord{i} " * 20 + "basin sediment " * 40) for i in range(4)]
    doc = Document(text="\n\n".join(sections), metadata={"uri": "viking://resources/geo/fjords"})
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as c:
        add_documents(c, [doc])
        kw: dict[str, Any] = {"similarity_top_k": 1, "include_directories": False}
        plain = TreehopRetriever(c, **kw).retrieve("fjord2")
        diffused = TreehopRetriever(c, chunk_diffusion_count=1, **kw).retrieve("fjord2")
        assert [n.node.node_id for n in plain] == ["viking://resources/geo/fjords#chunk-2"]
        ids = {n.node.node_id for n in diffused}
        assert {
            "viking://resources/geo/fjords#chunk-1",
            "viking://resources/geo/fjords#chunk-3",
        } <= ids
        assert {n.node.metadata["found_by"] for n in diffused} >= {"neighbour"}
        with pytest.raises(InvalidQueryError, match="chunk_diffusion_count"):
            TreehopRetriever(c, chunk_diffusion_count=-1)
        with pytest.raises(InvalidQueryError, match="retrieve_count applies only"):
            TreehopRetriever(c, retrieve_count=50)

    with _rerank_client(KeywordReranker()) as c:
        floor = TreehopRetriever(
            c,
            similarity_top_k=10,
            retrieval_mode="thinking",
            rerank_threshold=0.5,
            retrieve_count=30,
        )
        nodes = floor.retrieve("kubernetes deployments")
        assert nodes and all((n.node.metadata["rerank_score"] or 0) >= 0.5 for n in nodes)
        unfloored = TreehopRetriever(c, similarity_top_k=10, retrieval_mode="thinking")
        assert len(unfloored.retrieve("kubernetes deployments")) > len(nodes)


def test_every_retrieval_reports_its_stages(client: Treehop, recorder: Recorder) -> None:
    from llama_index.retrievers.treehop import TreehopDescentEvent, TreehopGlobalSearchEvent

    nodes = TreehopRetriever(client, similarity_top_k=3).retrieve("kubernetes rollbacks")
    starts = [e for e in recorder.events if isinstance(e, TreehopGlobalSearchEvent)]
    descents = [e for e in recorder.events if isinstance(e, TreehopDescentEvent)]
    assert len(starts) == 1 and len(descents) == 1
    assert starts[0].starting_points and starts[0].query == "kubernetes rollbacks"
    # The settled-top-k stop rule may need no round at all (nothing left can enter the top-k);
    # the event still reports the descent and why it stopped.
    assert descents[0].stop_reason
    assert descents[0].rounds == len(descents[0].searched_directories)
    assert descents[0].nodes_scored >= len(nodes)


def test_stage_events_are_not_built_without_listeners(
    client: Treehop, monkeypatch: pytest.MonkeyPatch
) -> None:
    from llama_index.retrievers.treehop import base, events

    def boom(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("an event was built with nobody listening")

    monkeypatch.setattr(base, "stage_events", boom)
    monkeypatch.setattr(events, "TreehopGlobalSearchEvent", boom)
    assert not base._listening()
    assert TreehopRetriever(client, similarity_top_k=2).retrieve("kubernetes rollbacks")
