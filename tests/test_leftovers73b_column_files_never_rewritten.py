"""The writer never rewrites a byte a reader maps (helper leftovers73b; leftovers72a's open
item "column files rewritten in place while mapped", bench/README.md "(helper
leftovers73b)").

leftovers72a stamps the mapped HNSW graph (inode, size, modification time) because its file
is one whole file a reader maps. The column files (``vectors``, ``uri_hash``, ..., ``uris``,
``nodes``) cannot be checked that way: the writer *appends* to the same inodes at each commit,
so a reader's file legitimately changes size and modification time under it, and a stamp
cannot tell a commit from a rewrite -- only hashing the mapped bytes could (the open's and
``close()``'s checks do). What holds instead, and is checked here: **through the writer, no
byte a reader maps is ever rewritten or cut**. A save appends after the committed size
(``column_files._append_segments``); bytes past it (an interrupted save's, a lost
generation's) are dropped by writing the committed ones to a new file renamed over the old
(``_drop_tail``), never by cutting it; a failed save cuts only what it appended itself
(``manifest._discard_uncommitted``); a compaction writes a new ``data-<epoch>`` folder; the
lookup, graph, BM25 and manifest files are written to a temporary name and renamed. So a
reader that opened a generation reads it unchanged, whatever another writer does, and a
same-size rewrite of a column file can only come from another program (docs/stores.md: copy
an index elsewhere, never rewrite its files in place).

The test: a reader opens a generation and records every file of the index folder (inode,
bytes); a second store on the same folder then upserts, replaces, deletes, retags, fails a
save half way (after its appends), saves again and compacts. After each step every file the
reader recorded is either gone or renamed over (another inode: the reader's map keeps the
old one) or, at the same inode, starts with exactly the recorded bytes; and the reader,
never refreshed, answers every node and vector as at its open.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from treehop.errors import StoreError
from treehop.models import Node
from treehop.stores.embedded import EmbeddedStore, manifest

from treehop_test_doubles import resource_leaf

DIM = 16
RNG = np.random.default_rng(7)


def _leaves(lo: int, hi: int, tag: str = "") -> list[Node]:
    return [resource_leaf(f"viking://resources/f{i}.md", f"text {i} {tag}") for i in range(lo, hi)]


def _vecs(n: int) -> npt.NDArray[np.float32]:
    v = RNG.standard_normal((n, DIM)).astype(np.float32)
    out: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def _files(path: Path) -> dict[Path, tuple[int, bytes]]:
    return {f: (f.stat().st_ino, f.read_bytes()) for f in path.rglob("*") if f.is_file()}


def _check_untouched(seen: dict[Path, tuple[int, bytes]]) -> int:
    """How many recorded files are still at their path with their inode (each checked to
    start with its recorded bytes); the others were removed or renamed over."""
    same = 0
    for f, (ino, data) in seen.items():
        try:
            st = f.stat()
        except FileNotFoundError:
            continue
        if st.st_ino != ino:
            continue
        same += 1
        with open(f, "rb") as fh:
            assert fh.read(len(data)) == data, f"{f.name} rewritten in place"
    return same


def test_no_writer_step_rewrites_or_cuts_a_byte_a_reader_maps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    idx = tmp_path / "idx"
    w = EmbeddedStore(idx, ann_min_rows=None)
    w.upsert(_leaves(0, 1200), _vecs(1200))
    w.save()
    w.close()
    reader = EmbeddedStore(idx, ann_min_rows=None)
    uris = [f"viking://resources/f{i}.md" for i in range(1200)]
    texts = [n.content for n in reader.get(uris)]  # type: ignore[union-attr]
    vectors = reader.get_vectors(uris).copy()
    seen = _files(idx)
    assert any("data-" in str(f) for f in seen)  # the premise: column files recorded

    def fail_commit(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    steps: list[tuple[str, Callable[[EmbeddedStore], None]]] = [
        ("append", lambda s: s.upsert(_leaves(1200, 1300), _vecs(100))),
        ("replace", lambda s: s.upsert(_leaves(0, 50, "new"), _vecs(50))),
        ("delete", lambda s: (s.delete(uris[50:100]), None)[1]),
        ("retag", lambda s: s.update_tags({uris[100]: ["x"], uris[101]: ["y"]})),
        ("compact", lambda s: (s.delete(uris[100:1150]), None)[1]),
    ]
    writer = EmbeddedStore(idx, ann_min_rows=None)
    same_inodes = []
    for name, step in steps:
        step(writer)
        if name == "retag":  # a save that fails after its appends, then one that succeeds
            with monkeypatch.context() as m:
                m.setattr(manifest, "_write_manifest", fail_commit)
                m.setattr("treehop.stores.embedded.writes._write_manifest", fail_commit)
                with pytest.raises(StoreError):
                    writer.save()
            step(writer)
        writer.save()
        same_inodes.append(_check_untouched(seen))
        got = reader.get(uris)
        assert [n.content if n else None for n in got] == texts, name
        assert np.array_equal(reader.get_vectors(uris), vectors), name
    # the premise: column files were appended to in place (same inodes) before the
    # compaction moved to a new data folder
    assert same_inodes[0] >= 11 and same_inodes[-1] < same_inodes[0]
    assert len(writer) == 1300 - 50 - 1050
    writer.close()
    reader.close()
    assert len(EmbeddedStore(idx)) == 200
    assert os.listdir(idx)  # (the folder kept)
