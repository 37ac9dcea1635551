"""VikingDBStore against a fake VikingDB on 127.0.0.1, driven by the official SDK over real HTTP.

The fake (``fake_servers.vikingdb_server``) verifies every request's V4 signature with its own
implementation of the documented algorithm, evaluates the filter DSL only on scalar-indexed
fields, fills VikingDB's default values into missing fields, and can delay index visibility.
Results are compared with the embedded store on the same vectors: exact search on both sides,
so rankings and scores must agree.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from treehop import AsyncTreehop, RetrievalConfig, TagHopTrigger, Treehop
from treehop._http import RetryPolicy
from treehop.demo import SAMPLE_TREE, index_sample_tree
from treehop.errors import InvalidQueryError, NotFoundError, StoreError
from treehop.filters import MetadataFilter, TagFilter
from treehop.models import ContextType, FindResult, FoundBy, Node
from treehop.stores.base import Scope, ScoredNode, VectorStore
from treehop.stores.embedded import EmbeddedStore
from treehop.stores.vikingdb import (
    VikingDBAuthError,
    VikingDBError,
    VikingDBInvalidRequestError,
    VikingDBNotFoundError,
    VikingDBPermissionError,
    VikingDBStore,
    VikingDBUnavailableError,
    collection_schema,
    uri_key,
)
from treehop.uri import parent_of

from fake_servers.vikingdb_server import FakeVikingDB, Reply

AK = "AKLTfake-vector-ak"
SK = "fake-vector-secret-DO-NOT-LEAK"
FAST = RetryPolicy(max_retries=2, backoff_s=0.001, max_backoff_s=0.005)
R = "viking://resources"
DIM = 8
MD_FIELDS = {
    "year": "int64",
    "score": "float32",
    "lang": "list<string>",
    "flag": "bool",
    "team": "string",
}


@pytest.fixture
def srv() -> Iterator[FakeVikingDB]:
    with FakeVikingDB(ak=AK, sk=SK) as server:
        yield server


def make_store(
    srv: FakeVikingDB,
    name: str = "nodes",
    *,
    dim: int = DIM,
    create: bool = True,
    metadata_fields: dict[str, str] | None = None,
    hybrid: bool = False,
    **kwargs: Any,
) -> VikingDBStore:
    if create and name not in srv.collections:
        schema = collection_schema(dim, metadata_fields=metadata_fields, hybrid=hybrid)
        srv.create_collection(name, schema)
    kwargs.setdefault("consistency_window_s", 0.0)
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("ak", AK)
    kwargs.setdefault("sk", SK)
    return VikingDBStore(
        name,
        dimension=dim,
        host=srv.host,
        scheme="http",
        metadata_fields=metadata_fields,
        hybrid=hybrid,
        **kwargs,
    )


# ------------------------------------------------------------------------------------------
# A small tree with varied metadata (missing, mistyped for undeclared fields, lists, bools)
# ------------------------------------------------------------------------------------------
SPEC: dict[str, dict[str, Any]] = {
    R: {},
    f"{R}/a": {"md": {"team": "core", "year": 2021}, "tags": ["user:ml"]},
    f"{R}/a/x.md": {"md": {"year": 2020, "lang": ["en"], "score": 0.5, "flag": True}},
    f"{R}/a/y.md": {
        "md": {"year": 2023, "lang": ["de", "en"], "note": "draft"},
        "tags": ["auto:ops"],
    },
    f"{R}/a/deep": {},
    f"{R}/a/deep/w.md": {
        "md": {"year": 2019, "lang": ["fr"], "team": "default"},
        "tags": ["auto:ml"],
    },
    f"{R}/ab": {"md": {"team": "infra"}, "tags": ["user:ops"]},
    f"{R}/ab/z.md": {"md": {"year": 2024, "score": 1.5, "flag": False, "note": 7}},
    f"{R}/ab/v.md": {"md": {"year": None, "team": "infra", "lang": []}, "tags": ["auto:ml"]},
    f"{R}/ab/long.md": {"md": {"team": "infra"}},
    f"{R}/ab/long.md#chunk-0": {"chunk": 0, "md": {"year": 2022}},
    f"{R}/ab/long.md#chunk-1": {"chunk": 1, "md": {"year": 2018}, "tags": ["inherit:ml"]},
    "viking://user/u1/memories": {"ctype": ContextType.MEMORY},
    "viking://user/u1/memories/pref.md": {"ctype": ContextType.MEMORY, "md": {"year": 2022}},
}
LEAVES = {u for u in SPEC if u.endswith(".md") and u != f"{R}/ab/long.md"} | {
    u for u in SPEC if "#chunk-" in u
}


def tree() -> tuple[list[Node], np.ndarray]:
    nodes = []
    for uri, spec in SPEC.items():
        parent = parent_of(uri)
        nodes.append(
            Node(
                uri=uri,
                parent_uri=parent,
                context_type=spec.get("ctype", ContextType.RESOURCE),
                level=2 if uri in LEAVES else (0 if parent is None else 1),
                is_leaf=uri in LEAVES,
                abstract=f"abstract of {uri.rsplit('/', 1)[-1]}",
                content=f"content of {uri}" if uri in LEAVES else "",
                tags=spec.get("tags", []),
                metadata=spec.get("md", {}),
                chunk_index=spec.get("chunk"),
            )
        )
    vecs = np.random.default_rng(7).standard_normal((len(nodes), DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return nodes, vecs


def query() -> np.ndarray:
    q = np.random.default_rng(11).standard_normal(DIM).astype(np.float32)
    return q / np.linalg.norm(q)


def ranking(hits: list[ScoredNode]) -> list[tuple[str, float, bool]]:
    return [(h.node.uri, round(h.score, 5), h.matches) for h in hits]


@pytest.fixture
def pair(srv: FakeVikingDB) -> tuple[VikingDBStore, EmbeddedStore]:
    nodes, vecs = tree()
    remote = make_store(srv, metadata_fields=MD_FIELDS)
    local = EmbeddedStore()
    remote.upsert(nodes, vecs)
    local.upsert(nodes, vecs)
    return remote, local


# ------------------------------------------------------------------------------------------
# Protocol, requests and signing
# ------------------------------------------------------------------------------------------
def test_implements_the_protocol_and_hides_keys(
    srv: FakeVikingDB, pair: tuple[VikingDBStore, EmbeddedStore]
) -> None:
    remote, _ = pair
    assert isinstance(remote, VectorStore)
    assert remote.capabilities.remote and not remote.capabilities.hybrid
    assert remote.dimension == DIM and len(remote) == len(SPEC)
    assert SK not in repr(remote) and AK not in repr(remote)
    posts = srv.posts()
    assert posts and srv.auth_failures == []
    for r in posts:
        assert r.headers["authorization"].startswith(f"HMAC-SHA256 Credential={AK}/")
        assert "/cn-beijing/vikingdb/request" in r.headers["authorization"]
        assert SK not in r.raw.decode()
    assert srv.pings == 1  # the SDK's constructor pings once


def test_keys_come_from_the_environment(srv: FakeVikingDB, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOLC_ACCESSKEY", AK)
    monkeypatch.setenv("VOLC_SECRETKEY", SK)
    store = make_store(srv, ak=None, sk=None)
    assert len(store) == 0 and srv.auth_failures == []
    monkeypatch.delenv("VOLC_SECRETKEY")
    with pytest.raises(StoreError, match="VOLC_SECRETKEY"):
        make_store(srv, ak=None, sk=None)


def test_a_wrong_secret_is_an_auth_error_and_is_not_retried(srv: FakeVikingDB) -> None:
    srv.create_collection("nodes", collection_schema(DIM))
    with pytest.raises(VikingDBAuthError, match="unauthorized") as info:
        make_store(srv, create=False, sk="wrong-secret")
    assert srv.auth_failures == ["signature mismatch"]
    assert len(srv.posts()) == 1
    assert info.value.http_status == 401
    assert "wrong-secret" not in str(info.value)


def test_a_forbidden_key_is_a_permission_error(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    srv.forbidden_aks.add(AK)
    with pytest.raises(VikingDBPermissionError, match="no permission"):
        store.get([R])


def test_unknown_collection_and_index_say_so(srv: FakeVikingDB) -> None:
    with pytest.raises(VikingDBNotFoundError, match="does not exist") as info:
        make_store(srv, "missing", create=False)
    assert info.value.code == "NotFound.VikingdbCollection"
    store = make_store(srv, index_name="no_such_index")
    with pytest.raises(VikingDBNotFoundError, match="no_such_index"):
        store.search(query(), Scope(), 3)


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (401, 1000001, VikingDBAuthError),
        (403, 1000002, VikingDBPermissionError),
        (400, 1000003, VikingDBInvalidRequestError),
        (400, 1000005, VikingDBNotFoundError),
        (400, "InvalidParameter", VikingDBInvalidRequestError),
    ],
)
def test_documented_error_codes_become_typed_errors(
    srv: FakeVikingDB, status: int, code: object, error: type[VikingDBError]
) -> None:
    store = make_store(srv)
    before = len(srv.posts())
    srv.script(Reply(status, {"code": code, "message": "scripted", "request_id": "r-1"}))
    with pytest.raises(error, match="scripted") as info:
        store.search(query(), Scope(), 3)
    assert isinstance(info.value, StoreError)
    assert info.value.request_id == "r-1"
    assert len(srv.posts()) == before + 1  # a 4xx is never retried


def test_5xx_and_429_are_retried_until_success(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    nodes, vecs = tree()
    store.upsert(nodes[:1], vecs[:1])
    before = len(srv.posts())
    srv.script(Reply(503, {"code": "ServiceUnavailable"}), Reply(429, {"code": 1000029}))
    hits = store.search(query(), Scope(), 3)
    assert [h.node.uri for h in hits] == [R]
    assert len(srv.posts()) == before + 3


def test_persistent_5xx_exhausts_the_retries(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    before = len(srv.posts())
    srv.script(*[Reply(500, "internal error")] * 3)
    with pytest.raises(VikingDBUnavailableError, match="http=500"):
        store.get([R])
    assert len(srv.posts()) == before + 3


def test_a_malformed_answer_is_a_store_error(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    srv.script(Reply(200, "this is not json"))
    with pytest.raises(VikingDBError, match="decode JSON"):
        store.get([R])
    srv.script(Reply(200, {"code": "Success", "result": {"data": "not a list"}}))
    with pytest.raises(VikingDBError, match="malformed response"):
        store.search(query(), Scope(), 3)


def test_unreachable_service_is_unavailable(srv: FakeVikingDB) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    with pytest.raises(VikingDBUnavailableError, match="cannot reach"):
        VikingDBStore(
            "x", dimension=DIM, host=f"127.0.0.1:{port}", scheme="http", ak=AK, sk=SK, retry=FAST
        )
    srv.fail_ping = True
    with pytest.raises(VikingDBUnavailableError, match="cannot reach"):
        make_store(srv)


# ------------------------------------------------------------------------------------------
# Scopes and filters, against the embedded store
# ------------------------------------------------------------------------------------------
SCOPES = [
    Scope(),
    Scope(parent_uri=f"{R}/a"),
    Scope(subtrees=(f"{R}/a",)),  # must not leak into the sibling prefix ``ab``
    Scope(subtrees=(f"{R}/a/deep", f"{R}/ab/long.md")),
    Scope(context_types=(ContextType.MEMORY,)),
    Scope(levels=(1,), exclude_uris=frozenset({f"{R}/ab"})),
    Scope(leaves_only=True, subtrees=(R,)),
    Scope(non_leaves_only=True),
    Scope(tags=TagFilter(any_of=("ml", "ops"))),
    Scope(tags=TagFilter(all_of=("ml",)), subtrees=(f"{R}/ab",)),
    Scope(tags=TagFilter(any_of=("ml",)), traversal=True),
    Scope(tags=TagFilter(any_of=("ops",)), traversal=True, parent_uri=R),
]


@pytest.mark.parametrize("scope", SCOPES)
def test_scopes_match_the_embedded_store(
    pair: tuple[VikingDBStore, EmbeddedStore], scope: Scope
) -> None:
    remote, local = pair
    got = ranking(remote.search(query(), scope, 20))
    assert got == ranking(local.search(query(), scope, 20))
    assert got  # every scope above selects something


FILTERS: list[dict[str, Any]] = [
    {"op": "must", "field": "team", "conds": ["infra"]},
    {"op": "must", "field": "team", "conds": ["default"]},  # the fake's default for missing
    {"op": "must_not", "field": "team", "conds": ["infra"]},
    {"op": "must", "field": "lang", "conds": ["en"]},
    {"op": "must_not", "field": "lang", "conds": ["en"]},
    {"op": "must", "field": "year", "conds": [2020, 2023.0, True]},
    {"op": "must", "field": "flag", "conds": [False]},
    {"op": "must", "field": "flag", "conds": [1]},
    {"op": "range", "field": "year", "gte": 2020, "lt": 2024},
    {"op": "range", "field": "score", "gt": 1.0},
    {"op": "range", "field": "team", "gt": 1},
    {"op": "range_out", "field": "year", "gte": 2019, "lte": 2022},
    {"op": "range_out", "field": "lang", "gt": 0},
    {
        "op": "or",
        "conds": [
            {"op": "must", "field": "lang", "conds": ["fr"]},
            {
                "op": "and",
                "conds": [
                    {"op": "range", "field": "year", "gte": 2023},
                    {"op": "must_not", "field": "team", "conds": ["infra"]},
                ],
            },
        ],
    },
    {"op": "must", "field": "note", "conds": ["draft", 7]},  # undeclared: evaluated in Python
    {
        "op": "and",
        "conds": [
            {"op": "must_not", "field": "note", "conds": ["draft"]},
            {"op": "range", "field": "year", "lte": 2022},
        ],
    },
]


@pytest.mark.parametrize("spec", FILTERS, ids=lambda s: json.dumps(s)[:60])
@pytest.mark.parametrize("traversal", [False, True])
def test_metadata_filters_match_the_embedded_store(
    pair: tuple[VikingDBStore, EmbeddedStore], spec: dict[str, Any], traversal: bool
) -> None:
    remote, local = pair
    md = MetadataFilter.parse(spec)
    for scope in (
        Scope(metadata=md, traversal=traversal),
        Scope(metadata=md, traversal=traversal, parent_uri=f"{R}/ab"),
        Scope(metadata=md, tags=TagFilter(any_of=("ml",)), traversal=traversal),
    ):
        assert ranking(remote.search(query(), scope, 20)) == ranking(
            local.search(query(), scope, 20)
        )


def test_filters_run_on_the_server(
    srv: FakeVikingDB, pair: tuple[VikingDBStore, EmbeddedStore]
) -> None:
    remote, _ = pair
    md = MetadataFilter.parse({"op": "range", "field": "year", "gte": 2020})
    scope = Scope(parent_uri=f"{R}/a", tags=TagFilter(any_of=("ml",)), metadata=md)
    remote.search(query(), scope, 5)
    sent = srv.posts("/search/vector")[-1].json
    flat = json.dumps(sent["filter"])
    assert uri_key(f"{R}/a") in flat and '"parent_key"' in flat
    assert '"tag_labels"' in flat and '"m_year"' in flat and '"md_present"' in flat
    assert sent["limit"] == 5 and sent["output_fields"] == ["node"]


def test_missing_metadata_never_matches_a_default_value(
    srv: FakeVikingDB, pair: tuple[VikingDBStore, EmbeddedStore]
) -> None:
    remote, _ = pair
    # The fake fills VikingDB's default ("default") into m_team of nodes without a team ...
    row = srv.collections["nodes"].rows[uri_key(f"{R}/a/x.md")]
    assert row["m_team"] == "default" and "team" not in row["md_present"]
    # ... yet only the node whose team really is "default" matches.
    md = MetadataFilter.parse({"op": "must", "field": "team", "conds": ["default"]})
    assert [h.node.uri for h in remote.search(query(), Scope(metadata=md), 20)] == [
        f"{R}/a/deep/w.md"
    ]


def test_declared_types_are_enforced_at_write(srv: FakeVikingDB) -> None:
    store = make_store(srv, metadata_fields={"year": "int64"})
    bad = Node(
        uri=f"{R}/n.md",
        parent_uri=R,
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
        metadata={"year": "unknown"},
    )
    before = len(srv.posts())
    with pytest.raises(StoreError, match="year='unknown' does not fit the declared VikingDB type"):
        store.upsert([bad], np.ones((1, DIM), np.float32))
    assert len(srv.posts()) == before


def test_service_limits_are_checked_before_sending(srv: FakeVikingDB) -> None:
    store = make_store(srv, max_list_items=3, max_row_bytes=2048)
    deep = f"{R}/a/b/c/d.md"
    node = Node(
        uri=deep,
        parent_uri=parent_of(deep),
        context_type=ContextType.RESOURCE,
        level=2,
        is_leaf=True,
    )
    before = len(srv.posts())
    with pytest.raises(StoreError, match="ancestor_keys exceed VikingDB's list limit of 3"):
        store.upsert([node], np.ones((1, DIM), np.float32))
    big = node.model_copy(update={"uri": f"{R}/big.md", "parent_uri": R, "content": "x" * 4000})
    with pytest.raises(StoreError, match="over VikingDB's 2048-byte limit"):
        store.upsert([big], np.ones((1, DIM), np.float32))
    assert len(srv.posts()) == before


# ------------------------------------------------------------------------------------------
# Reads, writes, state
# ------------------------------------------------------------------------------------------
def test_reads_and_writes_match_the_embedded_store(
    srv: FakeVikingDB, pair: tuple[VikingDBStore, EmbeddedStore]
) -> None:
    remote, local = pair
    for uri in (R, f"{R}/a", f"{R}/ab/long.md", f"{R}/nope"):
        assert remote.children(uri) == local.children(uri)
        assert sorted(n.uri for n in remote.iter_nodes(uri)) == sorted(
            n.uri for n in local.iter_nodes(uri)
        )
    uris = [f"{R}/a/x.md", f"{R}/nope", R]
    assert remote.get(uris) == local.get(uris)
    np.testing.assert_allclose(
        remote.get_vectors(uris[::2]), local.get_vectors(uris[::2]), atol=1e-6
    )
    with pytest.raises(NotFoundError):
        remote.get_vectors([f"{R}/nope"])
    scope = Scope(subtrees=(R,), non_leaves_only=True)
    assert {
        k: {n.uri for n in v} for k, v in remote.find_by_tags(["ml", "zzz"], scope, 10).items()
    } == {k: {n.uri for n in v} for k, v in local.find_by_tags(["ml", "zzz"], scope, 10).items()}
    assert remote.delete([f"{R}/a/x.md", f"{R}/nope", f"{R}/a/x.md"]) == 1
    assert remote.get([f"{R}/a/x.md"]) == [None] and len(remote) == len(SPEC) - 1


def test_update_tags_sends_no_vectors(
    srv: FakeVikingDB, pair: tuple[VikingDBStore, EmbeddedStore]
) -> None:
    remote, local = pair
    change = {f"{R}/a/x.md": ["user:fresh"], f"{R}/ab": [], f"{R}/nope": ["user:x"]}
    before = remote.get_vectors([f"{R}/a/x.md"])
    remote.update_tags(change)
    local.update_tags(change)
    rows = srv.posts("/data/update")[-1].json["data"]
    assert {r["id"] for r in rows} == {uri_key(f"{R}/a/x.md"), uri_key(f"{R}/ab")}
    assert all(set(r) == {"id", "node", "tag_labels"} for r in rows)
    np.testing.assert_array_equal(remote.get_vectors([f"{R}/a/x.md"]), before)
    for scope in (Scope(tags=TagFilter(any_of=("fresh",))), Scope(tags=TagFilter(any_of=("ops",)))):
        assert ranking(remote.search(query(), scope, 10)) == ranking(
            local.search(query(), scope, 10)
        )


def test_writes_go_in_batches_of_100(srv: FakeVikingDB) -> None:
    store = make_store(srv, dim=4, scan_page=100)
    nodes = [
        Node(
            uri=f"{R}/n{i}.md",
            parent_uri=R,
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            abstract=str(i),
        )
        for i in range(230)
    ]
    vecs = np.random.default_rng(0).standard_normal((230, 4)).astype(np.float32)
    store.upsert(nodes, vecs)
    assert [len(r.json["data"]) for r in srv.posts("/data/upsert")] == [100, 100, 30]
    scans = len(srv.posts("/search/scalar"))
    assert sorted(n.uri for n in store.children(R)) == sorted(n.uri for n in nodes)
    assert len(srv.posts("/search/scalar")) == scans + 3  # keyset pages of ``scan_page``
    assert [n.uri if n else None for n in store.get([n.uri for n in nodes])] == [
        n.uri for n in nodes
    ]
    assert [len(r.json["ids"]) for r in srv.posts("/fetch_in_collection")][-3:] == [100, 100, 30]


def test_state_blobs_round_trip_in_parts(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    assert store.get_state("sessions/_index") is None
    big = np.random.default_rng(1).integers(0, 256, 100_000, dtype=np.uint8).tobytes()
    store.put_state("sessions/big", big)
    store.put_state("small", b'{"a": 1}')
    store.put_state("empty", b"")
    coll = srv.collections["nodes"]
    parts = [r for r in coll.rows.values() if r["kind"] == "state"]
    assert len(parts) == 4 + 1 + 2  # 100 kB in four 32 KiB parts + their head; two inline
    again = make_store(srv)
    assert again.get_state("sessions/big") == big
    assert again.get_state("small") == b'{"a": 1}' and again.get_state("empty") == b""
    again.put_state("sessions/big", b"now small")
    assert store.get_state("sessions/big") == b"now small"
    assert len([r for r in coll.rows.values() if r["kind"] == "state"]) == 3  # old parts gone
    assert len(again) == 0  # state rows are never nodes
    for bad in ("", "../x", "a b", "/abs"):
        with pytest.raises(StoreError, match="invalid state key"):
            again.put_state(bad, b"x")


def test_meta_is_saved_only_when_changed(srv: FakeVikingDB) -> None:
    store = make_store(srv)
    store.meta["embedder"] = "e1"
    store.save()
    writes = len(srv.posts("/data/upsert"))
    store.save()
    assert len(srv.posts("/data/upsert")) == writes
    assert make_store(srv).meta == {"embedder": "e1"}


def test_bad_input_gets_typed_errors(pair: tuple[VikingDBStore, EmbeddedStore]) -> None:
    remote, _ = pair
    nodes, vecs = tree()
    with pytest.raises(InvalidQueryError, match="limit"):
        remote.search(query(), Scope(), 0)
    with pytest.raises(InvalidQueryError, match="dense_weight"):
        remote.search(query(), Scope(), 3, query_text="x", dense_weight=0.1)
    with pytest.raises(InvalidQueryError, match="dimension"):
        remote.search(np.ones(DIM + 1, np.float32), Scope(), 3)
    with pytest.raises(StoreError, match="dimension"):
        remote.upsert(nodes[:1], vecs[:1, :4])
    with pytest.raises(StoreError, match="vectors of shape"):
        remote.upsert(nodes[:2], vecs[:1])
    with pytest.raises(StoreError, match="metadata field"):
        VikingDBStore("x", dimension=DIM, metadata_fields={"bad name": "string"})


# ------------------------------------------------------------------------------------------
# Index lag and the read-your-writes overlay
# ------------------------------------------------------------------------------------------
def test_own_writes_are_visible_despite_index_lag() -> None:
    nodes, vecs = tree()
    with FakeVikingDB(ak=AK, sk=SK, index_lag_s=3600) as srv:
        store = make_store(srv, metadata_fields=MD_FIELDS, consistency_window_s=600)
        blind = make_store(srv, metadata_fields=MD_FIELDS)  # another process: no overlay
        local = EmbeddedStore()
        for s in (store, local):
            s.upsert(nodes, vecs)
            s.delete([f"{R}/a/y.md"])
            s.update_tags({f"{R}/a/x.md": ["user:fresh"]})
        assert blind.search(query(), Scope(), 5) == [] and len(blind) == 0
        assert blind.get([f"{R}/a/x.md"])[0] is not None  # the collection itself is current
        assert len(store) == len(local)
        for scope in (*SCOPES, Scope(tags=TagFilter(any_of=("fresh",)), traversal=True)):
            assert ranking(store.search(query(), scope, 20)) == ranking(
                local.search(query(), scope, 20)
            )
        assert store.children(f"{R}/a") == local.children(f"{R}/a")
        assert {n.uri for n in store.iter_nodes(f"{R}/a")} == {
            n.uri for n in local.iter_nodes(f"{R}/a")
        }
        np.testing.assert_allclose(store.get_vectors([R]), local.get_vectors([R]), atol=1e-6)
        srv.flush_index()
        assert ranking(blind.search(query(), Scope(), 20)) == ranking(
            local.search(query(), Scope(), 20)
        )


# ------------------------------------------------------------------------------------------
# Hybrid search
# ------------------------------------------------------------------------------------------
def test_hybrid_search_mixes_sparse_scores_with_dense_weight(srv: FakeVikingDB) -> None:
    store = make_store(srv, hybrid=True, dim=4)
    assert store.capabilities.hybrid
    texts = ["kubernetes rollout strategy", "oauth token validation", "quarterly finance report"]
    nodes = [
        Node(
            uri=f"{R}/d{i}.md",
            parent_uri=R,
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            content=t,
        )
        for i, t in enumerate(texts)
    ]
    vecs = np.eye(4, dtype=np.float32)[:3]
    store.upsert(nodes, vecs)
    assert set(srv.collections["nodes"].rows[uri_key(nodes[1].uri)]["sparse"]) == {
        "oauth",
        "token",
        "valid",
    }
    q = np.array([1.0, 0.1, 0.0, 0.0], np.float32)
    dense = store.search(q, Scope(), 3, query_text="validate oauth tokens", dense_weight=1.0)
    assert dense[0].node.uri == nodes[0].uri and dense[0].lexical_score is None
    assert "sparse_vector" not in srv.posts("/search/vector")[-1].json
    mixed = store.search(q, Scope(), 3, query_text="validate oauth tokens", dense_weight=0.3)
    sent = srv.posts("/search/vector")[-1].json
    assert sent["advance"] == {"dense_weight": 0.3} and set(sent["sparse_vector"]) == {
        "valid",
        "oauth",
        "token",
    }
    assert mixed[0].node.uri == nodes[1].uri  # the lexical match wins at dense_weight 0.3
    for h in mixed:
        assert h.lexical_score is not None
        assert h.score == pytest.approx(0.3 * h.vector_score + 0.7 * h.lexical_score, abs=1e-5)


# ------------------------------------------------------------------------------------------
# End to end through the treehop client
# ------------------------------------------------------------------------------------------
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("best practices for model training", {}),
    ("how do we validate OAuth tokens", {"limit": 3, "include_directories": False}),
    ("rotate keys", {"target_uri": "viking://resources/security"}),
    ("write an RFC document", {"context_type": "skill"}),
    ("the user's code style preferences", {"context_type": "memory", "limit": 2}),
    ("单点登录 令牌", {}),
    ("deploy", {"filter": {"op": "must", "field": "kind", "conds": ["markdown"]}}),
    ("pipeline", {"filter": {"op": "must_not", "field": "name", "conds": ["etl"]}}),
    ("data quality checks", {"score_threshold": 0.2, "chunk_diffusion_count": 1}),
]


def summary(res: FindResult) -> list[tuple[str, float, bool]]:
    # found_by "global" vs "child" is not compared: a node reached both ways keeps the higher
    # score, and the embedded store's two float32 dot products of one pair can differ in the
    # last bit. Tag hops must agree.
    # Scores are compared to 1e-5 (float32 arithmetic on both sides), not rounded: rounding
    # turns a last-bit difference next to a rounding boundary into a spurious mismatch.
    return [(m.uri, Approx(m.score), m.found_by is FoundBy.TAG_HOP) for m in res.contexts()]


class Approx(float):
    """A score that equals another within 1e-5."""

    __hash__ = float.__hash__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, float) and abs(float(self) - float(other)) <= 1e-5


def test_treehop_end_to_end_equals_the_embedded_store(srv: FakeVikingDB, bow: Any) -> None:
    store = make_store(srv, dim=bow.dimension, metadata_fields={"kind": "string"})
    dense = RetrievalConfig(dense_weight=1.0)  # the fake store has no BM25: compare dense search
    with (
        Treehop(embedder=bow, store=store, tagger=None, config=dense) as remote,
        Treehop(embedder=bow, tagger=None, config=dense) as local,
    ):
        index_sample_tree(remote)
        index_sample_tree(local)
        assert len(store) == len(local.store) == 44
        for q, kw in QUERIES:
            got = summary(remote.find(q, **kw))
            assert got == summary(local.find(q, **kw)), (q, kw)
            assert got or kw.get("context_type") == "memory", (q, kw)
        fused = remote.search("OAuth token validation and RFC templates")
        assert summary(fused) == summary(local.search("OAuth token validation and RFC templates"))
        assert remote.ls("viking://resources/security") == local.ls("viking://resources/security")
        assert remote.remove("viking://resources/devops") == local.remove(
            "viking://resources/devops"
        )
        assert summary(remote.find("deploy")) == summary(local.find("deploy"))
    assert srv.auth_failures == []


def test_tags_hops_sessions_and_lag_end_to_end(bow: Any) -> None:
    """Auto tags (update_tags, keyword statistics in state), tag hops and sessions, with an
    index that never catches up during the test: everything rides on the overlay."""
    cfg = RetrievalConfig(tag_hop_trigger=TagHopTrigger.ALWAYS, dense_weight=1.0)
    with FakeVikingDB(ak=AK, sk=SK, index_lag_s=3600) as srv:
        store = make_store(srv, dim=bow.dimension, consistency_window_s=600)
        with (
            Treehop(embedder=bow, store=store, config=cfg) as remote,
            Treehop(embedder=bow, config=cfg) as local,
        ):
            index_sample_tree(remote)
            index_sample_tree(local)
            assert {n.uri: n.tags for n in remote.store.iter_nodes()} == {
                n.uri: n.tags for n in local.store.iter_nodes()
            }
            hops = []
            for q in (
                "feature engineering for ranking models",
                "incident response runbook",
                "training",
            ):
                got, want = remote.find(q), local.find(q)
                assert summary(got) == summary(want)
                assert got.query_results and want.query_results
                assert got.query_results[0].tag_hops == want.query_results[0].tag_hops
                hops += got.query_results[0].tag_hops.subtrees_added
            assert hops == ["viking://resources/machine-learning"]  # find_by_tags found it
            tagged = remote.find("training", tags=["model-training"])
            assert summary(tagged) == summary(local.find("training", tags=["model-training"]))
            sid = remote.create_session()
            remote.add_message(sid, "user", "we migrate auth to OAuth")
            assert remote.get_session(sid).message_count == 1
        assert store.get_state("tagger/keywords.bin") is not None


async def test_async_client_runs_remote_calls_concurrently(srv: FakeVikingDB, bow: Any) -> None:
    store = make_store(srv, dim=bow.dimension)
    client = AsyncTreehop(embedder=bow, store=store, tagger=None)
    await client.add_resource(str(SAMPLE_TREE / "resources" / "security"), target_uri=R)
    queries = ["oauth tokens", "api keys", "audit logging", "passwords"]
    results = await asyncio.gather(*(client.find(q, limit=3) for q in queries))
    assert all(r.total > 0 for r in results)
    assert {r.contexts()[0].uri.split("/")[3] for r in results} == {"security"}
