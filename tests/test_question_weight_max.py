"""``question_weight_max``: a question's leaf scores the larger of its fusion at the question's
dense weight and at ``dense_weight`` (flat hybrid's), off by default (issue 33, stop 75,
helper quality81).

Where find()'s 1,000-token block misses an answer flat hybrid's holds, flat hybrid mostly
ranks the answer 1-3 and find 4-10: an answer whose words BM25 finds and whose cosine is
below chunks of the question's generic phrasing. The max raises such a chunk to its fusion
at flat hybrid's weight and never lowers one.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import treehop.chunk_window as cw
from test_chunk_window import _chunk, _file, _unit
from treehop import InvalidConfigError, RetrievalConfig
from treehop.chunk_window import LEXICAL_SHARE_MIN, weight_max_on, weight_max_scores
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import resource_folder, resource_root

R = "viking://resources"
QUESTION = "How do I configure the frobnicator widget?"
KEYWORDS = "frobnicator widget"


def _store() -> EmbeddedStore:
    """``a.md``: chunk 0 holds the question's rare words (``frobnicator widget``) at cosine
    0.30; ``b.md``: chunk 0 says nothing of them at cosine 0.60. At the question weight
    0.8: 0.8 * 0.30 + 0.2 * 1 = 0.44 against 0.48 (b first); at 0.5: 0.65 against 0.30."""
    nodes = [resource_root(), resource_folder(f"{R}/docs")]
    vectors = [_unit((15, 1.0)), _unit((14, 1.0))]
    for name in ("a.md", "b.md", "c.md"):
        nodes.append(_file(f"{R}/docs/{name}"))
        vectors.append(_unit((13, 1.0)))
    texts = {
        "a.md": "set the frobnicator widget option in the main file",
        "b.md": "general notes about settings and files and how things are done",
        "c.md": "unrelated paragraph on colours and fonts",
    }
    cos = {"a.md": 0.30, "b.md": 0.60, "c.md": 0.20}
    for i, (name, text) in enumerate(texts.items()):
        nodes.append(_chunk(f"{R}/docs/{name}", 0, text, 0))
        c = cos[name]
        vectors.append(_unit((0, c), (2 + i, float(np.sqrt(1 - c * c)))))
    store = EmbeddedStore()
    store.upsert(nodes, np.stack(vectors))
    return store


def _find(cfg: RetrievalConfig, query: str = QUESTION) -> list[tuple[str, float]]:
    """(file name, slot score), best first."""
    req = RetrievalRequest(
        query=TypedQuery(query=query), vector=_unit((0, 1.0)), roots=[R], limit=3
    )
    result = asyncio.run(HierarchicalRetriever(_store(), cfg).retrieve(req))
    return [(m.uri.split("#")[0].rsplit("/", 1)[-1], m.score) for m in result.matched_contexts]


def _order(cfg: RetrievalConfig, query: str = QUESTION) -> list[str]:
    return [u for u, _ in _find(cfg, query)]


def test_off_the_generic_chunk_passes_the_lexical_answer() -> None:
    """The defect the option aims at, with it off (the default): b.md above a.md."""
    order = _order(RetrievalConfig())
    assert order.index("b.md") < order.index("a.md")
    assert _order(RetrievalConfig(question_weight_max=False)) == order


def test_on_the_lexical_answer_scores_its_flat_hybrid_fusion() -> None:
    on = RetrievalConfig(question_weight_max=True)
    order = _order(on)
    assert order[0] == "a.md"
    # a.md's score is its fusion at dense_weight 0.5 (BM25 / the query's best = 1), no window
    # (a single-chunk file), b.md keeps its 0.8 fusion (no BM25): the max never lowers
    got = dict(_find(on))
    assert got["a.md"] == pytest.approx(0.5 * 0.30 + 0.5 * 1.0, abs=2e-3)
    assert got["b.md"] == pytest.approx(0.8 * 0.60, abs=2e-3)


def test_the_module_default_is_read_where_the_setting_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert RetrievalConfig().question_weight_max is None
    assert cw.QUESTION_WEIGHT_MAX is False
    monkeypatch.setattr(cw, "QUESTION_WEIGHT_MAX", True)
    assert _order(RetrievalConfig())[0] == "a.md"
    # the setting wins over the module default
    order = _order(RetrievalConfig(question_weight_max=False))
    assert order.index("b.md") < order.index("a.md")


def test_keyword_queries_are_not_touched() -> None:
    """Only a question-shaped query reads it (a keyword query fuses at dense_weight already)."""
    assert _find(RetrievalConfig(question_weight_max=True), KEYWORDS) == _find(
        RetrievalConfig(), KEYWORDS
    )


@pytest.mark.parametrize("bad", ["yes", 1, 0.0, [True]])
def test_a_non_bool_setting_is_refused(bad: object) -> None:
    assert RetrievalConfig(question_weight_max=True).question_weight_max is True
    with pytest.raises(InvalidConfigError):
        RetrievalConfig(question_weight_max=bad)  # type: ignore[arg-type]
    cfg = RetrievalConfig()
    with pytest.raises(InvalidConfigError):
        cfg.question_weight_max = bad  # type: ignore[assignment]


def test_a_non_bool_module_default_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cw, "QUESTION_WEIGHT_MAX", "on")
    with pytest.raises(InvalidConfigError):
        weight_max_on(None)
    with pytest.raises(InvalidConfigError):
        _find(RetrievalConfig())
    assert weight_max_on(False) is False


@settings(max_examples=200, deadline=None)
@example(pairs=[(0.5, 1.0)], weight=0.9999999999999999, other=0.5)  # (read back as 0.5)
@given(
    st.lists(st.tuples(st.floats(-1, 1), st.floats(0, 1)), min_size=1, max_size=30),
    st.floats(0.2, 1.0),
    st.floats(0.2, 1.0),
)
def test_weight_max_scores_property(
    pairs: list[tuple[float, float]], weight: float, other: float
) -> None:
    """Never lowers a score; equals the larger of the two fusions of the same cosine and
    lexical score; unchanged where ``other`` is not below ``weight`` or ``weight`` is 1."""
    dense = np.array([d for d, _ in pairs])
    lex = np.array([x for _, x in pairs])
    fused = weight * dense + (1 - weight) * lex
    got = weight_max_scores(fused, dense, weight, other)
    assert np.all(got >= fused)
    if other >= weight or 1.0 - weight < LEXICAL_SHARE_MIN:  # (no lexical part to read back)
        assert np.array_equal(got, fused)
    else:
        want = np.maximum(fused, other * dense + (1 - other) * lex)
        np.testing.assert_allclose(got, want, atol=1e-9)
