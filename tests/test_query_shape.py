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
from treehop.models import Node, TypedQuery
from treehop.query_shape import is_question, is_sentence
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import hand_vector as vec
from treehop_test_doubles import resource_folder, resource_leaf, resource_root

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
        # leading discourse words are skipped before the first-word rules
        "But I've reminded you several times and you keep ignoring my patch!",
        "So how do I rotate the signing keys",
        "Hi, can I use Django with Python 3.12",
        "OK, why does the build fail on Windows",
        "Well, so what happens to old migrations",
        "And my admin-site CSS is not displaying",
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
        "But how to write a plugin",  # a guide's title behind a discourse word
        "And so on and so forth",  # only discourse words up front, then no question word
        "Also see the changelog for details",
        "But what",  # under three words once "But" is skipped
        "Hi, so, well, how do I rotate keys",  # at most two discourse words are skipped
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


_WORDS = st.sampled_from(
    ["how", "why", "do", "not", "to", "I", "my", "I've", "when", "can", "keys", "rotate", "x,"]
)


@given(
    st.lists(st.sampled_from(["But", "so", "Hi", "OK", "and", "Well", "also"]), max_size=2),
    st.lists(_WORDS, max_size=7),
)
def test_discourse_words_change_no_shape(lead: list[str], rest: list[str]) -> None:
    """Up to two leading discourse words never change the shape of what follows them, and
    never make a query question-shaped by themselves."""
    assert is_question(" ".join([*lead, *rest])) == is_question(" ".join(rest))
    assert not is_question(" ".join(lead))


@given(st.text(alphabet=" abBuUtT?,.I'm\n", max_size=50), st.integers(1, 2000))
def test_long_input_never_raises(chunk: str, times: int) -> None:
    """Long hostile input (up to 100k characters, many discourse words) answers True or False
    within hypothesis's deadline: the rule reads the first 200 characters and the end only,
    so its work does not grow with the number of words."""
    text = "But " * times + chunk * times
    assert is_question(text) in (True, False)
    assert is_question(text) == is_question(text + "   ")


def _store() -> EmbeddedStore:
    """An answer far ahead on the dense score that shares no word with the question, and a
    glossary line that repeats the question's words (the top BM25 match) far behind it."""

    def leaf(name: str, text: str) -> Node:
        return resource_leaf(f"{R}/docs/{name}", text)

    nodes = [
        resource_root(),
        resource_folder(f"{R}/docs"),
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


@pytest.mark.parametrize(
    ("query", "sentence"),
    [
        ("Fetchmail hangs while fetching mail.", True),
        ("Some objects aren\u2019t appearing in the admin.", True),
        ("Help, I'm getting Authorization failure!", True),
        ("papers on shock-sound wave interaction .", True),
        ('The server said "permission denied."', True),
        ("Fetchmail delivers partial messages", False),  # no stop: read as a heading
        ("Perl Books.", False),  # two words: a title
        ("etc.", False),
        ("Wait for the rollout...", False),  # an ellipsis cuts a phrase
        ("Why does the build fail?", False),  # a question, not a sentence
        ("\u7a0b\u5e8f\u5d29\u6e83\u4e86\u3002", True),  # "the program crashed." (no spaces)
        ("\u6807\u9898\u3002", False),  # two characters: a title
        ("", False),
    ],
)
def test_sentences(query: str, sentence: bool) -> None:
    assert is_sentence(query) is sentence


@given(st.text(max_size=400), st.integers(0, 3000))
def test_any_text_is_a_sentence_or_not_and_long_input_is_cheap(text: str, pad: int) -> None:
    """Never raises; trailing spaces and closing quotes/brackets change nothing; a long
    hostile tail (``"))))"`` x 3,000) answers within hypothesis's deadline."""
    shape = is_sentence(text)
    assert shape in (True, False)
    assert is_sentence(text + "  \n") == shape
    assert is_sentence(text + "\n" + ")" * pad) == shape


def test_a_sentence_over_documents_takes_passage_slots_and_keeps_its_weights() -> None:
    defaults = RetrievalConfig()
    # (a sentence that reports a failure is read as a question: question_problem_reports)
    s = _resolved("The admin shows every model twice.", [f"{R}/docs"])
    assert s.passages and not s.question
    assert s.dense_weight == defaults.dense_weight
    assert s.context.neighbours == defaults.context_neighbour_weight
    assert s.heading_weight == defaults.context_heading_weight
    assert _resolved("Why does the build fail?", [f"{R}/docs"]).passages  # a question
    assert not _resolved("build failures on Windows", [f"{R}/docs"]).passages  # a heading
    assert not _resolved("The build fails on Windows.", [MEM]).passages  # memories
    off = _resolved(
        "The build fails on Windows.",
        [f"{R}/docs"],
        sentence_passages=False,
        problem_report_passages=False,  # "fails": a problem report too
    )
    assert not off.passages
