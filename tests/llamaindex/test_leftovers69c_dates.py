"""An ISO date range over ``date`` / ``datetime`` metadata in the LlamaIndex vector store is a
typed refusal whose fix works for a ``date`` too (helper leftovers69c, bench/README.md
"(helper leftovers69c)"; stop 68's open item).

Metadata holding a ``date`` or a ``datetime`` is stored as its ISO text (as
``node_to_metadata_dict`` writes it for every LlamaIndex store), and treehop's ranges compare
numbers, so ``MetadataFilter(key="date", operator=GTE, value="2024-01-01")`` is an
``InvalidFilterError`` (usage76's test covers a reader's text dates). Its hint said to store
``t.timestamp()``, which a ``date`` does not have (``AttributeError``); it now gives a
date's form, and that form filters as meant.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest
from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores import FilterOperator as Op
from llama_index.core.vector_stores import MetadataFilter, MetadataFilters

from llama_index.vector_stores.treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder

DAYS = [dt.date(2023, 12, 31), dt.date(2024, 1, 1), dt.date(2024, 6, 1)]


def _epoch(d: dt.date) -> float:
    return dt.datetime(d.year, d.month, d.day, tzinfo=dt.UTC).timestamp()


def _index(client: Treehop) -> VectorStoreIndex:
    store = TreehopVectorStore(client=client)
    nodes = [
        TextNode(
            text=f"harbour tide note {i}",
            id_=f"n{i}",
            metadata={
                "date": d,
                "when": dt.datetime(d.year, d.month, d.day, 12, tzinfo=dt.UTC),
                "date_ts": _epoch(d),
            },
        )
        for i, d in enumerate(DAYS)
    ]
    return VectorStoreIndex(
        nodes,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=store.embed_model,
    )


def _ids(index: VectorStoreIndex, f: MetadataFilter) -> list[str]:
    hits = index.as_retriever(similarity_top_k=5, filters=MetadataFilters(filters=[f])).retrieve(
        "harbour tide note"
    )
    return sorted(h.node.node_id for h in hits)


@pytest.mark.parametrize("key", ["date", "when"])
@pytest.mark.parametrize("op", [Op.GTE, Op.GT, Op.LT, Op.LTE])
def test_an_iso_range_on_date_metadata_is_refused_with_a_fix_for_a_date(key: str, op: Op) -> None:
    # d32e6e34: refused, but the only fix it gave was t.timestamp(), which a date lacks
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        index = _index(client)
        f = MetadataFilter(key=key, operator=op, value="2024-01-01")
        with pytest.raises(InvalidFilterError, match="numbers only") as caught:
            _ids(index, f)
        message = str(caught.value)
        assert "a date d has none: datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()" in (
            message
        )
        # the form the hint gives is Python that makes the number the range compares
        form = re.search(r"datetime\(d\.year.*?\)\.timestamp\(\)", message)
        assert form is not None
        d = dt.date(2024, 1, 1)
        made = eval(form.group(0), {"datetime": dt.datetime, "UTC": dt.UTC, "d": d})
        assert made == _epoch(d)


def test_the_hinted_number_filters_dates_as_meant_control() -> None:
    # control (passes on d32e6e34): the stored epoch seconds compare; == on the ISO text works
    with Treehop(None, embedder=BagOfWordsEmbedder(), tagger=None) as client:
        index = _index(client)
        since = _epoch(dt.date(2024, 1, 1))
        assert _ids(index, MetadataFilter(key="date_ts", operator=Op.GTE, value=since)) == [
            "n1",
            "n2",
        ]
        assert _ids(index, MetadataFilter(key="date_ts", operator=Op.LT, value=since)) == ["n0"]
        assert _ids(index, MetadataFilter(key="date", operator=Op.EQ, value="2024-01-01")) == ["n1"]
