"""How long a small write waits for the keyword statistics lock while another process ingests
a large tree (helper leftovers56).

Process A ingests a generated tree (``bench_ingest.write_tree``: ``--files`` short files)
with the keyword tagger; process B adds one small document at a time to the same index,
from the moment A starts until A is done. B's waits for ``<index>/locks/tagger`` are timed
(a wrapper around ``holding_named`` for that lock, in B only), and so is each whole
``add_resource``; an add that fails (``IndexLockedError`` after ``lock_timeout``, 10 s) is
counted. Embedding is a cheap hashing embedder (``bench_ingest.HashingEmbedder``).

Run from the repository root; for the code before a change, put an export of it first on
``PYTHONPATH``::

    export OPENBLAS_NUM_THREADS=1
    PYTHONPATH=$PWD/retrieval python bench/bench_tagger_lock.py --files 40000
    git archive d3dd3a0 retrieval | tar x -C /tmp/base
    PYTHONPATH=/tmp/base/retrieval python bench/bench_tagger_lock.py --files 40000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

_HERE = Path(__file__).resolve().parent

_INGEST = """
import sys, time, json
sys.path.insert(0, BENCH)
from pathlib import Path
from bench_ingest import HashingEmbedder
from treehop import Treehop
index, tree, folder = sys.argv[1], sys.argv[2], Path(sys.argv[3])
with Treehop(index, embedder=HashingEmbedder(), tagger="auto", reader_processes=0) as c:
    (folder / "a-ready").touch()
    while not (folder / "b-ready").exists():
        time.sleep(0.01)
    t0 = time.monotonic()
    c.add_resource(tree, target_uri="viking://resources/tree")
    (folder / "a-done").write_text(json.dumps({"ingest_s": time.monotonic() - t0}))
"""

_SMALL = """
import sys, time, json, contextlib
sys.path.insert(0, BENCH)
from pathlib import Path
from bench_ingest import HashingEmbedder
from treehop import Treehop
from treehop.errors import IndexLockedError
import treehop.tagging.ingest as ti
index, folder = sys.argv[1], Path(sys.argv[2])
waits = []
real = ti.holding_named

@contextlib.contextmanager
def timed(store, name):
    t0 = time.monotonic()
    try:
        with real(store, name):
            waits.append(time.monotonic() - t0)
            yield
    except IndexLockedError:
        waits.append(time.monotonic() - t0)
        raise

ti.holding_named = timed
adds, failed = [], 0
with Treehop(index, embedder=HashingEmbedder(), tagger="auto", reader_processes=0) as c:
    while not (folder / "a-ready").exists():
        time.sleep(0.01)
    (folder / "b-ready").touch()
    i = 0
    while not (folder / "a-done").exists():
        t0 = time.monotonic()
        try:
            c.add_resource(f"small note {i} about widget{i} and the harbor lantern",
                           target_uri=f"viking://resources/small/n{i}.md", is_text=True)
        except IndexLockedError:
            failed += 1
        adds.append(time.monotonic() - t0)
        i += 1
        time.sleep(0.05)  # (a writer's pace, not a synchronisation)
print(json.dumps({"adds": adds, "failed": failed, "waits": waits}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=60000)
    ap.add_argument("--per-dir", type=int, default=100)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    sys.path.insert(0, str(_HERE))
    import treehop
    from bench_ingest import HashingEmbedder, write_tree
    from treehop import Treehop

    print(f"treehop from {Path(treehop.__file__).parent}")
    with tempfile.TemporaryDirectory(prefix="tagger-lock-") as tmp:
        root = Path(tmp)
        tree, index, folder = root / "tree", root / "idx", root / "sync"
        folder.mkdir()
        n = write_tree(tree, args.files, args.per_dir, args.seed)
        os.sync()
        with Treehop(index, embedder=HashingEmbedder(), tagger="auto", reader_processes=0) as c:
            c.add_resource("seed", target_uri="viking://resources/seed.md", is_text=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        head = f"BENCH = {str(_HERE)!r}\n"
        a = subprocess.Popen(
            [sys.executable, "-c", head + _INGEST, str(index), str(tree), str(folder)], env=env
        )
        b = subprocess.Popen(
            [sys.executable, "-c", head + _SMALL, str(index), str(folder)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        out, _ = b.communicate(timeout=3600)
        a.wait(timeout=3600)
        got = json.loads(out.strip().splitlines()[-1])
        ingest_s = json.loads((folder / "a-done").read_text())["ingest_s"]
    adds, waits = got["adds"], got["waits"]
    row = {
        "files": n,
        "ingest_s": round(ingest_s, 1),
        "small_adds": len(adds),
        "failed": got["failed"],
        "add_p50_s": round(statistics.median(adds), 3) if adds else None,
        "add_max_s": round(max(adds), 2) if adds else None,
        "lock_wait_p50_s": round(statistics.median(waits), 4) if waits else None,
        "lock_wait_max_s": round(max(waits), 2) if waits else None,
        "lock_waits_over_0.5s": sum(w > 0.5 for w in waits),
        "lock_wait_total_s": round(sum(waits), 2),
    }
    print(json.dumps(row))
    if args.json is not None:
        args.json.write_text(json.dumps(row, indent=1) + "\n")


if __name__ == "__main__":
    main()
