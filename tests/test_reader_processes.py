"""``ReaderPool``: ``find()`` answered by worker processes over a saved index. Real spawned
processes, real pipes: same answers as the client in this process, saved writes seen, typed
errors, a dead or hung worker replaced."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import (
    ClientClosedError,
    EmbeddingError,
    InvalidFilterError,
    InvalidQueryError,
    InvalidURIError,
    ReaderPool,
    StoreError,
    Treehop,
)
from treehop.models import FindResult

from treehop_test_doubles import (
    SAMPLE_QUERIES,
    ZEBRA_URI,
    BagOfWordsEmbedder,
    run_script,
    saved_sample_index,
    zebra_write,
)

QUERIES = SAMPLE_QUERIES[:5]


def _hits(result: object) -> list[tuple[str, float]]:
    return [(m.uri, round(m.score, 6)) for m in result.resources]  # type: ignore[attr-defined]


@pytest.fixture
def index(sample_tree: Path, tmp_path: Path) -> Path:
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")
        th.add_resource(sample_tree / "resources" / "devops", target_uri="viking://resources")
        th.save()
    return path


def test_workers_answer_as_the_client_does_from_several_threads(index: Path) -> None:
    with Treehop(index, embedder=BagOfWordsEmbedder()) as th:
        want = {q: _hits(th.find(q, limit=5)) for q in QUERIES}
        hybrid = _hits(th.find(QUERIES[0], limit=3, dense_weight=0.6, include_directories=False))
    assert all(want.values())
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=2) as pool:
        got: dict[str, list[tuple[str, float]]] = {}

        def ask(qs: list[str]) -> None:
            for q in qs:
                got[q] = _hits(pool.find(q, limit=5))

        threads = [threading.Thread(target=ask, args=(QUERIES[i::2] * 3,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == want
        opts = {"limit": 3, "dense_weight": 0.6, "include_directories": False}
        assert _hits(pool.find(QUERIES[0], **opts)) == hybrid  # type: ignore[arg-type]
        vec = BagOfWordsEmbedder().embed_query(QUERIES[1])
        assert _hits(pool.find(QUERIES[1], query_vector=vec, limit=5)) == want[QUERIES[1]]
        assert _hits(asyncio.run(pool.afind(QUERIES[2], limit=5))) == want[QUERIES[2]]
        # two workers, two pids: calls really run in other processes
        pids = {w.process.pid for w in pool._workers}
        assert len(pids) == 2 and os.getpid() not in pids


def test_a_saved_write_is_seen_by_the_next_call(index: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "zebra.md").write_text("# Zebra crossings\n\nStriped zebra crossings for pedestrians.")
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        before = [m.uri for m in pool.find("zebra crossings", limit=3).resources]
        assert not any("zebra" in u for u in before)
        with Treehop(index, embedder=BagOfWordsEmbedder()) as th:
            th.add_resource(extra, target_uri="viking://resources")
            th.save()
        after = [m.uri for m in pool.find("zebra crossings", limit=3).resources]
        assert any("zebra" in u for u in after)


def test_errors_are_typed_and_raised_in_the_caller(index: Path, tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no saved treehop index"):
        ReaderPool(tmp_path / "nothing", embedder=BagOfWordsEmbedder())
    with pytest.raises(InvalidQueryError, match="processes"):
        ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=0)
    with pytest.raises(InvalidURIError):
        ReaderPool(index, embedder=BagOfWordsEmbedder(), user="../other")
    with pytest.raises(InvalidQueryError, match="timeout_s"):
        ReaderPool(index, embedder=BagOfWordsEmbedder(), timeout_s=float("nan"))

    class Other(BagOfWordsEmbedder):
        name = "another-embedder"

    # the worker's client refuses an index built with another embedder; raised at start
    with pytest.raises(EmbeddingError, match="another-embedder"):
        ReaderPool(index, embedder=Other(), processes=1)
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        with pytest.raises(InvalidQueryError):
            pool.find("   ")
        with pytest.raises(InvalidQueryError):  # raised by find() in the worker
            pool.find("keys", limit=-1)
        with pytest.raises(InvalidFilterError):
            pool.find("keys", filter={"op": "no-such-op"})  # type: ignore[typeddict-item]
        with pytest.raises(InvalidQueryError, match="plain values"):
            pool.find("keys", filter=lambda n: True)  # type: ignore[typeddict-item]
        with pytest.raises(InvalidQueryError, match="query_vector"):
            pool.find("keys", query_vector=["a", "b"])  # type: ignore[list-item]
        with pytest.raises(InvalidQueryError):  # wrong dimension: the worker's check
            pool.find("keys", query_vector=np.ones(3))
        assert pool.find("rotate keys", limit=2).resources  # still serving after errors
        assert "ReaderPool(" in repr(pool)
    with pytest.raises(ClientClosedError):
        pool.find("keys")


def test_a_dead_worker_is_replaced_and_the_call_retried(index: Path) -> None:
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        want = _hits(pool.find(QUERIES[0], limit=5))
        old = pool._workers[0].process
        os.kill(old.pid, signal.SIGKILL)  # type: ignore[arg-type]
        old.join(10)
        assert _hits(pool.find(QUERIES[0], limit=5)) == want
        assert [w.process.pid for w in pool._workers] != [old.pid]


def test_a_call_that_fails_midway_replaces_its_worker(
    index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        want = _hits(pool.find(QUERIES[1], limit=5))
        old = pool._workers[0].process.pid
        real = ReaderPool._receive

        def interrupted(self: ReaderPool, w: object) -> tuple[object, ...]:
            real(self, w)  # type: ignore[arg-type]
            raise RuntimeError("interrupted while reading the reply")

        monkeypatch.setattr(ReaderPool, "_receive", interrupted)
        with pytest.raises(RuntimeError):
            pool.find(QUERIES[1], limit=5)
        monkeypatch.setattr(ReaderPool, "_receive", real)
        # the worker, left mid-call, is not reused: a new one answers the next call
        assert _hits(pool.find(QUERIES[1], limit=5)) == want
        assert [w.process.pid for w in pool._workers] != [old] and len(pool._workers) == 1


def test_a_hung_worker_raises_within_the_deadline_and_is_replaced(index: Path) -> None:
    import time

    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        want = _hits(pool.find(QUERIES[3], limit=5))  # (a first call reads the index's files)
        pool.timeout_s = 2.0
        hung = pool._workers[0].process
        os.kill(hung.pid, signal.SIGSTOP)  # type: ignore[arg-type]
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="no answer within"):
            pool.find(QUERIES[3], limit=5)
        assert time.monotonic() - t0 < 12  # the deadline, the kill and the join
        hung.join(10)
        assert not hung.is_alive()
        pool.timeout_s = 60.0  # (a new worker's first call reads the index's files)
        assert _hits(pool.find(QUERIES[3], limit=5)) == want  # a new worker answers


@given(
    processes=st.one_of(
        st.integers(max_value=0), st.booleans(), st.floats(), st.text(max_size=3), st.none()
    )
)
@settings(max_examples=40, deadline=None)
def test_a_bad_process_count_is_refused_before_any_process_starts(processes: object) -> None:
    import multiprocessing

    before = len(multiprocessing.active_children())
    with pytest.raises(InvalidQueryError, match="processes"):
        ReaderPool("/nonexistent", processes=processes)  # type: ignore[arg-type]
    assert len(multiprocessing.active_children()) == before


def test_a_client_with_reader_processes_sends_finds_there_only_when_equal(index: Path) -> None:
    import multiprocessing

    from treehop import integration_kit as kit

    with Treehop(index, embedder=BagOfWordsEmbedder()) as plain:
        want = {q: _hits(plain.find(q, limit=5)) for q in QUERIES}
    th = Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=2)
    try:
        assert th._wait_readers()  # a saved index: the workers start with the client, aside
        first = th._readers[1]  # type: ignore[index]
        assert len({w.process.pid for w in first._workers}) == 2
        sent: list[str] = []
        real = first.find

        def counted(query: str, **kw: object) -> object:
            sent.append(query)
            return real(query, **kw)  # type: ignore[arg-type]

        first.find = counted  # type: ignore[method-assign,assignment]
        # a lone caller runs here: no pipe, no worker
        assert {q: _hits(th.find(q, limit=5)) for q in QUERIES} == want and sent == []
        # while another call runs here, the next ones go to the workers, with the same answers
        with th._local_slot:
            assert {q: _hits(th.find(q, limit=5)) for q in QUERIES} == want
            assert sent == QUERIES
            sent.clear()
            # an unsaved write (the store's own API; the client's writes commit): this
            # client answers, since the workers would not see it ...
            zebra = ZEBRA_URI
            node, vec = zebra_write()
            th.store.upsert([node], vec)
            assert th.store.unsaved  # type: ignore[attr-defined]
            assert zebra in [m.uri for m in th.find("zebra crossings", limit=3).resources]
            assert sent == []
            # ... and once saved, the workers do, and see it too
            th.save()
            assert not th.store.unsaved  # type: ignore[attr-defined]
            assert zebra in [m.uri for m in th.find("zebra crossings", limit=3).resources]
            assert sent == ["zebra crossings"] and th._readers[1] is first  # type: ignore[index]
            # the integrations' sync find (LangChain, LlamaIndex retrievers) goes there too
            got = kit.find(th, "zebra crossings", limit=3).resources
            assert zebra in [m.uri for m in got] and sent == ["zebra crossings"] * 2
            # a changed config: answered here until workers with it have started
            th.config.dense_weight = 0.6
            mine = Treehop(index, embedder=BagOfWordsEmbedder())
            mine.config.dense_weight = 0.6
            other = _hits(mine.find(QUERIES[0], limit=5))
            mine.close()
            assert _hits(th.find(QUERIES[0], limit=5)) == other
            assert th._wait_readers()
            assert th._readers[1] is not first and first._closed  # type: ignore[index]
            assert _hits(th.find(QUERIES[0], limit=5)) == other
            assert sent == ["zebra crossings"] * 2  # (the new pool answered the last one)
    finally:
        th.close()
    assert th._readers is None
    assert not [p for p in multiprocessing.active_children() if p.name == "treehop-reader"]
    with pytest.raises(InvalidQueryError, match="reader_processes"):
        Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=-1)
    with pytest.raises(InvalidQueryError, match="index path"):
        Treehop(embedder=BagOfWordsEmbedder(), reader_processes=2)


def test_a_client_with_a_reranker_keeps_its_finds(index: Path) -> None:
    from treehop.rerankers.base import BaseReranker

    class Reverse(BaseReranker):
        def rerank(self, query: str, documents: list[str]) -> list[float]:
            return [float(-i) for i in range(len(documents))]

    with Treehop(
        index, embedder=BagOfWordsEmbedder(), reranker=Reverse(), reader_processes=2
    ) as th:
        assert th.find(QUERIES[0], limit=5).resources
        assert th._readers is None


_UNGUARDED_SCRIPT = """
import sys
import warnings
sys.path[:0] = {paths!r}
import treehop.reader_processes
from treehop import ReaderPool, StoreError, Treehop
if {spawn!r}:  # the start of Windows and frozen apps: multiprocessing's spawn
    treehop.reader_processes._direct_start = lambda: False
print("module run as", __name__, flush=True)
from treehop_test_doubles import BagOfWordsEmbedder

# no `if __name__ == "__main__":` guard: a spawned worker imports this module again
role = "worker" if __name__ != "__main__" else "main"
try:
    with ReaderPool({index!r}, embedder=BagOfWordsEmbedder(), processes=1) as pool:
        hits = pool.find("rotate the API keys", limit=3).resources
        print(role, "pool answered", len(hits), flush=True)
except StoreError as exc:
    print(role, "StoreError:", exc, flush=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with Treehop({index!r}, embedder=BagOfWordsEmbedder(), reader_processes=1) as th:
        th._wait_readers(timeout=60 if role == "main" else 0.5)
        print(role, "client answered", len(th.find("rotate the API keys", limit=3).resources))
print(role, "warnings:", [str(w.message) for w in caught], flush=True)
"""


def test_a_script_without_a_main_guard_gets_a_typed_error_not_a_traceback(
    index: Path, tmp_path: Path
) -> None:
    """The spawn start method imports the main module again in each worker. A script that
    creates a pool at module level then starts a pool inside its own worker, which
    multiprocessing refuses with a bare RuntimeError: it must surface as a StoreError that
    says what to do (and a client's background start as a warning), never a traceback."""
    lines = run_script(_UNGUARDED_SCRIPT.replace("{spawn!r}", "True"), index, tmp_path)
    # the re-imported copy in the worker cannot start workers of its own: a typed error
    # naming the guard, and the client's find runs in-process with a warning saying why
    worker_errors = [ln for ln in lines if ln.startswith("worker StoreError:")]
    assert worker_errors and all('if __name__ == "__main__":' in ln for ln in worker_errors)
    assert any(ln.startswith("worker client answered") for ln in lines)
    worker_warnings = [ln for ln in lines if ln.startswith("worker warnings:")]
    assert worker_warnings and all("did not start" in ln for ln in worker_warnings)
    # the real main process got working workers all the same
    assert "main pool answered 3" in lines
    assert "main client answered 3" in lines
    assert "main warnings: []" in lines


def test_a_script_without_a_main_guard_runs_once_and_its_workers_answer(
    index: Path, tmp_path: Path
) -> None:
    """On POSIX a worker starts as a new interpreter that imports treehop only: the
    unguarded script's module-level code (a pool, a client, their finds) runs once, in the
    script's own process, and the workers answer without a warning."""
    lines = run_script(_UNGUARDED_SCRIPT.replace("{spawn!r}", "False"), index, tmp_path)
    assert [ln for ln in lines if ln.startswith("module run as")] == ["module run as __main__"]
    assert not [ln for ln in lines if ln.startswith("worker")]
    assert "main pool answered 3" in lines
    assert "main client answered 3" in lines
    assert "main warnings: []" in lines


# ---------------------------------------------------------------------- issue 36
def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_calls_are_answered_by_the_worker_processes_not_the_caller(index: Path) -> None:
    with Treehop(index, embedder=BagOfWordsEmbedder()) as th:
        want = {q: _hits(th.find(q, limit=5)) for q in QUERIES}
    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=2, timeout_s=120) as pool:
        workers = {w.process.pid for w in pool._workers}
        assert os.getpid() not in workers and len(workers) == 2
        got: list[bool] = []

        def ask() -> None:
            for q in QUERIES:
                got.append(_hits(pool.find(q, limit=5)) == want[q])

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert got == [True] * 15
        assert sum(pool.served.values()) == 15 and set(pool.served) <= workers
    # a client with reader processes: while a call runs in the process, the next one is
    # answered by a worker (the local slot is taken here to make the overlap certain)
    with Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=1) as th:
        assert th._wait_readers()
        assert th._readers is not None
        pool = th._readers[1]
        with th._local_slot:
            assert _hits(th.find(QUERIES[2], limit=5)) == want[QUERIES[2]]
        assert sum(pool.served.values()) == 1 and os.getpid() not in pool.served
        assert _hits(th.find(QUERIES[2], limit=5)) == want[QUERIES[2]]  # a lone call: here
        assert sum(pool.served.values()) == 1


def test_a_worker_killed_mid_call_is_replaced_and_the_call_retried(index: Path) -> None:
    import time

    with ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=1, timeout_s=120) as pool:
        want = _hits(pool.find(QUERIES[4], limit=5))
        victim = pool._workers[0].process
        assert victim.pid is not None
        os.kill(victim.pid, signal.SIGSTOP)  # it will take the call and never answer it
        out: list[object] = []
        caller = threading.Thread(target=lambda: out.append(pool.find(QUERIES[4], limit=5)))
        caller.start()
        time.sleep(0.5)  # the call is in the stopped worker's pipe
        assert caller.is_alive() and not out
        os.kill(victim.pid, signal.SIGKILL)  # killed mid-call
        caller.join(120)
        assert not caller.is_alive()
        assert [_hits(r) for r in out] == [want]  # retried on a new worker: the same answer
        victim.join(10)
        [new] = pool._workers
        assert new.process.pid != victim.pid and pool.served[new.process.pid] == 1


def test_no_worker_process_outlives_close(index: Path) -> None:
    import multiprocessing
    import time

    pool = ReaderPool(index, embedder=BagOfWordsEmbedder(), processes=2, timeout_s=120)
    seen = {w.process.pid for w in pool._workers}
    first = pool._workers[0].process
    os.kill(first.pid, signal.SIGKILL)  # type: ignore[arg-type]
    first.join(10)
    for q in QUERIES:  # the dead one is replaced (the call retried), the pool serves on
        pool.find(q, limit=3)
    seen |= {w.process.pid for w in pool._workers}
    pool._drop(pool._workers[0])
    pool._refill_later()  # a replacement starting in the background ...
    time.sleep(0.2)
    pool.close()  # ... is waited for and stopped too
    assert multiprocessing.active_children() == []
    assert all(_gone(pid) for pid in seen if pid is not None)
    # a client closed while its pool is still starting in the background
    th = Treehop(index, embedder=BagOfWordsEmbedder(), reader_processes=2)
    th.close()
    assert multiprocessing.active_children() == []


# ---------------------------------------------------------------- find_many over the workers
BATCH = SAMPLE_QUERIES


def _exact(result: object) -> list[tuple[str, float]]:
    return [(m.uri, m.score) for m in result.resources]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def batch_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return saved_sample_index(tmp_path_factory.mktemp("many") / "idx")


@pytest.fixture(scope="module")
def pooled(batch_index: Path) -> object:
    """One client with two reader processes for the find_many tests (a spawn costs ~1 s)."""
    th = Treehop(batch_index, embedder=BagOfWordsEmbedder(), reader_processes=2)
    assert th._wait_readers()
    yield th
    th.close()


def _pool(th: Treehop) -> ReaderPool:
    assert th._readers is not None
    return th._readers[1]


def test_find_many_over_reader_processes_equals_single_finds(
    batch_index: Path, pooled: Treehop
) -> None:
    with Treehop(batch_index, embedder=BagOfWordsEmbedder()) as plain:
        want = [_exact(plain.find(q, limit=5)) for q in BATCH]
        local = [_exact(r) for r in plain.find_many(BATCH, limit=5)]
        opts = {"limit": 3, "dense_weight": 0.6, "include_directories": False}
        hybrid = [_exact(plain.find(q, **opts)) for q in BATCH]  # type: ignore[arg-type]
    assert local == want and sum(map(bool, want)) > len(BATCH) // 2
    assert len(set(map(tuple, want))) > len(BATCH) // 2  # (distinct answers: order shows)
    pool = _pool(pooled)
    before = sum(pool.served.values())
    got = pooled.find_many(BATCH, limit=5)
    # the same lists, scores and order as single finds, in input order across the parts
    assert [_exact(r) for r in got] == want
    # each worker answered one part; this process answered the first
    from treehop.reader_processes import _cores

    parts = min(2, max(1, _cores() - 1))  # (a part per worker, one per core at most)
    assert sum(pool.served.values()) == before + parts and os.getpid() not in pool.served
    assert [_exact(r) for r in pooled.find_many(BATCH, **opts)] == hybrid  # type: ignore[arg-type]
    # the pool's own split over both workers (no part here), whatever the cores
    vectors = np.stack([BagOfWordsEmbedder().embed_query(q) for q in BATCH])
    before = sum(pool.served.values())
    assert [_exact(r) for r in pool.find_many(BATCH, vectors, parts=2, limit=5)] == want
    assert sum(pool.served.values()) == before + 2 and len(pool.served) == 2
    # the integrations' sync batch (the LangChain retriever's batch) takes the same path
    from treehop import integration_kit as kit

    before = sum(pool.served.values())
    assert [_exact(r) for r in kit.find_many(pooled, BATCH, limit=5)] == want
    assert sum(pool.served.values()) == before + parts
    # the caller's own vectors (a query may then be ""), as single finds with them
    emb = BagOfWordsEmbedder()
    vecs = [emb.embed_query(q).tolist() for q in BATCH]
    batch = [""] * 3 + BATCH[3:]
    with Treehop(batch_index, embedder=BagOfWordsEmbedder()) as plain:
        want_v = [
            _exact(plain.find(q, query_vector=v, limit=5)) for q, v in zip(batch, vecs, strict=True)
        ]
    assert [_exact(r) for r in pooled.find_many(batch, query_vectors=vecs, limit=5)] == want_v
    # a small batch runs here: no worker answers it
    served = sum(pool.served.values())
    assert [_exact(r) for r in pooled.find_many(BATCH[:4], limit=5)] == want[:4]
    assert sum(pool.served.values()) == served


def test_awaited_finds_of_a_pooled_client_overflow_to_its_workers(pooled: Treehop) -> None:
    """The integrations' async path (``ainvoke``, ``abatch``, LlamaIndex ``aretrieve``) over a
    sync client with reader processes: concurrent awaits reach the workers, as concurrent
    sync calls do, with the answers a lone find gives."""
    from treehop import integration_kit as kit

    want = [_exact(pooled.find(q, limit=5)) for q in BATCH]  # (lone calls: answered here)
    pool = _pool(pooled)

    async def gather() -> list[FindResult]:
        return list(await asyncio.gather(*(kit.afind(pooled, q, limit=5) for q in BATCH)))

    before = sum(pool.served.values())
    with pooled._local_slot:  # (a call running here: every await overflows to a worker)
        got = asyncio.run(gather())
    assert [_exact(r) for r in got] == want
    assert sum(pool.served.values()) == before + len(BATCH) and os.getpid() not in pool.served
    # an awaited batch is split as the sync one is
    from treehop.reader_processes import _cores

    parts = min(2, max(1, _cores() - 1))
    before = sum(pool.served.values())
    many = asyncio.run(kit.afind_many(pooled, BATCH, limit=5))
    assert [_exact(r) for r in many] == want
    assert sum(pool.served.values()) == before + parts
    # the LangChain retriever's async batch takes that path
    from langchain_treehop import TreehopRetriever

    retriever = TreehopRetriever(client=pooled, k=5)
    alone = [retriever.invoke(q) for q in BATCH]  # (lone calls: answered here)
    before = sum(pool.served.values())
    docs = asyncio.run(retriever.abatch(BATCH))
    assert docs == alone and sum(map(bool, alone)) > len(BATCH) // 2
    assert sum(pool.served.values()) == before + parts
    # and the LangChain vector store's awaited search
    from langchain_treehop import TreehopVectorStore

    store = TreehopVectorStore(client=pooled)
    alone_hits = [store.similarity_search_with_score(q, k=4) for q in BATCH[:6]]

    async def searches() -> list[object]:
        return list(
            await asyncio.gather(*(store.asimilarity_search_with_score(q, k=4) for q in BATCH[:6]))
        )

    before = sum(pool.served.values())
    with pooled._local_slot:
        hits = asyncio.run(searches())
    assert hits == alone_hits and all(alone_hits)
    assert sum(pool.served.values()) == before + 6


def test_a_bad_batch_raises_its_typed_error_before_any_work(pooled: Treehop) -> None:
    pool = _pool(pooled)
    served = sum(pool.served.values())
    workers = [w.process.pid for w in pool._workers]
    with pytest.raises(InvalidQueryError, match=r"queries\[20\]"):
        pooled.find_many([*BATCH, "   "], limit=5)
    with pytest.raises(InvalidQueryError, match="one per query"):
        pooled.find_many(BATCH, query_vectors=[[1.0, 0.0]] * 3, limit=5)
    with pytest.raises(InvalidQueryError):
        pooled.find_many(BATCH, limit=-1)
    with pytest.raises(InvalidFilterError):
        pooled.find_many(BATCH, filter={"op": "no-such-op"})
    # nothing reached a worker, and none was replaced
    assert sum(pool.served.values()) == served
    assert [w.process.pid for w in pool._workers] == workers


def test_a_worker_killed_mid_batch_has_its_part_retried(pooled: Treehop) -> None:
    import time

    want = [_exact(pooled.find(q, limit=5)) for q in BATCH]  # (lone calls: answered here)
    pool = _pool(pooled)
    stopped = [w.process for w in pool._workers]
    for p in stopped:  # each will take its part and never answer it
        os.kill(p.pid, signal.SIGSTOP)  # type: ignore[arg-type]
    out: list[list[FindResult]] = []
    caller = threading.Thread(target=lambda: out.append(pooled.find_many(BATCH, limit=5)))
    caller.start()
    time.sleep(1.0)  # the parts are in the stopped workers' pipes
    assert caller.is_alive() and not out
    idle = {w.process.pid for w in list(pool._idle.queue)}
    victims = [p for p in stopped if p.pid not in idle]
    assert victims  # (as many as the cores allow parts: see _cores)
    for p in stopped:
        if p in victims:
            os.kill(p.pid, signal.SIGKILL)  # type: ignore[arg-type]  # killed mid-batch
        else:
            os.kill(p.pid, signal.SIGCONT)  # type: ignore[arg-type]
    caller.join(120)
    assert not caller.is_alive()
    assert [[_exact(r) for r in res] for res in out] == [want]
    for p in victims:
        p.join(10)
    live = [w.process.pid for w in pool._workers]
    assert not {p.pid for p in victims} & set(live) and len(live) == 2


def test_a_hung_worker_fails_its_batch_within_the_deadline_and_is_replaced(
    pooled: Treehop,
) -> None:
    import time

    pool = _pool(pooled)
    vectors = np.stack([BagOfWordsEmbedder().embed_query(q) for q in BATCH])
    want = [_exact(r) for r in pool.find_many(BATCH, vectors, parts=1, limit=5)]
    stopped = [w.process for w in pool._workers]
    for p in stopped:
        os.kill(p.pid, signal.SIGSTOP)  # type: ignore[arg-type]
    pool.timeout_s = 2.0
    try:
        t0 = time.monotonic()
        with pytest.raises(StoreError, match="no answer within"):
            pool.find_many(BATCH, vectors, parts=1, limit=5)
        assert time.monotonic() - t0 < 12  # the deadline, the kill and the join
    finally:
        pool.timeout_s = 60.0
        for p in stopped:
            if p.is_alive():
                os.kill(p.pid, signal.SIGCONT)  # type: ignore[arg-type]
    hung = [p for p in stopped if p.pid not in {w.process.pid for w in pool._workers}]
    assert len(hung) == 1 and not hung[0].is_alive()  # the hung one was killed, not reused
    assert [_exact(r) for r in pool.find_many(BATCH, vectors, parts=2, limit=5)] == want


def test_find_many_with_unsaved_writes_is_answered_here(batch_index: Path, tmp_path: Path) -> None:
    import shutil

    path = tmp_path / "copy"
    shutil.copytree(batch_index, path)
    zebra = ZEBRA_URI
    node, vec = zebra_write()
    batch = ["zebra crossings", *BATCH]
    with Treehop(path, embedder=BagOfWordsEmbedder(), reader_processes=1) as th:
        assert th._wait_readers()
        pool = _pool(th)
        th.store.upsert([node], vec)  # (the store's own API: the client's writes commit)
        assert th.store.unsaved  # type: ignore[attr-defined]
        got = th.find_many(batch, limit=5)
        assert sum(pool.served.values()) == 0  # the workers would not see the write
        assert zebra in [m.uri for m in got[0].resources]
        # as this client's single finds (also answered here, the write seen)
        assert [_exact(r) for r in got] == [_exact(th.find(q, limit=5)) for q in batch]
        assert sum(pool.served.values()) == 0
