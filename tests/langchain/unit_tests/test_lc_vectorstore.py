"""TreehopVectorStore beyond LangChain's standard suite: loader/splitter output, ordering,
upserts, MMR, the retriever search types, filters and the async path."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import VectorStoreRetriever

from langchain_treehop import LangChainEmbedder, TreehopVectorStore
from treehop import AsyncTreehop, Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError, InvalidURIError

from lc_helpers import SlowAsyncEmbeddings, WordHashEmbeddings


def pages(source: str = "/home/alice/project/docs/guide.pdf") -> list[Document]:
    """What PyPDFLoader gives for a 3-page PDF, deliberately out of order."""
    texts = {
        2: "Page three: rotating the signing keys every ninety days.",
        0: "Page one: the gateway validates OAuth tokens on every request.",
        1: "Page two: expired tokens are refused with a 401 response.",
    }
    return [
        Document(page_content=t, metadata={"source": source, "page": p, "total_pages": 3})
        for p, t in texts.items()
    ]


@pytest.fixture
def store(embeddings: WordHashEmbeddings) -> Any:
    s = TreehopVectorStore(embedding=embeddings, tagger=None)
    yield s
    s.close()


def test_pages_of_one_source_become_ordered_chunks_of_one_file(store: TreehopVectorStore) -> None:
    ids = store.add_documents(pages())
    client = store.client
    assert isinstance(client, Treehop)
    # No machine path in the tree: the source is made relative (one file: its name).
    kids = client.ls("viking://resources/guide.pdf")
    assert [e.uri for e in kids] == [f"viking://resources/guide.pdf#chunk-{i}" for i in range(3)]
    assert client.read("viking://resources/guide.pdf").startswith("Page one")
    assert "Page three" in client.read("viking://resources/guide.pdf").split("\n\n")[2]
    # Ids come back with exactly what was added (metadata untouched, no bookkeeping keys).
    got = store.get_by_ids(ids)
    assert [d.page_content for d in got] == [d.page_content for d in pages()]
    assert [d.metadata for d in got] == [d.metadata for d in pages()]
    assert [d.id for d in got] == ids


def test_splitter_chunks_order_by_page_then_start_index(store: TreehopVectorStore) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0, add_start_index=True)
    chunks = splitter.split_documents(pages())
    assert len(chunks) > 3
    store.add_documents(list(reversed(chunks)))
    assert isinstance(store.client, Treehop)
    order = [
        (n.metadata["page"], n.metadata["start_index"])
        for n in (store.client.stat(e.uri) for e in store.client.ls("viking://resources/guide.pdf"))
    ]
    assert order == sorted(order)


def test_upsert_keeps_order_and_reuses_unchanged_vectors(
    store: TreehopVectorStore, embeddings: WordHashEmbeddings
) -> None:
    ids = store.add_documents(pages(), ids=["p3", "p1", "p2"])
    calls = embeddings.sync_calls
    # Same texts again: nothing is re-embedded (the file overview is unchanged too).
    assert store.add_documents(pages(), ids=["p3", "p1", "p2"]) == ids
    assert embeddings.sync_calls == calls
    # A new page between two others is inserted in page order.
    extra = Document(
        page_content="Page one and a half: refresh tokens.",
        metadata={"source": "/home/alice/project/docs/guide.pdf", "page": 0.5},
    )
    store.add_documents([extra], ids=["p1b"])
    assert isinstance(store.client, Treehop)
    ids_in_order = [
        store.client.stat(e.uri).metadata["treehop_id"]
        for e in store.client.ls("viking://resources/guide.pdf")
    ]
    assert ids_in_order == ["p1", "p1b", "p2", "p3"]
    # Replacing one page changes only that page.
    store.add_documents(
        [Document(page_content="Page two, revised: 401 for expired tokens.", metadata={})],
        ids=["p2"],
    )
    [doc] = store.get_by_ids(["p2"])
    assert doc.page_content.startswith("Page two, revised") and doc.metadata == {}
    assert [d.id for d in store.get_by_ids(["p1", "p1b", "p3"])] == ["p1", "p1b", "p3"]


def test_delete_renumbers_and_prunes(store: TreehopVectorStore) -> None:
    store.add_documents(pages(), ids=["p3", "p1", "p2"])
    store.delete(["p1"])
    assert isinstance(store.client, Treehop)
    kids = store.client.ls("viking://resources/guide.pdf")
    assert [store.client.stat(e.uri).metadata["treehop_id"] for e in kids] == ["p2", "p3"]
    assert [e.uri.rsplit("#", 1)[1] for e in kids] == ["chunk-0", "chunk-1"]
    store.delete(["p2", "p3", "unknown"])
    assert store.similarity_search("tokens", k=3) == []
    assert [e.uri for e in store.client.ls("viking://resources")] == []


def test_documents_without_source_or_id_get_stable_ids(store: TreehopVectorStore) -> None:
    doc = Document(page_content="tokens are validated by the gateway", metadata={"lang": "en"})
    first = store.add_documents([doc])
    assert store.add_documents([doc]) == first  # an upsert, not a duplicate
    assert len(store.similarity_search("gateway tokens", k=10)) == 1
    odd = store.add_documents([doc], ids=["a/b#c d"])  # any string is a valid id
    assert store.get_by_ids(odd)[0].id == "a/b#c d"


def test_relative_and_climbing_sources(store: TreehopVectorStore) -> None:
    docs = [
        Document(page_content="cli usage", metadata={"source": "/srv/x/docs/cli.md"}),
        Document(page_content="api usage", metadata={"source": "/srv/x/docs/api/rest.md"}),
        Document(page_content="notes", metadata={"source": "../shared/notes.md"}),
    ]
    store.add_documents(docs)
    assert isinstance(store.client, Treehop)
    tree = store.client.tree("viking://resources", depth=2)
    names = {c["uri"] for c in tree["children"]}
    assert names == {
        "viking://resources/cli.md",
        "viking://resources/api",
        "viking://resources/notes.md",
    }


def test_source_colliding_with_a_document_is_refused_before_writing(
    store: TreehopVectorStore,
) -> None:
    store.add_texts(["a stand-alone note"], ids=["guide.pdf"])
    with pytest.raises(InvalidURIError):
        store.add_documents(pages())
    assert len(store.similarity_search("tokens", k=10)) == 1


def test_scores_filters_and_scope(store: TreehopVectorStore) -> None:
    store.add_documents(pages())
    store.add_documents(
        [Document(page_content="OAuth tokens in the mobile app", metadata={"source": "app.md"})]
    )
    pairs = store.similarity_search_with_score("OAuth tokens request", k=4)
    scores = [s for _, s in pairs]
    assert scores == sorted(scores, reverse=True) and len(pairs) == 4
    only_pdf = store.similarity_search("OAuth tokens", k=4, filter={"page": {"$gte": 1}})
    assert {d.metadata["page"] for d in only_pdf} == {1, 2}
    in_list = store.similarity_search("tokens", k=4, filter={"source": {"$in": ["app.md"]}})
    assert [d.metadata["source"] for d in in_list] == ["app.md"]
    scoped = store.similarity_search("tokens", k=4, target_uri="guide.pdf")
    assert len(scoped) == 3 and all(d.metadata.get("page") is not None for d in scoped)
    by_vector = store.similarity_search_by_vector(
        LangChainEmbedder(WordHashEmbeddings()).embed_query("OAuth tokens request").tolist(), k=1
    )
    # A vector carries no words: it ranks like the text search without the lexical part.
    dense_text = store.similarity_search("OAuth tokens request", k=1, dense_weight=1.0)
    assert by_vector[0].page_content == dense_text[0].page_content


def test_bad_filters_are_typed_errors(store: TreehopVectorStore) -> None:
    store.add_documents(pages())
    with pytest.raises(InvalidFilterError, match="sorce"):
        store.similarity_search("tokens", filter={"sorce": "x"})
    with pytest.raises(InvalidFilterError, match="provenance"):
        store.similarity_search("tokens", filter={"score": {"$gt": 0.5}})
    with pytest.raises(InvalidFilterError, match="unknown operator"):
        store.similarity_search("tokens", filter={"page": {"$regex": "1"}})
    with pytest.raises(InvalidQueryError, match="unknown search argument"):
        store.similarity_search("tokens", filters={"page": 1})


def test_mmr_prefers_diverse_passages(store: TreehopVectorStore) -> None:
    texts = [
        "oauth tokens expire after one hour",
        "oauth tokens expire after one hour exactly",
        "signing keys rotate every ninety days oauth",
    ]
    store.add_texts(texts, ids=["a", "b", "c"])
    plain = store.similarity_search("oauth tokens expire", k=2)
    assert {d.id for d in plain} == {"a", "b"}
    diverse = store.max_marginal_relevance_search(
        "oauth tokens expire", k=2, fetch_k=3, lambda_mult=0.1
    )
    assert {d.id for d in diverse} == {"a", "c"} or {d.id for d in diverse} == {"b", "c"}


def test_as_retriever_search_types(store: TreehopVectorStore) -> None:
    store.add_documents(pages())
    sim = store.as_retriever(search_kwargs={"k": 2, "filter": {"page": 0}})
    assert isinstance(sim, VectorStoreRetriever)
    assert [d.metadata["page"] for d in sim.invoke("tokens")] == [0]
    mmr = store.as_retriever(search_type="mmr", search_kwargs={"k": 2, "fetch_k": 3})
    assert len(mmr.invoke("tokens")) == 2
    strict = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.99, "k": 3}
    )
    assert strict.invoke("completely unrelated words about gardening") == []
    loose = store.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.0, "k": 3}
    )
    assert len(loose.invoke("OAuth tokens validated request")) >= 1


def test_tags_scope_searches(embeddings: WordHashEmbeddings) -> None:
    store = TreehopVectorStore(embedding=embeddings, tagger=None)
    try:
        store.add_texts(["tokens for the web"], ids=["w"], tags=["web"])
        store.add_texts(["tokens for mobile"], ids=["m"], tags=["mobile"])
        assert [d.id for d in store.similarity_search("tokens", k=5, tags=["mobile"])] == ["m"]
        r = store.as_retriever(search_kwargs={"tags": ["web"]})
        assert [d.id for d in r.invoke("tokens")] == ["w"]
    finally:
        store.close()


def test_directories_only_on_request(store: TreehopVectorStore) -> None:
    store.add_documents(pages())
    leaves = store.similarity_search("tokens", k=10)
    assert len(leaves) == 3
    both = store.similarity_search("tokens", k=10, include_directories=True)
    assert any(d.id == "viking://resources/guide.pdf" for d in both)


async def test_async_twins_await_the_native_client() -> None:
    slow = SlowAsyncEmbeddings(delay_s=0.0)
    client = AsyncTreehop(None, embedder=LangChainEmbedder(slow), tagger=None)
    store = TreehopVectorStore(client=client)
    ids = await store.aadd_documents(pages())
    slow.forbid_sync_query = True
    docs = await store.asimilarity_search("OAuth tokens request", k=2)
    assert docs[0].page_content.startswith("Page one")
    assert await store.amax_marginal_relevance_search("tokens", k=2, fetch_k=3)
    assert [d.id for d in await store.aget_by_ids(ids)] == ids
    await store.adelete(ids[:1])
    assert len(await store.aget_by_ids(ids)) == 2
    assert slow.sync_calls == 0


def test_from_texts_and_from_documents(embeddings: WordHashEmbeddings) -> None:
    s1 = TreehopVectorStore.from_texts(["alpha beta", "gamma"], embeddings, ids=["1", "2"])
    s2 = TreehopVectorStore.from_documents(pages(), embeddings, base_uri="viking://resources/kb")
    try:
        assert [d.id for d in s1.similarity_search("alpha", k=1)] == ["1"]
        assert s2.base_uri == "viking://resources/kb"
        assert len(s2.similarity_search("tokens", k=5)) == 3
    finally:
        s1.close()
        s2.close()


async def test_afrom_texts(embeddings: WordHashEmbeddings) -> None:
    s = await TreehopVectorStore.afrom_texts(["alpha beta", "gamma"], embeddings, ids=["1", "2"])
    try:
        assert [d.id for d in await s.asimilarity_search("gamma", k=1)] == ["2"]
    finally:
        s.close()


def test_embedding_must_match_the_client(embeddings: WordHashEmbeddings) -> None:
    client = Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None)
    try:
        assert TreehopVectorStore(client=client).embeddings is embeddings
        with pytest.raises(InvalidQueryError, match="vector space"):
            TreehopVectorStore(WordHashEmbeddings(), client=client)
    finally:
        client.close()
