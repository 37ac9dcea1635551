"""Removing an added folder or file removes its ingest records with it (helper leftovers76;
review75's and leftovers75's open item).

Before: ``Treehop.remove`` (``treehop rm``) of a target deleted its nodes and left its state
blobs -- the folder's manifest (``ingest/manifest-*``) and the call-tags record
(``ingest/call-tags-*``, leftovers75) -- in the index folder for good, one pair for every
folder ever added and removed (a file added by itself inside a removed folder too, or one a
re-add of the folder around it deleted as no file of the folder). Now the
removal lists them before its first write and drops them right after its commit, under the
same write lock; a removal stopped between its commit and that drop leaves records that are
never read (a call-tags record counts only while its target is stored) and the next add of
the target writes its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_review75_call_tags_stopped import _folder  # (the same three-file folder)
from treehop import Treehop
from treehop.ingest.writer import TreeWriter, _call_tags_key, _manifest_key

from treehop_test_doubles import BagOfWordsEmbedder

DOC = "viking://resources/doc"
SOLO = f"{DOC}/sub/solo.md"


class Stop(Exception):
    """The removal stopped right after its commit."""


def _records(idx: Path) -> list[str]:
    d = idx / "state" / "ingest"
    return sorted(p.name for p in d.iterdir()) if d.is_dir() else []


def _keys(*targets: str) -> list[str]:
    return sorted(
        k.partition("/")[2] for t in targets for k in (_manifest_key(t), _call_tags_key(t))
    )


def _indexed(tmp_path: Path) -> tuple[Treehop, Path]:
    folder = _folder(tmp_path)
    idx = tmp_path / "idx"
    th = Treehop(str(idx), embedder=BagOfWordsEmbedder())
    th.add_resource(str(folder), target_uri=DOC, tags=["a"])
    th.add_resource(str(folder), target_uri=DOC, tags=["b"])  # (a call-tags record for DOC)
    th.add_resource(str(folder / "a.md"), target_uri=SOLO, tags=["x"])
    # the folder's manifest and call tags, the file's call tags (a file has no manifest)
    assert _records(idx) == sorted([*_keys(DOC), _call_tags_key(SOLO).partition("/")[2]])
    return th, idx


def test_removing_a_folder_removes_its_records_and_those_of_targets_inside(
    tmp_path: Path,
) -> None:
    th, idx = _indexed(tmp_path)
    with th:
        assert th.remove(DOC) > 0
        assert _records(idx) == []
        # and an add of the folder again starts from nothing: its files read, the call's tags
        res = th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["c"])
        assert res.files == 3
        tags = {n.uri: sorted(n.tags) for n in th.store.iter_nodes(DOC) if "#" not in n.uri}
        assert all("user:c" in t and "user:b" not in t for t in tags.values()), tags


def test_removing_a_file_added_alone_removes_its_record(tmp_path: Path) -> None:
    th, idx = _indexed(tmp_path)
    with th:
        th.remove(SOLO)
        assert _records(idx) == _keys(DOC)


def test_control_removing_a_file_inside_a_folder_keeps_the_folders_records(
    tmp_path: Path,
) -> None:
    """Control (passes on the base too): the folder is still stored, its records stay."""
    th, idx = _indexed(tmp_path)
    with th:
        th.remove(f"{DOC}/b.md")
        assert set(_keys(DOC)) <= set(_records(idx))


def test_a_removal_stopped_after_its_commit_leaves_records_that_are_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records drop right after the removal's commit; stopped in between, they stay,
    unread: the target's record is not its list any more (an add of the target gets the
    call's tags, as a new target does), and that add records its own list."""
    th, idx = _indexed(tmp_path)

    def stop(self: TreeWriter, keys: list[str]) -> None:
        raise Stop

    with th:
        with monkeypatch.context() as m:
            m.setattr(TreeWriter, "_drop_target_records", stop)
            with pytest.raises(Stop):
                th.remove(DOC)
        assert th.ls("viking://resources") == []  # (the removal committed)
        assert _call_tags_key(DOC).partition("/")[2] in _records(idx)
        writer = th._async.writer
        assert writer._call_tags(DOC, ["user:b"]) is None
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["b"])
        rec = writer._call_tags(DOC, ["user:b"])
        assert rec is not None and rec.user_tags == ["user:b"]
        th.remove(DOC)
        assert _call_tags_key(DOC).partition("/")[2] not in _records(idx)


def test_a_folder_re_add_that_deletes_a_target_inside_removes_its_record(tmp_path: Path) -> None:
    """A file added by itself inside an added folder is no file of the folder: the folder's
    next add deletes it (as before) and now its record with it."""
    th, idx = _indexed(tmp_path)
    with th:
        th.add_resource(str(tmp_path / "doc"), target_uri=DOC, tags=["c"])
        assert th.store.get([SOLO])[0] is None
        assert _records(idx) == _keys(DOC)
