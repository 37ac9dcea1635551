"""Manifests and generations: ``CURRENT``, reading and writing ``MANIFEST-*.json``,
opening a committed generation (falling back to an older one when it is damaged), cleanup,
rollback, discarding an interrupted save and migrating the legacy (format 1) layout."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import threading
import warnings
import zlib
from collections.abc import Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ..._fdread import read_to_end
from ...errors import (
    IndexCorruptError,
    IndexRecoveryError,
    RecoveryWarning,
    StoreError,
)
from .. import _ann
from ..base import (
    RecoveryRecord,
)
from .ann_worker import _start_warm
from .attributes import _StoreAttributes
from .column_files import (
    _NODES,
    CopiedFile,
    FileMark,
    _BlobGuard,
    _check_structure,
    _fsync_dir,
    _map_of,
    _map_segments,
    _node_json,
    _PFile,
    _read_arrays,
    _VectorRows,
    _verify_segments,
)
from .layout import _APPEND_FILES, _COLUMNS, F32, LEGACY_FORMAT_VERSION, READABLE_FORMATS
from .snapshot import _empty_snap, _Snap, _Tail


class _Generations(_StoreAttributes):
    """Opening a generation from its manifest (see :mod:`.manifest`)."""

    # ------------------------------------------------------------------ opening
    def _open_path(self, clean: bool = True) -> None:
        """Load the newest complete generation at ``self.path`` (or start empty if there is
        no index there at all). ``clean``: remove leftovers of interrupted saves when no other
        writer is active."""
        path = self.path
        assert path is not None
        if path.exists() and not path.is_dir():
            raise StoreError(f"index path {path} exists and is not a directory")
        self._folder_id = self._folder_now()  # (what is read below: the folder saves go to)
        if self._folder_id is None:
            return
        self._gone = None  # (a folder at the path again: what it holds is read)
        lock = self._flock
        if clean and not _anything_committed(path):
            # (nothing committed here: nothing to repair, and the leftovers of a first save
            # that never committed are the next writer's to clean (_clear_a_stopped_first_save).
            # The lock, taken here for the clean-up, made a client reading the path at that
            # moment say "an index is being created" when two opened it together; helper
            # leftovers77, review77's open item.)
            clean = False
        if clean and lock is not None and not lock.held and os.access(path, os.W_OK):
            try:
                got = lock.try_acquire()
            except StoreError:  # a read-only lock file: open read-only
                got = False
            if got:
                try:
                    self._open_committed(path, repair=True)
                finally:
                    if not self._dirty:
                        lock.release()
                return
        for attempt in range(3):
            # Without the lock a writer may commit while this open reads, and its clean-up
            # removes the files of generations two commits old: a failure while CURRENT
            # moved on is that race (the open is retried on the new generation), a failure
            # while it still names the same generation is damage.
            before = _read_current(path)
            try:
                self._open_committed(path, repair=False)
                return
            except IndexCorruptError:
                if attempt == 2 or before is None or _read_current(path) == before:
                    raise

    def _open_committed(self, path: Path, repair: bool) -> None:
        cur = _read_current(path)
        legacy = _legacy_current(path)
        if cur is None and legacy is not None:
            self._migrate_legacy(path, legacy)
            return
        manifest = None
        errors: list[str] = []
        if cur is not None:
            try:
                manifest = _read_manifest(path, cur[0], cur[2])
            except IndexCorruptError as exc:
                errors.append(str(exc))
        if manifest is None:
            # CURRENT is missing or damaged, or names a damaged manifest: the newest manifest
            # that reads back intact is the newest complete generation (a manifest is written
            # only after all of its data is synced). Its data is then verified in full; data
            # that fails is an error, not a reason to fall back silently to older data.
            for name in _manifests(path):
                try:
                    manifest = _read_manifest(path, name, None)
                    break
                except IndexCorruptError as exc:
                    errors.append(str(exc))
            if manifest is None:
                if errors or (path / "CURRENT").exists() or _legacy_current(path) is not None:
                    raise IndexCorruptError(
                        f"no complete generation of the index at {path} could be read: "
                        + "; ".join(errors[:3] or ["CURRENT is damaged"])
                    )
                if repair:
                    _cleanup(path, keep=2)  # leftovers of a first save that never committed
                return
            record = _rollback(path, cur, manifest, errors)
            if record is not None and self.strict:
                raise IndexRecoveryError(
                    f"{record.reason}; a lenient open would use generation {record.opened} "
                    f"and lose {record.lost} (strict=True)",
                    record,
                )
            self._open_manifest(manifest, verify=True, eager=True)
            if record is not None:
                self._recovered(record)
            if repair:
                try:
                    _write_current(path, manifest["generation"])
                except OSError as exc:  # (CURRENT a folder, a full disk: helper attacks68)
                    raise StoreError(
                        f"cannot repair {path / 'CURRENT'} ({exc.strerror or exc}): the index "
                        "was not opened"
                    ) from exc
        else:
            self._verify = _verify_mode(self.verify, manifest)
            self._open_manifest(manifest, verify=self._verify)
        if repair:
            _cleanup(path, keep=2, current=manifest["generation"])

    def _recovered(self, record: RecoveryRecord) -> None:
        """Keep ``record`` (``self.recovery``) and warn: a rollback is never silent."""
        self.recovery = record
        self._recovered_from = record.expected
        warnings.warn(
            f"treehop: {record.reason}; opened generation {record.opened}, lost {record.lost}",
            RecoveryWarning,
            stacklevel=4,
        )

    def _open_manifest(
        self,
        m: dict[str, Any],
        verify: bool | Literal["background"],
        own: bool = False,
        eager: bool = False,
        unchanged: Mapping[str, FileMark] | None = None,
    ) -> None:
        """Map the files of manifest ``m`` and publish them as the current snapshot. ``own``:
        ``m`` was just committed from this store's memory, whose HNSW and BM25 indexes
        already match it (else both are reloaded from disk on first use). ``eager``: verify
        the node texts now too (a generation recovered without ``CURRENT`` must prove whole
        before it is used). ``unchanged``: the files' marks when this store last opened
        ``m`` (an unchecked reopen); files whose marks differ now are an
        :class:`IndexCorruptError` before anything is published."""
        assert self.path is not None
        path = self.path
        if m.get("format_version") not in READABLE_FORMATS:
            raise IndexCorruptError(f"{path}: unsupported format {m.get('format_version')}")
        if not own:
            self._start_ann_precheck(m)
            self._start_lexical_read(m)  # (beside the columns' mapping and checksums)
        g = _map_generation(path, m, verify, eager, self.vector_reads)
        if unchanged is not None and g.marks != unchanged:
            raise IndexCorruptError(f"{path}: files changed since this store last opened them")
        base_vecs = (
            g.maps["vectors"].reshape(g.n, g.dim) if g.n else np.zeros((0, g.dim), np.float32)
        )
        # (the columns are arrays of their own already, read by _map_segments, where readv
        # is; else maps, copied: a write appends to them)
        cols = {
            name: g.maps[name] if g.maps[name].flags.writeable else np.array(g.maps[name])
            for name in _COLUMNS
        }
        self._note_graph_rows(m, g, own)
        _check_structure(path, g.n, g.live, cols, g.maps, g.idx)
        self._snap = _opened_snap(m, g, cols, base_vecs)
        if g.guard is not None:
            self._start_text_check(g.guard)
        self._adopt_manifest(m, g)
        if verify == "background" and g.n:
            self._start_verifier(m, g.data, g.maps)
        self._node_cache.clear()
        self._md_cache.clear()
        self._warm_opened(m, g.live, own)

    def _note_graph_rows(self, m: dict[str, Any], g: _MappedGeneration, own: bool) -> None:
        """Keep the graph's row map as the open read it, for the graph's load (see
        ``_ann_rows_open``), when a graph will be wanted and this is not the store's own
        commit."""
        self._ann_rows_open = None
        wanted = self.ann_min_rows is not None and g.live >= self.ann_min_rows
        if not own and wanted and (m.get("ann") or {}).get("kind") == _ann.KIND:
            self._ann_rows_open = (
                str(m["index"]["file"]),
                np.array(g.idx["ann_row"], dtype=np.int64),
                np.array(g.idx["ann_orphan"], dtype=np.int64),
                np.array(g.idx["ann_owner"], dtype=np.int64),
            )

    def _start_text_check(self, guard: _BlobGuard) -> None:
        """Verify the node texts not yet read in a background pass (joined by ``close``)."""
        t = threading.Thread(
            target=guard.verify_rest,
            args=(self._halt.is_set,),
            name="treehop-verify",
            daemon=True,
        )
        self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()

    def _adopt_manifest(self, m: dict[str, Any], g: _MappedGeneration) -> None:
        """Make ``m`` the committed generation this store follows (meta, epoch, no unsaved
        state) once its snapshot is published."""
        self._dim = g.dim or self._dim
        self._epoch = g.epoch
        self._meta.clear()
        self._meta.update(m.get("meta") or {})
        self._state = {}
        self._state_stamps = {}
        self._dirty = False
        self._committed = m
        self._committed_snap = self._snap_v
        self._file_marks = g.marks
        self._corrupt = None
        self._checked_current = None

    def _replaced_under_me(self, on_disk: tuple[str, int, int]) -> bool:
        """Whether ``CURRENT`` names this store's generation *number* but another manifest:
        another client rolled back past this generation (its manifest lost) and committed
        the number again. Read once per ``CURRENT`` content (name, number, checksum) while
        this store follows one manifest: :meth:`_adopt_manifest` forgets the answer, under
        ``_wlock`` as this runs, whenever the store follows another. Keyed by those values,
        not by the manifest dict's ``id()`` (stop 69: a freed dict's id is given to the next
        one; helper leftovers70b).

        Why (helper leftovers69b): :meth:`refresh` and a write's catch-up compared the
        numbers only, so a client on the lost generation never saw the new one (a reader
        stayed at 3,020 rows where the folder held 21), and its next save appended after the
        lost generation's sizes and committed a generation that fails to open ("by_hash is
        not sorted")."""
        m = self._committed
        if m is None or self.path is None or on_disk[1] != m["generation"]:
            return False
        if self._checked_current == on_disk:
            return False
        try:
            other = _read_manifest(self.path, on_disk[0], on_disk[2])
        except IndexCorruptError:
            return False  # (damaged: the open's own rules apply when it is read for real)
        if _manifest_bytes(other) != _manifest_bytes(m):
            return True
        self._checked_current = on_disk
        return False

    def _warm_opened(self, m: dict[str, Any], live: int, own: bool) -> None:
        """Warm the new snapshot (inline or in a thread, see ``_start_warm``), follow the
        generation's BM25 and graph files, then hand the warm-up's orphans to the graph."""
        self._warm_orphans = None
        opening = None if own else self._ann_rows_open
        warm = None if own else _start_warm(self._snap_v, opening and opening[1:3])
        self._follow_indexes(m, live, own)
        if warm is not None:
            self._warm_orphans = warm()
            ann = self._ann
            if ann is not None and self._warm_orphans is not None:
                ann.adopt_orphans(self._warm_orphans)
                self._warm_orphans = None  # (else kept for a graph that opens later)

    def _follow_indexes(self, m: dict[str, Any], live: int, own: bool) -> None:
        """Point the HNSW and BM25 state at manifest ``m``: kept as they are when ``m`` was
        committed from this store's memory, else dropped (BM25 reloads on first use; the
        HNSW graph opens memory-mapped now, after its checksum, or in a thread with
        ``verify="background"``; a graph lagging the rows is caught up in the background)."""
        ann = m.get("ann") or {}
        usable = ann.get("kind") == _ann.KIND
        self._ann_file = (ann["file"], int(ann["count"]), int(ann["upto"])) if usable else None
        if not own:
            self._ann_stop()
            self._ann = None
            self.ann_damaged = None
            self._lex = None
            if usable and self.ann_min_rows is not None and live >= self.ann_min_rows:
                if self._verify == "background":
                    self._start_ann_load()
                else:
                    self._ann = self._load_ann_or_rebuild()
            # a saved graph lagging the rows (a build that close() or the exit hook saved
            # part-way), or a damaged one, is caught up in the background. (An index with no
            # graph at all waits for a write: reader processes would each build it.)
            if self._ann is not None or self.ann_damaged is not None:
                self._ann_kick()
        self._lex_dirty = False

    def _start_verifier(
        self, m: dict[str, Any], data: Path, maps: Mapping[str, npt.NDArray[Any]]
    ) -> None:
        """Check the large files' checksums and the vectors' finiteness in a thread: the index
        opens at once, and any damage found makes every later call raise."""

        release = ("vectors",) if self._snap.vector_rows is not None else ()

        def run() -> None:
            try:
                _verify_segments(data, m["files"], maps, _LARGE_FILES, release)
            except IndexCorruptError as exc:
                if self._committed is m:
                    self._corrupt = exc
            except (OSError, ValueError) as exc:
                if self._committed is m:
                    self._corrupt = IndexCorruptError(f"cannot verify {data}: {exc}")

        self._verifier = threading.Thread(target=run, name="treehop-verify", daemon=True)
        self._threads = [x for x in self._threads if x.is_alive()] + [self._verifier]
        self._verifier.start()

    def _migrate_legacy(self, path: Path, gen: str) -> None:
        """Read a format-1 index (``gen-NNNNNN/`` with ``nodes.json``) and rewrite it in this
        format under the writer lock; the old generations are removed afterwards."""
        gdir = path / gen
        try:
            meta = json.loads((gdir / "meta.json").read_text())
            vectors = np.load(gdir / "vectors.npy", allow_pickle=False)
            nodes = _NODES.validate_json((gdir / "nodes.json").read_bytes())
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"cannot read index generation {gdir}: {exc}") from exc
        if meta.get("format_version") != LEGACY_FORMAT_VERSION:
            raise IndexCorruptError(f"{gdir}: unsupported format {meta.get('format_version')}")
        if vectors.ndim != 2 or vectors.shape[0] != len(nodes) or meta.get("count") != len(nodes):
            raise IndexCorruptError(f"{gdir}: {len(nodes)} nodes but {vectors.shape[0]} vectors")
        if not np.isfinite(vectors).all():
            raise IndexCorruptError(f"{gdir}: vectors contain NaN or infinite values")
        self._dim = meta.get("dimension") or int(vectors.shape[1])
        self._snap = _empty_snap(int(self._dim or 0))
        self._committed = None
        self._committed_snap = None
        self._meta.clear()
        self._meta.update(meta.get("meta") or {})
        if nodes:
            self._begin_write()
            try:
                blobs = [_node_json(n) for n in nodes]
                self._apply(np.zeros(0, np.int64), list(nodes), blobs, vectors.astype(np.float32))
                self.save()
            except BaseException:
                if self._flock is not None:
                    self._flock.release()
                raise
            for old in path.glob("gen-*"):
                shutil.rmtree(old, ignore_errors=True)


_MANIFEST = re.compile(r"^MANIFEST-(\d{6})\.json\Z")
_LEGACY_GEN = re.compile(r"^gen-\d{6}\Z")
_LARGE_FILES = ("vectors", "nodes")
"""Checked in a background thread with ``verify="background"`` (the rest is always checked)."""
_SMALL_FILES = tuple(f for f in _APPEND_FILES if f not in _LARGE_FILES)
_EAGER_FILES = tuple(f for f in _APPEND_FILES if f != "nodes")
"""Verified before ``open`` returns; the node texts are verified lazily (see _BlobGuard)."""


def _rollback(
    path: Path, cur: tuple[str, int, int] | None, opened: Mapping[str, Any], errors: list[str]
) -> RecoveryRecord | None:
    """What opening manifest ``opened`` after the current one failed loses: the generations
    after it that ``CURRENT`` names or whose manifest exists but does not read back.
    ``None`` when nothing newer is known (``CURRENT`` damaged or missing but the newest
    manifest intact: nothing is lost, ``CURRENT`` is simply rewritten)."""
    gen = int(opened["generation"])
    newer = [int(n[9:15]) for n in _manifests(path) if int(n[9:15]) > gen]
    expected = cur[1] if cur is not None else None
    newest = max([*newer, expected or 0])
    if newest <= gen:
        return None
    lost = f"generation {newest}" if newest == gen + 1 else f"generations {gen + 1}..{newest}"
    why = errors[0] if errors else f"CURRENT names generation {newest}"
    return RecoveryRecord(
        kind="generation",
        path=str(path),
        expected=expected,
        opened=gen,
        lost=f"the commits of {lost} (its manifest is damaged or missing)",
        reason=f"the current manifest of the index at {path} is unreadable ({why})",
    )


def _discard_uncommitted(
    path: Path, m: Mapping[str, Any] | None, appended: Set[tuple[int, int]]
) -> None:
    """After a failed save (under the writer lock): drop what it wrote and did not commit,
    so that nothing half-written stays behind and a full disk gets its space back at once:
    bytes appended after the committed sizes of the data files, and every file no kept
    manifest names (the new generation's index, lexical and graph files, a compaction's new
    data directory). ``m``: the manifest on disk now (the save may have failed after its
    ``CURRENT`` was replaced, and then it is committed).

    Only a file this save appended to (``appended``: its device and inode, see
    :func:`.column_files._append_segments`) is cut in place: bytes past the committed size
    of another file are not known to be this save's. After a rollback they are a lost
    generation's, which another client that opened it still maps, and cutting them killed
    that process with SIGBUS (helper leftovers69b); the next save drops them by a copy."""
    if m is not None:
        data = path / f"data-{int(m['epoch']):06d}"
        for name, info in m["files"].items():
            f = data / f"{name}.bin"
            with contextlib.suppress(OSError):
                st = f.stat()
                if st.st_size > int(info["size"]) and (st.st_dev, st.st_ino) in appended:
                    os.truncate(f, int(info["size"]))
    _cleanup(path, keep=2, current=int(m["generation"]) if m is not None else None)


def _manifest_bytes(m: Mapping[str, Any]) -> bytes:
    return json.dumps(m, sort_keys=True, separators=(",", ":")).encode()


def _write_manifest(path: Path, m: dict[str, Any]) -> None:
    """Write ``MANIFEST-<gen>.json`` (carrying the CRC-32 of its own content) and point
    ``CURRENT`` at it."""
    gen = int(m["generation"])
    body = _manifest_bytes({**m, "crc32": zlib.crc32(_manifest_bytes(m))})
    name = f"MANIFEST-{gen:06d}.json"
    tmp = path / f".tmp-{name}"
    with open(tmp, "wb") as fh:
        fh.write(body)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / name)
    _fsync_dir(path)
    _write_current(path, gen, zlib.crc32(body))


def _write_current(path: Path, gen: int, crc: int | None = None) -> None:
    name = f"MANIFEST-{gen:06d}.json"
    if crc is None:
        crc = zlib.crc32((path / name).read_bytes())
    tmp = path / ".tmp-CURRENT"
    with open(tmp, "w") as fh:
        fh.write(f"{name} {crc:08x}\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path / "CURRENT")
    _fsync_dir(path)


CURRENT_MAX_BYTES = 4096
"""``CURRENT`` holds one line (a manifest's name and checksum): larger is damage."""
MANIFEST_MAX_BYTES = 256 * 1024 * 1024
"""A manifest larger than this is damage (it lists a generation's files, not their data)."""
_SMALL_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_regular(f: Path, limit: int) -> bytes:
    """The bytes of ``f``, a regular file of at most ``limit`` bytes, else ``OSError``.
    Why (helper attacks68): ``CURRENT`` and the manifests were read by ``read_bytes()``:
    one made a FIFO hung every open of the index (for good: no writer comes), one made a
    link to ``/dev/zero`` read until the process ran out of memory. Opened without blocking
    and checked by ``fstat`` before any read, the read bounded."""
    fd = os.open(f, _SMALL_READ)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{f.name} is not a regular file")
        data = read_to_end(fd, limit + 1, 1 << 20)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(f"{f.name} is larger than {limit} bytes")
    return data


def _read_current(path: Path) -> tuple[str, int, int] | None:
    """(manifest name, generation, crc) from ``CURRENT``; ``None`` if missing or damaged."""
    try:
        text = _read_regular(path / "CURRENT", CURRENT_MAX_BYTES).decode(errors="replace")
        text = text.strip()
    except OSError:
        return None
    parts = text.split()
    if len(parts) != 2 or not _MANIFEST.match(parts[0]):
        return None
    try:
        crc = int(parts[1], 16)
    except ValueError:
        return None
    m = _MANIFEST.match(parts[0])
    assert m is not None
    return parts[0], int(m.group(1)), crc


def _legacy_current(path: Path) -> str | None:
    """The format-1 generation to migrate, if this is a format-1 index."""
    if _manifests(path):
        return None
    try:
        text = _read_regular(path / "CURRENT", CURRENT_MAX_BYTES).decode(errors="replace")
        text = text.strip()
    except OSError:
        text = ""
    if _LEGACY_GEN.match(text) and (path / text).is_dir():
        return text
    gens = sorted(p.name for p in path.glob("gen-*") if _LEGACY_GEN.match(p.name))
    for g in reversed(gens):
        if (path / g / "meta.json").is_file():
            return g
    return None


def _read_manifest(path: Path, name: str, crc: int | None) -> dict[str, Any]:
    f = path / name
    try:
        body = _read_regular(f, MANIFEST_MAX_BYTES)
    except OSError as exc:
        raise IndexCorruptError(f"{f}: {exc.strerror or exc}") from exc
    if crc is not None and zlib.crc32(body) != crc:
        raise IndexCorruptError(f"{f}: checksum mismatch with CURRENT")
    try:
        m = json.loads(body)
    except ValueError as exc:
        raise IndexCorruptError(f"{f}: not valid JSON") from exc
    if not isinstance(m, dict) or m.get("generation") != int(name[9:15]):
        raise IndexCorruptError(f"{f}: not a manifest of generation {name[9:15]}")
    own = m.pop("crc32", None)
    if own != zlib.crc32(_manifest_bytes(m)):
        raise IndexCorruptError(f"{f}: checksum mismatch")
    return m


def _anything_committed(path: Path) -> bool:
    """Whether ``path`` holds a ``CURRENT`` (either format) or a manifest: a generation
    an open reads, which a clean-up under the lock may repair."""
    try:
        return os.path.lexists(path / "CURRENT") or bool(_manifests(path))
    except OSError:
        return True


def _manifests(path: Path) -> list[str]:
    """Manifest file names, newest first."""
    names = [p.name for p in path.glob("MANIFEST-*.json") if _MANIFEST.match(p.name)]
    return sorted(names, reverse=True)


def _cleanup(path: Path, keep: int, current: int | None = None) -> None:
    """Remove temporary leftovers, manifests beyond the newest ``keep`` (none newer than the
    current one) and every file no kept manifest references. Only a lock holder calls it."""
    names = _manifests(path)
    if current is not None:
        names = [n for n in names if int(n[9:15]) <= current]
        for extra in _manifests(path):
            if int(extra[9:15]) > current:
                _remove(path / extra)
    kept: list[dict[str, Any]] = []
    for name in names[:keep]:
        try:
            kept.append(_read_manifest(path, name, None))
        except IndexCorruptError:
            continue
    referenced = {f"MANIFEST-{int(m['generation']):06d}.json" for m in kept}
    for m in kept:
        referenced.add(f"data-{int(m['epoch']):06d}")
        referenced.add(m["index"]["file"])
        if m.get("lexical"):
            referenced.add(m["lexical"]["dir"])
        if m.get("ann"):
            referenced.add(m["ann"]["file"])
    if names and not kept:
        return  # manifests exist but none reads back: leave everything for inspection
    for p in path.iterdir():
        name = p.name
        if name.startswith(".tmp-") or (
            name.startswith(("MANIFEST-", "data-", "index-", "lexical-", "ann-", "gen-"))
            and name not in referenced
        ):
            _remove(p)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


@dataclass
class _MappedGeneration:
    """A generation's files as an open mapped (and, per ``verify``, checked) them."""

    n: int
    live: int
    dim: int
    epoch: int
    data: Path
    maps: dict[str, npt.NDArray[Any]]
    nodes_file: _PFile | None
    guard: _BlobGuard | None
    idx: dict[str, npt.NDArray[Any]]
    vector_rows: _VectorRows | None = None
    marks: dict[str, FileMark] = field(default_factory=dict)
    """Each file's identity, size and times as the open's ``stat`` saw them."""


def _map_generation(
    path: Path,
    m: dict[str, Any],
    verify: bool | Literal["background"],
    eager: bool,
    vector_reads: Literal["auto", "map", "read"] = "auto",
) -> _MappedGeneration:
    """Map the column files of manifest ``m``, verify what ``verify`` asks for now, and read
    its lookup arrays; anything missing or malformed is an :class:`IndexCorruptError`.
    ``vector_reads``: the store's setting (``"auto"``: by :data:`READ_VECTORS_BYTES`)."""
    try:
        n, live, dim = int(m["rows"]), int(m["live"]), int(m["dimension"] or 0)
        epoch = int(m["epoch"])
        data = path / f"data-{epoch:06d}"
        marks: dict[str, FileMark] = {}
        by_row = (
            n > 0
            and hasattr(os, "preadv")
            and (
                vector_reads == "read"
                or (vector_reads == "auto" and n * dim * 4 > READ_VECTORS_BYTES)
            )
        )
        # (vectors read by row stay mapped whatever their size: their pages are let go)
        keep = ("vectors",) if by_row else ()
        maps = _map_segments(data, m["files"], n, dim, marks, keep_mapped=keep)
        vector_rows = _VectorRows(data / "vectors.bin", n, dim) if by_row else None
        if verify:
            names = _SMALL_FILES
            if verify is True:
                names = _APPEND_FILES if eager else _EAGER_FILES
            _verify_segments(data, m["files"], maps, names, ("vectors",) if by_row else ())
        nodes_file = _PFile(data / "nodes.bin") if n and hasattr(os, "pread") else None
        guard = (
            _BlobGuard(
                data / "nodes.bin",
                maps["nodes"],
                m["files"]["nodes"]["extents"],
                nodes_file,
            )
            if verify is True and not eager and maps["nodes"].size
            else None
        )
        idx = _read_arrays(path / m["index"]["file"], m["index"], bool(verify), marks)
    except (KeyError, TypeError, ValueError, OSError) as exc:
        raise IndexCorruptError(f"cannot read the index at {path}: {exc}") from exc
    return _MappedGeneration(
        n, live, dim, epoch, data, maps, nodes_file, guard, idx, vector_rows, marks
    )


def _opened_snap(
    m: dict[str, Any], g: _MappedGeneration, cols: dict[str, npt.NDArray[Any]], base_vecs: F32
) -> _Snap:
    """The snapshot of a freshly mapped generation (no unsaved rows yet)."""
    return _Snap(
        gen=int(m["generation"]),
        epoch=g.epoch,
        n=g.n,
        n_base=g.n,
        live=g.live,
        dim=g.dim,
        cols=cols,
        base_vecs=base_vecs,
        tail_vecs=_Tail(g.dim),
        base_uris=g.maps["uris"],
        base_nodes=g.maps["nodes"],
        tail_uris=[],
        tail_nodes=[],
        alive=np.array(g.idx["alive"], dtype=bool),
        by_hash=np.array(g.idx["by_hash"]),
        by_uri=np.array(g.idx["by_uri"]),
        by_parent=np.array(g.idx["by_parent"]),
        parent_row=np.array(g.idx["parent_row"]),
        tag_hash=np.array(g.idx["tag_hash"]),
        tag_row=np.array(g.idx["tag_row"]),
        nodes_guard=g.guard,
        nodes_file=g.nodes_file,
        vector_rows=g.vector_rows,
        mapped=_mapped_files(g),
        data_dir=str(g.data),
    )


def _mapped_files(g: _MappedGeneration) -> tuple[tuple[str, Any], ...]:
    """The (path, ``mmap``) of each file the snapshot of ``g`` reads through its map: the
    URIs, the vectors unless their rows are read by ``pread`` (an exact scan's blocks are
    checked then, :meth:`~.snapshot._Snap.base_block`), the node texts only where they
    are not read by ``pread`` (no ``os.pread``: their reads and
    :class:`~.column_files._BlobGuard`'s checks use the map). ``verify="background"``'s
    pass checks each extent's file itself (``_verify_segments``). A file under 4 MiB is
    read whole at the open, not mapped, and is checked the same way
    (:class:`~.column_files.CopiedFile`)."""
    names = ["uris"]
    if g.vector_rows is None:  # (else rows are read by pread, scans check: Snap.base_block)
        names.append("vectors")
    if g.nodes_file is None:
        names.append("nodes")
    out: list[tuple[str, Any]] = []
    for name in names:
        path = os.path.join(g.data, f"{name}.bin")
        arr = g.maps[name]
        mm = _map_of(arr)
        if mm is not None:
            out.append((path, mm))
        elif arr.nbytes and name in g.marks:  # (a small file read whole: checked the same)
            out.append((path, CopiedFile(path, g.marks[name][0], arr.nbytes)))
    return tuple(out)


READ_VECTORS_BYTES = 512 * 2**20
"""A generation whose saved vectors are larger than this reads them by row with ``pread``
(:class:`~.column_files._VectorRows`) instead of keeping the whole file mapped: at 1M rows
of 384-d the map alone was 1.0x the raw vectors of resident memory after a few finds (the
goal for the whole process is 1.3x). Below it the map stays resident: a gather from it is
~10x cheaper per row than a ``pread`` (100k rows: 153 MB, where a find's overhead counts
more than its memory)."""

AUTO_VERIFY_BYTES = 512 * 2**20
"""``verify="auto"``: a generation whose vectors and graph file are larger than this is
verified in the background (a cold read of 2.3 GB at 1M rows takes 5 s on this machine's
disk, past the 3 s an open may take); smaller ones before the open returns."""


def _verify_mode(
    setting: bool | Literal["background", "auto"], m: Mapping[str, Any]
) -> bool | Literal["background"]:
    """``setting`` with ``"auto"`` resolved for manifest ``m`` (see :data:`AUTO_VERIFY_BYTES`);
    a manifest it cannot read is verified before the open returns (its open reports it)."""
    if setting != "auto":
        return setting
    try:
        vectors = int(m["rows"]) * int(m["dimension"] or 0) * 4
        graph = int((m.get("ann") or {}).get("size") or 0)
    except (KeyError, TypeError, ValueError, AttributeError):
        return True
    return "background" if vectors + graph > AUTO_VERIFY_BYTES else True
