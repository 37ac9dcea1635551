"""A find racing a delete: a node the descent collected and a concurrent write removed
before the find read it drops out of the find instead of failing it.

The seed's starting points (the CONVERGENCE stop rule, and the rerank track) include the
parent directory of each leaf hit, whose vector the retriever reads with ``get_vectors``; a
directory deleted in between raised the store's ``NotFoundError`` for a node the caller
never named. The same pattern as the hub correction's (``tests/test_hubness.py``): the
missing node leaves the set, the rest go on. Real ``EmbeddedStore``s, a real delete.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from treehop import RetrievalConfig, StopRule
from treehop.embedders.base import Vectors
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import Node, TypedQuery
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_folder, resource_leaf, resource_root

R = "viking://resources"
DIM = 8


def _unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    for i, x in pairs:
        v[i] = x
    return v / np.linalg.norm(v)


def _tree() -> tuple[list[Node], np.ndarray]:
    """A root with two folders: ``docs`` holds the query's best leaves, ``misc`` the rest."""

    def leaf(folder: str, name: str) -> Node:
        return resource_leaf(f"{R}/{folder}/{name}", f"{folder} {name}")

    nodes = [
        resource_root(),
        resource_folder(f"{R}/docs"),
        resource_folder(f"{R}/misc"),
        *(leaf("docs", f"d{i}.md") for i in range(4)),
        *(leaf("misc", f"m{i}.md") for i in range(4)),
    ]
    vectors = np.stack(
        [
            _unit((7, 1.0)),
            _unit((0, 0.6), (1, 0.8)),
            _unit((0, 0.3), (2, 0.95)),
            *(_unit((0, 0.9 - 0.05 * i), (3 + i, 0.4)) for i in range(4)),
            *(_unit((0, 0.5 - 0.05 * i), (2, 0.8)) for i in range(4)),
        ]
    )
    return nodes, vectors


class _DeletingStore(EmbeddedStore):
    """A real store where a concurrent writer deletes ``victims`` just as the retriever
    asks for a vector of the first of them (a find on a shared index meeting ``rm``), by
    the embedded store's one-snapshot read (``present_vectors``) or ``get_vectors``."""

    victims: list[str] | None = None

    def _race(self, uris: Sequence[str]) -> None:
        if self.victims is not None and self.victims[0] in uris:
            self.delete(self.victims)
            self.victims = None

    def get_vectors(self, uris: Sequence[str]) -> Vectors:
        self._race(uris)
        return super().get_vectors(uris)

    def present_vectors(self, uris: Sequence[str]) -> tuple[Any, Vectors]:
        self._race(uris)
        return super().present_vectors(uris)


class _DeletingProtocolStore(_DeletingStore):
    """The same race in a store that offers only the protocol's ``get_vectors`` (as a remote
    store does): the retriever's miss, ``get`` and second read."""

    present_vectors = None  # type: ignore[assignment]


RACING = pytest.mark.parametrize("racing_cls", [_DeletingStore, _DeletingProtocolStore])


def _store(cls: type[EmbeddedStore] = EmbeddedStore) -> EmbeddedStore:
    nodes, vectors = _tree()
    store = cls()
    store.upsert(nodes, vectors)
    return store


def _find(store: EmbeddedStore, cfg: RetrievalConfig) -> list[tuple[str, float]]:
    req = RetrievalRequest(
        query=TypedQuery(query="guide"), vector=_unit((0, 1.0)), roots=[R], limit=5
    )
    result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
    return [(m.uri.rsplit("/", 1)[-1], m.score) for m in result.matched_contexts]


CONVERGENCE = RetrievalConfig(stop_rule=StopRule.CONVERGENCE, global_search_topk=4)


@RACING
def test_a_leaf_hits_parent_deleted_during_the_find_does_not_fail_it(
    racing_cls: type[_DeletingStore],
) -> None:
    """``docs`` is deleted as the seed's starting points read its vector: the find answers,
    exactly as a find on a store where ``docs`` was already gone (its leaves, collected by
    the global search, keep their scores; the folder is no starting point)."""
    racing = _store(racing_cls)
    assert isinstance(racing, _DeletingStore)
    racing.victims = [f"{R}/docs"]
    got = _find(racing, CONVERGENCE)
    assert racing.victims is None, "the delete did not happen at the vectors read"
    plain = _store()
    plain.delete([f"{R}/docs"])
    assert got == _find(plain, CONVERGENCE)
    assert [u for u, _ in got[:4]] == [f"d{i}.md" for i in range(4)]


def test_an_orphaned_leaf_hit_does_not_fail_the_find() -> None:
    """Without any race: a leaf whose folder a delete removed earlier (``rm`` of the folder
    node alone) is a hit whose parent has no vector; the find answers with it."""
    store = _store()
    store.delete([f"{R}/docs"])
    got = _find(store, CONVERGENCE)
    assert got[0][0] == "d0.md"


@RACING
def test_a_whole_subtree_deleted_during_the_find_does_not_fail_it(
    racing_cls: type[_DeletingStore],
) -> None:
    """``rm -r docs`` meeting the find: the folder and its leaves go at once. The find
    answers, and the other folder is still descended into. (The ``docs`` leaves the global
    search had already collected stay in this result with the scores they were read with,
    as any row a write deletes after a find read it: dropping them would cost a store call
    per find for a window that a delete just after the find reopens anyway.)"""
    racing = _store(racing_cls)
    assert isinstance(racing, _DeletingStore)
    racing.victims = [f"{R}/docs", *(f"{R}/docs/d{i}.md" for i in range(4))]
    got = [u for u, _ in _find(racing, CONVERGENCE)]
    assert racing.victims is None
    assert "m0.md" in got


def test_without_a_delete_the_starting_points_are_unchanged() -> None:
    """The seed's starts still include the hits' folder: ``misc``'s leaves, which the
    global search (top 4) did not return, are reached through the descent."""
    got = [u for u, _ in _find(_store(), CONVERGENCE)]
    assert got[:4] == [f"d{i}.md" for i in range(4)]
    assert "m0.md" in got
