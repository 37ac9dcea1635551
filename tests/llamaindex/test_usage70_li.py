"""A user's first hour, stop 62 (LlamaIndex): the vector store's ``tags`` metadata, and a
node embedded by another model than the store's.

- Nodes added with ``metadata={"tags": [...]}`` (a common LlamaIndex habit) and queried with
  ``MetadataFilter(key="tags", ...)``: ``SimpleVectorStore`` matches the stored list; ours
  read the key as treehop's tag filter ("no stored node has tag(s) ['helm']"), and
  ``is_empty`` on it was refused, though the store keeps metadata as added.
- ``VectorStoreIndex(nodes, storage_context=..., embed_model=MockEmbedding(embed_dim=8))``
  over ``TreehopVectorStore(path=...)`` (whose tree is embedded by the 384-dimensional
  MiniLM here a 64-dimensional test embedder): ``StoreError: vector dimension 64 does not
  match the index (8)``, naming neither model; and the failed first write left the index's
  dimension at 8 in the process, so the same nodes with the right model were then refused
  ("this index holds 8").
- ``TreehopRetriever(client, llm=MockLLM())`` (``from_defaults`` takes ``llm``): "unknown
  argument 'llm'. It takes ...", naming no way to give the planner.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    SimpleVectorStore,
)

from llama_index.retrievers.treehop import LlamaIndexEmbedder, LlamaIndexLLM, TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import EmbeddingError, InvalidFilterError, UnknownArgumentError

from treehop_test_doubles import BagOfWordsEmbedder

_NODES = [
    TextNode(text=t, id_=f"n{i}", metadata={"topic": topic, "tags": tags})
    for i, (t, topic, tags) in enumerate(
        [
            ("Keys rotate every 90 days.", "security", ["keys"]),
            ("Deploys roll back with helm rollback.", "ops", ["helm", "k8s"]),
            ("Tokens are validated by the gateway.", "security", ["auth"]),
            ("The cache is flushed nightly.", "ops", []),
        ]
    )
]

F, Op = MetadataFilter, FilterOperator
_TAG_FILTERS = {
    "contains": MetadataFilters(filters=[F(key="tags", value="helm", operator=Op.CONTAINS)]),
    "any": MetadataFilters(filters=[F(key="tags", value=["helm", "auth"], operator=Op.ANY)]),
    "all": MetadataFilters(filters=[F(key="tags", value=["helm", "k8s"], operator=Op.ALL)]),
    "is_empty": MetadataFilters(filters=[F(key="tags", value=None, operator=Op.IS_EMPTY)]),
    "or with metadata": MetadataFilters(
        filters=[F(key="tags", value="auth", operator=Op.CONTAINS), F(key="topic", value="ops")],
        condition=FilterCondition.OR,
    ),
}
"""Filters ``SimpleVectorStore`` answers on a list value as treehop's DSL does."""
_LIST_SHARES_A_VALUE = {
    "eq": (MetadataFilters(filters=[F(key="tags", value="helm")]), {"n1"}),
    "in": (MetadataFilters(filters=[F(key="tags", value=["keys"], operator=Op.IN)]), {"n0"}),
    "nin": (
        MetadataFilters(filters=[F(key="tags", value=["keys", "auth"], operator=Op.NIN)]),
        {"n1", "n3"},
    ),
}
"""``==`` / ``in`` / ``nin`` on a list value: as on any stored list (docs/llamaindex.md: the
list matches when it shares a value with the filter; ``SimpleVectorStore`` compares the
whole list, so ``tags == "helm"`` matches nothing there)."""


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


def _index(vector_store: object, embed_model: object) -> VectorStoreIndex:
    return VectorStoreIndex(
        [copy.deepcopy(n) for n in _NODES],
        storage_context=StorageContext.from_defaults(vector_store=vector_store),
        embed_model=embed_model,
    )


def _ids(index: VectorStoreIndex, filters: MetadataFilters) -> set[str]:
    hits = index.as_retriever(similarity_top_k=4, filters=filters).retrieve("keys deploys")
    return {h.node.node_id for h in hits}


@pytest.mark.parametrize("name", list(_TAG_FILTERS))
def test_a_tags_metadata_filter_matches_the_stored_list_as_simple_vector_store(
    client: Treehop, name: str
) -> None:
    store = TreehopVectorStore(client)
    embed_model = store.embed_model
    ours = _ids(_index(store, embed_model), _TAG_FILTERS[name])
    reference = _ids(_index(SimpleVectorStore(), embed_model), _TAG_FILTERS[name])
    assert reference  # (each filter selects something)
    assert ours == reference


@pytest.mark.parametrize("name", list(_LIST_SHARES_A_VALUE))
def test_a_tags_metadata_filter_reads_a_list_as_other_stored_lists(
    client: Treehop, name: str
) -> None:
    store = TreehopVectorStore(client)
    filters, expected = _LIST_SHARES_A_VALUE[name]
    assert _ids(_index(store, store.embed_model), filters) == expected


def test_get_nodes_and_delete_nodes_take_a_tags_filter(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    _index(store, store.embed_model)
    helm = MetadataFilters(filters=[F(key="tags", value="helm", operator=Op.CONTAINS)])
    # Before: "tags and context_type filters apply to queries (the tree search)".
    assert [n.node_id for n in store.get_nodes(filters=helm)] == ["n1"]
    store.delete_nodes(filters=helm)
    assert sorted(n.node_id for n in store.get_nodes()) == ["n0", "n2", "n3"]


def test_a_tags_filter_where_no_node_stores_tags_is_a_missing_field(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    _index(store, store.embed_model)
    store.delete_nodes(node_ids=["n0", "n1", "n2", "n3"])
    store.add([TextNode(text="Untagged note.", id_="u1", metadata={"topic": "misc"})])
    helm = MetadataFilters(filters=[F(key="tags", value="helm", operator=Op.CONTAINS)])
    # Before (with tags read as metadata): "cannot filter on ['tags']: provenance is computed
    # for each result ... (filter on stored fields, tags or target_uri instead)".
    with pytest.raises(
        InvalidFilterError, match=r"no stored node has metadata field\(s\) \['tags'\]"
    ):
        store.get_nodes(filters=helm)


def test_the_retriever_still_reads_tags_as_treehops_tags(client: Treehop) -> None:
    # (control: over the tree, ``tags`` is the tag filter, as docs/llamaindex.md's table says)
    client.add_resource("Blue-green deploys.", target_uri="viking://resources/d.md", tags="ops")
    ops = MetadataFilters(filters=[F(key="tags", value="ops")])
    hits = TreehopRetriever(client, filters=ops).retrieve("deploys")
    assert [h.node.node_id for h in hits] == ["viking://resources/d.md"]
    untagged = MetadataFilters(filters=[F(key="tags", value=None, operator=Op.IS_EMPTY)])
    with pytest.raises(InvalidFilterError, match="not exclude them"):
        TreehopRetriever(client, filters=untagged)


@pytest.mark.parametrize("on_disk", [False, True], ids=["memory", "disk"])
def test_nodes_of_another_dimension_are_refused_before_the_first_write(
    tmp_path: Path, on_disk: bool
) -> None:
    path = tmp_path / "ix" if on_disk else None
    with Treehop(path, embedder=BagOfWordsEmbedder(), tagger=None) as c:
        store = TreehopVectorStore(c)
        with pytest.raises(EmbeddingError) as info:
            _index(store, MockEmbedding(embed_dim=8))
        said = str(info.value)
        # Before: "StoreError: vector dimension 64 does not match the index (8)".
        assert "has 8 dimensions" in said and "'test-bag-of-words-64' (64 dimensions)" in said
        assert "embed_model=store.embed_model" in said
        assert store.get_nodes() == [] and c.aio.store.dimension is None
        # The same nodes with the store's model: written (before: "this index holds 8").
        _index(store, store.embed_model)
        assert len(store.get_nodes()) == 4


def test_a_store_opened_with_the_index_model_takes_its_nodes(tmp_path: Path) -> None:
    # (control: the message's second way out works)
    model = MockEmbedding(embed_dim=8)
    with Treehop(tmp_path / "ix", embedder=LlamaIndexEmbedder(model), tagger=None) as c:
        store = TreehopVectorStore(c)
        _index(store, model)
        assert len(store.get_nodes()) == 4


@pytest.mark.parametrize(
    ("given", "spelled"),
    [
        ("llm", "Treehop(path, llm=LlamaIndexLLM(llm))"),
        ("embed_model", "Treehop(path, embedder=LlamaIndexEmbedder(embed_model))"),
    ],
)
def test_a_model_given_beside_a_client_says_how_the_client_takes_it(
    client: Treehop, given: str, spelled: str
) -> None:
    model = MockLLM() if given == "llm" else MockEmbedding(embed_dim=8)
    with pytest.raises(UnknownArgumentError) as info:
        TreehopRetriever(client, mode="search", **{given: model})
    assert spelled in str(info.value) and "from_defaults(path=..." in str(info.value)


def test_the_client_spelling_plans_with_the_llm() -> None:
    # (control: what the message says to write works; MockLLM's echo is no plan: fallback)
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None, llm=LlamaIndexLLM(MockLLM())) as c:
        c.add_resource("Deploys roll back with helm.", target_uri="viking://resources/d.md")
        [hit] = TreehopRetriever(c, mode="search", similarity_top_k=1).retrieve("roll back")
    assert hit.node.node_id == "viking://resources/d.md"
