"""A client opened at a path where another process is creating an index, and what a creator
killed in the middle of its first save leaves there (helper leftovers76; leftovers75's open
items).

1. A *fresh* client (opened while the creator was alive, before its first save committed)
   answered every read from an empty index -- ``ls`` ``[]``, ``find`` no hits -- with no
   word of the index being made, where a client that had read an index there before gets
   :class:`~treehop.errors.IndexBeingCreatedError` (leftovers74). Now it gets the same typed
   error while the creator holds the lock with nothing committed, and reads the index once
   the creator's save commits. A creator that died leaves the lock free: an empty index is
   read, with no error (nothing is committed), and the next write makes the index.
2. A creator killed in the middle of its first save (its data, lookup and BM25 files
   written, its manifest and ``CURRENT`` not) left those files behind, and the next writer's
   first save failed on them: ``StoreError`` "saving the index ... failed (Directory not
   empty)". Readers never trip on them (no manifest names them); the next writer removes
   them under the lock before it writes (as an open that takes the lock already did).

Real processes: the creator is a child Python holding ``EmbeddedStore.begin_write()``.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from index_creator_process import old_index_reader, start_creator
from treehop import Treehop, errors

from treehop_test_doubles import BagOfWordsEmbedder

# argv: the index path, the vector width. Holds the lock with rows upserted; a line on stdin:
# "save" commits, "hang" begins the save and stops before its manifest (then "writing" again).
CREATOR = r"""
import sys
import numpy as np
import treehop.stores.embedded.writes as writes
from treehop.models import ContextType, Level, Node
from treehop.stores.embedded import EmbeddedStore
store = EmbeddedStore(sys.argv[1])
assert store.begin_write()
root = Node(uri="viking://resources", parent_uri=None, is_leaf=False, abstract="resources",
            context_type=ContextType.RESOURCE, level=Level.OVERVIEW)
node = Node(uri="viking://resources/new", parent_uri="viking://resources", is_leaf=True,
            abstract="the creator's note", content="made by another process",
            context_type=ContextType.RESOURCE, level=Level.CONTENT)
store.upsert([root, node], np.ones((2, int(sys.argv[2])), dtype=np.float32))
print("writing", flush=True)
if sys.stdin.readline().strip() == "hang":
    def hang(*args, **kwargs):
        print("writing", flush=True)
        sys.stdin.readline()
    writes._write_manifest = hang
store.save()
store.close()
print("saved", flush=True)
"""

DIM = len(BagOfWordsEmbedder().embed(["x"])[0])
LEFT = {"data-000001", "index-000001.bin", "lexical-000001"}


def _fresh(idx: Path) -> Treehop:
    return Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)


def _tell(proc: subprocess.Popen[str], line: str) -> str:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(line + "\n")
    proc.stdin.flush()
    return proc.stdout.readline().strip()


def _killed_mid_save(idx: Path) -> subprocess.Popen[str]:
    proc = start_creator(CREATOR, idx, DIM)
    assert _tell(proc, "hang") == "writing"
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(60) == -signal.SIGKILL
    names = {p.name for p in idx.iterdir()}
    assert names >= LEFT and "CURRENT" not in names, names  # (the premise)
    return proc


def test_a_fresh_client_reads_while_another_process_creates_the_index(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    proc = start_creator(CREATOR, idx, DIM)
    c = _fresh(idx)
    try:
        for read in (lambda: c.ls("viking://resources"), lambda: c.find("note")):
            with pytest.raises(errors.IndexBeingCreatedError) as info:
                read()
            assert "first save has not committed" in str(info.value)
        assert _tell(proc, "save") == "saved"
        assert proc.wait(60) == 0
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/new"]
    finally:
        proc.kill()
        proc.wait(60)
        c.close()


def test_a_fresh_client_after_a_creator_killed_mid_save_reads_and_writes(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    proc = start_creator(CREATOR, idx, DIM)
    try:
        early = _fresh(idx)  # (opened while the creator lived)
    finally:
        proc.kill()
        proc.wait(60)
    _killed_mid_save(idx)
    late = _fresh(idx)  # (opened after the kill)
    try:
        for c in (early, late):
            assert c.ls("viking://resources") == []  # (nothing committed: no error)
        early.add_resource(
            "written after the kill", is_text=True, target_uri="viking://resources/a"
        )
        assert [e.uri for e in early.ls("viking://resources")] == ["viking://resources/a"]
        assert [e.uri for e in late.ls("viking://resources")] == ["viking://resources/a"]
    finally:
        early.close()
        late.close()
    again = _fresh(idx)
    try:
        assert [e.uri for e in again.ls("viking://resources")] == ["viking://resources/a"]
        assert again.store.get(["viking://resources/new"]) == [None]  # (the killed rows: gone)
    finally:
        again.close()


def test_a_moved_index_reader_writes_after_a_creator_killed_mid_save(tmp_path: Path) -> None:
    """leftovers75's case, the creator killed in its save rather than before it: the reader
    says the folder holds no index, and its write makes the index there (it failed on the
    dead save's files)."""
    idx = tmp_path / "idx"
    c = old_index_reader(idx)
    try:
        idx.rename(tmp_path / "moved")
        _killed_mid_save(idx)
        with pytest.raises(errors.StoreError) as info:
            c.ls("viking://resources")
        assert "a write through this client makes a new, empty index here" in str(info.value)
        c.add_resource("written after the kill", is_text=True, target_uri="viking://resources/a")
        assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/a"]
    finally:
        c.close()


def test_control_a_fresh_client_of_an_empty_path_reads_an_empty_index(tmp_path: Path) -> None:
    """Control (passes on the base too): nobody creating, nothing committed, no error."""
    c = _fresh(tmp_path / "idx")
    try:
        assert c.ls("viking://resources") == []
        assert c.find("anything").resources == []
    finally:
        c.close()
