"""What every part of the store may use of the others: the instance attributes
:meth:`EmbeddedStore.__init__ <treehop.stores.embedded.store.EmbeddedStore>` sets, and (for the
type checker only) the methods one part calls on another. Declarations, no behaviour."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ...errors import IndexCorruptError, StoreError
from ...lexical import LexicalIndex
from ...models import Node
from .._ann import AnnIndex, WarmOrphans
from .._filelock import WriterLock
from ..base import RecoveryRecord, StoreCapabilities
from .layout import F32, IntArray
from .snapshot import _Snap


class _StoreAttributes:
    """The state the mixins of :class:`~treehop.stores.embedded.store.EmbeddedStore` share
    (documented where ``__init__`` sets it)."""

    path: Path | None
    strict: bool
    recovery: RecoveryRecord | None
    lock_timeout: float
    verify: bool | Literal["background", "auto"]
    vector_reads: Literal["auto", "map", "read"]
    _verify: bool | Literal["background"]
    ann_min_rows: int | None
    ann_threads: int
    ann_catch_up: int
    ann_damaged: str | None
    capabilities: StoreCapabilities
    _current_file: str | None
    _recovered_from: int | None
    _corrupt: IndexCorruptError | None
    _verifier: threading.Thread | None
    _wlock: threading.RLock
    _flock: WriterLock | None
    _folder_id: tuple[int, int] | None
    _gone: StoreError | None
    _writes_made: WriterLock | None
    _use_lexical: bool
    _lex: LexicalIndex | None
    _lex_dir: Path | None
    _lex_dirty: bool
    _lex_pre: tuple[Mapping[str, Any], threading.Thread, list[LexicalIndex]] | None
    _ann: AnnIndex | None
    _ann_file: tuple[str, int, int] | None
    _ann_pre: tuple[dict[str, Any], threading.Thread, list[Any]] | None
    _ann_rows_open: tuple[str, IntArray, IntArray, IntArray] | None
    _warm_orphans: WarmOrphans | None
    _ann_loader: threading.Thread | None
    _ann_load_lock: threading.Lock
    _ann_worker: threading.Thread | None
    _ann_failed: tuple[threading.Thread, IndexCorruptError] | None
    _ann_token: int
    _halt: threading.Event
    _paused: bool
    _threads: list[threading.Thread]
    _node_cache: OrderedDict[tuple[int, int], Node]
    _md_cache: dict[tuple[int, int], dict[str, Any]]
    _meta: dict[str, Any]
    _state: dict[str, bytes]
    _state_stamps: dict[str, tuple[int, int, int]]
    _dirty: bool
    _checked_current: tuple[str, int, int] | None
    _appended: set[tuple[int, int]]
    _current_seen: tuple[int, ...] | None
    _epoch: int
    _committed: dict[str, Any] | None
    _committed_snap: _Snap | None
    _file_marks: dict[str, tuple[int, int, int, int]]
    _dim: int | None
    _dim_given: int | None
    _mem_undo: tuple[_Snap, int | None] | None
    _commits: int
    _snap_v: _Snap
    _released: bool
    _let_go: _Snap | None
    _snap: _Snap

    if TYPE_CHECKING:
        # Methods one part calls on another (each defined by one mixin or by store.py).
        @property
        def lexical(self) -> LexicalIndex | None: ...
        def _node(self, s: _Snap, r: int) -> Node: ...
        def _begin_write(self, timeout: float | None = None) -> None: ...
        def _apply(
            self, kill: IntArray, nodes: list[Node], blobs: list[bytes], vecs: F32
        ) -> None: ...
        def _children_rows(self, s: _Snap, uri: str) -> IntArray: ...
        def _ann_index(self, wait: bool = True) -> AnnIndex | None: ...
        def _drop_cut_graph(self, ann: AnnIndex, why: str | None = None) -> None: ...
        def _start_ann_load(self) -> None: ...
        def _start_lexical_read(self, m: Mapping[str, Any]) -> None: ...
        def _ann_stop(self) -> None: ...
        def _ann_kick(self, lag: int | None = None) -> None: ...
        def _resume(self) -> None: ...
        def save(self) -> None: ...
        def _folder_now(self) -> tuple[int, int] | None: ...
        def _follow_path(self) -> None: ...
        def _gone_now(self) -> StoreError: ...
        def _writing(self) -> bool: ...
        def _clear_dead_records(self, *, holding_writes: bool) -> list[str]: ...
        def _save_lexical(
            self, gen: int, s: _Snap, prev: dict[str, Any] | None, old_to_new: IntArray | None
        ) -> dict[str, Any] | None: ...
        def _save_ann(self, gen: int, ann: AnnIndex | None, s: _Snap) -> dict[str, Any] | None: ...
        def _ann_unsaved(self) -> bool: ...
        def _start_ann_precheck(self, m: Mapping[str, Any]) -> None: ...
        def _load_ann_or_rebuild(self) -> AnnIndex | None: ...
        def _open_path(self, clean: bool = True) -> None: ...
        def _replaced_under_me(self, on_disk: tuple[str, int, int]) -> bool: ...
        def _open_manifest(
            self,
            m: dict[str, Any],
            verify: bool | Literal["background"],
            own: bool = False,
            eager: bool = False,
        ) -> None: ...
