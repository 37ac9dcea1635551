"""Paired CPU A/B of small writes, a directory ingest and a find between two source trees:
what the store-wide write lock costs a user (helper perf60).

    OPENBLAS_NUM_THREADS=1 python bench/bench_write_lock_ab.py OLD_CHECKOUT NEW_CHECKOUT \\
        [--calls 40] [--rounds 3] [--files 300] [--dirs 3] [--kinds text,message,...]

One worker process per checkout (its own ``retrieval/``, run from its root) holds two
``AsyncTreehop`` clients with the tests' bag-of-words embedder (the write path without a
model) and the default tagger: one in memory, one on disk (a fresh temporary folder). Then,
alternately (the order flipping every call), the same calls on each store, ``--calls`` of
each small kind a round:

- ``text``: ``add_resource`` of a one-line text at a new URI (the per-write fixed cost: the
  store's write lock is taken and released once per call);
- ``message``: ``add_messages`` of one message to one session of one conversation;
- ``find``: ``find(limit=10)`` over what the two kinds above wrote (reads take no lock);
  its answer (URIs and scores) is hashed and must be equal in both trees;
- ``records``: ``add_records`` of 250 one-line records under a new folder, in parts of 100
  (three writes, each holding the store's lock), ``--dirs`` of them a round;
- ``dir``: ``add_resource`` of a folder of ``--files`` small Markdown files to a new target,
  ``--dirs`` of them a round (three commit batches: on disk the lock is let go between them).

Each worker reports the call's process CPU time (the store's worker threads included).
Round 0 warms; the medians are over the other rounds. Why CPU and pairs: wall time on the
shared 2-core machine moves 2x between runs of one checkout.

``--holds N`` (no A/B, run under each tree's ``PYTHONPATH``): the per-write fixed cost
itself, ``N`` empty ``async with client.writer.lock`` per store, best of 5 (0151fe9's lock
is the client's ``asyncio.Lock`` alone).

``--loop N KIND STORE`` (no A/B): N calls of one kind on one store in this process (run it
under ``strace -c -f`` per tree to count the system calls a write makes).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import ab_workers as abw

RECORDS = 250
"""Records in one ``records`` call (``add_records`` in parts of 100, each committed)."""
STORES = ("mem", "disk")


async def _clients(d: str, files: int) -> tuple[dict[str, Any], Path]:
    sys.path.insert(0, "tests")
    from treehop import AsyncTreehop

    from treehop_test_doubles import BagOfWordsEmbedder

    clients = {
        "mem": AsyncTreehop(embedder=BagOfWordsEmbedder()),
        "disk": AsyncTreehop(Path(d) / "idx", embedder=BagOfWordsEmbedder()),
    }
    folder = Path(d) / "folder"
    for j in range(files):
        sub = folder / f"part{j % 6}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"note{j}.md").write_text(
            f"# Note {j}\n\nThe valve {j % 13} of pump {j % 7} was checked on day {j % 29}; "
            f"pressure {j % 5} bar, operator {j % 11}.\n"
        )
    return clients, folder


async def _call(c: Any, kind: str, i: int, folder: Path) -> str:
    """One call; what it returned that must be equal in both trees (as text)."""
    if kind == "text":
        res = await c.add_resource(
            f"Entry {i}: the pump {i % 7} runs at {i % 5} bar on day {i % 29}.",
            target_uri=f"viking://resources/tiny/e{i}.md",
            is_text=True,
        )
        return str(res.replaced)
    if kind == "message":
        res = await c.add_messages(
            [{"role": "user", "content": f"message {i}: I checked pump {i % 7} today"}],
            conversation_id="c1",
            session_id="s1",
        )
        return res.turn_uris[-1].rsplit("/", 1)[-1]
    if kind == "find":
        found = await c.find(f"pump {i % 7} pressure day {i % 29}", limit=10)
        h = hashlib.sha256(
            repr([(r.uri, round(float(r.score), 9)) for r in found.contexts()]).encode()
        ).hexdigest()
        return h[:12]
    if kind == "dir":
        res = await c.add_resource(folder, target_uri=f"viking://resources/dirs/d{i}")
        return f"{res.files}/{res.chunks}/{res.embedded}/{res.directories}"
    if kind == "records":
        from treehop.ingest.records import aadd_records

        uris = await aadd_records(
            c,
            [
                (
                    f"Record {j} of batch {i}: valve {j % 13}, pump {j % 7}, day {j % 29}.",
                    {"source": f"batch{i}/src{j % 20}/r{j}.txt", "n": j},
                )
                for j in range(RECORDS)
            ],
            batch_size=100,
        )
        return str(len(uris))
    raise ValueError(kind)


def worker(files: int) -> None:
    """Answer ``<call index> <kind> <store>`` lines with ``<CPU ms> <result>``."""

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="perf60_wl_") as d:
            clients, folder = await _clients(d, files)
            print("ready", flush=True)
            for line in sys.stdin:
                i, kind, store = line.split()
                t0 = time.process_time()
                out = await _call(clients[store], kind, int(i), folder)
                print(f"{(time.process_time() - t0) * 1e3} {out}", flush=True)
            for c in clients.values():
                await c.close()

    asyncio.run(main())


def loop(n: int, kind: str, store: str, files: int) -> None:
    """``n`` calls of ``kind`` on ``store`` in this process (for ``strace -c -f``)."""

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="perf60_loop_") as d:
            clients, folder = await _clients(d, files)
            c = clients[store]
            await _call(c, kind, 0, folder)  # (warm: the store's first write opens files)
            t0 = time.process_time()
            for i in range(1, n + 1):
                await _call(c, kind, i, folder)
            print(f"{kind} {store}: {(time.process_time() - t0) * 1e3 / n:.3f} ms CPU a call")
            for cl in clients.values():
                await cl.close()

    asyncio.run(main())


def holds(n: int) -> None:
    """``n`` empty holds of each store's client write lock, best of 5, in us a hold."""

    async def main() -> None:
        with tempfile.TemporaryDirectory(prefix="perf60_holds_") as d:
            clients, _ = await _clients(d, 0)
            await _call(clients["disk"], "text", 0, Path(d))  # (the index made on disk)
            for store, c in clients.items():
                best = float("inf")
                for _ in range(5):
                    t0 = time.perf_counter()
                    for _ in range(n):
                        async with c.writer.lock:
                            pass
                    best = min(best, time.perf_counter() - t0)
                print(f"{store:5s} {best * 1e6 / n:8.1f} us a hold", flush=True)
            for c in clients.values():
                await c.close()

    asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--dirs", type=int, default=3)
    ap.add_argument("--kinds", default="text,message,find,records,dir")
    ap.add_argument("--stores", default="mem,disk")
    a = ap.parse_args()
    kinds = a.kinds.split(",")
    stores = a.stores.split(",")
    procs = abw.start_workers(__file__, {"old": a.old, "new": a.new}, "--worker", str(a.files))
    assert set(abw.first_lines(procs).values()) == {"ready"}
    t: dict[tuple[str, str, str], list[float]] = {}
    n = 0
    for r in range(a.rounds):
        for kind in kinds:
            for store in stores:
                for i in range(a.dirs if kind in ("dir", "records") else a.calls):
                    got = {}
                    for name in abw.turns(i + r):
                        ms, out = abw.ask(procs[name], f"{n} {kind} {store}")
                        got[name] = out
                        if r > 0:
                            t.setdefault((name, kind, store), []).append(float(ms))
                    assert got["old"] == got["new"], (kind, store, got)
                    n += 1
    for kind in kinds:
        for store in stores:
            old, new = t[("old", kind, store)], t[("new", kind, store)]
            ratio = statistics.median(y / x for x, y in zip(old, new, strict=True))
            mo, mn = statistics.median(old), statistics.median(new)
            print(
                f"{kind:8s} {store:5s} n={len(old):3d} CPU p50 old {mo:8.2f} ms  new {mn:8.2f} ms"
                f"  new/old {mn / mo:.3f}  median per-call ratio {ratio:.3f}  "
                f"sum new/old {sum(new) / sum(old):.3f}",
                flush=True,
            )
    abw.stop_workers(procs)


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker(int(sys.argv[sys.argv.index("--worker") + 1]))
    elif "--holds" in sys.argv:
        holds(int(sys.argv[sys.argv.index("--holds") + 1]))
    elif "--loop" in sys.argv:
        k = sys.argv.index("--loop")
        n, kind, store = sys.argv[k + 1 : k + 4]
        files = int(sys.argv[sys.argv.index("--files") + 1]) if "--files" in sys.argv else 300
        loop(int(n), kind, store, files)
    else:
        main()
