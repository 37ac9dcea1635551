"""Adversarial pass attacks57, LangChain side (bench/README.md, "Adversarial pass (helper
attacks57)"): each test was written failing first."""

from __future__ import annotations

import time

from langchain_treehop import TreehopVectorStore

from lc_helpers import WordHashEmbeddings


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
