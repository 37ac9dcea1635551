"""Hubness: how crowded a candidate's neighbourhood is among the other candidates.

In a sentence-embedding space some texts are *hubs*: close to many others, so they sit near
the top for many queries without answering any (a documentation index, a list of links, a
section that summarises its neighbours). Cross-domain similarity local scaling (CSLS,
Conneau et al. 2018, "Word translation without parallel data") corrects a cosine by the
mean similarity of the candidate to its ``k`` nearest neighbours: ``cos(q, x) - r(x) / 2``
(the query's own term is the same for every candidate and drops out of a ranking).

Here ``r(x)`` is measured among the query's own candidates (the leaves a find collected),
not the whole corpus: no index-time pass over every pair, a product over at most 100
candidates per query, and the question it answers ("does this chunk resemble the other
candidates more than they resemble each other?") is the local one that separates a hub
from an answer.
Used by ``RetrievalConfig.question_hub_weight`` (off by default: bench/README.md, "Natural
questions, round 4 (ranking)").
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

HUB_NEIGHBOURS = 10
"""``k``, CSLS's neighbourhood size (its paper's value)."""

HUB_POOL = 100
"""At most this many candidates, the best by score, are compared (and corrected): a deep
descent may collect every leaf of a small tree (gitfaq: ~360 of 374), and a pool's matrix
product grows with its square; a candidate below the 100th does not reach a top 10 anyway."""

MIN_POOL = 3
"""Fewer candidates than this carry no neighbourhood to compare: no correction."""


def hub_scores(vectors: npt.ArrayLike, k: int = HUB_NEIGHBOURS) -> npt.NDArray[np.float64]:
    """Each row's mean cosine to its ``k`` most similar *other* rows, minus the mean of
    that over all rows (so the correction moves candidates against each other, never the
    whole list): positive for a hub, negative for an outlier. Zeros for fewer than
    :data:`MIN_POOL` rows; ``k`` is capped at ``rows - 1``. Rows are L2-normalised first
    (a zero row stays zero and is nobody's neighbour by much); the product in float32, the
    stored vectors' type."""
    x = np.asarray(vectors, dtype=np.float32)  # (stored vectors are float32: no copy)
    if x.ndim != 2:
        raise ValueError("vectors must be a 2-d array (one row per candidate)")
    n = x.shape[0]
    if n < MIN_POOL or k < 1:
        return np.zeros(n, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = (x / np.where(norms > 0, norms, np.float32(1.0))).astype(np.float32, copy=False)
    sims = unit @ unit.T
    np.fill_diagonal(sims, -np.inf)
    kk = min(k, n - 1)
    top = np.partition(sims, n - kk, axis=1)[:, n - kk :]
    r: npt.NDArray[np.float64] = top.astype(np.float64).mean(axis=1)
    out: npt.NDArray[np.float64] = r - r.mean()
    return out
