"""Column files changed under an open store by another process (helper attacks73).

Each case runs in a fresh interpreter (a crash there is an exit by signal, reported as
``rc=-7`` for SIGBUS): it opens a client on a copy of a small index, finds and reads (the
maps touched), has *another process* truncate, grow, rewrite, replace or remove one file
of the generation's data folder, then finds, gets, reads and counts again, with the client
open or after ``close()`` (the let-go generation mapped again at the next use).

    export PYTHONPATH=$PWD/retrieval:$PWD/integrations OPENBLAS_NUM_THREADS=1
    python bench/probe_mapped_files.py                      # every file x change x phase
    python bench/probe_mapped_files.py --files uris.bin,vectors.bin --phases open

What a row says: ``rc`` (0, or the signal), then per step the answer's size or the treehop
error's class; ``RAW`` marks an exception that is no ``TreehopError``. Found (f7f9233): a
truncated ``uris.bin`` under an open store kills the reader with SIGBUS (the URIs are read
through the map in every ``vector_reads`` mode), and ``uris.bin`` rewritten in place with
bytes that are not UTF-8 made ``find`` / ``read`` raise a raw ``UnicodeDecodeError`` (now
``IndexCorruptError``). See bench/README.md, "Attacks, stop 63 (helper attacks73)". Since
helper leftovers64b every store call first checks the mapped files' sizes: a truncated
file is ``IndexCorruptError`` (rc=0); a cut during a call can still be SIGBUS.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "retrieval"), str(ROOT / "tests")]

CASE = r"""
import os, subprocess, sys
sys.path[:0] = [sys.argv[5] + "/retrieval", sys.argv[5] + "/tests"]
from treehop import Treehop
from treehop.errors import TreehopError
from treehop_test_doubles import BagOfWordsEmbedder
idx, action, fname, phase = sys.argv[1:5]
th = Treehop(idx, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0)
th.find("apples pears notes")
th.read("viking://resources/s/f3.md")
store = th.store
if phase == "closed":
    th.close()
    th = Treehop(idx, store=store, embedder=BagOfWordsEmbedder(), tagger=None)
data = sorted(p for p in os.listdir(idx) if p.startswith("data-"))[-1]
f = os.path.join(idx, data, fname)
size = os.path.getsize(f)
change = {
    "truncate0": f"open({f!r}, 'r+b').truncate(0)",
    "truncatehalf": f"open({f!r}, 'r+b').truncate({size // 2})",
    "grow": f"open({f!r}, 'ab').write(b'x' * 100000)",
    "rewrite": f"open({f!r}, 'r+b').write(b'\\xff' * {size})",
    "replace": f"import os; open({f!r} + '.n', 'wb').write(bytes({size})); "
    f"os.replace({f!r} + '.n', {f!r})",
    "unlink": f"import os; os.unlink({f!r})",
}[action]
subprocess.run([sys.executable, "-c", change], check=True)
steps = {
    "find": lambda: len(th.find("apples pears notes").resources),
    "get": lambda: sum(
        n is not None
        for n in th.store.get([f"viking://resources/s/f{i}.md" for i in range(30)])
    ),
    "read": lambda: len(th.read("viking://resources/s/f3.md")),
    "len": lambda: len(th.store),
}
out = []
for name, step in steps.items():
    try:
        out.append(f"{name}={step()}")
    except TreehopError as exc:
        out.append(f"{name}:{type(exc).__name__}")
    except Exception as exc:
        out.append(f"{name}:RAW {type(exc).__name__}")
print("OUT", " ".join(out))
"""

ACTIONS = ("truncate0", "truncatehalf", "grow", "rewrite", "replace", "unlink")


def _template(root: Path) -> Path:
    from treehop import Treehop

    from treehop_test_doubles import BagOfWordsEmbedder

    src = root / "src" / "s"
    src.mkdir(parents=True)
    for i in range(30):
        (src / f"f{i}.md").write_text(f"# F{i}\n\n" + f"apples pears notes {i} " * 200)
    index = root / "template"
    with Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(src, target_uri="viking://resources/s")
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", help="comma-separated data file names (default: all)")
    ap.add_argument("--actions", default=",".join(ACTIONS))
    ap.add_argument("--phases", default="open,closed")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="probe-mapped-"))
    try:
        template = _template(root)
        data = sorted(p for p in template.iterdir() if p.name.startswith("data-"))[-1]
        files = args.files.split(",") if args.files else sorted(os.listdir(data))
        for fname in files:
            for action in args.actions.split(","):
                for phase in args.phases.split(","):
                    index = root / f"{fname}-{action}-{phase}"
                    shutil.copytree(template, index)
                    got = subprocess.run(
                        [sys.executable, "-c", CASE, str(index), action, fname, phase, str(ROOT)],
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                    line = [x for x in got.stdout.splitlines() if x.startswith("OUT")]
                    shown = line[0][4:] if line else got.stderr.strip().splitlines()[-1:]
                    print(f"{fname:16} {action:13} {phase:6} rc={got.returncode} {shown}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
