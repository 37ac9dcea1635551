"""``RetrievalConfig.question_sentences`` / ``question_titles`` (helper quality74): a
sentence or a title-shaped query over documents read as a question (the question fusion and
tree terms, a title passage slots too) by its shape alone; and the bench's shape filter,
which keeps exactly the queries each option can change."""

from __future__ import annotations

import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from test_problem_reports_as_questions import MEM, R, _resolved
from treehop import RetrievalConfig, query_shape

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

SENTENCE = "The admin shows every model twice."
TITLE = "Using WindowMaker with Solaris CDE"
QUESTION = "Why does the admin show every model twice?"
REPORT = "Fetchmail hangs after the server greeting"
ERROR = "fatal: unable to access the remote repository"


def test_a_sentence_takes_the_question_fusion_only_with_its_option() -> None:
    d = RetrievalConfig()
    off = _resolved(SENTENCE, [f"{R}/docs"], question_sentences=False)
    assert off.passages and not off.question
    assert off.dense_weight == d.dense_weight and off.context.active
    on = _resolved(SENTENCE, [f"{R}/docs"], question_sentences=True)
    assert on.question and on.passages
    assert on.dense_weight == d.question_dense_weight != d.dense_weight
    assert not on.context.active
    # sentence_passages off: a sentence is any other query, whatever this option says
    assert not _resolved(
        SENTENCE, [f"{R}/docs"], question_sentences=True, sentence_passages=False
    ).question
    # a report that is also a sentence stays with its own option
    report = _resolved(
        REPORT + ".", [f"{R}/docs"], question_sentences=True, question_problem_reports=False
    )
    assert report.passages and not report.question
    # a memory search keeps its weights; a title is not a sentence
    assert not _resolved(SENTENCE, [MEM], question_sentences=True).question
    assert not _resolved(
        TITLE, [f"{R}/docs"], question_sentences=True, question_titles=False
    ).question


def test_a_title_takes_passages_and_the_question_fusion_only_with_its_option() -> None:
    d = RetrievalConfig()
    off = _resolved(TITLE, [f"{R}/docs"], question_titles=False)
    assert not off.passages and not off.question and off.dense_weight == d.dense_weight
    on = _resolved(TITLE, [f"{R}/docs"], question_titles=True)
    assert on.question and on.passages and on.dense_weight == d.question_dense_weight
    assert not on.context.active
    assert not _resolved(TITLE, [MEM], question_titles=True).question
    assert not _resolved(
        SENTENCE, [f"{R}/docs"], question_titles=True, question_sentences=False
    ).question


def test_the_shape_filter_keeps_exactly_the_queries_each_option_changes() -> None:
    import bench_natural as bn

    shapes = {q: bn.query_shape_of(q) for q in (SENTENCE, TITLE, QUESTION, REPORT, ERROR)}
    assert shapes == {
        SENTENCE: "sentence",
        TITLE: "title",
        QUESTION: "question",
        REPORT: "problem-report",
        ERROR: "error-report",
    }
    for option, shape in (("question_sentences", "sentence"), ("question_titles", "title")):
        for q in shapes:
            on = _resolved(q, [f"{R}/docs"], **{option: True})
            off = _resolved(q, [f"{R}/docs"], **{option: False})
            changed = (on.question, on.passages, on.dense_weight) != (
                off.question,
                off.passages,
                off.dense_weight,
            )
            assert changed == bn.shape_only(q, [shape]), (option, q)


@given(st.text(max_size=120))
def test_is_title_agrees_with_the_bench_shape_and_never_takes_a_question_or_sentence(
    text: str,
) -> None:
    import bench_natural as bn

    title = query_shape.is_title(text)
    assert title == (bool(text.strip()) and bn.query_shape_of(text) == "title")
    if title:
        assert not text.strip().endswith("?")  # a question's end


def test_is_title_reads_headings_and_noun_phrases_only() -> None:
    for q in (TITLE, "Disclaimer and copyright", "install on windows", "Perl Books."):
        assert query_shape.is_title(q), q
    for q in (SENTENCE, QUESTION, REPORT, ERROR, "", "   "):
        assert not query_shape.is_title(q), q
