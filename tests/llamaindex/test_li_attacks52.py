"""Helper attacks52: the LlamaIndex wrappers over a store of one long file, whose topical
finds fill their ``limit`` with passage slots (``few_document_passages``): every filled
slot reaches the caller; and a session id with a trailing newline is a digest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from li_helpers import WordHashEmbedding

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from llama_index.retrievers.treehop.memory_block import _session
from treehop import Treehop

QUERY = "configure logging handler"


@pytest.fixture
def client(tmp_path: Path) -> Any:
    root = tmp_path / "docs"
    root.mkdir()
    topics = ["logging", "fixtures", "markers", "plugins"]
    paras = [
        f"Paragraph {i}: configure {topics[i % 4]} handler level format number {i}. " * 4
        for i in range(120)
    ]
    (root / "book.txt").write_text("\n\n".join(paras))
    c = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None, chunk_chars=300)
    c.add_resource(root / "book.txt", target_uri="viking://resources/one")
    yield c
    c.close()


@pytest.mark.parametrize("k", [1, 4, 10])
def test_every_filled_slot_of_one_file_reaches_the_caller(client: Treehop, k: int) -> None:
    want = [m.slot_text for m in client.find(QUERY, limit=k).top(k)]
    assert len(want) == k and len(set(want)) == k
    nodes = TreehopRetriever(client, similarity_top_k=k).retrieve(QUERY)
    assert [n.node.get_content() for n in nodes] == want


def test_a_session_id_with_a_trailing_newline_is_a_digest() -> None:
    assert _session("s1") == "s1"
    assert _session("s1\n") != "s1\n"
    assert str(_session("s1\n")).startswith("s-")
