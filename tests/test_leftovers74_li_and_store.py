"""LlamaIndex ``get_nodes`` over exactly the nodes its queries can return, ``echoed_keys``
hides a chunk title only when the text says it as a line, and LangGraph ``TreehopStore``
search scores on one scale (helper leftovers74; review73's and the lead's open items).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from langgraph.store.base import PutOp
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.retrievers.treehop.nodes import echoed_keys
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.integration_kit import as_async

from treehop_test_doubles import BagOfWordsEmbedder

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder, TreehopStore

from lc_helpers import WordHashEmbeddings

Q = "signing keys rotation vault"
KEYS = "viking://resources/docs/keys.md"
RECORD = "Signing keys rotate in the vault every ninety days (the record)."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    yield c
    c.close()


def _folder(tmp_path: Path) -> str:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keys.md").write_text("# Keys\n\nRotate the signing keys every ninety days.\n")
    (docs / "vault.md").write_text("# Vault\n\nThe vault holds signing keys for rotation.\n")
    return str(docs)


def test_get_nodes_leaves_out_the_file_a_record_holds_the_id_of(
    client: Treehop, tmp_path: Path
) -> None:
    """A record added with an id naming nothing, then ``treehop index`` writing a file at
    that URI: queries show the record under the id (leftovers73a); ``get_nodes()`` returned
    the file too, two nodes with one id."""
    store = LlamaStore(client=client)
    store.add([TextNode(id_=KEYS, text=RECORD)])
    client.add_resource(_folder(tmp_path))
    queried = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=20))
    shown = {(n.node_id, n.get_content()) for n in queried.nodes or []}
    listed = [(n.node_id, n.get_content()) for n in store.get_nodes()]
    assert len(listed) == len({i for i, _ in listed}), listed  # one node per id
    assert set(listed) == shown
    assert [c for i, c in listed if i == KEYS] == [RECORD]
    by_name = store.get_nodes(
        filters=MetadataFilters(filters=[MetadataFilter(key="file_name", value="keys.md")])
    )
    assert [n.get_content() for n in by_name if n.node_id == KEYS] in ([], [RECORD])


def test_echoed_keys_hide_a_title_the_text_says_as_a_line_only() -> None:
    meta = {"chunk_title": "Pricing", "heading_path": ["Pricing"], "passage_start": 2}
    said = "Pricing\n\nPlans start at five dollars."
    slot = "Plans\n\nFree tier.\n\nPricing\n\nPlans start at five dollars."
    mentioned = "Plans start at five dollars; see Pricing below for the rest."
    assert set(echoed_keys(meta, said)) == {"chunk_title", "heading_path", "passage_start"}
    assert set(echoed_keys(meta, slot)) == {"chunk_title", "heading_path", "passage_start"}
    assert echoed_keys(meta, mentioned) == ["passage_start"]  # the title stays for the LLM
    node = TextNode(
        text=mentioned,
        metadata=meta,
        excluded_llm_metadata_keys=echoed_keys(meta, mentioned),
    )
    assert "chunk_title: Pricing" in node.get_content(metadata_mode=MetadataMode.LLM)


NS = ("users", "u1", "memories")


def test_store_search_scores_are_the_cosine_with_and_without_a_filter() -> None:
    emb = BagOfWordsEmbedder()
    th = Treehop(None, embedder=emb, tagger=None)
    try:
        store = TreehopStore(th)
        store.batch(
            [
                PutOp(
                    NS,
                    f"m{i:02d}",
                    {"text": f"likes topic{i % 5} colour{i % 3} fact {i}", "c": i % 3},
                )
                for i in range(30)
            ]
        )
        q = "likes topic2 colour1"
        qv = np.asarray(emb.embed_query(q), dtype=np.float32)
        aio = as_async(th)

        def cosine(key: str) -> float:
            uri = aio.resolve(store.namespace_uri(NS) + "/@" + key)
            return float(np.asarray(th.store.get_vectors([uri])[0], dtype=np.float32) @ qv)

        pages = [
            store.search(NS[:1], query=q, limit=12),
            store.search(NS[:1], query=q, filter={"c": 1}, limit=10),
            store.search(NS[:1], query=q, limit=5, offset=5),
        ]
        scored: dict[str, float] = {}
        for page in pages:
            assert page
            for item in page:
                assert item.score == pytest.approx(cosine(item.key), abs=1e-5), item.key
                # (the same item scores the same on every page, filter or none)
                assert scored.setdefault(item.key, item.score) == pytest.approx(item.score)
    finally:
        th.close()
