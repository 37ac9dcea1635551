"""The tree context's family searches of many queries at once (``search_arrays_many``).

A family search (one query's ~50-500 rows: the leaves and directories below the parents of
its pool) is a small exact search whose cost is a dozen numpy calls on small arrays, each
~1-5 us of Python and dispatch, not arithmetic. ``find_many`` runs the tree context of a
batch's queries as one phase (:mod:`treehop.batched_context`), so the calls that do not
depend on a query's text run once for the batch: one gather of every query's candidate
vectors and one row-wise ``einsum`` (the kernel of :func:`.layout._matvec`, bit for bit),
one hybrid blend over every blended row, one ``lexsort`` that orders every query's hits.
Per query stay its scope (rows and masks, read from the snapshot's caches), its BM25
scores and scale (its own text) and its :class:`~treehop.stores.base.HitArrays` (the
gathers of its hits' parents, chunks and leaf flags). Two more things the tree context
reads of every query come out of the batch in one pass each: the subtree rows of every
parent the scopes name (:func:`leaf_family_rows_many`, kept in the snapshot's subtree
cache) and, for a family of whole files, the columns of its leaves (``leaf_columns``:
:func:`_leaf_columns`). A small search whose every row the query's global step scored
already (``find_many``'s hybrid step keeps each query's scores, as a lone find's step does)
reads them instead (:func:`_kept_found`): 90% of the family searches at 100k leaves, the
batch's thread CPU 0.95x (bench/README.md, "Issue 35 round 13").

Each answer is the one :meth:`_SearchPaths.search_arrays` gives the query alone: the same
rows, order and scores to the bit (``tests/test_find_many_phases.py``). A query whose
search would not be a small exact one (no structural scope, a scope the graph answers, a
candidate set wide enough for the whole-index product, or more candidates than its limit,
where the pick of the best would cut at a tie) goes the one-query way, on the same
snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...errors import InvalidQueryError
from ...lexical import validate_dense_weight
from ..base import (
    HitArrays,
    HitColumns,
    Scope,
    Vector,
    build_frozen,
    check_search_args,
)
from . import search_paths as _paths
from .layout import _SUBTREE_KEPT, F32, IntArray, _hashes
from .snapshot import _uri_rank

if TYPE_CHECKING:
    from ...lexical import LexicalIndex
    from .search_paths import _Found, _SearchPaths
    from .snapshot import _Snap


class _Small:
    """One query's small exact search, between the per-query scope and the batch's
    arithmetic: its candidate rows, query row, text (``None``: not blended), weight,
    limit and match mask."""

    __slots__ = ("cand", "limit", "matches", "q", "text", "weight")

    def __init__(
        self,
        cand: IntArray,
        q: F32,
        text: str | None,
        weight: float,
        limit: int,
        matches: np.ndarray | None,
    ) -> None:
        self.cand, self.q, self.text, self.weight = cand, q, text, weight
        self.limit, self.matches = limit, matches


def search_arrays_many(
    paths: _SearchPaths,
    vectors: Sequence[Vector],
    scopes: Sequence[Scope],
    limits: Sequence[int],
    query_texts: Sequence[str | None],
    dense_weights: Sequence[float],
    leaf_columns: Sequence[int] | None = None,
) -> list[HitArrays]:
    """:meth:`_SearchPaths.search_arrays` of each query (its vector, scope, limit, text and
    dense weight), in order, from one snapshot. Every argument is checked before any
    search (an :class:`~treehop.errors.InvalidQueryError` names the first bad query).

    ``leaf_columns``: per query, how many of its best leaves the caller will read as
    columns (``HitArrays.columns`` of their positions) when its hits hold no chunk (the
    tree context's family of whole files reads every leaf's name); those columns are built
    for every such answer in one pass (:func:`_leaf_columns`) and handed out by that
    ``columns`` call (once), equal to the ones it builds alone."""
    n = len(vectors)
    if not (len(scopes) == len(limits) == len(query_texts) == len(dense_weights) == n):
        raise InvalidQueryError("search_arrays_many needs one scope, limit, text, weight a query")
    if leaf_columns is not None and len(leaf_columns) != n:
        raise InvalidQueryError("leaf_columns needs one count a query")
    s = paths._snap
    qs: list[F32] = []
    for i in range(n):
        check_search_args(limits[i], dense_weights[i])
        q = np.asarray(vectors[i], dtype=np.float32).reshape(-1)
        if s.live and q.shape[0] != s.dim:
            raise InvalidQueryError(
                f"query {i}: vector has dimension {q.shape[0]}, index has {s.dim}"
            )
        qs.append(q)
    if s.live:
        _keep_subtrees(paths, s, scopes)
    found: list[_Found | None] = [None] * n
    ordered = [False] * n  # (the small searches' hits come back ordered)
    small: dict[int, _Small] = {}
    read: dict[int, _Found] = {}  # (the small searches answered from kept scores)
    lexical: LexicalIndex | None = None
    for i in range(n):
        if not s.live:
            continue
        text, weight, limit = query_texts[i], dense_weights[i], limits[i]
        got = _small_search(paths, s, qs[i], scopes[i], limit, text, weight)
        if got is None:
            continue
        if isinstance(got, _Small):
            kept = _kept_found(s, got, text, weight)
            if kept is not None:
                found[i] = kept
                ordered[i] = True
                if leaf_columns is not None:
                    read[i] = kept
                continue
            if got.text is not None and lexical is None:
                lexical = paths.lexical
            small[i] = got
        else:
            found[i] = got
    built: dict[int, tuple[IntArray, HitColumns]] = {}
    scored: dict[int, _Found] = _scored(paths, s, small, lexical) if small else {}
    for i, f in scored.items():
        found[i], ordered[i] = f, True
    if leaf_columns is not None and (scored or read):
        built = _leaf_columns(paths, s, {**read, **scored}, leaf_columns)
    return [
        paths._found_arrays(s, f, ordered=o, prebuilt=built.get(i))
        for i, (f, o) in enumerate(zip(found, ordered, strict=True))
    ]


def _keep_subtrees(paths: _SearchPaths, s: _Snap, scopes: Sequence[Scope]) -> None:
    """Every subtree the scopes name that the snapshot's subtree cache lacks (what
    :meth:`_SearchPaths._subtree_rows` keeps), found for all of them at once where the
    parent links prove the answer (:func:`leaf_family_rows_many`); the rest are left to
    :meth:`_SearchPaths._subtree_rows` itself, which the searches then ask."""
    kept: dict[str, IntArray] = s.cache.setdefault(("subtree",), {})
    wanted = list(
        dict.fromkeys(
            t
            for scope in scopes
            if scope.parent_uri is None and ("subtrees", scope.subtrees) not in s.cache
            for t in scope.subtrees
            if t not in kept
        )
    )
    if len(wanted) < 2:
        return
    for uri, rows in zip(wanted, leaf_family_rows_many(s, wanted), strict=True):
        if rows is not None:
            if len(kept) >= _SUBTREE_KEPT:  # (the bound of ``_subtree_rows``)
                kept.clear()
            kept[uri] = rows


def leaf_family_rows_many(s: _Snap, uris: Sequence[str]) -> list[IntArray | None]:
    """:func:`.snapshot._leaf_family_rows` of each of ``uris`` (``None`` also where the URI
    is not stored): the same rows in the same order, or ``None`` where one call would
    give ``None``, with the arithmetic of every URI done at once: one lookup, one
    ``searchsorted`` pair over the parent hashes, one gather of every window's rows with
    their links and leaf flags, one decode of every window's first, last and next URI.
    Only the prefix checks on those three URIs stay per URI."""
    n = len(uris)
    out: list[IntArray | None] = [None] * n
    if not n or not s.by_uri.size:
        return out
    own = s.lookup(list(uris))
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = _hashes(uris)
    m = np.searchsorted(keys, h, side="right") - np.searchsorted(keys, h, side="left")
    rank = _uri_rank(s)
    k = np.where(own >= 0, rank[np.maximum(own, 0)], -1).astype(np.int64)
    end = k + 1 + m
    size = int(s.by_uri.size)
    ok = (own >= 0) & (m > 0) & (k >= 0) & (end <= size)
    at = np.flatnonzero(ok)
    if not at.size:
        return out
    lens = m[at]
    seg = np.repeat(np.arange(at.size), lens)
    starts = np.cumsum(lens) - lens
    window = s.by_uri[np.repeat(k[at] + 1, lens) + (np.arange(seg.size) - starts[seg])]
    linked = (s.parent_row[window] == own[at][seg]) & s.cols["leaf"][window].astype(bool)
    bad = np.bincount(seg[~linked], minlength=at.size) > 0
    at, lens, starts = at[~bad], lens[~bad], starts[~bad]
    if not at.size:
        return out
    ends = end[at]
    later = ends < size
    firsts = s.by_uri[k[at] + 1]
    lasts = s.by_uri[ends - 1]
    afters = s.by_uri[ends[later]]
    names = s.uris_of(np.concatenate([firsts, lasts, afters]))
    a = at.size
    first_l, last_l = names[:a], names[a : 2 * a]
    after_of = dict(zip(np.flatnonzero(later).tolist(), names[2 * a :], strict=True))
    for j, i in enumerate(at.tolist()):
        uri = uris[i]
        first, last = first_l[j], last_l[j]
        slash, hash_ = uri + "/", uri + "#"
        if first.startswith(slash) and last.startswith(slash):
            sep = slash
        elif first.startswith(hash_) and last.startswith(hash_):
            sep = hash_
        else:
            continue
        after = after_of.get(j)
        if after is not None:
            if after.startswith(sep):
                continue
            if sep == hash_ and not (after > slash and not after.startswith(slash)):
                continue
        lo = int(k[i])
        out[i] = s.by_uri[lo : lo + 1 + int(m[i])]
    return out


def _leaf_columns(
    paths: _SearchPaths,
    s: _Snap,
    scored: dict[int, _Found],
    counts: Sequence[int],
) -> dict[int, tuple[IntArray, HitColumns]]:
    """The columns of the best ``counts[i]`` leaves of each small answer ``i`` whose hits
    hold no chunk (by query: those positions and their columns), each equal to
    ``_SearchPaths._columns(..., ordered=True)`` of them field by field: every answer's
    rows, parents, URIs, chunks, flags and scores read in one gather each, its parent
    codes (the rank of each parent among the answer's distinct parents) from one
    ``np.unique`` of (answer, parent) keys. An answer with a row whose parent is not
    stored is left to its own call."""

    picks: list[tuple[int, IntArray, IntArray]] = []  # (query, positions, their rows)
    for i, (cand, top, _, _, _, _, _) in scored.items():
        rows = cand[top]
        leaf = s.cols["leaf"][rows]
        pos = np.flatnonzero(leaf)[: max(counts[i], 0)]
        if not pos.size or int(s.cols["chunk"][rows[pos]].max()) >= 0:
            continue  # (a family of chunks stays arrays: no columns of every leaf)
        picks.append((i, pos, rows[pos]))
    if not picks:
        return {}
    sizes = np.fromiter((p[2].size for p in picks), np.int64, len(picks))
    rows = np.concatenate([p[2] for p in picks])
    parent = s.parent_row[rows]
    if not bool((parent >= 0).all()):
        linked = np.bincount(
            np.repeat(np.arange(len(picks)), sizes)[parent < 0], minlength=len(picks)
        )
        keep = np.flatnonzero(linked == 0)
        picks = [picks[j] for j in keep.tolist()]
        if not picks:
            return {}
        sizes = sizes[keep]
        rows = np.concatenate([p[2] for p in picks])
    qid = np.repeat(np.arange(len(picks), dtype=np.int64), sizes)
    ranks, uris, parents, chunks, leaves = s.batch_columns(qid, rows)
    row_l: list[int] = rows.tolist()
    ends = np.cumsum(sizes).tolist()
    out: dict[int, tuple[IntArray, HitColumns]] = {}
    a = 0
    for j, (i, pos, prow) in enumerate(picks):
        e = ends[j]
        cand, top, score, dense, lex, matches, exact = scored[i]
        at = top[pos]
        n = e - a
        out[i] = (
            pos,
            build_frozen(
                HitColumns,
                uris=uris[a:e],
                parent_uris=parents[a:e],
                chunk_indexes=chunks[a:e],
                leaves=leaves[a:e],
                scores=score[at].tolist(),
                vector_scores=dense[at].tolist(),
                lexical_scores=lex[at].tolist() if lex is not None else [None] * n,
                matches=[True] * n if matches is None else matches[prow].tolist(),
                load=paths._loader(s, row_l[a:e]),
                exact=exact,
                parent_codes=ranks[a:e] - ranks[a:e].min(),
                heading_codes=paths._headings_of(s, prow),
            ),
        )
        a = e
    return out


def _small_search(
    paths: _SearchPaths,
    s: _Snap,
    q: F32,
    scope: Scope,
    limit: int,
    text: str | None,
    weight: float,
) -> _Small | _Found | None:
    """One query's scope, read as :meth:`_SearchPaths._search_top` reads it: ``None``
    (nothing in scope), a :class:`_Small` search for the batch, or, where the search is not
    a small exact one, the answer of :meth:`_SearchPaths._search_top` itself."""
    rows = paths._candidate_rows(s, scope)
    if rows is not None and rows.size == 0:
        return None
    if rows is None or paths._ann_usable(s, rows):
        return paths._search_top(s, q, scope, limit, text, weight, None)
    _, wide, (eligible, matches) = paths._scope_masks(s, scope, rows)
    if wide:
        return paths._search_top(s, q, scope, limit, text, weight, None)
    cand = rows[np.flatnonzero(eligible)]
    if cand.size == 0:
        return None
    if cand.size * 8 > s.n or cand.size > limit:
        # (the whole-index product, or a pick of the best that may cut at a tie)
        return paths._search_top(s, q, scope, limit, text, weight, None)
    blended = bool(text) and weight < 1.0 and paths.lexical is not None
    return _Small(cand, q, text if blended else None, weight, limit, matches)


def _kept_found(s: _Snap, small: _Small, text: str | None, weight: float) -> _Found | None:
    """A small search's answer read from the scores its query's global step kept
    (:func:`.search_paths._kept_scores`, under the key :meth:`_SearchPaths._search_top`
    keeps them by: the one-query step's, or ``find_many``'s batch step's), ordered as
    :func:`_scored` orders it (best first, ties by row), or ``None`` unless every
    candidate is among them.

    Why: a family search asks for the leaves of folders the global step's best hits sit
    in, whose rows that step scored already (its candidates hold the siblings of its best
    rows); read alone (:meth:`_SearchPaths._search_top`), ~9 finds in 10 take them from
    there. Each kept cosine is the same row-wise product, its BM25 and blend the same
    arithmetic on the same query, so the floats are those :func:`_scored` computes."""
    key = _paths._scored_key(small.q, text, weight, lexical=small.text is not None)
    kept = _paths._kept_scores(s.cache.get(key), small.cand)
    if kept is None:
        return None
    cand, dense, score, lex = kept
    return cand, np.lexsort((cand, -score)), score, dense, lex, small.matches, True


def _scored(
    paths: _SearchPaths,
    s: _Snap,
    small: dict[int, _Small],
    lexical: LexicalIndex | None,
) -> dict[int, _Found]:
    """The answers of the small searches: each query's every candidate is a hit (it asked
    for at least as many), ordered best first with ties by row, the order
    :func:`.search_paths._best_first` gives them alone (rows are distinct within a query, so
    one ``lexsort`` by query, then score, then row is that order for every query)."""
    order = list(small)
    parts = [small[i] for i in order]
    sizes = np.fromiter((p.cand.size for p in parts), np.int64, len(parts))
    ends = np.cumsum(sizes)
    starts = ends - sizes
    cand = np.concatenate([p.cand for p in parts])
    seg = np.repeat(np.arange(len(parts)), sizes)
    qs = np.stack([p.q for p in parts])
    # every row's cosine by its own query: the row-wise kernel of ``_matvec`` (the same
    # floats as one ``einsum("ij,j->i")`` per query)
    dense: F32 = np.einsum("ij,ij->i", s.vectors_of(cand), qs[seg], optimize=False)
    score = dense
    lex_all: F32 | None = None
    blended = [k for k, p in enumerate(parts) if p.text is not None]
    if blended:
        lex_all = np.zeros(cand.size, np.float32)
        w = np.ones(len(parts), np.float32)
        rest = np.zeros(len(parts), np.float32)
        scale = np.ones(len(parts), np.float32)
        on = np.zeros(len(parts), bool)
        positive = np.zeros(len(parts), bool)
        for k in blended:
            p = parts[k]
            assert p.text is not None and lexical is not None
            lo, hi = int(starts[k]), int(ends[k])
            lex_all[lo:hi] = np.asarray(lexical.score(p.text, p.cand), dtype=np.float32)
            sc = paths._lexical_scale(s, lexical, p.text)
            wk = validate_dense_weight(p.weight)
            # (hybrid_scores: the weights as Python floats meet float32 arrays, so each is
            # rounded to float32 first; the scale divides as a float32)
            w[k], rest[k], on[k] = wk, 1.0 - wk, True
            if sc > 0:
                scale[k], positive[k] = sc, True
        norm = np.where(positive[seg], lex_all / scale[seg], np.float32(0.0))
        mixed = (w[seg] * dense + rest[seg] * norm).astype(np.float32)
        score = np.where(on[seg], mixed, dense)
    ranked = np.lexsort((cand, -score, seg))
    out: dict[int, _Found] = {}
    for k, i in enumerate(order):
        lo, hi = int(starts[k]), int(ends[k])
        p = parts[k]
        top = ranked[lo:hi] - lo
        lex = lex_all[lo:hi] if lex_all is not None and p.text is not None else None
        out[i] = (p.cand, top, score[lo:hi], dense[lo:hi], lex, p.matches, True)
    return out


__all__ = ["search_arrays_many"]
