"""TreehopVectorStore, tested the way LlamaIndex tests its own vector stores.

The module follows the layout of the tests of ``llama-index-vector-stores-*`` packages
(chroma, qdrant): a ``node_embeddings`` fixture of ``TextNode``s with embeddings, SOURCE
relationships and metadata; the class check; add + query, sync and async; queries with
``MetadataFilters``; ``get_nodes``; ``delete`` by ref doc; ``delete_nodes``; ``clear``; MMR;
and the index-level flow (``StorageContext``, ``VectorStoreIndex.from_vector_store``,
``insert``, ``delete_ref_doc``, ``as_retriever``, ``as_query_engine``). Offline: embeddings
come from the deterministic ``WordHashEmbedding``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from li_helpers import WordHashEmbedding, word_vector
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.schema import (
    Document,
    MetadataMode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from llama_index.retrievers.treehop import LlamaIndexEmbedder
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import AsyncTreehop, Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, InvalidQueryError


def node(text: str, node_id: str, ref: str, **metadata: Any) -> TextNode:
    return TextNode(
        text=text,
        id_=node_id,
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=ref)},
        metadata=metadata,
        embedding=word_vector(text),
    )


@pytest.fixture
def node_embeddings() -> list[TextNode]:
    return [
        node(
            "lorem ipsum about mafia families",
            "c330d77f",
            "test-0",
            author="Stephen King",
            theme="Friendship",
            year=1990,
        ),
        node(
            "lorem ipsum about friendship and loyalty",
            "c3d1e1dd",
            "test-1",
            director="Francis Ford Coppola",
            theme="Mafia",
            year=1972,
        ),
        node(
            "lorem ipsum about a hotel in winter",
            "c3ew11cd",
            "test-2",
            director="Christopher Nolan",
            theme="Horror",
            year=1980,
        ),
        node(
            "lorem ipsum about dreams inside dreams",
            "0b31ae71",
            "test-3",
            director="Christopher Nolan",
            theme="Fiction",
            year=2010,
        ),
    ]


@pytest.fixture
def embed_model() -> WordHashEmbedding:
    return WordHashEmbedding()


@pytest.fixture
def vector_store(embed_model: WordHashEmbedding) -> Iterator[TreehopVectorStore]:
    store = TreehopVectorStore(embed_model=embed_model, tagger=None)
    yield store
    store.close()


def q(text: str, k: int = 1, **kw: Any) -> VectorStoreQuery:
    return VectorStoreQuery(
        query_embedding=word_vector(text), query_str=text, similarity_top_k=k, **kw
    )


def test_class() -> None:
    names_of_base_classes = [b.__name__ for b in TreehopVectorStore.__mro__]
    assert BasePydanticVectorStore.__name__ in names_of_base_classes


def test_instance_creation(embed_model: WordHashEmbedding) -> None:
    client = Treehop(embedder=LlamaIndexEmbedder(embed_model), tagger=None)
    try:
        store = TreehopVectorStore(client, base_uri="viking://resources/movies")
        assert isinstance(store, TreehopVectorStore)
        assert store.client is client and store.stores_text
        assert store.base_uri == "viking://resources/movies"
        with pytest.raises(InvalidQueryError, match="vector space"):
            TreehopVectorStore(client, embed_model=WordHashEmbedding())
    finally:
        client.close()


@pytest.mark.parametrize("use_async", [True, False])
async def test_add_to_store_and_query(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode], use_async: bool
) -> None:
    if use_async:
        ids = await vector_store.async_add(node_embeddings)
        res = await vector_store.aquery(q("mafia families", k=1))
    else:
        ids = vector_store.add(node_embeddings)
        res = vector_store.query(q("mafia families", k=1))
    assert ids == [n.node_id for n in node_embeddings]
    assert res.nodes and res.similarities and res.ids
    got = res.nodes[0]
    assert got.get_content() == "lorem ipsum about mafia families"
    assert got.node_id == "c330d77f" and res.ids == ["c330d77f"]
    assert got.metadata == node_embeddings[0].metadata
    assert got.ref_doc_id == "test-0"


@pytest.mark.parametrize("use_async", [True, False])
async def test_query_with_metadata_filters(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode], use_async: bool
) -> None:
    vector_store.add(node_embeddings)
    cases = [
        (MetadataFilters(filters=[MetadataFilter(key="theme", value="Mafia")]), {"c3d1e1dd"}),
        (
            MetadataFilters(
                filters=[MetadataFilter(key="year", value=1985, operator=FilterOperator.GT)]
            ),
            {"0b31ae71", "c330d77f"},
        ),
        (
            MetadataFilters(
                filters=[
                    MetadataFilter(key="theme", value="Horror"),
                    MetadataFilter(key="year", value=2010),
                ],
                condition=FilterCondition.OR,
            ),
            {"c3ew11cd", "0b31ae71"},
        ),
        (
            MetadataFilters(
                filters=[
                    MetadataFilter(
                        key="director",
                        value=["Christopher Nolan", "Francis Ford Coppola"],
                        operator=FilterOperator.IN,
                    ),
                    MetadataFilter(key="year", value=1975, operator=FilterOperator.GTE),
                ]
            ),
            {"c3ew11cd", "0b31ae71"},
        ),
    ]
    for filters, expected in cases:
        query = q("lorem ipsum", k=10, filters=filters)
        res = await vector_store.aquery(query) if use_async else vector_store.query(query)
        assert set(res.ids or []) == expected, filters


def test_unknown_and_provenance_fields_are_typed_errors(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode]
) -> None:
    vector_store.add(node_embeddings)
    typo = MetadataFilters(filters=[MetadataFilter(key="yaer", value=1990)])
    with pytest.raises(InvalidFilterError, match="yaer"):
        vector_store.query(q("lorem", filters=typo))
    with pytest.raises(InvalidFilterError, match="yaer"):
        vector_store.get_nodes(filters=typo)
    computed = MetadataFilters(filters=[MetadataFilter(key="found_by", value="global")])
    with pytest.raises(InvalidFilterError, match="provenance"):
        vector_store.query(q("lorem", filters=computed))


def test_get_nodes(vector_store: TreehopVectorStore, node_embeddings: list[TextNode]) -> None:
    vector_store.add(node_embeddings)
    got = vector_store.get_nodes(node_ids=["c3d1e1dd", "missing", "c330d77f"])
    assert [n.node_id for n in got] == ["c3d1e1dd", "c330d77f"]
    assert got[0].get_content() == node_embeddings[1].get_content()
    nolan = vector_store.get_nodes(
        filters=MetadataFilters(filters=[MetadataFilter(key="director", value="Christopher Nolan")])
    )
    assert {n.node_id for n in nolan} == {"c3ew11cd", "0b31ae71"}
    # neither: every node, as Chroma / Qdrant / PGVector answer (usage61; was refused)
    assert {n.node_id for n in vector_store.get_nodes()} == {n.node_id for n in node_embeddings}


async def test_delete_by_ref_doc(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode]
) -> None:
    await vector_store.async_add(node_embeddings)
    await vector_store.adelete("test-0")
    res = await vector_store.aquery(q("lorem ipsum", k=10))
    assert "c330d77f" not in (res.ids or []) and len(res.ids or []) == 3
    vector_store.delete("test-1")
    assert len(vector_store.query(q("lorem ipsum", k=10)).ids or []) == 2


def test_delete_nodes(vector_store: TreehopVectorStore, node_embeddings: list[TextNode]) -> None:
    vector_store.add(node_embeddings)
    vector_store.delete_nodes(["c330d77f", "c3d1e1dd"])
    assert {n.node_id for n in vector_store.get_nodes(["c330d77f", "c3d1e1dd", "c3ew11cd"])} == {
        "c3ew11cd"
    }
    vector_store.delete_nodes(
        filters=MetadataFilters(filters=[MetadataFilter(key="year", value=2010)])
    )
    assert [n.node_id for n in vector_store.get_nodes(["c3ew11cd", "0b31ae71"])] == ["c3ew11cd"]


async def test_clear(vector_store: TreehopVectorStore, node_embeddings: list[TextNode]) -> None:
    vector_store.add(node_embeddings)
    await vector_store.aclear()
    assert (await vector_store.aquery(q("lorem ipsum", k=10))).ids == []
    vector_store.add(node_embeddings)
    vector_store.clear()
    assert vector_store.get_nodes(node_ids=["c330d77f"]) == []


def test_mmr(vector_store: TreehopVectorStore) -> None:
    nodes = [
        node("tokens expire after one hour", "a", "d"),
        node("tokens expire after one hour exactly", "b", "d"),
        node("signing keys rotate yearly tokens", "c", "d"),
    ]
    vector_store.add(nodes)
    plain = vector_store.query(q("tokens expire", k=2))
    assert set(plain.ids or []) == {"a", "b"}
    mmr = vector_store.query(
        q("tokens expire", k=2, mode=VectorStoreQueryMode.MMR, mmr_threshold=0.1)
    )
    assert "c" in (mmr.ids or []) and len(mmr.ids or []) == 2
    with pytest.raises(InvalidQueryError, match="not supported"):
        vector_store.query(q("tokens", mode=VectorStoreQueryMode.SVM))


def test_foreign_dimension_is_refused(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode]
) -> None:
    vector_store.add(node_embeddings)
    bad = TextNode(text="x", id_="x", embedding=[0.1, 0.2, 0.3])
    with pytest.raises(EmbeddingError, match="dimensional"):
        vector_store.add([bad])


def test_index_flow(vector_store: TreehopVectorStore, embed_model: WordHashEmbedding) -> None:
    ctx = StorageContext.from_defaults(vector_store=vector_store)
    docs = [
        Document(text="The gateway validates OAuth tokens on every request.", id_="auth"),
        Document(text="Backups run nightly and are kept for thirty days.", id_="backup"),
    ]
    index = VectorStoreIndex.from_documents(docs, storage_context=ctx, embed_model=embed_model)
    retriever = index.as_retriever(similarity_top_k=1)
    [hit] = retriever.retrieve("how are OAuth tokens validated")
    assert hit.node.ref_doc_id == "auth" and "OAuth" in hit.node.get_content()
    index.insert(Document(text="OAuth tokens are refreshed by the mobile app.", id_="mobile"))
    refs = {
        n.node.ref_doc_id for n in index.as_retriever(similarity_top_k=5).retrieve("OAuth tokens")
    }
    assert refs == {"auth", "mobile", "backup"}
    index.delete_ref_doc("auth")
    refs = {
        n.node.ref_doc_id for n in index.as_retriever(similarity_top_k=5).retrieve("OAuth tokens")
    }
    assert refs == {"mobile", "backup"}
    # A second index over the same store sees what the first one wrote.
    again = VectorStoreIndex.from_vector_store(vector_store, embed_model=embed_model)
    engine = again.as_query_engine(llm=MockLLM(), similarity_top_k=1)
    response = engine.query("refreshed by the mobile app")
    assert [n.node.ref_doc_id for n in response.source_nodes] == ["mobile"]


async def test_async_index_flow(embed_model: WordHashEmbedding) -> None:
    client = AsyncTreehop(embedder=LlamaIndexEmbedder(embed_model), tagger=None)
    store = TreehopVectorStore(client)
    ctx = StorageContext.from_defaults(vector_store=store)
    index = VectorStoreIndex(nodes=[], storage_context=ctx, embed_model=embed_model, use_async=True)
    await index.ainsert_nodes(
        [node("winter hotel story", "n1", "d1"), node("dream heist", "n2", "d2")]
    )
    hits = await index.as_retriever(similarity_top_k=1).aretrieve("hotel in winter")
    assert [h.node.node_id for h in hits] == ["n1"]
    await index.adelete_ref_doc("d1")
    hits = await index.as_retriever(similarity_top_k=5).aretrieve("hotel in winter")
    assert [h.node.node_id for h in hits] == ["n2"]


def test_reader_and_splitter_pipeline(
    tmp_path: Path, vector_store: TreehopVectorStore, embed_model: WordHashEmbedding
) -> None:
    """SimpleDirectoryReader over a folder + SentenceSplitter: files become ordered chunks at
    paths relative to the folder; the reader's excluded metadata stays out of LLM text."""
    (tmp_path / "docs" / "api").mkdir(parents=True)
    long = " ".join(f"Sentence {i} about OAuth token validation." for i in range(60))
    (tmp_path / "docs" / "guide.md").write_text(long)
    (tmp_path / "docs" / "api" / "rest.md").write_text("REST endpoints return JSON documents.")
    docs = SimpleDirectoryReader(str(tmp_path / "docs"), recursive=True).load_data()
    index = VectorStoreIndex.from_documents(
        docs,
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=embed_model,
        transformations=[SentenceSplitter(chunk_size=64, chunk_overlap=0)],
    )
    client = vector_store.client
    assert isinstance(client, Treehop)
    top = {e.uri for e in client.ls("viking://resources")}
    assert top == {"viking://resources/guide.md", "viking://resources/api"}
    chunks = client.ls("viking://resources/guide.md")
    assert len(chunks) > 3
    starts = [client.stat(e.uri).metadata["treehop_order"][1] for e in chunks]
    assert starts == sorted(starts)
    [hit] = index.as_retriever(similarity_top_k=1).retrieve("REST endpoints JSON")
    assert hit.node.metadata["file_name"] == "rest.md"
    llm_text = hit.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "file_size" not in llm_text and "creation_date" not in llm_text
    assert "REST endpoints" in llm_text


def test_embed_model_is_the_clients(embed_model: WordHashEmbedding) -> None:
    from llama_index.vector_stores.treehop import TreehopEmbedding

    from treehop_test_doubles import BagOfWordsEmbedder

    with_li = TreehopVectorStore(embed_model=embed_model, tagger=None)
    plain = TreehopVectorStore(Treehop(embedder=BagOfWordsEmbedder(), tagger=None))
    try:
        assert with_li.embed_model is embed_model
        wrapped = plain.embed_model
        assert isinstance(wrapped, TreehopEmbedding) and plain.embed_model is wrapped
        # The wrapped embedder gives LlamaIndex exactly treehop's vectors.
        bow = BagOfWordsEmbedder()
        assert wrapped.get_query_embedding("oauth tokens") == pytest.approx(
            bow.embed_query("oauth tokens").ravel().tolist()
        )
        index = VectorStoreIndex.from_documents(
            [Document(text="oauth tokens expire", id_="a"), Document(text="backups", id_="b")],
            storage_context=StorageContext.from_defaults(vector_store=plain),
            embed_model=wrapped,
        )
        [hit] = index.as_retriever(similarity_top_k=1).retrieve("when do oauth tokens expire")
        assert hit.node.ref_doc_id == "a"
    finally:
        with_li.close()
        assert isinstance(plain.client, Treehop)
        plain.client.close()


def test_query_restricted_to_doc_and_node_ids(
    vector_store: TreehopVectorStore, node_embeddings: list[TextNode]
) -> None:
    vector_store.add(node_embeddings)
    by_doc = vector_store.query(q("lorem ipsum", k=10, doc_ids=["test-1", "test-2"]))
    assert set(by_doc.ids or []) == {"c3d1e1dd", "c3ew11cd"}
    by_node = vector_store.query(q("lorem ipsum", k=10, node_ids=["0b31ae71"]))
    assert by_node.ids == ["0b31ae71"]
    hybrid = vector_store.query(q("hotel winter", k=1, mode=VectorStoreQueryMode.HYBRID, alpha=0.5))
    assert hybrid.ids == ["c3ew11cd"]
