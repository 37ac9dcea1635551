"""Adversarial pass attacks57, LangChain side (bench/README.md, "Adversarial pass (helper
attacks57)"): each test was written failing first."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from langchain_treehop import TreehopVectorStore
from langchain_treehop.store import TreehopStore
from treehop import Treehop
from treehop.errors import IndexCorruptError

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder


def test_a_flattened_html_text_with_long_blank_runs_is_added_at_once() -> None:
    """``add_texts`` of a page a loader flattened (metadata ``source`` an ``.html`` file)
    strips its navigation header: the header regex backtracked through the first line's
    blank runs for every title length, 18 s for this one 600-character line."""
    store = TreehopVectorStore(WordHashEmbeddings(), tagger=None)
    first = "a" + " " * 150 + "Prev Up" + " " * 440
    t0 = time.perf_counter()
    store.add_texts([first + "\nrolling deploys with helm"], [{"source": "docs/deploy.html"}])
    assert time.perf_counter() - t0 < 5.0
    assert store.similarity_search("helm deploys", k=1)[0].page_content.endswith("helm")


@pytest.mark.parametrize(
    "forged",
    [
        {"store_value": "[" * 20_000},
        {"store_value": "not json"},
        {"store_value": 5},
        {"store_value": "[1]"},
        {"store_value": "{}", "created_at": "x"},
        {"store_value": "{}", "created_at": 1e300},
    ],
    ids=["deep", "text", "int", "list", "time-text", "time-huge"],
)
def test_a_store_item_the_store_did_not_write_is_a_typed_error(
    tmp_path: Path, forged: dict[str, Any]
) -> None:
    """A node under the LangGraph store's root with ``kind: store_item`` metadata that the
    store did not write (a program's own ``add_resource`` there) made ``get`` and ``search``
    raise a raw ``TypeError`` / ``JSONDecodeError`` / ``RecursionError`` / ``ValueError`` /
    ``OverflowError``; a search filter read it the same way."""
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as c:
        store = TreehopStore(c)
        store.put(("ns",), "good", {"a": 1})
        meta = {"kind": "store_item", "created_at": 0, "updated_at": 0, **forged}
        c.add_resource("forged", target_uri=store.item_uri(("ns",), "bad"), metadata=meta)
        calls = [lambda: store.get(("ns",), "bad"), lambda: store.search(("ns",))]
        if "created_at" not in forged:  # (a filter reads the value of every item it sees)
            calls.append(lambda: store.search(("ns",), filter={"a": 1}))
        for call in calls:
            with pytest.raises(IndexCorruptError, match="store item"):
                call()
        assert store.get(("ns",), "good").value == {"a": 1}  # (the store's own items read)
