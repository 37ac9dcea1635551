"""Framework users' first scripts, round five (bench/README.md, "(helper usage63)"): what a
LangChain / LlamaIndex user wrote against the core after the README's quick start, where
treehop answered with the wrong thing or a misleading error. Each test fails on 80e60c2."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from treehop import (
    AsyncTreehop,
    InvalidQueryError,
    MatchedContext,
    Treehop,
    TreehopError,
    UnsupportedUseError,
)
from treehop import assemble_context as assemble_hits

from treehop_test_doubles import BagOfWordsEmbedder, indexed_kb

DOCS = {
    "ops/deploy.md": "# Deploy\n\nRoll back a deployment with kubectl rollout undo.\n",
    "ops/backup.md": "# Backups\n\nBackups run nightly to an S3 bucket.\n",
    "sec/keys.md": "# Keys\n\nRotate API keys every 90 days; keys live in the vault.\n",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Treehop]:
    with indexed_kb(tmp_path, DOCS) as th:
        yield th


def test_assemble_context_takes_the_hits_the_pure_function_takes(client: Treehop) -> None:
    # 80e60c2: th.assemble_context(res.top(2), ...) was "query must be a string, got list",
    # though treehop.assemble_context(hits) takes a FindResult or a list of hits and the docs
    # say to pass what you already retrieved
    res = client.find("rotate keys, roll back a deployment, run backups", limit=3)
    hits = res.top(2)
    assert len(hits) == 2
    block = client.assemble_context(hits, max_tokens=300)
    assert block.uris == assemble_hits(hits, max_tokens=300).uris
    assert block.uris == [h.uri for h in hits]
    assert client.assemble_context(tuple(hits), max_tokens=300).text == block.text
    assert client.assemble_context([], max_tokens=300).uris == []
    # the same checks as a FindResult: no find arguments, only hits in the list
    with pytest.raises(InvalidQueryError, match="find arguments need a query string"):
        client.assemble_context(hits, max_tokens=300, limit=2)
    with pytest.raises(InvalidQueryError, match=r"hits\[1\] must be a MatchedContext, got str"):
        client.assemble_context([hits[0], "viking://resources/kb"], max_tokens=300)  # type: ignore[list-item]


def test_assemble_context_of_hits_with_a_session_records_them(client: Treehop) -> None:
    hits = client.find("rotate api keys vault", limit=2).top(1)
    first = client.assemble_context(hits, max_tokens=300, session_id="s1")
    assert first.uris == [hits[0].uri]
    again = client.assemble_context(hits, max_tokens=300, session_id="s1")
    assert again.uris == []  # already injected in this session


@pytest.mark.asyncio
async def test_async_assemble_context_takes_hits(tmp_path: Path) -> None:
    async with AsyncTreehop(tmp_path / "a", embedder=BagOfWordsEmbedder()) as th:
        await th.add_resource(
            "Rotate API keys every 90 days.", target_uri="viking://resources/k", is_text=True
        )
        hits = (await th.find("rotate keys", limit=1)).contexts()
        block = await th.assemble_context(hits, max_tokens=200)
        assert block.uris == ["viking://resources/k"]


def test_iterating_a_find_result_says_where_the_hits_are(client: Treehop) -> None:
    # 80e60c2: `for m in th.find(q): m.uri` iterated pydantic's (field, value) pairs and failed
    # with "'tuple' object has no attribute 'uri'" (a retriever's list habit)
    res = client.find("rotate api keys", limit=2)
    with pytest.raises(TypeError, match=r"res\.contexts\(\)"):
        for _ in res:
            pass
    with pytest.raises(TypeError, match=r"res\.contexts\(\)"):
        list(res)
    with pytest.raises(TreehopError):  # only treehop's errors escape; a TypeError too
        iter(res)
    with pytest.raises(UnsupportedUseError):
        dict(res)
    # what pydantic offers otherwise is unchanged
    assert res.model_dump()["resources"][0]["uri"] == res.contexts()[0].uri
    assert res == res.model_copy()
    assert "FindResult(" in repr(res) or "resources=" in repr(res)
    assert all(isinstance(m, MatchedContext) for m in res.contexts())


def test_langchain_store_takes_the_ids_its_client_s_retriever_returns(tmp_path: Path) -> None:
    # 80e60c2: TreehopRetriever(client=store.client) names a passage by its URI (Document.id),
    # and store.get_by_ids([doc.id]) answered [] and store.delete([doc.id]) deleted nothing,
    # silently (unknown ids are ignored): a VectorStoreRetriever's ids round-trip to its store
    from langchain_core.documents import Document

    from langchain_treehop import TreehopRetriever, TreehopVectorStore
    from langchain_treehop.embeddings import TreehopEmbeddings

    docs = [
        Document(page_content=text, metadata={"source": f"d{i}.md"}, id=f"id{i}")
        for i, text in enumerate(DOCS.values())
    ]
    store = TreehopVectorStore.from_documents(
        docs, TreehopEmbeddings(BagOfWordsEmbedder()), path=str(tmp_path / "lc")
    )
    try:
        hit = TreehopRetriever(client=store.client, k=1).invoke("rotate api keys vault")[0]
        assert hit.id is not None and hit.id.startswith("viking://")
        got = store.get_by_ids([hit.id])
        assert [d.id for d in got] == ["id2"] and got[0].page_content == docs[2].page_content
        # the store's own id and the URI of the same passage: one document
        assert [d.id for d in store.get_by_ids(["id2", hit.id])] == ["id2"]
        # a URI outside the store, of no passage, or malformed: unknown, ignored as before
        outside = ["viking://resources/elsewhere", "viking://resources/../x", "viking://~/memories"]
        assert store.get_by_ids(outside) == []
        store.delete([hit.id])
        assert store.get_by_ids(["id2"]) == []
        assert [d.id for d in store.get_by_ids(["id0", "id1"])] == ["id0", "id1"]
    finally:
        store.close()


def test_llama_index_store_takes_the_node_ids_its_client_s_retriever_returns(
    tmp_path: Path,
) -> None:
    from llama_index.core.schema import TextNode

    from llama_index.retrievers.treehop import TreehopRetriever
    from llama_index.vector_stores.treehop import TreehopVectorStore

    client = Treehop(tmp_path / "li", embedder=BagOfWordsEmbedder(), reader_processes=0)
    store = TreehopVectorStore(client)
    nodes = [TextNode(text=text, id_=f"n{i}") for i, text in enumerate(DOCS.values())]
    for node in nodes:
        node.embedding = store.embed_model.get_text_embedding(node.text)
    store.add(nodes)
    try:
        hit = TreehopRetriever(store.client, similarity_top_k=1).retrieve("rotate api keys")[0]
        assert hit.node.node_id.startswith("viking://")
        assert [n.node_id for n in store.get_nodes([hit.node.node_id])] == ["n2"]
        store.delete_nodes([hit.node.node_id])
        assert store.get_nodes(["n2"]) == []
        assert [n.node_id for n in store.get_nodes(["n0", "n1"])] == ["n0", "n1"]
    finally:
        client.close()


def test_a_write_never_reads_an_id_as_another_passage_s_uri(tmp_path: Path) -> None:
    # the URI lookup is for reads and deletes only: a new passage whose id happens to be an
    # existing passage's URI is a new passage, and the existing one stays
    from langchain_treehop import TreehopVectorStore
    from langchain_treehop.embeddings import TreehopEmbeddings

    store = TreehopVectorStore.from_texts(
        ["Rotate API keys every 90 days."],
        TreehopEmbeddings(BagOfWordsEmbedder()),
        ids=["keys"],
        path=str(tmp_path / "w"),
    )
    try:
        uri = store.client.find("rotate keys", limit=1).contexts()[0].uri
        store.add_texts(["Backups run nightly."], ids=[uri])
        assert [d.page_content for d in store.get_by_ids(["keys"])] == [
            "Rotate API keys every 90 days."
        ]
        assert len(store.client.find("rotate keys backups", limit=5).contexts()) == 2
    finally:
        store.close()


def test_an_unknown_search_argument_names_the_methods_own_parameters(tmp_path: Path) -> None:
    # 80e60c2: max_marginal_relevance_search(q, fetchk=3) listed dense_weight ... target_uri,
    # without the fetch_k the user meant to write
    from langchain_treehop import TreehopVectorStore
    from langchain_treehop.embeddings import TreehopEmbeddings

    store = TreehopVectorStore.from_texts(
        ["Rotate API keys every 90 days."],
        TreehopEmbeddings(BagOfWordsEmbedder()),
        path=str(tmp_path / "m"),
    )
    try:
        with pytest.raises(InvalidQueryError, match=r"\['fetchk'\].*fetch_k, lambda_mult"):
            store.max_marginal_relevance_search("keys", k=1, fetchk=3)
        with pytest.raises(InvalidQueryError, match=r"\['kk'\].*own k"):
            store.as_retriever(search_kwargs={"kk": 1}).invoke("keys")
    finally:
        store.close()
