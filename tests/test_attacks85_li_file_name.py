"""helper attacks85: a chunk of a name-less text shows its file's ``file_name``.

Where nothing names a file (a text added with no ``name=``), LlamaIndex's ``file_name`` is
the URI's last segment (helper leftovers71b). A text long enough to be chunked is stored as
``note#chunk-0``, ``note#chunk-1``, ... and each chunk showed ``file_name`` ``note#chunk-0``
and so on: one "file" per chunk, where the chunks of a named file all show its ``name``, and
code that groups hits by ``file_name`` split one document. Now the chunk mark is dropped.
Real clients, offline word-hash embeddings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llama_index.core.vector_stores.types import VectorStoreQuery

from llama_index.retrievers.treehop import TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.filters import (
    uri_name as _last_segment,
)  # (stop 72: the one reading, nodes and filters)

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder

from lc_helpers import WordHashEmbeddings

LONG = "viking://resources/long note"
EMB = WordHashEmbeddings()


@pytest.fixture(scope="module")
def client() -> Iterator[Treehop]:
    c = Treehop(None, embedder=LangChainEmbedder(EMB), tagger=None)
    c.add_resource(
        ("Key rotation runs nightly. " * 40 + "\n\n") * 30, is_text=True, target_uri=LONG
    )
    c.add_resource("Key rotation, short.", is_text=True, target_uri="viking://resources/short")
    yield c
    c.close()


def test_every_chunk_of_a_nameless_text_shows_one_file_name(client: Treehop) -> None:
    store = LlamaStore(client=client)
    got = store.query(
        VectorStoreQuery(query_embedding=EMB.embed_query("key rotation"), similarity_top_k=6)
    ).nodes
    assert got is not None
    chunks = [n for n in got if n.node_id.startswith(LONG + "#chunk-")]
    assert len(chunks) >= 2
    assert {n.metadata["file_name"] for n in chunks} == {"long note"}
    assert all(n.metadata["file_path"] == n.node_id for n in chunks)  # (the node's URI)
    hits = TreehopRetriever(client, similarity_top_k=6).retrieve("key rotation nightly")
    assert {h.node.metadata["file_name"] for h in hits if "#chunk-" in h.node.node_id} == {
        "long note"
    }
    [back] = store.get_nodes(node_ids=[chunks[0].node_id])
    assert back.metadata["file_name"] == "long note"


def test_control_an_unchunked_text_shows_its_last_segment(client: Treehop) -> None:
    [node] = LlamaStore(client=client).get_nodes(node_ids=["viking://resources/short"])
    assert node.metadata["file_name"] == "short"


_SEGMENT = st.text(
    alphabet=st.characters(blacklist_characters="/#", blacklist_categories=["Cs"]), min_size=1
)


@given(dirs=st.lists(_SEGMENT, max_size=3), name=_SEGMENT, chunk=st.integers(0, 10**6))
def test_last_segment_of_a_chunk_is_its_files(dirs: list[str], name: str, chunk: int) -> None:
    file_uri = "/".join(["viking://resources", *dirs, name])
    assert _last_segment(file_uri) == name
    assert _last_segment(f"{file_uri}#chunk-{chunk}") == name
    assert _last_segment(file_uri + "/") == name
