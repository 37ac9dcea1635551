"""A store's check that ``CURRENT`` names the very manifest it follows is keyed by
``CURRENT``'s content and forgotten when the store follows another manifest (helper
leftovers70b, bench/README.md "(helper leftovers70b)").

Stop 69 noted that ``_replaced_under_me`` kept its answer under the ``id()`` of the manifest
dict, which Python gives to the next dict once the old one is freed. The key is now
``CURRENT``'s (name, generation, checksum); what binds it to the manifest followed is
``_adopt_manifest`` forgetting it. The test below is the sequence a stale answer gets wrong:
``CURRENT`` comes back to the exact content a store checked before, while the store follows
another manifest of that number (a folder restored from a copy after a rollback's save).
It passes on 4b7966c0 too (no path there reached a reused id: every manifest a store
follows passes through ``_adopt_manifest``, under the lock the check runs under); it fails
when that forgetting is taken out (checked by hand, see the README section).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from treehop.errors import RecoveryWarning
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import clustered_tree

DIM = 16


def _restore(backup: Path, path: Path) -> None:
    """Put every file of ``backup`` back at ``path``, each renamed over the one there (as a
    careful restore does: a reader's maps keep the files they opened)."""
    for src in sorted(backup.rglob("*")):
        if src.is_file():
            dst = path / src.relative_to(backup)
            dst.parent.mkdir(parents=True, exist_ok=True)
            tmp = dst.with_name(".restore-" + dst.name)
            shutil.copy2(src, tmp)
            os.replace(tmp, dst)


def test_current_back_at_a_checked_content_is_read_again_after_the_store_moved_on(
    tmp_path: Path,
) -> None:
    path, backup = tmp_path / "idx", tmp_path / "backup"
    nodes, v = clustered_tree(3, 20, DIM)
    s = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    s.upsert(nodes[:21], v[:21])
    s.save()
    s.upsert(nodes[21:], v[21:])
    s.save()
    s.close()
    shutil.copytree(path, backup)
    reader = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    assert reader.refresh() is False  # (CURRENT read as its own manifest: the answer kept)
    checked = (path / "CURRENT").read_bytes()
    (path / "MANIFEST-000002.json").unlink()
    with pytest.warns(RecoveryWarning, match="generation 2"):
        writer = EmbeddedStore(path, ann_min_rows=None, lexical=False)
    writer.upsert(nodes[1:2], v[2:3])
    writer.save()  # generation 2 again, another manifest
    writer.close()
    assert reader.refresh() is True and len(reader) == 21
    _restore(backup, path)
    assert (path / "CURRENT").read_bytes() == checked
    assert reader.refresh() is True  # (not the manifest it follows now: read again)
    assert reader.generation == 2 and len(reader) == len(nodes)
    np.testing.assert_array_equal(reader.get_vectors([nodes[1].uri])[0], v[1])
    assert reader.refresh() is False
    reader.close()
