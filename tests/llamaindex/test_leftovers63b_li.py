"""Leftovers, stop 63 (LlamaIndex): top-k and ``node_ids`` through LlamaIndex's own
retriever, the memory block's keywords, the vector store's field list, results copied from one
store into another, and numeric options checked as the core checks them.

Each behaviour is compared with ``SimpleVectorStore`` (LlamaIndex's in-memory store) where
that store answers the same call.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from typing import Any

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.indices.vector_store.retrievers import VectorIndexRetriever
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.retrievers.treehop import TreehopMemoryBlock, TreehopRetriever
from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError, InvalidQueryError, UnknownArgumentError
from treehop.models import PROVENANCE_KEYS

from treehop_test_doubles import BagOfWordsEmbedder

_WORDS = [
    "keys",
    "deploys",
    "tokens",
    "cache",
    "helm",
    "rollback",
    "gateway",
    "backups",
    "nightly",
    "rotate",
]
_NODES = [
    TextNode(
        text=f"Note {i}: {_WORDS[i % 10]} {_WORDS[(i * 3) % 10]} and keys.",
        id_=f"n{i}",
        metadata={"topic": "ops" if i % 2 else "security"},
    )
    for i in range(12)
]


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


@pytest.fixture
def store(client: Treehop) -> TreehopVectorStore:
    s = TreehopVectorStore(client)
    VectorStoreIndex(
        [copy.deepcopy(n) for n in _NODES],
        storage_context=StorageContext.from_defaults(vector_store=s),
        embed_model=s.embed_model,
    )
    return s


def _simple_index(store: TreehopVectorStore) -> VectorStoreIndex:
    return VectorStoreIndex([copy.deepcopy(n) for n in _NODES], embed_model=store.embed_model)


# ---------------------------------------------------------------- 1. top-k and node_ids


@pytest.mark.parametrize("mode", ["default", "mmr"])
@pytest.mark.parametrize("k", [1, 3, 7, 12])
def test_from_vector_store_as_retriever_honours_similarity_top_k(
    store: TreehopVectorStore, k: int, mode: str
) -> None:
    ours = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    kw: dict[str, Any] = {"similarity_top_k": k, "vector_store_query_mode": mode}
    reference = _simple_index(store).as_retriever(**kw).retrieve("keys helm")
    assert len(ours.as_retriever(**kw).retrieve("keys helm")) == len(reference) == k
    retriever = ours.as_retriever()
    retriever.similarity_top_k = k  # (LlamaIndex's setter)
    assert len(retriever.retrieve("keys helm")) == k


async def test_from_vector_store_aretrieve_honours_similarity_top_k(
    store: TreehopVectorStore,
) -> None:
    ours = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    assert len(await ours.as_retriever(similarity_top_k=5).aretrieve("keys")) == 5


def test_node_ids_restrict_a_vector_index_retriever_as_in_simple_vector_store(
    store: TreehopVectorStore,
) -> None:
    wanted = ["n1", "n4", "n9"]
    ours = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    got = VectorIndexRetriever(ours, similarity_top_k=5, node_ids=wanted).retrieve("keys")
    ref_index = _simple_index(store)
    ref = VectorIndexRetriever(ref_index, similarity_top_k=5, node_ids=wanted).retrieve("keys")
    assert {h.node.node_id for h in got} == {h.node.node_id for h in ref} == set(wanted)
    query = VectorStoreQuery(
        query_embedding=store.embed_model.get_query_embedding("keys"),
        similarity_top_k=2,
        node_ids=wanted,
    )
    result = store.query(query)
    assert len(result.ids or []) == 2 and set(result.ids or []) <= set(wanted)


def test_node_ids_as_a_query_keyword_names_the_query_field(store: TreehopVectorStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    retriever = index.as_retriever(vector_store_kwargs={"node_ids": ["n1"]})
    # Before: "query: unknown argument(s) ['node_ids']." naming no way to give them.
    with pytest.raises(
        UnknownArgumentError, match=r"unknown argument 'node_ids': a VectorStoreQuery field"
    ) as e:
        retriever.retrieve("keys")
    assert "VectorIndexRetriever(index, node_ids=" in str(e.value)


def test_the_treehop_retriever_says_where_node_ids_go(client: Treehop) -> None:
    with pytest.raises(UnknownArgumentError, match=r"unknown argument 'node_ids': ") as e:
        TreehopRetriever(client, node_ids=["n1"])
    assert "filters=" in str(e.value) and "VectorIndexRetriever" in str(e.value)


@pytest.mark.parametrize("field", ["sparse_top_k", "hybrid_top_k"])
def test_a_query_field_the_store_does_not_read_is_refused_by_name(
    store: TreehopVectorStore, field: str
) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    retriever = index.as_retriever(vector_store_query_mode="hybrid", **{field: 5})
    # Before: ignored (2 nodes for hybrid_top_k=5, where Qdrant's hybrid answers 5).
    with pytest.raises(InvalidQueryError, match=rf"{field} is not supported.*similarity_top_k"):
        retriever.retrieve("keys")


# ---------------------------------------------------------------- 2. the memory block


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        ("top_k", "k"),
        ("similarity_top_k", "k"),
        ("max_token", "max_tokens"),
        ("targt_uri", "target_uri"),
    ],
)
def test_the_memory_block_refuses_an_unknown_keyword_naming_the_one_meant(
    client: Treehop, given: str, meant: str
) -> None:
    # Before: TreehopMemoryBlock(client, top_k=3) answered with k=10, in silence.
    with pytest.raises(UnknownArgumentError, match=rf"unknown argument '{given}'") as e:
        TreehopMemoryBlock(client, **{given: 3})
    assert f"did you mean {meant!r}?" in str(e.value)
    assert isinstance(e.value, TypeError)


def test_the_memory_block_error_never_echoes_a_value_or_a_huge_name(client: Treehop) -> None:
    with pytest.raises(UnknownArgumentError) as e:
        TreehopMemoryBlock(client, api_key="sk-live-123456789", **{"x" * 100_000: 1})
    text = str(e.value)
    assert "sk-live-123456789" not in text and len(text) < 1000


def test_the_memory_block_takes_its_own_fields(client: Treehop) -> None:
    block = TreehopMemoryBlock(client, k=3, max_tokens=50, priority=1, name="m")
    assert (block.k, block.max_tokens, block.priority, block.name) == (3, 50, 1, "m")


@pytest.mark.parametrize("field", ["k", "max_tokens"])
@pytest.mark.parametrize(
    "value", [True, 3.0, "3", math.nan, -1, 0, pytest.param("x" * 100_000, id="huge")]
)
def test_the_memory_block_numbers_are_checked_as_the_core_checks_them(
    client: Treehop, field: str, value: object
) -> None:
    # Before: True, 3.0 and "3" were read as 1 / 3 (pydantic's lax mode); the rest a
    # pydantic ValidationError.
    with pytest.raises(InvalidQueryError, match=field) as e:
        TreehopMemoryBlock(client, **{field: value})
    assert len(str(e.value)) < 300


# ---------------------------------------------------------------- 3. the field list


def test_a_missing_field_message_lists_only_the_nodes_own_fields(
    store: TreehopVectorStore,
) -> None:
    typo = MetadataFilters(filters=[MetadataFilter(key="topc", value="ops")])
    query = VectorStoreQuery(
        query_embedding=store.embed_model.get_query_embedding("keys"), filters=typo
    )
    for call in (lambda: store.query(query), lambda: store.get_nodes(filters=typo)):
        with pytest.raises(InvalidFilterError, match=r"stored fields: .*topic") as e:
            call()
        listed = str(e.value).split("stored fields:")[1]
        # Before: "_node_content, _node_type, chunks, doc_id, document_id, ..."
        for internal in ("_node_content", "_node_type", "doc_id", "document_id"):
            assert internal not in listed.replace("ref_doc_id", "")


# ---------------------------------------------------------------- 4. copies of results


def test_nodes_a_treehop_retriever_returned_are_added_without_their_scores(
    store: TreehopVectorStore,
) -> None:
    hits = TreehopRetriever(store.client, similarity_top_k=3).retrieve("keys helm")
    assert {"score", "vector_score", "found_by"} <= set(hits[0].node.metadata)
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as other:
        copy_store = TreehopVectorStore(other)
        ids = copy_store.add([h.node for h in hits])
        copies = copy_store.get_nodes(ids)
        assert len(copies) == 3
        for node in copies:
            # Before: every provenance key (score, vector_score, found_by, ...) stored.
            assert not set(node.metadata) & {*PROVENANCE_KEYS, "retrieval_score"}
            assert node.metadata["topic"] in {"ops", "security"}
        # the copies answer queries, and filters on the copied metadata
        index = VectorStoreIndex.from_vector_store(copy_store, embed_model=copy_store.embed_model)
        ops = MetadataFilters(filters=[MetadataFilter(key="topic", value="ops")])
        hits_ops = index.as_retriever(similarity_top_k=3, filters=ops).retrieve("keys")
        assert all(h.node.metadata["topic"] == "ops" for h in hits_ops)
        with pytest.raises(InvalidFilterError, match=r"'score' is provenance"):
            score = MetadataFilters(filters=[MetadataFilter(key="score", value=0.5)])
            index.as_retriever(filters=score).retrieve("keys")


def test_a_nodes_own_score_metadata_is_kept(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    node = TextNode(text="A review of the gateway.", id_="r1", metadata={"score": 4, "uri": "u"})
    store.add([node])
    assert store.get_nodes(["r1"])[0].metadata == {"score": 4, "uri": "u"}


# ---------------------------------------------------------------- 5. numeric options


@pytest.mark.parametrize(
    "value", [True, math.nan, math.inf, "0.3", pytest.param(10**400, id="10**400")]
)
def test_a_query_score_threshold_is_checked_as_the_core_checks_it(
    store: TreehopVectorStore, value: object
) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    retriever = index.as_retriever(vector_store_kwargs={"score_threshold": value})
    # Before: True, NaN and inf were floors (NaN and inf: no node), "0.3" a raw TypeError.
    with pytest.raises(InvalidQueryError, match="score_threshold"):
        retriever.retrieve("keys")


def test_a_query_score_threshold_still_drops_low_scores(store: TreehopVectorStore) -> None:
    index = VectorStoreIndex.from_vector_store(store, embed_model=store.embed_model)
    every = index.as_retriever(similarity_top_k=12).retrieve("keys helm")
    floor = sorted(h.score or 0.0 for h in every)[6]
    kept = index.as_retriever(
        similarity_top_k=12, vector_store_kwargs={"score_threshold": floor}
    ).retrieve("keys helm")
    assert 0 < len(kept) < len(every) and all((h.score or 0.0) >= floor for h in kept)


_HUGE = {"10**5000": 10**5000, "a megabyte": "x" * 1_000_000}


@pytest.mark.parametrize("value", list(_HUGE.values()), ids=list(_HUGE))
@pytest.mark.parametrize(
    "option", ["alpha", "mmr_threshold", "mmr_prefetch_k", "mmr_prefetch_factor"]
)
def test_a_huge_query_option_gets_a_short_typed_error(
    store: TreehopVectorStore, option: str, value: object
) -> None:
    vector = store.embed_model.get_query_embedding("keys")
    if option == "alpha":
        query = VectorStoreQuery(query_embedding=vector, mode="hybrid", alpha=value)
        kwargs: dict[str, Any] = {}
    else:
        query = VectorStoreQuery(query_embedding=vector, mode="mmr")
        kwargs = {option: value}
    # Before: ValueError from repr(10**5000) inside the message, or a megabyte message.
    with pytest.raises(InvalidQueryError, match=option) as e:
        store.query(query, **kwargs)
    assert len(str(e.value)) < 300


@pytest.mark.parametrize("value", list(_HUGE.values()), ids=list(_HUGE))
@pytest.mark.parametrize("option", ["similarity_top_k", "retrieve_count", "chunk_diffusion_count"])
def test_a_huge_retriever_option_gets_a_short_error_or_everything(
    store: TreehopVectorStore, option: str, value: object
) -> None:
    try:
        hits = TreehopRetriever(store.client, **{option: value}).retrieve("keys")
    except InvalidQueryError as e:
        assert len(str(e)) < 300
    else:  # (similarity_top_k above 1,000 over 12 nodes: every node, as documented)
        assert option == "similarity_top_k" and len(hits) == len(_NODES)


def test_a_node_copy_into_a_client_is_placed_by_its_uri_without_its_scores(
    store: TreehopVectorStore,
) -> None:
    from llama_index.retrievers.treehop import add_documents
    from treehop.ingest.records import stored_fields

    hits = TreehopRetriever(store.client, similarity_top_k=2).retrieve("keys helm")
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as other:
        uris = add_documents(other, [h.node for h in hits])
        assert uris == [h.node.metadata["uri"] for h in hits]  # (placed where they were)
        # Before: score, vector_score, retrieval_score, found_by, ... stored on the copies.
        fields = stored_fields(other)
        assert "topic" in fields
        assert not fields & {"score", "vector_score", "retrieval_score", "found_by", "level"}
