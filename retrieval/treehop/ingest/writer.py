"""The write side of the tree: :class:`TreeWriter` turns files, texts and built nodes into
stored, tagged, embedded nodes, keeps directory summaries current, and removes subtrees.

Why a class apart from the client: the client answers queries and validates arguments; every
write (``add_resource``, memories, passages, re-tagging, removal) goes through one writer that
owns the store, the embedder, the tagger, the summarizer and the write lock, so the rules of a
write (embed only what changed, tag new leaves against the index's statistics, re-describe the
directories above, save once) are written once.

Incremental re-add: a directory's files are listed with their size and mtime first and compared
with a manifest saved with the index (per target: relative path, size, mtime, a hash of the
text). A file whose size and mtime match is not read at all; one whose stat changed is read and
hashed, and kept when its text is the same. Only new or changed files are parsed, summarised,
tagged and embedded; only directories with a change below them are re-described. The manifest
also records how the nodes were built (chunk size, summarizer, user tags, metadata, tagger):
when any of it differs, the whole directory is rebuilt as on a first add.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import hashlib
import json
import os
import threading
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from itertools import compress, repeat
from pathlib import Path
from types import EllipsisType
from typing import Any, NamedTuple, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt

from .. import tags as tagmod
from .. import uri as urimod
from .._plugins import CALLS as PLUGIN_CALLS
from .._plugins import SHOWN_CHARS, call, report
from ..embedders.base import Embedder
from ..embedders.guarded import guard_embedder
from ..errors import (
    IndexLockedError,
    IngestError,
    InvalidTagError,
    InvalidURIError,
    NotFoundError,
    PartialWriteError,
    TreehopError,
)
from ..models import ContextType, Level, Node
from ..redaction import shown_name
from ..stores._filelock import (
    STORE_WRITES_TIMEOUT,
    WaitLine,
    aholding_store,
    lock_timeout_of,
    store_writers_waiting,
)
from ..stores.base import IncrementalStore, VectorStore
from ..stores.guarded import GuardedStore, not_dropped
from ..tagging import NodeTags, Tagger, assign_tags
from ..tagging.ingest import WRITE_COUNTS, IngestTagger, LabelCounts
from ..tagging.keywords import (
    TaggerError,
    TaggerNotFittedError,
    _distinct,  # (sorted distinct by a sort, not hashing)
)
from ..text_tokenize import sharing_cuts
from .exclude import NO_EXCLUDE, Exclude
from .loaders import FolderCursor, LoadedFile, LoadReport, Scanned, read_file, scan_columns
from .loaders import depth_left as loaders_depth_left
from .summaries import ExtractiveSummarizer, Summarizer, is_readme
from .tree_builder import (
    _ESCAPE_TABLE,
    _ESCAPES,
    ON_SUMMARY,
    BuiltTree,
    KeptFile,
    TreeBuilder,
    children_summaries,
    finalize,
    no_files_error,
    segment,
    summarize_ancestor,
)

ProgressCallback = Callable[[str, int, int], None]
DIRECTORY_VECTORS = ("summary", "centroid", "mixed")
"""How a directory's vector is made: its summary's embedding, the centroid of its children's
vectors, or both added (see :meth:`TreeWriter.route_directories`)."""
EMBED_BATCH = 64
FIRST_CHILDREN_PAGE = 16
"""The children a directory above a write is first re-described from, where the summariser
and the store allow a prefix (:meth:`TreeWriter._children_to_describe`): the default
summariser's overview (1,800 characters of one line per child) is usually full within it."""
COMMIT_FILES = 100
"""A directory ingest commits (saves the store and a partial manifest) at least every this
many files written..."""
COMMIT_SECONDS = 20.0
"""... and at least every this many seconds: an interrupted or killed ingest keeps what it
committed, and the next run resumes from there (its files are skipped as unchanged)."""
MANIFEST_VERSION = 2
READING_VERSION = 9
"""How this version reads files into nodes (chunk titles, heading paths, abstracts), in
every folder manifest's fingerprint (:meth:`TreeWriter._fingerprint`): a change here
re-reads, once, every file of a folder added before it, at its next ``add_resource`` /
``treehop index``, where only changed files were read and an unchanged file kept the
titles an older reading gave it. Only the nodes whose embedded text changed are embedded
again (the rest keep their vectors; their abstracts and metadata are rewritten).
1: before; 2: a Markdown heading's inline HTML out of titles, a passage's abstract as
written (helper usage83; this number: helper leftovers73b); 3: a reST passage's abstract
without the docinfo field list, an ``:abstract:`` field read as its sentence (helper
usage85; abstracts only: nothing is embedded again); 4: a reST page's docinfo field list
and ``meta`` / ``contents`` / ``sectnum`` directives out of its text and its file's
abstract (helper ingest75, ``markup.RST_UNSHOWN_DROPPED``: the changed passages and file
nodes are embedded again); 5: a man page named as a manual section (``muttrc.5.gz``) read
as the text ``man`` shows (:mod:`treehop.ingest.roff`), a DocBook admonition's title
leading its paragraph, not a heading, a plain text's leading comment marker alone (``#``)
no title (helper usage87); 6: a reST page's comments and ``.. include::`` lines out of
its text, a field list under a first title that is not the document's kept, a one-node
reST or plain-text page without its rule lines (``tree_builder.LEAF_RULES_DROPPED``), a
bare Sphinx version note and a plain text's opening ``#`` comment marks out of its file's
abstract (helper ingest76); 7: an HTML admonition with no text of its own (an image, an
empty note) no longer makes the next section's heading its label, and a reST paragraph's
line that opens with ``..`` is its text, no comment (helper review77); 8: an over-long code
block cut at line ends, each piece in its fence (``chunking.CODE_LINE_CUTS``, helper
usage88); 9 (8 on its own branch): a file's title
is its first heading with words (an empty ``# `` heading skipped), never a Markdown table
row, RCS keywords (``$Id$``) out of a plain text's title and comment-block abstract, an
underscore inside a word kept in file and folder abstracts, only true rules out of a
one-node page (``...``, ``--``, ``$$`` kept), and a man page's groff escapes (``\\%``,
``\\f[B]``, ``\\c``, ``\\(hy``) read as ``man`` shows them (helper ingest77). Raise it with
any change to what a file reads as."""
RACY_NS = 2_000_000_000
"""A file modified less than this before the manifest was written may have changed again
within the same mtime tick: its stat is not trusted and its text is hashed (git's "racy")."""
_T = TypeVar("_T")


@dataclass
class AddResult:
    """What one ``add_resource`` call did."""

    root_uri: str
    directories: int = 0
    files: int = 0
    chunks: int = 0
    embedded: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped_binary: list[str] = field(default_factory=list)
    skipped_unreadable: list[str] = field(default_factory=list)
    skipped_other: list[str] = field(default_factory=list)
    skipped_dirs: list[str] = field(default_factory=list)
    """Directories not descended into: tool folders (``venv``, ``node_modules``, ``.git``...),
    hidden folders and folders whose name is not valid UTF-8."""
    skipped_hidden: list[str] = field(default_factory=list)
    """Hidden files (``.env``, ``.DS_Store``...)."""
    skipped_names: list[str] = field(default_factory=list)
    """Files whose name is not valid UTF-8 (shown with ``\\xNN`` escapes)."""
    elapsed_s: float = 0.0
    read: int = 0
    """Files read in this call (an incremental re-add skips unchanged files unread)."""
    skipped_large: list[str] = field(default_factory=list)
    """Files over :attr:`max_file_bytes` (also counted in :attr:`skipped_other`)."""
    excluded: list[str] = field(default_factory=list)
    """Files and folders (``name/``: nothing below it was walked) that ``add_resource``'s
    ``exclude`` patterns left out of a folder's walk."""
    max_file_bytes: int = 0
    """The size limit this call applied (``Treehop(max_file_bytes=...)``)."""
    read_as_cp1252: list[str] = field(default_factory=list)
    """Files read in this call whose bytes were neither UTF-8 nor UTF-16 with a BOM, read as
    Windows-1252 (Latin-1's superset). Why: that read is a guess, right for a Western European
    legacy file, wrong in the non-ASCII characters of another encoding (Shift-JIS, KOI8 text
    that is mostly ASCII); named so the user can check them (``iconv`` them to UTF-8). Not
    skipped: not counted in :attr:`skipped`."""
    replaced: bool = False
    """``add_memory`` with a ``name`` that already held a memory: that memory was replaced
    (the documented policy, said as ``remember``'s :attr:`MemoryWriteResult.replaced` and the
    MCP tool's ``replaced`` say it). ``False`` from every other call."""

    @property
    def skipped(self) -> int:
        """How many files and directories were skipped, for every reason."""
        return (
            len(self.skipped_binary)
            + len(self.skipped_unreadable)
            + len(self.skipped_other)
            + len(self.skipped_dirs)
            + len(self.skipped_hidden)
            + len(self.skipped_names)
            + len(self.excluded)
        )


@dataclass(frozen=True)
class AddCall:
    """What one ``add_resource`` call asks, beyond the source and the target."""

    user_tags: list[str]
    metadata: Mapping[str, Any]
    progress: ProgressCallback | None
    t0: float
    name: str = ""
    """The document name of an added text."""
    check: Callable[[], Awaitable[None]] | None = None
    """The caller's check of the target against what is stored (a place below a document,
    a memory's name over other memories), run under :attr:`TreeWriter.lock` right before
    the write: run before the lock, a write committed in between was not seen (helper
    races59)."""
    exclude: Exclude = NO_EXCLUDE
    """The checked ``exclude`` patterns of a folder's add (a file given by itself: unused)."""


_DIGEST = 20
"""Bytes of a manifest's text hash (SHA-1)."""
_I64 = np.dtype("<i8")


def _no_ints() -> npt.NDArray[np.int64]:
    return np.zeros(0, np.int64)


def _no_digests() -> npt.NDArray[np.uint8]:
    return np.zeros((0, _DIGEST), np.uint8)


@dataclass
class _Manifest:
    """What the last add of a directory read, as columns: relative paths, sizes, mtimes and
    text hashes (SHA-1, 20 bytes a row), in walk order.

    Why columns (format 2): a re-add of a 100k-file tree decodes this and compares it with
    the scan's stats in one vectorised pass (~30 ms) instead of 100k parsed lines, tuples and
    dictionary lookups (~1 s). Format 1 (one text line per file) still decodes: an index
    written before keeps its incremental re-add, and the next add writes format 2."""

    fingerprint: str = ""
    written_ns: int = 0
    paths: list[str] = field(default_factory=list)
    sizes: npt.NDArray[np.int64] = field(default_factory=_no_ints)
    mtimes: npt.NDArray[np.int64] = field(default_factory=_no_ints)
    digests: npt.NDArray[np.uint8] = field(default_factory=_no_digests)
    partial: bool = False
    """Written by a commit in the middle of an ingest: it lists the files committed so far
    (the ingest may have been stopped before the rest)."""
    keeps_user_tags: bool = False
    """(A partial manifest) its ingest kept the user tags of the nodes it built again (an
    incremental re-add under the same call, or the re-read of an older reading:
    :meth:`TreeWriter._older_readings`): the run that resumes it keeps them too. Why (helper
    review74): the partial manifest carries this call's fingerprint, so a resumed upgrade
    read as a re-read the call's tags asked for and dropped every ``set_tags`` edit of the
    files the stopped run had not reached."""

    def __len__(self) -> int:
        return len(self.paths)

    def rows(self, keep: npt.NDArray[np.bool_]) -> _Manifest:
        """The manifest of the rows where ``keep`` is true (same fingerprint and time)."""
        idx = np.flatnonzero(keep)
        return _Manifest(
            self.fingerprint,
            self.written_ns,
            [self.paths[i] for i in idx.tolist()],
            self.sizes[idx],
            self.mtimes[idx],
            self.digests[idx],
        )

    def same_as(self, other: _Manifest) -> bool:
        """Field-by-field equality (arrays compared by value)."""
        return (
            self.fingerprint == other.fingerprint
            and self.written_ns == other.written_ns
            and self.paths == other.paths
            and np.array_equal(self.sizes, other.sizes)
            and np.array_equal(self.mtimes, other.mtimes)
            and np.array_equal(self.digests, other.digests)
        )

    def files(self) -> dict[str, tuple[int, int, str]]:
        """``{path: (size, mtime_ns, hex digest)}`` (for tests and debugging)."""
        return {
            p: (int(s), int(m), bytes(d).hex())
            for p, s, m, d in zip(self.paths, self.sizes, self.mtimes, self.digests, strict=True)
        }

    def index_of(self, rels: Sequence[str]) -> npt.NDArray[np.int64]:
        """Row of each of ``rels`` in this manifest (-1: absent). A re-add usually scans the
        files in the order they were written, and then one list comparison answers."""
        if not self.paths:
            return np.full(len(rels), -1, np.int64)
        if len(rels) == len(self.paths) and list(rels) == self.paths:
            return np.arange(len(rels), dtype=np.int64)
        at = dict(zip(self.paths, range(len(self.paths)), strict=True))
        return np.fromiter(map(at.get, rels, repeat(-1)), np.int64, len(rels))

    def encode(self) -> bytes:
        """A JSON head line, then the paths (``\n``-joined UTF-8; names cannot hold control
        characters, loaders refuse them), then the sizes, mtimes (little-endian int64) and
        digests; the head carries the body's CRC-32, so a damaged body is seen."""
        blob = "\n".join(self.paths).encode("utf-8")
        body = b"".join(
            [
                blob,
                self.sizes.astype(_I64).tobytes(),
                self.mtimes.astype(_I64).tobytes(),
                np.ascontiguousarray(self.digests, np.uint8).tobytes(),
            ]
        )
        head = {
            "version": MANIFEST_VERSION,
            "fingerprint": self.fingerprint,
            "at": self.written_ns,
            "files": len(self.paths),
            "paths_bytes": len(blob),
            "crc32": zlib.crc32(body),
        }
        if self.partial:
            head["partial"] = True
        if self.keeps_user_tags:
            head["keeps_user_tags"] = True
        return json.dumps(head).encode() + b"\n" + body

    @classmethod
    def decode(cls, raw: bytes | None) -> _Manifest:
        """A manifest, or an empty one when it is missing or unreadable (a full rebuild is
        always correct, so a damaged manifest costs time, never data)."""
        if not raw:
            return cls()
        try:
            cut = raw.find(b"\n")
            meta = json.loads(raw if cut < 0 else raw[:cut])
            if meta.get("version") == 1:
                return cls._decode_v1(raw)
            if meta.get("version") != MANIFEST_VERSION or cut < 0:
                return cls()
            n, nb = int(meta["files"]), int(meta["paths_bytes"])
            body = memoryview(raw)[cut + 1 :]
            if n < 0 or nb < 0 or len(body) != nb + n * (16 + _DIGEST):
                return cls()
            if zlib.crc32(body) != int(meta["crc32"]):
                return cls()
            paths = bytes(body[:nb]).decode("utf-8").split("\n") if n else []
            if len(paths) != n:
                return cls()
            nums = np.frombuffer(body, _I64, 2 * n, nb).astype(np.int64)
            digests = np.frombuffer(body, np.uint8, n * _DIGEST, nb + 16 * n).reshape(n, _DIGEST)
            return cls(
                str(meta["fingerprint"]),
                int(meta["at"]),
                paths,
                nums[:n],
                nums[n:],
                digests,
                meta.get("partial") is True,
                meta.get("keeps_user_tags") is True,
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return cls()

    @classmethod
    def _decode_v1(cls, raw: bytes) -> _Manifest:
        """Format 1: a JSON head, then ``path\tsize\tmtime\thex digest`` lines."""
        head, *lines = raw.decode("utf-8").split("\n")
        meta = json.loads(head)
        rows = [line.split("\t") for line in lines]
        if any(len(r) != 4 for r in rows):
            return cls()
        paths = [r[0] for r in rows]
        sizes = np.asarray([int(r[1]) for r in rows], np.int64)
        mtimes = np.asarray([int(r[2]) for r in rows], np.int64)
        hexes = "".join(r[3] for r in rows)
        if any(len(r[3]) != 2 * _DIGEST for r in rows):
            return cls()
        digests = np.frombuffer(bytes.fromhex(hexes), np.uint8).reshape(len(rows), _DIGEST)
        return cls(str(meta["fingerprint"]), int(meta["at"]), paths, sizes, mtimes, digests)


class Child(Protocol):
    """What a re-add reads of a stored child of a folder it re-describes."""

    @property
    def uri(self) -> str: ...

    @property
    def abstract(self) -> str: ...

    @property
    def tags(self) -> list[str]: ...

    @property
    def is_leaf(self) -> bool: ...


class _StoredChild(NamedTuple):
    """A stored child as a re-add reads it (a tuple: ~10k of them per re-add at 100k
    nodes, built several times faster than a frozen dataclass)."""

    uri: str
    abstract: str
    tags: list[str]
    is_leaf: bool


@dataclass
class _Plan:
    """An incremental re-add: what to read, what to keep, what to delete."""

    files: list[LoadedFile | KeptFile]
    kept_dirs: dict[str, str]
    kept_files: set[str]
    """URIs of the file nodes kept as stored (their chunks are kept with them)."""
    live_dirs: set[str]
    """URIs of every directory that still holds a file."""
    manifest: _Manifest
    """The manifest to save after the write (every file that was read or kept)."""
    report: LoadReport
    read: int
    children: dict[str, list[Child]] = field(default_factory=dict)
    """Stored children of the directories re-described (read once, for summaries and tags)."""
    pending: dict[str, int] = field(default_factory=dict)
    """URI of every file rebuilt by this add -> its row in :attr:`manifest`. A commit in the
    middle of the write saves the manifest without the rows of the files not stored yet."""


def _text_hash(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()


def _commits_of(store: VectorStore) -> object:
    """The store's ``commits`` at the end of a failed write, ``None`` when reading it fails
    (a caller's store, down: a :class:`~treehop.errors.StoreError` through its guard). Why
    (helper attacks75): that error replaced the write's own (the ``upsert``'s, which says
    what went wrong) and, raised before :meth:`WriteLock.__aexit__` gave the store's lock
    back, kept it: after the outage every write waited ``lock_timeout`` and failed, for
    good. ``None`` reads as "a batch may have been committed", so the counts
    are recounted over what is stored (:meth:`WriteLock._close_counts`), which is what a
    resume does."""
    try:
        return getattr(store, "commits", None)
    except TreehopError:
        return None


_HELD_WRITES: contextvars.ContextVar[tuple[tuple[WriteLock, object], ...]] = contextvars.ContextVar(
    "treehop_held_client_writes", default=()
)
"""The client write locks (and the token of each hold) the current context took: a write
made inside one of them, through the same client, is refused (:meth:`WriteLock.__aenter__`)."""


async def to_thread_to_the_end(fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> _T:
    """``asyncio.to_thread`` for work that writes (the store, the tagger's statistics) under
    a client's write lock: a caller cancelled meanwhile waits for the thread to end before
    it unwinds, then raises ``CancelledError``.

    Why (helper attacks66): a thread cannot be stopped, and a cancelled ``await`` of
    ``to_thread`` unwound at once: ``async with`` gave the write lock back while the thread
    went on writing (``retag``'s ``update_tags`` and ``save``, a remote store's ``upsert``),
    and another client's write, checks included, ran beside it; ``asyncio.wait_for(
    th.retag(), 5)`` was enough. Work that only reads or builds (a plan, the embedding)
    keeps plain ``to_thread``: cancelling it still returns at once."""
    fut = asyncio.ensure_future(asyncio.to_thread(fn, *args, **kwargs))
    cancelled = False
    while not fut.done():
        try:
            await asyncio.shield(fut)
        except asyncio.CancelledError:
            cancelled = True
        except BaseException:  # (the thread's own outcome, read below)
            pass
    if cancelled:
        if not fut.cancelled():
            fut.exception()  # (seen: no "exception was never retrieved" for it)
        raise asyncio.CancelledError
    return fut.result()


def _drop_unsaved(store: VectorStore) -> bool:
    """After a write that raised (or was cancelled) under the write lock: drop what it wrote
    and did not commit, and give back the index's ``LOCK`` (an embedded store, on disk or in
    memory; remote engines write at once and keep what they wrote).

    Why (helper attacks66): ``remove`` deletes, re-describes the folder above (an
    embedding: an ``await``), then saves. Stopped in between (cancelled, its embedder
    failing), the deletion stayed uncommitted and ``LOCK`` held: every other store object
    and process got :class:`~treehop.errors.IndexLockedError` until this client's next
    save, and that save committed the half-done remove. A write is all or nothing, as a
    failed ``save`` is (it goes back to the last commit); a directory ingest's committed
    batches stay (adding it again resumes). True when the store dropped them."""
    discard = getattr(store, "discard_unsaved", None)
    if not callable(discard):
        return False
    with suppress(TreehopError):
        if discard():
            store.save()  # (nothing left to commit: gives ``LOCK`` back)
            return True
    return False


class WriteLock:
    """A client's write lock (``async with``): this client's writes one at a time, then the
    store's write lock, shared with every other client of the store in this process and,
    for an embedded store on disk, with every other process
    (:func:`~treehop.stores._filelock.aholding_store`).

    Why both: the client's own lock queues its own calls in order without a
    deadline, as before; the store's lock makes a write's checks of its place and the write
    one step for every writer of the store (two clients, or two processes, each checked "no
    document above this place" and then each wrote; helper xproc59). Waiting for the
    store's lock past its ``lock_timeout`` raises
    :class:`~treehop.errors.IndexLockedError` and holds nothing. A directory ingest on an
    embedded store on disk lets the store's lock go between its commit batches
    (:meth:`let_others_in` / :meth:`take_back`, helper xproc59b) and keeps the client's:
    another process's append waits for one batch, not for the whole ingest.

    The client's own lock is a ``threading.Lock`` taken in turn (:class:`WaitLine`), not an
    ``asyncio.Lock``. Why (helper attacks68): a sync ``Treehop`` writes on its loop thread
    while its ``.aio`` (which the LangChain / LlamaIndex wrappers' async paths use:
    ``aadd_texts``, ``aadd_documents``) writes on the caller's loop; an ``asyncio.Lock``
    belongs to one loop, so two such writes at once raised a raw "RuntimeError: <Lock> is
    bound to a different event loop", and a waiter of the one loop, woken from the other,
    hung for good.

    The wait for the client's own lock ends with :class:`~treehop.errors.IndexLockedError`
    once the store's ``lock_timeout`` (:data:`~treehop.stores._filelock.STORE_WRITES_TIMEOUT`
    for a store without one) has passed with no progress of the write holding it: progress
    is the lock handed on (:meth:`moved`; each hand-over restarts every waiter's deadline),
    the holder committing a batch of a directory ingest, or a batch of
    :data:`EMBED_BATCH` texts embedded (so a long ingest of one client does not fail that
    client's other writes queued behind it: only a hold stuck for ``lock_timeout`` does).
    Why (helper leftovers62): a callback of a write (its embedder, summarizer or tagger)
    that starts a plain ``threading.Thread`` writing through the same client and joins it
    deadlocked for good: the new thread copies no context, so its write cannot be told from
    an independent writer's (the in-context check below cannot see it), and it waited for
    the lock the joining callback held. Why ``IndexLockedError``: it is what a write gets
    from another client's or process's hold past ``lock_timeout``, the same wait for the
    same lock, so a caller handles one error; the message names the callback case. Why a
    deadline that restarts rather than one from the start of the wait: writes of one client
    queued from many threads (longer in all than ``lock_timeout``, each shorter) kept
    running in turn, as before; only a write waiting through ``lock_timeout`` of one stalled
    hold fails, which is what another client's write already did."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store
        self._mine = threading.Lock()
        self._line = WaitLine()
        self._moved_at = time.monotonic()
        """When the hold last made progress (:meth:`moved`): a waiter's deadline counts
        from the later of this and the start of its wait."""
        self._taken_at = self._moved_at
        """When the hold now taken was taken (for a waiter's error)."""
        self._calling: tuple[str, float] | None = None
        """The plug-in the hold is calling now and since when (:meth:`calling`), else
        ``None``: what a waiter that gives up names as what held the lock."""
        self._held: AbstractAsyncContextManager[None] | None = None
        self._hold: object | None = None
        self._builds: set[object] = set()
        """The tokens of the builds running before a write of this client takes the lock
        (:meth:`building`)."""
        """A token of the hold now taken (``None``: none), what :data:`_HELD_WRITES` of the
        context that took it names."""
        self._counting: tuple[list[IngestTagger], int, contextvars.Token[Any]] | None = None
        """The keyword taggers that counted during the write now held (they join the list
        themselves: :data:`~treehop.tagging.ingest.WRITE_COUNTS`), the store's
        :attr:`~treehop.stores.embedded.EmbeddedStore.commits` when it began, and the
        context variable's token."""

    def _open_counts(self) -> None:
        """At the start of a write: every keyword tagger that counts texts into the
        statistics during it records them (:meth:`IngestTagger.start_batch`), on a store
        whose uncommitted rows a failure discards (:func:`_drop_unsaved`).

        Why (helper leftovers62b): a failed write's rows were rolled back, but the document
        frequencies its tagging had counted and saved (state blobs, written at once) were
        not: the same write repeated counted its texts twice, and its tags, and every later
        write's automatic tags, differed from a client's that never failed (a text, a
        memory, an append: 4 to 8 nodes' tags). A context variable, not the client's
        tagger chain: a keyword tagger a custom tagger wraps under any name joins too.
        Remote engines keep a failed write's rows, and their counts with them."""
        commits = getattr(self.store, "commits", None)
        if not isinstance(commits, int):
            self._counting = None
            return
        joined: list[IngestTagger] = []
        self._counting = (joined, commits, WRITE_COUNTS.set(joined))

    def _close_counts(self, failed: bool) -> None:
        """At the end of a write: keep its counts, or (``failed``, none of its rows
        committed) take them back; when a commit batch was saved (a directory ingest) and
        the write then failed, recount over what is stored (:meth:`IngestTagger.refit`).

        Why the recount (helper leftovers63): a directory ingest counts every file before
        its first commit, so a failure after one commit batch kept the counts of the files
        it never wrote (a folder of 4 files failing after its first: 4 counted, 1 stored);
        the resume recounted, but until then (or for good, when the folder was not added
        again) every write's automatic tags were judged against documents the index does
        not hold. A recount is what the resume and ``retag()`` do; it reads every leaf once,
        on the failure path only. The statistics then equal an ingest of the committed files
        alone, and a later recount changes nothing."""
        counting, self._counting = self._counting, None
        if counting is None:
            return
        joined, commits, token = counting
        with suppress(ValueError):  # (exited in another context: nothing to undo)
            WRITE_COUNTS.reset(token)
        undo = failed and _commits_of(self.store) == commits
        for t in joined:
            if undo:
                with suppress(TreehopError):
                    t.take_back(self.store)
            t.end_batch(self.store)
            if failed and not undo:
                with suppress(TreehopError):  # (kept as counted: a resume recounts)
                    t.refit(self.store)

    def locked(self) -> bool:
        """Whether a write of this client holds (or is taking) the lock."""
        return self._mine.locked()

    def waiting(self) -> bool:
        """Whether a write of this client, or of any client of the store in this process,
        waits for the lock (tests interleave writes on it)."""
        return self._line.waiting() > 0 or store_writers_waiting(self.store) > 0

    def refuse_nested(self) -> None:
        """Raise :class:`~treehop.errors.IndexLockedError` when called inside one of this
        client's own writes (a callback of its embedder, summarizer or tagger writing
        through the client, in this context: its worker thread, the sync client's loop): it
        would wait for itself, and the outer write for it (attacks64).

        Called when the lock is taken and, by a write that works before taking it, first.
        Why the second (helper attacks74, lead, stop 63): a text's ``add_resource`` builds
        (summarizes) before it takes the lock; a summarizer writing a text through its own
        client made that text's build call the summarizer again, each level holding a
        worker thread, until the thread pool ran out and every level waited for good."""
        if any(
            lock is self and (hold is self._hold or hold in self._builds)
            for lock, hold in _HELD_WRITES.get()
        ):
            raise IndexLockedError(
                "a write of this client was made inside one of its own writes (from its "
                "embedder, summarizer or tagger?): it would wait for itself; write after "
                "the outer call returns, or through another client"
            )

    @contextmanager
    def building(self) -> Iterator[None]:
        """Around the work a write does before it takes the lock (a text's, a file's or a
        record batch's build, which calls the summarizer): a write made inside it through
        this client, in this context, is refused as one made inside the hold is
        (:meth:`refuse_nested`).

        Why (helper attacks75): the check saw only a hold taken, so a summarizer writing a
        text through its own client during the build of a text (``add_resource(str)``,
        ``add_records``) was let through; that text's build called the summarizer again,
        each level holding a worker thread, until the pool ran out and every level waited
        for good (the folder case the lead fixed builds under the lock). A token per build,
        live only while it runs: a context copied into a task the build started, which
        outlives it, does not refuse later writes."""
        mark = object()
        self._builds.add(mark)
        token = _HELD_WRITES.set((*_HELD_WRITES.get(), (self, mark)))
        try:
            yield
        finally:
            self._builds.discard(mark)
            with suppress(ValueError):  # (exited in another context: nothing to undo)
                _HELD_WRITES.reset(token)

    async def __aenter__(self) -> None:
        self.refuse_nested()
        wait = lock_timeout_of(getattr(self.store, "lock_timeout", STORE_WRITES_TIMEOUT))
        start = time.monotonic()

        def give_up() -> float:
            return max(start, self._moved_at) + wait

        def busy() -> BaseException:
            return IndexLockedError(self._busy_message(wait))

        await self._line.take(self._mine, give_up, busy)
        self._taken_at = time.monotonic()
        self.moved()
        try:
            held = aholding_store(self.store)
            await held.__aenter__()
        except BaseException:
            self._line.release(self._mine)
            raise
        self._held = held
        self._hold = hold = object()
        self._token = _HELD_WRITES.set((*_HELD_WRITES.get(), (self, hold)))
        self._calls_token = PLUGIN_CALLS.set(self.calling)
        if type(self.store) is GuardedStore:  # (a caller's store: what stays if it fails)
            self.store.begin_journal()
        try:
            self._open_counts()
        except BaseException as exc:
            # Given back as a failed write gives it back. Why (helper attacks75): reading a
            # caller's store's ``commits`` can fail (a property over a network call: a
            # ``StoreError`` through its guard) after both locks were taken; ``async with``
            # then never ran ``__aexit__``, and every later write of the client waited its
            # ``lock_timeout`` for a hold no one held, then failed, for good.
            await self.__aexit__(type(exc), exc, exc.__traceback__)
            raise

    async def __aexit__(self, *exc: Any) -> None:
        held, self._held = self._held, None
        self._hold = None
        failed = bool(exc and exc[0] is not None)
        with suppress(ValueError):  # (exited in another context: nothing to undo)
            PLUGIN_CALLS.reset(self._calls_token)
        with suppress(ValueError):
            _HELD_WRITES.reset(self._token)
        dropped = True
        try:
            try:
                if failed and held is not None:
                    dropped = _drop_unsaved(self.store)
                    if not dropped and isinstance(exc[1], PartialWriteError):
                        not_dropped(exc[1])  # (its message said the rollback would drop them)
            finally:
                if type(self.store) is GuardedStore:  # (a failure not the store's: noted)
                    self.store.end_journal(exc[1] if failed and len(exc) > 1 else None, dropped)
                self._close_counts(failed)
            if held is not None:
                await held.__aexit__(*exc)
        finally:
            self._line.release(self._mine)

    async def let_others_in(self) -> None:
        """Inside ``async with``: release the store's lock and keep this client's own, so
        that other clients and processes may write while this one works outside the store
        (a directory's ingest embedding its next batch; helper xproc59b). The caller has
        saved (nothing of its write is uncommitted) and calls :meth:`take_back` before it
        reads or writes the store again."""
        held, self._held = self._held, None
        self.moved()
        if held is not None:
            await held.__aexit__(None, None, None)

    async def take_back(self) -> None:
        """Take the store's lock again after :meth:`let_others_in` (what another process
        committed meanwhile is picked up first). Waiting past the store's ``lock_timeout``
        raises :class:`~treehop.errors.IndexLockedError` with the store's lock not held (the
        enclosing ``async with`` then releases the client's own)."""
        held = aholding_store(self.store)
        await held.__aenter__()
        self._held = held
        self.moved()

    def moved(self) -> None:
        """Note progress of the hold (taken, a batch committed): the deadline of this
        client's writes waiting for it counts from now (see the class)."""
        self._moved_at = time.monotonic()

    @contextmanager
    def calling(self, what: str) -> Iterator[None]:
        """Around one call of a plug-in (``what``: "the embedder", "the tagger") made while
        the lock is held: a write of this client that gives up waiting meanwhile says that
        this call held the lock, and for how long (:meth:`_busy_message`). Recorded only in
        the context of the hold now taken (another write's call, outside the lock, is not
        this hold's). Entered by every plug-in call of the hold's context
        (:data:`treehop._plugins.CALLS`, set while the hold is taken), not by each call site.
        A call inside another one (the store a tagger reads) leaves the outer one named: it
        is what holds the lock."""
        outer = self._calling
        if outer is None and self._hold is not None and (self, self._hold) in _HELD_WRITES.get():
            self._calling = (what.removeprefix("the "), time.monotonic())
        try:
            yield
        finally:
            self._calling = outer

    def _busy_message(self, wait: float) -> str:
        """The error of a write of this client that waited ``wait`` s (``lock_timeout``) for
        the write holding the lock to make progress, and gave up.

        Decided (helper leftovers66c): the waiting write still fails, and says what held the
        lock, for how long, and that nothing of it was written. Why not wait for as long as
        a plug-in call runs: the deadline is what ends the deadlock of a write made from a
        thread that a plug-in call of the holding write started and joins (the call waits
        for the write, the write for the call; nothing tells that write from an independent
        one, helper leftovers62). A waiting write has taken no lock and changed nothing, so
        the caller can repeat it as it is, or set ``lock_timeout`` above the plug-in's
        longest call."""
        now = time.monotonic()
        held = f"has held the lock for {now - self._taken_at:.1f} s"
        if self._calling is not None:
            what, since = self._calling
            doing = f"{held}, inside one call of its {what} for the last {now - since:.1f} s"
        else:
            doing = (
                f"{held}, with no batch embedded, summary made or batch committed for the "
                f"last {now - self._moved_at:.1f} s (a call of its embedder, summarizer or "
                "tagger, or a stalled hold)"
            )
        return (
            f"this write waited {wait:g} s (the store's lock_timeout) for this client's write "
            f"in progress and wrote nothing: that write {doing}. A plug-in call longer than "
            "lock_timeout fails the writes queued behind it: repeat this write, or set "
            "EmbeddedStore(lock_timeout=...) above the longest call. A write made from a "
            "thread started inside a callback (embedder, summarizer, tagger) of that write "
            "waits for the write that waits for it: write after that call returns"
        )


class TreeWriter:
    """Writes the tree: ingest, memories and passages, re-tagging, removal.

    ``store``, ``embedder``, ``summarizer`` and ``tagger`` are the client's; ``lock`` is the
    client's write lock (readers never take it), which also holds the store's write lock
    (:class:`WriteLock`).
    """

    def __init__(
        self,
        store: VectorStore,
        embedder: Embedder,
        *,
        summarizer: Summarizer,
        tagger: Tagger | None,
        chunk_chars: int = 1000,
        retag_all_below: int = 1000,
        directory_vectors: str = "summary",
        commit_files: int = COMMIT_FILES,
        commit_seconds: float = COMMIT_SECONDS,
    ) -> None:
        self.store = store
        self.commit_files = commit_files
        self.commit_seconds = commit_seconds
        # (guarded: its calls are noted as the embedder's while a write holds the lock,
        # :func:`treehop._plugins.noted`; the client's is guarded already, not twice)
        self.embedder = guard_embedder(embedder)
        self.summarizer = summarizer
        self.tagger = tagger
        self.builder = TreeBuilder(summarizer, chunk_chars=chunk_chars)
        self.retag_all_below = retag_all_below
        self.directory_vectors = directory_vectors
        self.lock = WriteLock(store)

    async def io(self, fn: Callable[..., _T], *args: Any) -> _T:
        """Call the store: directly for in-process stores, in a worker thread for remote ones
        (their SDKs are blocking and would stall the event loop)."""
        if self.store.capabilities.remote:
            return await to_thread_to_the_end(fn, *args)
        return fn(*args)

    # ------------------------------------------------------------------ add_resource
    async def add(self, source: Path | str, target: str, call: AddCall) -> AddResult:
        """Ingest a directory (incrementally), a file, or a text (``str``) at ``target``."""
        with _small_pages():
            return await self._add(source, target, call)

    async def _add(self, source: Path | str, target: str, call: AddCall) -> AddResult:
        ctype = urimod.context_type_of(target)
        if isinstance(source, str) or source.is_file():
            self.lock.refuse_nested()  # (before the build, which calls the summarizer)
            b = self.builder
            with self.lock.building():
                built = await asyncio.to_thread(
                    *(
                        (b.build_text, source, target, ctype, call.name)
                        if isinstance(source, str)
                        else (b.build_directory, source, target, ctype)
                    )
                )
            async with self.lock:
                if call.check is not None:
                    await call.check()
                if isinstance(source, str):  # (a text: a note replaced whole, as before)
                    return await self.write(built, target, call)
                # (a file added alone: its last list tells set_tags' edits apart, as a
                # folder's does; not for texts, one blob a memory note would be too many)
                before = await self.io(self._call_tags, target, call.user_tags)
                res = await self.write(built, target, call, before_tags=before)
                if before is None or before.changes(call.user_tags):
                    await self.io(self._put_call_tags, target, call.user_tags)
                return res
        return await self._add_directory(source, target, ctype, call)

    async def _add_directory(
        self, path: Path, target: str, ctype: ContextType, call: AddCall
    ) -> AddResult:
        user_tags, metadata = call.user_tags, call.metadata
        fingerprint = self._fingerprint(target, user_tags, metadata)
        async with self.lock:
            if call.check is not None:
                await call.check()
            manifest = _Manifest.decode(await self.io(self.store.get_state, _manifest_key(target)))
            # Whether a stored node keeps its own user tags (``set_tags``' edits) where it is
            # built again: under a manifest this very call wrote (a changed file and the
            # folders above it; docs/cli.md: "with the same list they are kept"; helper
            # review74), or one an older reading of files wrote under this call (the re-read
            # after an upgrade: :meth:`_older_readings`), not where the call's tags or
            # settings differ. A partial manifest carries the call's fingerprint from its
            # first commit on, so it says which it was (``keeps_user_tags``).
            keep_tags = not manifest.partial or manifest.keeps_user_tags
            if manifest.fingerprint != fingerprint:
                keep_tags = bool(manifest.fingerprint) and manifest.fingerprint in (
                    self._older_readings(target, user_tags, metadata)
                )
                manifest = _Manifest()
            before = await self.io(self._call_tags, target, user_tags)
            old_uris = await self.io(_gc_paused, self._stored_uris, target)
            plan = await asyncio.to_thread(
                _gc_paused, self._plan, path, target, manifest, old_uris, call.exclude
            )
            built = BuiltTree(report=plan.report)  # nothing changed: no node to rebuild
            if plan.files:
                summaries = ON_SUMMARY.set(self.lock.moved)  # (each one progress: WriteLock)
                try:
                    built = await asyncio.to_thread(
                        _gc_paused,
                        self.builder.build_tree,
                        path.name,
                        target,
                        ctype,
                        plan.files,
                        plan.kept_dirs,
                        plan.report,
                    )
                finally:
                    ON_SUMMARY.reset(summaries)
            fresh = plan.manifest
            fresh.fingerprint = fingerprint
            key = _manifest_key(target)
            gaps = _BatchGaps(self, target, call, key)

            async def checkpoint(done: set[str]) -> None:
                # Called right after a save: the files whose nodes that save holds, plus
                # every file kept unchanged, are what the next run may skip.
                keep = np.ones(len(fresh), bool)
                for uri, row in plan.pending.items():
                    if uri not in done:
                        keep[row] = False
                part = fresh.rows(keep)
                part.written_ns, part.partial = time.time_ns(), True
                part.keeps_user_tags = keep_tags
                gaps.written = part.encode()
                await self.io(self.store.put_state, key, gaps.written)

            if plan.pending:
                # Before anything is tagged: the tagger saves its statistics as it counts,
                # so a run stopped before its first commit must leave a partial manifest
                # too (the next run then recounts them, see below).
                await checkpoint(set())
            res = await self.write(
                built,
                target,
                call,
                plan=plan,
                old_uris=old_uris,
                checkpoint=checkpoint,
                gaps=gaps if gaps.possible() else None,
                keep_user_tags=keep_tags,
                before_tags=before,
            )
            if manifest.partial and self.tagger is not None:
                # Resuming a stopped ingest: its tagging had already counted the files it
                # never committed, and this run counted them again. Recount over what is
                # stored (statistics only; the tags written stay).
                await to_thread_to_the_end(self._recount_tags)
            fresh.written_ns = time.time_ns()
            await self.io(self.store.put_state, key, fresh.encode())
            if before is None or before.changes(user_tags):  # (no change: nothing more)
                await self.io(self._put_call_tags, target, user_tags)
            return res

    def _recount_tags(self) -> None:
        assert self.tagger is not None
        tagger_call(self.tagger.refit, self.store)

    def _fingerprint(
        self,
        target: str,
        user_tags: list[str],
        metadata: Mapping[str, Any],
        reading: int | EllipsisType | None = ...,
    ) -> str:
        """How this call builds nodes: a manifest made under other settings (or by a version
        that read files otherwise: :data:`READING_VERSION`) is not reused. ``reading``: the
        fingerprint an older reading gave (``None``: before the reading was in it; ``...``:
        the module's :data:`READING_VERSION` as it is at the call, not at import)."""
        if reading is ...:
            reading = READING_VERSION
        b = self.builder
        how = {
            "target": target,
            "chunk_chars": b.chunk_chars,
            "leaf_chars": b.leaf_chars,
            "max_file_bytes": b.max_file_bytes,
            "summarizer": f"{type(self.summarizer).__qualname__}:"
            f"{getattr(self.summarizer, 'name', '')}",
            "tagger": type(self.tagger).__qualname__ if self.tagger is not None else None,
            "user_tags": sorted(user_tags),
            "metadata": json.dumps(dict(metadata), sort_keys=True, default=repr),
        }
        if reading is not None:
            how["reading"] = reading
        return hashlib.sha1(json.dumps(how, sort_keys=True).encode()).hexdigest()

    def _older_readings(
        self, target: str, user_tags: list[str], metadata: Mapping[str, Any]
    ) -> set[str]:
        """The fingerprints this call had under each older :data:`READING_VERSION`: a
        manifest holding one was written by the same call, only its files read otherwise.

        Why (helper attacks87): that re-read (the first re-index after an upgrade, no file
        changed) built every node again with the call's tags, so a tag ``set_tags`` had
        added to a file, a chunk or a folder (or a call's tag it had removed) was dropped
        for every file indexed before the upgrade."""
        older = range(2, READING_VERSION)
        return {
            self._fingerprint(target, user_tags, metadata, None),
            *(self._fingerprint(target, user_tags, metadata, v) for v in older),
        }

    def _stored_uris(self, target: str) -> set[str]:
        if isinstance(self.store, IncrementalStore):
            return set(self.store.iter_uris(target))
        return {n.uri for n in self.store.iter_nodes(target)}

    def _plan(
        self,
        root: Path,
        target: str,
        manifest: _Manifest,
        old_uris: set[str],
        exclude: Exclude = NO_EXCLUDE,
    ) -> _Plan:
        """Stat every file, compare with the manifest, read only what may have changed.

        A file ``exclude`` (or the suffix list) now leaves out is absent from the walk, so
        it counts as gone: a re-add under new patterns deletes its nodes, and one whose
        patterns no longer match reads it as new. Neither list is in the fingerprint: the
        files kept are not rebuilt.

        Every per-file step over the whole tree is a vectorised or C-level pass (the stat
        comparison, the stored-node check, the sets of kept files and live directories);
        Python loops run only over the files read and the directories re-described."""
        found, report = scan_columns(
            root,
            self.builder.max_file_bytes,
            loaders_depth_left(target),
            self.builder.skip_suffixes,
            exclude,
        )
        rels = found.rels
        uris = _UriMap(target)
        file_uris = uris.files(rels)
        stored = np.fromiter(map(old_uris.__contains__, file_uris), bool, len(rels))
        same, loaded, fresh = self._read_changed(found, manifest, stored, report)
        hashed = np.flatnonzero(fresh.sizes >= 0)
        if not hashed.size:
            raise no_files_error(root, report)
        kept_rows = manifest.index_of(rels)[hashed]
        present = np.zeros(len(manifest), bool)
        present[kept_rows[kept_rows >= 0]] = True
        gone = [manifest.paths[i] for i in np.flatnonzero(~present).tolist()]
        dirty = _all_dirs([*(rels[i] for i in loaded), *gone])
        dir_ids = {d: i for i, d in enumerate(found.dirs)}
        in_dirty = same & np.isin(found.dir_of, [dir_ids[d] for d in dirty if d in dir_ids])
        self._read_dirty_readmes(found, in_dirty, loaded, report)
        same[list(loaded)] = False
        in_dirty &= same
        # The stored children of every directory to re-describe, read once: their abstracts
        # feed the summaries and their tags the tagger's directory aggregation.
        children = {uris.dir(d): self._stored_children(uris.dir(d)) for d in dirty}
        abstracts = {k.uri: k.abstract for kids in children.values() for k in kids}
        same_dirs = [found.dirs[i] for i in _distinct(found.dir_of[same]).tolist()]
        kept_dirs = self._kept_dirs(uris, _dirs_above(same_dirs) - dirty, dirty, abstracts)
        files: list[LoadedFile | KeptFile] = []
        for i in np.flatnonzero(in_dirty | _mask(len(rels), loaded)).tolist():
            f = loaded.get(i)
            files.append(f if f is not None else KeptFile(rels[i], abstracts.get(file_uris[i], "")))
        kept_files = set(compress(file_uris, same.tolist()))
        live_dirs = [found.dirs[i] for i in _distinct(found.dir_of[hashed]).tolist()]
        live = {uris.dir(d) for d in _dirs_above(live_dirs)}
        new = _Manifest(
            paths=[rels[i] for i in hashed.tolist()],
            sizes=fresh.sizes[hashed],
            mtimes=fresh.mtimes[hashed],
            digests=fresh.digests[hashed],
        )
        row_of = np.full(len(rels), -1, np.int64)
        row_of[hashed] = np.arange(hashed.size)
        pending = {file_uris[i]: int(row_of[i]) for i in loaded if row_of[i] >= 0}
        return _Plan(
            files, kept_dirs, kept_files, live, new, report, len(loaded), children, pending
        )

    def _stored_children(self, uri: str) -> list[Child]:
        """``uri``'s stored children as far as a re-add needs them (URI, abstract, tags,
        leaf or not): from the stored JSON where the store offers it (no node built),
        else the nodes themselves."""
        fields = getattr(self.store, "children_fields", None)
        if fields is None:
            return list(self.store.children(uri))
        return [
            _StoredChild(
                str(d["uri"]), str(d["abstract"] or ""), list(d["tags"] or ()), bool(d["is_leaf"])
            )
            for d in fields(uri, ("uri", "abstract", "tags", "is_leaf"))
        ]

    def _read_changed(
        self,
        found: Scanned,
        manifest: _Manifest,
        stored: npt.NDArray[np.bool_],
        report: LoadReport,
    ) -> tuple[npt.NDArray[np.bool_], dict[int, LoadedFile], _Manifest]:
        """Files kept unread (stat as in the manifest, node stored) or read and kept (same
        text); files read to rebuild (by scan row); and every file's new manifest row
        (size -1: not readable, left out)."""
        n = len(found)
        idx = manifest.index_of(found.rels)
        known = idx >= 0
        at = np.where(known, idx, 0)
        same = known & stored & (found.mtimes < manifest.written_ns - RACY_NS)
        if len(manifest):
            same &= (manifest.sizes[at] == found.sizes) & (manifest.mtimes[at] == found.mtimes)
        fresh = _Manifest(
            sizes=np.where(same, found.sizes, -1),
            mtimes=found.mtimes.copy(),
            digests=np.zeros((n, _DIGEST), np.uint8),
        )
        fresh.digests[same] = manifest.digests[idx[same]]
        loaded: dict[int, LoadedFile] = {}
        cap = self.builder.max_file_bytes
        sizes = found.sizes.tolist()
        with FolderCursor() as folders:  # (unused when following: a single file)
            for i in np.flatnonzero(~same).tolist():
                rel = found.rels[i]
                f = read_file(
                    found.path(i), rel, report, cap, sizes[i], follow=found.single, folders=folders
                )
                if f is None:
                    continue
                digest = _text_hash(f.text)
                fresh.sizes[i] = sizes[i]
                fresh.digests[i] = np.frombuffer(digest, np.uint8)
                if known[i] and stored[i] and manifest.digests[idx[i]].tobytes() == digest:
                    same[i] = True  # touched, not changed
                else:
                    loaded[i] = f
        return same, loaded, fresh

    def _read_dirty_readmes(
        self,
        found: Scanned,
        in_dirty: npt.NDArray[np.bool_],
        loaded: dict[int, LoadedFile],
        report: LoadReport,
    ) -> None:
        """A changed directory is re-described from its README's text: read it if kept."""
        cap = self.builder.max_file_bytes
        with FolderCursor() as folders:
            for i in np.flatnonzero(in_dirty).tolist():
                rel = found.rels[i]
                if is_readme(rel.rsplit("/", 1)[-1]):
                    f = read_file(
                        found.path(i),
                        rel,
                        report,
                        cap,
                        int(found.sizes[i]),
                        follow=found.single,
                        folders=folders,
                    )
                    if f is not None:
                        loaded[i] = f

    @staticmethod
    def _kept_dirs(
        uris: _UriMap, clean: set[str], dirty: set[str], abstracts: Mapping[str, str]
    ) -> dict[str, str]:
        """Directories with nothing changed below them whose parent is re-described: their
        stored abstract stands for them (the walk below them is not needed)."""
        top = {d: uris.dir(d) for d in clean if d.rpartition("/")[0] in dirty}
        return {d: abstracts.get(u, "") for d, u in top.items()}

    # ------------------------------------------------------------------ writing nodes
    async def write(
        self,
        built: BuiltTree,
        target: str,
        call: AddCall,
        *,
        plan: _Plan | None = None,
        old_uris: set[str] | None = None,
        checkpoint: Callable[[set[str]], Awaitable[None]] | None = None,
        gaps: _BatchGaps | None = None,
        keep_user_tags: bool = False,
        before_tags: _CallTags | None = None,
    ) -> AddResult:
        """Store a built tree at ``target`` (the caller holds :attr:`lock`): embed only nodes
        whose text changed, delete stored nodes the tree no longer has, re-describe the
        directories above, save.

        With a ``plan`` and a ``checkpoint``, the embedded nodes are committed in batches
        (every :attr:`commit_files` files or :attr:`commit_seconds`): the store is saved, then
        ``checkpoint`` gets the URIs of the files whose nodes are all stored. With ``gaps``
        too, the store's write lock is let go after each of those commits and taken back
        before the next (:class:`_BatchGaps`). ``keep_user_tags``: a node stored already keeps
        its own user tags (a folder's re-add under the call that wrote it, or the re-read of
        an older reading: :meth:`_older_readings`), a new one gets the call's.
        ``before_tags``: the tag list of the call that last added ``target`` and committed
        (recorded by :meth:`_put_call_tags`, with the calls stopped since it; ``None`` where
        none is recorded): with it, a stored node's user tags are read back to what was
        committed (:meth:`_CallTags.committed`), then follow :func:`_tags_after_call`
        (``set_tags``' edits kept, the rest the call's), whatever ``keep_user_tags`` says."""
        user_tags, metadata = call.user_tags, call.metadata
        if metadata:
            for n in built.nodes:
                n.metadata = {**n.metadata, **dict(metadata)}
        res = _result(target, built)
        res.max_file_bytes = self.builder.max_file_bytes
        nodes = built.nodes
        if plan is None:
            old = await self.io(self._stored_hashes, target)
            wanted = {n.uri for n in nodes}
            stale = [u for u in old if u not in wanted]
        else:
            assert old_uris is not None
            old = await self.io(self._hashes_of, [n.uri for n in nodes])
            stale, kept_chunks = _stale(old_uris, nodes, plan)
            res.files = len(plan.manifest)
            res.chunks = built.chunks + kept_chunks
            res.directories = len(plan.live_dirs)
            res.read = plan.read
        changed = [n for n in nodes if old.get(n.uri) != n.content_hash]
        same = [n for n in nodes if old.get(n.uri) == n.content_hash]
        kids = plan.children if plan is not None else {}
        # (a target added by itself inside this one and deleted as none of its files: its
        # records go with it, as with a removal's)
        records = await self.io(self._target_records, stale) if stale else []
        kept = (
            await self.io(self._stored_user_tags, [n.uri for n in nodes])
            if keep_user_tags or before_tags is not None
            else None
        )
        settle: Callable[[str, list[str]], list[str]] | None = None
        if kept is not None and before_tags is not None:
            # (before the first node write: a call with another list says it is under way,
            # with what was committed; the tags a stopped call left are read back to that)
            await self.io(self._mark_call_tags, target, before_tags, user_tags, kept)
            settle = before_tags.committed
            kept = {u: settle(u, t) for u, t in kept.items()}
        if kept is not None:
            kept = await self.io(self._chunk_tags_by_text, nodes, old, stale, kept, settle)
        if kept is not None and before_tags is not None:
            was = before_tags.user_tags
            kept = {u: _tags_after_call(t, was, user_tags) for u, t in kept.items()}
        # The tagger's cut of the leaf texts is reused by the store's BM25 upsert of the
        # same texts (``text_tokenize.sharing_cuts``): they are cut into words once.
        with sharing_cuts():
            await to_thread_to_the_end(
                _gc_paused,
                self.apply_tags,
                nodes,
                user_tags,
                changed,
                target,
                kids,
                frozenset(stale),
                None,
                kept,
            )
            if same:
                # Text unchanged: keep vectors, refresh tags/metadata without re-embedding
                # (first, so that the first commit holds them).
                await self.refresh_unchanged(same)
            if plan is not None and checkpoint is not None:
                await self._store_in_batches(changed, plan, call.progress, checkpoint, gaps)
            else:
                vectors = await self.embed_nodes(changed, call.progress)
                if changed:
                    await self.io(self.store.upsert, changed, vectors)
        if stale:
            res.deleted = await self.io(self.store.delete, stale)
        res.embedded = len(changed)
        # (with a plan, also the files an incremental re-add skipped unread: its stored
        # nodes neither rewritten nor deleted; a text or a whole rebuild skips none, and the
        # term taken from nothing made a re-added text's count negative)
        skipped = len(old_uris) - len(stale) - len(old) if old_uris is not None else 0
        res.unchanged = len(same) + skipped
        await self.refresh_ancestors(target)
        await self.route_directories(target)
        await self.finish()
        if records:
            await self.io(self._drop_target_records, records)
        res.elapsed_s = time.perf_counter() - call.t0
        return res

    async def _store_in_batches(
        self,
        changed: Sequence[Node],
        plan: _Plan,
        progress: ProgressCallback | None,
        checkpoint: Callable[[set[str]], Awaitable[None]],
        gaps: _BatchGaps | None = None,
    ) -> None:
        """Embed and store ``changed`` directories first, then file by file, committing every
        :attr:`commit_files` files or :attr:`commit_seconds` seconds (see :meth:`write`).

        With ``gaps``, the store's write lock is released after each commit (this client's
        own lock kept: its own calls stay queued) and the next batches are embedded outside
        it; it is taken back, and what the ingest read checked again, before the next
        commit's first write. It is held again when this returns (the rest of the write, the
        stale nodes' deletion included, runs under it as before).

        Directories go first: a stop after the first commit leaves every directory described
        from all of its files, so a resumed run re-describes only those with files left."""
        pending = plan.pending
        groups: dict[str, list[Node]] = {}
        dirs: list[Node] = []
        for n in changed:
            key = n.uri.partition(urimod.CHUNK_MARK)[0]
            if key in pending:
                groups.setdefault(key, []).append(n)
            else:
                dirs.append(n)
        done = {u for u in pending if u not in groups}  # nothing to embed: stored already
        seq = dirs + [n for g in groups.values() for n in g]
        # The position in ``seq`` after which each file's nodes are all embedded.
        ends: list[tuple[int, str]] = []
        at = len(dirs)
        for key, g in groups.items():
            at += len(g)
            ends.append((at, key))
        total, total_files = len(seq), len(pending)
        buf_nodes: list[Node] = []
        buf_vecs: list[np.ndarray[Any, np.dtype[np.float32]]] = []
        last_commit = time.monotonic()
        since = 0
        e = 0
        out = False  # (the store's lock let go: taken back before the next write)
        for start in range(0, total, EMBED_BATCH):
            part = seq[start : start + EMBED_BATCH]
            vecs = await self.embedder.aembed([n.embedding_text() for n in part])
            self.lock.moved()  # (a batch embedded: progress, see WriteLock)
            buf_nodes += part
            buf_vecs.append(np.asarray(vecs, np.float32))
            end = start + len(part)
            while e < len(ends) and ends[e][0] <= end:
                done.add(ends[e][1])
                since += 1
                e += 1
            if progress is not None:
                # (first: "embed" may print a line)
                report(progress, "files", len(done), total_files)
                report(progress, "embed", end, total)
            last = end >= total
            if buf_nodes and (
                last
                or since >= self.commit_files
                or time.monotonic() - last_commit >= self.commit_seconds
            ):
                if out:
                    assert gaps is not None
                    await gaps.back()
                    out = False
                await self.io(self.store.upsert, buf_nodes, np.vstack(buf_vecs))
                if not last:  # (the end of the write saves and writes the whole manifest)
                    await self.io(self.store.save)
                    self.lock.moved()  # (a batch committed: this client's waiters wait on)
                    await checkpoint(set(done))
                    if gaps is not None:
                        await gaps.leave(buf_nodes)
                        out = True
                buf_nodes, buf_vecs = [], []
                last_commit, since = time.monotonic(), 0
        if out:  # (not reached: the last batch commits; kept so the lock is never lost)
            assert gaps is not None
            await gaps.back()

    async def finish(self) -> None:
        """End a write: re-tag a small index whole, then save once."""
        if self.tagger is not None and len(self.store) <= self.retag_all_below:
            # Keyword statistics moved with this batch; on a small index re-extracting every
            # node's tags is cheap (~1.5 ms a leaf) and keeps tags independent of ingest order.
            await to_thread_to_the_end(self.retag_sync, None, False)
        await self.io(self.store.save)

    def _stored_hashes(self, target: str) -> dict[str, str]:
        """``{uri: content_hash}`` under ``target``; cheap on stores that can skip parsing."""
        if isinstance(self.store, IncrementalStore):
            return dict(self.store.content_hashes(target))
        return {n.uri: n.content_hash for n in self.store.iter_nodes(target)}

    def _hashes_of(self, uris: Sequence[str]) -> dict[str, str]:
        found = self.store.get(list(uris))
        return {n.uri: n.content_hash for n in found if n is not None}

    async def write_nodes(
        self,
        nodes: Sequence[Node],
        *,
        delete: Sequence[str] = (),
        user_tags: Sequence[str] = (),
        prune_below: str | None = None,
        counted: Mapping[str, LabelCounts] | None = None,
        check: Callable[[], Awaitable[None]] | None = None,
    ) -> int:
        """Store explicitly built nodes (and delete ``delete``) in one locked write.

        Only nodes whose text changed are embedded; the directories above the written nodes
        are created or re-described from their children, as ``add_resource`` does. With
        ``prune_below``, directories strictly inside it that a deletion left empty are removed
        too. Returns the number of nodes embedded.

        ``counted``: the default keyword tagger's label counts of some directories' stored
        children, instead of reading them (see :meth:`IngestTagger.tag_nodes`; ignored by
        any other tagger, and with ``delete``).

        ``check``: the caller's check of the place against what is stored, run under the
        lock before anything is read for the write (:attr:`AddCall.check`).

        A node deeper than :data:`~treehop.uri.MAX_URI_DEPTH` segments is refused before any
        is touched (a 1,000-label LangGraph namespace raised ``RecursionError`` deriving its
        ancestors; one of 300 was written where no URI argument can name it again).
        """
        for n in nodes:
            if urimod.segment_count(n.uri) > urimod.MAX_URI_DEPTH:
                raise InvalidURIError(
                    f"{n.uri[:80]}...: more than {urimod.MAX_URI_DEPTH} path segments "
                    "(treehop.uri.MAX_URI_DEPTH)"
                )
        nodes = [finalize(n) for n in nodes]
        uris = {n.uri for n in nodes}
        async with self.lock:
            if check is not None:
                await check()
            old = await self.io(self.store.get, [n.uri for n in nodes])
            fresh = [
                o is None or o.content_hash != n.content_hash
                for n, o in zip(nodes, old, strict=True)
            ]
            changed = [n for n, f in zip(nodes, fresh, strict=True) if f]
            same = [n for n, f in zip(nodes, fresh, strict=True) if not f]
            tops = [n for n in nodes if n.parent_uri not in uris]
            if nodes:
                await to_thread_to_the_end(
                    self.apply_tags,
                    list(nodes),
                    list(user_tags),
                    changed,
                    tops[0].uri,
                    None,
                    frozenset(delete),
                    None if delete else counted,
                )
            vectors = await self.embed_nodes(changed, None)
            if changed:
                await self.io(self.store.upsert, changed, vectors)
            if same:
                await self.refresh_unchanged(same)
            gone = list(delete)
            records = await self.io(self._target_records, gone) if gone else []
            if gone:
                await self.io(self.store.delete, gone)
            if gone and prune_below is not None:
                gone += await self.io(_prune_empty, self.store, gone, prune_below)
            await self._refresh_after(tops, gone, uris)
            await self.finish()
            if records:
                await self.io(self._drop_target_records, records)
            return len(changed)

    async def _refresh_after(
        self, tops: Sequence[Node], gone: Sequence[str], uris: set[str]
    ) -> None:
        """Re-describe, once each, the parents of what was written and of what was deleted."""
        refreshed: set[str] = set()
        for top in tops:
            parent = top.parent_uri
            if parent is None or parent in refreshed:
                continue
            refreshed.add(parent)
            await self.refresh_ancestors(top.uri)
        for uri in gone:
            parent = urimod.parent_of(uri)
            if parent is not None and parent not in refreshed and parent not in uris:
                refreshed.add(parent)
                if (await self.io(self.store.get, [parent]))[0] is not None:
                    await self.refresh_ancestors(uri)

    # ------------------------------------------------------------------ tags
    def apply_tags(
        self,
        nodes: list[Node],
        user_tags: list[str],
        changed: Sequence[Node],
        target: str,
        children: Mapping[str, list[Child]] | None = None,
        gone: frozenset[str] = frozenset(),
        counted: Mapping[str, LabelCounts] | None = None,
        kept_users: Mapping[str, list[str]] | None = None,
    ) -> None:
        """User tags on every node; automatic keywords; inheritance down the tree.

        ``children``: stored children already read (the tagger gets them without a second
        read of the store). ``gone``: stored nodes this write deletes after tagging; a
        directory's tags must not count them among its children (a fresh ingest of the
        same tree never sees them). ``counted``: see :meth:`write_nodes`. ``kept_users``: the
        user tags of the nodes that keep their own (:meth:`write`'s ``keep_user_tags``)."""
        computed: Mapping[str, NodeTags] = {}
        if self.tagger is not None and nodes:
            new_texts = [n.embedding_text() for n in changed if n.is_leaf]
            store = (
                _ChildrenCache(self.store, children or {}, gone) if children or gone else self.store
            )
            if counted and isinstance(self.tagger, IngestTagger):
                computed = tagged(
                    self.tagger,
                    nodes,
                    cast(VectorStore, store),
                    new_texts,
                    counted=counted,
                )
            else:
                computed = tagged(self.tagger, nodes, cast(VectorStore, store), new_texts)
        kept = kept_users or {}
        users = {n.uri: list(kept.get(n.uri, user_tags)) for n in nodes}
        assign_tags(nodes, computed, users, self.outside_inheritance(target))

    def _chunk_tags_by_text(
        self,
        nodes: Sequence[Node],
        old: Mapping[str, str],
        stale: Sequence[str],
        kept: Mapping[str, list[str]],
        settle: Callable[[str, list[str]], list[str]] | None = None,
    ) -> dict[str, list[str]]:
        """``kept`` (stored user tags by URI) where a chunk's text moved to another number:
        a built chunk whose text is not its number's stored text, and that a stored chunk of
        the same file holds, gets that chunk's user tags (read back by ``settle`` where a
        call with another list stopped: :meth:`_CallTags.committed`; ``set_tags`` on
        ``a.md#chunk-2`` follows its text to ``#chunk-3`` when a chunk is put before it).
        A chunk whose text is new keeps its number's where that number's stored text is
        gone from the file (an edit in place), and gets the call's where that text moved to
        another number (its tags went with it). Why
        (helper leftovers75; attacks87's and review74's open item): tags were addressed by
        the chunk's number, which is only its place in the file."""
        mark = urimod.CHUNK_MARK
        moved = [n for n in nodes if mark in n.uri and old.get(n.uri) != n.content_hash]
        if not moved:
            return dict(kept)
        files = {n.uri.partition("#")[0] for n in moved}
        olds = [u for u in (*old, *stale) if mark in u and u.partition("#")[0] in files]
        by_text: dict[tuple[str, str], Node] = {}
        for s in self.store.get(olds):
            if s is not None:
                by_text.setdefault((s.uri.partition("#")[0], s.content_hash), s)
        texts = {(n.uri.partition("#")[0], n.content_hash) for n in nodes if mark in n.uri}
        out = dict(kept)
        for n in moved:
            file = n.uri.partition("#")[0]
            was = by_text.get((file, n.content_hash))
            if was is not None and was.uri != n.uri:
                theirs = [t for t in was.tags if tagmod.source_of(t) == "user"]
                out[n.uri] = settle(was.uri, theirs) if settle is not None else theirs
            elif n.uri in out and (file, old.get(n.uri)) in texts:
                del out[n.uri]  # (its number's text moved on: its tags went with it)
        return out

    def _call_tags(self, target: str, call: Sequence[str]) -> _CallTags | None:
        """The user tag list of the call that last added ``target`` and committed
        (:meth:`_put_call_tags`), with the calls under way since (:meth:`_mark_call_tags`);
        ``None`` where none is recorded (an index written before helper leftovers75, a blob
        that does not decode, a target no longer stored: then a re-add keeps the rule it
        had before).

        A record is read only while its target is stored (helper leftovers76): a removal
        drops it after its commit (:meth:`_drop_target_records`), and one left by a removal
        stopped between the two counts for nothing from that commit on.

        A record of helper review75's (a call under way, without the committed tags): the
        list before it for the call that resumes it (the same list, ``call``), ``None``
        for any other."""
        raw = self.store.get_state(_call_tags_key(target))
        if not raw:
            return None
        try:
            got = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(got, dict):
            return None
        tags = _str_list(got.get("user_tags"))
        if tags is None or self.store.get([target])[0] is None:
            return None
        if "pending_user_tags" not in got:
            return _CallTags(tags)
        stopped = got.get("stopped")
        edited = got.get("edited")
        if (
            isinstance(stopped, list)
            and all(_str_list(b) is not None for b in stopped)
            and isinstance(edited, dict)
            and all(_str_list(t) is not None for t in edited.values())
        ):
            hand = got.get("by_hand")
            if not (
                isinstance(hand, dict) and all(_str_list(t) is not None for t in hand.values())
            ):
                hand = {}
            return _CallTags(tags, [list(b) for b in stopped], dict(edited), by_hand=dict(hand))
        if got["pending_user_tags"] != list(call):
            return None
        return _CallTags(tags, resumes_review75=True)

    def _mark_call_tags(
        self,
        target: str,
        before: _CallTags,
        user_tags: Sequence[str],
        stored: Mapping[str, list[str]],
    ) -> None:
        """Before the first node write of a call whose tag list is not the one recorded (or
        that follows a stopped one): record that it is under way, with the committed list,
        the calls under way since it and the user tags of each node of the target whose
        tags are not the committed list's (``stored``: every node the call builds, read
        before it writes), so that the call after a stop reads each node's committed tags
        back (:meth:`_CallTags.committed`) until a call ends and :meth:`_put_call_tags`
        records its list.

        Why: the list was recorded only after the call's last write, so a call stopped
        after it wrote nodes kept the stopped call's tags on the next add with the old list
        (helper review75); review75's mark then read as no list for any call but the one
        that resumes it, so a third list dropped every ``set_tags`` edit (the call's tags
        alone, helper leftovers76). Nothing is written where the list is unchanged and no
        call is under way, or none is recorded."""
        if not before.changes(user_tags) or before.resumes_review75:
            return  # (review75's record says the same call is under way: kept as it is)
        call = list(user_tags)
        if before.edited is None:
            was = set(before.user_tags)
            edited = {u: list(t) for u, t in stored.items() if set(t) != was}
        else:
            edited = before.edited
        stopped = before.stopped if call in before.stopped else [*before.stopped, call]
        if before.edited is not None and stopped == before.stopped:
            return  # (the call that resumes a stopped one: recorded already)
        blob = {
            "target": target,
            "user_tags": list(before.user_tags),
            "pending_user_tags": call,
            "stopped": stopped,
            "edited": edited,
            "by_hand": before.by_hand,
        }
        self.store.put_state(_call_tags_key(target), json.dumps(blob).encode("utf-8"))

    def _put_call_tags(self, target: str, user_tags: Sequence[str]) -> None:
        """Record the call's user tag list for ``target``: what the next add of ``target``
        tells apart from ``set_tags``' edits (:func:`_tags_after_call`)."""
        blob = {"target": target, "user_tags": list(user_tags)}
        self.store.put_state(_call_tags_key(target), json.dumps(blob).encode("utf-8"))

    def _target_records(self, gone: Sequence[str]) -> list[str]:
        """The state keys of the ingest records (a folder's manifest, a target's call tags)
        of every target among the removed URIs ``gone`` (a target is a stored node: the
        folder or file an add wrote), that exist. Read before the removal's first write."""
        mark = urimod.CHUNK_MARK
        wanted = {k for u in gone if mark not in u for k in (_manifest_key(u), _call_tags_key(u))}
        if not wanted:
            return []
        listed = getattr(self.store, "state_keys", None)
        if callable(listed):
            return sorted(wanted.intersection(listed("ingest")))
        return sorted(k for k in wanted if self.store.get_state(k))

    def _drop_target_records(self, keys: Sequence[str]) -> None:
        """Drop ``keys`` (:meth:`_target_records`), right after the removal's commit: a store
        with ``drop_state`` (the embedded one removes their files; Milvus and VikingDB their
        rows, helper leftovers77) leaves nothing; any other keeps an empty blob (its delete).
        A stop between the commit and this leaves them, unread (:meth:`_call_tags` reads a
        record only while its target is stored; a manifest of a folder not stored plans a
        full read); the next add of the target writes its own."""
        drop = getattr(self.store, "drop_state", None)
        for k in keys:
            if callable(drop):
                drop(k)
            else:
                self.store.put_state(k, b"")

    def _stored_user_tags(self, uris: Sequence[str]) -> dict[str, list[str]]:
        """The user tags of each of ``uris`` stored (none for a node not stored)."""
        return _user_tags_by_uri(n for n in self.store.get(list(uris)) if n is not None)

    def outside_inheritance(self, uri: str) -> dict[str, list[str]]:
        """Inheritable labels of ``uri``'s parent, from the tags already stored above it."""
        parent = urimod.parent_of(uri)
        if parent is None:
            return {}
        node = self.store.get([parent])[0]
        if node is None:
            return {}
        labels = [
            tagmod.label_of(t) for t in node.tags if tagmod.source_of(t) in ("user", "inherit")
        ]
        return {parent: tagmod.dedupe(labels)}

    async def retag(self, root: Node | None) -> int:
        """Backfill: recount the keyword statistics, recompute automatic and inherited tags of
        ``root``'s subtree (everything when None) without re-embedding; user tags are kept."""
        async with self.lock:
            return await to_thread_to_the_end(self._retag_locked, root)

    def _retag_locked(self, root: Node | None) -> int:
        """:meth:`retag_sync` with the writer lock taken before its read (a store without
        ``begin_write``: as it is). Why: the nodes' tags were read from this process's
        generation (a long-lived client did not even catch up first) and written back whole,
        so a ``set_tags`` another process committed before or during the retag lost its tag
        (two processes: 15 of 15 tags gone). Under the lock, the store catches up with the
        disk before the read, and no other process commits until the save. Lock order: the
        writer lock, then the tagger's statistics lock (the refit takes it)."""
        begin = getattr(self.store, "begin_write", None)
        took = bool(begin()) if callable(begin) else False
        try:
            return self.retag_sync(root, True)
        except BaseException:
            if took:  # (this call's lock given back: nothing of it is kept)
                with suppress(TreehopError):
                    discard = getattr(self.store, "discard_unsaved", None)
                    if callable(discard):
                        discard()
                    self.store.save()
            raise

    async def set_tags(self, node: Node, adds: list[str], drops: set[str]) -> list[str]:
        """Add or remove user tags of a node; descendants' inherited tags follow."""
        async with self.lock:
            user = tagmod.merge(
                [
                    t
                    for t in node.tags
                    if tagmod.source_of(t) == "user" and tagmod.label_of(t) not in drops
                ],
                adds,
            )
            others = [
                t
                for t in node.tags
                if tagmod.source_of(t) != "user" and tagmod.label_of(t) not in drops
            ]
            await self.io(self._note_by_hand, node.uri, adds, drops)
            await self.io(self.store.update_tags, {node.uri: tagmod.merge(user, others)})
            await to_thread_to_the_end(self.retag_sync, node, False)
        stored = (await self.io(self.store.get, [node.uri]))[0]
        if stored is None:
            raise NotFoundError(f"{node.uri} was removed while its tags were set")
        return list(stored.tags)

    def _note_by_hand(self, uri: str, adds: Sequence[str], drops: set[str]) -> None:
        """Record ``set_tags``' ``adds`` (less ``drops``) on ``uri`` in the call-tags record
        of each target holding it (the node or an ancestor) that has a call under way (a
        stopped call): the next call keeps them (:attr:`_CallTags.by_hand`). Before the tags'
        write, under the write lock (no ingest in between). Nothing is written where no
        call is under way.

        Why (helper leftovers77; leftovers76's open item): after a stopped re-index, a tag the
        user set again by hand that only the stopped call gave read as that call's and was
        dropped by the next call."""
        target: str | None = uri
        while target is not None:
            key = _call_tags_key(target)
            raw = self.store.get_state(key)
            got: Any = None
            if raw:
                try:
                    got = json.loads(raw)
                except ValueError:
                    got = None
            if isinstance(got, dict) and got.get("stopped") and isinstance(got.get("edited"), dict):
                hand = got.get("by_hand")
                hand = dict(hand) if isinstance(hand, dict) else {}
                kept = _str_list(hand.get(uri)) or []
                now = tagmod.dedupe([*(t for t in kept if tagmod.label_of(t) not in drops), *adds])
                if now != kept:
                    if now:
                        hand[uri] = now
                    else:
                        hand.pop(uri, None)
                    got["by_hand"] = hand
                    self.store.put_state(key, json.dumps(got).encode("utf-8"))
            target = urimod.parent_of(target)

    def retag_sync(self, root: Node | None, refit: bool) -> int:
        """Recompute the tags of ``root``'s subtree (or of the whole index) in place."""
        # Each node is a copy with its own tags list (the store may hand out its cached nodes,
        # which must keep their tags until ``update_tags``): tagging reassigns ``tags`` and
        # reads the rest, so no deep copy (a 903-node index re-tagged whole: 35 -> 29 ms p50).
        if root is None:
            nodes = [_own_tags(n) for n in self.store.iter_nodes()]
            outside: dict[str, list[str]] = {}
        else:
            nodes = [_own_tags(n) for n in self.store.iter_nodes(root.uri)]
            outside = self.outside_inheritance(root.uri)
        if not nodes:
            return 0
        before = {n.uri: list(n.tags) for n in nodes}
        users = _user_tags_by_uri(nodes)
        computed: Mapping[str, NodeTags] = {}
        if self.tagger is not None:
            if refit:
                tagger_call(self.tagger.refit, self.store)
            computed = tagged(self.tagger, nodes, self.store, new_texts=[])
        assign_tags(nodes, computed, users, outside)
        changed = {n.uri: n.tags for n in nodes if n.tags != before[n.uri]}
        if changed:
            self.store.update_tags(changed)
        self.store.save()
        return len(changed)

    # ------------------------------------------------------------------ vectors
    async def refresh_unchanged(self, same: Sequence[Node]) -> None:
        """Rewrite nodes whose text (hence vector) is unchanged: tags and metadata only.

        A store with ``update_nodes`` (the embedded store) rewrites the changed rows in place and
        keeps their vectors; any other store gets its own vectors back through ``upsert``.
        """
        if isinstance(self.store, IncrementalStore):
            await self.io(self.store.update_nodes, list(same))
            return
        kept = await self.io(self.store.get_vectors, [n.uri for n in same])
        await self.io(self.store.upsert, list(same), kept)

    async def embed_nodes(
        self, nodes: Sequence[Node], progress: ProgressCallback | None
    ) -> np.ndarray[Any, np.dtype[np.float32]]:
        """The embeddings of ``nodes``' texts, in batches of :data:`EMBED_BATCH`."""
        if not nodes:
            return np.zeros((0, self.embedder.dimension or 1), np.float32)
        texts = [n.embedding_text() for n in nodes]
        parts = []
        for i in range(0, len(texts), EMBED_BATCH):
            parts.append(await self.embedder.aembed(texts[i : i + EMBED_BATCH]))
            self.lock.moved()  # (a batch embedded: progress, see WriteLock)
            if progress is not None:
                report(progress, "embed", min(i + EMBED_BATCH, len(texts)), len(texts))
        return np.vstack(parts).astype(np.float32)

    async def refresh_ancestors(self, target: str | Sequence[str]) -> None:
        """Create missing ancestors of ``target`` and re-describe them from their children.

        Several targets (a batch of files) share their ancestors: each is re-described once,
        deepest first, instead of once per target.
        """
        targets = [target] if isinstance(target, str) else list(target)
        if not targets:
            return
        chain = sorted(
            {a for t in targets for a in urimod.ancestors_of(t)},
            key=lambda u: (u.count("/"), u),
            reverse=True,
        )
        ctype = urimod.context_type_of(targets[0])
        described: list[Node] = []
        for uri in chain:
            node = await self._refresh_one(uri, ctype)
            self.lock.moved()  # (a directory re-described, maybe by an LLM: progress)
            if node is not None:
                described.append(node)
        if described and self.tagger is not None and len(self.store) > self.retag_all_below:
            await to_thread_to_the_end(self._tag_described, described)

    def _tag_described(self, dirs: Sequence[Node]) -> None:
        """Re-tag the directories a write just created or re-described, from their stored
        children's tags (an index past :attr:`retag_all_below`, which :meth:`finish` does
        not re-tag whole; below it, the whole re-tag covers them).

        Why: they kept the tags stored before (``existing.tags``), and one created by the
        write got none: a folder whose files were added one at a time to a large index had
        no ``auto:`` tag at all, and one whose files were all rewritten kept its old files'
        keywords. A tag hop looks up directories by their tags, so it could not reach the
        first and was sent to the second by words its children no longer hold (helper
        leftovers56). Only what was re-described is re-tagged (each was embedded again just
        now); the inherited tags of the nodes below them are left as they were."""
        nodes = [_own_tags(n) for n in dirs]
        before = {n.uri: list(n.tags) for n in nodes}
        users = _user_tags_by_uri(nodes)
        assert self.tagger is not None
        try:
            computed = tagged(self.tagger, nodes, self.store, new_texts=[])
        except TaggerNotFittedError:  # (nothing was counted yet: no leaf in the index)
            return
        mine = {n.uri for n in nodes}
        outside: dict[str, list[str]] = {}
        for n in nodes:
            if n.parent_uri is not None and n.parent_uri not in mine:
                outside.update(self.outside_inheritance(n.uri))
        assign_tags(nodes, computed, users, outside)
        changed = {n.uri: n.tags for n in nodes if n.tags != before[n.uri]}
        if changed:
            self.store.update_tags(changed)

    async def _refresh_one(self, uri: str, ctype: ContextType) -> Node | None:
        """Re-describe the directory ``uri`` from its children; returns the node written
        (None: its description did not change)."""
        name = uri.rsplit("/", 1)[-1]
        kids = await self._children_to_describe(uri, name)
        abstract, overview = await self._summarizing(
            summarize_ancestor, self.summarizer, uri, name, kids
        )
        level = Level.ABSTRACT if urimod.parent_of(uri) is None else Level.OVERVIEW
        node = finalize(
            Node(
                uri=uri,
                parent_uri=urimod.parent_of(uri),
                context_type=ctype,
                level=level,
                is_leaf=False,
                abstract=abstract,
                overview=overview,
                metadata={"name": name, "implicit": True},
            )
        )
        existing = (await self.io(self.store.get, [uri]))[0]
        if existing is not None and existing.content_hash == node.content_hash:
            return None
        if existing is not None:
            node.tags = existing.tags
        vec = await self.embedder.aembed([node.embedding_text()])
        await self.io(self.store.upsert, [node], vec)
        return node

    async def _children_to_describe(self, uri: str, name: str) -> list[Node]:
        """The children of ``uri`` its re-description reads: where the summariser says how
        many it needs (:class:`~treehop.ingest.summaries.BoundedSummarizer`) and the store
        reads a prefix of :meth:`children` (``children_head``: the embedded store), the
        first :data:`FIRST_CHILDREN_PAGE`, then 4x more until the summariser has enough or
        none are left; else all of them. The texts written are the same either way
        (``tests/test_ancestor_refresh.py``); what changes is that a write next to N
        siblings no longer reads N nodes (``bench/bench_append_siblings.py``)."""
        enough = getattr(self.summarizer, "directory_children_enough", None)
        head = getattr(self.store, "children_head", None)
        if enough is None or head is None:
            return await self.io(self.store.children, uri)
        n = FIRST_CHILDREN_PAGE
        while True:
            kids: list[Node] = await self.io(head, uri, n)
            if len(kids) < n or await self._children_enough(enough, name, kids):
                return kids
            n *= 4

    async def _summarizing(self, fn: Callable[..., _T], *args: Any) -> _T:
        """``fn(*args)``, a call of the summarizer's: inline for treehop's own
        (:class:`ExtractiveSummarizer`, microseconds), in a worker thread for a caller's (an
        LLM's call, seconds), as the build's calls of it are. Why: called on the event loop a
        caller's stalled every other call of the client for as long as it ran, and a write of
        this client queued behind this one could not notice its ``lock_timeout`` pass (it
        waited the whole call out, where a slow tagger's or embedder's call fails it, naming
        the call: helpers leftovers67a / leftovers68a)."""
        if type(self.summarizer) is ExtractiveSummarizer:
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    async def _children_enough(
        self, enough: Callable[..., object], name: str, kids: Sequence[Node]
    ) -> bool:
        """The summariser's ``directory_children_enough`` of ``kids``, called as its other
        methods are: through :func:`treehop._plugins.call` (what it raises is an
        :class:`~treehop.errors.IngestError` naming it, its call is named by a queued write's
        lock-timeout error), off the event loop as the summary is (:meth:`_summarizing`).
        An answer that is not a bool is refused (a ``"no"`` string is true).

        Why (helper leftovers68a; helper leftovers67a's open item): it was called on the
        event loop outside ``call``, so a caller's raised its own exception out of the write,
        and a slow one stalled the client unnamed."""
        summaries = children_summaries(kids)
        out = await self._summarizing(
            call, "the summarizer", IngestError, enough, name, summaries, None
        )
        if not isinstance(out, bool | np.bool_):
            raise IngestError(
                "the summarizer's directory_children_enough must answer True or False; "
                f"got {type(out).__name__[:100]}"
            )
        return bool(out)

    async def route_directories(self, target: str) -> None:
        """Give the directories of ``target``'s subtree (and its ancestors) routing vectors that
        represent what is below them: the centroid of their children's vectors, alone
        (``centroid``) or added to their summary's embedding (``mixed``).

        Bottom-up, so a directory's centroid uses its subdirectories' routing vectors.
        """
        if self.directory_vectors == "summary":
            return
        chain = list(urimod.ancestors_of(target))
        inside = await self.io(lambda: [n for n in self.store.iter_nodes(target)])
        dirs = [n for n in inside if not n.is_leaf]
        dirs += [n for n in await self.io(self.store.get, chain) if n is not None]
        if not dirs:
            return
        summary = await self.embed_nodes(dirs, None)
        routed: dict[str, np.ndarray[Any, np.dtype[np.float32]]] = {}
        # (the children's URIs only, where the store reads them without building nodes:
        # the same children in the same order, so the same mean to the bit)
        child_uris: Callable[[str], list[str]] = getattr(self.store, "child_uris", None) or (
            lambda uri: [k.uri for k in self.store.children(uri)]
        )
        for i in sorted(range(len(dirs)), key=lambda i: -dirs[i].uri.count("/")):
            node = dirs[i]
            kids = await self.io(child_uris, node.uri)
            vec = summary[i]
            if kids:
                kv = await self.io(self.store.get_vectors, kids)
                rows = [routed.get(k, kv[j]) for j, k in enumerate(kids)]
                cen = np.mean(np.stack(rows), axis=0)
                cen = cen / (float(np.linalg.norm(cen)) or 1.0)
                vec = cen if self.directory_vectors == "centroid" else vec + cen
            routed[node.uri] = (vec / (float(np.linalg.norm(vec)) or 1.0)).astype(np.float32)
        await self.io(self.store.upsert, dirs, np.stack([routed[n.uri] for n in dirs]))

    # ------------------------------------------------------------------ removal
    async def remove(self, node: Node) -> int:
        """Delete a node and its subtree; the directories above are re-described."""
        async with self.lock:
            uris = sorted(await self.io(self._stored_uris, node.uri))
            records = await self.io(self._target_records, uris)
            n = await self.io(self.store.delete, uris)
            if urimod.parent_of(node.uri) is not None:
                await self.refresh_ancestors(node.uri)
            await self.io(self.store.save)
            if records:
                await self.io(self._drop_target_records, records)
            return n


class _BatchGaps:
    """Between a directory ingest's commit batches: let other writers in, then check again,
    under the store's write lock, what the ingest read before it (helper xproc59b).

    Why: the ingest held the store's write lock (across processes, on disk) for the whole
    directory, so another process's ``add_messages`` or ``add_resource`` waited its
    ``lock_timeout`` and raised :class:`~treehop.errors.IndexLockedError` during a long
    ingest. Now each commit batch is one step under the lock (the client's own lock is held
    throughout, so this client's calls still wait for the whole ingest).

    What the ingest read before a gap, and another writer may have changed in it: the
    place's checks (``call.check``: rerun); the directory's manifest (another ingest of the
    same directory rewrites it: re-read, compared with the bytes this ingest wrote last);
    the nodes stored under the target (the plan's stored URIs and their texts, from which
    the stale nodes to delete, the kept files and the nodes to re-embed come; another
    process's write, rewrite or removal inside the directory changes them: when the store's
    generation moved, their ``{uri: content_hash}`` is read again and compared with what it
    was when the lock was let go). A difference refuses the rest with
    :class:`~treehop.errors.IngestError`: the batches committed so far are kept with a
    partial manifest, as after a stopped ingest, so adding the directory again resumes it,
    and nothing the other writer wrote is overwritten or deleted.

    Cost: one read of the target's ``{uri: content_hash}`` (the stored JSON scanned, no node
    built) at the first gap, then only after a gap in which another writer committed.

    Only for an embedded store on disk (the store that has a cross-process lock and a
    generation to compare); other stores keep the lock for the whole ingest, as before."""

    def __init__(self, writer: TreeWriter, target: str, call: AddCall, key: str) -> None:
        self.writer, self.target, self.call, self.key = writer, target, call, key
        self.written: bytes | None = None
        """The manifest this ingest wrote last (what a re-read must still find)."""
        self.generation = -1
        self.hashes: dict[str, str] | None = None
        """``{uri: content_hash}`` under the target when the lock was let go."""

    def possible(self) -> bool:
        store = self.writer.store
        return getattr(store, "path", None) is not None and hasattr(store, "generation")

    async def leave(self, batch: Sequence[Node]) -> None:
        """Right after the commit of ``batch`` (saved, its manifest written): note what is
        stored under the target, then release the store's lock."""
        w = self.writer
        if self.hashes is None:
            self.hashes = await w.io(_gc_paused, w._stored_hashes, self.target)
        else:
            self.hashes.update((n.uri, n.content_hash) for n in batch)
        self.generation = int(getattr(w.store, "generation", -1))
        await w.lock.let_others_in()

    async def back(self) -> None:
        """Take the store's lock back and check what the ingest read (see the class)."""
        w = self.writer
        await w.lock.take_back()
        if self.call.check is not None:
            await self.call.check()
        raw = await w.io(w.store.get_state, self.key)
        if raw != self.written:
            raise self._changed("its manifest was rewritten (another ingest of it)")
        if int(getattr(w.store, "generation", -1)) != self.generation:
            now = await w.io(_gc_paused, w._stored_hashes, self.target)
            if now != self.hashes:
                raise self._changed("another write added, changed or removed entries in it")
            self.hashes = now

    def _changed(self, why: str) -> IngestError:
        return IngestError(
            f"the ingest of {self.target[:200]} stopped between its commit batches: {why}; "
            "the files committed so far are kept, add the directory again to finish it"
        )


def _gc_paused(fn: Callable[..., _T], *args: Any) -> _T:
    """``fn(*args)`` with Python's cyclic garbage collector paused (then resumed if it ran).

    Why: a re-add lists every stored URI, stats every file and reads and tags every child
    of the folders it re-describes, keeping ~100k small objects (no reference cycles)
    alive at once at 100k files. Each few hundred of them started a collection, and the
    full ones walked the whole heap (the store's and the tagger's large containers): the
    re-add at 100k went from 2.6-2.9 s to ~1.9-2.2 s without them, freeing nothing
    less. Reference counting still frees everything as usual; only the cycle search waits
    until the step ends. A collector that is off when the step starts is left off."""
    if not gc.isenabled():
        return fn(*args)
    gc.disable()
    try:
        return fn(*args)
    finally:
        gc.enable()


def _numpy_hugepage_switch() -> Callable[[bool], bool] | None:
    """numpy's switch of its ``madvise(MADV_HUGEPAGE)`` on large arrays (it returns the
    previous setting), or None where this numpy has none (its location moved in 2.0)."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            mod = __import__(name, fromlist=["_set_madvise_hugepage"])
        except ImportError:
            continue
        fn = getattr(mod, "_set_madvise_hugepage", None)
        if callable(fn):
            return cast(Callable[[bool], bool], fn)
    return None


_HUGEPAGE_SWITCH = _numpy_hugepage_switch()
_pages_lock = threading.Lock()
_pages_users = 0
_pages_before = True


@contextmanager
def _small_pages() -> Iterator[None]:
    """numpy's transparent huge pages off for the duration of a write (restored after the
    last concurrent write ends).

    Why: numpy asks the kernel for 2 MB pages on every array of 4 MB or more; where THP
    defragmentation is ``madvise`` (a common default), each such first touch may compact
    memory synchronously. An ingest allocates and frees many large temporaries (the BM25
    log, the tagger's sorts, the store's columns): at 100k nodes (``bench_ingest.py
    --part nodes``, 2-core VM) the ingest's sys time was 6.9-9.4 s with the hint and
    4.7-6.7 s without, its CPU 27-30 s and 24-28 s. Ordinary 4 kB pages cost more faults
    but no compaction. Only numpy's allocation hint changes: results are unchanged."""
    global _pages_users, _pages_before
    switch = _HUGEPAGE_SWITCH
    if switch is None:
        yield
        return
    with _pages_lock:
        if _pages_users == 0:
            _pages_before = switch(False)
        _pages_users += 1
    try:
        yield
    finally:
        with _pages_lock:
            if _pages_users > 0:  # (0 in a child forked inside this write: already restored)
                _pages_users -= 1
                if _pages_users == 0:
                    switch(_pages_before)


def _reset_pages_in_forked_child() -> None:
    """In a child made by ``os.fork``: a new :data:`_pages_lock`, no write counted, numpy's
    huge-page hint as it was before the parent's writes. Why (helper attacks70): forked
    while another thread wrote, the child inherited the lock (held for good if that thread
    was inside it: every write of the child hung) and a count no write of the child would
    bring to 0 (the hint off for the child's life)."""
    global _pages_lock, _pages_users
    _pages_lock = threading.Lock()
    if _pages_users and _HUGEPAGE_SWITCH is not None:
        _HUGEPAGE_SWITCH(_pages_before)
    _pages_users = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pages_in_forked_child)


def _manifest_key(target: str) -> str:
    return "ingest/manifest-" + hashlib.sha1(target.encode("utf-8")).hexdigest()[:32]


def _call_tags_key(target: str) -> str:
    return "ingest/call-tags-" + hashlib.sha1(target.encode("utf-8")).hexdigest()[:32]


def _str_list(value: object) -> list[str] | None:
    """``value`` where it is a list of strings (a record's tag list), else ``None``."""
    if isinstance(value, list) and all(isinstance(t, str) for t in value):
        return value
    return None


@dataclass
class _CallTags:
    """A target's call-tags record (:meth:`TreeWriter._call_tags`): ``user_tags``, the list of
    the last call that committed; ``stopped``, the lists of the calls begun since with another
    list that did not end (the last one under way may be resumed); ``edited``, the user tags
    each node of the target had when the first of them began, where they were not
    ``user_tags`` (as a set) -- ``None`` where no call is under way (or for a record of helper
    review75's, which kept none)."""

    user_tags: list[str]
    stopped: list[list[str]] = field(default_factory=list)
    edited: dict[str, list[str]] | None = None
    resumes_review75: bool = False
    """The call resumes the one a record of helper review75's says is under way."""
    by_hand: dict[str, list[str]] = field(default_factory=dict)
    """The user tags ``set_tags`` added to each node while a call was under way (after a
    stop): :meth:`committed` keeps them, even one only a stopped call gave (helper
    leftovers77)."""

    def changes(self, call: Sequence[str]) -> bool:
        """Whether an add with ``call`` writes the record (another list, or after a stop)."""
        return list(call) != self.user_tags or bool(self.stopped)

    def committed(self, uri: str, stored: list[str]) -> list[str]:
        """The user tags node ``uri`` holds as far as the last committed call and
        ``set_tags`` go, from its ``stored`` ones: where a call under way stopped after it
        wrote the node, what the node had before that call (helper leftovers76).

        A node stores either what it had when the first stopped call began (``edited``, else
        the committed list) or what a stopped call wrote from that
        (:func:`_tags_after_call`): either reads back as the former. A node edited with
        ``set_tags`` after the stop is neither: its stored tags less those only a stopped
        call gave are read (a tag the user set on it again after the stop, that only a
        stopped call gave, is kept where ``set_tags`` recorded it in :attr:`by_hand`: helper
        leftovers77)."""
        if not self.stopped or self.edited is None:
            return stored
        was = self.edited.get(uri, self.user_tags)
        has = set(stored)
        if has == set(was) or any(
            has == set(_tags_after_call(was, self.user_tags, b)) for b in self.stopped
        ):
            out = list(was)
        else:
            theirs = {t for b in self.stopped for t in b}.difference(self.user_tags, was)
            out = [t for t in stored if t not in theirs]
        # (a tag the user set by hand after the stop, still stored, is the user's: it was
        # read as the stopped call's and dropped, helper leftovers77)
        hand = [t for t in self.by_hand.get(uri, ()) if t in has and t not in out]
        return [*out, *hand]


def _tags_after_call(
    stored: Sequence[str], before: Sequence[str], call: Sequence[str]
) -> list[str]:
    """A stored node's user tags when its target is added again with the tag list ``call``,
    where the last add of the target gave ``before`` (helper leftovers75).

    The rule: what the user changed with ``set_tags`` since is kept, the rest follows the
    call. A stored tag the last call did not give is an edit (``set_tags --add``, or another
    call's tag on a node this target's call does not own): kept. A tag the last call gave
    and the node no longer has was dropped (``set_tags --remove``): it stays dropped, even
    where the new list gives it again. Every other tag of ``call`` is the node's. With the
    same list (as sets) the stored tags are kept as they are (review74's rule: "with the
    same list they are kept"). Order: the call's tags, then the edits, as stored."""
    was = set(before)
    if was == set(call):
        return list(stored)
    has = set(stored)
    return tagmod.dedupe(
        [*(t for t in call if t in has or t not in was), *(t for t in stored if t not in was)]
    )


class _ChildrenCache:
    """A store whose ``children`` of some directories were read already, less the nodes the
    write deletes; everything else is the store's own (reads only: the tagger looks up
    stored children and state)."""

    def __init__(
        self,
        store: VectorStore,
        children: Mapping[str, list[Child]],
        gone: frozenset[str] = frozenset(),
    ) -> None:
        self._store = store
        self._children = children
        self._gone = gone

    children_fields = None
    """Not the store's: the tagger reads :meth:`children` here (what was read already, less
    the deleted nodes), never the store's stored JSON behind it."""

    def children(self, uri: str) -> list[Node]:
        kids = self._children.get(uri)
        # The tagger reads a stored child's URI and tags only (``_stored_auto_labels``): what
        # the re-add read of it (a :class:`Child`) is enough.
        got = cast(list[Node], list(kids) if kids is not None else self._store.children(uri))
        # Children this write deletes are still stored while it tags: they are not children.
        return [k for k in got if k.uri not in self._gone] if self._gone else got

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def __len__(self) -> int:
        return len(self._store)


class _UriMap:
    """Relative paths to URIs, each directory's URI built once (100k files share ~1k)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._dirs: dict[str, str] = {"": target}

    def dir(self, rel: str) -> str:
        uri = self._dirs.get(rel)
        if uri is None:
            head, _, name = rel.rpartition("/")
            uri = self._dirs[rel] = urimod.join(self.dir(head), segment(name))
        return uri

    def file(self, rel: str) -> str:
        head, _, name = rel.rpartition("/")
        seg = name.translate(_ESCAPE_TABLE)
        if not seg or seg in {".", ".."} or "/" in seg:
            return urimod.join(self.dir(head), segment(name))  # raises the usual error
        # What segment() + urimod.join() return for an ordinary name, without two calls
        # per file (a re-add maps every scanned file).
        parent = self._dirs.get(head)
        return f"{parent if parent is not None else self.dir(head)}/{seg}"

    def files(self, rels: Sequence[str]) -> list[str]:
        """:meth:`file` of every path. When no path holds a character a segment escapes
        (``#%?\\``; one check over all of them), a file's URI is the target, ``/`` and its
        relative path: one C-level pass instead of a call per file."""
        joined = "\n".join(rels)
        if any(c in joined for c in _ESCAPES) or not all(rels):
            return [self.file(r) for r in rels]
        return list(map(f"{self.target}/".__add__, rels))


def _mask(n: int, rows: Iterable[int]) -> npt.NDArray[np.bool_]:
    out = np.zeros(n, bool)
    out[list(rows)] = True
    return out


def _dirs_above(dirs: Iterable[str]) -> set[str]:
    """The given directories (relative, ``""`` the root) and every directory above them."""
    out: set[str] = set()
    for d in dirs:
        while d not in out:
            out.add(d)
            if not d:
                break
            d = d.rpartition("/")[0]
    return out


def _all_dirs(relpaths: Iterable[str]) -> set[str]:
    """Every directory above the given relative paths (``""`` is the root)."""
    return _dirs_above({r.rpartition("/")[0] for r in relpaths})


def _stale(old_uris: set[str], nodes: Sequence[Node], plan: _Plan) -> tuple[list[str], int]:
    """Stored URIs under the target that the new tree has no place for, and how many chunks
    of kept files stay. A stored node stays when it is rebuilt, is (a chunk of) a kept file,
    or is a directory that still holds a file.

    One C-level set difference leaves the chunks of kept files and the stale nodes; only
    those are looked at one by one."""
    rest = old_uris.difference({n.uri for n in nodes}, plan.live_dirs, plan.kept_files)
    stale: list[str] = []
    kept_chunks = 0
    for u in rest:
        base, mark, _ = u.partition(urimod.CHUNK_MARK)
        if mark and base in plan.kept_files:
            kept_chunks += 1
        else:
            stale.append(u)
    return stale, kept_chunks


def _result(target: str, built: BuiltTree) -> AddResult:
    r = built.report
    return AddResult(
        root_uri=target,
        directories=built.directories,
        files=built.files,
        chunks=built.chunks,
        skipped_binary=r.skipped_binary,
        skipped_unreadable=r.skipped_unreadable,
        skipped_other=r.skipped_other + r.skipped_large + r.skipped_empty,
        skipped_large=list(r.skipped_large),
        skipped_dirs=list(r.skipped_dirs),
        skipped_hidden=list(r.skipped_hidden),
        skipped_names=list(r.skipped_names),
        excluded=list(r.excluded),
        read_as_cp1252=list(dict.fromkeys(r.read_as_cp1252)),  # (a README read twice: once)
    )


def _prune_empty(store: VectorStore, deleted: Sequence[str], stop: str) -> list[str]:
    """Delete the directories strictly inside ``stop`` left without children; their URIs."""
    removed: list[str] = []
    candidates = {urimod.parent_of(u) for u in deleted}
    while candidates:
        nxt: set[str | None] = set()
        for d in candidates:
            if d is None or d == stop or not urimod.is_within(d, stop):
                continue
            if not store.children(d) and store.get([d])[0] is not None:
                store.delete([d])
                removed.append(d)
                nxt.add(urimod.parent_of(d))
        candidates = nxt
    return removed


def is_path_like(value: str | os.PathLike[str]) -> bool:
    """Whether ``add_resource``/``add_skill`` read ``value`` as an existing path."""
    from .. import arguments as argmod

    return isinstance(value, os.PathLike) or (
        value != ""  # (``Path("")`` is ``.``: an empty text indexed the working directory)
        and "\n" not in value
        and len(value) < 4096
        and "\x00" not in value
        and not argmod.has_lone_surrogate(value)
        and os.path.exists(value)
    )
    # (``os.path.exists``, not ``Path.exists``: the latter raises for what the OS refuses to
    # look up, ``ENAMETOOLONG`` of a one-line paragraph longer than a file name (255 bytes)
    # first: ``add_resource`` of such a text escaped a raw ``OSError``; it is a text.)


def tagger_call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Call a tagger's ``tag_nodes`` / ``refit``: a caller's tagger raising anything but
    treehop's own errors and the interpreter's signals (:func:`treehop._plugins.passes`)
    raises :class:`~treehop.tagging.keywords.TaggerError` naming what it raised, cut and
    redacted. Why: a custom tagger's ``ValueError`` (or a ``BaseException`` of its own) left
    ``add_resource`` / ``retag`` raw, where only ``TreehopError`` may leave treehop; the write
    it broke is rolled back as for any failure (nothing is committed before tagging ends)."""
    return call("the tagger", TaggerError, fn, *args, **kwargs)


_TAGS_SHAPE = "expected a dict of uri -> NodeTags(auto=[tags], own_labels=[labels])"


def tagged(tagger: Tagger, *args: Any, **kwargs: Any) -> Mapping[str, NodeTags]:
    """``tagger.tag_nodes(*args, **kwargs)`` through :func:`tagger_call`, its answer checked
    (:func:`checked_tags`) before any tag of it is assigned or written. treehop's own
    ``IngestTagger`` is trusted (its answer is built by the code above, on every write)."""

    # (the call, then the check: an async ``tag_nodes`` is refused by the call, its
    # coroutine closed, before the check would name it a wrong shape; helper attacks75)
    answer = tagger_call(lambda: tagger.tag_nodes(*args, **kwargs))
    return answer if type(tagger) is IngestTagger else checked_tags(answer)


def checked_tags(answer: object) -> Mapping[str, NodeTags]:
    """A tagger's ``tag_nodes`` answer, or :class:`~treehop.tagging.keywords.TaggerError`
    naming what is wrong with it. Why: a caller's tagger answering ``None``, a list, a
    string for ``auto`` (stored as one tag per character) or a label with ``;`` reached
    :func:`~treehop.tagging.assign_tags` as it was: a raw ``AttributeError`` there, or tags
    no ``tags=`` filter can name written to the index; a bare label read as the user's own
    tag. Each ``auto`` item must be a tag in its normalised ``source:label`` form
    (:func:`~treehop.tagging.auto_tags` writes them), each ``own_labels`` item a normalised
    label. Names shown are cut and redacted (:func:`~treehop.redaction.shown_name`)."""

    def refuse(why: str) -> TaggerError:
        return TaggerError(f"the tagger's tag_nodes answered {why}; {_TAGS_SHAPE}"[:SHOWN_CHARS])

    if not isinstance(answer, Mapping):
        raise refuse(f"a {type(answer).__name__[:100]}")
    # What is checked is what is used: a plain dict of copies. Why (helper attacks75): the
    # answer itself was handed on and read again by ``get``, which a caller's mapping
    # answers as it likes (a ``Mapping`` whose ``__getitem__`` answers URIs its iteration
    # never lists, a ``dict`` subclass overriding ``get``): tags never checked were written.
    checked: dict[str, NodeTags] = {}
    for uri, got in answer.items():
        if not isinstance(uri, str):
            raise refuse(f"a key of type {type(uri).__name__[:100]}")
        if not isinstance(got, NodeTags):
            raise refuse(f"a {type(got).__name__[:100]} for {shown_name(uri)}")
        kept: dict[str, list[str]] = {}
        for part, items in (("auto", got.auto), ("own_labels", got.own_labels)):
            kept[part] = []
            if not isinstance(items, list | tuple):
                raise refuse(f"{part}={type(items).__name__[:100]} for {shown_name(uri)}")
            if len(items) > tagmod.MAX_TAGS:  # (the bound of a tags= argument; lead, stop 63)
                raise refuse(
                    f"{len(items)} {part} items for {shown_name(uri)}, over {tagmod.MAX_TAGS}"
                )
            for item in items:
                if not _normalised(item, part == "auto"):
                    what = shown_name(item) if isinstance(item, str) else type(item).__name__
                    raise refuse(
                        f"{part} item {what[:200]} for {shown_name(uri)}, not a normalised "
                        + ("tag (source:label)" if part == "auto" else "label")
                    )
                kept[part].append(item)
        checked[uri] = NodeTags(
            auto=kept["auto"][: tagmod.MAX_TAGS], own_labels=kept["own_labels"][: tagmod.MAX_TAGS]
        )
    return checked


def _normalised(item: object, tag: bool) -> bool:
    """Whether ``item`` is a normalised tag (``tag``) or label."""
    if not isinstance(item, str):
        return False
    try:
        return (tagmod.parse_tag(item, "auto") if tag else tagmod.normalize_label(item)) == item
    except InvalidTagError:
        return False


def _user_tags_by_uri(nodes: Iterable[Node]) -> dict[str, list[str]]:
    """Each node's user tags (``set_tags``' and the add call's), by URI: what a re-tag keeps."""
    return {n.uri: [t for t in n.tags if tagmod.source_of(t) == "user"] for n in nodes}


def _own_tags(node: Node) -> Node:
    """A shallow copy of ``node`` with a tags list of its own (what a re-tag may change)."""
    return node.model_copy(update={"tags": list(node.tags)})
