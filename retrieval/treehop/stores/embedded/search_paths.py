"""The read paths: ``search`` / ``search_columns`` / ``search_arrays`` / ``search_batch``,
their candidate rows, scope masks and filters, the exact dense scoring, and the HNSW
candidates with their siblings and orphans."""

from __future__ import annotations

import bisect
import contextlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, Literal, cast, overload

import numpy as np
import numpy.typing as npt
import pydantic_core

from ... import tags as tagmod
from ...errors import (
    IndexCorruptError,
    InvalidQueryError,
)
from ...filters import MetadataFilter, TagFilter
from ...lexical import LexicalIndex, blend_scaled
from ...models import ContextType, Node
from ...natural_order import natural_positions
from .. import _ann
from .._ann import AnnIndex
from ..base import (
    HitArrays,
    HitColumns,
    Scope,
    ScoredNode,
    SiblingWindow,
    Vector,
    build_frozen,
    check_search_args,
    unique_inverse,
)
from .ann_worker import _GraphCut
from .attributes import _StoreAttributes
from .layout import (
    _CTYPE_CODE,
    _NODE_CACHE,
    _SUBTREE_KEPT,
    F32,
    BoolArray,
    IntArray,
    _all,
    _h64,
    _matvec,
    _max,
    _optional,
    _unique_ints,
)
from .snapshot import _FEW_ROWS, _leaf_family_rows, _Snap, _stored_field, _UriView

_Found = tuple[IntArray, IntArray, F32, F32, F32 | None, BoolArray | None, bool]
"""One query's answer of :meth:`_SearchPaths._search_top`: candidate rows, positions of its
best in them, combined, dense and lexical scores, the filter's match mask, and whether every
row in scope was scored."""
_Answer = tuple[IntArray, IntArray, F32, F32, F32 | None]
"""One answer of a batch before its columns: candidate rows, positions of its hits in
them, combined, dense and lexical scores (:meth:`_SearchPaths._columns_many`)."""


class _SearchPaths(_StoreAttributes):
    """Searches (see :mod:`.search_paths`)."""

    def search(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> list[ScoredNode]:
        s, q = self._query(vector, limit, dense_weight)
        if s.live == 0:
            return []
        return self._search(s, q, scope, limit, query_text, dense_weight, None)

    def _query(self, vector: Vector, limit: int, dense_weight: float) -> tuple[_Snap, F32]:
        """The snapshot a search reads and its query as a float32 row, checked (a dimension
        that differs from a non-empty index is an :class:`InvalidQueryError`)."""
        check_search_args(limit, dense_weight)
        q = np.asarray(vector, dtype=np.float32).reshape(-1)
        s = self._snap
        if s.live and q.shape[0] != s.dim:
            raise InvalidQueryError(f"query vector has dimension {q.shape[0]}, index has {s.dim}")
        return s, q

    def _search_found(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
    ) -> tuple[_Snap, _Found | None]:
        """The snapshot and :meth:`_search_top`'s answer (``None``: nothing to return) of one
        checked query: what :meth:`search_columns` and :meth:`search_arrays` share."""
        s, q = self._query(vector, limit, dense_weight)
        if not s.live:
            return s, None
        return s, self._search_top(s, q, scope, limit, query_text, dense_weight, None)

    def holds_context_type(self, context_type: ContextType) -> bool:
        """Whether a live node of ``context_type`` is stored: one pass over the type column,
        kept per snapshot (a write publishes a new one). The retriever asks it on every find:
        on a tree without memories the memory context (turn windows, session evidence) has
        nothing to work on, and its slot planning is skipped."""
        s = self._snap
        key = ("holds", context_type)
        got: bool | None = s.cache.get(key)
        if got is None:
            n = s.n
            got = bool(np.any((s.cols["ctype"][:n] == _CTYPE_CODE[context_type]) & s.alive[:n]))
            s.cache[key] = got
        return got

    def sibling_window(
        self,
        vector: Vector,
        scope: Scope,
        uri: str,
        before: int,
        after: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> SiblingWindow | None:
        """Up to ``before`` / ``after`` siblings of the leaf ``uri`` on each side, in natural
        name order (:func:`~treehop.natural_order.name_key`: the order of
        :func:`~treehop.tree_scoring.sibling_order_key`), each scored as :meth:`search`
        scores it (the same floats: a row's cosine, BM25 and blend do not depend on the
        other rows scored). Siblings are the leaves that are not chunks and share the leaf's
        parent; only those ``scope`` admits count (its filters, types, levels and exclusions;
        its subtrees and parent are not read: the siblings are the scope).

        ``None`` where the order cannot be read exactly, for the caller to search the whole
        family instead: the leaf is not stored, is a chunk or is not admitted by ``scope``,
        or two siblings share a natural key (a search's order of those would break the tie
        by score).

        Why: a memory turn's slot carries its neighbouring turns (:mod:`treehop.
        memory_context`). Searching the session scored and returned up to 10,000 turn nodes
        per find (find p50 ~70 ms on sessions of 10,000 and 100,000 turns, against ~5-9 ms
        here: ``bench/bench_memory_neighbours.py``); the session's natural order is built
        once per snapshot (:meth:`_natural_children`), then each read costs the rows it
        walks."""
        s, q = self._query(vector, 1, dense_weight)
        if not s.live or before < 0 or after < 0:
            return None
        row = int(s.lookup([uri])[0])
        if row < 0 or int(s.cols["chunk"][row]) >= 0 or not bool(s.cols["leaf"][row]):
            return None
        parent = self._node(s, row).parent_uri
        if parent is None:
            return None
        order = self._natural_children(s, parent)
        if order is None:
            return None
        ordered, by_row, at_of = order
        i = int(by_row.searchsorted(row))
        if i >= by_row.size or int(by_row[i]) != row:
            return None
        at = int(at_of[i])
        ok, matches = self._eligibility(s, scope, np.array([row], dtype=np.int64))
        if not bool(ok[0]):
            return None
        ahead, first = self._admitted_run(s, scope, ordered[:at][::-1], before)
        behind, last = self._admitted_run(s, scope, ordered[at + 1 :], after)
        rows = np.concatenate([ahead, behind])
        hits: list[ScoredNode] = []
        if rows.size:
            dense = _matvec(s.vectors_of(rows), q)
            score, lex = dense, None
            lexical = self.lexical if query_text and dense_weight < 1.0 else None
            if lexical is not None and query_text:
                score, lex = self._blend(s, lexical, query_text, rows, dense, dense_weight)
            n = int(rows.size)
            flags = [True] * n if matches is None else matches[rows].tolist()
            lexs = lex.tolist() if lex is not None else [None] * n
            hits = [
                ScoredNode(
                    node=self._node(s, r), score=a, vector_score=d, lexical_score=x, matches=m
                )
                for r, a, d, x, m in zip(
                    rows.tolist(), score.tolist(), dense.tolist(), lexs, flags, strict=True
                )
            ]
        k = int(ahead.size)
        return SiblingWindow(before=hits[:k], after=hits[k:], first=first, last=last)

    def _admitted_run(self, s: _Snap, scope: Scope, seq: IntArray, k: int) -> tuple[IntArray, bool]:
        """The first ``k`` rows of ``seq`` that ``scope`` admits, and whether ``seq`` holds
        no more than those: walked in blocks that double (a filter that admits few siblings
        reads further, never the whole family when the first block suffices)."""
        got: list[IntArray] = []
        have, lo, m = 0, 0, max(2 * k, 16)
        while have < k and lo < seq.size:
            part = seq[lo : lo + m]
            ok, _ = self._eligibility(s, scope, part)
            kept = part[ok][: k - have]
            got.append(kept)
            have += int(kept.size)
            lo += m
            m *= 2
        rows = np.concatenate(got) if got else np.zeros(0, np.int64)
        return rows.astype(np.int64, copy=False), have < k

    def _natural_children(
        self, s: _Snap, parent: str
    ) -> tuple[IntArray, IntArray, IntArray] | None:
        """The live leaf children of ``parent`` that are not chunks, in natural name order,
        with the same rows sorted and each one's place in that order (to find a row's place
        by a binary search); ``None`` if two share a natural key. Kept per snapshot (a
        write publishes a new one): built once from the children in URI order
        (:func:`~treehop.natural_order.natural_positions`)."""
        key = ("natural", parent)
        kept = s.cache.get(key, _NOT_KEPT)  # (one read: a concurrent put may trim the cache)
        if kept is not _NOT_KEPT:
            return cast("tuple[IntArray, IntArray, IntArray] | None", kept)
        rows = self._children_rows(s, parent)
        rows = rows[s.alive[rows] & s.cols["leaf"][rows] & (s.cols["chunk"][rows] < 0)]
        out: tuple[IntArray, IntArray, IntArray] | None = None
        at = natural_positions([u.rpartition("/")[2] for u in s.uris_of(rows)])
        ordered = None if at is None else rows[np.array(at, dtype=np.int64)]
        if ordered is not None:
            place = np.argsort(ordered, kind="stable")
            out = (ordered, ordered[place], place.astype(np.int64, copy=False))
        _cache_put(s, key, out, cap=64)
        return out

    def search_columns(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> HitColumns:
        """:meth:`search` with the hits as columns (the same hits, order and scores): URIs,
        parents and chunk indexes come from the URI blob and the columns, and a node is parsed
        only when the caller asks for it (see :class:`~treehop.stores.base.HitColumns`)."""
        s, found = self._search_found(vector, scope, limit, query_text, dense_weight)
        return self._found_columns(s, found)

    def _found_columns(self, s: _Snap, found: _Found | None) -> HitColumns:
        """The columns of one :meth:`_search_top` answer (no hits when it is ``None``)."""
        if found is None:
            return self._columns(s, _NO_ROWS, _NO_ROWS, *_NO_SCORES)
        return self._columns(s, *found[:6], exact=found[6])

    def search_arrays(
        self,
        vector: Vector,
        scope: Scope,
        limit: int,
        *,
        query_text: str | None = None,
        dense_weight: float = 1.0,
    ) -> HitArrays:
        """:meth:`search_columns` as arrays (:class:`~treehop.stores.base.HitArrays`): the
        same hits, order and scores; a hit's URI, parent URI and other Python values are
        built only for the positions the caller asks :meth:`HitArrays.columns` for."""
        s, found = self._search_found(vector, scope, limit, query_text, dense_weight)
        return self._found_arrays(s, found)

    def _found_arrays(
        self,
        s: _Snap,
        found: _Found | None,
        ordered: bool = False,
        prebuilt: tuple[IntArray, HitColumns] | None = None,
    ) -> HitArrays:
        """The :class:`HitArrays` of one :meth:`_search_top` answer (no hits when it is
        ``None``); ``ordered``: its positions are already best first (ties by row);
        ``prebuilt``: positions whose columns a batch built already (handed out by the
        first ``columns`` call for exactly those positions)."""
        ready = [prebuilt] if prebuilt is not None else []
        if found is None:
            no = np.zeros(0, np.int64)
            cand, top, score, dense, lex, matches, exact = (no, no, *_NO_SCORES, True)
        else:
            cand, top, score, dense, lex, matches, exact = found
        if not ordered:
            top = _best_first(cand, top, score, None)
        rows = cand[top]
        parent = s.parent_row[rows]
        # a linked parent row is the parent's code: distinct rows hold distinct URIs
        codes = parent if bool(_all(parent >= 0)) else None
        chunk = s.cols["chunk"][rows].astype(np.int64)

        def columns(positions: npt.NDArray[np.int64]) -> HitColumns:
            if ready and np.array_equal(positions, ready[0][0]):
                return ready.pop()[1]
            return self._columns(
                s, cand, top[positions], score, dense, lex, matches, exact, ordered=True
            )

        def uris(positions: npt.NDArray[np.int64]) -> list[str]:
            return s.uris_of(rows[positions]) if positions.size else []

        def parent_uris(parent_codes: npt.NDArray[np.int64]) -> list[str]:
            # (a code is the parent's row)
            return s.dir_uris(parent_codes) if parent_codes.size else []

        def headings(
            positions: npt.NDArray[np.int64],
        ) -> tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]:
            return self._heading_codes(s, rows[positions])

        def among(positions: npt.NDArray[np.int64], wanted: Collection[str]) -> BoolArray:
            # a URI names one live row of the snapshot: the hits whose row is one of theirs
            found = s.lookup(list(wanted)) if wanted else np.zeros(0, np.int64)
            out: BoolArray = np.isin(rows[positions], found[found >= 0])
            return out

        def load(positions: Sequence[int]) -> list[Node]:
            return [self._node(s, int(rows[i])) for i in positions]

        def flags(positions: npt.NDArray[np.int64]) -> tuple[list[float], list[bool]]:
            # (as ``_columns`` reads them: the same floats and flags)
            at = top[positions]
            found = [True] * at.size if matches is None else matches[cand[at]].tolist()
            return dense[at].tolist(), found

        return build_frozen(
            HitArrays,
            leaves=s.cols["leaf"][rows].astype(bool),
            scores=score[top],
            chunks=chunk,
            parent_codes=codes,
            exact=exact,
            columns=columns,
            uris=uris,
            parent_uris=parent_uris,
            heading_codes=headings,
            among=among,
            # (a batch that built the leaves' columns hands them out: read through them)
            load=None if ready else load,
            flags=None if ready else flags,
        )

    def search_batch(
        self,
        vectors: Vector,
        scope: Scope,
        limit: int,
        *,
        query_texts: Sequence[str | None] | None = None,
        dense_weight: float = 1.0,
    ) -> list[list[ScoredNode]]:
        """:meth:`search` for many queries at once: one matrix product scores every row
        against every query (BLAS ``sgemm`` instead of one memory-bound pass per query)."""
        check_search_args(limit, dense_weight)
        qs = np.asarray(vectors, dtype=np.float32)
        if qs.ndim != 2:
            raise InvalidQueryError("search_batch needs a 2-d array of query vectors")
        texts = list(query_texts) if query_texts is not None else [None] * qs.shape[0]
        if len(texts) != qs.shape[0]:
            raise InvalidQueryError("query_texts must have one entry per query vector")
        s = self._snap
        if s.live == 0 or qs.shape[0] == 0:
            return [[] for _ in range(qs.shape[0])]
        if qs.shape[1] != s.dim:
            raise InvalidQueryError(
                f"query vectors have dimension {qs.shape[1]}, index has {s.dim}"
            )
        rows = self._candidate_rows(s, scope)
        if rows is not None and rows.size == 0:
            return [[] for _ in range(qs.shape[0])]
        if self._ann_usable(s, rows) and (ann := self._ann_index(wait=False)) is not None:
            try:
                if dense_weight >= 1.0 or not any(texts):
                    return self._ann_batch(s, qs, scope, rows, limit, ann)
                # one graph call for the whole batch (usearch splits it over two threads)
                fetch = max(4 * limit, 64)
                ann.lock.acquire_read()
                try:
                    labels = ann.query_many(qs, fetch, min(2, self.ann_threads))
                finally:
                    ann.lock.release_read()
                return [
                    self._search(s, q, scope, limit, t, dense_weight, None, (ann, labels[i]))
                    for i, (q, t) in enumerate(zip(qs, texts, strict=True))
                ]
            except _GraphCut as cut:  # (the graph's file cut short: exactly, below)
                self._drop_cut_graph(cut.ann, str(cut))
        if dense_weight >= 1.0 or not any(texts):
            return self._batch_dense(s, qs, scope, rows, limit)
        if rows is None or rows.size * 8 > s.n:
            dense_all = s.scores_matrix_t(qs)
            dense_m = dense_all if rows is None else dense_all[:, rows]
        else:
            dense_m = qs @ s.vectors_of(rows).T
        return [
            self._search(s, q, scope, limit, t, dense_weight, dense_m[i])
            for i, (q, t) in enumerate(zip(qs, texts, strict=True))
        ]

    def search_columns_batch(
        self,
        vectors: Vector,
        scope: Scope,
        limit: int,
        *,
        query_texts: Sequence[str | None] | None = None,
        dense_weight: float = 1.0,
    ) -> list[HitColumns]:
        """:meth:`search_columns` of many queries, each answer the one a call of its own
        gives (rows, order and scores, to the bit): what ``find_many`` asks for the first
        global step of a batch of finds.

        On the graph, one graph call answers every query (usearch splits it over two
        threads): a dense search does the work around it once for the batch (see
        :meth:`_ann_batch`); a hybrid one hands each query its graph answer, fetched as wide
        as :meth:`_ann_candidates` fetches it alone, and kept as the graph answer of a
        repeated query (the deeper steps of that find read it). An exact scope is searched
        one query at a time (a find's global step on a store without a graph)."""
        check_search_args(limit, dense_weight)
        qs = np.asarray(vectors, dtype=np.float32)
        if qs.ndim != 2:
            raise InvalidQueryError("search_columns_batch needs a 2-d array of query vectors")
        texts: list[str | None] = (
            list(query_texts) if query_texts is not None else [None] * qs.shape[0]
        )
        if len(texts) != qs.shape[0]:
            raise InvalidQueryError("query_texts must have one entry per query vector")
        s = self._snap
        if s.live and qs.shape[0] and qs.shape[1] != s.dim:
            raise InvalidQueryError(
                f"query vectors have dimension {qs.shape[1]}, index has {s.dim}"
            )

        def one_by_one() -> list[HitColumns]:
            return [
                self.search_columns(q, scope, limit, query_text=t, dense_weight=dense_weight)
                for q, t in zip(qs, texts, strict=True)
            ]

        if s.live == 0 or qs.shape[0] < 2:
            return one_by_one()
        rows = self._candidate_rows(s, scope)
        if (rows is not None and rows.size == 0) or not self._ann_usable(s, rows):
            return one_by_one()
        ann = self._ann_index(wait=False)
        if ann is None:
            return one_by_one()
        lexical = self.lexical is not None and dense_weight < 1.0 and any(texts)
        try:
            if not lexical:
                return self._ann_batch(
                    s, qs, scope, rows, limit, ann, columns=True, keep=(texts, dense_weight)
                )
            return self._hybrid_batch(s, qs, texts, scope, rows, limit, dense_weight, ann)
        except _GraphCut as cut:  # (the graph's file cut short: each query exactly)
            self._drop_cut_graph(cut.ann, str(cut))
            return one_by_one()

    def _hybrid_batch(
        self,
        s: _Snap,
        qs: F32,
        texts: list[str | None],
        scope: Scope,
        rows: IntArray | None,
        limit: int,
        dense_weight: float,
        ann: AnnIndex,
    ) -> list[HitColumns]:
        """The hybrid global step of many queries (:meth:`search_columns_batch`), each answer
        the one :meth:`_search_top` gives the query alone (rows, order and scores, to the
        bit), with the work that does not depend on the query's text done once:

        - the scope's masks, the read lock, the orphans' rows and vectors: once;
        - one graph call for every query (usearch splits it over two threads), each query's
          whole-width answer kept as its repeated answer (the deeper steps of its find);
        - every query's candidates (the graph's, its best ``fetch`` orphans, the uncovered
          tail and its best BM25 rows, sorted and distinct: the one-query candidate array
          itself) scored by one ``einsum`` over the batch, the per-row kernel of
          :func:`_matvec` (the same floats); the orphans by one more;
        - the siblings of every query's best rows in one pass (:func:`_batch_siblings`) and
          one ``einsum`` for their scores.

        Per query stay its BM25 rows and scores and the hybrid blend (each its own text).
        A query with no text, a zero or non-finite vector, or tied best rows
        (:func:`_top_ties`), or whose graph answer holds fewer than ``limit`` eligible rows
        (alone it would fetch wider), or whose candidates fall short of ``limit`` (alone it
        would go the exact way), goes the one-query way. Measured at 100k rows, batches of
        32, alternating with the per-query loop it replaces in one process: 0.61 -> 0.47 ms
        of thread CPU per query (bench/README.md, "Issue 35 round 4")."""
        lexical = self.lexical
        assert lexical is not None
        if self._paused:
            self._resume()
        skey, wide, (eligible, matches) = self._scope_masks(s, scope, rows)
        key = skey if wide else None
        full = _full_mask(s, rows, eligible, key)
        fetch = _graph_fetch(s, _eligible_share(s, full, key), limit)
        if fetch is None:  # (each query exactly, as it goes alone)
            return [
                self.search_columns(q, scope, limit, query_text=t, dense_weight=dense_weight)
                for q, t in zip(qs, texts, strict=True)
            ]
        ann.lock.acquire_read()
        try:
            upto, count = min(ann.upto, s.n), ann.count
            k = min(fetch, count)
            labels = ann.query_many(qs, k, min(2, self.ann_threads), whole=True)
            # (the row map read under the lock, as the one-query step reads it)
            mapped = ann.row[np.clip(labels[:, :k], 0, None)]
            # (a node with aliases: the one-query step adds them, see AnnIndex.owner)
            aliased = ann.aliased(labels[:, :k]).any(axis=1)
            orphans, orphan_vecs = ann.orphan_rows(upto, s.vectors_of)
        finally:
            ann.lock.release_read()
        ann.remember(qs, labels)
        b = qs.shape[0]
        tail = np.flatnonzero(full[upto:]) + upto if upto < s.n else _NO_ROWS
        n_full = -1  # (the scope's size, counted only when a query falls short)
        # the orphans each query adds (_best_orphans: every eligible one, or its best fetch)
        best_orphans: list[IntArray] = [_NO_ROWS] * b
        if orphans.size:
            ok = _orphans_eligible(s, orphans, full, key)
            if int(np.count_nonzero(ok)) <= fetch:
                best_orphans = [orphans[ok]] * b
            else:
                o_score = np.einsum("td,qd->qt", orphan_vecs, qs, optimize=False)
                o_score[:, ~ok] = -np.inf
                pick = np.argpartition(-o_score, fetch - 1, axis=1)[:, :fetch]
                best_orphans = [orphans[p] for p in pick]
        # (a zero or non-finite query vector: its scores tie or are NaN, which no tie check
        # sees, and the sorts may order them apart; as in _ann_batch, it goes its own way)
        qn = np.linalg.norm(qs, axis=1)
        single = ~(qn > 0) | ~np.isfinite(qn) | aliased
        cands: list[IntArray] = []
        for i in range(b):
            found = mapped[i][labels[i, :k] >= 0]
            found = found[(found >= 0) & (found < s.n)]
            cand = found[full[found]]
            text = texts[i]
            if single[i] or not text or (cand.size < limit and fetch * 4 <= count):
                single[i] = True  # (no text: dense only; too few: alone it fetches wider)
                cands.append(_NO_ROWS)
                continue
            more = np.concatenate([best_orphans[i], tail]) if best_orphans[i].size else tail
            cand = np.concatenate([cand, more])
            if cand.size < limit:
                if n_full < 0:
                    n_full = int(np.count_nonzero(full))
                if cand.size < n_full:
                    single[i] = True  # (alone it goes the exact way)
                    cands.append(_NO_ROWS)
                    continue
            lex_rows, _ = lexical.top(text, fetch)
            lex_rows = lex_rows[lex_rows < s.n]
            lex_rows = lex_rows[full[lex_rows]]
            cands.append(_unique_ints(np.concatenate([cand, lex_rows])))
        sizes = np.array([c.size for c in cands], dtype=np.int64)
        width = int(sizes.max(initial=0))
        mat = np.zeros((b, width), dtype=np.int64)
        real = np.arange(width)[None, :] < sizes[:, None]
        if width:
            mat[real] = np.concatenate(cands)
        dense_m = np.einsum(
            "qkd,qd->qk", s.vectors_of(mat.ravel()).reshape(b, width, s.dim), qs, optimize=False
        )
        dense_m[~real] = -np.inf
        # (a tie among a query's best rows: its own step may pick other parents' siblings)
        single |= _top_ties(dense_m, real, 4 * _SIBLING_PARENTS) & (sizes > 0)
        real &= ~single[:, None]
        owner, sib = _batch_siblings(s, mat, dense_m, real, full)
        sib_d = np.einsum("kd,kd->k", s.vectors_of(sib), qs[owner], optimize=False)
        bounds = np.searchsorted(owner, np.arange(b + 1))
        out: list[HitColumns | _Answer] = []
        batched: list[int] = []  # (the answers built together: _columns_many)
        for i in range(b):
            if single[i]:
                found = self._search_top(
                    s, qs[i], scope, limit, texts[i], dense_weight, None, labels[i][:k]
                )
                out.append(self._found_columns(s, found))
                continue
            text = texts[i]
            assert text
            n_i, a, e = int(sizes[i]), int(bounds[i]), int(bounds[i + 1])
            cand = cands[i]
            if not n_i:  # (nothing in scope: the one-query step's None)
                out.append(self._columns(s, _NO_ROWS, _NO_ROWS, *_NO_SCORES))
                continue
            dense = dense_m[i, :n_i]
            if e > a:
                cand = np.concatenate([cand, sib[a:e]])
                dense = np.concatenate([dense, sib_d[a:e]])
            score, lex = self._blend(s, lexical, text, cand, dense, dense_weight)
            # kept as the one-query step keeps its graph step's scores (_search_top): the
            # tree context's family searches of the batch read them (family_batch)
            key = _scored_key(qs[i], text, dense_weight, lexical=True)
            _cache_put(s, key, [cand, dense, score, lex, None], cap=_KEPT_BATCH)
            top = _top_positions(score, limit)
            batched.append(len(out))
            out.append((cand, top, score, dense, lex))
        built = self._columns_many(s, [cast("_Answer", out[i]) for i in batched], matches)
        for i, cols in zip(batched, built, strict=True):
            out[i] = cols
        return cast("list[HitColumns]", out)

    def _search(
        self,
        s: _Snap,
        q: F32,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        precomputed: F32 | None,
        prefetched: tuple[AnnIndex, npt.NDArray[Any]] | None = None,
    ) -> list[ScoredNode]:
        found = self._search_top(
            s, q, scope, limit, query_text, dense_weight, precomputed, prefetched
        )
        return [] if found is None else self._hits(s, *found[:6])

    def _search_top(
        self,
        s: _Snap,
        q: F32,
        scope: Scope,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        precomputed: F32 | None,
        prefetched: tuple[AnnIndex, npt.NDArray[Any]] | None = None,
    ) -> _Found | None:
        """The search up to its best positions: (candidate rows, positions of the best
        ``limit`` in them, unordered, combined scores, dense scores, lexical scores, the
        filter's match mask, whether every row in scope was scored: no HNSW candidates);
        ``None`` when nothing is in scope."""
        rows = self._candidate_rows(s, scope)
        if rows is not None and rows.size == 0:
            return None
        skey, wide, (eligible, matches) = self._scope_masks(s, scope, rows)
        ann = None
        if precomputed is None and self._ann_usable(s, rows):
            try:
                ann = self._ann_candidates(
                    s,
                    q,
                    rows,
                    eligible,
                    limit,
                    query_text,
                    dense_weight,
                    prefetched,
                    skey if wide else None,
                )
            except _GraphCut as cut:  # (the graph's file cut short: exactly, below)
                self._drop_cut_graph(cut.ann, str(cut))
        lexical = self.lexical if query_text and dense_weight < 1.0 else None
        key = _scored_key(q, query_text, dense_weight, lexical=lexical is not None)
        kept = None
        if ann is not None:
            cand, dense = ann
        else:
            if rows is not None and precomputed is None and not wide:
                kept = _kept_scores(s.cache.get(key), rows[eligible])
            if kept is not None:
                cand, dense = kept[0], kept[1]
            else:
                cand, dense = _exact_dense(
                    s, q, rows, eligible, precomputed, skey if wide else None
                )
        if cand.size == 0:
            return None
        lex: F32 | None = None
        score = dense
        if kept is not None:
            score, lex = kept[2], kept[3]
        elif lexical is not None and query_text:
            score, lex = self._blend(s, lexical, query_text, cand, dense, dense_weight)
        if ann is not None:  # the global step's scores: a narrow search inside it may read them
            _cache_put(s, key, [cand, dense, score, lex, None], cap=8)
        return cand, _top_positions(score, limit), score, dense, lex, matches, ann is None

    def _blend(
        self,
        s: _Snap,
        lexical: LexicalIndex,
        text: str,
        cand: IntArray,
        dense: F32,
        dense_weight: float,
    ) -> tuple[F32, F32]:
        """The hybrid scores of ``cand`` and their BM25 scores: the one blend of a query's
        candidates, whether the query searched alone or in a batch (whose answers must equal
        the lone ones to the bit)."""
        # (the candidates are the store's own rows and ``dense_weight`` passed
        # ``check_search_args``: scored and blended without checking them again, the same
        # floats as ``hybrid_scores(dense, lexical.score(text, cand), ...)``)
        lex = lexical.score_candidates(text, cand)
        scale = self._lexical_scale(s, lexical, text)
        return blend_scaled(dense, lex, float(dense_weight), scale), lex

    def _hits(
        self,
        s: _Snap,
        cand: IntArray,
        top: IntArray,
        score: F32,
        dense: F32,
        lex: F32 | None,
        matches: BoolArray | None,
        k: int | None = None,
    ) -> list[ScoredNode]:
        """The (first ``k``) hits at positions ``top`` of ``cand``, best first (ties by row)."""
        top = _best_first(cand, top, score, k)
        rows = cand[top]
        n = int(rows.size)
        # whole columns to Python at once (the same floats as one ``float()`` per element)
        lexical = lex[top].tolist() if lex is not None else [None] * n
        flags = [True] * n if matches is None else matches[rows].tolist()
        return [
            ScoredNode(node=self._node(s, r), score=a, vector_score=d, lexical_score=x, matches=m)
            for r, a, d, x, m in zip(
                rows.tolist(),
                score[top].tolist(),
                dense[top].tolist(),
                lexical,
                flags,
                strict=True,
            )
        ]

    def _columns(
        self,
        s: _Snap,
        cand: IntArray,
        top: IntArray,
        score: F32,
        dense: F32,
        lex: F32 | None,
        matches: BoolArray | None,
        exact: bool = True,
        ordered: bool = False,
    ) -> HitColumns:
        """:meth:`_hits` as columns: the same hits in the same order, no node parsed.

        Every row decodes its URI from the URI blob (one gather, or one slice where the rows
        lie close together), each distinct parent once and kept per snapshot
        (:meth:`_Snap.uris_with_dirs`: a tree-context search returns hundreds to thousands
        of rows, most of them siblings; a node-cache lookup per row cost more than the
        vectorised decode). A row without a linked parent row (its parent is not stored, or
        it is a root) reads its stored parent URI. ``ordered``: ``top`` is already in the
        order wanted (:meth:`search_arrays` asks for a subset of its hits)."""
        if not ordered:
            top = _best_first(cand, top, score, None)
        rows = cand[top]
        row_l = rows.tolist()
        n = len(row_l)
        parents: list[str | None]
        parent_codes: IntArray | None
        few = None
        if n and FEW_COLUMNS and n <= _FEW_ROWS:
            few = _few_parents(s, rows, row_l, s.parent_row[rows])
        if few is not None:
            uris, parents, parent_codes = few
        elif n:
            parent = s.parent_row[rows]
            # siblings share a parent: each distinct parent row is decoded once
            distinct, inverse = unique_inverse(parent)
            unlinked = int(distinct.searchsorted(0))  # the -1s sort first
            uris, dir_uris = s.uris_with_dirs(rows, distinct[unlinked:])
            names: list[str | None] = [None] * unlinked
            names.extend(dir_uris)
            inverse = inverse.reshape(-1)
            # (one parent, a folder's files or a file's chunks: its name repeated)
            parents = names * n if len(names) == 1 else [names[k] for k in inverse.tolist()]
            # (a code per distinct parent row; unlinked rows would share one code)
            parent_codes = None if unlinked else inverse.astype(np.int64, copy=False)
            if unlinked:
                cache, uid = self._node_cache, s.uid
                for i in np.flatnonzero(parent < 0).tolist():
                    node = cache.get((uid, row_l[i]))  # a built node saves a JSON parse
                    if node is not None:
                        parents[i] = node.parent_uri
                    else:
                        stored = _stored_field(s, row_l[i], "parent_uri")
                        parents[i] = stored if isinstance(stored, str) else None
        else:
            uris, parents = [], []
            parent_codes = np.zeros(0, np.int64)
        chunks = _optional(s.cols["chunk"][rows]) if n else []
        leaves: list[bool] = s.cols["leaf"][rows].tolist() if n else []

        def load(positions: Sequence[int]) -> list[Node]:
            return [self._node(s, row_l[i]) for i in positions]

        def headings(
            positions: npt.NDArray[np.int64],
        ) -> tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]:
            return self._heading_codes(s, rows[positions])

        return build_frozen(
            HitColumns,
            uris=uris,
            parent_uris=parents,
            chunk_indexes=chunks,
            leaves=leaves,
            scores=score[top].tolist(),
            vector_scores=dense[top].tolist(),
            lexical_scores=lex[top].tolist() if lex is not None else [None] * n,
            matches=[True] * n if matches is None else matches[rows].tolist(),
            load=load,
            exact=exact,
            parent_codes=parent_codes,
            heading_codes=headings,
        )

    def _columns_many(
        self,
        s: _Snap,
        items: Sequence[_Answer],
        matches: BoolArray | None,
    ) -> list[HitColumns]:
        """:meth:`_columns` of many answers of one batch (``exact=False``, one scope's
        ``matches``), each equal to its own call field by field: the same hits, order,
        scores, URIs, parents and parent codes.

        Why: ``find_many``'s first global step built ~40 hits' columns per query in a call of
        their own (~0.11 ms a query, most of it the fixed cost of a dozen array calls and a
        scattered URI gather). Here every answer's hits are ordered by one ``lexsort`` keyed
        by answer first (within an answer the order of :func:`_best_first`), their rows'
        URIs, parents, leaves and chunks read in one gather each, and each answer gets its
        slices. A parent code is the rank of the parent among that answer's distinct parents
        (as in :meth:`_columns`): one ``np.unique`` of (answer, parent) keys, each answer's
        codes offset by its smallest key's rank. An answer with an unlinked row (no stored
        parent row) or no hit is built by :meth:`_columns` itself."""
        out: list[HitColumns | None] = [None] * len(items)
        sizes = np.fromiter((t.size for _, t, _, _, _ in items), np.int64, len(items))
        take = [i for i, (c, t, _, _, _) in enumerate(items) if t.size and c.size]
        if take:
            rows_c = np.concatenate([items[i][0][items[i][1]] for i in take])
            parent_c = s.parent_row[rows_c]
            if not bool((parent_c >= 0).all()):
                bad = np.zeros(len(items), dtype=bool)
                qid_c = np.repeat(np.asarray(take, np.int64), sizes[take])
                bad[qid_c[parent_c < 0]] = True
                take = [i for i in take if not bad[i]]
        if take:
            qid = np.repeat(np.arange(len(take), dtype=np.int64), sizes[take])
            rows_c = np.concatenate([items[i][0][items[i][1]] for i in take])
            score_c = np.concatenate([items[i][2][items[i][1]] for i in take])
            dense_c = np.concatenate([items[i][3][items[i][1]] for i in take])
            order = np.lexsort((rows_c, -score_c, qid))
            rows = rows_c[order]
            ranks, uris, parents, chunks, leaves = s.batch_columns(qid[order], rows)
            scores: list[float] = score_c[order].tolist()
            dense: list[float] = dense_c[order].tolist()
            found: list[bool] = [True] * rows.size if matches is None else matches[rows].tolist()
            row_l: list[int] = rows.tolist()
            ends = np.cumsum(sizes[take]).tolist()
            a = 0
            for j, i in enumerate(take):
                e = ends[j]
                lex = items[i][4]
                n = e - a
                out[i] = build_frozen(
                    HitColumns,
                    uris=uris[a:e],
                    parent_uris=parents[a:e],
                    chunk_indexes=chunks[a:e],
                    leaves=leaves[a:e],
                    scores=scores[a:e],
                    vector_scores=dense[a:e],
                    lexical_scores=(
                        [None] * n
                        if lex is None
                        # (this answer's own positions: its order slice, back to its ``top``)
                        else lex[items[i][1][order[a:e] - a]].tolist()
                    ),
                    matches=found[a:e],
                    load=self._loader(s, row_l[a:e]),
                    exact=False,
                    parent_codes=ranks[a:e] - ranks[a:e].min(),
                    heading_codes=self._headings_of(s, rows[a:e]),
                )
                a = e
        return [
            o if o is not None else self._columns(s, *items[i], matches, False)
            for i, o in enumerate(out)
        ]

    def _loader(self, s: _Snap, row_l: list[int]) -> Callable[[Sequence[int]], list[Node]]:
        """The ``load`` of a batch answer's columns (:meth:`_columns_many`)."""

        def load(positions: Sequence[int]) -> list[Node]:
            return [self._node(s, row_l[i]) for i in positions]

        return load

    def _headings_of(
        self, s: _Snap, rows: IntArray
    ) -> Callable[[npt.NDArray[np.int64]], tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]]:
        """The ``heading_codes`` of a batch answer's columns (:meth:`_columns_many`)."""

        def headings(
            positions: npt.NDArray[np.int64],
        ) -> tuple[npt.NDArray[np.int64], Sequence[tuple[str, ...]]]:
            return self._heading_codes(s, rows[positions])

        return headings

    def _heading_codes(
        self, s: _Snap, rows: IntArray
    ) -> tuple[IntArray, Sequence[tuple[str, ...]]]:
        """The heading paths of ``rows`` as codes into a table (-1: none), a column derived
        per snapshot as rows are asked for: a row's path is read from its node once, then
        every later find gathers its code (the tree context compares the paths of a few
        hundred neighbouring chunks per find; building their nodes to read them was its
        largest cost). Concurrent readers may both fill a row: they write the same path,
        at worst under two codes, which the caller tells apart by comparing the table."""
        got = s.cache.get(("heading",))
        if got is None:
            got = s.cache.setdefault(("heading",), (np.full(s.n, -2, np.int64), [], {}))
        codes, table, index = got
        out: IntArray = codes[rows]
        todo = np.flatnonzero(out == -2)
        if todo.size:
            with _HEADING_LOCK:
                for k, r in zip(todo.tolist(), rows[todo].tolist(), strict=True):
                    node = self._node(s, r)
                    path = node.metadata.get(HEADING_PATH) if node.chunk_index is not None else None
                    code = -1
                    if isinstance(path, list):
                        key = tuple(path)
                        try:
                            code = index.get(key, -1)
                        except TypeError:  # (a list or object in a path written by hand:
                            code = len(table)  # its own code, the table compares it)
                            table.append(key)
                        if code < 0:
                            code = index[key] = len(table)
                            table.append(key)
                    codes[r] = out[k] = code
        return out, table

    def _scope_masks(
        self, s: _Snap, scope: Scope, rows: IntArray | None
    ) -> tuple[tuple[Any, ...] | None, bool, tuple[BoolArray, BoolArray | None]]:
        """(scope key, whether the scope is wide, its eligibility masks). A wide scope (the
        global step) is asked again with every query, so its masks are kept per snapshot."""
        skey = _scope_key(scope)
        wide = skey is not None and rows is not None and rows.size * 8 > s.n
        cached = s.cache.get(("elig", skey)) if wide else None
        if cached is None:
            cached = self._eligibility(s, scope, rows)
            if wide:
                _cache_put(s, ("elig", skey), cached)
        return skey, wide, cached

    @overload
    def _ann_batch(
        self,
        s: _Snap,
        qs: F32,
        scope: Scope,
        rows: IntArray | None,
        limit: int,
        ann: AnnIndex,
        columns: Literal[False] = False,
    ) -> list[list[ScoredNode]]: ...

    @overload
    def _ann_batch(
        self,
        s: _Snap,
        qs: F32,
        scope: Scope,
        rows: IntArray | None,
        limit: int,
        ann: AnnIndex,
        columns: Literal[True],
        keep: tuple[Sequence[str | None], float] | None = None,
    ) -> list[HitColumns]: ...

    def _ann_batch(
        self,
        s: _Snap,
        qs: F32,
        scope: Scope,
        rows: IntArray | None,
        limit: int,
        ann: AnnIndex,
        columns: bool = False,
        keep: tuple[Sequence[str | None], float] | None = None,
    ) -> list[list[ScoredNode]] | list[HitColumns]:
        """The dense global step of many queries: each query's answer is the one
        :meth:`_ann_candidates` gives it alone (rows and scores, to the bit), with the work
        around the graph done once for the batch:

        - one graph call for every query (usearch splits it over two threads);
        - the graph's candidates and the uncovered tail scored by one ``einsum`` each, the
          per-row kernel of :func:`_matvec` (so the same floats as the one-query step);
        - the orphans (rows the graph cannot reach) that may reach each query's floor
          through one exact search of their 8-bit codes for every query, then scored
          exactly (:func:`_batch_orphans`);
        - the siblings of every query's best rows in one pass (:func:`_batch_siblings`),
          and one partial sort.

        A query whose graph answer holds fewer than ``limit`` eligible rows (alone it would
        fetch wider), that is zero or not finite, or whose graph answer names a row twice,
        goes the one-query way. ``columns``: each answer as :meth:`search_columns` gives it.
        ``keep``: the queries' texts and dense weight, under which each batched query's
        candidate scores are kept as :meth:`_search_top` keeps a lone query's graph step's
        (the batch's family searches read them: :mod:`.family_batch`).
        """
        skey, wide, (eligible, matches) = self._scope_masks(s, scope, rows)
        key = skey if wide else None
        full = _full_mask(s, rows, eligible, key)
        fetch = _graph_fetch(s, _eligible_share(s, full, key), limit)
        if fetch is None:  # (each query exactly, as it goes alone)
            if columns:
                return [self.search_columns(q, scope, limit) for q in qs]
            return [self._search(s, q, scope, limit, None, 1.0, None) for q in qs]
        threads = min(2, self.ann_threads)
        ann.lock.acquire_read()
        try:
            upto, count = min(ann.upto, s.n), ann.count
            labels = ann.query_many(qs, min(fetch, count), threads)
            cand = np.where(labels >= 0, ann.row[np.clip(labels, 0, None)], -1)
            aliased = ann.aliased(labels).any(axis=1)  # (the one-query step adds aliases)
            orphans, orphan_vecs = ann.orphan_rows(upto, s.vectors_of)
            codes = ann.orphan_codes()
        finally:
            ann.lock.release_read()
        ok = (cand >= 0) & (cand < s.n)
        ok[ok] = full[cand[ok]]
        qn = np.linalg.norm(qs, axis=1)
        single = (np.count_nonzero(ok, axis=1) < limit) | ~(qn > 0) | ~np.isfinite(qn)
        single |= _repeats(cand, ok) | aliased
        who = ~single
        ok &= who[:, None]
        cand = np.where(ok, cand, 0)
        b, width = cand.shape
        dense = np.einsum(
            "qkd,qd->qk", s.vectors_of(cand.ravel()).reshape(b, width, s.dim), qs, optimize=False
        )
        dense[~ok] = -np.inf
        tail = np.flatnonzero(full[upto:]) + upto if upto < s.n else _NO_ROWS
        tail_d = np.einsum("td,qd->qt", s.vectors_of(tail), qs, optimize=False)
        floor = _batch_floors(dense, tail_d, max(limit, 4 * _SIBLING_PARENTS))
        floor[single] = np.inf
        live = _orphans_eligible(s, orphans, full, key)
        oq, orow, od = _batch_orphans(
            qs, floor, (orphans, orphan_vecs, live), codes, fetch, threads
        )
        new = _new_pairs(s.n, cand, ok, oq, orow)
        extra = (oq[new], orow[new], od[new])
        cand, dense, ok = _batch_matrix((cand, dense, ok), who, tail, tail_d, extra)
        # (a tie among a query's best rows: its own step may pick other parents' siblings)
        single |= _top_ties(dense, ok, 4 * _SIBLING_PARENTS) & who
        who = ~single
        ok &= who[:, None]
        # the siblings of every query's best rows (see _sibling_rows), scored in one pass
        owner, sib = _batch_siblings(s, cand, dense, ok, full)
        sib_d = np.einsum("kd,kd->k", s.vectors_of(sib), qs[owner], optimize=False)
        cand, dense, ok = _batch_matrix((cand, dense, ok), who, _NO_ROWS, None, (owner, sib, sib_d))
        k = min(limit, cand.shape[1])
        top = np.argpartition(-dense, k - 1, axis=1)[:, :k]
        if columns:
            many = [i for i in range(b) if not single[i]]
            if keep is not None:
                texts, weight = keep
                for i in many:
                    real = ok[i]
                    key = _scored_key(qs[i], texts[i], weight, lexical=False)
                    d = dense[i][real]
                    _cache_put(s, key, [cand[i][real], d, d, None, None], cap=_KEPT_BATCH)
            built = self._columns_many(
                s, [(cand[i], top[i], dense[i], dense[i], None) for i in many], matches
            )
            cols: list[HitColumns | None] = [None] * b
            for i, c in zip(many, built, strict=True):
                cols[i] = c
            return [
                c if c is not None else self.search_columns(qs[i], scope, limit)
                for i, c in enumerate(cols)
            ]
        return [
            self._search(s, qs[i], scope, limit, None, 1.0, None)
            if single[i]
            else self._hits(s, cand[i], top[i], dense[i], dense[i], None, matches)
            for i in range(b)
        ]

    def _batch_dense(
        self, s: _Snap, qs: F32, scope: Scope, rows: IntArray | None, limit: int
    ) -> list[list[ScoredNode]]:
        """Exact dense scores of many queries: one matrix product (``queries x rows``, so
        that each query's scores are contiguous) and one partial sort for all of them."""
        _, _, (eligible, matches) = self._scope_masks(s, scope, rows)
        cand = eligible.nonzero()[0] if rows is None else rows[eligible]
        if cand.size == 0:
            return [[] for _ in range(qs.shape[0])]
        k = min(limit, cand.size)
        if cand.size * 8 > s.n and k < cand.size:
            # a wide scope: score every row (one GEMM) and mask the others in place, rather
            # than gathering the eligible columns (a copy of the whole matrix)
            dense_m = s.scores_matrix_t(qs)
            full = np.zeros(s.n, dtype=bool)
            full[cand] = True
            dense_m[:, ~full] = -np.inf
            cand = np.arange(s.n, dtype=np.int64)
        elif cand.size * 8 > s.n:
            dense_m = s.scores_matrix_t(qs)[:, cand]
        else:
            dense_m = qs @ s.vectors_of(cand).T
        if k == cand.size:
            every = np.arange(cand.size)
            return [self._hits(s, cand, every, d, d, None, matches) for d in dense_m]
        qi, pos = _top_candidates(dense_m, k)
        bounds = np.searchsorted(qi, np.arange(qs.shape[0] + 1))
        return [
            self._hits(s, cand, pos[bounds[i] : bounds[i + 1]], d, d, None, matches, k)
            for i, d in enumerate(dense_m)
        ]

    def _lexical_scale(self, s: _Snap, lexical: LexicalIndex, query_text: str) -> float:
        """The query's best BM25 score over the whole index (cached per query and snapshot),
        so that lexical scores of different directories' children share one scale.

        The cache lives on the snapshot object (``s.cache``, new with every published
        snapshot), not in the store under ``id(s)``: CPython hands a freed snapshot's address
        to the next one, which then read the old rows' scale. ``s.uid`` is no key either: a
        write keeps it for the rows it appends (only row numbers stay valid under it)."""
        scales: OrderedDict[str, float] | None = s.cache.get(("lex_scale",))
        if scales is None:  # (no new OrderedDict per call for ``setdefault``'s default)
            scales = s.cache.setdefault(("lex_scale",), OrderedDict())
        hit = scales.get(query_text)
        if hit is None:
            hit = lexical.max_score(query_text, s.n)  # (the max of score(size=s.n))
            scales[query_text] = hit
            if len(scales) > _LEX_SCALES:
                with contextlib.suppress(KeyError):  # a concurrent reader evicted it
                    scales.popitem(last=False)
        return hit

    def find_by_tags(
        self, labels: Sequence[str], scope: Scope, limit: int
    ) -> Mapping[str, list[Node]]:
        s = self._snap
        out: dict[str, list[Node]] = {}
        if s.live == 0:
            return out
        allowed = self._candidate_rows(s, scope)
        allowed_mask: BoolArray | None = None
        if allowed is not None:
            allowed_mask = np.zeros(s.n, dtype=bool)
            allowed_mask[allowed] = True
        base = self._static_mask(s, scope, None)
        for label in labels:
            # The rows under the label's hash, checked one by one (their nodes, built for
            # the answer anyway) only until ``limit`` in scope carry the label: the same
            # first ``limit`` rows as checking every row first, which parsed the stored
            # JSON of each of the hundreds of rows a common tag has on its first lookup
            # (tag hops look up the hits' tags with every find).
            rows = self._tag_hash_rows(s, label)
            if not rows.size:
                continue
            ok = base[rows]
            if allowed_mask is not None:
                ok &= allowed_mask[rows]
            nodes: list[Node] = []
            for r in rows[ok].tolist():
                node = self._node(s, r)
                if label in tagmod.labels(node.tags):
                    nodes.append(node)
                    if len(nodes) >= limit:
                        break
            # (a label no stored row carries has no entry, one carried only out of scope an
            # empty one: the first row that carries it settles that, mostly the first row)
            if nodes or any(self._carries(s, r, label) for r in rows.tolist()):
                out[label] = [n for n in nodes if n.uri not in scope.exclude_uris]
        return out

    def _carries(self, s: _Snap, r: int, label: str) -> bool:
        """Whether row ``r`` carries tag ``label`` (its built node's tags, else its stored
        ones)."""
        node = self._node_cache.get((s.uid, r))
        tags = node.tags if node is not None else _stored_field(s, r, "tags") or []
        return label in tagmod.labels(tags)

    # ------------------------------------------------------------------ scopes and masks
    @staticmethod
    def _tag_hash_rows(s: _Snap, label: str) -> IntArray:
        """Rows with a tag whose hash is ``label``'s: every row carrying ``label`` and, on
        a hash collision, rows that do not (the caller checks)."""
        h = np.uint64(_h64(label))
        lo = int(np.searchsorted(s.tag_hash, h, side="left"))
        hi = int(np.searchsorted(s.tag_hash, h, side="right"))
        rows: IntArray = s.tag_row[lo:hi]
        return rows

    def _tag_rows(self, s: _Snap, label: str) -> IntArray:
        """Rows carrying tag ``label`` (cached per snapshot). The label hash finds them; each
        row's stored tags are then checked, so a hash collision cannot add a wrong row."""
        key = ("tag", label)
        hit: IntArray | None = s.cache.get(key)
        if hit is not None:
            return hit
        rows = self._tag_hash_rows(s, label)
        keep = [label in tagmod.labels(_stored_field(s, int(r), "tags") or []) for r in rows]
        rows = rows[np.array(keep, dtype=bool)] if rows.size else rows
        _cache_put(s, key, rows, cap=256)
        return rows

    def _subtree_rows(self, s: _Snap, uri: str) -> IntArray:
        """Rows of ``uri`` and its descendants: binary searches on the URI-sorted rows (each
        step decodes a stored URI), kept per snapshot: the tree context asks the subtrees of
        the hits' parents with every query, and hot directories come back."""
        kept: dict[str, IntArray] = s.cache.setdefault(("subtree",), {})
        hit = kept.get(uri)
        if hit is None:
            hit = self._subtree_rows_uncached(s, uri)
            if len(kept) >= _SUBTREE_KEPT:
                kept.clear()
            kept[uri] = hit
        return hit

    def _subtree_rows_uncached(self, s: _Snap, uri: str) -> IntArray:
        own = s.lookup([uri])
        if own[0] >= 0:
            linked = _leaf_family_rows(s, uri, int(own[0]))
            if linked is not None:
                return linked
        parts = [own] if own[0] >= 0 else []
        view = _UriView(s, s.by_uri)
        ranges = []
        for sep in ("/", "#"):
            lo = bisect.bisect_left(view, uri + sep)
            hi = bisect.bisect_left(view, uri + sep + "\U0010ffff")
            if hi > lo:
                parts.append(s.by_uri[lo:hi])
                ranges.append((lo, hi))
        if len(ranges) == 1:
            # one range of descendants, and the node (if stored) right before it (nothing
            # sorts between them): the subtree is one slice of the URI order, the same rows
            # in the same order as the concatenation, without copying a wide subtree's rows
            # (8 MB at 1M, on the first find after an open)
            lo, hi = ranges[0]
            if own[0] < 0:
                return s.by_uri[lo:hi]
            if lo > 0 and int(s.by_uri[lo - 1]) == int(own[0]):
                return s.by_uri[lo - 1 : hi]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def _candidate_rows(self, s: _Snap, scope: Scope) -> IntArray | None:
        """Rows allowed by the structural part of the scope (``None`` = all rows)."""
        if scope.parent_uri is not None:
            return self._children_rows(s, scope.parent_uri)
        if scope.subtrees:
            key = ("subtrees", scope.subtrees)
            hit: IntArray | None = s.cache.get(key)
            if hit is not None:
                return hit
            parts = [self._subtree_rows(s, t) for t in scope.subtrees]
            if len(parts) == 1:
                rows = parts[0]
            elif sum(p.size for p in parts) * 64 < s.n:
                # a few small subtrees (the tree context's parents): sort their rows rather
                # than mark them in a mask over every row (the same sorted, distinct rows;
                # ``_unique_ints``: one sort and a mask, where ``np.unique`` and the copy
                # to int64 cost ~3x that on a family's few hundred rows)
                rows = _unique_ints(np.concatenate(parts).astype(np.int64, copy=False))
            else:
                mask = np.zeros(s.n, dtype=bool)
                for part in parts:
                    mask[part] = True
                rows = np.flatnonzero(mask).astype(np.int64)
            # bounded: the tree context asks a different set of parents with every query
            _cache_put(s, key, rows, cap=64)
            return rows
        return None

    def _static_mask(self, s: _Snap, scope: Scope, rows: IntArray | None) -> BoolArray:
        """Alive and the cheap column filters (type, level, leaf), over ``rows`` or all."""
        c = s.cols
        if rows is None:
            mask = s.alive[: s.n].copy()

            def col(name: str) -> npt.NDArray[Any]:
                return c[name][: s.n]
        else:
            mask = s.alive[rows]

            def col(name: str) -> npt.NDArray[Any]:
                return c[name][rows]

        if scope.context_types:
            mask &= np.isin(col("ctype"), [_CTYPE_CODE[t] for t in scope.context_types])
        if scope.levels:
            mask &= np.isin(col("level"), list(scope.levels))
        if scope.leaves_only:
            mask &= col("leaf")
        if scope.non_leaves_only:
            mask &= ~col("leaf")
        return mask

    def _metadata(self, s: _Snap, r: int) -> dict[str, Any]:
        key = (s.uid, r)
        hit = self._md_cache.get(key)
        if hit is not None:
            return hit
        try:
            md = pydantic_core.from_json(s.node_json(r)).get("metadata") or {}
        except ValueError as exc:
            raise IndexCorruptError(f"row {r} of {self.path} holds invalid JSON") from exc
        md = md if isinstance(md, dict) else {}
        if len(self._md_cache) > 4 * _NODE_CACHE:
            self._md_cache.clear()
        self._md_cache[key] = md
        return md

    def _filter_masks(
        self, s: _Snap, tags: TagFilter, md: MetadataFilter | None
    ) -> tuple[BoolArray, BoolArray]:
        """(matches, contains-a-match) masks over all rows, cached per filter and snapshot."""
        key = ("filter", tags.key() + "|" + (md.key() if md else ""))
        hit: tuple[BoolArray, BoolArray] | None = s.cache.get(key)
        if hit is not None:
            return hit
        n = s.n
        match = s.alive[:n].copy()
        if tags.any_of:
            m = np.zeros(n, dtype=bool)
            for lab in tags.any_of:
                m[self._tag_rows(s, lab)] = True
            match &= m
        for lab in tags.all_of:
            m = np.zeros(n, dtype=bool)
            m[self._tag_rows(s, lab)] = True
            match &= m
        if md is not None:
            # Metadata is free-form JSON, evaluated per live row once per filter and snapshot;
            # the mask is then reused by every round of the descent.
            # A leaf on the node's URI (``MetadataFilter.on_node``) reads the row's URI too,
            # decoded only for such a filter.
            on_node = md.on_node is not None
            for r in np.flatnonzero(match):
                uri = s.uri(int(r)) if on_node else None
                if not md.matches(self._metadata(s, int(r)), uri):
                    match[r] = False
        contains = np.zeros(n, dtype=bool)
        frontier = s.parent_row[:n][match]
        while frontier.size:
            frontier = _unique_ints(frontier[frontier >= 0])
            frontier = frontier[~contains[frontier]]
            contains[frontier] = True
            frontier = s.parent_row[frontier]
        _cache_put(s, key, (match, contains), cap=8)  # two masks over every row each
        return match, contains

    def _eligibility(
        self, s: _Snap, scope: Scope, rows: IntArray | None
    ) -> tuple[BoolArray, BoolArray | None]:
        """Eligible mask (over ``rows`` or all rows) and the full-length match mask if filtered."""
        static = self._static_mask(s, scope, rows)
        matches: BoolArray | None = None
        if scope.filtered:
            match, contains = self._filter_masks(s, scope.tags, scope.metadata)
            matches = match
            leaf = s.cols["leaf"][: s.n]
            allowed = match | (contains & ~leaf) if scope.traversal else match
            static &= allowed if rows is None else allowed[rows]
        if scope.exclude_uris:
            ex = s.excluded_rows(frozenset(scope.exclude_uris))
            if ex.size:
                if rows is None:
                    static[ex] = False
                else:
                    static &= ~np.isin(rows, ex)
        return static, matches

    # ------------------------------------------------------------------ approximate search
    def _ann_usable(self, s: _Snap, rows: IntArray | None) -> bool:
        if self.ann_min_rows is None or s.live < self.ann_min_rows:
            return False
        return rows is None or rows.size * 2 >= s.live

    def _ann_candidates(
        self,
        s: _Snap,
        q: F32,
        rows: IntArray | None,
        eligible: BoolArray,
        limit: int,
        query_text: str | None,
        dense_weight: float,
        prefetched: tuple[AnnIndex, npt.NDArray[Any]] | None = None,
        cache_key: tuple[Any, ...] | None = None,
    ) -> tuple[IntArray, F32] | None:
        """Candidates from HNSW (rows it covers) plus every eligible row written after it was
        last extended, rescored exactly; ``None`` sends the search down the exact path.

        Only a wide scope uses it (at least half of the index). The HNSW query over-fetches
        and filters by the scope's eligibility; when too few eligible rows come back it fetches
        more, and past a quarter of the index it gives up. With hybrid scoring, the query's
        best BM25 rows join the candidates.
        """
        if self._paused:
            self._resume()
        ann = self._ann_index(wait=False)
        if ann is None:
            return None
        if prefetched is not None and prefetched[0] is not ann:
            # (the batch's graph since dropped -- its file cut short -- and another built:
            # its labels are not this graph's; leftovers71a)
            prefetched = None
        full = _full_mask(s, rows, eligible, cache_key)
        # over-fetch by the share of the index the scope admits (4x when unknown), so that
        # enough eligible rows come back without a second graph query
        fetch = _graph_fetch(s, _eligible_share(s, full, cache_key), limit)
        if fetch is None:  # (a narrow scope: searched exactly, not on the graph)
            return None
        ann.lock.acquire_read()
        try:
            # read under the lock: the worker adds a chunk and moves ``upto`` together
            upto, count = min(ann.upto, s.n), ann.count
            while True:
                if prefetched is not None and prefetched[1].size >= min(fetch, count):
                    got = prefetched[1]
                else:
                    got = ann.query(q, min(fetch, count))
                got = got[got >= 0]
                labels = _with_copies(s, ann, got, full, q, max(limit, 4 * _SIBLING_PARENTS))
                if labels.size * _ALIASES_EXACT > s.n and labels.size > got.size:
                    return None  # (released below) many copies of a vector: see the note
                found = ann.row[labels]
                found = found[(found >= 0) & (found < s.n)]
                cand = found[full[found]]
                if cand.size >= limit or fetch * 4 > count:
                    break
                fetch *= 4
            orphans, orphan_vecs = ann.orphan_rows(upto, s.vectors_of)
            codes = ann.orphan_codes()
        finally:
            ann.lock.release_read()
        lexical = self.lexical if query_text and dense_weight < 1.0 else None
        # the rows the graph does not cover yet, exactly: a new row is never missed; and the
        # best of those it cannot reach, nor one the graph lost
        tail = np.flatnonzero(full[upto:]) + upto if upto < s.n else _NO_ROWS
        if orphans.size:  # (one the graph did return after all: deduplicated below)
            ok = _orphans_eligible(s, orphans, full, cache_key)
            best = None
            if codes is not None and lexical is None:
                best = _reaching_orphans(s, q, np.concatenate([cand, tail]), limit, fetch, codes)
            if best is None:
                best = _best_orphans(orphans, orphan_vecs, ok, q, fetch)
            else:
                best = _best_orphans(orphans[best], orphan_vecs[best], ok[best], q, fetch)
            tail = np.concatenate([best, tail]) if best.size else tail
        cand = np.concatenate([cand, tail])
        # (the scope's size is counted only when too few came back: a sum over every row)
        if cand.size < limit and cand.size < int(np.count_nonzero(full)):
            return None
        if lexical is not None and query_text:
            lex_rows, _ = lexical.top(query_text, fetch)
            lex_rows = lex_rows[lex_rows < s.n]
            lex_rows = lex_rows[full[lex_rows]]
            cand = _unique_ints(np.concatenate([cand, lex_rows]))  # (np.union1d: numpy.ma)
        else:
            cand = _unique_ints(cand)
        dense = _matvec(s.vectors_of(cand), q)
        sib = _sibling_rows(s, cand, dense, full)
        if sib.size:
            cand = np.concatenate([cand, sib])
            dense = np.concatenate([dense, _matvec(s.vectors_of(sib), q)])
        return cand, dense


_HEADING_LOCK = threading.Lock()
"""Serialises the (rare) fills of the derived heading-path column (:meth:`EmbeddedStore.
_heading_codes`), so that a path gets one code; reads of filled rows take no lock."""
HEADING_PATH = "heading_path"
"""The chunk metadata key that holds a chunk's heading path (written at ingest; the same
key as :data:`treehop.tree_scoring.HEADING_PATH`, which the stores do not import)."""


_ALIASES_EXACT = 8
"""A graph answer whose nodes' copies (:attr:`~treehop.stores._ann.AnnIndex.owner`) make it
more than ``1 / _ALIASES_EXACT`` of the rows sends the search the exact way: every copy of a
tied vector must be a candidate, and rescoring that many gathered rows (and sorting them)
costs more than the exact path's one product over every row (80,000 memory turns of 7
distinct vectors: find p50 ~85-130 ms rescoring the copies; see bench/README.md, stop 53's
anndup section)."""
_SIBLING_PARENTS = 4
_NOT_KEPT = object()
"""``s.cache.get``'s default where ``None`` is a kept answer (:meth:`_SearchPaths.
_natural_children`: a family whose order cannot be read)."""
_LEX_SCALES = 256
"""How many queries' lexical scales one snapshot keeps (least recently added first out)."""
_SIBLING_MAX = 256
_KEPT_BATCH = 64
"""How many queries' global-step scores a batch keeps (``_hybrid_batch``; the one-query step
keeps 8): one ``find_many`` step's queries (32) all reach their tree context with theirs."""


def _with_copies(
    s: _Snap, ann: AnnIndex, got: IntArray, full: BoolArray, q: F32, m: int
) -> IntArray:
    """``got`` (graph labels) and the aliases (:attr:`~treehop.stores._ann.AnnIndex.owner`)
    of those of its nodes whose score may reach the ``m``-th best of its eligible rows, every
    copy counted (the caller holds ``ann.lock``).

    Why: an alias scores what its node scores (the same vector, the same per-row kernel), so
    every copy of a vector that may reach a search's best ``limit`` rows, or the best
    ``4 * _SIBLING_PARENTS`` whose parents give siblings, must be a candidate, as it is on the
    exact path; a node below that floor cannot bring a copy into either, and its copies
    (thousands, for a chat's "ok") are not gathered and rescored. The floor counts the graph's
    rows only (the orphans and the uncovered tail can only raise it), so it is never too high.
    """
    aliased = ann.aliased(got)
    if not aliased.any():
        return got
    heads = got[aliased]
    copies, pos = ann.copies(heads)
    rows = ann.row[np.concatenate([heads, copies])]
    group = np.concatenate([np.arange(heads.size, dtype=np.int64), pos])
    ok = (rows >= 0) & (rows < s.n)
    ok[ok] = full[rows[ok]]
    rows, group = rows[ok], group[ok]
    weight = np.bincount(group, minlength=heads.size)
    rep = np.full(heads.size, -1, dtype=np.int64)
    rep[group[::-1]] = rows[::-1]  # (each group's first eligible row: one vector scores all)
    lone = ann.row[got[~aliased]]
    lone = lone[(lone >= 0) & (lone < s.n)]
    lone = lone[full[lone]]
    has = rep >= 0
    score = _matvec(s.vectors_of(np.concatenate([rep[has], lone])), q)
    counts = np.concatenate([weight[has], np.ones(lone.size, dtype=np.int64)])
    order = np.argsort(-score, kind="stable")
    reach = np.cumsum(counts[order])
    floor = -np.inf
    if reach.size and int(reach[-1]) >= m:
        floor = float(score[order[int(np.searchsorted(reach, m))]])
    wanted = np.zeros(heads.size, dtype=bool)
    wanted[np.flatnonzero(has)[score[: int(has.sum())] >= floor]] = True
    # (NaN scores: a query the exact path also cannot order; every copy, as it would)
    wanted[np.flatnonzero(has)[np.isnan(score[: int(has.sum())])]] = True
    out: IntArray = np.concatenate([got, copies[wanted[pos]]])
    return out


def _sibling_rows(
    s: _Snap, cand: IntArray, dense: F32, full: BoolArray, exclude: IntArray | None = None
) -> IntArray:
    """The eligible children of the parents of the best graph candidates (the first
    ``_SIBLING_PARENTS`` distinct parents by score, each with at most ``_SIBLING_MAX``
    children) that are not candidates yet: they are rescored exactly with the rest.

    Why: on a tree the best rows for a query share a parent (a folder's files, a chunked
    document), and a graph search that lands in that folder returns only some of them; its
    beam does not widen with the number of candidates asked for. Measured on bench_store's
    clustered tree (30k leaves, 16 links): top-10 equal to the exhaustive one on 27% of
    queries from 64 graph candidates, 99.5% with their parents' other children added, at
    ~4 sorted-array lookups and a few hundred dot products per query. Only ever adds
    candidates, so it cannot lose a row the graph found."""
    if cand.size == 0 or not s.n:
        return np.zeros(0, np.int64)
    best = cand[(-dense).argsort()[: 4 * _SIBLING_PARENTS]]
    linked = s.parent_row[best]
    first = list(dict.fromkeys(linked[linked >= 0].tolist()))[:_SIBLING_PARENTS]
    parents = np.array(first, dtype=np.int64)
    if not parents.size:
        return np.zeros(0, np.int64)
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = s.cols["uri_hash"][parents]
    lo = keys.searchsorted(h, side="left")
    hi = keys.searchsorted(h, side="right")
    parts = [
        s.by_parent[a:b]
        for a, b in zip(lo.tolist(), hi.tolist(), strict=True)
        if b - a <= _SIBLING_MAX
    ]
    if not parts:
        return np.zeros(0, np.int64)
    rows = np.concatenate(parts)
    # a hash collision links nothing (at most _SIBLING_PARENTS parents: one compare each,
    # cheaper on a few hundred rows than a broadcast compare and its reduction)
    linked_to = s.parent_row[rows]
    ok = linked_to == first[0]
    for p in first[1:]:
        ok |= linked_to == p
    rows = rows[ok]
    rows = rows[full[rows]]
    have = (cand if exclude is None else exclude).copy()
    have.sort()
    at = np.minimum(have.searchsorted(rows), have.size - 1)
    out: IntArray = rows[have[at] != rows]
    return out


def _batch_siblings(
    s: _Snap, cand: IntArray, dense: F32, ok: BoolArray, full: BoolArray
) -> tuple[IntArray, IntArray]:
    """:func:`_sibling_rows` of every query of a batch at once: ``cand``/``dense``/``ok`` are
    (queries x candidates) with ``ok`` marking each query's real candidates. Returns (query
    index, sibling row) pairs, grouped by query, each query's siblings in the order
    :func:`_sibling_rows` gives them.

    Why: a graph batch spent ~0.2 ms per query in that function's Python (a sort, a dict of
    parents, a lookup per parent), as much as the batch's usearch call at 100k rows; here
    it is a few array operations for the whole batch (the same rule: the first
    ``_SIBLING_PARENTS`` distinct parents of the ``4 * _SIBLING_PARENTS`` best candidates,
    folders of at most ``_SIBLING_MAX`` children, eligible rows that are not candidates)."""
    b, width = cand.shape
    none = np.zeros(0, np.int64)
    if not b or not width or not s.n:
        return none, none
    m = min(4 * _SIBLING_PARENTS, width)
    score = np.where(ok, dense, -np.inf)
    best = (
        np.argpartition(-score, m - 1, axis=1)[:, :m]
        if m < width
        else np.tile(np.arange(width), (b, 1))
    )
    order = np.argsort(-np.take_along_axis(score, best, axis=1), axis=1, kind="stable")
    best = np.take_along_axis(best, order, axis=1)
    linked = s.parent_row[np.take_along_axis(cand, best, axis=1)]
    linked[~np.take_along_axis(ok, best, axis=1)] = -1
    # the first occurrence of each parent in score order, the first _SIBLING_PARENTS of them
    earlier = np.tri(m, m, -1, dtype=bool)
    seen = ((linked[:, :, None] == linked[:, None, :]) & earlier[None]).any(axis=2)
    first = (linked >= 0) & ~seen
    first &= np.cumsum(first, axis=1) <= _SIBLING_PARENTS
    qi, col = np.nonzero(first)
    parents = linked[qi, col]
    if not parents.size:
        return none, none
    keys = s.sorted_keys("parent_hash", s.by_parent)
    h = s.cols["uri_hash"][parents]
    lo = keys.searchsorted(h, side="left")
    hi = keys.searchsorted(h, side="right")
    lens = np.where(hi - lo <= _SIBLING_MAX, hi - lo, 0)
    total = int(lens.sum())
    if not total:
        return none, none
    starts = np.cumsum(lens) - lens
    at = np.repeat(lo - starts, lens) + np.arange(total, dtype=np.int64)
    rows = s.by_parent[at]
    owner = np.repeat(qi, lens)
    # a hash collision links nothing: the row's parent must be one of its query's parents
    mine = np.full((b, _SIBLING_PARENTS), -2, dtype=np.int64)
    mine[qi, np.cumsum(first, axis=1)[qi, col] - 1] = parents
    keep = (s.parent_row[rows][:, None] == mine[owner]).any(axis=1) & full[rows]
    rows, owner = rows[keep], owner[keep]
    # not a candidate of its own query already: (query, row) pairs against the candidates'
    have = np.sort((np.nonzero(ok)[0] * s.n + cand[ok]).astype(np.int64))
    pair = owner * s.n + rows
    if have.size:
        at = np.minimum(np.searchsorted(have, pair), have.size - 1)
        new = have[at] != pair
        rows, owner = rows[new], owner[new]
    return owner, rows


def _repeats(cand: IntArray, ok: BoolArray) -> BoolArray:
    """Which queries of a batch (rows of ``cand``, real where ``ok``) name one row twice: the
    one-query step counts distinct rows (:func:`_unique_ints`), so such a query goes its way.
    (A graph label maps to one row, so this is insurance, a sort of a few thousand ints.)"""
    b, width = cand.shape
    if width < 2:
        return np.zeros(b, dtype=bool)
    r = np.sort(np.where(ok, cand, -1 - np.arange(width)), axis=1)
    out: BoolArray = (r[:, 1:] == r[:, :-1]).any(axis=1)
    return out


def _top_ties(score: F32, ok: BoolArray, m: int) -> BoolArray:
    """Which queries of a batch (rows of ``score``, real where ``ok``) hold two equal scores
    among their ``m + 1`` best candidates. :func:`_sibling_rows` orders a query's best rows
    with an unstable sort, :func:`_batch_siblings` with a stable one: where no two of those
    scores are equal both read the same rows in the same order (so the same parents and
    siblings); a query with a tie there (the same text twice in two folders, say) goes the
    one-query way, so that its siblings are the ones its own step picks."""
    b, width = score.shape
    if not width:
        return np.zeros(b, dtype=bool)
    k = min(m + 1, width)
    real = np.where(ok, score, -np.inf)
    top = np.sort(np.partition(real, width - k, axis=1)[:, width - k :], axis=1)
    both = (top[:, 1:] > -np.inf) & (top[:, :-1] > -np.inf)
    out: BoolArray = ((top[:, 1:] == top[:, :-1]) & both).any(axis=1)
    return out


def _batch_floors(dense: F32, tail_d: F32, m: int) -> F32:
    """Each query's ``m``-th best exact score of its graph candidates (``dense``, ``-inf``
    where none) and the uncovered tail (``tail_d``): the floor :func:`_reaching_orphans`
    sets for the orphans; ``-inf`` where a query has fewer than ``m`` of them (then every
    eligible orphan is scored, as the one-query step does)."""
    both = np.concatenate([dense, tail_d], axis=1) if tail_d.shape[1] else dense
    width = both.shape[1]
    none = np.full(both.shape[0], -np.inf, dtype=np.float32)
    if width < m:
        return none
    kth = np.partition(both, width - m, axis=1)[:, width - m]
    out: F32 = np.where(np.count_nonzero(both > -np.inf, axis=1) >= m, kth, none)
    return out


def _batch_orphans(
    qs: F32,
    floor: F32,
    orphans: tuple[IntArray, F32, BoolArray],
    codes: _ann.OrphanCodes | None,
    fetch: int,
    threads: int,
) -> tuple[IntArray, IntArray, F32]:
    """The orphans (rows the graph cannot reach: ``orphans`` holds their rows, vectors and
    which are eligible) that the one-query step adds to each query's candidates at or above
    its ``floor`` (``inf``: none for that query; ``-inf``: every eligible one counts), as
    (query, row, exact score) triples grouped by query: every eligible orphan scoring at
    least the floor (the best ``fetch`` of them when more), as :func:`_reaching_orphans`
    and :func:`_best_orphans` give; what either adds below the floor can neither enter the
    answer nor pick its siblings (see there), so it is left out here.

    With :class:`~treehop.stores._ann.OrphanCodes` the candidates come from one int8
    product of the batch's codes and the orphans' (numkong:
    :meth:`~treehop.stores._ann.OrphanCodes.bounds_many`), or else one exact search of the
    codes for the whole batch (:meth:`~treehop.stores._ann.OrphanCodes.reaching_many`),
    then the exact kernel (:func:`_matvec`'s) scores those; without codes, the exact kernel
    scores them all. At 1M rows (8,670 orphans, 32 queries) that step took ~4 ms of CPU
    through numkong and ~10 ms through usearch's exact search. No BLAS: a
    product of 32 queries and 8,670 orphans took 3-8 ms, but OpenBLAS's worker threads then
    spin for ~120 ms of CPU after it, a core's worth on these two cores that the next
    searches wait for."""
    rows, vecs, live = orphans
    b = qs.shape[0]
    want = floor < np.inf
    if not rows.size or not want.any():
        return _NO_ROWS, _NO_ROWS, np.zeros(0, np.float32)
    if codes is None:  # (below ORPHAN_CODES_MIN orphans, or while their codes are built)
        scores = np.einsum("td,qd->qt", vecs, qs, optimize=False)
        keep = ~(scores < floor[:, None]) & live & want[:, None]
        qi, oj = np.nonzero(keep)
        score: F32 = scores[qi, oj]
    elif (pairs := codes.bounds_many(qs[want], floor[want])) is not None:
        qi, oj = np.flatnonzero(want)[pairs[0]], pairs[1]
        score = np.einsum("kd,kd->k", vecs[oj], qs[qi], optimize=False)
        keep = ~(score < floor[qi]) & live[oj]
        qi, oj, score = qi[keep], oj[keep], score[keep]
    else:
        bounded = np.flatnonzero(want & (floor > -np.inf))
        found = dict(
            zip(
                bounded.tolist(),
                codes.reaching_many(qs[bounded], floor[bounded], fetch, threads),
                strict=True,
            )
        )
        every = np.arange(rows.size, dtype=np.int64)
        asked = np.flatnonzero(want)
        parts = [found.get(i, every) for i in asked.tolist()]
        oj = np.concatenate(parts)
        qi = np.repeat(asked, [p.size for p in parts])
        score = np.einsum("kd,kd->k", vecs[oj], qs[qi], optimize=False)
        keep = ~(score < floor[qi]) & live[oj]
        qi, oj, score = qi[keep], oj[keep], score[keep]
    counts = np.bincount(qi, minlength=b)
    over = np.flatnonzero(counts > fetch)
    if over.size:  # (a query with fewer other candidates than its floor needs, say)
        starts = np.cumsum(counts) - counts
        drop = np.zeros(qi.size, dtype=bool)
        for i in over.tolist():
            a, e = int(starts[i]), int(starts[i] + counts[i])
            drop[a:e] = True
            drop[a + np.argpartition(-score[a:e], fetch - 1)[:fetch]] = False
        qi, oj, score = qi[~drop], oj[~drop], score[~drop]
    return qi.astype(np.int64, copy=False), rows[oj], score


def _new_pairs(n: int, cand: IntArray, ok: BoolArray, qi: IntArray, rows: IntArray) -> BoolArray:
    """Which (query ``qi``, row) pairs are not yet a candidate of their query (``cand`` real
    where ``ok``; rows below ``n``): an orphan the graph returned after all is kept once."""
    have = np.sort(np.nonzero(ok)[0].astype(np.int64) * n + cand[ok])
    pair = qi * n + rows
    if not have.size:
        return np.ones(pair.size, dtype=bool)
    at = np.minimum(np.searchsorted(have, pair), have.size - 1)
    out: BoolArray = have[at] != pair
    return out


def _batch_matrix(
    have: tuple[IntArray, F32, BoolArray],
    who: BoolArray,
    shared: IntArray,
    shared_d: F32 | None,
    extra: tuple[IntArray, IntArray, F32],
) -> tuple[IntArray, F32, BoolArray]:
    """A batch's (queries x candidates) rows, scores and real-candidate mask (``have``)
    widened by ``shared`` rows of every query that takes part (``who``; scores
    ``shared_d``, queries x rows) and by each query's own (query, row, score) triples
    (``extra``, grouped by query). Padding is row 0, score ``-inf``, not real: one partial
    sort per matrix instead of a concatenation per query."""
    cand, dense, ok = have
    qi, rows, score = extra
    b, width = cand.shape
    counts = np.bincount(qi, minlength=b)
    t, p = int(shared.size), int(counts.max(initial=0))
    if not t and not p:
        return have
    out_c = np.zeros((b, width + t + p), dtype=np.int64)
    out_d = np.full((b, width + t + p), -np.inf, dtype=np.float32)
    out_ok = np.zeros((b, width + t + p), dtype=bool)
    out_c[:, :width], out_d[:, :width], out_ok[:, :width] = cand, dense, ok
    if t and shared_d is not None:
        out_c[:, width : width + t] = shared
        out_d[:, width : width + t] = np.where(who[:, None], shared_d, -np.inf)
        out_ok[:, width : width + t] = who[:, None]
    if p:
        starts = np.cumsum(counts) - counts
        col = width + t + np.arange(qi.size) - starts[qi]
        out_c[qi, col], out_d[qi, col], out_ok[qi, col] = rows, score, True
    return out_c, out_d, out_ok


def _full_mask(
    s: _Snap, rows: IntArray | None, eligible: BoolArray, cache_key: tuple[Any, ...] | None
) -> BoolArray:
    """The scope's eligibility over every row (``eligible`` is over ``rows`` when a scope
    names them), kept per snapshot for a wide scope that every query asks again."""
    if rows is None:
        return eligible
    full: BoolArray | None = s.cache.get(("full", cache_key))
    if full is None:
        full = np.zeros(s.n, dtype=bool)
        full[rows] = eligible  # (not ``rows[eligible]``: an 8-byte copy of every row in scope)
        if cache_key is not None:
            _cache_put(s, ("full", cache_key), full)
    return full


def _eligible_share(s: _Snap, full: BoolArray, cache_key: tuple[Any, ...] | None) -> float:
    """The share of the index's live rows a scope admits (cached with its mask)."""
    key = ("share", cache_key)
    hit: float | None = s.cache.get(key) if cache_key is not None else None
    if hit is None:
        hit = int(np.count_nonzero(full[: s.n])) / max(s.live, 1)
        if cache_key is not None:
            _cache_put(s, key, hit)
    return hit


def _graph_fetch(s: _Snap, share: float, limit: int) -> int | None:
    """How many rows a search whose scope admits ``share`` of the index asks the graph for:
    over-fetched by that share (capped below :data:`_NARROW_SHARE`, so at most
    ``25 x limit``), at least 64; ``None`` when the scope is narrow and admits no more rows
    than that demand (before the floor), where the exact product over those few rows is
    cheaper than the graph and exact, and the search takes it.

    Why the exact way: a narrow scope's fetch is ``25 x limit`` whatever it admits; the tree
    context's directories-only search of one wide subtree (a memory session of 100,000
    turns: 2 directories, ``limit`` 10,000) asked the graph for every row, 300 ms of a 350 ms
    find. A scope of a larger share is asked no more than ``1.25 x limit / share`` rows, the
    work its caller asked for; it stays on the graph as before."""
    demand = int(1.25 * limit / max(share, _NARROW_SHARE)) + 16
    if share < _NARROW_SHARE and share * s.live <= demand:
        return None
    return max(demand, 64)


_NARROW_SHARE = 0.05
"""The admitted share below which the over-fetch stops growing."""


def _scope_key(scope: Scope) -> tuple[Any, ...] | None:
    """A hashable key of a scope whose masks can be cached (no metadata filter)."""
    if scope.metadata is not None:
        return None
    return (
        scope.subtrees,
        scope.parent_uri,
        scope.context_types,
        scope.levels,
        scope.leaves_only,
        scope.non_leaves_only,
        scope.traversal,
        scope.tags.key(),
        # (the set itself: equal sets are equal keys, and a frozenset keeps its hash, where
        # sorting the URIs again each round of a paged directory was quadratic in its rounds)
        frozenset(scope.exclude_uris),
    )


def _cache_put(s: _Snap, key: tuple[Any, ...], value: Any, cap: int = 32) -> None:
    """Store a per-snapshot mask, keeping at most ``cap`` per kind (the oldest half goes).

    Each kind's keys are kept in insertion order beside the cache, so that a put does not
    scan every key of every kind (the tree context puts one subtree set per query). A key
    dropped from the cache by someone else stays listed until its kind is trimmed. ``list``
    copies a dict's keys in one step, so a reader adding meanwhile cannot break the trim."""
    kept: dict[tuple[Any, ...], None] = s.cache.setdefault(("kind", key[0]), {})
    if len(kept) >= cap and key not in kept:
        for k in list(kept)[: max(cap // 2, 1)]:
            kept.pop(k, None)
            s.cache.pop(k, None)
    kept[key] = None
    s.cache[key] = value


def _top_candidates(m: F32, k: int, block: int = 256) -> tuple[IntArray, IntArray]:
    """(row, column) of a superset of each row's ``k`` best values, row-major: every value
    at or above a per-row bound no greater than the row's ``k``-th best.

    The bound is the ``k``-th best of the row's block maxima (blocks of ``block`` columns):
    ``k`` blocks reach it, each holding a value at least that large, so the ``k`` best are
    all at or above it. Two streaming passes (a max per block, one comparison) instead of a
    partition of every row, the slowest step of a whole-index batch (115 ms of 560 for 32
    queries x 100k rows on these cores); the caller ranks the few values found exactly.
    """
    n = m.shape[1]
    whole = n - n % block
    if whole // block < k:
        kth = np.partition(m, n - k, axis=1)[:, n - k]
    else:
        maxima = m[:, :whole].reshape(m.shape[0], -1, block).max(axis=2)
        if whole < n:
            maxima = np.concatenate([maxima, m[:, whole:].max(axis=1, keepdims=True)], axis=1)
        nb = maxima.shape[1]
        kth = np.partition(maxima, nb - k, axis=1)[:, nb - k]
    qi, pos = np.nonzero(m >= kth[:, None])
    return qi.astype(np.int64), pos.astype(np.int64)


def _top_positions(score: F32, limit: int) -> IntArray:
    """Positions of the best ``limit`` of ``score``, unordered (all of them when fewer): the
    one pick of a search's hits, alone or in a batch."""
    k = min(limit, score.size)
    top: IntArray = (-score).argpartition(k - 1)[:k] if k < score.size else np.arange(score.size)
    return top


_NO_ROWS: IntArray = np.zeros(0, np.int64)
"""No rows (shared: never written to)."""
_NO_SCORES: tuple[F32, F32, None, None] = (
    np.zeros(0, np.float32),
    np.zeros(0, np.float32),
    None,
    None,
)


FEW_COLUMNS = True
"""Whether :meth:`_SearchPaths._columns` reads a few hits' parents through
:func:`_few_parents` (``False``: always the general path; the tests and
``bench_find_toggle.py --flag`` compare the two)."""


def _few_parents(
    s: _Snap, rows: IntArray, row_l: list[int], parent: IntArray
) -> tuple[list[str], list[str | None], IntArray] | None:
    """:meth:`_SearchPaths._columns`' URIs, parent URIs and parent codes of a few hits
    (a global step's ~40) whose parents are all linked rows, on Python ints: the same
    values as its general path (codes: each parent's place among the sorted distinct
    parent rows, as ``unique_inverse`` gives them), without its array calls (``None``:
    some hit has no linked parent; the general path reads its stored parent URI).

    Why: a global step's hits lie in a few folders (~3 distinct parents among 40 at 100k
    leaves); ``unique_inverse`` (~4.5 us on 40 values), the concatenated decode of the
    hits with their parents and the parents' re-indexing cost ~4-5 us a find more than
    this (``bench/README.md``, "Issue 35 round 17")."""
    parent_l: list[int] = parent.tolist()
    distinct = sorted(set(parent_l))
    if distinct[0] < 0:
        return None
    names = s.dir_names(distinct)
    uris = s.few_uris(rows, row_l)
    if len(distinct) == 1:
        return uris, [names[0]] * len(row_l), np.zeros(len(row_l), np.int64)
    name_of = dict(zip(distinct, names, strict=True))
    parents: list[str | None] = [name_of[p] for p in parent_l]
    codes = np.array(distinct, dtype=np.int64).searchsorted(parent)
    return uris, parents, codes.astype(np.int64, copy=False)


def _best_first(cand: IntArray, top: IntArray, score: F32, k: int | None) -> IntArray:
    """Positions ``top`` of ``cand`` ordered best first, ties by row (the first ``k``)."""
    out: IntArray = top[np.lexsort((cand[top], -score[top]))][:k]
    return out


def _scored_key(
    q: F32, text: str | None, weight: float, *, lexical: bool
) -> tuple[str, bytes, str | None, float, bool]:
    """The per-snapshot cache key a query's global-step scores are kept under
    (:meth:`_SearchPaths._search_top`, the batch steps) and read by (:func:`_kept_scores`'
    callers: the one-query family search and :func:`.family_batch._kept_found`): one
    spelling, so that a writer and a reader cannot drift apart and miss silently."""
    return ("scored", q.tobytes(), text, weight, lexical)


def _kept_scores(
    kept: list[Any] | None, wanted: IntArray
) -> tuple[IntArray, F32, F32, F32 | None] | None:
    """The scores a query's global step gave ``wanted`` (a narrow scope's eligible rows, in
    its order), read from that step's candidates (``kept``: rows, dense, combined and
    lexical scores, and their sort order, made at the first read), or ``None`` unless every
    row is among them.

    Why: the tree context's family search asks for the leaves of the folders the global
    step's best hits sit in, and the global step scored them already (its candidates
    include the siblings of its best rows, ``_sibling_rows``): in ~9 of 10 finds every row
    of the family is there. Each row's cosine is the same product of one vector row
    (``_matvec`` scores rows one by one), its BM25 and blend the same arithmetic on the
    same query, so the scores read are the floats the family search would compute, without
    gathering its vectors again."""
    if kept is None or not wanted.size:
        return None
    if kept[4] is None:  # (sorted once, at the first read: most steps are never read)
        order = kept[0].argsort(kind="stable")
        kept[4] = (order, kept[0][order])
    order, ranked = kept[4]
    at = ranked.searchsorted(wanted)
    if int(_max(at)) >= ranked.size or not bool(_all(ranked[at] == wanted)):
        return None
    at = order[at]
    dense: F32 = kept[1][at]
    score: F32 = kept[2][at] if kept[2] is not kept[1] else dense
    lex: F32 | None = None if kept[3] is None else kept[3][at]
    return wanted, dense, score, lex


def _exact_dense(
    s: _Snap,
    q: F32,
    rows: IntArray | None,
    eligible: BoolArray,
    precomputed: F32 | None,
    wide_key: tuple[Any, ...] | None,
) -> tuple[IntArray, F32]:
    """Eligible rows and their exact cosines. For a wide scope (the global step) the answer
    is kept for the next call with the same query: the descent's deeper step asks again
    with a larger limit, and the scores do not depend on the limit."""
    key = ("dense", q.tobytes(), wide_key) if wide_key is not None else None
    if key is not None and precomputed is None:
        hit: tuple[IntArray, F32] | None = s.cache.get(key)
        if hit is not None:
            return hit
    if rows is None:
        cand = eligible.nonzero()[0]
        full = precomputed if precomputed is not None else _scores_all_kept(s, q)
        return cand, full[cand]
    sel = eligible.nonzero()[0]
    cand = rows[sel]
    if precomputed is not None:
        return cand, precomputed[sel]
    # A wide scope: one contiguous product and a gather of scores beats gathering the
    # vectors, which copies every row.
    wide = cand.size * 8 > s.n
    dense = _scores_all_kept(s, q)[cand] if wide else _matvec(s.vectors_of(cand), q)
    if key is not None:
        _cache_put(s, key, (cand, dense), cap=8)
    return cand, dense


def _scores_all_kept(s: _Snap, q: F32) -> F32:
    """Every row's cosine to ``q``, kept for the next wide search with the same query.

    One ``find()`` asks several wide scopes with one query vector (the global step over every
    node of the roots, tree context's pool over their leaves, a deeper global step): each is a
    gather from this one pass over the vectors instead of a pass of its own. A few queries are
    kept (``n`` floats each), so memory stays far below the vectors'.
    """
    key = ("all", q.tobytes())
    hit: F32 | None = s.cache.get(key)
    if hit is None:
        hit = s.scores_all(q)
        _cache_put(s, key, hit, cap=4)
    return hit


def _eligible_rows(rows: IntArray, full: BoolArray) -> BoolArray:
    """Which of ``rows`` (``-1``: none) the search may return."""
    ok: BoolArray = rows >= 0
    ok[ok] = full[rows[ok]]
    return ok


def _orphans_eligible(
    s: _Snap, orphans: IntArray, full: BoolArray, cache_key: tuple[Any, ...] | None
) -> BoolArray:
    """:func:`_eligible_rows` of the graph's unreachable rows, kept per snapshot for a wide
    scope while the rows and the scope's mask are the same arrays
    (:meth:`~treehop.stores._ann.AnnIndex.orphan_rows` keeps its rows): reading the mask at
    ~3,000 scattered rows of 1M cost ~0.2 ms a query in cache misses."""
    if cache_key is None:
        return _eligible_rows(orphans, full)
    key = ("orphans_ok", cache_key)
    hit: tuple[IntArray, BoolArray, BoolArray] | None = s.cache.get(key)
    if hit is not None and hit[0] is orphans and hit[1] is full:
        return hit[2]
    ok = _eligible_rows(orphans, full)
    _cache_put(s, key, (orphans, full, ok))
    return ok


def _reaching_orphans(
    s: _Snap, q: F32, others: IntArray, limit: int, fetch: int, codes: _ann.OrphanCodes
) -> IntArray | None:
    """Positions (in the orphan arrays) of the orphans that may score at least the floor:
    the ``max(limit, 4 * _SIBLING_PARENTS)``-th best exact score of the other candidates
    (``others``: the graph's and the uncovered tail's, maybe repeated). ``None`` when there
    are fewer of those (then every orphan is scored, as before).

    :func:`_best_orphans` of these positions adds the same orphans at or above the floor as
    of all orphans (an orphan's exact score is at most its 8-bit bound, so each of them is
    here; the best ``fetch`` of a superset holding them all hold the same ones), and those
    below it can neither enter the top ``limit`` nor be among the best
    ``4 * _SIBLING_PARENTS`` rows whose parents give siblings: the floor is already reached
    by that many rows without them. So the step's answer is the same; fewer orphans below
    the floor join the rescored candidates."""
    m = max(limit, 4 * _SIBLING_PARENTS)
    rows = _unique_ints(others)
    if rows.size < m:
        return None
    dense = _matvec(s.vectors_of(rows), q)
    floor = float(np.partition(dense, rows.size - m)[rows.size - m])
    return codes.reaching(q, floor, fetch)


def _best_orphans(rows: IntArray, vecs: F32, ok: BoolArray, q: F32, k: int) -> IntArray:
    """The ``k`` best eligible (``ok``) of the rows the graph cannot reach (``vecs``:
    theirs), by exact score: as many as the graph is asked for, so the candidates hold the
    dense top-k of every row whichever side it sits on.

    (Scoring them is a pass over ~3,000 rows at 1M, ~4.6 MB read from memory per query; a
    cheaper first pass with ``np.vecdot`` and an exact one within its rounding margin
    picked the same rows but measured slower with the matrix out of the cache, as it is
    between finds.)"""
    if int(np.count_nonzero(ok)) <= k:
        out: IntArray = rows[ok]
        return out
    score = _matvec(vecs, q)
    score[~ok] = -np.inf
    best: IntArray = rows[(-score).argpartition(k - 1)[:k]]
    return best
