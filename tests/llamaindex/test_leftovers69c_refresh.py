"""``refresh_ref_docs`` on a reloaded index splits as LlamaIndex's own stores do (helper
leftovers69c, bench/README.md "(helper leftovers69c)"; usage79's open item).

usage79 saw a reloaded index over the treehop vector store re-chunk a changed page with
``Settings``' default splitter, not the one the index was built with. That is
llama-index-core's rule for every store (0.14: ``BaseIndex.__init__`` takes
``transformations or Settings.transformations``; the persisted index struct holds no
transformations; ``load_index_from_storage(..., **kwargs)`` hands its keywords to the index),
and the store never splits: it stores the nodes LlamaIndex's insert made. These tests pin
that the treehop store behaves as ``SimpleVectorStore`` does both ways, and that the way
docs/llamaindex.md gives (``transformations=[...]`` to ``load_index_from_storage``) keeps
the build's splitter. They are parity checks, not regressions: they pass on d32e6e34 too.
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
from llama_index.core.node_parser import SentenceSplitter
from llama_index.core.vector_stores import SimpleVectorStore

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop

from treehop_test_doubles import BagOfWordsEmbedder

_SENTENCES = [f"Sentence {i} says the harbour tide turns at hour {i}." for i in range(40)]
_CHANGED = [s.replace("harbour", "river") for s in _SENTENCES]


def _splitter() -> SentenceSplitter:
    return SentenceSplitter(chunk_size=64, chunk_overlap=0)


def _chunks_of_page(store: object, index: VectorStoreIndex) -> int:
    """How many stored nodes come from the document ``page``."""
    if isinstance(store, TreehopVectorStore):
        return sum(1 for n in store.get_nodes() if n.ref_doc_id == "page")
    return sum(1 for n in index.docstore.docs.values() if n.ref_doc_id == "page")


def _refreshed_chunks(tmp_path: Path, kind: str, keep_splitter: bool) -> tuple[int, int]:
    """Chunks of the page after the build with a 64-token splitter, and after a reload and
    a ``refresh_ref_docs`` of its changed text (the reload given the splitter or not)."""
    storage = tmp_path / f"{kind}-storage"
    page = Document(text=" ".join(_SENTENCES), id_="page")
    changed = Document(text=" ".join(_CHANGED), id_="page")
    embedder = BagOfWordsEmbedder()
    with Treehop(str(tmp_path / f"{kind}-index"), embedder=embedder) as client:
        tstore = TreehopVectorStore(client=client)
        store = tstore if kind == "treehop" else SimpleVectorStore()
        index = VectorStoreIndex.from_documents(
            [page],
            storage_context=StorageContext.from_defaults(vector_store=store),
            embed_model=tstore.embed_model,
            transformations=[_splitter()],
        )
        built = _chunks_of_page(store, index)
        index.storage_context.persist(persist_dir=str(storage))
        reloaded_store = tstore if kind == "treehop" else None
        context = (
            StorageContext.from_defaults(vector_store=reloaded_store, persist_dir=str(storage))
            if reloaded_store is not None
            else StorageContext.from_defaults(persist_dir=str(storage))
        )
        extra = {"transformations": [_splitter()]} if keep_splitter else {}
        reloaded = load_index_from_storage(context, embed_model=tstore.embed_model, **extra)
        assert isinstance(reloaded, VectorStoreIndex)
        assert reloaded.refresh_ref_docs([changed]) == [True]
        after = _chunks_of_page(reloaded.vector_store, reloaded)
    return built, after


@pytest.mark.parametrize("keep_splitter", [False, True], ids=["settings' splitter", "given"])
def test_a_reloaded_refresh_splits_as_llamaindexs_own_store_does(
    tmp_path: Path, keep_splitter: bool
) -> None:
    treehop = _refreshed_chunks(tmp_path, "treehop", keep_splitter)
    simple = _refreshed_chunks(tmp_path, "simple", keep_splitter)
    assert treehop == simple
    built, after = treehop
    assert built > 5  # (the premise: the 64-token splitter made many chunks)
    if keep_splitter:
        assert after == built
    else:  # LlamaIndex's rule: Settings' default splitter (1,024 tokens) for a reloaded index
        assert after < built
