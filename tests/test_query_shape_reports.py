"""Error and problem reports (treehop/query_shape.py, issue 33 item 4): a query that pastes or
quotes an error message is read as a question over documents (``question_error_reports``); a
statement that something does not do its job takes passage slots
(``problem_report_passages``). Questions stay questions; headings, link texts and first
sentences are not reports; both readers are linear in a constant on any input."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from treehop import RetrievalConfig, Treehop
from treehop.hierarchical_retriever import HierarchicalRetriever, RetrievalRequest
from treehop.models import TypedQuery
from treehop.query_shape import (
    REPORT_HEAD_CHARS,
    is_error_report,
    is_problem_report,
    is_question,
    is_sentence,
)
from treehop.stores.embedded import EmbeddedStore

from treehop_test_doubles import hand_vector as vec

R = "viking://resources"
MEM = "viking://user/alice/memories"
DATA = Path(__file__).resolve().parent.parent / "bench" / "data"


@pytest.mark.parametrize(
    "query",
    [
        "I get `fatal: unable to access 'https://example.org/repo.git/'` when I push",
        "Error: SSL certificate problem: unable to get local issuer certificate",
        "ImportError: No module named yaml",
        "java.lang.NullPointerException: name is null in the servlet filter",
        "fatal: refusing to merge unrelated histories",
        "warning: LF will be replaced by CRLF in README.md",
        "ERROR: could not find a version that satisfies the requirement",
        "bash: foo: command not found",
        "Permission denied (publickey) on clone",
        "Traceback (most recent call last): File app.py, line 3",
        "open fails with ENOENT although the file exists",
        "[Errno 13] on the log file after the upgrade",
        "the installer quits with exit status 127",
        'Pushing says "remote rejected: hook declined"',
        "Uploading a file gives \u201cRequest entity too large: error 413\u201d",
        "Getting an exception when the cache is cleared",
        "we keep getting a strange error after the migration",
        "When I build with clang, I see this warning about unused variables",
    ],
)
def test_error_reports(query: str) -> None:
    assert is_error_report(query)


@pytest.mark.parametrize(
    "query",
    [
        "Error handling",  # a heading: no message after the label
        "Errors and exceptions",
        "Assertions about expected exceptions",
        "Modifying Python traceback printing",
        "Warning: this function is deprecated since 2.0.",  # an admonition's first sentence
        "errno \u2014 standard errno system symbols",  # a module's title: no number follows
        "Exit codes",
        "Exit status of the test run",
        "ValueError",  # an anchor: a class's name, no message
        "Raising a ValueError from a validator",
        'Set the log level to "error"',  # one quoted word: a literal
        "Use `--force` to overwrite",
        "The `git push` command",
        "Getting started",
        "How to get the most out of errors in tests",
        "",
        "   ",
    ],
)
def test_not_error_reports(query: str) -> None:
    assert not is_error_report(query)


@pytest.mark.parametrize(
    "query",
    [
        "Fetchmail hangs while fetching mail",
        "The daemon doesn't start after a reboot",
        "the admin does not show my custom field",
        "my mails are not delivered",
        "Static files not served in production",
        "Stylesheets not loading behind the proxy",
        "Connections hang after the TLS handshake",
        "kubernetes pods crash",
        "Emacs crashes on startup with my init file",
        "The build fails on Windows",
        "Fetchmail fails to authenticate against the server",
        "Fetchmail running as root stopped working after an upgrade",
        "The editor is timing out on large files",
        "Mail no longer arrives in my inbox",
        "sshd won't accept my key",
        "Nothing happens when I click save",
        "Cannot connect to the database from the container",  # a report's subject left out
    ],
)
def test_problem_reports(query: str) -> None:
    assert is_problem_report(query)


@pytest.mark.parametrize(
    "query",
    [
        "Do not use mutable default arguments",  # an order
        "Don't repeat yourself",
        "Tests that don't need a database",  # a relative clause
        "Fixtures which do not depend on other fixtures",
        "You don't need to restart the server",  # advice
        "Whether or not to use transactions",
        "This option does not need a value",  # scope, not failure
        "Not only tests but also fixtures",
        "Re-run only failed tests",
        "xfail: mark test functions as expected to fail",
        "How to handle test failures",
        "Crash reporting",
        "Debugging crashes in C extensions",  # a plural noun after an -ing word
        "Using a hanging indent",
        "Kernel crash dumps",  # a base form inside a compound
        "Line break handling",
        "Feature freeze policy",
        "Insert a page break",  # a singular subject never takes the base verb
        "Skip tests that may fail on Windows",
        "Features not supported by SQLite",  # a bare "not" before no participle
        "Fetchmail hangs",  # two words: too short to tell from a title
        "You can check that code raises a warning using warns(), which works like raises "
        "(except that raises does not capture all exceptions):",  # a parenthesised aside
        "",
    ],
)
def test_not_problem_reports(query: str) -> None:
    assert not is_problem_report(query)


def test_questions_stay_questions() -> None:
    """The readers only add: what ``is_question`` reads as a question is unchanged, whether or
    not it also reports an error or a problem."""
    for query in (
        "Why do I get 'fatal: not a git repository'?",
        "How do I fix ImportError: No module named yaml?",
        "Why doesn't my build work on Windows?",
        "I can't log in after the upgrade",
    ):
        assert is_question(query)


def _derived_queries() -> list[str]:
    """Headings, first sentences and link texts of four documentation trees (the derived
    query kind of ``bench/bench_tree.py``)."""
    out: list[str] = []
    for name in ("pytest_doc_queries", "flask_doc_queries", "gitdoc_queries", "django_doc_queries"):
        data = json.loads((DATA / f"{name}.json").read_text())
        rows = data if isinstance(data, list) else data.get("queries", data)
        out.extend(r["query"] for r in rows if isinstance(r, dict) and "query" in r)
    return out


def test_headings_and_first_sentences_are_not_reports() -> None:
    """Over 1,100 headings, first sentences and link texts none reads as an error report, and
    none that is not already a question or sentence reads as a problem report: their shape,
    and so their fusion and slots, stay as before."""
    queries = _derived_queries()
    assert len(queries) > 1000
    errors = [q for q in queries if is_error_report(q) and not is_question(q)]
    problems = [
        q
        for q in queries
        if is_problem_report(q) and not (is_question(q) or is_sentence(q) or is_error_report(q))
    ]
    assert errors == []
    assert problems == []


_HOSTILE = st.sampled_from(
    ["'", '"', "`", ":", "(", ")", "\u201c", "error:", "not ", "I get ", "exit status ", " ", "E"]
)


@given(st.text(max_size=300), st.text(max_size=300))
def test_readers_never_raise_and_read_only_the_head(text: str, tail: str) -> None:
    """Any text answers a bool; spaces after it change nothing, and past
    :data:`REPORT_HEAD_CHARS` nothing is read."""
    padded = text + " " * (REPORT_HEAD_CHARS - len(text))
    for reader in (is_error_report, is_problem_report):
        shape = reader(text)
        assert shape in (True, False)
        assert reader(padded) == shape
        assert reader(padded + tail) == shape


@given(st.lists(_HOSTILE, min_size=1, max_size=8), st.text(max_size=50))
def test_readers_are_cheap_on_long_hostile_input(pattern: list[str], lead: str) -> None:
    """200k characters of quotes, colons, brackets and half-markers answer well within a
    generous bound (a regular expression with backtracking, or a scan per word, would not)."""
    unit = "".join(pattern)
    query = lead + unit * (200_000 // len(unit) + 1)
    start = time.thread_time()  # (CPU time of this thread: a loaded machine's waits do not count)
    for reader in (is_error_report, is_problem_report):
        assert reader(query) in (True, False)
    assert time.thread_time() - start < 0.5


def _resolved(query: str, roots: list[str], **cfg: object):  # type: ignore[no-untyped-def]
    r = HierarchicalRetriever(EmbeddedStore(), RetrievalConfig(**cfg))  # type: ignore[arg-type]
    req = RetrievalRequest(query=TypedQuery(query=query), vector=vec((0, 1.0)), roots=roots)
    return r._resolve(req)


def test_an_error_report_over_documents_is_read_as_a_question() -> None:
    """Passage slots and the question fusion (``question_dense_weight``, the tree context
    off); ``question_error_reports=False`` gives it back the shape of a heading; a search of
    memories keeps its weights."""
    defaults = RetrievalConfig()
    report = "fatal: unable to access the remote repository over https"
    q = _resolved(report, [f"{R}/docs"])
    assert q.question and q.passages
    assert q.dense_weight == defaults.question_dense_weight
    assert not q.context.active
    off = _resolved(
        report, [f"{R}/docs"], question_error_reports=False, question_problem_reports=False
    )
    assert not off.question and off.passages  # "unable to access": a problem report
    assert not _resolved(
        report, [f"{R}/docs"], question_error_reports=False, problem_report_passages=False
    ).passages
    assert off.dense_weight == defaults.dense_weight
    assert off.context.neighbours == defaults.context_neighbour_weight
    mem = _resolved(report, [MEM])
    assert not mem.question and mem.dense_weight == defaults.dense_weight


def test_a_problem_report_over_documents_takes_passages_and_keeps_its_weights() -> None:
    defaults = RetrievalConfig()
    report = "Fetchmail hangs after the server greeting"
    # (read as a question by default: tests/test_problem_reports_as_questions.py)
    p = _resolved(report, [f"{R}/docs"], question_problem_reports=False)
    assert p.passages and not p.question
    assert p.dense_weight == defaults.dense_weight
    assert p.context.neighbours == defaults.context_neighbour_weight
    assert not _resolved(report, [f"{R}/docs"], problem_report_passages=False).passages
    assert not _resolved(report, [MEM]).passages


def _guide(tmp: Path) -> Path:
    root = tmp / "docs"
    root.mkdir()
    oauth = "\n\n".join(f"oauth token scopes refresh detail {i}. " * 8 for i in range(3))
    deploy = "\n\n".join(f"kubernetes rollout readiness probes {i}. " * 8 for i in range(3))
    (root / "guide.md").write_text(f"# Guide\n\n## Tokens\n\n{oauth}\n\n## Deploying\n\n{deploy}")
    (root / "notes.md").write_text("unrelated gardening notes about tomatoes")
    return root


def test_an_error_report_takes_a_slot_per_section(bow, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Through ``find()``: a pasted message over a page with two matching sections shows each
    section in its own slot (passage slots); the same words as a heading, or with
    ``question_error_reports`` off, keep one slot for the page."""
    report = "Error: oauth token scopes and kubernetes readiness probes rejected"
    heading = "oauth token scopes and kubernetes readiness probes rejected"
    with Treehop(embedder=bow, tagger=None, chunk_chars=300) as th:
        th.add_resource(_guide(tmp_path), target_uri=f"{R}/docs")
        th.config.few_document_passages = False  # (two documents: a heading fills 5 otherwise)

        def sections(query: str) -> list[tuple[str, ...]]:
            res = th.find(query, limit=5)
            return [
                tuple(m.metadata["heading_path"])
                for m in res.resources
                if m.parent_uri == f"{R}/docs/guide.md"
            ]

        got = sections(report)
        assert ("Guide", "Tokens") in got and ("Guide", "Deploying") in got
        assert len(got) == len(set(got)), "one slot per section"
        assert len(sections(heading)) == 1
        th.config.question_error_reports = False
        assert len(sections(report)) == 1
