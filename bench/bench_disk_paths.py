"""Paired CPU A/B of the on-disk store's safety paths between two source trees: a write-lock
hold, reading a tree's files below its top, a directory ingest, a store's open and find
(helper perf61).

    OPENBLAS_NUM_THREADS=1 python bench/bench_disk_paths.py OLD_CHECKOUT NEW_CHECKOUT \\
        [--rounds 8] [--files 2000] [--kinds holds,walk,ingest,find] [--base DIR]

One worker process per checkout (its own ``retrieval/``, run from its root; the tests'
bag-of-words embedder from this checkout's ``tests/``), asked in turn, the order flipping
every call; round 0 warms, the medians are over the other rounds. Each answer carries a
hash of what the call returned, which must be equal in both trees. Kinds:

- ``holds``: 2,000 empty holds of ``aholding_store`` on a committed index on disk (what
  every write takes once: the in-process gate, the turnstile ``locks/writes-turn``, the
  file lock ``locks/writes``, ``refresh``), process CPU per hold in us;
- ``walk``: ``loaders.walk`` of a tree of ``--files`` small Markdown files, three folders
  deep (4 x 5 x 5 folders), reading every file through its folders' descriptors
  (``O_NOFOLLOW`` at each level, helper attacks67), ms;
- ``ingest``: ``add_resource`` of that tree on a new client in memory (scan, read, chunk,
  embed with the bag-of-words embedder, write), ms;
- ``find``: open a new client on an index on disk holding that tree (about 2,200 nodes),
  ``find`` of one question (limit 10) and ``read`` of each result's text, ms; and how many
  files the store opened below a folder through ``loaders`` (none: the store keeps node
  texts in its own column files, so the descriptor walk is not on this path);
- ``write1`` (helper perf63): ``add_resource`` of one small text on a client kept open on an
  index on disk of a few documents (each call its own ``target_uri``: the index grows by one
  document a call), ms per write, :data:`WRITES` writes a call;
- ``smallfind`` (helper perf63): ``find`` (limit 5) on a client kept open on an index on
  disk of 12 small documents, ms per find, :data:`SMALL_FINDS` finds a call;
- ``findmany`` (helper perf63): ``find_many`` of :data:`MANY` questions (limit 10) on a
  client kept open on the 2,200-node index, ms a call.

Why CPU and pairs: wall time on the shared 2-core machine moves 2x between runs.

``--handover`` (no A/B, run under each tree's ``PYTHONPATH``): two *processes* writing to
one index, each holding the store's write lock ``--n`` times around ``--work`` ms of work;
prints the gap between one process's release and the other's take (median, p90, max, from
``time.monotonic``, one clock for both processes on Linux) and ms per hold. And the CPU a
waiting process spends while the other holds the lock for 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ab_workers as abw

HERE = Path(__file__).resolve().parent
HOLDS = 2000
WRITES = 10
SMALL_FINDS = 40
QUESTIONS = [f"pressure of pump {j % 7} on day {j % 29}, valve {j % 13}" for j in range(0, 400, 17)]
MANY = len(QUESTIONS)


def make_tree(root: Path, files: int) -> None:
    """``files`` Markdown files in 4 x 5 x 5 folders (three deep), a README in each top one."""
    if (root / ".done").exists():
        return
    for j in range(files):
        sub = root / f"area{j % 4}" / f"part{j % 5}" / f"unit{(j // 20) % 5}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note{j:05d}.md").write_text(
            f"# Note {j}\n\nThe valve {j % 13} of pump {j % 7} was checked on day {j % 29}; "
            f"pressure {j % 5} bar, operator {j % 11}.\n"
        )
    for a in range(4):
        (root / f"area{a}" / "README.md").write_text(f"# Area {a}\n\nPumps of area {a}.\n")
    (root / ".done").write_text("")


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:12]


class Worker:
    def __init__(self, tree: Path, index: Path, tmp: Path) -> None:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from treehop_test_doubles import BagOfWordsEmbedder

        self.embedder = BagOfWordsEmbedder
        self.tree, self.index, self.tmp = tree, index, tmp
        self.loop = asyncio.new_event_loop()
        self.n = 0
        self.kept: dict[str, Any] = {}

    def _kept(self, name: str, path: Path, docs: int) -> Any:
        """A client kept open on ``path`` (made with ``docs`` small documents if new)."""
        c = self.kept.get(name)
        if c is None:
            from treehop import AsyncTreehop

            c = self.kept[name] = AsyncTreehop(path, embedder=self.embedder())

            async def fill() -> None:
                for j in range(docs):
                    await c.add_resource(
                        f"# Pump {j}\n\nPump {j} runs at {j % 5} bar; valve {j % 3} was "
                        f"checked on day {j}.\n\n## Service\n\nOperator {j % 4} serviced it.",
                        target_uri=f"viking://resources/pumps/p{j}",
                        is_text=True,
                    )

            if docs:
                self.loop.run_until_complete(fill())
        return c

    def write1(self) -> str:
        c = self._kept("write1", self.tmp / f"{os.getpid()}-write1", 3)

        async def main() -> str:
            got = []
            for _ in range(WRITES):
                self.n += 1
                r = await c.add_resource(
                    f"# Valve {self.n}\n\nValve {self.n % 9} of pump {self.n % 7} was "
                    f"replaced on day {self.n % 29}.",
                    target_uri=f"viking://resources/valves/v{self.n}",
                    is_text=True,
                )
                got.append([r.files, r.chunks, r.embedded])
            return _digest(got)

        t0 = time.process_time()
        out = self.loop.run_until_complete(main())
        return f"{(time.process_time() - t0) / WRITES * 1e3:.4f}:{out}"

    def smallfind(self) -> str:
        c = self._kept("smallfind", self.tmp / f"{os.getpid()}-smallfind", 12)

        async def main() -> str:
            got = []
            for j in range(SMALL_FINDS):
                res = await c.find(f"valve {j % 3} of pump {j % 12} on day {j}", limit=5)
                got.append([(m.uri, round(m.score, 6)) for m in res.resources])
            return _digest(got)

        t0 = time.process_time()
        out = self.loop.run_until_complete(main())
        return f"{(time.process_time() - t0) / SMALL_FINDS * 1e3:.4f}:{out}"

    def findmany(self) -> str:
        c = self._kept("findmany", self.index, 0)

        async def main() -> str:
            res = await c.find_many(QUESTIONS, limit=10)
            return _digest([[(m.uri, round(m.score, 6)) for m in r.resources] for r in res])

        return self.loop.run_until_complete(main())

    def run(self, kind: str) -> tuple[float, str]:
        t0 = time.process_time()
        out = getattr(self, kind)()
        return (time.process_time() - t0) * 1e3, out

    def holds(self) -> str:
        from treehop.stores._filelock import aholding_store
        from treehop.stores.embedded import EmbeddedStore

        store = EmbeddedStore(self.index)

        async def main() -> None:
            for _ in range(HOLDS):
                async with aholding_store(store):
                    pass

        try:
            t0 = time.process_time()
            self.loop.run_until_complete(main())
            us = (time.process_time() - t0) / HOLDS * 1e6
        finally:
            store.close()
        return f"{us:.2f}"

    def walk(self) -> str:
        from treehop.ingest import loaders

        rep = loaders.walk(self.tree)
        return _digest([(f.relpath, f.text) for f in rep.files] + [rep.skipped_unreadable])

    def ingest(self) -> str:
        from treehop import AsyncTreehop

        async def main() -> str:
            c = AsyncTreehop(embedder=self.embedder())
            try:
                r = await c.add_resource(str(self.tree))
                return _digest([r.files, r.chunks, r.embedded, r.directories])
            finally:
                await c.close()

        return self.loop.run_until_complete(main())

    def find(self) -> str:
        from treehop import AsyncTreehop
        from treehop.ingest import loaders

        opened = [0]
        real = loaders._read_bytes

        def counted(*a: Any, **k: Any) -> bytes:
            opened[0] += 1
            return real(*a, **k)

        loaders._read_bytes = counted  # type: ignore[assignment]

        async def main() -> str:
            c = AsyncTreehop(self.index, embedder=self.embedder())
            try:
                res = await c.find("pressure of pump 3 on day 7", limit=10)
                texts = [await c.read(m.uri) for m in res.resources]
                return _digest([[m.uri for m in res.resources], texts])
            finally:
                await c.close()

        try:
            out = self.loop.run_until_complete(main())
        finally:
            loaders._read_bytes = real  # type: ignore[assignment]
        return f"{out}:{opened[0]}"


PER_CALL = ("write1", "smallfind")


def worker(tree: str, index: str, tmp: str) -> None:
    w = Worker(Path(tree), Path(index), Path(tmp))
    print("ready", flush=True)
    for line in sys.stdin:
        kind = line.split()[1]
        ms, out = w.run(kind)
        print(f"{ms:.3f} {out}", flush=True)


def _build_index(tree: Path, index: Path) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from treehop import AsyncTreehop

    from treehop_test_doubles import BagOfWordsEmbedder

    async def main() -> None:
        c = AsyncTreehop(index, embedder=BagOfWordsEmbedder())
        await c.add_resource(str(tree))
        await c.close()

    asyncio.run(main())


# -- two processes handing the lock over ------------------------------------------------


def _holder(index: str, n: int, work: float, ready: Any, start: Any, out: Any) -> None:
    from treehop.stores._filelock import aholding_store
    from treehop.stores.embedded import EmbeddedStore

    store = EmbeddedStore(index, lock_timeout=60)
    spans: list[tuple[float, float]] = []

    async def main() -> None:
        ready.release()
        start.wait()
        for _ in range(n):
            async with aholding_store(store):
                t = time.monotonic()
                time.sleep(work)  # (the write's work, in this process)
                spans.append((t, time.monotonic()))

    asyncio.run(main())
    store.close()
    out.put(spans)


def _waiter_cpu(index: str, ready: Any, start: Any, out: Any) -> None:
    from treehop.stores._filelock import aholding_store
    from treehop.stores.embedded import EmbeddedStore

    store = EmbeddedStore(index, lock_timeout=60)

    async def main() -> None:
        ready.release()
        start.wait()
        t0, c0 = time.monotonic(), time.process_time()
        async with aholding_store(store):
            pass
        out.put((time.monotonic() - t0, time.process_time() - c0))

    asyncio.run(main())
    store.close()


def handover(n: int, works: list[float]) -> None:
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="perf61_handover_") as d:
        index = os.path.join(d, "idx")
        from treehop.stores.embedded import EmbeddedStore

        EmbeddedStore(index).close()
        for work in works:
            ready, start, out = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
            args = (index, n, work / 1e3, ready, start, out)
            ps = [ctx.Process(target=_holder, args=args) for _ in "ab"]
            for p in ps:
                p.start()
            for _ in ps:
                ready.acquire()  # (both imported and at the start line)
            start.set()
            spans = [(*s, k) for k in range(2) for s in out.get()]
            for p in ps:
                p.join()
            spans.sort()
            gaps = [(b[0] - a[1]) * 1e3 for a, b in itertools.pairwise(spans) if a[2] != b[2]]
            total = spans[-1][1] - spans[0][0]
            q = statistics.quantiles(gaps, n=10)
            print(
                f"2 processes, {work:g} ms holds: {len(gaps)} hand-overs, gap median "
                f"{statistics.median(gaps):.3f} ms, p90 {q[-1]:.3f}, max {max(gaps):.3f}; "
                f"{total / len(spans) * 1e3:.2f} ms a hold",
                flush=True,
            )
        # the CPU a waiting process spends while another process holds the lock for 2 s
        from treehop.stores._filelock import WriterLock

        hold = WriterLock(Path(index) / "locks" / "writes")
        hold.acquire(1)
        ready, start, out = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
        p = ctx.Process(target=_waiter_cpu, args=(index, ready, start, out))
        p.start()
        ready.acquire()
        start.set()
        time.sleep(2.0)
        hold.release()
        wall, cpu = out.get()
        p.join()
        print(f"a waiter across processes, 2 s held: waited {wall:.3f} s, CPU {cpu * 1e3:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--kinds", default="holds,walk,ingest,find")
    ap.add_argument(
        "--base", default=None, help="folder of the tree and index (default: in the temp dir)"
    )
    a = ap.parse_args()
    kinds = a.kinds.split(",")
    base = Path(a.base or Path(tempfile.gettempdir()) / f"perf61_paths_{a.files}")
    tree = base / "tree"
    make_tree(tree, a.files)
    index = base / "idx"
    if not (index / "CURRENT").exists():
        _build_index(tree, index)
    with tempfile.TemporaryDirectory(prefix="perf61_") as tmp:
        roots = {"old": a.old, "new": a.new}
        procs = abw.start_workers(__file__, roots, str(tree), str(index), tmp)
        assert set(abw.first_lines(procs).values()) == {"ready"}
        t: dict[tuple[str, str], list[float]] = {}
        n = 0
        for r in range(a.rounds):
            for kind in kinds:
                got = {}
                for name in abw.turns(n):
                    ms, out = abw.ask(procs[name], f"{n} {kind}")
                    got[name] = out
                    value = float(out) if kind == "holds" else float(ms)
                    if kind in PER_CALL:  # (the worker's own per-call CPU, hash after ':')
                        value = float(out.split(":")[0])
                        out = got[name] = out.split(":")[1]
                    if r > 0:
                        t.setdefault((name, kind), []).append(value)
                if kind != "holds":
                    assert got["old"].split(":")[0] == got["new"].split(":")[0], (kind, got)
                    if r == 0:
                        print(f"{kind}: answers {got}", flush=True)
                n += 1
        for kind in kinds:
            old, new = t[("old", kind)], t[("new", kind)]
            ratio = statistics.median(y / x for x, y in zip(old, new, strict=True))
            unit = (
                "us/hold" if kind == "holds" else "ms CPU" + (" each" if kind in PER_CALL else "")
            )
            print(
                f"{kind:7s} n={len(old):2d} p50 old {statistics.median(old):8.2f}  new "
                f"{statistics.median(new):8.2f} {unit}  median per-pair new/old {ratio:.3f}",
                flush=True,
            )
        abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv or (len(sys.argv) > 3 and sys.argv[1:3] == ["x", "x"]):
        worker(*sys.argv[3:6])
    elif "--handover" in sys.argv:
        hp = argparse.ArgumentParser()
        hp.add_argument("--handover", action="store_true")
        hp.add_argument("--n", type=int, default=200)
        hp.add_argument("--work", default="2,20")
        h = hp.parse_args()
        handover(h.n, [float(w) for w in h.work.split(",")])
    else:
        main()
