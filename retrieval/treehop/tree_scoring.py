"""Tree context scoring: a leaf's final score takes evidence from where it sits in the tree.

Why: with an exact global search, ranking leaves by their own score is what a flat store over
the same leaves returns, so the tree only earns its place if its structure changes the scores.
The structure carries evidence a leaf's own text lacks:

- **neighbours** (the previous and next leaf of the same parent: a chunk's adjacent chunks, a
  conversation turn's previous and next turn). A turn such as "Yes, last Saturday!" answers a
  question only together with the turn before it; a chunk's neighbours say what its section is
  about. ``N`` is the mean own score of the (one or two) neighbours. Between two chunks of a
  sectioned document the neighbour counts in proportion to the section they share
  (:func:`section_overlap` of their heading paths): a chunk that continues the leaf's section
  is full evidence, the next section of the page is partial evidence, and a chunk under another
  top-level heading is none (see :func:`section_overlap` for why).
- **the best sibling** (the cluster hypothesis: relevant leaves cluster under one parent). ``S``
  is the best own score among the leaf children of the leaf's parent, the leaf included, so a
  leaf under a parent that holds a strong match is lifted, and the strong match itself is not
  pushed down.
- **the parent's own score** (a chunk's file abstract, a file's directory abstract). ``P``.

The final score is a weighted mean, ``(own + wN*N + wP*P + wS*S) / (1 + wN + wP + wS)``: it
stays on the scale of the store's scores (a cosine, or the hybrid blend), so thresholds keep
their meaning, and with every weight at zero it is the own score (the flat ranking).

The weights are chosen once, jointly, on the dev halves of four different benchmark trees
(documentation pages, an abstract collection clustered into topics, conversation memories;
``bench/bench_tree.py``), never per set: see :class:`~treehop.config.RetrievalConfig`.

Everything here is vectorised over the scored siblings: one sort orders every family (the
only per-leaf Python work is its sort key), never a loop over candidate pairs.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from . import uri as urimod
from .descent import Candidate
from .ingest.summaries import FROM_CHILDREN, OVERVIEW_FROM
from .models import ContextType, Node
from .natural_order import name_key as _name_key
from .natural_order import one_shape as _one_shape
from .stores.base import ScoredNode, unique_inverse
from .text_tokenize import tokenize

_max = np.maximum.reduce
"""``a.max()`` of a 1-d array without the Python frame of numpy's ``_methods`` wrapper
(the same C reduction; ~2-3 us a call in a find, on cold caches)."""


@dataclass(frozen=True)
class ContextWeights:
    """How much each kind of tree evidence weighs against the leaf's own score (which weighs 1)."""

    neighbours: float = 0.0
    parent: float = 0.0
    best_sibling: float = 0.0

    @property
    def active(self) -> bool:
        return self.neighbours > 0 or self.parent > 0 or self.best_sibling > 0

    @property
    def total(self) -> float:
        return 1.0 + self.neighbours + self.parent + self.best_sibling


def sibling_order_key(hit: ScoredNode) -> tuple[int, tuple[int | str, ...]]:
    """Where a leaf sits among its siblings: chunks by their index, other leaves by name in
    natural order (``turn-00009`` before ``turn-00010``, ``d1-9.txt`` before ``d1-10.txt``),
    which is the order memory turns and numbered files are written in."""
    return order_key(hit.node.uri, hit.node.chunk_index)


def order_key(uri: str, chunk_index: int | None) -> tuple[int, tuple[int | str, ...]]:
    """:func:`sibling_order_key` from a leaf's URI and chunk index (no node needed)."""
    if chunk_index is not None:
        return (chunk_index, ())
    return _name_key(uri)


@dataclass(frozen=True)
class SiblingLayout:
    """Leaves laid out family by family (:func:`sibling_order`): ``order`` holds their
    positions, the first ``sizes[0]`` of them one parent's children in sibling order, and
    so on, parents in order of first appearance."""

    order: list[int]
    sizes: list[int]


def chunk_layout(codes: npt.NDArray[np.int64], chunks: npt.NDArray[np.int64]) -> SiblingLayout:
    """Chunks laid out family by family: one stable sort on (parent code, chunk index),
    families in code order (:func:`sibling_order` of families that are all chunks)."""
    _, family = unique_inverse(codes)
    order = np.lexsort((chunks, family))
    return SiblingLayout(order.tolist(), np.bincount(family).tolist())


def sibling_order(
    parent_of: Sequence[str],
    uris: Sequence[str],
    chunks: Sequence[int | None],
    parent_codes: npt.NDArray[np.int64] | None = None,
) -> SiblingLayout:
    """The leaves' positions laid out family by family (parents in order of first
    appearance), each family in sibling order: what :func:`context_columns` computes from
    :func:`order_key` (a stable sort on (parent, key)), for its ``order`` argument.

    Why: a family is mostly all chunks of one file, or leaves whose names have one shape
    (``turn-00007``, ``d1-09.txt``: the same text with digit runs of the same lengths at the
    same places). Chunks order by their index; names of one shape order as plain strings,
    because two of them first differ inside a text run of equal length or a digit run of
    equal length, where the natural order compares the same characters. Each family is
    sorted on its own, on plain keys: a find's families hold ~50-300 leaves, and one sort
    on (parent, natural key) tuples, with a regex split of every name no earlier query
    ordered, was the largest cost of its tree context. Other families use :func:`order_key`.

    ``parent_codes``: the parents as integers, equal where ``parent_of`` is equal
    (:attr:`~treehop.stores.base.HitColumns.parent_codes`); chunk families are then grouped
    on them with no URI hashed (their families come out in code order: which family comes
    first changes no score).
    """
    if chunks and None not in chunks:
        # every leaf a chunk (a documentation tree's families): one stable sort on (parent
        # code, chunk index) in numpy gives the per-family order below
        chunk = np.array(chunks, dtype=np.int64)
        if parent_codes is None:  # codes by first appearance
            codes = {p: k for k, p in enumerate(dict.fromkeys(parent_of))}
            parent_codes = np.fromiter(map(codes.__getitem__, parent_of), np.int64, len(parent_of))
        return chunk_layout(parent_codes, chunk)
    groups: dict[str, list[int]] = {}
    n = len(parent_of)
    if parent_of and isinstance(parent_of, list) and parent_of.count(parent_of[0]) == n:
        if isinstance(chunks, list) and chunks.count(None) == n:
            # one family of files (a folder: the common case), its names read once
            names = [u.rpartition("/")[2] for u in uris]
            if _one_shape(names):
                return SiblingLayout(sorted(range(n), key=names.__getitem__), [n])
        groups[parent_of[0]] = list(range(n))  # one family
    else:
        for i, p in enumerate(parent_of):
            groups.setdefault(p, []).append(i)
    out: list[int] = []
    sizes: list[int] = []
    for members in groups.values():
        sizes.append(len(members))
        picked = [chunks[i] for i in members]
        keys: list[Any]
        if None not in picked:
            keys = picked
        else:
            names = [uris[i].rpartition("/")[2] for i in members]
            if picked.count(None) == len(picked) and _one_shape(names):
                keys = names
            else:
                keys = [order_key(uris[i], chunks[i]) for i in members]
        key = cast("Callable[[int], Any]", keys.__getitem__)
        out.extend([members[j] for j in sorted(range(len(members)), key=key)])
    return SiblingLayout(out, sizes)


SectionCodes = Callable[
    [npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]
]
"""Leaves' heading paths as codes into a table (-1: none), asked with leaf positions."""


@dataclass
class ContextScored:
    """A leaf with its own score and the tree evidence that went into its final score."""

    hit: ScoredNode
    own: float
    neighbours: float
    parent: float
    best_sibling: float
    final: float


HEADING_PATH = "heading_path"
"""The chunk metadata key that holds a chunk's heading path (written at ingest)."""


def section_of(node: Node) -> tuple[str, ...] | None:
    """A chunk's heading path (its section and the sections above it), or ``None`` for a leaf
    that is not a chunk of a sectioned document (a memory turn, a whole file): its neighbours
    count in full."""
    if node.chunk_index is None:
        return None
    path = node.metadata.get(HEADING_PATH)
    return tuple(path) if isinstance(path, list) else None


def query_terms(query: str) -> frozenset[str]:
    """The distinct index terms of a query (:func:`~treehop.text_tokenize.tokenize`: folded,
    stemmed, stopwords out), which :func:`heading_match` compares with a section heading."""
    return frozenset(tokenize(query))


HEADING_CHARS = 256
"""A heading is matched on its first this many characters: real headings are a few words, and
a cached heading must stay small whatever a document's markup made of it (a malformed page
can turn a whole paragraph into a heading line)."""


@functools.lru_cache(maxsize=1 << 14)
def _heading_terms(heading: str) -> frozenset[str]:
    """A heading's distinct index terms, kept: every find asks again for the headings of the
    sections it ranks (a bounded cache of small sets, keyed by at most
    :data:`HEADING_CHARS` characters)."""
    return frozenset(tokenize(heading))


def heading_terms(path: tuple[str, ...] | None) -> frozenset[str]:
    """The index terms of a chunk's own (last) heading in ``path`` (:func:`section_of`), read
    on its first :data:`HEADING_CHARS` characters; empty for a leaf without a heading path.
    What :func:`heading_match` compares with the query's terms."""
    if not path or not isinstance(path[-1], str):  # (a path written by hand may hold any
        return frozenset()  # JSON value: only a string is a heading)
    return _heading_terms(path[-1][:HEADING_CHARS])


def heading_match(terms: frozenset[str], path: tuple[str, ...] | None) -> float:
    """How well a query's terms name a chunk's own section: the cosine of the two term sets
    (``|Q & H| / sqrt(|Q| |H|)``, 1 when the query is the heading) between ``terms``
    (:func:`query_terms`) and the last heading of ``path`` (:func:`section_of`); 0 for a
    leaf without a heading path.

    Why: a chunk's text starts with its heading path, but inside a long chunk the heading's
    few words weigh little against the body's, so a query that names a section (a heading,
    a question about it) ranked another page's chunk that uses the same words in passing
    first. The heading is the chunk's place in its document's tree; scoring it as a field of
    its own is the tree's evidence (BM25F's title field does this for flat pages). Binary
    terms, no document frequencies: every store can answer it, and on the dev halves
    IDF-weighted terms did no better (``bench/README.md``, "Section headings")."""
    heading = heading_terms(path)
    if not heading or not terms:
        return 0.0
    return len(terms & heading) / math.sqrt(len(terms) * len(heading))


def section_overlap(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> float:
    """:func:`_section_overlap`, cached; a path that metadata written by hand filled with
    lists or objects (unhashable: it made every find over the chunk raise TypeError) is
    compared without the cache."""
    try:
        return _section_overlap(a, b)
    except TypeError:
        return _section_overlap.__wrapped__(a, b)


@functools.lru_cache(maxsize=1 << 14)
def _section_overlap(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> float:
    """How much of its section a chunk shares with its neighbour: 1 for the same heading path
    (a section split by size: the neighbour continues the leaf's text), else the share of the
    longer path that both have in common (``Gunicorn > Running`` and ``Gunicorn > Async with
    gevent`` share 1 of 2 headings: 0.5), 0 under different top-level headings; 1 when either
    side has no heading path (turns, whole files: neighbours as before).

    Why: adjacent chunks of one section are one passage, so the neighbour's score is evidence
    for the leaf; the next *section* of a page is about something else. A query that names
    one section (a heading, a sentence of it) matches that chunk alone, and averaging in its
    unrelated neighbour sections ranked it below chunks of pages that are about the query's
    topic throughout: on the Flask docs' dev half the neighbour term cost 0.021 nDCG@10 this
    way. Weighting by the shared heading path kept the neighbour term's gain on topic queries
    (anchor texts) and recovered most of that loss; the weight is the path overlap itself,
    not a fitted constant (``bench/replay_tree_methods.py``, ``bench/README.md``)."""
    if a is None or b is None or a == b:
        return 1.0
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    return common / max(len(a), len(b))


def context_scores(
    leaves: Sequence[ScoredNode],
    parent_scores: dict[str, float],
    weights: ContextWeights,
    keep: Set[str] | None = None,
    sections: bool = False,
) -> list[ContextScored]:
    """Final scores of ``leaves`` from their own scores and their siblings' and parent's.

    ``keep``: return only the leaves with these URIs and their previous and next siblings
    (every leaf still informs its siblings' scores); ``None`` returns every leaf.

    ``leaves`` must hold *every* scored leaf child of each parent involved (the siblings are
    read from this list); ``parent_scores`` holds the own score of each parent that was scored
    (a parent missing from it contributes 0, as an unscored node would on a cosine scale).
    ``sections``: weight each neighbour by :func:`section_overlap` of the heading paths.
    """
    if not leaves:
        return []
    cols = context_columns(
        [h.node.parent_uri or "" for h in leaves],
        list(map(sibling_order_key, leaves)),
        [h.score for h in leaves],
        parent_scores,
        weights,
        None if keep is None else [h.node.uri in keep for h in leaves],
        (lambda i: section_of(leaves[i].node)) if sections else None,
    )
    return list(
        map(
            ContextScored,
            [leaves[i] for i in cols.picked],
            cols.own,
            cols.neighbours,
            cols.parent,
            cols.best_sibling,
            cols.final,
        )
    )


@dataclass
class ContextColumns:
    """:func:`context_columns`' answer: the picked leaves' positions and their scores. The
    evidence terms (neighbours, parent, best sibling) are read into lists only when asked:
    the retriever reads the own and final scores alone."""

    picked: list[int]
    own: list[float]
    final: list[float]
    terms: tuple[npt.NDArray[np.float64], ...] = ()
    """Every leaf's neighbour, parent and best-sibling evidence (empty: no leaf, or not
    built yet: :attr:`lazy_terms`)."""
    at: npt.NDArray[np.int64] | None = None
    """``picked`` as an array."""
    lazy_terms: Callable[[], tuple[npt.NDArray[np.float64], ...]] | None = None
    """Builds :attr:`terms` at their first read (the retriever reads none of them)."""

    def _term(self, k: int) -> list[float]:
        if self.at is None:
            return []
        if not self.terms and self.lazy_terms is not None:
            self.terms = self.lazy_terms()
        out: list[float] = self.terms[k][self.at].tolist()
        return out

    @property
    def neighbours(self) -> list[float]:
        return self._term(0)

    @property
    def parent(self) -> list[float]:
        return self._term(1)

    @property
    def best_sibling(self) -> list[float]:
        return self._term(2)


def context_columns(
    parent_of: Sequence[str],
    keys: Sequence[tuple[int, tuple[int | str, ...]]] | None,
    scores: Sequence[float] | npt.NDArray[np.floating[Any]],
    parent_scores: dict[str, float],
    weights: ContextWeights,
    keep: Sequence[bool] | npt.NDArray[np.bool_] | None = None,
    sections: Callable[[int], tuple[str, ...] | None] | None = None,
    laid_out: SiblingLayout | None = None,
    section_codes: SectionCodes | None = None,
) -> ContextColumns:
    """:func:`context_scores` on columns: leaf ``i`` has parent ``parent_of[i]`` (``""``:
    none), sibling order key ``keys[i]`` (:func:`order_key`) and own score ``scores[i]``;
    ``keep[i]`` marks the leaves asked about; ``sections(i)`` is its heading path
    (:func:`section_of`; ``sections=None``: every neighbour counts in full). It is asked only
    for the leaves asked about and their neighbours, so that the caller can read the paths
    lazily (a family may hold hundreds of chunks of which a few are ranked).
    ``laid_out``: the leaves already laid out in that order (:func:`sibling_order`); ``keys``
    is then not read (``None``).
    ``scores`` and ``keep`` may be numpy arrays (a family read as arrays: no list built).
    ``section_codes``: the heading paths as integer codes, in place of ``sections``
    (:attr:`~treehop.stores.base.HitColumns.heading_codes`, asked with the leaves'
    positions): two chunks with one code continue one section, and only pairs with two
    codes compare their paths (most neighbouring chunks share a section).
    The retriever calls this on a store's columnar hits, so that no node is built for a leaf
    that only informs its siblings."""
    n = len(parent_of)
    if not n:
        return ContextColumns([], [], [])
    if laid_out is not None:
        return _laid_families(
            laid_out, parent_of, scores, parent_scores, weights, keep, sections, section_codes
        )
    # Parents as integer codes (in order of first appearance); one stable sort by (parent,
    # sibling order) lays every family out contiguously, in the order a per-parent sort
    # would give. (Python lists are built once and handed to numpy whole: per-element numpy
    # access costs more than the math.)
    # (with ``laid_out`` the leaves were answered above: here the keys order them)
    assert keys is not None, "context_columns needs keys or laid_out"
    codes = {p: i for i, p in enumerate(dict.fromkeys(parent_of))}
    code_l = [codes[p] for p in parent_of]
    code = np.array(code_l, dtype=np.int64)
    sort_keys = list(zip(code_l, keys, strict=True))
    order = np.array(sorted(range(n), key=sort_keys.__getitem__), dtype=np.int64)
    families = list(codes)
    laid_code = code[order]
    # ``laid_code``: the codes in ``order`` (sorted); each pair of neighbouring siblings is
    # (``pair_first[j]``, ``pair_second[j]``), computed once for the links and the sections
    own = np.array(scores, dtype=np.float64)
    prev = np.full(n, -1, dtype=np.int64)
    nxt = np.full(n, -1, dtype=np.int64)
    if len(families) == 1:
        # one family (the common case: the best leaves share a folder): every leaf is
        # linked to the next, and its best and parent scores are one value each
        pair_first, pair_second = order[:-1], order[1:]
        best = np.full(n, own.max())
        par = np.full(n, parent_scores.get(families[0], 0.0), dtype=np.float64)
    else:
        same = laid_code[1:] == laid_code[:-1]
        pair_first, pair_second = order[:-1][same], order[1:][same]
        # (the families lie in ``order`` one after another, in code order: one reduction
        # each)
        heads = np.flatnonzero(~same) + 1
        best_of = np.maximum.reduceat(own[order], np.concatenate([[0], heads]))
        best = best_of[code]
        par_of = np.fromiter(
            (parent_scores.get(p, 0.0) for p in families), np.float64, len(families)
        )
        par = par_of[code]
    prev[pair_second] = pair_first
    nxt[pair_first] = pair_second
    has_p, has_n = prev >= 0, nxt >= 0
    count = has_p.astype(np.float64) + has_n
    # The leaves returned: those asked about and their neighbours.
    near = np.ones(n, dtype=bool) if keep is None else np.array(keep, dtype=bool)
    if keep is not None:
        asked = near.copy()
        near[prev[asked & has_p]] = True
        near[nxt[asked & has_n]] = True
    # Each neighbour's weight: 1, or the share of the leaf's section it continues (read only
    # for the pairs that touch a returned leaf: no other final score is read).
    w_prev, w_next = has_p.astype(np.float64), has_n.astype(np.float64)
    if section_codes is not None:
        first, second = pair_first, pair_second
        touch = near[first] | near[second]
        first, second = first[touch], second[touch]
        need = np.concatenate([first, second])  # (a leaf twice is asked twice: no sort)
        got, table = section_codes(need)
        code_of = np.full(n, -1, dtype=np.int64)
        code_of[need] = got
        a, b = code_of[first], code_of[second]
        shared = np.ones(len(first), dtype=np.float64)
        # (no path on either side, or one path: 1, as :func:`section_overlap` says)
        for k in np.flatnonzero((a != b) & (a >= 0) & (b >= 0)).tolist():
            shared[k] = section_overlap(table[a[k]], table[b[k]])
        w_next[first] = shared
        w_prev[second] = shared
    elif sections is not None:
        first, second = pair_first, pair_second
        touch = near[first] | near[second]
        first, second = first[touch], second[touch]
        path = functools.lru_cache(maxsize=None)(sections)
        shared = np.fromiter(
            (
                section_overlap(path(i), path(j))
                for i, j in zip(first.tolist(), second.tolist(), strict=True)
            ),
            np.float64,
            len(first),
        )
        w_next[first] = shared
        w_prev[second] = shared
    weight = w_prev + w_next
    total = w_prev * np.where(has_p, own[prev], 0.0) + w_next * np.where(has_n, own[nxt], 0.0)
    # A leaf without neighbours (an only child) is its own context; one whose neighbours are
    # other sections has its neighbour term scaled down by the share they continue.
    neigh = np.where(weight > 0, total / np.maximum(weight, 1e-12), own)
    share = np.where(count > 0, weight / np.maximum(count, 1.0), 1.0)
    final = _blend(own, neigh, par, best, weights, share)
    picked = np.flatnonzero(near)
    return ContextColumns(
        picked.tolist(),
        own[picked].tolist(),
        final[picked].tolist(),
        (neigh, par, best),
        picked,
    )


def _laid_families(
    laid_out: SiblingLayout,
    parent_of: Sequence[str],
    scores: Sequence[float] | npt.NDArray[np.floating[Any]],
    parent_scores: dict[str, float],
    weights: ContextWeights,
    keep: Sequence[bool] | npt.NDArray[np.bool_] | None,
    sections: Callable[[int], tuple[str, ...] | None] | None = None,
    section_codes: SectionCodes | None = None,
) -> ContextColumns:
    """:func:`context_columns` of leaves already laid out: the same element-wise arithmetic
    on the same values, done in sibling order, where a leaf's neighbours are the previous
    and the next element of its family (slices and one mask, no gather through link
    arrays), then put back in the leaves' order; the heading paths are asked for the same
    pairs, in the same order.

    Why: a find's tree context is one to a few families (a folder's files, a few files'
    chunks), and the link arrays, masks and gathers of the keyed path were most of its
    cost."""
    laid, sizes = laid_out.order, laid_out.sizes
    n = len(laid)
    order = np.array(laid, dtype=np.int64)
    own = np.array(scores, dtype=np.float64)
    one = len(sizes) == 1
    sectioned = section_codes is not None or sections is not None
    if one and not sectioned:  # (a folder of files, a session of turns: the common case)
        return _one_plain_family(order, own, parent_of, parent_scores, weights, keep)
    own_l = own[order]
    if one:  # (one family: every leaf linked to the next; one best and one parent score)
        same = np.ones(n - 1, dtype=bool)
        best_l = np.full(n, float(own.max()))
        par_l = np.full(n, float(parent_scores.get(parent_of[laid[0]], 0.0)))
    else:
        laid_code = np.repeat(np.arange(len(sizes)), sizes)
        same = laid_code[1:] == laid_code[:-1]
        heads = np.flatnonzero(~same) + 1
        best_of = np.maximum.reduceat(own_l, np.concatenate([[0], heads]))
        best_l = best_of[laid_code]
        starts = itertools.accumulate(sizes[:-1], initial=0)
        families = [parent_of[laid[a]] for a in starts]
        par_of = np.fromiter(
            (parent_scores.get(p, 0.0) for p in families), np.float64, len(families)
        )
        par_l = par_of[laid_code]
    # The leaves returned: those asked about and their neighbours.
    if keep is None:
        near_l = np.ones(n, dtype=bool)
    else:
        asked = np.array(keep, dtype=bool)[order]
        near_l = asked.copy()
        near_l[:-1] |= asked[1:] & same  # (the previous leaf of an asked one)
        near_l[1:] |= asked[:-1] & same  # (the next one)
    # Pair ``j`` (where ``same[j]``) links leaves ``j`` and ``j + 1`` in sibling order: its
    # weight is 1, or the share of the section it continues where it touches a returned
    # leaf.
    w_next = np.zeros(n, dtype=np.float64)
    w_next[:-1] = same
    w_prev = np.zeros(n, dtype=np.float64)
    w_prev[1:] = same
    count = w_prev + w_next  # (before any section weight: the neighbours each leaf has)
    if sectioned:  # (an only child or no pair near a returned leaf: asked for none)
        pairs = np.flatnonzero(same)
        pairs = pairs[near_l[pairs] | near_l[pairs + 1]]
        first, second = order[pairs], order[pairs + 1]
        shared = np.ones(pairs.size, dtype=np.float64)
        if section_codes is not None:
            need = np.concatenate([first, second])  # (the keyed path's request)
            got, table = section_codes(need)
            code_of = np.full(n, -1, dtype=np.int64)
            code_of[need] = got
            a, b = code_of[first], code_of[second]
            for k in np.flatnonzero((a != b) & (a >= 0) & (b >= 0)).tolist():
                shared[k] = section_overlap(table[a[k]], table[b[k]])
        else:
            assert sections is not None
            path = functools.lru_cache(maxsize=None)(sections)
            shared = np.fromiter(
                (
                    section_overlap(path(i), path(j))
                    for i, j in zip(first.tolist(), second.tolist(), strict=True)
                ),
                np.float64,
                pairs.size,
            )
        w_next[pairs] = shared
        w_prev[pairs + 1] = shared
    # the keyed path's formulas, on the pairs' weights in sibling order
    before = np.zeros(n, dtype=np.float64)
    before[1:] = np.where(same, own_l[:-1], 0.0)
    after = np.zeros(n, dtype=np.float64)
    after[:-1] = np.where(same, own_l[1:], 0.0)
    weight = w_prev + w_next
    total = w_prev * before + w_next * after
    neigh_l = np.where(weight > 0, total / np.maximum(weight, 1e-12), own_l)
    share = np.where(count > 0, weight / np.maximum(count, 1.0), 1.0)
    final_l = _blend(own_l, neigh_l, par_l, best_l, weights, share)
    final = np.empty(n, dtype=np.float64)
    final[order] = final_l
    neigh = np.empty(n, dtype=np.float64)
    neigh[order] = neigh_l
    if one:
        par, best = par_l, best_l  # (one value each: no order to restore)
    else:
        par = np.empty(n, dtype=np.float64)
        par[order] = par_l
        best = np.empty(n, dtype=np.float64)
        best[order] = best_l
    if keep is None:
        picked = np.arange(n, dtype=np.int64)
    else:
        near = np.empty(n, dtype=bool)
        near[order] = near_l
        picked = near.nonzero()[0]
    return ContextColumns(
        picked.tolist(),
        own[picked].tolist(),
        final[picked].tolist(),
        (neigh, par, best),
        picked,
    )


def _one_plain_family(
    order: npt.NDArray[np.int64],
    own: npt.NDArray[np.float64],
    parent_of: Sequence[str],
    parent_scores: dict[str, float],
    weights: ContextWeights,
    keep: Sequence[bool] | npt.NDArray[np.bool_] | None,
) -> ContextColumns:
    """:func:`_laid_families` of one family without sections (a folder of files, a session
    of turns: the tree context of most finds), leaves laid out at ``order``: the keyed
    path's terms with every weight 1. An inner leaf's neighbour term is
    ``(1 * prev + 1 * next) / 2``, an end's ``(0 * 0 + 1 * other) / 1`` (``+ 0.0``: the
    same sum, which turns a -0.0 into 0.0), an only child's its own score; the section
    share is 1 for each, so the blend's neighbour weight is ``neighbours * 1.0``. The
    family's one parent score and one best own score enter the blend as numbers (each
    element gets ``+ w * p``, the same double as from an array that repeats ``p``), every
    pair links (no pair mask), and the evidence terms are built only if read
    (:attr:`ContextColumns.lazy_terms`).

    Why: in a find each numpy call here costs ~1 us (cold caches; the arithmetic on ~50
    floats is a fraction of that), and the arrays that repeat one value, the all-true pair
    mask and the terms nobody reads were 9 of ~30 calls: ~8 us of a default find at 100k
    leaves (``bench/README.md``, "Issue 35 round 15")."""
    n = int(order.size)
    own_l = own[order]
    best = float(_max(own))
    par = float(parent_scores.get(parent_of[int(order[0])], 0.0))
    neigh_l = own_l.copy()
    if n > 1:
        neigh_l[0] = own_l[1] + 0.0
        neigh_l[-1] = own_l[-2] + 0.0
        mid = neigh_l[1:-1]
        np.add(own_l[:-2], own_l[2:], out=mid)
        mid /= 2.0
    wn = weights.neighbours * 1.0
    final_l = own_l + wn * neigh_l
    final_l += weights.parent * par
    final_l += weights.best_sibling * best
    final_l /= weights.total - weights.neighbours + wn
    final = np.empty(n, dtype=np.float64)
    final[order] = final_l
    if keep is None:
        picked = np.arange(n, dtype=np.int64)
    else:  # (the leaves asked about and their previous and next siblings)
        asked = np.array(keep, dtype=bool)[order]
        near_l = asked.copy()
        near_l[:-1] |= asked[1:]
        near_l[1:] |= asked[:-1]
        near = np.empty(n, dtype=bool)
        near[order] = near_l
        picked = near.nonzero()[0]

    def terms() -> tuple[npt.NDArray[np.float64], ...]:
        neigh = np.empty(n, dtype=np.float64)
        neigh[order] = neigh_l
        return neigh, np.full(n, par), np.full(n, best)

    return ContextColumns(
        picked.tolist(),
        own[picked].tolist(),
        final[picked].tolist(),
        at=picked,
        lazy_terms=terms,
    )


def _blend(
    own: npt.NDArray[np.float64],
    neigh: npt.NDArray[np.float64],
    par: npt.NDArray[np.float64],
    best: npt.NDArray[np.float64],
    w: ContextWeights,
    share: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """The weighted mean; ``share`` scales the neighbour weight per leaf (the weights of the
    mean shrink with it, so the score stays on the store's scale)."""
    if share is None:
        out = own + w.neighbours * neigh + w.parent * par + w.best_sibling * best
        return out / w.total
    wn = w.neighbours * share
    out = own + wn * neigh + w.parent * par + w.best_sibling * best
    return out / (w.total - w.neighbours + wn)


def is_result_unit(node: Node) -> bool:
    """Whether ``node`` may take a result slot of its own under ``include_directories=None``.

    Leaves always; a non-leaf only when it holds content of its own:

    - a skill (a directory right below the skills root: the folder *is* the skill);
    - a directory whose overview was written from its own page (README, index, overview,
      about: ``metadata["overview_from"]`` names it, recorded at ingest).

    Every other non-leaf's overview is generated from what is below it (the extractive summary
    of a plain folder, a topic cluster, an implicit ancestor, a memory session, a chunked
    file's title and outline): a routing aid whose content is already in its leaves, so it
    routes the descent and informs its leaves' context scores but gives no slot of its own
    (a chunked file is still one slot: its best chunk, the others collapsed into it). On the
    Cranfield topic tree such slots cost 0.01-0.02 nDCG@10 (``bench/bench_tree.py``, rows
    ``find`` vs ``find-dirs``); a skill's folder is the answer itself.
    """
    if node.is_leaf:
        return True
    if node.context_type is ContextType.SKILL:
        parent = node.parent_uri
        if parent is not None and urimod.parent_of(parent) is None:
            return True
    source = node.metadata.get(OVERVIEW_FROM)
    return isinstance(source, str) and source != FROM_CHILDREN


def represented_directories(candidates: Iterable[Candidate]) -> dict[str, float]:
    """Directory candidates that a leaf below them already represents: their own score does
    not beat the best own score of a collected leaf in their subtree.

    Why: a directory slot is a pointer the user must still open; when a leaf inside it is at
    least as relevant, the leaf is the better answer and the directory only takes a slot (on
    the Cranfield topic tree directory slots cost 0.03-0.05 nDCG@10). A directory that beats
    everything collected below it (a skill's folder, a section no single page answers) keeps
    its slot. Own scores on both sides: a leaf's final score is a blend with its context, on
    which a directory (ranked by its own score) would win too easily.

    Returns each represented directory with the best final score of a collected leaf below it
    (where ``include_directories=True`` keeps the directory, it ranks just after that leaf).
    """
    cands = list(candidates)
    dirs = {c.uri for c in cands if not c.is_leaf}
    if not dirs:  # the common case (leaves only): nothing to settle
        return {}
    best_below: dict[str, float] = {}
    best_final: dict[str, float] = {}
    for c in cands:
        if not c.is_leaf:
            continue
        for a in (*c.node.ancestors, c.parent_uri or ""):
            if a not in dirs:  # only directory candidates are asked about
                continue
            if a and c.own.vec > best_below.get(a, -np.inf):
                best_below[a] = c.own.vec
            if a and c.final.vec > best_final.get(a, -np.inf):
                best_final[a] = c.final.vec
    return {
        c.uri: best_final[c.uri]
        for c in cands
        if not c.is_leaf and c.own.vec <= best_below.get(c.uri, -np.inf)
    }
