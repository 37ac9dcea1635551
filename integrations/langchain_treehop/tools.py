"""Agent tools over a treehop tree, for LangGraph / LangChain agents.

``create_treehop_tools`` returns up to four tools:

- ``treehop_find`` and ``treehop_search``: built on LangChain's ``create_retriever_tool`` with
  ``response_format="content_and_artifact"``: the model reads the hits as text (each headed by
  its URI, so it can cite it or open it), and the program gets the ``Document``s, with their
  provenance, as the ``ToolMessage.artifact``;
- ``treehop_ls`` and ``treehop_read``: browse a directory and read a file, so an agent can
  walk the tree from a hit to its neighbours, which a flat vector index cannot offer.

Treehop errors (an unknown URI, a file given to ``ls``, a bad query) become ``ToolException``s
with a message that tells the model what to do instead; with ``handle_tool_error=True`` (the
default) the agent receives that message as the tool result and can correct itself rather than
crash the graph.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from langchain_core.callbacks import Callbacks
from langchain_core.documents import Document
from langchain_core.prompts import PromptTemplate
from langchain_core.tools import BaseTool, StructuredTool, ToolException, create_retriever_tool
from pydantic import BaseModel, Field

from treehop import AsyncTreehop, Entry, Treehop
from treehop import integration_kit as kit
from treehop.errors import InvalidQueryError, InvalidURIError, NotFoundError, TreehopError
from treehop.mcp_server import MAX_LIST_ENTRIES
from treehop.redaction import listed
from treehop.validation import shown_value

from .retrievers import TreehopRetriever

TOOL_KINDS = ("find", "search", "ls", "read")
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{0,40}\Z")
T = TypeVar("T")

DOCUMENT_PROMPT = PromptTemplate.from_template("[{uri}]\n{page_content}")
"""How each hit is shown to the model: its URI (to cite, or to open with the read tool), then
its text."""

FIND_DESCRIPTION = (
    "Search the knowledge tree for one precise query (no rewriting, fastest). Returns the best "
    "matching files and directories, each headed by its viking:// URI. Use it to look up a "
    "specific fact, term or document."
)
SEARCH_DESCRIPTION = (
    "Search the knowledge tree for an open or conversational question: the question (and the "
    "conversation so far) is analysed into several targeted queries over documents, memories "
    "about the user and skills (how-to procedures), whose results are merged. Returns hits "
    "headed by their viking:// URIs."
)
LS_DESCRIPTION = (
    "List a directory of the knowledge tree: each child's viking:// URI, whether it is a "
    "directory or a file, and a one-line summary. Start from viking://resources (documents), "
    "viking://~/memories (about the user) or viking://~/skills (procedures)."
)
READ_DESCRIPTION = (
    "Read the full text of a file in the knowledge tree by its viking:// URI (for a directory, "
    "its overview). Use it after a search or ls to open a promising hit."
)


class LsInput(BaseModel):
    """Arguments of the browse tool."""

    uri: str = Field(
        default="viking://resources",
        description="The directory to list, e.g. viking://resources or a directory URI from "
        "an earlier result.",
    )


class ReadInput(BaseModel):
    """Arguments of the read tool."""

    uri: str = Field(description="The viking:// URI of the file (or directory) to read.")


class TreehopToolException(TreehopError, ToolException):
    """A treehop error raised by a tool: LangChain's ``ToolException`` (which a tool with
    ``handle_tool_error`` turns into a message for the model) and a
    :class:`~treehop.errors.TreehopError` at once (code that catches treehop's errors keeps
    working). The original error is its ``__cause__``."""


def _validation_message(exc: Exception) -> str:
    """What the model reads when its tool arguments do not fit the schema (with
    ``handle_tool_error``): which argument, and why, like a treehop error message."""
    errors = getattr(exc, "errors", None)
    details = []
    for e in errors() if callable(errors) else []:
        where = ".".join(str(x) for x in e.get("loc", ())) or "arguments"
        details.append(f"{where}: {e.get('msg', 'invalid')}")
    return "InvalidQueryError: invalid tool arguments (" + ("; ".join(details) or "?") + ")."


def _tool_error(exc: TreehopError, uri: str | None, prefix: str) -> ToolException:
    """A ToolException whose message tells the model how to recover."""
    if isinstance(exc, NotFoundError):
        hint = f" Nothing exists at {uri}; list its parent directory with {prefix}ls first."
    elif isinstance(exc, InvalidURIError) and "is a leaf" in str(exc):
        hint = f" {uri} is a file, not a directory: open it with {prefix}read."
    elif isinstance(exc, InvalidURIError):
        hint = (
            " URIs look like viking://resources/<path>, viking://~/memories/<path> or "
            "viking://~/skills/<path>."
        )
    else:
        hint = ""
    message = str(exc).rstrip().rstrip(".")
    return TreehopToolException(f"{type(exc).__name__}: {message}.{hint}")


def _guard(fn: Callable[..., T], prefix: str) -> Callable[..., T]:
    def wrapped(*args: Any, **kwargs: Any) -> T:
        try:
            return fn(*args, **kwargs)
        except TreehopError as exc:
            raise _tool_error(exc, kwargs.get("uri"), prefix) from exc

    return wrapped


def _aguard(fn: Callable[..., Awaitable[T]], prefix: str) -> Callable[..., Awaitable[T]]:
    async def wrapped(*args: Any, **kwargs: Any) -> T:
        try:
            return await fn(*args, **kwargs)
        except TreehopError as exc:
            raise _tool_error(exc, kwargs.get("uri"), prefix) from exc

    return wrapped


def _retriever_tool(
    retriever: TreehopRetriever, name: str, description: str, prefix: str, handle: bool
) -> BaseTool:
    tool = create_retriever_tool(
        retriever,
        name,
        description,
        document_prompt=DOCUMENT_PROMPT,
        response_format="content_and_artifact",
    )
    func, coro = tool.func, tool.coroutine
    assert func is not None and coro is not None  # create_retriever_tool sets both

    # The wrappers keep create_retriever_tool's exact signature (query, callbacks) so that
    # StructuredTool injects callbacks as it does for the original functions.
    def guarded(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        result: tuple[str, list[Document]] = _guard(func, prefix)(query, callbacks=callbacks)
        return result

    async def aguarded(query: str, callbacks: Callbacks = None) -> tuple[str, list[Document]]:
        result: tuple[str, list[Document]] = await _aguard(coro, prefix)(query, callbacks=callbacks)
        return result

    return tool.model_copy(
        update={
            "func": guarded,
            "coroutine": aguarded,
            "handle_tool_error": handle,
            "handle_validation_error": _validation_message if handle else False,
        }
    )


def _format_entries(uri: str, entries: Sequence[Entry], max_chars: int | None = None) -> str:
    """The listing the model reads: at most :data:`~treehop.mcp_server.MAX_LIST_ENTRIES`
    entries (a directory of 100,000 files filled its context) and, given ``max_chars``,
    the entries that fit in that many characters (at least one), then how many more. Why
    the characters: ``ls`` of one long file lists every chunk with its abstract (lynx's
    ``lynx.cfg``, 178 chunks: 53,592 characters, where the read tool shows 8,000; helper
    usage88)."""
    if not entries:
        return f"{uri} is an empty directory."
    lines = [f"Contents of {uri}:"]
    size = len(lines[0])
    for e in entries[:MAX_LIST_ENTRIES]:
        if e.is_leaf:
            kind = e.kind or "file"
        elif e.kind == "file":  # a file stored as chunks: a file to read, not a folder
            kind = f"file, {e.children} {'chunk' if e.children == 1 else 'chunks'}"
        else:
            kind = f"directory, {e.children} {'child' if e.children == 1 else 'children'}"
        summary = " ".join(e.abstract.split())
        line = f"- {e.uri} ({kind}){': ' + summary if summary else ''}"
        if max_chars is not None and len(lines) > 1 and size + 1 + len(line) > max_chars:
            break
        lines.append(line)
        size += 1 + len(line)
    shown = len(lines) - 1
    if len(entries) > shown:
        lines.append(
            f"[{len(entries) - shown} more entries not shown; list a subdirectory, "
            "read a file's chunk or search instead]"
        )
    return "\n".join(lines)


def _entry_dict(e: Entry) -> dict[str, Any]:
    return {
        "uri": e.uri,
        "is_leaf": e.is_leaf,
        "abstract": e.abstract,
        "tags": list(e.tags),
        "children": e.children,
        "kind": e.kind,
    }


def _read_result(uri: str, text: str, max_chars: int) -> tuple[str, dict[str, Any]]:
    truncated = len(text) > max_chars
    shown = text[:max_chars]
    if truncated:
        shown += f"\n\n[truncated: showing {max_chars} of {len(text)} characters of {uri}]"
    if not text.strip():
        shown = f"{uri} has no text."
    return shown, {"uri": uri, "text": text, "truncated": truncated}


def create_treehop_tools(
    client: Treehop | AsyncTreehop,
    *,
    k: int = 5,
    include: Sequence[str] | None = None,
    name_prefix: str = "treehop_",
    session_id: str | None = None,
    read_max_chars: int = 8000,
    handle_tool_error: bool = True,
    ls_max_chars: int = 8000,
    **retriever_kwargs: Any,
) -> list[BaseTool]:
    """Tools that let an agent search, browse and read a treehop tree.

    Args:
        client: an open ``Treehop`` or ``AsyncTreehop`` (tools work with ``invoke`` and
            ``ainvoke`` either way).
        k: how many hits the find and search tools return.
        include: which of ``find``, ``search``, ``ls``, ``read`` to build; by default all of
            them.
        name_prefix: prefix of the tool names (``treehop_find``, ...), for agents that use
            several trees.
        session_id: a treehop session the search tool plans with (conversation context).
        read_max_chars: the read tool shows at most this many characters to the model (the
            artifact keeps the full text).
        handle_tool_error: return treehop errors to the model as the tool result instead of
            raising.
        ls_max_chars: the ls tool shows the model the entries that fit in this many
            characters (at least one) and how many more there are (the artifact keeps
            every entry): ``ls`` of a long file lists each of its chunks.
        **retriever_kwargs: scope and filters for both retriever tools, as accepted by
            :class:`TreehopRetriever` (``target_uri``, ``tag_filter``, ``metadata_filter``,
            ``score_threshold``, ``content_field``, ...).

    Returns:
        The tools, in the order find, search, ls, read.
    """
    client = kit.check_client(client)
    if not isinstance(name_prefix, str) or not _NAME_RE.match(name_prefix):
        raise InvalidQueryError(
            f"name_prefix must be at most 40 letters, digits, '_' or '-', got {name_prefix!r}"
        )
    if (
        isinstance(read_max_chars, bool)
        or not isinstance(read_max_chars, int)
        or read_max_chars < 1
    ):
        raise InvalidQueryError(
            f"read_max_chars must be a positive integer, got {shown_value(read_max_chars)}"
        )
    if isinstance(ls_max_chars, bool) or not isinstance(ls_max_chars, int) or ls_max_chars < 1:
        raise InvalidQueryError(
            f"ls_max_chars must be a positive integer, got {shown_value(ls_max_chars)}"
        )
    for reserved in ("client", "mode", "k", "session_id"):
        if reserved in retriever_kwargs:
            raise InvalidQueryError(f"{reserved!r} is set by create_treehop_tools itself")
    if include is None:
        kinds = list(TOOL_KINDS)
    else:
        # (an int was iterated, TypeError; a list in the list was hashed, TypeError)
        if isinstance(include, str | bytes) or not isinstance(include, Iterable):
            raise InvalidQueryError(
                f"include must be a list naming some of {', '.join(TOOL_KINDS)}; "
                f"got {type(include).__name__}"
            )
        kinds = list(include)
        if not all(isinstance(kind, str) for kind in kinds):
            raise InvalidQueryError(f"include must name some of {', '.join(TOOL_KINDS)}")
        unknown = sorted(set(kinds) - set(TOOL_KINDS))
        if unknown or not kinds:
            raise InvalidQueryError(
                f"include must name some of {', '.join(TOOL_KINDS)}; got [{listed(kinds)}]"
            )
    p = name_prefix
    tools: list[BaseTool] = []
    if "find" in kinds:
        finder = TreehopRetriever(client=client, mode="find", k=k, **retriever_kwargs)
        tools.append(_retriever_tool(finder, f"{p}find", FIND_DESCRIPTION, p, handle_tool_error))
    if "search" in kinds:
        searcher = TreehopRetriever(
            client=client, mode="search", k=k, session_id=session_id, **retriever_kwargs
        )
        tools.append(
            _retriever_tool(searcher, f"{p}search", SEARCH_DESCRIPTION, p, handle_tool_error)
        )
    if "ls" in kinds:

        def ls(uri: str = "viking://resources") -> tuple[str, list[dict[str, Any]]]:
            return _ls_result(uri, kit.call(client, AsyncTreehop.ls, uri), ls_max_chars)

        async def als(uri: str = "viking://resources") -> tuple[str, list[dict[str, Any]]]:
            return _ls_result(uri, await kit.acall(client, AsyncTreehop.ls, uri), ls_max_chars)

        tools.append(_tool(ls, als, f"{p}ls", LS_DESCRIPTION, LsInput, p, handle_tool_error))
    if "read" in kinds:

        def read(uri: str) -> tuple[str, dict[str, Any]]:
            text = kit.call(client, AsyncTreehop.read, uri)
            return _read_result(uri, text, read_max_chars)

        async def aread(uri: str) -> tuple[str, dict[str, Any]]:
            text = await kit.acall(client, AsyncTreehop.read, uri)
            return _read_result(uri, text, read_max_chars)

        tools.append(
            _tool(read, aread, f"{p}read", READ_DESCRIPTION, ReadInput, p, handle_tool_error)
        )
    return tools


def _ls_result(uri: str, entries: list[Entry], max_chars: int) -> tuple[str, list[dict[str, Any]]]:
    return _format_entries(uri, entries, max_chars), [_entry_dict(e) for e in entries]


def _tool(
    func: Callable[..., T],
    coroutine: Callable[..., Awaitable[T]],
    name: str,
    description: str,
    schema: type[BaseModel],
    prefix: str,
    handle_tool_error: bool,
) -> BaseTool:
    """A content-and-artifact tool whose treehop errors are guarded (see :func:`_guard`)."""
    return StructuredTool.from_function(
        func=_guard(func, prefix),
        coroutine=_aguard(coroutine, prefix),
        name=name,
        description=description,
        args_schema=schema,
        response_format="content_and_artifact",
        handle_tool_error=handle_tool_error,
        handle_validation_error=_validation_message if handle_tool_error else False,
    )
