"""``aretrieve`` is natively async: concurrent calls overlap and the event loop stays free.

Measured by causality, not by a clock (helper ci75): the queries overlap when all of them are
waiting on their embedding at once (:class:`_Watched` counts them in flight), and the loop is
free when a ticker task on it advanced during every embedding wait. The old bounds
(``elapsed < 2 * DELAY``, the loop's longest stall ``< DELAY / 2``) failed on a loaded runner,
where a free loop can be descheduled for 0.15 s. A blocking embedding (the sync path run on
the loop) still shows: no tick during its wait (:func:`test_blocking_sync_path_would_be_detected`).
"""

from __future__ import annotations

import asyncio
import gc
import time

from li_helpers import SAMPLE_TREE, SlowAsyncEmbedding

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever
from treehop import AsyncTreehop, Treehop

DELAY = 0.3


class _Watch:
    """What the ticker and the embedding waits saw (one test at a time in a process)."""

    ticks = 0
    in_flight = 0
    most_in_flight = 0
    ticks_during: list[int] = []  # noqa: RUF012  (the ticks seen during each embedding wait)

    @classmethod
    def reset(cls) -> None:
        cls.ticks = cls.in_flight = cls.most_in_flight = 0
        cls.ticks_during = []


class _Watched(SlowAsyncEmbedding):
    """:class:`SlowAsyncEmbedding` that records, for each query's embedding wait, how many
    queries were waiting at once and how often the loop's ticker ran meanwhile."""

    async def _aget_query_embedding(self, query: str) -> list[float]:
        _Watch.in_flight += 1
        _Watch.most_in_flight = max(_Watch.most_in_flight, _Watch.in_flight)
        t0 = _Watch.ticks
        try:
            return await super()._aget_query_embedding(query)
        finally:
            _Watch.ticks_during.append(_Watch.ticks - t0)
            _Watch.in_flight -= 1

    def _get_query_embedding(self, query: str) -> list[float]:
        t0 = _Watch.ticks
        try:
            return super()._get_query_embedding(query)
        finally:
            _Watch.ticks_during.append(_Watch.ticks - t0)


QUERIES = [
    "kubernetes deployments",
    "rotate api keys",
    "incident response pager",
    "oauth tokens and single sign-on",
]


async def _max_gap_while(coro_factory: object) -> tuple[float, float, object]:
    """Run the awaitable while a ticker measures the longest stall of the event loop.

    The garbage the earlier tests of a full run left behind is collected and frozen first: a
    full collection of it (seen: 0.19 s in a 2,000-test run) would stall any loop, and what
    is measured here is whether *retrieval* blocks the loop."""
    _Watch.reset()
    gc.collect()
    gc.freeze()
    try:
        return await _timed(coro_factory)
    finally:
        gc.unfreeze()


async def _timed(coro_factory: object) -> tuple[float, float, object]:
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            _Watch.ticks += 1

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.02)  # the ticker is running before the work starts
    t0 = time.perf_counter()
    result = await coro_factory()  # type: ignore[operator]
    elapsed = time.perf_counter() - t0
    await asyncio.sleep(0.02)  # ... and ticks once more after it, to see a final stall
    stop.set()
    await tick
    return elapsed, max(gaps), result


async def test_concurrent_aretrieve_overlaps_and_never_blocks_the_loop() -> None:
    emb = _Watched(delay_s=DELAY)
    client = Treehop(embedder=LlamaIndexEmbedder(emb), tagger=None)
    try:
        await asyncio.to_thread(
            client.add_resource,
            SAMPLE_TREE / "resources" / "devops",
            target_uri="viking://resources",
        )
        await asyncio.to_thread(
            client.add_resource,
            SAMPLE_TREE / "resources" / "security",
            target_uri="viking://resources",
        )
        retriever = TreehopRetriever(client, similarity_top_k=3)
        emb.forbid_sync_query = True  # the async path must not use the blocking sync query

        _, _, results = await _max_gap_while(
            lambda: asyncio.gather(*(retriever.aretrieve(q) for q in QUERIES))
        )
        emb.forbid_sync_query = False
        # Overlap: all four queries waited on their embedding at once (serial: one at a time).
        assert _Watch.most_in_flight == len(QUERIES), _Watch.most_in_flight
        # A free loop: its ticker ran during every embedding wait (a blocked one: 0 ticks).
        assert len(_Watch.ticks_during) == len(QUERIES), _Watch.ticks_during
        assert min(_Watch.ticks_during) >= 1, _Watch.ticks_during
        for q, nodes in zip(QUERIES, results, strict=True):
            expected = await asyncio.to_thread(retriever.retrieve, q)
            assert [n.node.node_id for n in nodes] == [n.node.node_id for n in expected]
            assert len(nodes) == 3
    finally:
        client.close()


async def test_blocking_sync_path_would_be_detected() -> None:
    """The ticker does catch a blocked loop: calling the sync retrieve on the loop stalls it."""
    emb = _Watched(delay_s=DELAY)
    client = Treehop(embedder=LlamaIndexEmbedder(emb), tagger=None)
    try:
        await asyncio.to_thread(
            client.add_resource,
            SAMPLE_TREE / "resources" / "security",
            target_uri="viking://resources",
        )
        retriever = TreehopRetriever(client, similarity_top_k=2)

        async def blocking() -> object:
            return retriever.retrieve("api keys")

        _, max_gap, _ = await _max_gap_while(blocking)
        assert max_gap >= DELAY * 0.8  # (a lower bound: load only lengthens a stall)
        assert _Watch.ticks_during == [0]  # the causal check sees the blocked loop
    finally:
        client.close()


async def test_async_client_concurrent_aretrieve() -> None:
    emb = _Watched(delay_s=DELAY)
    client = AsyncTreehop(embedder=LlamaIndexEmbedder(emb), tagger=None)
    await client.add_resource(SAMPLE_TREE / "resources" / "devops", target_uri="viking://resources")
    retriever = TreehopRetriever(client, similarity_top_k=2)
    emb.forbid_sync_query = True
    _, _, results = await _max_gap_while(
        lambda: asyncio.gather(*(retriever.aretrieve(q) for q in QUERIES))
    )
    assert _Watch.most_in_flight == len(QUERIES), _Watch.most_in_flight
    assert len(_Watch.ticks_during) == len(QUERIES), _Watch.ticks_during
    assert min(_Watch.ticks_during) >= 1, _Watch.ticks_during
    assert all(len(r) == 2 for r in results)  # type: ignore[attr-defined]
    direct = await client.find(QUERIES[0], limit=2, include_directories=False)
    assert [n.node.node_id for n in results[0]] == [m.uri for m in direct.contexts()]  # type: ignore[index]
