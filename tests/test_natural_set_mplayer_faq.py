"""The ``mplayer-faq`` natural-question set (``bench/natural_sets.py``), its FAQ reader and the
question-leak check (``bench/check_question_leaks.py``) on small inline pages shaped like
Debian's ``mplayer-doc`` (``HTML/en/faq.html``: DocBook XSL chunked HTML, a ``qandaset`` that
opens with a generated ``<dl>`` list of every question, then a table whose ``qandadiv`` rows
hold the section headings, ``toc`` rows list the section's questions again, and
``question`` / ``answer`` rows hold "Q:" / "A:" label cells beside the text cells; the rest
of the English manual beside it, with its own tables of contents) in a package tree laid out
as the package unpacks (marker present, nothing downloaded); offline, no embedding model, no
test reads the real package.

What the set's numbers rest on: no question's text is left in any file (either list of
questions, a question's row, a manual page quoting one); each answer is exactly its answer
row's text, the next question, a section heading and the page's footnotes excluded; a table
nested in an answer stays inside it; ids are the section's number and the question's place;
an answer too short to judge leaves the set but not the corpus's scrubbing; the halves hold
when an entry is added.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import check_question_leaks as cql
import datasets as ds
import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_held_out

Q_PATCH = "How do I create a proper patch for MPlayer?"
Q_AUTOCONF = "Why don't you use autoconf/automake?"
Q_CONFIGURE = (
    "Configure ends with this text, and MPlayer won't compile! "
    "Your gcc does not support even i386 for '-march' and '-mcpu'"
)
Q_STATUS = "What is the meaning of the numbers on the status line?"
Q_MATROX = "I have a Matrox G200/G400/G450/G550, how do I compile/use the mga_vid driver?"
Q_ORPHAN = "Is this question ever answered by anyone at all?"
Q_MENCODER = "MEncoder won't..."
QUESTIONS = (Q_PATCH, Q_AUTOCONF, Q_CONFIGURE, Q_STATUS, Q_MATROX, Q_MENCODER)
"""The questions the page asks (``Q_ORPHAN`` has no answer row: it asks nothing)."""

A_PATCH = "We made a short document describing all the necessary details."
A_AUTOCONF = "We have a modular, handwritten build system. It does a reasonably good job."
A_CONFIGURE = "Your gcc isn't installed correctly, check the config.log file for details."
A_STATUS_CELL = "audio position in seconds"
A_MATROX = "Read the mga_vid section."  # 4 words: too short to judge
A_MENCODER = "Have a look at the TOOLS subdirectory for a collection of random scripts."
FOOTNOTE = "some forms of copy protection can be assumed to be content corruption"


def _q_html(text: str) -> str:
    """A question's text as the stylesheets mark it up (the program's name in a span)."""
    return text.replace("MPlayer", '<span class="application">MPlayer</span>')


def _list_entry(anchor: str, text: str) -> str:
    return f'<dt>Q: <a href="faq.html#{anchor}">\n{text}\n</a></dt>'


def _question_row(anchor: str, cell: str) -> str:
    return (
        f'<tr class="question"><td align="left" valign="top"><a name="{anchor}"></a>'
        f'<a name="{anchor}x"></a><p><b>Q:</b></p></td><td align="left" valign="top">'
        f"{cell}</td></tr>"
    )


def _answer_row(cell: str) -> str:
    return (
        '<tr class="answer"><td align="left" valign="top"><p><b>A:</b></p></td>'
        f'<td align="left" valign="top">{cell}</td></tr>'
    )


def _section_row(anchor: str, title: str) -> str:
    return (
        '<tr class="qandadiv"><td align="left" valign="top" colspan="2"><h3 class="title">'
        f'<a name="{anchor}"></a>{title}</h3></td></tr>'
    )


def _toc_row(entries: str) -> str:
    return f'<tr class="toc"><td align="left" valign="top" colspan="2"><dl>{entries}</dl></td></tr>'


SECTION_1 = _list_entry("q1", Q_PATCH) + _list_entry("q2", Q_AUTOCONF) + _list_entry("q0", Q_ORPHAN)
SECTION_2 = (
    _list_entry("q3", Q_CONFIGURE) + _list_entry("q4", Q_STATUS) + _list_entry("q5", Q_MATROX)
)
SECTION_3 = _list_entry("q6", Q_MENCODER)
ROWS = (
    _section_row("faq-development", "8.1. Development")
    + _toc_row(SECTION_1)
    + _question_row("q1", f"<p>\n{_q_html(Q_PATCH)}\n</p>")
    + _answer_row(f"<p>\n{A_PATCH.replace('short document', '<a href=x>short document</a>')}</p>")
    + _question_row("q2", f"<p>\n{Q_AUTOCONF}\n</p>")
    + _answer_row(f"<p>\n{A_AUTOCONF}\n</p>")
    + _question_row("q0", f"<p>{Q_ORPHAN}</p>")
    + _section_row("faq-compilation", "8.2. Compilation and installation")
    + _toc_row(SECTION_2)
    + _question_row(
        "q3",
        '<p>\nConfigure ends with this text, and <span class="application">MPlayer</span> '
        'won\'t compile!\n</p><pre class="screen">Your gcc does not support even i386 for '
        "'-march' and '-mcpu'</pre>",
    )
    + _answer_row(f"<p>{A_CONFIGURE}</p>")
    + _question_row("q4", f"<p>{_q_html(Q_STATUS)}</p>")
    + _answer_row(
        '<p>Example:</p><pre class="screen">A: 2.1 V: 2.2 A-V: -0.167</pre>'
        f"<table><tr><td>A: 2.1</td><td>{A_STATUS_CELL}</td></tr>"
        "<tr><td>V: 2.2</td><td>video position in seconds</td></tr></table>"
        "<p>The numbers after the table are part of the answer too.</p>"
    )
    + _question_row("q5", f"<p>{Q_MATROX}</p>")
    + _answer_row(f"<p>{A_MATROX}</p>")
    + _section_row("faq-encoding", "8.8. Encoding")
    + _toc_row(SECTION_3)
    + _question_row("q6", f"<p>{Q_MENCODER}</p>")
    + _answer_row(f"<p>{A_MENCODER}</p>")
)
NAV_HEADER = (
    '<div class="navheader"><table width="100%" summary="Navigation header"><tr><th>Chapter 8. '
    'Frequently Asked Questions</th></tr><tr><td><a href="prev.html">Prev</a></td></tr></table>'
    "</div>"
)
NAV_FOOTER = (
    '<div class="navfooter"><table width="100%" summary="Navigation footer"><tr><td>'
    '<a href="bugreports.html">Next</a></td><td>Appendix A. How to report bugs</td></tr>'
    "</table></div>"
)


def faq_page(rows: str = ROWS) -> str:
    return (
        '<html><head><meta charset="utf-8"><title>Chapter 8. Frequently Asked Questions</title>'
        f"</head><body>{NAV_HEADER}"
        '<div class="chapter"><div class="titlepage"><div><div><h1 class="title">'
        '<a name="faq"></a>Chapter 8. Frequently Asked Questions</h1></div></div></div>'
        '<div class="qandaset"><a name="idm1"></a><dl>'
        f'<dt>8.1. <a href="faq.html#faq-development">Development</a></dt><dd><dl>{SECTION_1}'
        "</dl></dd>"
        f'<dt>8.2. <a href="faq.html#faq-compilation">Compilation</a></dt><dd><dl>{SECTION_2}'
        "</dl></dd>"
        f'<dt>8.8. <a href="faq.html#faq-encoding">Encoding</a></dt><dd><dl>{SECTION_3}'
        "</dl></dd></dl>"
        '<table border="0" style="width: 100%;"><colgroup><col align="left" width="1%"><col>'
        f"</colgroup><tbody>{rows}</tbody></table></div>"
        '<div class="footnotes"><br><hr><div class="footnote"><p><sup>[3]</sup> '
        f"{FOOTNOTE}.</p></div></div></div>{NAV_FOOTER}</body></html>"
    )


FAQ_HTML = faq_page()
INDEX_HTML = (
    '<html><head><title>MPlayer - The Movie Player</title></head><body><div class="book">'
    '<div class="titlepage"><h1 class="title">MPlayer - The Movie Player</h1></div>'
    '<div class="toc"><p><b>Table of Contents</b></p><dl><dt>8. <a href="faq.html">Frequently '
    f'Asked Questions</a></dt><dd><dl><dt><a href="faq.html#q1">{Q_PATCH}</a></dt></dl></dd></dl>'
    "</div><p>MPlayer is free software; you can redistribute it.</p></div></body></html>"
)
BUGS_HTML = (
    f'<html><head><title>Appendix A</title></head><body>{NAV_HEADER}<div class="appendix">'
    '<h1 class="title">Appendix A. How to report bugs</h1>'
    f"<p>Good bug reports are valuable. The FAQ answers {Q_STATUS} and more.</p>"
    f"</div>{NAV_FOOTER}</body></html>"
)
OTHER_LANGUAGE = (
    "<html><body><h1>Häufig gestellte Fragen</h1><p>Wie erstelle ich?</p></body></html>"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ_HTML) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.MPLAYER_PACKAGE, "2:1.5+svn38408-1")
    html_dir = root / ns.MPLAYER_HTML
    html_dir.mkdir(parents=True)
    (html_dir / ns.MPLAYER_FAQ).write_text(faq, encoding="utf-8")
    (html_dir / "index.html").write_text(INDEX_HTML, encoding="utf-8")
    (html_dir / "bugreports.html").write_text(BUGS_HTML, encoding="utf-8")
    (html_dir / "default.css").write_text("body { color: black }\n", encoding="utf-8")
    de = root / "usr/share/doc/mplayer/HTML/de"
    de.mkdir(parents=True)
    (de / "faq.html").write_text(OTHER_LANGUAGE, encoding="utf-8")
    tech = root / "usr/share/doc/mplayer/tech"
    tech.mkdir(parents=True)
    (tech / "patches.txt").write_text("How to send patches to the developers.\n")
    return html_dir


def test_split_mplayer_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_mplayer_faq(FAQ_HTML)
    assert [(k, q) for k, q, _ in qa] == [
        ("8.1.1", Q_PATCH),
        ("8.1.2", Q_AUTOCONF),
        ("8.2.1", Q_CONFIGURE),  # the <pre> inside the question read as its text, unfenced
        ("8.2.2", Q_STATUS),
        ("8.2.3", Q_MATROX),
        ("8.8.1", Q_MENCODER),
    ]
    answers = {k: a for k, _, a in qa}
    assert answers["8.1.1"] == A_PATCH
    assert answers["8.1.2"] == A_AUTOCONF
    # the nested table stays inside its answer; the next question's row is not in it
    assert A_STATUS_CELL in answers["8.2.2"] and "part of the answer too" in answers["8.2.2"]
    assert "A: 2.1 V: 2.2" in answers["8.2.2"] and Q_MATROX not in answers["8.2.2"]
    # the last answer ends at the table: the page's footnotes are not in it
    assert answers["8.8.1"] == A_MENCODER
    assert FOOTNOTE in page
    # section headings kept once each, as level-2 headings under the chapter's title
    assert page.startswith("# Chapter 8. Frequently Asked Questions\n")
    assert page.count("## 8.1. Development") == 1
    assert re.findall(r"(?m)^## .*$", page) == [
        "## 8.1. Development",
        "## 8.2. Compilation and installation",
        "## 8.8. Encoding",
    ]
    # labels, navigation and both lists of questions gone
    assert "Q:" not in page and "A: " not in page.replace("A: 2.1", "")
    assert "Prev" not in page and "Next" not in page
    for q in (*QUESTIONS, Q_ORPHAN):
        assert q not in page
    assert "Your gcc does not support" not in page
    for _, _, a in qa:
        assert a in page


def test_split_mplayer_faq_question_without_answer_asks_nothing() -> None:
    _, qa = ns.split_mplayer_faq(FAQ_HTML)
    assert Q_ORPHAN not in {q for _, q, _ in qa}
    # an empty answer row asks nothing either
    rows = _question_row("z1", "<p>Does an empty answer ask anything at all?</p>") + _answer_row(
        "<p> </p>"
    )
    _, qa2 = ns.split_mplayer_faq(faq_page(_section_row("s", "8.1. Development") + rows))
    assert qa2 == []


def test_split_mplayer_faq_repeated_place_gets_a_suffix() -> None:
    rows = (
        _section_row("a", "8.1. One")
        + _question_row("x1", "<p>Is this the first question here?</p>")
        + _answer_row("<p>Yes, it is the first question of the section.</p>")
        + _section_row("b", "8.1. One again")
        + _question_row("x2", "<p>Is this the second question here?</p>")
        + _answer_row("<p>Yes, and its section repeats the same number.</p>")
    )
    _, qa = ns.split_mplayer_faq(faq_page(rows))
    assert [k for k, _, _ in qa] == ["8.1.1", "8.1.1-2"]


def test_split_mplayer_faq_without_a_qandaset_asks_nothing() -> None:
    page, qa = ns.split_mplayer_faq(BUGS_HTML)
    assert qa == []
    assert page == ns.docbook_page_markdown(BUGS_HTML)


_WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "mplayer", "codec", "audio", "video"]),
    min_size=5,
    max_size=9,
)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.booleans(), _WORDS, _WORDS, st.booleans()),
        min_size=1,
        max_size=8,
    )
)
def test_split_mplayer_faq_answers_are_in_the_page_and_questions_are_not(
    entries: list[tuple[bool, list[str], list[str], bool]],
) -> None:
    """Random sections, questions and answers (some with a nested table): every answer is
    in the page, the page holds no question row's text, ids are unique, and there are as
    many questions as answered question rows."""
    rows = []
    section = 0
    answered = 0
    for n, (new_section, q_words, a_words, nested) in enumerate(entries):
        if new_section or n == 0:
            section += 1
            rows.append(_section_row(f"s{section}", f"8.{section}. Section {section}"))
        question = f"Question{n} " + " ".join(q_words) + "?"
        answer = f"Answer{n} " + " ".join(a_words) + "."
        cell = f"<p>{answer}</p>" + ("<table><tr><td>cell</td></tr></table>" if nested else "")
        rows.append(_question_row(f"q{n}", f"<p>{question}</p>") + _answer_row(cell))
        answered += 1
    page, qa = ns.split_mplayer_faq(faq_page("".join(rows)))
    assert len(qa) == answered
    assert len({k for k, _, _ in qa}) == len(qa)
    for _, q, a in qa:
        assert a in page
        assert q.split()[0] not in page  # "QuestionN" only ever stood in the question
        assert q.split()[0] not in a


def test_mplayer_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.mplayer_faq_set()
    assert [q.qid for q in nset.questions] == [
        "mplayer-faq:8.1.1",
        "mplayer-faq:8.1.2",
        "mplayer-faq:8.2.1",
        "mplayer-faq:8.2.2",
        "mplayer-faq:8.8.1",
    ]
    # "Read the mga_vid section." (4 words) cannot be judged by overlap: left out and named
    assert nset.left_out == (Q_MATROX,)
    assert Q_MATROX in nset.note and "2:1.5+svn38408-1" in nset.note
    # every English page but the stylesheet; other languages and tech/ stay out
    assert sorted(nset.files) == ["bugreports.md", "faq.md", "index.md"]
    corpus = "\n".join(nset.files.values())
    assert "Fragen" not in corpus and "send patches" not in corpus
    # the index's table of contents is dropped; a manual page's quote of a question is
    # scrubbed, its other text kept
    assert "MPlayer is free software" in nset.files["index.md"]
    assert Q_PATCH not in corpus
    assert (
        "Good bug reports are valuable. The FAQ answers  and more." in nset.files["bugreports.md"]
    )
    for q in nset.questions:
        assert q.source == "faq.md"
        assert q.answers[0][0] in nset.files["faq.md"]
    assert (nset.root / "faq.md").is_file()


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.mplayer_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted(QUESTIONS)
    assert cql.find_leaks(nset.files, asked, False) == []
    # the same check on the FAQ as shipped finds every question: it can fail
    shipped = cql.find_leaks({"faq.html": FAQ_HTML}, asked, True)
    assert {lk.question for lk in shipped} == set(QUESTIONS)


def test_mplayer_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch)
    first = ns.mplayer_faq_set().questions
    dev, test = bt.sampled_halves(first, None)
    assert {q.qid for q in dev}.isdisjoint({q.qid for q in test})
    assert len(dev) + len(test) == len(first)
    assert (dev, test) == bt.sampled_halves(ns.mplayer_faq_set().questions, None)
    added = (
        ROWS
        + _section_row("faq-new", "8.9. New")
        + _question_row("q9", "<p>Is a new entry kept apart from the old halves?</p>")
        + _answer_row("<p>Yes, each question is sampled by its own id.</p>")
    )
    html_dir = ds.debian_package_root(ns.MPLAYER_PACKAGE) / ns.MPLAYER_HTML
    (html_dir / ns.MPLAYER_FAQ).write_text(faq_page(added), encoding="utf-8")
    again = ns.mplayer_faq_set().questions
    assert "mplayer-faq:8.9.1" in {q.qid for q in again}
    dev2, test2 = bt.sampled_halves(again, None)
    assert {q.qid for q in dev} <= {q.qid for q in dev2}
    assert {q.qid for q in test} <= {q.qid for q in test2}


def test_mplayer_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html_dir = _package(tmp_path, monkeypatch)
    (html_dir / ns.MPLAYER_FAQ).unlink()
    with pytest.raises(FileNotFoundError):
        ns.mplayer_faq_set()


def test_mplayer_faq_is_held_out() -> None:
    """Run by name only: no screening script reads a held-out set by default."""
    assert_held_out("mplayer-faq")
