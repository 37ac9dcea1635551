"""The reranker protocol and the fallback that keeps vector scores when a reranker fails.

A reranker gets one batched call per heap round (never one per directory). Whatever goes wrong
-- an exception, a timeout, the wrong number of scores, NaN or infinity -- the retriever keeps the
vector scores and records ``rerank_fallback`` with the reason on the result, never silently.
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from .._plugins import describe, finished_within, is_signal
from ..redaction import redact
from ..validation import shown_value


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, document) pairs; higher is more relevant."""

    @property
    def name(self) -> str: ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]: ...

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]: ...


class BaseReranker:
    """Default async: run the sync call in a worker thread."""

    name: str = "reranker"

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:  # pragma: no cover
        raise NotImplementedError

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return await asyncio.to_thread(self.rerank, query, documents)


@dataclass(frozen=True)
class RerankOutcome:
    """Scores from the reranker, or ``None`` with the reason it fell back."""

    scores: list[float] | None
    fallback_reason: str | None = None


UNORDERED_ANSWERS: tuple[type, ...] = (str, bytes, bytearray, Mapping, AbstractSet)
"""Answers that iterate but are no list of scores in document order: a string's characters
(``"12"`` read as 1.0 and 2.0), a mapping's keys (``{0: 0.9, 1: 0.1}`` ranked by its indices),
a set in its hash order (helper review76)."""


NOT_SCORES: tuple[type, ...] = (bool, np.bool_, str, bytes, bytearray, memoryview)
"""Items that ``float()`` reads but are no score: ``True`` / ``False`` (1.0 and 0.0, a
plug-in's relevance flags or a bug), a numeric string (``"0.9"``, ``" 1e3 "``: text where
numbers belong). Such an answer is invalid and the vector scores stand (helper pipeline77);
treehop's HTTP and LLM rerankers already refused them in their own parsers."""


def validate_scores(scores: object, expected: int) -> tuple[list[float] | None, str | None]:
    """Check a reranker's answer; return (scores, None) or (None, reason). Never raises (but
    for a Ctrl-C, an exit): an answer that fails while it is read is an invalid answer.

    Why (helper review78a): the answer is a plug-in's object, read here outside the guard
    around the plug-in's call: a lazy answer (``map(float, texts)``, a generator) whose
    items raise, an item whose ``__float__`` raises other than ``TypeError`` /
    ``ValueError``, or whose ``repr`` raises, escaped raw out of :func:`safe_rerank` (which
    never raises) and failed the whole search; an endless iterator was read for good; an
    item's ``repr`` went whole into the reason (a list of 10**5 numbers: 0.5 MB)."""
    try:
        return _validate_scores(scores, expected)
    except BaseException as exc:  # (a plug-in's object failing while read: its fault)
        if is_signal(exc):
            raise
        return None, f"invalid answer: reading it failed: {describe(exc)}"[:500]


def _validate_scores(scores: object, expected: int) -> tuple[list[float] | None, str | None]:
    if isinstance(scores, UNORDERED_ANSWERS):
        return None, f"invalid answer: expected a list of scores, got {type(scores).__name__}"
    if not isinstance(scores, (list, tuple)):
        try:
            items = iter(scores)  # type: ignore[call-overload]
        except TypeError:
            return None, f"invalid answer: expected a list of scores, got {type(scores).__name__}"
        # (at most one item past ``expected``: an endless iterator is not read for good)
        scores = list(itertools.islice(items, expected + 1))
        if len(scores) > expected:
            return None, f"invalid answer: more than {expected} scores for {expected} documents"
    assert isinstance(scores, (list, tuple))
    if len(scores) != expected:
        return None, f"invalid answer: {len(scores)} scores for {expected} documents"
    out: list[float] = []
    # (at most ``expected`` items, and as many as that: a list or tuple subclass's own
    # ``__iter__`` may disagree with its ``__len__``, endless or short)
    for s in itertools.islice(scores, expected + 1):
        if isinstance(s, NOT_SCORES):
            head = s[:40] if isinstance(s, (str, bytes, bytearray)) else s
            return None, (
                f"invalid answer: non-numeric score {shown_value(head, 60)} "
                f"(a {type(s).__name__[:100]})"
            )
        try:
            f = float(s)
        except (TypeError, ValueError, OverflowError):  # Overflow: an int like 10**400
            return None, f"invalid answer: non-numeric score {shown_value(s, 60)}"
        if not math.isfinite(f):
            return None, f"invalid answer: non-finite score {f!r}"
        out.append(f)
    if len(out) != expected:
        return None, f"invalid answer: {len(out)} scores read for {expected} documents"
    return out, None


async def safe_rerank(
    reranker: Reranker, query: str, documents: Sequence[str], timeout_s: float
) -> RerankOutcome:
    """Call ``reranker`` once for the batch with a timeout; never raises (but for the
    caller's own cancellation, a Ctrl-C, an exit).

    The call is abandoned at ``timeout_s`` even if it ignores the cancellation, as the intent
    analyzer's is: ``asyncio.wait_for`` waited for such a call to end and then took its late
    answer as valid (helper review76). A reranker that cancels itself falls back.
    """
    if not documents:
        return RerankOutcome(scores=[])
    try:
        task = asyncio.ensure_future(reranker.arerank(query, documents))
    except BaseException as exc:  # (an ``arerank`` that is no coroutine: a plug-in's fault)
        if is_signal(exc):
            raise
        return RerankOutcome(None, f"error: {describe(exc)}"[:500])
    if not await finished_within(task, timeout_s):
        return RerankOutcome(None, f"timeout after {timeout_s:g}s")
    try:
        raw = task.result()
    except asyncio.CancelledError:
        return RerankOutcome(None, "the reranker call was cancelled")
    except BaseException as exc:  # any reranker fault falls back (not a Ctrl-C, an exit)
        if is_signal(exc):
            raise
        return RerankOutcome(None, f"error: {describe(exc)}"[:500])
    scores, reason = validate_scores(raw, len(documents))
    return RerankOutcome(scores, None if reason is None else redact(reason))
