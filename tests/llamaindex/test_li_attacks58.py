"""Adversarial pass attacks58: the LlamaIndex integration.

Each test was written failing first (bench/README.md, "Adversarial pass (helper attacks58)").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

_BIG = list(range(200_000))


@pytest.mark.parametrize(
    "filters",
    [
        MetadataFilters(filters=[MetadataFilter(key="a", value=_BIG, operator=FilterOperator.EQ)]),
        MetadataFilters(filters=[MetadataFilter(key="a", value=_BIG, operator=FilterOperator.GT)]),
        MetadataFilters(
            filters=[MetadataFilter(key="a", value=_BIG, operator=FilterOperator.TEXT_MATCH)]
        ),
        MetadataFilters(filters=[MetadataFilter(key="k" * 500_000, value=1)]),
    ],
    ids=["eq-list", "gt-list", "text-match", "long-key"],
)
def test_a_filter_error_quotes_the_callers_filter_bounded(
    tmp_path: Path, filters: MetadataFilters
) -> None:
    """The filter translation described the filter whole in its errors: a value of a
    million numbers made a 7.9 MB ``InvalidFilterError`` (into logs and an agent's context)."""
    emb = BagOfWordsEmbedder()
    with Treehop(tmp_path / "idx", embedder=emb, reader_processes=0) as c:
        vs = TreehopVectorStore(client=c)
        vs.add(
            [
                TextNode(text=t, metadata={"a": i}, embedding=[float(x) for x in emb.embed([t])[0]])
                for i, t in enumerate(["hello world", "oauth tokens"])
            ]
        )
        q = [float(x) for x in emb.embed(["hello"])[0]]
        with pytest.raises(InvalidFilterError) as err:
            vs.query(VectorStoreQuery(query_embedding=q, similarity_top_k=1, filters=filters))
    assert len(str(err.value)) < 600, len(str(err.value))
