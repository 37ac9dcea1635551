"""``add_documents`` / ``aadd_documents``: LlamaIndex Documents and nodes into the tree."""

from __future__ import annotations

from pathlib import Path

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.schema import Document, NodeRelationship, RelatedNodeInfo, TextNode

from llama_index.retrievers.treehop import (
    LlamaIndexEmbedder,
    TreehopRetriever,
    aadd_documents,
    add_documents,
)
from treehop import AsyncTreehop, Treehop
from treehop.errors import IngestError, InvalidURIError


@pytest.fixture
def empty(word_embedding: WordHashEmbedding) -> Treehop:
    return Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None)


def test_placement_metadata_and_tags(empty: Treehop) -> None:
    docs = [
        Document(
            text="tide tables",
            id_="d-1",
            metadata={"uri": "viking://resources/sea/tides", "lang": "en", "tags": "sea;nav"},
        ),
        Document(
            text="lighthouse lamps",
            id_="d-2",
            metadata={"file_path": "/data/coast/lighthouses.md", "year": 2021},
        ),
        Document(text="harbour fees", id_="d-3"),
    ]
    uris = add_documents(empty, docs, tags=["coast"])
    assert uris == [
        "viking://resources/sea/tides",
        "viking://resources/lighthouses.md",  # a machine path is made relative
        "viking://resources/d-3",
    ]
    tides = empty.stat("viking://resources/sea/tides")
    assert tides.content.strip() == "tide tables"
    assert tides.metadata["lang"] == "en"
    assert tides.metadata["ref_doc_id"] == "d-1"
    assert "uri" not in tides.metadata and "tags" not in tides.metadata
    labels = {t.split(":", 1)[1] for t in tides.tags}
    assert {"sea", "nav", "coast"} <= labels
    light = empty.stat("viking://resources/lighthouses.md")
    assert light.metadata["year"] == 2021
    assert light.metadata["file_path"] == "/data/coast/lighthouses.md"
    # Retrieved nodes carry the metadata back and point to their LlamaIndex document.
    node = (
        TreehopRetriever(empty, similarity_top_k=1, include_directories=False)
        .retrieve("tide tables")[0]
        .node
    )
    assert node.node_id == "viking://resources/sea/tides"
    assert node.metadata["lang"] == "en"
    assert node.ref_doc_id == "d-1"
    assert node.source_node is not None and node.source_node.node_id == "d-1"


def test_nodes_keep_their_source_document(empty: Treehop) -> None:
    node = TextNode(
        text="a chunk about anchors",
        id_="n-7",
        metadata={"uri": "viking://resources/sea/anchors"},
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="parent-doc")},
    )
    add_documents(empty, [node])
    assert empty.stat("viking://resources/sea/anchors").metadata["ref_doc_id"] == "parent-doc"


def test_one_line_text_is_never_read_as_a_path(
    empty: Treehop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("do not ingest me")
    monkeypatch.chdir(tmp_path)
    add_documents(empty, [Document(text="secret.txt", metadata={"uri": "viking://resources/x"})])
    assert empty.read("viking://resources/x").strip() == "secret.txt"


def test_duplicates(empty: Treehop) -> None:
    docs = [
        Document(text="part one", metadata={"file_path": "a/b.md"}),
        Document(text="part two", metadata={"file_path": "a/b.md"}),
    ]
    with pytest.raises(InvalidURIError, match="all map to"):
        add_documents(empty, docs, on_duplicate="error")
    assert len(empty.store) == 0  # validated before anything was written
    assert add_documents(empty, docs) == [
        "viking://resources/a/b.md#chunk-0",
        "viking://resources/a/b.md#chunk-1",
    ]
    assert empty.read("viking://resources/a/b.md") == "part one\n\npart two"
    # numbered parts go below a/b.md: never over the document written above (its text would
    # be gone, the document a directory of its chunks and the parts: attacks62)
    with pytest.raises(InvalidURIError, match="inside the document"):
        add_documents(empty, docs, on_duplicate="number")
    assert empty.read("viking://resources/a/b.md") == "part one\n\npart two"
    empty.remove("viking://resources/a/b.md")
    uris = add_documents(empty, docs, on_duplicate="number")
    assert uris == ["viking://resources/a/b.md/part-1", "viking://resources/a/b.md/part-2"]


@pytest.mark.parametrize(
    ("doc", "error", "match"),
    [
        (
            Document(text="x", metadata={"uri": "https://example.com/x"}),
            InvalidURIError,
            "not a viking:// URI",
        ),
        (
            Document(text="x", metadata={"uri": "viking://resources/../etc"}),
            InvalidURIError,
            "leave",
        ),
        (Document(text="   ", metadata={}), IngestError, "empty"),
        (Document(text="x", metadata={"uri": "viking://resources"}), InvalidURIError, "root"),
        (
            Document(text="x", metadata={"uri": "viking://resources/f#chunk-1"}),
            InvalidURIError,
            "chunk",
        ),
        (Document(text="x", metadata={"blob": b"bytes"}), IngestError, "JSON"),
        (Document(text="x", metadata={"score": float("inf")}), IngestError, "JSON|finite"),
    ],
)
def test_bad_documents_are_refused_before_writing(
    empty: Treehop, doc: Document, error: type[Exception], match: str
) -> None:
    good = Document(text="fine", metadata={"uri": "viking://resources/fine"})
    with pytest.raises(error, match=match):
        add_documents(empty, [good, doc])
    assert len(empty.store) == 0


def test_not_documents(empty: Treehop) -> None:
    with pytest.raises(IngestError, match="list of llama_index"):
        add_documents(empty, Document(text="x"))  # type: ignore[arg-type]
    with pytest.raises(IngestError, match="expected a llama_index"):
        add_documents(empty, ["plain string"])  # type: ignore[list-item]


def test_re_adding_unchanged_documents_does_not_re_embed(
    empty: Treehop, word_embedding: WordHashEmbedding
) -> None:
    docs = [
        Document(text="tide tables", metadata={"uri": "viking://resources/sea/tides", "rev": 1})
    ]
    add_documents(empty, docs)
    calls = word_embedding.async_calls
    docs[0].metadata["rev"] = 2
    add_documents(empty, docs)
    assert word_embedding.async_calls == calls
    assert empty.stat("viking://resources/sea/tides").metadata["rev"] == 2


async def test_aadd_documents_with_both_clients(word_embedding: WordHashEmbedding) -> None:
    docs = [
        Document(text="tide tables", metadata={"uri": "viking://resources/sea/tides", "lang": "en"})
    ]
    aclient = AsyncTreehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None)
    assert await aadd_documents(aclient, docs) == ["viking://resources/sea/tides"]
    assert (await aclient.stat("viking://resources/sea/tides")).metadata["lang"] == "en"
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as sync_client:
        assert await aadd_documents(sync_client, docs) == ["viking://resources/sea/tides"]
        assert sync_client.stat("viking://resources/sea/tides").metadata["lang"] == "en"


def test_directory_reader_output_is_relative_and_keeps_its_exclusions(
    empty: Treehop, tmp_path: Path
) -> None:
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.schema import MetadataMode

    (tmp_path / "docs" / "ops").mkdir(parents=True)
    (tmp_path / "docs" / "cli.md").write_text("The CLI validates OAuth tokens before any call.")
    (tmp_path / "docs" / "ops" / "backup.md").write_text("Backups run nightly.")
    docs = SimpleDirectoryReader(str(tmp_path / "docs"), recursive=True).load_data()
    uris = add_documents(empty, docs)
    # No machine path: relative to the reader's directory.
    assert sorted(uris) == ["viking://resources/cli.md", "viking://resources/ops/backup.md"]
    [hit] = TreehopRetriever(empty, similarity_top_k=1).retrieve("OAuth tokens CLI")
    llm_text = hit.node.get_content(metadata_mode=MetadataMode.LLM)
    embed_text = hit.node.get_content(metadata_mode=MetadataMode.EMBED)
    for key in ("file_size", "creation_date", "last_modified_date", "treehop_excluded_llm"):
        assert key not in llm_text, key
    for key in ("file_size", "last_modified_date"):
        assert key not in embed_text, key
    assert "file_name" not in llm_text and "OAuth tokens" in llm_text
    assert hit.node.metadata["file_size"] > 0  # still there for programs, just not the LLM


def test_split_nodes_of_one_file_become_ordered_chunks(empty: Treehop) -> None:
    from llama_index.core.node_parser import SentenceSplitter

    doc = Document(
        text=" ".join(f"Sentence number {i} about backups." for i in range(40)),
        id_="handbook",
        metadata={"file_path": "/srv/docs/handbook.md"},
    )
    nodes = SentenceSplitter(chunk_size=48, chunk_overlap=0).get_nodes_from_documents([doc])
    assert len(nodes) > 2
    uris = add_documents(empty, list(reversed(nodes)))
    assert all(u.startswith("viking://resources/handbook.md#chunk-") for u in uris)
    assert empty.read("viking://resources/handbook.md").startswith("Sentence number 0 ")
    [hit] = TreehopRetriever(empty, similarity_top_k=1).retrieve("Sentence number 0")
    assert hit.node.ref_doc_id == "handbook"
