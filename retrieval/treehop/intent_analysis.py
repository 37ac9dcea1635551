"""Intent analysis for ``search()``: turn a query in its conversation into 0-5 typed queries.

The input is exactly what the seed names -- the session's compressed summary, its last 5
messages, and the current query. The output is a :class:`~treehop.models.QueryPlan`: each
:class:`~treehop.models.TypedQuery` is one need, rewritten to stand alone for embedding search,
aimed at one context type (skill: an action, verb first; resource: a noun phrase; memory: a
statement about the user), with a priority from 1 to 5. Small talk yields zero queries, which
means no retrieval at all.

Planner models misbehave in predictable ways, so parsing is lenient where the intent is clear
and strict where it is not; every outcome is defined (and tested):

============================================  ==============================================
Answer                                        Outcome
============================================  ==============================================
JSON inside ```json fences / prose around it  the first JSON value is parsed
``<think>...</think>`` before the JSON        the thinking block is ignored
a bare list of queries                        taken as the ``queries`` list, no reasoning
a single query object                         a one-query plan
extra fields                                  ignored
unknown (or disallowed) context type          query dropped, noted in ``reasoning``
priority out of 1..5 / fractional             clamped / rounded, noted
priority missing or not a number              3, noted when present but invalid
empty or non-string query text                query dropped, noted
the same query twice for one type             merged, highest priority kept
more than ``max_queries`` queries             the highest priorities kept (stable), noted
an ``intent`` past ``MAX_INTENT_CHARS``         cut to that many characters, noted
``reasoning`` past ``MAX_REASONING_CHARS``      cut to that many characters, noted
``"queries": []`` (or null)                   a zero-query plan (no retrieval)
queries given but none usable                 fallback plan
non-JSON text, or JSON of the wrong shape     fallback plan
LLM error, timeout, no LLM configured         fallback plan
============================================  ==============================================

The fallback plan searches the raw query in every allowed context type; it sets
``fallback=True`` and ``fallback_reason`` so that callers can see that the planner was bypassed.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
from collections.abc import Sequence
from string import Template
from typing import Any

from ._plugins import describe, finished_within, in_daemon_thread, is_signal
from .errors import InvalidQueryError, LLMError
from .llm.base import LLM, ChatMessage, ModelRegistry
from .models import ContextType, QueryPlan, TypedQuery
from .redaction import listed, redact

ALL_CONTEXT_TYPES: tuple[ContextType, ...] = (
    ContextType.SKILL,
    ContextType.RESOURCE,
    ContextType.MEMORY,
)
MAX_QUERIES_LIMIT = 5
DEFAULT_PRIORITY = 3
FALLBACK_PRIORITY = 3
MAX_REWRITTEN_QUERY_CHARS = 1000
MAX_INTENT_CHARS = 200
"""A query's ``intent`` (the prompt asks for "a few words") is cut to this many characters
(after its whitespace runs become one space), with a parser note: a model answering a
megabyte of intent passed it whole into the plan and every integration's metadata
(helper pipeline77)."""
MAX_REASONING_CHARS = 2000
"""The model's ``reasoning`` (the prompt asks for one or two sentences) is cut to this many
characters, with a parser note; the ``[parser]`` line after it is cut to
``MAX_PARSER_NOTES_CHARS`` (a hostile answer of many dropped queries writes one note each)."""
MAX_PARSER_NOTES_CHARS = 2000
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
"""A code point no UTF-8 text holds: a JSON ``"\\ud800"`` escape in the model's answer
makes one, in the query text, the ``intent`` or the ``reasoning``, each shown as U+FFFD
(:func:`_no_surrogates`)."""


def _no_surrogates(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (one pass). Why (helper review78a): the
    plan kept them, and the result of a search that used it could not be written as JSON
    (``model_dump_json`` raised pydantic's serialisation error, no ``TreehopError``); the
    session summary already did this for the same escape (helper review76)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


PROMPT_PLACEHOLDERS = frozenset(
    {"query", "summary", "recent_messages", "context_types", "max_queries"}
)

_TYPE_ALIASES: dict[str, ContextType] = {
    "skill": ContextType.SKILL,
    "skills": ContextType.SKILL,
    "resource": ContextType.RESOURCE,
    "resources": ContextType.RESOURCE,
    "memory": ContextType.MEMORY,
    "memories": ContextType.MEMORY,
}

DEFAULT_PROMPT_TEMPLATE = """You are the retrieval planner of an AI agent. Before the agent \
answers, you decide what it should look up. It can search three kinds of context:

- skill: capabilities, tools, procedures and workflows the agent can run. Write a skill query \
as an action that starts with a verb, e.g. "create an RFC document", "extract tables from a \
PDF".
- resource: documents and knowledge such as guides, templates, specifications, code and data. \
Write a resource query as a noun phrase, e.g. "RFC document template", "API usage guide".
- memory: what is known about this user: preferences, habits, profile, past decisions and \
events. Write a memory query about the user, e.g. "the user's code style preferences".

Context types you may use here: $context_types

Rules:
1. Greetings, thanks, small talk, or anything the agent can answer without looking anything \
up: return an empty list of queries.
2. One need per query. A simple lookup needs one query; a complex task may need several of \
different types (for example a skill to do it, a resource to do it with, and the user's \
preferences from memory). Never more than $max_queries queries.
3. Rewrite every query so that it stands alone for semantic search: replace pronouns and \
references ("it", "that document", "the same again") with what they refer to in the \
conversation; keep names, identifiers, numbers and dates exactly as written; drop filler. \
Use the language of the current query.
4. priority: 5 = the answer depends on it, 1 = nice to have.
5. intent: a few words on what the query is for.

Summary of the earlier conversation:
$summary

Recent messages, oldest first:
$recent_messages

Current query:
$query

Answer with one JSON object and nothing else:
{"reasoning": "<one or two sentences>", "queries": [{"query": "<rewritten query>", \
"context_type": "<skill|resource|memory>", "intent": "<purpose>", "priority": <1-5>}]}"""


class PlanParseError(ValueError):
    """A planner answer that cannot be read as a plan (the analyzer falls back)."""


def resolve_context_types(
    context_types: Sequence[ContextType | str] | None,
) -> tuple[ContextType, ...]:
    """Validate the allowed context types (``None`` = all three), deduplicated, in order."""
    if context_types is None:
        return ALL_CONTEXT_TYPES
    if isinstance(context_types, (str, ContextType)):
        context_types = [context_types]
    out: list[ContextType] = []
    for ct in context_types:
        resolved = _TYPE_ALIASES.get(ct.strip().casefold()) if isinstance(ct, str) else None
        if resolved is None:
            raise InvalidQueryError(
                f"unknown context type {ct!r}: use {', '.join(c.value for c in ALL_CONTEXT_TYPES)}"
            )
        if resolved not in out:
            out.append(resolved)
    if not out:
        raise InvalidQueryError("context_types must not be empty (use None for all)")
    return tuple(out)


_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
MAX_JSON_STARTS = 64
"""How many ``[`` / ``{`` of an answer that is not JSON as a whole are tried as the start of
its JSON value: each try may read far (a start nested to the recursion limit costs ~0.25 ms),
so trying every one made a hostile answer of 20,000 ``[`` take 5 s."""
MAX_SCAN_CHARS = 200_000
"""The part of such an answer the tries read (a plan is a few hundred characters)."""
_FENCE_BLANKS = " \t"


def _fenced(text: str) -> str | None:
    r"""The body of the first fenced block of ``text`` (```` ```json ... ``` ````), or ``None``.

    What ``re.search(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", DOTALL)`` found, in one
    pass: that regex split each blank run after an opening fence between its two ``[ \t]*``
    in every way and rescanned the rest for a closing fence after each split (cubic: "```",
    2,000 spaces and "x" took 25 s, on the event loop after the model answered, past the
    planner's deadline). Only the first opening fence can match: the header (blanks, a
    ``json`` tag, one newline) holds no backtick, so a closing fence after a later opening
    one is also after the first one's header, and a shorter header finds no other."""
    start = text.find("```")
    if start < 0:
        return None
    i, n = start + 3, len(text)
    while i < n and text[i] in _FENCE_BLANKS:
        i += 1
    if text.startswith(("json", "JSON"), i):
        i += 4
        while i < n and text[i] in _FENCE_BLANKS:
            i += 1
    if i < n and text[i] == "\n":
        i += 1
    end = text.find("```", i)
    return None if end < 0 else text[i:end]


def _drop_think(text: str) -> str:
    """``text`` without its ``<think>...</think>`` blocks (each from an opening tag to the
    first closing tag after it; an unclosed one is kept), in one pass. Why not
    ``re.sub(r"<think>.*?</think>")``: from every unclosed ``<think>`` the regex rescanned the
    rest of the answer, quadratic in a hostile answer (20,000 tags, 140 KB: 20 s)."""
    out: list[str] = []
    pos = 0
    while (start := _THINK_OPEN.search(text, pos)) is not None:
        end = _THINK_CLOSE.search(text, start.end())
        if end is None:  # (no later opening tag has a closing one either)
            break
        out.append(text[pos : start.start()])
        pos = end.end()
    out.append(text[pos:])
    return "".join(out)


def extract_json(text: str) -> Any:
    """The first JSON value in a model answer (fenced, bare, or embedded in prose)."""
    if not isinstance(text, str):
        raise PlanParseError(f"answer is not text but {type(text).__name__}")
    cleaned = _drop_think(text).strip().lstrip("\ufeff")
    fence = _fenced(cleaned)
    candidate = fence.strip() if fence is not None else cleaned
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):  # RecursionError: nesting past the limit
        pass
    decoder = json.JSONDecoder()
    scanned = candidate[:MAX_SCAN_CHARS]
    for match in itertools.islice(re.finditer(r"[\[{]", scanned), MAX_JSON_STARTS):
        try:
            value, _ = decoder.raw_decode(scanned, match.start())
        except (ValueError, RecursionError):
            continue
        return value
    snippet = cleaned[:120]
    raise PlanParseError(f"answer is not JSON: {snippet!r}")


def _parse_priority(value: Any, notes: list[str], label: str) -> int:
    if value is None:
        return DEFAULT_PRIORITY
    number: float | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int past float range (JSON allows 10**400)
            number = None
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number):
        notes.append(f"{label}: invalid priority {value!r}, used {DEFAULT_PRIORITY}")
        return DEFAULT_PRIORITY
    rounded = math.floor(number + 0.5)
    clamped = min(5, max(1, rounded))
    if clamped != number:
        notes.append(f"{label}: priority {value!r} became {clamped}")
    return clamped


def parse_plan(
    text: str,
    *,
    allowed: Sequence[ContextType] = ALL_CONTEXT_TYPES,
    max_queries: int = MAX_QUERIES_LIMIT,
) -> tuple[list[TypedQuery], str]:
    """Read a planner answer into (queries, reasoning); raise :class:`PlanParseError`.

    ``reasoning`` is the model's own, followed by a ``[parser]`` line listing everything the
    parser changed or dropped, so that a surprising plan can be explained.
    """
    data = extract_json(text)
    reasoning = ""
    reasoning_cut = False
    items: Any
    if isinstance(data, dict):
        raw_reasoning = data.get("reasoning", "")
        reasoning = raw_reasoning if isinstance(raw_reasoning, str) else json.dumps(raw_reasoning)
        reasoning = _no_surrogates(reasoning)
        if len(reasoning) > MAX_REASONING_CHARS:
            reasoning = reasoning[:MAX_REASONING_CHARS]
            reasoning_cut = True
        if "queries" in data:
            items = data["queries"]
            if items is None:
                items = []
        elif "query" in data:
            items = [data]
        else:
            raise PlanParseError("JSON object has no 'queries' list")
    elif isinstance(data, list):
        items = data
    else:
        raise PlanParseError(f"expected a JSON object or list, got {type(data).__name__}")
    if not isinstance(items, list):
        raise PlanParseError(f"'queries' is {type(items).__name__}, not a list")

    notes: list[str] = []
    if reasoning_cut:
        notes.append(f"reasoning cut to {MAX_REASONING_CHARS} characters")
    kept: list[TypedQuery] = []
    index: dict[tuple[str, ContextType], int] = {}
    for i, item in enumerate(items, start=1):
        label = f"query {i}"
        if not isinstance(item, dict):
            notes.append(f"{label} dropped: not an object")
            continue
        q = item.get("query")
        if not isinstance(q, str) or not q.strip():
            notes.append(f"{label} dropped: empty or missing query text")
            continue
        q = _no_surrogates(" ".join(q.split()))
        if len(q) > MAX_REWRITTEN_QUERY_CHARS:
            q = q[:MAX_REWRITTEN_QUERY_CHARS]
            notes.append(f"{label}: query text cut to {MAX_REWRITTEN_QUERY_CHARS} characters")
        raw_type = item.get("context_type")
        ct = _TYPE_ALIASES.get(raw_type.strip().casefold()) if isinstance(raw_type, str) else None
        if ct is None:
            notes.append(f"{label} dropped: unknown context type {raw_type!r}")
            continue
        if ct not in allowed:
            notes.append(f"{label} dropped: context type {ct.value!r} not requested")
            continue
        priority = _parse_priority(item.get("priority"), notes, label)
        intent = item.get("intent", "")
        intent = _no_surrogates(" ".join(intent.split())) if isinstance(intent, str) else ""
        if len(intent) > MAX_INTENT_CHARS:
            intent = intent[:MAX_INTENT_CHARS]
            notes.append(f"{label}: intent cut to {MAX_INTENT_CHARS} characters")
        key = (q.casefold(), ct)
        if key in index:
            j = index[key]
            if priority > kept[j].priority:
                kept[j] = kept[j].model_copy(update={"priority": priority})
            notes.append(f"{label} merged into a duplicate")
            continue
        index[key] = len(kept)
        kept.append(TypedQuery(query=q, context_type=ct, intent=intent, priority=priority))

    if items and not kept:
        told = "; ".join(notes)[:MAX_PARSER_NOTES_CHARS]
        raise PlanParseError(f"none of the {len(items)} queries is usable ({told})")
    # Highest priority first; Python's sort is stable, so ties keep the model's order.
    kept.sort(key=lambda t: -t.priority)
    if len(kept) > max_queries:
        notes.append(f"kept the {max_queries} highest-priority of {len(kept)} queries")
        kept = kept[:max_queries]
    if notes:
        line = "; ".join(notes)
        if len(line) > MAX_PARSER_NOTES_CHARS:
            line = line[: MAX_PARSER_NOTES_CHARS - 1] + "\u2026"
        reasoning = f"{reasoning}\n[parser] {line}".strip()
    return kept, reasoning


def fallback_plan(
    query: str,
    context_types: Sequence[ContextType] = ALL_CONTEXT_TYPES,
    reason: str = "no LLM configured",
    planner: str | None = None,
) -> QueryPlan:
    """The raw query against every allowed context type, marked as a fallback with ``reason``."""
    types = ", ".join(ct.value for ct in context_types)
    return QueryPlan(
        queries=[
            TypedQuery(
                query=query,
                context_type=ct,
                intent="fallback: the raw query",
                priority=FALLBACK_PRIORITY,
            )
            for ct in context_types
        ],
        reasoning=f"Planner bypassed ({reason}); the raw query is searched in: {types}.",
        fallback=True,
        fallback_reason=reason,
        planner=planner,
    )


def _failure_reason(exc: BaseException) -> str:
    # Redacted: a planner's error can quote a server page that echoes the API key, and this
    # reason is copied into QueryPlan.fallback_reason and the integrations' metadata.
    if isinstance(exc, LLMError):
        return f"LLM error: {describe(exc).partition(': ')[2]}"[:500]
    return f"LLM call failed: {describe(exc)}"[:500]


class IntentAnalyzer:
    """Plans the typed queries of ``search()`` with a chat model, within ``timeout_s``.

    ``prompt_template`` is a :class:`string.Template` (``$query``, ``$summary``,
    ``$recent_messages``, ``$context_types``, ``$max_queries``) so that JSON examples in it need
    no brace escaping; integrations expose it through their ``get_prompts``/``update_prompts``.
    """

    DEFAULT_PROMPT_TEMPLATE = DEFAULT_PROMPT_TEMPLATE

    def __init__(
        self,
        llm: LLM | None = None,
        timeout_s: float = 5.0,
        max_queries: int = MAX_QUERIES_LIMIT,
        *,
        prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
        n_recent: int = 5,
        max_summary_chars: int = 3000,
        max_message_chars: int = 1000,
        max_query_chars: int = 4000,
        models: ModelRegistry | None = None,
    ) -> None:
        if not timeout_s > 0:
            raise InvalidQueryError("timeout_s must be > 0")
        if not 1 <= max_queries <= MAX_QUERIES_LIMIT:
            raise InvalidQueryError(f"max_queries must be in 1..{MAX_QUERIES_LIMIT}")
        if n_recent < 0:
            raise InvalidQueryError("n_recent must be >= 0")
        self._models = models
        self._llm: LLM | None = None
        if llm is not None or models is None:
            self.llm = llm
        self.timeout_s = float(timeout_s)
        self.max_queries = max_queries
        self.n_recent = n_recent
        self.max_summary_chars = max_summary_chars
        self.max_message_chars = max_message_chars
        self.max_query_chars = max_query_chars
        self._template = Template(DEFAULT_PROMPT_TEMPLATE)
        self.prompt_template = prompt_template

    @property
    def prompt_template(self) -> str:
        return self._template.template

    @prompt_template.setter
    def prompt_template(self, value: str) -> None:
        if not isinstance(value, str):
            raise InvalidQueryError("prompt_template must be a string")
        template = Template(value)
        if not template.is_valid():
            raise InvalidQueryError("prompt_template has an invalid '$' placeholder (use $$)")
        names = set(template.get_identifiers())
        unknown = names - PROMPT_PLACEHOLDERS
        if unknown:
            raise InvalidQueryError(
                f"prompt_template uses unknown placeholders {listed(unknown)}; "
                f"known: {sorted(PROMPT_PLACEHOLDERS)}"
            )
        if "query" not in names:
            raise InvalidQueryError("prompt_template must contain $query")
        self._template = template

    @property
    def llm(self) -> LLM | None:
        """The planner model, read at each call: with ``models`` (the client's
        :class:`~treehop.llm.base.ModelRegistry`) its ``planner``, so that a
        ``query_planner`` (or default ``llm``) set on the client after it was built is the
        one used; a client built it once and kept it, and a planner set later was ignored
        (helper pipeline77). Setting it sets the registry's ``query_planner``."""
        return self._models.planner if self._models is not None else self._llm

    @llm.setter
    def llm(self, value: LLM | None) -> None:
        if self._models is not None:
            self._models.query_planner = value
        else:
            self._llm = value

    @property
    def planner_name(self) -> str | None:
        return None if self.llm is None else str(getattr(self.llm, "name", "llm"))

    def build_messages(
        self,
        query: str,
        summary: str = "",
        recent_messages: Sequence[ChatMessage] = (),
        context_types: Sequence[ContextType] = ALL_CONTEXT_TYPES,
    ) -> list[ChatMessage]:
        """The chat messages sent to the planner (one user message with the filled template)."""
        recent = list(recent_messages)[-self.n_recent :] if self.n_recent else []
        rendered = "\n".join(
            f"[{m.role}] {' '.join(m.content.split())[: self.max_message_chars]}" for m in recent
        )
        prompt = self._template.substitute(
            query=query[: self.max_query_chars],
            summary=(summary or "").strip()[: self.max_summary_chars] or "(none)",
            recent_messages=rendered or "(none)",
            context_types=", ".join(ct.value for ct in context_types),
            max_queries=str(self.max_queries),
        )
        return [ChatMessage(role="user", content=prompt)]

    def _prepare(
        self, query: str, context_types: Sequence[ContextType | str] | None
    ) -> tuple[str, tuple[ContextType, ...]]:
        if not isinstance(query, str):
            raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
        if not query.strip():
            raise InvalidQueryError("query must not be empty")
        return query.strip(), resolve_context_types(context_types)

    def _plan_from_text(self, text: Any, query: str, allowed: tuple[ContextType, ...]) -> QueryPlan:
        try:
            queries, reasoning = parse_plan(text, allowed=allowed, max_queries=self.max_queries)
        except PlanParseError as exc:
            return fallback_plan(
                query,
                allowed,
                redact(f"unparseable planner answer: {exc}")[:500],
                self.planner_name,
            )
        return QueryPlan(queries=queries, reasoning=reasoning, planner=self.planner_name)

    async def analyze(
        self,
        query: str,
        summary: str = "",
        recent_messages: Sequence[ChatMessage] = (),
        context_types: Sequence[ContextType | str] | None = None,
    ) -> QueryPlan:
        """Plan the typed queries; never raises for planner faults (it falls back instead).

        Bad arguments (empty query, unknown context type) raise
        :class:`~treehop.errors.InvalidQueryError`. The model call is abandoned after
        ``timeout_s`` even if it ignores cancellation.
        """
        q, allowed = self._prepare(query, context_types)
        llm = self.llm  # (read once: the registry's may change while this call runs)
        if llm is None:
            return fallback_plan(q, allowed, "no LLM configured", None)
        messages = self.build_messages(q, summary, recent_messages, allowed)
        try:
            task = asyncio.ensure_future(llm.acomplete(messages, json_mode=True))
        except BaseException as exc:  # (an ``acomplete`` that raises or is no coroutine)
            # Why (helper review77): the reranker and the session summary guard this call
            # (helper review76's fold); the planner did not, and a plug-in whose
            # ``acomplete`` raised before any await (or answered a string) escaped ``find``
            # as its own RuntimeError / TypeError.
            if is_signal(exc):
                raise
            return fallback_plan(q, allowed, _failure_reason(exc), self.planner_name)
        if not await finished_within(task, self.timeout_s):
            return fallback_plan(
                q, allowed, f"timeout after {self.timeout_s:g}s", self.planner_name
            )
        try:
            text = task.result()
        except asyncio.CancelledError:
            return fallback_plan(q, allowed, "LLM call was cancelled", self.planner_name)
        except BaseException as exc:  # any planner fault falls back (not a Ctrl-C, an exit)
            if is_signal(exc):
                raise
            return fallback_plan(q, allowed, _failure_reason(exc), self.planner_name)
        return self._plan_from_text(text, q, allowed)

    def analyze_sync(
        self,
        query: str,
        summary: str = "",
        recent_messages: Sequence[ChatMessage] = (),
        context_types: Sequence[ContextType | str] | None = None,
    ) -> QueryPlan:
        """The sync twin of :meth:`analyze`.

        The model's sync ``complete`` runs in a worker thread so that ``timeout_s`` holds; a
        call that overruns is abandoned (its thread ends when the client's own timeout fires).
        """
        q, allowed = self._prepare(query, context_types)
        llm = self.llm  # (read once: the registry's may change while this call runs)
        if llm is None:
            return fallback_plan(q, allowed, "no LLM configured", None)
        messages = self.build_messages(q, summary, recent_messages, allowed)
        # (a daemon thread: one abandoned at the deadline does not hold the interpreter's
        # exit, as a ThreadPoolExecutor's worker did)
        future = in_daemon_thread(llm.complete, messages, json_mode=True, name="treehop-planner")
        try:
            text = future.result(timeout=self.timeout_s)
        except BaseException as exc:  # any planner fault falls back (not a Ctrl-C)
            if not future.done():  # (the deadline passed; not a model's own TimeoutError)
                future.cancel()
                if is_signal(exc):  # (a Ctrl-C in the wait)
                    raise
                return fallback_plan(
                    q, allowed, f"timeout after {self.timeout_s:g}s", self.planner_name
                )
            if isinstance(exc, asyncio.CancelledError):  # the model's own, as analyze()
                return fallback_plan(q, allowed, "LLM call was cancelled", self.planner_name)
            if is_signal(exc):
                raise
            return fallback_plan(q, allowed, _failure_reason(exc), self.planner_name)
        return self._plan_from_text(text, q, allowed)
