"""The store's hybrid blend of issue 35 round 9 gives the floats of the long way round: its
own candidate rows scored without re-checking them (``LexicalIndex.score_candidates``), the
blend with a fixed scale (``blend_scaled``) against the arithmetic ``hybrid_scores`` had, a
write after a query's terms were kept, and a store's hybrid searches against the public
``score`` + ``hybrid_scores`` path."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.lexical import LexicalIndex, blend_scaled, hybrid_scores
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"
DIM = 32
WORDS = ["kafka", "tree", "vector", "index", "river", "stone", "cloud", "bread"]


# ---------------------------------------------------------------------- the hybrid blend
def _index(n: int, seed: int) -> LexicalIndex:
    rng = np.random.default_rng(seed)
    lex = LexicalIndex()
    lex.upsert(np.arange(n), [" ".join(rng.choice(WORDS, size=6).tolist()) for _ in range(n)])
    return lex


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**31 - 1),
    st.lists(st.sampled_from([*WORDS, "unknown", "zebra"]), min_size=0, max_size=4),
    st.integers(1, 80),
)
def test_candidate_scores_equal_checked_scores(seed: int, words: list[str], m: int) -> None:
    lex = _index(120, seed % 1000)
    rng = np.random.default_rng(seed)
    rows = rng.choice(150, size=m, replace=False).astype(np.int64)  # (some past the last doc)
    text = " ".join(words)
    assert lex.score_candidates(text, rows).tobytes() == lex.score(text, rows).tobytes()


def test_a_write_after_a_kept_query_changes_its_candidate_scores() -> None:
    lex = _index(60, 1)
    rows = np.arange(70, dtype=np.int64)
    before = lex.score_candidates("kafka zebra", rows)
    assert before[65] == 0.0 and not (before > 0).all()
    lex.upsert([65], ["zebra zebra kafka"])  # a new document and a new term
    after = lex.score_candidates("kafka zebra", rows)
    assert after[65] > 0.0 and after.tobytes() != before.tobytes()
    assert after.tobytes() == lex.score("kafka zebra", rows).tobytes()
    lex.delete([65])
    assert lex.score_candidates("kafka zebra", rows)[65] == 0.0


_f32 = st.floats(-1.0, 1.0, width=32)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_f32, st.floats(0.0, 30.0, width=32)), min_size=1, max_size=60),
    st.floats(0.2, 0.999),
    st.one_of(st.just(0.0), st.floats(0.01, 50.0)),
)
def test_the_scaled_blend_equals_hybrid_scores(
    pairs: list[tuple[float, float]], weight: float, scale: float
) -> None:
    dense = np.array([d for d, _ in pairs] + [-0.0], dtype=np.float32)
    lexical = np.array([x for _, x in pairs] + [0.0], dtype=np.float32)
    # the blend's arithmetic as hybrid_scores wrote it before blend_scaled (round 8)
    norm = lexical / np.float32(scale) if scale > 0 else np.zeros_like(lexical)
    want = (weight * dense + (1.0 - weight) * norm).astype(np.float32)
    got = blend_scaled(dense, lexical, weight, scale)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    assert hybrid_scores(dense, lexical, weight, scale=scale).tobytes() == want.tobytes()


def test_a_stores_hybrid_searches_equal_the_public_scores_blended() -> None:
    """Every hit's lexical and combined score is what the public path gives its row:
    ``LexicalIndex.score`` and ``hybrid_scores`` with the query's scale (the index's best
    BM25 score), for a wide search and a narrow one, before and after a write."""
    rng = np.random.default_rng(4)
    s = EmbeddedStore(lexical=True)
    leaves = [
        leaf(f"{R}/d{k}/f{i}.md", " ".join(rng.choice(WORDS, size=5).tolist()))
        for k in range(6)
        for i in range(40)
    ]
    s.upsert(leaves, vecs(len(leaves), 5, DIM))
    q = vecs(1, 6, DIM)[0]

    def check() -> None:
        lex = s.lexical
        assert lex is not None
        for text in ("kafka river", "stone stone bread", "zebra", "tree"):
            scale = lex.max_score(text, s._snap.n)
            for scope in (Scope(subtrees=(R,)), Scope(subtrees=(f"{R}/d2", f"{R}/d4"))):
                for weight in (0.3, 0.5, 0.8):
                    hits = s.search(q, scope, 25, query_text=text, dense_weight=weight)
                    rows = s._snap.lookup([h.node.uri for h in hits])
                    want = lex.score(text, rows)
                    dense = np.array([h.vector_score for h in hits], dtype=np.float32)
                    blended = hybrid_scores(dense, want, weight, scale=scale)
                    assert [h.lexical_score for h in hits] == want.tolist()
                    assert [h.score for h in hits] == blended.tolist()

    check()
    s.upsert([leaf(f"{R}/d2/new.md", "zebra zebra kafka")], vecs(1, 7, DIM))
    check()


def test_kept_query_tokens_are_the_tokenizers() -> None:
    """The tokens an index keeps per query text are the tokenizer's, for short and long
    texts, and many distinct queries keep at most a bounded number."""
    calls: list[str] = []

    def counting(text: str) -> list[str]:
        calls.append(text)
        return text.lower().split()

    lex = LexicalIndex(tokenizer=counting, tokenizer_id="test-split")
    lex.upsert([0, 1], ["Kafka river", "stone bread"])
    calls.clear()
    a = lex.score("Kafka Stone", [0, 1])
    b = lex.score_candidates("Kafka Stone", np.array([0, 1], dtype=np.int64))
    assert a.tobytes() == b.tobytes() and calls == ["Kafka Stone"]  # tokenised once
    long = "kafka " * 400  # (past the kept length: tokenised every time)
    lex.score(long, [0, 1])
    lex.score(long, [0, 1])
    assert calls.count(long) == 2
    for i in range(100):
        assert lex.score_candidates(f"q{i} kafka", np.array([0], dtype=np.int64))[0] > 0
    assert len(lex._query_memo) <= 32
