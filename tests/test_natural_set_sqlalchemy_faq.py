"""The sqlalchemy-faq natural set (``bench/natural_sets.py``) and its blanked-HTML variant
(``bench/bench_html_blanked.py``), on a tiny package laid out as ``python-sqlalchemy-doc``
unpacks (marker present, nothing downloaded): the theme's ``role="main"`` column is the
text, every ``##`` heading and every ``###`` written as a question is a question and leaves
the corpus, a ``###`` sub-section title stays inside its entry's answer, the page's local
contents box is dropped, an entry answered by a bare link to another entry is left out,
linked pages join up to the size cap, and the HTML variant empties the questions that the
sidebar and the contents box quote with inline ``<code>``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_html_blanked as bh
import natural_sets as ns
from debian_package_double import unpacked_package

Q_LEN = "Query has no __len__(), why not?"
Q_ROLLBACK = "Why does my Session roll back after a flush error?"
Q_SUB = "But why does flush() insist on issuing a ROLLBACK?"
Q_PROFILE = "How can I profile a SQLAlchemy powered application?"
Q_POINTER = "SQL expression for WHERE role expected, got True"


def _page(title: str, body: str, toc: str = "") -> str:
    """A page as SQLAlchemy's theme writes it: a sidebar and an "On this page" list that
    quote every section title (inline code kept), then ``<div id="docs-body"
    role="main">`` holding the page's sections."""
    return (
        '<html><body><div id="docs-sidebar"><p>Sidebar words every page repeats</p>'
        f'<ul>{toc}</ul></div><div id="docs-top-navigation"><b>On this page:</b><ul>{toc}'
        '</ul></div><div id="docs-body-container"><div id="docs-body" role="main" '
        f'class="withsidebar"><section id="t"><h1>{title}<a class="headerlink" href="#t">'
        f"¶</a></h1>{body}</section></div></div></body></html>"
    )


def _h(level: int, anchor: str, title: str) -> str:
    return f'<h{level}>{title}<a class="headerlink" href="#{anchor}">¶</a></h{level}>'


_LEN_HTML = (
    'Query has no <code class="docutils literal"><span class="pre">__len__()</span></code>, '
    "why not?"
)
_TITLES = {
    "len": _LEN_HTML,
    "rb": Q_ROLLBACK,
    "sub": Q_SUB.replace("flush()", '<code class="docutils literal">flush()</code>'),
    "prof": Q_PROFILE,
    "qp": "Query Profiling",
    "ptr": Q_POINTER,
}
_TOC = "".join(
    f'<li><a class="reference internal" href="#{a}">{t}</a></li>' for a, t in _TITLES.items()
)
_CONTENTS = (
    f'<div class="contents faq local topic" id="contents"><ul class="simple">{_TOC}</ul></div>'
)
_SESSIONS = _page(
    "Sessions / Queries",
    _CONTENTS
    + f'<section id="len">{_h(2, "len", _LEN_HTML)}<p>The Python __len__() call on a Query '
    "would have to run a SELECT COUNT to answer, so Query has none; call Query.count() "
    'when the count is wanted.</p><p>Release notes: <a href="../changelog/changelog_14.html">'
    '1.4</a>, the full API at <a href="../orm/huge.html">the reference</a>.</p></section>'
    + f'<section id="rb">{_h(2, "rb", Q_ROLLBACK)}<p>A flush that fails leaves the '
    "transaction rolled back inside the database, and the Session refuses further work until "
    "Session.rollback() is called.</p>"
    + f'<section id="sub">{_h(3, "sub", _TITLES["sub"])}<p>Because the database may have '
    "aborted the transaction already, and a flush is one unit of work that must be all or "
    "nothing.</p></section></section>"
    + f'<section id="prof">{_h(2, "prof", Q_PROFILE)}<p>Profiling means looking at the '
    'statements emitted and the Python time around them; see <a href="../orm/session_basics.'
    'html">session basics</a>.</p>'
    + f'<section id="qp">{_h(3, "qp", "Query Profiling")}<p>Attach before_cursor_execute '
    "and after_cursor_execute event listeners that record how long each statement took."
    "</p></section></section>"
    + f'<section id="ptr">{_h(2, "ptr", Q_POINTER)}<p>See <a class="reference internal" '
    f'href="#len">{_LEN_HTML}</a>.</p></section>',
    _TOC,
)


@pytest.fixture
def sqla_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.SQLALCHEMY_PACKAGE, "1.4.46+ds1-1")
    html_dir = root / ns.SQLALCHEMY_HTML
    for sub in ("faq", "orm", "changelog"):
        (html_dir / sub).mkdir(parents=True)
    (html_dir / "faq" / "sessions.html").write_text(_SESSIONS)
    (html_dir / "faq" / "index.html").write_text(
        _page("Frequently Asked Questions", "<p>" + "Every FAQ question listed here. " * 9)
    )
    basics = "<p>" + "A Session holds the objects loaded in one transaction. " * 6 + "</p>"
    (html_dir / "orm" / "session_basics.html").write_text(_page("Session Basics", basics))
    huge = "<p>" + "Every method of every class. " * 3000 + "</p>"
    (html_dir / "orm" / "huge.html").write_text(_page("Reference", huge))
    (html_dir / "changelog" / "changelog_14.html").write_text(
        _page("1.4 Changelog", "<p>" + "fixed a bug in the unit of work. " * 9 + "</p>")
    )
    return html_dir


def test_sqlalchemy_faq_set_questions_answers_and_corpus(sqla_package: Path) -> None:
    nset = ns.sqlalchemy_faq_set()
    assert [q.text for q in nset.questions] == [Q_LEN, Q_ROLLBACK, Q_SUB, Q_PROFILE]
    assert nset.left_out == (Q_POINTER,)  # its answer is "See ." once the link is scrubbed
    answers = {q.text: q.answers[0][0] for q in nset.questions}
    assert "Session.rollback() is called" in answers[Q_ROLLBACK]
    assert "all or nothing" not in answers[Q_ROLLBACK]  # the sub-question has its own answer
    assert "all or nothing" in answers[Q_SUB]
    # a sub-section title that is not a question stays, inside its entry's answer
    assert "Query Profiling" in answers[Q_PROFILE]
    assert "after_cursor_execute" in answers[Q_PROFILE]
    assert set(nset.files) == {"faq/sessions.md", "orm/session_basics.md"}
    faq = nset.files["faq/sessions.md"]
    assert faq.startswith("# Sessions / Queries\n\nThe Python __len__() call")  # no contents
    assert faq.count("Query Profiling") == 1 and "### Query Profiling" in faq
    corpus = "\n".join(nset.files.values())
    for q in (Q_LEN, Q_ROLLBACK, Q_SUB, Q_PROFILE, Q_POINTER):
        assert q not in corpus
    assert "Sidebar words" not in corpus and "On this page" not in corpus
    assert "orm/huge.md" in nset.note and "1.4.46+ds1-1" in nset.note
    assert Q_POINTER in nset.note
    assert (nset.root / "orm" / "session_basics.md").is_file()
    assert "sqlalchemy-faq" in ns.HELD_OUT_SETS and "sqlalchemy-faq" in ns.BUILDERS


def test_sqlalchemy_faq_html_variant_blanks_quoted_questions(sqla_package: Path) -> None:
    variant = bh.html_variant(ns.sqlalchemy_faq_set())
    assert set(variant.files) == {"faq/sessions.html", "orm/session_basics.md"}
    page = variant.files["faq/sessions.html"]
    assert "5 of 5 question headings blanked" in variant.note  # the left-out one too
    assert '<h2><a class="headerlink" href="#len">¶</a></h2>' in page
    assert '<h3><a class="headerlink" href="#sub">¶</a></h3>' in page
    assert _h(3, "qp", "Query Profiling") in page  # a sub-section title stays
    text = bh._norm(page)
    for q in (Q_LEN, Q_ROLLBACK, Q_SUB, Q_PROFILE, Q_POINTER):
        assert bh._norm(q) not in text  # sidebar, "On this page", contents box, cross-link
    assert "Sidebar words" in page  # the page as the user has it


def test_contents_list_dropped_only_when_it_lists_the_page_titles() -> None:
    page = "# T\n\n- A question?\n\n- Topic\n\n## A question?\n\nAn answer.\n"
    assert ns.drop_contents_list(page, {"T", "A question?", "Topic"}) == (
        "# T\n\n## A question?\n\nAn answer.\n"
    )
    intro = "# T\n\nAn introduction.\n\n- A question?\n\n## A question?\n\nAn answer.\n"
    assert ns.drop_contents_list(intro, {"T", "A question?"}) == intro


def test_topic_headings_stay_inside_the_open_answer() -> None:
    text = "# T\n\n## Q one?\n\nA.\n\n### Part\n\nB.\n\n### Sub?\n\nC.\n\n## Q two?\n\nD.\n"
    rest, pairs = ns.split_heading_questions(text, 2, lambda lvl, t: not t.endswith("?"))
    assert pairs == [("Q one?", "A.\n\n### Part\n\nB."), ("Sub?", "C."), ("Q two?", "D.")]
    assert rest == "# T\n\nA.\n\n### Part\n\nB.\n\nC.\n\nD.\n"
    # without the predicate every heading is a question (django-faq, borg-faq unchanged)
    _, plain = ns.split_heading_questions(text, 2)
    assert [q for q, _ in plain] == ["Q one?", "Part", "Sub?", "Q two?"]
