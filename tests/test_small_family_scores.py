"""One unsectioned family (a folder of files, a session of turns: the tree context's common
case) is scored on Python floats (``tree_scoring._small_family``) with the very floats, to the
bit, of the numpy path it stands in for, and finds give the same results with it or without.

- The laid-out numpy path (``_SMALL_FAMILY = 0`` forces it) and the small path give the same
  picked leaves, own and final scores and evidence terms, for one family of 1-300 leaves
  (past ``_SMALL_FAMILY`` the numpy path answers), signed zeros, integer scores, every
  ``keep`` form; the terms are built only when read.
- Whole finds over random trees (folders of files, sessions of turns, chunked files) with
  the small path equal the finds without it, and the small path did answer some families.
"""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_columnar_search import MEM, RES, _outcome, _query, random_tree
from treehop import RetrievalConfig
from treehop import tree_scoring as ts
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.tree_scoring import ContextWeights, SiblingLayout, context_columns

_SCORE = st.sampled_from([0.0, -0.0, 0.5, -0.25, 1.0, 1, 0]) | st.floats(-1.0, 1.0, width=32)


def _bits(xs: list[float]) -> bytes:
    return np.asarray(xs, dtype=np.float64).tobytes()


@settings(max_examples=300)
@given(
    st.lists(_SCORE, min_size=1, max_size=300),
    st.randoms(use_true_random=False),
    st.tuples(st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.floats(0.0, 2.0)),
    st.none() | st.floats(-1.0, 1.0),
    st.sampled_from(["all", "list", "array"]),
    st.lists(st.booleans(), min_size=300, max_size=300),
)
def test_small_family_equals_the_array_path(
    scores: list[float],
    rnd: Any,
    w: tuple[float, float, float],
    parent_score: float | None,
    keep_as: str,
    flags: list[bool],
) -> None:
    n = len(scores)
    order = list(range(n))
    rnd.shuffle(order)  # the family's sibling order
    parent_of = ["viking://r/p"] * n
    parents = {} if parent_score is None else {"viking://r/p": parent_score}
    keep: Any = None
    if keep_as != "all":
        keep = flags[:n] if keep_as == "list" else np.array(flags[:n])
    weights = ContextWeights(*w)

    def run(small: int) -> ts.ContextColumns:
        old = ts._SMALL_FAMILY
        ts._SMALL_FAMILY = small
        try:
            return context_columns(
                parent_of, None, scores, parents, weights, keep, laid_out=SiblingLayout(order, [n])
            )
        finally:
            ts._SMALL_FAMILY = old

    arrays, small = run(0), run(old_limit := ts._SMALL_FAMILY)
    assert small.picked == arrays.picked
    assert _bits(small.own) == _bits(arrays.own)
    assert _bits(small.final) == _bits(arrays.final)
    answered = n <= old_limit and max(map(float, scores)) != 0.0
    # the small path builds no evidence array until one is read
    assert (small.lazy_terms is not None) == answered
    assert (small.terms == ()) == answered
    for a, b in (
        (small.neighbours, arrays.neighbours),
        (small.parent, arrays.parent),
        (small.best_sibling, arrays.best_sibling),
    ):
        assert _bits(a) == _bits(b)


def test_small_family_answers_a_folder_of_files() -> None:
    """A folder of five files (the case it is for): the small path answers, with the
    formula's values (the neighbour mean of each inner file, an end's one neighbour)."""
    own = [0.5, 0.25, 0.75, 1.0, 0.125]
    w = ContextWeights(1.0, 0.5, 0.25)
    got = context_columns(
        ["p"] * 5, None, own, {"p": 0.5}, w, [False, False, True, False, False],
        laid_out=SiblingLayout([0, 1, 2, 3, 4], [5]),
    )  # fmt: skip
    assert got.lazy_terms is not None
    assert got.picked == [1, 2, 3]  # the asked leaf and its neighbours
    neigh = [(0.5 + 0.75) / 2, (0.25 + 1.0) / 2, (0.75 + 0.125) / 2]
    want = [
        (o + 1.0 * n + 0.5 * 0.5 + 0.25 * 1.0) / 2.75 for o, n in zip(own[1:4], neigh, strict=True)
    ]
    assert got.final == want
    assert got.neighbours == neigh and got.parent == [0.5] * 3 and got.best_sibling == [1.0] * 3


def test_finds_equal_with_and_without_the_small_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    small = ts._small_family

    def counted(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return small(*args)

    monkeypatch.setattr(ts, "_small_family", counted)
    for seed in range(8):
        store, rng = random_tree(seed)
        cfgs = [RetrievalConfig(context_pool=int(rng.integers(3, 12))), RetrievalConfig()]
        for cfg in cfgs:
            retriever = HierarchicalRetriever(store, cfg)
            for _ in range(4):
                req = RetrievalRequest(
                    query=TypedQuery(query="alpha turn"),
                    vector=_query(rng),
                    roots=[RES, MEM],
                    limit=int(rng.integers(2, 9)),
                    dense_weight=float(rng.choice([1.0, 0.7])),
                    include_directories=[None, False][int(rng.integers(0, 2))],
                )
                with_small = asyncio.run(retriever.retrieve(req))
                with monkeypatch.context() as m:
                    m.setattr(ts, "_SMALL_FAMILY", 0)
                    without = asyncio.run(retriever.retrieve(req))
                assert _outcome(with_small) == _outcome(without)
                assert with_small.matched_contexts
    assert calls > 0  # the random trees' folders and sessions took the small path
