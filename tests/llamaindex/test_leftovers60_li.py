"""Leftovers of stop 60 (LlamaIndex): filters on the ``file_name`` / ``file_path`` every node shows.

``to_node_with_score`` shows ``file_name`` (the stored ``name``) and ``file_path`` (the
stored ``source_path``) for a file or text the writer stored, beside a reader's own two keys
(``add_documents`` of a ``SimpleDirectoryReader`` node). A ``MetadataFilters`` on them matched
only stored keys: a subset, or a refusal. The oracle is the shown value: every filter's result
is the unfiltered result's nodes whose shown value satisfies the operator, in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core.schema import Document
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopRetriever, add_documents
from treehop import AsyncTreehop, Treehop

from treehop_test_doubles import add_rollback_notes

QUERY = "kubernetes rollback deploy"
OP = FilterOperator


@pytest.fixture(params=[True, False], ids=["some-store-file-keys", "none-stores-them"])
def tree(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Treehop]:
    with Treehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None) as c:
        add_rollback_notes(c, tmp_path)
        if request.param:
            doc = Document(
                text="kubernetes rollback deploy from a reader",
                metadata={"file_name": "r.txt", "file_path": "/data/r.txt"},
            )
            add_documents(c, [doc])
        yield c


def _one(key: str, op: FilterOperator, value: Any) -> MetadataFilters:
    return MetadataFilters(filters=[MetadataFilter(key=key, operator=op, value=value)])


CASES: list[tuple[MetadataFilters, str, Callable[[Any], bool]]] = [
    (_one("file_name", OP.EQ, "beta"), "file_name", lambda v: v == "beta"),
    (_one("file_name", OP.EQ, "alpha.md"), "file_name", lambda v: v == "alpha.md"),
    (_one("file_name", OP.EQ, "r.txt"), "file_name", lambda v: v == "r.txt"),
    (_one("file_name", OP.NE, "beta"), "file_name", lambda v: v != "beta"),
    (_one("file_name", OP.IN, ["beta", "r.txt"]), "file_name", lambda v: v in {"beta", "r.txt"}),
    (
        _one("file_name", OP.NIN, ["beta", "r.txt"]),
        "file_name",
        lambda v: v not in {"beta", "r.txt"},
    ),
    (
        _one("file_name", OP.TEXT_MATCH, ".md"),
        "file_name",
        lambda v: isinstance(v, str) and ".md" in v,
    ),
    (_one("file_name", OP.IS_EMPTY, None), "file_name", lambda v: not v),
    (_one("file_path", OP.EQ, "beta"), "file_path", lambda v: v == "beta"),
    (_one("file_path", OP.NE, "/data/r.txt"), "file_path", lambda v: v != "/data/r.txt"),
    (
        MetadataFilters(
            filters=[
                MetadataFilter(key="file_name", operator=OP.EQ, value="beta"),
                MetadataFilter(key="file_name", operator=OP.EQ, value="gamma.md"),
            ],
            condition=FilterCondition.OR,
        ),
        "file_name",
        lambda v: v in {"beta", "gamma.md"},
    ),
    (
        MetadataFilters(
            filters=[MetadataFilter(key="file_name", operator=OP.EQ, value="beta")],
            condition=FilterCondition.NOT,
        ),
        "file_name",
        lambda v: v != "beta",
    ),
]


@pytest.mark.parametrize(
    ("filters", "key", "shown_matches"), CASES, ids=[str(i) for i in range(len(CASES))]
)
def test_a_filter_on_a_file_key_matches_the_shown_value(
    tree: Treehop, filters: MetadataFilters, key: str, shown_matches: Callable[[Any], bool]
) -> None:
    everything = {
        n.node.node_id: n.node.metadata.get(key)
        for n in TreehopRetriever(tree, similarity_top_k=50).retrieve(QUERY)
    }
    assert "viking://resources/beta" in everything
    expected = {u for u, v in everything.items() if shown_matches(v)}
    got = TreehopRetriever(tree, similarity_top_k=50, filters=filters).retrieve(QUERY)
    assert {n.node.node_id for n in got} == expected


async def test_async_retrieve_matches_the_shown_file_name(tmp_path: Path) -> None:
    c = AsyncTreehop(embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None)
    await c.add_resource("kubernetes rollback deploy beta", name="beta")
    await c.add_resource("kubernetes rollback deploy delta", name="delta")
    r = TreehopRetriever(c, similarity_top_k=10, filters=_one("file_name", OP.EQ, "beta"))
    got = await r.aretrieve(QUERY)
    assert [n.node.metadata["file_name"] for n in got] == ["beta"]
    await c.close()


# -- 2. a wrapper over a closed client: ClientClosedError, sync client or async ---------------


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_the_wrappers_refuse_a_closed_client(kind: str) -> None:
    import asyncio

    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import VectorStoreQuery

    from llama_index.vector_stores.treehop import TreehopVectorStore
    from treehop.errors import ClientClosedError

    emb = LlamaIndexEmbedder(WordHashEmbedding())
    client: Treehop | AsyncTreehop
    client = (
        Treehop(embedder=emb, tagger=None)
        if kind == "sync"
        else AsyncTreehop(embedder=emb, tagger=None)
    )
    vs = TreehopVectorStore(client=client)
    node = TextNode(
        text="kubernetes rollback deploy",
        embedding=WordHashEmbedding().get_text_embedding("kubernetes rollback deploy"),
    )
    vs.add([node])
    retriever = TreehopRetriever(client, similarity_top_k=3)
    assert retriever.retrieve(QUERY) and vs.get_nodes()  # (the control: open, answered)
    if isinstance(client, Treehop):
        client.close()
    else:
        asyncio.run(client.close())
    query = VectorStoreQuery(query_embedding=node.embedding, similarity_top_k=2)
    calls: list[Callable[[], Any]] = [
        lambda: retriever.retrieve(QUERY),
        lambda: asyncio.run(retriever.aretrieve(QUERY)),
        lambda: vs.query(query),
        lambda: vs.get_nodes(),
        lambda: vs.add([TextNode(text="after the close", embedding=node.embedding)]),
        lambda: vs.delete_nodes([node.node_id]),
    ]
    for call in calls:
        with pytest.raises(ClientClosedError, match="closed"):
            call()
    # the embedding model is the embedder's, not the index's: still read after the close
    # (docs/llamaindex.md reads store.embed_model after store.close(); lead, stop 60)
    assert vs.embed_model is emb.embed_model
