"""The offline default in LangChain: ``from_documents`` / ``from_texts`` without an embedding,
``TreehopEmbeddings`` (the bundled MiniLM as a LangChain ``Embeddings``), and
``show_progress`` on every LangChain ingest path."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_treehop import (
    TreehopEmbeddings,
    TreehopVectorStore,
    aadd_documents,
    add_documents,
)
from treehop import Treehop
from treehop import integration_kit as kit
from treehop.embedders.base import BaseEmbedder
from treehop.errors import EmbeddingError, InvalidQueryError

from lc_helpers import WordHashEmbeddings

DOCS = [
    Document(
        page_content="Rotate the signing keys every ninety days.", metadata={"source": "keys.md"}
    ),
    Document(page_content="Deploy with a blue-green rollout.", metadata={"source": "deploy.md"}),
]


def test_from_documents_without_an_embedding_uses_the_offline_default(
    tmp_path: Path, minilm: BaseEmbedder
) -> None:
    # LangChain's base class made ``embedding`` a required positional argument: this raised
    # TypeError, and the offline default was reachable only as from_documents(docs, None).
    store = TreehopVectorStore.from_documents(DOCS, path=tmp_path / "idx")
    try:
        assert store.aclient.embedder.name == minilm.name  # the bundled model, by name
        hits = store.similarity_search("how often are keys rotated", k=1)
        assert hits[0].metadata["source"] == "keys.md"
        assert isinstance(store.embeddings, TreehopEmbeddings)
    finally:
        store.close()
    # Reopened the same way: the same vector space (no "another embedder" refusal).
    again = TreehopVectorStore(path=tmp_path / "idx")
    try:
        assert again.similarity_search("blue-green", k=1)[0].metadata["source"] == "deploy.md"
    finally:
        again.close()


async def test_afrom_documents_and_from_texts_without_an_embedding() -> None:
    store = await TreehopVectorStore.afrom_documents(
        [
            Document(page_content=d.page_content, metadata=d.metadata, id=f"d{i}")
            for i, d in enumerate(DOCS)
        ]
    )
    try:
        assert {d.id for d in await store.aget_by_ids(["d0", "d1"])} == {"d0", "d1"}
    finally:
        store.close()
    texts = TreehopVectorStore.from_texts(["alpha", "beta"], ids=["a", "b"])
    try:
        assert [d.id for d in texts.get_by_ids(["b"])] == ["b"]
    finally:
        texts.close()


def test_positional_embedding_still_works(embeddings: WordHashEmbeddings) -> None:
    store = TreehopVectorStore.from_documents(DOCS, embeddings, tagger=None)
    try:
        assert store.embeddings is embeddings
        assert store.aclient.embedder.name.startswith("langchain:")
    finally:
        store.close()
    store = TreehopVectorStore.from_documents(DOCS, embedding=embeddings, tagger=None)
    try:
        assert store.embeddings is embeddings
    finally:
        store.close()


def test_treehop_embeddings_is_the_bundled_minilm(minilm: BaseEmbedder) -> None:
    emb = TreehopEmbeddings()
    assert isinstance(emb, Embeddings)
    rows = emb.embed_documents(["signing keys", "blue-green rollout"])
    assert len(rows) == 2 and all(isinstance(x, float) for x in rows[0])
    direct = np.asarray(minilm.embed(["signing keys", "blue-green rollout"]))
    np.testing.assert_allclose(np.asarray(rows), direct, atol=1e-5)
    q = np.asarray(emb.embed_query("rotate keys"))
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-4
    assert float(q @ np.asarray(rows[0])) > float(q @ np.asarray(rows[1]))
    assert emb.embed_documents([]) == []
    assert emb.model == minilm.name
    with pytest.raises(EmbeddingError):
        emb.embed_documents("not a list")  # type: ignore[arg-type]
    with pytest.raises(EmbeddingError):
        TreehopEmbeddings(object())  # type: ignore[arg-type]


async def test_treehop_embeddings_async_matches_sync() -> None:
    emb = TreehopEmbeddings()
    sync_rows = emb.embed_documents(["tokens expire"])
    async_rows = await emb.aembed_documents(["tokens expire"])
    np.testing.assert_allclose(async_rows, sync_rows, atol=1e-6)
    np.testing.assert_allclose(
        await emb.aembed_query("tokens"), emb.embed_query("tokens"), atol=1e-6
    )


def test_treehop_embeddings_given_is_the_default_index(tmp_path: Path) -> None:
    # embedding=TreehopEmbeddings() stores the embedder's own name: the index is the one a
    # store opened without an embedding writes, and a client on it is accepted.
    store = TreehopVectorStore.from_documents(DOCS, TreehopEmbeddings(), path=tmp_path / "i")
    name = store.aclient.embedder.name
    store.close()
    with Treehop(tmp_path / "i") as client:
        assert client.aio.embedder.name == name
        over = TreehopVectorStore(TreehopEmbeddings(), client=client)
        assert over.similarity_search("keys", k=1)[0].metadata["source"] == "keys.md"


# ------------------------------------------------------------------------------ progress


def _lines(buf: io.StringIO) -> list[str]:
    return [line for line in buf.getvalue().splitlines() if line.strip()]


def test_progress_reporter_plain_lines_and_callables() -> None:
    buf = io.StringIO()  # not a terminal: plain lines, never a bar's carriage returns
    with kit.progress_reporter(True, "treehop", stream=buf) as cb:
        assert cb is not None
        cb("embed", 64, 200)
        cb("embed", 128, 200)  # within 2 s of the last line: not printed
        cb("embed", 200, 200)  # the end of a stage is always printed
    lines = _lines(buf)
    assert lines[0].startswith("treehop: embed 64/200 (32%)")
    assert lines[-1].startswith("treehop: embed 200/200 (100%)")
    assert len(lines) == 2 and "\r" not in buf.getvalue()
    calls: list[tuple[str, int, int]] = []
    with kit.progress_reporter(lambda *a: calls.append(a), "x") as cb:
        assert cb is not None
        cb("embed", 1, 2)
    assert calls == [("embed", 1, 2)]
    with kit.progress_reporter(False, "x") as cb:
        assert cb is None
    with (
        pytest.raises(InvalidQueryError, match="show_progress"),
        kit.progress_reporter(
            "yes",
            "x",  # type: ignore[arg-type]
        ),
    ):
        pass


def test_vector_store_show_progress(
    embeddings: WordHashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    texts = [f"passage number {i} about topic {i % 7}" for i in range(150)]
    store = TreehopVectorStore(embeddings, tagger=None)
    try:
        store.add_texts(texts, show_progress=True)
        err = capsys.readouterr().err
        assert "treehop: embed 150/150 (100%)" in err
        calls: list[tuple[str, int, int]] = []
        store.add_texts(
            [f"another {t}" for t in texts[:70]], show_progress=lambda *a: calls.append(a)
        )
        # one call per batch of new texts (64), ending at the total
        assert calls == [("embed", 64, 70), ("embed", 70, 70)]
        # re-adding unchanged texts embeds nothing new
        calls.clear()
        store.add_texts(texts, show_progress=lambda *a: calls.append(a))
        assert calls == []
        with pytest.raises(InvalidQueryError, match="show_progress"):
            store.add_texts(["x"], show_progress="loud")
    finally:
        store.close()
    s2 = TreehopVectorStore.from_documents(DOCS, embeddings, tagger=None, show_progress=True)
    s2.close()
    assert "treehop: embed 2/2" in capsys.readouterr().err


async def test_add_documents_show_progress(
    embeddings: WordHashEmbeddings, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_treehop import LangChainEmbedder

    docs = [
        Document(page_content=f"Section {i} of the guide.", metadata={"source": f"g{i % 3}.md"})
        for i in range(6)
    ] + [Document(page_content="A note on its own.", metadata={"uri": "viking://resources/n"})]
    with Treehop(None, embedder=LangChainEmbedder(embeddings), tagger=None) as client:
        add_documents(client, docs, show_progress=True)
        err = capsys.readouterr().err
        # 3 files of 2 chunks each and one document: 7 records, all counted at the end
        assert "treehop: documents 7/7 (100%)" in err
        calls: list[tuple[str, int, int]] = []
        await aadd_documents(client, docs[:2], show_progress=lambda *a: calls.append(a))
        assert calls[-1] == ("documents", 2, 2)


def test_retriever_from_path_with_treehop_embeddings(tmp_path: Path) -> None:
    # An index built with the default opens with TreehopEmbeddings() as its embedding (it
    # was refused: the retriever wrapped it as another vector space).
    from langchain_treehop import TreehopRetriever

    TreehopVectorStore.from_documents(DOCS, path=tmp_path / "idx").close()
    retriever = TreehopRetriever.from_path(tmp_path / "idx", embedding=TreehopEmbeddings())
    docs = retriever.invoke("rotate signing keys")
    assert docs and docs[0].metadata["source"] == "keys.md"
