"""The file-target hint beyond ``find()`` (helper leftovers65b, bench/README.md "(helper
leftovers65b)"; usage72's open item): a ``find`` scoped to a file or a chunk that answers
nothing logs why (a leaf target searches that leaf alone) from an in-process ``find()``
only. Now also ``find_many`` (once a batch, counting its empty queries; in process and
split over reader processes), a ``find`` a reader process answered (the parent logs it),
and the MCP ``find`` answer carries it as ``hint`` for the agent, who reads no log.

Each test fails on 6ef26e9a unless it says it is a control.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.client_readers import MIN_SPLIT_FIND_MANY

from treehop_test_doubles import BagOfWordsEmbedder

OIL = "viking://resources/docs/oil.md"
MISS = "drive belt tension"  # (words of belts.md only: nothing in oil.md above 0.5)


def _docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "oil.md").write_text("# Oil\n\nOil the spindle weekly with light machine oil.\n")
    (d / "belts.md").write_text("# Belts\n\nTension the drive belt until it hums.\n")
    return d


def _index(tmp_path: Path) -> Path:
    path = tmp_path / "idx"
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0) as th:
        th.add_resource(_docs(tmp_path), target_uri="viking://resources/docs")
        th.add_resource(
            "A soup of kitchen notes.",
            target_uri="viking://resources/soup",
            tags=["kitchen"],
            is_text=True,
        )
    return path


def _hints(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("treehop") and "matched nothing" in r.getMessage()
    ]


def test_find_many_says_why_once_for_the_batch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        th.add_resource(_docs(tmp_path), target_uri="viking://resources/docs")
        with caplog.at_level(logging.WARNING, logger="treehop"):
            out = th.find_many([MISS, "oil the spindle", MISS], target_uri=OIL, score_threshold=0.5)
        assert [bool(r) for r in out] == [False, True, False]
        hints = _hints(caplog)
        assert len(hints) == 1, hints
        assert hints[0].startswith(f"find_many: target_uri {OIL} matched nothing")
        assert "under score_threshold=0.5 for 2 of 3 queries" in hints[0]
        assert "target_uri='viking://resources/docs'" in hints[0]
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="treehop"):  # (control) all answered
            th.find_many(["oil the spindle", "light machine oil"], target_uri=OIL)
            th.find_many([MISS], target_uri="viking://resources/docs", score_threshold=0.99)
        assert _hints(caplog) == []  # (and a folder that matches nothing stays quiet)


def test_the_async_find_many_says_why(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> None:
        async with AsyncTreehop(embedder=BagOfWordsEmbedder(), tagger=None) as a:
            await a.add_resource(_docs(tmp_path), target_uri="viking://resources/docs")
            with caplog.at_level(logging.WARNING, logger="treehop"):
                await a.find_many([MISS], target_uri=OIL, score_threshold=0.5)

    asyncio.run(run())
    assert [h.split(":")[0] for h in _hints(caplog)] == ["find_many"]


def test_a_find_a_reader_process_answered_says_why_here(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _index(tmp_path)
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=1) as th:
        assert th._wait_readers()
        pool = th._readers_for_call()
        assert pool is not None
        served = sum(pool.served.values())
        with th._local_slot, caplog.at_level(logging.WARNING, logger="treehop"):
            # (the slot held, as by a find running here: this one goes to the worker)
            res = th.find(MISS, target_uri=OIL, score_threshold=0.5)
        assert not res and sum(pool.served.values()) == served + 1
    hints = _hints(caplog)
    assert len(hints) == 1 and hints[0].startswith(f"find: target_uri {OIL} matched nothing")


def test_a_batch_split_over_reader_processes_says_why_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _index(tmp_path)
    queries = [MISS] * (MIN_SPLIT_FIND_MANY + 4)
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=1) as th:
        assert th._wait_readers()
        pool = th._readers_for_call(batch=True)
        assert pool is not None
        served = sum(pool.served.values())
        with caplog.at_level(logging.WARNING, logger="treehop"):
            out = th.find_many(queries, target_uri=OIL, score_threshold=0.5)
        assert not any(out) and sum(pool.served.values()) > served  # (a worker took a part)
    hints = _hints(caplog)
    assert len(hints) == 1, hints
    assert f"for {len(queries)} of {len(queries)} queries" in hints[0]


async def test_the_mcp_find_tells_the_agent(tmp_path: Path) -> None:
    from mcp import Client

    from treehop.mcp_server import build_server

    path = _index(tmp_path)
    a = AsyncTreehop(path, embedder=BagOfWordsEmbedder(), tagger=None, reader_processes=0)
    try:
        async with Client(build_server(a)) as client:
            res = await client.call_tool(
                "find", {"query": "oil the spindle", "target_uri": OIL, "tags": ["kitchen"]}
            )
            out = res.structured_content or {}
            assert not res.is_error and out["hits"] == []
            assert out["hint"].startswith(
                f"find: target_uri {OIL} matched nothing under the filter"
            )
            assert "target_uri='viking://resources/docs'" in out["hint"]
            # (controls) a file target that answers, a folder that matches nothing: no hint
            found = await client.call_tool("find", {"query": "oil the spindle", "target_uri": OIL})
            assert (found.structured_content or {})["hits"] and "hint" not in (
                found.structured_content or {}
            )
            folder = await client.call_tool(
                "find",
                {"query": "oil", "target_uri": "viking://resources/docs", "tags": ["kitchen"]},
            )
            assert (folder.structured_content or {}) == {"total": 0, "hits": []}
    finally:
        await a.close()
