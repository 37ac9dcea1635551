"""Helper attacks54's adversarial pass (see bench/README.md, "Adversarial pass (helper
attacks54)"): a caller's extractor that never answers, invisible content, a new session's
numbering, the CLI's and MCP tools' answers, ``add_records``' ``uri`` metadata."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder


def _client(tmp_path: Path, **kw: Any) -> Treehop:
    return Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None, **kw)


def _uris(c: Treehop) -> list[str]:
    return [n.uri for n in c.store.iter_nodes()]  # type: ignore[attr-defined]


# ------------------------------------------- 1. a caller's extractor that never answers
class _Forever:
    """An extractor awaiting what never comes (a model call without a timeout)."""

    async def extract(self, turns: Any) -> Any:
        await asyncio.Event().wait()


class _Deaf:
    """An extractor that swallows its cancellation and keeps waiting a while."""

    def __init__(self) -> None:
        self.ended = False

    async def extract(self, turns: Any) -> Any:
        for _ in range(20):
            try:
                await asyncio.sleep(0.1)
            except asyncio.CancelledError:
                continue
        self.ended = True
        return ("late summary", ["a late fact"])


def test_an_extractor_that_never_answers_is_cut_at_its_deadline(tmp_path: Path) -> None:
    """``add_messages(..., extractor=...)`` awaited the caller's extractor without a bound:
    one that never answered hung the call forever (its turns were already stored). Now the
    extraction has a total deadline (``extract_deadline_s``): past it the result says so in
    ``extraction_error``, nothing of it is written, and the turns stay."""
    c = _client(tmp_path)
    try:
        t0 = time.perf_counter()
        res = c.add_messages(
            [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=0.3
        )
        assert time.perf_counter() - t0 < 5
        assert res.extraction_error and "0.3" in res.extraction_error
        assert "deadline" in res.extraction_error
        assert res.fact_uris == [] and res.summary is None and len(res.turn_uris) == 1
        assert not [u for u in _uris(c) if "fact-" in u]
        # (the client still works afterwards)
        assert len(c.add_messages([{"content": "more"}], session_id=res.session_id).turn_uris)
    finally:
        c.close()


def test_an_extractor_deaf_to_cancellation_does_not_hold_the_call(tmp_path: Path) -> None:
    c = _client(tmp_path)
    try:
        deaf = _Deaf()
        t0 = time.perf_counter()
        res = c.add_messages([{"content": "hello there"}], extractor=deaf, extract_deadline_s=0.2)
        assert time.perf_counter() - t0 < 1.5
        assert res.extraction_error and res.fact_uris == []
        time.sleep(2.5)  # (it ends on its own later: what it answers then is not written)
        assert not [u for u in _uris(c) if "fact-" in u]
    finally:
        c.close()


def test_the_async_path_has_the_deadline_too(tmp_path: Path) -> None:
    async def go() -> None:
        c = AsyncTreehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), tagger=None)
        try:
            res = await c.add_messages(
                [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=0.2
            )
            assert res.extraction_error and len(res.turn_uris) == 1
        finally:
            await c.close()

    asyncio.run(go())


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), True, "5", 1e9])
def test_a_bad_extract_deadline_is_refused_before_any_write(tmp_path: Path, bad: Any) -> None:
    c = _client(tmp_path)
    try:
        with pytest.raises(InvalidQueryError):
            c.add_messages(
                [{"content": "hello there"}], extractor=_Forever(), extract_deadline_s=bad
            )
        assert not [u for u in _uris(c) if "turn-" in u]
    finally:
        c.close()


def test_the_default_extract_deadline_is_documented_and_finite() -> None:
    import inspect

    from treehop import memory

    default = inspect.signature(memory.add_messages).parameters["extract_deadline_s"].default
    assert default == memory.EXTRACT_DEADLINE_S and 0 < default < 3600
    assert (
        inspect.signature(Treehop.add_messages).parameters["extract_deadline_s"].default == default
    )
