"""Every document a treehop retriever returns names where it came from (helper leftovers71b).

A text added with no ``name=`` (and a memory, a directory) stored no ``source`` /
``source_path``, so LangChain's ``format_docs`` idiom (``d.metadata["source"]``) and
LlamaIndex code reading ``node.metadata["file_name"]`` raised ``KeyError`` over an index
holding one. Now such a node shows its URI there. Real clients, real retrievers, offline
word-hash embeddings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode

from llama_index.retrievers.treehop import TreehopRetriever as LlamaRetriever
from treehop import Treehop

sys.path.insert(0, str(Path(__file__).resolve().parent / "langchain"))
from langchain_treehop import LangChainEmbedder, TreehopRetriever

from lc_helpers import WordHashEmbeddings

KEYS = "viking://resources/notes/keys.md"
BARE = "viking://resources/notes/rotation"


@pytest.fixture
def client() -> Iterator[Treehop]:
    c = Treehop(None, embedder=LangChainEmbedder(WordHashEmbeddings()), tagger=None)
    c.add_resource("Rotate the signing keys every ninety days.", is_text=True, target_uri=KEYS)
    c.add_resource("Key rotation runs from cron on the vault host.", is_text=True, target_uri=BARE)
    c.add_resource("Keys are stored in the vault.", is_text=True, name="vault.md")
    yield c
    c.close()


def format_docs(docs: list[Document]) -> str:
    """LangChain's RAG tutorial idiom."""
    return "\n\n".join(f"[{d.metadata['source']}] {d.page_content}" for d in docs)


def test_langchain_retriever_documents_all_carry_a_source(client: Treehop) -> None:
    docs = TreehopRetriever(client=client, k=10).invoke("signing keys rotation vault")
    by_uri = {d.metadata["uri"]: d for d in docs}
    assert {KEYS, BARE} <= set(by_uri)
    text = format_docs(docs)  # KeyError before the change
    assert f"[{KEYS}] Rotate the signing keys" in text
    assert by_uri[KEYS].metadata["source"] == KEYS
    assert by_uri[BARE].metadata["source"] == BARE
    # control: a text given a name shows that name, not its URI
    named = [d for d in docs if d.metadata.get("name") == "vault.md"]
    assert named and named[0].metadata["source"] == "vault.md"
    assert all(d.metadata["source"] for d in docs)


async def test_langchain_async_retriever_the_same(client: Treehop) -> None:
    docs = await TreehopRetriever(client=client, k=10).ainvoke("signing keys rotation")
    assert {d.metadata["source"] for d in docs} >= {KEYS, BARE}


def test_a_filter_on_source_reads_a_uri_only_node_as_present(client: Treehop) -> None:
    """The shown URI is a value to ``$exists``, and a value test reads it (helper
    leftovers72b: ``source == <the URI shown>`` selected nothing before; ``target_uri``
    still selects by it too)."""
    q = "signing keys rotation vault"
    shown = {d.metadata["source"] for d in TreehopRetriever(client=client, k=10).invoke(q)}
    assert {KEYS, BARE, "vault.md"} <= shown

    def found(spec: dict[str, object]) -> set[str]:
        r = TreehopRetriever(client=client, k=10, metadata_filter=spec)
        return {d.metadata["source"] for d in r.invoke(q)}

    assert found({"source": {"$exists": True}}) == shown
    assert found({"source": {"$exists": False}}) == set()
    assert found({"source": {"$ne": "vault.md"}}) == shown - {"vault.md"}
    assert found({"source": KEYS}) == {KEYS}
    scoped = TreehopRetriever(client=client, k=10, target_uri=KEYS).invoke("signing keys")
    assert [d.metadata["source"] for d in scoped] == [KEYS]


def test_llamaindex_is_empty_reads_the_shown_uri_as_present(client: Treehop) -> None:
    from llama_index.core.vector_stores import FilterOperator, MetadataFilter, MetadataFilters

    q = "signing keys rotation vault"
    every = LlamaRetriever(client=client, similarity_top_k=10).retrieve(q)
    for key in ("file_name", "file_path"):
        for op, want in ((FilterOperator.IS_EMPTY, 0), (FilterOperator.NE, len(every))):
            f = MetadataFilters(filters=[MetadataFilter(key=key, value="zz", operator=op)])
            hits = LlamaRetriever(client=client, similarity_top_k=10, filters=f).retrieve(q)
            assert len(hits) == want, (key, op)


def test_llamaindex_retriever_nodes_all_carry_file_name_and_path(client: Treehop) -> None:
    hits = LlamaRetriever(client=client, similarity_top_k=10).retrieve("signing keys rotation")
    by_uri = {h.node.metadata["uri"]: h.node for h in hits}
    assert {KEYS, BARE} <= set(by_uri)
    assert by_uri[KEYS].metadata["file_path"] == KEYS
    assert by_uri[KEYS].metadata["file_name"] == "keys.md"
    assert by_uri[BARE].metadata["file_name"] == "rotation"
    for node in by_uri.values():
        assert node.metadata["file_name"] and node.metadata["file_path"]
    # the URI stays out of the LLM's text, as a stored file's shown keys do
    llm = by_uri[KEYS].get_content(metadata_mode=MetadataMode.LLM)
    assert "file_path" not in llm and "file_name" not in llm
    named = [n for n in by_uri.values() if n.metadata.get("name") == "vault.md"]
    assert named and named[0].metadata["file_name"] == "vault.md"
