"""Copying retrieved results into another treehop store (bench/README.md, "Leftovers, stop
62 (helper leftovers62)", item 5). ``add_documents(other, retriever.invoke(q))`` refused the
whole batch when one result was a chunk ("cannot place a document at a chunk URI") or a
conversation turn. Chunks are now placed as their document's chunks; a turn is refused
with what to do instead."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from langchain_treehop import TreehopRetriever, aadd_documents, add_documents
from treehop import Treehop
from treehop.errors import InvalidURIError

from treehop_test_doubles import BagOfWordsEmbedder

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
]
GUIDE = "\n\n".join(f"## Part {i}\n\n" + " ".join(f"{w}{i}" for w in WORDS) * 3 for i in range(10))


@pytest.fixture
def source() -> Iterator[Treehop]:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None, chunk_chars=300)
    th.add_resource(GUIDE, target_uri="viking://resources/guide.md")
    th.add_resource("A short note on theta7 and gamma3", target_uri="viking://resources/note.md")
    yield th
    th.close()


def _chunk_texts(th: Treehop, uri: str) -> list[str]:
    kids = sorted(th.aio.store.children(uri), key=lambda n: n.chunk_index or 0)
    return [th.read(k.uri) for k in kids]


@pytest.mark.parametrize("how", ["sync", "async"])
def test_retrieved_chunks_copy_into_another_store_as_their_documents_chunks(
    source: Treehop, how: str
) -> None:
    docs = TreehopRetriever(client=source, k=6).invoke("gamma3 delta3 theta7")
    chunks = [d for d in docs if "#chunk-" in d.metadata["uri"]]
    assert len(chunks) >= 2  # (the test needs two chunks of one document)
    other = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    if how == "sync":
        uris = add_documents(other, docs)
    else:
        uris = asyncio.run(aadd_documents(other.aio, docs))
    assert len(uris) == len(docs)
    in_order = sorted(chunks, key=lambda d: d.metadata["chunk_index"])
    assert _chunk_texts(other, "viking://resources/guide.md") == [d.page_content for d in in_order]
    for d, uri in zip(docs, uris, strict=True):  # (each result readable where it went)
        assert other.read(uri) == d.page_content
    found = TreehopRetriever(client=other, k=3).invoke("gamma3 delta3")
    assert found and found[0].page_content.startswith("Part 3")
    other.close()


def test_a_retrieved_chunk_alone_becomes_its_documents_text(source: Treehop) -> None:
    docs = TreehopRetriever(client=source, k=6).invoke("gamma3 delta3 theta7")
    one = next(d for d in docs if "#chunk-" in d.metadata["uri"])
    other = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    assert add_documents(other, [one]) == ["viking://resources/guide.md"]
    assert other.read("viking://resources/guide.md") == one.page_content
    other.close()


def test_a_chunk_uri_without_the_retrievers_chunk_index_is_still_refused(source: Treehop) -> None:
    from langchain_core.documents import Document

    other = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    for meta in (
        {"uri": "viking://resources/f.md#chunk-1"},
        {"uri": "viking://resources/f.md#chunk-1", "chunk_index": 2},
        {"uri": "viking://resources/f.md#chunk-1", "chunk_index": True},
    ):
        with pytest.raises(InvalidURIError, match=r"chunk URI.*name its document"):
            add_documents(other, [Document(page_content="x", metadata=meta)])
    assert len(other.aio.store) == 0
    other.close()


def test_a_retrieved_conversation_turn_is_refused_with_what_to_do(source: Treehop) -> None:
    sid = source.create_session()
    source.add_messages(
        [
            {"role": "user", "content": "How do gamma3 and delta3 relate?"},
            {"role": "assistant", "content": "They share part 3."},
        ],
        session_id=sid,
    )
    docs = TreehopRetriever(client=source, k=8, context_types=["memory"]).invoke("gamma3 delta3")
    turns = [d for d in docs if d.metadata.get("kind") == "turn"]
    assert turns
    other = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    with pytest.raises(InvalidURIError, match=r"conversation turn retrieved.*add_messages"):
        add_documents(other, docs)
    assert len(other.aio.store) == 0  # (the batch is checked before any write)
    # the hint followed: without its uri, a turn is stored as a document under base_uri
    for d in turns:
        d.metadata.pop("uri")
    uris = add_documents(other, turns)
    assert all(u.startswith("viking://resources/") for u in uris)
    assert other.read(uris[0]) == turns[0].page_content
    other.close()
