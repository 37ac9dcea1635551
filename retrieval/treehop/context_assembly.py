"""Context assembly: retrieved hits → one token-budgeted text block for a model's prompt.

What an agent needs from retrieval is not a list of hits but a block of text that fits the room
left in its prompt. :func:`assemble_context` builds it:

- hits are taken best first; each is shown at the most detailed *tier* allowed that still fits
  — ``content`` (L2), else ``overview`` (L1), else ``abstract`` (L0). A tier that does not fit is
  replaced by the smaller one, never cut mid-sentence;
- ``max_tokens`` bounds the whole block and ``quotas`` bound each context type (memories,
  resources, skills), so that one kind cannot crowd out the others;
- ``exclude_uris`` drops hits inside the given subtrees, and ``seen_uris`` drops hits an earlier
  turn already injected (the clients keep that set per ``session_id``, see
  :class:`ContextLedger`), so a conversation is not fed the same memory at every turn.

Token counts come from a real tokenizer (:func:`default_token_counter`): the WordPiece
tokenizer of the offline MiniLM embedder (its ``tokenizer.json``, through ``tokenizers``) when
the ``local`` extra is installed; :class:`TiktokenCounter` when asked for (tiktoken downloads
its BPE table on first use, so it is never chosen implicitly); otherwise
:class:`HeuristicCounter`, documented below. The budget is checked on the final block with the
same counter, so it holds even for tokenizers that are not additive over concatenation.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from . import uri as urimod
from .errors import EmbeddingError, InvalidQueryError
from .models import ContextType, FindResult, FoundBy, MatchedContext
from .timestamps import TIMESTAMP_FIELD, to_iso

Tier = Literal["abstract", "overview", "content"]
TIERS: tuple[Tier, ...] = ("abstract", "overview", "content")
"""From the smallest to the most detailed."""
SEPARATOR = "\n\n"
MAX_BUDGET = 1_000_000
LEDGER_LIMIT = 5000
"""How many injected URIs a session remembers (the oldest are forgotten first)."""
_SESSION_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text, as the model that reads it would (near enough)."""

    @property
    def name(self) -> str: ...

    def count(self, text: str) -> int: ...


class HFTokenizerCounter:
    """A ``tokenizers`` tokenizer (default: the MiniLM embedder's ``tokenizer.json``).

    Loaded without the embedder's 256-token truncation and without special tokens, so a long
    text is counted in full.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbeddingError("HFTokenizerCounter needs the 'tokenizers' package") from exc
        if path is None:
            from .embedders.local_minilm import default_tokenizer_path

            path = default_tokenizer_path()
        try:
            tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # the Rust side raises plain Exception subclasses
            raise EmbeddingError(f"cannot load tokenizer {path}: {exc}") from exc
        tok.no_truncation()
        tok.no_padding()
        self._tok = tok
        self._name = f"tokenizers:{Path(path).parent.name or Path(path).name}"

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)


class TiktokenCounter:
    """OpenAI's BPE through ``tiktoken`` (``cl100k_base`` by default).

    tiktoken fetches the BPE table over the network the first time an encoding is used (then
    caches it under ``TIKTOKEN_CACHE_DIR``); offline without that cache the constructor fails
    with :class:`EmbeddingError`.
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        try:
            import tiktoken
        except ImportError as exc:
            raise EmbeddingError("TiktokenCounter needs the 'tiktoken' package") from exc
        try:
            self._enc = tiktoken.get_encoding(encoding)
        except Exception as exc:  # network, unknown name, corrupt cache
            raise EmbeddingError(f"cannot load tiktoken encoding {encoding!r}: {exc}") from exc
        self._name = f"tiktoken:{encoding}"

    @property
    def name(self) -> str:
        return self._name

    def count(self, text: str) -> int:
        return len(self._enc.encode(text, disallowed_special=()))


_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class HeuristicCounter:
    """The fallback when no tokenizer is installed: one token per punctuation mark and one per
    started 4 characters of a word (CJK characters one each).

    Why this rule: WordPiece and BPE vocabularies keep common English words whole and split
    rare ones into pieces of about 4 characters, and both give punctuation its own token, so
    the rule errs on the side of *more* tokens for English prose and code — the budget stays a
    bound rather than a guess. It is linear in the text.
    """

    name = "heuristic"

    def count(self, text: str) -> int:
        n = 0
        for m in _PIECE.finditer(text):
            piece = m.group()
            if piece.isascii():
                n += math.ceil(len(piece) / 4)
            else:
                n += len(piece)
        return n


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def default_token_counter() -> TokenCounter:
    """The MiniLM tokenizer when installed, else :class:`HeuristicCounter` (loaded once)."""
    global _default
    with _default_lock:
        if _default is None:
            try:
                _default = HFTokenizerCounter()
            except EmbeddingError:
                _default = HeuristicCounter()
        return _default


def resolve_counter(counter: TokenCounter | str | None) -> TokenCounter:
    """``None``/``"auto"``: the default; ``"tiktoken"``/``"tiktoken:<enc>"``, ``"heuristic"``,
    ``"minilm"``; or a :class:`TokenCounter` object."""
    if counter is None or counter == "auto":
        return default_token_counter()
    if isinstance(counter, str):
        if counter == "heuristic":
            return HeuristicCounter()
        if counter == "minilm":
            return HFTokenizerCounter()
        if counter == "tiktoken" or counter.startswith("tiktoken:"):
            return TiktokenCounter(counter.partition(":")[2] or "cl100k_base")
        raise InvalidQueryError(
            f"unknown token counter {counter!r}: use auto, minilm, heuristic or tiktoken[:enc]"
        )
    if not isinstance(counter, TokenCounter):
        raise InvalidQueryError("token_counter must have a name and a count(text) method")
    return counter


@dataclass(frozen=True)
class ContextSection:
    """One hit as it went into the block."""

    uri: str
    context_type: ContextType
    tier: Tier
    tokens: int
    score: float


@dataclass
class AssembledContext:
    """The block to put in a prompt, and how it was made."""

    text: str
    sections: list[ContextSection] = field(default_factory=list)
    tokens: int = 0
    max_tokens: int = 0
    token_counter: str = ""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """``(uri, reason)`` for hits left out: ``excluded``, ``seen``, ``duplicate``, ``budget``,
    ``quota`` or ``empty``."""

    @property
    def uris(self) -> list[str]:
        return [s.uri for s in self.sections]

    def tokens_by_type(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for s in self.sections:
            out[s.context_type.value] = out.get(s.context_type.value, 0) + s.tokens
        return out


def check_budget(
    max_tokens: int,
    quotas: Mapping[ContextType | str, int] | None,
    tiers: Sequence[str],
) -> tuple[dict[ContextType, int], tuple[Tier, ...]]:
    """Validate the budget arguments; returns quotas by type and the tiers, largest first."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidQueryError(f"max_tokens must be an integer, got {max_tokens!r}")
    if not 1 <= max_tokens <= MAX_BUDGET:
        raise InvalidQueryError(f"max_tokens must be between 1 and {MAX_BUDGET}")
    q: dict[ContextType, int] = {}
    for k, v in (quotas or {}).items():
        try:
            ct = ContextType(k)
        except ValueError as exc:
            raise InvalidQueryError(
                f"quotas: unknown context type {k!r} (memory, resource, skill)"
            ) from exc
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidQueryError(f"quotas[{k!r}] must be a non-negative integer, got {v!r}")
        q[ct] = v
    if isinstance(tiers, str) or not tiers or any(t not in TIERS for t in tiers):
        raise InvalidQueryError(f"tiers must be a non-empty list of {', '.join(TIERS)}")
    ordered = tuple(t for t in reversed(TIERS) if t in tiers)
    return q, ordered


def _time_of(m: MatchedContext) -> str | None:
    ts = m.metadata.get(TIMESTAMP_FIELD)
    if isinstance(ts, (int, float)) and not isinstance(ts, bool) and math.isfinite(ts):
        return to_iso(float(ts))[:16].replace("T", " ")
    return None


def _split(uri: str) -> tuple[str, str]:
    """``(group, label)``: a hit is listed under its parent by the rest of its URI."""
    if urimod.CHUNK_MARK in uri:
        base, _, frag = uri.partition("#")
        return base, "#" + frag
    head, sep, name = uri.rpartition("/")
    if not sep or head.endswith(":/") or head == urimod.SCHEME + "~":
        return uri, "."
    return head, name


@dataclass
class _Group:
    key: str
    header: str
    time: str | None
    lines: list[str] = field(default_factory=list)


def _line(m: MatchedContext, tier: Tier, body: str, label: str, group_time: str | None) -> str:
    extra = []
    t = _time_of(m)
    if t is not None and t != group_time:
        extra.append(t)
    if tier != "content":
        extra.append(tier)
    return f"- {label}{' (' + ', '.join(extra) + ')' if extra else ''}: {body}"


def _render(groups: Sequence[_Group]) -> str:
    return SEPARATOR.join("\n".join([g.header, *g.lines]) for g in groups if g.lines)


def _unfold_turns(contexts: Sequence[MatchedContext]) -> list[MatchedContext]:
    """Each memory hit followed by the turns its slot carries (``memory_context_chars``), in
    conversation order, as entries of their own: the packer fits the budget, dedups across a
    session's calls and labels line by line, so every turn must be its own entry."""
    out: list[MatchedContext] = []
    for m in contexts:
        out.append(m)
        turns = sorted((c for c in m.collapsed if c.position), key=lambda c: c.position or 0)
        out += [
            m.model_copy(
                update={
                    "uri": c.uri,
                    "abstract": c.abstract,
                    "overview": "",
                    "content": c.content,
                    "score": c.score,
                    "metadata": {},
                    "tags": [],
                    "collapsed": [],
                    "found_by": FoundBy.NEIGHBOUR,
                    "found_via": m.uri,
                }
            )
            for c in turns
        ]
    return out


def _within_any(uri: str, scopes: Iterable[str]) -> bool:
    return any(urimod.is_within(uri, s) for s in scopes)


def assemble_context(
    hits: FindResult | Sequence[MatchedContext],
    *,
    max_tokens: int,
    quotas: Mapping[ContextType | str, int] | None = None,
    tiers: Sequence[Tier] = TIERS,
    exclude_uris: Iterable[str] = (),
    seen_uris: Iterable[str] = (),
    token_counter: TokenCounter | str | None = None,
) -> AssembledContext:
    """Fit the hits, best first, into ``max_tokens`` (see the module docstring).

    URIs are compared as given: pass ``exclude_uris`` / ``seen_uris`` in the form the hits use
    (the clients' :meth:`assemble_context` does this for you).
    """
    quota, order = check_budget(max_tokens, quotas, tiers)
    counter = resolve_counter(token_counter)
    contexts = _unfold_turns(hits.contexts() if isinstance(hits, FindResult) else list(hits))
    packer = _Packer(max_tokens, quota, order, counter, contexts)
    excluded = [e.rstrip("/") for e in exclude_uris]
    seen = set(seen_uris)
    for m in contexts:
        reason = packer.refusal(m, excluded, seen)
        if reason is None:
            reason = packer.place(m)
        if reason is not None:
            packer.out.skipped.append((m.uri, reason))
    return packer.finish()


class _Packer:
    """The state of one :func:`assemble_context` call: groups, their lines, the tokens used."""

    def __init__(
        self,
        max_tokens: int,
        quota: Mapping[ContextType, int],
        order: Sequence[Tier],
        counter: TokenCounter,
        contexts: Sequence[MatchedContext],
    ) -> None:
        self.max_tokens = max_tokens
        self.quota = quota
        self.order = tuple(order)
        self.counter = counter
        self.sep_cost = counter.count(SEPARATOR)
        self.nl_cost = counter.count("\n")
        self.out = AssembledContext(text="", max_tokens=max_tokens, token_counter=counter.name)
        self.groups: dict[str, _Group] = {}
        self.order_of: list[tuple[str, int]] = []  # (group, line index) of each section
        self.used = 0
        self.per_type: dict[ContextType, int] = {}
        self.taken: set[str] = set()
        self.above_hits = {p for m in contexts for p in urimod.uri_prefixes(m.uri)}

    def refusal(self, m: MatchedContext, excluded: Sequence[str], seen: set[str]) -> str | None:
        """Why ``m`` is left out before its text is even measured, if it is."""
        if excluded and _within_any(m.uri, excluded):
            return "excluded"
        if m.uri in seen:
            return "seen"
        if m.uri in self.taken:
            return "duplicate"
        return None

    def place(self, m: MatchedContext) -> str | None:
        """Add ``m`` at the richest tier that fits; the reason it did not fit otherwise."""
        key, label = _split(m.uri)
        group = self.groups.get(key)
        if group is None:
            t = _time_of(m)
            info = ", ".join(p for p in (m.context_type.value, t) if p)
            candidate = _Group(key, f"[{key}] ({info})", t)
            opening = self.counter.count(candidate.header) + (self.sep_cost if self.groups else 0)
        else:
            candidate, opening = group, 0
        limit = self.quota.get(m.context_type)
        reason = "empty"
        tried: set[str] = set()
        tiers_here = self.order
        if not m.is_leaf and m.uri in self.above_hits:
            # its own hits below it say more than its overview (a list of child abstracts)
            tiers_here = tuple(t for t in self.order if t == "abstract") or self.order
        for tier in tiers_here:
            body = getattr(m, tier).strip()
            if not body or body in tried:
                continue
            tried.add(body)
            line = _line(m, tier, body, label, candidate.time)
            n = opening + self.nl_cost + self.counter.count(line)
            if limit is not None and self.per_type.get(m.context_type, 0) + n > limit:
                reason = "quota"
                continue
            if self.used + n > self.max_tokens:
                reason = "budget"
                continue
            self._take(m, key, candidate, line, tier, n)
            return None
        return reason

    def _take(
        self, m: MatchedContext, key: str, group: _Group, line: str, tier: Tier, n: int
    ) -> None:
        self.groups.setdefault(key, group)
        group.lines.append(line)
        self.order_of.append((key, len(group.lines) - 1))
        self.used += n
        self.per_type[m.context_type] = self.per_type.get(m.context_type, 0) + n
        self.taken.add(m.uri)
        self.out.sections.append(ContextSection(m.uri, m.context_type, tier, n, float(m.score)))

    def finish(self) -> AssembledContext:
        """Render; a tokenizer that is not additive may overshoot: drop the last sections."""
        out = self.out
        text = _render(list(self.groups.values()))
        total = self.counter.count(text) if text else 0
        while self.order_of and total > self.max_tokens:
            key, _ = self.order_of.pop()
            self.groups[key].lines.pop()
            dropped = out.sections.pop()
            out.skipped.append((dropped.uri, "budget"))
            text = _render(list(self.groups.values()))
            total = self.counter.count(text) if text else 0
        out.text = text
        out.tokens = total
        return out


class ContextLedger:
    """Which URIs were already injected into each session's context (dedup across turns).

    Persisted with the index through the store's ``get_state`` / ``put_state`` (key
    ``context/<user>/<session_id>``), so a conversation resumed after a restart is not fed
    again what it already has. Bounded: the oldest URIs are forgotten after
    :data:`LEDGER_LIMIT`.
    """

    def __init__(self, state: Any, user: str) -> None:
        self.state = state
        self.user = urimod.validate_user(user)
        self._lock = threading.Lock()

    @staticmethod
    def check_session(session_id: str) -> str:
        if not isinstance(session_id, str) or not _SESSION_RE.match(session_id):
            raise InvalidQueryError(
                f"session_id must be 1-128 letters, digits, '_', '.' or '-', got {session_id!r}"
            )
        return session_id

    def _key(self, session_id: str) -> str:
        return f"context/{self.user}/{self.check_session(session_id)}"

    def seen(self, session_id: str) -> list[str]:
        raw = self.state.get_state(self._key(session_id))
        if not raw:
            return []
        data = json.loads(raw.decode("utf-8"))
        return [u for u in data if isinstance(u, str)] if isinstance(data, list) else []

    def add(self, session_id: str, uris: Sequence[str]) -> None:
        if not uris:
            return
        with self._lock:
            have = self.seen(session_id)
            merged = list(dict.fromkeys([*have, *uris]))[-LEDGER_LIMIT:]
            self.state.put_state(self._key(session_id), json.dumps(merged).encode("utf-8"))

    def reset(self, session_id: str) -> None:
        self.state.put_state(self._key(session_id), b"[]")
