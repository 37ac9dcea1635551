"""The ``fftw-faq`` natural-question set (``bench/natural_sets.py``), its reading of FFTW's
bfnn-built FAQ pages and the question-leak check (``bench/check_question_leaks.py``) on small
inline pages shaped like Debian's ``libfftw3-doc`` ships them
(``/usr/share/doc/libfftw3-dev/fftw-faq.html/sectionN.html``: an ``<h1>`` title, the page's
contents list of links to its questions before an ``<hr>``, then ``<h2><A name=...>Question
N.M.  <title></A></h2>`` entries, titles wrapped over lines, one with ``<code>`` inside,
asked "Can I save FFTW's plans?" or stated "FFTW seems really slow.", answers of prose, lists
and ``<pre>``, a cross-reference quoting another question, an entry with no text) beside
texi2any manual pages (navigation header, mini-toc), the manual's contents page and indexes,
the FAQ's index page and ASCII copy to be left out, in a package tree laid out as
``libfftw3-doc`` unpacks (marker present, nothing downloaded); offline, no embedding model,
no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings,
its contents lists, a cross-reference, a manual page quoting one); each answer is exactly
the text under its ``<h2>`` up to the next one; ids are the FAQ's anchors, so an added entry
keeps the halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import check_question_leaks as cql
import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

Q_SLOW = "FFTW seems really slow."
Q_SAVE = "Can I save FFTW's plans?"
Q_SCALED = "Why does your inverse transform return a scaled result?"
Q_SOLARIS = "FFTW does not compile on Solaris, complaining about const."
Q_EMPTY = "Is this entry answered at all?"
Q_LINK = "My program does not link (on Unix)."


def _section(number: int, title: str, entries: list[tuple[str, str, str]]) -> str:
    """A bfnn section page: (anchor, question HTML, answer HTML) entries."""
    toc = "\n".join(
        f'<li><a href="#{a}" rel=subdocument>Q{number}.{k + 1}. {q}</a>'
        for k, (a, q, _) in enumerate(entries)
    )
    body = "".join(
        f'<h2><A name="{a}">\nQuestion {number}.{k + 1}.  {q}\n</A></h2>\n\n{ans}\n'
        for k, (a, q, ans) in enumerate(entries)
    )
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2//EN">\n<html>\n<head><title>\n'
        f"FFTW FAQ - Section {number}\n</title>\n</head><body><h1>\n"
        f"FFTW FAQ - Section {number} <br>\n{title}\n</h1>\n\n<ul>\n{toc}\n</ul><hr>\n\n"
        f'{body}<hr>\nNext: <a href="section{number + 1}.html" rel=precedes>Next section</a>.'
        '<br>\n<a href="index.html" rev=subdocument>Return to contents</a>.<p>\n<address>\n'
        '<A href="mailto:fftw@fftw.org">Matteo Frigo and Steven G. Johnson</A></address><br>\n'
        "Extracted from FFTW Frequently Asked Questions with Answers.\n</body></html>\n"
    )


SECTION_2 = _section(
    2,
    "Installing FFTW",
    [
        (
            "solarisSucks",
            "FFTW does not compile on Solaris, complaining about\n<code>const</code>.",
            "We know that at least on Solaris 2.5.x with Sun's compilers 4.2 you\n"
            "might get this error. Use <code>gcc</code> instead.",
        ),
    ],
)
SECTION_3 = _section(
    3,
    "Using FFTW",
    [
        (
            "slow",
            Q_SLOW,
            "You are probably recreating the plan before every transform.\n"
            "<ul>\n<li>First, you create a plan.\n<li>Then, you reuse the plan many times.\n"
            "</ul>\nOr precompute it; see "
            f'<A href="#savePlans">Q3.2 `{Q_SAVE}\'</A>',
        ),
        (
            "savePlans",
            "Can I save FFTW's\nplans?",
            "Yes. Starting with version 1.2, FFTW provides the <i>wisdom</i>\n"
            "mechanism for saving plans:\n<pre>\nfftw_export_wisdom_to_file(f);\n</pre>",
        ),
        ("emptyEntry", Q_EMPTY, ""),
        (
            "whyscaled",
            "Why does your inverse transform return a scaled\nresult?",
            "Computing the mathematical inverse requires a division by the size\n"
            "of the array, which you can do yourself.",
        ),
        ("linkfails", Q_LINK, "Link with <code>-lfftw3 -lm</code> on Unix systems, always."),
    ],
)
ANSWERS = {
    "solarisSucks": (
        "We know that at least on Solaris 2.5.x with Sun's compilers 4.2 you might get this "
        "error. Use gcc instead."
    ),
    "slow": None,  # checked by pieces: a list and a cross-reference
    "savePlans": None,
    "whyscaled": (
        "Computing the mathematical inverse requires a division by the size of the array, "
        "which you can do yourself."
    ),
    "linkfails": "Link with -lfftw3 -lm on Unix systems, always.",
}


def test_split_fftw_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_fftw_faq(SECTION_3)
    assert [(k, q) for k, q, _ in qa] == [
        ("slow", Q_SLOW),
        ("savePlans", Q_SAVE),
        ("whyscaled", Q_SCALED),
        ("linkfails", Q_LINK),
    ]
    answers = {k: a for k, _, a in qa}
    assert nsc.flat(answers["whyscaled"]) == nsc.flat(ANSWERS["whyscaled"] or "")
    assert nsc.flat(answers["linkfails"]) == nsc.flat(ANSWERS["linkfails"] or "")
    assert "recreating the plan" in answers["slow"] and "reuse the plan" in answers["slow"]
    assert "wisdom" in answers["savePlans"] and "fftw_export_wisdom_to_file" in answers["savePlans"]
    # each answer stops at the next <h2>: no neighbour's text in it
    assert "Computing" not in answers["savePlans"] and "wisdom" not in answers["slow"]
    for _, q, a in qa:
        assert a in page
        # the cross-ref: scrubbed later
        assert nsc.flat(q) not in nsc.flat(page.replace(Q_SAVE, ""))
    # the numbers leave with the headings, the contents list goes, the title stays
    assert "Question 3." not in page and "Q3.1." not in page and "Q3.4." not in page
    assert "FFTW FAQ - Section 3" in page and "Using FFTW" in page
    # the footer after the last <hr> is in no answer and not in the page
    for footer in ("Matteo Frigo", "Return to contents", "Next section", "Extracted from"):
        assert footer not in page and footer not in answers["linkfails"]
    assert all("Using FFTW" not in a for *_, a in qa)
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_split_fftw_faq_inline_code_and_no_questions() -> None:
    page, qa = ns.split_fftw_faq(SECTION_2)
    assert [(k, q) for k, q, _ in qa] == [("solarisSucks", Q_SOLARIS)]
    assert nsc.flat(qa[0][2]) == nsc.flat(ANSWERS["solarisSucks"] or "")
    assert "complaining" not in page
    page, none = ns.split_fftw_faq("<html><body><h1>FFTW FAQ</h1><p>Prose, no entry.</p>")
    assert none == [] and "Prose, no entry." in page
    # an <h2> that is not a numbered question is text of the answer before it
    _, other = ns.split_fftw_faq(
        '<h2><A name="a">Question 1.1.  Asked here?</A></h2>\nText.\n<h2>Notes</h2>\nMore.\n'
    )
    assert [(k, q) for k, q, _ in other] == [("a", "Asked here?")]
    assert "Notes" in other[0][2] and "More." in other[0][2]


_WORD = st.sampled_from(["plan", "wisdom", "fftw", "mpi", "real", "dft", "stride", "array"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # ends with "?"
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_fftw_faq_property(entries: list[tuple[list[str], bool, list[str]]]) -> None:
    """Random entries, asked or stated, some unanswered: one question per answered entry,
    in order, its anchor its id, its answer its text, in the page; no title left in it."""
    spec = []
    for k, (words, asks, awords) in enumerate(entries):
        title = " ".join([f"entry{k}x", *words]) + ("?" if asks else ".")
        answer = " ".join(["Answer", *awords]) if awords else ""
        spec.append((f"anchor{k}", title, answer))
    page, qa = ns.split_fftw_faq(_section(4, "Internals", spec))
    assert [(k, q, a) for k, q, a in qa] == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in page


# -- the set, built from a package tree shaped like Debian's libfftw3-doc ------------------

_HEADER = (
    '<div class="header">\n<p>\nNext: <a href="{nxt}.html" accesskey="n" rel="next">{nxt}</a>,'
    ' Up: <a href="index.html" rel="up">Top</a> &nbsp; [<a href="index.html#SEC_Contents" '
    'rel="contents">Contents</a>]</p>\n</div>\n<hr>\n'
)


def _manual_page(title: str, body: str, nxt: str = "Wisdom") -> str:
    return (
        "<html>\n<!-- Created by GNU Texinfo 6.8 -->\n<head><title>"
        f'{title} (FFTW 3.3.10)</title></head>\n<body lang="en">\n<div class="section">\n'
        + _HEADER.format(nxt=nxt)
        + f'<h3 class="section">{title}</h3>\n{body}\n</div>\n</body>\n</html>\n'
    )


def _package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section3: str = SECTION_3
) -> tuple[Path, Path]:
    root = unpacked_package(tmp_path, monkeypatch, ns.FFTW_PACKAGE, "3.3.10-1")
    doc: Path = root / ns.FFTW_DOC
    faq = doc / ns.FFTW_FAQ_DIR
    faq.mkdir(parents=True)
    (faq / "section1.html").write_text(_section(1, "Introduction and General Information", []))
    (faq / "section2.html").write_text(SECTION_2)
    (faq / "section3.html").write_text(section3)
    (faq / "index.html").write_text(f"<h1>Index</h1><ul><li>{Q_SAVE}<li>{Q_SLOW}</ul>")
    with gzip.open(doc / "fftw-faq.ascii.gz", "wt", encoding="utf-8") as fh:
        fh.write(f"Question 3.2. {Q_SAVE}\n\nYes.\n")
    manual = doc / ns.FFTW_MANUAL
    manual.mkdir()
    (manual / "Words-of-Wisdom_002dSaving-Plans.html").write_text(
        _manual_page(
            "Words of Wisdom-Saving Plans",
            f"<p>People ask: {Q_SAVE} FFTW implements a method for saving plans to disk.</p>",
        )
    )
    (manual / "Planner-Flags.html").write_text(
        _manual_page("Planner Flags", "<p><code>FFTW_MEASURE</code> tells FFTW to find a plan.</p>")
    )
    (manual / "equation-dft.png").write_bytes(b"\x89PNG")
    for skipped in ns.FFTW_MANUAL_SKIP:
        (manual / skipped).write_text(_manual_page("Index", f"<p>left out {Q_SCALED}</p>"))
    return doc, faq


def test_fftw_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _package(tmp_path, monkeypatch)
    nset = ns.fftw_faq_set()
    assert [q.qid for q in nset.questions] == [
        f"fftw-faq:{k}" for k in ("solarisSucks", "slow", "savePlans", "whyscaled", "linkfails")
    ]
    assert set(nset.files) == {
        "faq/section1.md",
        "faq/section2.md",
        "faq/section3.md",
        "manual/Words-of-Wisdom_002dSaving-Plans.md",
        "manual/Planner-Flags.md",
    }
    nsc.assert_questions_out_answers_in(nset)
    assert nset.questions[0].source == "faq/section2.md"
    # the manual page quoting a question: scrubbed, its other text kept; its nav header gone
    wisdom = nset.files["manual/Words-of-Wisdom_002dSaving-Plans.md"]
    assert "FFTW implements a method for saving plans to disk." in wisdom
    assert "Next:" not in wisdom and "accesskey" not in wisdom
    # the cross-reference in an answer quoting another question: scrubbed, the rest kept
    slow = next(q for q in nset.questions if q.qid == "fftw-faq:slow").answers[0][0]
    assert "reuse the plan" in slow and "FFTW's plans" not in slow
    nsc.assert_files_as_written(nset)
    assert "3.3.10-1" in nset.note and "2 texi2any pages" in nset.note
    nsc.assert_held_out("fftw-faq")


def test_fftw_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = SECTION_3.replace(
        "Link with <code>-lfftw3 -lm</code> on Unix systems, always.", "Use -lfftw3."
    )
    _package(tmp_path, monkeypatch, short)
    nset = ns.fftw_faq_set()
    nsc.assert_left_out(nset, Q_LINK, 4)  # scrubbed all the same


def test_no_question_text_is_left_in_any_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The leak check on the set finds no copy, and finds every question in the FAQ pages as
    shipped (it could fail)."""
    _package(tmp_path, monkeypatch)
    nset = ns.fftw_faq_set()
    asked = [q.text for q in nset.questions] + list(nset.left_out)
    assert sorted(asked) == sorted([Q_SOLARIS, Q_SLOW, Q_SAVE, Q_SCALED, Q_LINK])
    assert cql.find_leaks(nset.files, asked, False) == []
    shipped = {
        "s2.md": ns.page_to_markdown(SECTION_2),
        "s3.md": ns.page_to_markdown(SECTION_3),
    }
    found = {lk.question for lk in cql.find_leaks(shipped, asked, False)}
    assert found == set(asked)


def test_fftw_faq_set_halves_are_fixed_and_disjoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, faq = _package(tmp_path, monkeypatch)
    first, dev, test = nsc.halves_of(ns.fftw_faq_set)
    more = SECTION_3.replace(
        '<h2><A name="linkfails">',
        '<h2><A name="threads">\nQuestion 3.9.  Can FFTW use several threads at once?\n</A></h2>'
        "\n\nYes: link with -lfftw3_threads and call fftw_init_threads first.\n"
        '<h2><A name="linkfails">',
    )
    (faq / "section3.html").write_text(more)
    nsc.assert_halves_kept(ns.fftw_faq_set, first, dev, test)


def test_fftw_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.FFTW_PACKAGE, "3.3.10-1")
    (root / ns.FFTW_DOC / ns.FFTW_MANUAL).mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=re.escape("no fftw-faq.html/section1.html")):
        ns.fftw_faq_set()
