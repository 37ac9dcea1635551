"""Appends with an extractor racing on one session, the conversation locks' table, and the cap
on messages per call.

An extraction (an LLM call) runs outside the conversation's lock; its write takes the lock
and is dropped, with ``extraction_error`` saying why, when the extraction of a later append
was written meanwhile. Before, the slower of two racing extractions wrote
last: its facts (from fewer turns) replaced the newer ones and the session node was
re-described without the newer turn."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop
from treehop import memory as mem
from treehop.memory import Turn

from treehop_test_doubles import BagOfWordsEmbedder

CONVS = "viking://~/memories/conversations"


def msgs(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"message number {start + i} about apples", "speaker": "Ann"}
        for i in range(n)
    ]


class CountingExtractor:
    """Summarises how many turns it saw; the extraction of ``slow_at`` turns waits until
    ``release`` is set (an LLM that answers late)."""

    def __init__(self, slow_at: int) -> None:
        self.slow_at = slow_at
        self.release = asyncio.Event()
        self.seen: list[int] = []

    async def extract(self, turns: Sequence[Turn]) -> tuple[str, list[str]]:
        self.seen.append(len(turns))
        if len(turns) == self.slow_at:
            await self.release.wait()
        return f"{len(turns)} turns", [f"fact from {len(turns)} turns"]


def test_a_slower_stale_extraction_does_not_replace_the_newer_one(tmp_path: Path) -> None:
    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            ex = CountingExtractor(slow_at=2)
            first = asyncio.create_task(
                a.add_messages(msgs(2), conversation_id="c", session_id="s", extractor=ex)
            )
            while ex.seen != [2]:  # (the first append is written, its extraction waits)
                await asyncio.sleep(0.01)
            second = await a.add_messages(
                msgs(1, start=2), conversation_id="c", session_id="s", extractor=ex
            )
            ex.release.set()
            stale = await first
            assert ex.seen == [2, 3]
            assert second.extraction_error is None
            assert second.summary == "3 turns"
            assert stale.extraction_error is not None
            assert stale.extraction_error.startswith("StaleExtraction")
            assert stale.fact_uris == [] and stale.summary is None
            session_uri = a.resolve(f"{CONVS}/c/s")
            kids = await a._io(a.store.children, session_uri)
            facts = [k.content for k in kids if k.metadata.get("kind") == "fact"]
            stamps = [k.metadata["extracted_at"] for k in kids if k.metadata.get("kind") == "fact"]
            turns = [k for k in kids if k.metadata.get("kind") == "turn"]
            assert facts == ["fact from 3 turns"]
            assert len(stamps) == 1 and stamps[0] >= max(t.metadata["timestamp"] for t in turns)
            assert len(turns) == 3
            (session,) = await a._io(a.store.get, [session_uri])
            assert session is not None
            assert session.metadata.get("summary") == "3 turns"
            assert "message number 2" in (session.overview or "")

    asyncio.run(run())


def test_an_extraction_alone_is_written(tmp_path: Path) -> None:
    """An extraction with nothing racing is written, again and again on one session, whatever
    the turns' text looks like (dated or not, a speaker prefix in the content, a message
    id)."""

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            ex = CountingExtractor(slow_at=-1)
            odd = [
                {"role": "user", "content": "Ann: (1 May) Ann: hi", "speaker": "Ann"},
                {"role": "assistant", "content": "(x) y", "message_id": "m-1"},
            ]
            for dated in (True, False):
                res = await a.add_messages(
                    odd,
                    conversation_id="c",
                    session_id=f"s{dated}",
                    extractor=ex,
                    dated_text=dated,
                )
                assert res.extraction_error is None
                assert res.summary == "2 turns"
                res = await a.add_messages(
                    msgs(1),
                    conversation_id="c",
                    session_id=f"s{dated}",
                    extractor=ex,
                    dated_text=dated,
                )
                assert res.extraction_error is None
                assert res.summary == "3 turns"

    asyncio.run(run())


def test_the_lock_table_holds_only_conversations_in_use(tmp_path: Path) -> None:
    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            for i in range(5):
                await a.add_messages(msgs(1), conversation_id=f"c{i}")
            assert mem._conversation_locks.get(a.store) == {}
            conv = a.resolve(f"{CONVS}/c0")
            async with mem._conversation_lock(a.store, conv):
                waiting = asyncio.create_task(a.add_messages(msgs(1), conversation_id="c0"))
                await asyncio.sleep(0.05)
                table = mem._conversation_locks[a.store]
                assert list(table) == [conv] and table[conv].users == 2
                waiting.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await waiting
                assert table[conv].users == 1
            assert mem._conversation_locks.get(a.store) == {}

    asyncio.run(run())


def test_too_many_messages_in_one_call_are_refused_before_any_write(tmp_path: Path) -> None:
    from treehop import InvalidQueryError

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            many = [{"content": "ok"}] * (mem.MAX_MESSAGES_PER_CALL + 1)
            with pytest.raises(InvalidQueryError, match="in several calls"):
                await a.add_messages(many, conversation_id="c", session_id="s")
            assert len(a.store) == 0
            res = await a.add_messages(many[:3], conversation_id="c", session_id="s")
            assert len(res.turn_uris) == 3

    asyncio.run(run())


def test_an_extraction_after_turns_were_removed_is_written(tmp_path: Path) -> None:
    """A removal makes a session shorter than the one an earlier extraction read: the next
    append's extraction is the newer one all the same, and is written."""

    async def run() -> None:
        async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder(), tagger=None) as a:
            ex = CountingExtractor(slow_at=-1)
            res = await a.add_messages(msgs(6), conversation_id="c", session_id="s", extractor=ex)
            assert res.summary == "6 turns"
            for i in range(1, 5):
                await a.remove(f"{CONVS}/c/s/turn-{i:05d}")
            res = await a.add_messages(
                msgs(1, start=6), conversation_id="c", session_id="s", extractor=ex
            )
            assert res.extraction_error is None
            assert res.summary == "3 turns"
            session_uri = a.resolve(f"{CONVS}/c/s")
            kids = await a._io(a.store.children, session_uri)
            facts = [k.content for k in kids if k.metadata.get("kind") == "fact"]
            assert facts == ["fact from 3 turns"]

    asyncio.run(run())


def test_append_times_rise_when_the_clock_steps_back(monkeypatch: pytest.MonkeyPatch) -> None:
    first = mem._append_time()
    monkeypatch.setattr(mem.time, "time", lambda: first - 3600.0)
    second = mem._append_time()
    third = mem._append_time()
    assert first < second < third
