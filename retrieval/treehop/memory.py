"""The memory write path: conversations stored as conversation → session → turn nodes.

Layout (under the user's space)::

    viking://~/memories/conversations/<conversation_id>/            directory
    viking://~/memories/conversations/<conversation_id>/<session>/  directory, one a session
        turn-00000, turn-00001, ...                   leaves: "(8 May 2023) Speaker: text"
        fact-00000, ...                                             leaves (LLM extractor)
    viking://~/memories/<category>/<name>                           remember(): one note

Why this shape:

- *Deterministic.* The raw turns are the memory; nothing needs an LLM. A turn's text is
  ``"(<day>) <speaker>: <content>"``: the message as said, headed by the day it was said
  (``dated_text``, on by default), because questions to a memory name times ("what did Ann
  do in May 2023?") and a reader of the turn needs its date. Measured on the LoCoMo dev and
  test halves (``bench/bench_tree.py`` with ``TREEHOP_LOCOMO_DATED=1``, 200 questions each):
  default ``find()`` evidence R@5/R@10 0.784/0.874 -> 0.813/0.882 (dev), 0.792/0.870 ->
  0.810/0.876 (test). ``dated_text=False`` stores ``"<speaker>: <content>"`` only.
- *An exchange per slot.* ``find()`` returns a turn with its neighbouring turns in the same
  result slot (:mod:`treehop.memory_context`, ``memory_context_chars``).
- *Time as a number.* Every turn, session and note carries ``metadata["timestamp"]`` (epoch
  seconds, UTC; see :mod:`treehop.timestamps`), so ``find(since=..., until=...)`` is the
  metadata filter's ``range`` — which every store already runs natively.
- *LLM output on top, never instead.* An optional :class:`LLMMemoryExtractor` writes a session
  summary (the session directory's abstract) and fact leaves next to the turns, *after* the
  turns are stored; when the model fails or answers nonsense, the turns stay and the result says
  why the extraction did not happen. An extraction that a later append's extraction (of more
  turns) overtook is not written either (``StaleExtraction``).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import os
import re
import secrets
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from . import tags as tagmod
from . import uri as urimod
from ._plugins import describe, is_signal
from .arguments import check_bool, check_metadata, check_text_value
from .errors import IndexLockedError, InvalidQueryError, InvalidTagError, TreehopError
from .ingest.summaries import OVERVIEW_CHARS, _clip, first_sentence
from .llm.base import LLM, ChatMessage
from .memory_context import day_prefix
from .models import ContextType, Level, Node
from .stores._filelock import (
    HeldKeyLock,
    WaitLine,
    give_key_lock,
    lock_timeout_of,
    take_key_lock,
)
from .tagging.ingest import IngestTagger, LabelCounts, stored_label_lists
from .timestamps import TIMESTAMP_FIELD, TimeLike, to_iso, to_stored_epoch
from .validation import check_deadline, is_blank

if TYPE_CHECKING:
    from .ingest.writer import TreeWriter
    from .stores.base import VectorStore

_T = TypeVar("_T")


class MemoryHost(Protocol):
    """What the memory functions use of the client (:class:`~treehop.client.AsyncTreehop`
    is one). Typed here so that this module never imports the client, which imports it: the
    lower modules of the package stay below the client."""

    store: VectorStore
    writer: TreeWriter

    async def _io(self, fn: Callable[..., _T], *args: Any) -> _T: ...

    def resolve(self, uri: str) -> str: ...

    def display(self, uri: str) -> str: ...


CONVERSATIONS_URI = "viking://~/memories/conversations"
ROLES = ("user", "assistant", "system", "tool")
MAX_TURN_CHARS = 20_000
"""A longer message is refused: a memory is a turn of a conversation, not a document."""
MAX_MESSAGES_PER_CALL = 100_000
"""More messages in one ``add_messages`` call are refused before anything is read or written.
Why: a call is validated, embedded and written whole (one write); a million messages took
~7 GB (helper attacks52). A history that long goes in several calls to the same session."""
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_SPEAKER_RE = re.compile(
    r"^[^\x00-\x1f\x7f-\x9f:\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]{1,64}\Z"
)
"""A speaker name: no control character (C0, DEL, C1), no line or paragraph separator (a
name is one line of the session's overview), no ``:`` (it ends the name in a turn's text),
no lone surrogate (not Unicode text: the write failed on it, ``UnicodeEncodeError``) and no
bidirectional embedding, override or isolate (``"\u202eab"`` reversed the rest of the turn's
line, ``"\u202eab: hello"``, wherever it was shown). See :func:`_speaker_ok`."""


def _speaker_ok(speaker: str) -> bool:
    """:data:`_SPEAKER_RE`, and a visible character: a speaker of only zero-width characters
    (``"\u200b"``) was stored as a name nobody can see, where an empty speaker falls back
    to the role."""
    return _SPEAKER_RE.match(speaker) is not None and not is_blank(speaker)


_TURN_PREFIX = "turn-"
_FACT_PREFIX = "fact-"
SESSION_ABSTRACT_TURNS = 6
"""How many turns the deterministic session abstract quotes (the overview lists them all)."""


def check_id(value: str, what: str) -> str:
    """A conversation/session/note id: one safe URI segment (1-64 of ``A-Za-z0-9_.-``)."""
    if not isinstance(value, str) or not _ID_RE.match(value) or value in {".", ".."}:
        raise InvalidQueryError(
            f"{what} must be 1-64 letters, digits, '_', '.' or '-' (starting with a letter or "
            f"digit), got {value!r:.100}"
        )
    return value


@dataclass(frozen=True)
class Turn:
    """One validated message of a conversation."""

    role: str
    speaker: str
    content: str
    timestamp: float
    message_id: str | None = None

    @property
    def text(self) -> str:
        """What the turn leaf stores and embeds."""
        return f"{self.speaker}: {self.content}"

    @property
    def dated_text(self) -> str:
        """:attr:`text` headed by the day it was said, ``(8 May 2023) Ann: ...``: the words a
        question about a time uses (``in May 2023``), for the lexical and the dense index."""
        return f"{day_prefix(self.timestamp)}{self.text}"


@dataclass
class MemoryWriteResult:
    """What one ``add_messages`` / ``remember`` call stored."""

    conversation_uri: str
    session_uri: str
    session_id: str
    turn_uris: list[str] = field(default_factory=list)
    fact_uris: list[str] = field(default_factory=list)
    summary: str | None = None
    extraction_error: str | None = None
    elapsed_s: float = 0.0
    replaced: bool = False
    """``remember`` with a ``name`` that already held a note: that note was replaced (the
    documented policy; said so an agent re-using a name learns it overwrote a memory)."""


def _field(msg: Any, name: str) -> Any:
    """A message's field; a ``str`` subclass (``numpy.str_``, a str enum, a caller's own) as
    the plain string it holds. Why (helper attacks71): the checks below called its methods,
    which a subclass may override: a ``__len__`` answering 0 let a 30,000-character turn
    past :data:`MAX_TURN_CHARS`, a ``strip`` answering a non-string raised a raw
    ``TypeError``."""
    value = msg.get(name) if isinstance(msg, Mapping) else getattr(msg, name, None)
    return str.__str__(value) if isinstance(value, str) else value


MESSAGE_TYPE_ROLES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "HumanMessageChunk": "user",
    "AIMessageChunk": "assistant",
    "SystemMessageChunk": "system",
    "ToolMessageChunk": "tool",
    "FunctionMessageChunk": "tool",
}
"""A message without ``role`` read by its ``type``: LangChain's messages (``HumanMessage``,
``AIMessage``, ...) name their role there. Why: ``th.add_messages(state["messages"])`` stored
every ``AIMessage`` as a ``user`` turn (``user: Nice, Lisbon is lovely.``), the assistant's
words remembered as the user's. A ``FunctionMessage`` (``type`` ``function``: the legacy
form of a tool's result) is a ``tool`` turn: it was stored as the user's words (helper
attacks67). Duck-typed: the core imports no framework."""


ROLE_ALIASES = {
    "human": "user",
    "ai": "assistant",
    "developer": "system",
    "function": "tool",
    "model": "assistant",
    "chatbot": "assistant",
}
"""Role strings LangChain or LlamaIndex read as one of :data:`ROLES`. LangChain's
(``_create_message_from_message_type``, behind ``convert_to_messages``): ``human`` a
``HumanMessage``, ``ai`` an ``AIMessage``, ``developer`` a ``SystemMessage``, ``function`` a
``FunctionMessage`` (a tool's result). LlamaIndex's ``MessageRole`` adds ``model`` (Gemini's)
and ``chatbot`` (Cohere's), the assistant's words, as its memory block maps them.
Why: ``ChatMessage(role="human")`` or ``{"role": "ai", ...}`` was refused though LangChain
itself takes it (helper leftovers61), and a LlamaIndex ``ChatMessage`` of role ``MODEL`` /
``CHATBOT`` (stop 61, the lead). Case-sensitive, as both frameworks are."""


def message_role(role: object, where: str) -> str:
    """``role`` as one of :data:`ROLES` (a :data:`ROLE_ALIASES` name mapped), else an
    :class:`InvalidQueryError` naming it (its repr cut to 60 characters; a non-string by its
    type, whose repr may be anything)."""
    if isinstance(role, str):
        # (a str enum, LlamaIndex's MessageRole, as its value: a dict looks an enum member
        # up by its name's hash, so MessageRole.DEVELOPER missed "developer")
        role = str.__str__(role)
        role = ROLE_ALIASES.get(role, role)
        if role in ROLES:
            return role
        shown = repr(role)[:60]
    else:
        shown = f"of type {type(role).__name__}"
    raise InvalidQueryError(
        f"{where}: role {shown} is not one of {', '.join(ROLES)} (or the frameworks' "
        f"{', '.join(ROLE_ALIASES)})"
    )


def _unset(value: Any) -> bool:
    """A field left out: ``None`` or ``""``. Compared as a string only: an array's ``==``
    is an array, whose truth raised a raw ``ValueError`` for a role or speaker given as
    a numpy array (helper attacks68); any other non-string is refused by its check."""
    return value is None or (isinstance(value, str) and value == "")


def _role_of(msg: Any) -> Any:
    role = _field(msg, "role")
    if _unset(role):
        kind = _field(msg, "type")
        if isinstance(kind, str) and kind in MESSAGE_TYPE_ROLES:
            return MESSAGE_TYPE_ROLES[kind]
    return role


def _not_a_message(msg: Any) -> str | None:
    """Why ``msg`` is no message at all (a bare string, a ``(role, text)`` pair, a mapping
    without ``content``), or None. Said so: "content must be a string with a visible
    character" for ``"hello"`` or ``{"text": ...}`` named the wrong fault."""
    if isinstance(msg, (str, bytes, tuple, list)):
        return (
            f"must be a message, a mapping such as {{'role': 'user', 'content': ...}} or an "
            f"object with role / content attributes, got {type(msg).__name__}"
        )
    if isinstance(msg, Mapping) and "content" not in msg:
        keys = ", ".join(sorted(repr(k)[:40] for k in list(msg)[:10]))
        return f"has no 'content' key (keys: {keys or 'none'})"
    return None


def parse_messages(messages: Sequence[Any], default_time: float) -> list[Turn]:
    """Validate every message before anything is written.

    A message is a mapping (or an object with the same attributes, e.g. :class:`ChatMessage`)
    with ``content`` and optionally ``role`` (default ``user``; an object without one, such
    as LangChain's ``HumanMessage`` / ``AIMessage``, by its ``type``: ``MESSAGE_TYPE_ROLES``;
    LangChain's role names ``human``, ``ai``, ... mapped: ``ROLE_ALIASES``),
    ``speaker`` (default: the role), ``timestamp`` (default ``default_time``) and ``id``.
    """
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidQueryError("messages must be a list of messages")
    if not messages:
        raise InvalidQueryError("messages is empty: nothing to remember")
    if len(messages) > MAX_MESSAGES_PER_CALL:
        raise InvalidQueryError(
            f"messages: {len(messages)} in one call, at most {MAX_MESSAGES_PER_CALL}; add them "
            "in several calls to the same session (each appends after the last)"
        )
    out: list[Turn] = []
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        fault = _not_a_message(msg)
        if fault is not None:
            raise InvalidQueryError(f"{where} {fault}")
        content = _field(msg, "content")
        if not isinstance(content, str) and not isinstance(msg, Mapping):
            # A LangChain message whose content is a list of blocks (``[{"type": "text",
            # "text": ...}]``, as many chat models answer) has its text in ``.text``.
            text = getattr(msg, "text", None)
            content = str.__str__(text) if isinstance(text, str) else content
        # (only invisible characters count as empty: see validation.is_blank)
        if not isinstance(content, str) or is_blank(content):
            hint = ""
            if _field(msg, "tool_calls"):
                hint = " (a message that only calls tools has no text: leave it out)"
            raise InvalidQueryError(
                f"{where}: content must be a string with a visible character{hint}"
            )
        check_text_value(content, f"{where}: content")
        if len(content) > MAX_TURN_CHARS:
            raise InvalidQueryError(f"{where}: content longer than {MAX_TURN_CHARS} characters")
        # (only a missing or empty value takes the default: ``or`` took 0, False or [] too)
        role = _role_of(msg)
        role = message_role("user" if _unset(role) else role, where)
        speaker = _field(msg, "speaker")
        speaker = role if _unset(speaker) else speaker
        if not isinstance(speaker, str) or not _speaker_ok(speaker.strip()):
            raise InvalidQueryError(
                f"{where}: speaker must be 1-64 characters, one visible, without ':', "
                "control or bidi characters"
            )
        ts_raw = _field(msg, "timestamp")
        ts = default_time if ts_raw is None else to_stored_epoch(ts_raw, f"{where}.timestamp")
        mid = _field(msg, "id")
        if mid is not None and (not isinstance(mid, str) or len(mid) > 256):
            raise InvalidQueryError(f"{where}: id must be a string of at most 256 characters")
        if mid is not None:
            check_text_value(mid, f"{where}: id")
        out.append(Turn(role, speaker.strip(), content.strip(), ts, mid))
    return out


class MemoryExtractor(Protocol):
    """Writes a session summary and facts from its turns (e.g. :class:`LLMMemoryExtractor`)."""

    async def extract(self, turns: Sequence[Turn]) -> tuple[str, list[str]]: ...


EXTRACT_SYSTEM = (
    "You maintain long-term memory for an assistant. Read one conversation session and answer "
    'with a JSON object {"summary": string, "facts": [string, ...]}: the summary in at most '
    "three sentences; each fact one self-contained sentence about a person (name them, never "
    '"he"/"she"), with the date when the session gives one. Only facts stated in the session.'
)


class LLMMemoryExtractor:
    """Session summary and facts from a chat model (JSON mode).

    The prompt quotes the session's turns with their dates, newest last, cut to
    ``max_input_chars`` from the end (the model's context is finite; the turns themselves are
    stored in full regardless). The model's own client enforces the call's deadline.
    """

    def __init__(self, llm: LLM, *, max_facts: int = 20, max_input_chars: int = 24_000) -> None:
        if max_facts < 1 or max_input_chars < 100:
            raise InvalidQueryError("max_facts must be >= 1 and max_input_chars >= 100")
        self.llm = llm
        self.max_facts = max_facts
        self.max_input_chars = max_input_chars

    def _prompt(self, turns: Sequence[Turn]) -> list[ChatMessage]:
        lines = [f"[{to_iso(t.timestamp)[:16]}] {t.text}" for t in turns]
        body: list[str] = []
        used = 0
        for line in reversed(lines):
            if used + len(line) + 1 > self.max_input_chars:
                break
            body.append(line)
            used += len(line) + 1
        body.reverse()
        return [
            ChatMessage(role="system", content=EXTRACT_SYSTEM),
            ChatMessage(role="user", content="\n".join(body)),
        ]

    async def extract(self, turns: Sequence[Turn]) -> tuple[str, list[str]]:
        raw = await self.llm.acomplete(self._prompt(turns), json_mode=True)
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidQueryError(f"the extractor's answer is not JSON: {exc.msg}") from exc
        except (ValueError, RecursionError):  # nesting past the limit, a 4,300-digit integer
            raise InvalidQueryError("the extractor's answer is not JSON it can read") from None
        if not isinstance(data, dict):
            raise InvalidQueryError("the extractor's answer is not a JSON object")
        summary = data.get("summary", "")
        facts = data.get("facts", [])
        if not isinstance(summary, str) or not isinstance(facts, list):
            raise InvalidQueryError(
                "the extractor's answer needs a string summary and a facts list"
            )
        clean = [" ".join(f.split()) for f in facts if isinstance(f, str) and f.strip()]
        return " ".join(summary.split()), clean[: self.max_facts]


# ---------------------------------------------------------------------------- writing nodes
async def write_nodes(
    client: MemoryHost,
    nodes: Sequence[Node],
    *,
    delete: Sequence[str] = (),
    user_tags: Sequence[str] = (),
    prune_below: str | None = None,
    counted: Mapping[str, LabelCounts] | None = None,
    check: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Store explicitly built nodes (and delete ``delete``) in one locked write: see
    :meth:`treehop.ingest.writer.TreeWriter.write_nodes`."""
    return await client.writer.write_nodes(
        nodes,
        delete=delete,
        user_tags=user_tags,
        prune_below=prune_below,
        counted=counted,
        check=check,
    )


def _turn_node(
    uri: str, parent: str, turn: Turn, meta: Mapping[str, Any], dated: bool = False
) -> Node:
    text = turn.dated_text if dated else turn.text
    return Node(
        uri=uri,
        parent_uri=parent,
        context_type=ContextType.MEMORY,
        level=Level.CONTENT,
        is_leaf=True,
        abstract=_clip(text, 300),
        content=text,
        metadata={
            **meta,
            **({"dated": True} if dated else {}),
            "kind": "turn",
            "role": turn.role,
            "speaker": turn.speaker,
            TIMESTAMP_FIELD: turn.timestamp,
            **({"message_id": turn.message_id} if turn.message_id else {}),
        },
    )


def _turn_of(node: Node) -> Turn:
    md = node.metadata
    speaker = str(md.get("speaker", "user"))
    content = node.content
    if md.get("dated") and content.startswith("("):
        content = content.split(") ", 1)[-1]
    if content.startswith(speaker + ": "):
        content = content[len(speaker) + 2 :]
    return Turn(
        str(md.get("role", "user")),
        speaker,
        content,
        float(md.get(TIMESTAMP_FIELD, 0.0)),
        md.get("message_id"),
    )


def _session_node(
    uri: str, conversation_id: str, session_id: str, turns: Sequence[Turn], summary: str | None
) -> Node:
    """The session directory, described deterministically from its turns (or by a summary)."""
    return _session_node_of(uri, conversation_id, session_id, _SessionTurns.of(turns), summary)


@dataclass(frozen=True)
class _SessionTurns:
    """What the session node says of its turns: how many, their first and last time, their
    speakers in order of first appearance, and its first turns (:attr:`head`): at least
    :data:`SESSION_ABSTRACT_TURNS` of them and :data:`_HEAD_CHARS` characters of overview
    lines, or all of them.

    Why the head is enough: the abstract quotes the first turns, and the overview is the
    turns' lines cut to :data:`OVERVIEW_CHARS`, a cut that reads only the first
    ``OVERVIEW_CHARS`` characters of the joined lines, or (``_clip``) their first
    ``4 * OVERVIEW_CHARS + 64``. So an append can describe the session from this record and
    the new turns, without reading the session (:func:`add_messages`)."""

    count: int
    start: float
    end: float
    speakers: tuple[str, ...]
    head: tuple[Turn, ...]

    @property
    def complete(self) -> bool:
        """Whether :attr:`head` holds every turn."""
        return len(self.head) == self.count

    @staticmethod
    def of(turns: Sequence[Turn]) -> _SessionTurns:
        return _SessionTurns(0, 0.0, 0.0, (), ()).plus(turns)

    def plus(self, turns: Sequence[Turn]) -> _SessionTurns:
        """This record with ``turns`` appended after the ones it describes."""
        if not turns:
            return self
        old = self.count > 0
        # min/max in the order of the turns (a tie keeps the first, as min() over all does)
        start = (
            min(self.start, *(t.timestamp for t in turns))
            if old
            else min(t.timestamp for t in turns)
        )
        end = (
            max(self.end, *(t.timestamp for t in turns)) if old else max(t.timestamp for t in turns)
        )
        speakers = tuple(dict.fromkeys([*self.speakers, *(t.speaker for t in turns)]))
        head = list(self.head)
        if self.complete:
            used = _lines_chars(head)
            for t in turns:
                if len(head) >= SESSION_ABSTRACT_TURNS and used >= _HEAD_CHARS:
                    break
                used += len(_overview_line(t)) + (1 if head else 0)
                head.append(t)
        return _SessionTurns(self.count + len(turns), start, end, speakers, tuple(head))


_HEAD_CHARS = 4 * OVERVIEW_CHARS + 64
"""Characters of overview lines past which more turns cannot change the session's overview
(``_clip(text, n)`` reads ``text[: 4 * n + 64]``; the line cut reads ``text[:n]``)."""


def _overview_line(t: Turn) -> str:
    return f"- {t.speaker}: {t.content}"


def _lines_chars(turns: Sequence[Turn]) -> int:
    """``len("\n".join(_overview_line(t) for t in turns))``."""
    return sum(len(_overview_line(t)) for t in turns) + max(0, len(turns) - 1)


def _session_node_of(
    uri: str, conversation_id: str, session_id: str, st: _SessionTurns, summary: str | None
) -> Node:
    """The session directory described from :class:`_SessionTurns` (see there)."""
    turns = st.head
    start, end = st.start, st.end
    speakers = list(st.speakers)
    first, last = to_iso(start)[:10], to_iso(end)[:10]
    day = first if first == last else f"{first} to {last}"
    header = f"Conversation {conversation_id}, {session_id} ({day}), {' and '.join(speakers)}"
    if summary:
        abstract = _clip(f"{header}: {summary}", 600)
    else:
        quoted = "; ".join(
            first_sentence(t.content) or t.content for t in turns[:SESSION_ABSTRACT_TURNS]
        )
        abstract = _clip(f"{header}: {quoted}", 600)
    overview = "\n".join(_overview_line(t) for t in turns)
    if len(overview) > OVERVIEW_CHARS:  # whole lines only: a turn is never cut mid-sentence
        overview = overview[: overview.rfind("\n", 0, OVERVIEW_CHARS) + 1].rstrip() or _clip(
            overview, OVERVIEW_CHARS
        )
    return Node(
        uri=uri,
        parent_uri=urimod.parent_of(uri),
        context_type=ContextType.MEMORY,
        level=Level.OVERVIEW,
        is_leaf=False,
        abstract=abstract,
        overview=overview,
        metadata={
            "name": session_id,
            "kind": "session",
            "conversation": conversation_id,
            "session": session_id,
            "speakers": speakers,
            "turns": st.count,
            TIMESTAMP_FIELD: start,
            "timestamp_end": end,
            **({"summary": summary} if summary else {}),
        },
    )


def _index_of(name: str, prefix: str) -> int:
    try:
        return int(name[len(prefix) :])
    except ValueError:
        return -1


@dataclass(frozen=True)
class _Tail:
    """A session as the last :func:`add_messages` of this process wrote it: the next turn
    index, what its node says of its turns, the node's texts and metadata as written, and how
    many rows the store holds under it if nothing but that write changed them since the
    session was read (the rows it knew of, plus its new turns)."""

    next_index: int
    turns: _SessionTurns
    abstract: str
    overview: str | None
    metadata: dict[str, Any]
    family: int
    labels: _KeptLabels | None = None


@dataclass(frozen=True)
class _KeptLabels:
    """The default keyword tagger's label counts of a session's stored children (every
    turn's ``auto:`` labels, :class:`~treehop.tagging.ingest.LabelCounts`) and the family
    stamp of the snapshot they were counted from (:meth:`EmbeddedStore.family_since`: the
    row numbering's epoch, the row count under the session, its newest row).

    Why: with the keyword tagger, writing the session node re-ranks its automatic tags from
    every child's labels; reading them was O(session) per append (~100 ms at 10,000 turns).
    The counts are used only where the stamp is unchanged (no row under the session
    written, rewritten or deleted since they were counted: rows are immutable and appended,
    whichever client or process writes them), and are brought forward after a write from
    the rows it added (none deleted), or counted again from every child."""

    stamp: tuple[int, int, int]
    counts: LabelCounts


_TAILS_KEPT = 1024
"""Sessions whose tail one store keeps (least recently written first out)."""
_tails: weakref.WeakKeyDictionary[Any, OrderedDict[str, _Tail]] = weakref.WeakKeyDictionary()
_tails_lock = threading.Lock()


def _family_state(store: Any) -> Callable[[str, Sequence[str]], tuple[int, list[bool]]] | None:
    """The store's cheap family read (:meth:`EmbeddedStore.family_state`), if it has one."""
    fn = getattr(store, "family_state", None)
    return fn if callable(fn) else None


def _family_since(
    client: MemoryHost,
) -> Callable[[str, int, Sequence[str]], tuple[tuple[int, int, int], list[dict[str, Any]]]] | None:
    """The store's family stamp and new children (:meth:`EmbeddedStore.family_since`), where
    the client tags with the default keyword tagger (whose directory aggregation
    :class:`_KeptLabels` stands for); else ``None``."""
    fn = getattr(client.store, "family_since", None)
    ok = callable(fn) and isinstance(getattr(client.writer, "tagger", None), IngestTagger)
    return fn if ok else None


async def _counted_labels(
    client: MemoryHost, session_uri: str, kept: _KeptLabels | None, new_uris: Sequence[str]
) -> dict[str, LabelCounts] | None:
    """``{session_uri: counts}`` for the tagger where ``kept`` still counts the session's
    stored children (its stamp unchanged) and none of ``new_uris`` is stored (the tagger
    leaves a stored child that the write replaces out of the count); else ``None`` (the
    tagger reads the children, as before)."""
    since, state = _family_since(client), _family_state(client.store)
    if kept is None or since is None or state is None:
        return None
    stamp, _ = await client._io(since, session_uri, kept.stamp[2], ())
    if stamp != kept.stamp:
        return None
    _, present = await client._io(state, session_uri, list(new_uris))
    return None if any(present) else {session_uri: kept.counts}


async def _family_stamp(client: MemoryHost, session_uri: str) -> tuple[int, int, int] | None:
    """The session's family stamp where its label counts are worth keeping (the keyword
    tagger, a store with ``family_since``, an index past ``retag_all_below``); else None."""
    since = _family_since(client)
    if since is None or len(client.store) <= client.writer.retag_all_below:
        return None
    return (await client._io(since, session_uri, -1, ()))[0]


async def _labels_after(
    client: MemoryHost, session_uri: str, before: _KeptLabels | None
) -> _KeptLabels | None:
    """The label counts of the session's children after a write: ``before`` (the counts
    before it: kept, or counted from the children the append read) plus the rows written
    under the session since its stamp, when no row of it died meanwhile (the count grew by
    exactly the rows added); else counted again from every child. ``None`` on an index
    small enough that every write re-tags it whole (:meth:`TreeWriter.finish`: the next
    write rewrites every turn's tags, and the count would be read again anyway)."""
    since = _family_since(client)
    if since is None or len(client.store) <= client.writer.retag_all_below:
        return None
    try:
        if before is not None:
            stamp, rows = await client._io(since, session_uri, before.stamp[2], ("tags",))
            if stamp[0] == before.stamp[0] and stamp[1] == before.stamp[1] + len(rows):
                added = stored_label_lists(r["tags"] or () for r in rows)
                return _KeptLabels(stamp, before.counts.plus(added))
        stamp, rows = await client._io(since, session_uri, -1, ("tags",))
        return _KeptLabels(stamp, LabelCounts.of_tags([r["tags"] or () for r in rows]))
    except InvalidTagError:  # (a stored tag the tagger cannot parse: it reads them itself)
        return None


def _generation(store: Any) -> int | None:
    """The store's committed generation (:attr:`EmbeddedStore.generation`), if it has one."""
    gen = getattr(store, "generation", None)
    return gen if isinstance(gen, int) and getattr(store, "path", None) is not None else None


def _turn_uri(session_uri: str, index: int) -> str:
    return f"{session_uri}/{_TURN_PREFIX}{index:05d}"


async def _tail_of(client: MemoryHost, session_uri: str, stored: Node | None) -> _Tail | None:
    """The kept tail of ``session_uri`` if the store still holds the session it describes,
    else ``None`` (the caller reads the session's turns, as before).

    Why this is safe: every write that changes a session's turns through treehop rewrites its
    node (an append or an extraction writes it with the turns; a removal re-describes it from
    its children, without ``kind``), so a session node equal to the one kept was written by
    the append that kept it, or describes the same turns. The store's row count under the
    session and its last turn (present, the next one absent) must match as well: a row
    deleted or added beneath treehop's writer changes one of them."""
    fn = _family_state(client.store)
    if fn is None or stored is None:
        return None
    with _tails_lock:
        kept = _kept(client.store, create=False)
        tail = kept.get(session_uri) if kept is not None else None
    if (
        tail is None
        or stored.abstract != tail.abstract
        or stored.overview != tail.overview
        or stored.metadata != tail.metadata
    ):
        return None
    last, nxt = _turn_uri(session_uri, tail.next_index - 1), _turn_uri(session_uri, tail.next_index)
    family, present = await client._io(fn, session_uri, [last, nxt])
    return tail if family == tail.family and present == [True, False] else None


def _keep_tail(
    client: MemoryHost,
    session_uri: str,
    node: Node,
    next_index: int,
    turns: _SessionTurns,
    family: int,
    labels: _KeptLabels | None = None,
) -> None:
    """Keep what the next append to ``session_uri`` needs (see :func:`_tail_of`).

    The caller keeps a tail only when its write was the one commit since it read the session
    (the store's generation moved by one): another write in between (a racing call of this
    process or another one) may have left turns this node does not describe, and the next
    append then reads the session, as main's does, which rewrites its node from every turn.
    An index without generations (in memory) keeps none. ``family`` is the row count this
    call expects: the rows it knew of and its new turns."""
    if _family_state(client.store) is None:
        return
    with _tails_lock:
        kept = _kept(client.store, create=True)
    if kept is None:
        return
    tail = _Tail(
        next_index,
        turns,
        node.abstract,
        node.overview,
        copy.deepcopy(node.metadata),
        family,
        labels,
    )
    with _tails_lock:
        kept[session_uri] = tail
        kept.move_to_end(session_uri)
        while len(kept) > _TAILS_KEPT:
            kept.popitem(last=False)


_SESSIONS_KEPT = 1024
"""Conversations whose session count one store keeps (least recently written first out)."""
_sessions_kept: weakref.WeakKeyDictionary[Any, OrderedDict[str, _KeptSessions]] = (
    weakref.WeakKeyDictionary()
)


@dataclass(frozen=True)
class _KeptSessions:
    """How many sessions (non-leaf children) a conversation has, and the family stamp of the
    snapshot that count describes (:meth:`EmbeddedStore.family_since`).

    Why: numbering a new session read every session of the conversation (47 ms at 3,000
    sessions, each node built from its JSON), on every call of an app that opens a session
    per call. The number is ``session-<count>``, or the next name past it that no session
    holds: with the count kept, a lookup per name tried (one, unless named sessions sit in
    the way) instead of the read. Rows are immutable and appended, so an unchanged stamp
    means the same children (a rewritten one gets a newer row, a deleted one lowers the
    count): the count is used while the stamp is the one it was kept with, and brought
    forward only by a write whose one new child row is its own session's; any other change
    reads the sessions again. A count, not the names: O(1) memory a conversation."""

    stamp: tuple[int, int, int]
    sessions: int


async def _kept_sessions(
    client: MemoryHost, conv_uri: str
) -> tuple[tuple[int, int, int] | None, int | None]:
    """The conversation's family stamp now (``None``: a store without ``family_since``) and
    its session count where kept for that stamp (else ``None``: read the sessions)."""
    since = getattr(client.store, "family_since", None)
    if not callable(since):
        return None, None
    stamp = (await client._io(since, conv_uri, -1, ()))[0]
    with _tails_lock:
        try:
            kept = _sessions_kept.get(client.store)
        except TypeError:
            return None, None
        got = kept.get(conv_uri) if kept is not None else None
    if got is None or got.stamp != stamp:
        return stamp, None
    return stamp, got.sessions


async def _keep_sessions(
    client: MemoryHost,
    conv_uri: str,
    before: tuple[int, int, int],
    sessions: int,
    session_uri: str,
    old: Node | None,
) -> None:
    """After an append's write: keep the session count (``sessions`` before it, plus its
    session where the write made it one: ``old``, what stood at its URI, was nothing or a
    leaf) for the new stamp, if the only child row written since ``before`` is this
    session's (one more child where nothing stood there); else forget it (the next new
    session reads the sessions)."""
    store: Any = client.store  # (one with family_since: _kept_sessions gave a stamp)
    stamp, rows = await client._io(store.family_since, conv_uri, before[2], ("uri",))
    ok = (
        stamp[0] == before[0]
        and stamp[1] == before[1] + int(old is None)
        and all(r["uri"] == session_uri for r in rows)
    )
    with _tails_lock:
        try:
            kept = _sessions_kept.get(client.store)
            if kept is None:
                kept = _sessions_kept[client.store] = OrderedDict()
        except TypeError:
            return
        if not ok:
            kept.pop(conv_uri, None)
            return
        kept[conv_uri] = _KeptSessions(stamp, sessions + int(old is None or old.is_leaf))
        kept.move_to_end(conv_uri)
        while len(kept) > _SESSIONS_KEPT:
            kept.popitem(last=False)


async def _is_session(client: MemoryHost, uri: str) -> bool:
    """Whether a session (a non-leaf node) stands at ``uri``."""
    node = (await client._io(client.store.get, [uri]))[0]
    return node is not None and not node.is_leaf


def _forget_tail(client: MemoryHost, session_uri: str) -> None:
    with _tails_lock:
        kept = _kept(client.store, create=False)
        if kept is not None:
            kept.pop(session_uri, None)


def _kept(store: Any, *, create: bool) -> OrderedDict[str, _Tail] | None:
    """The tails kept for ``store`` (call with :data:`_tails_lock` held); ``None`` for a
    store that cannot be a weak dictionary's key (it keeps none)."""
    try:
        got = _tails.get(store)
        if got is None and create:
            got = _tails[store] = OrderedDict()
    except TypeError:
        return None
    return got


@dataclass
class _ConversationLock:
    """A conversation's lock and how many calls hold it or wait for it (see
    :func:`_conversation_lock`)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    users: int = 0
    line: WaitLine = field(default_factory=lambda: WaitLine())
    """Its waiters, first come first (a client appending in a loop starved the others of
    the process without a deadline; helper attacks64)."""


_conversation_locks: weakref.WeakKeyDictionary[Any, dict[str, _ConversationLock]] = (
    weakref.WeakKeyDictionary()
)
_last_append_time = 0.0


def _forget_conversation_locks_in_forked_child() -> None:
    """In a child made by ``os.fork``: no conversation lock held or waited for, and a new
    guard. Why: a parent thread appending at the fork left its lock taken in the child's
    copy, and a conversation's lock has no deadline within a process: the child's first
    append to that conversation waited for good (helper attacks66)."""
    global _tails_lock
    _conversation_locks.clear()
    _tails_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_conversation_locks_in_forked_child)


def _append_time() -> float:
    """Now, in epoch seconds, and later than every earlier call in this process (a clock
    stepped back must not make a later append's extraction look older)."""
    global _last_append_time
    with _tails_lock:
        _last_append_time = max(time.time(), _last_append_time + 1e-6)
        return _last_append_time


_EXTRACTED_AT = "extracted_at"
"""A fact's metadata: when (epoch seconds) the append whose turns its extraction read was
written (see :func:`_extract`)."""
_LOCK_POLL_S = (0.0005, 0.02)
"""The first and the longest pause between two tries of a busy conversation lock."""


_HeldKeyLock = HeldKeyLock
_take_key_lock = take_key_lock
_give_key_lock = give_key_lock
"""(The shared holds of an index's key locks live in :mod:`treehop.stores._filelock`, where
the sessions' writes take them too.)"""


@contextlib.asynccontextmanager
async def _conversation_lock(store: Any, conv_uri: str) -> AsyncIterator[None]:
    """Appends to one conversation of one store, one at a time (across processes too).

    Why: an append reads where its session ends (its next turn index, or the next free
    session id) and writes after that read; two appends racing on one session both wrote
    ``turn-00002`` and only the last survived (a message lost on every run with three
    threads or three tasks, on main before the tail was kept as on it since). A
    ``threading.Lock`` per conversation, tried without blocking and retried after a pause
    (a few ms at most), serialises them whatever thread or event loop each call runs on,
    and a cancelled wait holds nothing.

    Across processes: the embedded store's writer lock is held only around a write, after
    that read, so two processes appending to one session lost messages without an error
    (helper attacks55: two processes of 40 appends each stored 73 of 81 turns). The
    store's key lock for the conversation (a file lock, see
    :meth:`~treehop.stores.embedded.EmbeddedStore.key_lock`) is held too, and the store
    then picks up what another process committed before the session is read; a process
    that cannot take it within the store's ``lock_timeout`` gets
    :class:`~treehop.errors.IndexLockedError` before anything is read or written. Remote
    engines (Milvus, VikingDB) have no such lock: two processes appending to one session
    of one remote collection can still race.

    A conversation's lock is kept only while a call holds it or waits for it: kept for
    good, each conversation ever appended to held ~226 bytes (100,000 conversations, 22.6
    MB, growing without bound in a server of many chats)."""
    with _tails_lock:
        try:
            locks = _conversation_locks.get(store)
            if locks is None:
                locks = _conversation_locks[store] = {}
        except TypeError:  # (a store that cannot be a weak key: a lock of its own per call)
            locks = {}
        entry = locks.get(conv_uri)
        if entry is None:
            entry = locks[conv_uri] = _ConversationLock()
        entry.users += 1
    try:
        await entry.line.take(entry.lock, None, None, _LOCK_POLL_S)
        try:
            # (an embedded store's; none for a store in memory or a remote engine)
            make = getattr(store, "key_lock", None)
            lock = make(conv_uri) if make is not None else None
            hold = None
            if lock is not None:
                timeout = lock_timeout_of(getattr(store, "lock_timeout", 10.0))
                give_up = time.monotonic() + timeout
                pause = _LOCK_POLL_S[0]
                while (hold := _take_key_lock(store, lock)) is None:
                    if time.monotonic() >= give_up:
                        raise IndexLockedError(
                            f"another process is writing to {conv_uri} (waited "
                            f"{timeout:g} s; see EmbeddedStore(lock_timeout=...))"
                        )
                    await asyncio.sleep(pause)
                    pause = min(2 * pause, _KEY_LOCK_LONGEST_PAUSE_S)
            try:
                if hold is not None:
                    store.refresh()  # (what another process committed before our read)
                yield
            finally:
                if hold is not None:
                    _give_key_lock(hold)
        finally:
            entry.line.release(entry.lock)
    finally:
        with _tails_lock:
            entry.users -= 1
            if entry.users == 0 and locks.get(conv_uri) is entry:
                del locks[conv_uri]


_KEY_LOCK_LONGEST_PAUSE_S = 0.05
"""The longest pause between two tries of a conversation's key lock another process holds
(its holder embeds and writes: milliseconds to seconds)."""


EXTRACT_DEADLINE_S = 120.0
"""The default total time an extractor is given (``add_messages(extract_deadline_s=...)``):
twice :class:`~treehop.llm.openai_compatible.OpenAICompatibleLLM`'s own 60 s deadline, so
the built-in extractor's model call ends by its own deadline first."""


class ExtractionTimeout(TreehopError):
    """An extractor gave no answer within ``add_messages``' ``extract_deadline_s``."""


async def add_messages(
    client: MemoryHost,
    messages: Sequence[Any],
    *,
    conversation_id: str = "default",
    session_id: str | None = None,
    session_time: TimeLike | None = None,
    extractor: MemoryExtractor | None = None,
    dated_text: bool = True,
    extract_deadline_s: float | None = EXTRACT_DEADLINE_S,
) -> MemoryWriteResult:
    """Append messages to a session of a conversation (see the module docstring).

    ``dated_text``: each new turn's text starts with the day it was said
    (:attr:`Turn.dated_text`), so that the day is in the embedded and the lexical text.

    ``extract_deadline_s``: the total time the ``extractor`` is given (default
    :data:`EXTRACT_DEADLINE_S`; ``None``: no bound). Past it the extraction is reported in
    ``extraction_error`` and nothing of it is written; the turns are stored either way.

    ``session_id`` defaults to the next ``session-NNNN`` of the conversation. Messages without
    a timestamp get ``session_time`` (default: now). Calling again with the same session
    appends after its existing turns. The whole call is validated before the first write.

    An append does not read the session's turns when this process wrote the session last
    (:func:`_tail_of`: its node as kept, on a store with ``family_state``): the next turn
    index and the session node come from a kept record (:class:`_SessionTurns`) and the new
    turns. Reading every turn made each append O(session): 3.3 s at 100,000 turns, against
    ~70 ms now, all of it the store's commit (``bench/bench_memory_append.py``). Otherwise
    (another writer, a removed turn, a reopened client, an extractor, another store) the
    session is read, as before, and the same nodes are written either way.

    With the default keyword tagger, the session node's automatic tags rank every turn's
    labels: the append keeps their counts per session (:class:`_KeptLabels`) and adds the new
    turns' labels, instead of the tagger reading every turn's tags (1.7 s an append at
    100,000 turns before, ~0.1 s now); used only while no row under the session changed
    since they were counted (its family stamp), else the tagger reads them, as before.
    """
    t0 = time.perf_counter()
    check_id(conversation_id, "conversation_id")
    if session_id is not None:
        check_id(session_id, "session_id")
    check_bool(dated_text, "dated_text")
    deadline = check_deadline(extract_deadline_s, InvalidQueryError, "extract_deadline_s")
    default_time = (
        time.time() if session_time is None else to_stored_epoch(session_time, "session_time")
    )
    turns = parse_messages(messages, default_time)
    if extractor is not None and not callable(getattr(extractor, "extract", None)):
        raise InvalidQueryError("extractor must have an extract(turns) method (MemoryExtractor)")
    conv_uri = client.resolve(f"{CONVERSATIONS_URI}/{conversation_id}")
    async with _conversation_lock(client.store, conv_uri):
        res, all_turns, session_uri, session_id = await _append(
            client, conv_uri, conversation_id, session_id, turns, extractor, dated_text
        )
        appended_at = _append_time()  # (under the lock: appends to a conversation in order)
    if extractor is not None:
        await _extract(
            client,
            extractor,
            res,
            conv_uri,
            session_uri,
            conversation_id,
            session_id,
            all_turns,
            appended_at,
            deadline,
        )
    res.elapsed_s = time.perf_counter() - t0
    return res


async def _append(
    client: MemoryHost,
    conv_uri: str,
    conversation_id: str,
    session_id: str | None,
    turns: list[Turn],
    extractor: MemoryExtractor | None,
    dated_text: bool,
) -> tuple[MemoryWriteResult, list[Turn], str, str]:
    """:func:`add_messages`' read of the session and its write, under the conversation's
    lock: the result, every turn of the session (read only where the session was), the
    session's URI and id."""
    conv_stamp, sessions = await _kept_sessions(client, conv_uri)
    if session_id is None:
        if sessions is None:
            kids = await client._io(client.store.children, conv_uri)
            taken = {k.uri.rsplit("/", 1)[-1] for k in kids if not k.is_leaf}
            n = sessions = len(taken)
            while f"session-{n:04d}" in taken:
                n += 1
        else:  # (the same number: past every name a session holds, from session-<count>)
            n = sessions
            while await _is_session(client, f"{conv_uri}/session-{n:04d}"):
                n += 1
        session_id = f"session-{n:04d}"
    session_uri = f"{conv_uri}/{session_id}"
    gen = _generation(client.store)  # (before the session is read: see _keep_tail)
    old_session = (await client._io(client.store.get, [session_uri]))[0]
    summary = old_session.metadata.get("summary") if old_session is not None else None
    tail = None if extractor is not None else await _tail_of(client, session_uri, old_session)
    all_turns: list[Turn] = []
    counted = None
    labels: _KeptLabels | None = None  # (the session's label counts before the write)
    if tail is not None:  # the session as this process last wrote it: no turn read
        start, described, family = tail.next_index, tail.turns.plus(turns), tail.family
        new_uris = [_turn_uri(session_uri, start + i) for i in range(len(turns))]
        counted = await _counted_labels(client, session_uri, tail.labels, new_uris)
        labels = tail.labels if counted is not None else None
    else:
        stamp = await _family_stamp(client, session_uri)
        kids, existing = await _stored_turns(client, session_uri)
        if stamp is not None and await _family_stamp(client, session_uri) == stamp:
            # (the stamp unchanged around the read: these are the children it stamps)
            labels = _KeptLabels(stamp, LabelCounts.of_tags([k.tags for k in kids]))
        family = len(kids)
        start = 1 + max(
            (_index_of(k.uri.rsplit("/", 1)[-1], _TURN_PREFIX) for k in existing), default=-1
        )
        all_turns = [_turn_of(k) for k in existing] + turns
        described = _SessionTurns.of(all_turns)
    meta = {"conversation": conversation_id, "session": session_id}
    new_nodes = [
        _turn_node(
            f"{session_uri}/{_TURN_PREFIX}{start + i:05d}",
            session_uri,
            t,
            {**meta, "turn": start + i},
            dated_text,
        )
        for i, t in enumerate(turns)
    ]
    session = _session_node_of(session_uri, conversation_id, session_id, described, summary)
    await write_nodes(client, [session, *new_nodes], counted=counted)
    if sessions is not None and conv_stamp is not None:
        await _keep_sessions(client, conv_uri, conv_stamp, sessions, session_uri, old_session)
    if extractor is None and gen is not None and _generation(client.store) == gen + 1:
        # (the new turns' URIs are past every turn known: each adds a row)
        family += len(turns)
        labels = await _labels_after(client, session_uri, labels)
        _keep_tail(client, session_uri, session, start + len(turns), described, family, labels)
    else:
        _forget_tail(client, session_uri)
    res = MemoryWriteResult(
        conversation_uri=client.display(conv_uri),
        session_uri=client.display(session_uri),
        session_id=session_id,
        turn_uris=[client.display(n.uri) for n in new_nodes],
    )
    return res, all_turns, session_uri, session_id


async def _stored_turns(client: MemoryHost, session_uri: str) -> tuple[list[Node], list[Node]]:
    """A session's children, and its turn nodes among them in turn order."""
    kids = await client._io(client.store.children, session_uri)
    existing = [k for k in kids if k.metadata.get("kind") == "turn"]
    existing.sort(key=lambda k: _index_of(k.uri.rsplit("/", 1)[-1], _TURN_PREFIX))
    return kids, existing


async def _extract(
    client: MemoryHost,
    extractor: MemoryExtractor,
    res: MemoryWriteResult,
    conv_uri: str,
    session_uri: str,
    conversation_id: str,
    session_id: str,
    turns: Sequence[Turn],
    appended_at: float,
    deadline_s: float | None = None,
) -> None:
    """Summary and facts on top of the stored turns; a failure is reported, never raised.

    The extractor (an LLM call, seconds) runs outside the conversation's lock, so appends
    to the conversation do not wait for it; its write takes the lock, reads the session as
    stored now (the session node is described from the stored turns, an append meanwhile
    included) and is dropped if the extraction of a later append was written meanwhile
    (each fact records when the append it was extracted after was written,
    ``extracted_at``, taken under the lock: appends to a conversation are in order; not a
    turn count, which a removal lowers). Why: two appends with an extractor racing on one
    session each extracted from the turns they saw, and the slower one's write replaced the
    newer facts with older ones (and re-described the session without the newer turn). The
    dropped one says so in ``extraction_error`` (``StaleExtraction``); an extraction that
    only plain appends overtook is written.

    The extractor may be a caller's: its own exception (redacted) or an answer that is not
    a summary and a list of facts (:func:`_checked_extraction`) is reported the same way,
    and nothing of it is written. (Only ``TreehopError`` was caught: a raw ``ValueError``,
    ``TypeError`` or ``UnicodeEncodeError`` left ``add_messages`` after its turns were
    written, and facts given as a string were written a character each.)

    It has ``deadline_s`` in all (:func:`_extraction`): one that never answered hung
    ``add_messages`` after its turns were stored."""
    try:
        answer = await _extraction(extractor, turns, deadline_s)
    except TreehopError as exc:
        res.extraction_error = describe(exc)
        return
    except BaseException as exc:  # (a caller's extractor, a BaseException of its own too)
        if is_signal(exc):
            raise
        res.extraction_error = describe(exc)
        return
    try:
        summary, facts = _checked_extraction(answer)
    except InvalidQueryError as exc:
        res.extraction_error = f"InvalidQueryError: {exc}"
        return
    # (under the conversation's lock, the session as stored now: an append while the
    # extractor ran added turns the ones it was given lack, a removal took some)
    async with _conversation_lock(client.store, conv_uri):
        kids, existing = await _stored_turns(client, session_uri)
        if not existing:
            res.extraction_error = "the session was removed while the extractor ran"
            return
        newest = max(
            (
                float(k.metadata.get(_EXTRACTED_AT) or 0.0)
                for k in kids
                if k.metadata.get("kind") == "fact"
            ),
            default=0.0,
        )
        if newest > appended_at:
            res.extraction_error = (
                "StaleExtraction: the extraction of a later append to this session was "
                "written while this one ran; nothing written"
            )
            return
        await _write_extraction(
            client,
            extractor,
            res,
            session_uri,
            conversation_id,
            session_id,
            kids,
            existing,
            turns,
            summary,
            facts,
            appended_at,
        )


async def _extraction(
    extractor: MemoryExtractor, turns: Sequence[Turn], deadline_s: float | None
) -> object:
    """The extractor's answer, awaited at most ``deadline_s`` (``None``: unbounded).

    Past the deadline its task is cancelled and *not* waited for (an extractor that swallows
    its cancellation would hold the call again; whatever it answers later is dropped), and
    :class:`ExtractionTimeout` is raised. A cancellation of the call cancels the task too.
    (An extractor that blocks its thread without awaiting cannot be cut by any deadline of
    the event loop: it holds the loop itself.)"""
    task = asyncio.ensure_future(extractor.extract(turns))
    try:
        done, _ = await asyncio.wait({task}, timeout=deadline_s)
    except BaseException:
        task.cancel()
        raise
    if not done:
        task.cancel()
        # (retrieve what it ends with, so that asyncio does not log it as never retrieved)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        raise ExtractionTimeout(
            f"the extractor gave no answer within its deadline ({deadline_s:g}s, "
            "extract_deadline_s); nothing of it written"
        )
    return task.result()


async def _write_extraction(
    client: MemoryHost,
    extractor: MemoryExtractor,
    res: MemoryWriteResult,
    session_uri: str,
    conversation_id: str,
    session_id: str,
    kids: Sequence[Node],
    existing: Sequence[Node],
    turns: Sequence[Turn],
    summary: str,
    facts: Sequence[str],
    appended_at: float,
) -> None:
    """:func:`_extract`'s write (under the conversation's lock): the facts, and the session
    node described from its stored turns (``existing``) with the summary."""
    old_facts = [k.uri for k in kids if k.metadata.get("kind") == "fact"]
    when = min(t.timestamp for t in turns)
    fact_nodes = [
        Node(
            uri=f"{session_uri}/{_FACT_PREFIX}{i:05d}",
            parent_uri=session_uri,
            context_type=ContextType.MEMORY,
            level=Level.CONTENT,
            is_leaf=True,
            abstract=_clip(fact, 300),
            content=fact,
            metadata={
                "kind": "fact",
                "conversation": conversation_id,
                "session": session_id,
                "source": getattr(getattr(extractor, "llm", None), "name", "extractor"),
                _EXTRACTED_AT: appended_at,
                TIMESTAMP_FIELD: when,
            },
        )
        for i, fact in enumerate(facts)
    ]
    keep = {n.uri for n in fact_nodes}
    stored = [_turn_of(k) for k in existing]
    session = _session_node(session_uri, conversation_id, session_id, stored, summary or None)
    await write_nodes(
        client, [session, *fact_nodes], delete=[u for u in old_facts if u not in keep]
    )
    _forget_tail(client, session_uri)
    res.summary = summary or None
    res.fact_uris = [client.display(n.uri) for n in fact_nodes]


MAX_FACTS = 1_000
"""The most facts one extraction may write (:class:`LLMMemoryExtractor` keeps ``max_facts``,
20 by default; a caller's extractor is held to this)."""


def _checked_extraction(answer: object) -> tuple[str, list[str]]:
    """An extractor's answer as ``(summary, facts)``: a pair of a string and a list (or
    tuple) of strings, each valid Unicode text of at most :data:`MAX_TURN_CHARS` characters,
    at most :data:`MAX_FACTS` facts (blank ones dropped); else :class:`InvalidQueryError`."""
    if not isinstance(answer, tuple | list) or len(answer) != 2:
        got = type(answer).__name__
        if isinstance(answer, tuple | list):
            got += f" of {len(answer)}"
        raise InvalidQueryError(f"the extractor must answer (summary, facts), got {got}")
    summary, facts = answer
    check_text_value(summary, "the extractor's summary")
    if not isinstance(facts, tuple | list):
        raise InvalidQueryError(f"the extractor's facts must be a list, got {type(facts).__name__}")
    if len(facts) > MAX_FACTS:
        raise InvalidQueryError(f"the extractor answered {len(facts)} facts (at most {MAX_FACTS})")
    for i, f in enumerate([summary, *facts]):
        what = "the extractor's summary" if i == 0 else f"the extractor's facts[{i - 1}]"
        check_text_value(f, what)
        if len(f) > MAX_TURN_CHARS:
            raise InvalidQueryError(f"{what} is longer than {MAX_TURN_CHARS} characters")
    return summary, [f for f in facts if f.strip()]


async def remember(
    client: MemoryHost,
    text: str,
    *,
    name: str | None = None,
    category: str = "notes",
    speaker: str | None = None,
    timestamp: TimeLike | None = None,
    tags: str | Sequence[str] | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> MemoryWriteResult:
    """Store one time-stamped memory (a fact, a preference) at ``~/memories/<category>/<name>``.

    Unlike ``add_memory`` the note carries ``timestamp`` (default now) and ``speaker``
    metadata, so ``since`` / ``until`` find it; re-remembering the same name replaces it.
    """
    t0 = time.perf_counter()
    if isinstance(text, str):  # (a subclass as the string it holds: see _field)
        text = str.__str__(text)
    if not isinstance(text, str) or is_blank(text):
        raise InvalidQueryError("text must be a string with a visible character")
    if len(text) > MAX_TURN_CHARS:
        raise InvalidQueryError(f"text longer than {MAX_TURN_CHARS} characters")
    check_text_value(text, "text")
    check_id(category, "category")
    ts = time.time() if timestamp is None else to_stored_epoch(timestamp, "timestamp")
    label = check_id(name, "name") if name is not None else f"note-{int(ts * 1000)}"
    if speaker is not None and (not isinstance(speaker, str) or not _speaker_ok(speaker)):
        raise InvalidQueryError(
            "speaker must be 1-64 characters, one visible, without ':', control or bidi characters"
        )
    # (the rules of add_resource's metadata: a JSON object the store's round trip keeps;
    # a lone surrogate, a non-string key or an object failed inside the write)
    metadata = check_metadata(metadata)
    user_tags = tagmod.user_tags(tags)
    uri = client.resolve(f"viking://~/memories/{category}/{label}")
    parent = urimod.parent_of(uri) or uri
    # (one category's unnamed notes take their names one at a time: see _free_note_uri)
    replaced = False

    async def check() -> None:
        # (under the write lock, with the write: see check_memory_target)
        nonlocal replaced
        replaced = await check_memory_target(client, uri, "remember")

    async with _conversation_lock(client.store, parent):
        if name is None:
            uri = await _free_note_uri(client, uri)
        await check()  # (before the note is built: a refused place costs nothing)
        await _write_note(client, uri, text, speaker, ts, metadata, user_tags, check)
    return MemoryWriteResult(
        conversation_uri=client.display(parent),
        session_uri=client.display(parent),
        session_id=category,
        turn_uris=[client.display(uri)],
        elapsed_s=time.perf_counter() - t0,
        replaced=replaced,
    )


def check_outside_conversations(
    client: Any, uri: str, what: str, error: type[TreehopError]
) -> None:
    """Refuse (``error``) a write at ``uri`` (resolved) in the conversations' subtree:
    :func:`add_messages` numbers its sessions and turns from what it finds there, so a note,
    a record or a vector store's passage written among them was renumbered over or deleted
    with a session. One rule for every writer that takes a caller's place."""
    conversations = client.resolve(CONVERSATIONS_URI)
    if uri == conversations or uri.startswith(conversations + "/"):
        raise error(
            f"{what}: {client.display(uri)[:200]} is in the conversations' subtree, which "
            "only add_messages writes"
        )


async def check_memory_target(
    client: MemoryHost,
    uri: str,
    what: str,
    *,
    inside_document: Callable[[str, str], TreehopError] | None = None,
) -> bool:
    """Refuse ``uri`` (resolved) as the place of a note or an ``add_memory`` text when
    writing there would replace other memories: a directory (a child that is not one of its
    own chunks), or anything in the conversations' subtree (:func:`add_messages`' own).

    Why: ``add_memory(text, name="conversations")`` is an ``add_resource`` of the text at
    ``~/memories/conversations``, which deleted every conversation; ``name="notes"`` every
    note; ``remember(..., category="conversations", name="default")`` turned a conversation
    into a leaf note; a write at ``~/memories/home/x`` over the memory ``home`` made ``home``
    a directory holding ``x`` (its text gone). A memory's own node (a note, or a text and its
    chunks) is replaced by its name, as before: the answer is whether one was there (the
    write replaces it).

    ``inside_document(uri, document)``: the error for a document above ``uri`` outside the
    memories' scope (``add_resource``'s rule, which ``add_memory`` keeps), raised last; the
    same one read of ``uri``'s ancestors answers both. Why: ``add_memory`` read them once
    here and once more in ``add_resource``'s check, twice under the write lock (helper
    leftovers59). Documents never nest, so the one document found is the one either read
    named.

    The writers call it once more under the client's write lock, right before the write
    (``AddCall.check``, ``write_nodes(check=)``): called only before the lock, a memory
    written in between was not seen (a note then written below it, a stale ``replaced``;
    helper races59). Other processes' writes are not held off by that lock."""
    check_outside_conversations(client, uri, what, InvalidQueryError)
    memories = client.resolve("viking://~/memories")
    below = memories if inside_document is None else None
    found = await client._io(document_above, client.store, [uri], below)
    holder = None if found is None else found[1]
    if holder is not None and holder.startswith(memories + "/"):
        raise InvalidQueryError(
            f"{what}: {client.display(uri)[:200]} lies below the memory "
            f"{client.display(holder)[:200]}; writing there would replace that memory"
        )
    node = (await client._io(client.store.get, [uri]))[0]
    if node is not None and not node.is_leaf:
        kids = await client._io(client.store.children, uri)
        if any(k.chunk_index is None for k in kids):
            raise InvalidQueryError(
                f"{what}: {client.display(uri)} is a directory of memories; writing there "
                "would replace everything under it"
            )
    if found is not None and inside_document is not None:
        raise inside_document(*found)
    return node is not None


def document_above(
    store: VectorStore, targets: Sequence[str], below: str | None = None
) -> tuple[str, str] | None:
    """``(target, document)``: the first of ``targets`` (resolved, in sorted order) that
    lies below a stored document (:func:`is_document`), and that document; ``None`` when
    none does. ``below``: only ancestors strictly inside that scope are read. Why one
    function: a write below a document turns it into a directory (its text gone), and
    ``add_resource``, ``add_records`` and the memory writes each refuse that place; one
    read of all the targets' ancestors. (Documents never nest -- a document holds nothing
    but its chunks -- so at most one stands above a target.)"""
    inside = (below + "/") if below is not None else ""
    above = sorted({a for t in targets for a in urimod.ancestors_of(t) if a.startswith(inside)})
    for node in store.get(above) if above else []:
        if node is not None and is_document(store, node):
            holder = str(node.uri)
            target = next(t for t in sorted(targets) if urimod.is_within(t, holder))
            return target, holder
    return None


def is_document(store: VectorStore, node: Node) -> bool:
    """Whether ``node`` holds a document's text: a leaf, or a file stored as chunks (its
    ``chunks`` count, and every child a chunk: a caller's ``metadata={"chunks": 3}`` on a
    folder does not make it one)."""
    if node.is_leaf:
        return True
    if "chunks" not in node.metadata:
        return False
    kids = store.children(node.uri)
    return bool(kids) and all(k.chunk_index is not None for k in kids)


async def write_unnamed(client: MemoryHost, uri: str, write: Callable[[str], Awaitable[_T]]) -> _T:
    """``write(uri)`` for an unnamed memory (``memory-<epoch ms>``), or at the same URI with
    a random suffix where a node has it: chosen and written under its parent's lock
    (:func:`_free_note_uri`), so calls in one millisecond no longer replace each other."""
    async with _conversation_lock(client.store, urimod.parent_of(uri) or uri):
        return await write(await _free_note_uri(client, uri))


async def _free_note_uri(client: MemoryHost, uri: str) -> str:
    """``uri`` (an unnamed note's, ``note-<epoch ms>``) if no node has it, else the same with
    a random suffix. Why: two unnamed notes of one time (``timestamp="2023-05-08"`` twice,
    or two calls in one millisecond) had one name, and the second replaced the first; a
    named note is replaced by its name on purpose. Called under the category's lock."""
    base = uri
    while (await client._io(client.store.get, [uri]))[0] is not None:
        uri = f"{base}-{secrets.token_hex(4)}"
    return uri


async def _write_note(
    client: MemoryHost,
    uri: str,
    text: str,
    speaker: str | None,
    ts: float,
    metadata: Mapping[str, Any] | None,
    user_tags: Sequence[Any],
    check: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """:func:`remember`'s write of its note at ``uri`` (``check`` run under the write
    lock before it: :meth:`~treehop.ingest.writer.TreeWriter.write_nodes`)."""
    label = uri.rsplit("/", 1)[-1]
    body = text.strip()
    content = f"{speaker}: {body}" if speaker else body
    node = Node(
        uri=uri,
        parent_uri=urimod.parent_of(uri),
        context_type=ContextType.MEMORY,
        level=Level.CONTENT,
        is_leaf=True,
        abstract=_clip(content, 300),
        content=content,
        metadata={
            **dict(metadata or {}),
            "name": label,
            "kind": "note",
            TIMESTAMP_FIELD: ts,
            **({"speaker": speaker} if speaker else {}),
        },
    )
    await write_nodes(client, [node], user_tags=user_tags, check=check)
