from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.errors import IngestError, InvalidQueryError, InvalidURIError, NotFoundError
from treehop.ingest.chunking import split_text
from treehop.ingest.loaders import html_to_text


def test_directory_becomes_a_tree(bow, sample_tree: Path) -> None:
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(sample_tree / "resources" / "devops", target_uri="viking://resources")
        assert res.root_uri == "viking://resources/devops"
        assert (res.directories, res.files) == (3, 5)
        kids = {e.uri: e for e in th.ls("viking://resources/devops")}
        assert set(kids) == {
            "viking://resources/devops/README.md",
            "viking://resources/devops/kubernetes",
            "viking://resources/devops/ml-ops",
        }
        d = th.stat("viking://resources/devops/ml-ops")
        assert not d.is_leaf and d.level == 1
        # The extractive overview carries the children's vocabulary, not a placeholder.
        assert "Model training pipelines" in d.overview and "registry" in d.overview.lower()
        root = th.stat("viking://resources")
        # (the folder by its README's title, stop 64: test_usage72.py)
        assert root.level == 0 and "DevOps" in root.abstract
        assert "RollingUpdate" in th.read("viking://resources/devops/kubernetes/deployments.md")


def test_readd_updates_only_what_changed(bow, sample_tree: Path) -> None:
    src = sample_tree / "resources" / "devops"
    with Treehop(embedder=bow, tagger=None) as th:
        first = th.add_resource(src, target_uri="viking://resources")
        assert first.embedded == 8 and first.unchanged == 0
        again = th.add_resource(src, target_uri="viking://resources")
        assert again.embedded == 0 and again.unchanged == 8 and again.deleted == 0
        (src / "kubernetes" / "deployments.md").write_text("# Deployments\n\nBlue-green only.\n")
        (src / "ml-ops" / "model-registry.md").unlink()
        third = th.add_resource(src, target_uri="viking://resources")
        # the changed file, plus the directories whose summaries depend on it
        assert third.deleted == 1
        assert 1 <= third.embedded <= 4
        assert "Blue-green" in th.read("viking://resources/devops/kubernetes/deployments.md")
        with pytest.raises(NotFoundError):
            th.read("viking://resources/devops/ml-ops/model-registry.md")


def test_long_files_are_chunked_in_order(bow, tmp_path: Path) -> None:
    sections = [f"## Part {i}\n\n" + (f"Sentence about topic {i}. ") * 40 for i in range(6)]
    (tmp_path / "long.md").write_text("# Long guide\n\n" + "\n\n".join(sections))
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(tmp_path / "long.md", target_uri="viking://resources/long.md")
        assert res.chunks >= 6
        kids = th.ls("viking://resources/long.md")
        assert [k.uri.rsplit("-", 1)[-1] for k in kids] == [str(i) for i in range(len(kids))]
        text = th.read("viking://resources/long.md")
        assert text.index("Part 0") < text.index("Part 5")
        hit = th.find("topic 4", target_uri="viking://resources/long.md", limit=3)
        assert hit.resources[0].chunk_index is not None


def test_binary_and_empty_files_are_skipped_and_counted(bow, tmp_path: Path) -> None:
    d = tmp_path / "mixed"
    d.mkdir()
    (d / "ok.md").write_text("# Fine\n\nReal text.")
    (d / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (d / "empty.txt").write_text("   ")
    with Treehop(embedder=bow, tagger=None) as th:
        res = th.add_resource(d)
        assert res.files == 1 and res.skipped_binary == ["image.png"]
        assert "empty.txt" in res.skipped_other


def test_ingest_errors(bow, tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "x.bin").write_bytes(b"\x00\x01\x02")
    with Treehop(embedder=bow, tagger=None) as th:
        with pytest.raises(IngestError, match="no readable text"):
            th.add_resource(tmp_path / "bin")
        with pytest.raises(InvalidQueryError, match="target_uri"):
            th.add_resource("just some text that is not a path")
        with pytest.raises(IngestError, match="empty"):
            th.add_resource("   ", target_uri="viking://resources/x")
        with pytest.raises(InvalidURIError):
            th.add_resource("text", target_uri="viking://resources/../x")


def test_add_text_memory_and_skill(bow) -> None:
    with Treehop(embedder=bow, tagger=None, user="alice") as th:
        th.add_memory("The user prefers tabs over spaces.", name="indent")
        th.add_skill("# Deploy\n\nRun make deploy.", name="deploy")
        assert th.read("viking://~/memories/indent").startswith("The user prefers tabs")
        res = th.find("tabs or spaces", context_type="memory")
        assert res.memories[0].uri == "viking://~/memories/indent"
        assert res.resources == [] and res.skills == []


def test_html_to_text_keeps_headings() -> None:
    text = html_to_text(
        "<html><head><title>T</title><style>x{}</style></head><body>"
        "<h1>Intro</h1><p>Hello <b>world</b>.</p><script>bad()</script></body>"
    )
    assert "# Intro" in text and "Hello world." in text and "bad()" not in text


def test_split_text_respects_limit_and_headings() -> None:
    text = "# A\n\n" + "word " * 500 + "\n\n# B\n\nshort"
    chunks = split_text(text, "markdown", max_chars=300)
    assert all(len(c.text) <= 300 for c in chunks)
    assert chunks[-1].title == "B" and chunks[0].title == "A"


@pytest.mark.parametrize(
    "uri",
    [
        "viking://resources",
        "viking://resources/a",
        "viking://resources/a/b/c.md",
        "viking://resources/a/b/c.md#3",
        "viking://user/default/memories",
        "viking://user/default/memories/x/y",
    ],
)
def test_finalize_ancestors_equal_the_uri_walk(uri: str) -> None:
    """``finalize`` memoises directories' ancestor chains: a node's ancestors are still
    exactly ``uri.ancestors_of`` (root first), twice in a row (the second from the cache)."""
    from treehop import uri as urimod
    from treehop.ingest.tree_builder import finalize
    from treehop.models import Node

    for _ in range(2):
        node = finalize(
            Node(uri=uri, parent_uri=None, context_type="resource", level=2, is_leaf=True)
        )
        assert node.ancestors == urimod.ancestors_of(uri)


def test_docbook_page_navigation_is_stripped_from_text(bow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Text saved from a DocBook page keeps its navigation bar, often glued to the words
    around it: it must not become the abstract, a tag (``administrationhome``) or content."""
    from treehop.ingest.loaders import strip_page_navigation

    page = (
        "5.7. Privileges5.7. PrivilegesPrev UpChapter 5. Data AdministrationHome Next\n\n"
        "When an object is created, it is assigned an owner. The owner is normally the role "
        "that executed the creation statement. Privileges are granted with GRANT.\n\n"
        "Prev Up Next5.6. Modifying Tables Home 5.8. Row Security Policies\n"
    )
    cleaned = strip_page_navigation(page)
    assert "Prev" not in cleaned and "Home" not in cleaned
    assert "When an object is created" in cleaned and "5.8. Row Security Policies" in cleaned
    assert strip_page_navigation("Preview the home page; Next steps") == (
        "Preview the home page; Next steps"
    )
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ddl-priv.txt").write_text(page)
    with Treehop(tmp_path / "idx", embedder=bow) as c:
        c.add_resource(tmp_path / "docs")
        c.add_resource(page, target_uri="viking://resources/pasted", is_text=True)
        for uri in ("viking://resources/docs/ddl-priv.txt", "viking://resources/pasted"):
            node = c.stat(uri)
            assert "Prev" not in node.abstract and "Home" not in node.abstract, node.abstract
            assert not any("home" in t for t in node.tags), node.tags
            assert "Prev Up" not in c.read(uri)
