"""Paired CPU A/B of a folder's scan and ingest and of a sessions listing, between two trees.

    OPENBLAS_NUM_THREADS=1 python bench/bench_folder_sessions_ab.py OLD_CHECKOUT NEW_CHECKOUT \\
        --work /tmp/ab [--files 3000] [--sessions 1500] [--rounds 5] [--tasks scan,names,...]

Tasks (each timed as process CPU in one worker process per checkout, its own ``retrieval/``,
fed the same task alternately, the order flipping every round; round 0 warms):

- ``names``: ``ingest.loaders._addressable`` over every file and folder name of the folder,
  100 times (the check a folder walk makes of each name that is not printable ASCII);
- ``scan``: ``ingest.loaders.scan_columns`` of the folder (names checked, one lstat a file);
- ``ingest``: ``Treehop(fresh index, bag-of-words embedder).add_resource(folder)``, the
  stores' nodes hashed (the two trees must write the same nodes);
- ``list-cold`` / ``list-warm``: a fresh ``Treehop`` on an index holding ``--sessions``
  sessions of each of two users, ``list_sessions()`` of one user (blobs read and parsed),
  then the same call again (the cached sessions); ``--users alice`` builds an index of
  alice's sessions alone.

The folder (``--files`` files, ~90% of the names non-ASCII: accented Latin, Cyrillic, CJK,
emoji with a joiner, a no-break space; a few with a bidi override or a zero-width space,
which a folder walk skips) and the sessions' index are built once under ``--work`` by the
first checkout. Why paired CPU: wall-clock on the shared 2-core machine swings 2x between
runs of one tree (helper perf57); the two workers see the same load.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ab_workers as abw

STEMS = [
    "café_notes",
    "résumé",
    "naïve_bayes",
    "Straße",
    "Привет_мир",
    "отчёт",
    "日本語のメモ",
    "数据说明",
    "한국어",
    "👩\u200d💻_dev",
    "no\u00a0break",
    "plain_ascii",
    "Ελληνικά",
    "עברית",
    "x\u202ebad",  # a bidi override: skipped by a walk
    "zero\u200bwidth",  # a zero-width space: skipped by a walk
]
DIRS = ["docs", "données", "文档", "ноты", "mixed dir", "ñandú"]


def build_folder(folder: Path, n: int) -> None:
    for i in range(n):
        d = folder / DIRS[i % len(DIRS)] / f"part{(i // len(DIRS)) % 8}"
        d.mkdir(parents=True, exist_ok=True)
        stem = STEMS[i % len(STEMS)]
        words = " ".join(STEMS[(i * 7 + k) % len(STEMS)][:6] for k in range(12))
        (d / f"{stem}_{i}.txt").write_text(
            f"File {i} about {stem}.\n\nIt holds {words} and the number {i * 31 % 997}.\n",
            encoding="utf-8",
        )


def build_sessions(index: Path, n: int, users: tuple[str, ...] = ("alice", "bob")) -> None:
    from treehop import Treehop

    sys.path.insert(0, str(Path("tests").resolve()))
    from treehop_test_doubles import BagOfWordsEmbedder

    for user in users:
        c = Treehop(index, embedder=BagOfWordsEmbedder(), tagger=None, user=user)
        s = c.aio.sessions
        for i in range(n):
            sid = s.create_session()
            s.add_message(sid, "user", f"question {i} from {user} about the index")
            s.add_message(sid, "assistant", f"answer {i} to {user}: see the docs")
        c.close()


def worker(work: Path, sessions_idx: str) -> None:
    """Answer task names with ``<CPU ms> <result digest>``."""
    sys.path.insert(0, str(Path("tests").resolve()))
    from treehop import Treehop
    from treehop.ingest import loaders

    from treehop_test_doubles import BagOfWordsEmbedder

    folder = work / "folder"
    names = [p.name for p in folder.rglob("*")]
    print("ready", flush=True)
    for line in sys.stdin:
        task = line.strip()
        out = ""
        t0 = time.process_time()
        if task == "names":
            for _ in range(100):
                kept = sum(map(loaders._addressable, names))
            out = str(kept)
        elif task == "scan":
            found, report = loaders.scan_columns(folder)
            out = hashlib.sha256(
                "\n".join(found.rels + report.skipped_names + report.skipped_dirs).encode()
            ).hexdigest()[:12]
        elif task == "ingest":
            with tempfile.TemporaryDirectory(dir=work) as d:
                c = Treehop(Path(d) / "idx", embedder=BagOfWordsEmbedder())
                r = c.add_resource(str(folder), target_uri="viking://resources/folder")
                dt = time.process_time() - t0
                h = hashlib.sha256(f"{r.files} {r.skipped}".encode())
                for n in sorted(c.store.iter_nodes(None), key=lambda n: n.uri):
                    h.update(n.uri.encode())
                    h.update((n.abstract or "").encode())
                    h.update(" ".join(n.tags).encode())
                c.close()
            print(f"{dt * 1e3} {h.hexdigest()[:12]}", flush=True)
            continue
        elif task in ("list-cold", "list-warm"):
            c = Treehop(
                work / sessions_idx, embedder=BagOfWordsEmbedder(), tagger=None, user="alice"
            )
            s = c.aio.sessions
            if task == "list-warm":
                s.list_sessions()
                t0 = time.process_time()
            got = s.list_sessions()
            dt = time.process_time() - t0
            out = hashlib.sha256("".join(x.session_id for x in got).encode()).hexdigest()[:12]
            c.close()
            print(f"{dt * 1e3} {out}", flush=True)
            continue
        print(f"{(time.process_time() - t0) * 1e3} {out}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--files", type=int, default=3000)
    ap.add_argument("--sessions", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tasks", default="names,scan,ingest,list-cold,list-warm")
    ap.add_argument(
        "--users",
        default="alice,bob",
        help="whose --sessions sessions the listed index holds (alice's are listed)",
    )
    a = ap.parse_args()
    idx_name = "sessions-idx" if a.users == "alice,bob" else f"sessions-idx-{a.users}"
    env0 = dict(os.environ)
    work = a.work.resolve()
    if not (work / "folder").exists():
        build_folder(work / "folder", a.files)
    if not (work / idx_name).exists():
        env = dict(env0, PYTHONPATH=f"{a.old}/retrieval")
        code = (
            "import sys; sys.argv=['x']; sys.path.insert(0, 'bench'); "
            "import bench_folder_sessions_ab as b; from pathlib import Path; "
            f"b.build_sessions(Path({str(work / idx_name)!r}), {a.sessions}, "
            f"{tuple(a.users.split(','))!r})"
        )
        subprocess.run([sys.executable, "-c", code], cwd=a.new, env=env, check=True)
    procs = abw.start_workers(
        __file__, {"old": a.old, "new": a.new}, "--work", str(work), "--worker", idx_name
    )
    assert set(abw.first_lines(procs).values()) == {"ready"}
    for task in a.tasks.split(","):
        t: dict[str, list[float]] = {"old": [], "new": []}
        digests: set[str] = set()
        for r in range(a.rounds + 1):
            for name in abw.turns(r):
                ms, digest = abw.ask(procs[name], task)
                digests.add(digest)
                if r > 0:
                    t[name].append(float(ms))
        mo, mn = statistics.median(t["old"]), statistics.median(t["new"])
        per = statistics.median(y / x for x, y in zip(t["old"], t["new"], strict=True))
        same = "same result" if len(digests) == 1 else f"RESULTS DIFFER {sorted(digests)}"
        print(
            f"{task:10s} n={len(t['old'])} CPU p50 old {mo:.2f} ms  new {mn:.2f} ms  "
            f"new/old {mn / mo:.3f}  per-pair {per:.3f}  ({same})",
            flush=True,
        )
    abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(
            Path(sys.argv[sys.argv.index("--work") + 1]),
            sys.argv[sys.argv.index("--worker") + 1],
        )
    else:
        main()
