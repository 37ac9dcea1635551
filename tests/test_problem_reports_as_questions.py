"""``RetrievalConfig.question_problem_reports`` (helper quality72): a problem report over
documents read as a question (the question fusion and tree terms, as an error report is),
on by default; and the bench's filter for the queries that option can change."""

from __future__ import annotations

import sys
from pathlib import Path

from treehop import RetrievalConfig
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import hand_vector as vec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

R = "viking://resources"
MEM = "viking://user/alice/memories"
REPORT = "Fetchmail hangs after the server greeting"


def _resolved(query: str, roots: list[str], **cfg: object):  # type: ignore[no-untyped-def]
    r = HierarchicalRetriever(EmbeddedStore(), RetrievalConfig(**cfg))  # type: ignore[arg-type]
    req = RetrievalRequest(query=TypedQuery(query=query), vector=vec((0, 1.0)), roots=roots)
    return r._resolve(req)


def test_a_problem_report_takes_the_question_fusion_unless_the_option_is_off() -> None:
    defaults = RetrievalConfig()
    off = _resolved(REPORT, [f"{R}/docs"], question_problem_reports=False)
    assert off.passages and not off.question
    assert off.dense_weight == defaults.dense_weight
    assert off.context.neighbours == defaults.context_neighbour_weight
    # problem_report_passages off: a report is any other query, whatever this option says
    none = _resolved(REPORT, [f"{R}/docs"], problem_report_passages=False)
    assert not none.question and not none.passages
    on = _resolved(REPORT, [f"{R}/docs"])
    assert on.question and on.passages
    assert on.dense_weight == defaults.question_dense_weight != defaults.dense_weight
    assert not on.context.active  # question_context_scale 0: the tree terms off
    # a memory search keeps its weights; a heading is not a report either way
    assert not _resolved(REPORT, [MEM], question_problem_reports=True).question
    heading = _resolved("Debugging crashes", [f"{R}/docs"], question_problem_reports=True)
    assert not heading.question and not heading.passages


def test_the_bench_filter_keeps_only_the_queries_the_option_changes() -> None:
    import bench_natural as bn

    assert bn.problem_report_only(REPORT)
    assert not bn.problem_report_only("Why does fetchmail hang after the greeting?")
    assert not bn.problem_report_only("fatal: unable to access the remote repository")
    assert not bn.problem_report_only("Debugging crashes")
    for q in (REPORT, "Why does fetchmail hang?", "fatal: unable to access the remote"):
        on = _resolved(q, [f"{R}/docs"])
        off = _resolved(q, [f"{R}/docs"], question_problem_reports=False)
        assert (on.question != off.question) == bn.problem_report_only(q)
