"""The store's find-path shortcuts of issue 35 round 9 give the floats of the long way round:
the cosines a graph search keeps for the narrow searches of the same query (a find's tree
context), the hybrid blend of a store's own candidates without re-checking them, and both
after a write (a kept answer never outlives the index state it was computed on)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from treehop.lexical import LexicalIndex, blend_scaled, hybrid_scores
from treehop.models import Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.embedded import search_paths as emb_search
from treehop.stores.embedded.layout import _matvec

from treehop_test_doubles import store_folder
from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"
DIM = 32
FOLDERS = 20
FILES = 30
WORDS = ["kafka", "tree", "vector", "index", "river", "stone", "cloud", "bread"]


def _tree(lexical: bool) -> tuple[EmbeddedStore, list[Node]]:
    """20 folders of 30 files, the graph on from the first row (600 leaves: graph search)."""
    rng = np.random.default_rng(3)
    s = EmbeddedStore(ann_min_rows=0, lexical=lexical)
    folders = [store_folder(f"{R}/d{k}", R) for k in range(FOLDERS)]
    leaves = [
        leaf(f"{R}/d{k}/f{i}.md", " ".join(rng.choice(WORDS, size=5).tolist()))
        for k in range(FOLDERS)
        for i in range(FILES)
    ]
    # clustered: a folder's files lie near its own direction, as a tree's do
    centre = vecs(FOLDERS, 7, DIM)
    noise = vecs(len(leaves), 8, DIM)
    v = np.repeat(centre, FILES, axis=0) * 2.0 + noise
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    s.upsert(folders, vecs(FOLDERS, 9, DIM))
    s.upsert(leaves, v.astype(np.float32))
    assert s.wait_ann(timeout=60)
    return s, leaves


def _query(seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    out: np.ndarray = q / np.linalg.norm(q)
    return out


def _kept(s: EmbeddedStore, q: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The kept candidates and cosines of ``q`` (``None``: none kept)."""
    got = s._snap.cache.get(("cosines", q.tobytes()))
    return None if got is None else (got[0], got[1])


def test_a_graph_search_keeps_its_candidates_cosines_and_they_equal_the_kernel() -> None:
    s, _ = _tree(lexical=False)
    q = _query(1)
    s.search(q, Scope(subtrees=(R,)), 10)
    kept = _kept(s, q)
    assert kept is not None
    known, scores = kept
    assert known.size > 10 and np.unique(known).size == known.size  # distinct rows
    snap = s._snap
    assert scores.tobytes() == _matvec(snap.vectors_of(known), q).tobytes()
    emb_search._cosines(snap, q, known[:1])  # the first read sorts them by row
    known, scores, ordered = snap.cache[("cosines", q.tobytes())]
    assert ordered and bool((np.diff(known) > 0).all())
    assert scores.tobytes() == _matvec(snap.vectors_of(known), q).tobytes()
    rng = np.random.default_rng(0)
    outside = np.setdiff1d(np.arange(snap.n), known)
    sets = [
        known[:1],  # one row (the kernel's one-row call)
        known[:2],
        known[::-1].copy(),  # every kept row, unsorted
        outside[:5],  # none kept
        outside[-3:],  # none kept, past the last kept row
        np.array([known[-1], outside[-1]]),
        np.concatenate([known[3:9], outside[:4]]),  # some kept, some not
        rng.permutation(np.concatenate([known, outside[:40]])),
        np.zeros(0, np.int64),
    ]
    for rows in sets:
        want = _matvec(snap.vectors_of(rows), q)
        got = emb_search._cosines(snap, q, rows)
        assert got.dtype == np.float32 and got.tobytes() == want.tobytes()


def test_family_searches_equal_those_without_the_kept_cosines() -> None:
    s, _ = _tree(lexical=True)
    for seed in range(12):
        q = _query(100 + seed)
        text = " ".join(WORDS[seed % 3 : seed % 3 + 2])
        s.search_columns(q, Scope(subtrees=(R,)), 40, query_text=text, dense_weight=0.5)
        assert _kept(s, q) is not None
        for k in (seed % FOLDERS, (seed * 7) % FOLDERS):
            family = Scope(subtrees=(f"{R}/d{k}", f"{R}/d{(k + 1) % FOLDERS}"))
            for weight in (0.5, 1.0):
                with_kept = s.search_arrays(q, family, 80, query_text=text, dense_weight=weight)
                kept = s._snap.cache.pop(("cosines", q.tobytes()))
                fresh = s.search_arrays(q, family, 80, query_text=text, dense_weight=weight)
                s._snap.cache[("cosines", q.tobytes())] = kept
                positions = np.arange(len(fresh))
                assert with_kept.uris(positions) == fresh.uris(positions)
                assert with_kept.scores.tobytes() == fresh.scores.tobytes()
                a, b = with_kept.columns(positions), fresh.columns(positions)
                assert a.vector_scores == b.vector_scores
                assert a.lexical_scores == b.lexical_scores


def test_a_write_after_the_kept_cosines_is_searched_with_its_new_vector() -> None:
    s, leaves = _tree(lexical=False)
    q = _query(5)
    s.search(q, Scope(subtrees=(R,)), 10)
    kept = _kept(s, q)
    assert kept is not None
    # the best kept leaf gets a vector opposite to the query
    snap = s._snap
    best_row = int(kept[0][int(np.argmax(kept[1]))])
    uri = snap.uris_of(np.array([best_row]))[0]
    node = next(n for n in leaves if n.uri == uri)
    s.upsert([node], (-q).reshape(1, -1))
    assert s._snap is not snap and _kept(s, q) is None  # a new snapshot keeps nothing
    folder = uri.rsplit("/", 1)[0]
    hits = s.search(q, Scope(subtrees=(folder,), leaves_only=True), FILES)
    score = {h.node.uri: h.score for h in hits}
    assert score[uri] == float(_matvec((-q).reshape(1, -1), q)[0])
    assert hits[-1].node.uri == uri  # now the worst of its folder
    # and a graph search after the write keeps the new state's cosines
    s.search(q, Scope(subtrees=(R,)), 10)
    again = _kept(s, q)
    assert again is not None
    snap = s._snap
    assert again[1].tobytes() == _matvec(snap.vectors_of(again[0]), q).tobytes()


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
