"""The saved vectors of a large generation are read by row with ``pread``
(``column_files._VectorRows``), not through a resident memory map (issue 35 item 3: memory at
1M rows).

Why these tests: above ``manifest.READ_VECTORS_BYTES`` every reader of saved vectors (a
search's rescored graph candidates and siblings, the graph's orphans and build, exact scans,
``get_vectors``, a compaction) must answer exactly what the map answered, must leave nothing
of the vectors file resident in the process, and a file cut short after the open must be a
typed error. A small store takes the large store's path with ``vector_reads="read"``; the same
index opened with ``"map"`` is the reference.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.errors import IndexCorruptError, StoreError
from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_columns
from treehop.stores.embedded import manifest as emb_manifest

from treehop_test_doubles import clustered_tree

R = "viking://resources"
DIM = 32


def tree(n_dirs: int = 30, per_dir: int = 60) -> tuple[list[Node], np.ndarray]:
    """Directories of leaves clustered around their directory's vector (as a real tree)."""
    return clustered_tree(n_dirs, per_dir, DIM)


@pytest.fixture(scope="module")
def saved_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Node], np.ndarray]:
    """An index with its graph saved (built through the map: the default threshold)."""
    path = tmp_path_factory.mktemp("vr") / "idx"
    nodes, v = tree()
    s = EmbeddedStore(path, ann_min_rows=0, lexical=False)  # type: ignore[arg-type]
    s.upsert(nodes, v)
    assert s.wait_ann(timeout=60)
    s.save()
    s.close()
    return path, nodes, v


def open_store(path: Path, by_row: bool, **kw: object) -> EmbeddedStore:
    s = EmbeddedStore(path, lexical=False, vector_reads="read" if by_row else "map", **kw)  # type: ignore[arg-type]
    assert (s._snap.vector_rows is not None) is by_row
    return s


def resident_bytes(arr: np.ndarray) -> int:
    """Resident bytes of the mapping that holds ``arr``'s data (Linux smaps)."""
    at = int(arr.__array_interface__["data"][0])
    hit = False
    with open("/proc/self/smaps") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5:
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                hit = lo <= at < hi
            elif hit and head and head[0] == "Rss:":
                return int(head[1]) * 1024
    raise AssertionError("no mapping holds the array")


def answers(s: EmbeddedStore, qs: np.ndarray) -> list[object]:
    """What a reader sees: graph searches (rescored rows, siblings, orphans), exact batch
    and scoped searches, and ``get_vectors`` of every node."""
    out: list[object] = []
    for q in qs:
        out.append([(h.node.uri, h.score) for h in s.search(q, Scope(), 10)])
        scoped = Scope(subtrees=(f"{R}/d3",))
        out.append([(h.node.uri, h.score) for h in s.search(q, scoped, 5)])
    for hits in s.search_batch(qs, Scope(leaves_only=True), 7):
        out.append([(h.node.uri, h.score) for h in hits])
    return out


def test_a_store_over_the_threshold_answers_what_the_map_answers(
    saved_index: tuple[Path, list[Node], np.ndarray],
) -> None:
    path, nodes, v = saved_index
    qs = v[[5, 70, 400, 1000, 1500]] + 0.05
    uris = [n.uri for n in nodes]
    for graph in (0, None):  # the graph's path, then exact scans (no graph)
        ref = open_store(path, False, ann_min_rows=graph)
        want, want_v = answers(ref, qs), ref.get_vectors(uris)
        ref.close()
        s = open_store(path, True, ann_min_rows=graph)
        assert (s._ann is not None) is (graph is not None)
        assert answers(s, qs) == want
        got_v = s.get_vectors(uris[::-1] + uris[:3])  # unsorted, repeated
        assert np.array_equal(got_v, np.concatenate([want_v[::-1], want_v[:3]]))
        assert np.array_equal(got_v[: len(uris)][::-1], v)
        # nothing of the vectors file stays mapped: row reads copy, scans release their pages
        assert resident_bytes(s._snap.base_vecs) <= 8192
        s.close()


def test_writes_after_an_open_over_the_threshold_read_back(
    saved_index: tuple[Path, list[Node], np.ndarray],
    tmp_path: Path,
) -> None:
    """New rows in the tail beside saved rows read by ``pread``, a save that appends, and a
    compaction (deletes, then a save that rewrites every live row) all read back equal."""
    import shutil

    src, nodes, v = saved_index
    path = tmp_path / "idx"
    shutil.copytree(src, path)
    s = open_store(path, True, ann_min_rows=0)
    rng = np.random.default_rng(7)
    extra = rng.standard_normal((50, DIM)).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    new = [
        Node(
            uri=f"{R}/d1/n{i:02d}.md",
            parent_uri=f"{R}/d1",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
        )
        for i in range(50)
    ]
    s.upsert(new, extra)
    mixed = [nodes[3].uri, new[7].uri, nodes[900].uri, new[0].uri]
    assert np.array_equal(s.get_vectors(mixed), np.stack([v[3], extra[7], v[900], extra[0]]))
    assert s.search(extra[7], Scope(), 1)[0].node.uri == new[7].uri
    s.save()
    assert s._snap.vector_rows is not None and s._snap.n_base == len(nodes) + 50
    assert np.array_equal(s.get_vectors(mixed), np.stack([v[3], extra[7], v[900], extra[0]]))
    gone = [n.uri for n in nodes[100:700]]
    s.delete(gone)
    s.save()  # (most rows dead: the save compacts)
    keep = [n.uri for n in nodes[:100] + nodes[700:]] + [n.uri for n in new]
    want = np.concatenate([v[:100], v[700:], extra])
    assert np.array_equal(s.get_vectors(keep), want)
    s.close()
    again = open_store(path, True, ann_min_rows=None)
    assert np.array_equal(again.get_vectors(keep), want)
    assert again.search(v[1200], Scope(), 1)[0].node.uri == nodes[1200].uri
    again.close()


def test_a_vectors_file_cut_short_after_the_open_is_a_typed_error(
    saved_index: tuple[Path, list[Node], np.ndarray],
    tmp_path: Path,
) -> None:
    import shutil

    src, nodes, v = saved_index
    path = tmp_path / "idx"
    shutil.copytree(src, path)
    s = open_store(path, True, ann_min_rows=None, verify=True)
    vec_file = next(path.glob("data-*/vectors.bin"))
    keep_rows = 1000
    os.truncate(vec_file, keep_rows * DIM * 4 + 10)  # (mid-row)
    assert np.array_equal(s.get_vectors([nodes[999].uri]), v[999:1000])  # before the cut
    for row in (1000, len(nodes) - 1):
        with pytest.raises(IndexCorruptError, match="shorter than committed"):
            s.get_vectors([nodes[row].uri])
    with pytest.raises(IndexCorruptError):
        s.get_vectors([nodes[5].uri, nodes[1700].uri])
    s.close()
    # a file already short at the open is refused by the open itself
    with pytest.raises(IndexCorruptError):
        open_store(path, True, ann_min_rows=None)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(1, 60),
    picks=st.lists(st.integers(-60, 59), max_size=40),
    seed=st.integers(0, 9),
)
def test_row_reads_equal_numpy_indexing(
    tmp_path_factory: pytest.TempPathFactory, n: int, picks: list[int], seed: int
) -> None:
    """Sorted or not, repeated, negative, adjacent or far apart (coalesced ranges with rows
    between them read and dropped): the rows numpy's indexing of the array gives, and the
    same IndexError for a row out of range."""
    dim = 3
    arr = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    f = tmp_path_factory.mktemp("rows") / "vectors.bin"
    f.write_bytes(arr.tobytes())
    reader = emb_columns._VectorRows(f, n, dim)
    rows = np.array(picks, dtype=np.int64)
    if picks and (min(picks) < -n or max(picks) >= n):
        with pytest.raises(IndexError):
            reader.rows(rows)
        return
    got = reader.rows(rows)
    assert got.dtype == np.float32 and got.shape == (len(picks), dim)
    assert np.array_equal(got, arr[rows])


def test_auto_reads_by_row_above_the_threshold_only(
    saved_index: tuple[Path, list[Node], np.ndarray], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, nodes, v = saved_index
    size = len(nodes) * DIM * 4
    for limit, by_row in ((size, False), (size - 1, True)):
        monkeypatch.setattr(emb_manifest, "READ_VECTORS_BYTES", limit)
        s = EmbeddedStore(path, lexical=False, ann_min_rows=None)
        assert (s._snap.vector_rows is not None) is by_row
        assert np.array_equal(s.get_vectors([nodes[17].uri]), v[17:18])
        s.close()
    with pytest.raises(StoreError, match="vector_reads"):
        EmbeddedStore(path, vector_reads="mmap")  # type: ignore[arg-type]
