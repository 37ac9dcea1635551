"""Section headings as tree evidence: a chunk's final score gains how well the query names its
own section (``treehop.tree_scoring.heading_match``, ``RetrievalConfig.context_heading_weight``),
in the scoring function and in ``find()``."""

from __future__ import annotations

import asyncio
import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from test_tree_sections import DOC, at, paged_store
from treehop import RetrievalConfig
from treehop.hierarchical_retriever import (
    HierarchicalRetriever,
    RetrievalRequest,
    _picked_headings,
)
from treehop.models import TypedQuery
from treehop.stores.base import Scope
from treehop.stores.embedded import EmbeddedStore
from treehop.tree_scoring import heading_match, query_terms, section_of


def test_a_query_that_is_the_heading_matches_fully_after_folding_and_stemming() -> None:
    assert heading_match(query_terms("Registering a user"), ("Tutorial", "Register Users")) == 1.0
    # the extra word "new" of the question: 2 shared terms of 3 and 2
    q = query_terms("How do I register a new user?")
    assert heading_match(q, ("Register Users",)) == pytest.approx(2 / math.sqrt(6))


def test_only_the_chunks_own_heading_counts() -> None:
    q = query_terms("deployment")
    assert heading_match(q, ("Deployment", "Apache")) == 0.0  # a parent heading: no match
    assert heading_match(q, ("Apache", "Deployment")) == 1.0


def test_no_heading_or_no_query_terms_match_nothing() -> None:
    q = query_terms("blueprints")
    assert heading_match(q, None) == 0.0  # a memory turn, a whole file
    assert heading_match(q, ()) == 0.0
    assert heading_match(q, ("The",)) == 0.0  # a heading of stopwords only
    assert heading_match(query_terms("the of"), ("Blueprints",)) == 0.0
    assert heading_match(q, ("Views",)) == 0.0


words = st.lists(st.sampled_from(["app", "view", "test", "user", "the", "deploy"]), max_size=5)


@settings(deadline=None)
@given(words, words, words)
def test_match_is_a_bounded_cosine_of_term_sets(
    query: list[str], heading: list[str], above: list[str]
) -> None:
    q = query_terms(" ".join(query))
    h = " ".join(heading)
    v = heading_match(q, (" ".join(above), h))
    assert 0.0 <= v <= 1.0 + 1e-12
    hs = query_terms(h)
    assert v == pytest.approx(len(q & hs) / math.sqrt(len(q) * len(hs)) if q and hs else 0.0)
    assert (v == pytest.approx(1.0)) == (bool(q) and q == hs)


@settings(deadline=None)
@given(st.text(max_size=300), st.lists(st.text(max_size=400), max_size=4))
def test_any_text_gives_a_bounded_match_and_no_error(query: str, path: list[str]) -> None:
    v = heading_match(query_terms(query), tuple(path))
    assert 0.0 <= v <= 1.0 + 1e-12


def test_a_long_heading_is_matched_on_its_start_only() -> None:
    long = "Blueprints " + "filler " * 2_000 + "deployment"
    q = query_terms("deployment")
    assert heading_match(q, (long,)) == 0.0  # the word past HEADING_CHARS is not read
    assert heading_match(query_terms("blueprints"), (long,)) > 0.0


def two_pages() -> EmbeddedStore:
    """a.md's only chunk is the section "Register a user" (cosine 0.74 to the query); b.md's
    only chunk, under "Views", is closer to the query vector (0.78)."""
    spec: dict[str, tuple[np.ndarray, int | None, list[str] | None]] = {
        DOC: (np.array([0, 0, 1, 0], np.float32), None, None),
        f"{DOC}/a.md": (np.array([0, 0, 1, 0], np.float32), None, None),
        f"{DOC}/b.md": (np.array([0, 0, 1, 0], np.float32), None, None),
        f"{DOC}/a.md#chunk-0": (at(0.74), 0, ["Tutorial", "Register a user"]),
        f"{DOC}/b.md#chunk-0": (at(0.78), 0, ["Views"]),
    }
    return paged_store(spec)


def find(cfg: RetrievalConfig, query: str = "Register a user") -> list[str]:
    req = RetrievalRequest(
        query=TypedQuery(query=query),
        vector=np.array([1, 0, 0, 0], np.float32),
        roots=[DOC],
        limit=2,
        dense_weight=1.0,
    )
    res = asyncio.run(HierarchicalRetriever(two_pages(), cfg).retrieve(req))
    return [m.uri.split("#")[0].rsplit("/", 1)[-1] for m in res.matched_contexts]


@pytest.mark.parametrize(("weight", "order"), [(0.15, ["a.md", "b.md"]), (0.0, ["b.md", "a.md"])])
def test_find_ranks_the_section_the_query_names_first(weight: float, order: list[str]) -> None:
    assert find(RetrievalConfig(context_heading_weight=weight)) == order


def test_a_question_is_not_lifted_by_a_heading_by_default() -> None:
    """A question people write is gated off the tree context (``question_context_scale`` 0:
    the heading term cost on natural questions, issue 33); asked to, it takes it again."""
    question = "How do I register a user?"
    assert find(RetrievalConfig(), question) == ["b.md", "a.md"]
    on = RetrievalConfig(question_context_scale=1.0)
    assert find(on, question) == ["a.md", "b.md"]
    off = RetrievalConfig(question_context_scale=1.0, question_heading_weight=0.0)
    assert find(off, question) == ["b.md", "a.md"]


def test_a_query_naming_no_heading_keeps_the_vector_order() -> None:
    assert find(RetrievalConfig(), query="something else entirely") == ["b.md", "a.md"]


def test_the_heading_reorders_only_the_threshold_stays_on_the_own_score() -> None:
    # a.md's own cosine (0.74) is below the threshold: its heading cannot bring it in
    assert find(RetrievalConfig(score_threshold=0.75)) == ["b.md"]


def test_the_heading_is_part_of_the_tree_context_and_goes_with_it() -> None:
    # the three context weights at 0 turn the tree context off, the heading term with it
    # (the descent's propagated scores then stand, as they did before the heading term)
    cfg = RetrievalConfig(
        context_neighbour_weight=0.0, context_parent_weight=0.0, context_sibling_weight=0.0
    )
    assert find(cfg) == ["b.md", "a.md"]
    assert find(cfg.model_copy(update={"context_parent_weight": 0.01})) == ["a.md", "b.md"]


def test_headings_read_from_the_store_codes_equal_those_of_the_nodes() -> None:
    store = two_pages()
    cols = store.search_columns(
        np.array([1, 0, 0, 0], np.float32), Scope(subtrees=(DOC,)), 10, dense_weight=1.0
    )
    assert cols.heading_codes is not None  # the embedded store answers with codes
    picked = [(cols, i) for i in range(len(cols))]
    by_codes = _picked_headings(picked)
    bare = dataclasses.replace(cols, heading_codes=None)
    by_nodes = _picked_headings([(bare, i) for i in range(len(cols))])
    assert by_codes == by_nodes
    expected = [section_of(n) for n in cols.load(list(range(len(cols))))]
    assert by_codes == expected
    assert ("Tutorial", "Register a user") in by_codes
