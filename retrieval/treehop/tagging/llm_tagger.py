"""Optional ``llm:`` tags: a chat model labels new leaves, on top of the automatic keywords.

Why on top and not instead: the automatic tagger is what directories aggregate and what
corpus statistics are kept for, and it never fails. The model adds labels a keyword extractor
cannot produce (a topic named by none of the words, a synonym shared across subtrees); when
the model errs -- an HTTP error, a timeout, an answer that is not the JSON asked for, labels
that are not valid tags -- the leaves of that batch keep their automatic tags only. A node is
never lost and ``add_resource`` never fails because of the model.

Cost and time are bounded: only leaves whose text is new in this call are sent (a re-add of
unchanged files or a backfill sends nothing and keeps the ``llm:`` tags already stored), in
batches of ``batch_size`` texts clipped to ``max_chars``, and all calls of one ``tag_nodes``
share one total deadline (``deadline_s``): a batch that would start after it, or a call that
runs past it, falls back.

Usage::

    from treehop import Treehop
    from treehop.llm.openai_compatible import OpenAICompatibleLLM
    from treehop.tagging.llm_tagger import LLMTagger

    th = Treehop("./index", tagger=LLMTagger(OpenAICompatibleLLM("gpt-4o-mini")))
"""

from __future__ import annotations

import concurrent.futures
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

from .. import tags as tagmod
from .._plugins import describe, is_signal
from ..errors import InvalidTagError, TreehopError
from ..llm.base import LLM, ChatMessage
from ..models import Node
from ..stores.base import VectorStore
from ..validation import shown_value
from .base import NodeTags, Tagger
from .ingest import IngestTagger

MAX_ANSWER_CHARS = 200_000
"""A longer answer is refused unparsed (a bound on work for a runaway model)."""

_SYSTEM = (
    "You assign topic labels to short documents so that documents about the same subject can "
    "be linked. For each numbered document give up to {k} labels: lowercase, one to three "
    "words, specific to its subject (no generic words such as 'document', 'text', 'info'). "
    'Answer with one JSON object only: {{"labels": {{"1": ["label", ...], "2": [...]}}}}.'
)


def parse_answer(raw: str, count: int, max_tags: int) -> dict[int, list[str]] | None:
    """The labels of an answer, by document number (1..``count``), normalised as tag labels.

    ``None`` when the answer is not the JSON object asked for. Labels that are not valid tags
    are dropped, duplicates removed, at most ``max_tags`` kept per document. Linear in the
    answer: one ``find``/``rfind`` to cut a fenced or chatty answer to its outermost braces,
    one ``json.loads``, and a bounded walk over the parsed object.
    """
    if not isinstance(raw, str) or len(raw) > MAX_ANSWER_CHARS:
        return None
    start, end = raw.find("{"), raw.rfind("}")
    if start < 0 or end < start:
        return None
    try:
        data: Any = json.loads(raw[start : end + 1])
    except (ValueError, RecursionError):
        return None
    labels = data.get("labels") if isinstance(data, dict) else None
    if not isinstance(labels, dict):
        return None
    out: dict[int, list[str]] = {}
    for key, value in labels.items():
        # (``isdecimal`` and a short key: ``isdigit`` takes "²" and any number of digits,
        # which ``int`` refuses with a raw ValueError out of the ingest)
        if not isinstance(key, str) or not (0 < len(key) <= 9 and key.isdecimal()):
            continue
        if not isinstance(value, list):
            continue
        i = int(key)
        if not 1 <= i <= count:
            continue
        got: list[str] = []
        for item in value[: max_tags * 4]:
            lab = _label(item)
            if lab is not None and lab not in got:
                got.append(lab)
            if len(got) >= max_tags:
                break
        out[i] = got
    return out


def _label(item: object) -> str | None:
    if not isinstance(item, str):
        return None
    try:
        return tagmod.new_label(item)
    except InvalidTagError:
        return None


class LLMTagger:
    """A :class:`~treehop.tagging.Tagger` writing ``llm:`` labels from a chat model over the
    automatic tags of ``base`` (default: :class:`~treehop.tagging.IngestTagger`)."""

    def __init__(
        self,
        llm: LLM,
        *,
        base: Tagger | None = None,
        max_tags: int = 3,
        batch_size: int = 16,
        max_chars: int = 1200,
        deadline_s: float = 60.0,
    ) -> None:
        for name, value, low in (
            ("max_tags", max_tags, 1),
            ("batch_size", batch_size, 1),
            ("max_chars", max_chars, 50),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidTagError(
                    f"{name} must be an integer >= {low}, got {shown_value(value)}"
                )
        if isinstance(deadline_s, bool) or not isinstance(deadline_s, int | float):
            raise InvalidTagError(f"deadline_s must be a number, got {shown_value(deadline_s)}")
        if not deadline_s > 0:
            raise InvalidTagError(f"deadline_s must be > 0, got {shown_value(deadline_s)}")
        self.llm = llm
        self.base: Tagger = base if base is not None else IngestTagger()
        self.max_tags = max_tags
        self.batch_size = batch_size
        self.max_chars = max_chars
        self.deadline_s = float(deadline_s)
        self.fallbacks = 0
        """Batches that kept automatic tags only (the model failed or ran out of time)."""
        self.last_error: str = ""
        """Why the last fallback happened (no document text, no secret: safe to log)."""
        self._lock = threading.Lock()

    def refit(self, store: VectorStore) -> None:
        self.base.refit(store)

    def tag_nodes(
        self, nodes: Sequence[Node], store: VectorStore, new_texts: Sequence[str] | None = None
    ) -> dict[str, NodeTags]:
        """The base tagger's tags, plus ``llm:`` labels for the leaves whose text is new;
        other leaves keep the ``llm:`` tags they carry."""
        out = self.base.tag_nodes(nodes, store, new_texts)
        leaves = [n for n in nodes if n.is_leaf]
        fresh = None if new_texts is None else set(new_texts)
        todo = [n for n in leaves if fresh is None or n.embedding_text() in fresh]
        labelled = self._label_all(todo)
        for n in leaves:
            tags = labelled.get(n.uri)
            if tags is None:  # not sent, or its batch fell back: keep what it had
                tags = [t for t in n.tags if tagmod.source_of(t) == "llm"]
            mine = out.get(n.uri) or NodeTags(auto=[], own_labels=[])
            out[n.uri] = NodeTags(auto=tagmod.merge(tags, mine.auto), own_labels=mine.own_labels)
        return out

    def _label_all(self, leaves: Sequence[Node]) -> dict[str, list[str]]:
        """``llm:`` tags by URI for the leaves whose batch the model answered in time."""
        deadline = time.monotonic() + self.deadline_s
        got: dict[str, list[str]] = {}
        for i in range(0, len(leaves), self.batch_size):
            batch = leaves[i : i + self.batch_size]
            left = deadline - time.monotonic()
            answer = self._ask(batch, left) if left > 0 else None
            if answer is None:
                if left <= 0:
                    self._fallback("the total deadline passed before this batch")
                continue
            for k, n in enumerate(batch, start=1):
                got[n.uri] = [f"llm:{lab}" for lab in answer.get(k, [])]
        return got

    def _ask(self, batch: Sequence[Node], timeout_s: float) -> dict[int, list[str]] | None:
        docs = "\n\n".join(
            f"[{k}] {n.embedding_text()[: self.max_chars]}" for k, n in enumerate(batch, start=1)
        )
        messages = [
            ChatMessage(role="system", content=_SYSTEM.format(k=self.max_tags)),
            ChatMessage(role="user", content=docs),
        ]
        # The model client has its own per-request timeout; the wait below bounds the whole
        # call by what is left of this tag_nodes call's deadline, whatever the client does.
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        try:
            future = pool.submit(self.llm.complete, messages, json_mode=True)
            raw = future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            self._fallback(f"no answer within {timeout_s:.1f} s")
            return None
        except TreehopError as exc:
            self._fallback(describe(exc))
            return None
        except BaseException as exc:  # a custom LLM's own failure must not lose the nodes
            if is_signal(exc):
                raise
            self._fallback(f"{type(exc).__name__[:100]} from the model client")
            return None
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        answer = parse_answer(raw, len(batch), self.max_tags)
        if answer is None:
            self._fallback("the answer is not the JSON object asked for")
        return answer

    def _fallback(self, why: str) -> None:
        with self._lock:
            self.fallbacks += 1
            self.last_error = why

    def __repr__(self) -> str:
        return f"LLMTagger(llm={self.llm.name!r}, max_tags={self.max_tags})"
