"""Two ranking methods screened inside ``find()`` as extra rows: issue 33, stop 55 (helper
``rank57``).

The per-question diagnosis (``bench_find_loss_diag.py --against flat-hybrid``, dev halves)
traced where flat hybrid puts a question's first answer above ``find()``. This screen adds
two rows to ``bench_natural.py``, each ``find()`` with one method patched in from ``bench/``
(``retrieval/`` is not changed), so that a run of ``--rows find,find-focus,find-pwin`` gives
the base and both methods on the very same index, question by question:

* ``find-focus`` (aimed at the largest cause, the question fusion's weight: the answer holds
  the question's rare, specific words, BM25 finds it, the question's cosine prefers a chunk
  that shares its generic phrasing). A question-shaped query's vector becomes the unit mean
  of its own vector and the vector of its *content words* (the question with the BM25
  stopword list's words dropped, ``text_tokenize.ENGLISH_STOPWORDS``; word forms and
  punctuation inside a word kept): the dense score leans toward what the question is about
  without giving BM25 more weight (every weight change was screened and lost: rounds 3, 11).
  No constant: the two views weigh the same. Only ``find()`` sees it (the flat rows read the
  query's own vector from the bench's memo).
* ``find-pwin`` (aimed at the chunk window, the second ranking cause): a chunk's window
  (``question_chunk_window``: itself with its previous and next chunk) takes a neighbour
  only from the chunk's own *passage* (``descent.PASSAGE_START``: the previous chunk when
  the chunk is not its passage's first, the next one when the next chunk's passage starts
  where this one's does). Why: on an FAQ page a chunk's neighbour is often the next
  answer, and the window lifted a chunk by the answer *beside* it above that answer (borg
  "Why was Borg forked from Attic?": the Attic-migration chunk 59 over the answer, chunk
  58). No constant. One extra ``store.get`` of the next chunks' nodes per question.

    python bench/bench_rank57_screen.py --dev --rows find,find-focus,find-pwin --json OUT.json

Every argument goes to ``bench_natural.py``.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import heapq  # noqa: E402
import operator  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402
import numpy.typing as npt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_natural as bn  # noqa: E402
import bench_tree as bt  # noqa: E402
from treehop import hierarchical_retriever as hr  # noqa: E402
from treehop.chunk_window import WINDOW_POOL, neighbour_uris, window_gains  # noqa: E402
from treehop.descent import PASSAGE_START  # noqa: E402
from treehop.query_shape import is_question  # noqa: E402
from treehop.text_tokenize import ENGLISH_STOPWORDS  # noqa: E402

FOCUS, PWIN = "find-focus", "find-pwin"

_PUNCT = "\"'`()[]{}<>,.;:!?\u2018\u2019\u201c\u201d"


def content_words(question: str) -> str:
    """``question`` without its stopwords (lower-cased, surrounding punctuation stripped, as
    the BM25 tokenizer would drop them); the words kept as written. Empty when nothing is
    left."""
    kept: list[str] = []
    for w in question.split():
        word = w.strip(_PUNCT)
        low = word.lower().replace("\u2019", "'")
        if word and low not in ENGLISH_STOPWORDS and low.split("'")[0] not in ENGLISH_STOPWORDS:
            kept.append(word)
    return " ".join(kept)


def focus_vector(memo: bt.MemoEmbedder, text: str) -> npt.NDArray[np.float32]:
    """The unit mean of ``text``'s vector and its content words' vector (``text``'s own
    vector where it is not a question or has no content word that differs from it)."""
    memo.prepare([text])  # (a no-op for a text it holds)
    own = memo.queries[text]
    words = content_words(text)
    if not is_question(text) or not words or words == text:
        return own
    memo.prepare([words])
    mean = own / np.linalg.norm(own) + memo.queries[words] / np.linalg.norm(memo.queries[words])
    return np.asarray(mean / np.linalg.norm(mean), dtype=np.float32)


def install() -> None:
    """Patch ``bench_natural`` (two rows, the active row's key), the memo embedder (the focus
    vector) and ``HierarchicalRetriever._chunk_window`` (the passage window)."""
    bn.add_screen_rows(
        bn.Row(FOCUS, "find, question + content-word vector", "find"),
        bn.Row(PWIN, "find, chunk window within the passage", "find"),
    )
    embed_query = bt.MemoEmbedder.embed_query

    def patched_embed_query(self: bt.MemoEmbedder, text: str) -> npt.NDArray[np.float32]:
        if bn.ACTIVE_ROW[0] == FOCUS:
            return focus_vector(self, text)
        return embed_query(self, text)

    bt.MemoEmbedder.embed_query = patched_embed_query  # type: ignore[method-assign]
    chunk_window = hr.HierarchicalRetriever._chunk_window

    async def patched_chunk_window(self: hr.HierarchicalRetriever, q: Any, state: Any) -> None:
        if bn.ACTIVE_ROW[0] != PWIN:
            await chunk_window(self, q, state)
            return
        await passage_window(self, q, state)

    hr.HierarchicalRetriever._chunk_window = patched_chunk_window  # type: ignore[method-assign]


def _start(node: Any) -> int | None:
    start = node.metadata.get(PASSAGE_START) if node is not None else None
    return start if isinstance(start, int) and not isinstance(start, bool) else None


def passage_neighbours(
    chunk_index: int,
    start: int | None,
    near: tuple[str, ...],
    next_start: dict[str, int | None],
) -> tuple[str | None, str | None]:
    """The (previous, next) neighbours a chunk's window takes (``None``: none): ``near`` as
    ``chunk_window.neighbour_uris`` gives them (the previous one only past chunk 0), each kept
    only inside the chunk's passage (``start``: its passage's first chunk; the next chunk's
    start from ``next_start``). A chunk whose passage start is unknown keeps both."""
    prev = near[0] if len(near) == 2 else None
    nxt = near[-1] if near else None
    if start is None:
        return prev, nxt
    if prev is not None and not start < chunk_index:
        prev = None  # (the chunk opens its passage: the one before is another's)
    if nxt is not None and next_start.get(nxt) != start:
        nxt = None  # (the next chunk opens another passage, or is not there)
    return prev, nxt


async def passage_window(self: hr.HierarchicalRetriever, q: Any, state: Any) -> None:
    """``HierarchicalRetriever._chunk_window`` with each neighbour kept only when it lies in
    the chunk's passage (a chunk without a recorded passage start keeps both, as before)."""
    if not (q.question and self.config.question_chunk_window):
        return
    if state.track is not hr.Track.VECTOR:
        return
    cands = [c for c in state.collected.values() if c.is_leaf and c.chunk_index is not None]
    pool = max(WINDOW_POOL, 3 * q.req.limit)
    if len(cands) > pool:
        cands = heapq.nlargest(pool, cands, key=operator.attrgetter("final.vec"))
    near = [neighbour_uris(c.uri, c.chunk_index) for c in cands]
    if not any(near):
        return
    # the next chunks' passage starts: one read of their nodes
    nexts = sorted({n[-1] for n in near if n})
    nodes = await self._store_call(self.store.get, nexts)
    next_start = {u: _start(n) for u, n in zip(nexts, nodes, strict=True)}
    kept_near = [
        passage_neighbours(c.chunk_index, _start(c.node), n, next_start)
        for c, n in zip(cands, near, strict=True)
    ]
    row: dict[str, int] = {c.uri: i for i, c in enumerate(cands)}
    for pair in kept_near:
        for u in pair:
            if u is not None:
                row.setdefault(u, len(row))
    uris = list(row)
    found = await self._present_vectors(uris)
    if found is None:
        return
    kept, vectors = found
    at = np.full(len(uris), -1, dtype=np.int64)
    at[np.asarray(kept, dtype=np.int64)] = np.arange(len(kept))
    own = at[: len(cands)]

    def side(pair: tuple[str | None, str | None], k: int) -> int:
        u = pair[k]
        return -1 if u is None else int(at[row[u]])

    prev = np.array([side(p, 0) for p in kept_near], dtype=np.int64)
    nxt = np.array([side(p, 1) for p in kept_near], dtype=np.int64)
    ok = own >= 0
    if not ok.any():
        return
    gains = np.zeros(len(cands))
    gains[ok] = window_gains(q.req.vector, vectors, own[ok], prev[ok], nxt[ok])
    for i in np.flatnonzero(gains > 0).tolist():
        c = cands[i]
        q.unlifted[c.uri] = c.final
        c.final = hr.score_of(c.final.vec + q.dense_weight * float(gains[i]), c.final.rr)


def main(argv: Sequence[str] | None = None) -> None:
    install()
    bn.main(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
