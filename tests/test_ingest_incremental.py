"""Incremental re-add (``treehop.ingest.writer``): unchanged files are skipped before they are
read, only new or changed files are parsed, tagged and embedded, and the tree that results is
the one a fresh ingest of the same folder builds."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
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


def _manifest(files: dict[str, tuple[int, int, str]]) -> Any:
    return writermod._Manifest(
        "fp",
        123,
        list(files),
        np.asarray([v[0] for v in files.values()], np.int64),
        np.asarray([v[1] for v in files.values()], np.int64),
        np.frombuffer(b"".join(bytes.fromhex(v[2]) for v in files.values()), np.uint8).reshape(
            len(files), 20
        ),
    )


def test_manifest_round_trip() -> None:
    files = {"a/b.md": (10, 20, "ab" * 20), "c d.md": (0, 1, "0f" * 20), "é/x.md": (5, 6, "9" * 40)}
    m = _manifest(files)
    back = writermod._Manifest.decode(m.encode())
    assert back.same_as(m) and back.files() == files
    empty = writermod._Manifest()
    assert writermod._Manifest.decode(empty.encode()).same_as(empty)
    assert writermod._Manifest.decode(b"").same_as(empty)
    assert writermod._Manifest.decode(b'{"version": 99}').same_as(empty)


def test_damaged_or_truncated_manifest_decodes_empty() -> None:
    raw = _manifest({"a.md": (1, 2, "ab" * 20), "b.md": (3, 4, "cd" * 20)}).encode()
    flipped = bytearray(raw)
    flipped[-5] ^= 0x40  # inside a digest: the body's CRC-32 no longer matches
    for bad in (raw[:-1], bytes(flipped), raw + b"x", raw[: raw.index(b"\n")]):
        assert len(writermod._Manifest.decode(bad)) == 0


def test_format_1_manifest_still_decodes() -> None:
    """An index written before the columnar manifest keeps its incremental re-add."""
    files = {"a/b.md": (10, 20, "ab" * 20), "c d.md": (0, 1, "0f" * 20)}
    head = json.dumps({"version": 1, "fingerprint": "fp", "at": 123})
    lines = [f"{r}\t{s}\t{m}\t{h}" for r, (s, m, h) in files.items()]
    m = writermod._Manifest.decode("\n".join([head, *lines]).encode())
    assert m.same_as(_manifest(files))


def test_format_1_manifest_index_readds_incrementally(bow: Any, tree: Path) -> None:
    """An index whose manifest is in format 1: the re-add reads only the changed file (and
    the README its folder's summary needs), and writes a format-2 manifest."""
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        key = writermod._manifest_key("viking://resources/handbook")
        m = writermod._Manifest.decode(th.store.get_state(key))
        head = json.dumps({"version": 1, "fingerprint": m.fingerprint, "at": m.written_ns})
        lines = [f"{r}\t{s}\t{t}\t{h}" for r, (s, t, h) in m.files().items()]
        th.store.put_state(key, "\n".join([head, *lines]).encode())
        (tree / "ops" / "alerts.md").write_text("# Alerts\n\nOn-call swaps are weekly.\n")
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.read == 2  # the edited file and the top README (a rebuild reads 6)
        assert "weekly" in th.read("viking://resources/handbook/ops/alerts.md")
        raw = th.store.get_state(key)
        assert raw is not None and json.loads(raw[: raw.index(b"\n")])["version"] == 2


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


def _full(th: Treehop) -> dict[str, Any]:
    """Everything a re-add must reproduce: each node's fields but its tags (the keyword
    statistics count every text ever added, so tags may legitimately move), and its vector."""
    out: dict[str, Any] = {}
    for n in th.store.iter_nodes("viking://resources"):
        vec = th.store.get_vectors([n.uri])[0]
        out[n.uri] = (n.model_dump(exclude={"tags"}), np.round(vec, 6).tolist())
    return out


def test_touch_change_delete_add_readd_equals_fresh_ingest(bow: Any, tree: Path) -> None:
    _age(tree)
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        (tree / "ops" / "deploy.md").touch()
        (tree / "data" / "etl.md").write_text("# ETL\n\nHourly jobs now stream from kafka.\n")
        (tree / "ops" / "alerts.md").unlink()
        (tree / "data" / "deep" / "long.md").unlink()  # a chunked file: its chunks go too
        (tree / "data" / "new.md").write_text("# New\n\nA runbook for the billing service.\n")
        res = th.add_resource(tree, target_uri="viking://resources")
        assert res.deleted >= 2
        got = _full(th)
    with Treehop(embedder=bow) as fresh:
        fresh.add_resource(tree, target_uri="viking://resources")
        assert got == _full(fresh)


def _walk_reference(root: Path) -> tuple[list[tuple[str, int, int]], list[list[str]]]:
    """What ``scan`` returned when it was built on ``os.walk`` (the behaviour kept)."""
    import stat as statmod

    from treehop.ingest import loaders

    out: list[tuple[str, int, int]] = []
    skipped: list[list[str]] = [[], [], [], []]  # dirs, hidden, names, other
    for dirpath, dirnames, filenames in os.walk(str(root), followlinks=False):
        rel_dir = os.path.relpath(dirpath, str(root)).replace(os.sep, "/")
        prefix = "" if rel_dir == "." else rel_dir + "/"
        kept = []
        for d in sorted(dirnames):
            if d in loaders.SKIP_DIRS or d.startswith(".") or not loaders._addressable(d):
                skipped[0].append(loaders._printable(prefix + d))
            else:
                kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = prefix + name
            if not loaders._addressable(name):
                skipped[2].append(loaders._printable(rel))
            elif name.startswith("."):
                skipped[1].append(rel)
            else:
                st = os.lstat(os.path.join(dirpath, name))
                if statmod.S_ISREG(st.st_mode):
                    out.append((rel, st.st_size, st.st_mtime_ns))
                else:
                    skipped[3].append(rel)
    return out, skipped


def test_columnar_scan_matches_the_os_walk_order_and_skips(tmp_path: Path) -> None:
    from treehop.ingest import loaders

    root = tmp_path / "t"
    for rel in [
        "b.md",
        "a.md",
        "z/x.md",
        "z/a/y.md",
        "a b/c.md",
        ".hidden.md",
        "node_modules/m.js",
        ".git/config",
        "k/.env",
        "k/deep/deeper/f.txt",
        "B.md",
        "k/l.md",
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    os.symlink(root / "z", root / "link-dir")
    os.symlink(root / "a.md", root / "k" / "link.md")
    os.symlink(root / "missing", root / "k" / "broken")
    (root / "empty-dir").mkdir()
    found, report = loaders.scan_columns(root)
    want, skipped = _walk_reference(root)
    got = list(zip(found.rels, found.sizes.tolist(), found.mtimes.tolist(), strict=True))
    assert got == want
    assert [
        report.skipped_dirs,
        report.skipped_hidden,
        report.skipped_names,
        report.skipped_other,
    ] == skipped
    assert [found.dirs[d] for d in found.dir_of.tolist()] == [
        r.rpartition("/")[0] for r in found.rels
    ]
    assert all(Path(found.path(i)).read_text() == r for i, r in enumerate(found.rels))


def test_children_fields_are_the_children_s_fields(bow: Any, tree: Path) -> None:
    """The light read a re-add uses gives what ``children`` gives, in the same order."""
    with Treehop(embedder=bow) as th:
        th.add_resource(tree, target_uri="viking://resources")
        fields = ("uri", "abstract", "tags", "is_leaf")
        for uri in ("viking://resources/handbook", "viking://resources/handbook/data/deep/long.md"):
            kids = th.store.children(uri)
            assert kids
            assert th.store.children_fields(uri, fields) == [
                {f: getattr(k, f) for f in fields} for k in kids
            ]


def test_gc_paused_restores_the_collector_state() -> None:
    """The re-add's steps run with the cyclic collector paused; it is resumed after, also on
    an error, and a collector the caller turned off stays off."""
    import gc

    seen: list[bool] = []

    def step(x: int) -> int:
        seen.append(gc.isenabled())
        return x + 1

    assert gc.isenabled()
    assert writermod._gc_paused(step, 1) == 2
    assert seen == [False] and gc.isenabled()

    def boom() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        writermod._gc_paused(boom)
    assert gc.isenabled()
    gc.disable()
    try:
        writermod._gc_paused(lambda: None)
        assert not gc.isenabled()
    finally:
        gc.enable()
