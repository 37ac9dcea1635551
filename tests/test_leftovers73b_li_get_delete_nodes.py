"""LlamaIndex ``TreehopVectorStore.get_nodes`` / ``delete_nodes`` over one node set (helper
leftovers73b; leftovers72b's open item, bench/README.md "(helper leftovers73b)").

``SimpleVectorStore``'s contract (llama-index-core 0.14, ``vector_stores/simple.py``):
``delete_nodes(node_ids, filters)`` removes exactly the stored nodes in ``node_ids`` that
``filters`` selects (an id naming nothing is skipped), and what a store's queries return is
what it holds. Before: ``get_nodes()`` and ``get_nodes(filters=...)`` read only the store's
own records, so the leaves ``treehop index`` / ``add_resource`` stored under ``base_uri`` --
which its queries and ``get_nodes(node_ids=...)`` return -- were missing, and a filter on
``file_path`` / ``file_name`` was an ``InvalidFilterError``; ``delete_nodes`` skipped such a
node's id in silence (the node stayed), and with ``filters`` matched ``node_ids`` against
passage ids only, so a passage's URI (the id a ``TreehopRetriever`` gives) deleted nothing.
Now every read is over the same nodes, filtered as each is shown, and ``delete_nodes``
refuses, before deleting anything, a node the store did not write.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from langchain_treehop import LangChainEmbedder
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaStore
from treehop import Treehop
from treehop.errors import InvalidQueryError

from lc_helpers import WordHashEmbeddings

Q = "signing keys rotation vault cron"
KEYS = "viking://resources/notes/keys.md"
BARE = "viking://resources/notes/rotation"
VAULT = "viking://resources/docs/vault.md"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "vault.md").write_text("# Vault\n\nKeys are stored in the vault host.\n")
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_resource(str(docs))  # what ``treehop index`` does with a folder
    c.add_resource("Rotate the signing keys every ninety days.", is_text=True, target_uri=KEYS)
    c.add_resource("Key rotation runs from cron on the vault host.", is_text=True, target_uri=BARE)
    yield c
    c.close()


def _store(client: Treehop) -> tuple[LlamaStore, str, str]:
    store = LlamaStore(client=client)
    memo, note = store.add(
        [
            TextNode(text="The vault keys rotation memo.", metadata={"kind": "memo"}),
            TextNode(text="A note on cron hosts.", metadata={"kind": "note"}),
        ]
    )
    return store, memo, note


OPS: dict[FilterOperator, Callable[[Any, Any], bool]] = {
    FilterOperator.EQ: lambda v, x: v == x,
    FilterOperator.NE: lambda v, x: v != x,
    FilterOperator.IN: lambda v, x: v in x,
    FilterOperator.TEXT_MATCH: lambda v, x: isinstance(v, str) and x in v,
}
CASES = [
    MetadataFilter(key="file_path", value=BARE),
    MetadataFilter(key="file_name", value="keys.md"),
    MetadataFilter(key="file_name", value="vault.md"),
    MetadataFilter(key="file_path", value="notes/", operator=FilterOperator.TEXT_MATCH),
    MetadataFilter(key="file_name", value=["rotation", "vault.md"], operator=FilterOperator.IN),
    MetadataFilter(key="file_name", value="keys.md", operator=FilterOperator.NE),
    MetadataFilter(key="kind", value="memo"),
]


async def test_get_nodes_without_ids_reads_every_node_its_queries_return(client: Treehop) -> None:
    store, memo, note = _store(client)
    res = await store.aquery(VectorStoreQuery(query_str=Q, similarity_top_k=50))
    queried = {n.node_id for n in res.nodes or []}
    assert {KEYS, BARE, VAULT, memo} <= queried  # the premise: tree nodes and own records
    every = store.get_nodes()
    assert queried <= {n.node_id for n in every}
    assert {n.node_id for n in every} == {KEYS, BARE, VAULT, memo, note}
    assert [n.node_id for n in await store.aget_nodes()] == [n.node_id for n in every]
    # each node as get_nodes(node_ids=...) shows it (file_name / file_path included)
    by_id = {n.node_id: n.metadata for n in store.get_nodes(node_ids=[*queried, note])}
    assert {n.node_id: n.metadata for n in every} == by_id
    for f in CASES:
        want = [
            n.node_id
            for n in every
            if f.key in n.metadata or f.operator is FilterOperator.NE
            if OPS[f.operator](n.metadata.get(f.key), f.value)
        ]
        assert want, f  # each case selects something: the premise
        got = await store.aget_nodes(filters=MetadataFilters(filters=[f]))
        assert [n.node_id for n in got] == want, f
        assert [n.node_id for n in store.get_nodes(filters=MetadataFilters(filters=[f]))] == want


@pytest.mark.parametrize("how", ["ids", "ids_and_own", "filters", "ids_and_filters"])
async def test_delete_nodes_refuses_a_node_it_did_not_write_and_deletes_nothing(
    client: Treehop, how: str
) -> None:
    store, memo, note = _store(client)
    asked: dict[str, dict[str, Any]] = {
        "ids": {"node_ids": [KEYS]},
        "ids_and_own": {"node_ids": [memo, VAULT]},
        "filters": {"filters": MetadataFilters(filters=[CASES[3]])},  # file_path ~ notes/
        "ids_and_filters": {
            "node_ids": [KEYS, memo],
            "filters": MetadataFilters(filters=[CASES[3]]),
        },
    }
    kwargs = asked[how]
    before = sorted(n.node_id for n in store.get_nodes(node_ids=[KEYS, BARE, VAULT, memo, note]))
    with pytest.raises(InvalidQueryError, match="not written by this vector store") as got:
        await store.adelete_nodes(**kwargs)
    assert "nothing was deleted" in str(got.value)
    with pytest.raises(InvalidQueryError, match="not written by this vector store"):
        store.delete_nodes(**kwargs)
    after = sorted(n.node_id for n in store.get_nodes(node_ids=[KEYS, BARE, VAULT, memo, note]))
    assert after == before == sorted([KEYS, BARE, VAULT, memo, note])


async def test_delete_nodes_deletes_what_get_nodes_selects(client: Treehop) -> None:
    """SimpleVectorStore's rule on the store's own records: ``node_ids`` (a passage id or
    its URI) narrowed by ``filters``; an id naming nothing is skipped."""
    store, memo, note = _store(client)
    memo_uri = (await store._index.get([memo]))[0].uri
    shown = store.aclient.display(memo_uri)
    not_memo = MetadataFilters(filters=[MetadataFilter(key="kind", value="note")])
    store.delete_nodes(node_ids=[shown, "unknown"], filters=not_memo)  # (memo is not a note)
    assert {memo, note} <= {n.node_id for n in store.get_nodes()}
    memo_only = MetadataFilters(filters=[MetadataFilter(key="kind", value="memo")])
    await store.adelete_nodes(node_ids=[shown, "unknown"], filters=memo_only)  # by its URI
    assert memo not in {n.node_id for n in store.get_nodes()}
    store.delete_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="kind", value="note")]))
    assert {n.node_id for n in store.get_nodes()} == {KEYS, BARE, VAULT}
    assert (
        store.get_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="kind", value="note")]))
        == []
    )
