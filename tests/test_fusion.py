"""Priority-weighted reciprocal-rank fusion of the typed queries' results."""

from __future__ import annotations

import pytest

from treehop.errors import InvalidQueryError
from treehop.fusion import fuse, fuse_query_results, priority_weight
from treehop.models import (
    ContextType,
    FoundBy,
    MatchedContext,
    QueryResult,
    TypedQuery,
)

R, M, S = ContextType.RESOURCE, ContextType.MEMORY, ContextType.SKILL


def hit(uri: str, score: float, ct: ContextType = R, **kw: object) -> MatchedContext:
    return MatchedContext(
        uri=f"viking://resources/{uri}" if ct is R else f"viking://user/u/{ct.value}/{uri}",
        context_type=ct,
        is_leaf=True,
        abstract=uri,
        score=score,
        **kw,  # type: ignore[arg-type]
    )


def tq(text: str, priority: int = 3, ct: ContextType = R) -> TypedQuery:
    return TypedQuery(query=text, context_type=ct, intent="", priority=priority)


def uris(hits: list[MatchedContext]) -> list[str]:
    return [h.abstract for h in hits]


def test_found_by_two_queries_beats_found_by_one() -> None:
    q1, q2 = tq("oauth guide"), tq("token refresh docs")
    out = fuse(
        [
            (q1, [hit("a", 0.90), hit("shared", 0.80), hit("c", 0.70)]),
            (q2, [hit("b", 0.95), hit("shared", 0.85), hit("d", 0.60)]),
        ]
    )
    # one entry per URI; rank-1 ties (a, b) and rank-3 ties (c, d) break by raw score
    assert uris(out[R]) == ["shared", "b", "a", "c", "d"]
    assert out[R][0].matched_queries == [q1, q2]  # equal contributions: plan order
    assert [h.matched_queries for h in out[R][1:]] == [[q2], [q1], [q1], [q2]]


def test_priority_orders_the_top_hits() -> None:
    high, low = tq("essential", 5), tq("nice to have", 1)
    out = fuse([(low, [hit("from-low", 0.99)]), (high, [hit("from-high", 0.50)])])
    assert uris(out[R]) == ["from-high", "from-low"]  # despite the lower raw score
    swapped = fuse([(tq("a", 1), [hit("from-low", 0.50)]), (tq("b", 5), [hit("from-high", 0.99)])])
    assert uris(swapped[R]) == ["from-high", "from-low"]
    same = fuse([(tq("a", 5), [hit("x", 0.5)]), (tq("b", 1), [hit("y", 0.5)])])
    flipped = fuse([(tq("a", 1), [hit("x", 0.5)]), (tq("b", 5), [hit("y", 0.5)])])
    assert uris(same[R]) == ["x", "y"] and uris(flipped[R]) == ["y", "x"]


def test_two_agreeing_low_priority_queries_beat_one_top_priority_hit() -> None:
    out = fuse(
        [
            (tq("main", 5), [hit("main-top", 0.9)]),
            (tq("side 1", 1), [hit("agreed", 0.6)]),
            (tq("side 2", 1), [hit("agreed", 0.6)]),
        ]
    )
    assert uris(out[R]) == ["agreed", "main-top"]


def test_exact_fused_score_and_normalisation() -> None:
    q1, q2 = tq("q1", 5), tq("q2", 3)
    out = fuse(
        [
            (q1, [hit("x", 0.9), hit("y", 0.8)]),
            (q2, [hit("z", 0.9), hit("w", 0.8), hit("x", 0.7)]),
        ]
    )
    by = {h.abstract: h for h in out[R]}
    ceiling = 1.0 / 61 + 0.8 / 61
    assert by["x"].score == pytest.approx((1.0 / 61 + 0.8 / 63) / ceiling)
    assert by["y"].score == pytest.approx((1.0 / 62) / ceiling)
    assert by["z"].score == pytest.approx((0.8 / 61) / ceiling)
    top_everywhere = fuse([(q1, [hit("t", 0.1)]), (q2, [hit("t", 0.2)])])
    assert top_everywhere[R][0].score == pytest.approx(1.0)
    assert all(0 < h.score <= 1 for h in out[R])
    assert priority_weight(1) == pytest.approx(0.6) and priority_weight(5) == pytest.approx(1.0)


def test_best_raw_fields_and_provenance_are_kept() -> None:
    q1, q2 = tq("q1"), tq("q2")
    weak = hit("x", 0.40, vector_score=0.40, rerank_score=0.9, found_by=FoundBy.TAG_HOP)
    strong = hit("x", 0.70, vector_score=0.70, rerank_score=None, found_by=FoundBy.CHILD)
    out = fuse([(q1, [weak]), (q2, [strong])])
    (x,) = out[R]
    assert x.found_by is FoundBy.CHILD  # from the best-scoring hit
    assert x.vector_score == 0.70
    assert x.rerank_score == 0.9
    assert x.matched_queries == [q1, q2]
    # inputs untouched
    assert weak.score == 0.40 and weak.matched_queries == []
    assert strong.score == 0.70


def test_lists_are_ranked_by_score_and_duplicates_count_once() -> None:
    q1 = tq("q1")
    out = fuse([(q1, [hit("low", 0.1), hit("high", 0.9), hit("high", 0.5)])])
    assert uris(out[R]) == ["high", "low"]
    assert out[R][0].score == pytest.approx(1.0)  # rank 1 only once, not 1/61 + 1/63
    assert out[R][1].score == pytest.approx(61 / 62)


def test_buckets_by_context_type_and_limit() -> None:
    qr, qm, qs = tq("r", 4, R), tq("m", 3, M), tq("s", 5, S)
    out = fuse(
        [
            (qr, [hit(f"r{i}", 1 - i / 10) for i in range(6)]),
            (qm, [hit("m0", 0.5, M), hit("m1", 0.4, M)]),
            (qs, []),
        ],
        limit=3,
    )
    assert uris(out[R]) == ["r0", "r1", "r2"]
    assert uris(out[M]) == ["m0", "m1"]
    assert out[S] == []
    # Each type is normalised by its own queries: the top memory scores 1.0 too.
    assert out[M][0].score == pytest.approx(1.0)


def test_ties_break_by_raw_score_then_uri() -> None:
    out = fuse([(tq("a"), [hit("p", 0.5)]), (tq("b"), [hit("q", 0.9)]), (tq("c"), [hit("o", 0.5)])])
    assert uris(out[R]) == ["q", "o", "p"]


def test_fuse_query_results_groups_by_context_type() -> None:
    q1, q2 = tq("skill", 5, S), tq("doc", 4, R)
    results = [
        QueryResult(query=q1, matched_contexts=[hit("run", 0.8, S)]),
        QueryResult(query=q2, matched_contexts=[hit("guide", 0.7), hit("spec", 0.6)]),
    ]
    fused = fuse_query_results(results, limit=10)
    assert uris(fused[S]) == ["run"] and uris(fused[R]) == ["guide", "spec"]
    assert fused[ContextType.MEMORY] == []
    assert uris(fuse_query_results(results, limit=1)[R]) == ["guide"]
    assert all(v == [] for v in fuse_query_results([]).values())


def test_invalid_parameters_are_typed_errors() -> None:
    with pytest.raises(InvalidQueryError):
        fuse([], k=0)
    with pytest.raises(InvalidQueryError):
        fuse([], limit=0)
    with pytest.raises(InvalidQueryError):
        fuse([(tq("a"), [hit("x", 1.0)])], weight=lambda p: 0.0)
