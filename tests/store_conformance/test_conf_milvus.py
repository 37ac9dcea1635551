"""What only the Milvus store has: expression translation, server-side BM25, errors, paging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from store_conf_helpers import (
    DIM,
    R,
    StoreFactory,
    assert_same_ranking,
    make_nodes,
    make_vectors,
    oracle,
    query_vector,
    ranked,
)

from treehop import RetrievalConfig, Treehop
from treehop.demo import index_sample_tree
from treehop.errors import StoreError
from treehop.filters import MetadataFilter, TagFilter
from treehop.models import ContextType, Node
from treehop.stores import milvus as milvus_mod
from treehop.stores.base import Scope
from treehop.stores.milvus import MilvusStore, str_literal, translate_metadata
from treehop.uri import uri_prefixes


def _filled(factory: StoreFactory, **kw: Any) -> tuple[MilvusStore, list[Node], np.ndarray]:
    nodes = make_nodes()
    vecs = make_vectors(len(nodes))
    store = factory(**kw)
    assert isinstance(store, MilvusStore)
    store.upsert(nodes, vecs)
    return store, nodes, vecs


def test_capabilities_are_declared_honestly(milvus_factory: StoreFactory) -> None:
    caps = milvus_factory().capabilities
    assert caps.remote and caps.tag_filter and caps.hybrid and not caps.prefix_scope
    assert not milvus_factory(bm25=False).capabilities.hybrid


def test_string_literals_are_escaped() -> None:
    assert str_literal('it\'s "q" \\ end\n') == '"it\'s \\"q\\" \\\\ end\\n"'
    with pytest.raises(milvus_mod._Untranslatable):
        str_literal("bell\x07")


def test_ancestors_are_the_prefix_scopes_of_a_uri() -> None:
    assert uri_prefixes(f"{R}/a/b.md#chunk-1") == [R, f"{R}/a", f"{R}/a/b.md"]
    assert f"{R}/a" not in uri_prefixes(f"{R}/ab/z.md")
    assert uri_prefixes(R) == []


@pytest.mark.parametrize(
    ("spec", "exact", "pushed"),
    [
        ({"op": "must", "field": "lang", "conds": ["en", 3]}, True, "json_contains_any"),
        ({"op": "range", "field": "y", "gte": 1, "lt": 2}, True, 'metadata["y"] >= 1'),
        ({"op": "range_out", "field": "y", "gt": 1}, True, 'not exists metadata["y"]'),
        ({"op": "must_not", "field": "lang", "conds": ["en"]}, False, None),
        ({"op": "must", "field": "lang", "conds": ["bell\x07"]}, False, None),
        (
            {
                "op": "and",
                "conds": [
                    {"op": "must", "field": "a", "conds": ["x"]},
                    {"op": "must_not", "field": "b", "conds": ["y"]},
                ],
            },
            False,
            'metadata["a"] == "x"',
        ),
        (
            {
                "op": "or",
                "conds": [
                    {"op": "must", "field": "a", "conds": ["x"]},
                    {"op": "must_not", "field": "b", "conds": ["y"]},
                ],
            },
            False,
            None,
        ),
    ],
)
def test_metadata_translation_is_exact_or_says_so(
    spec: dict[str, Any], exact: bool, pushed: str | None
) -> None:
    md = MetadataFilter.parse(spec)
    assert md is not None
    expr, ok = translate_metadata(md.spec)
    assert ok is exact
    if pushed is None:
        assert expr is None
    else:
        assert expr is not None and pushed in expr


def test_untranslatable_values_are_filtered_in_python(milvus_factory: StoreFactory) -> None:
    store, nodes, vecs = _filled(milvus_factory)
    odd = nodes[2].model_copy(update={"uri": f"{R}/a/ctl.md", "metadata": {"v": "bell\x07"}})
    store.upsert([odd], vecs[2:3])
    nodes, vecs = [*nodes, odd], np.vstack([vecs, vecs[2:3]])
    md = MetadataFilter.parse({"op": "must", "field": "v", "conds": ["bell\x07"]})
    assert md is not None
    q = query_vector()
    got = ranked(store.search(q, Scope(metadata=md, traversal=True), 50))
    want = oracle(nodes, vecs, q, lambda n: md.matches(n.metadata) or n.uri in (R, f"{R}/a"))
    assert_same_ranking(got, want)


def test_client_side_filters_are_capped(milvus_factory: StoreFactory) -> None:
    store, _, _ = _filled(milvus_factory, max_client_side_matches=3)
    md = MetadataFilter.parse({"op": "must_not", "field": "lang", "conds": ["en"]})
    with pytest.raises(StoreError, match="max_client_side_matches"):
        store.search(query_vector(), Scope(metadata=md), 5)


def test_opening_errors_are_typed(milvus_factory: StoreFactory, milvus_client: Any) -> None:
    with pytest.raises(StoreError, match="invalid Milvus collection name"):
        MilvusStore(client=milvus_client, collection="bad-name")
    with pytest.raises(StoreError, match="does not exist"):
        MilvusStore(client=milvus_client, collection="never_created_here", create=False)
    with pytest.raises(StoreError, match="uri="):
        MilvusStore()
    with pytest.raises(StoreError, match="cannot connect"):
        MilvusStore(uri="http://127.0.0.1:1", timeout=2)
    store, _, _ = _filled(milvus_factory)
    with pytest.raises(StoreError, match="dimension mismatch"):
        MilvusStore(client=milvus_client, collection=store.collection, dimension=DIM * 2)
    foreign = store.collection + "_foreign"
    milvus_client.create_collection(foreign, dimension=4)
    with pytest.raises(StoreError, match="not created by treehop"):
        MilvusStore(client=milvus_client, collection=foreign)


def test_server_failures_become_store_errors(
    milvus_factory: StoreFactory, milvus_client: Any
) -> None:
    store, _, _ = _filled(milvus_factory)
    milvus_client.drop_collection(store.collection)  # behind the store's back
    with pytest.raises(StoreError, match=r"Milvus search failed on .*" + store.collection):
        store.search(query_vector(), Scope(), 3)
    with pytest.raises(StoreError, match="query failed"):
        store.children(R)


def _lexical_pair(factory: StoreFactory, **kw: Any) -> tuple[MilvusStore, np.ndarray]:
    """``far.md`` says the query words but points away; ``near.md`` points at the query."""
    q = query_vector()
    far_vec = -q + 0.3 * query_vector(5)
    near_vec = q + 0.2 * query_vector(6)
    rows = [
        (f"{R}/d/far.md", "zebra quasar lexicon zebra", far_vec),
        (f"{R}/d/near.md", "completely different words here", near_vec),
        (f"{R}/e/other.md", "zebra quasar", q + 0.1 * query_vector(8)),
    ]
    nodes = [
        Node(
            uri=u,
            parent_uri=u.rsplit("/", 1)[0],
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            content=text,
        )
        for u, text, _ in rows
    ]
    vecs = np.stack([v / np.linalg.norm(v) for _, _, v in rows]).astype(np.float32)
    store = factory(**kw)
    assert isinstance(store, MilvusStore)
    store.upsert(nodes, vecs)
    return store, q


def test_hybrid_search_mixes_server_side_bm25(milvus_factory: StoreFactory) -> None:
    store, q = _lexical_pair(milvus_factory)
    scope = Scope(parent_uri=f"{R}/d")
    dense = store.search(q, scope, 2, query_text="zebra quasar")
    assert [h.node.uri.rsplit("/", 1)[-1] for h in dense] == ["near.md", "far.md"]
    mixed = store.search(q, scope, 2, query_text="zebra quasar", dense_weight=0.3)
    assert [h.node.uri.rsplit("/", 1)[-1] for h in mixed] == ["far.md", "near.md"]
    far, near = mixed
    assert far.lexical_score is not None and far.lexical_score > 0
    assert near.lexical_score == 0.0
    # treehop's fusion: w * cosine + (1 - w) * bm25 / max(bm25); far holds the max.
    assert far.score == pytest.approx(0.3 * far.vector_score + 0.7, abs=1e-5)
    assert near.score == pytest.approx(0.3 * near.vector_score, abs=1e-5)
    assert far.vector_score == pytest.approx(dense[1].vector_score, abs=1e-5)
    nothing = store.search(q, scope, 2, query_text="unrelated", dense_weight=0.3)
    assert [h.node.uri for h in nothing] == [h.node.uri for h in dense]


def test_hybrid_with_milvus_weighted_ranker(milvus_factory: StoreFactory) -> None:
    store, q = _lexical_pair(milvus_factory, hybrid_fusion="milvus")
    scope = Scope(parent_uri=f"{R}/d")
    mixed = store.search(q, scope, 2, query_text="zebra quasar", dense_weight=0.3)
    assert [h.node.uri.rsplit("/", 1)[-1] for h in mixed] == ["far.md", "near.md"]
    dense_first = store.search(q, scope, 2, query_text="zebra quasar", dense_weight=0.9)
    assert dense_first[0].node.uri.endswith("near.md")


def test_hybrid_through_the_client(milvus_factory: StoreFactory, bow: Any) -> None:
    cfg = RetrievalConfig(dense_weight=0.4)
    with Treehop(embedder=bow, store=milvus_factory(), tagger=None, config=cfg) as th:
        index_sample_tree(th)
        res = th.find("OAuth tokens", include_directories=False, limit=5)
        top = res.contexts()
        assert top and any(abs(m.score - (m.vector_score or 0.0)) > 1e-3 for m in top)
        assert "oauth" in top[0].content.lower()
        dense = th.find("OAuth tokens", include_directories=False, limit=5, dense_weight=1.0)
        # Dense only: a hit's own score is its vector score (its final score adds tree context).
        assert all(m.own_score == pytest.approx(m.vector_score) for m in dense.contexts())


def test_reads_page_past_the_result_cap(
    milvus_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, nodes, _ = _filled(milvus_factory, timeout=30.0)
    monkeypatch.setattr(milvus_mod, "MAX_TOPK", 4)
    assert {n.uri for n in store.iter_nodes()} == {n.uri for n in nodes}
    sub = [n.uri for n in store.iter_nodes(f"{R}/a")]
    assert len(sub) == len(set(sub)) == 9
    assert [c.uri.rsplit("/", 1)[-1] for c in store.children(f"{R}/a")] == [
        "deep",
        "long.md",
        "x.md",
        "y.md",
    ]
    md = MetadataFilter.parse({"op": "must_not", "field": "lang", "conds": ["en"]})
    hits = store.search(query_vector(), Scope(metadata=md), 3)
    assert len(hits) == 3 and all(md is not None and md.matches(h.node.metadata) for h in hits)


def test_filter_caches_never_hide_local_or_remote_writes(
    milvus_factory: StoreFactory, milvus_client: Any
) -> None:
    store, nodes, vecs = _filled(milvus_factory)
    other = MilvusStore(client=milvus_client, collection=store.collection, filter_cache_ttl_s=0)
    scope = Scope(parent_uri=R, tags=TagFilter(any_of=("security",)), traversal=True)
    q = query_vector()
    assert {h.node.uri for h in other.search(q, scope, 10)} == {f"{R}/ab"}
    new = nodes[2].model_copy(update={"uri": f"{R}/a/sec.md", "tags": ["user:security"]})
    store.upsert([new], vecs[2:3])  # written through another store object
    assert {h.node.uri for h in other.search(q, scope, 10)} == {f"{R}/a", f"{R}/ab"}
    assert {h.node.uri for h in store.search(q, scope, 10)} == {f"{R}/a", f"{R}/ab"}
    store.delete([f"{R}/a/sec.md"])
    assert {h.node.uri for h in store.search(q, scope, 10)} == {f"{R}/ab"}


def test_an_owned_connection_reopens_from_the_file(tmp_path: Path) -> None:
    db = str(tmp_path / "own.db")
    nodes, vecs = make_nodes(), make_vectors(len(make_nodes()))
    with MilvusStore(db, "own") as store:
        store.meta["embedder"] = "x"
        store.upsert(nodes, vecs)
        store.put_state("k", b"v")
        store.save()
    with MilvusStore(db, "own", create=False) as again:
        assert len(again) == len(nodes) and again.meta == {"embedder": "x"}
        assert again.get_state("k") == b"v"
        assert again.dimension == DIM


def test_a_store_opened_before_its_collection_existed_finds_it(
    milvus_factory: StoreFactory, milvus_client: Any
) -> None:
    early = milvus_factory("late")
    assert isinstance(early, MilvusStore) and early.dimension is None and len(early) == 0
    writer = MilvusStore(client=milvus_client, collection=early.collection)
    nodes = make_nodes()
    writer.upsert(nodes, make_vectors(len(nodes)))
    assert early.dimension is None  # nothing asked yet
    assert len(early.search(query_vector(), Scope(), 3)) == 3
    assert early.dimension == DIM and early.capabilities.hybrid
    more = nodes[1].model_copy(update={"uri": f"{R}/a/more.md"})
    early.upsert([more], make_vectors(1))  # into the existing collection, not a new one
    assert len(writer) == len(nodes) + 1
