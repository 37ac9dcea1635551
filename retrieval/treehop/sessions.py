"""Conversation sessions for ``search()``: recent messages plus a compressed summary.

The intent analyzer reads exactly what the seed names: the session's compressed summary, its
last 5 messages, and the current query. A session therefore keeps a bounded list of recent
messages; when more than ``max_messages`` are held, the oldest are folded into the summary so
that the planner prompt stays small however long the conversation runs.

Folding uses the chat model when one is configured (it can resolve references and keep what
matters); without one -- or when the model fails -- an extractive summary is written instead:
the first sentence of each folded message, newest kept, capped at ``max_summary_chars``. The
session records which method wrote its summary and why a model summary fell back.

Sessions persist through any object with ``get_state(key) -> bytes | None`` and
``put_state(key, bytes)`` (every vector store has them), so they are saved with the index.
Each session is one JSON blob under ``sessions/<id>``; an index blob lists the ids, because the
state interface has no listing. A deleted session's blob is overwritten with ``b""`` (the
interface has no delete) so that its text does not linger.

Sessions belong to the user who created them. Every operation can be bound to a user
(``user=``), and the client only hands out :class:`UserSessions`, a view bound to its own user:
another user's session id then behaves exactly like an id that does not exist (the same
:class:`~treehop.errors.NotFoundError`, the same message), so ids cannot be probed for
existence, read, used as planner context, extended or deleted across users.

Thread- and async-safe: one lock guards the in-memory state and the writes; it is never held
across a model call, and a session that is already being folded is not folded twice.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import re
import threading
import time
import uuid
import warnings
import zlib
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field, ValidationError

from ._plugins import describe, finished_within, in_daemon_thread, is_signal
from .errors import (
    IndexCorruptError,
    IndexRecoveryError,
    InvalidQueryError,
    NotFoundError,
    RecoveryWarning,
    SessionNotFoundError,
    TreehopError,
)
from .llm.base import LLM, ChatMessage
from .redaction import shown_name
from .stores._filelock import aholding_key, holding_key, holding_named
from .stores.base import RecoveryRecord
from .uri import validate_user
from .validation import is_blank, shown_value

Role = Literal["system", "user", "assistant"]
ROLES: tuple[str, ...] = ("system", "user", "assistant")
INDEX_KEY = "sessions/_index"
KEY_PREFIX = "sessions/"
INDEX_LOCK = "sessions"
"""The index's lock (:meth:`~treehop.stores.embedded.EmbeddedStore.named_lock`) held from a
fresh read of the sessions index to its write."""
FORMAT_VERSION = 1
MAX_MESSAGE_CHARS = 100_000
_SESSION_ID_RE = re.compile(r"^[0-9a-f]{32}\Z")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")


@runtime_checkable
class StateBackend(Protocol):
    """A key/value blob store; every :class:`~treehop.stores.base.VectorStore` is one."""

    def get_state(self, key: str) -> bytes | None: ...

    def put_state(self, key: str, value: bytes) -> None: ...


class MemoryState:
    """An in-process :class:`StateBackend` for sessions that need not outlive the process."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}

    def get_state(self, key: str) -> bytes | None:
        return self._data.get(key)

    def put_state(self, key: str, value: bytes) -> None:
        self._data[key] = bytes(value)

    def state_keys(self, prefix: str) -> list[str]:
        """Keys of non-empty blobs directly under ``prefix/`` (see ``EmbeddedStore``)."""
        head = prefix + "/"
        return sorted(k for k, v in self._data.items() if k.startswith(head) and v)


class SessionMessage(ChatMessage):
    """A chat message with its position in the session and its time."""

    seq: int = Field(ge=0)
    created_at: float


INTENT_MESSAGES = 5
"""How many of a session's last messages the planner reads (the seed: "the last 5
messages"), whatever ``keep_recent`` keeps verbatim (:attr:`Session.intent_tail`)."""


class Session(BaseModel):
    """One conversation: summary of folded turns, recent messages, and bookkeeping."""

    session_id: str
    user: str
    created_at: float
    updated_at: float
    summary: str = ""
    summary_method: Literal["none", "llm", "extractive"] = "none"
    summary_fallback_reason: str | None = None
    folded_count: int = 0
    """How many messages have been folded into ``summary``."""
    next_seq: int = 0
    messages: list[SessionMessage] = Field(default_factory=list)
    intent_tail: list[SessionMessage] = Field(default_factory=list)
    """The last folded messages, kept while fewer than ``INTENT_MESSAGES`` remain in
    ``messages`` (``keep_recent`` below 5): the planner sees the conversation's last 5
    messages (the seed's input), ``keep_recent`` governs only what stays verbatim in the
    session. Empty with the default ``keep_recent`` (helper pipeline77)."""

    @property
    def message_count(self) -> int:
        """All messages ever added (folded and recent)."""
        return self.folded_count + len(self.messages)


SUMMARY_PROMPT = """You keep a compressed running summary of a conversation between a user and \
an AI assistant. The summary is later used to understand what the user means in new requests, \
so keep: the user's goals and tasks, decisions made, facts about the user (preferences, \
constraints, projects), and names, identifiers, numbers and dates exactly as written. Drop \
greetings, filler and anything already resolved and irrelevant.

Current summary (may be empty):
{summary}

Messages to fold into the summary (oldest first):
{messages}

Write the updated summary in plain text, at most {max_chars} characters, in the language of the \
conversation. Answer with the summary only."""


def _first_sentence(text: str, max_chars: int) -> str:
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p and p.strip()]
    first = " ".join(parts[0].split()) if parts else ""
    if len(first) > max_chars:
        first = first[: max_chars - 1].rstrip() + "…"
    return first


def extractive_summary(
    previous: str,
    folded: Sequence[ChatMessage],
    *,
    max_chars: int = 1500,
    per_message_chars: int = 200,
) -> str:
    """Append ``role: first sentence`` of each folded message; keep the newest lines.

    Why the newest: the turn just before the recent window is the likeliest antecedent of
    a pronoun in the current query. The result never exceeds ``max_chars``.
    """
    lines = [ln for ln in previous.splitlines() if ln.strip()]
    for m in folded:
        sentence = _first_sentence(m.content, per_message_chars)
        if sentence:
            lines.append(f"{m.role}: {sentence}")
    kept: list[str] = []
    total = 0
    for line in reversed(lines):
        cost = len(line) + (1 if kept else 0)
        if total + cost > max_chars:
            if not kept:  # a single over-long line: keep it truncated
                kept.append(line[:max_chars])
            break
        kept.append(line)
        total += cost
    return "\n".join(reversed(kept))


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A code point no UTF-8 text can hold (a ``str`` keeps an astral character whole, so any
surrogate in one is lone)."""


def _lock_key(session_id: object) -> str:
    """The key of a session's inter-process lock (a malformed id is a missing session,
    refused before any lock file is made)."""
    if not isinstance(session_id, str) or not _SESSION_ID_RE.match(session_id):
        raise SessionNotFoundError(_no_session(session_id))
    return KEY_PREFIX + session_id


class SessionStore:
    """Create, update, persist and read conversation sessions.

    ``max_messages`` recent messages are kept verbatim; when an added message makes the
    session hold more, the oldest are folded into the summary until ``keep_recent`` remain
    (folding in batches keeps model calls rare: one per ``max_messages - keep_recent + 1``
    messages rather than one per message).
    """

    def __init__(
        self,
        state: StateBackend | None = None,
        *,
        llm: LLM | None = None,
        max_messages: int = 20,
        keep_recent: int | None = None,
        max_summary_chars: int = 1500,
        summary_timeout_s: float = 30.0,
        summary_prompt: str = SUMMARY_PROMPT,
        strict: bool = False,
    ) -> None:
        if max_messages < 1:
            raise InvalidQueryError("max_messages must be >= 1")
        keep = max(1, max_messages // 2) if keep_recent is None else keep_recent
        if not 1 <= keep <= max_messages:
            raise InvalidQueryError("keep_recent must be in 1..max_messages")
        if max_summary_chars < 100:
            raise InvalidQueryError("max_summary_chars must be >= 100")
        if summary_timeout_s <= 0:
            raise InvalidQueryError("summary_timeout_s must be > 0")
        if state is not None and not isinstance(state, StateBackend):
            raise TypeError("state must have get_state(key) and put_state(key, value)")
        self.state: StateBackend = state if state is not None else MemoryState()
        self.llm = llm
        self.max_messages = max_messages
        self.keep_recent = keep
        self.max_summary_chars = max_summary_chars
        self.summary_timeout_s = summary_timeout_s
        self.summary_prompt = summary_prompt
        self._lock = threading.RLock()
        self._cache: dict[str, Session] = {}
        self._cache_raw: dict[str, bytes] = {}
        """The blob each cached session was parsed from (or saved as)."""
        self._folding: set[str] = set()
        self.strict = strict
        self.recovery: RecoveryRecord | None = None
        """Set when the sessions index was missing, empty or damaged and was rebuilt from
        the session blobs (see :meth:`_load_index`)."""
        self._index: list[str] = self._load_index()

    # -- persistence -------------------------------------------------------------------

    def _load_index(self) -> list[str]:
        """The session ids, from the index blob; checked against the session blobs when the
        backend can list them (``state_keys``: the embedded store, :class:`MemoryState`).

        Why checked: the index is the only list of sessions, so a zero-length, deleted or
        bit-flipped index used to open as "no sessions" and every session became
        ``NotFoundError``. Now the index carries a CRC-32 of its ids, and damage (a missing or
        empty index while session blobs exist, a checksum or JSON error, ids without a blob)
        rebuilds it from the blobs, with a :class:`~treehop.errors.RecoveryWarning` and
        :attr:`recovery`; ``strict=True`` raises :class:`~treehop.errors.IndexRecoveryError`.
        """
        raw = self.state.get_state(INDEX_KEY)
        lister = getattr(self.state, "state_keys", None)
        on_file: list[str] | None = None
        if callable(lister):
            keys = lister(KEY_PREFIX.rstrip("/"))
            on_file = [
                k[len(KEY_PREFIX) :] for k in keys if _SESSION_ID_RE.match(k[len(KEY_PREFIX) :])
            ]
        ids: list[str] | None = None
        problem = ""
        if raw is None:
            if not on_file:
                return []  # a new store (or a backend that cannot list: nothing to check)
            problem = "the sessions index is missing"
        elif not raw:
            problem = "the sessions index is empty (zero bytes)"
        else:
            try:
                ids = _parse_index(raw)
                bad = _malformed(ids)
                if bad:
                    raise ValueError(f"{bad} malformed session id(s)")
                if on_file is not None:
                    missing = set(ids) - set(on_file)
                    if missing:
                        raise ValueError(f"{len(missing)} listed session(s) have no session blob")
                    # a blob the index does not list yet: a session another process is
                    # creating (its blob is written before the index), kept
                    return ids + sorted(set(on_file) - set(ids))
                return ids
            except _INDEX_ERRORS as exc:
                problem = f"the sessions index is damaged ({exc})"
        if on_file is None:
            if raw is not None and raw:
                raise IndexCorruptError(f"session index is unreadable: {problem}")
            on_file = []
        return self._rebuild_index(problem, ids, on_file)

    def _rebuild_index(
        self, problem: str, listed: list[str] | None, on_file: list[str]
    ) -> list[str]:
        """The ids of the readable session blobs ``on_file``, oldest first; records (or, with
        ``strict``, raises) what was recovered and what is lost."""
        found: list[Session] = []
        unreadable = 0
        for sid in on_file:
            raw = self.state.get_state(KEY_PREFIX + sid)
            try:
                session = Session.model_validate_json(raw or b"")
            except ValidationError:
                unreadable += 1
                continue
            if session.session_id == sid:
                found.append(session)
            else:
                unreadable += 1
        ids = [x.session_id for x in sorted(found, key=lambda x: x.created_at)]
        lost_ids = sorted(set(listed or ()) - set(ids))
        lost = []
        if lost_ids:
            lost.append(f"{len(lost_ids)} listed session(s) without a readable blob")
        if unreadable:
            lost.append(f"{unreadable} unreadable session blob(s)")
        where = getattr(self.state, "path", None)
        record = RecoveryRecord(
            kind="sessions",
            path=str(where) if where is not None else "",
            expected=len(listed) if listed is not None else None,
            opened=len(ids),
            lost="; ".join(lost),
            reason=problem,
        )
        if self.strict:
            raise IndexRecoveryError(
                f"{problem}: {len(ids)} session(s) could be recovered from their blobs "
                "(strict=True)",
                record,
            )
        self.recovery = record
        warnings.warn(
            f"treehop: {problem}; rebuilt it from {len(ids)} session blob(s)"
            + (f", lost {record.lost}" if record.lost else ""),
            RecoveryWarning,
            stacklevel=3,
        )
        return ids

    def _stored_ids(self) -> list[str] | None:
        """The ids the index blob lists now, ``None`` where it is missing or damaged (then
        this store's own list, checked or rebuilt when it opened, stands in for it)."""
        raw = self.state.get_state(INDEX_KEY)
        if not raw:
            return None
        try:
            ids = _parse_index(raw)
        except _INDEX_ERRORS:
            return None
        return None if _malformed(ids) else ids

    def _update_index(self, add: str | None = None, drop: str | None = None) -> None:
        """Write the sessions index with ``add`` appended or ``drop`` left out, from the index
        as stored now, under the index's own lock (caller holds ``self._lock``).

        Why: each process wrote the index from its own list, so of two processes creating
        sessions at once, the later write left the other's new session out of the index
        blob (helper races58: two processes of 15 ``create_session`` calls, an id missing in
        5 runs of 5). The lock is the last one taken (a delete holds the session's key lock
        around it; see :func:`~treehop.stores._filelock.holding_named`)."""
        with holding_named(self.state, INDEX_LOCK):
            stored = self._stored_ids()
            ids = list(self._index) if stored is None else stored
            if add is not None and add not in ids:
                ids.append(add)
            if drop is not None:
                ids = [i for i in ids if i != drop]
            blob = json.dumps(
                {"version": FORMAT_VERSION, "session_ids": ids, "crc32": _ids_crc(ids)}
            )
            self.state.put_state(INDEX_KEY, blob.encode())
        # (ids this store found by their blobs and the stored index does not list yet, a
        # session another process is creating, stay listed here as before)
        known = set(ids)
        self._index = ids + [i for i in self._index if i not in known and i != drop]

    def _save(self, session: Session) -> None:
        raw = session.model_dump_json().encode()
        self.state.put_state(KEY_PREFIX + session.session_id, raw)
        self._cache_raw[session.session_id] = raw

    def _load(self, session_id: str, user: str | None = None, fresh: bool = False) -> Session:
        """The cached session, else (or with ``fresh``) read from state (caller holds the
        lock; see :meth:`_load_any`).

        With ``user``, a session of another user is reported exactly like a missing one.
        """
        session = self._load_any(session_id, fresh, user)
        if user is not None and session.user != user:
            raise SessionNotFoundError(_no_session(session_id))
        return session

    def _load_any(self, session_id: str, fresh: bool = False, user: str | None = None) -> Session:
        """The session: the cached copy, or with ``fresh`` as its blob holds it now.

        ``fresh`` (every write, and :meth:`get`) reads the blob again (the embedded store
        answers an unchanged blob from its cache after one ``stat``; a remote engine makes
        one read) and parses it again only when its bytes changed. Why: the parsed session
        was cached for good, so another process's appends were never seen here, and this
        process's next append saved its old copy over them (a session of 20 messages
        written by two other processes came back with the one message added here). A
        session another process created after this store read its index is found by its
        blob, as a new store would find it. The planner's reads
        (:meth:`context_for_intent`) and listings keep the cached copy (no read per search).

        A blob that does not parse is :func:`_unreadable` for its owner; for ``user``, when
        the blob does not name ``user`` as its owner, it is missing (as another user's
        session is): its id's existence and its text are not another user's to learn.
        """
        if not isinstance(session_id, str) or not _SESSION_ID_RE.match(session_id):
            raise SessionNotFoundError(_no_session(session_id))
        if not fresh and session_id in self._cache:
            return self._cache[session_id]
        known = session_id in self._index
        if not known and session_id not in self._cache:
            lister = getattr(self.state, "state_keys", None)
            if not callable(lister):  # (a backend that cannot list keeps its index's word)
                raise SessionNotFoundError(_no_session(session_id))
        raw = self.state.get_state(KEY_PREFIX + session_id)
        if not raw:
            self._cache.pop(session_id, None)
            raise SessionNotFoundError(_no_session(session_id))
        cached = self._cache.get(session_id)
        if cached is not None and self._cache_raw.get(session_id) == raw:
            return cached
        try:
            session = Session.model_validate_json(raw)
        except ValidationError as exc:
            if user is not None and _owner_of(raw) != user:
                raise SessionNotFoundError(_no_session(session_id)) from None
            raise _unreadable(session_id, exc) from None
        if session.session_id != session_id:
            raise SessionNotFoundError(_no_session(session_id))
        if not known:
            self._index.append(session_id)
        self._cache[session_id] = session
        self._cache_raw[session_id] = bytes(raw)
        return session

    # -- public API --------------------------------------------------------------------

    def create_session(self, user: str = "default") -> str:
        """Start a session for ``user``; returns its id (32 hex characters)."""
        validate_user(user)
        now = time.time()
        session = Session(session_id=uuid.uuid4().hex, user=user, created_at=now, updated_at=now)
        with self._lock:
            self._save(session)  # (a failed write leaves no session behind, in memory either)
            self._update_index(add=session.session_id)
            self._cache[session.session_id] = session
        return session.session_id

    def for_user(self, user: str) -> UserSessions:
        """A view of this store that sees only ``user``'s sessions."""
        return UserSessions(self, user)

    def get(self, session_id: str, *, user: str | None = None) -> Session:
        """A copy of the session (changing it does not change the store)."""
        with self._lock:
            return self._load(session_id, user, fresh=True).model_copy(deep=True)

    def list_sessions(self, user: str | None = None) -> list[Session]:
        """Every session (of ``user`` when given), oldest first, as copies.

        Without ``user`` this is an administrator's listing of every user's sessions; the
        client's :class:`UserSessions` view always passes its own user.
        """
        out: builtins.list[Session] = []
        with self._lock:
            for sid in self._index:
                try:  # (another user's session, or one deleted meanwhile: not listed)
                    out.append(self._load(sid, user).model_copy(deep=True))
                except SessionNotFoundError:
                    continue
        return sorted(out, key=lambda s: s.created_at)

    def list(self, user: str | None = None) -> builtins.list[Session]:
        """Alias of :meth:`list_sessions` (the name the client API uses)."""
        return self.list_sessions(user)

    def delete(self, session_id: str, *, user: str | None = None) -> None:
        """Forget a session; its blob is overwritten with ``b""``.

        A damaged session (:func:`_unreadable`) is deleted for its owner (``user`` is the
        ``user`` its blob names, or no ``user``). Why: it was IndexCorruptError here too, so
        its owner could not remove it, and the owner's listing, which names it, failed for
        good. Another user still reads it as missing (:meth:`_load_any`)."""
        with self._lock, holding_key(self.state, _lock_key(session_id)):
            with contextlib.suppress(IndexCorruptError):  # (only its owner's: _load_any)
                self._load(session_id, user, fresh=True)
            self._cache.pop(session_id, None)
            self.state.put_state(KEY_PREFIX + session_id, b"")
            self._update_index(drop=session_id)

    def add_message(
        self, session_id: str, role: str, content: str, *, user: str | None = None
    ) -> SessionMessage:
        """Append a message; folds old turns (a sync model call when an LLM is configured)."""
        message, fold = self._append(session_id, role, content, user)
        if fold is not None:
            previous, batch = fold
            try:
                summary, method, reason = self._summarize_sync(previous, batch)
                self._apply_fold(session_id, batch, summary, method, reason)
            finally:
                self._release(session_id)
        return message

    async def aadd_message(
        self, session_id: str, role: str, content: str, *, user: str | None = None
    ) -> SessionMessage:
        """The async twin of :meth:`add_message` (the model call does not block the loop;
        nor does a wait for another process's hold of the session's key lock: it is taken
        here first, and ``_append``'s own hold shares it)."""
        async with self._async_key(session_id):
            message, fold = self._append(session_id, role, content, user)
        if fold is not None:
            previous, batch = fold
            try:
                summary, method, reason = await self._summarize_async(previous, batch)
                async with self._async_key(session_id):
                    self._apply_fold(session_id, batch, summary, method, reason)
            finally:
                # Also on cancellation: the next added message then retries the fold.
                self._release(session_id)
        return message

    def context_for_intent(
        self, session_id: str, n_recent: int = 5, *, user: str | None = None
    ) -> tuple[str, builtins.list[SessionMessage]]:
        """The planner's input from this session: (compressed summary, last ``n_recent``).

        The last ``n_recent`` messages of the conversation, up to ``INTENT_MESSAGES`` of them
        also where ``keep_recent`` keeps fewer verbatim (:attr:`Session.intent_tail`)."""
        if isinstance(n_recent, bool) or not isinstance(n_recent, int) or n_recent < 0:
            raise InvalidQueryError("n_recent must be an int >= 0")
        with self._lock:
            session = self._load(session_id, user)
            pool = session.messages
            if n_recent > len(pool) and session.intent_tail:  # (keep_recent below 5)
                pool = [*session.intent_tail, *pool]
            recent = pool[-n_recent:] if n_recent else []
            return session.summary, [m.model_copy() for m in recent]

    # -- internals ---------------------------------------------------------------------

    def _async_key(self, session_id: object) -> contextlib.AbstractAsyncContextManager[None]:
        """The session's key lock, awaited (nothing for a malformed id: ``_append`` refuses
        it with its usual error)."""
        if not isinstance(session_id, str) or not _SESSION_ID_RE.match(session_id):
            return contextlib.nullcontext()
        return aholding_key(self.state, KEY_PREFIX + session_id)

    def _append(
        self, session_id: str, role: str, content: str, user: str | None = None
    ) -> tuple[SessionMessage, tuple[str, builtins.list[SessionMessage]] | None]:
        if not isinstance(role, str) or role not in ROLES:
            raise InvalidQueryError(
                f"invalid role {shown_value(role)}: use one of {', '.join(ROLES)}"
            )
        if not isinstance(content, str):
            raise InvalidQueryError(f"content must be a string, got {type(content).__name__}")
        # (a str subclass as the string it holds: its own ``__len__`` answering 0 let a
        # message of any length past the bound below; helper attacks71)
        content = str.__str__(content)
        if not content.strip():
            raise InvalidQueryError("content must not be empty")
        if len(content) > MAX_MESSAGE_CHARS:
            raise InvalidQueryError(f"content longer than {MAX_MESSAGE_CHARS} characters")
        # (one pass to the first visible character: content of only zero-width or control
        # characters was stored as a message and given to the planner and the summary,
        # where a turn, a note and a text of them are refused as empty: validation.is_blank)
        if is_blank(content):
            raise InvalidQueryError("content has no visible character (empty)")
        if "\x00" in content or _has_lone_surrogate(content):
            raise InvalidQueryError("content contains a NUL or a lone surrogate")
        # Under the session's key lock (other processes' appends to it wait; see
        # :func:`~treehop.stores._filelock.holding_key`) from the fresh read to the save:
        # two processes of 30 appends each to one session stored 46 of 60 without it.
        with self._lock, holding_key(self.state, _lock_key(session_id)):
            # (a copy: a failed save must not leave the message in the cached session)
            session = self._load(session_id, user, fresh=True).model_copy(deep=True)
            now = time.time()
            message = SessionMessage(
                role=role,  # type: ignore[arg-type]  # checked against ROLES above
                content=content,
                seq=session.next_seq,
                created_at=now,
            )
            session.messages.append(message)
            session.next_seq += 1
            session.updated_at = now
            fold: tuple[str, builtins.list[SessionMessage]] | None = None
            if len(session.messages) > self.max_messages and session_id not in self._folding:
                n_fold = len(session.messages) - self.keep_recent
                batch = [m.model_copy() for m in session.messages[:n_fold]]
                self._folding.add(session_id)
                fold = (session.summary, batch)
            try:
                self._save(session)
            except BaseException:
                if fold is not None:
                    self._folding.discard(session_id)
                raise
            self._cache[session_id] = session
        return message.model_copy(), fold

    def _apply_fold(
        self,
        session_id: str,
        batch: Sequence[SessionMessage],
        summary: str,
        method: Literal["llm", "extractive"],
        reason: str | None,
    ) -> None:
        with self._lock, holding_key(self.state, _lock_key(session_id)):
            try:
                session = self._load(session_id, fresh=True).model_copy(deep=True)
            except NotFoundError:  # deleted while the summary was being written
                return
            # Messages are only ever appended and folds only take the oldest, so the batch is
            # still the oldest prefix unless another process (its own ``_folding``) folded
            # them meanwhile; that fold's summary already holds them. Applying this one too
            # counted them twice (folded_count 56 with 15 kept of 60 appended, in a CI run
            # of two processes appending to one session) and replaced the newer summary.
            held = [m.seq for m in session.messages[: len(batch)]]
            if held != [m.seq for m in batch]:
                return
            session.messages = session.messages[len(batch) :]
            # (the planner's window reaches back into what was folded while fewer than
            # INTENT_MESSAGES remain: keep_recent governs storage, not the seed's window)
            need = INTENT_MESSAGES - len(session.messages)
            tail = [*session.intent_tail, *batch]
            session.intent_tail = [m.model_copy() for m in tail[-need:]] if need > 0 else []
            session.folded_count += len(batch)
            session.summary = summary
            session.summary_method = method
            session.summary_fallback_reason = reason
            self._save(session)
            self._cache[session_id] = session

    def _release(self, session_id: str) -> None:
        with self._lock:
            self._folding.discard(session_id)

    def _summary_messages(
        self, previous: str, batch: Sequence[ChatMessage]
    ) -> builtins.list[ChatMessage]:
        rendered = "\n".join(f"[{m.role}] {m.content[:4000]}" for m in batch)
        prompt = self.summary_prompt.format(
            summary=previous or "(empty)", messages=rendered, max_chars=self.max_summary_chars
        )
        return [ChatMessage(role="user", content=prompt)]

    def _clean_llm_summary(self, text: object) -> str | None:
        if not isinstance(text, str):  # (a caller's LLM answering None: AttributeError)
            return None
        # A lone surrogate (a JSON ``"\ud800"`` escape in the model's answer) cannot be
        # saved: the fold's save raised a raw serialisation error on every later append,
        # and the session took no message again. Shown as U+FFFD (one pass).
        text = _LONE_SURROGATE.sub("\ufffd", text).strip()
        if not text:
            return None
        # The prompt asks for max_summary_chars; a model may overshoot a little, and a hard
        # cap (twice the target) keeps the planner prompt bounded whatever it writes.
        return text[: 2 * self.max_summary_chars]

    def _fallback(
        self, previous: str, batch: Sequence[ChatMessage], reason: str | None
    ) -> tuple[str, Literal["llm", "extractive"], str | None]:
        summary = extractive_summary(previous, batch, max_chars=self.max_summary_chars)
        return summary, "extractive", reason

    def _timed_out(
        self, previous: str, batch: Sequence[ChatMessage]
    ) -> tuple[str, Literal["llm", "extractive"], str | None]:
        return self._fallback(previous, batch, f"timeout after {self.summary_timeout_s:g}s")

    def _summarize_sync(
        self, previous: str, batch: Sequence[ChatMessage]
    ) -> tuple[str, Literal["llm", "extractive"], str | None]:
        if self.llm is None:
            return self._fallback(previous, batch, None)
        # In a worker thread so that ``summary_timeout_s`` holds here too, as in
        # :meth:`_summarize_async` (helper review76: the sync path had no deadline at all); a
        # call that overruns is abandoned (its thread ends when the client's own timeout fires).
        # A daemon thread (helper pipeline77): a ThreadPoolExecutor's worker abandoned here
        # was joined at interpreter exit, so a model with no timeout of its own held the
        # program open after its last line (helper review77's left-alone item).
        future = in_daemon_thread(
            self.llm.complete, self._summary_messages(previous, batch), name="treehop-summary"
        )
        try:
            text = future.result(timeout=self.summary_timeout_s)
        except BaseException as exc:  # any model fault falls back to extractive
            if not future.done():  # (the deadline passed, or a Ctrl-C in the wait)
                future.cancel()
                if is_signal(exc):
                    raise
                return self._timed_out(previous, batch)
            if is_signal(exc) and not isinstance(exc, asyncio.CancelledError):
                raise  # (a model's own cancellation falls back, as on the async path)
            return self._fallback(previous, batch, _reason(exc))
        cleaned = self._clean_llm_summary(text)
        if cleaned is None:
            return self._fallback(previous, batch, "empty summary from the model")
        return cleaned, "llm", None

    async def _summarize_async(
        self, previous: str, batch: Sequence[ChatMessage]
    ) -> tuple[str, Literal["llm", "extractive"], str | None]:
        if self.llm is None:
            return self._fallback(previous, batch, None)
        # Abandoned at the deadline even if the model ignores the cancellation (``wait_for``
        # waited for such a call and took its late answer; helper review76).
        try:
            task = asyncio.ensure_future(
                self.llm.acomplete(self._summary_messages(previous, batch))
            )
        except BaseException as exc:  # (an ``acomplete`` that is no coroutine)
            if is_signal(exc):
                raise
            return self._fallback(previous, batch, _reason(exc))
        if not await finished_within(task, self.summary_timeout_s):
            return self._timed_out(previous, batch)
        try:
            text = task.result()
        except BaseException as exc:  # any model fault falls back to extractive
            if is_signal(exc) and not isinstance(exc, asyncio.CancelledError):
                raise
            return self._fallback(previous, batch, _reason(exc))
        cleaned = self._clean_llm_summary(text)
        if cleaned is None:
            return self._fallback(previous, batch, "empty summary from the model")
        return cleaned, "llm", None


def _reason(exc: BaseException) -> str:
    text = describe(exc).partition(": ")[2]
    kind = "LLM error" if isinstance(exc, TreehopError) else f"error: {type(exc).__name__[:100]}"
    return f"{kind}: {text}"[:500]


_INDEX_ERRORS = (ValueError, KeyError, TypeError, AttributeError, RecursionError)
"""What :func:`_parse_index` raises for a damaged index blob."""


def _parse_index(raw: bytes) -> list[str]:
    """The session ids an index blob lists, checked (a list of strings whose CRC-32 matches,
    where one is stored); one of :data:`_INDEX_ERRORS`, saying what is wrong,
    otherwise. Read on open (damage is rebuilt from the blobs) and before each index write
    (damage falls back to this store's own list)."""
    data = json.loads(raw)
    got = data["session_ids"]
    if not isinstance(got, list) or not all(isinstance(i, str) for i in got):
        raise TypeError("session_ids is not a list of strings")
    crc = data.get("crc32")
    if crc is not None and crc != _ids_crc(got):
        raise ValueError("checksum mismatch")
    return list(got)


def _malformed(ids: Sequence[str]) -> int:
    """How many of ``ids`` are no session id (checked apart from :func:`_parse_index`: a
    rebuild counts an index of them as the sessions it listed)."""
    return sum(1 for i in ids if not _SESSION_ID_RE.match(i))


def _ids_crc(ids: Sequence[str]) -> int:
    """The CRC-32 stored with the session ids: a flipped bit in an id is found, not read as
    another id that names no session."""
    return zlib.crc32("\n".join(ids).encode())


def _owner_of(raw: bytes) -> object:
    """The ``user`` a session blob that does not validate names (``None``: none readable)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return data.get("user") if isinstance(data, dict) else None


def _unreadable(session_id: str, exc: ValidationError) -> IndexCorruptError:
    """A damaged session for its owner: which fields and why, never their values (pydantic's
    own message quotes each ``input_value``, a message's text, into logs and MCP answers)."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    shown = "; ".join(f"{'.'.join(str(p) for p in e['loc'])[:80]}: {e['type']}" for e in errors[:5])
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return IndexCorruptError(f"session {session_id} is unreadable: {shown}{more}")


def _no_session(session_id: object) -> str:
    """One message for a missing id and another user's id (no existence oracle).

    Cut with :func:`~treehop.redaction.shown_name` (a key the cut runs through masked whole).
    Why (helper attacks89): the id was cut to 40 characters, then redacted, so a key given
    after a prefix (``viking://resources/sk-proj-...``) was cut to a head too short for its
    vendor's shape, and 21 of its characters were shown (``treehop mcp``'s ``search``)."""
    if not isinstance(session_id, str):
        return f"no session {type(session_id).__name__!r}"
    return f"no session {shown_name(session_id, 40)}"


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class UserSessions:
    """The sessions of one user: what a client opened for that user may see and change.

    Same methods as :class:`SessionStore`; a ``user=`` argument, where accepted, must name the
    bound user (anything else is :class:`~treehop.errors.NotFoundError` for ids and an empty
    listing for other users).
    """

    def __init__(self, store: SessionStore, user: str) -> None:
        self._store = store
        self.user = validate_user(user)

    def __repr__(self) -> str:
        return f"UserSessions(user={self.user!r})"

    def _same_user(self, user: str | None) -> None:
        if user is not None and user != self.user:
            raise InvalidQueryError(
                f"this client is opened for user {self.user!r}; it cannot act for another user"
            )

    def create_session(self, user: str | None = None) -> str:
        self._same_user(user)
        return self._store.create_session(self.user)

    def get(self, session_id: str) -> Session:
        return self._store.get(session_id, user=self.user)

    def list_sessions(self, user: str | None = None) -> builtins.list[Session]:
        if user is not None and user != self.user:
            return []
        return self._store.list_sessions(self.user)

    def list(self, user: str | None = None) -> builtins.list[Session]:
        return self.list_sessions(user)

    def delete(self, session_id: str) -> None:
        self._store.delete(session_id, user=self.user)

    def add_message(self, session_id: str, role: str, content: str) -> SessionMessage:
        return self._store.add_message(session_id, role, content, user=self.user)

    async def aadd_message(self, session_id: str, role: str, content: str) -> SessionMessage:
        return await self._store.aadd_message(session_id, role, content, user=self.user)

    def context_for_intent(
        self, session_id: str, n_recent: int = 5
    ) -> tuple[str, builtins.list[SessionMessage]]:
        return self._store.context_for_intent(session_id, n_recent, user=self.user)

    @property
    def llm(self) -> LLM | None:
        return self._store.llm
