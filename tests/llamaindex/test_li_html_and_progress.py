"""HTML pages read by ``SimpleDirectoryReader`` are stored as their text (treehop's own HTML
conversion), in ``add_documents`` and in the vector store; ``show_progress`` on the LlamaIndex
ingest paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
from llama_index.core.schema import Document

from llama_index.retrievers.treehop import LlamaIndexEmbedder, aadd_documents, add_documents
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

PAGE = """<!DOCTYPE html>
<html><head><title>5.7. Privileges</title><style>body { color: red }</style></head><body>
<div class="navheader"><table width="100%" summary="Navigation header">
<tr><th colspan="3" align="center">5.7. Privileges</th></tr>
<tr><td align="left"><a accesskey="p" href="ddl-rowsecurity.html">Prev</a></td>
<td align="left"><a accesskey="u" href="ddl.html">Up</a></td>
<th align="center">Chapter 5. Data Definition</th>
<td align="right"><a accesskey="h" href="index.html">Home</a></td>
<td align="right"><a accesskey="n" href="ddl-schemas.html">Next</a></td></tr></table></div>
<div class="sect1"><h2 class="title">5.7. Privileges</h2>
<p>When an object is created, it is assigned an owner. The owner is normally the role that
executed the creation statement. To allow other roles to use it, privileges must be granted
with the <code>GRANT</code> command.</p>
<h3>Revoking</h3><p>The <code>REVOKE</code> command takes a privilege away again.</p>
</div><script>var tracking = 1;</script></body></html>
"""
MARKUP = ("<div", "<p>", "<code>", "navheader", "accesskey", "tracking", "color: red")


@pytest.fixture
def html_dir(tmp_path: Path) -> Path:
    d = tmp_path / "html"
    d.mkdir()
    (d / "ddl-priv.html").write_text(PAGE, encoding="utf-8")
    (d / "notes.txt").write_text("Plain notes: <b> stays as typed here.\n", encoding="utf-8")
    return d


def _clean(text: str) -> None:
    for mark in MARKUP:
        assert mark not in text, (mark, text)
    assert "Prev" not in text and "Home" not in text


def test_add_documents_converts_simple_directory_reader_html(
    html_dir: Path, word_embedding: WordHashEmbedding
) -> None:
    docs = SimpleDirectoryReader(str(html_dir)).load_data()
    assert any("<div" in d.text for d in docs)  # the reader hands over the markup
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as client:
        uris = add_documents(client, docs)
        page = next(u for u in uris if u.endswith("ddl-priv.html"))
        text = client.read(page)
        _clean(text)
        assert "When an object is created, it is assigned an owner." in text
        assert "GRANT" in text and "Revoking" in text
        node = client.store.get([client.aio.resolve(page)])[0]
        assert node is not None and "Privileges" in node.abstract
        _clean(node.abstract)
        _clean(" ".join(node.overview.split()))
        # a document that is not HTML is stored as given
        notes = next(u for u in uris if u.endswith("notes.txt"))
        assert "<b> stays as typed" in client.read(notes)
        hit = client.find("who owns a created object", limit=1).contexts()[0]
        assert hit.uri.startswith(page)
        _clean(hit.text)


def test_vector_store_stores_html_nodes_as_text(
    html_dir: Path, word_embedding: WordHashEmbedding
) -> None:
    docs = SimpleDirectoryReader(str(html_dir), required_exts=[".html"]).load_data()
    assert docs[0].metadata["file_type"] == "text/html"
    store = TreehopVectorStore(embed_model=word_embedding, tagger=None)
    try:
        index = VectorStoreIndex.from_documents(
            docs,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=word_embedding,
        )
        nodes = index.as_retriever(similarity_top_k=3).retrieve("owner of a created object")
        assert nodes
        for n in nodes:
            _clean(n.node.get_content())
        assert any("assigned an owner" in n.node.get_content() for n in nodes)
        # the stored vector is the converted text's (the markup's vector was dropped)
        stored = store.get_nodes(node_ids=[nodes[0].node.node_id])[0]
        _clean(stored.get_content())
    finally:
        store.close()


def test_html_named_by_metadata_only_and_plain_text_untouched(
    word_embedding: WordHashEmbedding,
) -> None:
    fragment = '<div class="sect1"><h2>Schemas</h2><p>A database contains schemas.</p></div>'
    docs = [
        Document(text=fragment, metadata={"file_name": "schemas.html"}, id_="s"),
        # markup-like text of a page that is not HTML: kept verbatim
        Document(text="Use <div> for blocks.", metadata={"file_name": "tips.md"}, id_="t"),
    ]
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as client:
        uris = add_documents(client, docs)
        assert client.read(uris[0]).strip().startswith("## Schemas")
        assert "<h2>" not in client.read(uris[0])
        assert client.read(uris[1]).strip() == "Use <div> for blocks."


def test_add_documents_and_store_show_progress(
    word_embedding: WordHashEmbedding, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = [Document(text=f"Page {i} about topic {i}.", id_=f"p{i}") for i in range(3)]
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as client:
        add_documents(client, docs, show_progress=True)
        assert "treehop: documents 3/3 (100%)" in capsys.readouterr().err
    store = TreehopVectorStore(embed_model=word_embedding, tagger=None)
    try:
        from llama_index.core.schema import TextNode

        calls: list[tuple[str, int, int]] = []
        store.add(
            [TextNode(text=f"node {i}", id_=f"n{i}") for i in range(5)],
            show_progress=lambda *a: calls.append(a),
        )
        assert calls == [("embed", 5, 5)]  # nodes without an embedding: embedded here
        store.add([TextNode(text="more", id_="m")], show_progress=True)
        assert "treehop: embed 1/1 (100%)" in capsys.readouterr().err
    finally:
        store.close()


async def test_aadd_documents_show_progress(word_embedding: WordHashEmbedding) -> None:
    docs = [Document(text=f"Async page {i}.", id_=f"a{i}") for i in range(2)]
    calls: list[tuple[str, int, int]] = []
    with Treehop(embedder=LlamaIndexEmbedder(word_embedding), tagger=None) as client:
        await aadd_documents(client, docs, show_progress=lambda *a: calls.append(a))
    assert calls[-1] == ("documents", 2, 2)
