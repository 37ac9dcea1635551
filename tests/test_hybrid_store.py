"""Hybrid (dense + BM25) search in the embedded store: in sync on writes, persisted, scoped."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from treehop import Treehop
from treehop.errors import InvalidQueryError
from treehop.models import ContextType, Node
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore

R = "viking://resources"


def leaf(name: str, text: str) -> Node:
    return Node(
        uri=f"{R}/d/{name}",
        parent_uri=f"{R}/d",
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        abstract=text[:20],
        content=text,
    )


def unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


@pytest.fixture
def store() -> EmbeddedStore:
    s = EmbeddedStore()
    # Dense prefers a; only b contains the rare query word "hypersonic".
    s.upsert(
        [
            leaf("a.md", "airfoil lift at low speed"),
            leaf("b.md", "hypersonic shock layers"),
            leaf("c.md", "boundary layer transition"),
        ],
        np.stack([unit([1, 0.1, 0]), unit([0.6, 0.8, 0]), unit([0.2, 0, 1])]),
    )
    return s


def names(hits: list) -> list[str]:
    return [h.node.uri.rsplit("/", 1)[-1] for h in hits]


def test_dense_weight_mixes_in_bm25(store: EmbeddedStore) -> None:
    q = unit([1, 0, 0])
    assert (
        names(store.search(q, Scope(), 3, query_text="hypersonic", dense_weight=1.0))[0] == "a.md"
    )
    hits = store.search(q, Scope(), 3, query_text="hypersonic", dense_weight=0.3)
    assert names(hits)[0] == "b.md"
    assert hits[0].lexical_score is not None and hits[0].lexical_score > 0
    assert hits[0].vector_score == pytest.approx(float(unit([0.6, 0.8, 0]) @ q), abs=1e-6)
    # the children search is hybrid too
    kids = store.search(q, Scope(parent_uri=f"{R}/d"), 3, query_text="hypersonic", dense_weight=0.3)
    assert names(kids)[0] == "b.md"
    with pytest.raises(InvalidQueryError):
        store.search(q, Scope(), 3, query_text="x", dense_weight=0.1)


def test_lexical_index_follows_upserts_and_deletes(store: EmbeddedStore) -> None:
    q = unit([1, 0, 0])
    store.upsert([leaf("b.md", "nothing relevant here")], unit([0.6, 0.8, 0])[None, :])
    store.upsert([leaf("e.md", "hypersonic flow")], unit([0, 1, 0])[None, :])
    hits = store.search(q, Scope(), 4, query_text="hypersonic", dense_weight=0.2)
    assert names(hits)[0] == "e.md"
    store.delete([f"{R}/d/a.md"])  # rows shift: BM25 must follow
    hits = store.search(q, Scope(), 3, query_text="hypersonic", dense_weight=0.2)
    assert names(hits)[0] == "e.md" and hits[0].lexical_score > 0  # type: ignore[operator]


def test_lexical_index_persists_and_is_rebuilt_when_missing(
    store: EmbeddedStore, tmp_path: Path
) -> None:
    s = EmbeddedStore(tmp_path / "i")
    nodes = list(store.iter_nodes())
    s.upsert(nodes, store.get_vectors([n.uri for n in nodes]))
    s.save()
    q = unit([1, 0, 0])
    want = names(s.search(q, Scope(), 3, query_text="hypersonic", dense_weight=0.3))
    assert (
        names(
            EmbeddedStore(tmp_path / "i").search(
                q, Scope(), 3, query_text="hypersonic", dense_weight=0.3
            )
        )
        == want
    )
    (lexical_dir,) = (tmp_path / "i").glob("lexical-*")
    shutil.rmtree(lexical_dir)
    again = EmbeddedStore(tmp_path / "i")
    assert names(again.search(q, Scope(), 3, query_text="hypersonic", dense_weight=0.3)) == want
    assert again.capabilities.hybrid
    assert not EmbeddedStore(lexical=False).capabilities.hybrid


def test_find_uses_dense_weight_end_to_end(bow, sample_tree: Path) -> None:  # type: ignore[no-untyped-def]
    with Treehop(embedder=bow, tagger=None) as th:
        th.add_resource(sample_tree / "resources" / "security", target_uri="viking://resources")
        res = th.find("单点登录", dense_weight=0.2, include_directories=False, limit=1)
        assert res.resources[0].uri.endswith("单点登录.md")
