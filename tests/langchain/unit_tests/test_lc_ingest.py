"""add_documents / aadd_documents: LangChain Documents placed in the tree by their metadata."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_treehop import LangChainEmbedder, TreehopRetriever, aadd_documents, add_documents
from treehop import AsyncTreehop, Treehop
from treehop.errors import IngestError, InvalidTagError, InvalidURIError

from lc_helpers import WordHashEmbeddings


@pytest.fixture
def empty_client(embeddings: WordHashEmbeddings) -> Iterator[Treehop]:
    client = Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    yield client
    client.close()


def all_uris(client: Treehop) -> set[str]:
    return {n.uri for n in client.store.iter_nodes(None)}


def test_documents_are_placed_by_uri_path_or_id(empty_client: Treehop) -> None:
    docs = [
        Document(
            "Rolling updates replace pods gradually.",
            metadata={"uri": "viking://resources/ops/rollouts.md", "team": "platform"},
        ),
        Document(
            "OAuth2 authorization code flow with PKCE.",
            metadata={"source": "docs/security/oauth.md"},
        ),
        Document(
            "Gradient boosting fits trees to residuals.",
            metadata={"source": "https://wiki.example.com/ml/gbm"},
        ),
        Document(
            "The user prefers short answers.",
            id="answer-style",
            metadata={"uri": "viking://~/memories/answer-style"},
        ),
        Document("Feature stores serve features online.", id="feature-store"),
    ]
    out = add_documents(empty_client, docs)
    assert out == [
        "viking://resources/ops/rollouts.md",
        "viking://resources/docs/security/oauth.md",
        "viking://resources/wiki.example.com/ml/gbm",
        "viking://~/memories/answer-style",
        "viking://resources/feature-store",
    ]
    assert empty_client.read(out[0]) == "Rolling updates replace pods gradually."
    node = empty_client.stat(out[0])
    assert node.metadata["team"] == "platform"
    assert "uri" not in node.metadata  # the placement key is the node's URI, not metadata
    assert empty_client.stat(out[1]).metadata["source"] == "docs/security/oauth.md"
    assert empty_client.stat(out[3]).context_type.value == "memory"


def test_metadata_round_trips_and_is_filterable(empty_client: Treehop) -> None:
    docs = [
        Document(
            f"Deployment guide part {i} about kubernetes rollouts.",
            metadata={"source": f"guides/{lang}/deploy-{i}.md", "lang": lang, "year": 2020 + i},
        )
        for i, lang in enumerate(["en", "de", "en", "fr"])
    ]
    add_documents(empty_client, docs, tags=["guides"])
    r = TreehopRetriever(client=empty_client, k=10, include_directories=False)
    english = r.invoke(
        "kubernetes rollouts", metadata_filter={"op": "must", "field": "lang", "conds": ["en"]}
    )
    assert sorted(d.metadata["source"] for d in english) == [
        "guides/en/deploy-0.md",
        "guides/en/deploy-2.md",
    ]
    recent = r.invoke(
        "kubernetes rollouts", metadata_filter={"op": "range", "field": "year", "gte": 2022}
    )
    assert sorted(d.metadata["year"] for d in recent) == [2022, 2023]
    assert all("user:guides" in d.metadata["tags"] for d in english)


def test_per_document_tags(empty_client: Treehop) -> None:
    add_documents(
        empty_client,
        [
            Document("alpha text", metadata={"source": "a.md", "tags": ["Team Alpha"]}),
            Document("beta text", metadata={"source": "b.md", "tags": "beta;shared"}),
        ],
        tags="shared",
    )
    a = empty_client.stat("viking://resources/a.md")
    b = empty_client.stat("viking://resources/b.md")
    assert set(a.tags) == {"user:shared", "user:team-alpha"}
    assert set(b.tags) == {"user:shared", "user:beta"}
    assert "tags" not in a.metadata
    with pytest.raises(InvalidTagError):
        add_documents(empty_client, [Document("c", metadata={"source": "c.md", "tags": ["a;b:c"]})])
    # (a tagger's source in the metadata is left to the taggers: tags.document_tags)
    add_documents(empty_client, [Document("d", metadata={"source": "d.md", "tags": ["auto:x"]})])
    assert "auto:x" not in empty_client.stat("viking://resources/d.md").tags


def test_long_documents_are_chunked_and_chunks_carry_the_metadata(empty_client: Treehop) -> None:
    body = "\n\n".join(
        f"## Section {i}\n" + f"Paragraph {i} about rollouts. " * 30 for i in range(6)
    )
    [uri] = add_documents(
        empty_client, [Document(body, metadata={"source": "long.md", "lang": "en"})]
    )
    kids = empty_client.store.children(empty_client.aio.resolve(uri))
    assert len(kids) > 1 and all(k.chunk_index is not None for k in kids)
    assert all(k.metadata["lang"] == "en" for k in kids)
    assert empty_client.stat(uri).metadata["lang"] == "en"


def test_a_bad_document_writes_nothing(empty_client: Treehop) -> None:
    good = Document("fine", metadata={"source": "ok.md"})
    cases = [
        (
            [good, Document("   ", metadata={"source": "x.md"})],
            IngestError,
            "page_content is empty",
        ),
        ([good, Document("x", metadata={"uri": "resources/x"})], InvalidURIError, "not a viking"),
        ([good, Document("x", metadata={"uri": "viking://resources"})], InvalidURIError, "root"),
        (
            [good, Document("x", metadata={"uri": "viking://user/eve/memories/x"})],
            InvalidURIError,
            "another user's space",
        ),
        (
            [good, Document("x", metadata={"source": "y.md", "when": object()})],
            IngestError,
            "JSON-serialisable",
        ),
        (
            [good, Document("x", metadata={"source": "ok.md/inner.md"})],
            InvalidURIError,
            "inside document 0's own path",
        ),
    ]
    for docs, exc, message in cases:
        with pytest.raises(exc, match=message):
            add_documents(empty_client, docs)
        assert all_uris(empty_client) == set(), message
    with pytest.raises(IngestError, match="list of langchain Document"):
        add_documents(empty_client, good)  # type: ignore[arg-type]


def test_loader_pages_and_splitter_chunks_become_one_ordered_file(empty_client: Treehop) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    pages = [
        Document(
            f"Page {i}. " + " ".join(f"word{i}x{j}" for j in range(30)),
            metadata={"source": "/home/alice/reports/q3.pdf", "page": i},
        )
        for i in (1, 0, 2)
    ]
    splitter = RecursiveCharacterTextSplitter(chunk_size=80, chunk_overlap=0, add_start_index=True)
    chunks = splitter.split_documents(pages)
    out = add_documents(empty_client, chunks)
    assert len(out) == len(chunks) and len(set(out)) == len(chunks)
    assert all(u.startswith("viking://resources/q3.pdf#chunk-") for u in out)
    stored = [empty_client.stat(e.uri) for e in empty_client.ls("viking://resources/q3.pdf")]
    keys = [(n.metadata["page"], n.metadata["start_index"]) for n in stored]
    assert keys == sorted(keys)
    assert empty_client.read("viking://resources/q3.pdf").startswith("Page 0.")
    with pytest.raises(InvalidURIError, match="all map to"):
        add_documents(empty_client, chunks, on_duplicate="error")


def test_duplicates_can_be_numbered(empty_client: Treehop) -> None:
    pages = [
        Document(f"page {i} of the handbook", metadata={"source": "handbook.pdf", "page": i})
        for i in range(3)
    ]
    out = add_documents(empty_client, pages, on_duplicate="number")
    assert out == [f"viking://resources/handbook.pdf/part-{i}" for i in (1, 2, 3)]
    assert empty_client.stat(out[2]).metadata["page"] == 2


def test_a_text_naming_a_file_is_stored_as_text(empty_client: Treehop, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret contents")
    [uri] = add_documents(empty_client, [Document(str(secret), metadata={"source": "n.md"})])
    assert empty_client.read(uri) == str(secret)
    assert "top secret" not in empty_client.read(uri)


def test_re_adding_unchanged_documents_embeds_nothing(embeddings: WordHashEmbeddings) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    try:
        docs = [Document("alpha beta", metadata={"source": "a.md", "v": 1})]
        add_documents(client, docs)
        calls = embeddings.async_calls + embeddings.sync_calls
        docs[0].metadata["v"] = 2
        add_documents(client, docs)
        assert embeddings.async_calls + embeddings.sync_calls == calls
        assert client.stat("viking://resources/a.md").metadata["v"] == 2
    finally:
        client.close()


async def test_aadd_documents_with_the_async_client(embeddings: WordHashEmbeddings) -> None:
    client = AsyncTreehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    out = await aadd_documents(
        client,
        [
            Document(
                "The user writes Python with type hints.",
                metadata={"uri": "viking://~/memories/style", "confidence": 0.9},
            )
        ],
    )
    assert out == ["viking://~/memories/style"]
    node = await client.stat(out[0])
    assert node.metadata["confidence"] == 0.9
    assert embeddings.sync_calls == 0
    docs = await TreehopRetriever(client=client, k=1, context_types=["memory"]).ainvoke(
        "python type hints"
    )
    assert docs[0].id == out[0] and docs[0].metadata["confidence"] == 0.9
