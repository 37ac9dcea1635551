"""Hostile shapes of input: a directory 1,000 levels deep, queries with no visible character.
Each gets a typed error before anything is written or embedded (issue 36)."""

from __future__ import annotations

import os
import subprocess
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import IngestError, InvalidQueryError, InvalidURIError, Treehop
from treehop.ingest.loaders import MAX_DIR_DEPTH, depth_left
from treehop.uri import MAX_URI_DEPTH
from treehop.validation import check_query

from treehop_test_doubles import BagOfWordsEmbedder


def _deep(root: Path, levels: int) -> Path:
    """``root/d/d/.../leaf.md`` with ``levels`` directories below ``root`` (made with
    relative steps: the full path is never passed to one call)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            nxt = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open("leaf.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(leaf, b"# Bottom\n\nThe abyssal leaf at the very bottom.\n")
        os.close(leaf)
    finally:
        os.close(fd)
    return root


@pytest.fixture
def deep_dirs(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    # (shutil.rmtree recurses per level: pytest's own clean-up would hit the recursion limit)
    subprocess.run(["rm", "-rf", str(tmp_path)], check=False)


def test_a_directory_1000_levels_deep_is_an_ingest_error_and_nothing_is_written(
    deep_dirs: Path,
) -> None:
    root = _deep(deep_dirs / "deep", 1000)
    with Treehop(deep_dirs / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("a document", target_uri="viking://resources/keep", is_text=True)
        gen = th.store.generation
        with pytest.raises(IngestError, match="directories deep"):
            th.add_resource(root, target_uri="viking://resources/deep")
        assert th.store.generation == gen and len(th.store) == 2
        assert th.find("abyssal leaf bottom", limit=3).resources[0].uri.endswith("/keep")


def test_the_deepest_tree_allowed_is_added_found_read_and_removed(deep_dirs: Path) -> None:
    target = "viking://resources/deep"
    levels = depth_left(target)
    assert levels == min(MAX_DIR_DEPTH, MAX_URI_DEPTH - 4)
    root = _deep(deep_dirs / "deep", levels)
    with Treehop(deep_dirs / "idx", embedder=BagOfWordsEmbedder(), tagger=None) as th:
        added = th.add_resource(root, target_uri=target)
        assert added.files == 1 and added.directories == levels + 1
        hit = th.find("abyssal leaf bottom", limit=1, include_directories=False).resources[0]
        assert hit.uri.removeprefix(target).count("/d") == levels
        assert "abyssal" in th.read(hit.uri)
        assert th.tree(target, depth=64)["uri"] == target
        assert th.remove(target) == levels + 2
    # one more level would write a URI past MAX_URI_DEPTH: refused before writing
    (deep_dirs / "deep").rename(deep_dirs / "one-more")
    deeper = _deep(deep_dirs / "deep", levels + 1)
    th = Treehop(deep_dirs / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
    with th, pytest.raises(IngestError, match=f"more than {levels} directories"):
        th.add_resource(deeper, target_uri=target)


def test_a_uri_past_the_depth_limit_is_invalid() -> None:
    th = Treehop(embedder=BagOfWordsEmbedder(), tagger=None)
    with th, pytest.raises(InvalidURIError, match="segments"):
        th.read("viking://resources" + "/a" * MAX_URI_DEPTH)


INVISIBLE = st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp"])


@given(st.text(INVISIBLE, min_size=1, max_size=40))
@settings(max_examples=150, deadline=None)
def test_a_query_without_a_visible_character_is_refused(query: str) -> None:
    with pytest.raises(InvalidQueryError):
        check_query(query)


@given(st.text(min_size=1, max_size=40).filter(lambda q: "\x00" not in q))
@settings(max_examples=150, deadline=None)
def test_a_query_with_a_visible_character_passes_unless_it_has_a_surrogate(q: str) -> None:
    visible = any(unicodedata.category(c) not in {"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"} for c in q)
    surrogate = any("\ud800" <= c <= "\udfff" for c in q)
    if visible and not surrogate:
        assert check_query(q) == q.strip()
    else:
        with pytest.raises(InvalidQueryError):
            check_query(q)


@pytest.mark.parametrize(
    "query", ["\x00", "keys\x00", "\x01\x02", "\u200b", "\ufeff\u200d", "\x7f", " \x1b "]
)
def test_find_and_search_refuse_invisible_queries_before_embedding(query: str) -> None:
    emb = BagOfWordsEmbedder()
    with Treehop(embedder=emb, tagger=None) as th:
        th.add_resource("rotate keys", target_uri="viking://resources/k", is_text=True)
        calls = emb.calls
        with pytest.raises(InvalidQueryError):
            th.find(query)
        with pytest.raises(InvalidQueryError):
            th.search(query)
        assert emb.calls == calls
