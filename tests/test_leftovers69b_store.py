"""A rollback's next save no longer cuts the data files another client maps (helper
leftovers69b, bench/README.md "(helper leftovers69b)").

Two clients on one index folder: the first opened generation 2 (its vectors, over 4 MiB,
mapped); the newest manifest is then lost, so the second client's open rolls back to
generation 1 (loudly: ``RecoveryWarning``) and its first save appended after generation 1's
committed sizes, *truncating* the data files in place. The first client's process died of
SIGBUS at its next read of the lost rows through its map (its graph worker's chunk read,
which no per-call size check covers), and a call of its own was an ``IndexCorruptError``
("cut short by another program") for a file treehop itself had cut. Now the committed bytes
are copied to a new file renamed over the old one (``column_files._drop_tail``): the first
client keeps reading the file it mapped.

Each test fails on d32e6e34 unless it says it is a control. The crash runs in a child
process: a signal there is a return code, not a dead test run.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import treehop
from treehop.errors import RecoveryWarning
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded.manifest import _discard_uncommitted

from treehop_test_doubles import child_process, clustered_tree

DIM = 384

_TWO_CLIENTS = r"""
import sys, time, warnings
from pathlib import Path
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop_test_doubles import clustered_tree

idx = Path(sys.argv[1])
nodes, v = clustered_tree(40, 200, 384)  # 8,040 rows: 12 MB of vectors, mapped
s = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
s.upsert(nodes[:41], v[:41])
s.save()  # generation 1: one directory
s.upsert(nodes[41:], v[41:])
s.save()  # generation 2: every row
s.close()
reader = EmbeddedStore(idx, ann_min_rows=0, lexical=False)
reader.wait_ann(timeout=0)  # (starts its worker: the graph is built from the mapped vectors)
give_up = time.monotonic() + 120
while reader._ann is None or reader._ann.upto == 0:  # (inside the build, however fast)
    if time.monotonic() > give_up:
        print("no build seen", flush=True)
        sys.exit(3)
    time.sleep(0.001)
(idx / "MANIFEST-000002.json").unlink()  # the newest manifest lost
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    writer = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
print("writer at generation", writer.generation, flush=True)
writer.upsert(nodes[1:2], v[2:3])
writer.save()
print("building at the cut", reader._ann.upto < len(nodes), flush=True)
reader.wait_ann(timeout=300)
print(len(reader.search(v[5000], Scope(), 3)), "hits", flush=True)
"""


def test_a_rollback_save_does_not_kill_the_client_that_maps_the_lost_rows(
    tmp_path: Path,
) -> None:
    """d32e6e34: rc -7 (SIGBUS) in the reader's graph worker, 2 of 2 runs here."""
    got = child_process(_TWO_CLIENTS, str(tmp_path / "idx"))
    assert got.returncode == 0, (got.returncode, got.stdout, got.stderr[-2000:])
    assert got.stdout.split("\n")[:4] == [
        "writer at generation 1",
        "building at the cut True",
        "3 hits",
        "",
    ], got.stdout


def _two_generations(path: Path) -> tuple[list[treehop.Node], np.ndarray]:
    nodes, v = clustered_tree(20, 150, DIM)  # 3,020 rows: 4.6 MB of vectors, mapped
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    s.upsert(nodes[:21], v[:21])
    s.save()
    s.upsert(nodes[21:], v[21:])
    s.save()
    s.close()
    return nodes, v


def _rolled_back_writer(path: Path) -> EmbeddedStore:
    (path / "MANIFEST-000002.json").unlink()
    with pytest.warns(RecoveryWarning, match="generation 2"):
        writer = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert writer.generation == 1
    return writer


def test_the_client_on_the_lost_generation_keeps_reading_its_rows(tmp_path: Path) -> None:
    """In one process, deterministic: the reader's own call after the rollback save.
    d32e6e34: ``IndexCorruptError: ... cut short by another program`` (treehop cut it); now
    the reader answers from the file it mapped, the writer's index reopens as generation 1
    plus its write, and the cut file was replaced, not shortened under the map."""
    path = tmp_path / "idx"
    nodes, v = _two_generations(path)
    reader = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    lost = nodes[2000].uri
    vectors = sorted(path.glob("data-*"))[-1] / "vectors.bin"
    before = os.stat(vectors)
    writer = _rolled_back_writer(path)
    writer.upsert(nodes[1:2], v[2:3])
    writer.save()
    np.testing.assert_array_equal(reader.get_vectors([lost])[0], v[2000])
    assert reader.search(v[2000], Scope(), 1)[0].node.uri == lost
    after = os.stat(vectors)
    # (21 rows, and the update's new row: rows are appended, never rewritten)
    assert after.st_ino != before.st_ino and after.st_size == 22 * DIM * 4
    writer.close()
    again = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert len(again) == 21 and again.get([lost]) == [None]
    np.testing.assert_array_equal(again.get_vectors([nodes[1].uri])[0], v[2])
    reader.close()
    again.close()


def test_a_failed_save_cuts_only_the_files_it_appended_to(tmp_path: Path) -> None:
    """``_discard_uncommitted`` (after a failed save) no longer cuts a file's tail that the
    save did not write (a lost generation's, mapped elsewhere); it still cuts its own."""
    path = tmp_path / "idx"
    _two_generations(path)
    writer = _rolled_back_writer(path)
    m = writer._committed
    assert m is not None
    vectors = path / f"data-{int(m['epoch']):06d}" / "vectors.bin"
    size = vectors.stat().st_size
    assert size > int(m["files"]["vectors"]["size"])
    _discard_uncommitted(path, m, set())
    assert vectors.stat().st_size == size  # (not this save's bytes: left)
    st = vectors.stat()
    _discard_uncommitted(path, m, {(st.st_dev, st.st_ino)})
    assert vectors.stat().st_size == int(m["files"]["vectors"]["size"])  # (control: its own)
    writer.close()


def test_an_interrupted_saves_tail_is_still_dropped_by_the_next_save(tmp_path: Path) -> None:
    """Control (as on d32e6e34): bytes an interrupted save left past the committed size
    are gone after the next save, whose rows read back."""
    path = tmp_path / "idx"
    nodes, v = clustered_tree(2, 5, DIM)
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    s.upsert(nodes[:6], v[:6])
    s.save()
    vectors = sorted(path.glob("data-*"))[-1] / "vectors.bin"
    with open(vectors, "ab") as fh:
        fh.write(b"\xff" * 1000)
    s.upsert(nodes[6:], v[6:])
    s.save()
    s.close()
    assert vectors.stat().st_size == len(nodes) * DIM * 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    np.testing.assert_array_equal(again.get_vectors([n.uri for n in nodes]), v)
    again.close()


def test_a_client_on_the_lost_generation_follows_the_number_committed_again(
    tmp_path: Path,
) -> None:
    """The rollback's save commits generation 2 again. d32e6e34 (and the copy fix alone):
    a reader on the lost generation 2 kept it (``refresh()`` False, 3,020 rows where the
    folder holds 21), and a writer on it appended after the lost sizes and committed a
    generation that failed to open ("by_hash is not sorted"). Now both read the new
    generation 2 first: the reader refreshes to it, the writer's save builds on it."""
    path = tmp_path / "idx"
    nodes, v = _two_generations(path)
    reader = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    third = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    writer = _rolled_back_writer(path)
    writer.upsert(nodes[1:2], v[2:3])
    writer.save()
    writer.close()
    assert reader.refresh() is True
    assert reader.generation == 2 and len(reader) == 21
    np.testing.assert_array_equal(reader.get_vectors([nodes[1].uri])[0], v[2])
    assert reader.refresh() is False  # (once: the same CURRENT is not read again)
    third.upsert(nodes[5:6], v[7:8])
    third.save()
    third.close()
    again = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert again.generation == 3 and len(again) == 21 and again.recovery is None
    np.testing.assert_array_equal(
        again.get_vectors([nodes[1].uri, nodes[5].uri]), np.stack([v[2], v[7]])
    )
    reader.close()
    again.close()


def test_a_clients_own_commits_read_no_manifest_again(tmp_path: Path) -> None:
    """Control: without a rollback, a store's refresh after each of its own saves and a
    second client's after them take the generation by its number (one read of the
    manifest per generation at most, none when ``CURRENT`` did not change)."""
    path = tmp_path / "idx"
    nodes, v = clustered_tree(2, 5, DIM)
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    other = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    for i in range(len(nodes)):
        s.upsert(nodes[i : i + 1], v[i : i + 1])
        s.save()
        assert s.refresh() is False
        assert other.refresh() is True and len(other) == i + 1
        assert other.refresh() is False
    s.close()
    other.close()
