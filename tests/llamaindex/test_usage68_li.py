"""A user's first hour, stop 61 (LlamaIndex): ``similarity_top_k=None``, and
``LlamaIndexEmbedder(TreehopEmbedding())``'s vector space.

``SimpleVectorStore`` (LlamaIndex's default store) answers a ``VectorStoreQuery`` whose
``similarity_top_k`` is ``None`` with every node, as it answers ``0``; so does
``VectorStoreIndex.as_retriever(similarity_top_k=None)`` over it. ``TreehopVectorStore``
already read ``0`` as "no limit" and refused ``None`` ("must be an integer").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from li_helpers import WordHashEmbedding
from llama_index.core import VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import SimpleVectorStore, VectorStoreQuery

from llama_index.retrievers.treehop import LlamaIndexEmbedder, TreehopEmbedding
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidQueryError

from treehop_test_doubles import BagOfWordsEmbedder, assert_one_vector_space, run_script

_TEXTS = ["Pagers go off at night.", "Keys rotate every 90 days.", "Backups run nightly."]


def _nodes(embed: WordHashEmbedding) -> list[TextNode]:
    return [
        TextNode(text=t, id_=f"n{i}", embedding=embed.get_text_embedding(t))
        for i, t in enumerate(_TEXTS)
    ]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TreehopVectorStore]:
    with Treehop(
        path=tmp_path / "ix", embedder=LlamaIndexEmbedder(WordHashEmbedding()), tagger=None
    ) as c:
        s = TreehopVectorStore(client=c)
        s.add(_nodes(WordHashEmbedding()))
        yield s


def test_simple_vector_store_answers_none_with_every_node() -> None:
    """The reference (the control)."""
    embed = WordHashEmbedding()
    ref = SimpleVectorStore()
    ref.add(_nodes(embed))
    q = VectorStoreQuery(query_embedding=embed.get_query_embedding("pagers"), similarity_top_k=None)  # type: ignore[arg-type]
    assert sorted(ref.query(q).ids or []) == ["n0", "n1", "n2"]


def test_a_query_without_a_top_k_returns_every_node(store: TreehopVectorStore) -> None:
    embed = WordHashEmbedding()
    q = VectorStoreQuery(query_embedding=embed.get_query_embedding("pagers"), similarity_top_k=None)  # type: ignore[arg-type]
    got = store.query(q)
    assert sorted(got.ids or []) == ["n0", "n1", "n2"]
    assert (got.ids or [])[0] == "n0"  # still ranked
    assert sorted(asyncio.run(store.aquery(q)).ids or []) == ["n0", "n1", "n2"]
    zero = store.query(
        VectorStoreQuery(query_embedding=embed.get_query_embedding("pagers"), similarity_top_k=0)
    )
    assert got.ids == zero.ids  # None is 0: "no limit"


def test_the_index_retriever_takes_none(store: TreehopVectorStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=WordHashEmbedding())
    hits = index.as_retriever(similarity_top_k=None).retrieve("pagers")
    assert sorted(h.node.node_id for h in hits) == ["n0", "n1", "n2"]


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True])
def test_other_non_integers_are_still_refused(store: TreehopVectorStore, bad: object) -> None:
    embed = WordHashEmbedding()
    q = VectorStoreQuery(query_embedding=embed.get_query_embedding("pagers"), similarity_top_k=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidQueryError, match="similarity_top_k"):
        store.query(q)


def test_llamaindex_embedder_of_treehop_embedding_is_the_embedders_space(tmp_path: Path) -> None:
    """docs/llamaindex.md's ``Treehop(path, embedder=LlamaIndexEmbedder(TreehopEmbedding()))``
    stored ``llamaindex:TreehopEmbedding:...`` for the wrapped embedder's own vectors:
    ``Treehop(path)`` (and the CLI, the MCP server) refused the index it built, and it
    refused theirs. It is that embedder's vector space, under that embedder's name."""
    embedder = BagOfWordsEmbedder()
    assert_one_vector_space(tmp_path, embedder, LlamaIndexEmbedder(TreehopEmbedding(embedder)))
    # any other LlamaIndex model keeps its own name, and an explicit name still wins
    assert LlamaIndexEmbedder(WordHashEmbedding()).name.startswith("llamaindex:WordHashEmbedding")
    assert LlamaIndexEmbedder(TreehopEmbedding(embedder), name="mine").name == "mine"


def test_an_index_stored_under_the_old_wrapper_name_still_opens(tmp_path: Path) -> None:
    """An index built before this fix stored ``llamaindex:TreehopEmbedding:<name>``: the same
    code (``LlamaIndexEmbedder(TreehopEmbedding(e))``) still opens it, and its next write
    stores ``e``'s name, so another process's ``Treehop(path)`` with ``e`` opens it too (in
    one process, clients of one path share the store, so the check runs in a subprocess)."""
    embedder = BagOfWordsEmbedder()
    old_name = f"llamaindex:TreehopEmbedding:{embedder.name}"
    with Treehop(
        path=tmp_path / "old",
        embedder=LlamaIndexEmbedder(TreehopEmbedding(embedder), name=old_name),
        tagger=None,
    ) as c:
        c.add_resource("Backups run nightly.", name="ops")
    # (refused here until usage69: the core now knows the old wrapper names)
    with Treehop(path=tmp_path / "old", embedder=embedder, tagger=None) as c:
        assert [m.uri for m in c.find("backups").contexts()] == ["viking://resources/ops"]
    with Treehop(
        path=tmp_path / "old", embedder=LlamaIndexEmbedder(TreehopEmbedding(embedder)), tagger=None
    ) as c:
        assert [m.uri for m in c.find("backups").contexts()] == ["viking://resources/ops"]
        c.add_resource("The pager rota moved.", name="pager")  # (a write: the name is stored)
    script = (
        "import sys\nsys.path[:0] = {paths!r}\nfrom treehop import Treehop\n"
        "from treehop_test_doubles import BagOfWordsEmbedder as B\n"
        "with Treehop({index!r}, embedder=B(), tagger=None) as c:\n"
        "    print(len(c.find('backups', limit=1).contexts()))\n"
    )
    assert run_script(script, tmp_path / "old", tmp_path) == ["1"]
    # another model's index is still refused
    with pytest.raises(EmbeddingError, match="mix vector spaces"):
        Treehop(
            path=tmp_path / "old",
            embedder=LlamaIndexEmbedder(WordHashEmbedding()),
            tagger=None,
        )


def test_the_memory_block_imports_from_the_package() -> None:
    """``from llama_index.retrievers.treehop import TreehopMemoryBlock`` (as
    ``from langchain_treehop import TreehopContextMiddleware``) was an ``ImportError``: the
    block lived only in ``.memory_block``."""
    import llama_index.retrievers.treehop as pkg
    from llama_index.retrievers.treehop.memory_block import TreehopMemoryBlock

    assert pkg.TreehopMemoryBlock is TreehopMemoryBlock
    assert "TreehopMemoryBlock" in pkg.__all__
