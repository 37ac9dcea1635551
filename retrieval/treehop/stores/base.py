"""The vector-store protocol every engine implements (embedded numpy, VikingDB, Milvus, ...).

The retriever needs only a few scoped operations, all expressible on any engine that can filter
on exact-match and list fields:

- *children of X*: ``parent_uri == X``
- *inside subtree X*: ``X in ancestors`` (or a URI-prefix slice where the engine keeps URIs sorted)
- *nodes carrying tag T*: any-of match on the ``tag_labels`` list field
- context type, level, leaf/non-leaf: exact-match fields

A store declares what it can do natively in :class:`StoreCapabilities`; the retriever never
special-cases an engine by name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

from .. import tags as tagmod
from ..errors import InvalidQueryError, StoreError
from ..filters import MetadataFilter, TagFilter
from ..models import ContextType, Node
from ..uri import within_any
from ..validation import integral, real, shown_value

Vector = npt.NDArray[np.float32]


@dataclass(frozen=True)
class StoreCapabilities:
    """What an engine does natively."""

    hybrid: bool = False
    """Lexical (BM25) scoring combined with dense scores via ``dense_weight``."""
    tag_filter: bool = True
    """Filtering on tag labels server-side (else the retriever filters after fetching)."""
    prefix_scope: bool = False
    """Subtree scoping by URI prefix (else by the ``ancestors`` list field)."""
    remote: bool = False
    """Calls do network I/O: the async retriever runs them in a worker thread."""
    concurrent_reads: bool = False
    """``search`` may run in several threads at once and releases the GIL for its heavy part:
    the async retriever then runs the global step in a worker thread, so that concurrent
    queries on one event loop overlap with it."""


@dataclass(frozen=True)
class RecoveryRecord:
    """What a lenient open recovered from, kept on the store (``recovery``) and the client
    (``Treehop.recovery``) and announced by a :class:`~treehop.errors.RecoveryWarning`: a
    silent rollback would lose commits or sessions without anyone noticing.

    ``kind``: ``"generation"`` (the index opened at an older generation than ``CURRENT``
    named, or than a newer damaged manifest) or ``"sessions"`` (the sessions index was
    missing, empty or damaged and was rebuilt from the session files). ``expected`` /
    ``opened``: the generation ``CURRENT`` named (``None`` if unreadable) and the one opened;
    for sessions, how many sessions the damaged index listed (``None``: unreadable) and how
    many were recovered. ``lost``: what is gone, in words (``""``: nothing). ``reason``: the
    damage found.
    """

    kind: str
    path: str
    expected: int | None
    opened: int | None
    lost: str
    reason: str


@runtime_checkable
class IndexMetaStore(Protocol):
    """A store that persists a small metadata dict with its index (the embedded store, Milvus,
    VikingDB): the client records the embedder's name there and refuses to mix vector spaces."""

    @property
    def meta(self) -> dict[str, Any]: ...


@runtime_checkable
class IncrementalStore(Protocol):
    """What a store offers so that a re-add touches only what changed (the embedded store).

    Each has a generic fallback through :class:`VectorStore` (``iter_nodes``, ``get_vectors``
    + ``upsert``); these skip parsing every node, or copying vectors out and back.
    """

    def iter_uris(self, subtree: str | None = None) -> Iterator[str]: ...

    def content_hashes(self, subtree: str | None = None) -> dict[str, str]: ...

    def update_nodes(self, nodes: Sequence[Node]) -> int: ...


@runtime_checkable
class CountingStore(Protocol):
    """A store that counts a subtree's nodes without building them (the embedded store).

    The generic fallback walks :meth:`VectorStore.iter_nodes`, parsing each node; a
    retriever asked for "every passage" counts its scope on each call with it."""

    def count_nodes(self, subtree: str | None = None, *, leaves_only: bool = False) -> int: ...


_D = TypeVar("_D")
_new_object = object.__new__


def build_frozen(cls: type[_D], /, **values: Any) -> _D:
    """``cls(**values)`` for a frozen dataclass without ``__post_init__`` or slots, every
    field given: the fields set in one dict update, where the generated ``__init__`` of a
    frozen dataclass sets each through ``object.__setattr__`` (~0.4 us a field here; a find
    builds ~15 such objects: its hits, their columns, its scopes). The same object: equal,
    hashing and printing the same (``tests/test_columnar_search.py`` checks each class it
    is used for)."""
    obj = _new_object(cls)
    obj.__dict__.update(values)
    return obj


@dataclass(frozen=True)
class Scope:
    """Which nodes a search may return.

    ``subtrees``: nodes inside any of these URIs (inclusive). ``parent_uri``: only direct
    children of this URI. ``traversal``: when a tag/metadata filter is set, also return
    non-leaf nodes that do not match themselves but contain a match (flagged by
    :attr:`ScoredNode.matches` = False), so that the descent can reach matching leaves.
    """

    subtrees: tuple[str, ...] = ()
    parent_uri: str | None = None
    context_types: tuple[ContextType, ...] = ()
    levels: tuple[int, ...] = ()
    leaves_only: bool = False
    non_leaves_only: bool = False
    tags: TagFilter = field(default_factory=TagFilter)
    metadata: MetadataFilter | None = None
    exclude_uris: frozenset[str] = frozenset()
    traversal: bool = False

    @property
    def filtered(self) -> bool:
        return bool(self.tags) or self.metadata is not None

    def replaced(self, **changes: Any) -> Scope:
        """``dataclasses.replace(self, **changes)``, built with :func:`build_frozen` (the
        retriever narrows its query's scope for each search). An unknown field is a
        ``TypeError``, as there."""
        if not changes.keys() <= _SCOPE_FIELDS:
            raise TypeError(f"Scope has no field(s) {sorted(changes.keys() - _SCOPE_FIELDS)}")
        return build_frozen(Scope, **{**self.__dict__, **changes})

    def admits(self, node: Node) -> bool:
        """The reference predicate: would a search with this scope return ``node`` as a match?

        Every store must return exactly the nodes this admits (engines evaluate it natively —
        masks, server expressions — and the conformance suite checks them against it). With
        ``traversal``, a store also returns non-matching directories that contain a match; those
        are flagged ``matches=False`` and are not admitted here.
        """
        return (
            self.admits_structure(node)
            and node.uri not in self.exclude_uris
            and node_matches_filter(node, self.tags, self.metadata)
        )

    def admits_structure(self, node: Node) -> bool:
        """The structure, type, level and leaf parts of the scope (no filter, no exclusions)."""
        if self.parent_uri is not None:
            if node.parent_uri != self.parent_uri:
                return False
        elif self.subtrees and not within_any(node.uri, self.subtrees):
            return False
        if self.context_types and node.context_type not in self.context_types:
            return False
        if self.levels and node.level not in self.levels:
            return False
        if self.leaves_only and not node.is_leaf:
            return False
        return not (self.non_leaves_only and node.is_leaf)


def node_matches_filter(node: Node, tags: TagFilter, metadata: MetadataFilter | None) -> bool:
    """The filter part of a scope on one node: tags (any-of / all-of labels) and metadata DSL."""
    if tags:
        labels = tagmod.labels(node.tags)
        if tags.any_of and not labels.intersection(tags.any_of):
            return False
        if any(lab not in labels for lab in tags.all_of):
            return False
    return metadata is None or metadata.matches(node.metadata, node.uri)


_SCOPE_FIELDS = frozenset(Scope.__dataclass_fields__)


@dataclass(frozen=True)
class ScoredNode:
    """A search hit: the node, its combined score, and its dense score."""

    node: Node
    score: float
    vector_score: float
    lexical_score: float | None = None
    matches: bool = True


@dataclass(frozen=True)
class SiblingWindow:
    """A leaf's nearest siblings in natural name order, each scored as ``search`` scores it:
    what a store's optional ``sibling_window`` answers (the embedded store's
    :meth:`~treehop.stores.embedded.search_paths._SearchPaths.sibling_window`).

    Why: a memory turn hit's slot carries the turns around it (:mod:`treehop.memory_context`);
    a store that can read a session's turns by their order gives those few, where a search of
    the session scores and returns all of it (10,000 turn nodes a find on a long session)."""

    before: list[ScoredNode]
    """The admitted siblings before the leaf, nearest first."""
    after: list[ScoredNode]
    """The admitted siblings after the leaf, nearest first."""
    first: bool
    """No admitted sibling lies before the last of :attr:`before` (the family's start)."""
    last: bool
    """No admitted sibling lies after the last of :attr:`after` (the family's end)."""


@dataclass(frozen=True)
class HitColumns:
    """Search hits as columns, best first: what the retriever's internal searches read.

    Why: a find asks the store for several small result sets it only scores (the tree
    context's pool, the families of its parents, the parents themselves): building a pydantic
    :class:`~treehop.models.Node` and a :class:`ScoredNode` for each of ~100 candidates cost
    more than the searches. The columns carry what scoring reads (URI, parent, chunk index,
    scores, the filter flag); :meth:`hits` builds full hits only for the candidates that
    are kept. ``load`` returns the nodes at the given positions (the embedded store decodes
    them on demand; :meth:`from_hits` wraps nodes a store already built).
    """

    uris: list[str]
    parent_uris: list[str | None]
    chunk_indexes: list[int | None]
    leaves: list[bool]
    scores: list[float]
    vector_scores: list[float]
    lexical_scores: list[float | None]
    matches: list[bool]
    load: Callable[[Sequence[int]], list[Node]]
    exact: bool = False
    """Every node in scope was scored (no approximate index): the answer is a prefix of the
    scope's exact ranking, so a search of a narrower scope (leaves only) is a subsequence
    of it. Unknown (``False``) for a store's own hits."""
    parent_codes: npt.NDArray[np.int64] | None = None
    """Optional: each hit's parent as an integer, equal exactly where ``parent_uris`` are
    equal and every hit has a parent URI (``None`` otherwise, or where a store does not say).
    The tree context groups hundreds of family members per find by parent: on these codes
    it does that in numpy instead of hashing a URI per member."""
    heading_codes: (
        Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]]
        | None
    ) = None
    """Optional: the heading paths of the hits at the given positions
    (:func:`~treehop.tree_scoring.section_of` of their nodes) as integer codes into a table
    (the second value; code -1: no heading path), without building a node per hit. Equal
    paths usually share a code; two codes may still name equal paths (the table is
    compared where codes differ). ``None``: read the paths from the nodes."""

    def __len__(self) -> int:
        return len(self.uris)

    def hits(self, positions: Sequence[int]) -> list[ScoredNode]:
        """The hits at ``positions`` as :class:`ScoredNode` objects (their nodes built now)."""
        nodes = self.load(positions)
        return [
            build_frozen(
                ScoredNode,
                node=node,
                score=self.scores[i],
                vector_score=self.vector_scores[i],
                lexical_score=self.lexical_scores[i],
                matches=self.matches[i],
            )
            for i, node in zip(positions, nodes, strict=True)
        ]

    @classmethod
    def from_hits(cls, hits: Sequence[ScoredNode]) -> HitColumns:
        """Columns of hits a store returned as objects (the default for every store)."""
        nodes = [h.node for h in hits]
        return cls(
            uris=[n.uri for n in nodes],
            parent_uris=[n.parent_uri for n in nodes],
            chunk_indexes=[n.chunk_index for n in nodes],
            leaves=[n.is_leaf for n in nodes],
            scores=[h.score for h in hits],
            vector_scores=[h.vector_score for h in hits],
            lexical_scores=[h.lexical_score for h in hits],
            matches=[h.matches for h in hits],
            load=lambda positions: [nodes[i] for i in positions],
        )


@dataclass(frozen=True)
class HitArrays:
    """Search hits as arrays, best first: the tree context's family search on a store that
    can answer it so (the embedded store's ``search_arrays``; an optional capability).

    Why: a family search returns hundreds of rows per find (every chunk of every file the
    pool touches) whose scores only inform their few ranked siblings; as
    :class:`HitColumns` each row became half a dozen Python values (its URI decoded, its
    parent's, its chunk index, its scores). Here the rows stay numpy arrays, parents as
    integer codes, and :meth:`columns` builds :class:`HitColumns` for the few positions
    that become results (the same values :class:`HitColumns` of the whole search would
    hold at those positions)."""

    leaves: npt.NDArray[np.bool_]
    scores: npt.NDArray[np.floating[Any]]
    chunks: npt.NDArray[np.int64]
    """Each hit's chunk index, -1 where it is not a chunk."""
    parent_codes: npt.NDArray[np.int64] | None
    """As :attr:`HitColumns.parent_codes` (``None``: some hit has no parent code)."""
    exact: bool
    """As :attr:`HitColumns.exact`."""
    columns: Callable[[npt.NDArray[np.int64]], HitColumns]
    """The hits at the given positions (in that order) as columns."""
    uris: Callable[[npt.NDArray[np.int64]], list[str]]
    """The URIs of the hits at the given positions (one bulk decode, no other column)."""
    parent_uris: Callable[[npt.NDArray[np.int64]], list[str]]
    """The parent URIs that the given parent codes stand for (one bulk decode)."""
    heading_codes: Callable[
        [npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]
    ]
    """As :attr:`HitColumns.heading_codes`."""
    among: Callable[[npt.NDArray[np.int64], Collection[str]], npt.NDArray[np.bool_]] | None = None
    """Optional: whether the hit at each of the given positions has one of the given URIs,
    found by looking those URIs up instead of decoding every hit's (the tree context asks
    it of a family of hundreds of chunks with a pool of ~50 URIs). ``None``: the caller
    compares :attr:`uris`."""
    load: Callable[[Sequence[int]], list[Node]] | None = None
    """Optional: the nodes of the hits at the given positions (as :attr:`HitColumns.load`),
    with :attr:`flags`: a caller that has the hits' URIs (:attr:`uris`) places a hit as a
    deferred candidate without :meth:`columns` (the tree context's folder of files).
    ``None``: read the hits through :meth:`columns` (a batch that built them already)."""
    flags: Callable[[npt.NDArray[np.int64]], tuple[list[float], list[bool]]] | None = None
    """Optional, given with :attr:`load`: the dense scores and filter flags of the hits at
    the given positions (:attr:`HitColumns.vector_scores`, :attr:`HitColumns.matches`)."""

    def __len__(self) -> int:
        return int(self.leaves.size)


@runtime_checkable
class ColumnarSearchStore(Protocol):
    """A store that answers a search as :class:`HitColumns` without building every node."""

    def search_columns(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> HitColumns: ...


def search_columns(
    store: VectorStore,
    vector: Vector,
    scope: Scope,
    limit: int,
    *,
    query_text: str | None = None,
    dense_weight: float = 1.0,
) -> HitColumns:
    """``store.search`` as :class:`HitColumns`: the store's own columnar search where it has
    one (:class:`ColumnarSearchStore`), else its hits wrapped, so that every store (Milvus,
    VikingDB, a user's own) serves the retriever unchanged."""
    own = getattr(store, "search_columns", None)
    if own is not None:
        cols: HitColumns = own(
            vector, scope, limit, query_text=query_text, dense_weight=dense_weight
        )
        return cols
    return HitColumns.from_hits(
        store.search(vector, scope, limit, query_text=query_text, dense_weight=dense_weight)
    )


_all = np.logical_and.reduce
"""``a.all()`` of a 1-d array without the Python frame of numpy's ``_methods`` wrapper."""

SMALL_UNIQUE = 128
"""Up to this many values :func:`unique_inverse` sorts Python ints instead of calling
``np.unique``."""


def unique_inverse(
    a: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.intp]]:
    """``np.unique(a, return_inverse=True)`` of a 1-d integer array (the inverse flat): the
    same sorted distinct values and the same inverse.

    Why: a find groups a few small arrays by parent (a search's ~50 hits, a family's
    members); ``np.unique``'s fixed cost (~25 us: argsort, masks, several array calls) was
    most of each call, where a sort of the few distinct Python ints and a dict lookup per
    value take about half. Past :data:`SMALL_UNIQUE` values, ``np.unique`` itself."""
    if a.size and a[0] == a[-1] and bool(_all(a == a[0])):
        # one value (a family's members, the chunks of one file): no sort, no lookups
        return a[:1].copy(), np.zeros(a.size, dtype=np.intp)
    if a.size > SMALL_UNIQUE:
        distinct, inverse = np.unique(a, return_inverse=True)
        return distinct, inverse.reshape(-1)
    values = a.tolist()
    ordered = sorted(set(values))
    at = {v: i for i, v in enumerate(ordered)}
    return (
        np.array(ordered, dtype=a.dtype),
        np.fromiter(map(at.__getitem__, values), dtype=np.intp, count=len(values)),
    )


def check_search_args(limit: int, dense_weight: float) -> None:
    """The argument checks every store's ``search`` starts with."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InvalidQueryError("limit must be >= 1")
    if not 0.2 <= dense_weight <= 1.0:
        raise InvalidQueryError(f"dense_weight must be in [0.2, 1], got {dense_weight}")


def check_number(
    name: str,
    value: object,
    low: float,
    high: float | None = None,
    *,
    whole: bool = False,
    integer: bool = False,
) -> float:
    """A constructor's number (a window, a timeout, a size) in ``[low, high]``, as the Python
    number it equals, else a :class:`StoreError` showing it bounded
    (:func:`~treehop.validation.shown_value`).

    Why (helper leftovers65e): ``not value >= 0`` and ``timeout_s < 1`` ran on whatever was
    passed, so a list or a string raised Python's raw ``TypeError`` (not a ``TreehopError``),
    and ``timeout_s=float("inf")`` / NaN passed the comparison and failed in ``int()`` with a
    raw ``OverflowError`` / ``ValueError``. ``whole``: finite and below ``int``'s float limit
    (the SDK takes whole seconds; ``2.5`` is still taken as 2, as before); ``integer``: an
    integer only (a count or a size). What is a number is the library's one rule
    (:func:`~treehop.validation.integral` / :func:`~treehop.validation.real`: a numpy number
    is one, a bool is not); the Python number is returned, so a numpy one never reaches the
    SDK's JSON. An ``int`` past float range (``10**400``) is refused before ``float()``
    overflows on it.

    A whole float for a count (``scan_page=5.0``, ``np.float64(500.0)``) is refused (helper
    leftovers66b, after leftovers65e's check began refusing what had been taken): a count
    is decided as ``find(limit=5.0)``, ``depth`` and ``slot_chars`` decide it,
    :func:`~treehop.validation.integral`, which takes ``np.int64`` and refuses every float
    as Python's ``range`` does. Taking ``5.0`` here alone would make one count a float
    elsewhere refused, and ``5.5`` would then need a rule of its own."""
    number = integral(value) if integer else real(value)
    ok = number is not None and not (isinstance(number, int) and number.bit_length() > 1023)
    if ok:
        v = float(number)  # type: ignore[arg-type]
        ok = v >= low and (high is None or v <= high) and not (whole and not math.isfinite(v))
    if not ok:
        kind = "an integer" if integer else "a number"
        within = f"in {low:g}..{high:g}" if high is not None else f">= {low:g}"
        raise StoreError(f"{name} must be {kind} {within}, got {shown_value(value)}")
    return number  # type: ignore[return-value]


@runtime_checkable
class VectorStore(Protocol):
    """A store of nodes with vectors, searched by cosine (optionally hybrid) within a scope."""

    capabilities: StoreCapabilities

    @property
    def dimension(self) -> int | None: ...

    def __len__(self) -> int: ...

    def upsert(self, nodes: Sequence[Node], vectors: Vector) -> None:
        """Insert or replace nodes by URI with their (unit) vectors, one row per node."""
        ...

    def delete(self, uris: Sequence[str]) -> int:
        """Delete nodes by URI; returns how many existed."""
        ...

    def get(self, uris: Sequence[str]) -> list[Node | None]: ...

    def children(self, uri: str) -> list[Node]:
        """Direct children of ``uri`` in stored order (chunks by chunk index)."""
        ...

    def search(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> list[ScoredNode]:
        """The ``limit`` best nodes in ``scope``, best first."""
        ...

    def find_by_tags(
        self, labels: Sequence[str], scope: Scope, limit: int
    ) -> Mapping[str, list[Node]]:
        """Scalar lookup (no vectors): for each tag label, nodes in ``scope`` carrying it."""
        ...

    def update_tags(self, tags_by_uri: Mapping[str, list[str]]) -> None:
        """Replace the tags of existing nodes without touching their vectors."""
        ...

    def iter_nodes(self, subtree: str | None = None) -> Iterator[Node]: ...

    def get_vectors(self, uris: Sequence[str]) -> Vector:
        """The stored vectors of existing nodes, one row per URI."""
        ...

    def save(self) -> None:
        """Persist (a no-op for engines that persist on write)."""
        ...

    def get_state(self, key: str) -> bytes | None:
        """Read an opaque blob persisted with the index (sessions, settings)."""
        ...

    def put_state(self, key: str, value: bytes) -> None: ...
