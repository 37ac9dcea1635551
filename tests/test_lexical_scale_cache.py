"""A query's lexical scale is cached per snapshot object, never by ``id()``.

The scale (the query's best BM25 score over the index) used to be cached under
``(id(snapshot), text)``. CPython reuses a freed object's address for the next object of its
size, and a write publishes a new snapshot just after the one before last was freed: the new
snapshot then inherited the old one's key and read a scale computed over other rows. The
scale divides every lexical score of a hybrid search, so a stale one silently mis-ranks.
"""

from __future__ import annotations

import numpy as np

from treehop.models import Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_leaf

R = "viking://resources"
QUERY = "hypersonic"


def leaf(name: str, text: str) -> Node:
    return resource_leaf(f"{R}/d/{name}", text)


def vec(i: int) -> np.ndarray:
    a = np.array([1.0, 0.05 * (i % 7), 0.02 * (i % 3)], dtype=np.float32)
    return a / np.linalg.norm(a)


def test_every_snapshot_gets_its_own_scale_even_when_ids_are_reused() -> None:
    """Each write changes the query's best BM25 score (a short document that repeats the
    word, and the collection statistics); each snapshot's scale must be its own. The old
    id-keyed cache fails this once an id comes back, which in CPython usually happens
    within a few writes (not always: the allocator decides, so the reuse is not asserted;
    the next test checks the per-snapshot cache deterministically)."""
    store = EmbeddedStore()
    store.upsert([leaf("base.md", "airfoil lift at low speed and a hypersonic note")], vec(0)[None])
    for i in range(1, 40):
        s = store._snap
        lexical = store.lexical
        assert lexical is not None
        fresh = lexical.max_score(QUERY, s.n)
        assert store._lexical_scale(s, lexical, QUERY) == fresh
        del s, lexical
        # a short document dense in the word: the best score changes with the writes
        store.upsert([leaf(f"n{i}.md", " ".join([QUERY] * (1 + i % 5)))], vec(i)[None])


def test_a_new_snapshot_starts_with_its_own_scales() -> None:
    """Deterministic half of the above: the scale computed on one snapshot is held by that
    snapshot object, so the snapshot a write publishes never reads it, whatever its id."""
    store = EmbeddedStore()
    store.upsert([leaf("base.md", "a hypersonic note among other words")], vec(0)[None])
    old = store._snap
    lexical = store.lexical
    assert lexical is not None
    old_scale = store._lexical_scale(old, lexical, QUERY)
    store.upsert([leaf("dense.md", " ".join([QUERY] * 4))], vec(1)[None])
    new = store._snap
    assert new is not old and new.cache is not old.cache
    assert not new.cache.get(("lex_scale",))  # nothing carried over from the old snapshot
    fresh = lexical.max_score(QUERY, new.n)
    assert fresh != old_scale  # (the write changed the best score: the check has teeth)
    assert store._lexical_scale(new, lexical, QUERY) == fresh
    assert store._lexical_scale(old, lexical, QUERY) == old_scale


def test_normal_finds_are_unchanged_and_repeatable() -> None:
    """The cache still serves repeated queries (same scores) and hybrid ranking is as
    before: only the rare word's document wins at a low dense weight."""
    store = EmbeddedStore()
    store.upsert(
        [
            leaf("a.md", "airfoil lift at low speed"),
            leaf("b.md", "hypersonic shock layers"),
            leaf("c.md", "boundary layer transition"),
        ],
        np.stack([vec(0), vec(3), vec(5)]),
    )
    q = vec(0)
    first = store.search(q, Scope(parent_uri=f"{R}/d"), 3, query_text=QUERY, dense_weight=0.3)
    again = store.search(q, Scope(parent_uri=f"{R}/d"), 3, query_text=QUERY, dense_weight=0.3)
    assert first[0].node.uri.endswith("b.md")
    assert [(h.node.uri, h.score) for h in first] == [(h.node.uri, h.score) for h in again]
    s = store._snap
    lexical = store.lexical
    assert lexical is not None
    assert store._lexical_scale(s, lexical, QUERY) == lexical.max_score(QUERY, s.n) > 0
