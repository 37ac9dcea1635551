"""The store protocol, checked against an exact oracle, for every engine.

Every search is compared with :func:`store_conf_helpers.oracle`: exact cosine over the nodes a
plainly written predicate admits. See ``store_conf_helpers.TREE`` for the data.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from store_conf_helpers import (
    DIM,
    QUOTED,
    R,
    StoreFactory,
    assert_same_ranking,
    make_vectors,
    oracle,
    query_vector,
    ranked,
)

from treehop import tags as tagmod
from treehop.errors import InvalidQueryError, StoreError
from treehop.filters import MetadataFilter, TagFilter
from treehop.models import ContextType, Node
from treehop.stores.base import Scope, StoreCapabilities, VectorStore, search_columns
from treehop.uri import is_within

Tree = tuple[list[Node], np.ndarray]


def check(store: VectorStore, tree: Tree, scope: Scope, keep: Any, limit: int = 100) -> None:
    nodes, vecs = tree
    q = query_vector()
    got = ranked(store.search(q, scope, limit))
    assert_same_ranking(got, oracle(nodes, vecs, q, keep, limit))


def labels(n: Node) -> set[str]:
    return tagmod.labels(n.tags)


def test_declares_capabilities_and_implements_the_protocol(filled: VectorStore) -> None:
    assert isinstance(filled, VectorStore)
    assert isinstance(filled.capabilities, StoreCapabilities)
    assert filled.dimension == DIM
    assert len(filled) == 17


def test_global_search_is_exact_cosine_order(filled: VectorStore, tree_data: Tree) -> None:
    check(filled, tree_data, Scope(), lambda n: True, limit=5)
    check(filled, tree_data, Scope(), lambda n: True)


def test_parent_scope_is_direct_children_only(filled: VectorStore, tree_data: Tree) -> None:
    check(filled, tree_data, Scope(parent_uri=f"{R}/a"), lambda n: n.parent_uri == f"{R}/a")
    long = f"{R}/a/long.md"
    check(filled, tree_data, Scope(parent_uri=long), lambda n: n.parent_uri == long)
    assert filled.search(query_vector(), Scope(parent_uri=f"{R}/nope"), 10) == []


@pytest.mark.parametrize("root", [f"{R}/a", f"{R}/ab", f"{R}/a/long.md", QUOTED])
def test_subtree_scope_is_exact_even_for_sibling_prefixes(
    filled: VectorStore, tree_data: Tree, root: str
) -> None:
    check(filled, tree_data, Scope(subtrees=(root,)), lambda n: is_within(n.uri, root))
    uris = {h.node.uri for h in filled.search(query_vector(), Scope(subtrees=(root,)), 100)}
    if root == f"{R}/a":
        assert f"{R}/ab" not in uris and f"{R}/ab/z.md" not in uris
        assert f"{R}/a/long.md#chunk-10" in uris and f"{R}/a" in uris


def test_several_subtrees_are_a_union(filled: VectorStore, tree_data: Tree) -> None:
    roots = (f"{R}/a/deep", f"{R}/ab", "viking://user/alice/memories")
    check(
        filled,
        tree_data,
        Scope(subtrees=roots),
        lambda n: any(is_within(n.uri, r) for r in roots),
    )


def test_type_level_leaf_and_exclusion_filters(filled: VectorStore, tree_data: Tree) -> None:
    check(
        filled,
        tree_data,
        Scope(context_types=(ContextType.MEMORY,)),
        lambda n: n.context_type is ContextType.MEMORY,
    )
    check(filled, tree_data, Scope(levels=(0, 1)), lambda n: n.level in (0, 1))
    check(filled, tree_data, Scope(leaves_only=True), lambda n: n.is_leaf)
    check(
        filled,
        tree_data,
        Scope(subtrees=(R,), non_leaves_only=True),
        lambda n: not n.is_leaf and is_within(n.uri, R),
    )
    ex = frozenset({f"{R}/a/x.md", QUOTED, f"{R}/nope"})
    check(filled, tree_data, Scope(exclude_uris=ex), lambda n: n.uri not in ex)


@pytest.mark.parametrize(
    ("tags", "keep"),
    [
        (TagFilter(any_of=("ml",)), lambda n: "ml" in labels(n)),
        (TagFilter(any_of=("ml", "security")), lambda n: bool({"ml", "security"} & labels(n))),
        (TagFilter(all_of=("ml", "ops")), lambda n: {"ml", "ops"} <= labels(n)),
        (
            TagFilter(any_of=("odd", "ops"), all_of=("ops",)),
            lambda n: "ops" in labels(n),
        ),
        (TagFilter(any_of=("never-used",)), lambda n: False),
    ],
)
def test_tag_filters_any_and_all(
    filled: VectorStore, tree_data: Tree, tags: TagFilter, keep: Any
) -> None:
    check(filled, tree_data, Scope(tags=tags), keep)
    for h in filled.search(query_vector(), Scope(tags=tags), 100):
        assert h.matches


FILTERS: list[dict[str, Any]] = [
    {"op": "must", "field": "lang", "conds": ["en"]},  # scalar and list-valued fields
    {"op": "must", "field": "year", "conds": [2020, 2024, "unknown"]},
    {"op": "must", "field": "flag", "conds": [True]},
    {"op": "must", "field": "note", "conds": ['say "hi"\nback\\slash']},
    {"op": "must_not", "field": "lang", "conds": ["en"]},  # missing field: kept
    {"op": "range", "field": "year", "gte": 2020, "lt": 2024},  # "unknown", None: out
    {"op": "range", "field": "year", "gt": 2019.5},
    {"op": "range_out", "field": "year", "gt": 2019, "lte": 2023},  # missing: kept
    {
        "op": "and",
        "conds": [
            {"op": "range", "field": "year", "gte": 2019},
            {"op": "must_not", "field": "team", "conds": ["infra"]},
        ],
    },
    {
        "op": "or",
        "conds": [
            {"op": "must", "field": "team", "conds": ["infra"]},
            {"op": "range", "field": "year", "lt": 2020},
        ],
    },
    {
        "op": "or",
        "conds": [
            {"op": "must", "field": "team", "conds": ["infra"]},
            {"op": "must_not", "field": "year", "conds": [2020, 2021, 2022, 2023, 2024]},
        ],
    },
    # text_match: no server-side equivalent in Milvus / VikingDB, evaluated in Python there
    {"op": "text_match", "field": "team", "value": "nfr"},
    {"op": "text_match", "field": "lang", "value": "E", "ignore_case": True},  # lists too
    {"op": "text_match", "field": "year", "value": "unk"},  # numbers never match
    {"op": "text_match", "field": "note", "value": '"hi"\nback'},
    {
        "op": "and",
        "conds": [
            {"op": "range", "field": "year", "gte": 2020},
            {"op": "text_match", "field": "lang", "value": "e"},
        ],
    },
    {
        "op": "or",
        "conds": [
            {"op": "must", "field": "team", "conds": ["core"]},
            {"op": "text_match", "field": "lang", "value": "FR", "ignore_case": True},
        ],
    },
    {"op": "text_match_not", "field": "lang", "value": "e"},  # missing, lists: kept / not
    {"op": "empty", "field": "year"},  # missing and null
    {"op": "not_empty", "field": "team"},
    {
        "op": "and",
        "conds": [
            {"op": "must", "field": "team", "conds": ["infra"]},
            {"op": "empty", "field": "year"},
        ],
    },
]


@pytest.mark.parametrize("spec", FILTERS, ids=lambda s: str(s)[:60])
def test_metadata_filters_match_the_dsl(
    filled: VectorStore, tree_data: Tree, spec: dict[str, Any]
) -> None:
    md = MetadataFilter.parse(spec)
    assert md is not None
    check(filled, tree_data, Scope(metadata=md), lambda n: md.matches(n.metadata))
    both = Scope(metadata=md, tags=TagFilter(any_of=("ml", "ops")))
    check(
        filled,
        tree_data,
        both,
        lambda n: md.matches(n.metadata) and bool({"ml", "ops"} & labels(n)),
    )


def _contains_match(n: Node, nodes: list[Node], match: Any) -> bool:
    return not n.is_leaf and any(
        m.uri != n.uri and is_within(m.uri, n.uri) and match(m) for m in nodes
    )


@pytest.mark.parametrize(
    "scope_kw",
    [
        {"tags": TagFilter(any_of=("security",))},
        {"tags": TagFilter(all_of=("ml", "ops"))},
        {"metadata": MetadataFilter.parse({"op": "must", "field": "year", "conds": [2024]})},
        {"metadata": MetadataFilter.parse({"op": "must_not", "field": "year", "conds": [2020]})},
    ],
    ids=["tag-any", "tag-all", "md-must", "md-must-not"],
)
def test_traversal_admits_directories_that_contain_a_match(
    filled: VectorStore, tree_data: Tree, scope_kw: dict[str, Any]
) -> None:
    nodes, _ = tree_data
    tags: TagFilter = scope_kw.get("tags", TagFilter())
    md: MetadataFilter | None = scope_kw.get("metadata")

    def match(n: Node) -> bool:
        have = labels(n)
        ok = (not tags.any_of or bool(have & set(tags.any_of))) and set(tags.all_of) <= have
        return ok and (md is None or md.matches(n.metadata))

    def admitted(n: Node) -> bool:
        return match(n) or _contains_match(n, nodes, match)

    for extra in ({}, {"parent_uri": f"{R}/a"}, {"subtrees": (f"{R}/ab",)}):
        scope = Scope(traversal=True, **scope_kw, **extra)  # type: ignore[arg-type]
        parent = extra.get("parent_uri")
        roots = extra.get("subtrees", ())

        def keep(n: Node, parent: Any = parent, roots: Any = roots) -> bool:
            if parent is not None and n.parent_uri != parent:
                return False
            if roots and not any(is_within(n.uri, r) for r in roots):
                return False
            return admitted(n)

        check(filled, tree_data, scope, keep)
        for h in filled.search(query_vector(), scope, 100):
            assert h.matches is match(h.node), h.node.uri
        strict = Scope(**scope_kw, **extra)  # type: ignore[arg-type]
        assert all(h.matches for h in filled.search(query_vector(), strict, 100))


def test_children_come_in_stored_order(filled: VectorStore) -> None:
    kids = filled.children(f"{R}/a/long.md")
    assert [k.chunk_index for k in kids] == [0, 2, 10]  # by index, not "#chunk-10" < "#chunk-2"
    assert [k.uri for k in filled.children(f"{R}/a")] == sorted(
        [f"{R}/a/deep", f"{R}/a/long.md", f"{R}/a/x.md", f"{R}/a/y.md"]
    )
    assert filled.children(f"{R}/a/x.md") == []
    assert [k.uri for k in filled.children(QUOTED)] == [QUOTED + "/q.md"]


def test_get_round_trips_every_field(filled: VectorStore, tree_data: Tree) -> None:
    nodes, vecs = tree_data
    by_uri = {n.uri: n for n in nodes}
    uris = [f"{R}/a/long.md#chunk-10", "viking://nope", QUOTED + "/q.md", f"{R}/a"]
    got = filled.get(uris)
    assert got[1] is None
    for uri, node in zip(uris, got, strict=True):
        if node is not None:
            assert node == by_uri[uri]
    idx = [nodes.index(by_uri[u]) for u in (f"{R}/ab/z.md", QUOTED)]
    np.testing.assert_allclose(
        filled.get_vectors([f"{R}/ab/z.md", QUOTED]), vecs[idx], rtol=0, atol=1e-7
    )
    with pytest.raises(LookupError):
        filled.get_vectors(["viking://nope"])


def test_iter_nodes_subtree_is_exact(filled: VectorStore, tree_data: Tree) -> None:
    nodes, _ = tree_data
    for root in (f"{R}/a", f"{R}/ab", QUOTED):
        got = [n.uri for n in filled.iter_nodes(root)]
        assert got[0] == root
        assert set(got) == {n.uri for n in nodes if is_within(n.uri, root)}
        assert len(got) == len(set(got))
    assert {n.uri for n in filled.iter_nodes()} == {n.uri for n in nodes}
    assert list(filled.iter_nodes(f"{R}/nope")) == []


def test_quoted_uri_survives_every_operation(filled: VectorStore) -> None:
    q = query_vector()
    assert [h.node.uri for h in filled.search(q, Scope(parent_uri=QUOTED), 10)] == [
        QUOTED + "/q.md"
    ]
    sub = {h.node.uri for h in filled.search(q, Scope(subtrees=(QUOTED,)), 10)}
    assert sub == {QUOTED, QUOTED + "/q.md"}
    ex = {h.node.uri for h in filled.search(q, Scope(exclude_uris=frozenset({QUOTED})), 100)}
    assert QUOTED not in ex and QUOTED + "/q.md" in ex
    assert filled.find_by_tags(["odd"], Scope(subtrees=(QUOTED,)), 10)["odd"][0].uri == QUOTED
    assert filled.delete([QUOTED + "/q.md"]) == 1
    assert filled.children(QUOTED) == []


def test_upsert_replaces_by_uri(filled: VectorStore, tree_data: Tree) -> None:
    nodes, _ = tree_data
    n0 = len(filled)
    target = next(n for n in nodes if n.uri == f"{R}/ab/v.md")
    q = query_vector()
    changed = target.model_copy(update={"abstract": "new", "tags": ["user:fresh"]})
    filled.upsert([changed], q.reshape(1, -1))
    assert len(filled) == n0
    top = filled.search(q, Scope(), 1)[0]
    assert top.node.uri == target.uri and top.score == pytest.approx(1.0, abs=1e-5)
    got = filled.get([target.uri])[0]
    assert got is not None and got.abstract == "new" and got.tags == ["user:fresh"]
    fresh = filled.search(q, Scope(tags=TagFilter(any_of=("fresh",))), 10)
    assert [h.node.uri for h in fresh] == [target.uri]
    assert filled.search(q, Scope(tags=TagFilter(any_of=("security",))), 10) == []


def test_delete_counts_only_existing_nodes(filled: VectorStore) -> None:
    n0 = len(filled)
    gone = [f"{R}/a/x.md", f"{R}/a/x.md", "viking://nope"]
    assert filled.delete(gone) == 1
    assert filled.delete(["viking://nope"]) == 0
    assert len(filled) == n0 - 1
    assert filled.get([f"{R}/a/x.md"]) == [None]
    assert f"{R}/a/x.md" not in [c.uri for c in filled.children(f"{R}/a")]
    assert f"{R}/a/x.md" not in {h.node.uri for h in filled.search(query_vector(), Scope(), 100)}


def test_update_tags_keeps_vectors(filled: VectorStore) -> None:
    uris = [f"{R}/a/y.md", f"{R}/ab"]
    before = filled.get_vectors(uris)
    filled.update_tags({f"{R}/a/y.md": ["user:new-tag"], f"{R}/ab": [], "viking://nope": ["x"]})
    np.testing.assert_array_equal(filled.get_vectors(uris), before)
    y, ab = filled.get(uris)
    assert y is not None and y.tags == ["user:new-tag"] and y.abstract == "abstract of y.md"
    assert ab is not None and ab.tags == []
    assert filled.get(["viking://nope"]) == [None]
    q = query_vector()
    hits = filled.search(q, Scope(tags=TagFilter(any_of=("new-tag",))), 10)
    assert [h.node.uri for h in hits] == [f"{R}/a/y.md"]
    ops = {h.node.uri for h in filled.search(q, Scope(tags=TagFilter(any_of=("ops",))), 10)}
    assert f"{R}/a/y.md" not in ops and f"{R}/ab" not in ops


def test_find_by_tags_is_a_scoped_scalar_lookup(filled: VectorStore) -> None:
    scope = Scope(subtrees=(R,), non_leaves_only=True, exclude_uris=frozenset({f"{R}/ab"}))
    found = filled.find_by_tags(["ml", "ops", "nothing"], scope, 10)
    assert {lab for lab, nodes in found.items() if nodes} == {"ml"}  # ops: only on excluded ab
    assert {n.uri for n in found["ml"]} == {f"{R}/a", f"{R}/a/long.md"}
    leaves = filled.find_by_tags(["ops"], Scope(subtrees=(f"{R}/ab",), leaves_only=True), 10)
    assert {n.uri for n in leaves["ops"]} == {f"{R}/ab/z.md"}
    everywhere = filled.find_by_tags(["ml"], Scope(), 50)
    assert {n.uri for n in everywhere["ml"]} == {
        f"{R}/a",
        f"{R}/a/x.md",
        f"{R}/a/deep/w.md",
        f"{R}/a/long.md",
        f"{R}/a/long.md#chunk-0",
        f"{R}/a/long.md#chunk-2",
        f"{R}/ab/z.md",
        "viking://user/alice/memories/pref.md",
    }
    assert len(filled.find_by_tags(["ml"], Scope(), 2)["ml"]) == 2


def test_state_blobs_round_trip_and_persist(store_factory: StoreFactory) -> None:
    store = store_factory("state")
    assert store.get_state("sessions/_index") is None
    store.put_state("sessions/_index", b'["a"]')
    big = np.random.default_rng(1).integers(0, 256, 130_000, dtype=np.uint8).tobytes()
    store.put_state("sessions/big", big)
    store.put_state("settings", b"v1")
    store.put_state("settings", b"v2")
    assert store.get_state("settings") == b"v2"
    assert store.get_state("sessions/big") == big
    store.save()
    again = store_factory("state")
    assert again.get_state("sessions/_index") == b'["a"]'
    assert again.get_state("sessions/big") == big
    again.put_state("sessions/big", b"small now")
    assert again.get_state("sessions/big") == b"small now"
    again.put_state("empty", b"")
    assert again.get_state("empty") == b""
    for bad in ("", "../x", "a b", "/abs"):
        with pytest.raises(StoreError):
            again.put_state(bad, b"x")
        with pytest.raises(StoreError):
            again.get_state(bad)


def test_meta_and_nodes_persist_across_reopen(store_factory: StoreFactory, tree_data: Tree) -> None:
    nodes, vecs = tree_data
    store = store_factory("persist")
    meta = getattr(store, "meta")  # noqa: B009 - optional attribute of the protocol
    meta["embedder"] = "test-embedder"
    store.upsert(nodes, vecs)
    store.save()
    again = store_factory("persist")
    assert getattr(again, "meta")["embedder"] == "test-embedder"  # noqa: B009
    assert len(again) == len(nodes) and again.dimension == DIM
    assert again.get([f"{R}/a/x.md"])[0] == nodes[2]


def test_empty_store_answers_empty(store_factory: StoreFactory) -> None:
    store = store_factory()
    assert len(store) == 0
    assert store.search(query_vector(), Scope(), 5) == []
    assert store.children(R) == []
    assert store.get([R]) == [None]
    assert store.find_by_tags(["ml"], Scope(), 5) == {}
    assert list(store.iter_nodes()) == []
    assert store.delete([R]) == 0


def test_bad_input_gets_typed_errors(filled: VectorStore, tree_data: Tree) -> None:
    nodes, vecs = tree_data
    q = query_vector()
    with pytest.raises(InvalidQueryError, match="limit"):
        filled.search(q, Scope(), 0)
    with pytest.raises(InvalidQueryError, match="dense_weight"):
        filled.search(q, Scope(), 5, query_text="x", dense_weight=0.1)
    with pytest.raises(InvalidQueryError, match="dimension"):
        filled.search(np.ones(DIM + 1, np.float32), Scope(), 5)
    with pytest.raises(StoreError, match="dimension"):
        filled.upsert(nodes[:1], make_vectors(1)[:, :8])
    with pytest.raises(StoreError, match="vectors of shape"):
        filled.upsert(nodes[:2], vecs[:1])
    assert len(filled) == len(nodes)


def test_hybrid_lets_lexical_matches_outrank_dense_ones(store_factory: StoreFactory) -> None:
    """Every engine mixes a lexical score in with ``dense_weight`` (their tokenisers and
    lexical scales differ, so only the order is compared, never the scores)."""
    q = query_vector()
    rows = [
        (f"{R}/d/far.md", "zebra quasar lexicon zebra", -q + 0.3 * query_vector(5)),
        (f"{R}/d/near.md", "completely different words here", q + 0.2 * query_vector(6)),
        (f"{R}/d/mid.md", "other text entirely", q + 0.9 * query_vector(9)),
    ]
    nodes = [
        Node(
            uri=u,
            parent_uri=f"{R}/d",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            content=text,
        )
        for u, text, _ in rows
    ]
    vecs = np.stack([v / np.linalg.norm(v) for _, _, v in rows]).astype(np.float32)
    store = store_factory()
    assert store.capabilities.hybrid
    store.upsert(nodes, vecs)
    scope = Scope(parent_uri=f"{R}/d")
    dense = store.search(q, scope, 3, query_text="zebra quasar")
    assert [h.node.uri[-7:] for h in dense] == ["near.md", "/mid.md", "/far.md"]
    # The lowest weight the API allows: engines normalise BM25 differently (the embedded store
    # scales it per query, VikingDB's sparse dot product is a cosine in [0, 1]).
    mixed = store.search(q, scope, 3, query_text="zebra quasar", dense_weight=0.2)
    assert [h.node.uri[-7:] for h in mixed] == ["/far.md", "near.md", "/mid.md"]
    assert mixed[0].lexical_score is not None and mixed[0].lexical_score > 0
    assert mixed[0].vector_score == pytest.approx(dense[2].vector_score, abs=1e-5)


ADMIT_SCOPES = [
    Scope(),
    Scope(parent_uri=f"{R}/a"),
    Scope(subtrees=(f"{R}/a",)),
    Scope(subtrees=(f"{R}/a/deep", f"{R}/ab")),
    Scope(context_types=(ContextType.MEMORY,)),
    Scope(levels=(2,), leaves_only=True),
    Scope(non_leaves_only=True, exclude_uris=frozenset({f"{R}/a"})),
    Scope(tags=TagFilter(any_of=("ml",))),
    Scope(subtrees=(f"{R}/a",), tags=TagFilter(all_of=("ml", "ops"))),
    Scope(metadata=MetadataFilter.parse({"op": "range", "field": "year", "gte": 2021})),
    Scope(
        subtrees=(R,),
        metadata=MetadataFilter.parse(
            {
                "op": "or",
                "conds": [
                    {"op": "must", "field": "team", "conds": ["infra"]},
                    {"op": "must_not", "field": "lang", "conds": ["en"]},
                ],
            }
        ),
    ),
]


@pytest.mark.parametrize("scope", ADMIT_SCOPES, ids=range(len(ADMIT_SCOPES)))
def test_matches_are_exactly_what_scope_admits(
    filled: VectorStore, tree_data: Tree, scope: Scope
) -> None:
    """``Scope.admits`` is the one reference predicate: every engine returns exactly the nodes
    it admits (and, with traversal, only non-matching *directories* beyond them)."""
    nodes = tree_data[0]
    check(filled, tree_data, scope, scope.admits)
    admitted = {n.uri for n in nodes if scope.admits(n)}
    traversed = filled.search(query_vector(), dataclasses.replace(scope, traversal=True), 100)
    assert {h.node.uri for h in traversed if h.matches} == admitted
    assert all(not h.node.is_leaf for h in traversed if not h.matches)


def test_search_columns_are_the_search_hits(filled: VectorStore) -> None:
    """``stores.base.search_columns`` (what the retriever's tree context reads): the store's
    own columnar search where it has one, else its ``search`` wrapped; either way the same
    hits, order, scores and filter flags as ``search``."""
    q = query_vector()
    for scope in (
        Scope(),
        Scope(subtrees=(f"{R}/a",), leaves_only=True),
        Scope(tags=TagFilter(any_of=("auto:ml",)), traversal=True),
    ):
        hits = filled.search(q, scope, 100)
        cols = search_columns(filled, q, scope, 100)
        assert cols.uris == [h.node.uri for h in hits]
        assert cols.parent_uris == [h.node.parent_uri for h in hits]
        assert cols.chunk_indexes == [h.node.chunk_index for h in hits]
        assert cols.scores == pytest.approx([h.score for h in hits], abs=1e-6)
        assert cols.matches == [h.matches for h in hits]
        assert [h.node for h in cols.hits(range(len(cols)))] == [h.node for h in hits]
