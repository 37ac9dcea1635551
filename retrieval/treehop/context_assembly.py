"""Context assembly: retrieved hits → one token-budgeted text block for a model's prompt.

What an agent needs from retrieval is not a list of hits but a block of text that fits the room
left in its prompt. :func:`assemble_context` builds it:

- hits are taken best first; each is shown at the most detailed *tier* allowed that still fits
  — ``content`` (L2), else ``overview`` (L1), else ``abstract`` (L0). A tier that does not fit is
  replaced by the smaller one, never cut mid-sentence; a document's text that does not fit is
  cut to the room left at a sentence or line boundary instead (:data:`CHUNK_FALLBACK`), since
  a chunk's smaller tiers are its heading path;
- resources are listed under compact headers (:data:`COMPACT_RESOURCE_HEADERS`), the full
  URIs stay in :attr:`AssembledContext.sections`; a document's chunks in document order, a
  heading path said once for neighbouring chunks of one section (:data:`HEADINGS_ONCE`);
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

import bisect
import hashlib
import heapq
import itertools
import json
import math
import os
import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

from . import uri as urimod
from ._plugins import call
from .arguments import check_bool
from .errors import EmbeddingError, IndexCorruptError, InvalidQueryError
from .lexical_lead import lexical_leader
from .memory_context import TURN_KIND, day_prefix
from .models import ChunkContext, ContextType, FindResult, FoundBy, MatchedContext
from .redaction import redact
from .text_tokenize import tokenize
from .timestamps import TIMESTAMP_FIELD, shown_iso
from .tree_scoring import order_key
from .tree_scoring import query_terms as index_terms
from .validation import shown_value

Tier = Literal["abstract", "overview", "content"]
TIERS: tuple[Tier, ...] = ("abstract", "overview", "content")
"""From the smallest to the most detailed."""
SEPARATOR = "\n\n"
MAX_BUDGET = 1_000_000
LEDGER_LIMIT = 5000
"""How many injected URIs a session remembers (the oldest are forgotten first)."""
_SESSION_RE = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}\Z")


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
        self._unk = _unknown_id(tok)
        self._name = f"tokenizers:{Path(path).parent.name or Path(path).name}"
        self.additive_lines = _splits_at_whitespace(tok)
        """Whether the count of lines joined by newlines is the sum of their counts (see
        :func:`_splits_at_whitespace`): :func:`assemble_context` then knows its block's count
        without encoding the whole block again."""

    @property
    def name(self) -> str:
        return self._name

    def _encode(self, text: str) -> Any:
        try:
            return self._tok.encode(text, add_special_tokens=False)
        except TypeError:
            # A lone surrogate (a caller's hit): the tokenizer raised ``TypeError:
            # TextInputSequence must be str`` out of assemble_context. Each is counted as a
            # "?" (a token; BERT's normaliser drops U+FFFD), one character for one, so the
            # offsets still index ``text``.
            return self._tok.encode(_SURROGATE.sub("?", text), add_special_tokens=False)

    def _unknown_words(self, text: str, enc: Any) -> list[tuple[int, int, int, int]]:
        """``(token index, start, end)`` of each ``[UNK]`` of ``enc`` that stands for more
        than one token's worth of text, with how many tokens it is counted as (the
        heuristic's count of its text).

        Why: WordPiece reads a word past ``max_input_chars_per_word`` (100 for MiniLM) as one
        ``[UNK]``, so a 200,000-character word (a minified file, a base64 blob) counted one
        token and a block "of 50 tokens" held 200 KB. The heuristic's rule (one per started 4
        characters, a non-ASCII character one) errs high, as a budget should."""
        unk = self._unk
        ids = enc.ids
        if unk is None or unk not in ids:
            return []
        offsets = enc.offsets
        out = []
        for i, t in enumerate(ids):
            if t == unk:
                a, b = offsets[i]
                n = _HEURISTIC.count(text[a:b]) if b - a > 1 else 1
                if n > 1:
                    out.append((i, a, b, n))
        return out

    def count(self, text: str) -> int:
        enc = self._encode(text)
        return len(enc.ids) + sum(n - 1 for _, _, _, n in self._unknown_words(text, enc))

    def spans(self, text: str) -> tuple[list[int], list[int]]:
        """Where each token of ``text`` starts and ends (character offsets): with
        :attr:`additive_lines`, the count of any piece of ``text`` cut at whitespace, from
        one encoding (an excerpt's search tries several pieces of one chunk). An over-long
        word's ``[UNK]`` is as many spans as :meth:`count` counts it, so the two agree."""
        enc = self._encode(text)
        offsets = enc.offsets
        starts, ends = [a for a, _ in offsets], [b for _, b in offsets]
        long = self._unknown_words(text, enc)
        if not long:
            return starts, ends
        s2: list[int] = []
        e2: list[int] = []
        prev = 0
        for i, a, b, n in long:
            s2 += starts[prev:i]
            e2 += ends[prev:i]
            cuts = [a + (k * (b - a)) // n for k in range(n + 1)]
            s2 += cuts[:-1]
            e2 += cuts[1:]
            prev = i + 1
        s2 += starts[prev:]
        e2 += ends[prev:]
        return s2, e2


_ADDITIVE_PRE_TOKENIZERS = frozenset({"BertPreTokenizer", "Whitespace", "WhitespaceSplit"})
_ADDITIVE_NORMALIZERS = frozenset({"NoneType", "BertNormalizer", "Lowercase"})


def _splits_at_whitespace(tok: Any) -> bool:
    """Whether no token of ``tok`` can span a newline: its normalizer keeps whitespace
    whitespace (none, BERT's, lower-casing) and its pre-tokenizer splits on whitespace first
    (BERT's, ``Whitespace``), so ``count(a + "\\n" + b) == count(a) + count(b)`` and the
    newline itself costs nothing. WordPiece models such as MiniLM's are built this way; a BPE
    with byte-level pre-tokenization is not (a space belongs to the next token)."""
    pre = type(tok.pre_tokenizer).__name__ if tok.pre_tokenizer is not None else "NoneType"
    norm = type(tok.normalizer).__name__ if tok.normalizer is not None else "NoneType"
    return pre in _ADDITIVE_PRE_TOKENIZERS and norm in _ADDITIVE_NORMALIZERS


_ENCODING_CHARS = 100
"""The longest tiktoken encoding name taken (theirs are about a dozen characters)."""


class TiktokenCounter:
    """OpenAI's BPE through ``tiktoken`` (``cl100k_base`` by default).

    tiktoken fetches the BPE table over the network the first time an encoding is used (then
    caches it under ``TIKTOKEN_CACHE_DIR``); offline without that cache the constructor fails
    with :class:`EmbeddingError`.
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        # Why the name is checked and every message bounded and redacted (helper
        # leftovers65e): ``{encoding!r}`` wrote a caller's value whole, and tiktoken's own
        # "Unknown encoding <name>" quoted it a second time (a pasted key included, through
        # the chained exception too); a list reached tiktoken's dict lookup as a raw
        # ``TypeError`` text. tiktoken's names are short identifiers (``o200k_base``).
        if not isinstance(encoding, str) or not 0 < len(encoding) <= _ENCODING_CHARS:
            raise EmbeddingError(
                "TiktokenCounter's encoding must be a name such as 'cl100k_base', "
                f"got {shown_value(encoding)}"
            )
        try:
            import tiktoken
        except ImportError as exc:
            raise EmbeddingError("TiktokenCounter needs the 'tiktoken' package") from exc
        detail: str | None = None
        try:
            self._enc = tiktoken.get_encoding(encoding)
        except Exception as exc:  # network, unknown name, corrupt cache
            detail = redact(f"{type(exc).__name__}: {str(exc)[:300]}")
        if detail is not None:
            # (raised outside the ``except``: tiktoken's error, which quotes the name whole,
            # is then neither the cause nor the context a traceback or a log prints)
            raise EmbeddingError(f"cannot load tiktoken encoding {shown_value(encoding)}: {detail}")
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


_HEURISTIC = HeuristicCounter()
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unknown_id(tok: Any) -> int | None:
    """The id of ``tok``'s unknown token (``[UNK]``), None without one (a byte-level BPE
    reads every word)."""
    name = getattr(getattr(tok, "model", None), "unk_token", None)
    found = tok.token_to_id(name) if isinstance(name, str) else None
    return found if isinstance(found, int) else None


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
            f"unknown token counter {counter!r:.100}: use auto, minilm, heuristic or tiktoken[:enc]"
        )
    if isinstance(counter, _CheckedCounter):
        return counter
    # (the protocol check reads ``name``: a property that raises passed the caller's own
    # exception, its text included, out of assemble_context)
    reading = "token_counter: reading its name"
    ok = call(reading, InvalidQueryError, isinstance, counter, TokenCounter)
    if not ok:
        raise InvalidQueryError("token_counter must have a name and a count(text) method")
    if isinstance(counter, _BUILT_IN):
        return counter
    return _CheckedCounter(counter)


class _CheckedCounter:
    """A caller's :class:`TokenCounter` whose answers are checked, as the embedder guard
    checks an embedder's (:mod:`treehop.embedders.guarded`).

    Why: its ``count`` raising passed the caller's own exception out of ``assemble_context``;
    an answer of a string or None raised ``TypeError`` summing it; a negative or NaN count
    let the whole text past the budget. A count is a finite number >= 0 (an int, or a float:
    a counter may estimate ``len(text) / 4``), kept as it is; anything else, or a failure,
    is :class:`InvalidQueryError`. The built-in counters are not wrapped."""

    def __init__(self, inner: TokenCounter) -> None:
        self.inner = inner
        name = call("token_counter: reading its name", InvalidQueryError, getattr, inner, "name")
        # (at most 80 characters: the name is in every AssembledContext it counts)
        self.name = name[:80] if isinstance(name, str) else repr(name)[:80]

    def count(self, text: str) -> int:
        n = call(f"token_counter {self.name!r}: count", InvalidQueryError, self.inner.count, text)
        if isinstance(n, bool) or not isinstance(n, int | float) or not 0 <= n < _MAX_COUNT:
            raise InvalidQueryError(
                f"token_counter {self.name!r}: count must answer a number of tokens >= 0, "
                f"got {repr(n)[:40]}"
            )
        return n  # (a float estimate is kept as it is)


_MAX_COUNT = 2**63
"""A count at or past this is no count of a text (an int past float's range overflowed
summing it)."""
_BUILT_IN = (HFTokenizerCounter, TiktokenCounter, HeuristicCounter)
"""The counters treehop ships: their counts are ints by construction, not checked."""


@dataclass(frozen=True)
class ContextSection:
    """One hit as it went into the block."""

    uri: str
    context_type: ContextType
    tier: Tier
    tokens: int
    score: float
    excerpt: bool = False
    """True: the tier's text cut to the room left (``CHUNK_FALLBACK``), not all of it."""


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


SLOT_TOKENS = 100
"""Tokens per slot :meth:`Treehop.assemble_context` plans for when it runs the query itself
without a ``limit``: ``find`` is asked for ``max_tokens / SLOT_TOKENS`` slots (at least
find's default 10), so that a large budget does not run out of hits (a Cranfield abstract is
about 150-200 tokens; a FAQ passage slot up to 500)."""


CHARS_PER_BLOCK_TOKEN = 2
"""Characters of passage per budget token :meth:`Treehop.assemble_context` lets a question's
slot show when it runs the query itself (:func:`context_slot_chars`): about half the block
(MiniLM's WordPiece averages ~4 characters a token on English prose)."""


def context_slot_chars(max_tokens: int, document_chars: int, question_chars: int | None) -> int:
    """How much of its passage a question's slot shows inside a ``max_tokens`` block.

    ``find()`` alone lets a question's passage slot show ``question_chars`` (the config's
    ``question_context_chars``: the whole answer, which the user of a result list reads);
    inside a budget one long passage would crowd out the next slots' answers. So the slot
    shows at most about half the block (:data:`CHARS_PER_BLOCK_TOKEN`), never less than a
    document slot (``document_chars``) nor more than ``find()`` alone would. Measured on the
    natural-question sets' pooled dev halves (bench/README.md, "assemble_context's slot
    extent"): 2,000 characters beat 3,000 at 500 and 1,000 tokens, 3,000 beat 2,000 at 2,000.
    """
    if question_chars is None:
        return document_chars
    half_block = CHARS_PER_BLOCK_TOKEN * max_tokens
    return min(question_chars, max(document_chars, half_block))


def context_limit(max_tokens: int) -> int:
    """How many slots to ask ``find`` for to fill ``max_tokens`` (see :data:`SLOT_TOKENS`)."""
    return max(10, min(1000, -(-max_tokens // SLOT_TOKENS)))


def check_budget(
    max_tokens: int,
    quotas: Mapping[ContextType | str, int] | None,
    tiers: Sequence[str],
) -> tuple[dict[ContextType, int], tuple[Tier, ...]]:
    """Validate the budget arguments; returns quotas by type and the tiers, largest first."""
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int):
        raise InvalidQueryError(f"max_tokens must be an integer, got {shown_value(max_tokens)}")
    if not 1 <= max_tokens <= MAX_BUDGET:
        raise InvalidQueryError(f"max_tokens must be between 1 and {MAX_BUDGET}")
    q: dict[ContextType, int] = {}
    if quotas is not None and not isinstance(quotas, Mapping):
        raise InvalidQueryError(
            f"quotas must be a mapping of context type to tokens, got {type(quotas).__name__}"
        )
    for k, v in (quotas or {}).items():
        try:
            ct = ContextType(k)
        except ValueError as exc:
            raise InvalidQueryError(
                f"quotas: unknown context type {shown_value(k)} (memory, resource, skill)"
            ) from exc
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise InvalidQueryError(
                f"quotas[{shown_value(k)}] must be a non-negative integer, got {shown_value(v)}"
            )
        q[ct] = v
    if (
        isinstance(tiers, str)
        or not isinstance(tiers, Sequence | AbstractSet)  # (an int was iterated: TypeError)
        or not tiers
        or any(not isinstance(t, str) or t not in TIERS for t in tiers)
    ):
        raise InvalidQueryError(f"tiers must be a non-empty list of {', '.join(TIERS)}")
    ordered = tuple(t for t in reversed(TIERS) if t in tiers)
    return q, ordered


def _time_of(m: MatchedContext) -> str | None:
    ts = m.metadata.get(TIMESTAMP_FIELD)
    shown = shown_iso(ts)  # (``None`` past the calendar too: 1e20 seconds)
    return None if shown is None else shown[:16].replace("T", " ")


def _split(uri: str) -> tuple[str, str]:
    """``(group, label)``: a hit is listed under its parent by the rest of its URI."""
    if urimod.CHUNK_MARK in uri:
        base, _, frag = uri.partition("#")
        return base, "#" + frag
    head, sep, name = uri.rpartition("/")
    if not sep or head.endswith(":/") or head == urimod.SCHEME + "~":
        return uri, "."
    return head, name


def _key_of(m: MatchedContext, turns: set[str] | frozenset[str]) -> tuple[str, str]:
    """``(group, label)`` of a hit (:func:`_split`); with :data:`FILE_GROUPS` a whole-file
    resource leaf is a group of its own, headed by its name, like a chunked document."""
    if (
        FILE_GROUPS
        and COMPACT_RESOURCE_HEADERS
        and m.is_leaf
        and m.context_type is ContextType.RESOURCE
        and urimod.CHUNK_MARK not in m.uri
        and m.uri not in turns
    ):
        return m.uri, ""
    return _split(m.uri)


@dataclass
class _Group:
    key: str
    header: str
    time: str | None
    lines: list[str] = field(default_factory=list)
    day: str | None = None
    """A memory session's ``(8 May 2023) `` (:func:`_turn_line`)."""
    keys: list[tuple[int, tuple[int | str, ...]]] | None = None
    """Conversation-order keys of a session's turn lines (rendered in that order)."""
    root: str | None = None
    """A compact resource header's common prefix, said before the block's first one."""
    heads: list[tuple[str, str] | None] | None = None
    """Per line of a document's group (:data:`HEADINGS_ONCE`): its heading and the line
    without it, ``None`` for a line whose heading is always shown (or that has none)."""


def _line(m: MatchedContext, tier: Tier, body: str, label: str, group_time: str | None) -> str:
    extra = []
    t = _time_of(m)
    if t is not None and t != group_time:
        extra.append(t)
    if tier != "content":
        extra.append(tier)
    note = f"({', '.join(extra)})" if extra else ""
    if not label:  # a compact chunk line (``CHUNK_LABELS``)
        return f"- {note}: {body}" if note else f"- {body}"
    return f"- {label}{' ' + note if note else ''}: {body}"


def _turn_line(body: str, day: str | None) -> str:
    """A conversation turn's line: its text (``Speaker: words``) without its label and, under
    a session header of the same day, without its ``(day)``: the URI and the day are said once
    in the header, and a turn's label and date were a third of its tokens."""
    if day is not None and body.startswith(day):
        body = body[len(day) :]
    return f"- {body}"


def _lines_of(g: _Group) -> list[str]:
    if g.keys is None:
        return g.lines
    if g.heads is None:
        return [line for _, line in sorted(zip(g.keys, g.lines, strict=True), key=lambda p: p[0])]
    out: list[str] = []
    prev: str | None = None
    for _, line, hb in sorted(zip(g.keys, g.lines, g.heads, strict=True), key=lambda p: p[0]):
        head = hb[0] if hb is not None else None
        out.append(hb[1] if hb is not None and head == prev else line)
        prev = head
    return out


def _heading_of(body: str) -> tuple[str, str] | None:
    """A chunk's heading line and the rest of its text: the first line when a blank line
    follows it and text comes after (a chunk's stored text starts with its heading path,
    ``Page › Section``); ``None`` otherwise. Only compared for equality with the heading of
    the chunk listed just before it in the same document (:data:`HEADINGS_ONCE`), so a first
    line that is not a heading costs nothing unless two neighbouring chunks open alike."""
    first, sep, rest = body.partition("\n\n")
    if not sep or "\n" in first or not first.strip() or not rest.strip():
        return None
    return first, rest.lstrip("\n")


def _render(groups: Sequence[_Group]) -> str:
    shown = [g for g in groups if g.lines]
    first_root = next((g for g in shown if g.root), None)
    parts = []
    for g in shown:
        head = [g.header]
        if g is first_root and ROOT_LINE:
            head.insert(0, f"(under {g.root})")
        head = [h for h in head if h]
        parts.append("\n".join([*head, *_lines_of(g)]))
    return SEPARATOR.join(parts)


def _resource_root(keys: Iterable[str]) -> str:
    """The deepest ``/``-ended prefix shared by the group keys, each keeping a name after it."""
    common: list[str] | None = None
    for k in keys:
        segs = k.split("/")[:-1]
        if common is None:
            common = segs
        else:
            n = 0
            for a, b in zip(common, segs, strict=False):
                if a != b:
                    break
                n += 1
            del common[n:]
    if not common or len(common) <= 2:  # nothing shared but the scheme: say full URIs
        return ""
    return "/".join(common) + "/"


def _short_names(keys: Iterable[str]) -> dict[str, str]:
    """Each group key's shortest ``/``-separated tail that no other key ends with
    (``install.md``; ``faq/install.md`` when another group is ``howto/install.md``), so that a
    header names its document unambiguously in the fewest tokens; without
    :data:`HEADER_EXTENSIONS`, a name's file extension dropped where it stays unique."""
    tails = {k: k.rstrip("/").split("/") for k in dict.fromkeys(keys)}
    out: dict[str, str] = {}
    depth = max((len(v) for v in tails.values()), default=0)
    for n in range(1, depth + 1):
        open_keys = [k for k in tails if k not in out]
        if not open_keys:
            break
        counts: dict[tuple[str, ...], int] = {}
        for segs in tails.values():
            t = tuple(segs[-n:])
            counts[t] = counts.get(t, 0) + 1
        for k in open_keys:
            t = tuple(tails[k][-n:])
            if counts[t] == 1 or n == len(tails[k]):
                out[k] = "/".join(t)
    if not HEADER_EXTENSIONS:
        out = _without_extensions(out)
    return out


_EXTENSION = re.compile(r"(?<=[^./])(?:\.[A-Za-z][A-Za-z0-9]{0,4}(?:\.gz)?|\.gz)$")
"""A file extension, with the ``.gz`` a compressed file adds (``authentication.txt.gz`` ->
``authentication``, as ``dirlisting.txt`` -> ``dirlisting``): dropping ``.gz`` alone named a
file that is not in the tree (``[authentication.txt]`` over lighttpd's doc folder; helper
usage85). Debian's doc folders ship such files; treehop reads them (docs/ingest.md)."""


def _without_extensions(names: Mapping[str, str]) -> dict[str, str]:
    """Each name without its file extension (``install.md`` -> ``install``) where no other
    name of the block is the same once its own is dropped (``install.md`` and
    ``install.rst`` both keep theirs): :data:`HEADER_EXTENSIONS`."""
    stems = {k: _EXTENSION.sub("", v) for k, v in names.items()}
    seen: dict[str, int] = {}
    for v in stems.values():
        seen[v] = seen.get(v, 0) + 1
    out = {k: stems[k] if seen[stems[k]] == 1 else v for k, v in names.items()}
    if len(set(out.values())) < len(out):  # a kept name met a stem (``a.md`` vs ``a.md.md``)
        return dict(names)
    return out


_BREAK = re.compile(r"(?<=[.!?:;])[ \t]+|\n+")


def _excerpt(text: str, fits: Callable[[str], bool], from_end: bool) -> str:
    """The longest run of whole sentences or lines at the start of ``text`` (its end with
    ``from_end``) that ``fits``; ``""`` when none does. Binary search over the breaks, so the
    counter sees O(log n) candidates."""
    cuts = [m.start() for m in _BREAK.finditer(text)] if not from_end else []
    if from_end:
        cuts = [m.end() for m in _BREAK.finditer(text)]
        cuts.reverse()  # longer suffix last: a cut nearer the start keeps more

    def piece(i: int) -> str:
        return text[cuts[i] :].strip() if from_end else text[: cuts[i]].strip()

    lo, hi, best = 0, len(cuts) - 1, ""
    while lo <= hi:
        mid = (lo + hi) // 2
        cand = piece(mid)
        if cand and fits(cand):
            best, lo = cand, mid + 1
        else:
            hi = mid - 1
    return best


EXCERPT_AT: Literal["query", "edge"] = "query"
"""Which part of a chunk that does not fit whole its excerpt keeps, when the block's query is
known (:func:`assemble_context`'s ``query``): ``query`` the run of whole sentences or lines
that fits the room and holds the most of the query's words (:func:`_query_window`), the
chunk's start (its end for a chunk shown before its slot's hit) where no window holds more
than that edge; ``edge`` always the edge. Why: an FAQ chunk holds two or three answers, and
the one that earned the hit is often the last (ffmpeg's FAQ: bench/README.md, "Natural
questions, round 8: the excerpt")."""

EXCERPT_TIES: Literal["last", "first"] = "first"
"""Of query windows that weigh the same, the one that starts ``first`` (earliest: it may open
with the end of the answer before) or ``last`` (at the first matching sentence). Dev halves,
nine sets pooled (``bench/bench_context_diag.py --dev --variants
base,excerpt-last,excerpt-edge``), ctx@500/1000/2000: ``first`` 0.575 / 0.695 / 0.776,
``last`` 0.576 / 0.693 / 0.776 (ffmpeg 0.478 -> 0.522 and perlfaq +0.007 at 500, lsof -0.009
at 500, borg -0.032 at 1,000): an answer also continues past the room, and the earlier window
keeps more of an answer whose matching sentence is not its first."""


def query_terms(query: str) -> frozenset[str]:
    """The words of ``query`` an excerpt is chosen by: the terms the heading match reads
    (:func:`treehop.tree_scoring.query_terms`, the lexical index's own: case-folded, stop
    words dropped, Porter-stemmed, Chinese segmented), so an excerpt matches ``timeouts`` to
    ``timeout`` as BM25 did when it ranked the hit; bounded (the first 4,096 characters, a
    word cut there left out) so a hostile query costs little."""
    head = query[:QUERY_CHARS]
    if len(query) > QUERY_CHARS and not query[QUERY_CHARS].isspace():
        head = head[: max(head.rfind(" "), head.rfind("\n"), 0)]  # the cut word is not a word
    return index_terms(head)


QUERY_CHARS = 4096
"""How much of a query :func:`query_terms` reads."""


def _sentence_bounds(text: str) -> list[int]:
    """Where ``text``'s sentences and lines begin (where :func:`_excerpt` cuts), and its end."""
    bounds = [0]
    for mt in _BREAK.finditer(text):
        if mt.start() > bounds[-1]:
            bounds.append(mt.start())
    if len(text) > bounds[-1]:
        bounds.append(len(text))
    return bounds


def _paragraph_starts(text: str, bounds: Sequence[int]) -> frozenset[int]:
    """The indices into ``bounds`` (:func:`_sentence_bounds`) where a paragraph of ``text``
    begins: its start and every sentence after a blank line."""
    blank = {mt.start() for mt in _BREAK.finditer(text) if mt.group().count("\n") >= 2}
    return frozenset(i for i, b in enumerate(bounds[:-1]) if i == 0 or b in blank)


EXCERPT_PARAGRAPHS = False
"""A query excerpt (:func:`_query_window`) starts at the paragraph (after a blank line) that
holds its first sentence with a query word, and runs as far as the room reaches from there,
where that window holds the query's words as well as the best one. Why: a chunk of an FAQ
page holds the end of one answer, a whole answer and the start of the next, a paragraph run
each; the earliest best window began inside the answer before the one the query matched and
so lost the matched answer's end to the room (xboard's "NO LANGFILE", cvs's "RCS keywords":
bench/README.md, "The excerpt window starts at a paragraph (helper quality73)"). No
constant: the window still holds every query word the best one does. Off: on the 91
natural-question dev halves (3,301 questions) it changed 12 blocks of the 9,903 at 500 /
1,000 / 2,000 tokens: ctx@1,000 +0.0009 (interval +0.0000..+0.0021, 3 won / 0 lost), 500
tokens 5 / 3 (the nine 0 / 2), 2,000 0 / 1; no gain with its interval above zero. It
loses where an answer's first paragraphs do not repeat the question's words (borg's "Yes
and No.")."""


EXCERPT_SKIP_HEADING = False
"""A query excerpt's window (:func:`_query_window`) is weighed without the words of the
chunk's heading line (its first line when a blank line follows, the heading path ``Page ›
Section``: :func:`_heading_of`). Why: the heading is shared by every part of the chunk, so
its query words say nothing about which part answers; counted, they make the chunk's start
(or any window holding the heading) tie with or beat the window that holds the answer, and
the excerpt keeps the heading's neighbourhood (cryptsetup's "10. LUKS2 Questions", vim's
"VIM ON MS-WINDOWS", xboard C.6: bench/README.md, "The excerpt window starts at a paragraph
(helper quality73)", three of its five excerpt losses). No constant: the heading's words
count for no window and so decide none; a chunk whose only query words are its heading's
keeps its start, as without a query. Off: on the 94 natural-question dev halves (3,411
questions; bench/README.md, "The excerpt window weighed without the heading line (helper
quality75)") it changed 5 judged blocks of the 10,233 at 500 / 1,000 / 2,000 tokens, all
gains: ctx@1,000 +0.0003 (interval +0.0000..+0.0009, 1 won / 0 lost), 500 tokens +0.0009
(4 / 0), 2,000 unchanged; the ten trailing sets not at all. No gain with its interval above
zero: the earliest best window (:data:`EXCERPT_TIES`) still reaches back over sentences
that weigh nothing, the heading's among them, and in the chunks quality73 named the body
repeats the heading's words elsewhere."""


def _from_paragraph(
    best: tuple[float, int, int],
    seg_terms: Sequence[frozenset[str]],
    weight: Mapping[str, float],
    paragraphs: AbstractSet[int],
    bounds: Sequence[int],
    tokens_between: Callable[[int, int], int],
    room: int,
) -> tuple[float, int, int]:
    """``best`` (weight, first and end segment of :func:`_query_window`'s window) moved to
    start at the paragraph that holds its first sentence with a query word, as far as the
    room reaches from there, when that window weighs as much (:data:`EXCERPT_PARAGRAPHS`)."""
    _, i, j = best
    k = next((x for x in range(i, j) if seg_terms[x]), i)
    p = max((x for x in paragraphs if x <= k), default=i)
    if p == i:
        return best
    end = p
    while end < len(seg_terms) and tokens_between(bounds[p], bounds[end + 1]) <= room:
        end += 1
    got = frozenset().union(*seg_terms[p:end]) if end > p else frozenset()
    w = sum(weight[t] for t in got)
    return (w, p, end) if end > p and w >= best[0] - 1e-9 else best


def _query_window(
    text: str,
    bounds: Sequence[int],
    terms: frozenset[str],
    tokens_between: Callable[[int, int], int],
    room: int,
    from_end: bool,
    paragraphs: AbstractSet[int] = frozenset(),
    skip_before: int = 0,
) -> tuple[int, int] | None:
    """The character span ``[a, b)`` of whole sentences or lines of ``text`` (``bounds``,
    :func:`_sentence_bounds`) whose tokens (``tokens_between(a, b)``, the line's fixed cost
    included) fit ``room`` and whose distinct query words weigh most; a word found in fewer
    of the chunk's sentences weighs more (``log(1 + n / df)``, so a word every sentence repeats,
    the product's name, decides little). ``None`` when no window beats the edge an excerpt
    keeps without a query (its start, or its end with ``from_end``) or none fits. Of windows
    that weigh the same, :data:`EXCERPT_TIES` says which is kept; with ``paragraphs``
    (indices into ``bounds``, :func:`_paragraph_starts`) the kept window then starts at the
    paragraph of its first sentence with a query word where it weighs as much from there
    (:func:`_from_paragraph`). Sentences that start before ``skip_before`` (the heading line's
    end, :data:`EXCERPT_SKIP_HEADING`) hold no query word for the weighing.

    Linear: the text is split once, each sentence's words are matched once, and a two-pointer
    sweep adds and drops each sentence once (with O(log n) token lookups per step)."""
    n = len(bounds) - 1
    if not terms:
        return None
    if n < 2:
        return None
    seg_terms: list[frozenset[str]] = []
    df: dict[str, int] = {}
    for i in range(n):
        if bounds[i] < skip_before:
            seg_terms.append(frozenset())
            continue
        found = frozenset(w for w in tokenize(text[bounds[i] : bounds[i + 1]]) if w in terms)
        seg_terms.append(found)
        for w in found:
            df[w] = df.get(w, 0) + 1
    if not df:
        return None
    weight = {w: math.log(1.0 + n / d) for w, d in df.items()}
    have: dict[str, int] = {}
    score = 0.0
    best: tuple[float, int, int] | None = None
    edge = -1.0  # the best score of a window that keeps the edge
    j = 0  # the window is segments [i, j)
    for i in range(n):
        if j < i:
            j = i
        while j < n and tokens_between(bounds[i], bounds[j + 1]) <= room:
            for w in seg_terms[j]:
                have[w] = have.get(w, 0) + 1
                if have[w] == 1:
                    score += weight[w]
            j += 1
        if j > i:
            if (i == 0 and not from_end) or (j == n and from_end):
                edge = max(edge, score)
            later = EXCERPT_TIES == "last" and score >= best[0] - 1e-9 if best else True
            if best is None or later or score > best[0] + 1e-9:
                best = (score, i, j)
        for w in seg_terms[i] if j > i else ():
            have[w] -= 1
            if have[w] == 0:
                score -= weight[w]
    if best is not None and paragraphs:
        best = _from_paragraph(best, seg_terms, weight, paragraphs, bounds, tokens_between, room)
    if best is None or best[0] <= edge + 1e-9:
        return None
    return bounds[best[1]], bounds[best[2]]


NEIGHBOUR_ORDER: Literal["slot", "slot-near", "heads", "score"] = "slot"
"""How a conversation's turns are offered to the budget: ``slot`` (default) each slot whole,
best slot first: its hit, then the turns it carries in conversation order (``slot-near``:
nearest first, the turn before ahead of the turn after); ``heads`` every
ranked hit first, then the carried turns by distance; ``score`` the hits, then the carried
turns by their own score. Measured on LoCoMo's dev conversations
(``bench/bench_memory.py --context-table``), evidence inside 250/500/1,000 tokens:
0.560/0.687/0.777 (slot), 0.424/0.545/0.773 (heads), 0.424/0.542/0.812 (score). A lower
slot's hit is wrong more often than the top hit's neighbours are useless, and every slot from
another session costs a header."""
EXTENSION_ORDER: Literal["slot", "score", "after-hits"] = "score"
"""How a document slot's extensions (the chunks of its passage around its hit that ``find``
shows in the slot's text) are offered to the budget (:func:`_by_score`): ``slot`` each right
after its hit, the whole slot before the next hit; ``score`` the first :data:`WHOLE_SLOTS`
slots whole, then each extension as soon as its own score against the query is at least the
next hit's, the others after the last hit (best first); ``after-hits`` the same, but every
lower slot's extensions after every hit, in slot order. Conversation slots are offered
whole in every mode (:data:`NEIGHBOUR_ORDER`).

Why: a passage slot is its hit plus the neighbouring chunks of one section or answer, 300-600
tokens; slot by slot, two or three such slots spent a 1,000-token block while the answer sat
in slot 5-7, which flat search (five single chunks) reached. Offering every slot's hit first
loses the other way: an answer written over two or three chunks (lsof, perlfaq) is then cut
to its first chunk, under half of it. The top slot is the most likely answer, so its passage
goes whole; below it, a chunk of a passage is worth its own score, the same score ``find``
ranked the hits by, so no constant decides between a lower slot's passage and the next hit.

Natural-question dev halves, pooled over five sets (403 questions; ``python
bench/bench_context_flags.py --dev``), ctx@500 / 1,000 / 2,000: ``slot`` 0.562 / 0.656 /
0.741; ``score`` with the top slot whole 0.565 / 0.672 / 0.747 (Django FAQ 0.731 -> 0.769,
lsof 0.814 -> 0.832, perlfaq 0.729 -> 0.750 at 1,000; no set lower at any budget); ``score``
with no slot whole 0.538 / 0.653 / 0.726 (lsof and perlfaq lose the answers that continue
past the top hit); two slots whole 0.562 / 0.661 / 0.747; ``after-hits`` with the top slot
whole 0.563 / 0.679 / 0.729 (loses 0.018 at 2,000); every hit first, no slot whole 0.492 /
0.569 / 0.580. Test halves (436 questions, run once): 0.549 / 0.677 / 0.771 -> 0.548 /
0.676 / 0.764: Django FAQ and gitfaq gain one question each at 1,000, perlfaq loses two
(continuations of slot 1-3 answers scored below the next hit); bench/README.md, "Natural
questions, round 4"."""
WHOLE_SLOTS = 1
"""How many of the best slots :data:`EXTENSION_ORDER` ``score`` offers whole (hit, then its
passage), before the extensions of lower slots compete with lower hits by score."""
EXTENSION_EXCERPTS = True
"""Whether an extension that does not fit whole may be cut to an excerpt at its turn (a hit
always may, :data:`CHUNK_FALLBACK`). Dev halves, pooled, ``score``: 0.565 / 0.672 / 0.747
with, 0.564 / 0.674 / 0.746 without: the same within a question."""
COMPACT_TURNS = True
"""A turn's line is ``- Speaker: words``: no label, no day when its session header says it."""
COMPACT_HEADERS = True
"""A session's header is ``[conv/session, day time]`` instead of the full URI."""
COMPACT_RESOURCE_HEADERS = True
"""A resource group's header is ``[path]``, its URI relative to the deepest common prefix of
the block's resource hits (that prefix said once before the first header only with
:data:`ROOT_LINE`; the name shortened by :data:`RESOURCE_HEADERS` and
:data:`HEADER_EXTENSIONS`); no ``(resource)`` type, a time only when the hit carries one.
Why: the full ``[viking://resources/...] (resource)`` header cost 20-40 MiniLM tokens per
document, which packed flat chunks do not pay (natural-question dev halves,
``bench/bench_natural.py``); a program reads the full URIs from
:attr:`AssembledContext.sections`."""
CHUNK_LABELS = False
"""``- #chunk-4: text`` (True) or ``- text``: a chunk's number tells a reader nothing, the
header names its document; other tiers keep their label (``- #chunk-4 (abstract): ...``)."""
CHUNK_FALLBACK: Literal["tiers", "excerpt", "none"] = "excerpt"
"""What a document chunk (any resource leaf) that does not fit becomes: ``excerpt`` its own
text cut at a sentence or line boundary to the room left (the end of a chunk shown before
its slot's hit, the start otherwise), if at least :data:`MIN_EXCERPT_TOKENS` fit, else
nothing; ``tiers`` its overview/abstract (a chunk's abstract is its heading path, which
rarely holds an answer); ``none`` nothing. Natural-question dev halves, ctx@500/1000
(tiers -> excerpt): Django FAQ 0.500/0.615 -> 0.615/0.731, lsof FAQ 0.708/0.814 ->
0.752/0.823, gitfaq 0.545/0.909 -> 0.727/0.909, Cranfield 0.218/0.331 -> 0.220/0.332."""
MIN_EXCERPT_TOKENS = 48
EXCERPTS_LAST = False
"""True: excerpts only fill the room the whole hits left (after every hit was tried whole);
False: a hit that does not fit is cut at its rank, before lower hits are tried. Natural-question
dev halves, ctx@500/1000 (False -> True): Django FAQ 0.577/0.731 -> 0.500/0.692, lsof FAQ
0.761/0.823 -> 0.699/0.832, gitfaq 0.727/0.909 -> 0.545/0.909, Cranfield 0.234/0.338 ->
0.230/0.340: a high-ranked hit's own text is worth more than a lower hit whole."""
LEAF_EXCERPTS = True
"""A whole-file resource leaf (not a chunk) that does not fit is cut to an excerpt of its text
before its smaller tiers are tried (its overview or abstract, a title line, only when not even
:data:`MIN_EXCERPT_TOKENS` are left). Natural-question dev halves (``bench/bench_context_flags.py
--dev``), ctx@500/1000/2000, Cranfield (one file per abstract) 0.234/0.338/0.468 ->
0.246/0.339/0.467; the FAQ sets (chunked pages) unchanged."""
RESOURCE_HEADERS: Literal["path", "suffix", "none"] = "suffix"
"""How a compact resource header names its group: ``suffix`` the shortest tail of its URI no
other group of the block ends with (``[install.md]``, ``[faq/install.md]`` when
``howto/install.md`` is there too, :func:`_short_names`); ``path`` its URI under the block's
common prefix; ``none`` no header and no line labels (the URIs only in
:attr:`AssembledContext.sections`). Dev halves, ctx@500/1000/2000 with :data:`LEAF_EXCERPTS`,
Cranfield: path 0.246/0.339/0.467, suffix 0.257/0.349/0.474, none 0.273/0.372/0.483; the FAQ
sets unchanged by any (a header per document is a few tokens there). ``none`` is the bound
on what headers cost; ``suffix`` keeps every source named."""
ROOT_LINE = False
"""Whether the block's first compact resource header is preceded by the common prefix of its
resource groups, ``(under viking://resources/docs/)``. Off: a header says what tells the
block's documents apart (:func:`_short_names`), and the prefix every one of them shares
tells none apart; the full URIs stay in :attr:`AssembledContext.sections`. It cost 13-16
MiniLM tokens a block (3 % of 500). Natural-question dev halves, nine sets pooled (535
questions), ctx@500 / 1,000 / 2,000: 0.575 / 0.695 / 0.776 with it, 0.583 / 0.696 / 0.776
without (no set lower at any budget); bench/README.md, "Natural questions, round 9"."""
HEADER_EXTENSIONS = False
"""Whether a compact header's name keeps its file extension (``[install.md]``) or drops it
where the name stays unique in the block (``[install]``; ``[install.md]`` and
``[install.rst]`` keep theirs, :func:`_without_extensions`). Off: ``.txt`` is three MiniLM
tokens a document, and the document's text shows its kind. Dev halves, pooled, without the
root line: 0.583 / 0.696 / 0.776 with extensions, 0.586 / 0.699 / 0.776 without (Cranfield,
seven documents a 1,000-token block: 0.366 -> 0.378)."""
FILE_GROUPS = True
"""A whole-file resource leaf is a group of its own (``[doc-0500.txt]`` then ``- text``), as a
chunked document is, instead of a line ``- doc-0500.txt: text`` under its directory's
header. Dev halves, ctx@500/1000/2000, Cranfield (one file per abstract, 2-level topic
directories): 0.257/0.350/0.474 -> 0.262/0.356/0.475 (a directory header and a label per
file cost more than one short header per file); the FAQ sets unchanged."""
HEADINGS_ONCE = True
"""Within a document's group, a chunk whose heading line (its stored text's first line, the
heading path ``Page › Section``) is the heading of the chunk listed just before it in
document order is shown without it, and the budget counts it so: two chunks of one section
read as that section once, as :func:`treehop.client.reassemble_chunks` writes a file's
chunks. A chunk placed between two that shared a heading is charged for the later one
showing it again. Why: repeated paths were 1.1 % of the tokens of the FAQ sets' dev blocks
(5-20 tokens a chunk). Natural-question dev halves, pooled over seven sets (481 questions,
``bench/bench_context_diag.py --variants base,headings-each``), ctx@500 / 1,000 / 2,000:
0.573 / 0.694 / 0.771 without, 0.573 / 0.694 / 0.773 with (lsof 2,000 0.894 -> 0.903; no
set lower at any budget; test halves 0.782 -> 0.785 at 2,000, the rest equal);
bench/README.md, "Natural questions, round 6"."""
DOCUMENT_ORDER = True
"""A document's chunks are listed in document order under its header (a chunk before the
hit above it), not in the order they were placed (hit first, then the chunks around it).
Dev halves: the same ctx on every set and budget; a reader gets the text as written."""


def _session_header(key: str, m: MatchedContext) -> str:
    """A conversation session's header, ``[conv-26/session-01, 8 May 2023 13:56]``: the
    conversation and session ids and when it started, in about half the tokens of the full
    URI (a program reads the URIs from :attr:`AssembledContext.sections`)."""
    name = "/".join(key.rsplit("/", 2)[-2:])
    ts = m.metadata.get(TIMESTAMP_FIELD)
    shown = shown_iso(ts)  # (``None`` past the calendar: 1e20 seconds)
    if shown is not None:
        return f"[{name}, {day_prefix(float(cast(float, ts)))[1:-2]} {shown[11:16]}]"
    return f"[{name}]"


def _is_turn(m: MatchedContext) -> bool:
    """A conversation turn hit (``add_messages``'s leaves): listed compactly, in conversation
    order, under its session's header (see :func:`_unfold_turns`)."""
    return (
        m.is_leaf
        and m.context_type is ContextType.MEMORY
        and m.chunk_index is None
        and m.metadata.get("kind") == TURN_KIND
    )


def _conversation_order(c: ChunkContext) -> tuple[int, int]:
    p = c.position or 0
    return (abs(p), p) if NEIGHBOUR_ORDER == "slot-near" else (p, 0)


def _unfold_turns(
    contexts: Sequence[MatchedContext],
    whole: int | None = None,
    cap: int | None = None,
    cost: Callable[[MatchedContext], int] | None = None,
) -> tuple[list[MatchedContext], set[str], list[str | None]]:
    """Each memory hit and the turns its slot carries (``memory_context_chars``) as entries of
    their own (the packer fits the budget, dedups across a session's calls and labels line by
    line, so every turn must be its own entry), in the order they are offered to the budget;
    the URIs of the conversation turns among them; and, entry by entry (empty when there are
    none), the URI a document slot's extension offered by :data:`EXTENSION_ORDER` ``score``
    continues (the hit, or the extension between it and the hit; ``None`` for every other
    entry): it is placed only after that one. ``cap`` and ``cost``: :data:`WINDOW_SHARE`'s
    tokens and counter (:func:`_by_score`)."""
    heads: list[MatchedContext] = []
    merged: list[MatchedContext] = []
    carried: list[tuple[tuple[float, ...], MatchedContext]] = []
    turns: set[str] = set()
    slots: list[tuple[MatchedContext, list[tuple[int, MatchedContext]], bool]] = []
    for rank, m in enumerate(contexts):
        heads.append(m)
        is_turn = _is_turn(m)
        if is_turn:
            turns.add(m.uri)
        near = sorted((c for c in m.collapsed if c.position), key=_conversation_order)
        entries: list[tuple[int, MatchedContext]] = []
        for c in near:
            entry = m.model_copy(
                update={
                    "uri": c.uri,
                    "abstract": c.abstract,
                    "overview": "",
                    "content": c.content,
                    "score": c.score,
                    "own_score": c.own_score,
                    "metadata": {},
                    "tags": [],
                    "collapsed": [],
                    "found_by": FoundBy.NEIGHBOUR,
                    "found_via": m.uri,
                }
            )
            if is_turn:
                turns.add(c.uri)
            entries.append((c.position or 0, entry))
            if not c.carried:
                merged.append(entry)
            else:
                dist = abs(c.position or 0)
                key = (-c.score,) if NEIGHBOUR_ORDER == "score" else (dist, rank)
                carried.append((key, entry))
        slots.append((m, entries, is_turn))
    if NEIGHBOUR_ORDER in ("slot", "slot-near"):
        if EXTENSION_ORDER != "slot":
            order, requires = _by_score(slots, whole, cap=cap, cost=cost)
            return order, turns, requires
        return [e for m, entries, _ in slots for e in (m, *(x for _, x in entries))], turns, []
    carried.sort(key=lambda kv: kv[0])
    return [*heads, *merged, *(e for _, e in carried)], turns, []


def _by_score(
    slots: Sequence[tuple[MatchedContext, list[tuple[int, MatchedContext]], bool]],
    whole: int | None = None,
    cap: int | None = None,
    cost: Callable[[MatchedContext], int] | None = None,
) -> tuple[list[MatchedContext], list[str | None]]:
    """The order :data:`EXTENSION_ORDER` offers a block's entries in: the slots' hits in rank
    order, the first :data:`WHOLE_SLOTS` slots (and every conversation slot) whole; a lower
    document slot's extensions (the chunks of its passage around the hit, ``position`` -1,
    -2 ... and +1, +2 ...) working outwards from the hit on each side, each (``score``) as
    soon as its own score is at least the next hit's, the rest after the last hit, best
    first (``after-hits``: all after the last hit, in slot order).

    Returns the entries and, entry by entry, the URI of the one it continues (the hit or the
    extension between it and the hit; ``None`` for a hit and an extension offered with its
    slot): :func:`assemble_context` places it only after that one, so a block never shows a
    passage's far chunk without the near one. Per entry, not per URI: the same chunk may be
    another slot's hit (which continues nothing) or another slot's extension (continuing
    another chunk), and neither may inherit this slot's condition.

    ``cap`` (:data:`WINDOW_SHARE`'s tokens, ``cost`` counting an entry): a whole slot's
    window is trimmed to what :func:`_trimmed_window` keeps, its other chunks bid as a lower
    slot's do; ``None``: whole slots go whole."""
    by_score = EXTENSION_ORDER == "score"
    whole = WHOLE_SLOTS if whole is None else whole
    out: list[MatchedContext] = []
    needs: list[str | None] = []
    requires: dict[int, str] = {}  # id() of an extension entry (alive in ``slots``) -> URI
    pending: list[tuple[float, int, int, MatchedContext]] = []
    chains: dict[int, list[MatchedContext]] = {}  # (outer first) by 2 * rank + side
    seq = 0

    def offer_next(chain_id: int) -> None:
        nonlocal seq
        chain = chains.get(chain_id)
        if chain:
            e = chain.pop()
            key = -_extension_score(e) if by_score else float(chain_id // 2)
            heapq.heappush(pending, (key, seq, chain_id, e))
            seq += 1

    def emit_best() -> None:
        _, _, chain_id, e = heapq.heappop(pending)
        out.append(e)
        needs.append(requires[id(e)])
        offer_next(chain_id)

    for rank, (m, entries, is_turn) in enumerate(slots):
        while by_score and pending and -pending[0][0] >= _hit_score(m):
            emit_best()
        out.append(m)
        needs.append(None)
        kept: set[int] | None = None
        if rank < whole and cap is not None and cost is not None and entries and not is_turn:
            kept = _trimmed_window(m, entries, cap, cost)
            if len(kept) == len(entries):
                kept = None
        if kept is None and (is_turn or not entries or rank < whole):
            out.extend(e for _, e in entries)
            needs.extend(None for _ in entries)
            continue
        if kept is not None:
            out.extend(e for k, (_, e) in enumerate(entries) if k in kept)
            needs.extend(None for _ in kept)
        for side in (0, 1):
            chain = sorted(
                (pe for pe in entries if (pe[0] > 0) == bool(side)), key=lambda pe: abs(pe[0])
            )
            inner = m.uri
            if kept is not None:
                kept_ids = {id(entries[k][1]) for k in kept}
                near = [pe for pe in chain if id(pe[1]) in kept_ids]
                if near:
                    inner = near[-1][1].uri
                chain = chain[len(near) :]
            for _, e in chain:
                requires[id(e)] = inner
                inner = e.uri
            chains[2 * rank + side] = [e for _, e in reversed(chain)]
            offer_next(2 * rank + side)
    while pending:
        emit_best()
    return out, needs


def _extension_score(e: MatchedContext) -> float:
    """What a lower slot's extension competes with the next hit on (:data:`EXTENSION_SCORE`)."""
    if EXTENSION_SCORE != "final" and e.own_score is not None and math.isfinite(e.own_score):
        return float(e.own_score)
    return float(e.score)


def _hit_score(m: MatchedContext) -> float:
    """What a hit is compared with a pending extension on (:data:`EXTENSION_SCORE`)."""
    if EXTENSION_SCORE == "own-both" and m.own_score is not None and math.isfinite(m.own_score):
        return float(m.own_score)
    return float(m.score)


EXTENSION_SCORE: Literal["final", "own", "own-both"] = "final"
"""The score a lower slot's extension competes with the next hit on (:data:`EXTENSION_ORDER`
``score``): ``final`` the score ``find`` ranked the chunk by; ``own`` the chunk's own score
against the query (``ChunkContext.own_score``: before propagation, the tree context and the
chunk window), the hits keeping their ranked scores; ``own-both`` the hits' own scores too
(``MatchedContext.own_score``). A chunk without an own score competes on ``score``. What
for: the chunk window (``question_chunk_window``) lifts a chunk by its neighbours, and an
extension's neighbour is its slot's hit, already in the block. Not switched: on the eleven
natural-question dev halves (773 questions; bench/README.md, "Natural questions, round
11") ctx@500 / 1,000 / 2,000 were ``final`` 0.616 / 0.726 / 0.807, ``own`` 0.616 / 0.729 /
0.809 (six questions won, one lost), ``own-both`` 0.616 / 0.727 / 0.815 (perlfaq -1 at
1,000): neither moves the 500-token block, which the round's keep rule asked for."""


DUPLICATE_SHARE: float | None = 0.5
"""A document slot more than this share of whose text is already in the document slots
above it (its word trigrams, :func:`_duplicates_last`) is offered after every other slot:
it competes for the budget only with the room they leave. ``None``: every slot in rank
order. Why: documentation trees repeat text across pages (git's manuals include one
options file in ``git-pull`` and ``git-rebase``; Cranfield holds near-identical
abstracts), and a copy of a slot already shown spends a small block's room on words the
reader has, above an answer further down. The share is of the lower slot's own text, so a
slot that shows a shorter one above it plus new text is not a copy. Natural-question dev
halves (535 questions), ctx@500 / 1,000 / 2,000: 0.596 / 0.704 / 0.785 without, 0.600 /
0.705 / 0.785 with (gitfaq and perlfaq +1 question at 500, Cranfield +0.006 at 1,000; no
set lower at any budget); every share from 0.4 to 0.6 gives the same, 0.3 to 0.9 none
lower than without. Sibling texts that share boilerplate can pass 0.5 too (the parts of a
paper series: Cranfield's test half loses one of a question's seven abstracts that way);
every measured win, dev and held-out, was a copy at a share of 0.65 or more;
bench/README.md, "Natural questions, round 10 (slot order in the context block)"."""
SHINGLE_WORDS = 3
"""Words per shingle :data:`DUPLICATE_SHARE` compares slot texts by (words split at
whitespace, case-folded: a copy keeps its punctuation too)."""
SHINGLE_CACHE_SIZE = 256
"""Slot texts whose shingles are kept between calls (emptied when full; about 6 MB at most
for 1,400-character slots): the same passages come back for many queries and budgets, and
building a text's shingles is most of what :func:`_duplicates_last` costs (about 30 us a
slot; 0.31 ms p50 a block on the dev halves' blocks)."""
_shingle_cache: dict[str, frozenset[int]] = {}


def _shingles(text: str) -> frozenset[int]:
    """The hashes of ``text``'s word :data:`SHINGLE_WORDS`-grams (a shorter text: its words
    as one), remembered per text (:data:`SHINGLE_CACHE_SIZE`)."""
    got = _shingle_cache.get(text)
    if got is None:
        words = text.lower().split()
        if len(words) > SHINGLE_WORDS:
            grams = zip(*(words[i:] for i in range(SHINGLE_WORDS)), strict=False)
            got = frozenset(map(hash, grams))
        else:
            got = frozenset((hash(tuple(words)),)) if words else frozenset()
        if len(_shingle_cache) >= SHINGLE_CACHE_SIZE:
            _shingle_cache.clear()
        _shingle_cache[text] = got
    return got


def _duplicates_last(hits: list[MatchedContext]) -> list[MatchedContext]:
    """``hits`` with every document slot whose text is mostly in the document slots kept above
    it (:data:`DUPLICATE_SHARE`) moved after the others, both in rank order. Only the
    block's order changes: the slots and their texts stay as ``find`` made them.
    Conversation turns and other memories are never moved (a turn's words recur in a
    conversation without repeating it)."""
    share = DUPLICATE_SHARE
    if share is None or len(hits) < 2:
        return hits
    kept: list[MatchedContext] = []
    late: list[MatchedContext] = []
    shown: set[int] = set()
    for m in hits:
        if m.context_type is ContextType.RESOURCE and not _is_turn(m):
            own = _shingles(m.slot_text)
            if shown and own and len(own & shown) > share * len(own):
                late.append(m)
                continue
            shown |= own
        kept.append(m)
    return [*kept, *late] if late else hits


LEXICAL_LEAD = False
"""With a query, the one document slot whose hit text holds the query's words best
(:func:`treehop.lexical_lead.lexical_leader`: distinct query words, each weighted by how few of the
slots hold it; above every other slot, no tie) is placed right after the top slot when find() ranked
it third or lower. Only the block's order changes: the slots and their texts stay as ``find`` made
them; a conversation turn or a memory is never the slot placed second (each slot between the second
and the leader's place, whatever its kind, goes one place down). Why: the 1,000-token answers flat
hybrid delivers and find()'s block misses are mostly questions whose words stand in the answer
passage, which find() ranked below slots that fill the block (bench/README.md, "Lexical questions
find()'s block loses to flat hybrid ... (helper quality77)"). No constant. Off: on the 97
natural-question dev halves (3,511 questions) it fires on 852 blocks at 1,000 tokens; ctx@1,000
+0.0029 (interval -0.0013..+0.0073, 36 won / 30 lost), 500 -0.0003 (56 / 55), 2,000 +0.0011; the
nine lose at 1,000 (cranfield 0 / 5): where it fires, the lexical leader is the answer's slot less
often (97) than the second slot it displaces (118)."""


EXTENSIONS_LEAVE_ROOM = False
"""On: a lower document slot's extension (a chunk of its passage around its hit that
:data:`EXTENSION_ORDER` ``score`` offers by its own score; the :data:`WHOLE_SLOTS` top slots
go whole as before) is placed only where the next hit still fits whole after it, when that
hit fits whole before it; otherwise it waits until every hit was offered (then placed, in
its order, in the room left, each after the chunk it continues; a chunk that continues a
waiting one waits with it). Only the order of placement changes: the slots and their texts
stay as ``find`` made them. Why: where find()'s 1,000-token block misses an answer flat
hybrid's holds, the answer's slot is mostly not reached, the room spent on the slots above
it (bench/README.md, "find()'s 1,000-token block against flat hybrid, loss by loss ...
(helper quality80)"). No constant: two token counts the block already has. Conversation
turns are never deferred. Off: on 13 dev halves (the nine and 4 untuned, 827 questions)
ctx@1,000 -0.0026 (interval -0.0065..+0.0001, 2 won / 4 lost), 500 0 / 1, 2,000 3 / 4; the
nine lose at every budget (zsh-faq: lower slots' answers that go on into their passage)."""


WINDOW_SHARE: float | None = None
"""Off (``None``). On (a share in ``(0, 1]``): the top slot (:data:`WHOLE_SLOTS`) and the
chunks of its passage offered with it (its window: the chunks around its hit) take at most
this share of ``max_tokens`` (each entry's text counted by the block's counter); the window
is trimmed to its best chunks first (from the hit outwards, the better-scored side's next
chunk first, :data:`EXTENSION_SCORE`), and the chunks left out bid by score as a lower slot's
extensions do (:data:`EXTENSION_ORDER` ``score``: each after the chunk it continues). Only
the order of placement changes: the slots and their texts stay as ``find`` made them; where
the whole window fits in the share the block is the one without it. Conversation slots are
never trimmed. Why: the top slot offered whole can fill a small block with its window,
leaving the second and third slots out (bench/README.md, "(helper quality80)": 4 of 18
not-reached answers at 1,000 tokens lost to the top slot's extensions). Off: dev halves
(bench/README.md, "(helper quality83)"), 0.5 on the nine + 2 untuned (633 questions) ctx@500
-0.0386 (interval -0.0625..-0.0151, 22 won / 43 lost), 1,000 -0.0095 (2 / 8), the nine
losing at both; 1.0 (trimmed only where the window overfills the block) on the nine + 16
untuned (1,196) ctx@500 +0.0000 (13 / 13; the nine 7 / 8), 1,000 / 2,000 unchanged: the
top slot's whole window is worth more than the next slot's hit."""


def _window_share(setting: float | None) -> float | None:
    """``window_share`` as :func:`assemble_context` reads it: the argument, or
    :data:`WINDOW_SHARE` where it is ``None`` (read at the call); anything but ``None`` or a
    real number in ``(0, 1]`` raises :class:`~treehop.errors.InvalidQueryError`."""
    got = WINDOW_SHARE if setting is None else setting
    if got is None:
        return None
    if (
        isinstance(got, bool)
        or not isinstance(got, (int, float))
        or not math.isfinite(got)
        or not 0 < got <= 1
    ):
        raise InvalidQueryError(
            f"window_share must be None or a number in (0, 1], got {shown_value(got)}"
        )
    return float(got)


def _trimmed_window(
    m: MatchedContext,
    entries: Sequence[tuple[int, MatchedContext]],
    cap: int,
    cost: Callable[[MatchedContext], int],
) -> set[int]:
    """Indexes into ``entries`` (the top slot's window) that go whole with its hit under
    :data:`WINDOW_SHARE`'s ``cap`` tokens: from the hit outwards, the next chunk of the
    better-scored side first (a tie: the side after the hit), while it fits; a side whose
    next chunk does not fit is closed (a farther chunk never goes without a nearer one)."""
    sides = [
        sorted(
            (k for k, (p, _) in enumerate(entries) if (p > 0) == bool(side)),
            key=lambda k: abs(entries[k][0]),
        )
        for side in (0, 1)
    ]
    used = cost(m)
    taken: set[int] = set()
    while True:
        heads = [(s, chain[0]) for s, chain in enumerate(sides) if chain]
        if not heads:
            return taken
        s, k = max(heads, key=lambda sk: (_extension_score(entries[sk[1]][1]), sk[0]))
        need = cost(entries[k][1])
        if used + need <= cap:
            used += need
            taken.add(k)
            sides[s].pop(0)
        else:
            sides[s] = []


def _next_hits(contexts: Sequence[MatchedContext]) -> list[int | None]:
    """Per entry, the index of the next document hit after it (``None``: none follows); an
    extension is an entry ``find`` did not rank (``found_by`` neighbour)."""
    out: list[int | None] = [None] * len(contexts)
    nxt: int | None = None
    for i in range(len(contexts) - 1, -1, -1):
        out[i] = nxt
        if contexts[i].found_by is not FoundBy.NEIGHBOUR:
            nxt = i
    return out


def _lexical_lead(ranked: list[MatchedContext], terms: frozenset[str]) -> list[MatchedContext]:
    """``ranked`` with :func:`treehop.lexical_lead.lexical_leader`'s slot second
    (:data:`LEXICAL_LEAD`); unchanged when it names none."""
    texts = [
        (m.content or m.abstract)
        if m.context_type is ContextType.RESOURCE and not _is_turn(m)
        else None
        for m in ranked
    ]
    j = lexical_leader(texts, terms)
    if j is None:
        return ranked
    return [ranked[0], ranked[j], *ranked[1:j], *ranked[j + 1 :]]


WHOLE_ON_OWN = False
"""Off (a screened variant, kept for the next screen). On: the top slot goes whole
(:data:`WHOLE_SLOTS`) unless the block cannot hold both it and the next slot's hit, and the next
hit's own score (``MatchedContext.own_score``: its text against the query, before propagation, the
tree context and the chunk window) is above the top hit's; then its extensions bid by score as a
lower slot's do (:data:`EXTENSION_ORDER`).

Why: offering the top slot whole is a bet that it holds the answer (a long answer runs over
its hit and the chunks around it); at 500 tokens the bet fills the block (a passage slot
may show 2,000 characters) and pushes the next hit out. When the top slot ranks first by
its context but the next hit's own text matches the question better, the bet is weaker, and
the next hit goes in. No constant: both tests compare two numbers the block already has.
Natural-question dev halves, nine sets (535 questions, ``bench/bench_context_diag.py --dev
--variants base,whole-on-own``): ctx@500 0.604 -> 0.609 (paired 95 % interval of the gain
-0.004..+0.015; lsof +3 questions, perlfaq and zsh one won and one lost each), ctx@1,000 /
2,000 identical on every set;
bench/README.md, "Context at a budget against flat hybrid ... (helper ctx57)". Checked
next on the 28 untuned sets' dev halves (1,114 questions, not used to choose it: ``--variants
base,whole-always``): ctx@500 0.5153 -> 0.5196 (+5 questions net: 4 sets gained 9, 4 sets
lost 4), 1,000 / 2,000 identical. Then measured once on their test halves (stop 57's lead):
ctx@500 -2 questions net (10 sets moved by one or two, both ways), ctx@1,000 -1 (xterm-faq).
Dev +8, held-out -3: no gain that holds, so the default keeps the simpler bet (bench/README.md,
"Stop 57 (the lead)").
Conversation slots are never affected (turns are offered whole, :data:`NEIGHBOUR_ORDER`)."""


def _whole_slots(ranked: Sequence[MatchedContext], max_tokens: int, counter: TokenCounter) -> int:
    """How many of ``ranked``'s first slots :func:`_by_score` offers whole
    (:data:`WHOLE_ON_OWN`)."""
    if not WHOLE_ON_OWN or WHOLE_SLOTS != 1 or len(ranked) < 2 or EXTENSION_ORDER != "score":
        return WHOLE_SLOTS
    top, nxt = ranked[0], ranked[1]
    if _is_turn(top) or _is_turn(nxt) or not top.collapsed:
        return WHOLE_SLOTS
    a, b = top.own_score, nxt.own_score
    if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)) or a >= b:
        return WHOLE_SLOTS
    # Through the packer's per-counter cache: a repeated call (a session asking again, the
    # same hits at another budget) counted the top slot's whole text (~2,000 characters,
    # ~0.9 ms with the MiniLM tokenizer) on every call, as much again as the rest of a repeat
    # call (bench/README.md, "Hot paths after stop 57 (helper perf57)"). The next hit is
    # counted only where the top slot alone fits (counts are >= 0: same answer).
    count = _cached_count(counter)
    top_n = count(top.slot_text)
    if top_n <= max_tokens and top_n + count(nxt.content or nxt.abstract) <= max_tokens:
        return WHOLE_SLOTS
    return 0


def assemble_context(
    hits: FindResult | Sequence[MatchedContext],
    *,
    max_tokens: int,
    quotas: Mapping[ContextType | str, int] | None = None,
    tiers: Sequence[Tier] = TIERS,
    exclude_uris: Iterable[str] = (),
    seen_uris: Iterable[str] = (),
    token_counter: TokenCounter | str | None = None,
    query: str | None = None,
    excerpt_paragraphs: bool | None = None,
    excerpt_skip_heading: bool | None = None,
    lexical_lead: bool | None = None,
    extensions_leave_room: bool | None = None,
    window_share: float | None = None,
) -> AssembledContext:
    """Fit the hits, best first, into ``max_tokens`` (see the module docstring).

    ``query`` (the question the hits answer) lets a chunk that does not fit whole keep the
    sentences that match it rather than its start (:data:`EXCERPT_AT`); of the windows that
    match it best, one that starts a paragraph (``excerpt_paragraphs``, ``None``:
    :data:`EXCERPT_PARAGRAPHS`; ``RetrievalConfig.excerpt_paragraphs`` for a client's call);
    the windows weighed without the chunk's heading line's words (``excerpt_skip_heading``,
    ``None``: :data:`EXCERPT_SKIP_HEADING`; ``RetrievalConfig.excerpt_skip_heading``); the
    one slot whose hit holds the query's words best placed second (``lexical_lead``, ``None``:
    :data:`LEXICAL_LEAD`; ``RetrievalConfig.lexical_lead``); a lower slot's extension placed
    only where the next hit still fits whole after it (``extensions_leave_room``, ``None``:
    :data:`EXTENSIONS_LEAVE_ROOM`; ``RetrievalConfig.extensions_leave_room``); the top slot's
    window trimmed to at most this share of ``max_tokens`` (``window_share``, ``None``:
    :data:`WINDOW_SHARE`, off).

    URIs are compared as given: pass ``exclude_uris`` / ``seen_uris`` in the form the hits use
    (the clients' :meth:`assemble_context` does this for you).
    """
    quota, order = check_budget(max_tokens, quotas, tiers)
    counter = resolve_counter(token_counter)
    if query is not None and not isinstance(query, str):
        raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
    lead = LEXICAL_LEAD if lexical_lead is None else check_bool(lexical_lead, "lexical_lead")
    leave_room = (
        EXTENSIONS_LEAVE_ROOM
        if extensions_leave_room is None
        else check_bool(extensions_leave_room, "extensions_leave_room")
    )
    share = _window_share(window_share)
    terms = query_terms(query) if query is not None else None
    ranked = _duplicates_last(hits.contexts() if isinstance(hits, FindResult) else list(hits))
    if lead and terms:
        ranked = _lexical_lead(ranked, terms)
    whole = _whole_slots(ranked, max_tokens, counter)
    if share is None:
        contexts, turns, requires = _unfold_turns(ranked, whole)
    else:
        count = _cached_count(counter)
        contexts, turns, requires = _unfold_turns(
            ranked,
            whole,
            int(share * max_tokens),
            lambda e: count(e.content or e.overview or e.abstract),
        )
    packer = _Packer(max_tokens, quota, order, counter, contexts, turns)
    if terms is not None:
        packer.terms = terms
    if excerpt_paragraphs is not None:
        packer.paragraphs = check_bool(excerpt_paragraphs, "excerpt_paragraphs")
    if excerpt_skip_heading is not None:
        packer.skip_heading = check_bool(excerpt_skip_heading, "excerpt_skip_heading")
    packer.before = {
        c.uri for h in contexts for c in h.collapsed if c.position is not None and c.position < 0
    }
    excluded = [e.rstrip("/") for e in exclude_uris]
    seen = set(seen_uris)
    late = EXCERPTS_LAST and CHUNK_FALLBACK == "excerpt"
    pending: list[MatchedContext] = []
    nexts = _next_hits(contexts) if leave_room else []
    waiting: list[int] = []  # extensions deferred past the last hit (``leave_room``)
    waiting_uris: set[str] = set()

    def offer(i: int, may_wait: bool) -> None:
        m = contexts[i]
        reason = packer.refusal(m, excluded, seen)
        inner = requires[i] if requires else None
        # a lower slot's extension (the top slot's go whole with it, :data:`WHOLE_SLOTS`)
        j = nexts[i] if may_wait else None
        nxt = contexts[j] if j is not None else None
        if (
            may_wait
            and inner is not None
            and m.uri not in turns
            and (inner in waiting_uris or (reason is None and packer.displaces(m, nxt, seen)))
        ):
            waiting.append(i)
            waiting_uris.add(m.uri)
            return
        if reason is None and inner is not None and inner not in packer.taken and inner not in seen:
            reason = "budget"  # what it continues is in neither this block nor an earlier one
        if reason is None:
            ext_ok = inner is None or EXTENSION_EXCERPTS
            reason = packer.place(m, excerpt=not late and ext_ok)
            if reason == "budget" and late:
                pending.append(m)
                return
        if reason is not None:
            packer.out.skipped.append((m.uri, reason))

    for i in range(len(contexts)):
        offer(i, leave_room)
    for i in waiting:  # the room every hit left, in the order they were offered
        offer(i, False)
    for m in pending:  # the room whole hits left, best first
        reason = packer.place(m, excerpt=True, whole=False)
        if reason is not None:
            packer.out.skipped.append((m.uri, reason))
    return packer.finish()


COUNT_CACHE_SIZE = 1 << 15
"""Lines whose token counts one counter keeps (see :func:`_cached_count`)."""
_count_caches: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
_count_lock = threading.Lock()


def _new_locks_in_forked_child() -> None:
    """In a child made by ``os.fork``: new :data:`_default_lock` and :data:`_count_lock`.
    Why (helper attacks70): a fork copies a lock another thread of the parent held (loading
    the default tokenizer) held for good; the child's first context assembly waited
    forever."""
    global _default_lock, _count_lock
    _default_lock = threading.Lock()
    _count_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks_in_forked_child)


def _cached_count(counter: TokenCounter) -> Callable[[str], int]:
    """``counter.count`` remembering the lines it counted, per counter object.

    Why: the same lines come back at every call (a conversation's turns, a session's header),
    and the tokenizer was most of :func:`assemble_context`'s time (about 100 encodes a call,
    each tier tried and each line). The cache is bounded (emptied when full) and keyed by the
    line's exact text, so a count is always the counter's own; the whole block is counted
    once at the end unless the counter is additive over lines (``additive_lines``). A counter
    that cannot be weakly referenced is not cached."""
    try:
        with _count_lock:
            cache = _count_caches.setdefault(counter, {})
    except TypeError:
        return counter.count

    def count(text: str) -> int:
        n = cache.get(text)
        if n is None:
            n = counter.count(text)
            if len(cache) >= COUNT_CACHE_SIZE:
                cache.clear()
            cache[text] = n
        return n

    return count


class _Packer:
    """The state of one :func:`assemble_context` call: groups, their lines, the tokens used."""

    def __init__(
        self,
        max_tokens: int,
        quota: Mapping[ContextType, int],
        order: Sequence[Tier],
        counter: TokenCounter,
        contexts: Sequence[MatchedContext],
        turns: set[str] | frozenset[str] = frozenset(),
    ) -> None:
        self.max_tokens = max_tokens
        self.turns = turns
        self.quota = quota
        self.order = tuple(order)
        self.counter = counter
        self.count = _cached_count(counter)
        self.additive = getattr(counter, "additive_lines", False) is True
        """Lines joined by newlines count as the sum of their counts (:class:`HFTokenizerCounter`
        with a whitespace-splitting pre-tokenizer): the block needs no final count."""
        self.sep_cost = self.count(SEPARATOR)
        self.nl_cost = self.count("\n")
        self.out = AssembledContext(text="", max_tokens=max_tokens, token_counter=counter.name)
        self.groups: dict[str, _Group] = {}
        self.order_of: list[tuple[str, int]] = []  # (group, line index) of each section
        self.used = 0
        self.per_type: dict[ContextType, int] = {}
        self.taken: set[str] = set()
        self.contexts = contexts
        self._above_hits: set[str] | None = None
        self.before: set[str] = set()
        """Chunks shown before their slot's hit (an excerpt of one keeps its end)."""
        self.terms: frozenset[str] = frozenset()
        """The query's words an excerpt is placed by (:data:`EXCERPT_AT`)."""
        self.paragraphs = EXCERPT_PARAGRAPHS
        """Whether a query excerpt prefers a window that starts a paragraph
        (:data:`EXCERPT_PARAGRAPHS`)."""
        self.skip_heading = EXCERPT_SKIP_HEADING
        """Whether a query excerpt's window is weighed without the chunk's heading line's
        words (:data:`EXCERPT_SKIP_HEADING`)."""
        self.root: str | None = None
        if COMPACT_RESOURCE_HEADERS:
            self.root = _resource_root(
                _key_of(m, turns)[0]
                for m in contexts
                if m.context_type is ContextType.RESOURCE and m.uri not in turns
            )
        self.root_said = False
        self.names: dict[str, str] = {}
        if self.root and RESOURCE_HEADERS == "suffix":
            self.names = _short_names(
                _key_of(m, turns)[0]
                for m in contexts
                if m.context_type is ContextType.RESOURCE and m.uri not in turns
            )

    @property
    def above_hits(self) -> set[str]:
        """Every URI above a hit; built on first use (only a directory hit asks, and memory
        blocks are all leaves)."""
        if self._above_hits is None:
            self._above_hits = {p for m in self.contexts for p in urimod.uri_prefixes(m.uri)}
        return self._above_hits

    def refusal(self, m: MatchedContext, excluded: Sequence[str], seen: set[str]) -> str | None:
        """Why ``m`` is left out before its text is even measured, if it is."""
        if excluded and urimod.within_any(m.uri, excluded):
            return "excluded"
        if m.uri in seen:
            return "seen"
        if m.uri in self.taken:
            return "duplicate"
        return None

    def cost(self, m: MatchedContext) -> int:
        """About what placing ``m`` whole at its richest text costs: its line and, where its
        group is not open yet, the group's header (:data:`EXTENSIONS_LEAVE_ROOM`)."""
        key, _ = _key_of(m, self.turns)
        _, opening = self._group_for(m, key, m.uri in self.turns)
        return opening + self.nl_cost + self.count(m.content or m.overview or m.abstract)

    def displaces(
        self, ext: MatchedContext, hit: MatchedContext | None, seen: AbstractSet[str]
    ) -> bool:
        """Whether placing the extension ``ext`` now would leave too little room for the next
        hit ``hit`` to go in whole where it fits whole now (:data:`EXTENSIONS_LEAVE_ROOM`)."""
        if hit is None or hit.uri in self.taken or hit.uri in seen or hit.uri in self.turns:
            return False
        room = self.max_tokens - self.used
        need = self.cost(hit)
        return need <= room < need + self.cost(ext)

    def place(self, m: MatchedContext, excerpt: bool = True, whole: bool = True) -> str | None:
        """Add ``m`` at the richest tier that fits (``whole``), else as an excerpt of its text
        (``excerpt``, see :data:`CHUNK_FALLBACK`); the reason it did not fit otherwise."""
        key, label = _key_of(m, self.turns)
        is_turn = m.uri in self.turns
        group, opening = self._group_for(m, key, is_turn)
        chunk = label.startswith("#") and m.context_type is ContextType.RESOURCE and m.is_leaf
        if chunk and not CHUNK_LABELS:
            label = ""
        if RESOURCE_HEADERS == "none" and m.context_type is ContextType.RESOURCE and not is_turn:
            label = ""
        limit = self.quota.get(m.context_type)
        tiers_here, excerpt_ok = self._tiers_for(m, chunk)
        rest = self._leaf_rest(tiers_here, excerpt_ok)
        if rest:
            tiers_here = tiers_here[:1]
        reason: str | None = "budget"
        if whole:
            reason = self._place_tier(m, key, group, label, opening, limit, tiers_here, is_turn)
            if reason is None:
                return None
        if excerpt and excerpt_ok and reason == "budget":
            reason = self._place_excerpt(m, key, group, label, opening, limit)
            if reason is None or not rest:
                return reason
        if rest and whole:
            return self._place_tier(m, key, group, label, opening, limit, rest, is_turn)
        return reason

    def _group_for(self, m: MatchedContext, key: str, is_turn: bool) -> tuple[_Group, int]:
        """The group ``m`` is listed in (a new one, not yet kept, when its key has none) and
        the tokens opening it costs (its header, the separator before it, and the block's
        common resource root when this is the first compact header)."""
        group = self.groups.get(key)
        if group is not None:
            return group, 0
        t = _time_of(m)
        info = ", ".join(p for p in (m.context_type.value, t) if p)
        candidate = _Group(key, f"[{key}] ({info})", t)
        extra = 0
        if self.root is not None and m.context_type is ContextType.RESOURCE and not is_turn:
            self._compact_header(candidate, key, t)
            if ROOT_LINE and self.root and not self.root_said and candidate.root:
                extra = self.count(f"(under {self.root})") + self.nl_cost
        if is_turn:
            ts = m.metadata.get(TIMESTAMP_FIELD)
            if COMPACT_TURNS and t is not None and isinstance(ts, (int, float)):
                candidate.day = day_prefix(float(ts))
            if COMPACT_HEADERS:
                candidate.header = _session_header(key, m)
            candidate.keys = []
        elif DOCUMENT_ORDER and urimod.CHUNK_MARK in m.uri:
            candidate.keys = []
            if HEADINGS_ONCE:
                candidate.heads = []
        opening = extra + (self.count(candidate.header) if candidate.header else 0)
        opening += self.sep_cost if self.groups else 0
        return candidate, opening

    def _compact_header(self, group: _Group, key: str, t: str | None) -> None:
        """A resource group's compact header (:data:`RESOURCE_HEADERS`), its time if any."""
        root = self.root or ""
        rel = key[len(root) :] if root and key.startswith(root) else key
        name = self.names.get(key, rel) if RESOURCE_HEADERS == "suffix" else rel
        group.header = f"[{name}]" + (f" ({t})" if t else "")
        group.root = root
        if RESOURCE_HEADERS == "none":
            group.header, group.root = "", None

    def _tiers_for(self, m: MatchedContext, chunk: bool) -> tuple[tuple[Tier, ...], bool]:
        """The tiers ``m`` may be shown at, largest first, and whether its text may be cut
        to an excerpt (:data:`CHUNK_FALLBACK`)."""
        tiers_here = self.order
        if not m.is_leaf and m.uri in self.above_hits:
            # its own hits below it say more than its overview (a list of child abstracts)
            tiers_here = tuple(t for t in self.order if t == "abstract") or self.order
        excerpt_ok = (
            CHUNK_FALLBACK == "excerpt"
            and "content" in tiers_here
            and m.is_leaf
            and m.context_type is ContextType.RESOURCE
            and bool(m.content.strip())
        )
        if chunk and CHUNK_FALLBACK != "tiers" and "content" in tiers_here:
            tiers_here = ("content",)
        return tiers_here, excerpt_ok

    def _leaf_rest(self, tiers: tuple[Tier, ...], excerpt_ok: bool) -> tuple[Tier, ...]:
        """The tiers a whole-file leaf tries after its excerpt (:data:`LEAF_EXCERPTS`)."""
        if not (LEAF_EXCERPTS and excerpt_ok and tiers[:1] == ("content",)):
            return ()
        return tiers[1:]

    def _place_tier(
        self,
        m: MatchedContext,
        key: str,
        group: _Group,
        label: str,
        opening: int,
        limit: int | None,
        tiers: Sequence[Tier],
        is_turn: bool,
    ) -> str | None:
        """``m`` whole at the first of ``tiers`` that fits its quota and the budget; else why
        not (``quota``, ``budget``, or ``empty`` when no tier has text)."""
        reason = "empty"
        tried: set[str] = set()
        for tier in tiers:
            body = getattr(m, tier).strip()
            if not body or body in tried:
                continue
            tried.add(body)
            if is_turn and COMPACT_TURNS and group.keys is not None:
                line = _turn_line(body, group.day)
            else:
                line = _line(m, tier, body, label, group.time)
            hb = self._heading_split(m, group, tier, body, label)
            n = opening + self.nl_cost + self._heading_cost(m, group, hb, line)
            if limit is not None and self.per_type.get(m.context_type, 0) + n > limit:
                reason = "quota"
                continue
            if self.used + n > self.max_tokens:
                reason = "budget"
                continue
            self._take(m, key, group, line, tier, n, hb)
            return None
        return reason

    def _heading_split(
        self, m: MatchedContext, group: _Group, tier: Tier, body: str, label: str
    ) -> tuple[str, str] | None:
        """``(heading, the line without it)`` for a chunk's whole text in a document group
        that lists headings once (:data:`HEADINGS_ONCE`); else ``None``."""
        if group.heads is None or tier != "content":
            return None
        split = _heading_of(body)
        if split is None:
            return None
        return split[0], _line(m, tier, split[1], label, group.time)

    def _heading_cost(
        self, m: MatchedContext, group: _Group, hb: tuple[str, str] | None, line: str
    ) -> int:
        """What listing ``line`` (``m``'s; its heading and bare line ``hb``) costs in a group
        that shows a heading once (:data:`HEADINGS_ONCE`): the line without its heading when
        the line before it in document order has the same heading, and the change it makes
        to the line after it (which loses its heading when it shares ``m``'s, or shows it
        again when ``m`` separates it from the line whose heading it shared)."""
        if not group.heads or group.keys is None:
            return self.count(line)
        k = order_key(m.uri, None)
        pred = succ = -1
        for i, gk in enumerate(group.keys):
            if gk < k and (pred < 0 or gk > group.keys[pred]):
                pred = i
            elif gk > k and (succ < 0 or gk < group.keys[succ]):
                succ = i
        pred_hb = group.heads[pred] if pred >= 0 else None
        before = pred_hb[0] if pred_hb is not None else None
        head = hb[0] if hb is not None else None
        n = self.count(hb[1] if hb is not None and head == before else line)
        succ_hb = group.heads[succ] if succ >= 0 else None
        if succ_hb is not None and (succ_hb[0] == before) != (succ_hb[0] == head):
            saved = self.count(group.lines[succ]) - self.count(succ_hb[1])
            n += -saved if succ_hb[0] == head else saved
        return n

    def _place_excerpt(
        self,
        m: MatchedContext,
        key: str,
        group: _Group,
        label: str,
        opening: int,
        limit: int | None,
    ) -> str | None:
        """The chunk's own text cut to the room left (``CHUNK_FALLBACK="excerpt"``)."""
        room = self.max_tokens - self.used
        if limit is not None:
            room = min(room, limit - self.per_type.get(m.context_type, 0))
        # a line without a heading between two that shared one makes the later show it again
        again = self._heading_cost(m, group, None, "") - self.count("") if group.heads else 0
        room -= opening + self.nl_cost + again
        if room < MIN_EXCERPT_TOKENS:
            return "budget"
        from_end = m.uri in self.before

        def line_of(body: str) -> str:
            return _line(m, "content", "… " + body if from_end else body + " …", label, group.time)

        text = m.content.strip()
        line = self._query_excerpt(m, text, label, group.time, room, from_end)
        if line is None:
            body = _excerpt(text, self._excerpt_fits(text, line_of, room, from_end), from_end)
            if not body:
                return "budget"
            line = line_of(body)
        n = opening + self.nl_cost + again + self.count(line)
        self._take(m, key, group, line, "content", n, None)
        self.out.sections[-1] = ContextSection(
            m.uri, m.context_type, "content", self.out.sections[-1].tokens, float(m.score), True
        )
        return None

    def _query_excerpt(
        self,
        m: MatchedContext,
        text: str,
        label: str,
        group_time: str | None,
        room: int,
        from_end: bool,
    ) -> str | None:
        """The line of ``text``'s sentences that hold the most of the query's words and fit
        ``room`` (:data:`EXCERPT_AT`, :func:`_query_window`); ``None`` where the edge an excerpt
        keeps without a query is as good, or no query was given."""
        if EXCERPT_AT != "query" or not self.terms:
            return None
        bounds = _sentence_bounds(text)
        if len(bounds) < 3:
            return None

        def line_of(a: int, b: int) -> str:
            body = text[a:b].strip()
            return _line(
                m,
                "content",
                ("… " if a > 0 else "") + body + (" …" if b < len(text) else ""),
                label,
                group_time,
            )

        fixed = self.count(line_of(1, 1))  # both marks, no words
        spans = getattr(self.counter, "spans", None)
        if self.additive and spans is not None:
            starts, ends = spans(text)

            def between(a: int, b: int) -> int:
                return fixed + max(0, bisect.bisect_right(ends, b) - bisect.bisect_left(starts, a))

        else:  # each sentence counted once: a window's count is a sum, checked once at the end
            pre = {bounds[0]: 0}
            for a, b in itertools.pairwise(bounds):
                pre[b] = pre[a] + self.count(text[a:b].strip())

            def between(a: int, b: int) -> int:
                return fixed + pre[b] - pre[a]

        paragraphs = _paragraph_starts(text, bounds) if self.paragraphs else frozenset()
        head = _heading_of(text) if self.skip_heading else None
        skip = len(head[0]) if head is not None else 0
        span = _query_window(text, bounds, self.terms, between, room, from_end, paragraphs, skip)
        if span is None:
            return None
        line = line_of(*span)
        if self.count(line) > room:
            return None
        return line

    def _excerpt_fits(
        self, text: str, line_of: Callable[[str], str], room: int, from_end: bool
    ) -> Callable[[str], bool]:
        """Whether an excerpt of ``text`` (its start, or its end with ``from_end``) fits
        ``room`` as a line. A counter whose counts add up over whitespace (``additive_lines``
        and ``spans``) encodes ``text`` once and counts each tried piece from its token
        offsets, instead of encoding every piece the search tries (each cut :func:`_excerpt`
        makes is at whitespace); the counts are the same."""
        spans = getattr(self.counter, "spans", None)
        if not self.additive or spans is None:
            return lambda b: self.count(line_of(b)) <= room
        starts, ends = spans(text)
        fixed = self.count(line_of(""))

        def fits(piece: str) -> bool:
            if from_end:
                n = len(starts) - bisect.bisect_left(starts, len(text) - len(piece))
            else:
                n = bisect.bisect_right(ends, len(piece))
            return fixed + n <= room

        return fits

    def _take(
        self,
        m: MatchedContext,
        key: str,
        group: _Group,
        line: str,
        tier: Tier,
        n: int,
        hb: tuple[str, str] | None = None,
    ) -> None:
        if group.root and key not in self.groups:
            self.root_said = True
        self.groups.setdefault(key, group)
        group.lines.append(line)
        if group.heads is not None:
            group.heads.append(hb)
        if group.keys is not None:
            # by name: a turn has no chunk index, and a chunk's entry copies its slot hit's
            group.keys.append(order_key(m.uri, None))
        self.order_of.append((key, len(group.lines) - 1))
        self.used += n
        self.per_type[m.context_type] = self.per_type.get(m.context_type, 0) + n
        self.taken.add(m.uri)
        self.out.sections.append(ContextSection(m.uri, m.context_type, tier, n, float(m.score)))

    def finish(self) -> AssembledContext:
        """Render; a tokenizer that is not additive may overshoot: drop the last sections."""
        out = self.out
        text = _render(list(self.groups.values()))
        if self.additive:
            # lines joined by newlines that cost nothing: the block is what was counted
            out.text, out.tokens = text, self.used if text else 0
            return out
        total = self.counter.count(text) if text else 0
        while self.order_of and total > self.max_tokens:
            key, _ = self.order_of.pop()
            group = self.groups[key]
            group.lines.pop()
            if group.keys:
                group.keys.pop()
            if group.heads:
                group.heads.pop()
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
        # A user name may hold '..' (john..doe), a state key may not: such a user's ledger
        # is keyed by a digest, after a '_' no user name starts with (no other user's key).
        self._space = (
            self.user
            if ".." not in self.user
            else "_u" + hashlib.sha256(self.user.encode("utf-8")).hexdigest()[:32]
        )

    @staticmethod
    def check_session(session_id: str) -> str:
        """A session id that makes a valid state key (``context/<user>/<id>``). Why '..' is
        refused: the stores refuse it anywhere in a key (it could climb out of a key's
        namespace), so ``a..b`` passed here and failed in the store as a StoreError naming
        the internal key."""
        if (
            not isinstance(session_id, str)
            or not _SESSION_RE.match(session_id)
            or ".." in session_id
        ):
            raise InvalidQueryError(
                "session_id must be 1-128 letters, digits, '_', '.' or '-' (no '..'), "
                f"got {session_id!r:.100}"
            )
        return session_id

    def _key(self, session_id: str) -> str:
        return f"context/{self._space}/{self.check_session(session_id)}"

    def seen(self, session_id: str) -> list[str]:
        raw = self.state.get_state(self._key(session_id))
        if not raw:
            return []
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:  # (not JSON, not UTF-8, too deep)
            raise IndexCorruptError(
                f"the context ledger of session {session_id!r} is unreadable ({type(exc).__name__})"
            ) from None
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
