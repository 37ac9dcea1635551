"""Milvus answers exactly what the embedded store answers, on the same vectors.

Both stores index the same trees with the same deterministic embedder; Milvus uses the exact
FLAT index, so every ranking -- store searches in every scope and whole ``find()`` / ``search()``
calls -- must agree in URIs, order and scores (within float tolerance, any order among exact
ties).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from store_conf_helpers import StoreFactory, assert_same_ranking, ranked

from treehop import RetrievalConfig, StopRule, TagHopTrigger, Treehop
from treehop.demo import index_sample_tree
from treehop.filters import MetadataFilter, TagFilter
from treehop.models import FindResult, FoundBy
from treehop.stores.base import Scope

R = "viking://resources"
# Equivalence holds for exact dense search (dense_weight=1.0): the engines' BM25 indexes
# tokenise differently, so hybrid rankings are compared for quality, not identity.


def _build(store: Any, bow: Any, tmp: Path) -> Treehop:
    cfg = RetrievalConfig(
        tag_hop_trigger=TagHopTrigger.ALWAYS,
        global_search_topk=3,
        dense_weight=1.0,
        stop_rule=StopRule.CONVERGENCE,  # hops decide reach only under the seed's rule
    )
    th = Treehop(embedder=bow, store=store, tagger=None, config=cfg, chunk_chars=400)
    index_sample_tree(th)
    th.add_resource(
        "\n\n".join(
            f"Part {i}: rotating service credentials, token lifetimes and audit logs "
            + " ".join(f"detail{i}-{j}" for j in range(25))
            for i in range(5)
        ),
        target_uri=f"{R}/security/runbook",
        tags="security;credentials",
    )
    th.add_resource(
        "feature pipelines feed model training jobs every night",
        target_uri=f"{R}/data-engineering/notes/training-feeds",
        tags="model-training",
    )
    th.add_memory("The user prefers short answers about OAuth", name="oauth-pref", tags="oauth")
    platform = tmp / "platform"
    platform.mkdir(exist_ok=True)
    (platform / "jobs.md").write_text("nightly spark jobs write features to the warehouse")
    (platform / "serving.md").write_text("low latency lookups from redis for online inference")
    th.add_resource(platform, target_uri=f"{R}/platform", tags="model-training")
    return th


@pytest.fixture
def pair(
    milvus_factory: StoreFactory, embedded_factory: StoreFactory, bow: Any, tmp_path: Path
) -> Iterator[tuple[Treehop, Treehop]]:
    emb = _build(embedded_factory(), bow, tmp_path)
    mil = _build(milvus_factory(), bow, tmp_path)
    yield emb, mil
    emb.close()
    mil.close()


def _hits(res: FindResult) -> list[tuple[str, float]]:
    return [(m.uri, m.score) for m in res.contexts()]


def _hopped(res: FindResult) -> set[str]:
    return {m.uri for m in res.contexts() if m.found_by is FoundBy.TAG_HOP}


FIND_CASES: list[tuple[str, dict[str, Any]]] = [
    ("how do we validate OAuth tokens", {}),
    ("how do we validate OAuth tokens", {"include_directories": False, "limit": 20}),
    ("rotating credentials audit", {"target_uri": f"{R}/security", "limit": 15}),
    ("rotating credentials audit", {"chunk_diffusion_count": 1, "chunk_group": True}),
    ("model training pipelines", {"limit": 20}),
    ("model training pipelines", {"tags": "model-training", "limit": 20}),
    ("credentials", {"tags_all": "security;credentials", "score_threshold": -1.0}),
    ("write an RFC document", {"context_type": "skill"}),
    ("short answers", {"target_uri": "viking://~/memories", "tags": "oauth"}),
    ("pipelines", {"filter": {"op": "must", "field": "kind", "conds": ["markdown"]}}),
    (
        "pipelines",
        {
            "filter": {"op": "must_not", "field": "name", "conds": ["README.md"]},
            "limit": 30,
            "score_threshold": -1.0,
        },
    ),
    ("feature store serving", {"dense_weight": 1.0, "score_threshold": 0.05, "explain": True}),
]


def test_find_results_are_identical(pair: tuple[Treehop, Treehop]) -> None:
    emb, mil = pair
    assert len(emb.store) == len(mil.store)
    hopped = 0
    for query, kw in FIND_CASES:
        want = emb.find(query, **kw)
        got = mil.find(query, **kw)
        assert_same_ranking(_hits(got), _hits(want))
        # GLOBAL vs CHILD for a node reached both ways at one score is decided by float noise
        # (numpy's dot over all rows vs over a directory's rows differs in the last bits), so
        # provenance is compared where it is not a tie-break: which hits came by a tag hop.
        assert _hopped(got) == _hopped(want)
        hopped += len(_hopped(want))
        assert want.query_results and got.query_results
        assert got.query_results[0].tag_hops.subtrees_added == (
            want.query_results[0].tag_hops.subtrees_added
        )
    assert hopped > 0  # the comparison covered tag hops, not only vertical descents


def test_search_results_are_identical(pair: tuple[Treehop, Treehop]) -> None:
    emb, mil = pair
    for query in ("how do we validate OAuth tokens", "model training pipelines"):
        assert_same_ranking(_hits(mil.search(query)), _hits(emb.search(query)))


def test_every_store_scope_agrees(pair: tuple[Treehop, Treehop], bow: Any) -> None:
    emb, mil = pair
    q = bow.embed_query("rotating credentials for model training pipelines")
    dirs = [n.uri for n in emb.store.iter_nodes() if not n.is_leaf]
    scopes: list[Scope] = []
    for d in dirs:
        scopes += [Scope(parent_uri=d), Scope(subtrees=(d,))]
    filters: list[dict[str, Any]] = [
        {"tags": TagFilter(any_of=("model-training", "oauth"))},
        {"tags": TagFilter(all_of=("security", "credentials"))},
        {"metadata": MetadataFilter.parse({"op": "must", "field": "kind", "conds": ["text"]})},
        {"metadata": MetadataFilter.parse({"op": "must_not", "field": "kind", "conds": ["text"]})},
    ]
    for f in filters:
        scopes += [Scope(traversal=True, **f), Scope(parent_uri=R, traversal=True, **f)]
        scopes += [Scope(subtrees=(f"{R}/security",), traversal=True, **f), Scope(**f)]
    assert len(scopes) > 50
    for scope in scopes:
        want = emb.store.search(q, scope, 50)
        got = mil.store.search(q, scope, 50)
        assert_same_ranking(ranked(got), ranked(want))
        assert {h.node.uri: h.matches for h in got} == {h.node.uri: h.matches for h in want}
        assert [c.uri for c in mil.store.children(scope.parent_uri or R)] == [
            c.uri for c in emb.store.children(scope.parent_uri or R)
        ]


def test_automatic_tags_are_identical(
    milvus_factory: StoreFactory, embedded_factory: StoreFactory, bow: Any
) -> None:
    """The default ingest tagger keeps its state in the store and reads the tree back from
    it; on both engines it must tag every node alike, and tag hops then agree."""
    out = []
    for store in (embedded_factory(), milvus_factory()):
        cfg = RetrievalConfig(
            tag_hop_trigger=TagHopTrigger.ALWAYS,
            global_search_topk=3,
            dense_weight=1.0,
            stop_rule=StopRule.CONVERGENCE,  # hops decide reach only under the seed's rule
        )
        with Treehop(embedder=bow, store=store, tagger="auto", config=cfg) as th:
            index_sample_tree(th)
            tags = {n.uri: n.tags for n in th.store.iter_nodes()}
            res = th.find("model training pipelines", limit=10, include_directories=False)
            assert res.query_results
            added = res.query_results[0].tag_hops.subtrees_added
            out.append((tags, _hits(res), _hopped(res), added))
    (etags, ehits, ehop, eadded), (mtags, mhits, mhop, madded) = out
    assert sum(len(t) for t in etags.values()) > 50  # the tagger did tag the tree
    assert mtags == etags
    assert_same_ranking(mhits, ehits)
    assert eadded and madded == eadded and mhop == ehop
