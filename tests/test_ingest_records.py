"""treehop.ingest.records: plain (text, metadata) records placed in the tree by their metadata.

The LangChain and LlamaIndex ``add_documents`` helpers are thin adapters over this module, so
the placement, tag, metadata and duplicate rules are pinned here once, without either framework.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import IngestError, InvalidQueryError, InvalidTagError, InvalidURIError
from treehop.ingest.records import (
    IngestRecord,
    aadd_records,
    add_records,
    path_segments,
    plan_records,
)

from treehop_test_doubles import BagOfWordsEmbedder


@pytest.fixture
def client(bow: BagOfWordsEmbedder) -> Iterator[Treehop]:
    with Treehop(embedder=bow, tagger=None) as c:
        yield c


def all_uris(client: Treehop) -> set[str]:
    return {n.uri for n in client.store.iter_nodes(None)}


def test_records_are_placed_by_uri_then_path_then_id(client: Treehop) -> None:
    out = add_records(
        client,
        [
            ("Rolling updates replace pods.", {"uri": "viking://resources/ops/roll.md", "t": 1}),
            ("OAuth2 with PKCE.", {"source": "docs/security/oauth.md"}),
            ("Gradient boosting.", {"source": "https://wiki.example.com/ml/gbm"}),
            ("Windows path.", {"source": "C:\\data\\win\\notes.txt"}),
            IngestRecord("The user likes short answers.", {"uri": "viking://~/memories/style"}),
            IngestRecord("Feature stores.", id="feature-store"),
            # uri wins over source; source wins over id
            IngestRecord("both", {"uri": "viking://resources/u", "source": "s.md"}, id="i"),
            IngestRecord("path and id", {"source": "p.md"}, id="ignored"),
        ],
    )
    assert out == [
        "viking://resources/ops/roll.md",
        "viking://resources/docs/security/oauth.md",
        "viking://resources/wiki.example.com/ml/gbm",
        "viking://resources/notes.txt",  # a machine path: only what lies below its directory
        "viking://~/memories/style",
        "viking://resources/feature-store",
        "viking://resources/u",
        "viking://resources/p.md",
    ]
    roll = client.stat(out[0])
    assert roll.metadata["t"] == 1
    assert "uri" not in roll.metadata  # the placement key is the node's URI, not metadata
    # the path key stays: it is the loader's provenance
    assert client.stat(out[1]).metadata["source"] == "docs/security/oauth.md"
    assert client.stat(out[4]).context_type.value == "memory"
    assert client.stat(out[6]).metadata["source"] == "s.md"


def test_base_uri_and_custom_keys(client: Treehop) -> None:
    out = add_records(
        client,
        [("text a", {"loc": "a/b.md", "labels": "x;y", "uri": "not used"})],
        uri_key=None,
        path_key="loc",
        tags_key="labels",
        base_uri="viking://resources/kb",
    )
    assert out == ["viking://resources/kb/a/b.md"]
    node = client.stat(out[0])
    assert {"user:x", "user:y"} <= set(node.tags)
    assert node.metadata["uri"] == "not used"  # uri_key=None: an ordinary metadata key
    assert "labels" not in node.metadata


def test_tags_are_merged_and_checked(client: Treehop) -> None:
    add_records(
        client,
        [
            ("alpha text", {"source": "a.md", "tags": ["Team Alpha"]}),
            ("beta text", {"source": "b.md", "tags": "beta;shared"}),
        ],
        tags="shared",
    )
    a = client.stat("viking://resources/a.md")
    assert set(a.tags) == {"user:shared", "user:team-alpha"}
    assert set(client.stat("viking://resources/b.md").tags) == {"user:shared", "user:beta"}
    assert "tags" not in a.metadata
    with pytest.raises(InvalidTagError):
        add_records(client, [("c", {"source": "c.md", "tags": ["a;b:c"]})])
    # (a tagger's source in the metadata is left to the taggers: tags.document_tags)
    add_records(client, [("d", {"source": "d.md", "tags": ["Team Alpha", "auto:x"]})])
    assert "user:team-alpha" in client.stat("viking://resources/d.md").tags
    assert "auto:x" not in client.stat("viking://resources/d.md").tags


def test_metadata_reaches_every_chunk_without_re_embedding(
    client: Treehop, bow: BagOfWordsEmbedder
) -> None:
    body = "\n\n".join(f"## Section {i}\n" + f"Paragraph {i} on rollouts. " * 30 for i in range(6))
    [uri] = add_records(client, [(body, {"source": "long.md", "lang": "en"})])
    kids = client.store.children(client.aio.resolve(uri))
    assert len(kids) > 1 and all(k.chunk_index is not None for k in kids)
    assert all(k.metadata["lang"] == "en" for k in kids)
    # chunk structure written by the builder survives next to the record's metadata
    assert all("chunk_title" in k.metadata for k in kids)
    calls = bow.texts_embedded
    add_records(client, [(body, {"source": "long.md", "lang": "de"})])
    assert bow.texts_embedded == calls  # same text: nothing re-embedded ...
    assert client.stat(uri).metadata["lang"] == "de"  # ... but the metadata is refreshed
    assert all(k.metadata["lang"] == "de" for k in client.store.children(client.aio.resolve(uri)))


def test_a_one_line_text_naming_a_file_is_stored_verbatim(
    client: Treehop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("top secret contents")
    monkeypatch.chdir(tmp_path)
    [rel, absolute] = add_records(
        client,
        [("secret.txt", {"source": "n.md"}), (str(tmp_path / "secret.txt"), {"source": "m.md"})],
    )
    # is_text=True: a text is never looked up as a path, however much it looks like one
    assert client.stat(rel).content == "secret.txt"
    assert client.stat(absolute).content == str(tmp_path / "secret.txt")
    assert "top secret" not in client.read(rel)


def test_records_sharing_a_source_become_ordered_chunks(client: Treehop) -> None:
    # A loader's pages, out of order: one file whose chunks follow the page numbers.
    pages = [
        (f"page {i} of the handbook", {"source": "handbook.pdf", "page": i}) for i in (2, 0, 1)
    ]
    out = add_records(client, pages)
    assert out == [f"viking://resources/handbook.pdf#chunk-{i}" for i in (2, 0, 1)]
    assert client.read("viking://resources/handbook.pdf").split("\n\n") == [
        f"page {i} of the handbook" for i in range(3)
    ]
    handbook = client.stat("viking://resources/handbook.pdf")
    assert not handbook.is_leaf and handbook.metadata["chunks"] == 3
    assert handbook.metadata["source"] == "handbook.pdf"  # shared by every chunk
    # Re-adding fewer pages replaces the file (as add_resource does), it does not merge.
    assert add_records(client, pages[1:]) == [
        "viking://resources/handbook.pdf#chunk-0",
        "viking://resources/handbook.pdf#chunk-1",
    ]
    assert len(client.ls("viking://resources/handbook.pdf")) == 2
    # Offsets order chunks inside a page.
    split = [IngestRecord(f"part {o}", {"source": "s.md"}, offset=o) for o in (40.0, 0.0, 20.0)]
    add_records(client, split)
    assert client.read("viking://resources/s.md").split("\n\n") == [
        "part 0.0",
        "part 20.0",
        "part 40.0",
    ]


def test_records_without_a_place_get_a_stable_id(client: Treehop) -> None:
    first = add_records(client, [("no place", {"k": 1})])
    assert first[0].startswith("viking://resources/doc-")
    assert add_records(client, [("no place", {"k": 1})]) == first
    assert add_records(client, [("no place", {"k": 2})]) != first


def test_machine_paths_become_relative(client: Treehop) -> None:
    out = add_records(
        client,
        [
            ("cli", {"source": "/home/alice/project/docs/cli.md"}),
            ("rest", {"source": "/home/alice/project/docs/api/rest.md"}),
            ("notes", {"source": "../shared/notes.md"}),
            ("kept", {"source": "docs/kept.md"}),  # relative without '..': unchanged
        ],
    )
    assert out == [
        "viking://resources/cli.md",
        "viking://resources/api/rest.md",
        "viking://resources/notes.md",
        "viking://resources/docs/kept.md",
    ]
    assert client.stat(out[0]).metadata["source"] == "/home/alice/project/docs/cli.md"


def test_duplicates_error_or_are_numbered(client: Treehop) -> None:
    pages = [(f"page {i} of the handbook", {"source": "handbook.pdf", "page": i}) for i in range(3)]
    with pytest.raises(InvalidURIError, match="documents 0, 1, 2 all map to"):
        add_records(client, pages, on_duplicate="error")
    assert all_uris(client) == set()
    out = add_records(client, pages, on_duplicate="number")
    assert out == [f"viking://resources/handbook.pdf/part-{i}" for i in (1, 2, 3)]
    assert client.stat(out[2]).metadata["page"] == 2
    # parts are zero-padded to one width so they sort in order
    many = [(f"p{i}", {"source": "big.pdf"}) for i in range(10)]
    plan = plan_records(client, many, on_duplicate="number")
    assert [p.target_uri.rsplit("/", 1)[-1] for p in plan[:2]] == ["part-01", "part-02"]
    assert plan[-1].target_uri.endswith("/part-10")


def test_plan_is_a_dry_run(client: Treehop) -> None:
    plan = plan_records(
        client,
        [
            IngestRecord("x", {"source": "a/b.md", "tags": "t", "k": 1}),
            ("y", {"uri": "viking://resources/c"}),
        ],
        tags=["common"],
    )
    assert [p.index for p in plan] == [0, 1]
    assert plan[0].target_uri == client.aio.resolve("viking://resources/a/b.md")
    assert plan[0].tags == ["user:common", "user:t"]
    assert plan[0].metadata == {"source": "a/b.md", "k": 1}
    assert plan[1].metadata == {}
    assert all_uris(client) == set()


@pytest.mark.parametrize(
    ("record", "error", "match"),
    [
        (("   ", {"source": "x.md"}), IngestError, "document 1: the text is empty"),
        (("x", {"source": "/"}), InvalidURIError, "names no file"),
        (("x", {"source": 7}), InvalidURIError, "must be a string path"),
        (("x", {"uri": 7}), InvalidURIError, "must be a string URI"),
        (("x", {"uri": "resources/x"}), InvalidURIError, "not a viking"),
        (("x", {"uri": "viking://resources"}), InvalidURIError, "root"),
        (("x", {"uri": "viking://resources/f#chunk-1"}), InvalidURIError, "chunk"),
        (("x", {"uri": "viking://user/eve/memories/x"}), InvalidURIError, "another user"),
        (("x", {"source": "y.md", "when": object()}), IngestError, "JSON-serialisable"),
        (("x", {"source": "y.md", "score": float("nan")}), IngestError, "JSON|finite"),
        (("x", {"source": "y.md", "treehop_id": "x"}), IngestError, "reserved"),
        (("x", {"source": "ok.md/inner.md"}), InvalidURIError, "inside document 0's own path"),
        ("just text", IngestError, "expected an IngestRecord or a \\(text, metadata\\) pair"),
        (("x", "not a mapping"), IngestError, "metadata must be a mapping"),
        ((b"bytes", {}), IngestError, "text must be a string"),
        (IngestRecord("x", id=3), IngestError, "id must be a string"),  # type: ignore[arg-type]
    ],
)
def test_a_bad_record_writes_nothing(
    client: Treehop, record: Any, error: type[Exception], match: str
) -> None:
    good = ("fine", {"source": "ok.md"})
    with pytest.raises(error, match=match):
        add_records(client, [good, record])
    assert all_uris(client) == set()


def test_bad_arguments(client: Treehop) -> None:
    with pytest.raises(IngestError, match="must be a list"):
        add_records(client, IngestRecord("x", id="a"))  # type: ignore[arg-type]
    with pytest.raises(IngestError, match="must be a list"):
        add_records(client, "text")  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="on_duplicate"):
        add_records(client, [("x", {"source": "a"})], on_duplicate="skip")  # type: ignore[arg-type]
    with pytest.raises(InvalidURIError, match="base_uri"):
        add_records(client, [("x", {"source": "a"})], base_uri="viking://resources/f#chunk-1")
    with pytest.raises(InvalidQueryError, match=r"treehop\.Treehop"):
        plan_records(object(), [("x", {"source": "a"})])  # type: ignore[arg-type]
    assert all_uris(client) == set()


def test_sync_ingest_with_an_async_client_needs_a_runner(bow: BagOfWordsEmbedder) -> None:
    aclient = AsyncTreehop(embedder=bow, tagger=None)
    with pytest.raises(InvalidQueryError, match="run_async"):
        add_records(aclient, [("x", {"source": "a.md"})])
    ran: list[bool] = []

    def runner(coro: Coroutine[Any, Any, list[str]]) -> list[str]:
        ran.append(True)
        return asyncio.run(coro)

    out = add_records(aclient, [("x", {"source": "a.md", "k": 1})], run_async=runner)
    assert ran == [True]
    assert out == ["viking://resources/a.md"]
    assert asyncio.run(aclient.stat(out[0])).metadata["k"] == 1


async def test_aadd_records_with_both_clients(bow: BagOfWordsEmbedder) -> None:
    records = [("tide tables", {"uri": "viking://resources/sea/tides", "lang": "en"})]
    aclient = AsyncTreehop(embedder=bow, tagger=None)
    assert await aadd_records(aclient, records) == ["viking://resources/sea/tides"]
    assert (await aclient.stat("viking://resources/sea/tides")).metadata["lang"] == "en"
    with pytest.raises(InvalidURIError, match="all map to"):
        await aadd_records(aclient, records * 2, on_duplicate="error")
    with Treehop(embedder=bow, tagger=None) as sync_client:
        assert await aadd_records(sync_client, records) == ["viking://resources/sea/tides"]
        assert sync_client.stat("viking://resources/sea/tides").metadata["lang"] == "en"


def test_path_segments() -> None:
    assert path_segments("https://wiki.example.com/ml/gbm") == ["wiki.example.com", "ml", "gbm"]
    assert path_segments("C:\\data\\x.md") == ["data", "x.md"]
    assert path_segments("./a//b/ c /") == ["a", "b", "c"]
    with pytest.raises(InvalidURIError, match=r"'\.\.'"):
        path_segments("a/../b")
