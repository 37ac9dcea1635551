"""A closed store's reopen and the columns read at an open (helper perf63).

1. The fixed-width columns read at an open are arrays of their own (no map, writable), the
   same values as the file; a column file cut short is still ``IndexCorruptError``.
2. A closed store's reopen of the same generation starts with the structural lookups the
   close let go (the same answers as built anew, no column file left open by them); after
   another writer's commit, or with the folder replaced, it starts empty.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import IndexCorruptError
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import BagOfWordsEmbedder

pytestmark = pytest.mark.skipif(
    not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc"
)


def _filled(idx: Path, n: int = 2) -> None:
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        for i in range(n):
            th.add_resource(f"Alpha text {i} here", target_uri=f"viking://resources/a{i}.md")


def test_the_columns_read_at_an_open_are_owned_and_a_short_one_is_corrupt(
    tmp_path: Path,
) -> None:
    idx = tmp_path / "idx"
    _filled(idx, 3)
    store = EmbeddedStore(idx)
    s = store._snap
    data = next(idx.glob("data-*"))
    for name, arr in s.cols.items():
        assert arr.base is None and arr.flags.writeable, name  # (no map behind it)
        on_disk = np.fromfile(data / f"{name}.bin", dtype=arr.dtype)[: s.n]
        assert np.array_equal(arr[: s.n], on_disk), name
    store.close()
    f = data / "uri_hash.bin"
    f.write_bytes(f.read_bytes()[:-8])  # (one row short)
    with pytest.raises(IndexCorruptError):
        len(EmbeddedStore(idx, verify=False, strict=True))


def _data_fds(idx: Path) -> list[str]:
    out = []
    for n in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{n}")
        except OSError:
            continue
        if target.startswith(os.path.realpath(idx) + "/data-"):
            out.append(target)
    return out


def test_a_reopen_of_the_same_generation_keeps_the_lookups_and_no_file(tmp_path: Path) -> None:
    idx = tmp_path / "idx"
    _filled(idx, 3)
    store = EmbeddedStore(idx)
    root = "viking://resources"
    built = store._subtree_rows(store._snap, root)
    rows = store._snap.lookup([f"{root}/a1.md"])
    assert built.size and rows[0] >= 0
    store.close()
    assert _data_fds(idx) == []  # (the lookups kept hold no map of a column file)
    snap = store._snap  # (mapped again: the same generation)
    assert root in snap.cache[("subtree",)]  # (kept over the close: empty before)
    assert np.array_equal(snap.cache[("subtree",)][root], store._subtree_rows_uncached(snap, root))
    assert snap.cache[("rows",)][f"{root}/a1.md"] == rows[0]
    store.close()
    # (another writer commits: the next reopen maps a new generation, built anew)
    with Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource("Beta text here", target_uri=f"{root}/b.md")
    snap = store._snap
    assert ("subtree",) not in snap.cache and ("rows",) not in snap.cache
    store._subtree_rows(snap, root)
    store.close()
    # (the folder replaced by a copy of itself, the same generation: not taken over)
    twin = tmp_path / "twin"
    shutil.copytree(idx, twin)
    idx.rename(tmp_path / "gone")
    twin.rename(idx)
    snap = store._snap
    assert ("subtree",) not in snap.cache
    store.close()
