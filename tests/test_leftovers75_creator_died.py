"""A client that read an index whose folder then left its path, while another process began
creating an index there and was killed before its first save committed (helper leftovers75;
leftovers74's open item: "a creator that dies before committing leaves its folder and a free
``LOCK``, and what the reader says then was not tested").

Before: the reader raised :class:`~treehop.errors.IndexBeingCreatedError` ("read again once
that save has committed") at every read for as long as it lived -- a save that would never
come: the probe of the lock ran only when the reader followed the moved folder, and nothing
at the path changed after the kill. Now every read that would raise it probes the lock
again: a lock nobody holds (``flock`` is let go by the kernel when its holder dies, so a free
lock is provably stale) with nothing committed says the creator stopped, and what to do. A
write through the client, or a new client, makes the index there. Real processes: the
creator is a child Python holding ``EmbeddedStore.begin_write()`` with rows upserted but not
saved, killed with SIGKILL.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from index_creator_process import old_index_reader, start_creator
from treehop import Treehop, errors

from treehop_test_doubles import BagOfWordsEmbedder

CREATOR = r"""
import sys
import numpy as np
from treehop.models import ContextType, Level, Node
from treehop.stores.embedded import EmbeddedStore
store = EmbeddedStore(sys.argv[1])
assert store.begin_write()
root = Node(uri="viking://resources", parent_uri=None, is_leaf=False, abstract="resources",
            context_type=ContextType.RESOURCE, level=Level.OVERVIEW)
node = Node(uri="viking://resources/never", parent_uri="viking://resources", is_leaf=True,
            abstract="never committed", content="the creator dies before its save",
            context_type=ContextType.RESOURCE, level=Level.CONTENT)
store.upsert([root, node], np.ones((2, int(sys.argv[2])), dtype=np.float32))
print("writing", flush=True)
sys.stdin.readline()
"""


def _killed_creator(idx: Path, dim: int) -> subprocess.Popen[str]:
    return start_creator(CREATOR, idx, dim)


def _moved_then_creator(tmp_path: Path) -> tuple[Treehop, Path, subprocess.Popen[str]]:
    idx = tmp_path / "idx"
    c = old_index_reader(idx)
    idx.rename(tmp_path / "moved")
    dim = len(BagOfWordsEmbedder().embed(["x"])[0])
    proc = _killed_creator(idx, dim)
    with pytest.raises(errors.IndexBeingCreatedError):  # (alive: as leftovers74 made it)
        c.ls("viking://resources")
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    assert (idx / "LOCK").exists() and not (idx / "CURRENT").exists()
    return c, idx, proc


def test_a_creator_killed_before_its_commit_is_said_with_what_to_do(tmp_path: Path) -> None:
    c, _idx, _ = _moved_then_creator(tmp_path)
    try:
        for read in (
            lambda: c.ls("viking://resources"),
            lambda: c.find("note"),
            lambda: c.ls("viking://resources"),  # (and again: the same answer)
        ):
            with pytest.raises(errors.StoreError) as info:
                read()
            assert not isinstance(info.value, errors.IndexBeingCreatedError), info.value
            text = str(info.value)
            assert "stopped before its first save committed" in text, text
            assert "open the index where it is now" in text.lower(), text
            assert "makes a new, empty index here" in text, text
    finally:
        c.close()


def test_after_the_kill_a_write_makes_the_index_there(tmp_path: Path) -> None:
    """Control (passes on the base too): the dead creator's lock is free, so this client's
    write takes it and commits a new index at the path; its reads answer from it (the killed
    rows are not in it), and a new client opened there reads the same."""
    c, idx, _ = _moved_then_creator(tmp_path)
    try:
        c.add_resource("written after the kill", is_text=True, target_uri="viking://resources/a")
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/a"]
    finally:
        c.close()
    fresh = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
    try:
        assert [e.uri for e in fresh.ls("viking://resources")] == ["viking://resources/a"]
    finally:
        fresh.close()


def test_control_a_live_creator_is_still_being_created(tmp_path: Path) -> None:
    """Control (passes on the base too): while the creator lives, every read says the index
    is being created, however often it is asked."""
    idx = tmp_path / "idx"
    c = old_index_reader(idx)
    idx.rename(tmp_path / "moved")
    proc = _killed_creator(idx, len(BagOfWordsEmbedder().embed(["x"])[0]))
    try:
        for _ in range(3):
            with pytest.raises(errors.IndexBeingCreatedError):
                c.ls("viking://resources")
    finally:
        proc.kill()
        proc.wait(60)
        c.close()
