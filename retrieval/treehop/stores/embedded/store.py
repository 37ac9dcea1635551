"""``EmbeddedStore`` itself: construction and open, basic reads (``get``, ``children``,
``iter_nodes``), state blobs, ``refresh``, ``close`` and the interpreter-exit hook. The
search, write, graph, BM25 and generation parts are mixins from the sibling modules."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import stat
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

import numpy as np
import pydantic_core
from pydantic import ValidationError

from ...errors import (
    IndexBeingCreatedError,
    IndexCorruptError,
    IndexRecoveryError,
    NotFoundError,
    StoreError,
    TreehopError,
)
from ...lexical import LexicalIndex
from ...models import Node
from ...validation import shown_value
from .. import _ann
from .._ann import AnnIndex, WarmOrphans
from .._filelock import WriterLock, another_write_holds, held_elsewhere, lock_timeout_of
from .._state_blobs import check_state_key
from ..base import (
    HitArrays,
    RecoveryRecord,
    Scope,
    StoreCapabilities,
    Vector,
)
from .ann_worker import _AnnWorker
from .column_files import _fsync_file
from .family_batch import search_arrays_many
from .layout import _NODE_CACHE, IntArray, _h64
from .lexical_sync import _LexicalSync
from .manifest import _anything_committed, _Generations, _read_current
from .search_paths import _SearchPaths
from .snapshot import _content_hash, _empty_snap, _Snap, _stored_field
from .writes import _Writes

DEFAULT_ANN_MIN_ROWS = 50_000
"""From this many live rows on, the global step uses the HNSW graph. Measured with
``bench/bench_store.py`` on the shared 2-core machine: an exact 384-d pass costs ~0.5 ms per
1,000 rows (~25 ms at 50k), a graph query ~1 ms; at 10k rows the exact step is already only
~0.07x of a flat BLAS search (it skips nothing but is single-threaded SIMD), so the graph
starts where the exact pass passes ~20 ms. Building it no longer costs a write anything (the
background worker of :mod:`.._ann`), only background CPU."""

_node_json = Node.__pydantic_validator__.validate_json
"""A stored node's JSON parsed by the model's own validator: what
``TypeAdapter(Node).validate_json`` calls, without its ~0.6 us of Python per call (a find
parses the ~10 nodes it returns)."""


class EmbeddedStore(_SearchPaths, _Writes, _AnnWorker, _LexicalSync, _Generations):
    """A columnar numpy vector store with crash-safe, incremental, checksummed persistence.

    ``lock_timeout``: seconds a write waits for another writer of the same index before
    raising :class:`~treehop.errors.IndexLockedError` (default 10). ``verify``: check every
    file's checksums and the vectors' finiteness (``True``: all but the node texts on open,
    ~0.3-0.45 s for 100k 384-d rows from a cold cache here, the node texts before their
    first use); ``"background"``: check the small files on open and the vectors, graph and
    node texts in a thread (open ~0.13 s at 100k, ~1.9 s at 1M where a verified open reads
    2.3 GB: 4.5-7.9 s), after which damage makes every call raise (calls made before it is
    found are not protected); ``"auto"`` (the default): ``True`` while the vectors and graph
    of the generation opened are under :data:`AUTO_VERIFY_BYTES` (512 MiB: ~250k 384-d rows),
    ``"background"`` above; ``False``: trust the files.
    ``vector_reads``: how the saved vectors are read. ``"map"``: through a memory map that
    stays resident (the fastest row reads; at 1M 384-d rows the whole 1.5 GB file becomes
    this process's memory within a few finds); ``"read"``: rows by ``pread``, exact scans
    through the map one 32 MiB block at a time (the process keeps none of the file; the
    page cache holds what was read, reclaimable by the kernel; a find at 1M costs ~0.4 ms
    more CPU for its ~100 reads); ``"auto"`` (the default): ``"read"`` for a generation
    whose vectors are over ``manifest.READ_VECTORS_BYTES`` (512 MiB: ~350k 384-d rows),
    else ``"map"``.
    ``ann_min_rows``: live rows from which the global step uses the HNSW graph (``None``:
    never). The graph is built and extended by a background worker after writes (with
    ``ann_threads`` threads), never inside one; :meth:`wait_ann` waits for it.
    """

    _registry: ClassVar[dict[str, weakref.ReferenceType[EmbeddedStore]]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def search_arrays_many(
        self,
        vectors: Sequence[Vector],
        scopes: Sequence[Scope],
        limits: Sequence[int],
        *,
        query_texts: Sequence[str | None],
        dense_weights: Sequence[float],
        leaf_columns: Sequence[int] | None = None,
    ) -> list[HitArrays]:
        """:meth:`search_arrays` of many queries, each with its own scope, limit, text and
        dense weight: each answer the one a call of its own gives (rows, order and scores,
        to the bit), the small exact searches' arithmetic done once for the batch (the tree
        context of ``find_many``: see :mod:`.family_batch`)."""
        return search_arrays_many(
            self, vectors, scopes, limits, query_texts, dense_weights, leaf_columns
        )

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        dimension: int | None = None,
        *,
        lexical: bool = True,
        ann_min_rows: int | None = DEFAULT_ANN_MIN_ROWS,
        lock_timeout: float = 10.0,
        verify: bool | Literal["background", "auto"] = "auto",
        strict: bool = False,
        vector_reads: Literal["auto", "map", "read"] = "auto",
    ):
        self.path = Path(path) if path is not None else None
        self.strict = bool(strict)
        self.recovery: RecoveryRecord | None = None
        """What the last open recovered from by opening an older generation (see
        :class:`~treehop.stores.base.RecoveryRecord`); ``None``: nothing."""
        self._current_file: str | None = None  # the path of CURRENT, for refresh()
        self._lock_paths: dict[str, Path] = {}  # locks/<name>, for _lock_file()
        self._recovered_from: int | None = None
        """The unreadable generation ``CURRENT`` named when the open fell back: a refresh
        does not reopen (and warn) again while ``CURRENT`` still names it."""
        self.lock_timeout = lock_timeout_of(lock_timeout)
        if verify not in (True, False, "background", "auto"):
            raise StoreError(
                f"verify must be True, False, 'background' or 'auto', got {shown_value(verify)}"
            )
        self.verify = verify
        if vector_reads not in ("auto", "map", "read"):
            raise StoreError(
                f"vector_reads must be 'auto', 'map' or 'read', got {shown_value(vector_reads)}"
            )
        self.vector_reads = vector_reads
        self._verify: bool | Literal["background"] = True if verify == "auto" else verify
        """What the last open did (``verify="auto"`` resolved by the index's size)."""
        self._corrupt: IndexCorruptError | None = None
        self._verifier: threading.Thread | None = None
        self.ann_min_rows = ann_min_rows
        self._wlock = threading.RLock()
        self._released = False
        """Set by :meth:`close`: the mapped generation was let go; the next use maps it
        again (:attr:`_snap`)."""
        self._let_go: _Snap | None = None
        """The empty snapshot :meth:`_release_files` put in place of the mapped one: a
        reader that got it maps the generation again (:attr:`_snap`)."""
        self._kept_over_close: tuple[int, int, int, tuple[int, int] | None, dict[Any, Any]] | None
        self._kept_over_close = None
        """What :meth:`_release_files` kept of the let-go snapshot's lookups (generation,
        epoch, rows, folder, the entries) for :meth:`_reopen` of the same generation."""
        self._file_marks: dict[str, tuple[int, int, int, int]] = {}
        """Each file of the committed generation as this store last opened it (inode, size,
        modification and change times, from the open's own ``stat``): :meth:`_reopen`
        skips the checksums only while they are all the same."""
        self._let_go_current: tuple[str, int, int] | None = None
        """What ``CURRENT`` said (manifest name, generation, the manifest's checksum) when
        :meth:`_release_files` let the generation go: :meth:`_reopen` maps it again without
        checks only while ``CURRENT`` still says that (helper attacks73)."""
        self._flock: WriterLock | None = None
        self._folder_id: tuple[int, int] | None = None
        """The ``(st_dev, st_ino)`` of the index folder this store's generation was read
        from (or its first write made): a save commits into that folder only (see
        :meth:`_folder_swapped`); ``None``: no folder yet."""
        self._gone: StoreError | None = None
        """Set when the index folder this store had read a generation from left its path
        (renamed, moved or removed) and nothing is there now: :meth:`check_in_place` (every
        client read) raises it rather than answer as an empty index, until a write of this
        store begins (which makes a new index at the path) or a folder appears there (read
        as it is; see :meth:`_follow_path`)."""
        self._writes_made: WriterLock | None = None
        """The last :meth:`writes_lock` made (held while a client's write runs): the folder
        its anchor holds is the one that write began on."""
        self._use_lexical = lexical
        self._lex: LexicalIndex | None = LexicalIndex() if lexical else None
        self._lex_dir: Path | None = None
        self._lex_dirty = False
        self._lex_pre: tuple[Mapping[str, Any], threading.Thread, list[LexicalIndex]] | None = None
        """The saved BM25 index read by a thread the open starts (see
        :meth:`_start_lexical_read`): the manifest entry, the thread, its answer."""
        self._ann: AnnIndex | None = None
        self._ann_file: tuple[str, int, int] | None = None  # name, count, upto
        self._ann_pre: tuple[dict[str, Any], threading.Thread, list[Any]] | None = None
        """The saved graph's checksum, computed by a thread the open starts first (see
        :meth:`_start_ann_precheck`): the manifest entry, the thread, its answer."""
        self._ann_rows_open: tuple[str, IntArray, IntArray, IntArray] | None = None
        self._warm_orphans: WarmOrphans | None = None
        """The saved graph's orphans gathered by the last open (see :class:`WarmOrphans`)."""
        """The graph's row map as the open read it (index file name, rows): the graph's
        load takes it instead of reading the index file a second time."""
        self._ann_loader: threading.Thread | None = None
        self._ann_load_lock = threading.Lock()
        self._ann_worker: threading.Thread | None = None
        self._ann_failed: tuple[threading.Thread, IndexCorruptError] | None = None
        """The worker that stopped at a mapped file cut short, and why: :meth:`wait_ann`
        raises it instead of starting worker after worker until its timeout."""
        self._ann_token = 0
        """Bumped whenever the graph must stop growing (a reset, a compaction): a worker
        started under an older token stops after its chunk and publishes nothing."""
        self.ann_threads = os.cpu_count() or 1
        self.ann_catch_up = _ann.CATCH_UP_ROWS
        """Rows written after the graph was last extended from which a write starts the
        worker, and the growth from which a save rewrites the graph file (see
        ``_ann.CATCH_UP_ROWS``; lowered by tests that exercise the worker on small indexes)."""
        self._halt = threading.Event()
        """Set while :meth:`close` (or the interpreter's exit) stops the background threads:
        each stops at its next chunk (the graph worker) or extent (the checksum pass)."""
        self._paused = False
        """After :meth:`close`: no graph work starts until the store is used again (a write,
        a search, :meth:`wait_ann`), so a closed store leaves no thread running."""
        self._threads: list[threading.Thread] = []
        """The checksum passes started by opens (joined by :meth:`close` and at exit)."""
        self.ann_damaged: str | None = None
        """Why the saved graph could not be used (checksum, unreadable): it is then
        rebuilt from the vectors, which are the truth, instead of failing every search."""
        self._node_cache: OrderedDict[tuple[int, int], Node] = OrderedDict()
        self._md_cache: dict[tuple[int, int], dict[str, Any]] = {}
        self._meta: dict[str, Any] = {}
        self._state: dict[str, bytes] = {}
        self._state_stamps: dict[str, tuple[int, int, int]] = {}
        """Each cached state blob's file (inode, mtime_ns, size) when it was read or written."""
        self._dirty = False
        self._appended: set[tuple[int, int]] = set()
        """The (device, inode) of each data file the save in progress appended to: the only
        files whose bytes past the committed size a failed save may cut in place
        (:func:`.manifest._discard_uncommitted`)."""
        self._checked_current: tuple[str, int, int] | None = None
        """``CURRENT``'s (manifest name, generation, checksum) once it named this store's
        generation number and was read as the very manifest the store follows (forgotten
        when it follows another: :meth:`_replaced_under_me`)."""
        self._current_seen: tuple[int, ...] | None = None
        """``CURRENT``'s (inode, mtime, size) when :meth:`refresh` last found it pointing at
        this store's generation."""
        self._epoch = 0
        self._committed: dict[str, Any] | None = None  # the manifest on disk we follow
        self._committed_snap: _Snap | None = None  # the snapshot it was opened as
        self._snap = _empty_snap(int(dimension or 0))
        self._dim = dimension
        self._dim_given = dimension
        """The dimension given to the constructor: what an aborted write on disk goes back to
        when no generation is committed (:meth:`_abort`)."""
        self._mem_undo: tuple[_Snap, int | None] | None = None
        """In memory: the snapshot and dimension before the first write since the last
        :meth:`save`, what :meth:`discard_unsaved` goes back to (``None``: nothing unsaved)."""
        self._commits = 0
        if self.path is not None:
            try:  # (``Path.exists`` raises for ENAMETOOLONG, EACCES: not a StoreError)
                os.stat(self.path)
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise StoreError(
                    f"cannot use the index path {str(self.path)[:200]!r}: {exc.strerror or exc}"
                ) from None
            if self.path.exists() and not self.path.is_dir():
                raise StoreError(f"index path {self.path} exists and is not a directory")
            if self.path.is_dir():
                self._make_lock()
            self._open_path()
        self.capabilities = StoreCapabilities(
            hybrid=self._use_lexical, tag_filter=True, prefix_scope=True, concurrent_reads=True
        )
        with _LIVE_LOCK:
            _LIVE.add(self)

    @property
    def _snap(self) -> _Snap:
        """The current snapshot; raises once a background verification found damage, and
        while the index folder is gone from its path (:meth:`check_in_place`'s error) unless
        a write holds the store. After :meth:`close` the generation is mapped again here, at
        the first use."""
        snap = self._snap_v
        while self._released or snap is self._let_go:
            # (a reader that checked the flag before a close in another thread let go of
            # the snapshot, then read it, got the empty one in its place: 0 nodes, no
            # results, not found; helper attacks72. The snapshot is read once, first: the
            # mapped one stays valid for this reader, the empty one is mapped again.)
            self._reopen()
            snap = self._snap_v
        if self._corrupt is not None:
            raise self._corrupt
        if self._gone is not None and not self._writing():
            # (the index folder left its path and nothing stands there: a read raises what
            # a client's read raises (check_in_place), where a direct store's read answered
            # as the empty index -- after refresh(), or the first use after close() --
            # ``get`` [None], ``len`` 0, ``search`` []; helper leftovers73b. A write begins
            # a new index at the path, and its reads see that one.)
            raise self._gone_now()
        if self._committed is None and self.path is not None:
            # (nothing committed here: an index being created by another writer is said so,
            # as a client's read says it (check_in_place), where a direct store's read
            # answered the empty index -- ``len`` 0, ``get`` [None], ``search`` [] -- with no
            # word of it; helper leftovers77, leftovers76's open item. Probed only while
            # nothing is committed: an index with a generation pays one attribute read.)
            creating = self._being_created()
            if creating is not None:
                raise creating
        if snap.mapped:
            snap.check_mapped()  # (a file cut short under the maps: SIGBUS at the read)
        return snap

    @_snap.setter
    def _snap(self, value: _Snap) -> None:
        self._snap_v = value
        self._released = False

    def _reopen(self) -> None:
        """Map the committed generation again after :meth:`close` let it go.

        The generation let go, when ``CURRENT`` still names it, is mapped without checking
        its checksums again: they were checked when it was first opened, its files are
        never rewritten, and before this change a store reused after ``close()`` kept its
        maps unchecked (20 of 28 ms of a reopen at 2,200 nodes were the checks). Any other
        (another process committed meanwhile, the files gone) is opened as :meth:`refresh`
        opens a new generation."""
        with self._wlock:
            if not self._released:
                return
            m = self._committed
            assert self.path is not None
            cur = _read_current(self.path)
            if (self._folder_id is not None and self._folder_now() != self._folder_id) or (
                cur is not None
                and m is not None
                and cur[1] == m["generation"]
                and cur != self._let_go_current
            ):
                # (the path names another folder than the one the generation let go was
                # read from (a symlink flipped, the folder replaced), or one whose CURRENT
                # names another manifest of the same generation number (a folder removed and
                # made again gets its inode back): the let-go manifest, meta and BM25 index
                # described the other folder's files (helper attacks73). That folder is
                # opened as it is, nothing of this one kept, as refresh does.)
                self._follow_path()
                self._released = False
                return
            if m is not None and cur is not None and cur[1] == m["generation"]:
                try:
                    # (own: the BM25 index and a graph built here still match its rows;
                    # unchanged: a file rewritten in place since -- same generation, same
                    # size -- was read unchecked, stale vectors or hashes answering 0 hits
                    # or "not found" silently (helper leftovers64b): now opened as below,
                    # with the checksums)
                    self._open_manifest(m, verify=False, own=True, unchanged=self._file_marks)
                    self._take_kept_lookups()
                    wanted = (
                        self.ann_min_rows is not None and self._snap_v.live >= self.ann_min_rows
                    )
                    if self._ann is None and self._ann_file is not None and wanted:
                        self._ann = self._load_ann_or_rebuild()
                        if self._ann is not None or self.ann_damaged is not None:
                            self._ann_kick()
                    return
                except (IndexCorruptError, OSError):
                    pass  # (the files changed under us: opened from scratch below)
            self._open_path(clean=False)
            if self._snap_v is self._let_go:  # (no index there any more: empty, as opened)
                self._snap_v = _empty_snap(int(self._dim or 0))
            self._released = False

    def _take_kept_lookups(self) -> None:
        """Give the snapshot :meth:`_reopen` just mapped the lookups the let-go one had
        built (see :data:`_KEPT_OVER_CLOSE`), when it is the same generation of the same
        folder.

        Why (helper perf63): a client opened, used and closed again rebuilt them all at its
        first ``find`` (the subtree rows of the hits' parents, URI rows, sorted hash keys:
        ~1 ms of a ~6 ms round at 2,200 nodes; before stop 62 the reopened store kept
        them). They are functions of the generation's rows alone, which are immutable;
        none refers to a mapped file (the maps, and their descriptors, are let go)."""
        kept, self._kept_over_close = self._kept_over_close, None
        snap = self._snap_v
        if kept is None or (kept[0], kept[1], kept[2]) != (snap.gen, snap.epoch, snap.n):
            return
        if snap.n != snap.n_base or kept[3] != self._folder_id or kept[3] != self._folder_now():
            return
        for k, v in kept[4].items():
            snap.cache.setdefault(k, v)

    def _release_files(self) -> None:
        """Let go of the mapped generation (the column files' maps and ``pread``
        descriptors, a graph opened as a map) once everything is saved; called by
        :meth:`close` under the write lock. The BM25 index and a graph built in memory hold
        no file and are kept: the reopen of the same generation (:meth:`_reopen`) uses them.

        Why (helper leftovers62): a closed client kept ``nodes.bin``, ``uris.bin`` and
        ``vectors.bin`` open (four descriptors, the maps) until a garbage collection, since
        the client, its store and the retriever refer to one another: a program opening and
        closing clients of many indexes ran towards the descriptor limit at the collector's
        pace. Dropping the store's references frees them by reference counting, at once; a
        call still running in another thread keeps the snapshot it holds until it returns
        (no descriptor is closed under it). Nothing is lost: the store is saved, and a
        store shared with other clients maps the generation again at their next call."""
        if self.path is None or self._dirty or self._committed is None:
            return
        self._ann_stop()
        if self._ann is not None and not self._ann.mutable:
            self._ann = None  # (a saved graph opened as a map: a descriptor; loaded again)
        self._lex_pre = None  # (the BM25 index, all in memory, is kept for the reopen)
        old = self._snap_v
        kept = {
            k: dict(v) if isinstance(v, dict) else v
            for k, v in list(old.cache.items())
            if k[0] in _KEPT_OVER_CLOSE  # (none refers to a map: see the set)
        }
        self._kept_over_close = (
            (old.gen, old.epoch, old.n, self._folder_id, kept)
            if old.n == old.n_base and self._folder_id is not None
            else None
        )
        self._let_go_current = _read_current(self.path)
        self._let_go = self._snap_v = _empty_snap(int(self._dim or 0))
        self._committed_snap = None
        self._mem_undo = None
        self._node_cache.clear()
        self._md_cache.clear()
        self._current_seen = None
        self._released = True

    def wait_verified(self) -> None:
        """With ``verify="background"``: wait for the checksums of the large files and raise
        :class:`~treehop.errors.IndexCorruptError` if they do not match."""
        t = self._verifier
        if t is not None:
            t.join()
        if self._corrupt is not None:
            raise self._corrupt

    @classmethod
    def shared(cls, path: str | os.PathLike[str], **kwargs: Any) -> EmbeddedStore:
        """The one store of ``path`` in this process (opened on first use).

        Clients of several users on one index must share the writer: two store objects on one
        path would each hold their own in-memory state, and the file lock would make the second
        wait for the first to save. A store found open is first brought up to the generation
        on disk (:meth:`refresh`): a client opened after another process committed sees that
        commit, as a client in a fresh process would. ``strict=True`` raises
        :class:`~treehop.errors.IndexRecoveryError` if the store found open recovered from
        damage (see :attr:`recovery`).
        """
        key = os.path.realpath(path)
        with cls._registry_lock:
            ref = cls._registry.get(key)
            store = ref() if ref is not None else None
            if store is None:
                store = cls(path, **kwargs)
                cls._registry[key] = weakref.ref(store)
                return store
        store.refresh()
        record = store.recovery
        if kwargs.get("strict") and record is not None:
            raise IndexRecoveryError(
                f"{record.reason}; this process opened generation {record.opened} and lost "
                f"{record.lost} (strict=True)",
                record,
            )
        return store

    # ------------------------------------------------------------------ basic info
    @property
    def dimension(self) -> int | None:
        return self._dim

    @property
    def meta(self) -> dict[str, Any]:
        """Free-form index metadata persisted with the index (embedder name, ...).

        After :meth:`close` let the generation go, the generation is mapped again first (as
        :attr:`_snap` does): mapping it reloads this dict from the manifest in place, so an
        entry set on a let-go store (a client opened on a store another client closed,
        storing its embedder's current name) was overwritten at the next call and the
        index kept the old name (lead, stop 62: ``test_usage69``'s former-name test)."""
        if self._released:
            self._reopen()
        return self._meta

    @property
    def lexical(self) -> LexicalIndex | None:
        """The BM25 index beside the vectors (same row numbers), loaded on first use."""
        if self._lex is None and self._use_lexical:
            pre = self._lex_pre
            if pre is not None and pre[1] is not threading.current_thread():
                pre[1].join()  # (the open's read, under way: the rest of it, not all again)
            with self._wlock:
                if self._lex is None:
                    self._lex = self._load_lexical()
        return self._lex

    @property
    def generation(self) -> int:
        """The committed generation this store shows (0: never saved)."""
        return self._snap.gen

    @property
    def commits(self) -> int:
        """How many times this store object's :meth:`save` committed writes (on disk a new
        generation, in memory a new point :meth:`discard_unsaved` goes back to). Why: a
        client's write that fails takes its keyword counts back only where none of its rows
        was committed meanwhile (a directory ingest commits in batches); the generation
        alone does not say so (in memory it stays 0, and a catch-up with another process's
        commit moves it too)."""
        return self._commits

    @property
    def unsaved(self) -> bool:
        """Whether this store holds writes that :meth:`save` has not committed yet (another
        process opening the path would not see them)."""
        return self._dirty

    def __len__(self) -> int:
        return self._snap.live

    def __contains__(self, uri: object) -> bool:
        return isinstance(uri, str) and int(self._snap.lookup([uri])[0]) >= 0

    # ------------------------------------------------------------------ node access
    def _node(self, s: _Snap, r: int) -> Node:
        key = (s.uid, r)
        hit = self._node_cache.get(key)
        if hit is not None:
            return hit
        return self._node_from(s, r, s.node_json(r))

    def _node_from(self, s: _Snap, r: int, blob: bytes) -> Node:
        """Row ``r``'s node parsed from its stored JSON ``blob``, kept in the node cache."""
        key = (s.uid, r)
        try:
            node: Node = _node_json(blob)
        except ValidationError as exc:
            raise IndexCorruptError(f"row {r} of {self.path} holds an invalid node") from exc
        self._node_cache[key] = node
        if len(self._node_cache) > _NODE_CACHE:
            with contextlib.suppress(KeyError):  # a concurrent reader evicted it first
                self._node_cache.popitem(last=False)
        return node

    # ------------------------------------------------------------------ reads
    def get(self, uris: Sequence[str]) -> list[Node | None]:
        s = self._snap
        rows = s.lookup(list(uris))
        return [self._node(s, int(r)) if r >= 0 else None for r in rows]

    def get_vectors(self, uris: Sequence[str]) -> Vector:
        s = self._snap
        rows = s.lookup(list(uris))
        if (rows < 0).any():
            missing = [u for u, r in zip(uris, rows, strict=True) if r < 0]
            raise NotFoundError(f"no node at {missing[0]!r}")
        return s.vectors_of(rows)

    def present_vectors(self, uris: Sequence[str]) -> tuple[IntArray, Vector]:
        """The vectors of the nodes of ``uris`` that exist (one snapshot): their positions in
        ``uris`` and one row each. Unlike :meth:`get_vectors`, a URI that names no node is
        left out, not an error: a question's chunk window (``question_chunk_window``) asks
        for each chunk's next chunk, which past a file's last chunk does not exist, and the
        error's retry (a ``get`` that builds every node, then a second read) doubled a
        find's cost."""
        s = self._snap
        rows = s.lookup(list(uris))
        at = np.flatnonzero(rows >= 0)
        return at, s.vectors_of(rows[at])

    def family_state(self, parent: str, uris: Sequence[str]) -> tuple[int, list[bool]]:
        """How many live rows name ``parent`` as their parent, and which of ``uris`` are
        stored, from one snapshot, no node read: two binary searches over the parent hashes
        and a lookup per URI (O(log n)).

        The count is the length of the parent's hash range: it can only over-count (another
        parent's children on a 64-bit hash collision), never miss a child. Why: appending a
        turn to a long memory session (:func:`treehop.memory.add_messages`) checks that the
        session is the one it last wrote (its turn count and last turn) instead of reading
        every turn; :meth:`child_count` sorts the children's URIs on each new snapshot
        (~100 ms at 100,000 turns), which every write publishes."""
        s = self._snap
        h = np.uint64(_h64(parent))
        pk = s.sorted_keys("parent_hash", s.by_parent)
        count = int(np.searchsorted(pk, h, side="right")) - int(np.searchsorted(pk, h, side="left"))
        rows = s.lookup(list(uris)) if uris else np.zeros(0, np.int64)
        return count, [bool(r >= 0) for r in rows.tolist()]

    def family_since(
        self, parent: str, after: int, fields: Sequence[str]
    ) -> tuple[tuple[int, int, int], list[dict[str, Any]]]:
        """The family of ``parent`` in one snapshot: its stamp (the row numbering's epoch, how
        many live rows name ``parent`` as their parent, the newest of those rows; as
        :meth:`family_state` counts them) and ``fields`` of each child whose row is newer
        than ``after`` (in row order; ``after=-1``: every child), parsed from the stored
        JSON. No other child is read: O(log n) plus the family's row numbers (a numpy pass).

        Why: rows are immutable and appended, so within one epoch a family whose stamp is
        unchanged holds the same nodes (a rewritten child gets a newer row; a deleted one
        lowers the count), and the children written since a stamp are the rows newer than
        it. :func:`treehop.memory.add_messages` keeps a long session's label counts across
        appends this way instead of reading every turn's tags (a hash collision can only
        count another parent's rows in the stamp, never return them)."""
        s = self._snap
        h = np.uint64(_h64(parent))
        pk = s.sorted_keys("parent_hash", s.by_parent)
        rows = s.by_parent[
            int(np.searchsorted(pk, h, "left")) : int(np.searchsorted(pk, h, "right"))
        ]
        stamp = (s.epoch, int(rows.size), int(rows.max()) if rows.size else -1)
        if not fields:
            return stamp, []
        rows = np.sort(rows[rows > after])
        if not rows.size:
            return stamp, []
        own = int(s.lookup([parent])[0])
        if own >= 0:  # (a 64-bit hash collision would mix in another parent's children)
            rows = rows[s.parent_row[rows] == own]
        else:
            keep = [_stored_field(s, int(r), "parent_uri") == parent for r in rows]
            rows = rows[np.array(keep, dtype=bool)]
        out: list[dict[str, Any]] = []
        for blob in s.node_jsons(rows):
            try:
                d = pydantic_core.from_json(blob)
            except ValueError as exc:
                raise IndexCorruptError(f"a child of {parent} in {self.path} is invalid") from exc
            if not isinstance(d, dict):
                raise IndexCorruptError(f"a child of {parent} in {self.path} is not a node")
            out.append({f: d.get(f) for f in fields})
        return stamp, out

    def _children_rows(self, s: _Snap, uri: str) -> IntArray:
        key = ("children", uri)
        hit: IntArray | None = s.cache.get(key)
        if hit is not None:
            return hit
        h = np.uint64(_h64(uri))
        pk = s.sorted_keys("parent_hash", s.by_parent)
        lo = int(np.searchsorted(pk, h, side="left"))
        hi = int(np.searchsorted(pk, h, side="right"))
        rows = s.by_parent[lo:hi]
        if rows.size:
            chunk = s.cols["chunk"][rows]
            # (the URIs in one gather: a decode per child was ~3 ms of a 1M first find)
            keyed = sorted(zip(chunk.tolist(), s.uris_of(rows), rows.tolist(), strict=True))
            # a hash collision would mix in children of another parent: check their parent
            rows = np.array([r for _, _, r in keyed], dtype=np.int64)
            # a 64-bit hash collision would mix in another parent's children: where the parent
            # is stored, its children must link to it
            own = int(s.lookup([uri])[0])
            if own >= 0:
                rows = rows[s.parent_row[rows] == own]
            else:  # the parent is not stored: compare each row's stored parent URI
                keep = [_stored_field(s, int(r), "parent_uri") == uri for r in rows]
                rows = rows[np.array(keep, dtype=bool)]
        if len(s.cache) > 4096:
            for k in [k for k in list(s.cache) if k[0] == "children"]:
                s.cache.pop(k, None)
        s.cache[key] = rows
        return rows

    def children(self, uri: str) -> list[Node]:
        s = self._snap
        return self._nodes_of(s, self._children_rows(s, uri).tolist())

    def children_head(self, uri: str, n: int) -> list[Node]:
        """The first ``n`` of :meth:`children` (same order), only those built.

        Why: the writer re-describes each directory above a write from its first children
        only where the summariser needs no more (:class:`treehop.ingest.summaries.
        BoundedSummarizer`); building every child's node made a write next to 10,000
        siblings parse 10,000 nodes. The children's order still sorts their URIs (kept per
        snapshot)."""
        s = self._snap
        return self._nodes_of(s, self._children_rows(s, uri)[: max(0, n)].tolist())

    def child_uris(self, uri: str) -> list[str]:
        """The URIs of :meth:`children` (same order), no node built: the writer's routing
        vectors (``directory_vectors="centroid"`` / ``"mixed"``) average the children's
        stored vectors and need nothing else of them; building 10,000 siblings' nodes for
        their URIs cost ~100 ms of a file's ``add_resource`` into their folder."""
        s = self._snap
        return s.uris_of(self._children_rows(s, uri))

    def _nodes_of(self, s: _Snap, rows: list[int]) -> list[Node]:
        """The nodes of ``rows`` of snapshot ``s``, in order (cached ones reused)."""
        cache, uid = self._node_cache, s.uid
        out = [cache.get((uid, r)) for r in rows]
        cold = [i for i, node in enumerate(out) if node is None]
        if cold:
            # the uncached children's texts in one checked read (siblings are mostly adjacent
            # rows) instead of a checksum lookup and a ``pread`` each: the first find after
            # an open spent ~15 ms of CPU on them at 1M rows
            crows = [rows[i] for i in cold]
            blobs = s.node_jsons(np.array(crows, np.int64))
            for i, r, blob in zip(cold, crows, blobs, strict=True):
                out[i] = self._node_from(s, r, blob)
        return [node for node in out if node is not None]

    def child_count(self, uri: str) -> int:
        """How many direct children :meth:`children` would return, no node built (the rows
        are kept per snapshot)."""
        return int(self._children_rows(self._snap, uri).size)

    def children_fields(self, uri: str, fields: Sequence[str]) -> list[dict[str, Any]]:
        """``fields`` of each of :meth:`children` (same order), parsed from the stored JSON
        without building nodes (~3x cheaper): a re-add reads the abstracts and tags of every
        child of each folder it re-describes."""
        s = self._snap
        out: list[dict[str, Any]] = []
        for blob in s.node_jsons(self._children_rows(s, uri)):
            try:
                d = pydantic_core.from_json(blob)
            except ValueError as exc:
                raise IndexCorruptError(f"a child of {uri} in {self.path} is invalid") from exc
            if not isinstance(d, dict):
                raise IndexCorruptError(f"a child of {uri} in {self.path} is not a node")
            out.append({f: d.get(f) for f in fields})
        return out

    def iter_nodes(self, subtree: str | None = None) -> Iterator[Node]:
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        for r in rows:
            yield self._node(s, int(r))

    def iter_uris(self, subtree: str | None = None) -> Iterator[str]:
        """The URIs :meth:`iter_nodes` would yield, without parsing any node."""
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        for i in range(0, rows.size, 4096):
            yield from s.uris_of(rows[i : i + 4096])

    def count_nodes(self, subtree: str | None = None, *, leaves_only: bool = False) -> int:
        """How many nodes :meth:`iter_nodes` would yield (leaves only: passages), from the
        row columns, no node parsed: a retriever's "every passage" (``k`` above one
        search's limit) counts its scope on each call, and the walk built up to 1,001 nodes
        per root (the vector store's, every node under its base: ~0.6 s at 20,000)."""
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        if not leaves_only:
            return int(rows.size)
        return int(np.count_nonzero(s.cols["leaf"][rows]))

    def content_hashes(self, subtree: str | None = None) -> dict[str, str]:
        """``{uri: content_hash}`` of the stored nodes (in ``subtree``): what a re-add diffs
        against, read from the stored JSON without building the nodes (~3x cheaper)."""
        s = self._snap
        rows = np.flatnonzero(s.alive[: s.n]) if subtree is None else self._subtree_rows(s, subtree)
        return dict(zip(s.uris_of(rows), map(_content_hash, s.node_jsons(rows)), strict=True))

    # ------------------------------------------------------------------ state blobs
    # State blobs (sessions, settings) change far more often than vectors, so they live outside
    # the generations in ``<path>/state/`` and each is written atomically on its own: adding a
    # chat message must not rewrite the index.
    def _state_in_place(self) -> None:
        """Raise :attr:`_gone` (:meth:`check_in_place`'s error) for a read of a state blob
        while the index folder is gone from its path, unless a write holds the store.

        Why (helper leftovers73c; leftovers73b's open item): state blobs are read by path,
        not from the snapshot, so after the folder moved :meth:`get_state` answered
        ``None`` and :meth:`state_keys` ``[]`` -- a session "not found", a folder's manifest
        absent -- where every other read of the store raised this error."""
        if self._gone is not None and not self._writing():
            raise self._gone_now()

    def get_state(self, key: str) -> bytes | None:
        check_state_key(key)
        with self._wlock:
            if self.path is None:
                return self._state.get(key)
            self._state_in_place()
            # The file's (inode, mtime, size) is checked on every read: a blob is replaced,
            # never rewritten, so an unchanged stamp is an unchanged blob (~2 us). Cached
            # without the check, a blob another process wrote later was never seen here: a
            # session it appended to read as before, and this process's next append wrote
            # that old session back over the other's messages.
            f = self.path / "state" / key
            try:
                st = os.stat(f)
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise StoreError(f"cannot read state {key!r}: {exc.strerror or exc}") from exc
            if not stat.S_ISREG(st.st_mode):
                return None
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
            if key in self._state and self._state_stamps.get(key) == stamp:
                return self._state[key]
            try:
                data = f.read_bytes()
            except OSError as exc:
                raise StoreError(f"cannot read state {key!r}: {exc.strerror or exc}") from exc
            self._state[key] = data
            self._state_stamps[key] = stamp
            return data

    def state_keys(self, prefix: str) -> list[str]:
        """The keys of non-empty state blobs directly under ``prefix/`` (sorted): the
        sessions rebuild their index from these when it is damaged (a deleted session's blob
        is ``b""`` and is not listed)."""
        check_state_key(prefix)
        with self._wlock:
            if self.path is not None:
                self._state_in_place()
            keys = {k for k, v in self._state.items() if k.startswith(prefix + "/") and v}
            gone = {k for k, v in self._state.items() if not v}
            if self.path is not None:
                d = self.path / "state" / prefix
                try:
                    for e in os.scandir(d):
                        if e.is_file() and not e.name.startswith(".") and e.stat().st_size:
                            keys.add(f"{prefix}/{e.name}")
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    raise StoreError(f"cannot list state {prefix!r}: {exc.strerror}") from exc
            return sorted(keys - gone)

    def put_state(self, key: str, value: bytes) -> None:
        check_state_key(key)
        with self._wlock:
            if self.path is not None:
                # (a write: after the folder left its path it makes a new index there, whose
                # reads see it, as an upsert's does; helper leftovers73c)
                self._gone = None
                f = self.path / "state" / key
                tmp = f.with_name(f".{f.name}.tmp-{os.getpid()}")
                try:
                    f.parent.mkdir(parents=True, exist_ok=True)
                    tmp.write_bytes(value)
                    _fsync_file(tmp)
                    # (the stamp of our own file, taken before the rename, which keeps its
                    # inode and mtime: a stat after it could see another process's newer one)
                    st = os.stat(tmp)
                    os.replace(tmp, f)
                except OSError as exc:
                    with contextlib.suppress(OSError):  # (EROFS even for a missing file)
                        tmp.unlink(missing_ok=True)
                    raise StoreError(f"cannot write state {key!r}: {exc.strerror or exc}") from exc
                self._state_stamps[key] = (st.st_ino, st.st_mtime_ns, st.st_size)
            self._state[key] = bytes(value)

    def drop_state(self, key: str) -> None:
        """Remove the state blob ``key`` (its file on disk; nothing where there is none): what
        a removal of the node the blob belongs to does (an ingest target's records, helper
        leftovers76). A reader of the blob then reads ``None``."""
        check_state_key(key)
        with self._wlock:
            if self.path is not None:
                f = self.path / "state" / key
                try:
                    f.unlink(missing_ok=True)
                except OSError as exc:
                    raise StoreError(f"cannot remove state {key!r}: {exc.strerror or exc}") from exc
                self._state_stamps.pop(key, None)
            self._state.pop(key, None)

    DEAD_CREATOR_RECORDS: ClassVar[tuple[str, ...]] = (
        "ingest/",
        "tagger/keywords.bin",
        "tagger/keywords-delta.bin",
        "tagger/keywords.json",
    )
    """State an ingest writes before its first commit (a folder's partial manifest, a
    target's call-tags record, the keyword tagger's statistics): with nothing committed at
    the path they describe nodes that are not stored (:meth:`_clear_dead_records`)."""

    def _clear_dead_records(self, *, holding_writes: bool) -> list[str]:
        """Remove the ingest records a writer that stopped before the index's first commit
        left (:data:`DEAD_CREATOR_RECORDS`), where nothing is committed at the path, no
        ``CURRENT`` names a generation and no other writer holds ``LOCK``; returns the keys
        removed. ``holding_writes``: the caller holds ``locks/writes`` (a client's write, at
        its start, before it writes a record of its own); otherwise that lock is tried
        without waiting and nothing is removed where another holds it.

        Why (helper leftovers77; leftovers76's open item): a creator killed before its first
        commit left its partial manifest (``state/ingest/manifest-*``, written before its
        first node write) and the statistics its tagger counted on disk for good, while the
        next writer cleaned its other files (:meth:`_clear_a_stopped_first_save`). Nothing
        lost: every write of these records is a client's write, which holds ``locks/writes``
        from before its first record to its last commit (and ingests hold it until their
        first commit), so with that lock held here and nothing committed, whoever wrote them
        stopped before committing anything they describe. A record of nodes never stored
        reads as none: the folder is read whole (as its partial manifest said), the
        statistics recounted over nothing are empty. Sessions' state is not touched."""
        if self.path is None or self._committed is not None:
            return []
        try:
            if not (self.path / "state").is_dir():
                return []
        except OSError:
            return []
        own = self._flock is not None and self._flock.held  # (a direct write's: ours)
        # (anything committed: a ``CURRENT``, even one damaged or missing its target, or a
        # manifest, which an open reads where ``CURRENT`` is damaged or gone. Not only a
        # ``CURRENT`` that reads back: a store opened before the index's first commit removed
        # that index's records where its ``CURRENT`` was damaged; helper review78a)
        if _anything_committed(self.path) or (not own and held_elsewhere(self.path / "LOCK")):
            return []
        extra: WriterLock | None = None
        if not holding_writes:
            extra = self._lock_file("writes", anchor=self.path)
            try:
                if not extra.try_acquire():
                    return []
            except StoreError:
                return []
        try:
            with self._wlock:
                if self._committed is not None or _anything_committed(self.path):
                    return []
                found: list[str] = []
                for name in self.DEAD_CREATOR_RECORDS:
                    where = self.path / "state" / name
                    if name.endswith("/"):
                        try:
                            found += [
                                f"{name}{e.name}"
                                for e in os.scandir(where)
                                if e.is_file() and not e.name.startswith(".")
                            ]
                        except OSError:
                            continue
                    elif where.is_file():
                        found.append(name)
                for key in found:
                    with contextlib.suppress(OSError):
                        (self.path / "state" / key).unlink()
                    self._state.pop(key, None)
                    self._state_stamps.pop(key, None)
                return found
        finally:
            if extra is not None:
                extra.release()

    KEY_LOCK_BUCKETS: ClassVar[int] = 256
    """How many lock files :meth:`key_lock` spreads its keys over (two keys in one bucket
    only wait for each other; the index directory holds at most this many lock files)."""

    def key_lock(self, key: str) -> WriterLock | None:
        """An inter-process lock for one ``key`` of this index (``None`` for a store in
        memory): ``locks/key-XX`` in the index directory, held by a ``flock`` like the writer
        lock, so a killed holder never leaves it taken. Not taken here: the caller tries it.

        Why: the writer lock is held only around a write, and an append to a conversation
        reads where its session ends before it writes; two processes appending to one
        session both wrote the same next turn, and one process's messages were lost without
        an error (helper attacks55: 73 of 81 turns stored). A key's lock held from that read
        to the commit serialises the processes without holding up the whole index (another
        conversation's appends, an ingest) while an append embeds its turns."""
        if self.path is None:
            return None
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        bucket = int.from_bytes(digest[:8], "big") % self.KEY_LOCK_BUCKETS
        return self._lock_file(f"key-{bucket:x}")

    def _lock_file(self, name: str, anchor: Path | None = None) -> WriterLock:
        """A lock on ``locks/<name>``. The folder is made when the lock's open finds it
        missing (deleted between writes: made again), not before every open (a ``mkdir``
        that fails with ``EEXIST``: 14 us of a 48 us write-lock hold; helper perf61)."""
        path = self._lock_paths.get(name)
        if path is None:  # (a Path made once per name: 256 key buckets at most, a few others)
            assert self.path is not None
            path = self._lock_paths[name] = self.path / "locks" / name
        return WriterLock(path, self._lock_folder, anchor)

    def _lock_folder(self) -> Path:
        """``locks/`` of this on-disk index, made on first use (the key and named locks'
        files); a folder that cannot be made is a :class:`StoreError`."""
        assert self.path is not None
        folder = self.path / "locks"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the lock folder {folder}: {exc.strerror or exc}"
            ) from None
        return folder

    def writes_lock(self) -> WriterLock | None:
        """The inter-process lock a client's whole write holds, its checks of the place
        included (``locks/writes``; ``None`` for a store in memory), a ``flock`` like the
        writer lock, so a killed holder never leaves it taken. Not taken here: see
        :func:`~treehop.stores._filelock.aholding_store`, which takes it.

        Why not the writer lock (``LOCK``): that one is released by every ``save``, and a
        directory's ingest saves every hundred files; a write's checks must not see another
        process's write land between them and the write's own commits. Why a file of its
        own: other writes of the index that make no such check (the sessions' index, the
        tagger's statistics) take only ``LOCK`` or a named lock, for a moment, and need not
        wait for a whole ingest."""
        if self.path is None:
            return None
        # (the index folder locked too: see WriterLock's ``anchor``)
        lock = self._writes_made = self._lock_file("writes", anchor=self.path)
        return lock

    def named_lock(self, name: str) -> WriterLock | None:
        """An inter-process lock of its own for one of this index's shared records
        (``locks/<name>``, ``name`` lowercase letters; ``None`` for a store in memory), held
        by a ``flock`` like the writer lock. Not taken here.

        Why not a :meth:`key_lock`: those are shared by the keys of a bucket, so a record
        whose lock is taken under the writer lock (the keyword tagger's statistics, during
        a many-part ``add_records``) would share a file with some conversation's lock,
        which is held while *waiting* for the writer lock: a process holding the writer
        lock and waiting for that bucket, and one holding the bucket and waiting for the
        writer lock, wait on each other until ``lock_timeout``. A file of its own, held
        only while nothing else is waited for, is the last lock in every order."""
        if self.path is None:
            return None
        if not (name.isascii() and name.isalpha() and name.islower() and len(name) <= 32):
            raise ValueError(f"not a lock name: {name[:40]!r}")
        return self._lock_file(name)

    # ------------------------------------------------------------------ lifecycle
    def refresh(self) -> bool:
        """Pick up a generation another process committed (only with no unsaved changes).
        Returns whether a newer generation was loaded."""
        if self.path is None:
            return False
        current = self._current_file
        if current is None:  # (a str kept: building the Path was 2/3 of a no-change call)
            current = self._current_file = os.path.join(self.path, "CURRENT")
        try:  # CURRENT is replaced, never rewritten: an unchanged stat is an unchanged pointer
            st = os.stat(current)
            seen: tuple[int, ...] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            seen = None
        if seen is not None and seen == self._current_seen:
            return False  # (a reader process asks before every call: ~5 us instead of ~70)
        with self._wlock:
            if self._dirty:
                return False
            on_disk = _read_current(self.path)
            mine = self._committed["generation"] if self._committed else 0
            if self._folder_id is not None and self._folder_now() != self._folder_id:
                # (the index folder was renamed, replaced or removed since it was read: the
                # store follows its path, without writing there; helper leftovers62c)
                self._follow_path()
                self._current_seen = None
                return True
            if on_disk is None or (
                on_disk[1] in (mine, self._recovered_from) and not self._replaced_under_me(on_disk)
            ):
                self._current_seen = seen
                return False
            self._open_path(clean=False)
            self._current_seen = None  # (read again at the next call: the open may have raced)
            return True

    def check_in_place(self) -> None:
        """Raise :class:`StoreError` when the index folder this store had read a generation
        from left its path (renamed, moved or removed) and nothing stands there now, unless
        a write of this process holds the store (that write makes a new index at the path).
        Clients call it after :meth:`refresh` at the start of every read (``_fresh``).

        Why (helper leftovers72a; attacks83's and leftovers71d's open item): after such a
        move :meth:`refresh` follows the path (leftovers62c: so that the next write makes a
        whole index there, not one appended to files that are elsewhere) and the store holds
        an empty index; every read then answered "nothing stored" -- ``ls`` ``[]``, ``find``
        no hits -- of an index that had only moved. The store's own reads raise the same
        error once it knows (after a :meth:`refresh`, or at the first use after
        :meth:`close`: helper leftovers73b); the reads a client's write makes before it
        takes the lock (the place checks of ``add_resource``) see the empty index they are
        about to write (:func:`~treehop.stores.embedded.writes.reads_for_a_write`).

        Also raises :class:`IndexBeingCreatedError` where nothing is committed at the path
        and another writer holds its lock (an index being created there: helper leftovers76;
        :meth:`_being_created`); a direct read of the store raises it too (leftovers77)."""
        if self._gone is not None and not self._writing():
            raise self._gone_now()
        creating = self._being_created()
        if creating is not None:
            raise creating

    def _being_created(self) -> IndexBeingCreatedError | None:
        """The error a read gets where nothing is committed at the path and another writer
        holds its lock (an index being created there), else ``None``.

        Why: a client opened before the creator's first save committed answered every read
        from an empty index -- ``ls`` [], ``find`` no hits -- with no word of it. Said so,
        as a client that read an index there before is told (leftovers74); the read after
        that save commits reads it. A creator that died leaves the lock free: an empty index
        is read, the next write makes the index (helper leftovers76). A direct store's reads
        (:attr:`_snap`) say it too (helper leftovers77)."""
        if (
            self._committed is None
            and self.path is not None
            and not self._writing()
            and held_elsewhere(self.path / "LOCK")
            and _read_current(self.path) is None
        ):
            return IndexBeingCreatedError(
                f"an index is being created at {str(self.path)[:200]} by another writer and "
                "its first save has not committed yet: nothing can be read from it before "
                "then. Read again once that save has committed"
            )
        return None

    def close(self) -> None:
        """Stop and join every background thread, save pending changes (and the graph as far
        as the worker got: the next open resumes it from there) and release the writer lock.

        The worker stops after the chunk it is adding (a fraction of a second); the graph it
        built so far is saved with the rows, so an ingest that closes before the build ends
        still leaves a graph that the next process searches and extends. The store stays
        usable: the next write, search or :meth:`wait_ann` resumes the graph work."""
        self._paused = True
        self._stop_background()
        if another_write_holds(self):
            # (a write of another client of this shared store, or of this client on another
            # task, is in progress: saving here committed its first half, and its rollback
            # could no longer undo it (a failed write stayed half written); releasing LOCK let
            # another process in between its upsert and its save; helper attacks72. The
            # write commits or rolls back itself; its files stay mapped for it.)
            return
        with self._wlock:
            try:
                self.save()
                self._release_files()
            finally:
                if self._flock is not None:
                    self._flock.release()

    def _stop_background(self) -> None:
        """Stop every thread this store started and wait for them: the graph's worker and
        loader (after their current chunk), the orphans' codes, the checksum passes.

        Why join rather than leave daemon threads: the graph threads call into usearch
        (C++). At interpreter exit a daemon thread that returns from such a call is ended by
        ``pthread_exit``, whose unwinding through C++ frames aborts the whole process
        (SIGABRT, ``terminate called without an active exception``) after the user's work
        succeeded."""
        self._halt.set()
        try:
            me = threading.current_thread()
            for _ in range(3):  # (a loader that was running may have started a worker)
                threads = [self._ann_loader, self._ann_worker, *self._threads]
                for t in threads:
                    if t is not None and t is not me:
                        t.join()
                ann = self._ann
                if ann is not None:
                    ann.join_background()
                if not any(t is not None and t.is_alive() for t in threads):
                    break
            self._threads = [t for t in self._threads if t.is_alive()]
        finally:
            self._halt.clear()

    def _resume(self) -> None:
        """Undo :meth:`close`'s pause: the store is in use again."""
        if self._paused:
            self._paused = False
            self._ann_kick()

    def _at_exit(self) -> None:
        """The interpreter is exiting (see :func:`_stop_all_at_exit`): stop and join every
        background thread, then save the graph as far as it got, when that needs no wait and
        no unsaved rows (a store not closed never saves its writes by itself): the next open
        uses it and resumes the build instead of starting over."""
        self._paused = True
        self._stop_background()
        if self.path is None or self._dirty or not self._ann_unsaved():
            return
        if not self._wlock.acquire(timeout=1.0):
            return  # (a thread left inside a write: nothing to save safely)
        try:
            if self._dirty or not self._ann_unsaved():
                return
            try:
                self._begin_write(timeout=0.0)
            except TreehopError:
                return  # another writer holds the index: it keeps its own graph
            self._dirty = self._ann_unsaved()
            with contextlib.suppress(TreehopError):
                self.save()
        finally:
            if self._flock is not None:
                self._flock.release()
            self._wlock.release()


_KEPT_OVER_CLOSE = frozenset({"keys", "uri_rank", "rows", "subtree", "dir_uris", "children"})
"""The kinds of a snapshot's cache entries :meth:`EmbeddedStore.close` keeps for the reopen
of the same generation: arrays of row numbers or hash keys gathered into arrays of their
own (``("keys", column)``, ``("uri_rank",)``, ``("children", uri)``), slices of the
snapshot's ``by_uri`` (read from the index file into memory, ``("subtree",)``), and dicts
of URIs and rows (``("rows",)``, ``("dir_uris",)``). Not kept: anything holding a view of
a mapped file (``("uri_view",)``), and the per-query score and filter entries."""

_LIVE: weakref.WeakSet[EmbeddedStore] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def _stop_all_at_exit() -> None:
    """Stop and join the background threads of every store still alive when the
    interpreter exits (:meth:`EmbeddedStore._at_exit`), whether or not it was closed: see
    :meth:`EmbeddedStore._stop_background` for the abort this prevents.

    Registered with ``threading``'s exit hooks where there are (CPython 3.9+): they run
    before the interpreter tears down its threads, and this one (registered after
    ``concurrent.futures`` was imported) before the thread pools refuse new work, which the
    graph's save uses. ``atexit`` elsewhere."""
    _ann.set_exiting()  # (a thread still writing after this starts no new graph thread)
    with _LIVE_LOCK:
        stores = list(_LIVE)
        _LIVE.clear()
    for store in stores:
        with contextlib.suppress(TreehopError, OSError, RuntimeError):
            store._at_exit()


_register_exit = getattr(threading, "_register_atexit", None)
if callable(_register_exit):
    _register_exit(_stop_all_at_exit)
else:  # pragma: no cover - not CPython
    atexit.register(_stop_all_at_exit)


def _forget_shared_in_forked_child() -> None:
    """In a child made by ``os.fork``: :meth:`EmbeddedStore.shared` opens a store of its
    own instead of handing out the parent's copy, whose in-process locks a parent thread may
    have held at the fork (a thread the child does not have: the child's first write to
    that index would wait on them for good; helper attacks66)."""
    EmbeddedStore._registry = {}
    EmbeddedStore._registry_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_shared_in_forked_child)
