"""``reader_processes="auto"`` (the clients' default): ``find_many`` batches split over reader
processes started at the first large batch, single finds untouched, every worker gone at
``close()`` and at the exit of a script that never closed its client. Real processes, real
pipes, a real saved index."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from treehop import Treehop
from treehop.client_readers import (
    AUTO_READERS_MAX,
    MIN_SPLIT_FIND_MANY,
    FreeCores,
    split_pays,
)

from treehop_test_doubles import SAMPLE_QUERIES, BagOfWordsEmbedder, saved_sample_index

BATCH = SAMPLE_QUERIES[:16]


def _exact(result: object) -> list[tuple[str, float, str, str]]:
    return [
        (m.uri, m.score, str(m.found_by), m.abstract)
        for m in result.resources  # type: ignore[attr-defined]
    ]


def _cores() -> int:
    return len(os.sched_getaffinity(0))


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_sample_index(tmp_path_factory.mktemp("auto") / "idx")


def test_the_default_splits_batches_and_leaves_single_finds_alone(index: Path) -> None:
    with Treehop(index, embedder=BagOfWordsEmbedder()) as plain:
        want = [_exact(plain.find(q, limit=5)) for q in BATCH]
    th = Treehop(index, embedder=BagOfWordsEmbedder())
    try:
        spare = min(_cores() - 1, AUTO_READERS_MAX)
        assert th._pool.batches_only and th._pool.processes == spare
        # single finds, and a batch below the split size, start nothing
        assert [_exact(th.find(q, limit=5)) for q in BATCH] == want
        assert _exact(th.find_many(BATCH[: MIN_SPLIT_FIND_MANY - 1], limit=5)[0]) == want[0]
        assert th._readers is None and th._pool._wanted is None  # (no start even asked)
        # the first large batch runs here (its workers start aside), then batches split
        assert [_exact(r) for r in th.find_many(BATCH, limit=5)] == want
        if spare == 0:  # one core: nothing ever starts, every batch runs here
            assert not th._wait_readers(1.0) and th._readers is None
            return
        assert th._wait_readers()
        th._pool.free_cores = None  # (split whatever the machine's load: tested below)
        pool = th._readers[1]  # type: ignore[index]
        pids = [w.process.pid for w in pool._workers]
        assert len(pids) == spare
        for _ in range(3):
            assert [_exact(r) for r in th.find_many(BATCH, limit=5)] == want
        served = sum(pool.served.values())
        assert served >= 3  # each split batch gave a worker its part
        assert [_exact(th.find(q, limit=5)) for q in BATCH[:4]] == want[:4]
        assert sum(pool.served.values()) == served  # a lone find never goes there
        assert th.aio._pool.processes == 0  # (the async client inside keeps no pool)
        # the adapters' batches: the integrations' awaited batch and LangChain's batch /
        # abatch over the default client are split too, with a lone find's answers
        import asyncio

        from langchain_treehop import TreehopRetriever
        from treehop import integration_kit as kit

        before = sum(pool.served.values())
        many = asyncio.run(kit.afind_many(th, BATCH, limit=5))
        assert [_exact(r) for r in many] == want
        assert sum(pool.served.values()) == before + spare  # (a part per worker)
        retriever = TreehopRetriever(client=th, k=5)
        alone = [retriever.invoke(q) for q in BATCH]
        before = sum(pool.served.values())
        assert retriever.batch(BATCH) == alone and sum(map(bool, alone)) > len(BATCH) // 2
        assert asyncio.run(retriever.abatch(BATCH)) == alone
        assert sum(pool.served.values()) == before + 2 * spare
    finally:
        th.close()
    if spare:
        assert all(_gone(p) for p in pids if p is not None)


async def test_the_async_default_splits_awaited_batches(index: Path) -> None:
    from treehop import AsyncTreehop

    async with AsyncTreehop(index, embedder=BagOfWordsEmbedder()) as plain:
        want = [_exact(await plain.find(q, limit=5)) for q in BATCH]
    a = AsyncTreehop(index, embedder=BagOfWordsEmbedder())
    try:
        assert [_exact(r) for r in await a.find_many(BATCH, limit=5)] == want
        if a._pool.processes == 0:
            assert a._pool.readers is None
            return
        assert a._pool.wait()
        a._pool.free_cores = None  # (split whatever the machine's load)
        pool = a._pool.readers[1]  # type: ignore[index]
        assert [_exact(r) for r in await a.find_many(BATCH, limit=5)] == want
        assert sum(pool.served.values()) == a._pool.processes  # (a part per worker)
        pids = [w.process.pid for w in pool._workers]
    finally:
        await a.close()
    assert all(_gone(p) for p in pids if p is not None)


def test_reader_processes_zero_keeps_every_batch_here(index: Path) -> None:
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=0) as th:
        got = th.find_many(BATCH, limit=5)
        assert not th._wait_readers(0.5) and th._readers is None
        assert [_exact(r) for r in th.find_many(BATCH, limit=5)] == [_exact(r) for r in got]


def test_closing_while_the_workers_start_is_quick_and_leaves_none(index: Path) -> None:
    mark = uuid.uuid4().hex
    os.environ["TREEHOP_TEST_MARK"] = mark  # (inherited by the workers: found by it below)
    try:
        th = Treehop(index, embedder=BagOfWordsEmbedder())
        th.find_many(BATCH, limit=5)  # the start begins aside
        t0 = time.monotonic()
        th.close()
        took = time.monotonic() - t0
    finally:
        del os.environ["TREEHOP_TEST_MARK"]
    assert took < 5.0  # (a start is cancelled, not awaited: a worker's start takes ~1-2 s)
    assert _marked(mark, wait_s=10) == []


def _marked(mark: str, wait_s: float) -> list[int]:
    """Live processes whose environment carries ``mark`` (waiting up to ``wait_s`` for them
    to go)."""
    end = time.monotonic() + wait_s
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                env = (entry / "environ").read_bytes()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if f"TREEHOP_TEST_MARK={mark}".encode() in env and state != "Z":
                found.append(int(entry.name))
        if not found or time.monotonic() > end:
            return found
        time.sleep(0.1)


_SCRIPT = """
import sys
sys.path[:0] = {paths!r}
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder

# no `if __name__ == "__main__":` guard, and (in two of the modes) no close()
print("module run as", __name__, flush=True)
queries = {queries!r}
th = Treehop({index!r}, embedder=BagOfWordsEmbedder())
first = th.find_many(queries, limit=5)
if {mode!r} != "starting":
    assert th._wait_readers(60) == (th._pool.processes > 0)
    th._pool.free_cores = None  # (split whatever the machine's load)
    again = th.find_many(queries, limit=5)
    same = [[(m.uri, m.score) for m in r.resources] for r in again] == [
        [(m.uri, m.score) for m in r.resources] for r in first
    ]
    served = sum(th._readers[1].served.values()) if th._readers else 0
    print("same", same, "served", served, "workers", th._pool.processes, flush=True)
if {mode!r} == "closed":
    th.close()
print("done", flush=True)
"""


@pytest.mark.parametrize("mode", ["closed", "not closed", "starting"])
def test_a_script_exits_0_with_no_worker_left(index: Path, tmp_path: Path, mode: str) -> None:
    """A script that batches with the default client, closed or not (or exiting while its
    workers still start), exits 0 without a traceback, its module run once, and no worker
    outlives it."""
    mark = uuid.uuid4().hex
    paths = [p for p in sys.path if p] + [str(Path(__file__).parent)]
    script = tmp_path / "batch.py"
    script.write_text(_SCRIPT.format(paths=paths, index=str(index), queries=BATCH, mode=mode))
    out = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
        env={**os.environ, "TREEHOP_TEST_MARK": mark},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[0] == "module run as __main__" and lines[-1] == "done"
    assert sum(ln.startswith("module run as") for ln in lines) == 1
    if mode != "starting":
        workers = min(_cores() - 1, AUTO_READERS_MAX)
        # (the second batch split: one part per worker)
        assert f"same True served {workers} workers {workers}" in lines
    assert _marked(mark, wait_s=15) == []


def test_split_pays_only_with_a_core_left_by_the_others() -> None:
    # 2 cores, this process busy for the whole second and nobody else: split
    assert split_pays(2, busy_s=1.0, ours_s=1.0, wall_s=1.0)
    # another job on the second core: both parts would share one core
    assert not split_pays(2, busy_s=2.0, ours_s=1.0, wall_s=1.0)
    assert not split_pays(2, busy_s=1.6, ours_s=0.0, wall_s=1.0)
    # 4 cores, others holding 1.5 of them: 2.5 left
    assert split_pays(4, busy_s=2.0, ours_s=0.5, wall_s=2.0 / 2)
    assert split_pays(2, busy_s=0.0, ours_s=0.0, wall_s=0.0)  # (no interval: as before)


def test_auto_runs_batches_here_while_other_processes_hold_the_cores(index: Path) -> None:
    """Real load: one spinning process per core. ``FreeCores`` sees no free core and the
    default client answers its batches itself (no worker part), with the same results."""
    th = Treehop(index, embedder=BagOfWordsEmbedder())
    spinners: list[subprocess.Popen[bytes]] = []
    try:
        want = [_exact(r) for r in th.find_many(BATCH, limit=5)]
        if th._pool.processes == 0:
            assert th._readers is None
            return
        assert th._wait_readers()
        pool = th._readers[1]  # type: ignore[index]
        spinners = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(_cores())
        ]
        free = FreeCores()
        time.sleep(0.6)
        assert free.now(()) is False
        th._pool.free_cores = FreeCores()
        time.sleep(0.6)
        before = sum(pool.served.values())
        for _ in range(3):
            assert [_exact(r) for r in th.find_many(BATCH, limit=5)] == want
        assert sum(pool.served.values()) == before  # every batch answered here
    finally:
        for p in spinners:
            p.kill()
            p.wait()
        th.close()
