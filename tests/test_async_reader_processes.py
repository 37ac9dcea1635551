"""``AsyncTreehop(path, reader_processes=N)``: concurrent awaited finds overflow to worker
processes (real spawned ones), a lone await runs on the loop, a large ``find_many`` is split,
and ``close()`` leaves no worker behind. The pool's ``served`` counter is the proof that a
call reached a worker (it counts replies from worker processes only)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from treehop import AsyncTreehop, InvalidQueryError, ReaderPool, Treehop
from treehop.client_readers import MIN_SPLIT_FIND_MANY
from treehop.models import FindResult
from treehop.reader_processes import _cores

from treehop_test_doubles import (
    SAMPLE_QUERIES,
    ZEBRA_URI,
    BagOfWordsEmbedder,
    run_script,
    saved_sample_index,
    zebra_write,
)

BATCH = SAMPLE_QUERIES[:12]


def _exact(result: FindResult) -> list[tuple[str, float]]:
    return [(m.uri, m.score) for m in result.resources]


def _same(got: list[FindResult], want: list[list[tuple[str, float]]]) -> bool:
    """The same hits in the same order, scores equal to float32 rounding: the async client
    embeds a query with ``aembed_query`` and scores it as given, while a sync client (and a
    worker, which runs one) normalises the embedder's vector once more, which moves a
    score by ~1e-7."""
    hits = [_exact(r) for r in got]
    return [[u for u, _ in h] for h in hits] == [[u for u, _ in h] for h in want] and all(
        abs(a[1] - b[1]) < 1e-6
        for h, w in zip(hits, want, strict=True)
        for a, b in zip(h, w, strict=True)
    )


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_sample_index(tmp_path_factory.mktemp("async-readers") / "idx")


@pytest.fixture(scope="module")
def want(index: Path) -> list[list[tuple[str, float]]]:
    """Each query's hits from a client without workers (lone finds)."""
    with Treehop(index, embedder=BagOfWordsEmbedder()) as plain:
        got = [_exact(plain.find(q, limit=5)) for q in BATCH]
    assert sum(map(bool, got)) > len(BATCH) // 2 and len(set(map(tuple, got))) > len(BATCH) // 2
    return got


@pytest.fixture(scope="module")
def client(index: Path) -> Iterator[AsyncTreehop]:
    """One async client with two reader processes (a spawn costs ~1 s)."""
    c = AsyncTreehop(index, embedder=BagOfWordsEmbedder(), reader_processes=2)
    assert c._pool.wait()  # a saved index: the workers start with the client, aside
    yield c
    asyncio.run(c.close())


def _pool(c: AsyncTreehop) -> ReaderPool:
    assert c._pool.readers is not None
    return c._pool.readers[1]


def _served(c: AsyncTreehop) -> int:
    return sum(_pool(c).served.values())


def test_a_lone_await_runs_on_the_loop(
    client: AsyncTreehop, want: list[list[tuple[str, float]]]
) -> None:
    async def one_by_one() -> list[FindResult]:
        return [await client.find(q, limit=5) for q in BATCH]

    before = _served(client)
    assert _same(asyncio.run(one_by_one()), want)
    assert _served(client) == before  # no pipe, no worker


def test_concurrent_awaits_overflow_to_the_workers(
    client: AsyncTreehop, want: list[list[tuple[str, float]]]
) -> None:
    async def gather() -> list[FindResult]:
        return list(await asyncio.gather(*(client.find(q, limit=5) for q in BATCH)))

    pool = _pool(client)
    before = _served(client)
    with client._local_slot:  # (a find running on the loop: every await overflows)
        got = asyncio.run(gather())
    assert [_exact(r) for r in got] == want  # (workers: exactly a sync client's answers)
    assert _served(client) == before + len(BATCH) and os.getpid() not in pool.served
    assert len(pool.served) == 2  # both workers answered
    # with the slot free, the first await runs here and every other one, started while it
    # runs, overflows: the same answers, all but one from the workers
    before = _served(client)
    assert _same(asyncio.run(gather()), want)
    assert _served(client) == before + len(BATCH) - 1
    # the same with the caller's vectors (no embedder thread to wait for: the find's own
    # global step yields the loop, and the awaits beside it start meanwhile)
    emb = BagOfWordsEmbedder()
    vecs = [emb.embed_query(q) for q in BATCH]

    async def gather_vectors() -> list[FindResult]:
        return list(
            await asyncio.gather(
                *(client.find(q, query_vector=v, limit=5) for q, v in zip(BATCH, vecs, strict=True))
            )
        )

    with Treehop(client.path, embedder=BagOfWordsEmbedder()) as plain:
        want_v = [
            _exact(plain.find(q, query_vector=v, limit=5)) for q, v in zip(BATCH, vecs, strict=True)
        ]
    before = _served(client)
    assert _same(asyncio.run(gather_vectors()), want_v)
    assert _served(client) == before + len(BATCH) - 1
    # the integrations' awaited find over an async client (LangChain ``ainvoke``, LlamaIndex
    # ``aretrieve``: integration_kit.afind) takes the same path
    from treehop import integration_kit as kit

    async def gather_kit() -> list[FindResult]:
        return list(await asyncio.gather(*(kit.afind(client, q, limit=5) for q in BATCH)))

    before = _served(client)
    with client._local_slot:
        assert [_exact(r) for r in asyncio.run(gather_kit())] == want
    assert _served(client) == before + len(BATCH)
    # a find that a worker refuses raises its typed error here
    with client._local_slot, pytest.raises(InvalidQueryError):
        asyncio.run(client.find(BATCH[0], limit=-1))


def test_find_many_is_split_over_the_loop_and_the_workers(
    client: AsyncTreehop, want: list[list[tuple[str, float]]]
) -> None:
    parts = min(2, max(1, _cores() - 1))  # (a part per idle worker, one per core at most)
    before = _served(client)
    got = asyncio.run(client.find_many(BATCH, limit=5))
    assert _same(got, want)  # in input order across the parts
    assert _served(client) == before + parts
    # the caller's own vectors (a query may then be ""): as single finds with them
    emb = BagOfWordsEmbedder()
    vecs = [emb.embed_query(q).tolist() for q in BATCH]
    batch = ["", *BATCH[1:]]
    with Treehop(client.path, embedder=BagOfWordsEmbedder()) as plain:
        want_v = [
            _exact(plain.find(q, query_vector=v, limit=5)) for q, v in zip(batch, vecs, strict=True)
        ]
    before = _served(client)
    got = asyncio.run(client.find_many(batch, query_vectors=vecs, limit=5))
    assert _same(got, want_v) and _served(client) == before + parts
    # a batch below the split size, and a bad batch, run (or raise) here
    before = _served(client)
    small = BATCH[: MIN_SPLIT_FIND_MANY - 1]
    assert _same(asyncio.run(client.find_many(small, limit=5)), want[: len(small)])
    with pytest.raises(InvalidQueryError, match=r"queries\[12\]"):
        asyncio.run(client.find_many([*BATCH, "  "], limit=5))
    assert _served(client) == before


def test_unsaved_writes_and_a_reranker_keep_finds_on_the_loop(index: Path, tmp_path: Path) -> None:
    from treehop.rerankers.base import BaseReranker

    class Reverse(BaseReranker):
        def rerank(self, query: str, documents: list[str]) -> list[float]:
            return [float(-i) for i in range(len(documents))]

    ranked = AsyncTreehop(
        index, embedder=BagOfWordsEmbedder(), reranker=Reverse(), reader_processes=2
    )
    assert ranked._pool.for_call() is None and ranked._pool.readers is None
    with ranked._local_slot:
        assert asyncio.run(ranked.find(BATCH[0], limit=5)).resources  # answered here
    asyncio.run(ranked.close())

    path = tmp_path / "copy"
    shutil.copytree(index, path)
    zebra = ZEBRA_URI
    node, vec = zebra_write()

    async def scenario() -> None:
        async with AsyncTreehop(path, embedder=BagOfWordsEmbedder(), reader_processes=1) as c:
            assert await asyncio.to_thread(c._pool.wait)
            pool = _pool(c)
            c.store.upsert([node], vec)  # (the store's own API: the client's writes commit)
            with c._local_slot:
                hits = await c.find("zebra crossings", limit=3)
                many = await c.find_many(["zebra crossings", *BATCH], limit=3)
            assert zebra in [m.uri for m in hits.resources]
            assert zebra in [m.uri for m in many[0].resources]
            assert sum(pool.served.values()) == 0  # the workers would not see the write
            await c.save()  # once saved, the workers answer, and see it
            with c._local_slot:
                hits = await c.find("zebra crossings", limit=3)
            assert zebra in [m.uri for m in hits.resources]
            assert sum(pool.served.values()) == 1

    asyncio.run(scenario())


def test_a_changed_config_restarts_the_workers_and_close_joins_them(index: Path) -> None:
    others = {p.pid for p in multiprocessing.active_children()}  # (the module's client's)

    async def scenario() -> tuple[list[int], ReaderPool]:
        c = AsyncTreehop(index, embedder=BagOfWordsEmbedder(), reader_processes=1)
        async with c:
            assert await asyncio.to_thread(c._pool.wait)
            first = _pool(c)
            pids = [w.process.pid or 0 for w in first._workers]
            c.config.dense_weight = 0.6
            with c._local_slot:  # answered here until workers with the new config run
                await c.find(BATCH[0], limit=5)
            assert sum(first.served.values()) == 0
            assert await asyncio.to_thread(c._pool.wait)
            assert _pool(c) is not first and first._closed
            pids += [w.process.pid or 0 for w in _pool(c)._workers]
            last = _pool(c)
            # a pool closed under a waiting call (replaced meanwhile): the call is answered
            # here, not failed
            last.close()
            with c._local_slot:
                assert (await c.find(BATCH[0], limit=5)).resources
            return pids, last

    pids, last = asyncio.run(scenario())
    # ``async with`` closed the client: every worker of both pools stopped and joined
    assert last._closed and len(pids) == 2 and not others & set(pids)
    assert {p.pid for p in multiprocessing.active_children()} == others
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    # a client closed while its pool is still starting leaves none behind either
    c = AsyncTreehop(index, embedder=BagOfWordsEmbedder(), reader_processes=1)
    assert c._pool._starter is not None  # (a saved index: the start began in __init__)
    asyncio.run(c.close())
    assert c._pool.readers is None
    assert {p.pid for p in multiprocessing.active_children()} == others


@pytest.mark.parametrize("bad", [-1, True, 1.5, "2", None])
def test_reader_processes_is_checked_as_on_the_sync_client(bad: object, index: Path) -> None:
    with pytest.raises(InvalidQueryError, match="reader_processes"):
        AsyncTreehop(index, embedder=BagOfWordsEmbedder(), reader_processes=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="index path"):
        AsyncTreehop(embedder=BagOfWordsEmbedder(), reader_processes=2)


_UNGUARDED_SCRIPT = """
import asyncio
import sys
import warnings
sys.path[:0] = {paths!r}
import treehop.reader_processes
from treehop import AsyncTreehop
from treehop_test_doubles import BagOfWordsEmbedder

if {spawn!r}:  # the start of Windows and frozen apps: multiprocessing's spawn
    treehop.reader_processes._direct_start = lambda: False
# no `if __name__ == "__main__":` guard: a spawned worker imports this module again
role = "worker" if __name__ != "__main__" else "main"


async def main():
    async with AsyncTreehop({index!r}, embedder=BagOfWordsEmbedder(), reader_processes=1) as c:
        started = await asyncio.to_thread(c._pool.wait, 60 if role == "main" else 0.5)
        hits = (await c.find("rotate the API keys", limit=3)).resources
        print(role, "started", started, "answered", len(hits), flush=True)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    asyncio.run(main())
print(role, "warnings:", [str(w.message) for w in caught], flush=True)
"""


def test_a_script_without_a_main_guard_warns_and_answers_in_process(
    index: Path, tmp_path: Path
) -> None:
    """As for the sync client: the worker's re-import of an unguarded script cannot start
    workers of its own; its async client says why once (a warning) and answers itself."""
    lines = run_script(_UNGUARDED_SCRIPT.replace("{spawn!r}", "True"), index, tmp_path)
    assert "main started True answered 3" in lines
    assert "main warnings: []" in lines
    assert "worker started False answered 3" in lines
    worker = [ln for ln in lines if ln.startswith("worker warnings:")]
    assert worker and all("did not start" in ln and "__main__" in ln for ln in worker)


def test_a_script_without_a_main_guard_runs_once_with_working_readers(
    index: Path, tmp_path: Path
) -> None:
    """On POSIX the workers start as fresh interpreters: the unguarded script runs once and
    its async client's workers start without a warning."""
    lines = run_script(_UNGUARDED_SCRIPT.replace("{spawn!r}", "False"), index, tmp_path)
    assert lines == ["main started True answered 3", "main warnings: []"]
