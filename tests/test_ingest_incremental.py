"""Incremental re-add (``treehop.ingest.writer``): unchanged files are skipped before they are
read, only new or changed files are parsed, tagged and embedded, and the tree that results is
the one a fresh ingest of the same folder builds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop import uri as urimod
from treehop.errors import TreehopError
from treehop.ingest import writer as writermod
from treehop.ingest.tree_builder import segment


def _tree(root: Path) -> Path:
    files = {
        "README.md": "# Handbook\n\nHow the platform team runs services and data pipelines.\n",
        "ops/deploy.md": "# Deploy\n\nRolling updates with kubernetes and helm charts.\n",
        "ops/alerts.md": "# Alerts\n\nPager rotation, alert routing and escalation policy.\n",
        "data/etl.md": "# ETL\n\nNightly batch jobs load the warehouse from kafka topics.\n",
        "data/deep/schema.md": "# Schema\n\nColumns, partitions and the retention of raw events.\n",
        "data/deep/long.md": "# Long\n\n"
        + "\n\n".join(
            f"## Part {i}\n\n" + f"Section {i} explains lineage and backfills. " * 30
            for i in range(4)
        ),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _snapshot(th: Treehop) -> dict[str, tuple[str, str, str]]:
    return {
        n.uri: (n.content_hash, n.abstract, n.overview)
        for n in th.store.iter_nodes("viking://resources")
    }


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return _tree(tmp_path / "handbook")


def _age(root: Path, seconds: float = 60.0) -> None:
    """Move every mtime into the past, out of the racy window of a fresh manifest."""
    for p in root.rglob("*"):
        st = p.stat()
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def test_unchanged_readd_reads_nothing(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        first = th.add_resource(tree, target_uri="viking://resources")
        assert first.read == 6
        before = _snapshot(th)
        again = th.add_resource(tree, target_uri="viking://resources")
        assert (again.read, again.embedded, again.deleted) == (0, 0, 0)
        assert (again.files, again.chunks, again.directories) == (
            first.files,
            first.chunks,
            first.directories,
        )
        assert again.unchanged == len(before) - 1  # all but the implicit root
        assert _snapshot(th) == before


def test_edit_add_delete_match_a_fresh_ingest(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        (tree / "ops" / "alerts.md").write_text("# Alerts\n\nOn-call swaps are approved weekly.\n")
        (tree / "data" / "deep" / "schema.md").unlink()
        (tree / "new" / "sub").mkdir(parents=True)
        (tree / "new" / "sub" / "faq.md").write_text("# FAQ\n\nWho owns the billing service?\n")
        res = th.add_resource(tree, target_uri="viking://resources")
        # The edited file, the new one, and the README of the top folder (re-described from
        # its README's text); nothing else is opened.
        assert res.read == 3
        assert res.deleted == 1
        got = _snapshot(th)
        hit = th.find("who approves on-call swaps", limit=1).resources[0]
        assert hit.uri == "viking://resources/handbook/ops/alerts.md"
    with Treehop(embedder=bow) as fresh:
        fresh.add_resource(tree, target_uri="viking://resources")
        assert got == _snapshot(fresh)


def test_touched_file_is_hashed_not_rebuilt(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        (tree / "ops" / "deploy.md").touch()
        res = th.add_resource(tree, target_uri="viking://resources")
        assert (res.read, res.embedded) == (0, 0)


def test_same_size_same_mtime_change_inside_the_racy_window_is_seen(bow: Any, tree: Path) -> None:
    """Without aging, every mtime is within the racy window of the manifest: an edit that keeps
    the size and the mtime (a fast editor, a coarse clock) is still found by hashing."""
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        f = tree / "ops" / "deploy.md"
        st = f.stat()
        text = f.read_text()
        f.write_text(text.replace("helm", "kust"))
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.embedded >= 1
        assert "kust" in th.read("viking://resources/handbook/ops/deploy.md")


def test_new_settings_rebuild_everything(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        res = th.add_resource(tree, target_uri="viking://resources", tags="handbook")
        assert res.read == 6
        node = th.stat("viking://resources/handbook/data/etl.md")
        assert "user:handbook" in node.tags
        res = th.add_resource(tree, target_uri="viking://resources", metadata={"team": "p"})
        assert res.read == 6
        assert th.stat("viking://resources/handbook/ops/alerts.md").metadata["team"] == "p"


def test_removed_subtree_comes_back_on_readd(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        before = _snapshot(th)
        th.remove("viking://resources/handbook/data")
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.read == 4  # the removed folder's three files and the top README
        assert _snapshot(th) == before


def test_damaged_manifest_means_a_full_rebuild(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        before = _snapshot(th)
        key = writermod._manifest_key("viking://resources/handbook")
        th.store.put_state(key, b"\xff not a manifest \n\t")
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.read == 6 and res.embedded == 0
        assert _snapshot(th) == before


def test_manifest_round_trip() -> None:
    m = writermod._Manifest("fp", 123, {"a/b.md": (10, 20, "h1"), "c d.md": (0, 1, "h2")})
    assert writermod._Manifest.decode(m.encode()) == m
    assert writermod._Manifest.decode(b"") == writermod._Manifest()
    assert writermod._Manifest.decode(b'{"version": 99}') == writermod._Manifest()


_NAME = st.text(alphabet=st.sampled_from([*"ab.#%?\\ -_", "é"]), min_size=0, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(_NAME, min_size=1, max_size=4))
def test_uri_map_file_is_segment_and_join(parts: list[str]) -> None:
    """The re-add's per-file URI shortcut gives what segment() + uri.join() give, and the
    same error for a name that cannot be a segment."""
    rel = "/".join(parts)
    head, _, name = rel.rpartition("/")
    m = writermod._UriMap("viking://resources/t")
    try:
        want: str | type[Exception] = urimod.join(m.dir(head), segment(name))
    except TreehopError as exc:
        want = type(exc)
    try:
        got: str | type[Exception] = writermod._UriMap("viking://resources/t").file(rel)
    except TreehopError as exc:
        got = type(exc)
    assert got == want
