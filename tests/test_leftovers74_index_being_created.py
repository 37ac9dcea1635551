"""A client that read an index whose folder then left its path, while another process
creates a new index there (its folder made and its writer lock held, its first save not yet
committed), says so with a typed error, and reads the new index once it commits (helper
leftovers74; leftovers73c's open item).

Before: the reader raised the "renamed, moved or removed since this client read it: the
folder at that path now holds no index" ``StoreError`` for as long as the other process's
first save ran -- the index it was making read as a stray empty folder. Now the error is
:class:`~treehop.errors.IndexBeingCreatedError` (a ``StoreError``), saying an index is being
created there; after the commit the next read answers from it. Two real processes: the
creator is a child Python holding ``EmbeddedStore.begin_write()`` until told to save.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from index_creator_process import old_index_reader, start_creator
from treehop import errors

from treehop_test_doubles import BagOfWordsEmbedder

CREATOR = r"""
import sys
import numpy as np
from treehop.models import ContextType, Level, Node
from treehop.stores.embedded import EmbeddedStore
store = EmbeddedStore(sys.argv[1])
assert store.begin_write()
print("writing", flush=True)
sys.stdin.readline()
root = Node(uri="viking://resources", parent_uri=None, is_leaf=False, abstract="resources",
            context_type=ContextType.RESOURCE, level=Level.OVERVIEW)
node = Node(uri="viking://resources/new", parent_uri="viking://resources", is_leaf=True,
            abstract="the new index", content="made by another process",
            context_type=ContextType.RESOURCE, level=Level.CONTENT)
store.upsert([root, node], np.ones((2, int(sys.argv[2])), dtype=np.float32))
store.save()
store.close()
print("saved", flush=True)
"""


def _creator(idx: Path, dim: int) -> subprocess.Popen[str]:
    return start_creator(CREATOR, idx, dim)


def test_a_read_while_another_process_creates_the_index_says_so(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    c = old_index_reader(idx)
    dim = len(BagOfWordsEmbedder().embed(["x"])[0])
    try:
        idx.rename(tmp_path / "moved")
        proc = _creator(idx, dim)
        try:
            assert (idx / "LOCK").exists()  # (the creator's folder and lock, nothing committed)
            for read in (lambda: c.ls("viking://resources"), lambda: c.find("note")):
                with pytest.raises(errors.StoreError) as info:
                    read()
                assert type(info.value).__name__ == "IndexBeingCreatedError", info.value
                assert "being created" in str(info.value)
                assert not isinstance(info.value, OSError)
        finally:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "saved"
            proc.wait(60)
        deadline = time.monotonic() + 10
        while True:  # (the commit is read at the next refresh)
            try:
                got = [e.uri for e in c.ls("viking://resources")]
                break
            except errors.StoreError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        assert got == ["viking://resources/new"]
    finally:
        c.close()


def test_control_a_stray_empty_folder_is_still_the_moved_error(tmp_path: Path) -> None:
    """Control (passes on the base too): an empty folder nobody writes to is not an index
    being created; the reader keeps leftovers73c's "holds no index" ``StoreError``."""
    idx = tmp_path / "idx"
    c = old_index_reader(idx)
    try:
        idx.rename(tmp_path / "moved")
        idx.mkdir()
        with pytest.raises(errors.StoreError, match="holds no index") as info:
            c.ls("viking://resources")
        assert type(info.value).__name__ == "StoreError"
    finally:
        c.close()
