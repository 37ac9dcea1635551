"""A value filter selects the URI a result shows as its source (helper leftovers72b).

Where nothing stored names a file (a text added with no ``name=``, a memory), the
integrations show the node's URI: LangChain ``source``, LlamaIndex ``file_path`` (and the
URI's last segment as ``file_name``). A filter on that key read the stored (empty) key
there, so ``{"source": <the value shown>}`` selected nothing. Now each filter is checked
against Python's own evaluation of the same operator on the metadata each result *shows*
(an oracle over every shown value), for the retrievers and the vector stores, sync and
async. Real clients, offline word-hash embeddings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.retrievers.treehop import TreehopRetriever as LlamaRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.errors import InvalidFilterError
from treehop.filters import MetadataFilter as CoreFilter
from treehop.filters import node_value, show_fields, shown_uri
from treehop.stores import vikingdb
from treehop.stores.milvus import translate_metadata

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder, TreehopRetriever, TreehopVectorStore
from langchain_treehop.documents import SOURCE

from lc_helpers import WordHashEmbeddings

Q = "signing keys rotation vault cron"
KEYS = "viking://resources/notes/keys.md"
BARE = "viking://resources/notes/rotation"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.md").write_text("# Vault\n\nKeys are stored in the vault host.\n")
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_resource(str(docs))  # what ``treehop index`` does with a folder: source_path
    c.add_resource("Rotate the signing keys every ninety days.", is_text=True, target_uri=KEYS)
    c.add_resource("Key rotation runs from cron on the vault host.", is_text=True, target_uri=BARE)
    yield c
    c.close()


# (LangChain's operator, Python's reading of it on the value shown)
LC_CASES: list[tuple[Callable[[list[str]], Any], Callable[[list[str], Any], bool]]] = [
    (lambda s: s[0], lambda s, v: v == s[0]),
    (lambda s: {"$eq": s[-1]}, lambda s, v: v == s[-1]),
    (lambda s: {"$ne": s[0]}, lambda s, v: v != s[0]),
    (lambda s: {"$in": s[:2]}, lambda s, v: v in s[:2]),
    (lambda s: {"$nin": s[:2]}, lambda s, v: v not in s[:2]),
    (lambda s: {"$contains": "rotation"}, lambda s, v: "rotation" in v),
    (lambda s: {"$contains": "notes/"}, lambda s, v: "notes/" in v),
    (lambda s: {"$not_contains": "notes/"}, lambda s, v: "notes/" not in v),
]


def _check_lc(shown: list[str], found: Callable[[dict[str, Any]], set[str]]) -> None:
    assert {KEYS, BARE} <= set(shown), shown  # the URIs shown: the premise
    for spec, want in LC_CASES:
        filt = {"source": spec(shown)}
        expected = {v for v in shown if want(shown, v)}
        assert found(filt) == expected, filt


def test_langchain_retriever_value_filters_select_the_shown_uri(client: Treehop) -> None:
    shown = sorted(d.metadata["source"] for d in TreehopRetriever(client=client, k=10).invoke(Q))
    assert "vault.md" in shown  # a file's source_path beside the URIs

    def found(spec: dict[str, Any]) -> set[str]:
        r = TreehopRetriever(client=client, k=10, metadata_filter=spec)
        return {d.metadata["source"] for d in r.invoke(Q)}

    _check_lc(shown, found)


async def test_langchain_vector_store_value_filters_select_the_shown_uri(client: Treehop) -> None:
    store = TreehopVectorStore(client=client)
    shown = sorted(d.metadata["source"] for d in await store.asimilarity_search(Q, k=10))

    def found(spec: dict[str, Any]) -> set[str]:
        return {d.metadata["source"] for d in store.similarity_search(Q, k=10, filter=spec)}

    _check_lc(shown, found)
    # async and MMR read the same rule
    docs = await store.amax_marginal_relevance_search(Q, k=3, fetch_k=10, filter={"source": BARE})
    assert [d.metadata["source"] for d in docs] == [BARE]


def test_langchain_store_own_records_keep_their_stored_source(client: Treehop) -> None:
    """A record the store added shows its metadata as added (no ``source``): the URI it is
    stored at is not its source, and a filter on it does not select it."""
    store = TreehopVectorStore(client=client)
    ids = store.add_texts(["The vault keys rotation runbook."], metadatas=[{"kind": "memo"}])
    own = store.get_by_ids(ids)[0]
    assert "source" not in own.metadata
    every = store.similarity_search(Q, k=20)
    assert ids[0] in {d.id for d in every}
    hits = store.similarity_search(Q, k=20, filter={"source": {"$contains": "viking://"}})
    assert ids[0] not in {d.id for d in hits}
    assert {d.metadata["source"] for d in hits} == {KEYS, BARE}


LI_CASES: list[tuple[FilterOperator, Callable[[str], Any], Callable[[str, Any], bool]]] = [
    (FilterOperator.EQ, lambda v: v, lambda v, x: v == x),
    (FilterOperator.NE, lambda v: v, lambda v, x: v != x),
    (FilterOperator.IN, lambda v: [v], lambda v, x: v in x),
    (FilterOperator.NIN, lambda v: [v], lambda v, x: v not in x),
    (FilterOperator.CONTAINS, lambda v: v[:4], lambda v, x: x in v),
    (FilterOperator.TEXT_MATCH, lambda v: v[-5:], lambda v, x: x in v),
]


def _check_li(nodes: list[dict[str, Any]], found: Callable[[MetadataFilters], set[str]]) -> None:
    paths = {n["file_path"] for n in nodes}
    assert {KEYS, BARE} <= paths, paths
    for target in (KEYS, BARE):
        shown = next(n for n in nodes if n["file_path"] == target)
        for key in ("file_name", "file_path"):
            for op, value, want in LI_CASES:
                v = value(shown[key])
                f = MetadataFilters(filters=[MetadataFilter(key=key, value=v, operator=op)])
                expected = {n["file_path"] for n in nodes if want(n[key], v)}
                assert found(f) == expected, (key, op, v)


def test_llamaindex_retriever_value_filters_select_the_shown_uri(client: Treehop) -> None:
    every = LlamaRetriever(client=client, similarity_top_k=10).retrieve(Q)
    nodes = [dict(h.node.metadata) for h in every]
    assert {n["file_name"] for n in nodes} >= {"keys.md", "rotation", "vault.md"}

    def found(f: MetadataFilters) -> set[str]:
        hits = LlamaRetriever(client=client, similarity_top_k=10, filters=f).retrieve(Q)
        return {h.node.metadata["file_path"] for h in hits}

    _check_li(nodes, found)


async def test_llamaindex_vector_store_value_filters_select_the_shown_uri(client: Treehop) -> None:
    store = LlamaStore(client=client)
    res = await store.aquery(VectorStoreQuery(query_str=Q, similarity_top_k=10))
    nodes = [dict(n.metadata) for n in res.nodes or []]

    def found(f: MetadataFilters) -> set[str]:
        r = store.query(VectorStoreQuery(query_str=Q, similarity_top_k=10, filters=f))
        return {n.metadata["file_path"] for n in r.nodes or []}

    _check_li(nodes, found)


def test_the_filter_reads_a_user_space_uri_as_shown() -> None:
    """A memory is stored under ``viking://user/<name>/`` and shown as ``viking://~/``: the
    filter reads the shown form (what the user copies from a result)."""
    spec = show_fields(
        {"op": "must", "field": "source", "conds": ["viking://~/memories/a"]}, [SOURCE]
    )
    md = CoreFilter.parse(spec)
    assert md is not None
    assert md.matches({}, "viking://user/bob/memories/a")
    assert not md.matches({}, "viking://user/bob/memories/b")
    assert not md.matches({"source_path": "a.md"}, "viking://user/bob/memories/a")
    assert not md.matches({})  # a store that reads no URI: nothing to compare


def test_a_remote_store_evaluates_a_uri_leaf_client_side() -> None:
    """Milvus and VikingDB have no expression for the node's URI as shown: the leaf is left
    to Python (each store's ``MetadataFilter.matches`` with the row's URI), never translated
    as a metadata field named ``source`` (which a user may have declared)."""
    leaf = {"op": "must", "field": "source", "node": "uri", "conds": [BARE]}
    assert translate_metadata(leaf) == (None, False)
    with pytest.raises(vikingdb._Untranslatable):
        vikingdb.translate_metadata(leaf, {"source": "string"})
    spec = show_fields({"op": "must", "field": "source", "conds": [BARE]}, [SOURCE])
    assert spec is not None and translate_metadata(spec)[1] is False


@settings(max_examples=60, deadline=None)
@given(
    uri=st.from_regex(r"viking://(resources|user/[a-z]{1,5})(/[a-z.~-]{0,6}){0,3}", fullmatch=True),
    other=st.text(max_size=30),
    part=st.sampled_from(["uri", "name"]),
)
def test_a_node_leaf_reads_the_uri_part_shown(uri: str, other: str, part: str) -> None:
    """Property: a ``node`` leaf selects exactly the node whose URI part, as shown, is the
    value, whatever its metadata; ``$ne`` is the complement."""
    value = node_value(shown_uri(uri), part)
    for cond, hit in ((value, True), (other, other == value)):
        eq = CoreFilter.parse({"op": "must", "field": "k", "node": part, "conds": [cond]})
        ne = CoreFilter.parse({"op": "must_not", "field": "k", "node": part, "conds": [cond]})
        assert eq is not None and ne is not None
        assert eq.matches({"k": cond}, uri) is hit
        assert ne.matches({"k": cond}, uri) is (not hit)


@settings(max_examples=60, deadline=None)
@given(node=st.one_of(st.text(max_size=8), st.integers(), st.none(), st.lists(st.text(max_size=3))))
def test_a_node_key_other_than_its_parts_is_refused(node: Any) -> None:
    spec = {"op": "must", "field": "k", "node": node, "conds": ["x"]}
    if node in ("uri", "name"):
        assert CoreFilter.parse(spec) is not None
        return
    with pytest.raises(InvalidFilterError, match="'node' reads the node's URI part"):
        CoreFilter.parse(spec)


async def test_llamaindex_get_nodes_by_ids_and_filters_reads_tree_nodes(client: Treehop) -> None:
    """``get_nodes(node_ids=..., filters=...)`` is ``get_nodes(node_ids=...)`` narrowed by
    the filter as each node shows (helper leftovers72b: with ``filters`` only the store's own
    records were read, so a queried tree node's id answered ``[]``). Oracle: Python's reading
    of each operator on the metadata ``get_nodes(node_ids=...)`` shows."""
    store = LlamaStore(client=client)
    (own,) = store.add([TextNode(text="The vault keys rotation memo.", metadata={"kind": "memo"})])
    res = await store.aquery(VectorStoreQuery(query_str=Q, similarity_top_k=10))
    ids = [*[n.node_id for n in res.nodes or []][::-1], "unknown", own]
    every = store.get_nodes(node_ids=ids)
    assert {KEYS, BARE, own} <= {n.node_id for n in every}
    cases = [
        MetadataFilter(key="file_path", value=BARE),
        MetadataFilter(key="file_name", value="keys.md"),
        MetadataFilter(key="file_name", value="vault.md"),
        MetadataFilter(key="file_path", value="notes/", operator=FilterOperator.TEXT_MATCH),
        MetadataFilter(key="file_name", value=["rotation", "vault.md"], operator=FilterOperator.IN),
        MetadataFilter(key="file_name", value="keys.md", operator=FilterOperator.NE),
        MetadataFilter(key="kind", value="memo"),
    ]
    ops: dict[FilterOperator, Callable[[Any, Any], bool]] = {
        FilterOperator.EQ: lambda v, x: v == x,
        FilterOperator.NE: lambda v, x: v != x,
        FilterOperator.IN: lambda v, x: v in x,
        FilterOperator.TEXT_MATCH: lambda v, x: isinstance(v, str) and x in v,
    }
    for f in cases:
        want = [
            n.node_id
            for n in every
            if f.key in n.metadata or f.operator is FilterOperator.NE
            if ops[f.operator](n.metadata.get(f.key), f.value)
        ]
        assert want, f  # each case selects something: the premise
        got = await store.aget_nodes(node_ids=ids, filters=MetadataFilters(filters=[f]))
        assert [n.node_id for n in got] == want, f
    # the sync twin, and the ids' order kept
    got = store.get_nodes(node_ids=[BARE, KEYS], filters=MetadataFilters(filters=[cases[3]]))
    assert [n.node_id for n in got] == [BARE, KEYS]
