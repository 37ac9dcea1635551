"""A call whose tag list differs, stopped after it wrote nodes, leaves no stale list behind.

Helper leftovers75 records each add's user tag list (``ingest/call-tags-*``) and tells
``set_tags``' edits apart from the next add's list with it; with the same list the stored
tags are kept as they are. The list was recorded only after the call's last write, so a call
stopped between its writes and that record (a kill, Ctrl-C, a failed state write) left the
previous call's list: adding the folder (or file) again with that list kept every node the
stopped call had written with the stopped call's tags, where the call's own were asked for.
A call with another list now marks the record as under way before its first write, and a
re-add after a stop falls back to the manifest's rule (the call's tags) (helper review75).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from treehop import Treehop
from treehop.ingest.writer import TreeWriter

from treehop_test_doubles import BagOfWordsEmbedder

DOC = "viking://resources/doc"


class Stop(Exception):
    """The run stopped after its last node write, before its tag list was recorded."""


def _folder(tmp_path: Path) -> Path:
    d = tmp_path / "doc"
    (d / "sub").mkdir(parents=True)
    for i, rel in enumerate(["a.md", "b.md", "sub/c.md"]):
        (d / rel).write_text(f"# File {i}\n\nThe text of file {i} about topic {i}.\n")
    return d


def _user_tags(th: Treehop, base: str) -> dict[str, list[str]]:
    return {
        n.uri: sorted(t for t in n.tags if t.startswith("user:"))
        for n in th.store.iter_nodes(base)
        if "#" not in n.uri
    }


def _stopped_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path, target: str, tags: list[str]
) -> None:
    def stop(*args: object) -> None:
        raise Stop

    with monkeypatch.context() as m:
        m.setattr(TreeWriter, "_put_call_tags", stop)
        th = Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder())
        with th, pytest.raises(Stop):
            th.add_resource(str(source), target_uri=target, tags=tags)


@pytest.mark.parametrize("alone", [False, True], ids=["folder", "file"])
def test_a_re_add_after_a_stopped_retag_gets_the_calls_tags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, alone: bool
) -> None:
    folder = _folder(tmp_path)
    source, target = (folder / "a.md", f"{DOC}/a.md") if alone else (folder, DOC)
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(source), target_uri=target, tags=["a"])
        first = _user_tags(th, target)
    assert first and all(t == ["user:a"] for t in first.values())
    _stopped_add(tmp_path, monkeypatch, source, target, ["b"])
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        stopped = _user_tags(th, target)
        th.add_resource(str(source), target_uri=target, tags=["a"])
        after = _user_tags(th, target)
    assert all(t == ["user:b"] for t in stopped.values())  # (the premise: the stop wrote them)
    assert after == first


def test_control_a_finished_retag_still_keeps_set_tags_edits(tmp_path: Path) -> None:
    """leftovers75's rule, unchanged where no call stopped: a ``set_tags`` edit survives a
    re-add with another list, and the list's tags follow the call."""
    folder = _folder(tmp_path)
    with Treehop(str(tmp_path / "idx"), embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(folder), target_uri=DOC, tags=["a"])
        th.set_tags(f"{DOC}/b.md", add=["pinned"])
        th.add_resource(str(folder), target_uri=DOC, tags=["b"])
        th.add_resource(str(folder), target_uri=DOC, tags=["a"])
        after = _user_tags(th, DOC)
    assert after[f"{DOC}/b.md"] == ["user:a", "user:pinned"]
    assert after[f"{DOC}/a.md"] == ["user:a"]
