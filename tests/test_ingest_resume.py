"""Resumable ingest: ``treehop index`` commits in batches, an interrupted (SIGINT) or killed
(SIGKILL) run keeps what it committed, and the next run resumes without redoing it.

Real subprocesses receive real signals. The CLI runs through ``main(client_factory=...)`` as
the console script does (``argv`` from ``sys.argv``), with the bag-of-words embedder slowed to
a fixed cost per text, so that an ingest of 120 files lasts several seconds and the signal
lands in the middle of it, after its first commit (the test waits for the first partial
manifest on disk before sending it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.ingest.writer import _Manifest

from treehop_test_doubles import BagOfWordsEmbedder

REPO = Path(__file__).resolve().parents[1]
N_FILES = 120

SCRIPT = """
import signal, sys, time
# (as a terminal starts it: a process started in the background without job control
# inherits SIGINT ignored, and Python leaves it so; the Ctrl-C under test would not arrive)
signal.signal(signal.SIGINT, signal.default_int_handler)
from treehop import Treehop
from treehop.cli import main
from treehop_test_doubles import BagOfWordsEmbedder


class SlowEmbedder(BagOfWordsEmbedder):
    def embed(self, texts):
        time.sleep(0.02 * len(texts))  # a model's cost per text, without a model
        return super().embed(texts)


def factory(options):
    return Treehop(options.path, embedder=SlowEmbedder(), commit_files=10, commit_seconds=3600)


sys.exit(main(client_factory=factory))
"""


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    for i in range(N_FILES):
        d = docs / f"part-{i // 40}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"page-{i:03d}.md").write_text(
            f"# Page {i}\n\nThe page number {i} talks about topic {i % 7} and item {i}.\n"
        )
    return docs


def _start(tmp: Path, *args: str) -> subprocess.Popen[str]:
    script = tmp / "slow_cli.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": f"{REPO / 'retrieval'}{os.pathsep}{REPO / 'tests'}"}
    env.pop("TREEHOP_INDEX", None)
    return subprocess.Popen(
        [sys.executable, str(script), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _manifest(index: Path) -> _Manifest | None:
    found = list((index / "state" / "ingest").glob("manifest-*"))
    return _Manifest.decode(found[0].read_bytes()) if found else None


def _wait_for_first_commit(proc: subprocess.Popen[str], index: Path) -> _Manifest:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        m = _manifest(index)
        if m is not None and len(m):
            return m
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError("no commit within 120 s")


def _stored(index: Path) -> dict[str, str]:
    with Treehop(index, embedder=BagOfWordsEmbedder()) as c:
        return {n.uri: n.content_hash for n in c.store.iter_nodes("viking://resources/docs")}


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL])
def test_stopped_index_keeps_its_commits_and_the_next_run_resumes(
    tmp_path: Path, sig: signal.Signals
) -> None:
    docs = _corpus(tmp_path)
    index = tmp_path / "idx"
    args = ("index", str(docs), "--index", str(index), "--progress", "none", "--json")
    proc = _start(tmp_path, *args)
    first = _wait_for_first_commit(proc, index)
    assert first.partial and 0 < len(first) < N_FILES
    t0 = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    stopped_in = time.monotonic() - t0
    if sig == signal.SIGINT:
        assert proc.returncode == 130
        assert stopped_in < 2.0, f"took {stopped_in:.2f} s to stop"
        # One line, no traceback, no "Task was destroyed", no ContextVar error.
        assert err.splitlines() == [
            "treehop: interrupted (what was committed is kept; run the command again to resume)"
        ], err
        assert out == ""
    else:
        assert proc.returncode == -signal.SIGKILL

    # The index is there and holds what was committed: each committed file whole.
    assert (index / "CURRENT").is_file()
    kept = _manifest(index)
    assert kept is not None and kept.partial and len(kept) >= len(first)
    stored = _stored(index)
    for rel in kept.paths:
        assert f"viking://resources/docs/{rel}" in stored

    # The next run resumes: committed files are not read or embedded again.
    again = _start(tmp_path, *args)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    import json

    res = json.loads(out)
    assert res["files"] == N_FILES
    assert res["read"] <= N_FILES - len(kept)
    assert res["embedded"] < N_FILES
    done = _manifest(index)
    assert done is not None and not done.partial and len(done) == N_FILES

    # Same nodes as one uninterrupted run.
    whole = tmp_path / "whole"
    ref = _start(tmp_path, "index", str(docs), "--index", str(whole), "--progress", "none")
    ref.communicate(timeout=120)
    assert ref.returncode == 0
    assert _stored(index) == _stored(whole)

    # And an unchanged re-run reads nothing.
    third = _start(tmp_path, *args)
    out, _ = third.communicate(timeout=120)
    res = json.loads(out)
    assert (res["read"], res["embedded"]) == (0, 0)
