"""The write paths: ``upsert`` / ``delete`` / ``update_nodes`` / ``update_tags`` build the
next snapshot (:meth:`_Writes._apply`), compaction, and ``save`` / commit of a generation."""

from __future__ import annotations

import bisect
import contextlib
import contextvars
import itertools
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ... import tags as tagmod
from ...errors import (
    IndexBeingCreatedError,
    IndexCorruptError,
    NotFoundError,
    StoreError,
)
from ...lexical import LexicalIndex
from ...models import Node
from .. import _ann
from .._filelock import WriterLock, held_elsewhere
from ..base import (
    Vector,
)
from .attributes import _StoreAttributes
from .column_files import _append_segments, _node_json, _write_arrays
from .layout import (
    _COLUMNS,
    _CTYPE_CODE,
    _LEX_REPLAY,
    F32,
    FORMAT_VERSION,
    BoolArray,
    IntArray,
    U64Array,
    _h64,
    _hashes,
)
from .lexical_sync import _lex_undo, _lex_write
from .manifest import _cleanup, _discard_uncommitted, _read_current, _remove, _write_manifest
from .snapshot import _UIDS, _empty_snap, _Snap, _stored_parent, _Tail, _UriView

_READS_FOR_A_WRITE: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar(
    "treehop_reads_for_a_write", default=()
)
"""The stores whose reads in the current context belong to a write that has not taken the
store's lock yet (:func:`reads_for_a_write`)."""


@contextlib.contextmanager
def reads_for_a_write(store: object) -> Iterator[None]:
    """Within this block (this thread or task, and the threads it starts with a copy of its
    context), reads of ``store`` belong to a write: after the index folder left its path they
    see the empty index the write is about to make there, instead of raising the store's
    "renamed, moved or removed" :class:`StoreError` (:meth:`_Writes._writing`).

    Why (helper leftovers73b; leftovers72a's open item): a client's add reads the store
    before it takes the write lock (``add_resource``'s place check, ``add_memory``'s, the
    records' plan), and those reads must see the index the add then makes at the path;
    every other read raises. Any store may be given (only an embedded one reads it), a
    :class:`~treehop.stores.guarded.GuardedStore` too: the store it wraps is marked (helper
    review73: a client's ``store`` is that wrapper around an ``EmbeddedStore`` subclass that
    overrides a method, and its add after the move raised the error from its place check)."""
    inner = getattr(store, "_inner", None)
    marked = (store,) if inner is None else (store, inner)
    token = _READS_FOR_A_WRITE.set((*_READS_FOR_A_WRITE.get(), *marked))
    try:
        yield
    finally:
        _READS_FOR_A_WRITE.reset(token)


class _Writes(_StoreAttributes):
    """Writes and commits (see :mod:`.writes`)."""

    # ------------------------------------------------------------------ writes
    def _begin_write(self, timeout: float | None = None) -> None:
        """Take the writer lock (once per commit; waiting up to ``timeout`` seconds, by
        default ``lock_timeout``) and catch up with the disk if another writer committed
        since this store last read it. In memory: remember the state to go back to (the
        first write since the last save), as the last commit is on disk."""
        if self.path is None:
            if self._mem_undo is None:
                self._mem_undo = (self._snap, self._dim)
            return
        if self._gone is not None:
            # (a write after the folder left its path makes a new index there, as before
            # leftovers72a: the folder is made again and LOCK with it)
            self._gone = None
            if self._flock is not None and not self._flock.held:
                self._flock = None
        if self._flock is None:
            try:
                self.path.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the index directory {self.path}: {exc}") from exc
            if not self.path.is_dir():
                raise StoreError(f"index path {self.path} is not a directory")
            self._make_lock()
        assert self._flock is not None
        if self._flock.held:
            return
        self._refuse_if_swapped(pending=False)  # (before LOCK is made in another folder)
        self._flock.acquire(self.lock_timeout if timeout is None else timeout)
        try:
            self._refuse_if_swapped(pending=False)
            folder = self._folder_now()
            if self._folder_id is None:
                self._folder_id = folder
            elif folder != self._folder_id and not self._dirty:
                # (the folder was replaced between writes, no client write holding it: this
                # write goes to the folder now at the path, read first -- an empty one too,
                # where this write makes the new index)
                self._follow_path()
                self._gone = None
                self._clear_a_stopped_first_save()
                return
            on_disk = _read_current(self.path)
            mine = self._committed["generation"] if self._committed else 0
            if on_disk is not None and (on_disk[1] != mine or self._replaced_under_me(on_disk)):
                self._open_path(clean=False)
            elif on_disk is None:
                self._clear_a_stopped_first_save()
        except BaseException:
            self._flock.release()
            raise

    def _clear_a_stopped_first_save(self) -> None:
        """Under the writer lock, before the first write to a path where nothing is
        committed: remove what a first save that never committed left there (its data,
        lookup, BM25 and graph files, ``.tmp-*``), as an open that takes the lock does
        (``_open_committed(repair=True)``).

        Why (helper leftovers76; leftovers75's open item): a creator killed in the middle of
        its first save (its files written, its manifest and ``CURRENT`` not) left
        ``data-000001``, ``index-000001.bin`` and ``lexical-000001`` behind, and the next
        writer's first save failed on them ("saving the index ... failed (Directory not
        empty)": its ``lexical-000001`` could not take the place of the dead one's) -- a
        client that opened the path before the kill never cleaned them (no lock of its own
        to clean under). Readers never read them (no manifest names them). Files a manifest
        names are kept (:func:`.manifest._cleanup`). Only a writer cleans them: an open
        cleans where it takes the lock, which a client opened at a new path has not made."""
        assert self.path is not None
        if self._committed is None:
            _cleanup(self.path, keep=2)
            held = self._writes_made
            if held is None or not held.held:
                # (a direct store's write: a client's write cleaned them when it took
                # ``locks/writes``, before its own records; helper leftovers77)
                self._clear_dead_records(holding_writes=False)

    def _folder_now(self) -> tuple[int, int] | None:
        """The ``(st_dev, st_ino)`` of the folder at ``self.path`` now (``None``: none)."""
        assert self.path is not None
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def _folder_swapped(self, pending: bool) -> str | None:
        """How the index folder changed under a write, else ``None``: the path names another
        folder (or none) than the one the client's write holds (``locks/writes``' anchor),
        or, with ``pending`` (rows to commit, built on the generation read), than the one
        that generation was read from (:attr:`_folder_id`).

        Why (helper leftovers62c): the folder renamed or replaced by another while a write
        ran, its save appended the new rows to the data files of the folder now at the path
        (which do not hold the rows they extend) and wrote a manifest and ``CURRENT`` there:
        an index that failed to open (``by_hash is not sorted``, a checksum mismatch)."""
        now = self._folder_now()
        held = self._writes_made.anchor_identity() if self._writes_made is not None else None
        began = held if held is not None else (self._folder_id if pending else None)
        if began is None or now == began:
            return None
        return "removed or renamed" if now is None else "replaced by another folder"

    def _refuse_if_swapped(self, pending: bool) -> None:
        """Raise :class:`StoreError` when :meth:`_folder_swapped` says so: a write to the
        index path is refused and nothing is written there (the caller rolls back)."""
        why = self._folder_swapped(pending)
        if why is not None:
            raise StoreError(
                f"the index folder {str(self.path)[:200]} was {why} while a write to it ran: "
                "refused, nothing was written at that path and the writes since the last "
                "save are dropped (the folder the write began on keeps its last committed "
                "generation, wherever it now is)"
            )

    def _follow_path(self) -> None:
        """Drop the in-memory state and open what is at ``self.path`` now, without writing
        there (no clean-up, no repair): the folder read before is gone from the path."""
        assert self.path is not None
        had = self._committed is not None and self._folder_id is not None
        self._dim = self._dim_given
        self._snap = _empty_snap(int(self._dim or 0))
        self._committed = None
        self._committed_snap = None
        self._ann_stop()
        self._ann = None
        self._ann_file = None
        self._lex = LexicalIndex() if self._use_lexical else None
        self._node_cache.clear()
        self._md_cache.clear()
        if had and os.path.exists(self.path) and not os.path.isdir(self.path):
            # (a file stands at the path now: ``_open_path`` raised "exists and is not a
            # directory" once, after the snapshot above was dropped, and every read after it
            # answered as an empty index -- ``len`` 0, ``get`` [None]; helper attacks87. The
            # file's identity is kept as the folder's, so a folder put there again is
            # followed; a write fails to make a folder over the file, a typed error.)
            self._folder_id = self._folder_now()
            self._gone = StoreError(
                f"the index folder {str(self.path)[:200]} was renamed, moved or removed "
                "since this client read it: a file, not an index folder, stands at that path "
                "now. Open the index where it is now (its folder opens from any path: nothing "
                "in it names its own location)"
            )
            return
        self._open_path(clean=False)
        if had and self._committed is None:
            # (nothing at the path now, where a committed generation was read from: answering
            # every read as an empty index said "nothing stored" of an index that was only
            # moved (attacks83, leftovers71d; helper leftovers72a). check_in_place raises
            # this until a write begins here -- that one makes a new index at the path, as
            # before -- or an index is committed at the path, which is then read. A folder
            # that holds no index (an empty one put there, a ``mkdir`` after the move) is
            # not the index this client read either, and answered as an empty index the
            # same way (helper leftovers73c; attacks86's open item).)
            if self._folder_id is not None and held_elsewhere(self.path / "LOCK"):
                # (another writer holds the folder's lock and has not committed its first
                # save: an index is being made at the path. Said so, typed, rather than "moved
                # or removed"; the read after its commit reads it: _open_path clears _gone.
                # Helper leftovers74; leftovers73c's open item.)
                self._gone = IndexBeingCreatedError(
                    f"an index is being created at {str(self.path)[:200]} by another writer "
                    "(its first save has not committed yet), where the index this client read "
                    "stood before (renamed, moved or removed): read again once that save has "
                    "committed, or open the index where it is now"
                )
                return
            here = (
                "nothing is stored at that path now"
                if self._folder_id is None
                else "the folder at that path now holds no index"
            )
            self._gone = StoreError(
                f"the index folder {str(self.path)[:200]} was renamed, moved or removed "
                f"since this client read it: {here}. Open the "
                "index where it is now (its folder opens from any path: nothing in it names "
                "its own location); a write through this client makes a new, empty index here"
            )

    def _gone_now(self) -> StoreError:
        """:attr:`_gone` as it stands now (the caller checked it is set): an
        :class:`IndexBeingCreatedError` whose creator has since stopped is replaced by the
        error that says so, and what to do.

        Why (helper leftovers75; leftovers74's open item): the lock was probed once, when
        the store followed the moved folder, and nothing at the path changes when the
        creator dies before its first commit (no ``CURRENT``, so :meth:`refresh` sees nothing
        new): every read said "read again once that save has committed" for as long as the
        client lived. The writer lock is an ``flock``, let go by the kernel when its holder
        exits however it exits, so a lock nobody holds, with nothing committed, is provably
        stale. Probed only while the error stands (a read that raises anyway)."""
        gone = self._gone
        assert gone is not None and self.path is not None
        if (
            isinstance(gone, IndexBeingCreatedError)
            and not held_elsewhere(self.path / "LOCK")
            and _read_current(self.path) is None
        ):
            gone = self._gone = StoreError(
                f"an index was being created at {str(self.path)[:200]} by another writer, "
                "which stopped before its first save committed (its writer lock is free and "
                "nothing is committed there: that save will not come), where the index this "
                "client read stood before (renamed, moved or removed). Open the index where "
                "it is now (its folder opens from any path: nothing in it names its own "
                "location); a write through this client makes a new, empty index here"
            )
        return gone

    def _writing(self) -> bool:
        """Whether a write of this process holds this store (its ``locks/writes`` or its
        ``LOCK``), or the reads of the current context belong to a write about to take them
        (:func:`reads_for_a_write`): the reads of a write that follows a folder gone from its
        path see the new, empty index it makes there, rather than :attr:`_gone`."""
        held = self._writes_made
        return (
            (held is not None and held.held)
            or (self._flock is not None and self._flock.held)
            or any(s is self for s in _READS_FOR_A_WRITE.get())
        )

    def begin_write(self) -> bool:
        """Take the writer lock now, before a read that the write depends on, and catch up
        with the disk (held until the next :meth:`save`). Returns whether this call took it
        (``False``: held already, or a store in memory).

        Why: a write takes the lock at its first ``upsert`` / ``update_tags``, after the
        caller read what it writes from; ``retag`` read every node's tags from this
        process's generation and wrote them back over another process's ``set_tags``
        (helper races58). A caller that took the lock and then fails calls
        :meth:`discard_unsaved` and :meth:`save` (which releases it)."""
        if self.path is None:
            return False
        with self._wlock:
            if self._flock is not None and self._flock.held:
                return False
            self._begin_write()
            return True

    def _make_lock(self) -> None:
        assert self.path is not None
        self._flock = WriterLock(self.path / "LOCK")
        # a store dropped without close() must not keep the lock until the process exits
        weakref.finalize(self, self._flock.release)

    def upsert(self, nodes: Sequence[Node], vectors: Vector) -> None:
        vecs = np.asarray(vectors, dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(nodes):
            raise StoreError(f"upsert: {len(nodes)} nodes but vectors of shape {vecs.shape}")
        if not nodes:
            return
        if self._dim is not None and vecs.shape[1] != self._dim:
            raise StoreError(
                f"vector dimension {vecs.shape[1]} does not match the index ({self._dim})"
            )
        if not np.isfinite(vecs).all():
            raise StoreError("upsert: vectors contain NaN or infinite values")
        # Duplicate URIs in one call: the last one wins, as if upserted one after another.
        last = {n.uri: i for i, n in enumerate(nodes)}
        if len(last) != len(nodes):
            keep = sorted(last.values())
            nodes = [nodes[i] for i in keep]
            vecs = vecs[keep]
        blobs = [_node_json(n) for n in nodes]
        with self._wlock:
            self._begin_write()
            if self._dim is None:
                self._dim = int(vecs.shape[1])
                self._snap = _empty_snap(self._dim)
            s = self._snap
            old = s.lookup([n.uri for n in nodes])
            same = np.zeros(len(nodes), dtype=bool)
            hit = np.flatnonzero(old >= 0)
            if hit.size:
                ov = s.vectors_of(old[hit])
                eqv = (ov == vecs[hit]).all(axis=1)
                cand = hit[eqv]
                for j, stored in zip(cand.tolist(), s.node_jsons(old[cand]), strict=True):
                    same[j] = stored == blobs[j]
            if same.all():
                return
            write = np.flatnonzero(~same)
            kill = old[write]
            self._apply(
                kill[kill >= 0],
                [nodes[int(i)] for i in write],
                [blobs[int(i)] for i in write],
                vecs[write],
            )

    def delete(self, uris: Sequence[str]) -> int:
        uris = list(dict.fromkeys(uris))
        with self._wlock:
            rows = self._snap.lookup(uris)
            rows = rows[rows >= 0]
            if not rows.size:
                return 0
            self._begin_write()
            rows = self._snap.lookup(uris)  # the lock may have reloaded newer data
            rows = rows[rows >= 0]
            self._apply(rows, [], [], np.zeros((0, self._dim or 0), np.float32))
            return int(rows.size)

    def update_nodes(self, nodes: Sequence[Node]) -> int:
        """Replace stored nodes by URI keeping their stored vectors; returns how many changed.

        What a re-add does with the nodes whose text is unchanged (their tags or metadata may
        have moved): with ``get_vectors`` + ``upsert`` every vector would be copied out and
        compared back (~2 s per 100k 384-d rows here); this compares only the stored JSON and
        rewrites the rows that differ. Every URI must be stored (checked before any write).
        """
        if not nodes:
            return 0
        last = {n.uri: i for i, n in enumerate(nodes)}
        if len(last) != len(nodes):
            nodes = [nodes[i] for i in sorted(last.values())]
        blobs = [_node_json(n) for n in nodes]
        with self._wlock:
            rows = self._snap.lookup([n.uri for n in nodes])
            if (rows < 0).any():
                raise NotFoundError(f"no node at {nodes[int(np.argmax(rows < 0))].uri!r}")
            differ = _differing(self._snap, rows, blobs)
            if not differ.size:
                return 0
            self._begin_write()
            s = self._snap  # the lock may have reloaded newer data
            rows = s.lookup([nodes[int(i)].uri for i in differ])
            if (rows < 0).any():
                raise NotFoundError("a node was removed by another writer meanwhile")
            self._apply(
                rows,
                [nodes[int(i)] for i in differ],
                [blobs[int(i)] for i in differ],
                s.vectors_of(rows),
            )
            return int(differ.size)

    def update_tags(self, tags_by_uri: Mapping[str, list[str]]) -> None:
        with self._wlock:
            uris = list(tags_by_uri)
            rows = self._snap.lookup(uris)
            found = [(u, int(r)) for u, r in zip(uris, rows, strict=True) if r >= 0]
            if not found:
                return
            s = self._snap
            nodes = [
                self._node(s, r).model_copy(update={"tags": list(tags_by_uri[u])}) for u, r in found
            ]
            vecs = s.vectors_of(np.array([r for _, r in found], dtype=np.int64))
            self.upsert(nodes, vecs)

    def _apply(self, kill: IntArray, nodes: list[Node], blobs: list[bytes], vecs: F32) -> None:
        """Publish the snapshot with rows ``kill`` dead and ``nodes`` appended.

        The steps, each its own function: append the new rows' columns and blobs, mark the
        killed rows dead, merge the new rows into the sorted lookups (by URI hash, by parent
        hash, by URI), link parents and children, merge the tag lookup, publish, then keep the
        BM25 and HNSW indexes in step."""
        s = self._snap
        k = len(nodes)
        n0, n1 = s.n, s.n + k
        new_rows = np.arange(n0, n1, dtype=np.int64)
        live = s.live - int(kill.size) + k
        compacts = self.path is None and n1 - live > max(live, 1000)
        # A BM25 index not loaded yet (an open loads it on first use) is not loaded for a
        # small write: the rows it does not hold are replayed from the node texts when it
        # loads (rows are immutable), so the first write after an open does not wait for the
        # whole index (3.6 s of a 100k index's first write). A large write loads it: its save
        # would rewrite the index anyway, and the postings then overlap the write.
        lex = None
        if not compacts:
            lex = self._lex if self._lex is not None or k < _LEX_REPLAY else self.lexical
        lex_job: Future[None] | None = None
        if lex is not None and k >= _LEX_THREAD_ROWS and not _ann.exiting():
            # The BM25 postings are written beside the steps below (mostly numpy sorts and
            # fresh arrays, which release the GIL): on a second core, ~1-2 s of a 100k-node
            # first ingest overlap the Python steps instead of following them. (In a copy of
            # this context: the ingest write's shared cut of the leaf texts is a variable.)
            pool = ThreadPoolExecutor(1, thread_name_prefix="treehop-lexical-write")
            ctx = contextvars.copy_context()
            lex_job = pool.submit(ctx.run, _lex_write, lex, kill, new_rows, nodes)
            pool.shutdown(wait=False)  # (the one job still runs; the thread ends after it)
            lex = None
        try:
            self._apply_rows(s, kill, nodes, blobs, vecs, new_rows, live)
        except BaseException:
            if lex_job is not None:  # the snapshot was not published: neither is the BM25 side
                futures_wait([lex_job])
                _lex_undo(self.lexical, s, kill, new_rows, self._node)
            raise
        if lex_job is not None:
            lex_job.result()  # (its error, once the snapshot steps are done)
        if compacts:
            self._compact_in_memory()
            return
        if lex is not None:
            _lex_write(lex, kill, new_rows, nodes)
        self._lex_dirty = self._lex_dirty or self._lex is not None
        self._paused = False
        self._ann_kick()  # the graph catches up in the background, not inside the write

    def _apply_rows(
        self,
        s: _Snap,
        kill: IntArray,
        nodes: list[Node],
        blobs: list[bytes],
        vecs: F32,
        new_rows: IntArray,
        live: int,
    ) -> None:
        """:meth:`_apply`'s snapshot steps: the new rows appended, ``kill`` marked dead, the
        sorted lookups merged, parents linked, tags merged, the snapshot published."""
        k = len(nodes)
        n0, n1 = s.n, s.n + k
        if k:
            cols, tail, new_h = _append_rows(s, nodes, blobs, vecs, self._dim or 0)
        else:
            cols, tail, new_h = s.cols, s.tail_vecs, np.zeros(0, np.uint64)
        alive = np.empty(n1, dtype=bool)
        alive[:n0] = s.alive[:n0]
        alive[n0:] = True
        alive[kill] = False
        by_hash = _merge(s.by_hash[alive[s.by_hash]], cols["uri_hash"], new_rows)
        by_parent = _merge(s.by_parent[alive[s.by_parent]], cols["parent_hash"], new_rows)
        tmp = replace(s, n=n1, cols=cols, tail_vecs=tail, alive=alive, by_hash=by_hash, cache={})
        by_uri = _merged_by_uri(tmp, s.by_uri[alive[s.by_uri]], new_rows, nodes)
        parent_row = _linked_parents(tmp, s.parent_row, by_parent, nodes, new_h, n0)
        th, tr = _merged_tags(s, alive, nodes, n0)
        self._snap = replace(
            tmp,
            live=live,
            by_uri=by_uri,
            by_parent=by_parent,
            parent_row=parent_row,
            tag_hash=th,
            tag_row=tr,
            cache={},
        )
        self._dirty = True

    def _compact_in_memory(self) -> None:
        """A store without a directory reclaims dead rows as soon as they outnumber live ones
        (a saved store does it at the next save)."""
        s, old_to_new = self._compacted(self._snap)
        lex = self.lexical
        if lex is not None:
            dead = np.flatnonzero(old_to_new < 0)
            lex.delete(dead[dead < lex.row_bound])
            lex.remap(old_to_new)
        self._ann_stop()
        self._snap = s
        self._ann = None
        self._ann_kick()

    # ------------------------------------------------------------------ persistence
    def save(self) -> None:
        """Commit the writes since the last save as a new generation (see the module doc).

        On failure (disk full, read-only directory, ...) the partial files are discarded, the
        store reverts to the last committed generation (so memory equals disk), the writer
        lock is released, and :class:`~treehop.errors.StoreError` is raised.

        In memory: what is written so far is kept by a later :meth:`discard_unsaved` (the
        commit point of a store without files).
        """
        if self.path is None:
            with self._wlock:
                if self._mem_undo is not None:
                    self._commits += 1
                self._mem_undo = None
            return
        with self._wlock:
            if not self._dirty and self._ann_unsaved():
                # the background worker grew the graph since it was saved: a generation
                # without new rows persists it (under the writer lock, like any save)
                self._begin_write()
                self._dirty = self._ann_unsaved()
            if not self._dirty:
                if self._flock is not None and self._flock.held:
                    self._flock.release()
                return
            assert self._flock is not None and self._flock.held
            try:
                self._refuse_if_swapped(pending=True)
            except StoreError:
                self._abort()  # (in memory only: the path is not this store's folder now)
                raise
            try:
                self._commit()
            except OSError as exc:
                self._abort()
                raise StoreError(
                    f"saving the index at {self.path} failed "
                    f"({exc.strerror or exc}); it was reverted to the last committed state"
                ) from exc
            except BaseException:
                self._abort()
                raise
            self._commits += 1
            self._flock.release()

    def discard_unsaved(self) -> bool:
        """Drop the writes not committed yet: the store goes back to its last committed
        generation (what a failed ``save`` does); in memory, to its state at the last
        :meth:`save` (:meth:`_undo_in_memory`). Returns True (it always can).

        Why public: a caller that writes a batch in several steps before one ``save``
        (``add_records``) undoes the steps already taken when a later one fails. Why in
        memory too: a write failing midway (its embedder, its tagger) kept the part it had
        written there (a directory's first file, a remove without its folder's new summary)
        while on disk it was rolled back (helper leftovers61)."""
        if self.path is None:
            with self._wlock:
                self._undo_in_memory()
            return True
        with self._wlock:
            if self._dirty:
                self._abort()
        return True

    def _undo_in_memory(self) -> None:
        """Go back to the snapshot before the first write since the last save (rows are
        immutable and appended: that snapshot is still whole; the next write overwrites the
        rows past it). The BM25 index drops the rows written since and takes back the rows
        deleted since; the graph, when it grew over rows past the old end, is rebuilt in the
        background. The restored snapshot gets a new ``uid`` and ``epoch``: its row numbers
        past the old end will name other nodes, so per-row caches and family stamps taken
        from the discarded rows must not match. O(rows) numpy plus the changed rows' texts."""
        undo, self._mem_undo = self._mem_undo, None
        if undo is None:
            return
        old, dim = undo
        cur = self._snap_v
        if cur is old:
            return
        renumbered = cur.epoch != old.epoch  # (an in-memory compaction ran meanwhile)
        if renumbered or cur.n > old.n:
            self._ann_stop()  # (the worker must not publish a graph over the discarded rows)
            if self._ann is not None and (renumbered or self._ann.upto > old.n):
                self._ann = None
        lex = self._lex
        if lex is not None and renumbered:
            self._lex = None  # (rebuilt from the node texts on first use)
        elif lex is not None:
            lex.delete(np.arange(old.n, cur.n, dtype=np.int64))
            back = np.flatnonzero(old.alive[: old.n] & ~cur.alive[: old.n])
            if back.size:
                lex.upsert(back, [self._node(old, r).lexical_text() for r in back.tolist()])
        self._node_cache.clear()
        self._md_cache.clear()
        self._snap = replace(old, uid=next(_UIDS), epoch=max(old.epoch, cur.epoch) + 1, cache={})
        self._dim = dim
        self._ann_kick()

    def _abort(self) -> None:
        assert self.path is not None
        # (a folder now at the path that is not this store's is left as it is: its files
        # are not this save's leftovers; helper leftovers62c)
        here = self._folder_swapped(pending=True) is None
        try:
            if here:
                for tmp in self.path.glob(".tmp-*"):
                    _remove(tmp)
            # Everything in memory goes, the dimension too (the committed generation's,
            # read again, else the constructor's): a new index's first write that failed (a
            # LlamaIndex node of another dimension than the embedder's, helper usage70) kept
            # the dimension it had set, and every later write in the process was refused.
            self._follow_path()
            if here:
                _discard_uncommitted(self.path, self._committed, self._appended)
        except (OSError, IndexCorruptError):  # pragma: no cover - the disk vanished too
            pass
        finally:
            # (the set names this save's appends only: a later write that fails or is
            # discarded before its own save appends -- after a rollback its catch-up found
            # another client's generation past the committed sizes -- must not cut those
            # files in place under that client's map, SIGBUS; helper attacks82)
            self._appended = set()
            self._dirty = False
            if self._flock is not None:
                self._flock.release()

    def _commit(self) -> None:
        """Write generation ``gen``: append the new rows' bytes, save the HNSW and BM25
        indexes if they changed, write the lookup arrays, then the manifest and ``CURRENT``."""
        assert self.path is not None
        s = self._snap
        if s.nodes_guard is not None:
            # Checksums are recomputed over whole files below (compaction, too many extents)
            # and the next snapshot carries no guard: every byte must be verified first.
            s.nodes_guard.verify_all()
        path = self.path
        prev = self._committed
        gen = (prev["generation"] if prev else 0) + 1
        dead = s.n - s.live
        compact = prev is None or (dead > s.live and dead > 1000)
        if compact:
            self._ann_stop()  # the worker must not add rows while they are renumbered
            if self._ann is None and self._ann_file is not None:
                self._ann = self._load_ann_or_rebuild()  # its labels are renumbered below
        old_to_new: IntArray | None = None
        if compact:
            s, old_to_new = self._compacted(s)
            self._epoch += 1
            files: dict[str, dict[str, Any]] = {}
        else:
            assert prev is not None
            files = {
                k: {"size": v["size"], "extents": list(v["extents"])}
                for k, v in prev["files"].items()
            }
        self._appended = set()
        _append_segments(
            path / f"data-{self._epoch:06d}",
            files,
            _tail_bytes(s, 0 if compact else s.n_base),
            self._appended,
        )
        ann = self._ann
        if ann is not None and old_to_new is not None:
            # the graph's labels follow the compaction's renumbering (the file is kept); no
            # search maps labels meanwhile
            ann.lock.acquire_write()
            try:
                ann.row = np.where(ann.row >= 0, old_to_new[np.clip(ann.row, 0, None)], -1)
                ann.upto = int(np.count_nonzero(old_to_new[: ann.upto] >= 0)) if ann.upto else 0
                ann.recent.clear()
            finally:
                ann.lock.release_write()
        ann_entry = self._save_ann(gen, ann, s)
        lex_entry = self._save_lexical(gen, s, prev, old_to_new)
        index_name = f"index-{gen:06d}.bin"
        index_meta = _write_arrays(path / index_name, _lookup_arrays(s, ann_entry))
        manifest: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "generation": gen,
            "epoch": self._epoch,
            "dimension": self._dim,
            "rows": s.n,
            "live": s.live,
            "files": files,
            "index": {"file": index_name, **index_meta},
            "lexical": lex_entry,
            "ann": (
                {k: v for k, v in ann_entry.items() if k not in ("row", "orphans", "owner")}
                if ann_entry
                else None
            ),
            "meta": dict(self._meta),
        }
        # (checked again at the commit point: a folder swapped while the files above were
        # written gets no manifest, so it opens as what it held before; helper leftovers62c)
        self._refuse_if_swapped(pending=True)
        _write_manifest(path, manifest)
        self._appended = set()  # (committed: no failed save may cut them; see _abort)
        self._lex_dirty = False
        self._dirty = False
        self._open_manifest(manifest, verify=False, own=True)
        _cleanup(path, keep=2)
        self._ann_kick()

    def _compacted(self, s: _Snap) -> tuple[_Snap, IntArray]:
        """The live rows renumbered densely, all in the tail (the save rewrites them)."""
        live = np.flatnonzero(s.alive[: s.n])
        old_to_new = np.full(s.n, -1, dtype=np.int64)
        old_to_new[live] = np.arange(live.size, dtype=np.int64)
        m = live.size
        cols: dict[str, npt.NDArray[Any]] = {}
        for name, arr in s.cols.items():
            cols[name] = np.array(arr[live], copy=True)
        uris = [u.encode() for u in s.uris_of(live)]
        nodes_b = s.node_jsons(live)
        cols["uri_end"] = np.cumsum([len(u) for u in uris], dtype=np.int64)
        cols["node_end"] = np.cumsum([len(b) for b in nodes_b], dtype=np.int64)
        if m == s.n and not s.n_base:
            tail = s.tail_vecs  # (every row alive, all unsaved: the blocks as they are)
        elif m == s.n:
            rest = s.tail_vecs.parts(s.n - s.n_base)
            if s.vector_rows is None:  # (the whole map read once: checked, under a lease)
                size = s.n_base * 4 * s.dim
                with s.map_read("vectors.bin", s.base_vecs, size, size):
                    tail = _Tail.of(np.concatenate([np.asarray(s.base_vecs), *rest]))
            else:
                base = s.vectors_of(np.arange(s.n_base, dtype=np.int64))
                tail = _Tail.of(np.concatenate([base, *rest]))
        else:
            vecs = s.vectors_of(live) if m else np.zeros((0, s.dim), np.float32)
            tail = _Tail.of(np.ascontiguousarray(vecs))

        def remap(a: IntArray) -> IntArray:
            out = old_to_new[a]
            return out[out >= 0]

        pr = s.parent_row[live]
        parent_row = np.where(pr >= 0, old_to_new[np.clip(pr, 0, None)], -1)
        keep_t = s.alive[s.tag_row]
        new = _Snap(
            gen=s.gen,
            epoch=s.epoch + 1,  # (the rows renumbered)
            n=m,
            n_base=0,
            live=m,
            dim=s.dim,
            cols=cols,
            base_vecs=np.zeros((0, s.dim), np.float32),
            tail_vecs=tail,
            base_uris=np.zeros(0, np.uint8),
            base_nodes=np.zeros(0, np.uint8),
            tail_uris=uris,
            tail_nodes=nodes_b,
            alive=np.ones(m, dtype=bool),
            by_hash=remap(s.by_hash),
            by_uri=remap(s.by_uri),
            by_parent=remap(s.by_parent),
            parent_row=parent_row,
            tag_hash=s.tag_hash[keep_t],
            tag_row=old_to_new[s.tag_row[keep_t]],
        )
        return new, old_to_new


_LEX_THREAD_ROWS = 1024
"""Appended rows from which a write's BM25 postings go to a thread of their own (below it,
starting a thread costs more than the overlap gains)."""


def _append_rows(
    s: _Snap, nodes: Sequence[Node], blobs: Sequence[bytes], vecs: F32, dim: int
) -> tuple[dict[str, npt.NDArray[Any]], _Tail, U64Array]:
    """The columns and tail vectors with ``nodes`` appended after row ``s.n`` (columns grown by
    half when full, so that appends are amortised O(1) per row; vectors in blocks, see
    :class:`_Tail`), and the new rows' URI hashes. The snapshot's own arrays past ``n`` may
    be written: no published snapshot reads them."""
    k = len(nodes)
    n0, n1 = s.n, s.n + k
    cols = s.cols
    cap = next(iter(cols.values())).shape[0]
    if n1 > cap:
        new_cap = max(n1, int(cap * 1.5) + 64)
        grown = {}
        for name, arr in cols.items():
            g = np.empty(new_cap, dtype=arr.dtype)  # (rows past n are written before use)
            g[:n0] = arr[:n0]
            grown[name] = g
        cols = grown
    uri_b = [n.uri.encode() for n in nodes]
    start_u = int(cols["uri_end"][n0 - 1]) if n0 else 0
    start_n = int(cols["node_end"][n0 - 1]) if n0 else 0
    new_h = _hashes([n.uri for n in nodes])
    cols["uri_hash"][n0:n1] = new_h
    # Siblings share a parent: each distinct parent URI is hashed once.
    parents = [n.parent_uri for n in nodes]
    parent_h = {p: _h64(p) if p is not None else 0 for p in dict.fromkeys(parents)}
    cols["parent_hash"][n0:n1] = np.fromiter(map(parent_h.__getitem__, parents), np.uint64, k)
    cols["uri_end"][n0:n1] = start_u + np.cumsum([len(b) for b in uri_b])
    cols["node_end"][n0:n1] = start_n + np.cumsum([len(b) for b in blobs])
    cols["chunk"][n0:n1] = [-1 if n.chunk_index is None else n.chunk_index for n in nodes]
    cols["leaf"][n0:n1] = [n.is_leaf for n in nodes]
    cols["level"][n0:n1] = [n.level for n in nodes]
    cols["ctype"][n0:n1] = [_CTYPE_CODE[n.context_type] for n in nodes]
    t0 = n0 - s.n_base
    tail = s.tail_vecs.with_rows(t0, vecs)
    # an earlier write that failed half-way may have left entries past ``n``
    del s.tail_uris[t0:]
    del s.tail_nodes[t0:]
    s.tail_uris.extend(uri_b)
    s.tail_nodes.extend(blobs)
    return cols, tail, new_h


def _merged_by_uri(
    tmp: _Snap, kept_uri: IntArray, new_rows: IntArray, nodes: Sequence[Node]
) -> IntArray:
    """The URI-sorted rows with the new rows merged in: a full sort when many rows are new,
    else one binary search (on lazily decoded URIs) per new row."""
    k = len(nodes)
    if not k:
        return kept_uri
    new_uris = [n.uri for n in nodes]
    if k * 8 > kept_uri.size:
        rows_all = np.concatenate([kept_uri, new_rows])
        keys = tmp.uris_of(kept_uri) + new_uris
        return rows_all[np.argsort(np.array(keys, dtype=object), kind="stable")]
    order = sorted(range(k), key=new_uris.__getitem__)
    view = _UriView(tmp, kept_uri)
    # The new URIs in order, each searched from the last one's position on; one that sorts
    # before the stored URI there lands at that position with one comparison. A bulk
    # ingest's batch sorts mostly between two neighbours (a new subtree), so nearly every
    # row costs one comparison instead of a binary search of ~20 decoded URIs (the largest
    # part of a 300k-row bulk upsert's time, in Python).
    pos: list[int] = []
    lo, at, there = 0, -1, ""
    size = len(view)
    for i in order:
        x = new_uris[i]
        if lo < size:
            if at != lo:
                at, there = lo, view[lo]
            if x >= there:
                lo = bisect.bisect_right(view, x, lo)
        pos.append(lo)
    return np.insert(kept_uri, pos, new_rows[order])


def _linked_parents(
    tmp: _Snap,
    old_parent_row: IntArray,
    by_parent: IntArray,
    nodes: Sequence[Node],
    new_h: U64Array,
    n0: int,
) -> IntArray:
    """Each row's parent row: new rows find their parent; rows written before their parent
    (or before it was replaced) link to the new row; links to dead rows are cut. Each
    candidate's stored parent URI is compared, so a hash collision cannot link a row to the
    wrong parent."""
    n1 = tmp.n
    alive = tmp.alive
    parent_row = np.full(n1, -1, dtype=np.int64)
    parent_row[:n0] = old_parent_row[:n0]
    linked = parent_row >= 0
    parent_row[linked & ~alive[np.where(linked, parent_row, 0)]] = -1
    if not nodes:
        return parent_row
    has = [i for i, nd in enumerate(nodes) if nd.parent_uri is not None]
    if has:
        # Siblings share a parent: each distinct parent URI is looked up once.
        parents = [nodes[i].parent_uri or "" for i in has]
        distinct = list(dict.fromkeys(parents))
        row_of = dict(zip(distinct, tmp.lookup(distinct).tolist(), strict=True))
        parent_row[n0 + np.array(has, dtype=np.int64)] = np.fromiter(
            map(row_of.__getitem__, parents), np.int64, len(parents)
        )
    pk = tmp.cols["parent_hash"][by_parent]
    lo = np.searchsorted(pk, new_h, side="left")
    hi = np.searchsorted(pk, new_h, side="right")
    for i in np.flatnonzero(hi > lo):
        uri = nodes[int(i)].uri
        cand = by_parent[lo[i] : hi[i]]
        # A row linked before to a row of this URI (the parent this write replaces) keeps
        # the link without its JSON read: the link was checked against the row's stored
        # parent URI when it was made, and a row's JSON never changes. Rewriting a memory
        # session's node on each append read every turn of the session here (~30 ms per
        # 10,000 turns: bench/bench_memory_append.py); now one URI per old parent row.
        was = np.full(cand.size, -1, np.int64)
        older = cand < n0
        was[older] = old_parent_row[cand[older]]
        proven = np.zeros(cand.size, dtype=bool)
        for k in np.unique(was[was >= 0]).tolist():
            if tmp.uri(int(k)) == uri:
                proven |= was == k
        parent_row[cand[proven]] = n0 + int(i)
        for r in cand[~proven].tolist():
            if _stored_parent(tmp, r, nodes, n0) == uri:
                parent_row[r] = n0 + int(i)
    return parent_row


def _merged_tags(
    s: _Snap, alive: BoolArray, nodes: Sequence[Node], n0: int
) -> tuple[U64Array, IntArray]:
    """The (tag-label hash, row) lookup without dead rows, with the new rows' labels merged."""
    keep_t = alive[s.tag_row]
    th, tr = s.tag_hash[keep_t], s.tag_row[keep_t]
    # Tags repeat across a batch's nodes: each distinct tag is labelled, and each distinct
    # label hashed, once; the (row, label) pairs are the nodes' label sets, flattened with
    # C-level passes (a set per node cost more than the rest together). Entries with equal
    # hash and row are equal, so the order of a node's labels does not show.
    per_node = [n.tags for n in nodes]
    flat_tags = list(itertools.chain.from_iterable(per_node))
    if flat_tags:
        tag_lab = dict.fromkeys(flat_tags, 0)
        lab_num: dict[str, int] = {}
        lab_hash: list[int] = []
        for t in tag_lab:
            label = tagmod.label_of(t)
            num = lab_num.get(label)
            if num is None:
                num = lab_num[label] = len(lab_hash)
                lab_hash.append(_h64(label))
            tag_lab[t] = num
        lab = np.fromiter(map(tag_lab.__getitem__, flat_tags), np.int64, len(flat_tags))
        counts = np.fromiter(map(len, per_node), dtype=np.int64, count=len(per_node))
        nr = np.repeat(np.arange(n0, n0 + len(per_node), dtype=np.int64), counts)
        pair = (nr - n0) * len(lab_hash) + lab
        srt = np.sort(pair)  # (a sort: numpy's hashing ``unique`` is many times slower)
        if (srt[1:] == srt[:-1]).any():  # a label twice in a node: once in its set
            _, first = np.unique(pair, return_index=True)
            first.sort()
            lab, nr = lab[first], nr[first]
        nh = np.asarray(lab_hash, dtype=np.uint64)[lab]
        order_t = np.argsort(nh, kind="stable")
        pos_t = np.searchsorted(th, nh[order_t], side="right")
        th = np.insert(th, pos_t, nh[order_t])
        tr = np.insert(tr, pos_t, nr[order_t])
    return th, tr


def _lookup_arrays(s: _Snap, ann_entry: Mapping[str, Any] | None) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a generation's ``index-*.bin`` file."""
    return {
        "alive": s.alive[: s.n],
        "by_hash": s.by_hash,
        "by_uri": s.by_uri,
        "by_parent": s.by_parent,
        "parent_row": s.parent_row[: s.n],
        "tag_hash": s.tag_hash,
        "tag_row": s.tag_row,
        "ann_row": ann_entry["row"] if ann_entry else np.zeros(0, np.int64),
        "ann_orphan": ann_entry["orphans"] if ann_entry else np.zeros(0, np.int64),
        "ann_owner": (
            ann_entry.get("owner", np.zeros(0, np.int64)) if ann_entry else np.zeros(0, np.int64)
        ),
    }


def _differing(s: _Snap, rows: IntArray, blobs: Sequence[bytes]) -> IntArray:
    """Indices ``i`` whose stored node JSON (row ``rows[i]``) is not ``blobs[i]``: lengths are
    compared for all rows at once, bytes only where the lengths agree."""
    ends = s.cols["node_end"]
    lens = ends[rows] - np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
    new_lens = np.fromiter((len(b) for b in blobs), dtype=np.int64, count=len(blobs))
    same_len = np.flatnonzero(lens == new_lens)
    differ = np.ones(len(blobs), dtype=bool)
    for i, stored in zip(same_len.tolist(), s.node_jsons(rows[same_len]), strict=True):
        differ[i] = stored != blobs[i]
    return np.flatnonzero(differ)


def _merge(sorted_rows: IntArray, keys: npt.NDArray[Any], new_rows: IntArray) -> IntArray:
    """``sorted_rows`` (sorted by ``keys[row]``) with ``new_rows`` merged in, in O(n)."""
    if not new_rows.size:
        return sorted_rows
    nk = keys[new_rows]
    order = np.argsort(nk, kind="stable")
    pos = np.searchsorted(keys[sorted_rows], nk[order], side="right")
    return np.insert(sorted_rows, pos, new_rows[order])


def _tail_bytes(s: _Snap, t0: int) -> dict[str, bytes | memoryview]:
    """The bytes to append per file: rows ``t0 .. n`` (all in the tail)."""
    lo, hi = t0 - s.n_base, s.n - s.n_base
    out: dict[str, bytes | memoryview] = {"vectors": s.tail_vecs.tobytes(lo, hi)}
    for name in _COLUMNS:
        out[name] = np.ascontiguousarray(s.cols[name][t0 : s.n]).tobytes()
    out["uris"] = b"".join(s.tail_uris[lo:hi])
    out["nodes"] = b"".join(s.tail_nodes[lo:hi])
    return out
