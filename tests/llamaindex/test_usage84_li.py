"""Helper usage84: what a query engine's prompt shows of a chunk ``treehop index`` stored.

A chunk leads its text with its heading path; its ``chunk_title`` / ``heading_path`` metadata
said it twice more in the LLM's text, with ``passage_start`` (a chunk number) below. They stay
in ``metadata``; the LLM and the embedder see the heading once, in the text.
"""

from __future__ import annotations

from pathlib import Path

from li_helpers import WordHashEmbedding
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import MetadataMode

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

_FILLER = "The server reads its configuration at start and on a graceful restart. " * 20
_GUIDE = f"""# Authentication

{_FILLER}

## Getting it working

Here's the basics of password protecting a directory: create a password file with htpasswd,
then point AuthUserFile at it inside a Directory block. {_FILLER}

## Possible problems

Basic authentication checks the password on every request. {_FILLER}
"""


def _client(tmp_path: Path) -> Treehop:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "auth.md").write_text(_GUIDE, encoding="utf-8")
    client = Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    client.add_resource(tmp_path / "site", target_uri="viking://resources/site")
    return client


def _check(node_meta: dict, own_text: str, llm_text: str, embed_text: str) -> None:
    title = node_meta["chunk_title"]
    assert title and isinstance(node_meta["heading_path"], list)  # kept for programs
    assert "passage_start" in node_meta
    for text in (llm_text, embed_text):
        assert "chunk_title:" not in text and "heading_path:" not in text
        assert "passage_start:" not in text
        assert title in own_text
        assert text.count(title) == own_text.count(title)  # the text's own lines alone
    assert "source_path: auth.md" in llm_text  # the rest of the metadata still shows


def test_retriever_prompt_shows_a_chunks_heading_once(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        hits = TreehopRetriever(client, similarity_top_k=3).retrieve("htpasswd password file")
        chunks = [h for h in hits if "chunk_title" in h.node.metadata]
        assert chunks, [h.node.node_id for h in hits]
        for hit in chunks:
            _check(
                hit.node.metadata,
                hit.node.get_content(metadata_mode=MetadataMode.NONE),
                hit.node.get_content(metadata_mode=MetadataMode.LLM),
                hit.node.get_content(metadata_mode=MetadataMode.EMBED),
            )


def test_vector_store_over_an_indexed_tree_shows_the_heading_once(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        store = TreehopVectorStore(client)
        index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
        hits = index.as_retriever(similarity_top_k=3).retrieve("htpasswd password file")
        chunks = [h for h in hits if "chunk_title" in h.node.metadata]
        assert chunks, [h.node.node_id for h in hits]
        for hit in chunks:
            _check(
                hit.node.metadata,
                hit.node.get_content(metadata_mode=MetadataMode.NONE),
                hit.node.get_content(metadata_mode=MetadataMode.LLM),
                hit.node.get_content(metadata_mode=MetadataMode.EMBED),
            )


def test_a_title_the_text_does_not_hold_stays_visible() -> None:
    from llama_index.retrievers.treehop.nodes import echoed_keys

    meta = {"chunk_title": "Validation", "heading_path": ["Validation"], "passage_start": 0}
    assert echoed_keys(meta, "Tokens are checked.") == ["passage_start"]
    assert echoed_keys(meta, "Validation\n\nTokens are checked.") == [
        "passage_start",
        "chunk_title",
        "heading_path",
    ]
    assert echoed_keys({"chunk_title": ""}, "") == []
