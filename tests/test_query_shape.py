"""Query shape (treehop/query_shape.py) and what it changes: a question over documents takes
``question_dense_weight`` and ``question_context_scale``; a keyword query, a heading and any
search of memories keep the defaults (issue 33, items 4 and 5)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import ContextType, Node, TypedQuery
from treehop.query_shape import is_question
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import hand_vector as vec

R = "viking://resources"
MEM = "viking://user/alice/memories"


@pytest.mark.parametrize(
    "query",
    [
        "How do I rotate the signing keys?",
        "why does my build fail",
        "Can I use Django with Python 3.12",
        "is there a way to undo a commit?",
        "What similarity laws must be obeyed when constructing aeroelastic models .",
        "can't the static deflection shapes be used in predicting flutter",
        "¿Dónde está la configuración?",
        "rotate keys?",
        # problem reports in the first person singular (FAQ entries people wrote)
        "I can’t log in. When I enter a valid username and password, it fails.",
        "My admin-site CSS and images are not displaying",
        "I'm on Windows and my text files are detected as binary.",
    ],
)
def test_questions(query: str) -> None:
    assert is_question(query)


@pytest.mark.parametrize(
    "query",
    [
        "rotate signing keys",
        "How to write and report assertions in tests",  # a how-to guide's title
        "When to use Quart instead",
        "Do not run the development server in production.",
        "When using parametrize, applying a mark will make it apply to each test.",
        "Fixtures",
        "My First Blueprint",  # a title: under four words
        "We recommend using the latest version of Python.",  # documentation's "we"
        "what",
        "",
        "   ",
    ],
)
def test_not_questions(query: str) -> None:
    assert not is_question(query)


@given(st.text(max_size=400))
def test_any_text_has_a_shape(text: str) -> None:
    """Any input answers True or False, never raises; trailing spaces change nothing."""
    shape = is_question(text)
    assert shape in (True, False)
    assert is_question(text + "  \n") == shape


def _store() -> EmbeddedStore:
    """An answer far ahead on the dense score that shares no word with the question, and a
    glossary line that repeats the question's words (the top BM25 match) far behind it."""

    def leaf(name: str, text: str) -> Node:
        return Node(
            uri=f"{R}/docs/{name}",
            parent_uri=f"{R}/docs",
            context_type=ContextType.RESOURCE,
            level=2,
            is_leaf=True,
            content=text,
        )

    nodes = [
        Node(uri=R, parent_uri=None, context_type=ContextType.RESOURCE, level=0, is_leaf=False),
        Node(
            uri=f"{R}/docs",
            parent_uri=R,
            context_type=ContextType.RESOURCE,
            level=1,
            is_leaf=False,
            abstract="docs",
        ),
        leaf("answer.md", "Use the keyring tool: it replaces old material on a schedule."),
        leaf("glossary.md", "rotate signing keys: rotate the signing keys (glossary entry)."),
        leaf("other.md", "Deployment notes for the staging cluster and its schedule."),
    ]
    vectors = np.stack(
        [
            vec((7, 1.0)),
            vec((6, 1.0)),
            vec((0, 0.75), (1, 0.66)),  # cosine 0.75 with the query
            vec((0, 0.45), (2, 0.89)),  # cosine 0.45
            vec((3, 1.0)),
        ]
    )
    store = EmbeddedStore()
    store.upsert(nodes, vectors)
    return store


def _top(store: EmbeddedStore, query: str, cfg: RetrievalConfig, **kw: object) -> str:
    req = RetrievalRequest(
        query=TypedQuery(query=query), vector=vec((0, 1.0)), roots=[R], limit=3, **kw
    )  # type: ignore[arg-type]
    result = asyncio.run(HierarchicalRetriever(store, cfg).retrieve(req))
    return result.matched_contexts[0].uri.rsplit("/", 1)[-1]


def test_a_lexical_match_does_not_override_a_large_dense_lead_on_a_question() -> None:
    store, cfg = _store(), RetrievalConfig()
    assert _top(store, "How do I rotate the signing keys?", cfg) == "answer.md"
    # the same words as keywords keep the hybrid weight: the glossary line that names them
    assert _top(store, "rotate signing keys", cfg) == "glossary.md"
    # a weight the caller sets wins over the question's
    assert _top(store, "How do I rotate the signing keys?", cfg, dense_weight=0.5) == (
        "glossary.md"
    )
    # and with the question weight set to the default weight, the question ranks as before
    same = RetrievalConfig(question_dense_weight=None)
    assert _top(store, "How do I rotate the signing keys?", same) == "glossary.md"


def _resolved(query: str, roots: list[str], **cfg: object):  # type: ignore[no-untyped-def]
    r = HierarchicalRetriever(EmbeddedStore(), RetrievalConfig(**cfg))  # type: ignore[arg-type]
    req = RetrievalRequest(query=TypedQuery(query=query), vector=vec((0, 1.0)), roots=roots)
    return r._resolve(req)


def test_questions_over_documents_take_their_own_weights() -> None:
    defaults = RetrievalConfig()
    q = _resolved("Why does my build fail?", [f"{R}/docs"])
    assert q.dense_weight == defaults.question_dense_weight
    assert not q.context.active  # question_context_scale 0: ranked by own score
    k = _resolved("build failure", [f"{R}/docs"])
    assert k.dense_weight == defaults.dense_weight
    assert k.context.neighbours == defaults.context_neighbour_weight
    assert k.heading_weight == defaults.context_heading_weight
    half = _resolved("Why does my build fail?", [R], question_context_scale=0.5)
    assert half.context.best_sibling == pytest.approx(defaults.context_sibling_weight / 2)
    assert half.context.neighbours == pytest.approx(defaults.context_neighbour_weight / 2)


def test_memory_searches_keep_their_weights() -> None:
    """A conversation turn answers a question with its neighbours: a search that includes
    memories keeps the tree context and the hybrid weight."""
    defaults = RetrievalConfig()
    for roots in ([MEM], [R, MEM]):
        q = _resolved("When did Caroline go to the support group?", roots)
        assert q.dense_weight == defaults.dense_weight
        assert q.context.neighbours == defaults.context_neighbour_weight
