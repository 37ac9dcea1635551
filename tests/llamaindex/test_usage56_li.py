"""What a LlamaIndex user's first scripts expect of the treehop vector store (helper usage56).

``SimpleDirectoryReader(folder, filename_as_id=True)`` + ``VectorStoreIndex`` and later
``index.refresh_ref_docs(...)`` with the one file that changed (or an ``IngestionPipeline``
with a docstore doing the same) is LlamaIndex's documented way to keep an index current. The
changed file must stay where the folder's ingest placed it in the tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import llama_index.core.instrumentation as instrument
import pytest
from li_helpers import WordHashEmbedding
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from pydantic import Field

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError


def _files(store: TreehopVectorStore) -> list[str]:
    nodes = store.aclient.store.iter_nodes()
    return sorted({n.uri.split("#")[0] for n in nodes if n.is_leaf})


def test_refreshing_one_file_keeps_its_place(
    tmp_path: Path, word_embedding: WordHashEmbedding
) -> None:
    docs_dir = tmp_path / "docs"
    (docs_dir / "ops").mkdir(parents=True)
    (docs_dir / "ops" / "rollback.md").write_text("Roll back with kubectl.", encoding="utf-8")
    (docs_dir / "food.md").write_text("Fish on Fridays.", encoding="utf-8")
    store = TreehopVectorStore(embed_model=word_embedding, tagger=None)
    docs = SimpleDirectoryReader(str(docs_dir), recursive=True, filename_as_id=True).load_data()
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )
    before = _files(store)
    assert before == ["viking://resources/food.md", "viking://resources/ops/rollback.md"]
    changed_file = docs_dir / "ops" / "rollback.md"
    changed_file.write_text("Roll back with helm rollback.", encoding="utf-8")
    one = SimpleDirectoryReader(input_files=[str(changed_file)], filename_as_id=True).load_data()
    assert index.refresh_ref_docs(one) == [True]
    assert _files(store) == before
    hits = index.as_retriever(similarity_top_k=1).retrieve("helm rollback")
    assert hits[0].node.get_content() == "Roll back with helm rollback."
    store.close()


class _Recorder(BaseEventHandler):
    events: list[BaseEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Usage56Recorder"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        self.events.append(event)


def test_stage_events_name_uris_as_the_nodes_do(client: Treehop) -> None:
    # A memory node's id is viking://~/memories/...; the instrumentation events of the same
    # retrieval named it viking://user/default/memories/..., so they could not be matched.
    from llama_index.retrievers.treehop import TreehopGlobalSearchEvent

    client.add_memory("I am vegetarian and love pasta.", name="diet")
    rec = _Recorder(events=[])
    root = instrument.get_dispatcher()
    root.add_event_handler(rec)
    try:
        retriever = TreehopRetriever(client, similarity_top_k=1, target_uri="viking://~/memories")
        nodes = retriever.retrieve("pasta")
    finally:
        root.event_handlers.remove(rec)
    assert [n.node.node_id for n in nodes] == ["viking://~/memories/diet"]
    starts = [e for e in rec.events if isinstance(e, TreehopGlobalSearchEvent)]
    assert starts and "viking://~/memories/diet" in [u for u, _ in starts[0].starting_points]


def test_vector_store_kwargs_set_treehop_options_per_query(
    tmp_path: Path, word_embedding: WordHashEmbedding
) -> None:
    # LlamaIndex's channel for store-specific options at query time is the retriever's
    # vector_store_kwargs; the LangChain store takes the same options per call.
    docs_dir = tmp_path / "docs"
    (docs_dir / "ops").mkdir(parents=True)
    (docs_dir / "ops" / "rollback.md").write_text("Roll back with kubectl.", encoding="utf-8")
    (docs_dir / "food.md").write_text("Fish on Fridays, roll back never.", encoding="utf-8")
    store = TreehopVectorStore(embed_model=word_embedding, tagger=None)
    docs = SimpleDirectoryReader(str(docs_dir), recursive=True).load_data()
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )

    def ids(**kwargs: Any) -> list[str]:
        retriever = index.as_retriever(similarity_top_k=10, vector_store_kwargs=kwargs)
        return [n.node.node_id for n in retriever.retrieve("roll back")]

    plain = ids()
    assert len(plain) == 2
    scoped = ids(target_uri="ops")
    assert len(scoped) == 1 and scoped[0] in plain
    assert ids(target_uri=["viking://resources/ops"]) == scoped
    assert len(ids(include_directories=True)) > len(plain)
    assert len(ids(dense_weight=1.0)) == 2
    top = index.as_retriever(similarity_top_k=10).retrieve("roll back")
    floor = (top[0].score or 0) - 1e-6
    assert ids(score_threshold=floor) == [top[0].node.node_id]
    with pytest.raises(InvalidQueryError, match="unknown"):
        ids(bogus=1)
    store.close()


def test_find_score_threshold_keeps_every_node_scoring_above_it(tmp_path: Path) -> None:
    # TreehopRetriever(score_threshold=t) lost nodes whose score was above t (the core pruned
    # its search with t on the scores before the tree context).
    docs = tmp_path / "docs"
    (docs / "devops").mkdir(parents=True)
    (docs / "devops" / "rollback.md").write_text(
        "# Rollbacks\n\nTo roll back a deployment, run kubectl rollout undo. Canary releases "
        "go to 5% of traffic first.\n",
        encoding="utf-8",
    )
    (docs / "keys.md").write_text("# API keys\n\nAPI keys rotate every 90 days.\n", "utf-8")
    (docs / "food.md").write_text("# Cafeteria\n\nFish on Fridays.\n", encoding="utf-8")
    with Treehop(None) as tree:  # the offline MiniLM
        tree.add_resource(docs, target_uri="viking://resources/docs")
        for query in ["release", "food on friday", "rotate keys"]:
            ranked = [
                (n.node.node_id, n.score)
                for n in TreehopRetriever(tree, similarity_top_k=10).retrieve(query)
            ]
            for _, score in ranked:
                floor = (score or 0.0) - 1e-6
                kept = TreehopRetriever(tree, similarity_top_k=10, score_threshold=floor)
                got = [(n.node.node_id, n.score) for n in kept.retrieve(query)]
                assert got == [(u, s) for u, s in ranked if (s or 0.0) >= floor], (query, floor)
