"""A write discarded after a rollback no longer cuts another client's mapped files in place
(helper attacks82, bench/README.md "(helper attacks82)").

leftovers69b made a failed save cut in place only the data files *it* appended to
(``EmbeddedStore._appended``, read by ``manifest._discard_uncommitted``), because after a
rollback the bytes past the committed sizes are a lost generation's, which another client
still maps (cutting them was SIGBUS there). But the set was only ever reset at the next
save's append: after a store's successful save it still named that save's files, so a later
write of the same store that was discarded (``discard_unsaved``, what ``add_records`` does
when a step fails) or whose save failed before appending cut those same files -- by then
holding another client's generation past this store's committed sizes -- in place.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from treehop import Node
from treehop.errors import RecoveryWarning, StoreError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import clustered_tree

DIM = 384


def _writer_reader_and_lost_generation(
    path: Path,
) -> tuple[EmbeddedStore, EmbeddedStore, list[Node], np.ndarray, Path]:
    """``b`` saved generation 1 (its appends recorded), a second client saved generation 2
    (3,020 rows: 4.6 MB of vectors, so the reader maps them), the reader opened it, then
    generation 2's manifest is lost and ``b``'s next write catches up by rolling back."""
    nodes, v = clustered_tree(20, 150, DIM)
    b = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    b.upsert(nodes[:21], v[:21])
    b.save()
    e = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    e.upsert(nodes[21:], v[21:])
    e.save()
    e.close()
    reader = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert reader.generation == 2 and len(reader) == len(nodes)
    vectors = sorted(path.glob("data-*"))[-1] / "vectors.bin"
    (path / "MANIFEST-000002.json").unlink()
    with pytest.warns(RecoveryWarning, match="generation 2"):
        b.upsert(nodes[1:2], v[2:3])
    assert b.generation == 1
    return b, reader, nodes, v, vectors


def test_a_discarded_write_after_a_rollback_leaves_the_lost_rows_to_their_reader(
    tmp_path: Path,
) -> None:
    """4b7966c0: the discard truncated ``vectors.bin`` (same inode) from 4,638,720 to
    32,256 bytes under the reader's map: its next call was ``IndexCorruptError: ... cut
    short by another program`` (and its graph worker's read, SIGBUS)."""
    path = tmp_path / "idx"
    b, reader, nodes, v, vectors = _writer_reader_and_lost_generation(path)
    before = os.stat(vectors)
    assert b.discard_unsaved() is True
    after = os.stat(vectors)
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    lost = nodes[2000].uri
    np.testing.assert_array_equal(reader.get_vectors([lost])[0], v[2000])
    assert reader.search(v[2000], Scope(), 1)[0].node.uri == lost
    # the writer's next save still drops the lost tail (by a copy) and commits on generation 1
    b.upsert(nodes[1:2], v[2:3])
    b.save()
    b.close()
    np.testing.assert_array_equal(reader.get_vectors([lost])[0], v[2000])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert len(again) == 21 and again.get([lost]) == [None]
    np.testing.assert_array_equal(again.get_vectors([nodes[1].uri])[0], v[2])
    assert reader.refresh() is True and len(reader) == 21
    reader.close()
    again.close()


def test_a_save_failing_before_its_append_after_a_rollback_cuts_nothing(
    tmp_path: Path,
) -> None:
    """Control (passes on 4b7966c0 too: the save resets the set before it appends): a
    save that fails before it appends to ``uris.bin`` (its copy of the committed bytes
    cannot be written: a directory holds the temporary name, a real ``OSError``) reverts to
    generation 1 and leaves ``uris.bin`` and the reader's rows as they were."""
    path = tmp_path / "idx"
    b, reader, nodes, v, vectors = _writer_reader_and_lost_generation(path)
    uris = vectors.with_name("uris.bin")
    (uris.parent / ".tmp-uris.bin").mkdir()
    before = os.stat(uris)
    with pytest.raises(StoreError, match="Is a directory"):
        b.save()
    after = os.stat(uris)
    assert (after.st_ino, after.st_size) == (before.st_ino, before.st_size)
    lost = nodes[2000].uri
    assert reader.search(v[2000], Scope(), 1)[0].node.uri == lost
    assert reader.get([lost])[0] is not None
    b.close()
    reader.close()


def test_a_failed_save_still_cuts_what_it_appended(tmp_path: Path) -> None:
    """Control (as on 4b7966c0): a save that failed after its append leaves no bytes past
    the committed sizes of the files it appended to."""
    path = tmp_path / "idx"
    nodes, v = clustered_tree(2, 5, DIM)
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    s.upsert(nodes[:6], v[:6])
    s.save()
    vectors = sorted(path.glob("data-*"))[-1] / "vectors.bin"
    size = vectors.stat().st_size
    s.upsert(nodes[6:], v[6:])
    (path / "index-000002.bin").mkdir()  # (the lookup file cannot be written: an OSError)
    with pytest.raises(StoreError, match="Is a directory"):
        s.save()
    assert vectors.stat().st_size == size
    assert s.generation == 1 and len(s) == 6
    s.close()
