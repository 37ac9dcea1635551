"""LlamaIndex users' leftovers of round two (helper usage61).

- ``TreehopRetriever(similarity_top_k=5000, retrieve_count=50)`` with a reranker was the
  core's "retrieve_count must be >= limit (1000) ... got 50" (a limit the caller never set).
  Now refused naming ``similarity_top_k``, at construction and when either is set later.
- ``similarity_top_k`` above 1,000 counts the scope from the store's columns (no node built).
- ``TreehopVectorStore.get_nodes()`` with neither ids nor filters lists every node (it was
  refused; Chroma, Qdrant and PGVector list them all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.schema import MetadataMode, TextNode

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.rerankers.base import BaseReranker
from treehop.validation import MAX_LIMIT

from treehop_test_doubles import BagOfWordsEmbedder

TEXTS = [
    "To roll back a deployment run helm rollback with the previous revision.",
    "API keys rotate every ninety days.",
    "The cafeteria serves pizza on Fridays.",
    "Deployments go out on Tuesdays after the freeze.",
]
Q = "roll back the deployment"


class OverlapReranker(BaseReranker):
    name = "overlap"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        words = set(query.split())
        return [float(len(words & set(d.split()))) for d in documents]


@pytest.fixture
def client() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, reranker=OverlapReranker())
    for i, t in enumerate(TEXTS):
        th.add_resource(t, target_uri=f"viking://resources/docs/d{i}")
    yield th
    th.close()


def test_retrieve_count_below_similarity_top_k_is_refused_naming_it(client: Treehop) -> None:
    with pytest.raises(InvalidQueryError, match=r"\(50\) is below similarity_top_k \(5000\)") as e:
        TreehopRetriever(
            client, similarity_top_k=5000, retrieve_count=50, retrieval_mode="thinking"
        )
    assert "limit (1000)" not in str(e.value)
    with pytest.raises(InvalidQueryError, match=r"\(5\) must be >= similarity_top_k \(10\)"):
        TreehopRetriever(client, similarity_top_k=10, retrieve_count=5, retrieval_mode="thinking")
    # set later: the retrieval says so in the same words
    r = TreehopRetriever(client, similarity_top_k=5, retrieve_count=50, retrieval_mode="thinking")
    assert r.retrieve(Q)[0].node.get_content() == TEXTS[0]
    r.similarity_top_k = 5000
    with pytest.raises(InvalidQueryError, match=r"is below similarity_top_k \(5000\)"):
        r.retrieve(Q)
    r.retrieve_count = MAX_LIMIT  # what the message says: every node, reranked
    got = r.retrieve(Q)
    assert len(got) == len(TEXTS) and got[0].node.get_content() == TEXTS[0]
    # 0 ("no limit") with a retrieve_count stays the reranked best retrieve_count
    zero = TreehopRetriever(client, similarity_top_k=0, retrieve_count=2, retrieval_mode="thinking")
    assert len(zero.retrieve(Q)) == 2


def test_similarity_top_k_above_the_limit_counts_without_building_nodes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    n = MAX_LIMIT + 1
    store = TreehopVectorStore(client=th, base_uri="viking://resources/big")
    store.add([TextNode(text=f"note {i} about item{i}", id_=f"n{i}") for i in range(n)])
    th.add_resource("a small note", target_uri="viking://resources/small/one")

    def walked(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a count walked the nodes")

    monkeypatch.setattr(th.aio.store, "iter_nodes", walked)
    with pytest.raises(InvalidQueryError, match="more than 1000 passages"):
        TreehopRetriever(th, similarity_top_k=5000).retrieve("note")
    small = TreehopRetriever(th, similarity_top_k=5000, target_uri="viking://resources/small")
    assert [x.node.node_id for x in small.retrieve("note")] == ["viking://resources/small/one"]
    th.close()


def test_get_nodes_with_neither_ids_nor_filters_lists_every_node() -> None:
    """``get_nodes()`` (Chroma, Qdrant and PGVector list every node) was "get_nodes needs
    node_ids or filters"; ``delete_nodes()`` stays refused (``clear()`` empties)."""
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    other = TreehopVectorStore(client=th, base_uri="viking://resources/other")
    other.add([TextNode(text="elsewhere", id_="x")])
    store = TreehopVectorStore(client=th, base_uri="viking://resources/mine")
    store.add([TextNode(text=t, id_=f"n{i}", metadata={"i": i}) for i, t in enumerate(TEXTS)])
    want = {f"n{i}" for i in range(len(TEXTS))}
    assert {n.node_id for n in store.get_nodes()} == want  # the base only
    assert {n.node_id for n in asyncio.run(store.aget_nodes())} == want
    assert {n.get_content() for n in store.get_nodes()} == set(TEXTS)
    with pytest.raises(InvalidQueryError, match="clear"):
        store.delete_nodes()
    store.clear()
    assert store.get_nodes() == [] and [n.node_id for n in other.get_nodes()] == ["x"]
    th.close()


def test_empty_metadata_is_not_written_into_the_llm_text(client: Treehop, tmp_path: Path) -> None:
    """A text added without a file had ``name: ``, ``source_path: `` and ``tags: []`` above it
    in every prompt (and in the embedder's text); they stay in the metadata for programs."""
    (tmp_path / "notes.md").write_text("Rollback notes for the deployment team.")
    client.add_resource(str(tmp_path / "notes.md"), target_uri="viking://resources/named")
    hits = TreehopRetriever(client, similarity_top_k=10).retrieve(Q)
    bare = next(h.node for h in hits if h.node.node_id.endswith("/docs/d0"))
    llm = bare.get_content(metadata_mode=MetadataMode.LLM)
    embed = bare.get_content(metadata_mode=MetadataMode.EMBED)
    for key in ("name", "source_path", "tags"):
        assert bare.metadata[key] in ("", [], None), key  # (this passage has none)
        assert f"{key}:" not in llm and f"{key}:" not in embed, key
    assert llm.startswith(f"uri: {bare.node_id}\ncontext_type: resource\n\n")
    assert embed == TEXTS[0]
    # a value is still shown, once: a top-level file's ``name`` equals its ``source_path``
    # and is said as ``source_path`` only (helper usage85; kept in ``metadata``)
    named = next(h.node for h in hits if h.node.node_id == "viking://resources/named")
    shown = named.get_content(metadata_mode=MetadataMode.LLM)
    assert named.metadata["name"] == named.metadata["source_path"] == "notes.md"
    assert "source_path: notes.md" in shown
    assert "name: notes.md" not in shown.replace("source_path: notes.md", "")
