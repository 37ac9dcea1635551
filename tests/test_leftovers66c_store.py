"""The embedded store's open items of stop 65 (helper leftovers66c, bench/README.md "(helper
leftovers66c)").

4. A write of a client queued behind one plug-in call of the same client's write in progress
   (its embedder) longer than ``lock_timeout`` fails, as before (decided: waiting for as long
   as the call runs would turn the deadlock the deadline ends -- a write from a thread the
   call started and joins -- into a hang). Its error now says what held the lock (the
   embedder's call), for how long, and that the waiting write wrote nothing; the caller can
   repeat it as it is.
5. A column file under 4 MiB (no read lease: only reads of 4 MiB or more take one) cut short
   by another program during a call killed the process (SIGBUS through its map): such files
   are now read into memory at the open, not mapped.

Each test fails on 06c8a981 unless it says it is a control.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from treehop import Treehop
from treehop.errors import IndexCorruptError, IndexLockedError
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import column_files as emb_columns

from treehop_test_doubles import BagOfWordsEmbedder, child_process, clustered_tree

BOUND = 120.0
"""How long any wait of these tests may take before it is a failure (not a hang)."""


class _SlowCall(BagOfWordsEmbedder):
    """Embeds a text holding ``slow`` after ``work`` seconds: one long call of the write's
    own (not a synchronisation: the order comes from the lock's line)."""

    def __init__(self, work: float) -> None:
        super().__init__()
        self.work = work

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if any("slow" in t for t in texts):
            time.sleep(self.work)
        return super().embed(texts)


def test_a_write_queued_behind_one_long_embedder_call_says_what_held_the_lock(
    tmp_path: Path,
) -> None:
    # 06c8a981: "this client's write in progress made no progress for 1 s ...": no word of
    # the embedder's call, how long it had held the lock, or that nothing was written
    store = EmbeddedStore(tmp_path / "idx", lock_timeout=1.0)
    th = Treehop(store=store, embedder=_SlowCall(3.0), tagger=None)
    lock = th.aio.writer.lock
    results: list[Any] = [None, None]

    def first() -> None:
        results[0] = th.add_resource(
            "A slow note", target_uri="viking://resources/slow.md", is_text=True
        )

    def second() -> None:
        try:
            results[1] = th.add_resource(
                "A short note", target_uri="viking://resources/short.md", is_text=True
            )
        except IndexLockedError as exc:
            results[1] = exc

    one = threading.Thread(target=first, daemon=True)
    one.start()
    deadline = time.monotonic() + BOUND
    while lock._calling is None:  # (the first write inside its embedder's call)
        assert time.monotonic() < deadline and one.is_alive()
        time.sleep(0.001)
    two = threading.Thread(target=second, daemon=True)
    two.start()
    for t in (one, two):
        t.join(BOUND)
        assert not t.is_alive()
    error = results[1]
    assert isinstance(error, IndexLockedError), results
    text = str(error)
    assert "waited 1 s" in text and "wrote nothing" in text, text
    found = re.search(r"held the lock for ([\d.]+) s, inside one call of its embedder", text)
    assert found is not None, text
    assert float(found.group(1)) >= 1.0  # (at least the wait; the call began before it)
    # the first write completed; the second wrote nothing, and runs as it is once repeated
    uris = {e.uri for e in th.ls("viking://resources")}
    assert uris == {"viking://resources/slow.md"}
    th.add_resource("A short note", target_uri="viking://resources/short.md", is_text=True)
    assert {e.uri for e in th.ls("viking://resources")} == {
        "viking://resources/slow.md",
        "viking://resources/short.md",
    }
    th.close()


def test_no_call_is_named_for_a_write_outside_the_hold(tmp_path: Path) -> None:
    # control: an embedder call of this client made outside the hold (no write holds the
    # lock) names nothing as holding it
    store = EmbeddedStore(tmp_path / "idx")
    th = Treehop(store=store, embedder=BagOfWordsEmbedder(), tagger=None)
    lock = th.aio.writer.lock
    with lock.calling("embedder"):
        assert lock._calling is None
    th.close()


# -- 5. a small file cut during a call -------------------------------------------------------


def test_a_small_file_cut_short_during_a_long_call_is_no_sigbus(tmp_path: Path) -> None:
    # 06c8a981: rc -7 (SIGBUS) in 3 of 3 runs: a vectors file under 4 MiB (2,323 x 384-d,
    # 3.4 MB) is read through its map with no lease, the call's size check long past when
    # the cut lands inside the scan. Now a file under 4 MiB is read into memory at the open:
    # the cut cannot fault the read: the call answers from the copy of the committed bytes,
    # and the next call's check sees the cut, as it sees a mapped file's
    import test_store_leftovers65 as l65

    nodes, v = clustered_tree(23, 100, l65.DIM)
    idx = tmp_path / "idx"
    s = EmbeddedStore(idx, ann_min_rows=None, lexical=False)
    s.upsert(nodes, v)
    s.save()
    s.close()
    vectors = l65._vectors(idx)
    assert vectors.stat().st_size < emb_columns._LEASE_BYTES  # (the premise: a small file)
    out = child_process(l65._CUT_DURING_A_CALL, str(idx), str(vectors), timeout=180)
    assert out.returncode == 0, (out.returncode, out.stdout, out.stderr[-2000:])
    lines = out.stdout.split()
    assert "cut" in lines and "no" not in lines, out.stdout  # (the cut landed in the scan)
    assert "long call answered" in out.stdout, out.stdout
    # the next call sees the cut (its check, as for a mapped file): a typed error
    assert "next call IndexCorruptError" in out.stdout, out.stdout
    assert vectors.stat().st_size == 0
    # a new open reads the file again: the damage is a typed error there
    try:
        EmbeddedStore(idx, ann_min_rows=None, lexical=False).search_batch(
            np.ones((1, l65.DIM), np.float32), Scope(), 3
        )
    except IndexCorruptError:
        pass
    else:
        raise AssertionError("a cut vectors file opened without IndexCorruptError")


def test_a_file_of_4_mib_or_more_is_still_mapped(tmp_path: Path) -> None:
    # control: only small files are copied (a large one stays mapped, its long reads under
    # a read lease: tests/test_store_leftovers65.py)
    nodes, v = clustered_tree(30, 100, 384)  # (3,030 rows: 4.65 MB of vectors)
    s = EmbeddedStore(tmp_path / "idx", ann_min_rows=None, lexical=False)
    s.upsert(nodes, v)
    s.save()
    s.close()
    s = EmbeddedStore(tmp_path / "idx", ann_min_rows=None, lexical=False)
    s.search_batch(np.ones((1, 384), np.float32), Scope(), 3)  # (opened)
    snap = s._snap
    assert emb_columns._map_of(snap.base_vecs) is not None
    assert emb_columns._map_of(snap.cols["uri_end"]) is None  # (a fixed-width column: read)
    s.close()
