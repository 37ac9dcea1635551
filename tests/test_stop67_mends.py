"""Stop 66's final-read mends (the lead, stop 67): no behaviour changes, one walk or one
check where there were two.

- The LlamaIndex store checks a node's metadata against the core's bound once
  (``kit.check_metadata_bounded``) and tells ``kit.plain_metadata`` so (``bounded=True``):
  the bounded JSON walk (up to about 5,000,000 values) ran twice per node.
- LangChain's ``$between`` checks each end with ``_bound``, the check every other range
  operator uses, keeping its own wording and showing the whole ``[low, high]``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pytest
from llama_index.core.schema import TextNode

from langchain_treehop.filters import to_treehop_filter
from llama_index.retrievers.treehop import TreehopEmbedding
from llama_index.vector_stores.treehop import TreehopVectorStore as LlamaIndexStore
from treehop import integration_kit as kit
from treehop.errors import InvalidFilterError

from treehop_test_doubles import BagOfWordsEmbedder


def test_llamaindex_store_walks_a_nodes_metadata_bound_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    walked: list[object] = []
    real = kit.json_bytes_problem

    def counting(value: object, limit: int) -> str | None:
        walked.append(value)
        return real(value, limit)

    monkeypatch.setattr(kit, "json_bytes_problem", counting)
    metadata = {"scores": np.array([1.0, 2.5]), "when": np.datetime64("2024-01-31T10:00")}
    node = TextNode(id_="doc", text="hello world", metadata=metadata)
    node.embedding = TreehopEmbedding(BagOfWordsEmbedder()).get_text_embedding("hello world")
    store = LlamaIndexStore(embed_model=TreehopEmbedding(BagOfWordsEmbedder()), tagger=None)
    try:
        store.add([node])
        back = store.get_nodes(["doc"])[0].metadata
    finally:
        store.close()
    assert len(walked) == 1
    assert back["scores"] == [1.0, 2.5]  # still converted: the walk was skipped, not the work
    assert back["when"].startswith("2024-01-31T10:00")


def test_plain_metadata_still_guards_unchecked_metadata() -> None:
    cycle: dict[str, Any] = {"scores": np.array([1.0])}
    cycle["self"] = cycle
    # unchecked: the guard finds the cycle and leaves the metadata for the core's refusal
    assert kit.plain_metadata(cycle) is cycle


@pytest.mark.parametrize(
    ("ends", "hint"),
    [
        ([1, [2]], None),
        # (a number written as text: the number named, usage79's hint, as $gte gives it)
        ([1, "2"], "'2' is text: give the number 2"),
        (["2023-01-01", "2024-01-01"], "store a datetime in the metadata"),
        ([dt.datetime(2024, 1, 1), True], None),
    ],
)
def test_between_refuses_each_end_as_the_range_operators_do(
    ends: list[Any], hint: str | None
) -> None:
    with pytest.raises(InvalidFilterError) as info:
        to_treehop_filter({"n": {"$between": ends}})
    message = str(info.value)
    assert "$between: expects [low, high] numbers, got [" in message
    for said in ("store a datetime in the metadata", "is text: give the number"):
        assert (said in message) is (hint is not None and said in hint), said
    if hint is not None:
        assert hint in message


def test_between_takes_numbers_and_datetimes_as_its_ends() -> None:
    start, end = dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2024, 2, 1, tzinfo=dt.UTC)
    dsl = to_treehop_filter({"n": {"$between": [start, end]}})
    assert dsl == {"op": "range", "field": "n", "gte": start.timestamp(), "lte": end.timestamp()}
    assert to_treehop_filter({"n": {"$between": (1, 2.5)}}) == {
        "op": "range",
        "field": "n",
        "gte": 1,
        "lte": 2.5,
    }
