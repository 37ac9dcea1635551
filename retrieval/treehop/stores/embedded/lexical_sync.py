"""Keeping the BM25 index in step with the rows: the write side of each change, and the
load / replay / save of the BM25 file beside the generations."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import (
    IndexCorruptError,
    StoreError,
)
from ...lexical import LexicalIndex
from ...models import Node
from .. import _ann
from .. import _checksum as _ck
from .attributes import _StoreAttributes
from .column_files import _fsync_dir, _fsync_file
from .layout import _LEX_REPLAY, IntArray
from .manifest import _remove
from .snapshot import _Snap


class _LexicalSync(_StoreAttributes):
    """BM25 load, replay and save (see :mod:`.lexical_sync`)."""

    def _save_lexical(
        self, gen: int, s: _Snap, prev: dict[str, Any] | None, old_to_new: IntArray | None
    ) -> dict[str, Any] | None:
        """The manifest entry of the BM25 index. Its directory is rewritten only when rows
        were renumbered (a compaction) or the rows changed since it was written exceed
        ``_LEX_REPLAY`` (see :func:`_lexical_delta_small`); smaller changes are replayed
        from the node texts when it is loaded."""
        assert self.path is not None
        lex_entry: dict[str, Any] | None = prev.get("lexical") if prev else None
        lex = self._lex
        if (
            lex is None
            and self._use_lexical
            and lex_entry is not None
            and (old_to_new is not None or not _lexical_delta_small(lex_entry, s))
        ):
            # writes left it unloaded, but its rows are renumbered or the rows it lacks are
            # too many to replay at every load: load it (replaying them) and rewrite it
            lex = self.lexical
        if lex is not None and old_to_new is not None:
            lex.remap(old_to_new)
            self._lex_dirty = True
        if lex is None:
            return lex_entry if self._use_lexical else None
        if lex_entry is not None and (
            not self._lex_dirty or (old_to_new is None and _lexical_delta_small(lex_entry, s))
        ):
            # the saved index plus the rows written since (replayed from the node texts at
            # load) is this index: keep the file instead of rewriting every posting
            return lex_entry
        name = f"lexical-{gen:06d}"
        tmp = self.path / f".tmp-{name}"
        _remove(tmp)
        lex.save(tmp)
        sums = {}
        for f in sorted(tmp.iterdir()):
            _fsync_file(f)
            size = f.stat().st_size
            sums[f.name] = _ck.sized(size, _ck.file_digest(f, 0, size))
        _fsync_dir(tmp)
        os.replace(tmp, self.path / name)
        return {"dir": name, "files": sums, "rows": s.n, "documents": len(lex)}

    def _load_lexical(self) -> LexicalIndex:
        """The saved BM25 index brought up to the current snapshot (the committed generation
        and any write made while it was not loaded), or one rebuilt from the node texts when
        it is missing, damaged, or was built by another tokenizer (queries would not match
        its tokens)."""
        c = self._snap if self._committed_snap is not None else None
        entry = self._committed.get("lexical") if self._committed else None
        if entry and self.path is not None and c is not None:
            pre, self._lex_pre = self._lex_pre, None
            try:
                if pre is not None and pre[0] is entry and not pre[1].is_alive():
                    index: LexicalIndex | None = pre[2][0] if pre[2] else None
                else:
                    index = self._read_lexical(self.path, entry)
                if index is not None:
                    self._replay_lexical(index, c, int(entry.get("rows", c.n)))
                    if index.row_bound <= c.n and len(index) == c.live:
                        return index
            except (IndexCorruptError, OSError, StoreError):
                pass
        s = self._snap
        index = LexicalIndex()
        rows = np.flatnonzero(s.alive[: s.n])
        if rows.size:
            index.upsert(rows, [self._node(s, int(r)).lexical_text() for r in rows])
        self._lex_dirty = True
        return index

    def _read_lexical(self, path: Path, entry: Mapping[str, Any]) -> LexicalIndex | None:
        """The BM25 index a manifest entry names, read and checked (its files' sizes, and
        their checksums when ``verify`` is on); ``None`` when a file is missing or differs
        (the caller rebuilds it from the node texts)."""
        d = path / entry["dir"]
        ok = all(
            (d / name).is_file()
            and (d / name).stat().st_size == size
            and (not self._verify or _ck.file_digest(d / name, 0, size, algo) == value)
            for name, (size, value, algo) in (
                (k, _ck.parse_sized(v)) for k, v in entry["files"].items()
            )
        )
        return LexicalIndex.load(d) if ok else None

    def _start_lexical_read(self, m: Mapping[str, Any]) -> None:
        """Read the saved BM25 index of manifest ``m`` in a thread, as the open returns.

        Why: the index loads on the first hybrid search (the default ``find()``), and
        reading it (0.1-0.9 s at 100k rows: the files' checksums, ``LexicalIndex.load``'s
        checks) made that first find cost tens of times a later one. The thread reads the
        files without the write lock, so a first write never waits for it (a write below
        ``_LEX_REPLAY`` rows does not need the index); the first search that needs the
        index waits only for what is left of the read, then replays the rows written since
        (:meth:`_load_lexical`). A store that never searches with text pays one read in
        the background."""
        entry = m.get("lexical")
        path = self.path
        if not entry or path is None or not self._use_lexical or _ann.exiting():
            self._lex_pre = None
            return
        out: list[LexicalIndex] = []

        def run() -> None:
            if self._halt.is_set():
                return
            with contextlib.suppress(IndexCorruptError, OSError, StoreError, ValueError):
                index = self._read_lexical(path, entry)
                if index is not None:
                    out.append(index)

        t = threading.Thread(target=run, name="treehop-lexical-read", daemon=True)
        self._lex_pre = (entry, t, out)
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _replay_lexical(self, index: LexicalIndex, c: _Snap, base_rows: int) -> None:
        """Bring a BM25 index saved when the store had ``base_rows`` rows up to snapshot
        ``c``: rows are immutable, so the rows it holds that are dead now were deleted since,
        and the live rows from ``base_rows`` on were written since."""
        if base_rows > c.n:
            raise IndexCorruptError(f"the lexical index of {self.path} is ahead of its rows")
        old = np.arange(base_rows, dtype=np.int64)
        gone = old[index.contains(old) & ~c.alive[:base_rows]]
        if gone.size:
            index.delete(gone)
        new = np.flatnonzero(c.alive[base_rows : c.n]) + base_rows
        if new.size:
            index.upsert(new, [self._node(c, int(r)).lexical_text() for r in new])


def _lex_write(lex: LexicalIndex, kill: IntArray, new_rows: IntArray, nodes: list[Node]) -> None:
    """The BM25 side of a write: rows ``kill`` out, ``nodes`` in at ``new_rows``."""
    if kill.size:
        lex.delete(kill)
    if nodes:
        lex.upsert(new_rows, [n.lexical_text() for n in nodes])


def _lex_undo(
    lex: LexicalIndex | None,
    s: _Snap,
    kill: IntArray,
    new_rows: IntArray,
    node_of: Callable[[_Snap, int], Node],
) -> None:
    """Take back a :func:`_lex_write` whose snapshot was not published (its steps raised):
    the new rows' documents out, the rows it removed (still alive in ``s``) back in, so
    the BM25 index matches the snapshot readers keep seeing."""
    if lex is None:
        return
    lex.delete(new_rows)
    if kill.size:
        rows = kill[kill < s.n]
        lex.upsert(rows, [node_of(s, r).lexical_text() for r in rows.tolist()])


def _lexical_delta_small(entry: Mapping[str, Any], s: _Snap) -> bool:
    """Whether the rows written or deleted since the saved BM25 index ``entry`` are few
    enough (``_LEX_REPLAY``) to be replayed at load instead of rewriting the index."""
    if "rows" not in entry or "documents" not in entry:
        return False
    base = int(entry["rows"])
    if base > s.n:
        return False
    deleted = int(entry["documents"]) - int(np.count_nonzero(s.alive[:base]))
    written = int(np.count_nonzero(s.alive[base : s.n]))
    return deleted + written <= max(_LEX_REPLAY, s.live // 16)
