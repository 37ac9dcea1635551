"""What a LangChain / LlamaIndex user met on stop 67's main and the docs now say (helper usage79).

- ``TreehopVectorStore`` (LangChain's and LlamaIndex's) opened on an index ``treehop index`` /
  ``add_resource`` wrote shows the metadata those stored (``name``, ``source_path``) and,
  since helper leftovers71d, the ``source`` / ``file_name`` / ``file_path`` the retrievers
  over the same index show (the store's own records stay exactly as added), its filters
  reading those values.
- The client's ``find()`` applies a filter on a field no node has as given (an empty result),
  where the CLI, the MCP server and the retrievers refuse it. Documented in README, pinned.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

from langchain_treehop import TreehopRetriever, TreehopVectorStore
from llama_index.retrievers.treehop import TreehopRetriever as LITreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore as LITreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

ROOT = Path(__file__).resolve().parents[1]
Q = "irw prints the button names"


def _client(tmp_path: Path) -> Treehop:
    docs = tmp_path / "lirc"
    docs.mkdir()
    (docs / "irw.html").write_text(
        "<html><body><h1>irw</h1><p>irw prints the button names lircd decodes.</p></body></html>"
    )
    (docs / "irsend.html").write_text(
        "<html><body><h1>irsend</h1><p>irsend sends infrared commands.</p></body></html>"
    )
    client = Treehop(None, embedder=BagOfWordsEmbedder())
    client.add_resource(str(docs), target_uri="viking://resources/lirc")
    return client


def test_the_langchain_store_over_an_ingested_folder_shows_what_was_stored(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        store = TreehopVectorStore(client)
        doc = store.similarity_search(Q, k=1)[0]
        assert doc.metadata["source_path"] == "irw.html"
        assert doc.metadata["source"] == "irw.html"  # (leftovers71d: as the retriever)
        got = store.similarity_search(Q, k=2, filter={"source": "irsend.html"})
        assert {d.metadata["source"] for d in got} == {"irsend.html"}
        got = store.similarity_search(Q, k=2, filter={"source_path": "irsend.html"})
        assert {d.metadata["source_path"] for d in got} == {"irsend.html"}
        shown = TreehopRetriever(client=client, k=1).invoke(Q, filter={"source": "irw.html"})
        assert shown[0].metadata["source"] == "irw.html"


def test_the_llamaindex_store_over_an_ingested_folder_shows_what_was_stored(
    tmp_path: Path,
) -> None:
    with _client(tmp_path) as client:
        store = LITreehopVectorStore(client)
        index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
        node = index.as_retriever(similarity_top_k=1).retrieve(Q)[0].node
        assert node.metadata["source_path"] == "irw.html"
        assert node.metadata["file_name"] == "irw.html"  # (leftovers71d: as the retriever)
        by_name = MetadataFilters(filters=[MetadataFilter(key="file_name", value="irw.html")])
        got = index.as_retriever(filters=by_name).retrieve(Q)
        assert [n.node.metadata["file_path"] for n in got] == ["irw.html"]
        hit = LITreehopRetriever(client, filters=by_name, similarity_top_k=1).retrieve(Q)[0]
        assert hit.node.metadata["file_name"] == "irw.html"


def test_the_clients_find_takes_an_unknown_field_as_given(tmp_path: Path) -> None:
    typo = {"op": "must", "field": "sorce_path", "conds": ["irw.html"]}
    with _client(tmp_path) as client:
        assert len(client.find(Q, filter=typo)) == 0
        assert len(client.find(Q, tags=["no-such-tag"])) == 0
        with pytest.raises(InvalidFilterError, match="no stored node has metadata field"):
            TreehopRetriever(client=client).invoke(Q, metadata_filter=typo)


def test_the_docs_say_it() -> None:
    readme = " ".join((ROOT / "README.md").read_text().split())
    langchain = " ".join((ROOT / "docs" / "langchain.md").read_text().split())
    llamaindex = " ".join((ROOT / "docs" / "llamaindex.md").read_text().split())
    assert "a field or tag no stored node has (a typo) matches nothing" in readme
    assert "'2020' is text: give the number 2020" in langchain
    assert "a call's filter that cannot be read is the `InvalidFilterError`" in langchain
    assert 'a `format_docs` reading `d.metadata["source"]` works over both' in langchain
    assert "'5000' is text: give the number 5000" in llamaindex
    assert "`file_name` / `file_path` beside them" in llamaindex
