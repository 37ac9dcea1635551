"""Tag hops' ``effective_root`` skips single-child chains below a root; on the embedded store
it counts children (``EmbeddedStore.child_count``) instead of building them, with the same
answer as a store that can only list them."""

from __future__ import annotations

from typing import Any

from treehop.models import ContextType, Node
from treehop.stores.embedded import EmbeddedStore
from treehop.tag_hops import effective_root

from treehop_test_doubles import store_leaf as leaf
from treehop_test_doubles import unit_vectors as vecs

R = "viking://resources"


def _dir(uri: str, parent: str) -> Node:
    return Node(
        uri=uri, parent_uri=parent, context_type=ContextType.RESOURCE, level=1, is_leaf=False
    )


class _ListingOnly:
    """A store that lists children but cannot count them (no ``child_count``)."""

    def __init__(self, store: EmbeddedStore) -> None:
        self._store = store

    def children(self, uri: str) -> list[Node]:
        return self._store.children(uri)

    def __getattr__(self, name: str) -> Any:
        if name == "child_count":
            raise AttributeError(name)
        return getattr(self._store, name)


def _store() -> EmbeddedStore:
    nodes = [
        _dir(f"{R}/a", R),  # one child below the root ...
        _dir(f"{R}/a/b", f"{R}/a"),  # ... and one below that ...
        _dir(f"{R}/a/b/c", f"{R}/a/b"),  # ... which forks: a directory and a leaf
        leaf(f"{R}/a/b/x.md", "x"),
        leaf(f"{R}/a/b/c/y.md", "y"),
        _dir(f"{R}/only-leaf", R),
        leaf(f"{R}/only-leaf/z.md", "z"),
    ]
    s = EmbeddedStore(lexical=False)
    s.upsert(nodes, vecs(len(nodes), 3))
    return s


def test_counts_match_the_listing() -> None:
    s = _store()
    for uri in (R, f"{R}/a", f"{R}/a/b", f"{R}/a/b/c", f"{R}/only-leaf", f"{R}/nothing"):
        assert s.child_count(uri) == len(s.children(uri))


def test_single_child_chains_are_skipped_the_same_way() -> None:
    s = _store()
    listing = _ListingOnly(s)
    assert not hasattr(listing, "child_count")
    # the root has two children (a, only-leaf): it forks itself
    assert effective_root(s, R) == effective_root(listing, R) == R
    # a -> a/b (one directory) -> a/b forks: the chain is skipped down to a/b
    assert effective_root(s, f"{R}/a") == effective_root(listing, f"{R}/a") == f"{R}/a/b"
    # one child that is a leaf is not a directory to descend into
    assert effective_root(s, f"{R}/only-leaf") == f"{R}/only-leaf"
    assert effective_root(listing, f"{R}/only-leaf") == f"{R}/only-leaf"
    # after a write the counts follow the new snapshot
    s.upsert([leaf(f"{R}/a/w.md", "w")], vecs(1, 9))
    assert s.child_count(f"{R}/a") == 2
    assert effective_root(s, f"{R}/a") == f"{R}/a"
