"""The descent's value types: two score tracks that never mix, the bound, convergence."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop.descent import Convergence, Score, SubtreeBounds, Track, score_of
from treehop.models import ContextType, Node

finite = st.floats(-1.0, 1.0, allow_nan=False)
alphas = st.floats(0.0, 1.0, allow_nan=False)


@given(finite, finite, finite, finite, alphas)
def test_propagation_blends_each_track_with_its_own(
    v: float, r: float, pv: float, pr: float, a: float
) -> None:
    s = Score(v, r).propagate(Score(pv, pr), a)
    assert s.vec == pytest.approx(a * v + (1 - a) * pv)
    assert s.rr == pytest.approx(a * r + (1 - a) * pr)


@given(finite, finite, alphas)
def test_a_missing_track_is_never_filled_from_the_other(v: float, pv: float, a: float) -> None:
    # Parent not reranked: the child's rerank score stays its own, never blended with pv.
    assert Score(v, 0.5).propagate(Score(pv, None), a).rr == 0.5
    assert Score(v, None).propagate(Score(pv, 0.9), a).rr is None
    hop = Score(v, None).scaled(0.7)
    assert hop.rr is None and hop.vec == pytest.approx(0.7 * v)


def test_each_track_reads_only_its_own_value() -> None:
    assert Score(0.3, 7.0).on(Track.RERANK) == 7.0
    assert Score(0.3, 7.0).on(Track.VECTOR) == 0.3
    assert Score(0.3, None).on(Track.RERANK) == -math.inf  # never the vector-scale 0.3


def _node(uri: str, ancestors: list[str]) -> Node:
    return Node(
        uri=uri,
        parent_uri=ancestors[-1],
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        ancestors=ancestors,
    )


@given(finite, finite, finite, alphas)
def test_the_bound_covers_every_depth(floor: float, parent: float, own: float, a: float) -> None:
    b = SubtreeBounds(a)
    b.update(floor, [])
    own = min(own, floor)  # an unseen node scores at most the floor
    ub = b.upper("d", Score(parent), a)
    f = parent
    for _ in range(6):  # any chain of unseen nodes below the directory
        f = a * own + (1 - a) * f
        assert f <= ub + 1e-9


def test_hits_raise_their_ancestors_bound_until_alpha_is_one() -> None:
    hit = _node("r/x/y/leaf", ["r", "r/x", "r/x/y"])
    b = SubtreeBounds(0.5)
    b.update(0.2, [(hit, 0.9)])
    assert b.own_bound("r/x") == 0.9 and b.own_bound("r/z") == 0.2
    b1 = SubtreeBounds(1.0)  # alpha = 1: hits are final at once, only the floor is left
    b1.update(0.2, [(hit, 0.9)])
    assert b1.own_bound("r/x") == 0.2
    b1.update(-math.inf, [])
    assert b1.upper("r/x", Score(5.0), 1.0) == -math.inf


def test_convergence_counts_only_full_quiet_rounds_outside_hops() -> None:
    c = Convergence(2)
    assert not c.update(("a",), full=False, in_hop=False)
    assert not c.update(("a",), full=False, in_hop=False)
    assert not c.update(("a", "b"), full=True, in_hop=False)
    assert not c.update(("a", "b"), full=True, in_hop=True)  # a hop round does not count
    assert not c.update(("a", "b"), full=True, in_hop=False)
    assert c.update(("a", "b"), full=True, in_hop=False)


@given(st.floats(allow_nan=False), st.none() | st.floats(allow_nan=False))
def test_score_of_builds_the_score_the_constructor_does(vec: float, rr: float | None) -> None:
    fast, slow = score_of(vec, rr), Score(vec, rr)
    assert type(fast) is Score and fast == slow and hash(fast) == hash(slow)
    assert repr(fast) == repr(slow) and fast.vec is vec and fast.rr is rr
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.vec = 0.0  # type: ignore[misc]


def test_a_candidate_at_a_column_position_builds_its_node_once_on_first_read() -> None:
    from treehop.descent import Candidate
    from treehop.models import FoundBy

    nodes = [_node(f"viking://resources/d/f{i}.md", ["viking://resources/d"]) for i in range(3)]
    asked: list[list[int]] = []

    def load(positions: list[int]) -> list[Node]:
        asked.append(list(positions))
        return [nodes[i] for i in positions]

    s = Score(0.5)
    c = Candidate.deferred_at(
        nodes[2].uri, "viking://resources/d", None, True, load, 2, s, s, 0.5, FoundBy.CHILD
    )
    assert asked == [] and c.uri == nodes[2].uri and c.document == nodes[2].uri
    assert c.node is nodes[2] and c.node is nodes[2]
    assert asked == [[2]]  # built once, from its own position


_KTH_SCORES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.25, 0.5, -0.5, float("-inf")]),  # (ties)
)


@given(
    st.lists(
        st.tuples(st.integers(0, 30), st.integers(0, 3), st.booleans(), _KTH_SCORES),
        max_size=40,
    ),
    st.integers(1, 12),
    st.booleans(),
    st.sampled_from([Track.VECTOR, Track.RERANK]),
)
def test_kth_score_is_the_kth_best_slot(
    rows: list[tuple[int, int, bool, float]], k: int, collapse: bool, track: Track
) -> None:
    """``Collected.kth_score`` is the k-th best of the slots' best scores, computed here
    plainly (each kept candidate's slot, its best by ``>``, so a NaN score never enters;
    ``-inf`` with fewer than ``k`` slots), with ties, infinities, chunks of one document
    (collapsed or not) and NaN scores, halfway (the kept slots) and at the end (the
    candidates placed since folded in). (Helper windows folded the array partition that
    ``KTH_SORTED = False`` kept as a second implementation; this reference replaces the
    comparison with it.)"""
    from treehop.descent import Candidate, Collected, FoundBy

    coll = Collected(collapse)
    for at, (file, chunk, is_chunk, s) in enumerate(rows):
        uri = f"viking://resources/d/f{file}.md"
        if is_chunk:
            uri, parent, index = f"{uri}#chunk-{chunk}", uri, chunk
        else:
            parent, index = "viking://resources/d", None
        score = score_of(s, s)
        cand = Candidate.deferred_at(
            uri, parent, index, True, lambda at: [], 0, score, score, s, FoundBy.GLOBAL
        )
        coll.add(cand, track)
        if at == len(rows) // 2 or at == len(rows) - 1:  # (the kept slots, then folded in)
            best: dict[str, float] = {}
            for c in coll.values():
                key = c.document if collapse else c.uri
                v = c.final.on(track)
                if v > best.get(key, float("-inf")):
                    best[key] = v
            want = sorted(best.values(), reverse=True)[k - 1] if len(best) >= k else -math.inf
            assert coll.kth_score(k, track) == want
