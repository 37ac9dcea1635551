"""A BM25 index over row-addressed documents, kept in sync with the embedded vector store.

The embedded store keeps node ``i`` in row ``i`` of its numpy arrays; this index uses the same
row numbers, so a hybrid search combines ``dense[rows]`` with ``lexical.score(q, rows)`` by
position, and a scope that the store has already resolved to rows (a directory's children, a
subtree) restricts BM25 without any translation.

Why not ``bm25s``: it has no incremental add or delete (every upsert would re-index the whole
collection), and its subset restriction (``weight_mask``) still ranks the whole corpus and pads
the answer with zero-score rows from outside the mask. Both are measured in
``bench/bench_lexical.py``.

Layout (pure numpy, no scipy):

* a **log** of postings ``(term, row, tf)``, append-only. Each upsert appends one contiguous
  *block* per document; ``start[row]``/``count[row]`` point at the row's current block. A posting
  is live iff it lies inside its row's block (one flag per posting records it), so replacing or
  deleting a row costs O(terms of the row): the block is the per-row term counts that let a
  delete decrement document frequencies and the total length without re-tokenising anything.
* a **term-sorted permutation** of the log (``perm`` with ``indptr`` per term id: CSC-style) for
  the postings of a query term. Entries appended since the last sort form a small unsorted
  *tail*, scanned with one vectorised ``isin``; when a write makes the tail outgrow an eighth of
  the log it is merged into the sorted part (a stable sort that finds the sorted prefix as one
  run), so the cost of sorting is amortised over writes and queries never sort.
* dead postings (replaced or deleted rows) are skipped by the liveness test and dropped by a
  compaction once they outnumber the live ones, by :meth:`LexicalIndex.remap` and by
  :meth:`LexicalIndex.save`.

Scoring a query over a **subset** of rows (the per-directory search of the hierarchical
retriever) walks the subset's own blocks when they hold fewer postings than the query terms'
posting lists, so scoring 50 children costs microseconds whatever the collection size.

BM25 is Okapi's with Lucene's IDF, ``log(1 + (N - df + 0.5) / (df + 0.5))``, which is never
negative; a repeated query term counts once per occurrence, as in Lucene and ``bm25s``.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise, repeat
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np
import numpy.typing as npt

from .errors import IndexCorruptError, InvalidQueryError, StoreError
from .text_tokenize import AsciiWords, ascii_form, ascii_words, index_terms, shared_words
from .text_tokenize import tokenize as default_tokenize
from .text_tokenize import tokenizer_id as default_tokenizer_id
from .validation import shown_value

__all__ = [
    "DENSE_WEIGHT_MAX",
    "DENSE_WEIGHT_MIN",
    "LexicalIndex",
    "hybrid_scores",
    "normalize_lexical",
    "validate_dense_weight",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]
RowsLike = npt.ArrayLike

FORMAT_VERSION = 1
_META_FILE = "lexical.json"
_ARRAYS = (
    "log_term",
    "log_row",
    "log_tf",
    "perm",
    "indptr",
    "start",
    "count",
    "doc_len",
    "present",
)

DENSE_WEIGHT_MIN = 0.2
DENSE_WEIGHT_MAX = 1.0


_WRITE_PART = 1 << 20
"""Tokens per part of a write's sort of (document, term) keys (:meth:`LexicalIndex._write`):
memory, not results (any part size writes the same postings); the size of the tagger's
parts (``keywords._PART_CHARS``), which keeps a part's temporaries a few megabytes."""


def _ranges(starts: IntArray, counts: IntArray) -> IntArray:
    """Concatenation of ``arange(s, s + c)`` for each pair, without a Python loop."""
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(counts)
    # Each output position is its block's start plus its offset inside the block.
    offsets = np.repeat(ends - counts, counts)
    return np.repeat(starts, counts) + (np.arange(total, dtype=np.int64) - offsets)


def _stable_argsort(keys: npt.NDArray[np.integer[Any]], bound: int) -> IntArray:
    """``np.argsort(keys, kind="stable")`` for keys in ``[0, bound)``: the same permutation (a
    stable order is unique), by 16-bit digits where ``bound`` allows.

    Why: numpy's stable sort is a radix sort for 16-bit keys and a timsort otherwise; sorting
    the postings log by term (a first ingest: every posting) was ~3x faster by radix, one
    pass per digit, lowest first (each pass stable keeps the order of the one before)."""
    if keys.size and int(keys.max()) >= bound:  # (never, for term ids: a safe fallback)
        bound = 1 << 33
    if bound <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    if bound > 1 << 32:
        return np.argsort(keys, kind="stable")
    low = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    return low[np.argsort((keys[low] >> 16).astype(np.uint16), kind="stable")]


def _has_duplicates(a: IntArray) -> bool:
    # A sort, not np.unique: numpy 2's hash-based unique is many times slower on large input.
    s = np.sort(a)
    return bool((s[1:] == s[:-1]).any())


def _add_counts(counts: IntArray, ids: npt.NDArray[np.integer[Any]], sign: int) -> None:
    """``counts[i] += sign`` for every occurrence of ``i`` in ids, in time O(len(ids)) for a
    small update (a one-document upsert must not cost O(vocabulary))."""
    if ids.shape[0] * 8 < counts.shape[0]:
        np.add.at(counts, ids, sign)
    else:
        counts += sign * np.bincount(ids, minlength=counts.shape[0])[: counts.shape[0]]


def _compact_ints(a: IntArray, bound: int) -> npt.NDArray[np.signedinteger[Any]]:
    """``a`` as int32 when its values stay below ``bound`` < 2**31: the term-sorted permutation
    is the largest array of the index, and int32 halves it."""
    return a.astype(np.int32) if bound < 2**31 else a


def _as_rows(rows: RowsLike, what: str, error: type[Exception]) -> IntArray:
    arr = np.asarray(rows)
    if arr.ndim != 1:
        raise error(f"{what} must be a 1-D array of row numbers, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise error(f"{what} must be integers, got dtype {arr.dtype}")
    out = arr.astype(np.int64, copy=False)
    if int(out.min()) < 0:
        raise error(f"{what} must be non-negative")
    return out


class LexicalIndex:
    """Okapi BM25 over documents addressed by row number, updated in place.

    ``tokenizer`` turns a text into tokens (default :func:`treehop.text_tokenize.tokenize`);
    ``tokenizer_id`` names it and is stored by :meth:`save`, so that :meth:`load` refuses an
    index whose tokens this process would not reproduce. Thread-safe: every method holds one
    lock (a query only fills a per-row cache).
    """

    _merge_min = 4096
    """The unsorted tail is merged once it holds more postings than this and 1/8 of the log."""
    _compact_min = 4096
    """Dead postings are dropped once there are more than this and than live ones (unused
    terms likewise, against half the vocabulary)."""

    def __init__(
        self,
        *,
        k1: float = 1.2,
        b: float = 0.75,
        tokenizer: Callable[[str], list[str]] | None = None,
        tokenizer_id: str | None = None,
    ) -> None:
        # (a number first: math.isfinite on a list raised TypeError, not a TreehopError)
        if not (isinstance(cast(object, k1), numbers.Real) and math.isfinite(k1) and k1 >= 0):
            raise InvalidQueryError(f"k1 must be a finite number >= 0, got {shown_value(k1)}")
        if not (isinstance(cast(object, b), numbers.Real) and math.isfinite(b) and 0.0 <= b <= 1.0):
            raise InvalidQueryError(f"b must be in [0, 1], got {shown_value(b)}")
        if tokenizer is not None and tokenizer_id is None:
            raise InvalidQueryError("a custom tokenizer needs a tokenizer_id to persist with")
        self._k1 = float(k1)
        self._b = float(b)
        self._tokenize = tokenizer or default_tokenize
        self._tokenizer_id = tokenizer_id or default_tokenizer_id()
        self._lock = threading.RLock()
        self._recent: dict[tuple[str, ...], _Recent] = {}
        self._recent_state: tuple[Any, ...] = ()
        self._query_memo: dict[str, tuple[str, ...]] = {}
        self._clear()

    # ----------------------------------------------------------------------------- state

    def _clear(self) -> None:
        self._vocab: dict[str, int] = {}
        self._terms: list[str] = []
        self._df = np.zeros(0, dtype=np.int64)
        # Per row: block start in the log, number of distinct terms, token count, presence.
        self._start = np.zeros(0, dtype=np.int64)
        self._count = np.zeros(0, dtype=np.int64)
        self._dl = np.zeros(0, dtype=np.float32)
        self._present = np.zeros(0, dtype=bool)
        # The postings log (first _m entries used).
        self._m = 0
        self._log_term = np.zeros(0, dtype=np.int32)
        self._log_row = np.zeros(0, dtype=np.int32)
        self._log_tf = np.zeros(0, dtype=np.float32)
        # Whether each posting still lies in its row's current block (the liveness test, kept
        # as one byte per posting so that a query filters with a single gather).
        self._alive = np.zeros(0, dtype=bool)
        # Term-sorted permutation of log[:_msorted]; indptr has one entry per term id + 1.
        self._perm: npt.NDArray[np.signedinteger[Any]] = np.zeros(0, dtype=np.int32)
        self._indptr = np.zeros(1, dtype=np.int64)
        self._msorted = 0
        self._ndocs = 0
        self._total_len = 0.0
        self._dead = 0
        self._norm_cache: FloatArray | None = None

    def clear(self) -> None:
        """Forget every document."""
        with self._lock:
            self._clear()

    @property
    def k1(self) -> float:
        return self._k1

    @property
    def b(self) -> float:
        return self._b

    @property
    def tokenizer_id(self) -> str:
        return self._tokenizer_id

    def __len__(self) -> int:
        """Number of documents (rows with text, empty texts included)."""
        return self._ndocs

    @property
    def row_bound(self) -> int:
        """One past the highest row that holds a document (0 when empty)."""
        present = np.flatnonzero(self._present)
        return int(present[-1]) + 1 if present.size else 0

    @property
    def avgdl(self) -> float:
        """Average document length in tokens (0 when empty)."""
        return self._total_len / self._ndocs if self._ndocs else 0.0

    @property
    def vocabulary_size(self) -> int:
        """Distinct terms with at least one live posting."""
        return int(np.count_nonzero(self._df))

    def contains(self, rows: RowsLike) -> npt.NDArray[np.bool_]:
        """Which of ``rows`` hold a document."""
        r = _as_rows(rows, "rows", InvalidQueryError)
        out = np.zeros(r.shape[0], dtype=bool)
        inside = r < self._present.shape[0]
        out[inside] = self._present[r[inside]]
        return out

    def document_frequency(self, term: str) -> int:
        """How many documents contain ``term`` (an already tokenised term)."""
        tid = self._vocab.get(term)
        return 0 if tid is None else int(self._df[tid])

    def tokenize(self, text: str) -> list[str]:
        """The tokens this index makes of ``text``."""
        return self._tokenize(text)

    def _query_tokens(self, query: str) -> tuple[str, ...]:
        """The tokens of a query text, kept for the last few short queries (the tokenizer
        is a pure function of the text: :attr:`tokenizer_id` names what it produces).

        Why: one hybrid ``find()`` asks the index about its query four times (the graph
        step's best rows, its scale, the global and the family blend), each tokenising
        the same text again."""
        memo = self._query_memo
        got = memo.get(query)
        if got is None:
            got = tuple(self._tokenize(query))
            if len(query) <= _MEMO_CHARS:
                if len(memo) >= _MEMO_QUERIES:  # (a few recent queries: the oldest go)
                    memo.clear()
                memo[query] = got
        return got

    # ----------------------------------------------------------------------------- writes

    def _grow_rows(self, bound: int) -> None:
        cap = self._present.shape[0]
        if bound <= cap:
            return
        new_cap = max(bound, cap + cap // 2, 16)

        def grow(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
            out = np.zeros(new_cap, dtype=a.dtype)
            out[:cap] = a
            return out

        self._start = grow(self._start)
        self._count = grow(self._count)
        self._dl = grow(self._dl)
        self._present = grow(self._present)

    def _grow_log(self, extra: int) -> None:
        need = self._m + extra
        cap = self._log_term.shape[0]
        if need <= cap:
            return
        new_cap = max(need, cap + cap // 2, 1024)
        for name in ("_log_term", "_log_row", "_log_tf", "_alive"):
            old = getattr(self, name)
            new = np.zeros(new_cap, dtype=old.dtype)
            new[: self._m] = old[: self._m]
            setattr(self, name, new)

    def _term_ids(self, flat: list[str], missing_ok: bool = False) -> IntArray:
        """Term ids of ``flat`` tokens, adding unseen terms to the vocabulary (``missing_ok``:
        '' is no term, id -1)."""
        vocab = self._vocab
        ids = np.fromiter(map(vocab.get, flat, repeat(-1)), dtype=np.int64, count=len(flat))
        if ids.size and int(ids.min()) < 0:
            # dict.fromkeys keeps first-seen order, so ids are assigned deterministically.
            missing = np.flatnonzero(ids < 0)
            if missing.shape[0] * 2 > len(flat):  # a first build: mostly new terms
                unseen = {t: None for t in dict.fromkeys(flat) if t not in vocab}
            else:
                unseen = dict.fromkeys(flat[i] for i in missing.tolist())
            if missing_ok:
                unseen.pop("", None)
            base = len(self._terms)
            vocab.update(zip(unseen, range(base, base + len(unseen)), strict=True))
            self._terms.extend(unseen)
            looked = (
                map(vocab.get, flat, repeat(-1)) if missing_ok else map(vocab.__getitem__, flat)
            )
            ids = np.fromiter(looked, dtype=np.int64, count=len(flat))
        return ids

    def _remove_rows(self, rows: IntArray) -> None:
        """Take ``rows`` (present ones) out of the statistics; their postings become dead."""
        rows = rows[self._present[rows]]
        if rows.size == 0:
            return
        self._norm_cache = None
        counts = self._count[rows]
        idx = _ranges(self._start[rows], counts)
        if idx.size:
            _add_counts(self._df, self._log_term[idx], -1)
            self._alive[idx] = False
        self._ndocs -= int(rows.size)
        self._total_len -= float(self._dl[rows].sum(dtype=np.float64))
        self._dead += int(counts.sum())
        self._present[rows] = False
        self._count[rows] = 0
        self._start[rows] = 0
        self._dl[rows] = 0.0

    def upsert(self, rows: RowsLike, texts: Sequence[str]) -> None:
        """Index ``texts[i]`` as the document of ``rows[i]``, replacing what the row held."""
        if isinstance(texts, str):
            raise StoreError("texts must be a sequence of strings, not one string")
        r = _as_rows(rows, "rows", StoreError)
        if r.shape[0] != len(texts):
            raise StoreError(f"{r.shape[0]} rows but {len(texts)} texts")
        for text in texts:
            if not isinstance(text, str):
                raise StoreError(f"texts must be strings, got {type(text).__name__}")
        if self._tokenize is not default_tokenize:
            self.upsert_tokens(r, [self._tokenize(text) for text in texts])
            return
        # The default tokenizer: runs of texts with an ASCII form are cut in one pass each,
        # each distinct word made a term and looked up once; the others are tokenised one
        # by one. Runs are numbered in text order, so term ids are those token lists give.
        forms = [ascii_form(text) for text in texts]
        runs: list[tuple[int, AsciiWords | None, list[str]]] = []
        i = 0
        while i < len(texts):
            j = i
            while j < len(texts) and forms[j] is not None:
                j += 1
            if j > i:
                run = cast("list[str]", forms[i:j])
                # (within an ingest write, from the tagger's cut of the same texts)
                words = shared_words(run) if j - i > 1 else None
                runs.append((j - i, words or ascii_words(run), []))
                i = j
            else:
                runs.append((1, None, self._tokenize(texts[i])))
                i += 1
        if not self._check_rows(r):
            return
        with self._lock:
            ids_parts: list[IntArray] = []
            len_parts: list[IntArray] = []
            for n_docs, words, tokens in runs:
                if words is None:  # one text, tokenised alone
                    ids_parts.append(self._term_ids(tokens))
                    len_parts.append(np.array([len(tokens)], dtype=np.int64))
                    continue
                distinct, occ, doc = words
                terms = index_terms(distinct)
                of_word = self._term_ids(terms, missing_ok=True)
                of_word[[k for k, t in enumerate(terms) if not t]] = -1  # never a term
                ids = of_word[occ]
                kept = ids >= 0
                ids_parts.append(ids[kept])
                len_parts.append(np.bincount(doc[kept], minlength=n_docs).astype(np.int64))
            self._write(r, np.concatenate(len_parts), np.concatenate(ids_parts))

    def _check_rows(self, r: IntArray) -> bool:
        """Whether there is anything to write; raises on repeated rows."""
        if r.size == 0:
            return False
        if _has_duplicates(r):
            raise StoreError("rows must be unique within one upsert")
        return True

    def upsert_tokens(self, rows: RowsLike, tokens: Sequence[Sequence[str]]) -> None:
        """Like :meth:`upsert` with texts already tokenised (by this index's tokenizer)."""
        r = _as_rows(rows, "rows", StoreError)
        if r.shape[0] != len(tokens):
            raise StoreError(f"{r.shape[0]} rows but {len(tokens)} token lists")
        if not self._check_rows(r):
            return
        with self._lock:
            if any(isinstance(toks, str) for toks in tokens):
                raise StoreError("each document's tokens must be a list, not one string")
            lengths = np.fromiter((len(t) for t in tokens), dtype=np.int64, count=len(tokens))
            flat_ids = self._term_ids(list(chain.from_iterable(tokens)))
            self._write(r, lengths, flat_ids)

    def _write(self, r: IntArray, lengths: IntArray, flat_ids: IntArray) -> None:
        """Replace rows ``r``'s documents by the term ids ``flat_ids`` (``lengths[i]`` of
        them for ``r[i]``, in order); the caller holds the lock."""
        vocab_size = len(self._terms)
        if self._df.shape[0] < vocab_size:
            df = np.zeros(max(vocab_size, self._df.shape[0] * 2), dtype=np.int64)
            df[: self._df.shape[0]] = self._df
            self._df = df

        # A sort of (document, term) keys yields every document's distinct terms and their
        # counts, grouped by document in input order: the new blocks. Sorted by parts of
        # consecutive documents (~1M tokens each, the same blocks): over a large first
        # ingest's every token, each temporary was tens of megabytes mapped fresh.
        ends = np.cumsum(lengths)
        window = (ends - lengths) // _WRITE_PART
        cut = [0, *(np.flatnonzero(window[1:] != window[:-1]) + 1).tolist(), r.shape[0]]
        blocks: list[tuple[int, IntArray, IntArray, IntArray]] = []
        for a, b in pairwise(cut):  # (r is not empty: every part holds a document)
            ids = flat_ids[int(ends[a] - lengths[a]) : int(ends[b - 1])]
            doc_of = np.repeat(np.arange(b - a, dtype=np.int64), lengths[a:b])
            uniq, tf = np.unique(doc_of * vocab_size + ids, return_counts=True)
            new_doc = uniq // vocab_size if vocab_size else uniq
            blocks.append((a, new_doc, uniq - new_doc * vocab_size, tf))
        counts = np.concatenate(
            [
                np.bincount(d, minlength=b - a)
                for (a, d, _, _), b in zip(blocks, cut[1:], strict=True)
            ]
        ).astype(np.int64)

        self._grow_rows(int(r.max()) + 1)
        self._remove_rows(r)
        self._grow_log(int(counts.sum()))
        m0 = self._m
        m1 = m0
        for a, new_doc, new_term, tf in blocks:
            end = m1 + new_doc.shape[0]
            self._log_term[m1:end] = new_term
            self._log_row[m1:end] = r[new_doc + a]
            self._log_tf[m1:end] = tf
            self._alive[m1:end] = True
            _add_counts(self._df, new_term, 1)
            m1 = end
        self._m = m1
        self._start[r] = m0 + (np.cumsum(counts) - counts)
        self._count[r] = counts
        self._dl[r] = lengths
        self._present[r] = True
        self._ndocs += int(r.shape[0])
        self._total_len += float(lengths.sum())
        self._norm_cache = None
        self._maybe_compact()
        self._maybe_merge_tail()

    def delete(self, rows: RowsLike) -> int:
        """Remove the documents of ``rows``; returns how many existed (others are ignored)."""
        r = _as_rows(rows, "rows", StoreError)
        with self._lock:
            r = np.sort(r[r < self._present.shape[0]])
            r = r[np.concatenate([[True], r[1:] != r[:-1]])] if r.size else r
            existed = int(np.count_nonzero(self._present[r]))
            self._remove_rows(r)
            self._maybe_compact()
            return existed

    def remap(self, old_to_new: RowsLike) -> None:
        """Renumber rows after the store compacted its arrays.

        ``old_to_new[old]`` is the new row of ``old``, or -1 for a row that is gone (a present
        row mapped to -1 is deleted). Must cover every present row; the new rows of present
        documents must be distinct.
        """
        mapping = np.asarray(old_to_new)
        if mapping.ndim != 1 or (mapping.size and not np.issubdtype(mapping.dtype, np.integer)):
            raise StoreError("old_to_new must be a 1-D integer array")
        mapping = mapping.astype(np.int64, copy=False)
        with self._lock:
            present_rows = np.flatnonzero(self._present)
            if present_rows.size and int(present_rows[-1]) >= mapping.shape[0]:
                raise StoreError(
                    f"old_to_new has {mapping.shape[0]} entries but row "
                    f"{int(present_rows[-1])} holds a document"
                )
            if mapping.size and int(mapping.min()) < -1:
                raise StoreError("old_to_new entries must be >= -1")
            targets = mapping[present_rows]
            if _has_duplicates(targets[targets >= 0]):
                raise StoreError("old_to_new maps two documents to the same row")
            self._remove_rows(present_rows[targets < 0])
            present_rows, targets = present_rows[targets >= 0], targets[targets >= 0]
            self._compact()
            bound = int(targets.max()) + 1 if targets.size else 0
            start = np.zeros(bound, dtype=np.int64)
            count = np.zeros(bound, dtype=np.int64)
            dl = np.zeros(bound, dtype=np.float32)
            present = np.zeros(bound, dtype=bool)
            start[targets] = self._start[present_rows]
            count[targets] = self._count[present_rows]
            dl[targets] = self._dl[present_rows]
            present[targets] = True
            row_map = np.full(max(self._present.shape[0], 1), -1, dtype=np.int64)
            row_map[present_rows] = targets
            self._log_row[: self._m] = row_map[self._log_row[: self._m]]
            self._start, self._count, self._dl, self._present = start, count, dl, present
            self._norm_cache = None

    def _live_mask(self, idx: IntArray) -> npt.NDArray[np.bool_]:
        live: npt.NDArray[np.bool_] = self._alive[idx]
        return live

    def _maybe_compact(self) -> None:
        if self._dead > self._compact_min and self._dead > self._m - self._dead:
            self._compact()

    def _compact(self) -> None:
        """Drop dead postings, keeping log order (so the sorted prefix stays sorted)."""
        if self._dead == 0:
            return
        m = self._m
        idx = np.arange(m, dtype=np.int64)
        live = self._live_mask(idx)
        new_pos = np.cumsum(live) - 1
        keep = np.flatnonzero(live)
        n = int(keep.shape[0])
        self._log_term = np.ascontiguousarray(self._log_term[keep])
        self._log_row = np.ascontiguousarray(self._log_row[keep])
        self._log_tf = np.ascontiguousarray(self._log_tf[keep])
        self._alive = np.ones(n, dtype=bool)
        has_block = self._count > 0
        self._start[has_block] = new_pos[self._start[has_block]]
        self._start[~has_block] = 0
        sorted_live = live[self._perm]
        self._perm = _compact_ints(new_pos[self._perm[sorted_live]], n)
        kept_terms = self._log_term[self._perm]
        self._indptr = np.searchsorted(
            kept_terms, np.arange(self._indptr.shape[0], dtype=np.int64), side="left"
        ).astype(np.int64)
        self._msorted = int(np.count_nonzero(live[: self._msorted]))
        self._m = n
        self._dead = 0
        unused = len(self._terms) - int(np.count_nonzero(self._df[: len(self._terms)]))
        if unused > max(self._compact_min, len(self._terms) // 2):
            self._prune_vocab()

    def _prune_vocab(self) -> None:
        """Forget terms no live document uses (needs a compacted log: no dead postings)."""
        v = len(self._terms)
        alive = self._df[:v] > 0
        if alive.all():
            return
        new_id = np.cumsum(alive) - 1
        alive_ids = np.flatnonzero(alive)
        self._log_term[: self._m] = new_id[self._log_term[: self._m]]
        # Unused terms own empty ranges of the sorted permutation, so dropping their indptr
        # entries keeps every other term's range; ids keep their order, so perm stays sorted.
        n_sorted = self._indptr.shape[0] - 1
        kept = alive_ids[alive_ids < n_sorted]
        self._indptr = np.concatenate([self._indptr[kept], self._indptr[-1:]])
        self._terms = [self._terms[i] for i in alive_ids]
        self._vocab = {t: i for i, t in enumerate(self._terms)}
        self._df = self._df[alive_ids].copy()

    def _merge_tail(self) -> None:
        """Fold the unsorted tail into the term-sorted permutation."""
        m, ms = self._m, self._msorted
        vocab_size = len(self._terms)
        if m == ms and self._indptr.shape[0] == vocab_size + 1:
            return
        order_src = np.concatenate([self._perm, np.arange(ms, m, dtype=np.int64)])
        keys = self._log_term[order_src]
        order = _stable_argsort(keys, vocab_size)
        self._perm = _compact_ints(order_src[order], m)
        self._indptr = np.searchsorted(
            keys[order], np.arange(vocab_size + 1, dtype=np.int64), side="left"
        ).astype(np.int64)
        self._msorted = m

    # ----------------------------------------------------------------------------- queries

    def _query_terms(self, tokens: Sequence[str]) -> tuple[IntArray, FloatArray]:
        """Known query term ids (sorted, unique) and their weights: IDF x occurrences."""
        ids = [self._vocab[t] for t in tokens if t in self._vocab]
        if not ids or self._ndocs == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        terms, occurrences = np.unique(np.asarray(ids, dtype=np.int64), return_counts=True)
        df = self._df[terms].astype(np.float64)
        keep = df > 0
        terms, occurrences, df = terms[keep], occurrences[keep], df[keep]
        n = float(self._ndocs)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        return terms, (idf * occurrences).astype(np.float32)

    def _row_norm(self) -> FloatArray:
        """Per row ``k1 * (1 - b + b * dl / avgdl)``, cached until the next write.

        It depends on the average length, which every write changes, so it cannot live in the
        postings (as ``bm25s`` precomputes whole scores); one O(rows) pass per write is cheap.
        """
        if self._norm_cache is None:
            avgdl = self.avgdl or 1.0
            k1, b = self._k1, self._b
            self._norm_cache = (k1 * (1.0 - b) + (k1 * b / avgdl) * self._dl).astype(np.float32)
        return self._norm_cache

    def _bm25(self, idx: IntArray, rows: npt.NDArray[Any], w: FloatArray) -> FloatArray:
        """BM25 contribution of log entries ``idx`` (of ``rows``), given their terms' weights."""
        tf = self._log_tf[idx]
        out: FloatArray = w * tf * np.float32(self._k1 + 1.0) / (tf + self._row_norm()[rows])
        return out

    def _postings(self, terms: IntArray, weights: FloatArray) -> tuple[IntArray, FloatArray]:
        """Live log indices of every posting of ``terms``, with each posting's term weight."""
        n_sorted_terms = self._indptr.shape[0] - 1
        sel = terms < n_sorted_terms
        in_sorted = terms[sel]
        lengths = self._indptr[in_sorted + 1] - self._indptr[in_sorted]
        # Sorted postings come grouped by term, so their weights are a repeat, not a lookup.
        idx = self._perm[_ranges(self._indptr[in_sorted], lengths)].astype(np.int64, copy=False)
        w = np.repeat(weights[sel], lengths)
        if self._m > self._msorted:
            tail_terms = self._log_term[self._msorted : self._m]
            hit = np.flatnonzero(np.isin(tail_terms, terms))
            idx = np.concatenate([idx, hit.astype(np.int64) + self._msorted])
            w = np.concatenate([w, weights[np.searchsorted(terms, tail_terms[hit])]])
        if self._dead:
            live = self._live_mask(idx)
            idx, w = idx[live], w[live]
        return idx, w

    def _recent_query(self, tokens: Sequence[str]) -> _Recent:
        """The query's term ids and weights, and (once asked) its scores over every row,
        kept while the index is unchanged.

        Why: one ``find()`` scores the same query several times (the global step, the tree
        context's family and pool searches, the memory sessions), each over a different
        subset of rows; the query terms and, where a subset is scored through the posting
        lists, the whole score vector are the same every time. The state key holds every
        field a write, compaction or tail merge replaces (the row-norm array is rebuilt after
        every write), so a cached answer is exactly what a fresh computation would give."""
        norm, perm, log_term = self._row_norm(), self._perm, self._log_term
        counts = (
            self._m,
            self._msorted,
            self._dead,
            self._ndocs,
            self._present.shape[0],
            len(self._terms),
        )
        old = self._recent_state
        # (the arrays by identity, the counts by value: one tuple compare instead of a
        # generator over the nine fields, ~1.5 us less per call and four calls a find)
        if not (
            old and old[0] is norm and old[1] is perm and old[2] is log_term and old[3] == counts
        ):
            self._recent.clear()
            self._recent_state = (norm, perm, log_term, counts)
        key = tuple(tokens)
        hit = self._recent.get(key)
        if hit is None:
            if len(self._recent) >= _RECENT_QUERIES:  # the oldest query goes
                del self._recent[next(iter(self._recent))]
            hit = self._recent[key] = _Recent(*self._query_terms(tokens))
        return hit

    def _all_scores(self, recent: _Recent) -> FloatArray:
        """The query's BM25 score of every row below ``_present.shape[0]`` (computed once
        per query and index state)."""
        if recent.full is None:
            full = np.zeros(self._present.shape[0], dtype=np.float32)
            if recent.terms.size:
                idx, w = self._postings(recent.terms, recent.weights)
                r = self._log_row[idx]
                sums = np.bincount(r, weights=self._bm25(idx, r, w))
                full[: sums.shape[0]] = sums
            recent.full = full
        return recent.full

    def score_tokens(
        self, tokens: Sequence[str], rows: RowsLike | None = None, *, size: int | None = None
    ) -> FloatArray:
        """BM25 scores of an already tokenised query; see :meth:`score`."""
        with self._lock:
            recent = self._recent_query(tokens)
            terms = recent.terms
            if rows is None:
                n_out = self.row_bound if size is None else int(size)
                if n_out < 0:
                    raise InvalidQueryError("size must be >= 0")
                out = np.zeros(n_out, dtype=np.float32)
                if terms.size == 0:
                    return out
                # (rows past ``n_out`` only drop out: every kept row sums the same postings
                # in the same order)
                full = self._all_scores(recent)
                k = min(n_out, full.shape[0])
                out[:k] = full[:k]
                return out

            sub = _as_rows(rows, "rows", InvalidQueryError)
            if terms.size == 0 or sub.size == 0:
                return np.zeros(sub.shape[0], dtype=np.float32)
            return self._score_rows(recent, sub)

    def _score_rows(self, recent: _Recent, sub: IntArray) -> FloatArray:
        """BM25 scores of rows ``sub`` (checked, non-empty) for a query with indexed
        terms (``recent``), under the lock."""
        terms, weights = recent.terms, recent.weights
        out = np.zeros(sub.shape[0], dtype=np.float32)
        inside = sub < self._present.shape[0]
        pos = np.flatnonzero(inside)
        srows = sub[inside]
        counts = self._count[srows]
        # Walk the subset's own blocks when that is less work than the posting lists.
        if int(counts.sum()) <= int(self._df[terms].sum()):
            idx = _ranges(self._start[srows], counts)
            owner = np.repeat(pos, counts)
            t = self._log_term[idx]
            at = np.minimum(np.searchsorted(terms, t), terms.shape[0] - 1)
            match = terms[at] == t
            idx, owner = idx[match], owner[match]
            contrib = self._bm25(idx, self._log_row[idx], weights[at[match]])
            out[:] = np.bincount(owner, weights=contrib, minlength=sub.shape[0])
            return out
        out[pos] = self._all_scores(recent)[srows]
        return out

    def score_candidates(self, query: str, rows: IntArray) -> FloatArray:
        """:meth:`score` of a store's own candidate rows: ``rows`` is a 1-D ``int64`` array
        of non-negative row numbers (the caller's, made by the store, not a user's), so it
        is not checked and converted again, and a query with no indexed term returns its
        zeros before the rows are read. The same scores as :meth:`score` (the same code
        below the checks).

        Why: a hybrid ``find()`` scores candidates twice (the global step, the tree
        context's family search), and the checks of ``rows`` (``asarray``, a dtype test, a
        ``min``) cost about as much as scoring ~50 rows of a query without indexed terms."""
        tokens = self._query_tokens(query)
        with self._lock:
            recent = self._recent_query(tokens)
            if recent.terms.size == 0 or rows.size == 0:
                return np.zeros(rows.shape[0], dtype=np.float32)
            return self._score_rows(recent, rows)

    def max_score(self, query: str, size: int) -> float:
        """``float(score(query, size=size).max())`` (``0.0`` when ``size`` is 0): the query's
        best BM25 score over rows ``0 .. size-1``, without building that ``size``-long array
        (a copy of the whole score vector per query, ~0.03-0.07 ms at 100k rows: a hybrid
        search asks it once per query for its lexical scale), and without scoring any row
        when no query term is indexed (every score is then 0)."""
        if not isinstance(query, str):
            raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
        # (an integer, not a bool or a float: a slice bound; a typed error, not a TypeError)
        if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size < 0:
            raise InvalidQueryError(f"size must be a non-negative integer, got {shown_value(size)}")
        size = int(size)
        tokens = self._query_tokens(query)
        with self._lock:
            recent = self._recent_query(tokens)
            if size == 0 or recent.terms.size == 0:
                return 0.0
            full = self._all_scores(recent)
            k = min(size, full.shape[0])
            best = float(full[:k].max()) if k else 0.0
        # (rows past the scored ones score 0, as ``score`` pads them)
        return max(best, 0.0) if size > k else best

    def _maybe_merge_tail(self) -> None:
        if self._m - self._msorted > max(self._merge_min, self._msorted // 8):
            self._merge_tail()

    def score(
        self, query: str, rows: RowsLike | None = None, *, size: int | None = None
    ) -> FloatArray:
        """BM25 scores of ``query``, float32.

        With ``rows``: one score per entry of ``rows`` (rows without a document score 0).
        Without: one score per row ``0 .. size-1`` (default :attr:`row_bound`), so the result
        lines up with the store's dense score array.
        """
        if not isinstance(query, str):
            raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
        return self.score_tokens(self._query_tokens(query), rows, size=size)

    def top(self, query: str, k: int, rows: RowsLike | None = None) -> tuple[IntArray, FloatArray]:
        """The ``k`` best rows (of ``rows``, or of all) with a score above 0, best first.

        Ties are broken by row number so that results are reproducible. Rows that share no
        term with the query are never returned (``bm25s`` pads with them).
        """
        if not isinstance(k, int) or isinstance(k, bool) or k < 0:
            raise InvalidQueryError(f"k must be a non-negative integer, got {shown_value(k)}")
        if not isinstance(query, str):
            raise InvalidQueryError(f"query must be a string, got {type(query).__name__}")
        tokens = self._query_tokens(query)
        if rows is None:
            with self._lock:
                known = self._recent_query(tokens).terms.size
            if not known:  # (no row can score: not a zero score per row to scan)
                return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        scores = self.score_tokens(tokens, rows)
        if k == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        cand = np.flatnonzero(scores > 0)
        if cand.shape[0] > k:
            kth = np.partition(scores[cand], cand.shape[0] - k)[cand.shape[0] - k]
            cand = cand[scores[cand] >= kth]
        ids = cand if rows is None else _as_rows(rows, "rows", InvalidQueryError)[cand]
        order = np.lexsort((ids, -scores[cand]))[:k]
        return ids[order].astype(np.int64), scores[cand][order]

    # ----------------------------------------------------------------------------- persistence

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write the index into ``directory`` (created if missing) as JSON + ``.npy`` files.

        Crash safety is the caller's: the store writes into a fresh directory and swaps it in.
        """
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        with self._lock:
            self._compact()
            self._prune_vocab()
            self._merge_tail()
            m = self._m
            n = self.row_bound  # spare row capacity is not worth writing
            arrays: dict[str, npt.NDArray[Any]] = {
                "log_term": self._log_term[:m],
                "log_row": self._log_row[:m],
                "log_tf": self._log_tf[:m],
                "perm": self._perm,
                "indptr": self._indptr,
                "start": self._start[:n],
                "count": self._count[:n],
                "doc_len": self._dl[:n],
                "present": self._present[:n],
            }
            meta = {
                "format": FORMAT_VERSION,
                "k1": self._k1,
                "b": self._b,
                "tokenizer": self._tokenizer_id,
                "documents": self._ndocs,
                "terms": self._terms,
            }
            for name, arr in arrays.items():
                np.save(path / f"lexical_{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
            with open(path / _META_FILE, "w", encoding="utf-8") as fh:
                json.dump(meta, fh, ensure_ascii=False)

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        tokenizer: Callable[[str], list[str]] | None = None,
        tokenizer_id: str | None = None,
    ) -> LexicalIndex:
        """Read an index written by :meth:`save`.

        Raises :class:`IndexCorruptError` when files are missing or inconsistent, or when the
        index was built by a different tokenizer (its tokens would not match this process's
        queries: rebuild it from the node texts).
        """
        path = Path(directory)
        try:
            with open(path / _META_FILE, encoding="utf-8") as fh:
                meta = json.load(fh)
            arrays = {
                name: np.load(path / f"lexical_{name}.npy", allow_pickle=False) for name in _ARRAYS
            }
        except (OSError, ValueError) as exc:
            raise IndexCorruptError(f"cannot read the lexical index in {path}: {exc}") from exc
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise IndexCorruptError(f"{path / _META_FILE}: unknown lexical index format")
        try:
            index = cls(
                k1=float(meta["k1"]),
                b=float(meta["b"]),
                tokenizer=tokenizer,
                tokenizer_id=tokenizer_id,
            )
            stored_tokenizer = str(meta["tokenizer"])
            terms = [str(t) for t in meta["terms"]]
            documents = int(meta["documents"])
        except (KeyError, TypeError, ValueError, InvalidQueryError) as exc:
            raise IndexCorruptError(f"{path / _META_FILE}: bad metadata ({exc})") from exc
        if stored_tokenizer != index.tokenizer_id:
            raise IndexCorruptError(
                f"the lexical index in {path} was built with tokenizer {stored_tokenizer!r} but "
                f"this process tokenises with {index.tokenizer_id!r}; rebuild it from the texts"
            )
        index._restore(arrays, terms, documents, path)
        return index

    def _restore(
        self, a: dict[str, npt.NDArray[Any]], terms: list[str], documents: int, path: Path
    ) -> None:
        """Adopt loaded arrays after checking, step by step, that they form a valid index."""

        def bad(why: str) -> IndexCorruptError:
            return IndexCorruptError(f"the lexical index in {path} is inconsistent: {why}")

        v = len(terms)
        if len(set(terms)) != v:
            raise bad("duplicate terms")
        _check_shapes(a, v, bad)
        m = a["log_term"].shape[0]
        bound = a["present"].shape[0]
        # (``copy=False``: the arrays were just read and are this index's own; a copy of
        # each, as ``astype`` makes by default, was a sixth of a 100k index's load)
        log_term = a["log_term"].astype(np.int32, copy=False)
        log_row = a["log_row"].astype(np.int32, copy=False)
        log_tf = a["log_tf"].astype(np.float32, copy=False)
        perm = a["perm"].astype(np.int64, copy=False)
        indptr = a["indptr"].astype(np.int64, copy=False)
        start = a["start"].astype(np.int64, copy=False)
        count = a["count"].astype(np.int64, copy=False)
        present = a["present"].astype(bool, copy=False)
        dl = a["doc_len"].astype(np.float32, copy=False)
        typed: dict[str, npt.NDArray[Any]] = {
            "log_term": log_term,
            "log_row": log_row,
            "log_tf": log_tf,
            "perm": perm,
            "indptr": indptr,
            "start": start,
            "count": count,
            "present": present,
            "doc_len": dl,
        }
        _check_postings(typed, v, bound, bad)
        _check_row_blocks(typed, m, bad)
        _check_term_order(typed, m, v, bad)
        if int(np.count_nonzero(present)) != documents:
            raise bad("document count differs")
        self._terms = terms
        self._vocab = {t: i for i, t in enumerate(terms)}
        self._df = np.bincount(log_term, minlength=v).astype(np.int64)
        self._log_term, self._log_row, self._log_tf = log_term, log_row, log_tf
        self._alive = np.ones(m, dtype=bool)
        self._m = self._msorted = m
        self._perm, self._indptr = _compact_ints(perm, m), indptr
        self._start, self._count, self._dl, self._present = start, count, dl, present
        self._ndocs = documents
        self._total_len = float(dl[present].sum(dtype=np.float64))
        self._dead = 0
        self._norm_cache = None


_MEMO_QUERIES = 32
_MEMO_CHARS = 1024
"""How many query texts (of at most this many characters) an index keeps tokenised."""
_RECENT_QUERIES = 8
"""How many recent queries' terms and score vectors an index keeps (concurrent finds)."""


@dataclass
class _Recent:
    """A recent query: its known term ids and weights, and its scores over every row once
    a search needed them (:meth:`LexicalIndex._recent_query`)."""

    terms: IntArray
    weights: FloatArray
    full: FloatArray | None = None


_Bad = Callable[[str], IndexCorruptError]


def _check_shapes(a: Mapping[str, npt.NDArray[Any]], v: int, bad: _Bad) -> None:
    """Every array 1-D; postings arrays, per-row arrays and ``indptr`` of matching lengths."""
    for name in _ARRAYS:
        if a[name].ndim != 1:
            raise bad(f"{name} is not 1-D")
    m = a["log_term"].shape[0]
    bound = a["present"].shape[0]
    if a["log_row"].shape[0] != m or a["log_tf"].shape[0] != m or a["perm"].shape[0] != m:
        raise bad("postings arrays differ in length")
    if any(a[n].shape[0] != bound for n in ("start", "count", "doc_len")):
        raise bad("per-row arrays differ in length")
    if a["indptr"].shape[0] != v + 1:
        raise bad("indptr does not match the vocabulary")


def _check_postings(t: Mapping[str, npt.NDArray[Any]], v: int, bound: int, bad: _Bad) -> None:
    """Postings point at known terms and rows, with term frequencies >= 1."""
    log_term, log_row, log_tf, dl = t["log_term"], t["log_row"], t["log_tf"], t["doc_len"]
    if log_term.size and (
        int(log_term.min()) < 0
        or int(log_term.max()) >= v
        or int(log_row.min()) < 0
        or int(log_row.max()) >= bound
        or not bool((log_tf >= 1).all())
    ):
        raise bad("postings out of range")
    if not bool((dl >= 0).all()):
        raise bad("bad document lengths")


def _check_row_blocks(t: Mapping[str, npt.NDArray[Any]], m: int, bad: _Bad) -> None:
    """The blocks of present rows tile [0, m) exactly, each holding its row's postings."""
    start, count, present, log_row = t["start"], t["count"], t["present"], t["log_row"]
    if (count < 0).any() or (start < 0).any() or (count[~present] != 0).any():
        raise bad("bad row blocks")
    if int(count.sum()) != m or (start + count > m).any():
        raise bad("row blocks do not cover the postings")
    p_rows = np.flatnonzero(present & (count > 0))
    order = p_rows[np.argsort(start[p_rows], kind="stable")]
    ends = start[order] + count[order]
    if order.size and (int(start[order[0]]) != 0 or (start[order[1:]] != ends[:-1]).any()):
        raise bad("row blocks do not tile the postings")
    # (the blocks tile [0, m) in ``order``: position i of the log belongs to the i-th
    # entry of the rows repeated by their counts, in that order; no gather of the log)
    if (log_row != np.repeat(order, count[order])).any():
        raise bad("row blocks do not match the postings")


def _check_term_order(t: Mapping[str, npt.NDArray[Any]], m: int, v: int, bad: _Bad) -> None:
    """``perm`` is a permutation of the postings that sorts them by term, per ``indptr``."""
    perm, indptr, log_term = t["perm"], t["indptr"], t["log_term"]
    if m and (
        int(perm.min()) < 0 or int(perm.max()) >= m or (np.bincount(perm, minlength=m) != 1).any()
    ):
        raise bad("perm is not a permutation")
    if int(indptr[0]) != 0 or int(indptr[-1]) != m or (np.diff(indptr) < 0).any():
        raise bad("bad indptr")
    if m and (np.repeat(np.arange(v), np.diff(indptr)) != log_term[perm]).any():
        raise bad("perm is not sorted by term")


# --------------------------------------------------------------------------------------------
# Hybrid scoring

Normalization = Literal["max", "minmax"]


def validate_dense_weight(dense_weight: float) -> float:
    """Check VikingDB's ``dense_weight``: a number in [0.2, 1], 1 meaning dense only."""
    if isinstance(dense_weight, bool) or not isinstance(dense_weight, (int, float)):
        raise InvalidQueryError(f"dense_weight must be a number, got {shown_value(dense_weight)}")
    w = float(dense_weight)
    if not (math.isfinite(w) and DENSE_WEIGHT_MIN <= w <= DENSE_WEIGHT_MAX):
        raise InvalidQueryError(
            f"dense_weight must be between {DENSE_WEIGHT_MIN} and {DENSE_WEIGHT_MAX}, got {w!r}"
        )
    return w


def normalize_lexical(lexical: npt.ArrayLike, method: Normalization = "max") -> FloatArray:
    """Map BM25 scores of one candidate set into [0, 1], the scale of cosine similarities.

    BM25 is unbounded and its range depends on the query (long queries score higher), so it
    must be rescaled per query before it is mixed with cosines. ``"max"`` divides by the best
    score in the set: a document matching nothing stays at 0, exactly like in a global search.
    ``"minmax"`` also subtracts the minimum.

    Measured on Cranfield with the MiniLM embedder (``bench/bench_lexical.py --hybrid``): max and
    minmax tie (nDCG@10 0.486 at dense_weight 0.7 over the whole collection, 0.488 / 0.490 over
    a 50-document scope; dense alone 0.435). A z-score mapping onto the dense scores peaks a
    little higher globally (0.488 at 0.6) but its best weight moves with the candidate set (0.3
    in the narrow scope, where it drops to 0.465 at 0.7). ``max`` is the default because one
    ``dense_weight`` then means the same in the global search and in every directory's search.
    """
    lex = np.asarray(lexical, dtype=np.float32)
    if lex.size == 0:
        return lex.copy()
    hi = float(lex.max())
    lo = float(lex.min()) if method == "minmax" else 0.0
    if method not in ("max", "minmax"):
        raise InvalidQueryError(f"unknown normalization {shown_value(method)}")
    if not hi > lo:
        return np.zeros_like(lex)
    return ((lex - lo) / (hi - lo)).astype(np.float32)


def hybrid_scores(
    dense: npt.ArrayLike,
    lexical: npt.ArrayLike,
    dense_weight: float,
    *,
    normalization: Normalization = "max",
    scale: float | None = None,
) -> FloatArray:
    """``dense_weight * dense + (1 - dense_weight) * normalised lexical``, per candidate.

    ``dense`` and ``lexical`` score the same candidates in the same order (the rows a scoped
    search considers). ``dense_weight`` follows VikingDB: in [0.2, 1], 1 = dense only.

    ``scale``: divide the lexical scores by this fixed value instead of normalising within the
    candidates. The hierarchical search compares scores from many small candidate sets (one per
    directory); normalising each set by its own maximum would give the best child of an
    irrelevant directory full lexical credit, so the store passes one scale per query (the
    query's best BM25 score over the whole index).
    """
    w = validate_dense_weight(dense_weight)
    d = np.asarray(dense, dtype=np.float32)
    lex = np.asarray(lexical, dtype=np.float32)
    if d.shape != lex.shape or d.ndim != 1:
        raise InvalidQueryError(
            f"dense and lexical scores must be 1-D and of one length, got {d.shape}, {lex.shape}"
        )
    if w == 1.0:
        return d.copy()
    if scale is not None:
        return blend_scaled(d, lex, w, scale)
    norm = normalize_lexical(lex, normalization)
    out: FloatArray = (w * d + (1.0 - w) * norm).astype(np.float32)
    return out


def blend_scaled(dense: FloatArray, lexical: FloatArray, w: float, scale: float) -> FloatArray:
    """:func:`hybrid_scores` with a fixed ``scale``, of arguments already checked: ``dense``
    and ``lexical`` float32 arrays of one length, ``w`` a ``float`` in [0.2, 1). The store's
    search blends its candidates here (twice a hybrid ``find()``) without the checks its
    own arguments passed already; :func:`hybrid_scores` computes through it, so both give
    the same floats."""
    out: FloatArray = w * dense  # (float32: a Python float meets a float32 array)
    if scale > 0:
        out += (1.0 - w) * (lexical / np.float32(scale))
    else:
        # (1 - w) times a zero lexical score is +0.0: adding it is the whole blend (it
        # turns a -0.0 into +0.0, as the sum of the two terms does)
        out += np.float32(0.0)
    return out
