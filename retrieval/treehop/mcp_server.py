"""``treehop mcp``: the tree as a Model Context Protocol server (official ``mcp`` SDK, stdio).

Tools: ``find`` (one query, no LLM), ``search`` (session-aware, intent analysis when an LLM is
configured), ``context`` (a token-budgeted context block, :mod:`treehop.context_assembly`),
``ls``, ``read``, ``tree`` and ``add_memory`` (a time-stamped memory through
:func:`treehop.memory.remember`; left out with ``read_only=True``).

Every tool refuses arguments it does not know (as the Python API does), instead of the SDK's
default of dropping them: a misspelt option (``limt``, ``targetUri``) would otherwise be run
as if it had not been given, and the agent would never learn. The input schemas say so too
(``additionalProperties: false``). A value of another JSON type than the schema says is
refused too (``"limit": "2"``, ``2.0``, ``true``: the SDK's lax validation converted them).
``find`` / ``search`` / ``context`` take ``filter`` / ``tags`` / ``tags_all`` as the CLI and
Python do (a JSON *string* where the schema says object or array is refused too). Each
tool publishes its MCP annotations (read-only, destructive, idempotent, closed world). The
server reports treehop's version in its handshake, and answers every stdin line it cannot
serve with JSON-RPC's Parse error or Invalid Request (:func:`_refusal`), a request with an
object, array or bool ``id`` among them.

Every tool answers structured JSON (hits carry their ``viking://`` URI, score and provenance);
a treehop error becomes an MCP tool error (``isError``) whose message names the error type and
tells the model what to do, so an agent can correct its call instead of failing.

Needs the ``mcp`` extra (``pip install -e '.[mcp]'`` in a treehop clone); the SDK is imported
only here, so the core never requires it.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import logging
import math
import re
import sys
from collections.abc import AsyncIterable, Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, NamedTuple, TypeVar

from pydantic import Field

from ._mcp_wire import (
    MAX_IN_FLIGHT as MAX_IN_FLIGHT,  # (re-exported: it was defined here until leftovers67b)
)
from ._mcp_wire import (
    MAX_IN_FLIGHT_CHARS,
    MAX_LINE_CHARS,
    WRITE_DEADLINE_S,
    ClientStuck,
    TooLong,
    head_id,
    wire,
    wire_limits,
)
from .context_assembly import TIERS
from .errors import SEARCH_SESSION_HINT, NotFoundError, SessionNotFoundError, TreehopError
from .filters import duplicate_key_message, first_duplicate_key, marked_pairs, too_deep_message
from .integration_kit import acheck_filter_fields
from .models import SCORE_KIND_FUSED, FindResult, MatchedContext
from .redaction import RedactingFilter, cut_text, redact, shown_name
from .timestamps import TIMESTAMP_FIELD, shown_iso
from .uri import shown_root
from .validation import MAX_LIMIT

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.tools import Tool
    from pydantic import ValidationError

    from .client import AsyncTreehop

T = TypeVar("T")
_ToolFn = TypeVar("_ToolFn", bound=Callable[..., Awaitable[dict[str, Any]]])
INSTRUCTIONS = (
    "treehop: a tree of knowledge. viking://resources holds documents, viking://~/memories "
    "what is known about the user (conversations, notes), viking://~/skills procedures. Use "
    "find for a precise lookup, search for an open question, context for a ready-to-use "
    "token-budgeted block, ls/tree to browse and read to open a hit; add_memory stores a fact."
)
MAX_READ_CHARS = 200_000
MAX_CONTEXT_TOKENS = 50_000
"""The largest ``max_tokens`` the ``context`` tool assembles (about :data:`MAX_READ_CHARS`
characters of English; the core allows 1,000,000, ~4 MB into the agent's context); a larger
ask is held to it and says so (``max_tokens_capped``)."""
MAX_LIST_ENTRIES = 1_000
"""The most entries ``ls`` answers (a directory of 100,000 files would fill the agent's
context as ``read`` without its cap would); the rest are counted in ``omitted``."""
MAX_TREE_NODES = 1_000
"""The most nodes ``tree`` answers, the shallowest first; each node that lost children says
how many in ``omitted_children``."""
MAX_TREE_DEPTH = 10
"""The deepest ``tree`` answers; a deeper ask is held to it and says so (``depth_capped``)."""

# The bounds each integer argument has, in its published schema (``minimum`` / ``maximum``) and
# checked before the tool runs: a client can tell, and ``read(max_chars=0)`` or
# ``tree(depth=-1)`` is an error instead of one character or a silent depth 0.
Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
Chars = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(ge=1)]
Depth = Annotated[int, Field(ge=0)]
# find / search's filters, as the CLI (``--filter``, ``--tag``, ``--tag-all``) and Python take
# them (the descriptions go into the published schema, for the agent). A tag filter is an array
# of strings here (Python also takes one string): one JSON type, so a refused value gets one
# plain error instead of one per branch of a union.
Filter = Annotated[
    dict[str, Any] | None,
    Field(
        description='metadata filter DSL, e.g. {"op": "must", "field": "lang", "conds": ["en"]}; '
        "ops: must, must_not, range, range_out, text_match, text_match_not, empty, not_empty, "
        "and, or, time"
    ),
]
Tags = Annotated[list[str] | None, Field(description="keep hits with any of these tags")]
TagsAll = Annotated[list[str] | None, Field(description="keep hits with all of these tags")]
# find's kind of context, as Python's ``find(context_type=...)`` takes it: an enum in the
# published schema, so a value the core would refuse is refused before the tool runs. Why
# (helper leftovers69b; usage79's open item): an agent could reach memories only through
# ``target_uri="viking://~/memories"``, and skills only by knowing their root.
ContextTypeArg = Annotated[
    Literal["resource", "memory", "skill"] | None,
    Field(description="search only this kind of context (each kind has its own root)"),
]
# Each tool's MCP ToolAnnotations (``tools/list``), with ``openWorldHint: false`` for all (the
# tools reach the index and nothing else). Why: without them a client reads every tool as the
# spec's defaults (may write, destructive, open world) and may ask its user to confirm a find.
HINTS_READ = {"read_only_hint": True, "destructive_hint": False, "idempotent_hint": True}
"""find, search, ls, read, tree: they change nothing (search only reads a session)."""
HINTS_CONTEXT = {"read_only_hint": False, "destructive_hint": False, "idempotent_hint": False}
"""context: with ``session_id`` the URIs a block gave are recorded (persisted with the index,
also by ``--read-only``'s server), so the same call answers other hits next time."""
HINTS_ADD_MEMORY = {"read_only_hint": False, "destructive_hint": True, "idempotent_hint": False}
"""add_memory: a ``name`` already used in the category replaces that memory (destructive);
an unnamed note is a new one each time (not idempotent)."""
_INPUT_CHARS = 60
"""How much of a refused value an argument error repeats (a hostile 10 MB string is not
echoed into the agent's context)."""


def _bounded_tree(tree: dict[str, Any], budget: int) -> dict[str, Any]:
    """``tree`` keeping its first ``budget`` nodes in breadth-first order (so the levels
    an agent browses first stay whole, and every kept node's parent is kept)."""
    order: list[dict[str, Any]] = [tree]
    i = 0
    while i < len(order) and len(order) < budget:
        order.extend(order[i].get("children", [])[: budget - len(order)])
        i += 1
    kept = {id(n) for n in order[:budget]}
    for node in order[:budget]:
        children = node.get("children")
        if children is None:
            continue
        keep = [c for c in children if id(c) in kept]
        if len(keep) < len(children):
            node["children"] = keep
            node["omitted_children"] = len(children) - len(keep)
    return tree


def _empty_root(root: str, depth: int) -> dict[str, Any]:
    """``tree``'s answer for a context root with nothing under it (the shape of the core's
    ``tree`` for an empty directory)."""
    out: dict[str, Any] = {"uri": root, "is_leaf": False, "abstract": "", "kind": "directory"}
    if depth > 0:
        out["children"] = []
    return out


MAX_HIT_TAGS = 32
"""The most tags one ``find`` / ``search`` hit shows (the rest counted in ``tags_omitted``):
a node's tags have no total bound (``set_tags`` adds up to 256 a call)."""
MAX_FIELD_CHARS = 200
"""The longest provenance value (``speaker``, ``conversation``, ``session``, ``kind``) a hit
shows: a longer string is cut (``...``), a longer non-string left out."""


def _field(value: Any) -> Any:
    """``value`` as a hit shows it (see :data:`MAX_FIELD_CHARS`), or ``_OMIT``."""
    if isinstance(value, str):
        return value if len(value) <= MAX_FIELD_CHARS else value[:MAX_FIELD_CHARS] + "..."
    try:
        small = len(json.dumps(value)) <= MAX_FIELD_CHARS
    except (TypeError, ValueError, RecursionError):
        small = False
    return value if small else _OMIT


_OMIT = object()


def _hit(m: MatchedContext, text_chars: int) -> dict[str, Any]:
    """One hit as the tools answer it. Only ``text`` is long by nature (cut by the caller's
    ``text_chars`` and the answer's bound); the rest is bounded here. Why: ``tags`` and the
    provenance keys were copied whole, and a record's metadata (up to 64 KB) or a node's
    thousand tags put megabytes into the agent's context past ``text_chars``."""
    out: dict[str, Any] = {
        "uri": m.uri,
        "context_type": m.context_type.value,
        "is_leaf": m.is_leaf,
        "score": round(float(m.score), 6),
        "abstract": m.abstract,
        # the slot's passage (the chunks a collapsed slot shows around its face chunk), as
        # LangChain's page_content and assemble_context give it: the face alone was at
        # times a one-line tail ("More information is on the WNPP web pages.")
        "text": m.slot_text[:text_chars],
        "tags": list(m.tags[:MAX_HIT_TAGS]),
        "found_by": m.found_by.value,
    }
    if len(m.tags) > MAX_HIT_TAGS:
        out["tags_omitted"] = len(m.tags) - MAX_HIT_TAGS
    shown = shown_iso(m.metadata.get(TIMESTAMP_FIELD))
    if shown is not None:
        out["time"] = shown
    for key in ("speaker", "conversation", "session", "kind"):
        if key in m.metadata:
            value = _field(m.metadata[key])
            if value is not _OMIT:
                out[key] = value
    return out


def _result(res: FindResult, text_chars: int) -> dict[str, Any]:
    """``find`` / ``search``'s answer: each hit's first ``text_chars`` characters, at most
    :data:`MAX_READ_CHARS` for the whole answer (later hits get what is left).

    Why: ``text_chars`` was uncapped, so ``limit=1000, text_chars=10**9`` put every hit's
    whole text into the agent's context (``ls`` / ``tree`` / ``read`` were bounded). A hit
    whose text was cut, by ``text_chars`` or by the bound, says ``truncated``; the answer
    counts them (``truncated_hits``)."""
    left = MAX_READ_CHARS
    hits, cut = [], 0
    for m in res.contexts():
        hit = _hit(m, max(0, min(text_chars, left)))
        left -= len(hit["text"])
        if len(hit["text"]) < len(m.slot_text):
            hit["truncated"] = True
            cut += 1
        hits.append(hit)
    out: dict[str, Any] = {"total": res.total, "hits": hits}
    if cut:
        out["truncated_hits"] = cut
    return out


def _strict(tool: Tool) -> Tool:
    """``tool`` refusing unknown arguments, naming them and the ones it takes, and values of
    another JSON type than its schema says.

    The SDK's argument model ignores extra keys; a subclass of it forbids them (checked before
    the tool runs, so nothing is searched or written), and the published input schema says
    ``additionalProperties: false`` so that a client can tell before calling. The subclass is
    strict too: the SDK's lax model ran ``"limit": "2"`` and ``2.0`` as 2, which the schema
    (``"type": "integer"``) and the Python API refuse. And the arguments are validated as
    sent (:func:`_as_sent_metadata`): the SDK read a JSON *string* given for an object or an
    array as that value (``"filter": "{\\"kind\\": ...}"``), where the schema says object.
    """
    from pydantic import BaseModel, ConfigDict, model_validator  # with the mcp extra

    _AsSentMetadata = _as_sent_metadata()

    base: type[BaseModel] = tool.fn_metadata.arg_model
    known = {field.alias or name for name, field in base.model_fields.items()}
    integers = {
        field.alias or name
        for name, field in base.model_fields.items()
        if field.annotation is int or field.annotation == int | None
    }

    class StrictArguments(base):  # type: ignore[valid-type,misc]
        # strict: a value of another JSON type is refused, not converted (pydantic's lax
        # mode read "limit": "2" and 2.0 as 2, where the schema says integer and the Python
        # API refuses them)
        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True, strict=True)

        @model_validator(mode="before")
        @classmethod
        def _only_known(cls, data: Any) -> Any:
            if isinstance(data, dict):
                unknown = sorted(str(k) for k in data if k not in known)
                if unknown:  # (the error goes on with the arguments it takes)
                    # (at most 10 names of 60 characters: a hostile call's keys are not
                    # echoed whole into the agent's context)
                    # (redacted first: a registered key given as a name was shown; attacks73)
                    shown = [_cut(redact(k)) for k in unknown]
                    more = f" and {len(shown) - 10} more" if len(shown) > 10 else ""
                    raise ValueError(f"unknown argument(s) {shown[:10]}{more}")
                # JSON true / false is no count (pydantic would read true as 1: a search
                # for one hit that the agent never asked for; the Python API refuses it).
                flags = sorted(k for k in integers if isinstance(data.get(k), bool))
                if flags:
                    raise ValueError(
                        f"argument '{flags[0]}' must be an integer, "
                        f"got {str(data[flags[0]]).lower()}"
                    )
            return data

    StrictArguments.__name__ = base.__name__
    meta = tool.fn_metadata
    tool.fn_metadata = _AsSentMetadata(
        arg_model=StrictArguments,
        output_schema=meta.output_schema,
        output_model=meta.output_model,
        wrap_output=meta.wrap_output,
    )
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    return tool


@functools.cache
def _as_sent_metadata() -> Any:
    """The SDK's ``FuncMetadata`` (a tool's argument model and output settings) without its
    ``pre_parse_json``: each argument is validated as the client sent it.

    Why (helper leftovers64): the SDK's default reads a string argument as JSON where the
    field is not a ``str`` (its workaround for clients that send ``"[\\"a\\"]"`` for an
    array), so ``"filter": "{\\"kind\\": \\"resource\\"}"`` ran as the filter, where
    the published schema says ``object`` and strict integers were already refused: a
    client learnt that the schema is not what the server checks. A subclass (the SDK reads
    ``tool.fn_metadata``'s fields and methods live), no patching."""
    from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata

    class AsSentMetadata(FuncMetadata):
        def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
            return dict(data)

    return AsSentMetadata


def _cut(text: str) -> str:
    """``text`` cut to :data:`_INPUT_CHARS` characters (an argument an error shows)."""
    return text if len(text) <= _INPUT_CHARS else text[:_INPUT_CHARS] + "..."


def _argument_error(where: str, exc: ValidationError, schema: dict[str, Any]) -> str:
    """One line per refused argument, then what the tool takes.

    Why: the SDK's message was pydantic's dump (``1 validation error for StrictArguments``,
    ``[type=missing, input_value={}, ...]``, a URL per error): the model name is ours, the
    rest is noise to an agent that needs to know which argument to fix and how."""
    lines = []
    for err in exc.errors(include_url=False):
        msg = str(err.get("msg", "invalid"))
        msg = msg.removeprefix("Value error, ")
        loc = err.get("loc") or ()
        if not loc:
            lines.append(msg)
            continue
        name = str(loc[0]) + "".join(f"[{x}]" for x in loc[1:])
        if err.get("type") == "missing":
            lines.append(f"missing required argument '{name}'")
            continue
        # (redacted, then cut: a registered key given as an argument's value was shown
        # whole, up to 60 characters; helper attacks73)
        shown = _cut(redact(repr(err.get("input"))))
        lines.append(f"argument '{name}': {msg[:1].lower()}{msg[1:]} (got {shown})")
    return "; ".join(lines) + f". {where} takes {_signature(schema)}"


def _signature(schema: dict[str, Any]) -> str:
    """``query (string, required), limit (integer 1..1000, default 10), ...`` from ``schema``
    (so that the agent can correct its call from the error alone)."""
    required = set(schema.get("required", ()))
    parts = []
    for name, spec in schema.get("properties", {}).items():
        kinds = [s for s in spec.get("anyOf", [spec]) if s.get("type") != "null"]
        kind = "/".join(
            f"array of {k['items'].get('type', 'value')}" if "items" in k else str(k["type"])
            for k in kinds
            if "type" in k
        )
        kind = kind or "value"
        if "minimum" in spec and "maximum" in spec:
            kind += f" {spec['minimum']}..{spec['maximum']}"
        elif "minimum" in spec:
            kind += f" >= {spec['minimum']}"
        default = spec.get("default")
        extra = (
            "required"
            if name in required
            else "optional"
            if default is None
            else f"default {json.dumps(default)}"
        )
        parts.append(f"{name} ({kind}, {extra})")
    return ", ".join(parts)


_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate code point (a JSON string's unpaired ``\\ud800``..``\\udfff`` escape):
no Unicode text, and the SDK can neither read nor write it."""


def _no_constant(name: str) -> Any:
    """``json.loads``'s hook for ``NaN`` / ``Infinity``: refused (not JSON, RFC 8259)."""
    raise ValueError(f"{name} is not JSON")


def _int_or_beyond(digits: str) -> int | float:
    """``json.loads``'s hook for an integer: the ``int``, or for one of more digits than
    Python converts (``sys.get_int_max_str_digits``, 4,300) its sign's infinity: a number
    past every range, which no id or argument takes. Why (helper attacks78): ``int()``'s
    ``ValueError`` made a request holding a 5,000-digit number anywhere (an id, a tool's
    ``limit``) a "Parse error: the line is not JSON" to ``id: null``, though it is JSON and
    its id was readable: its client waited on that id for an answer that never came."""
    most = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if most and len(digits.lstrip("-")) > most:
        return -math.inf if digits.startswith("-") else math.inf
    return int(digits)


_SDK_DEPTH = 200
"""About how deep the SDK's JSON parser (pydantic's) reads a message (mcp 2.3, measured):
deeper JSON is refused by it, though Python's parser reads it (an Invalid Request then)."""


def _text_of(value: Any) -> str:
    """``value`` (decoded JSON) as one text, to look for lone surrogates in (``""`` where
    it cannot be written: nested deeper than Python's encoder goes)."""
    try:
        return json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):
        return ""


MAX_WHOLE_ID = 2**53 - 1
"""The largest whole-number JSON float (``7.0``, ``1e3``) served as the integer id it equals:
JSON has one number type (RFC 8259; JSON Schema's ``integer``, which MCP's ``RequestId``
schema names, takes ``1.0``); beyond 2**53 a double no longer says which integer was meant."""


def _usable_id(value: Any) -> str | int | None:
    """``value`` as a request id an answer can carry: a string (of Unicode text) or an integer
    (MCP: "a string or integer ID ... MUST NOT be null"), a whole-number float within
    :data:`MAX_WHOLE_ID` as that integer, else ``None``."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_WHOLE_ID:
        return int(value)
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    if isinstance(value, str) and _SURROGATE.search(value):
        return None  # (the SDK's writer cannot encode it; JSON-RPC: "MUST be Null")
    return value


class _Screened(NamedTuple):
    """What :func:`_screen` made of one stdin line."""

    answer: Any
    """The ``JSONRPCError`` that answers the line, or ``None``: the line is passed on."""
    line: str
    """The line the SDK is given (the line itself, or with a whole-number float id written
    as the integer, which the SDK's strict parser takes)."""
    request_id: str | int | None = None
    """The id of a request passed on (its answer is awaited before the server exits)."""
    cancelled: str | int | None = None
    """The id a ``notifications/cancelled`` names (never answered: nothing to await)."""
    method: str | None = None
    """A request's method (a cancel read while requests wait drops them, but ``initialize``)."""


def _refusal(line: str) -> Any:
    """``None`` when the SDK reads ``line`` (or its whole-number-id form, :func:`_screen`) as
    the JSON-RPC message it is; else the ``JSONRPCError`` that answers it."""
    return _screen(line).answer


def _cancelled_id(message: Any) -> str | int | None:
    """The request id a ``notifications/cancelled`` names, else ``None``."""
    params = message.params if message.method == "notifications/cancelled" else None
    found = params.get("requestId") if isinstance(params, dict) else None
    return found if isinstance(found, str | int) and not isinstance(found, bool) else None


def _whole_id_line(sent: dict[str, Any]) -> str | None:
    """``sent`` (a request whose id is a whole-number float) written with the id as the
    integer it equals, when that is a request the SDK reads; else ``None``."""
    from mcp_types import JSONRPCRequest
    from pydantic import ValidationError

    whole = _usable_id(sent["id"])
    if not isinstance(whole, int):
        return None
    try:
        line = json.dumps({**sent, "id": whole}, ensure_ascii=False, allow_nan=False)
        JSONRPCRequest.model_validate_json(line, by_name=False)
    except (ValueError, RecursionError, ValidationError):
        return None
    return line


_ANSWER_KEYS = frozenset({"result", "error"})
"""The top-level keys beside which a request's fields may be read by the SDK's union of
message models as a response (never answered): only then does the union decide."""


@functools.cache
def _keys_kept_request() -> Any:
    """The SDK's ``JSONRPCRequest`` that keeps the keys it does not take (``model_extra``),
    decoded: the same fields and checks, one parse. Why (helper leftovers68c): whether a
    request has a ``"result"`` or ``"error"`` key beside its fields was guessed from its text
    (those words before a quote, or any ``\\u`` escape, since a key may spell a letter so:
    ``"\\u0065rror"``), and every line so guessed was parsed a second time by the SDK's
    union: each request with non-ASCII text from an ``ensure_ascii`` client (Python's
    ``json.dumps``), or a query ending in "error", paid 2x; and the guess itself, a regular
    expression with no literal to skip to, took ~19 ms a megabyte. The keys themselves,
    decoded by the one parse, say it exactly (``bench/bench_mcp_gate_parse.py``)."""
    from mcp_types import JSONRPCRequest
    from pydantic import ConfigDict

    class KeysKeptRequest(JSONRPCRequest):
        model_config = ConfigDict(extra="allow")

    return KeysKeptRequest


_TOO_DEEP = (
    f"Invalid Request: JSON nested deeper than this server reads (about {_SDK_DEPTH} levels); "
    + too_deep_message("a tool's filter")
)
"""The answer to a line nested past Python's JSON reader (its id unread: ``null``)."""


def _filter_key_twice(line: str) -> str | None:
    """The error text for a ``tools/call`` line whose ``filter`` argument gives a key twice
    in one object (:func:`~treehop.filters.duplicate_key_message`), else ``None``.

    Why (helper attacks90; attacks89 left it): the SDK's reader, as Python's ``json``,
    keeps the last of a duplicated key silently, so ``{"field": "team", "field": "x"}``
    ran on ``x`` (and its error named ``x``). Read only for a call whose text names a
    ``filter`` (or holds a ``\\u`` escape, which may spell it): one more parse of the line,
    linear; a duplicated key elsewhere in the request is left as the SDK reads it."""
    if '"filter"' not in line and "\\u" not in line:
        return None
    try:
        sent = json.loads(line, object_pairs_hook=marked_pairs, parse_int=_int_or_beyond)
    except (ValueError, RecursionError):
        return None
    params = sent.get("params") if isinstance(sent, dict) else None
    arguments = params.get("arguments") if isinstance(params, dict) else None
    found = arguments.get("filter") if isinstance(arguments, dict) else None
    twice = first_duplicate_key(found) if found is not None else None
    if twice is None:
        return None
    name = params.get("name") if isinstance(params, dict) else None
    tool = shown_name(name) if isinstance(name, str) else "?"
    return f"Invalid params: tool {tool}: DuplicateFilterKeyError: " + duplicate_key_message(
        "filter", twice
    )


def _screen(line: str) -> _Screened:
    """``line`` passed on (``answer`` ``None``) when the SDK's own parser reads it as the
    JSON-RPC message it is, or answered (``answer``, the ``JSONRPCError``).

    JSON-RPC 2.0 answers a line that is not JSON with a Parse error (``-32700``, ``id:
    null``), and JSON that is no valid request with an Invalid Request (``-32600``), carrying
    the request's id where it could be read (its client waits on that id), else ``null``.
    The SDK's stdio transport (mcp 2.3) answers neither: a line its parser refuses is handed
    to the server as an exception, logged and dropped, and a request whose ``id`` is an
    object, an array, a bool, ``null`` or a fraction is read as a *notification* (the id
    ignored) and never answered. Which is which, decided as the SDK's own streamable-HTTP
    transport decides it: Python's ``json.loads`` says whether the line is JSON (so a string
    holding an escaped lone surrogate, ``"\\ud800"``, is JSON by RFC 8259's grammar, which
    the SDK's stdio parser refuses: an Invalid Request, answered to its id when the id itself
    is Unicode text). ``NaN`` / ``Infinity`` are no JSON. Nothing of the line is repeated in
    the answer (it may be megabytes). Linear in the line: a request is parsed once more than
    the SDK parses it (1.5 ms a megabyte, as one of the SDK's message models), a notification
    twice more (the SDK's union, then Python's parser to see whether it had an ``id``).

    A request whose ``id`` is a whole-number float (``7.0``) is passed on with the integer
    (``7``; the answer carries ``7``, the same JSON number): JSON-RPC takes any number, and the
    SDK's strict ``RequestId`` refused it. A fraction (``1.5``) stays an Invalid Request."""
    from mcp_types import (
        INVALID_PARAMS,
        INVALID_REQUEST,
        PARSE_ERROR,
        ErrorData,
        JSONRPCError,
        JSONRPCNotification,
        JSONRPCRequest,
        jsonrpc_message_adapter,
    )
    from pydantic import ValidationError

    try:  # (a request, the common case: a third of the cost of the SDK's union of four)
        request = _keys_kept_request().model_validate_json(line, by_name=False)
    except ValidationError:
        pass
    else:
        twice = _filter_key_twice(line) if request.method == "tools/call" else None
        if twice is not None:
            error = ErrorData(code=INVALID_PARAMS, message=twice)
            return _Screened(JSONRPCError(jsonrpc="2.0", id=request.id, error=error), line)
        if not _ANSWER_KEYS.intersection(request.model_extra or ()):
            return _Screened(None, line, request_id=request.id, method=request.method)
        # (a request's fields beside a "result" or an "error": the SDK's union may read it
        # as a response, never answered; the union decides, as the SDK's reader does)
        if isinstance(jsonrpc_message_adapter.validate_json(line, by_name=False), JSONRPCRequest):
            return _Screened(None, line, request_id=request.id, method=request.method)
        return _Screened(None, line)
    cancelled = None
    try:
        message = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        sdk_refused = True
        unicode_note = any(e.get("type") == "json_invalid" for e in exc.errors()[:20])
    else:
        if not isinstance(message, JSONRPCNotification):
            return _Screened(None, line)
        cancelled = _cancelled_id(message)
        if '"id"' not in line:
            return _Screened(None, line, cancelled=cancelled)
        sdk_refused, unicode_note = False, False
    try:
        sent = json.loads(line, parse_constant=_no_constant, parse_int=_int_or_beyond)
    except RecursionError:
        # (JSON nested past Python's reader, a filter most often: told so, with the limits;
        # it was "the line is not JSON", which it is; helper attacks90)
        error = ErrorData(code=INVALID_REQUEST, message=_TOO_DEEP)
        return _Screened(JSONRPCError(jsonrpc="2.0", id=None, error=error), line)
    except ValueError:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
        return _Screened(JSONRPCError(jsonrpc="2.0", id=None, error=error), line)
    if not sdk_refused and not (isinstance(sent, dict) and "id" in sent):
        return _Screened(None, line, cancelled=cancelled)  # (only mentions "id" in its params)
    request_id = None
    if isinstance(sent, dict) and "method" in sent:
        request_id = _usable_id(sent.get("id"))
        if not sdk_refused and isinstance(sent["id"], float):
            whole = _whole_id_line(sent)
            if whole is not None:
                method = sent["method"] if isinstance(sent["method"], str) else None
                return _Screened(None, whole, request_id=request_id, method=method)
    if unicode_note and _SURROGATE.search(_text_of(sent)):
        why = "a string in it is no Unicode text (an unpaired surrogate escape)"
    elif unicode_note:
        # (JSON that the SDK's parser refuses and Python's reads: nested deeper than it reads,
        # or a number past its range, ``1111...1.5`` of 5,000 digits, which was answered
        # "nested deeper" too)
        why = (
            f"JSON the server's parser does not read (nested deeper than {_SDK_DEPTH} levels, "
            "or a number past its range)"
        )
    elif isinstance(sent, dict) and "method" in sent and "id" in sent and request_id is None:
        why = "a request id must be a string or an integer"
    else:
        why = "not a JSON-RPC 2.0 request, notification or response"
    error = ErrorData(code=INVALID_REQUEST, message=f"Invalid Request: {why}")
    return _Screened(JSONRPCError(jsonrpc="2.0", id=request_id, error=error), line)


def _too_long(line: TooLong) -> _Screened:
    """The answer to a stdin line longer than :data:`MAX_LINE_CHARS`: an Invalid Request to
    the id its head names before anything nested (:func:`~treehop._mcp_wire.head_id`: a
    client waits on that id), else ``id: null`` (the id is in the part dropped unread)."""
    from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError

    why = (
        f"Invalid Request: a line longer than {line.limit:,} characters (the server's "
        "MAX_LINE_CHARS); it was dropped unread: send the request on one shorter line"
    )
    error = ErrorData(code=INVALID_REQUEST, message=why)
    request_id = _usable_id(head_id(line.head))
    return _Screened(JSONRPCError(jsonrpc="2.0", id=request_id, error=error), "")


EOF_GRACE_S = 60.0
"""How long the server, its stdin closed, still waits for the requests it is running to be
answered before it exits. Why: the SDK cancels every request in flight when stdin ends, so
a client that writes its requests and closes (``printf '...' | treehop mcp``) lost about half
of 2,000 pings' answers; a request still running after this long is cancelled as before (a
bound, so that a hung call cannot keep the process alive)."""


def _id_key(request_id: str | int) -> str | int:
    """``request_id`` as the SDK correlates it (``"7"`` and ``7`` are one id: its
    ``coerce_request_id``), so that a ``notifications/cancelled`` naming ``"7"``, which
    cancels request ``7`` unanswered, frees its place too."""
    from mcp.shared.dispatcher import coerce_request_id

    return coerce_request_id(request_id)


def _blank(line: str) -> bool:
    """Whether ``line`` holds only JSON whitespace (RFC 8259: space, tab, CR, LF): no
    message, and not answered. Why (helper leftovers68c): MCP's stdio transport is
    newline-delimited JSON-RPC, and a blank line between messages is no message; the SDK's
    own stdio readers answer none (the Python SDK hands the parse failure to the server,
    which logs it at debug level and drops it; the TypeScript SDK reports it to its
    ``onerror``), where this gate answered each with a Parse error to ``id: null``, which a
    client that separates its messages with blank lines saw as errors it had not caused."""
    return not line.strip(" \t\r\n")


class _End:
    """The end of stdin, as :meth:`_LineGate._read` hands it on."""


_END = _End()


class _LineGate:
    """The stdio server's stdin lines, each one the server cannot serve answered here
    (:func:`_screen`) instead of being passed on: what the SDK's ``stdio_server`` reads as
    its ``stdin`` (it takes any async iterable of lines). Answers go on the transport's write
    stream, given by :meth:`answer_on` once the transport is open.

    It also keeps the ids and sizes of the requests passed on and not yet answered (the
    write stream :meth:`answer_on` hands back sees each answer go out; a
    ``notifications/cancelled`` drops its id, as the SDK never answers a cancelled request):
    at the end of stdin it waits up to ``grace_s`` (:data:`EOF_GRACE_S`) for them before it
    ends the lines, which is when the SDK cancels what is still running.

    Backpressure: a request is passed on only while fewer than ``max_in_flight``
    (:data:`MAX_IN_FLIGHT`) are awaited and its characters fit, with theirs, in
    ``max_chars`` (:data:`~treehop._mcp_wire.MAX_IN_FLIGHT_CHARS`; one request alone always
    runs). Past either, lines read wait here in order (a *waiting room* of at most
    ``max_in_flight`` lines and about ``waiting_chars`` characters, the line bound), and once
    that is full stdin is read no further: the client's next lines wait in its pipe.

    A ``notifications/cancelled`` read while lines wait is passed on at once, ahead of them,
    and a waiting request it names is dropped unanswered (MCP: the receiver "SHOULD stop
    processing the cancelled request ... not send a response"; the SDK, given the cancel
    first, would have run it). Why (helper leftovers67b): with the gate closed at the limit,
    a cancel waited behind every request in flight, so a client could not stop the calls that
    held the limit. While requests wait, stdin is read racing the answers (a read abandoned
    for a freed place is taken up by the next one: the source must be cancel-safe, as
    :class:`~treehop._mcp_wire.WireLines` is), so both a cancel and a freed place are seen at
    once. Other lines keep their order; below the limits every line is read and passed on
    one at a time, as before.

    Once the waiting room is full, stdin is still read, for cancels: each one is applied and
    passed on at once (nothing of it is kept), so a cancel sent behind a full room still
    reaches the server. The first line read there that is no cancel waits past the room (one
    line more, at most one line's characters), and then stdin is read no further until a
    place frees. Why (helper leftovers68c): a client that had filled the room could not
    cancel anything until a request it could no longer stop was answered. A flood of cancels
    holds nothing (each is passed on as it is read, and a cancel naming no waiting request
    costs a dictionary look-up, not a walk of the room)."""

    def __init__(
        self,
        lines: AsyncIterable[str | TooLong],
        *,
        grace_s: float = EOF_GRACE_S,
        max_in_flight: int = MAX_IN_FLIGHT,
        max_chars: int = MAX_IN_FLIGHT_CHARS,
        waiting_chars: int = MAX_LINE_CHARS,
    ) -> None:
        import anyio

        self._lines = aiter(lines)
        self._write: Any = None
        self._ready = anyio.Event()
        self._grace_s = grace_s
        self._grace_ends: float | None = None
        self._pending: dict[str | int, collections.deque[int]] = {}
        self._count = 0
        self._chars = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._max_in_flight = max(1, max_in_flight)
        self._max_chars = max(1, max_chars)
        # (each waiting line with its request's id key, made once: a cancel compares keys)
        self._waiting: collections.deque[tuple[_Screened, str | int | None]] = collections.deque()
        self._waiting_keys: collections.Counter[str | int] = collections.Counter()
        self._waiting_chars = 0
        self._past_room = False  # (a line waits past the full room: read no further)
        self._waiting_room = max(1, waiting_chars)
        self._ended = False
        self._freed = anyio.Event()

    def answer_on(self, write: Any) -> _AnswerWatch:
        """Answer refused lines on ``write``; the stream to give the server instead of it."""
        self._write = write
        self._ready.set()
        return _AnswerWatch(write, self)

    @property
    def in_flight(self) -> int:
        """How many requests passed on are not answered yet."""
        return self._count

    @property
    def in_flight_chars(self) -> int:
        """Their lines' characters."""
        return self._chars

    @property
    def waiting(self) -> int:
        """How many lines read wait to be passed on (the limits are reached)."""
        return len(self._waiting)

    def answered(self, request_id: str | int) -> None:
        """``request_id``'s answer went out (or it was cancelled): no longer awaited."""
        import anyio

        key = _id_key(request_id)
        sizes = self._pending.get(key)
        if not sizes:
            return  # (a cancel after the answer, or an answer to no request read here)
        self._count -= 1
        self._chars -= sizes.popleft()
        if not sizes:
            del self._pending[key]
            if not self._pending:
                self._idle.set()
        self._freed.set()  # (wakes a wait for room; the next wait takes a new event)
        self._freed = anyio.Event()

    def _fits(self, screened: _Screened) -> bool:
        """Whether ``screened`` may be passed on now (a line that is no request always
        may: only requests are awaited)."""
        if screened.request_id is None:
            return True
        if self._count >= self._max_in_flight:
            return False
        return self._count == 0 or self._chars + len(screened.line) <= self._max_chars

    def _pass_on(self, screened: _Screened) -> str:
        """``screened``'s line, counted in flight (a request) or its cancel applied."""
        import anyio

        if screened.cancelled is not None:
            self.answered(screened.cancelled)
        if screened.request_id is not None:
            if not self._pending:
                self._idle = anyio.Event()
            self._pending.setdefault(_id_key(screened.request_id), collections.deque()).append(
                len(screened.line)
            )
            self._count += 1
            self._chars += len(screened.line)
        return screened.line

    def _wait(self, screened: _Screened) -> None:
        self._past_room = self._room_full()
        rid = screened.request_id
        key = None if rid is None else _id_key(rid)
        self._waiting.append((screened, key))
        self._waiting_chars += len(screened.line)
        if key is not None:
            self._waiting_keys[key] += 1

    def _next_waiting(self) -> _Screened:
        screened, key = self._waiting.popleft()
        self._left_room(screened, key)
        return screened

    def _left_room(self, screened: _Screened, key: str | int | None) -> None:
        """``screened`` (its id's ``key``) no longer waits (passed on or dropped): the room
        has a place."""
        self._waiting_chars -= len(screened.line)
        self._past_room = False
        if key is not None:
            self._waiting_keys[key] -= 1
            if self._waiting_keys[key] <= 0:
                del self._waiting_keys[key]

    def _drop_waiting(self, cancelled: str | int) -> None:
        """Drop the waiting requests ``cancelled`` names (never an ``initialize``: MCP says
        a client must not cancel it, and the SDK runs it whole).

        The waiting ids' keys were made as they came (:meth:`_wait`). Why (helper
        attacks80): each cancel made every waiting id's key again, and ``_id_key`` of a
        request id of millions of characters reads it whole (``int()``, and its error's
        ``repr``): each 80-character cancel cost ~0.1-0.5 s of the event loop while such a
        request waited, without end for a client sending cancels."""
        key = _id_key(cancelled)
        if key not in self._waiting_keys:
            return  # (the common case in a flood of cancels: no walk of the room)
        kept: collections.deque[tuple[_Screened, str | int | None]] = collections.deque()
        for screened, waiting_key in self._waiting:
            if waiting_key is not None and screened.method != "initialize" and waiting_key == key:
                self._left_room(screened, waiting_key)
            else:
                kept.append((screened, waiting_key))
        self._waiting = kept

    def _room_full(self) -> bool:
        return (
            len(self._waiting) >= self._max_in_flight or self._waiting_chars >= self._waiting_room
        )

    async def _read(self) -> str | TooLong | _End:
        try:
            return await self._lines.__anext__()
        except StopAsyncIteration:
            return _END

    async def _read_or_freed(self) -> str | TooLong | _End | None:
        """The next line, or ``None`` when an answer frees a place first (the read then
        goes on in the source, for the next call: it must be cancel-safe)."""
        import anyio

        got: list[str | TooLong | _End] = []
        freed = self._freed

        async def read() -> None:
            got.append(await self._read())
            tg.cancel_scope.cancel()

        async def room() -> None:
            await freed.wait()
            tg.cancel_scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            tg.start_soon(room)
        return got[0] if got else None

    async def _after_end(self) -> None:
        """Stdin has ended: wait for a freed place (requests wait) or for every answer,
        within ``grace_s`` of the end; past it, raise ``StopAsyncIteration``."""
        import anyio

        if self._grace_ends is None:
            self._grace_ends = anyio.current_time() + self._grace_s
        with anyio.move_on_after(self._grace_ends - anyio.current_time()):
            if self._waiting:
                await self._freed.wait()
                return
            if self._pending:
                await self._idle.wait()
        raise StopAsyncIteration

    def __aiter__(self) -> _LineGate:
        return self

    async def __anext__(self) -> str:
        from mcp.shared.message import SessionMessage

        while True:
            if self._waiting and self._fits(self._waiting[0][0]):
                return self._pass_on(self._next_waiting())
            if self._ended:
                await self._after_end()
                continue
            held = bool(self._waiting) or self._count >= self._max_in_flight
            held = held or self._chars >= self._max_chars
            if held and self._past_room:
                await self._freed.wait()  # (stdin read no further until one is answered)
                continue
            line = await (self._read_or_freed() if held else self._read())
            if line is None:
                continue  # (a place was freed: the first waiting line may go)
            if isinstance(line, _End):
                self._ended = True
                continue
            if isinstance(line, str) and _blank(line):
                continue
            screened = _too_long(line) if isinstance(line, TooLong) else _screen(line)
            if screened.answer is not None:
                await self._ready.wait()
                await self._write.send(SessionMessage(screened.answer))
                continue
            if screened.cancelled is not None and self._waiting:
                self._drop_waiting(screened.cancelled)
                return self._pass_on(screened)  # (ahead of the waiting lines)
            if self._waiting or not self._fits(screened):
                self._wait(screened)
                continue
            return self._pass_on(screened)


class _AnswerWatch:
    """The transport's write stream as the server writes on it, telling the
    :class:`_LineGate` of each answer (a response or an error to a request id) it sends."""

    def __init__(self, inner: Any, gate: _LineGate) -> None:
        self._inner = inner
        self._gate = gate

    async def send(self, item: Any) -> None:
        from mcp_types import JSONRPCError, JSONRPCResponse

        message = getattr(item, "message", None)
        shown = _redacted_answer(message)
        if shown is not message:
            item = dataclasses.replace(item, message=shown)
        await self._inner.send(item)
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self._gate.answered(message.id)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _AnswerWatch:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


_ERROR_CHARS = 2_000
"""The most characters of a JSON-RPC error's ``message`` (and of a string ``data``) the server
writes: the SDK's own refusals echo the caller's text (``Method not found`` with the method,
``Unknown prompt: <name>``), a hostile megabyte among it."""


def _shown_text(value: Any, limit: int | None = None) -> Any:
    """``value`` with each string in it redacted (and cut to ``limit`` characters, a key the
    cut runs through masked whole); other JSON values as they are."""
    if isinstance(value, str):
        text = redact(value)
        return text if limit is None else cut_text(text, limit)
    if isinstance(value, dict):
        return {k: _shown_text(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown_text(v, limit) for v in value]
    return value


def _redacted_answer(message: Any) -> Any:
    """``message`` (an answer the server is about to write) with the caller's text in its
    error redacted: a JSON-RPC error's ``message`` and ``data`` (cut to
    :data:`_ERROR_CHARS`), a tool error's (``isError``) text; ``message`` itself when nothing
    changed. Results that are no error are the index's own content, left as they are.

    Why (helper attacks89): the stdio server's errors echoed a key the client sent where a
    name was expected, whole: ``Method not found`` (its ``data``: the method), ``Unknown
    prompt: <name>``, ``Unknown resource`` (``data.uri``), ``Unknown tool: <name>``, and the
    core's ``NotFoundError`` for a ``target_uri`` / ``ls`` / ``read`` / ``tree`` URI holding
    one (the CLI redacts every error it prints; this is the MCP server's one exit)."""
    from mcp_types import JSONRPCError, JSONRPCResponse

    if isinstance(message, JSONRPCError):
        error = message.error
        shown = error.model_copy(
            update={
                "message": _shown_text(error.message, _ERROR_CHARS),
                "data": _shown_text(error.data, _ERROR_CHARS),
            }
        )
        if shown == error:
            return message
        return message.model_copy(update={"error": shown})
    if isinstance(message, JSONRPCResponse):
        result = message.result
        if not (isinstance(result, dict) and result.get("isError") is True):
            return message
        content = result.get("content")
        shown_content = _shown_text(content)
        if shown_content == content:
            return message
        return message.model_copy(update={"result": {**result, "content": shown_content}})
    return message


def _redact_log_handlers() -> None:
    """A :class:`~treehop.redaction.RedactingFilter` on each handler of the root logger (the
    ``mcp`` SDK's ``RichHandler`` on stderr, the client's server log): a filter on a logger
    does not reach its children's records, a handler's sees every record it writes. Why
    (helper attacks89): the SDK logs a failed handler's traceback (``Unknown prompt:
    <name>``), a key given as the name in it."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def _lowlevel(server: Any) -> Any:
    """The low-level ``mcp.server.lowlevel.Server`` under an ``MCPServer``, or ``None``.

    ``MCPServer._lowlevel_server`` is private in mcp 2.3 and nothing public reaches it (the
    SDK's own in-memory client reads it the same way); ``run_stdio_async`` is the only public
    way to serve stdio, and it takes no stdin. This is the one place treehop reads it;
    ``tests/test_leftovers64_mcp.py`` fails if the name goes or changes type. Without it the
    server runs the SDK's own stdio loop (lines it cannot serve unanswered)."""
    from mcp.server.lowlevel import Server

    found = getattr(server, "_lowlevel_server", None)
    return found if isinstance(found, Server) else None


SEARCH_OPTIONS = ("target_uri", "limit", "since", "until", "filter", "tags", "tags_all")
"""The arguments of the ``find`` and ``search`` tools handed on to ``find`` / ``search`` as
they are (the rest: the query, ``session_id``, ``text_chars`` for the answer)."""
CONTEXT_FIND_OPTIONS = ("target_uri", "limit", "filter", "tags", "tags_all")
"""The ``context`` tool's arguments its ``find`` (for the file-target hint) takes."""


def _options(arguments: dict[str, Any], names: tuple[str, ...] = SEARCH_OPTIONS) -> dict[str, Any]:
    """``names``' values among a tool's ``arguments`` (its ``locals()``). Why: each tool's
    signature is its published schema, so the parameters stay written out per tool; the
    options they make are picked here once, not written again as a dict in each tool."""
    return {name: arguments[name] for name in names}


def build_server(
    client: AsyncTreehop,
    *,
    read_only: bool = False,
    line_chars: int = MAX_LINE_CHARS,
    write_deadline_s: float = WRITE_DEADLINE_S,
    max_in_flight: int = MAX_IN_FLIGHT,
    max_in_flight_chars: int | None = None,
) -> MCPServer:
    """An ``MCPServer`` whose tools call ``client`` (run it with ``.run("stdio")``).

    Over stdio, a stdin line longer than ``line_chars`` is answered with an Invalid Request
    and dropped unread, a message the client has not read within ``write_deadline_s``
    ends the session, and while ``max_in_flight`` requests, or ``max_in_flight_chars``
    characters of them (default :data:`~treehop._mcp_wire.IN_FLIGHT_LINES` times
    ``line_chars``), are not answered no further request is run and stdin is read only to
    let a cancellation through (:mod:`treehop._mcp_wire`, :class:`_LineGate`: memory
    bounded, and no hang, whatever the client does). Each limit is checked first
    (:func:`~treehop._mcp_wire.wire_limits`: ``InvalidConfigError`` naming it)."""
    limits = wire_limits(
        line_chars=line_chars,
        write_deadline_s=write_deadline_s,
        max_in_flight=max_in_flight,
        max_in_flight_chars=max_in_flight_chars,
    )
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.server.mcpserver.tools import Tool
        from mcp.types import ToolAnnotations
        from pydantic import ValidationError
    except ImportError as exc:  # pragma: no cover - depends on installed extras
        raise TreehopError(
            "the MCP server needs the 'mcp' extra: pip install -e '.[mcp]' in a treehop clone"
        ) from exc
    from . import __version__

    class ReadableTool(Tool):
        """A tool whose refused arguments read as :func:`_argument_error` says."""

        async def run(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return await super().run(*args, **kwargs)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                text = _argument_error(self.name, cause, self.parameters)
                raise ToolError(f"Error executing tool {self.name}: {text}") from cause

    tools: list[Tool] = []

    def tool(description: str, hints: dict[str, bool]) -> Callable[[_ToolFn], _ToolFn]:
        """Register a tool (strict about its arguments, see :func:`_strict`) with its MCP
        ``ToolAnnotations`` (``hints``: :data:`HINTS_READ` and its neighbours)."""

        def register(fn: _ToolFn) -> _ToolFn:
            annotations = ToolAnnotations(
                read_only_hint=hints["read_only_hint"],
                destructive_hint=hints["destructive_hint"],
                idempotent_hint=hints["idempotent_hint"],
                open_world_hint=False,
            )
            tools.append(
                _strict(
                    ReadableTool.from_function(fn, description=description, annotations=annotations)
                )
            )
            return fn

        return register

    async def guard(call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except NotFoundError as exc:
            if isinstance(exc, SessionNotFoundError):
                # Not a URI: ls / tree cannot help. This server has no tool that makes one.
                bare = str(exc).removesuffix(f": {SEARCH_SESSION_HINT}")
                raise ToolError(
                    f"NotFoundError: {bare}. session_id names a conversation session created "
                    "outside this server (treehop session new, or the Python API); leave "
                    "session_id out to search without one."
                ) from exc
            raise ToolError(
                f"NotFoundError: {exc}. List the parent directory with ls, or browse with tree."
            ) from exc
        except TreehopError as exc:
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc

    async def filtered(method: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """``method(*args, **kwargs)`` after the CLI's check of the call's own ``filter`` /
        ``tags`` / ``tags_all``: a field or tag label that no stored node has is an
        ``InvalidFilterError`` naming what the index holds (a typo answered as "no hits"
        would be believed); the core checks the rest."""

        async def checked() -> T:
            await acheck_filter_fields(
                client, kwargs["filter"], tags=(kwargs["tags"], kwargs["tags_all"])
            )
            return await method(*args, **kwargs)

        return await guard(checked)

    async def hits(
        method: Callable[..., Awaitable[FindResult]],
        query: str,
        options: dict[str, Any],
        text_chars: int,
        what: str,
        **extra: Any,
    ) -> dict[str, Any]:
        """The ``find`` / ``search`` tools' answer: ``method(query, **extra, **options)``'s
        hits (:func:`_result`), with the file-target ``hint`` when a file or chunk target
        matched nothing (the agent reads no log; ``what`` names the tool in it). A search
        planned into no queries (small talk) searched nothing: no hint. ``find``'s
        ``context_type`` goes to the hint too: it keeps only the targets of that type, so
        the hint names those and the type (helper leftovers71b: it was told ``None`` and
        named a target the type had left out)."""
        res = await filtered(method, query, **extra, **options)
        out = _result(res, text_chars)
        if res.query_plan is None or res.query_plan.queries:
            ctype = extra.get("context_type")
            hint = await guard(lambda: client._target_hint(res, ctype, options, what))
            if hint is not None:
                out["hint"] = hint
        return out

    @tool("Search the tree for one precise query (no LLM, fastest).", HINTS_READ)
    async def find(
        query: str,
        target_uri: str | None = None,
        limit: Limit = 10,
        since: str | None = None,
        until: str | None = None,
        text_chars: Chars = 1000,
        filter: Filter = None,
        tags: Tags = None,
        tags_all: TagsAll = None,
        context_type: ContextTypeArg = None,
    ) -> dict[str, Any]:
        """since/until: ISO-8601 dates; keep memories stated in [since, until)."""
        return await hits(
            client.find, query, _options(locals()), text_chars, "find", context_type=context_type
        )

    @tool(
        "Search for an open or conversational question: it is planned into several "
        "queries over documents, memories and skills whose results are merged.",
        HINTS_READ,
    )
    async def search(
        query: str,
        session_id: str | None = None,
        target_uri: str | None = None,
        limit: Limit = 10,
        since: str | None = None,
        until: str | None = None,
        text_chars: Chars = 1000,
        filter: Filter = None,
        tags: Tags = None,
        tags_all: TagsAll = None,
    ) -> dict[str, Any]:
        options = _options(locals())
        out = await hits(client.search, query, options, text_chars, "search", session_id=session_id)
        # Its hits' scores are fused ranks (1.0 first in every typed query), not the
        # similarities ``find`` answers; an agent comparing them across the two tools, or
        # against a floor, must be told (helper leftovers71d; the CLI's ``search --json``
        # says so since leftovers71c). Its output schema is an open object: a field added.
        return {"score_kind": SCORE_KIND_FUSED, **out}

    @tool(
        "A ready-to-use context block for a query, within max_tokens: the best hits "
        "at the most detailed tier that fits (content, else overview, else abstract). With "
        "session_id, hits given earlier in the same session are left out.",
        HINTS_CONTEXT,
    )
    async def context(
        query: str,
        max_tokens: Positive = 2000,
        session_id: str | None = None,
        target_uri: str | None = None,
        exclude_uris: list[str] | None = None,
        limit: Limit = 20,
        filter: Filter = None,
        tags: Tags = None,
        tags_all: TagsAll = None,
    ) -> dict[str, Any]:
        # (filter / tags / tags_all as find takes them, checked the same way: the block is
        # built from a find; helper leftovers64)
        cap = MAX_CONTEXT_TOKENS
        capped = isinstance(max_tokens, int) and max_tokens > cap
        out = await filtered(
            client.assemble_context,
            query,
            max_tokens=cap if capped else max_tokens,
            tiers=TIERS,
            session_id=session_id,
            exclude_uris=exclude_uris or (),
            target_uri=target_uri,
            limit=limit,
            filter=filter,
            tags=tags,
            tags_all=tags_all,
        )
        answer = {
            "text": out.text,
            "uris": out.uris,
            "tokens": out.tokens,
            "token_counter": out.token_counter,
        }
        if capped:
            answer["max_tokens_capped"] = cap
        if not out.uris and target_uri:
            # An empty block may be a budget or a session that left every hit out; only a
            # find that matched nothing earns find's file-target hint, so that find is run
            # again here (on an empty block with a target only: the common answer pays
            # nothing).
            options = _options(locals(), CONTEXT_FIND_OPTIONS)
            res = await filtered(client.find, query, **options)
            hint = await guard(lambda: client._target_hint(res, None, options, "context"))
            if hint is not None:
                answer["hint"] = hint
        return answer

    @tool(
        "List a directory: each child's URI, kind (directory, file, chunk, text), children "
        "(a chunked file: its chunks) and one-line summary.",
        HINTS_READ,
    )
    async def ls(uri: str = "viking://resources") -> dict[str, Any]:
        async def listing() -> list[Any]:
            try:
                return await client.ls(uri)
            except NotFoundError:
                if shown_root(uri, client.user) is None:
                    raise
                return []  # a root with nothing under it yet (see shown_root)

        entries = await guard(listing)
        out: dict[str, Any] = {
            "uri": uri,
            "entries": [
                {
                    "uri": e.uri,
                    "kind": e.kind,
                    "is_leaf": e.is_leaf,
                    "abstract": e.abstract,
                    "children": e.children,
                }
                for e in entries[:MAX_LIST_ENTRIES]
            ],
        }
        if len(entries) > MAX_LIST_ENTRIES:
            out["omitted"] = len(entries) - MAX_LIST_ENTRIES
        return out

    @tool("Read the full text of a file (a directory: its overview).", HINTS_READ)
    async def read(uri: str, max_chars: Positive = 20_000) -> dict[str, Any]:
        text = await guard(lambda: client.read(uri))
        cap = min(max_chars, MAX_READ_CHARS)
        return {"uri": uri, "text": text[:cap], "truncated": len(text) > cap}

    @tool(
        f"A subtree with its abstracts, down to depth levels (at most {MAX_TREE_DEPTH}).",
        HINTS_READ,
    )
    async def tree(uri: str = "viking://resources", depth: Depth = 2) -> dict[str, Any]:
        async def subtree() -> dict[str, Any]:
            try:
                return await client.tree(uri, min(depth, MAX_TREE_DEPTH))
            except NotFoundError:
                root = shown_root(uri, client.user)
                if root is None:
                    raise
                return _empty_root(root, depth)

        tree = await guard(subtree)
        out = _bounded_tree(tree, MAX_TREE_NODES)
        if depth > MAX_TREE_DEPTH:
            out["depth_capped"] = MAX_TREE_DEPTH
        return out

    if not read_only:

        @tool(
            "Remember a fact about the user (stored under viking://~/memories with "
            "the time it was said, so later searches can filter on time). A name already "
            "used in the category replaces that memory; the result says replaced: true.",
            HINTS_ADD_MEMORY,
        )
        async def add_memory(
            text: str,
            name: str | None = None,
            category: str = "notes",
            speaker: str | None = None,
            timestamp: str | None = None,
            tags: list[str] | None = None,
        ) -> dict[str, Any]:
            res = await guard(
                lambda: client.remember(
                    text,
                    name=name,
                    category=category,
                    speaker=speaker,
                    timestamp=timestamp,
                    tags=tags,
                )
            )
            # (replacing is the Python API's policy for a re-used name; said, not silent)
            return {"uri": res.turn_uris[0], "replaced": res.replaced}

    class StdioServer(MCPServer):
        """``MCPServer`` whose stdio loop answers every line it cannot serve (:func:`_refusal`).

        ``run_stdio_async`` is the SDK's own (mcp 2.3: ``stdio_server()`` into the low-level
        server's ``run``) with stdin read through :class:`_LineGate`; the low-level server is
        reached through :func:`_lowlevel` (private in the SDK)."""

        async def call_tool(self, name: str, arguments: dict[str, Any], *rest: Any) -> Any:
            if name not in tool_names:
                # (the SDK's "Unknown tool: <name>" wrote the name whole: a megabyte, a key)
                raise ToolError(
                    f"Unknown tool: {shown_name(name)}. This server's tools: "
                    f"{', '.join(sorted(tool_names))}"
                )
            return await super().call_tool(name, arguments, *rest)

        async def get_prompt(self, name: str, *rest: Any) -> Any:
            # This server has no prompts: the SDK answered a name with code 0 (its catch-all,
            # not a JSON-RPC error code) and logged a traceback for it; the spec's answer to
            # an unknown prompt name is Invalid params.
            from mcp.shared.exceptions import MCPError
            from mcp_types import INVALID_PARAMS

            if name not in {p.name for p in await self.list_prompts()}:
                raise MCPError(
                    INVALID_PARAMS, f"Unknown prompt: {shown_name(name)}. This server has none"
                )
            return await super().get_prompt(name, *rest)  # pragma: no cover - none registered

        async def run_stdio_async(self) -> None:
            from mcp.server.stdio import stdio_server

            _redact_log_handlers()
            lowlevel = _lowlevel(self)
            if lowlevel is None:  # pragma: no cover - another SDK's layout
                await super().run_stdio_async()
                return
            with wire(limit=limits.line_chars, deadline_s=limits.write_deadline_s) as (
                stdin,
                stdout,
            ):
                gate = _LineGate(
                    stdin,
                    max_in_flight=limits.max_in_flight,
                    max_chars=limits.max_in_flight_chars,
                    waiting_chars=limits.line_chars,
                )
                try:
                    async with stdio_server(stdin=gate, stdout=stdout) as (read, write):  # type: ignore[arg-type]
                        watched = gate.answer_on(write)
                        options = lowlevel.create_initialization_options()
                        await lowlevel.run(read, watched, options)
                except* ClientStuck as stuck:
                    # (a client that stopped reading: the session ends, the process exits;
                    # stdout is the client's, stderr is its server log)
                    print(f"treehop mcp: {stuck.exceptions[0]}", file=sys.stderr)

    tool_names = {t.name for t in tools}
    return StdioServer(
        name="treehop",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools,
        log_level="WARNING",
    )
