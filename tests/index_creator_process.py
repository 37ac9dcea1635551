"""Another process creating an index while a test's client reads its path: the shared parts.

leftovers74's test (a creator that saves) and leftovers75's (a creator killed before its save)
differ only in the script the creating process runs; each passes its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder


def old_index_reader(idx: Path) -> Treehop:
    """A client over ``idx`` holding one note, ``viking://resources/old`` (the index to move)."""
    c = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None)
    c.add_resource("the old index's note", is_text=True, target_uri="viking://resources/old")
    assert [e.uri for e in c.ls("viking://resources")] == ["viking://resources/old"]
    return c


def start_creator(script: str, idx: Path, dim: int) -> subprocess.Popen[str]:
    """Run ``script`` (argv: the index path, the vector width) in a child Python; return once
    it printed ``writing`` (it holds the index's write lock from then on)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, str(idx), str(dim)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc
