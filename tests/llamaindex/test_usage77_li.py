"""A LlamaIndex tutorial's persist / reload over the treehop store (helper usage77).

``index.storage_context.persist("./storage")`` then
``load_index_from_storage(StorageContext.from_defaults(persist_dir="./storage"))`` (every
LlamaIndex starter tutorial) raised LlamaIndex's ``KeyError: 'default'``: the reload looks
for ``default__vector_store.json``, which the base class's ``persist`` (kept by treehop's
store) never writes. docs/llamaindex.md now says where the nodes live and the two reloads
that work; these tests run the premise and both reloads as documented.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core import (
    Document,
    StorageContext,
    VectorStoreIndex,
    load_index_from_storage,
)

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

DOCS = [
    Document(text="Keys rotate every 90 days.", id_="keys"),
    Document(text="Deploys happen on Fridays after the review.", id_="deploys"),
]


def _build(tmp_path: Path) -> tuple[Path, Path]:
    idx, storage = tmp_path / "index", tmp_path / "storage"
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client=client)
        index = VectorStoreIndex.from_documents(
            DOCS,
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=store.embed_model,
        )
        index.storage_context.persist(persist_dir=str(storage))
    return idx, storage


def test_the_premise_a_reload_without_the_store_is_llamaindexs_key_error(
    tmp_path: Path,
) -> None:
    _, storage = _build(tmp_path)
    with pytest.raises(KeyError, match="default"):
        load_index_from_storage(StorageContext.from_defaults(persist_dir=str(storage)))


def test_the_documented_reloads_answer(tmp_path: Path) -> None:
    idx, storage = _build(tmp_path)
    with Treehop(str(idx), embedder=BagOfWordsEmbedder()) as client:
        store = TreehopVectorStore(client=client)
        for index in (
            load_index_from_storage(
                StorageContext.from_defaults(vector_store=store, persist_dir=str(storage)),
                embed_model=store.embed_model,
            ),
            VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model),
        ):
            hit = index.as_retriever(similarity_top_k=1).retrieve("when do deploys happen")[0]
            assert hit.node.ref_doc_id == "deploys" and "Fridays" in hit.node.get_content()
            index.delete_ref_doc("keys")
            assert [n.node.ref_doc_id for n in index.as_retriever().retrieve("keys rotate")] == [
                "deploys"
            ]
            index.insert(DOCS[0])  # (back for the next reload)


def test_the_docs_say_how_to_reload() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "llamaindex.md").read_text()
    assert "KeyError: 'default'" in doc
    assert "StorageContext.from_defaults(vector_store=" in doc and "persist_dir=" in doc
