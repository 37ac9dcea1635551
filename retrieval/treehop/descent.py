"""The state of one heap descent: score values, the frontier, the collected hits, the stop rules.

:class:`HierarchicalRetriever` runs the loop; this module holds what the loop reads and writes,
so that each piece can be read (and tested) on its own:

- :class:`Score` carries the two score tracks of a node (vector and rerank) and propagates
  itself down the tree. A value on one track is only ever combined with values of the same
  track, so a rerank-scale number can never land on the vector track or the other way round.
- :class:`Frontier` is the heap of directories still to be opened, each with an upper bound on
  what its subtree can still add.
- :class:`Collected` holds every candidate found so far and ranks it one slot per document.
- :class:`Descent` bundles them with the convergence counter, the trace and the rerank
  fallback, and decides when the top-k is settled.

Why an upper bound: the global search returns the ``N`` best nodes in scope, so every other
node scores at most the ``N``-th score ``S`` on its own. With propagation
``final = alpha*own + (1-alpha)*final(parent)``, nothing inside a directory whose final score is
``f`` can score above ``max(S_D, alpha*S_D + (1-alpha)*f)``, where ``S_D`` is ``S`` or the best
global hit inside that directory. Once the k-th best collected document scores at least the best
bound left on the frontier, no unopened directory can change the top-k: the search stops with a
proof instead of after a count of quiet rounds, and at ``alpha = 1`` it returns exactly what a
flat search with the same scoring returns (never less recall).
"""

from __future__ import annotations

import heapq
import itertools
import math
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from .chunk_window import spread_over_documents
from .models import FoundBy, Node, RoundTrace

NEG_INF = -math.inf


class Track(StrEnum):
    """Which score track ranks candidates: the reranker's, or the vector (hybrid) scores."""

    VECTOR = "vector"
    RERANK = "rerank"


@dataclass(frozen=True, slots=True)
class Score:
    """A node's score on both tracks. ``rr`` is ``None`` when the node was not reranked."""

    vec: float
    rr: float | None = None

    def on(self, track: Track) -> float:
        """The score that ranks on ``track``.

        A node without a rerank score ranks last on the rerank track (its vector score is on
        another scale and is never read there).
        """
        if track is Track.RERANK:
            return NEG_INF if self.rr is None else self.rr
        return self.vec

    def propagate(self, parent: Score | None, alpha: float) -> Score:
        """``alpha*self + (1-alpha)*parent`` on each track separately.

        A track the parent lacks is not blended (the node keeps its own value on it): filling
        the gap from the other track would mix scales.
        """
        if parent is None or alpha >= 1.0:
            return self
        vec = alpha * self.vec + (1 - alpha) * parent.vec
        if self.rr is None or parent.rr is None:
            return Score(vec, self.rr)
        return Score(vec, alpha * self.rr + (1 - alpha) * parent.rr)

    def scaled(self, factor: float) -> Score:
        """Both tracks times ``factor`` (a tag hop's down-weighted start)."""
        return Score(self.vec * factor, None if self.rr is None else self.rr * factor)


_new_object = object.__new__
_set_vec = Score.__dict__["vec"].__set__
_set_rr = Score.__dict__["rr"].__set__


def score_of(vec: float, rr: float | None = None) -> Score:
    """``Score(vec, rr)``, built without the frozen dataclass's ``__init__``: that sets each
    field through ``object.__setattr__``, and a find builds ~100 scores (every candidate's
    own and final score), which made it a visible share of a find's Python. The slots are
    set directly (the same object, equal and hashing the same)."""
    s = _new_object(Score)
    _set_vec(s, vec)
    _set_rr(s, rr)
    return s


@dataclass(frozen=True, slots=True)
class HopOrigin:
    """Why a subtree was entered sideways: the shared tag and the global hit that carried it."""

    tag: str
    source: str


class Candidate:
    """A node that may be returned: its own score, its propagated (final) score, provenance.

    The fields that rank and group candidates (URI, parent, chunk index, leaf or not) are
    plain attributes; the node itself may be *deferred* (:meth:`deferred_at`): the tree context
    places ~50 leaves per query of which ~10 are returned, and building a pydantic node for
    each was a large share of a find. :attr:`node` builds it on first use.
    """

    __slots__ = (
        "_at",
        "_load",
        "_node",
        "chunk_index",
        "document",
        "final",
        "found_by",
        "found_via",
        "hop",
        "is_leaf",
        "own",
        "parent_uri",
        "uri",
        "vector_score",
    )

    def __init__(
        self,
        node: Node,
        own: Score,
        final: Score,
        vector_score: float,
        found_by: FoundBy,
        found_via: str | None = None,
        hop: HopOrigin | None = None,
    ) -> None:
        self.uri = node.uri
        self.parent_uri = node.parent_uri
        self.chunk_index = node.chunk_index
        self.document = _document(self.uri, self.parent_uri, self.chunk_index)
        self.is_leaf = node.is_leaf
        self.own = own
        self.final = final
        self.vector_score = vector_score
        self.found_by = found_by
        self.found_via = found_via
        self.hop = hop
        self._node: Node | None = node
        self._load: Callable[..., Any] | None = None
        self._at = -1

    @classmethod
    def deferred_at(
        cls,
        uri: str,
        parent_uri: str | None,
        chunk_index: int | None,
        is_leaf: bool,
        load: Callable[[Sequence[int]], list[Node]],
        at: int,
        own: Score,
        final: Score,
        vector_score: float,
        found_by: FoundBy,
        found_via: str | None = None,
    ) -> Candidate:
        """A candidate whose node is the one at position ``at`` of a search's columns, built
        by their ``load`` when first read: a find places ~45 candidates this way and reads
        few of them (no node and no closure made per candidate)."""
        c = _new_object(cls)
        c.uri, c.parent_uri, c.chunk_index, c.is_leaf = uri, parent_uri, chunk_index, is_leaf
        # (:func:`_document`, written out: one call fewer for each of ~45 candidates a find)
        c.document = parent_uri if chunk_index is not None and parent_uri else uri
        c.own, c.final, c.vector_score = own, final, vector_score
        c.found_by, c.found_via, c.hop = found_by, found_via, None
        c._node, c._load, c._at = None, load, at
        return c

    @property
    def node(self) -> Node:
        node = self._node
        if node is None:
            load = self._load
            assert load is not None
            node = self._node = load([self._at])[0]
            self._load = None
        return node


def document_key(node: Node) -> str:
    """The document a node belongs to: a chunk's file, else the node itself."""
    return _document(node.uri, node.parent_uri, node.chunk_index)


def _document(uri: str, parent_uri: str | None, chunk_index: int | None) -> str:
    """:func:`document_key` from the three fields (a candidate keeps its answer as
    :attr:`Candidate.document`: the slot key, read for every candidate in every round)."""
    if chunk_index is not None and parent_uri:
        return parent_uri
    return uri


class Collected:
    """Every candidate found so far, keyed by URI, ranked one slot per document (or per node)."""

    def __init__(
        self,
        collapse: bool,
        budget: int = 0,
        passages: bool = True,
        join_adjacent: bool = False,
        headless: bool = False,
        fill: int = 0,
    ) -> None:
        self.collapse = collapse
        self.join_adjacent = join_adjacent
        """Passage slots join adjacent hits across a weak passage mark (:func:`_window_slots`)."""
        self.budget = budget
        """A slot's text budget in characters (:func:`passage_groups`)."""
        self.passages = passages
        """With ``collapse``: one slot per passage (:func:`passage_groups`); ``False``: one
        slot per document, its chunks folded into it."""
        self.headless = headless
        """Document slots split at headless entries (:func:`headless_groups`)."""
        self.fill = fill
        """With document slots (``passages`` false): candidates of fewer documents than
        this many take passage slots (:meth:`ranked`; ``few_document_passages``)."""
        self.by_uri: dict[str, Candidate] = {}
        # :meth:`kth_score`'s slots kept between calls: each slot's best score on the track
        # they were computed for (``None``: none yet), the candidates placed since and the
        # ones replaced since (:meth:`add` and :meth:`add_global`, the only writers during a
        # descent), and ``by_uri``'s size when they were last folded in.
        self._kth_track: Track | None = None
        self._kth_best: dict[str, float] = {}
        self._kth_placed: list[Candidate] = []
        self._kth_replaced: list[Candidate] = []
        self._kth_size = 0

    def __len__(self) -> int:
        return len(self.by_uri)

    def values(self) -> Iterable[Candidate]:
        return self.by_uri.values()

    def add(self, cand: Candidate, track: Track) -> None:
        """Keep a node's best score; a direct path beats a hop on ties."""
        old = self.by_uri.get(cand.uri)
        if old is None:
            self.by_uri[cand.uri] = cand
            self._kth_placed.append(cand)
        elif _better(cand, old, track):
            self.by_uri[cand.uri] = cand
            self._kth_replaced.append(old)

    def add_global(
        self,
        positions: Iterable[int],
        owns: Iterable[Score],
        threshold: float,
        cols: Any,
        admit: Callable[[int], bool] | None,
    ) -> None:
        """:meth:`add` on the vector track of each global hit at ``positions`` of the columns
        ``cols`` (a :class:`~treehop.stores.base.HitColumns`) with its own score (``owns``:
        also its final score, alpha = 1) above ``threshold`` that matches the filter, as a
        deferred candidate (:meth:`Candidate.deferred_at`, found by the global step) on the
        columns' ``load``: a leaf, or a non-leaf that ``admit`` takes (``None``: none).

        Why one loop: a find's deeper global step adds ~30 hits, and the method calls per
        hit (the pass test, :meth:`Candidate.deferred_at`, :meth:`add`) were most of that
        step's Python. The same candidates, added in the same order."""
        by_uri = self.by_uri
        get = by_uri.get
        uris, parents, chunks = cols.uris, cols.parent_uris, cols.chunk_indexes
        leaves, matches, vector_scores, load = (
            cols.leaves,
            cols.matches,
            cols.vector_scores,
            cols.load,
        )
        new, vector, found_by = _new_object, Track.VECTOR, FoundBy.GLOBAL
        placed, replaced = self._kth_placed.append, self._kth_replaced.append
        for i, own in zip(positions, owns, strict=True):
            if not own.vec > threshold or not matches[i]:
                continue
            leaf = leaves[i]
            if not (leaf or (admit is not None and admit(i))):
                continue
            uri, parent, chunk = uris[i], parents[i], chunks[i]
            c = new(Candidate)
            c.uri, c.parent_uri, c.chunk_index, c.is_leaf = uri, parent, chunk, leaf
            c.document = parent if chunk is not None and parent else uri
            c.own = c.final = own
            c.vector_score, c.found_by, c.found_via, c.hop = vector_scores[i], found_by, None, None
            c._node, c._load, c._at = None, load, i
            old = get(uri)
            if old is None:
                by_uri[uri] = c
                placed(c)
            elif _better(c, old, vector):
                by_uri[uri] = c
                replaced(old)

    def ranked(
        self,
        track: Track,
        grow_key: Callable[[Candidate], float] | None = None,
        top: int | None = None,
    ) -> list[list[Candidate]]:
        """Groups best first; each group is one result slot, its best candidate first.
        ``grow_key``: which side a passage slot grows to first (:func:`passage_groups`).
        ``top``: the caller reads only the first ``top`` groups (``None``: all); where they
        are filled slots of fewer documents than ``fill`` and ``top`` is ``fill``, only
        those are built (:func:`filled_top`, the same groups as the first ``top`` of the
        whole ranking); elsewhere every group is returned as without it."""
        if track is Track.VECTOR:  # (best first: a stable sort, equal scores kept in order)
            items = sorted(self.by_uri.values(), key=_FINAL_VEC, reverse=True)
        else:
            items = sorted(self.by_uri.values(), key=lambda c: -c.final.on(track))
        if self.collapse and self.passages:  # (one slot per passage of a document)
            return passage_groups(items, self.budget, self.join_adjacent, grow_key)
        if self.collapse and self._few_documents(items):  # (every document, then passages)
            if FILLED_TOP and top is not None and top == self.fill:
                return filled_top(items, self.fill, self.budget, self.join_adjacent, grow_key)
            slots = passage_groups(items, self.budget, self.join_adjacent, grow_key)
            return filled_slots(slots, self.fill)
        if self.collapse and self.headless:  # (one per document, or per headless entry)
            return headless_groups(items, self.budget, self.join_adjacent, grow_key)
        groups: dict[str, list[Candidate]] = {}
        if self.collapse:  # (one slot per document)
            for c in items:
                groups.setdefault(c.document, []).append(c)
        else:
            for c in items:
                groups.setdefault(c.uri, []).append(c)
        return list(groups.values())

    def _few_documents(self, items: Sequence[Candidate]) -> bool:
        """Whether document slots could not fill ``fill`` slots: the candidates span fewer
        documents (a find over one long file); stops counting at ``fill``."""
        if self.fill <= 0:
            return False
        docs: set[str] = set()
        for c in items:
            docs.add(c.document)
            if len(docs) >= self.fill:
                return False
        return True

    def kth_score(self, k: int, track: Track) -> float:
        """The score of the k-th best document, or -inf while fewer than k are filled: a
        lower bound on the k-th best slot's (a document's passages may take several slots,
        :func:`passage_groups`), so a stop rule that reads it never stops too early.

        (Asked every round: the slot key and the track's score are read as attributes, a
        method call per candidate each was most of its cost.)

        The slots' best scores are kept between calls and each call folds in only the
        candidates placed since: a directory paged ``max_children_per_dir`` rows a round
        (one document of 12,000 chunks, fewer slots than the limit: never settled) read every
        candidate again each round, quadratic in the rounds. A slot's best only rises as
        candidates are placed or raised; a replacement that lowers a node's score (a direct
        path beating a hop within 1e-6, :func:`_better`), another track, or ``by_uri``
        changed by anyone else (its size) recomputes them all, as before."""
        vector, collapse = track is Track.VECTOR, self.collapse
        by_uri, placed = self.by_uri, self._kth_placed
        fresh = (
            self._kth_track is not track
            or len(by_uri) != self._kth_size + len(placed)
            or self._kth_lowered(track)
        )
        if fresh:
            best: dict[str, float] = {}
            todo: Iterable[Candidate] = by_uri.values()
        else:
            best = self._kth_best
            todo = itertools.chain(placed, (by_uri[c.uri] for c in self._kth_replaced))
        get = best.get
        for c in todo:
            key = c.document if collapse else c.uri
            s = c.final.vec if vector else c.final.on(track)
            if s > get(key, NEG_INF):
                best[key] = s
        self._kth_track, self._kth_best, self._kth_size = track, best, len(by_uri)
        placed.clear()
        self._kth_replaced.clear()
        if len(best) < k:
            return NEG_INF
        # (~40 floats: Python's sort beat an array's fill and partition, ~5 us a find; the
        # same k-th value: no NaN is kept above, ``s > ...`` is false for it)
        return float(sorted(best.values())[len(best) - k])

    def passages_settled(
        self,
        k: int,
        bound: float,
        grow_key: Callable[[Candidate], float] | None,
        penalty: float,
        pool: int,
        read: Callable[[str], bool],
    ) -> bool:
        """Whether no node still unread (each scoring at most ``bound`` on the vector track,
        alpha = 1) can enter or change the first ``k`` passage slots: the stop rule by slots,
        where :meth:`kth_score` counts documents (a lower bound: one document of many
        answers holds many slots, and a find over fewer documents than ``k`` never settled
        on it and paged the document for ``max_rounds`` rounds; bench/README.md, "Paging: a
        stop rule by slots").

        The proof, against the slots as :meth:`ranked` builds them now (``grow_key`` and
        the document ``penalty`` as the find applies them after the descent):

        - the k-th slot's score, after the document ``penalty`` (:func:`~treehop.
          chunk_window.spread_over_documents`: a document's further slots give up some),
          is at least ``bound``: a new node ranks after every candidate it does not beat
          (ties keep the order of placing) and a slot it opens scores at most ``bound``
          (of any document), so it opens no slot above the k-th and takes no slot's place;
        - each of those slots is closed: its chunks are consecutive, and the chunk before
          and after it is either collected already (no new chunk can sit there) or could
          not join it by the budget (the chars the slot holds from its opening chunk to that
          side, plus the separator, already pass ``budget``): a slot only grows to the
          adjacent chunk, so no new chunk touches its growth at any step;
        - with ``join_adjacent``, its document keeps a collected chunk at or above
          ``bound`` outside those slots: the "best hit left", which a slot may cross a weak
          mark towards, is then a collected chunk whatever is added;
        - its document's own node is collected or was read (it would join the document's
          first slot); a slot of a node that is not a chunk is closed only for a leaf;
        - at least ``pool`` collected chunks score at least ``bound``: the chunk window's
          and hub correction's pools (the best ``pool`` chunks or leaves) stay the same.

        Filled slots (``few_document_passages``: a topical query's candidates span fewer
        documents than ``k``, :func:`filled_slots`) are proved the same way with every one of
        the first ``k`` at least ``bound`` instead of the k-th: each document's best slot
        is kept among them whatever it scores, so a new chunk scoring above a document's
        best would become that document's slot; no new document can come (the caller asks
        only when every unread row is a chunk of a document with a collected chunk).

        The proof is about the slots as the descent leaves them (as the document count's is
        about its documents): the tree context and the chunk window re-score candidates
        after it, and a slot of the final ranking that differs from these could border a
        chunk still unread (bench/README.md, "Paging: a stop rule by slots")."""
        if not self.collapse:
            return False
        filled = not self.passages and self._few_documents(list(self.by_uri.values()))
        if not (self.passages or filled):
            return False
        groups = self.ranked(Track.VECTOR, grow_key)
        if len(groups) < k:
            return False
        if filled:  # (each document's best slot is kept first, whatever it scores)
            top, kth = groups[:k], min(g[0].final.vec for g in groups[:k])
        elif penalty > 0 and len(groups) > 1:
            faces = [g[0] for g in groups]
            order, adjusted = spread_over_documents(
                [c.final.vec for c in faces], [c.document for c in faces], penalty, k
            )
            top, kth = [groups[i] for i in order[:k]], adjusted[k - 1]
        else:
            top, kth = groups[:k], groups[k - 1][0].final.vec
        if not kth >= bound:
            return False
        docs = {c.document for g in top for c in g if c.chunk_index is not None}
        indexes: dict[str, set[int]] = {d: set() for d in docs}
        above: dict[str, int] = dict.fromkeys(docs, 0)  # (chunks >= bound outside the slots)
        in_top = {c.uri for g in top for c in g}
        leaves = 0
        for c in self.by_uri.values():
            high = c.final.vec >= bound
            leaves += high and c.is_leaf and c.chunk_index is not None
            d = c.document
            if c.chunk_index is not None and c.uri != d and d in indexes:
                indexes[d].add(c.chunk_index)
                above[d] += high and c.uri not in in_top
        if leaves < pool:
            return False
        for g in top:
            chunks = [c for c in g if c.chunk_index is not None and c.uri != c.document]
            if not chunks:
                if not all(c.is_leaf for c in g):
                    return False
                continue
            d = chunks[0].document
            if not (d in self.by_uri or read(d)):
                return False
            if self.join_adjacent and above[d] == 0:
                return False
            if not _closed(chunks, indexes[d], self.budget):
                return False
        return True

    def _kth_lowered(self, track: Track) -> bool:
        """Whether a node replaced since the last :meth:`kth_score` now scores below what it
        did on ``track`` (or its URI left ``by_uri``): its slot's kept best may be too high."""
        by_uri = self.by_uri
        for old in self._kth_replaced:
            now = by_uri.get(old.uri)
            if now is None or not now.final.on(track) >= old.final.on(track):
                return True
        return False

    def top_uris(self, k: int, track: Track) -> tuple[str, ...]:
        return tuple(g[0].uri for g in self.ranked(track)[:k])


def _closed(chunks: Sequence[Candidate], collected: set[int], budget: int) -> bool:
    """Whether a passage slot (its chunks, the opening one first) can grow by no chunk
    that is not collected yet (:meth:`Collected.passages_settled`): on each side, the
    adjacent chunk index is collected (or there is none: index 0), or the slot's chars from
    its opening chunk to that side already leave no room for a separator."""
    opener = chunks[0].chunk_index or 0
    at = sorted((c.chunk_index or 0, len(c.node.content)) for c in chunks)
    lo, hi = at[0][0], at[-1][0]
    if hi - lo != len(at) - 1:
        return False  # (not consecutive: not a slot _window_slots builds)
    for side, missing in ((-1, lo - 1), (1, hi + 1)):
        if missing < 0 or missing in collected:
            continue
        held = [size for i, size in at if (i - opener) * side >= 0]
        if not sum(held) + 2 * len(held) > budget:  # (+2 per join, and the next one's)
            return False
    return True


PASSAGE_START = "passage_start"
"""Chunk metadata written at ingest (:mod:`treehop.ingest.chunking`): the index of the first
chunk of the section or answer the chunk belongs to. Chunks with the same value are one
passage, cut by size; chunks with different values are different sections or answers."""
HEADING_PATH_KEY = "heading_path"
"""Chunk metadata: the chunk's heading path (the same key as
:data:`treehop.tree_scoring.HEADING_PATH`, which imports this module)."""


def _passage_mark(node: Node) -> tuple[int | None, tuple[str, ...] | None]:
    """A chunk's passage start (``None`` for a chunk ingested before it was recorded) and
    heading path, read from its node's metadata."""
    meta = node.metadata
    start = meta.get(PASSAGE_START)
    path = meta.get(HEADING_PATH_KEY)
    return (
        start if isinstance(start, int) and not isinstance(start, bool) else None,
        tuple(path) if isinstance(path, list) else None,
    )


def same_passage(a: Candidate, b: Candidate) -> bool:
    """Whether two chunks of one document belong to one passage (one section or answer, cut
    by size), so that they share a result slot.

    With the passage start recorded at ingest, by that; otherwise (an index written before
    it) two chunks are one passage when they are adjacent and under the same heading path.
    Why not one slot per document: an FAQ page, an API reference or a long guide holds many
    independent answers, and one slot per document showed one of them as the slot's text
    while the one that matched the query sat behind it (issue 33: in every query of an FAQ
    set where ``find()`` missed and flat search hit, the answer was in ``collapsed``)."""
    return same_passage_nodes(a.node, b.node)


def same_passage_nodes(a: Node, b: Node) -> bool:
    """:func:`same_passage` of two chunk nodes."""
    sa, pa = _passage_mark(a)
    sb, pb = _passage_mark(b)
    if sa is not None and sb is not None:
        return sa == sb
    ia, ib = a.chunk_index, b.chunk_index
    if ia is None or ib is None or abs(ia - ib) != 1:
        return False
    return pa == pb


def passage_groups(
    items: Sequence[Candidate],
    budget: int = 0,
    join_adjacent: bool = False,
    grow_key: Callable[[Candidate], float] | None = None,
) -> list[list[Candidate]]:
    """Candidates (best first) grouped into result slots, best slot first, each slot's best
    candidate first.

    A document's chunks that follow each other (consecutive chunk indexes) in one passage
    (:func:`same_passage`) form a run; each run is cut into slots that fit ``budget``
    characters of text (``question_context_chars``, :class:`~treehop.config.RetrievalConfig`):
    the run's best chunk opens a slot, which grows to its neighbours, the better-ranked side
    first, while its text fits; the best chunk left opens the next. So every chunk a slot
    holds is one the slot shows: a slot never hides a chunk that matched behind another one,
    and chunks of different sections or answers never share a slot (``join_adjacent``: except
    two passages under one heading path whose mark lies between a slot and the document's
    next-best hit, :func:`_window_slots`). A node that is not a chunk (a whole file, a turn, a
    directory) is a slot of its own; a chunked file's own node joins its document's best
    slot.

    ``grow_key``: a slot grows first to the side whose chunk scores higher on this key
    (a question's chunks: their own score, ``question_grow_own``), the better-ranked side
    on a tie or where a key is not finite; ``None``: the better-ranked side. Each slot still
    opens at the best-ranked chunk not yet in a slot and the slots stay in rank order: only
    the neighbour a slot takes first changes, which decides its extent when both sides do
    not fit (the chunk it leaves may open a later slot)."""
    rank = {id(c): k for k, c in enumerate(items)}
    groups: list[list[Candidate]] = []
    for doc, members in _by_document(items).items():
        chunks = [c for c in members if c.chunk_index is not None and c.uri != doc]
        others = [c for c in members if c.chunk_index is None or c.uri == doc]
        slots = list(_window_slots(chunks, budget, rank, join_adjacent, grow_key)) if chunks else []
        if others and slots and others[0].uri == doc:
            slots[0] = sorted([*slots[0], others.pop(0)], key=lambda c: rank[id(c)])
        groups.extend(slots)
        groups.extend([c] for c in others)
    groups.sort(key=lambda g: rank[id(g[0])])
    return groups


def filled_slots(groups: list[list[Candidate]], k: int) -> list[list[Candidate]]:
    """Passage slots (best first) reordered so that the first ``k`` hold every document's
    best slot and, in the room left, the best further passages: the document slots a
    topical query takes, filled up to ``k`` with passages where fewer documents than ``k``
    are found (:attr:`~treehop.config.RetrievalConfig.few_document_passages`). Why not the
    passage slots as they rank: with many candidates and a large ``k`` (R@100), a
    document's passages pushed another document out of the first ``k``, where its
    document slot had a place (pytest's page-level R@100 1.000 -> 0.994)."""
    room = k - len({g[0].document for g in groups})
    docs: set[str] = set()
    kept: list[list[Candidate]] = []
    rest: list[list[Candidate]] = []
    for g in groups:
        doc = g[0].document
        if doc not in docs:
            docs.add(doc)
            kept.append(g)
        elif room > 0:
            room -= 1
            kept.append(g)
        else:
            rest.append(g)
    return kept + rest


FILLED_TOP = True
"""Whether a find over fewer documents than its limit builds only the slots it returns
(:func:`filled_top`; ``False``: every slot of every candidate, then the first ``limit``, as
before: the tests and ``bench/bench_few_docs_latency.py --no-filled-top`` compare the two)."""


def filled_top(
    items: Sequence[Candidate],
    k: int,
    budget: int = 0,
    join_adjacent: bool = False,
    grow_key: Callable[[Candidate], float] | None = None,
) -> list[list[Candidate]]:
    """The first ``k`` groups of ``filled_slots(passage_groups(items, ...), k)``, built
    without cutting every candidate into slots: the same groups, the same members in the
    same order.

    Why: over fewer documents than the limit the descent collects every row of its deeper
    global steps (one 4.9 MB file: ~6,500 chunks), and cutting all of them into passage
    slots read every chunk's node (its text's length, its passage mark) to return ten
    (bench/README.md, "Few documents: a stop rule for filled slots").

    Why it is the same: :func:`passage_groups` cuts each document on its own
    (:func:`_document_groups`) and takes every slot of :func:`_window_slots`, which makes a
    document's slots in the order of their opening chunks, each opened by the best-ranked
    chunk not yet taken and grown only from what the slots before it took; so a document's
    first groups, asked one at a time, are its groups of the whole cut, in rank order of
    their faces, and no later group changes an earlier one. :func:`filled_slots` keeps, in rank
    order of the faces, every document's first group and the first ``k - D`` further groups
    (``D`` documents, fewer than ``k``): a merge of the documents' groups by face rank that
    stops asking a document for more once those ``k - D`` are taken yields exactly them.
    The bound that no group left unmade can enter: until then each document keeps its next
    group waiting in the merge, which pops in face order, so when the ``(k - D)``-th further
    group is taken every waiting group ranks after it, and every unmade group after its
    document's waiting one; each document's first group is made before any other of it, so
    none is missed."""
    rank = {id(c): r for r, c in enumerate(items)}
    by_doc = _by_document(items)
    room = k - len(by_doc)
    heap: list[tuple[int, int, bool, list[Candidate]]] = []
    makers: list[Iterator[list[Candidate]]] = []
    for d, (doc, members) in enumerate(by_doc.items()):
        made = _document_groups(doc, members, budget, rank, join_adjacent, grow_key)
        makers.append(made)
        g = next(made)  # (a document has a group: its best candidate's)
        heap.append((rank[id(g[0])], d, True, g))
    heapq.heapify(heap)
    kept: list[list[Candidate]] = []
    while heap:
        _, d, first, g = heapq.heappop(heap)
        if not first:
            if room <= 0:
                continue
            room -= 1
        kept.append(g)
        if room > 0:
            nxt = next(makers[d], None)
            if nxt is not None:
                heapq.heappush(heap, (rank[id(nxt[0])], d, False, nxt))
    return kept


def _document_groups(
    doc: str,
    members: list[Candidate],
    budget: int,
    rank: dict[int, int],
    join_adjacent: bool,
    grow_key: Callable[[Candidate], float] | None,
) -> Iterator[list[Candidate]]:
    """One document's groups of :func:`passage_groups` (``members``: its candidates in rank
    order), made one at a time in rank order of their faces: its chunks' slots
    (:func:`_window_slots`; the document's own node joins the first) merged with its other
    nodes, each a group of its own."""
    chunks = [c for c in members if c.chunk_index is not None and c.uri != doc]
    others = [c for c in members if c.chunk_index is None or c.uri == doc]
    slots = _window_slots(chunks, budget, rank, join_adjacent, grow_key) if chunks else None
    first = next(slots, None) if slots is not None else None
    if first is not None and others and others[0].uri == doc:
        first = sorted([*first, others.pop(0)], key=lambda c: rank[id(c)])
    at = 0
    while first is not None or at < len(others):
        if first is not None and (at >= len(others) or rank[id(first[0])] < rank[id(others[at])]):
            yield first
            first = next(slots, None) if slots is not None else None
        else:
            yield [others[at]]
            at += 1


def _window_slots(
    chunks: list[Candidate],
    budget: int,
    rank: dict[int, int],
    join_adjacent: bool = False,
    grow_key: Callable[[Candidate], float] | None = None,
) -> Iterator[list[Candidate]]:
    """One document's chunks (``chunks``, in the order of ``rank``) cut into slots (see
    :func:`passage_groups`), best slot first, made one at a time: a chunk's node (its
    text's length, its passage mark) is read only when a slot reaches it. The one cut of
    both callers: :func:`passage_groups` takes every slot, :func:`filled_top` only the first
    few (a find over one long file: ~6,500 chunks, ten slots).

    Each slot opens at the best-ranked chunk not yet taken and grows to its neighbours in
    the same run (consecutive chunk indexes of one passage, :func:`same_passage`), the
    better-ranked side first, while its text fits ``budget``. The slot covers consecutive
    positions, so the runs it holds are those of its ends, and a chunk beside it shares one
    exactly when it is joined to the end beside it; two chunks are in one run when every
    pair between them is joined (read pair by pair, stopping at the first that is not).

    ``join_adjacent``: a slot also grows across a passage mark into the neighbouring
    passage when that passage holds the document's best hit not yet in a slot (the hit that
    would open the document's next slot, right beside this one) and no heading separates the
    two (:func:`weak_mark`); from there it grows over either passage, the better-ranked
    side first, as before. Why: a mark the chunker guessed from blank lines also falls
    inside an answer (an example's trailing blank lines), and the two halves of one answer
    then took two slots, each about half of it widened with the neighbouring answers' text
    (the zsh FAQ's 3.6: neither slot passed the judge, the flat leaf did), or a slot grew
    backwards over the previous answers while the rest of its own answer opened the next
    slot (3.8).

    ``grow_key``: of two sides that both fit, the one whose chunk is higher on the key
    first (:func:`_first_side`)."""
    n = len(chunks)
    if n == 1:  # (one chunk, one slot: nothing to grow over, no node to read)
        yield [chunks[0]]
        return
    index_in_rank = [c.chunk_index or 0 for c in chunks]
    if n > _NUMPY_SORT_ABOVE:
        sort = np.argsort(np.asarray(index_in_rank, dtype=np.int64), kind="stable")
        order = sort.tolist()
        at = np.empty(n, dtype=np.int64)
        at[sort] = np.arange(n)
        by_rank = at.tolist()  # (the k-th best chunk's position in chunk order)
    else:  # (the same stable order: a question's documents hold a few chunks each)
        order = sorted(range(n), key=index_in_rank.__getitem__)
        by_rank = [0] * n
        for p, o in enumerate(order):
            by_rank[o] = p
    ordered = [chunks[o] for o in order]
    index = [index_in_rank[o] for o in order]
    own = [grow_key(c) for c in ordered] if grow_key is not None else None
    # (read as slots reach them: -1 / None not yet; joins[j]: ordered[j - 1] and ordered[j]
    # in one run, adjacent chunk indexes of one passage. Plain locals, no closure: this loop
    # is also every question's whole cut, :func:`passage_groups`)
    sizes = [-1] * n
    joins: list[bool | None] = [None] * n
    taken = [False] * n
    next_best = 0  # (by_rank's first chunk not yet in a slot, from here on)
    for i in by_rank:
        if taken[i]:
            continue
        taken[i] = True
        lo = hi = i
        chars = sizes[i]
        if chars < 0:
            chars = sizes[i] = len(ordered[i].node.content)
        while True:
            while next_best < n and taken[by_rank[next_best]]:
                next_best += 1
            best_left = by_rank[next_best] if next_best < n else -1
            sides = []
            # (the side's chunk, the slot's end beside it, the pair between them)
            for j, end, pair in ((lo - 1, lo, lo), (hi + 1, hi, hi + 1)):
                if not (0 <= j < n) or taken[j]:
                    continue
                s = sizes[j]
                if s < 0:
                    s = sizes[j] = len(ordered[j].node.content)
                if chars + 2 + s > budget:
                    continue
                v = joins[pair]
                if v is None:
                    v = joins[pair] = index[pair] - index[pair - 1] == 1 and same_passage(
                        ordered[pair - 1], ordered[pair]
                    )
                if v or (
                    join_adjacent
                    and best_left >= 0
                    and abs(index[j] - index[end]) == 1
                    and _one_run(j, best_left, joins, index, ordered)
                    and weak_mark(ordered[end].node, ordered[j].node)
                ):
                    sides.append(j)
            if not sides:
                break
            j = _first_side(sides, ordered, rank, own)
            taken[j] = True
            chars += 2 + sizes[j]
            lo, hi = min(lo, j), max(hi, j)
        yield [ordered[lo]] if lo == hi else sorted(ordered[lo : hi + 1], key=lambda c: rank[id(c)])


def _one_run(
    a: int, b: int, joins: list[bool | None], index: list[int], ordered: list[Candidate]
) -> bool:
    """Whether positions ``a`` and ``b`` of a document's chunks (``ordered``, in chunk order)
    lie in one run: every pair between them joined (:func:`_window_slots`' ``joins``, read
    and kept pair by pair, stopping at the first that is not)."""
    lo, hi = (a, b) if a < b else (b, a)
    for j in range(lo + 1, hi + 1):
        v = joins[j]
        if v is None:
            v = joins[j] = index[j] - index[j - 1] == 1 and same_passage(ordered[j - 1], ordered[j])
        if not v:
            return False
    return True


_NUMPY_SORT_ABOVE = 64
"""Above this many chunks :func:`_window_slots` orders a document's chunks by numpy's stable
argsort (one long file: ~6,500), else by Python's stable sort: the same order."""


def headless_groups(
    items: Sequence[Candidate],
    budget: int = 0,
    join_adjacent: bool = False,
    grow_key: Callable[[Candidate], float] | None = None,
) -> list[list[Candidate]]:
    """Candidates (best first) in document slots, best slot first, except that a document
    whose chunks here all lie under one heading path and in more than one passage (its
    entries carry no heading of their own) is cut into passage slots as
    :func:`passage_groups` cuts a question's
    (:attr:`~treehop.config.RetrievalConfig.headless_entry_slots`). Why the heading test: a
    topical query names a page by its headings, and a page whose hits sit in different
    sections stays one result (passage slots for every topical query cost the anchor-text
    queries 0.024 nDCG@10); entries under one heading are separate answers that nothing
    else can name."""
    by_doc = _by_document(items)
    if len(by_doc) == len(items):  # (a candidate per document: nothing to split)
        return list(by_doc.values())
    groups: list[list[Candidate]] = []
    split = False
    for doc, members in by_doc.items():
        # (a document with one candidate, the common case, is one slot: no mark is read)
        if len(members) > 1 and _headless_entries(doc, members):
            groups.extend(passage_groups(members, budget, join_adjacent, grow_key))
            split = True
        else:
            groups.append(members)
    if split:  # (the documents' slots were in rank order; a split one's are interleaved)
        rank = {id(c): k for k, c in enumerate(items)}
        groups.sort(key=lambda g: rank[id(g[0])])
    return groups


def _headless_entries(doc: str, members: list[Candidate]) -> bool:
    """Whether a document's candidates hold chunks of more than one passage, all under one
    heading path (:func:`headless_groups`). Paths are compared, never hashed: a path that
    metadata written by hand filled with other values still compares."""
    marks = [_passage_mark(c.node) for c in members if c.chunk_index is not None and c.uri != doc]
    return len({start for start, _ in marks}) > 1 and all(p == marks[0][1] for _, p in marks)


def _by_document(items: Sequence[Candidate]) -> dict[str, list[Candidate]]:
    """``items`` grouped by their document, each group and the groups in ``items``' order."""
    by_doc: dict[str, list[Candidate]] = {}
    for c in items:
        by_doc.setdefault(c.document, []).append(c)
    return by_doc


def _first_side(
    sides: list[int], ordered: list[Candidate], rank: dict[int, int], own: list[float] | None
) -> int:
    """Which of the sides a slot may grow to (one or two chunk positions) it takes first:
    the one higher on the grow key where both keys are finite and differ, else the
    better-ranked one (:func:`_window_slots`)."""
    if own is not None and len(sides) == 2:
        before, after = own[sides[0]], own[sides[1]]
        if math.isfinite(before) and math.isfinite(after) and before != after:
            return sides[0] if before > after else sides[1]
    return min(sides, key=lambda j: rank[id(ordered[j])])


def weak_mark(a: Node, b: Node) -> bool:
    """Whether the passage mark between two adjacent chunks is the chunker's guess rather
    than the author's: both lie under the same heading path (the mark comes from blank lines
    or entry shapes, which also occur inside an answer: an example's trailing blank lines),
    not from a new heading."""
    return _passage_mark(a)[1] == _passage_mark(b)[1]


_FINAL_VEC = operator.attrgetter("final.vec")
"""A candidate's final vector-track score (a C-level key: :meth:`Score.on` is a Python call
per candidate)."""


def _better(new: Candidate, old: Candidate, track: Track) -> bool:
    a, b = new.final.on(track), old.final.on(track)
    # Scores of one node computed by different matrix products differ in the last bits.
    if abs(a - b) > 1e-6:
        return a > b
    return old.hop is not None and new.hop is None


@dataclass(order=True)
class FrontierEntry:
    sort_key: float
    seq: int
    uri: str = field(compare=False)
    score: Score | None = field(compare=False)  # None: a search root (no score of its own)
    hop: HopOrigin | None = field(compare=False, default=None)
    seen: frozenset[str] = field(compare=False, default=frozenset())
    """Children already returned by an earlier, truncated opening of this directory."""


class Frontier:
    """The heap of directories to open, best first.

    Under the BOUND stop rule on the vector track the key is the subtree's upper bound;
    otherwise (the rerank track, whose scores have no bound, or the seed's CONVERGENCE rule)
    it is the directory's propagated score on the active track, as in the seed.
    """

    def __init__(self, bounds: SubtreeBounds, alpha: float, by_bound: bool) -> None:
        self.bounds = bounds
        self.alpha = alpha
        self.by_bound = by_bound
        self._heap: list[FrontierEntry] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def _key(self, e: FrontierEntry, track: Track) -> float:
        if self.by_bound and track is Track.VECTOR:
            return self.bounds.upper(e.uri, e.score, self.alpha)
        # A search root has no score of its own and is opened first.
        return math.inf if e.score is None else e.score.on(track)

    def push(
        self,
        uri: str,
        score: Score | None,
        track: Track,
        hop: HopOrigin | None = None,
        seen: frozenset[str] = frozenset(),
    ) -> None:
        e = FrontierEntry(0.0, next(self._seq), uri, score, hop, seen)
        e.sort_key = -self._key(e, track)
        heapq.heappush(self._heap, e)

    def top_paged(self) -> bool:
        """Whether the best entry is a directory opened before (truncated: its rest)."""
        return bool(self._heap) and bool(self._heap[0].seen)

    def entries(self) -> Iterable[FrontierEntry]:
        """Every entry, in no order."""
        return iter(self._heap)

    def pop(self) -> FrontierEntry:
        return heapq.heappop(self._heap)

    def best_bound(self) -> float:
        """The highest upper bound of any entry (-inf when empty)."""
        if not self._heap:
            return NEG_INF
        if self.by_bound:  # keyed by the bound: the top entry holds the highest
            return -self._heap[0].sort_key
        return max(self.bounds.upper(e.uri, e.score, self.alpha) for e in self._heap)

    def rekey(self, track: Track) -> None:
        for e in self._heap:
            e.sort_key = -self._key(e, track)
        heapq.heapify(self._heap)


class SubtreeBounds:
    """Upper bounds on the own (unpropagated) vector-track score of uncollected nodes.

    ``floor`` is the score of the last node the global search returned (``-inf`` when it
    returned everything in scope): every node it did not return scores at most that. With
    ``alpha < 1`` a global hit is final only once its parent is opened, so a directory holding
    global hits is bounded by the best of them; with ``alpha = 1`` hits are final at once.
    """

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.floor = math.inf
        self.best_inside: dict[str, float] = {}

    def update(self, floor: float, hits: Sequence[tuple[Node, float]]) -> None:
        """A (deeper) global search returned ``hits`` and left everything else below ``floor``."""
        self.floor = floor
        if self.alpha >= 1.0:
            return
        for node, s in hits:
            for a in (*node.ancestors, node.parent_uri or ""):
                if a and s > self.best_inside.get(a, NEG_INF):
                    self.best_inside[a] = s

    def own_bound(self, uri: str) -> float:
        return max(self.floor, self.best_inside.get(uri, NEG_INF))

    def upper(self, uri: str, score: Score | None, alpha: float) -> float:
        """Best final score any uncollected node below ``uri`` can reach.

        Propagation is a convex blend, so along any path the final score stays below the larger
        of the subtree's own-score bound and the first blend with the directory's score.
        """
        s = self.own_bound(uri)
        if score is None or alpha >= 1.0:
            return s
        return max(s, alpha * s + (1 - alpha) * score.vec)


@dataclass
class Convergence:
    """The seed's stop rule: the top-k unchanged for ``rounds`` consecutive rounds.

    Used on the rerank track (rerank scores have no bound) and when configured. Counts only
    once the top-k is full; rounds inside a hopped-to subtree do not spend the budget.
    """

    rounds: int
    prev: tuple[str, ...] | None = None
    unchanged: int = 0

    def update(self, top: tuple[str, ...], full: bool, in_hop: bool) -> bool:
        if top == self.prev and full:
            if not in_hop:
                self.unchanged += 1
            return self.unchanged >= self.rounds
        self.unchanged = 0
        self.prev = top
        return False


@dataclass
class Descent:
    """Everything one query's descent reads and writes."""

    limit: int
    alpha: float
    threshold: float
    track: Track
    collected: Collected
    frontier: Frontier
    convergence: Convergence
    use_bound: bool
    visited: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    """Directories read as a child of an opened directory (whether collected or not): a
    document's own node among them cannot come later (:meth:`Collected.passages_settled`)."""
    slot_wait: int = 0
    """Rounds to let pass before the stop rule by slots is asked again (it ranks every
    candidate: asked at its 1st, 3rd, 7th, 15th, ... chance while it fails)."""
    slot_every: int = 1
    trace: list[RoundTrace] = field(default_factory=list)
    fallback_reason: str | None = None
    rounds: int = 0
    stop_reason: str = "heap empty"
    bound_stopped: bool = False
    """The descent stopped because no directory left on the heap could enter its top
    ``limit`` candidates (:meth:`settled`), with directories left unopened."""

    def fall_back(self, reason: str | None) -> None:
        """The reranker failed: rank on the vector track from now on, for the whole query."""
        self.fallback_reason = reason
        self.track = Track.VECTOR
        self.frontier.rekey(self.track)

    def kth(self) -> float:
        """The k-th best slot's score on the active track (-inf while fewer are filled): what
        :meth:`settled` and :meth:`wants_deeper_global` compare, computed once per round."""
        return self.collected.kth_score(self.limit, self.track)

    def settled(self, kth: float | None = None) -> bool:
        """True when no unopened directory can change the top-k (vector track only).
        ``kth``: :meth:`kth`, when the caller has it."""
        if not (self.use_bound and self.track is Track.VECTOR):
            return False
        if kth is None:
            kth = self.kth()
        if kth == NEG_INF:
            return False
        return kth >= self.frontier.best_bound()

    def wants_deeper_global(self, kth: float | None = None) -> bool:
        """True when only a deeper global search can make progress: the top-k is not
        settled and nothing on the heap is known to beat the global floor (every directory
        left is bounded by the floor alone), so opening them would be a blind walk.
        ``kth``: :meth:`kth`, when the caller has it."""
        if not (self.use_bound and self.track is Track.VECTOR):
            return False
        floor = self.frontier.bounds.floor
        if floor == NEG_INF or (self.kth() if kth is None else kth) >= floor:
            return False
        return self.frontier.best_bound() <= floor + 1e-9

    def converged(self, in_hop: bool) -> bool:
        """The quiet-rounds rule, where the bound does not apply."""
        if self.use_bound and self.track is Track.VECTOR:
            return False
        top = self.collected.top_uris(self.limit, self.track)
        return self.convergence.update(top, len(top) >= self.limit, in_hop)

    def passes(self, score: Score) -> bool:
        if self.track is Track.VECTOR:  # (asked per candidate: no second call for the score)
            return score.vec > self.threshold
        return score.on(self.track) > self.threshold
