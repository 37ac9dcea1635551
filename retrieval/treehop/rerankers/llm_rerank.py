"""A reranker that asks a chat model (through the :class:`~treehop.llm.base.LLM` protocol).

When no cross-encoder is available but an LLM is configured anyway (for intent analysis), it can
grade candidates: one prompt per batch of passages asks for a JSON object
``{"scores": [...]}`` with one 0-10 relevance grade per passage, in order. Grades are divided by
10 so that scores share the [0, 1] range of the other rerankers.

Chat models do not always follow the format, so parsing is tolerant of what is harmless (code
fences, prose around the JSON, numbers given as strings, a bare list) and strict about what
would misalign the ranking (a wrong count, a grade outside 0-10, NaN): those raise
:class:`~treehop.errors.RerankError`, and the retriever falls back to vector scores visibly.
"""

from __future__ import annotations

import asyncio
import json
import math
import string
import time
from collections.abc import Mapping, Sequence
from typing import Any

from .._http import check_deadline, deadline_scope, truncate
from .._plugins import describe, is_signal
from ..errors import RerankError
from ..llm.base import LLM, ChatMessage
from ..redaction import redact
from ..validation import shown_value
from .base import BaseReranker

MAX_GRADE = 10.0

_SYSTEM = (
    "You grade search results for relevance. You receive a query and numbered passages. "
    "Give each passage an integer grade from 0 to 10: 10 means the passage directly and fully "
    "answers the query, 5 means it is on the topic but only partly useful, 0 means unrelated. "
    "Judge every passage independently and only by its text. "
    'Answer with JSON only, in the form {"scores": [g0, g1, ...]}, one grade per passage, '
    "in passage order."
)

_ASCII_LETTERS = frozenset(string.ascii_letters)


def unfence(text: str) -> str | None:
    """The body of an answer that is one fenced block (```` ```json ... ``` ````), stripped;
    ``None`` when ``text`` (already stripped) is not one. What
    ``^\\s*```[a-zA-Z]*\\s*(.*?)\\s*```\\s*$`` matched, in one pass: that regex
    backtracked through each whitespace run at every position ("```", 5,000 spaces and "x":
    90 s)."""
    if len(text) < 6 or not text.startswith("```") or not text.endswith("```"):
        return None
    body = text[3:-3]
    i = 0
    while i < len(body) and body[i] in _ASCII_LETTERS:
        i += 1
    return body[i:].strip()


def build_messages(query: str, passages: Sequence[str]) -> list[ChatMessage]:
    """The prompt for one batch; passages are numbered from 0 to match the list positions."""
    lines = [f"Query: {query}", "", f"Passages ({len(passages)}):"]
    for i, text in enumerate(passages):
        flat = " ".join(text.split())  # newlines inside a passage would blur the numbering
        lines.append(f"[{i}] {flat}")
    lines += ["", f'Return {{"scores": [...]}} with exactly {len(passages)} grades.']
    return [
        ChatMessage(role="system", content=_SYSTEM),
        ChatMessage(role="user", content="\n".join(lines)),
    ]


def _loads_lenient(text: str) -> Any:
    """JSON from a model's answer: the whole text, a fenced block, or the outermost object."""
    stripped = text.strip()
    fenced = unfence(stripped)
    if fenced is not None:
        stripped = fenced
    candidates = [stripped]
    for open_ch, close_ch in (("{", "}"), ("[", "]")):
        a, b = stripped.find(open_ch), stripped.rfind(close_ch)
        if 0 <= a < b:
            candidates.append(stripped[a : b + 1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except (ValueError, RecursionError):  # RecursionError: nesting past the limit
            continue
    raise RerankError(f"LLM answer is not JSON: {text[:200]!r}")


def _grade(value: object, pos: int) -> float:
    if isinstance(value, bool):
        raise RerankError(f"LLM grade {pos} is a boolean, not a number")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise RerankError(f"LLM grade {pos} is not a number: {value!r}") from None
    if not isinstance(value, (int, float)):
        raise RerankError(f"LLM grade {pos} is not a number: {value!r}")
    try:
        grade = float(value)
    except OverflowError:  # an int past float range (JSON allows 10**400)
        grade = math.inf
    if not math.isfinite(grade) or not 0.0 <= grade <= MAX_GRADE:
        raise RerankError(f"LLM grade {pos} is outside 0-10: {value!r}")
    return grade


def _is_number_key(key: str) -> bool:
    """Whether a grade's key reads as a passage number ``int()`` takes: decimal digits (any
    script's), at most 9 of them. ``str.isdigit`` also takes "²" (which ``int`` refuses) and
    any number of digits (past 4,300 ``int`` refuses too): a model's ``{"²": 5}`` escaped a
    raw ``ValueError`` out of :meth:`LLMReranker.rerank`."""
    key = key.strip()
    return 0 < len(key) <= 9 and key.isdecimal()


def parse_scores(text: str, n: int) -> list[float]:
    """Grades in passage order, scaled to [0, 1]; :class:`RerankError` on anything unusable.

    Error messages quote the model's answer, so they are redacted (a model fed a key can echo it).
    """
    try:
        return _parse_scores(text, n)
    except RerankError as exc:
        raise RerankError(redact(str(exc))) from None


def _parse_scores(text: str, n: int) -> list[float]:
    data = _loads_lenient(text)
    if isinstance(data, Mapping):
        if "scores" in data:
            data = data["scores"]
        elif data and all(isinstance(k, str) and _is_number_key(k) for k in data):
            # {"0": 7, "1": 3}: keyed by passage number.
            keyed = {int(k): v for k, v in data.items()}
            if len(keyed) < len(data):
                # "0" and "00" (or " 0", a non-ASCII "0") name one passage: which grade
                # is its own cannot be told (helper review76: the later one was taken).
                raise RerankError("LLM graded a passage twice under different keys")
            if sorted(keyed) != list(range(n)):
                raise RerankError(f"LLM graded passages {sorted(keyed)[:20]}, expected 0..{n - 1}")
            data = [keyed[i] for i in range(n)]
        else:
            raise RerankError(f"LLM answer has no 'scores': keys {sorted(map(str, data))[:10]}")
    if not isinstance(data, list):
        raise RerankError(f"LLM scores are not a list: {type(data).__name__}")
    if len(data) != n:
        raise RerankError(f"LLM returned {len(data)} grades for {n} passages")
    return [_grade(v, i) / MAX_GRADE for i, v in enumerate(data)]


class LLMReranker(BaseReranker):
    """Grades passages with a chat model; one prompt per ``batch_size`` passages.

    Args:
        llm: Any object implementing the :class:`~treehop.llm.base.LLM` protocol.
        batch_size: Passages per prompt. Small batches keep grades consistent and cheap to
            retry; large ones save calls.
        max_chars / max_query_chars: Length bounds so the prompt fits the model's context.
        concurrency: How many batch prompts :meth:`arerank` keeps in flight.
        deadline_s: Total time of one :meth:`rerank` / :meth:`arerank` call, all its batches
            together (``None``: no total bound). Each batch is also bounded by the model's
            own deadline, but :meth:`rerank` runs batches one after another, so without a
            total a direct call (outside ``find``, whose ``rerank_timeout_s`` bounds the
            stage) took up to batches x the model's deadline. Past it the call raises
            :class:`~treehop.errors.RerankError`. :meth:`arerank` cancels the prompts in
            flight; :meth:`rerank` stops treehop's own chat clients mid-answer (their sockets
            honour the deadline) and any other :class:`~treehop.llm.base.LLM` between
            batches.
    """

    def __init__(
        self,
        llm: LLM,
        *,
        batch_size: int = 10,
        max_chars: int = 1000,
        max_query_chars: int = 1000,
        concurrency: int = 4,
        deadline_s: float | None = 60.0,
    ) -> None:
        if not isinstance(llm, LLM):
            raise RerankError(f"llm must implement the LLM protocol, got {type(llm).__name__}")
        for label, value in (
            ("batch_size", batch_size),
            ("max_chars", max_chars),
            ("max_query_chars", max_query_chars),
            ("concurrency", concurrency),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RerankError(f"{label} must be a positive integer, got {shown_value(value)}")
        self.llm = llm
        self.batch_size = batch_size
        self.max_chars = max_chars
        self.max_query_chars = max_query_chars
        self.concurrency = concurrency
        self.deadline_s = check_deadline(deadline_s, RerankError)
        self.name = f"llm-rerank:{llm.name}"

    def __repr__(self) -> str:
        return f"LLMReranker(llm={self.llm.name!r}, batch_size={self.batch_size})"

    def _batches(self, query: str, documents: Sequence[str]) -> list[list[ChatMessage]]:
        for i, d in enumerate(documents):
            if not isinstance(d, str):
                raise RerankError(f"document {i} is not a string: {type(d).__name__}")
        q = truncate(query, self.max_query_chars)
        docs = [truncate(d, self.max_chars) for d in documents]
        return [
            build_messages(q, docs[start : start + self.batch_size])
            for start in range(0, len(docs), self.batch_size)
        ]

    def _sizes(self, n: int) -> list[int]:
        return [min(self.batch_size, n - start) for start in range(0, n, self.batch_size)]

    def _deadline_error(self) -> RerankError:
        return RerankError(
            f"{self.name}: no complete grades within the {self.deadline_s:g}s deadline (deadline_s)"
        )

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """Scores in [0, 1], in input order; batches in sequence, under one ``deadline_s``."""
        scores: list[float] = []
        batches = self._batches(query, documents)
        with deadline_scope(self.deadline_s) as end:
            for messages, size in zip(batches, self._sizes(len(documents)), strict=True):
                if end is not None and time.monotonic() >= end:
                    raise self._deadline_error()
                try:
                    answer = self.llm.complete(messages, json_mode=True)
                except BaseException as exc:
                    if is_signal(exc):
                        raise
                    if end is not None and time.monotonic() >= end:
                        raise self._deadline_error() from None
                    raise RerankError(f"LLM call failed: {describe(exc)}") from None
                scores.extend(parse_scores(answer, size))
        return scores

    async def arerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """The async twin of :meth:`rerank`; batches run concurrently (``concurrency``)."""
        gate = asyncio.Semaphore(self.concurrency)

        async def one(messages: list[ChatMessage], size: int) -> list[float]:
            async with gate:
                try:
                    answer = await self.llm.acomplete(messages, json_mode=True)
                except BaseException as exc:
                    if is_signal(exc):
                        raise
                    raise RerankError(f"LLM call failed: {describe(exc)}") from None
            return parse_scores(answer, size)

        batches = self._batches(query, documents)
        calls = [one(m, s) for m, s in zip(batches, self._sizes(len(documents)), strict=True)]
        if self.deadline_s is None:
            parts = await asyncio.gather(*calls)
        else:
            # Batches past ``concurrency`` queue behind the gate: the total covers the queue.
            try:
                async with asyncio.timeout(self.deadline_s):
                    parts = await asyncio.gather(*calls)
            except TimeoutError:
                raise self._deadline_error() from None
        return [s for part in parts for s in part]
