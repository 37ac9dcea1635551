"""Evidence for a question over documents from the text around a chunk, and slots spread over
documents (issue 33, round 9: ranking on natural questions).

Why: a question people wrote is often answered by a few sentences that continue into the next
chunk, or whose words are in the chunk before. A flat store over large nodes (LlamaIndex's
``SentenceSplitter`` cuts ~1,024 tokens, and an embedder that reads a long text as the mean of
its windows sees all of it) scores that whole stretch; a chunk of ~1,000 characters is scored
on its own text alone. Two pieces, both for a question over documents only (heading, keyword
and memory queries are untouched):

- :func:`window_gains`: a chunk's dense evidence is the larger of its own cosine and the
  cosine of its *window* (the unit mean of its vector and its previous and next chunks' of the
  same document, a node three chunks long): a chunk whose neighbourhood says more than it
  does rises, and a chunk that says it best keeps its score (the max never lowers one). The
  gain enters on the fusion's dense scale (times the query's dense weight).
- :func:`spread_over_documents`: raising chunks by their neighbourhood lifts many chunks of
  one coherent page together (a reference page's sections), which then crowd out the one
  chunk of another document that answers; so each further slot of a document already in the
  list gives up ``penalty`` (in the fusion's units) per slot of that document above it, and
  the slots are ranked on those scores (a greedy, MMR-like pass over the documents). A
  document's second passage still takes a slot when it is clearly better than the next
  document's best.

Chosen on the pooled dev halves of the nine natural-question sets (bench/README.md, "Natural
questions, round 9 (ranking)").
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from . import uri as urimod
from .errors import InvalidConfigError

WINDOW_POOL = 30
"""How many collected chunks (best first; at least three times the find's ``limit``) take
window evidence: those that can still reach a result slot (the tree context's pool, for the
same reason); their neighbours are read as vectors (one store call)."""


def neighbour_uris(uri: str, chunk_index: int | None) -> tuple[str, ...]:
    """The URIs of the previous and next chunk of the chunk ``uri`` (``<file>#chunk-<i>``:
    the ingest's chunk URIs); none for a node that is not such a chunk (a whole file, a
    memory turn, a chunk whose URI another store named)."""
    if chunk_index is None or chunk_index < 0:
        return ()
    base, mark, tail = uri.rpartition(urimod.CHUNK_MARK)
    if not mark or tail != str(chunk_index):
        return ()
    prev = (f"{base}{mark}{chunk_index - 1}",) if chunk_index > 0 else ()
    return (*prev, f"{base}{mark}{chunk_index + 1}")


def window_gains(
    query: npt.NDArray[np.floating],
    vectors: npt.NDArray[np.floating],
    own: npt.NDArray[np.int64],
    prev: npt.NDArray[np.int64],
    nxt: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Per chunk ``i``: ``max(0, cos(query, window_i) - cos(query, chunk_i))``, where the
    window is the unit mean of rows ``own[i]``, ``prev[i]`` and ``nxt[i]`` of ``vectors``
    (``-1``: no such neighbour; a chunk without either gains 0). Rows are L2-normalised
    first, so a store that keeps raw vectors gets cosines. Float32 (the stored vectors'
    type), a dozen numpy calls on ~100 rows."""
    v = np.asarray(vectors, dtype=np.float32)
    v = v / np.maximum(np.sqrt(np.einsum("ij,ij->i", v, v)), 1e-12)[:, None]
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    q = q / max(float(np.sqrt(q @ q)), 1e-12)
    has_p, has_n = prev >= 0, nxt >= 0
    total = v[own]
    total[has_p] += v[prev[has_p]]
    total[has_n] += v[nxt[has_n]]
    norm = np.maximum(np.sqrt(np.einsum("ij,ij->i", total, total)), 1e-12)
    gain: npt.NDArray[np.float64] = np.maximum((total @ q) / norm - v[own] @ q, 0.0).astype(
        np.float64
    )
    gain[~(has_p | has_n)] = 0.0
    return gain


def spread_over_documents(
    scores: Sequence[float], documents: Sequence[str], penalty: float, first: int | None = None
) -> tuple[list[int], list[float]]:
    """The slots' order when each slot of a document gives up ``penalty`` per slot of the
    same document ranked above it: greedy (the best adjusted score next; ties keep the input
    order). ``scores`` are the slots' scores best first. Returns the order (positions in the
    input) and each ordered slot's adjusted score (non-increasing, so a reader that sorts by
    score keeps the order).

    ``first``: only that many slots are chosen greedily (a find returns ``limit`` slots);
    the others follow, ranked on their scores adjusted by the slots their documents hold
    among the chosen (each at most the last chosen one's: the order stays non-increasing).

    A heap of each document's next slot: a document's slots all give up the same penalty,
    so they are chosen in their own order (best score, then input order), and a choice
    changes only its own document's next entry. O(first log D + n log n). (A lazy heap of
    every slot re-pushed each slot still within the penalty of the best at every choice:
    one document of 4,000 close slots, 1,000 chosen, 3.5M pops; the stop rule by slots
    asks this at each try, and a limit-1,000 question over one long file took 9 s against
    1.2 s without the rule.) The same order and scores as the lazy heap (a test compares)."""
    n = len(scores)
    if penalty <= 0 or n < 2:
        return list(range(n)), [float(s) for s in scores]
    k = n if first is None else max(0, min(first, n))
    by_doc: dict[str, list[int]] = {}
    for i in sorted(range(n), key=lambda i: (-float(scores[i]), i)):
        by_doc.setdefault(documents[i], []).append(i)
    lists = list(by_doc.values())
    nxt = [0] * len(lists)  # (each document's next slot, and how many it holds chosen)
    heap = [(-float(scores[slots[0]]), slots[0], d) for d, slots in enumerate(lists)]
    heapq.heapify(heap)
    order: list[int] = []
    adjusted: list[float] = []
    while heap and len(order) < k:
        neg, i, d = heapq.heappop(heap)
        order.append(i)
        adjusted.append(-neg)
        nxt[d] += 1
        if nxt[d] < len(lists[d]):
            j = lists[d][nxt[d]]
            heapq.heappush(heap, (-(float(scores[j]) - penalty * nxt[d]), j, d))
    if len(order) < n:
        rest = sorted(
            (-(float(scores[i]) - penalty * nxt[d]), i)
            for d, slots in enumerate(lists)
            for i in slots[nxt[d] :]
        )
        order.extend(i for _, i in rest)
        adjusted.extend(-neg for neg, _ in rest)
    return order, adjusted


QUESTION_WEIGHT_MAX = False
"""The module default of :attr:`~treehop.config.RetrievalConfig.question_weight_max` (read
where that setting is ``None``): off. A non-bool here is refused at the first find that reads
it (:func:`weight_max_on`)."""


def _switch(setting: bool | None, name: str) -> bool:
    """An off-by-default option as a find reads it: ``setting``, or this module's default
    ``name`` where it is ``None`` (read at the call: tests and users set the module default);
    a module default that is not a ``bool`` raises :class:`~treehop.errors.InvalidConfigError`."""
    if setting is not None:
        return setting
    got = globals()[name]
    if not isinstance(got, bool):
        raise InvalidConfigError(
            f"treehop.chunk_window.{name} must be True or False, got {type(got).__name__}"
        )
    return got


def weight_max_on(setting: bool | None) -> bool:
    """``question_weight_max`` as a find reads it: the setting, or the module default
    :data:`QUESTION_WEIGHT_MAX` where it is ``None``; a module default that is not a ``bool``
    raises :class:`~treehop.errors.InvalidConfigError`."""
    return _switch(setting, "QUESTION_WEIGHT_MAX")


LEXICAL_SHARE_MIN = 1e-6
"""The least lexical share ``1 - weight`` of a fused score that :func:`weight_max_scores`
reads the lexical part back from: below it the division multiplies float64's rounding
(~1e-16) past 1e-10, so the blend is treated as dense only."""


def weight_max_scores(
    fused: npt.ArrayLike, dense: npt.ArrayLike, weight: float, other: float
) -> npt.NDArray[np.float64]:
    """Per candidate: the larger of its fused score at ``weight`` (``fused``, as the store
    blended it: ``weight * dense + (1 - weight) * lexical``) and its fusion of the same two
    scores at ``other`` (``question_weight_max``). The lexical part is read back from the
    two it was blended from, ``(fused - weight * dense) / (1 - weight)``, so no second search
    is needed. A weight of 1 (dense only: no lexical part to read), a weight within
    :data:`LEXICAL_SHARE_MIN` of 1 (the read-back divides the float's rounding by ``1 -
    weight``: at ``1 - 1e-16`` a lexical score of 1.0 came back as 0.5) or ``other`` not
    below ``weight`` returns ``fused`` unchanged; the max never lowers a score."""
    f = np.asarray(fused, dtype=np.float64)
    if 1.0 - weight < LEXICAL_SHARE_MIN or other >= weight:
        return f.copy()
    d = np.asarray(dense, dtype=np.float64)
    lex = (f - weight * d) / (1.0 - weight)
    out: npt.NDArray[np.float64] = np.maximum(f, other * d + (1.0 - other) * lex)
    return out


QUESTION_WINDOW_EARNED = False
"""The module default of :attr:`~treehop.config.RetrievalConfig.question_window_earned` (read
where that setting is ``None``): off. A non-bool here is refused at the first find that reads
it (:func:`window_earned_on`)."""


def window_earned_on(setting: bool | None) -> bool:
    """``question_window_earned`` as a find reads it: the setting, or the module default
    :data:`QUESTION_WINDOW_EARNED` where it is ``None``; a module default that is not a
    ``bool`` raises :class:`~treehop.errors.InvalidConfigError`."""
    return _switch(setting, "QUESTION_WINDOW_EARNED")


def unit_cosines(
    query: npt.NDArray[np.floating], vectors: npt.NDArray[np.floating]
) -> npt.NDArray[np.float64]:
    """Each row's cosine with ``query`` (rows and query L2-normalised first, as
    :func:`window_gains` reads them)."""
    v = np.asarray(vectors, dtype=np.float32)
    v = v / np.maximum(np.sqrt(np.einsum("ij,ij->i", v, v)), 1e-12)[:, None]
    q = np.asarray(query, dtype=np.float32).reshape(-1)
    q = q / max(float(np.sqrt(q @ q)), 1e-12)
    out: npt.NDArray[np.float64] = (v @ q).astype(np.float64)
    return out


def earned_lifts(
    lifts: npt.ArrayLike,
    scores: npt.ArrayLike,
    prev_earned: npt.ArrayLike,
    next_earned: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """``question_window_earned``: per chunk, its window lift (``lifts``, on the score's
    scale) capped so that the lifted score is at most the best score a chunk of its window
    earns on its own: ``min(lift, max(0, max(prev, next) - score))`` (``-inf``: no such
    neighbour). A window then ranks a chunk beside a neighbour that earns more alone (the
    neighbour's evidence carried to it), never above every chunk it is made of. Never
    raises a lift, never below 0."""
    lift = np.asarray(lifts, dtype=np.float64)
    best = np.maximum(np.asarray(prev_earned, dtype=np.float64), next_earned)
    room = np.maximum(best - np.asarray(scores, dtype=np.float64), 0.0)
    out: npt.NDArray[np.float64] = np.maximum(np.minimum(lift, room), 0.0)
    return out
