"""Write races between processes on one embedded index (helper races58).

Each test starts real subprocesses that meet at a file barrier and then write at the same
moment, many times over: a read-modify-write that is not serialised across processes loses
one process's update in nearly every run (each test was run failing before its fix)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from treehop import Treehop
from treehop.tagging.ingest import IngestTagger

from treehop_test_doubles import BagOfWordsEmbedder

_BARRIER = """
import os, sys, time
from pathlib import Path
def barrier(folder, me, n):
    Path(folder, f"ready-{me}").touch()
    give_up = time.monotonic() + 60
    while sum(1 for p in Path(folder).iterdir() if p.name.startswith("ready-")) < n:
        if time.monotonic() > give_up:
            sys.exit("barrier: the other process never came")
        time.sleep(0.001)
"""


def _run_all(code: str, n: int, folder: Path, *args: str) -> None:
    """Run ``code`` in ``n`` processes at once (each gets its number as ``argv[1]``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    folder.mkdir(exist_ok=True)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _BARRIER + code, str(i), str(folder), *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]


# -- 1. the keyword tagger's statistics, two processes tagging at once ------------------------

_TAGGING = """
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
me, folder, index, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
    barrier(folder, me, 2)
    for i in range(n):
        c.add_resource(
            f"process {me} document {i} about widget{me}x{i} and gadget{i}",
            target_uri=f"viking://resources/p{me}/d{i}.md",
        )
"""


def test_two_processes_tagging_at_once_keep_every_document_in_the_statistics(
    tmp_path: Path,
) -> None:
    """Two processes adding documents at the same moment: each read the keyword
    statistics, counted its document and saved them, and a save made between the other's
    read and save was overwritten (``n_docs`` short of the documents stored, their terms
    missing from the frequencies). The read-count-save now holds the index's statistics
    lock (``locks/tagger``), so every document is counted once."""
    index, n = tmp_path / "idx", 12
    _run_all(_TAGGING, 2, tmp_path / "barrier", str(index), str(n))
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as fresh:
        stats = IngestTagger()._get(fresh.store)
        assert stats.n_docs == 2 * n
        for me in "01":
            for i in range(n):
                assert stats.document_frequencies([f"widget{me}x{i}"]).tolist() == [1]


# -- 2. the sessions index, two processes creating sessions at once ---------------------------

_CREATING = """
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
me, folder, index, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
    barrier(folder, me, 2)
    made = [c.create_session() for _ in range(n)]
Path(folder, f"made-{me}").write_text(chr(10).join(made))
"""


def _index_ids(index: Path) -> list[str]:
    """The session ids the sessions index blob lists (what a new client opens)."""
    return list(json.loads((index / "state" / "sessions" / "_index").read_bytes())["session_ids"])


def test_two_processes_creating_sessions_at_once_are_both_in_the_index(tmp_path: Path) -> None:
    """Each process wrote the sessions index from its own list of ids: a session the other
    process created between this process's read and its write was left out of the index
    blob (found again only by a store that rebuilt the list from the blobs). The index is
    now read again and written under its own lock (``locks/sessions``)."""
    index, n = tmp_path / "idx", 15
    Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0).close()
    folder = tmp_path / "barrier"
    _run_all(_CREATING, 2, folder, str(index), str(n))
    made = [x for me in "01" for x in (folder / f"made-{me}").read_text().split()]
    assert len(set(made)) == 2 * n
    assert sorted(_index_ids(index)) == sorted(made)
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as fresh:
        assert fresh._async._session_store.recovery is None
        assert sorted(s.session_id for s in fresh.list_sessions()) == sorted(made)


# -- 3. retag in one process, set_tags in another ----------------------------------------------

_RETAG_OR_TAG = """
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
me, folder, index, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
done = Path(folder, "tagged")
with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
    barrier(folder, me, 2)
    if me == "0":  # until the other process is done, retag the whole index without
        # automatic tags and with them (each retag then rewrites every node's tags)
        with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0) as bare:
            while not done.exists():
                bare.retag()
                c.retag()
    else:
        for i in range(n):
            c.set_tags("viking://resources/docs/d0.md", add=f"mark{i}")
        done.touch()
"""


def test_retag_in_one_process_keeps_tags_another_sets(tmp_path: Path) -> None:
    """``retag`` read the index's nodes (their user tags), recounted and re-extracted, and
    wrote every node's tags back: a ``set_tags`` another process committed between the read
    and the write was overwritten (its user tag gone). ``retag`` now takes the writer lock
    before it reads (the store catches up with the disk there), so a ``set_tags`` commits
    either before the read or after the write."""
    index, n = tmp_path / "idx", 15
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        for i in range(30):
            c.add_resource(
                f"document {i} on topic{i % 7} and subject{i % 5} with words{i}",
                target_uri=f"viking://resources/docs/d{i}.md",
            )
    _run_all(_RETAG_OR_TAG, 2, tmp_path / "barrier", str(index), str(n))
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as fresh:
        (node,) = fresh.store.get(["viking://resources/docs/d0.md"])
        tags = node.tags
        assert sorted(t for t in tags if t.startswith("user:")) == sorted(
            f"user:mark{i}" for i in range(n)
        )
