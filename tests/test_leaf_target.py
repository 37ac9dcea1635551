"""``target_uri`` naming a leaf (one file, one chunk) searches that leaf, not its folder.

The retriever opens its roots as directories. A root that is a leaf has no children, so it
used to be found only through its folder: the tree context scored the folder's family and
placed the target's siblings (and the seed opened the folder when the leaf was a hit), so a
find scoped to one file returned every file beside it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from treehop import FoundBy, Treehop

ROOT = "viking://resources/src"
FOLDER = f"{ROOT}/fruit"
GUIDE = f"{FOLDER}/guide.md"


@pytest.fixture
def th(bow, tmp_path: Path) -> Iterator[Treehop]:  # type: ignore[no-untyped-def]
    src = tmp_path / "src" / "fruit"
    src.mkdir(parents=True)
    (src / "apples.md").write_text("# Apples\nApples grow on trees in orchards and keep well.\n")
    (src / "bananas.md").write_text("# Bananas\nBananas ripen in the tropical sun.\n")
    (src / "cherries.md").write_text("# Cherries\nCherries are small red stone fruits on trees.\n")
    sections = "\n\n".join(
        f"## Section {i}\n" + f"Topic{i} fruit trees orchard harvest words. " * 40 for i in range(6)
    )
    (src / "guide.md").write_text("# Guide\n\n" + sections)
    with Treehop(embedder=bow, tagger=None) as client:
        client.add_resource(tmp_path / "src", target_uri=ROOT)
        yield client


def _uris(res) -> list[str]:  # type: ignore[no-untyped-def]
    return [m.uri for m in res.contexts()]


def test_the_folder_target_returns_its_files(th: Treehop) -> None:
    # the control: the same query over the folder finds the siblings the leaf target excludes
    uris = _uris(th.find("fruit trees", target_uri=FOLDER, limit=10, collapse_chunks=True))
    assert {f"{FOLDER}/apples.md", f"{FOLDER}/cherries.md"} <= set(uris)


@pytest.mark.parametrize("name", ["apples.md", "bananas.md", "cherries.md"])
def test_a_file_target_returns_that_file_only(th: Treehop, name: str) -> None:
    target = f"{FOLDER}/{name}"
    res = th.find("fruit trees", target_uri=target, limit=10)
    assert _uris(res) == [target]
    assert res.contexts()[0].found_by is FoundBy.GLOBAL


def test_a_chunk_target_returns_that_chunk_only(th: Treehop) -> None:
    target = f"{GUIDE}#chunk-4"
    res = th.find("Topic2 harvest", target_uri=target, limit=10)
    assert _uris(res) == [target]


def test_a_chunked_document_target_returns_its_chunks_only(th: Treehop) -> None:
    uris = _uris(th.find("Topic3 harvest", target_uri=GUIDE, limit=10, collapse_chunks=False))
    assert uris and all(u.startswith(GUIDE + "#") for u in uris)


def test_a_leaf_and_a_folder_together_stay_inside_both(th: Treehop) -> None:
    targets = [f"{FOLDER}/bananas.md", GUIDE]
    uris = _uris(th.find("fruit trees bananas", target_uri=targets, limit=10))
    assert f"{FOLDER}/bananas.md" in uris
    assert all(u == targets[0] or u.startswith(GUIDE + "#") for u in uris)


def test_a_leaf_target_the_filter_excludes_finds_nothing(th: Treehop) -> None:
    th.set_tags(f"{FOLDER}/cherries.md", add="user:red")
    over_folder = th.find("fruit trees", target_uri=FOLDER, tags="user:red")
    assert _uris(over_folder) == [f"{FOLDER}/cherries.md"]  # (the filter works)
    res = th.find("fruit trees", target_uri=f"{FOLDER}/apples.md", tags="user:red")
    assert _uris(res) == []


def test_search_and_context_keep_a_leaf_target(th: Treehop) -> None:
    target = f"{FOLDER}/cherries.md"
    assert _uris(th.search("which fruits grow on trees?", target_uri=target)) == [target]
    block = th.assemble_context("which fruits grow on trees?", target_uri=target)
    assert "Cherries" in block.text
    assert "Apples" not in block.text and "Bananas" not in block.text


def test_find_many_keeps_a_leaf_target_as_find_does(th: Treehop) -> None:
    target = f"{FOLDER}/apples.md"
    queries = ["fruit trees", "orchards", "Topic1 harvest"]
    batch = th.find_many(queries, target_uri=target, limit=5)
    assert [_uris(r) for r in batch] == [
        _uris(th.find(q, target_uri=target, limit=5)) for q in queries
    ]
    assert all(set(_uris(r)) <= {target} for r in batch)
