"""``treehop mcp``: the tree as a Model Context Protocol server (official ``mcp`` SDK, stdio).

Tools: ``find`` (one query, no LLM), ``search`` (session-aware, intent analysis when an LLM is
configured), ``context`` (a token-budgeted context block, :mod:`treehop.context_assembly`),
``ls``, ``read``, ``tree`` and ``add_memory`` (a time-stamped memory through
:func:`treehop.memory.remember`; left out with ``read_only=True``).

Every tool refuses arguments it does not know (as the Python API does), instead of the SDK's
default of dropping them: a misspelt option (``limt``, ``targetUri``) would otherwise be run
as if it had not been given, and the agent would never learn. The input schemas say so too
(``additionalProperties: false``). The server reports treehop's version in its handshake.

Every tool answers structured JSON (hits carry their ``viking://`` URI, score and provenance);
a treehop error becomes an MCP tool error (``isError``) whose message names the error type and
tells the model what to do, so an agent can correct its call instead of failing.

Needs the ``mcp`` extra (``pip install -e '.[mcp]'`` in a treehop clone); the SDK is imported
only here, so the core never requires it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

from pydantic import Field

from .context_assembly import TIERS
from .errors import SEARCH_SESSION_HINT, NotFoundError, SessionNotFoundError, TreehopError
from .models import FindResult, MatchedContext
from .redaction import redact
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
        "text": m.text[:text_chars],
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
        if len(hit["text"]) < len(m.text):
            hit["truncated"] = True
            cut += 1
        hits.append(hit)
    out: dict[str, Any] = {"total": res.total, "hits": hits}
    if cut:
        out["truncated_hits"] = cut
    return out


def _strict(tool: Tool) -> Tool:
    """``tool`` refusing unknown arguments, naming them and the ones it takes.

    The SDK's argument model ignores extra keys; a subclass of it forbids them (checked before
    the tool runs, so nothing is searched or written), and the published input schema says
    ``additionalProperties: false`` so that a client can tell before calling.
    """
    from pydantic import BaseModel, ConfigDict, model_validator  # with the mcp extra

    base: type[BaseModel] = tool.fn_metadata.arg_model
    known = {field.alias or name for name, field in base.model_fields.items()}
    integers = {
        field.alias or name
        for name, field in base.model_fields.items()
        if field.annotation is int or field.annotation == int | None
    }

    class StrictArguments(base):  # type: ignore[valid-type,misc]
        model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

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
    tool.fn_metadata.arg_model = StrictArguments
    tool.parameters = {**tool.parameters, "additionalProperties": False}
    return tool


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


def build_server(client: AsyncTreehop, *, read_only: bool = False) -> MCPServer:
    """An ``MCPServer`` whose tools call ``client`` (run it with ``.run("stdio")``)."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
        from mcp.server.mcpserver.tools import Tool
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

    def tool(description: str) -> Callable[[_ToolFn], _ToolFn]:
        """Register a tool (strict about its arguments, see :func:`_strict`)."""

        def register(fn: _ToolFn) -> _ToolFn:
            tools.append(_strict(ReadableTool.from_function(fn, description=description)))
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

    @tool("Search the tree for one precise query (no LLM, fastest).")
    async def find(
        query: str,
        target_uri: str | None = None,
        limit: Limit = 10,
        since: str | None = None,
        until: str | None = None,
        text_chars: Chars = 1000,
    ) -> dict[str, Any]:
        """since/until: ISO-8601 dates; keep memories stated in [since, until)."""
        res = await guard(
            lambda: client.find(query, target_uri=target_uri, limit=limit, since=since, until=until)
        )
        return _result(res, text_chars)

    @tool(
        "Search for an open or conversational question: it is planned into several "
        "queries over documents, memories and skills whose results are merged."
    )
    async def search(
        query: str,
        session_id: str | None = None,
        target_uri: str | None = None,
        limit: Limit = 10,
        since: str | None = None,
        until: str | None = None,
        text_chars: Chars = 1000,
    ) -> dict[str, Any]:
        res = await guard(
            lambda: client.search(
                query,
                session_id=session_id,
                target_uri=target_uri,
                limit=limit,
                since=since,
                until=until,
            ),
        )
        return _result(res, text_chars)

    @tool(
        "A ready-to-use context block for a query, within max_tokens: the best hits "
        "at the most detailed tier that fits (content, else overview, else abstract). With "
        "session_id, hits given earlier in the same session are left out."
    )
    async def context(
        query: str,
        max_tokens: Positive = 2000,
        session_id: str | None = None,
        target_uri: str | None = None,
        exclude_uris: list[str] | None = None,
        limit: Limit = 20,
    ) -> dict[str, Any]:
        cap = MAX_CONTEXT_TOKENS
        capped = isinstance(max_tokens, int) and max_tokens > cap
        out = await guard(
            lambda: client.assemble_context(
                query,
                max_tokens=cap if capped else max_tokens,
                tiers=TIERS,
                session_id=session_id,
                exclude_uris=exclude_uris or (),
                target_uri=target_uri,
                limit=limit,
            )
        )
        answer = {
            "text": out.text,
            "uris": out.uris,
            "tokens": out.tokens,
            "token_counter": out.token_counter,
        }
        if capped:
            answer["max_tokens_capped"] = cap
        return answer

    @tool(
        "List a directory: each child's URI, kind (directory, file, chunk, text), children "
        "(a chunked file: its chunks) and one-line summary."
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

    @tool("Read the full text of a file (a directory: its overview).")
    async def read(uri: str, max_chars: Positive = 20_000) -> dict[str, Any]:
        text = await guard(lambda: client.read(uri))
        cap = min(max_chars, MAX_READ_CHARS)
        return {"uri": uri, "text": text[:cap], "truncated": len(text) > cap}

    @tool(f"A subtree with its abstracts, down to depth levels (at most {MAX_TREE_DEPTH}).")
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
            "used in the category replaces that memory; the result says replaced: true."
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

    return MCPServer(
        name="treehop",
        version=__version__,
        instructions=INSTRUCTIONS,
        tools=tools,
        log_level="WARNING",
    )
