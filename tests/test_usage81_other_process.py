"""A long-lived vector store's reads by id see what another process committed.

helper usage81: two processes over one index folder (a LangChain app and a worker that
re-ingests), each holding a ``TreehopVectorStore(path=...)``: after the worker's upsert of
``a1``, the app's ``get_by_ids(["a1"])`` returned the old text, and after the worker's
``delete(["a1"])`` the deleted document, while the app's own ``similarity_search`` no longer
found it. Searches start with the generation check (docs/stores.md, "Consistency"); the
reads by id (``get_by_ids``, LlamaIndex's ``get_nodes``) did not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from langchain_core.documents import Document
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

from langchain_treehop import TreehopVectorStore as LCStore
from llama_index.vector_stores.treehop import TreehopVectorStore as LIStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder, run_script

_LC_WORKER = """
import sys
sys.path[:0] = {paths!r}
from langchain_core.documents import Document
from langchain_treehop import TreehopVectorStore
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
with Treehop({index!r}, embedder=BagOfWordsEmbedder()) as th:
    store = TreehopVectorStore(client=th)
    store.add_documents(
        [Document(page_content="Keys rotate every 30 days now.", metadata={{"source": "keys.md"}})],
        ids=["a1"],
    )
    store.delete(["b1"])
    store.add_documents(
        [Document(page_content="A new page on backups.", metadata={{"source": "ops/backup.md"}})],
        ids=["c1"],
    )
print("done")
"""


def test_a_langchain_stores_reads_by_id_see_another_processs_commits(tmp_path: Path) -> None:
    index = tmp_path / "idx"
    with Treehop(index, embedder=BagOfWordsEmbedder()) as th:
        store = LCStore(client=th)
        store.add_documents(
            [
                Document(page_content="Keys rotate every 90 days.", metadata={"source": "keys.md"}),
                Document(page_content="Deploys roll back with one command."),
            ],
            ids=["a1", "b1"],
        )
        assert [d.id for d in store.get_by_ids(["a1", "b1", "c1"])] == ["a1", "b1"]
        assert run_script(_LC_WORKER, index, tmp_path) == ["done"]
        # a scope the other process created, searched before any other call looked
        hits = store.similarity_search("backups", k=2, target_uri="ops")
        assert [d.id for d in hits] == ["c1"]
        got = {d.id: d.page_content for d in store.get_by_ids(["a1", "b1", "c1"])}
        assert got == {"a1": "Keys rotate every 30 days now.", "c1": "A new page on backups."}
        again = asyncio.run(store.aget_by_ids(["a1", "b1", "c1"]))
        assert {d.id: d.page_content for d in again} == got
        # (the search saw it before the fix too: the reads by id now agree with it)
        assert "b1" not in {d.id for d in store.similarity_search("deploys roll back", k=3)}


_LI_WORKER = """
import sys
sys.path[:0] = {paths!r}
from llama_index.core.schema import TextNode
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop_test_doubles import BagOfWordsEmbedder
with Treehop({index!r}, embedder=BagOfWordsEmbedder()) as th:
    store = TreehopVectorStore(client=th)
    node = TextNode(text="Chrony steps the clock with makestep, once.", id_="n2",
                    metadata={{"file_name": "faq.txt"}})
    node.embedding = store.embed_model.get_text_embedding(node.text)
    store.add([node])
    store.delete_nodes(["n1"])
print("done")
"""


def test_a_llamaindex_stores_get_nodes_sees_another_processs_commits(tmp_path: Path) -> None:
    index = tmp_path / "idx"
    with Treehop(index, embedder=BagOfWordsEmbedder()) as th:
        store = LIStore(client=th)
        node = TextNode(
            text="Use the pool directive.", id_="n1", metadata={"file_name": "readme.txt"}
        )
        node.embedding = store.embed_model.get_text_embedding(node.text)
        store.add([node])
        assert [n.node_id for n in store.get_nodes(node_ids=["n1", "n2"])] == ["n1"]
        assert [n.node_id for n in store.get_nodes()] == ["n1"]
        assert run_script(_LI_WORKER, index, tmp_path) == ["done"]
        assert [n.node_id for n in store.get_nodes(node_ids=["n1", "n2"])] == ["n2"]
        assert [n.node_id for n in store.get_nodes()] == ["n2"]
        faq = MetadataFilters(filters=[MetadataFilter(key="file_name", value="faq.txt")])
        assert [n.node_id for n in asyncio.run(store.aget_nodes(filters=faq))] == ["n2"]
