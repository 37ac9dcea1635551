"""The public clients: :class:`AsyncTreehop` (native async) and :class:`Treehop` (sync twin).

A client is opened for one user (``~`` resolves to that user's space) over one store. It
ingests directories and texts into the tree, and answers ``find()`` (one query, no LLM) and
``search()`` (session context, LLM intent analysis, multi-query fusion).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Any,
    Concatenate,
    Literal,
    NamedTuple,
    Never,
    NoReturn,
    ParamSpec,
    SupportsIndex,
    TypeVar,
    Unpack,
    cast,
)

import numpy as np

from . import arguments as argmod
from . import memory
from . import tags as tagmod
from . import uri as urimod
from ._plugins import call, is_signal
from ._sync import LoopThread
from .client_readers import (
    MIN_SPLIT_FIND_MANY,
    ClientReaders,
    ReaderProcesses,
    check_reader_processes,
)
from .config import RetrievalConfig
from .context_assembly import (
    TIERS,
    AssembledContext,
    ContextLedger,
    Tier,
    TokenCounter,
    assemble_context,
    check_budget,
    context_limit,
    resolve_counter,
)
from .embedders.base import BaseEmbedder, Embedder, same_vector_space
from .embedders.fallback import offline_default as _default_embedder
from .embedders.guarded import NOT_FINITE, GuardedEmbedder, guard_embedder
from .errors import (
    SEARCH_SESSION_HINT,
    ClientClosedError,
    EmbeddingError,
    IngestError,
    InvalidQueryError,
    InvalidURIError,
    LLMError,
    NotFoundError,
    SessionNotFoundError,
    UnsupportedUseError,
)
from .fusion import fuse_query_results
from .hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from .ingest.exclude import check_exclude
from .ingest.loaders import MAX_FILE_BYTES, SKIP_SUFFIXES, check_skip_suffixes
from .ingest.summaries import ExtractiveSummarizer, Summarizer
from .ingest.tree_builder import segment
from .ingest.writer import (
    COMMIT_FILES,
    COMMIT_SECONDS,
    DIRECTORY_VECTORS,
    AddCall,
    ProgressCallback,
    TreeWriter,
    is_path_like,
)
from .ingest.writer import AddResult as AddResult  # re-exported: its historical home
from .intent_analysis import IntentAnalyzer
from .llm import ModelRegistry
from .llm.base import LLM, ChatMessage
from .memory import MemoryExtractor, MemoryWriteResult
from .models import (
    ContextType,
    FindResult,
    MatchedContext,
    Node,
    QueryPlan,
    QueryResult,
    RetrievalMode,
    TypedQuery,
    find_result,
    typed_query,
)
from .postprocess import apply_rerank_threshold, diffuse_chunks, group_chunks
from .reader_processes import ReaderPool
from .redaction import MODEL_NAME_CHARS, cut_text, install_log_filter, listed, redact, shown_name
from .rerankers.base import BaseReranker, Reranker
from .search_options import SEARCH_OPTIONS, SearchKwargs, SearchOptions
from .sessions import Session, SessionStore, UserSessions
from .stores.base import IndexMetaStore, RecoveryRecord, VectorStore
from .stores.embedded import EmbeddedStore, reads_for_a_write
from .stores.guarded import guard_store
from .tagging import IngestTagger, Tagger
from .timestamps import TimeLike
from .validation import as_list, check_query, shown_value

_T = TypeVar("_T")

_MEMORY_TARGET_CHECK: contextvars.ContextVar[Callable[[], Awaitable[None]] | None] = (
    contextvars.ContextVar("treehop_memory_target_check", default=None)
)
"""``add_memory``'s check of its place (:func:`treehop.memory.check_memory_target`), set
only around its own ``add_resource`` call, which runs it under the write lock in place of
:meth:`AsyncTreehop._outside_documents`. Why a context variable: the check rides into
``add_resource`` without a second copy of its signature and docs for a private entry
(helper leftovers59); the variable is read once, at the start of that call, in the
calling task, and set back to ``None`` there, so no call that one starts (an embedder
writing to another index) sees it (helper attacks65)."""


@dataclass
class Entry:
    """One row of ``ls()``."""

    uri: str
    is_leaf: bool
    abstract: str
    tags: list[str]
    children: int
    """Directories: how many children; a chunked file: how many chunks; else 0."""
    kind: str = ""
    """``directory``, ``file`` (a whole file, or a file stored as chunks: not a folder to
    open, though its chunks are its children), ``chunk`` or ``text`` (a memory, a passage)."""


def node_kind(node: Node) -> str:
    """What a node is to a reader: ``directory``, ``file``, ``chunk`` or ``text``.

    A chunked file is stored as an inner node over its chunks; shown as a ``directory`` it
    read as a folder of 48 files. Files carry their ``source_path``, chunks their index."""
    if node.chunk_index is not None or urimod.CHUNK_MARK in node.uri:
        return "chunk"
    if "chunks" in node.metadata or (node.is_leaf and "source_path" in node.metadata):
        return "file"
    return "text" if node.is_leaf else "directory"


def reassemble_chunks(chunks: Sequence[Node]) -> str:
    """A chunked file's text from its chunks (in order), each heading once.

    Every chunk's stored content starts with its heading path (``A › B``), so that its
    embedding and BM25 text say where it sits; joined as they are, a section split into
    five chunks showed its heading five times. Here the path is taken off each chunk and
    the headings are written as Markdown headings where the path changes, at their depth.
    """
    out: list[str] = []
    prev: list[str] = []
    shown_lines: set[str] = set()
    for k in chunks:
        title = str(k.metadata.get("chunk_title") or "")
        path = [str(p) for p in (k.metadata.get("heading_path") or [])]
        text = k.content
        if title and text.startswith(title):
            text = text[len(title) :].lstrip("\n")
        same = 0
        while same < min(len(prev), len(path)) and prev[same] == path[same]:
            same += 1
        for depth in range(same, len(path)):
            # A short section joined to the chunk before it kept its heading as a line of
            # that chunk: it is shown there already.
            if path[depth] not in shown_lines:
                out.append("#" * min(depth + 1, 6) + " " + path[depth])
        prev = path
        if text.strip():
            out.append(text.strip("\n"))
            shown_lines = set(text.splitlines())
        else:
            shown_lines = set()
    return "\n\n".join(out)


class _FindCall(NamedTuple):
    """A :meth:`AsyncTreehop.find` call with every argument checked
    (:meth:`AsyncTreehop._check_find`): what the search needs, nothing read from the store.
    Immutable: the sync client may run the same call twice (:meth:`LoopThread.run_inline`).
    (A tuple: ~0.3 us to make where a frozen dataclass took ~2 us.)"""

    query: str
    """The checked query text (stripped; ``""`` for a vector-only query)."""
    ctype: ContextType | None
    opts: SearchOptions
    vector: np.ndarray[Any, np.dtype[np.float32]] | None
    """The query's unit vector (a caller's, or the one the sync client embedded); ``None``:
    the query is embedded by the async embedder."""
    targets: list[str]
    """The target URIs as given (their syntax checked; whether they exist is the store's
    answer)."""


NO_COPY_MESSAGE = (
    "a {} client is an open index and cannot be pickled or copied: share the one client "
    "(it is safe across threads), open the index again by its path in another process "
    "(Treehop(path); reader_processes= answers find() calls in worker processes), or build "
    "a new vector store / retriever over the same client"
)


class AsyncTreehop:
    """The async client. Every I/O-bound or CPU-heavy step is awaited or run in a thread.

    ``reader_processes=N`` (an index ``path`` only): concurrent awaited ``find()`` calls are
    answered by ``N`` worker processes (:class:`~treehop.ReaderPool`), so an async
    application (a web server, a LangGraph graph fanning out) uses several cores instead of
    one interpreter lock. The contract is the sync :class:`Treehop`'s, and one
    :class:`~treehop.client_readers.ClientReaders` keeps the pool for both: a call goes to
    the workers only when they would answer exactly as this client (no reranker, every
    write saved, the config they started with; a changed config restarts them); one awaited
    find at a time runs on the loop (a lone caller never waits for a worker) and those
    awaited meanwhile overflow to the workers, each wait in a thread of the client's own
    executor (:meth:`~treehop.client_readers.ClientReaders.overflow`) so the loop keeps
    serving; an awaited ``find_many`` of at least
    ``MIN_SPLIT_FIND_MANY`` queries is split, this client's part answered on the loop. The
    workers start in the background when the client opens a saved index or at the first
    find after its first save; ``await close()`` (and ``async with``) stops and joins them.

    ``reader_processes="auto"`` (the default; ``0`` turns it off): the same, for batches
    only. A lone ``find()`` never starts or uses a worker; the first ``find_many`` of at
    least ``MIN_SPLIT_FIND_MANY`` queries over a saved index starts one worker per spare
    core (at most ``AUTO_READERS_MAX``; none on one core, nor where a worker would import
    the main script again: off POSIX, in a frozen app) in the background, and later
    batches are split as above while other processes leave a core free
    (:class:`~treehop.client_readers.FreeCores`). ``close()`` stops and joins them (a
    start in flight is cancelled), and so does the interpreter's exit for a client never
    closed.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        user: str = "default",
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        reranker: Reranker | None = None,
        config: RetrievalConfig | None = None,
        summarizer: Summarizer | None = None,
        tagger: Tagger | Literal["auto"] | bool | None = "auto",
        llm: LLM | None = None,
        query_planner: LLM | None = None,
        intent_timeout_s: float = 5.0,
        chunk_chars: int = 1000,
        retag_all_below: int = 1000,
        directory_vectors: str = "summary",
        strict: bool = False,
        commit_files: int = COMMIT_FILES,
        commit_seconds: float = COMMIT_SECONDS,
        max_file_bytes: int = MAX_FILE_BYTES,
        skip_suffixes: Collection[str] = SKIP_SUFFIXES,
        reader_processes: ReaderProcesses = "auto",
        **unknown: Never,
    ) -> None:
        # (``Never``: mypy flags a misspelt keyword; at run time it is a typed error)
        argmod.check_keywords("AsyncTreehop", unknown.keys(), CLIENT_KEYWORDS)
        check_reader_processes(reader_processes, path)
        argmod.check_client_args(
            path=path,
            user=user,
            embedder=embedder,
            store=store,
            reranker=reranker,
            config=config,
            llm=llm,
            query_planner=query_planner,
            tagger=tagger,
            intent_timeout_s=intent_timeout_s,
            chunk_chars=chunk_chars,
            retag_all_below=retag_all_below,
            commit_files=commit_files,
            commit_seconds=commit_seconds,
            max_file_bytes=max_file_bytes,
        )
        if not isinstance(strict, bool):
            raise InvalidQueryError(f"strict must be True or False, got {shown_value(strict)}")
        # (a folder ingest's skipped suffixes: see treehop.ingest.loaders.SKIP_SUFFIXES)
        skip_suffixes = check_skip_suffixes(skip_suffixes)
        self.user = urimod.validate_user(user)
        self._display_prefix: tuple[str, str] | None = None
        self._spaces_kept: tuple[str, tuple[str, ...]] | None = None
        self.embedder = embedder if embedder is not None else _default_embedder()
        # everything that calls the embedder goes through the guard: a custom embedder's own
        # exception or a wrong-shaped answer becomes an EmbeddingError (embedders/guarded.py)
        self._embedder = guard_embedder(self.embedder)
        if store is None:
            # Clients of several users on one index share its one writer in this process.
            store = (
                EmbeddedStore.shared(path, strict=strict) if path is not None else EmbeddedStore()
            )
        # a caller's own store goes through a guard (stores/guarded.py): its own exception
        # becomes a StoreError; treehop's stores are used as they are
        self.store: VectorStore = guard_store(store)
        self.path = Path(path) if path is not None else None
        self.reranker = reranker
        self.config = config or RetrievalConfig()
        self._retriever: HierarchicalRetriever | None = None
        self._closed = False
        if directory_vectors not in DIRECTORY_VECTORS:
            raise InvalidQueryError(
                f"directory_vectors must be one of {', '.join(DIRECTORY_VECTORS)}, "
                f"got {shown_value(directory_vectors)}"
            )
        self.writer = TreeWriter(
            self.store,
            self._embedder,
            summarizer=summarizer or ExtractiveSummarizer(),
            tagger=_make_tagger(tagger),
            chunk_chars=chunk_chars,
            retag_all_below=retag_all_below,
            directory_vectors=directory_vectors,
            commit_files=commit_files,
            commit_seconds=commit_seconds,
        )
        self.writer.builder.max_file_bytes = max_file_bytes
        self.writer.builder.skip_suffixes = skip_suffixes
        self.models = ModelRegistry(default=llm, query_planner=query_planner)
        # (the analyzer reads the registry's planner at each call: a query_planner set later
        # is used; helper pipeline77)
        self.intent_analyzer = IntentAnalyzer(models=self.models, timeout_s=intent_timeout_s)
        self._session_store = SessionStore(self.store, llm=llm, strict=strict)
        # The client only ever sees its own user's sessions (another user's id is "not found").
        self.sessions: UserSessions = self._session_store.for_user(self.user)
        self.context_ledger = ContextLedger(self.store, self.user)
        self._check_embedder_matches()
        self._pool = ClientReaders(reader_processes, self)
        self._local_slot = threading.Lock()
        """Held by the one awaited find that runs on the loop while a pool is up."""
        self._pool.for_call()  # an index saved before: its workers start now, aside

    # ------------------------------------------------------------------ setup checks
    def _check_embedder_matches(self) -> None:
        if not isinstance(self.store, IndexMetaStore):
            return
        meta = self.store.meta
        stored = meta.get("embedder")
        # An embedder may list ``former_names``: names an earlier release stored for the same
        # vector space; the names the framework wrappers of treehop's own embedder stored
        # before stop 61 are recognised by any client (``same_vector_space``). Such an index
        # opens; the current name is stored with its next write. Both read through the
        # guard: a caller's property raising is an EmbeddingError, not its own exception.
        former = call("the embedder", EmbeddingError, getattr, self.embedder, "former_names", ())
        name = self._embedder.name
        if stored and not same_vector_space(stored, name, former) and len(self.store) > 0:
            # (each name cut, escaped and redacted: the stored one is whatever the index's
            # manifest holds, and a 200,000-character name was echoed whole into the error,
            # the CLI's stderr and an MCP client; helper attacks85)
            raise EmbeddingError(
                f"this index was built with embedder {shown_name(stored, MODEL_NAME_CHARS)}; "
                f"opening it with {shown_name(name, MODEL_NAME_CHARS)} would mix vector spaces"
            )
        meta["embedder"] = name

    @property
    def recovery(self) -> list[RecoveryRecord]:
        """What opening this index recovered from (empty: nothing): an older generation
        opened because the current one is unreadable, a sessions index rebuilt from the
        session files. Each was also announced by a :class:`~treehop.errors.RecoveryWarning`;
        ``strict=True`` raises :class:`~treehop.errors.IndexRecoveryError` instead."""
        out = [r for r in (getattr(self.store, "recovery", None),) if r is not None]
        if self._session_store.recovery is not None:
            out.append(self._session_store.recovery)
        return out

    def _fresh(self, write: bool = False) -> None:
        """The consistency check each call starts with (docs/stores.md, "Consistency"): pick
        up a generation another process committed since this client last looked. On the
        embedded store it is one ``stat`` of ``CURRENT`` (a few microseconds) unless the
        pointer moved; other engines are read live already. A read (not ``write``) of an
        index whose folder left its path raises :class:`StoreError` rather than answer as
        an empty index (:meth:`EmbeddedStore.check_in_place`, helper leftovers72a); a write
        makes a new index there, as before."""
        if isinstance(self.store, EmbeddedStore):
            self.store.refresh()
            if not write:
                self.store.check_in_place()

    def _fresh_write(self) -> None:
        """:meth:`_fresh` at the start of a write (an add diffs against the latest commit)."""
        self._fresh(write=True)

    async def _io(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Call the store (in a worker thread for remote stores; see :meth:`TreeWriter.io`)."""
        return await self.writer.io(fn, *args)

    @property
    def summarizer(self) -> Summarizer:
        return self.writer.summarizer

    @property
    def tagger(self) -> Tagger | None:
        return self.writer.tagger

    @property
    def query_planner(self) -> LLM | None:
        """The chat model that plans :meth:`search`'s typed queries (``None``: the default
        ``llm`` plans them, or nothing does and the plan falls back). Settable after the
        client is built, as a LangChain / LlamaIndex user sets a component's model: the next
        :meth:`search` plans with it (``client.models.query_planner = m`` too). Why (helper
        pipeline77): the planner was read once, at construction, so a planner set later was
        ignored, and ``client.query_planner = m`` made an attribute nothing read. An object
        that is no :class:`~treehop.llm.base.LLM` is refused as the constructor refuses it
        (:class:`~treehop.errors.InvalidQueryError`)."""
        return self.models.query_planner

    @query_planner.setter
    def query_planner(self, value: LLM | None) -> None:
        argmod.check_plugin("query_planner", value, LLM, LLMError)
        self.models.query_planner = value

    # ------------------------------------------------------------------ URIs
    def resolve(self, uri: str) -> str:
        """Validate a user-facing URI and resolve ``~`` to this user's space."""
        return urimod.normalize(uri, self.user)

    def display(self, uri: str) -> str:
        """:func:`~treehop.uri.to_display` with this user's space prefix kept."""
        return urimod.display_under(uri, self._user_root())

    def _user_root(self) -> str:
        """:func:`~treehop.uri.user_root` of this client's user, kept."""
        user, kept = self.user, self._display_prefix
        if kept is None or kept[0] != user:
            kept = self._display_prefix = (user, urimod.user_root(user))
        return kept[1]

    def root(self, context_type: ContextType) -> str:
        return urimod.root_for(context_type, self.user)

    # ------------------------------------------------------------------ ingest
    async def add_resource(
        self,
        path_or_text: str | os.PathLike[str],
        *,
        target_uri: str | None = None,
        tags: str | Sequence[str] | None = None,
        name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        progress: ProgressCallback | None = None,
        is_text: bool | None = None,
        exclude: Sequence[str] | None = None,
    ) -> AddResult:
        """Ingest a directory, a file, or a text into the tree and index it.

        Re-adding the same target re-embeds only nodes whose text changed and deletes nodes whose
        files are gone. ``tags`` (list or ``a;b``) are user tags merged with automatic ones;
        ``metadata`` is merged into every node written (and can be filtered on). A string is
        read as a path when it names an existing file or directory, unless ``is_text=True``;
        one that looks like a path (``./docs``, ``notes/a.md``) but names nothing is an
        :class:`IngestError`, so a typo is not indexed as a document. The whole call is
        validated before anything is read or written; skipped files and folders are counted
        and named in the :class:`AddResult`.

        ``target_uri`` is the URI the resource is stored at (a root such as
        ``viking://resources`` is a folder: the resource goes below it, under ``name``);
        ``name`` is its shown name. So ``add_resource(text, name="note-2",
        target_uri="viking://resources/notes")`` replaces what ``notes`` held: give each
        resource its own ``target_uri`` (``.../notes/note-2``) to keep them side by side.

        ``exclude`` (a list of glob patterns: ``["developers-reference.html", "_static/"]``)
        leaves files and folders out of a folder's walk, matched on each one's POSIX path
        relative to the folder given (rules: :mod:`treehop.ingest.exclude`; a name alone
        matches at any depth, a folder matched leaves its subtree out). A file given by
        itself is read whatever it says, as with ``skip_suffixes``; a text refuses it. What
        it left out is named in :attr:`AddResult.excluded`, and a re-add under new patterns
        deletes what they now leave out.
        """
        self._check_open()
        t0 = time.perf_counter()
        # The whole call is checked before anything is read or written (see treehop.arguments).
        path_or_text = argmod.check_path_or_text(path_or_text)
        is_text = argmod.check_is_text(is_text)
        name = argmod.check_name(name)
        if target_uri is not None:
            argmod.check_uri_arg(target_uri, "target_uri")
        metadata = argmod.check_metadata(metadata)
        argmod.check_progress(progress)
        user_tags = tagmod.user_tags(tags)
        excluded = check_exclude(exclude)
        if is_text is None:
            is_path = is_path_like(path_or_text)
            if not is_path and argmod.looks_like_path(str(path_or_text)):
                raise IngestError(
                    f"path does not exist: {argmod.shown(str(path_or_text))} "
                    "(pass is_text=True to add this string as a text)"
                )
        else:
            is_path = not is_text
        if excluded and not is_path:
            raise InvalidQueryError(
                "exclude= leaves files out of a folder's walk; a text has none to leave out"
            )
        meta = dict(metadata or {})
        memory_check = _MEMORY_TARGET_CHECK.get()
        # Taken, not just read: every thread and task this call starts copies the context,
        # and an embedder writing to another index saw add_memory's check there, which then
        # stood in for that index's own (helper attacks65). add_memory's reset restores it.
        _MEMORY_TARGET_CHECK.set(None)
        # (the reads below, before the write takes its lock, are the write's: after the
        # index folder left its path they see the new index the write makes there, where
        # every other read raises; helper leftovers73b)
        with reads_for_a_write(self.store):
            await self._io(
                self._fresh_write
            )  # an incremental re-add diffs against the latest commit
            if is_path:
                p = Path(path_or_text)
                try:
                    p.stat()
                except (
                    OSError,
                    ValueError,
                ) as exc:  # (ENAMETOOLONG, ELOOP, EACCES: not only ENOENT)
                    why = (
                        "does not exist" if isinstance(exc, FileNotFoundError) else "cannot be read"
                    )
                    detail = getattr(exc, "strerror", None) or type(exc).__name__
                    raise IngestError(f"path {why}: {argmod.shown(str(p))} ({detail})") from None
                target = self._target_for(target_uri, name or argmod.path_name(p))
                check = self._checked_under_lock(target, memory_check)
                if memory_check is None:  # (add_memory's checked its place already)
                    await check()
                return await self.writer.add(
                    p, target, AddCall(user_tags, meta, progress, t0, check=check, exclude=excluded)
                )
            text = argmod.check_text_size(str(path_or_text))
            if target_uri is None and name is None:
                raise InvalidQueryError(
                    "adding a text needs target_uri= or name= (it is not an existing path)"
                )
            target = self._target_for(target_uri, name or "note")
            check = self._checked_under_lock(target, memory_check)
            if memory_check is None:  # (add_memory's checked its place already)
                await check()
            call = AddCall(user_tags, meta, progress, t0, name or "", check)
            return await self.writer.add(text, target, call)

    def _checked_under_lock(
        self, target: str, memory_check: Callable[[], Awaitable[None]] | None
    ) -> Callable[[], Awaitable[None]]:
        """An add's check of ``target`` against the store, for :attr:`AddCall.check` (run
        under the write lock, right before the write): ``memory_check`` (``add_memory``'s,
        which refuses a place inside any document too, from its one read of the target's
        ancestors), else :meth:`_outside_documents`. Why again there: run only before the
        lock, a document (or a memory) another call of this client wrote in between was not
        seen, and the add then made it a directory (its text gone) or replaced a directory
        of memories; ``add_memory``'s ``replaced`` was stale (helper races59). The check
        before the lock stays: a refused target costs no read of its files."""
        if memory_check is not None:
            return memory_check

        async def check() -> None:
            await self._io(self._outside_documents, target)

        return check

    async def add_memory(
        self, text: str, *, name: str | None = None, tags: str | Sequence[str] | None = None
    ) -> AddResult:
        """Store a memory about the user under ``viking://~/memories``; a ``name`` already
        used replaces that memory, and the result's ``replaced`` says so."""
        self._check_open()
        argmod.check_text_value(text, "memory text")
        label = argmod.check_name(name)

        async def add(uri: str) -> AddResult:
            label = uri.rsplit("/", 1)[-1]
            return await self.add_resource(
                text, target_uri=f"viking://~/memories/{label}", tags=tags, is_text=True
            )

        with reads_for_a_write(self.store):  # (its place checks are the write's: add_resource)
            if label is None:  # (a free name, chosen under a lock: memory.write_unnamed)
                unnamed = self.resolve(f"viking://~/memories/memory-{int(time.time() * 1000)}")
                return await memory.write_unnamed(self, unnamed, add)
            # (a name that holds other memories is refused: memory.check_memory_target)
            target = self.resolve(f"viking://~/memories/{label}")
            replaced = False

            async def check() -> None:
                nonlocal replaced
                replaced = await memory.check_memory_target(
                    self, target, "add_memory name", inside_document=self._inside_document
                )

            # The check and the write under the name's category lock, as remember() takes it
            # (across processes too, on the embedded store), and the check again under the write
            # lock right before the write: read before either, a concurrent writer's memory was
            # not seen (``replaced`` stale, or a write below it; helper races59). The check
            # reaches add_resource through _MEMORY_TARGET_CHECK, and stands in for its
            # _outside_documents: one read of the target's ancestors each time (leftovers59).
            async with memory._conversation_lock(self.store, urimod.parent_of(target) or target):
                await check()  # (before anything is built: a refused name costs nothing)
                token = _MEMORY_TARGET_CHECK.set(check)
                try:
                    result = await self.add_resource(
                        text, target_uri=f"viking://~/memories/{label}", tags=tags, is_text=True
                    )
                finally:
                    _MEMORY_TARGET_CHECK.reset(token)
            result.replaced = replaced
            return result

    async def add_skill(
        self,
        path_or_text: str | os.PathLike[str],
        *,
        name: str | None = None,
        tags: str | Sequence[str] | None = None,
    ) -> AddResult:
        """Store a skill (a how-to the agent can follow) under ``viking://~/skills``."""
        self._check_open()
        path_or_text = argmod.check_path_or_text(path_or_text)
        name = argmod.check_name(name)
        is_file = is_path_like(path_or_text)
        target = f"viking://~/skills/{name}" if name else None
        if target is None and not is_file:
            raise InvalidQueryError("adding a skill text needs name=")
        if target is None:
            target = f"viking://~/skills/{argmod.path_name(Path(path_or_text))}"
        return await self.add_resource(
            path_or_text, target_uri=target, tags=tags, is_text=not is_file
        )

    def _target_for(self, target_uri: str | None, name: str) -> str:
        """The URI an add writes at (checked as a new URI: :func:`treehop.uri.check_new`).
        A ``name`` that decodes out of its segment (``x%2Fy``, ``a\\b``: see
        :func:`treehop.uri.name_leaves_root`) is refused: its URI could not be named again."""
        if target_uri is None:
            return urimod.check_new(urimod.join(urimod.RESOURCES_ROOT, _named(name)))
        target = self.resolve(target_uri)
        if urimod.parent_of(target) is None:
            return urimod.check_new(urimod.join(target, _named(name)))
        if urimod.CHUNK_MARK in target:
            raise InvalidURIError("cannot add a resource at a chunk URI")
        return urimod.check_new(target)

    def _outside_documents(self, target: str) -> None:
        """Refuse an add's ``target`` (resolved) below a document (a leaf, or a file stored
        as chunks). Why: ``target_uri="viking://resources/a.md/b.md"`` over the document
        ``a.md`` made it a directory holding ``b.md``: its text was gone (a chunked one a
        directory of its chunks and ``b.md``). The document itself is replaced by its URI,
        as documented (:func:`treehop.memory.document_above`)."""
        found = memory.document_above(self.store, [target])
        if found is not None:
            raise self._inside_document(*found)

    def _inside_document(self, target: str, document: str) -> InvalidURIError:
        """The error of an add whose ``target`` lies inside ``document`` (both resolved)."""
        return InvalidURIError(
            f"target_uri {self.display(target)[:200]!r} lies inside the document "
            f"{self.display(document)[:200]}: give a target beside it"
        )

    async def retag(self, uri: str | None = None) -> int:
        """Backfill: recompute automatic and inherited tags without re-embedding anything.

        The keyword statistics are first recounted over the whole index; user tags are kept.
        Returns the number of nodes whose tags changed.
        """
        self._check_open()
        root = None if uri is None else await self._io(self._require, uri)
        return await self.writer.retag(root)

    async def set_tags(
        self,
        uri: str,
        *,
        add: str | Sequence[str] | None = None,
        remove: str | Sequence[str] | None = None,
    ) -> list[str]:
        """Add or remove user tags of a node; descendants' inherited tags follow. Returns the
        node's tags."""
        self._check_open()
        node = await self._io(self._require, uri)
        adds = tagmod.user_tags(add, "add")
        drops = set(tagmod.normalize_filter_labels(remove))
        # The node's tags are read again under the node's key lock (this process's calls on
        # it one at a time, and other processes' through the embedded store's key lock, the
        # store refreshed first) and merged with ``adds`` / ``drops`` before the write: read
        # before it, concurrent calls each wrote their own merge over a stale read (20
        # concurrent adds kept 2 tags; three processes of 15 adds kept one's 15 of 45).
        async with memory._conversation_lock(self.store, node.uri):
            node = await self._io(self._require, node.uri)
            # (a label that differs from one the node keeps only by a joiner: refused)
            kept = [tagmod.label_of(t) for t in node.tags]
            tagmod.check_look_alikes(
                (tagmod.label_of(t) for t in adds), (x for x in kept if x not in drops)
            )
            return await self.writer.set_tags(node, adds, drops)

    # ------------------------------------------------------------------ browse
    def _require(self, uri: str) -> Node:
        resolved = self.resolve(uri)
        self._fresh()  # every call that starts by reading a node sees the latest commit
        node = self.store.get([resolved])[0]
        if node is None:
            # (redacted: a URI may carry a credential, ``?api_key=...``, a key as a name;
            # helper attacks90: the CLI and the MCP server masked it, the Python API not)
            raise NotFoundError(redact(f"no node at {uri}{self._escaped_hint(resolved)}"))
        return node

    def _escaped_hint(self, resolved: str) -> str:
        """``; did you mean URI?`` where the name as a folder's walk escapes it (``%25``,
        ``%3F``: :func:`treehop.uri.as_stored_names`) is a node, else ``""``. One store read,
        on the not-found path only."""
        stored = urimod.as_stored_names(resolved)
        if stored == resolved or self.store.get([stored])[0] is None:
            return ""
        return (
            f"; did you mean {self.display(stored)}? (a '%' or '?' in a file or folder name "
            "is written %25 / %3F in a URI, as ls / tree show it)"
        )

    async def ls(self, uri: str = "viking://resources") -> list[Entry]:
        """The children of a directory (a context root with nothing under it yet: none)."""
        self._check_open()
        return await self._io(self._ls_sync, uri)

    def _root_or_require(self, uri: str) -> Node | None:
        """The node at ``uri``, or ``None`` for a context root the store holds no node for
        yet (see :func:`treehop.uri.shown_root`). Why: ``ls()`` / ``tree()`` of their own
        default URI on a new index raised ``NotFoundError``, and the LangChain ``treehop_ls``
        tool told the agent to "list its parent directory" of a root; the command line and
        the MCP server had each listed such a root as empty already."""
        try:
            return self._require(uri)
        except NotFoundError:
            if urimod.shown_root(uri, self.user) is None:
                raise
            return None

    def _ls_sync(self, uri: str) -> list[Entry]:
        node = self._root_or_require(uri)
        if node is None:
            return []
        if node.is_leaf:
            raise InvalidURIError(redact(f"{uri} is a leaf, not a directory"))  # (attacks90)
        return [
            Entry(
                self.display(c.uri),
                c.is_leaf,
                c.abstract,
                list(c.tags),
                len(self.store.children(c.uri)) if not c.is_leaf else 0,
                node_kind(c),
            )
            for c in self.store.children(node.uri)
        ]

    async def read(self, uri: str) -> str:
        """Full text: a leaf's content, a chunked file reassembled, a directory's overview."""
        self._check_open()
        return await self._io(self._read_sync, uri)

    def _read_sync(self, uri: str) -> str:
        node = self._require(uri)
        if node.is_leaf:
            return node.content
        kids = self.store.children(node.uri)
        if kids and all(k.chunk_index is not None for k in kids):
            return reassemble_chunks(sorted(kids, key=lambda k: k.chunk_index or 0))
        return node.overview or node.abstract

    async def stat(self, uri: str) -> Node:
        """The stored node (abstract, overview, tags, metadata)."""
        self._check_open()
        return await self._io(self._require, uri)

    async def tree(self, uri: str = "viking://resources", depth: int = 3) -> dict[str, Any]:
        """A nested dict of the subtree (directories first), down to ``depth`` (0..64)."""
        self._check_open()
        depth = argmod.check_depth(depth)
        return await self._io(self._tree_sync, uri, depth)

    def _tree_sync(self, uri: str, depth: int) -> dict[str, Any]:
        node = self._root_or_require(uri)
        if node is None:  # (the shape of an empty directory's tree)
            empty: dict[str, Any] = {
                "uri": urimod.shown_root(uri, self.user),
                "is_leaf": False,
                "abstract": "",
                "kind": "directory",
            }
            if depth > 0:
                empty["children"] = []
            return empty

        def walk(n: Node, d: int) -> dict[str, Any]:
            out: dict[str, Any] = {
                "uri": self.display(n.uri),
                "is_leaf": n.is_leaf,
                "abstract": n.abstract,
                "kind": node_kind(n),
            }
            if not n.is_leaf and "chunks" in n.metadata:
                out["chunks"] = n.metadata["chunks"]
            if not n.is_leaf and d > 0:
                kids = self.store.children(n.uri)
                kids.sort(key=lambda k: (k.is_leaf, k.chunk_index or 0, k.uri))
                out["children"] = [walk(k, d - 1) for k in kids]
            return out

        return walk(node, depth)

    async def remove(self, uri: str) -> int:
        """Delete a node and its subtree."""
        self._check_open()
        node = await self._io(self._require, uri)
        return await self.writer.remove(node)

    # ------------------------------------------------------------------ find
    def _roots(
        self, target_uri: str | Sequence[str] | None, context_type: ContextType | str | None
    ) -> list[str]:
        """The roots a call searches: its targets (each must exist, see :meth:`_roots_of`),
        else its context type's root, else every root of this user."""
        targets = as_list(target_uri)
        ctype = argmod.check_context_type(context_type)
        if targets:
            return self._roots_of(self._typed_targets(targets, ctype), None)
        return self._roots_of(targets, ctype)

    def _typed_targets(self, targets: list[str], ctype: ContextType | None) -> list[str]:
        """``targets`` in the context type ``ctype`` (all of them without one); none in it is
        an :class:`InvalidQueryError`, as :meth:`search` refuses it. Why: find dropped its
        ``context_type`` whenever targets were given, so ``context_type="memory"`` with a
        resource target answered resources (find_many and the LangChain retriever too),
        where search keeps only the targets of its context types."""
        if ctype is None or not targets:
            return targets
        kept = []
        for t in targets:
            try:
                kind: ContextType | None = urimod.context_type_of(self.resolve(t))
            except InvalidURIError:  # (the user's space itself: memories and skills)
                kind = None
            if kind is None or kind is ctype:
                kept.append(t)
        if not kept:
            raise InvalidQueryError(
                f"context_type {ctype.value!r} and target_uri do not overlap: no target lies "
                f"in {urimod.display_root(ctype)}"
            )
        return kept

    def _roots_of(self, targets: list[str], ctype: ContextType | None) -> list[str]:
        """:meth:`_roots` of arguments already checked (:meth:`_check_find`)."""
        self._fresh()  # find() and search() start here: they see the latest commit
        spaces = self._spaces()
        if targets:
            roots = [self.resolve(t) for t in targets]
            found = self.store.get(roots)
            # A context type's root (viking://~/memories on an index with no memory yet) is a
            # scope that is empty, not a typo: it is searched (and finds nothing), as it is
            # when no target is given. Any other missing target is a NotFoundError.
            missing = [
                t
                for t, r, n in zip(targets, roots, found, strict=True)
                if n is None and r not in spaces
            ]
            if missing:
                # (the first one's escaped form named, if a node: helper usage80)
                raise _unknown_targets(missing, self._escaped_hint(self.resolve(missing[0])))
            return roots
        if ctype is not None:
            return [self.root(ctype)]
        return list(spaces)

    def _spaces(self) -> tuple[str, ...]:
        """Every context type's root for this user, in :class:`ContextType` order, kept while
        the user stays the same: a find asked for them each time (three ``root_for`` calls,
        each validating the user name again)."""
        user, kept = self.user, self._spaces_kept
        if kept is None or kept[0] != user:
            kept = self._spaces_kept = (user, tuple(self.root(ct) for ct in ContextType))
        return kept[1]

    def retriever(self) -> HierarchicalRetriever:
        """The retriever of this client's store, config and reranker, kept while they stay the
        same objects: it holds no per-query state, and building one per find checked the
        store's capabilities again (a runtime protocol check, ~10 us of each find)."""
        self._check_open()
        kept = self._retriever
        if (
            kept is None
            or kept.store is not self.store
            or kept.config is not self.config
            or kept.reranker is not self.reranker
        ):
            kept = self._retriever = HierarchicalRetriever(self.store, self.config, self.reranker)
        return kept

    async def find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        query_vector: Sequence[float] | np.ndarray[Any, Any] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        """One query, no LLM: the hierarchical search over the given scope.

        ``options`` are the search options every entry point shares; each is described on
        :class:`~treehop.search_options.SearchKwargs` (``target_uri``, ``limit``, ``filter``,
        ``tags``, ``mode``, ``dense_weight``, ``collapse_chunks``, ``since``/``until``, ...).

        ``since`` / ``until`` keep nodes whose ``timestamp`` metadata (memories written by
        :meth:`add_messages` / :meth:`remember`) lies in ``[since, until)``; nodes without a
        time are left out while either is set.

        ``tags`` keeps nodes carrying any of the tags, ``tags_all`` those carrying all of them;
        ``filter`` is the metadata DSL (see :mod:`treehop.filters`). The ``search_knowledge``
        controls (``retrieve_count``, ``rerank_threshold``, ``chunk_diffusion_count``,
        ``chunk_group``) behave as in VikingDB; see :mod:`treehop.postprocess`.
        ``query_vector`` searches with an embedding the caller already has (a framework's
        vector-store query); ``query`` may then be ``""`` (no lexical scoring, no rerank text).
        """
        self._check_open()
        pool = self._pool.for_call()
        if pool is None:
            return await self._find(
                query, context_type=context_type, query_vector=query_vector, **options
            )
        if self._local_slot.acquire(blocking=False):
            try:
                # one find at a time runs here (no pipe, no pickling: a lone caller never
                # pays for the workers); its global step yields the loop (a thread: see
                # ``HierarchicalRetriever._store_call``), so the awaits started beside it
                # find the slot taken and overflow, instead of each running here after it
                return await self._find(
                    query, context_type=context_type, query_vector=query_vector, **options
                )
            finally:
                self._local_slot.release()
        try:
            # another find runs on this loop: this one overflows to a worker, its wait in a
            # thread (the loop keeps serving)
            found = await self._pool.overflow(
                pool.find, query, context_type=context_type, query_vector=query_vector, **options
            )
            if not found.total:  # (the worker's own log is not this process's)
                await self._io(self._hint_after, "find", [found], context_type, options)
            return found
        except ClientClosedError:
            if self._pool.closed:
                raise
        # the pool was replaced (a changed config) while this call waited for it: answered
        # here, as the calls after it are until the new pool runs
        return await self._find(
            query, context_type=context_type, query_vector=query_vector, **options
        )

    async def _find(
        self,
        query: str,
        *,
        context_type: ContextType | str | None = None,
        query_vector: Sequence[float] | np.ndarray[Any, Any] | None = None,
        context_tokens: int | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        """:meth:`find`; ``context_tokens``: the block :meth:`assemble_context` fills with the
        result (a question's passage slots are sized for it:
        :func:`~treehop.context_assembly.context_slot_chars`)."""
        call = self._check_find(query, context_type, query_vector, options, context_tokens)
        return await self._find_checked(call)

    def _check_find(
        self,
        query: object,
        context_type: object,
        query_vector: object,
        options: Mapping[str, Any],
        context_tokens: int | None = None,
    ) -> _FindCall:
        """Every argument of a :meth:`find` call checked, in the order the checks have
        always run (the caller's vector, the query, the context type, the options, the
        target URIs' syntax and grammar), before any work: nothing is read from the store
        or embedded.

        Why one method: the sync client checks a call before it embeds the query on the
        calling thread (a bad option costs no embedding), then hands the checked call on
        (:meth:`_find_checked`) instead of the arguments, which were checked a second
        time (the search options built twice, the query and the vector checked twice:
        ~20 us of each sync find, more on loaded cores)."""
        vector = (
            None
            if query_vector is None
            else _check_query_vector(cast("Sequence[float]", query_vector), self.store)
        )
        q = check_query(query) if vector is None or query else ""
        ctype, opts, targets = self._find_options(cast(SearchKwargs, options), context_type)
        if context_tokens is not None:
            opts = dataclasses.replace(opts, context_tokens=context_tokens)
        return _FindCall(q, ctype, opts, vector, targets)

    async def _find_checked(self, call: _FindCall) -> FindResult:
        """A checked :meth:`find` call (:meth:`_check_find`); without a vector the query is
        embedded here (the async embedder)."""
        tq = typed_query(call.query, call.ctype)
        # (an in-process store is called here, as :meth:`_io` would: without its two
        # coroutines per call, which a find made four of)
        local = not self.store.capabilities.remote
        if local:
            roots = self._roots_of(call.targets, call.ctype)
        else:
            roots = await self._io(self._roots_of, call.targets, call.ctype)
        # (a caller's targets were just read from the store by ``_roots_of``: not again)
        qr = await self._run_query(tq, roots, call.opts, call.vector, known=bool(call.targets))
        if local:
            hits = self._postprocess(qr.matched_contexts, call.opts, roots)
        else:
            hits = await self._io(self._postprocess, qr.matched_contexts, call.opts, roots)
        if not hits and call.targets:
            await self._io(
                self._hint_empty_leaf_targets, roots, call.opts, "find", 1, 1, call.ctype
            )
        return self._to_find_result(hits, [qr], None)

    def _hint_empty_leaf_targets(
        self,
        roots: list[str],
        opts: SearchOptions,
        what: str = "find",
        empty: int = 1,
        of: int = 1,
        ctype: ContextType | None = None,
    ) -> str | None:
        """Log why a find scoped to files or chunks answered nothing (the ``treehop``
        logger, WARNING), and answer the message (``None`` where there is nothing to say).
        Why: such a target searches that leaf alone, never its siblings; users
        who gave a page's URI meaning "around this page" got ``[]`` and no word why. A
        target that names nothing is a :class:`NotFoundError` before this; a directory that
        matches nothing is an ordinary empty answer. ``what``: the call (``find`` /
        ``find_many``), ``empty`` of ``of`` its queries answered nothing; ``ctype`` the
        call's context type, named after the targets as the scope searched (it keeps only
        the targets of that type: ``roots`` are those, so a target it left out is not
        named as searched; helper leftovers71b: MCP ``find``'s hint was told ``None``)."""
        leaves = [
            n.uri
            for n in self.store.get(roots)
            if n is not None and (n.is_leaf or "chunks" in n.metadata)  # (a chunked file)
        ]
        if not leaves:
            return None
        why = [f"score_threshold={opts.threshold}"] if opts.threshold is not None else []
        if opts.metadata is not None or opts.tags:
            why.append("the filter")
        folder = self.display(urimod.parent_of(leaves[0].split("#", 1)[0]) or leaves[0])
        under = f" under {' and '.join(why)}" if why else ""
        count = f" for {empty} of {of} queries" if of > 1 else ""
        shown = ", ".join(self.display(u)[:200] for u in leaves[:3])
        if ctype is not None:  # (the scope searched: the targets of this type only)
            shown += f" (context_type={ctype.value!r})"
        message = (
            f"{what}: target_uri {shown} matched nothing{under}{count}: a file's or chunk's "
            "URI searches that leaf alone, never its siblings; to search around it give its "
            f"folder (target_uri={folder[:200]!r})"
        )
        _log.warning("%s", message)
        return message

    def _hint_after(
        self,
        what: str,
        results: Sequence[FindResult],
        context_type: object,
        options: Mapping[str, Any],
    ) -> str | None:
        """:meth:`_hint_empty_leaf_targets` for a call answered elsewhere (a reader process,
        or a batch split between this process and them): its options read again (no store
        read unless an answer is empty and the call has a target). Why: the hint was only
        given by an in-process :meth:`find`; ``find_many`` and a find a worker answered
        said nothing (helper usage72's open item)."""
        empty = sum(1 for r in results if not r.total)
        if not empty or not as_list(options.get("target_uri")):
            return None
        ctype, opts, targets = self._find_options(cast(SearchKwargs, options), context_type)
        return self._hint_empty_leaf_targets(
            self._roots_of(targets, ctype), opts, what, empty, len(results), ctype
        )

    async def _target_hint(
        self,
        result: FindResult,
        context_type: object,
        options: Mapping[str, Any],
        what: str = "find",
    ) -> str | None:
        """Why ``result`` (a :meth:`find` of this client with ``options``; ``what`` names the
        call the message starts with) is empty, when its target is a file or a chunk
        (:meth:`_hint_empty_leaf_targets`' message), else ``None``: for a caller that shows
        it to someone who reads no log (the MCP server's agent)."""
        if result.total or not as_list(options.get("target_uri")):
            return None
        return await self._io(self._hint_after, what, [result], context_type, options)

    async def find_many(
        self,
        queries: Sequence[str],
        *,
        context_type: ContextType | str | None = None,
        query_vectors: Sequence[Sequence[float]] | np.ndarray[Any, Any] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> list[FindResult]:
        """:meth:`find` for many queries: one :class:`~treehop.models.FindResult` per query,
        in order, each the one ``find(query, **options)`` returns (the same hits, order and
        scores).

        Why a batch call: the queries are embedded in one embedder call (one model run or one
        HTTP request instead of one per query), the options, targets and roots are checked
        and resolved once, and the global step of every query (the graph search that starts
        a find) runs as one batch in the store (``search_columns_batch`` where the store has
        it: one graph call split over the cores, the work around it vectorised). The rest of
        each query's descent runs as in :meth:`find`.

        The whole call is checked before any work: ``queries`` must be a non-empty list of
        at most ``MAX_FIND_MANY`` query strings (each as :meth:`find` checks it), and
        ``query_vectors``, if given, one vector per query (a query may then be ``""``, as in
        :meth:`find`). An embedder whose ``embed_query`` differs from its ``embed`` (a model
        with a query instruction) is asked one query at a time, through ``embed_query``, so
        that every vector is the one :meth:`find` uses; a batched model run may differ from
        a one-text run in the last bits of a float (padding), which moves scores by ~1e-7.

        By default (``reader_processes="auto"``) and on a sync :class:`Treehop` with
        ``reader_processes``, a batch of at least
        ``MIN_SPLIT_FIND_MANY`` queries is also split between the calling process and its
        idle worker processes (contiguous parts, answered at the same time, the same results
        in the same order): see :class:`Treehop`; an :class:`AsyncTreehop` with
        ``reader_processes`` splits an awaited batch the same way, its own part answered on
        the loop while it awaits the workers' parts in a thread.
        """
        self._check_open()
        pool = (
            None
            if isinstance(queries, str | bytes)
            or not isinstance(queries, Sequence)
            or len(queries) < MIN_SPLIT_FIND_MANY
            else self._pool.for_call(batch=True)  # (a small batch starts no worker)
        )
        if pool is None:
            return await self._find_many(
                queries, context_type=context_type, query_vectors=query_vectors, **options
            )
        texts, vectors, ctype, _ = self._check_find_many(
            queries, query_vectors, context_type, options
        )
        embedded = vectors is None
        if vectors is None:
            vectors = await self._aembed_queries(texts)
            if not vectors.any(axis=1).all():
                # an all-zero embedding: taken here as the embedder's answer (a worker,
                # given it as a caller's vector, would refuse it)
                return await self._find_many(queries, context_type=context_type, **options)
        else:  # the caller's rows as given (each checked above), normalised where answered
            vectors = np.stack(
                [np.asarray(v, dtype=np.float32).ravel() for v in query_vectors]  # type: ignore[union-attr]
            )

        async def here(part: list[str], rows: np.ndarray[Any, Any]) -> list[FindResult]:
            if embedded:  # the embedder's rows, used as they are (as :meth:`find` uses its own)
                return await self._find_many(part, context_type=ctype, _embedded=rows, **options)
            return await self._find_many(part, context_type=ctype, query_vectors=rows, **options)

        quiet = _BATCH_HINTS.set(False)  # (the parts say nothing: the batch's hint follows)
        try:
            out = await pool.afind_many(
                texts, vectors, here=here, context_type=ctype, embedded=embedded, **options
            )
        finally:
            _BATCH_HINTS.reset(quiet)
        await self._io(self._hint_after, "find_many", out, ctype, options)
        return out

    async def _find_many(
        self,
        queries: Sequence[str],
        *,
        context_type: ContextType | str | None = None,
        query_vectors: Sequence[Sequence[float]] | np.ndarray[Any, Any] | None = None,
        _embedded: np.ndarray[Any, np.dtype[np.float32]] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> list[FindResult]:
        """:meth:`find_many` in this process; ``_embedded``: this client's embedder's
        vectors of ``queries`` (a split batch's part, or a reader process's), used as they
        are, as the embedder's answer is when this method embeds them itself (a caller's
        ``query_vectors`` are checked and made unit rows, which moves a score by ~1e-7)."""
        texts, vectors, ctype, opts = self._check_find_many(
            queries, query_vectors, context_type, options
        )
        if _embedded is not None:
            vectors = _embedded_units(_embedded, self.store)
        target_uri = options.get("target_uri")
        roots = await self._io(self._roots, target_uri, context_type)
        if not as_list(target_uri):  # (as :meth:`_run_query` does, once for the batch)
            roots = await self._io(self._stored_roots, roots)
        if vectors is None:
            vectors = _embedded_units(await self._aembed_queries(texts), self.store)
        reqs = [
            self._request(
                TypedQuery(query=t, context_type=ctype),
                roots,
                opts,
                vectors[i],
                self.config.find_pool,
            )
            for i, t in enumerate(texts)
        ]
        out = []
        for qr in await self.retriever().retrieve_many(reqs):
            hits = await self._io(self._postprocess, qr.matched_contexts, opts, roots)
            out.append(self._to_find_result(hits, [qr], None))
        empty = sum(1 for r in out if not r.total)
        if empty and as_list(target_uri) and _BATCH_HINTS.get():
            await self._io(
                self._hint_empty_leaf_targets, roots, opts, "find_many", empty, len(out), ctype
            )
        return out

    def _check_find_many(
        self,
        queries: object,
        query_vectors: object,
        context_type: ContextType | str | None,
        options: SearchKwargs,
    ) -> tuple[
        list[str],
        np.ndarray[Any, np.dtype[np.float32]] | None,
        ContextType | None,
        SearchOptions,
    ]:
        """Every argument of :meth:`find_many` checked (none read from the store)."""
        texts, vectors = _check_many(queries, query_vectors, self.store)
        ctype, opts, _ = self._find_options(options, context_type)
        return texts, vectors, ctype, opts

    async def _aembed_queries(self, texts: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The query vectors of ``texts``: one ``aembed`` call where the embedder embeds a
        query as a document (:func:`_queries_as_documents`), else ``aembed_query`` each."""
        emb = self._embedder
        if _queries_as_documents(emb):
            return await emb.aembed(texts)
        return np.stack([await emb.aembed_query(t) for t in texts])

    def _embed_queries(self, texts: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        """:meth:`_aembed_queries`, blocking (the sync client's path)."""
        emb = self._embedder
        if _queries_as_documents(emb):
            return emb.embed(texts)
        return np.stack([emb.embed_query(t) for t in texts])

    def _find_options(
        self, options: SearchKwargs, context_type: object
    ) -> tuple[ContextType | None, SearchOptions, list[str]]:
        """The context type, search options and target URIs of a :meth:`find` /
        :meth:`find_many` call, checked (the targets' syntax and grammar, so that a bad URI
        costs no embedding; whether they exist is the store's answer)."""
        ctype = argmod.check_context_type(context_type)
        opts = self._search_options(options, RetrievalMode.QUICK)
        targets = argmod.check_target_uris(options.get("target_uri"))
        for t in targets:
            self.resolve(t)  # (kept by ``uri.normalize``: resolved again at no cost later)
        targets = self._typed_targets(targets, ctype)
        # The user's space itself (``viking://user/<me>``) is a valid URI but never a node
        # (nothing has it as its parent): the NotFoundError :meth:`_roots_of` would raise
        # after the query was embedded, raised here before (attacks61/62's open item).
        home = self._user_root()
        spaces = [t for t in targets if self.resolve(t) == home]
        if spaces:
            raise _unknown_targets(spaces)
        return ctype, opts, targets

    def _search_options(self, options: SearchKwargs, default_mode: RetrievalMode) -> SearchOptions:
        """Validate every search option once, before any work is done (see
        :class:`~treehop.search_options.SearchOptions`)."""
        return SearchOptions.build(
            options, default_mode=default_mode, reranker_set=self.reranker is not None
        )

    async def _run_query(
        self,
        tq: TypedQuery,
        roots: list[str],
        opts: SearchOptions,
        vector: np.ndarray[Any, np.dtype[np.float32]] | None = None,
        known: bool = False,
    ) -> QueryResult:
        """One typed query in ``roots``; those not in the store are left out (all of them
        kept if none is), unless ``known``: every root was found in the store just before."""
        if not known:
            roots = await self._io(self._stored_roots, roots)
        if vector is None:
            vector = _embedded_unit(await self._embedder.aembed_query(tq.query), self.store)
        req = self._request(tq, roots, opts, vector, self.config.find_pool)
        return await self.retriever().retrieve(req)

    def _stored_roots(self, roots: list[str]) -> list[str]:
        """``roots`` less those not in the store (all of them kept if none is)."""
        existing = self.store.get(roots)
        return [r for r, n in zip(roots, existing, strict=True) if n is not None] or roots

    @staticmethod
    def _request(
        tq: TypedQuery,
        roots: list[str],
        opts: SearchOptions,
        vec: np.ndarray[Any, np.dtype[np.float32]],
        pool: int = 0,
    ) -> RetrievalRequest:
        """The retriever's request; ``pool``: the config's ``find_pool`` (the request asks
        for at least that many results; the caller keeps the first ``limit``:
        :meth:`_postprocess`, ``fuse_query_results``)."""
        return RetrievalRequest(
            query=tq,
            vector=vec,
            roots=roots,
            limit=max(opts.retrieve_count or opts.limit, pool),
            mode=opts.mode,
            score_threshold=opts.threshold,
            tags=opts.tags,
            metadata=opts.metadata,
            include_directories=opts.include_directories,
            dense_weight=opts.dense_weight,
            explain=opts.explain,
            collapse_chunks=opts.collapse_chunks,
            slot_chars=opts.slot_chars,
            context_tokens=opts.context_tokens,
        )

    def _postprocess(
        self, hits: Sequence[MatchedContext], opts: SearchOptions, roots: Sequence[str]
    ) -> list[MatchedContext]:
        """The post-processing controls over a search's hits; ``roots``: its roots (a
        neighbour chunk outside them is not diffused in: :func:`diffuse_chunks`)."""
        out = apply_rerank_threshold(hits, opts.rerank_threshold)[: opts.limit]
        out = diffuse_chunks(out, self.store, opts.chunk_diffusion_count, roots)
        return group_chunks(out) if opts.chunk_group else out

    # ------------------------------------------------------------------ search
    async def search(
        self,
        query: str,
        *,
        session_id: str | None = None,
        context_types: Sequence[ContextType | str] | None = None,
        **options: Unpack[SearchKwargs],
    ) -> FindResult:
        """Session-aware search: intent analysis, typed queries run concurrently, fusion.

        ``since`` / ``until`` restrict every typed query to memories in ``[since, until)``, as
        in :meth:`find`.

        The planner sees the session's compressed summary, its last 5 messages and ``query``,
        and returns 0-5 typed queries. Each runs in its context type's root (or in the given
        targets of that type), in THINKING mode by default (rerank when a reranker is set).
        Results are fused per context type by priority-weighted reciprocal-rank fusion; each
        hit lists the typed queries that found it. Zero queries (small talk) means no
        retrieval: an empty result that carries the plan. Without an LLM the plan falls back
        to the raw query against every allowed context type and says so.
        """
        self._check_open()
        q = check_query(query)
        opts = self._search_options(options, RetrievalMode.THINKING)
        target_uri = options.get("target_uri")
        targets = [self.resolve(t) for t in argmod.check_target_uris(target_uri)]
        argmod.check_context_types(context_types)
        argmod.check_session_id(session_id)
        if targets:
            await self._io(self._roots, target_uri, None)  # NotFoundError for unknown targets
        else:
            await self._io(self._fresh)
        allowed = self._allowed_types(targets, context_types)
        summary: str = ""
        recent: Sequence[ChatMessage] = []
        if session_id is not None:
            try:
                summary, recent = self.sessions.context_for_intent(session_id)
            except SessionNotFoundError as exc:
                # Why: add_messages(session_id="s1") then search(..., session_id="s1") is a
                # memory user's first try, and "no session 's1'" named the id just written.
                # (The same words for a missing id and another user's: no existence oracle.)
                raise SessionNotFoundError(f"{exc}: {SEARCH_SESSION_HINT}") from None
        plan = await self.intent_analyzer.analyze(q, summary, recent, context_types=allowed)
        jobs: list[tuple[TypedQuery, list[str]]] = []
        for tq in plan.queries:
            ct = tq.context_type
            if targets:
                roots = [t for t in targets if ct is None or urimod.context_type_of(t) is ct]
            else:
                roots = [self.root(ct)] if ct is not None else [self.root(c) for c in allowed]
            if roots:
                jobs.append((tq, roots))
        results = await asyncio.gather(*(self._run_query(tq, roots, opts) for tq, roots in jobs))
        for qr in results:
            qr.matched_contexts = apply_rerank_threshold(qr.matched_contexts, opts.rerank_threshold)
        fused = fuse_query_results(results, limit=opts.limit)
        merged = [m for ct in ContextType for m in fused.get(ct, [])]
        merged = await self._io(
            diffuse_chunks, merged, self.store, opts.chunk_diffusion_count, targets or None
        )
        if opts.chunk_group:
            merged = group_chunks(merged)
        return self._to_find_result(merged, list(results), plan)

    def _allowed_types(
        self, targets: Sequence[str], context_types: Sequence[ContextType | str] | None
    ) -> list[ContextType]:
        if context_types:
            allowed = argmod.check_context_types(context_types) or list(ContextType)
        elif targets:
            allowed = list(dict.fromkeys(urimod.context_type_of(t) for t in targets))
        else:
            allowed = list(ContextType)
        if targets:
            have = {urimod.context_type_of(t) for t in targets}
            if not have & set(allowed):
                raise InvalidQueryError(
                    "context_types and target_uri do not overlap: no typed query could run"
                )
        return allowed

    # ------------------------------------------------------------------ agent memory
    async def add_messages(
        self,
        messages: Sequence[Any],
        *,
        conversation_id: str = "default",
        session_id: str | None = None,
        session_time: TimeLike | None = None,
        extractor: MemoryExtractor | None = None,
        dated_text: bool = True,
        extract_deadline_s: float | None = memory.EXTRACT_DEADLINE_S,
    ) -> MemoryWriteResult:
        """Store messages as turns of a conversation session, with speakers and timestamps
        (no LLM; ``extractor`` adds a summary and facts on top, within
        ``extract_deadline_s`` in all; ``dated_text`` heads each turn's text with its day).
        See :mod:`treehop.memory`."""
        self._check_open()
        # (its reads -- the sessions kept, the place checks -- are the write's, as
        # add_memory's: after the folder left its path it makes a new index there; helper
        # leftovers73c)
        with reads_for_a_write(self.store):
            return await memory.add_messages(
                self,
                messages,
                conversation_id=conversation_id,
                session_id=session_id,
                session_time=session_time,
                extractor=extractor,
                dated_text=dated_text,
                extract_deadline_s=extract_deadline_s,
            )

    async def remember(
        self,
        text: str,
        *,
        name: str | None = None,
        category: str = "notes",
        speaker: str | None = None,
        timestamp: TimeLike | None = None,
        tags: str | Sequence[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> MemoryWriteResult:
        """Store one time-stamped memory note at ``~/memories/<category>/<name>``; unlike
        ``add_memory`` it carries ``timestamp`` (default now) and ``speaker`` metadata, so
        ``since`` / ``until`` find it (see :func:`treehop.memory.remember`)."""
        self._check_open()
        with reads_for_a_write(self.store):  # (the write's reads, as add_messages')
            return await memory.remember(
                self,
                text,
                name=name,
                category=category,
                speaker=speaker,
                timestamp=timestamp,
                tags=tags,
                metadata=metadata,
            )

    async def assemble_context(
        self,
        /,
        query: str | FindResult | list[MatchedContext] | tuple[MatchedContext, ...],
        *,
        max_tokens: int = 2000,
        quotas: Mapping[ContextType | str, int] | None = None,
        tiers: Sequence[Tier] = TIERS,
        exclude_uris: str | Sequence[str] = (),
        session_id: str | None = None,
        token_counter: TokenCounter | str | None = None,
        **find_kwargs: Any,
    ) -> AssembledContext:
        """A token-budgeted context block for ``query`` (run through :meth:`find` with
        ``find_kwargs``) or for an existing result, a :class:`FindResult` or a list of its
        hits (``res.top(3)``), as :func:`~treehop.context_assembly.assemble_context` takes; see
        :mod:`treehop.context_assembly`.

        With ``session_id`` the hits injected by earlier calls of the same session are left out
        and this call's are recorded (persisted with the index). Without a ``limit`` the query
        asks :meth:`find` for enough slots to fill ``max_tokens``
        (:func:`~treehop.context_assembly.context_limit`), and a question's passage slots show
        no more than about half the block (``slot_chars``:
        :func:`~treehop.context_assembly.context_slot_chars`) unless ``slot_chars`` is given.
        """
        self._check_open()
        check_budget(max_tokens, quotas, tiers)
        counter = resolve_counter(token_counter)
        excluded = [
            self.display(self.resolve(u))
            for u in argmod.check_uri_list(exclude_uris, "exclude_uris")
        ]
        if session_id is not None:
            ContextLedger.check_session(session_id)
        result: FindResult | list[MatchedContext]
        if isinstance(query, (FindResult, list, tuple)):
            given = "a FindResult" if isinstance(query, FindResult) else "a list of hits"
            if find_kwargs:
                raise InvalidQueryError(f"find arguments need a query string, not {given}")
            if isinstance(query, FindResult):
                result = query
            else:
                # (hits already retrieved, as the pure function takes them: a retriever
                # user's res.top(3) was refused as "query must be a string, got list")
                bad = next(
                    (i for i, h in enumerate(query) if not isinstance(h, MatchedContext)), None
                )
                if bad is not None:
                    raise InvalidQueryError(
                        f"hits[{bad}] must be a MatchedContext, got {type(query[bad]).__name__}"
                    )
                result = list(query)
        else:
            unknown = sorted(set(find_kwargs) - SEARCH_OPTIONS - _FIND_ARGUMENTS)
            if unknown:  # (before a name like ``context_tokens`` reaches a Python call)
                raise InvalidQueryError(
                    f"unknown find argument(s) {listed(unknown)} for assemble_context"
                )
            if "limit" not in find_kwargs:
                find_kwargs["limit"] = context_limit(max_tokens)
            result = await self._find(query, context_tokens=max_tokens, **find_kwargs)
        seen: list[str] = []
        if session_id is not None:
            seen = await self._io(self.context_ledger.seen, session_id)
        out = assemble_context(
            result,
            max_tokens=max_tokens,
            quotas=quotas,
            tiers=tiers,
            exclude_uris=excluded,
            seen_uris=seen,
            token_counter=counter,
            query=query if isinstance(query, str) else None,
            excerpt_paragraphs=self.config.excerpt_paragraphs,
            excerpt_skip_heading=self.config.excerpt_skip_heading,
            lexical_lead=self.config.lexical_lead,
            extensions_leave_room=self.config.extensions_leave_room,
        )
        if session_id is not None and out.uris:
            # (the ledger's read-merge-write under the session's key lock: two processes
            # assembling for one session each wrote their own merge, and a third of the
            # URIs they injected were missing from the ledger, to be injected again)
            async with memory._conversation_lock(self.store, f"context-ledger/{session_id}"):
                await self._io(self.context_ledger.add, session_id, out.uris)
        return out

    # ------------------------------------------------------------------ sessions
    # (the reads start with _fresh, as every other read does: after the index folder left
    # its path they raise its StoreError, where they answered "not found" / no sessions;
    # the writes read the session they append to as the write's own reads, and make a new
    # index at the path as the adds do; helper leftovers73c)
    async def create_session(self) -> str:
        """Start a conversation; its id is passed to ``search(session_id=...)``."""
        self._check_open()
        self._fresh_write()
        with reads_for_a_write(self.store):
            return await asyncio.to_thread(self.sessions.create_session, self.user)

    async def add_message(self, session_id: str, role: str, content: str) -> None:
        """Append a message; old turns are folded into the session summary as it grows."""
        self._check_open()
        self._fresh_write()
        with reads_for_a_write(self.store):
            await self.sessions.aadd_message(session_id, role, content)

    async def get_session(self, session_id: str) -> Session:
        """This user's session; another user's id is :class:`NotFoundError`, like a missing one."""
        self._check_open()
        self._fresh()
        return self.sessions.get(session_id)

    async def list_sessions(self) -> list[Session]:
        """This user's sessions, oldest first (never another user's)."""
        self._check_open()
        self._fresh()
        return self.sessions.list_sessions()

    async def delete_session(self, session_id: str) -> None:
        self._check_open()
        self._fresh_write()
        with reads_for_a_write(self.store):
            await asyncio.to_thread(self.sessions.delete, session_id)

    def _to_find_result(
        self,
        contexts: Sequence[MatchedContext],
        query_results: list[QueryResult],
        plan: QueryPlan | None,
    ) -> FindResult:
        own = self._user_root() + "/"  # (what :func:`~treehop.uri.display_under` rewrites)
        # (an enum member read from its class costs ~0.2 us in Python 3.11, ten times a
        # local: ~3 us of a find's ten hits)
        memory, skill = ContextType.MEMORY, ContextType.SKILL
        memories: list[MatchedContext] = []
        resources: list[MatchedContext] = []
        skills: list[MatchedContext] = []
        for m in contexts:
            # A copy only where a URI reads differently to the user (the ``~`` form of the
            # user's own space): a find over resources returns ~10 hits carrying ~60
            # collapsed chunks, and copying each (unchanged) model cost ~0.7 ms per find;
            # a hit none of whose URIs lies in that space is kept without asking each.
            parent, collapsed = m.parent_uri, m.collapsed
            if (
                m.uri.startswith(own)
                or (parent is not None and parent.startswith(own))
                or (collapsed and any(c.uri.startswith(own) for c in collapsed))
            ):
                m = self._displayed(m, self.display)
            ctype = m.context_type
            if ctype is memory:
                memories.append(m)
            elif ctype is skill:
                skills.append(m)
            else:
                resources.append(m)
        return find_result(plan, query_results, memories, resources, skills)

    @staticmethod
    def _displayed(m: MatchedContext, display: Callable[[str], str]) -> MatchedContext:
        """``m`` with its URIs in the user's display form (a copy where one differs)."""
        collapsed = [
            c if (u := display(c.uri)) == c.uri else c.model_copy(update={"uri": u})
            for c in m.collapsed
        ]
        uri = display(m.uri)
        parent = display(m.parent_uri) if m.parent_uri else None
        if (
            uri != m.uri
            or parent != m.parent_uri
            or any(a is not b for a, b in zip(collapsed, m.collapsed, strict=True))
        ):
            m = m.model_copy(update={"uri": uri, "parent_uri": parent, "collapsed": collapsed})
        return m

    # ------------------------------------------------------------------ lifecycle
    async def save(self) -> None:
        self._check_open()
        await self._io(self.store.save)

    def _check_open(self) -> None:
        """Refuse a call after :meth:`close`, as the sync client's closed loop refuses it.
        Why: a closed ``AsyncTreehop`` kept answering (its store still in memory, its model
        pools closed) and wrote to a store it had saved for the last time, where a closed
        ``Treehop`` raised; every public method starts here (``test_leftovers60``)."""
        if self._closed:
            raise ClientClosedError("this treehop client is closed")

    async def close(self) -> None:
        """Save pending changes and close the model clients' connection pools. An embedded
        store is closed (:meth:`EmbeddedStore.close`): its background threads are stopped
        and joined and the graph is saved as far as it got, so a script that ingests and
        exits leaves a graph that the next process uses (a shared store stays usable by
        other clients: their next call resumes the graph work). Every later call raises
        :class:`~treehop.errors.ClientClosedError`; calling it again does nothing."""
        if self._closed:
            return
        self._closed = True
        if self._pool.processes:
            # every worker stopped and joined (a pool still starting too), in a thread: the
            # joins must not stall the loop
            await asyncio.to_thread(self._pool.close)
        store = self.store
        await self._io(store.close if isinstance(store, EmbeddedStore) else store.save)
        await self.models.aclose()

    async def aclose(self) -> None:
        """:meth:`close` under the name asyncio code awaits (``contextlib.aclosing``, httpx,
        async generators, and both retrievers here: ``await retriever.aclose()``). Why
        (helper usage86): an async LlamaIndex service over an ``AsyncTreehop`` ended with
        ``await client.aclose()``, as it ends the retriever, and got an ``AttributeError``."""
        await self.close()

    async def __aenter__(self) -> AsyncTreehop:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        """Never raises: a caller's embedder whose ``name`` property raises, or a caller's
        store whose ``__len__`` does, showed as that exception from ``repr(client)`` (in a
        debugger, a log line, a traceback's locals: lead, stop 63); they show as ``?``.
        A closed client shows ``closed=True`` and leaves its store alone: counting its nodes
        mapped the closed store's files again (helper usage78: an asyncio task's repr of a
        retriever holding it reopened what ``close()`` had released).

        An open client shows its store's class, not its count (helper leftovers68b): a repr
        makes no store call. Why: ``len(store)`` of a remote store (Milvus, VikingDB) is a
        request under the store's deadline, made by every log line, debugger view and
        framework repr (a LangChain retriever's, an asyncio task's) of the client, and it
        failed with the service ("nodes=?"); a shared embedded store released by another
        client's close was mapped again."""
        # (the store's class as ``isinstance`` sees it: a caller's store behind its guard
        # shows the caller's class; read from the object, no call of the store's)
        shown = _or_unknown(lambda: self.store.__class__.__name__)
        state = "closed=True" if self._closed else f"store={shown}"
        return (
            f"AsyncTreehop(path={str(self.path) if self.path else None!r}, user={self.user!r}, "
            f"{state}, "
            f"embedder={_or_unknown(lambda: repr(self.embedder.name))})"
        )

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        """Refused, for pickle, ``copy.copy`` and ``copy.deepcopy`` alike. Why: a client is an
        open index (a lock, files, a worker loop): ``deepcopy`` of it, or of a vector store or
        retriever holding it, failed on ``cannot pickle '_contextvars.Context'`` with an
        ``Exception ignored`` traceback from a half-built event loop, and ``copy.copy`` gave a
        second handle whose ``close()`` closed the first."""
        raise UnsupportedUseError(NO_COPY_MESSAGE.format(type(self).__name__))


def _or_unknown(read: Callable[[], object]) -> str:
    """``read()`` as text for a repr, ``?`` when a caller's plug-in raises (signals pass)."""
    try:
        return str(read())
    except BaseException as exc:
        if is_signal(exc):
            raise
        return "?"


_NOT_A_VECTOR_KINDS = frozenset("cmMSUV")
"""numpy dtype kinds a query vector is not made of: complex (the cast to float32 drops the
imaginary part with a warning), dates and durations (counts of days or seconds), strings
(parsed as numbers), raw bytes and records."""
TINY_QUERY_NORM = 1e-15
"""Below this float32 norm some squares of the vector have underflowed (to subnormals or
to zero: values under ~1e-19), so the norm no longer measures the vector: it is rescaled
first (:func:`scaled_query_row`). A unit vector, or any vector a model returns, is far
above."""


def _named(name: str) -> str:
    """``name`` as the segment an add names its place by; one that decodes out of it
    (``x%2Fy``, ``a\\b``: :func:`treehop.uri.name_leaves_root`) is refused, as its URI could
    not be named again (read, ls, remove refused it)."""
    if urimod.name_leaves_root(name):
        raise InvalidURIError(
            f"the name {name[:100]!r} would make a URI that no call can name again "
            "(a '%2F', '%5C', '\\' or '..' in it); give target_uri"
        )
    return segment(name)


def _unknown_targets(missing: Sequence[str], hint: str = "") -> NotFoundError:
    """The error of a find whose targets name no node (named bounded: 100 targets of 2,048
    characters made a 200 KB message); ``hint``: :meth:`AsyncTreehop._escaped_hint`'s."""
    more = f" (and {len(missing) - 10} more)" if len(missing) > 10 else ""
    # (each cut before it is redacted, a key the cut runs through masked whole: helper
    # attacks90, the caller's URI was quoted as given, its credential too)
    shown = ", ".join(cut_text(t, 200) for t in missing[:10])
    return NotFoundError(redact(f"unknown target URI(s): {shown}{more}{hint}"))


_QUIET_FLOATS = np.errstate(over="ignore", under="ignore", invalid="ignore")
"""The float overflow / underflow a query vector's check meets and handles itself (a norm
of 1e38s, a cast of 1e308 to float32: :func:`_rescaled`). Why: numpy's ``RuntimeWarning``
was printed for a vector the docs say is searched, and escaped ``find`` raw (or read as
"not a list of numbers") where warnings are errors (``python -W error``)."""


@_QUIET_FLOATS
def _check_query_vector(
    vector: Sequence[float] | np.ndarray[Any, Any], store: VectorStore, embedded: bool = False
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """A caller's query embedding as a unit float32 row, checked against the index.

    ``embedded``: ``vector`` is the guarded embedder's answer without its finiteness check
    (:meth:`~treehop.embedders.guarded.GuardedEmbedder.embed_query_unfinished`), made here:
    a NaN or infinite value raises the guard's :class:`~treehop.errors.EmbeddingError`, as
    ``embed_query`` would have before this check ran.

    Finite numbers are searched in their direction at any scale (values whose squares
    underflow or overflow float32, float64 values past float32's range: :func:`_rescaled`);
    anything that is not one vector of real numbers raises
    :class:`~treehop.errors.InvalidQueryError` (whatever a hostile element's ``__float__``
    raises, an int past float's range, a string, a complex or date array, several rows)."""
    # (an ``embedded`` vector is the guard's float32 row already: no kind to check)
    if not embedded and (
        isinstance(vector, str | bytes)
        or (isinstance(vector, np.ndarray) and vector.dtype.kind in _NOT_A_VECTOR_KINDS)
    ):
        kind = vector.dtype if isinstance(vector, np.ndarray) else type(vector).__name__
        raise InvalidQueryError(f"query_vector must be a list of numbers, got {kind}")
    try:
        v = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidQueryError(f"query_vector must be a list of numbers ({exc})") from exc
    except Exception as exc:  # (an int past float's range, an element's own __float__)
        raise InvalidQueryError(
            f"query_vector must be a list of numbers ({type(exc).__name__})"
        ) from None
    if v.ndim != 1:
        if v.size != max(v.shape, default=1):  # (a (1, d) row is one vector; (2, d) is not)
            raise InvalidQueryError(f"query_vector must be one vector, got shape {v.shape}")
        v = v.ravel()
    # (``np.linalg.norm`` of a float vector is this square root, with ~5 us of dispatch; a
    # norm in [TINY_QUERY_NORM, inf) means every element is finite: an infinite or NaN one makes
    # the sum of squares, all non-negative, infinite or NaN, so the elements are read only
    # otherwise)
    norm = float(np.sqrt(v.dot(v))) if v.size else 0.0
    if not TINY_QUERY_NORM <= norm < math.inf and v.size:  # (NaN fails the comparison too)
        v = _rescaled(vector, v, embedded)
        norm = float(np.sqrt(v.dot(v)))
    if not v.size or norm == 0.0:
        raise InvalidQueryError("query_vector must be a non-empty, finite, non-zero vector")
    if store.dimension is not None and v.size != store.dimension:
        raise InvalidQueryError(
            f"query_vector has {v.size} dimensions; this index holds {store.dimension}"
        )
    return v / norm


def _rescaled(
    vector: object, v: np.ndarray[Any, np.dtype[np.float32]], embedded: bool
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """:func:`scaled_query_row` of a query vector to be searched: a NaN or an infinity
    raises (the guard's error for an ``embedded`` vector); an all-zero vector is returned as
    it is (the caller's zero check raises)."""
    scaled = scaled_query_row(vector, v)
    if scaled is None:
        if embedded:
            raise EmbeddingError(NOT_FINITE)
        raise InvalidQueryError("query_vector must be a non-empty, finite, non-zero vector")
    return scaled


def scaled_query_row(
    vector: object, v: np.ndarray[Any, np.dtype[np.float32]]
) -> np.ndarray[Any, np.dtype[np.float32]] | None:
    """``v`` (a non-empty ``vector`` as float32) scaled so that its largest value is 1, from
    ``vector``'s own values in float64: finite values whose float32 squares overflow (|x| >
    ~1.8e19), underflow (|x| < ~1e-19) or that leave float32 themselves (1e39, 1e-50) keep
    their direction, which is what a search and an integration's MMR read (dividing by an
    infinite norm searched with a zero vector; a norm of underflowed squares rejected a
    non-zero vector as zero). ``None`` where a value is NaN or infinite; ``v`` itself where
    every value is zero."""
    try:
        wide = np.asarray(vector, dtype=np.float64).reshape(-1)
    except Exception:  # (converted to float32 by the caller: not expected)
        wide = v.astype(np.float64)
    if wide.size != v.size:
        wide = v.astype(np.float64)
    if not np.isfinite(wide).all():
        return None
    top = float(np.abs(wide).max())
    if top == 0.0:
        return v
    return (wide / top).astype(np.float32)


_UNIT_SLACK = 1e-4
"""How far from 1 the norm of an embedder's query vector may be and still be searched as
it came (a model's unit rows are within ~1e-6: their results stay bit for bit what they
were); one further off is made a unit row (:func:`_embedded_unit`)."""


@_QUIET_FLOATS
def _embedded_unit(
    vector: np.ndarray[Any, np.dtype[np.float32]], store: VectorStore
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """The guarded embedder's query vector for the async ``find`` / ``find_many``: a unit
    row as it came, any other made a unit row as the sync ``find()`` and ``find_many`` make
    every vector (:func:`_check_query_vector`). Why: an embedder that does not normalise
    its output (a server returning raw model vectors) got its scores scaled by the
    vector's length on the async paths only (2x for a vector of length 2), and its ranking
    moved where the lexical scores are fused with them. An all-zero vector (a text the
    model maps to nothing) is searched as it is."""
    norm = float(np.sqrt(vector.dot(vector)))
    if abs(norm - 1.0) <= _UNIT_SLACK:
        return vector
    try:
        return _check_query_vector(vector, store, True)
    except InvalidQueryError:
        if vector.any():
            raise  # (not the index's dimension)
        return vector


def _embedded_units(
    rows: np.ndarray[Any, np.dtype[np.float32]], store: VectorStore
) -> np.ndarray[Any, np.dtype[np.float32]]:
    """:func:`_embedded_unit` of each row (the rows themselves where all are unit rows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))
    off = np.flatnonzero(~(np.abs(norms - 1.0) <= _UNIT_SLACK))
    if not off.size:
        return rows
    rows = np.array(rows, dtype=np.float32)
    for i in off:
        rows[i] = _embedded_unit(rows[i], store)
    return rows


FUSED_QUERY_CHECK = True
"""The sync ``find()`` checks the embedded query's values once, with its norm
(:func:`_check_query_vector` with ``embedded=True``), not first in the embedder's guard
(``False``: both checks, as before; the tests and ``bench/bench_find_toggle.py --flag``
compare the two)."""

_FIND_ARGUMENTS = frozenset({"context_type", "query_vector"})
""":meth:`AsyncTreehop.find`'s keyword arguments besides the search options."""

MAX_FIND_MANY = 1024
"""The most queries one :meth:`AsyncTreehop.find_many` call takes (a larger batch gains
nothing over several, and bounds what one call holds in memory)."""


def _check_many(
    queries: object, vectors: object, store: VectorStore
) -> tuple[list[str], np.ndarray[Any, np.dtype[np.float32]] | None]:
    """``find_many``'s queries (and vectors), every one checked before any work."""
    if isinstance(queries, str | bytes) or not isinstance(queries, Sequence):
        raise InvalidQueryError(f"queries must be a list of strings, got {type(queries).__name__}")
    if not queries:
        raise InvalidQueryError("queries is empty: give at least one query")
    if len(queries) > MAX_FIND_MANY:
        raise InvalidQueryError(
            f"{len(queries)} queries; one find_many call takes at most {MAX_FIND_MANY}"
        )
    rows: list[np.ndarray[Any, np.dtype[np.float32]]] | None = None
    if vectors is not None:
        if isinstance(vectors, str | bytes) or not isinstance(vectors, Sequence | np.ndarray):
            raise InvalidQueryError("query_vectors must be a list of vectors, one per query")
        if len(vectors) != len(queries):
            raise InvalidQueryError(
                f"{len(vectors)} query_vectors for {len(queries)} queries: give one per query"
            )
        rows = []
        for i, v in enumerate(vectors):
            try:
                rows.append(_check_query_vector(v, store))
            except InvalidQueryError as exc:
                raise InvalidQueryError(f"query_vectors[{i}]: {exc}") from None
            if rows[-1].size != rows[0].size:
                raise InvalidQueryError(
                    f"query_vectors[{i}] has {rows[-1].size} dimensions, query_vectors[0] "
                    f"{rows[0].size}: give vectors of one model"
                )
    texts = []
    for i, q in enumerate(queries):
        try:
            texts.append(check_query(q) if rows is None or q else "")
        except InvalidQueryError as exc:
            raise InvalidQueryError(f"queries[{i}]: {exc}") from None
    return texts, None if rows is None else np.stack(rows)


def _queries_as_documents(embedder: Embedder) -> bool:
    """Whether ``embedder`` embeds a query as a one-text document (``BaseEmbedder``'s
    ``embed_query``, not overridden): then one ``embed`` call of many queries gives each
    query's vector; a model with a query instruction overrides ``embed_query``."""
    inner = getattr(embedder, "inner", embedder)  # (the guard around the user's embedder)
    kind = type(inner)
    return (
        getattr(kind, "embed_query", None) is BaseEmbedder.embed_query
        and getattr(kind, "aembed_query", None) is BaseEmbedder.aembed_query
    )


def _make_tagger(tagger: object) -> Tagger | None:
    """``"auto"``: the default keyword tagger; ``None``/``False``: no automatic tags; anything
    else: a :class:`~treehop.tagging.Tagger` (checked by ``check_client_args``)."""
    if tagger is None or tagger is False:
        return None
    if tagger == "auto":
        return IngestTagger()
    if not isinstance(tagger, Tagger):
        raise InvalidQueryError(
            "tagger must be 'auto', None/False or a Tagger (tag_nodes() and refit())"
        )
    return tagger


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _blocking(
    method: Callable[Concatenate[AsyncTreehop, _P], Coroutine[Any, Any, _R]],
) -> Callable[Concatenate[Treehop, _P], _R]:
    """The blocking twin of an :class:`AsyncTreehop` coroutine method.

    Why generated instead of written out: hand-written ``(**kwargs: Any)`` wrappers hid every
    signature from type checkers and ``help()``, and drifted from the async originals.
    ``ParamSpec`` carries the parameters over exactly; ``functools.wraps`` carries the name,
    the docstring and (through ``__wrapped__``) the signature that ``inspect`` shows.
    """

    @functools.wraps(method)
    def blocking(self: Treehop, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return self._runner.run(_bound(method, self._async, args, kwargs))

    return blocking


def _bound(
    method: Callable[..., Coroutine[Any, Any, _R]],
    client: AsyncTreehop,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Coroutine[Any, Any, _R]:
    """``method(client, *args, **kwargs)``, the coroutine of a sync method's call. Calling a
    coroutine function runs none of its body: a TypeError here is the arguments not
    binding. Why: Python's message named AsyncTreehop for a call on Treehop
    (``th.add_resource(d, uri=...)``, ``th.find("q", 5)``) and was no TreehopError, where an
    unknown constructor keyword or find() option is an InvalidQueryError."""
    try:
        return method(client, *args, **kwargs)
    except TypeError as exc:
        raise _argument_error(method, exc) from None


def _argument_error(method: Callable[..., Any], exc: TypeError) -> InvalidQueryError:
    """A blocking method's arguments that do not bind, named on :class:`Treehop`, with the
    parameters it takes (as :func:`treehop.arguments.check_keywords` names a constructor's)."""
    params = list(inspect.signature(method).parameters.values())[1:]
    names = [("**" if p.kind is p.VAR_KEYWORD else "") + p.name for p in params]
    detail = str(exc).removeprefix(f"{method.__qualname__}()").strip()
    takes = ", ".join(names) or "no arguments"  # (attacks65: "it takes " ended a message)
    return InvalidQueryError(f"Treehop.{method.__name__}() {detail:.200}; it takes {takes}")


def _blocking_find(
    method: Callable[Concatenate[AsyncTreehop, _P], Coroutine[Any, Any, _R]],
) -> Callable[Concatenate[Treehop, _P], _R]:
    """:func:`_blocking` for :meth:`AsyncTreehop.find` (``method``: its signature and
    docstring), run on the calling thread (:meth:`Treehop._find_here`) where nothing it
    touches is bound to the client's loop thread."""

    @functools.wraps(method)
    def blocking(self: Treehop, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        return cast(_R, self._find_here(args, kwargs))

    return blocking


def _blocking_many(
    method: Callable[Concatenate[AsyncTreehop, _P], Coroutine[Any, Any, _R]],
) -> Callable[Concatenate[Treehop, _P], _R]:
    """:func:`_blocking_find` for :meth:`AsyncTreehop.find_many`: the queries are embedded
    in one blocking call on the calling thread, then the batch runs there (on the client's
    loop thread where it cannot: see :meth:`Treehop._find_here`)."""

    @functools.wraps(method)
    def blocking(self: Treehop, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        runner = self._runner
        if not (runner.can_run_here() and self._reads_anywhere()):
            return runner.run(_bound(method, self._async, args, kwargs))
        if kwargs.get("query_vectors") is None:
            client = self._async
            skip = ("queries", "context_type", "query_vectors")  # (query_vectors=None)
            options = {k: v for k, v in kwargs.items() if k not in skip}
            texts, _, _, _ = client._check_find_many(
                args[0] if args else kwargs.get("queries"),
                None,
                kwargs.get("context_type"),  # type: ignore[arg-type]
                options,  # type: ignore[arg-type]
            )
            vectors = client._embed_queries(texts)
            if not vectors.any(axis=1).all():
                # an all-zero embedding: the async path takes it as the embedder's answer
                # (see Treehop._find_here)
                return runner.run(_bound(method, self._async, args, kwargs))
            kwargs["query_vectors"] = vectors
        if self._async.reranker is not None and kwargs.get("mode") not in (None, "quick"):
            return runner.run_here(_bound(method, self._async, args, kwargs))
        return runner.run_inline(lambda: _bound(method, self._async, args, kwargs))

    return blocking


def _in_reader_processes(
    inner: Callable[Concatenate[Treehop, _P], FindResult],
) -> Callable[Concatenate[Treehop, _P], FindResult]:
    """A sync read that runs here while no other call of this client does, and goes to the
    client's :class:`~treehop.ReaderPool` when one does and the pool would answer the same
    (:meth:`Treehop._readers_for_call`); else ``inner`` here."""

    @functools.wraps(inner)
    def call(self: Treehop, /, *args: _P.args, **kwargs: _P.kwargs) -> FindResult:
        pool = self._readers_for_call()
        if pool is None:
            return inner(self, *args, **kwargs)
        if self._local_slot.acquire(blocking=False):
            # one call at a time runs here, with no pipe or pickling: a lone caller never
            # pays for the workers, and a second concurrent one overflows to them
            try:
                return inner(self, *args, **kwargs)
            finally:
                self._local_slot.release()
        _bound(AsyncTreehop.find, self._async, args, kwargs).close()  # (binds, as here)
        found = pool.find(*args, **kwargs)  # type: ignore[arg-type]
        if not found.total:  # (the worker's own log is not this process's)
            options = {k: v for k, v in kwargs.items() if k not in ("context_type", "query_vector")}
            self._async._hint_after("find", [found], kwargs.get("context_type"), options)
        return found

    return call


def _many_in_reader_processes(
    inner: Callable[Concatenate[Treehop, _P], list[FindResult]],
) -> Callable[Concatenate[Treehop, _P], list[FindResult]]:
    """A sync ``find_many`` split over this process and the client's reader processes
    (:meth:`ReaderPool.find_many`) when the pool would answer the same
    (:meth:`Treehop._readers_for_call`) and the batch has at least ``MIN_SPLIT_FIND_MANY``
    queries; else ``inner`` here.

    Why: a batch in one process shares its first global step, but each query's descent and
    result models are Python under one interpreter lock, so one process uses one core. The
    batch is checked whole and embedded once here (a bad batch raises before any work, and
    only vectors cross to a worker); this process answers the first part with ``inner``
    (its own shared first step) while each idle worker answers one of the others."""

    @functools.wraps(inner)
    def call(self: Treehop, /, *args: _P.args, **kwargs: _P.kwargs) -> list[FindResult]:
        queries = args[0] if args else kwargs.get("queries")
        if (
            isinstance(queries, str | bytes)
            or not isinstance(queries, Sequence)
            or len(queries) < MIN_SPLIT_FIND_MANY
            or not (self._runner.can_run_here() and self._reads_anywhere())
        ):
            return inner(self, *args, **kwargs)  # (a small batch starts no worker)
        pool = self._readers_for_call(batch=True)
        if pool is None:
            return inner(self, *args, **kwargs)
        # (the arguments bind, as on the path above: an extra positional one was dropped
        # here, silently; helper attacks65)
        _bound(AsyncTreehop.find_many, self._async, args, kwargs).close()
        a = self._async
        given = kwargs.get("query_vectors")
        ctype = cast("ContextType | str | None", kwargs.get("context_type"))
        options = cast(
            SearchKwargs,
            {
                k: v
                for k, v in kwargs.items()
                if k not in ("queries", "context_type", "query_vectors")
            },
        )
        texts, _, _, _ = a._check_find_many(queries, given, ctype, options)
        if given is None:
            vectors = a._embed_queries(texts)
            if not vectors.any(axis=1).all():
                return inner(self, *args, **kwargs)  # (see _blocking_many)
        else:  # the caller's rows as given (each checked above), normalised where answered
            vectors = np.stack(
                [np.asarray(v, dtype=np.float32).ravel() for v in given]  # type: ignore[attr-defined]
            )

        run: Callable[..., list[FindResult]] = inner  # (called with find_many's own arguments)

        def here(part: list[str], rows: np.ndarray[Any, Any]) -> list[FindResult]:
            return run(self, part, context_type=ctype, query_vectors=rows, **options)

        quiet = _BATCH_HINTS.set(False)  # (the parts say nothing: the batch's hint follows)
        try:
            out = pool.find_many(texts, vectors, context_type=ctype, here=here, **options)
        finally:
            _BATCH_HINTS.reset(quiet)
        a._hint_after("find_many", out, ctype, options)
        return out

    return call


_BATCH_HINTS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "treehop_batch_hints", default=True
)
"""Whether an in-process ``find_many`` logs its own file-target hint: off while a batch is
split over this process and reader processes, whose whole answer gets one hint instead."""

_log = logging.getLogger("treehop")
"""The client's hints (a find whose file target matched nothing). The package's logger, not
``treehop.client``: :func:`treehop.redaction.install_log_filter` filters the loggers it names,
and a filter does not reach a child logger's records."""

install_log_filter()
# (the redacting filter on the package's and the HTTP stack's loggers, as ``import treehop``
# attached it when it imported ``treehop._http``; that module, and httpx with it, is now
# imported only with a remote model (helper leftovers75): the filter must not wait for it)

CLIENT_KEYWORDS: tuple[str, ...] = tuple(
    name
    for name, p in inspect.signature(AsyncTreehop.__init__).parameters.items()
    if name != "self" and p.kind is not inspect.Parameter.VAR_KEYWORD
)
"""The keywords both clients' constructors take (``Treehop`` forwards them), in order."""


class Treehop:
    """The synchronous client: the same API as :class:`AsyncTreehop`, blocking.

    It runs the async core on a private event-loop thread, so it also works inside Jupyter or
    other code that already runs an event loop. Every method is generated from the async one
    by :func:`_blocking`, so signatures, defaults, docstrings and ``help()`` are the async
    ones, and a type checker rejects a misspelt keyword on both clients alike.

    ``reader_processes=N`` (an index ``path`` only): ``find()`` calls are answered by ``N``
    worker processes (:class:`~treehop.ReaderPool`), so sync calls from several threads use
    several cores instead of sharing one interpreter lock. A call goes to the workers only
    when they would answer exactly as this client: no reranker, every write saved (a worker
    sees what is committed) and the config unchanged since they started (a changed config
    restarts them); otherwise it runs here. One call at a time runs in this process anyway
    (no pipe, no pickling): a lone caller never waits for a worker, and concurrent calls
    overflow to the workers. They start in the background, when the client opens a saved
    index or at the first find after its first save. ``find_many`` of at least
    ``MIN_SPLIT_FIND_MANY`` queries, under the same conditions, is split into contiguous
    parts: one answered here, one by each idle worker at the same time (each part's first
    global step shared), the results in input order and each the one ``find()`` gives.

    ``reader_processes="auto"`` (the default; ``0`` turns it off): workers for batches
    only, as :class:`AsyncTreehop` says: single finds always run here and start nothing;
    the first ``find_many`` of at least ``MIN_SPLIT_FIND_MANY`` queries over a saved index
    starts one worker per spare core in the background (that batch runs here), and later
    batches are split while other processes leave a core free. Workers start as fresh
    interpreters that import treehop only, so a script needs no
    ``if __name__ == "__main__":`` guard.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        reader_processes: ReaderProcesses = "auto",
        **kwargs: Any,
    ) -> None:
        argmod.check_keywords("Treehop", kwargs.keys(), CLIENT_KEYWORDS)
        check_reader_processes(reader_processes, path)
        self._runner = LoopThread()
        try:
            # (the pool is this client's: the async client inside keeps none of its own)
            self._async = AsyncTreehop(path, reader_processes=0, **kwargs)
        except BaseException:
            # A failed construction must not leave its event-loop thread running.
            self._runner.close()
            raise
        self._pool = ClientReaders(reader_processes, self._async)
        self._local_slot = threading.Lock()
        """Held by the one call that runs in this process while a pool is up."""
        self._readers_for_call()  # an index saved before: its workers start now, aside

    @property
    def _readers(self) -> tuple[str, ReaderPool] | None:
        """The running pool and the config (as JSON) it was started with."""
        return self._pool.readers

    def _readers_for_call(self, batch: bool = False) -> ReaderPool | None:
        """The reader pool, when a ``find()`` (``batch``: a ``find_many`` to split) may go to
        it now (see the class docstring and :meth:`ClientReaders.for_call`); a start never
        delays a call."""
        if self._runner.closed:
            return None
        return self._pool.for_call(batch)

    def _wait_readers(self, timeout: float = 120.0) -> bool:
        """Wait until a pool runs with the current config (tests and benchmarks)."""
        return self._pool.wait(timeout)

    @property
    def aio(self) -> AsyncTreehop:
        """The async client behind this one (shares the store)."""
        return self._async

    @property
    def store(self) -> VectorStore:
        return self._async.store

    @property
    def config(self) -> RetrievalConfig:
        return self._async.config

    @property
    def recovery(self) -> list[RecoveryRecord]:
        """What opening the index recovered from (see :attr:`AsyncTreehop.recovery`)."""
        return self._async.recovery

    @property
    def query_planner(self) -> LLM | None:
        """The planner model (:attr:`AsyncTreehop.query_planner`), settable as there."""
        return self._async.query_planner

    @query_planner.setter
    def query_planner(self, value: LLM | None) -> None:
        self._async.query_planner = value

    @property
    def models(self) -> ModelRegistry:
        """Which chat model does which job (:attr:`AsyncTreehop.models`)."""
        return self._async.models

    @property
    def user(self) -> str:
        return self._async.user

    def _reads_anywhere(self) -> bool:
        """Whether a ``find()`` may run on another thread's event loop: the store allows
        concurrent in-process reads and no reranker keeps loop-bound connections (a
        :class:`~treehop.rerankers.base.BaseReranker` default runs in a worker thread)."""
        a = self._async
        caps = a.store.capabilities
        if caps.remote or not caps.concurrent_reads:
            return False
        r = a.reranker
        return r is None or getattr(type(r), "arerank", None) is BaseReranker.arerank

    def _find_here(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FindResult:
        """A sync ``find(*args, **kwargs)``: on the calling thread where the call may run
        there (:meth:`LoopThread.can_run_here` and :meth:`_reads_anywhere`: sync calls
        from several threads then run side by side instead of queueing on the client's one
        loop thread), else on the loop thread as the async client answers it.

        The call is checked whole first (:meth:`AsyncTreehop._check_find`: a bad argument
        costs no embedding), the query is then embedded by the embedder's blocking
        ``embed_query`` here (its async twin may hold connections bound to the loop
        thread, and a hop there costs two thread wake-ups), its vector checked and made a
        unit row as a caller's vector is, and the checked call runs
        (:meth:`AsyncTreehop._find_checked`) without checking its arguments again.
        """
        a, runner = self._async, self._runner
        if not (runner.can_run_here() and self._reads_anywhere()) or a._pool.for_call() is not None:
            return runner.run(_bound(AsyncTreehop.find, a, args, kwargs))
        kwargs = dict(kwargs)
        if len(args) == 1 and "query" not in kwargs:
            query = args[0]
        elif not args and "query" in kwargs:
            query = kwargs.pop("query")
        else:  # no query (or two): answered as the async client answers it
            if not args and kwargs.get("query_vector") is None:
                check_query(None)  # (raises: a query is needed)
            return runner.run(_bound(AsyncTreehop.find, a, args, kwargs))
        ctype = kwargs.pop("context_type", None)
        given = kwargs.pop("query_vector", None)
        call = a._check_find(query, ctype, given, kwargs)
        if call.vector is None:
            emb = a._embedder
            embedded = FUSED_QUERY_CHECK and type(emb) is GuardedEmbedder
            if embedded:  # (its finiteness checked with the norm below)
                vector = emb.embed_query_unfinished(call.query)
            else:
                vector = emb.embed_query(call.query)
            try:
                unit = _check_query_vector(vector, a.store, embedded)
            except InvalidQueryError:
                if vector.any():
                    raise  # (not the index's dimension)
                # an all-zero embedding (a text the model maps to nothing) is not a valid
                # caller vector; the async path takes it as the embedder's answer, so the
                # rare query that gets one goes there
                return runner.run(a._find_checked(call))
            call = _FindCall(call.query, call.ctype, call.opts, unit, call.targets)
        if a.reranker is not None and call.opts.mode is not RetrievalMode.QUICK:
            # a rerank awaits the reranker under a timeout, which needs a running loop
            return runner.run_here(a._find_checked(call))
        return runner.run_inline(lambda: a._find_checked(call))

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """Run a coroutine of :attr:`aio` on this client's loop thread and return its result.

        For integrations that implement one operation once, async, over ``aio``: running it
        here (not on another loop) keeps the write lock and model connection pools on the
        loop that owns them.
        """
        return self._runner.run(coro)

    add_resource = _blocking(AsyncTreehop.add_resource)
    add_memory = _blocking(AsyncTreehop.add_memory)
    add_skill = _blocking(AsyncTreehop.add_skill)
    find = _in_reader_processes(_blocking_find(AsyncTreehop.find))
    find_many = _many_in_reader_processes(_blocking_many(AsyncTreehop.find_many))
    search = _blocking(AsyncTreehop.search)
    add_messages = _blocking(AsyncTreehop.add_messages)
    remember = _blocking(AsyncTreehop.remember)
    assemble_context = _blocking(AsyncTreehop.assemble_context)
    create_session = _blocking(AsyncTreehop.create_session)
    add_message = _blocking(AsyncTreehop.add_message)
    get_session = _blocking(AsyncTreehop.get_session)
    delete_session = _blocking(AsyncTreehop.delete_session)
    list_sessions = _blocking(AsyncTreehop.list_sessions)
    ls = _blocking(AsyncTreehop.ls)
    read = _blocking(AsyncTreehop.read)
    stat = _blocking(AsyncTreehop.stat)
    tree = _blocking(AsyncTreehop.tree)
    remove = _blocking(AsyncTreehop.remove)
    retag = _blocking(AsyncTreehop.retag)
    set_tags = _blocking(AsyncTreehop.set_tags)
    save = _blocking(AsyncTreehop.save)

    def close(self) -> None:
        """Save and release resources; calling it again does nothing."""
        if self._runner.closed:
            return
        try:
            self._pool.close()  # (every worker stopped and joined, one starting included)
        finally:
            try:
                self._runner.run(self._async.close())
            finally:
                self._runner.close()

    def __enter__(self) -> Treehop:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return "Treehop" + repr(self._async)[len("AsyncTreehop") :]

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        """Refused as :meth:`AsyncTreehop.__reduce_ex__` is (pickle and both copies)."""
        raise UnsupportedUseError(NO_COPY_MESSAGE.format(type(self).__name__))
