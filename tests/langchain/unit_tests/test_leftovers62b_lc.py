"""Items left open by stop 61, on the LangChain side (bench/README.md, "Leftovers, stop 62
continued (helper leftovers62b)"). Each test fails on 9c20d29."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_treehop import TreehopRetriever, add_documents
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

_PART1 = "Run the deploy script first; it checks the release notes."
_PART2 = "Then pass the blue-green flag to roll the release out without downtime."
_BACKUP = "Nightly backups rotate every seven days and are copied off site."


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(path=tmp_path / "ix", embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


# --------------------------------------------------- source_path of a loader's pages
def test_a_loaders_pages_of_one_file_show_its_path_under_the_folder(client: Treehop) -> None:
    # 9c20d29: the pages of deploy.md (one source, added together: the chunks of one file)
    # came back without source_path, and a filter on it found nothing of them
    deploy = "/home/u/docs/guide/deploy.md"
    docs = [
        Document(_PART1, metadata={"source": deploy, "page": 0}),
        Document(_PART2, metadata={"source": deploy, "page": 1}),
        Document(_BACKUP, metadata={"source": "/home/u/docs/backups.md"}),
    ]
    uris = add_documents(client, docs)
    assert uris[:2] == [
        "viking://resources/guide/deploy.md#chunk-0",
        "viking://resources/guide/deploy.md#chunk-1",
    ]
    [hit] = TreehopRetriever(client, k=1).invoke("blue-green flag downtime")
    assert hit.id == uris[1]
    assert hit.metadata["source"] == deploy  # the loader's, as given
    assert hit.metadata["source_path"] == "guide/deploy.md"
    assert hit.metadata["page"] == 1
    # a filter on the path, as over a folder add_resource ingested: the file's pages only
    found = TreehopRetriever(client, k=5, metadata_filter={"source_path": "guide/deploy.md"})
    for query in ("blue-green flag downtime", "nightly backups off site"):
        got = found.invoke(query)
        assert got and {d.id for d in got} <= set(uris[:2])
        assert all(d.metadata["source_path"] == "guide/deploy.md" for d in got)
