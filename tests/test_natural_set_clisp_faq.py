"""The ``clisp-faq`` natural-question set (``bench/natural_sets.py``), its reading of GNU
CLISP's FAQ (Appendix A of the one-page implementation notes) and the question-leak check
(``bench/check_question_leaks.py``) on a small inline ``impnotes.html`` shaped as Debian's
``clisp-doc`` ships it (DocBook XSL, the whole manual as one page: the book's contents list
naming the appendix, a chapter quoting a question, Part V's contents list, then ``<div
class="appendix">`` with the anchor ``id="faq"``: a title, an abstract and the ``qandaset``:
DocBook's generated list of every question, then one table of ``qandadiv`` rows (``<h3>``
"A.1. ...", nested ``<h4>`` "A.1.1. ..."), ``toc`` rows listing the questions again and
``question`` / ``answer`` rows, the question cell numbered ``<strong>A.1.1.1.</strong>``,
questions wrapped over lines with curly quotes and one holding code; answers with nested
divs, a link and a screen listing; an unanswered question; then Appendix B, the licence,
in the rest of the notes) beside the two man pages as HTML, the notes and guides, in a
package tree laid out as the package unpacks (marker present, nothing downloaded);
offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, both
question lists, a page quoting one); each answer is exactly its answer row; the rest of the
manual never lands in the FAQ page nor the FAQ in it; ids are the FAQ's numbers, so an
added entry keeps the halves; an answer too short to judge leaves the set but not the
corpus's scrubbing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_FINE = "What is “FAQ fine”?"
Q_HELP = "How do I ask for help?"
Q_STACK = "How do I avoid stack overflow?"
Q_RL = "What does this message mean: “Display all 1259 possibilities? (y or n)”"
Q_DEFVAR = (
    "Why does DEFVAR affect previously defined lexical closures? "
    "(defvar val 12) ⇒ VAL ; why not 10?!"
)
ASKED = (Q_FINE, Q_HELP, Q_STACK, Q_RL, Q_DEFVAR)


def _q(anchor: str, num: str, text: str) -> str:
    return (
        f'<tr class="question"><td align="left" valign="top"><a id="{anchor}"></a>'
        f'<a id="{anchor}-q"></a><p><strong>{num}</strong></p></td>'
        f'<td align="left" valign="top">{text}</td></tr>'
    )


def _a(html_: str) -> str:
    return (
        '<tr class="answer"><td align="left" valign="top"></td>'
        f'<td align="left" valign="top">{html_}</td></tr>'
    )


def _div(tag: str, anchor: str, title: str, toc: str) -> str:
    return (
        '<tr class="qandadiv"><td align="left" valign="top" colspan="2">'
        f'<{tag} class="title"><a id="{anchor}"></a>{title}</{tag}></td></tr>'
        f'<tr class="toc"><td align="left" valign="top" colspan="2"><dl>{toc}</dl></td></tr>'
    )


def _li(num: str, anchor: str, text: str) -> str:
    return f'<dt>{num} <a href="#{anchor}">{text}</a></dt>'


CLISP = (
    '<a class="ulink" href="http://clisp.org" target="_top"><span class="command">'
    "<strong>CLISP</strong></span></a>"
)
TOC = (
    _li("A.1.1.1.", "faq-fine", "What is\n   “FAQ fine”?")
    + _li("A.1.1.5.", "faq-help", "How do I\n   ask for help?")
    + _li("A.4.8.", "faq-stack", "How do I\n   avoid stack overflow?")
    + _li("A.4.6.", "faq-rl-tab", "What does\n   this message mean")
)
APPENDIX = (
    '<div class="appendix"><div class="titlepage"><div><div><h2 class="title"><a id="faq"></a>'
    f"Appendix A. Frequently Asked Questions (With Answers)\n  about {CLISP}</h2></div></div>"
    '</div><div class="abstract"><a id="faq-abstract"></a><p class="title"><strong>Abstract'
    "</strong></p><p>This is a list of frequently asked questions about CLISP on the\n"
    "mailing lists.</p></div>"
    '<div class="qandaset"><h2 class="title"><a id="faq-set"></a>FAQ</h2><dl>'
    f'<dt>A.1.  <a href="#faq-meta">Meta Information</a></dt><dd><dl>{TOC}</dl></dd></dl>'
    '<table border="0" style="width: 100%;"><colgroup><col align="left" width="1%" /><col />'
    "</colgroup><tbody>"
    + _div("h3", "faq-meta", "A.1. Meta Information", TOC)
    + _div("h4", "faq-meta-misc", "A.1.1. Miscellaneous", TOC)
    + _q(
        "faq-fine",
        "A.1.1.1.",
        '<p>What is\n   <span class="quote">“<span class="quote">FAQ fine</span>”</span>?</p>',
    )
    + _a(
        "<p>We levy a fine of 10 zorkmids for\n   asking a question that is answered with a "
        'link to this <a class="link" href="#faq">FAQ</a> document.</p>'
        '<div class="note"><div><p>Read the manual first.</p></div></div>'
    )
    + _q("faq-bugs", "A.1.1.3.", "<p>How do I\n   report bugs?</p>")
    + _q("faq-help", "A.1.1.5.", "<p>How do I\n   ask for help?</p>")
    + _a('<p>Politely - please refer to <a href="#net">Netiquette</a> and the lists.</p>')
    + _div("h3", "faq-trouble", "A.4. Troubles", TOC)
    + _q("faq-stack", "A.4.8.", "<p>How do I\n   avoid stack overflow?</p>")
    + _a(
        '<p>Increase the stack size with <code class="option">-m</code>, or rewrite the '
        "recursion as a loop.</p>"
    )
    + _q(
        "faq-rl-tab",
        "A.4.6.",
        '<p>What does\n   this message mean: <span class="quote">“<span class="quote">Display '
        "all 1259\n     possibilities? (y or n)</span>”</span></p>",
    )
    + _a(
        "<p>You hit TAB at the prompt and readline offers every symbol:</p>"
        '<pre class="screen">Display all 1259 possibilities? (y or n) n\n</pre>'
        "<p>Answer n and type on.</p>"
    )
    + _q(
        "faq-scope",
        "A.4.14.",
        '<p>Why does <code class="function">DEFVAR</code> affect previously defined lexical '
        'closures?</p><pre class="programlisting">(defvar val 12) ⇒ VAL ; why not 10?!\n</pre>',
    )
    + _a("<p>DEFVAR proclaims the variable SPECIAL, so every binding of it is dynamic.</p>")
    + "</tbody></table></div></div>"
)
A_FINE = (
    "We levy a fine of 10 zorkmids for asking a question that is answered with a link to this "
    "FAQ document.\n\nRead the manual first."
)
A_HELP = "Politely - please refer to Netiquette and the lists."
A_STACK = "Increase the stack size with -m, or rewrite the recursion as a loop."
A_RL = (
    "You hit TAB at the prompt and readline offers every symbol:\n\n```\n"
    "Display all 1259 possibilities? (y or n) n\n\n```\n\nAnswer n and type on."
)
A_DEFVAR = "DEFVAR proclaims the variable SPECIAL, so every binding of it is dynamic."
ANSWERS = {"1.1.1": A_FINE, "1.1.5": A_HELP, "4.8": A_STACK, "4.6": A_RL, "4.14": A_DEFVAR}
LICENCE = (
    '<div class="appendix"><div class="titlepage"><div><div><h2 class="title"><a id="fdl"></a>'
    "Appendix B. GNU Free Documentation License</h2></div></div></div>"
    "<p>Version 1.3, 3 November 2008. Licence text.</p></div>"
)
BOOK_TOC = (
    '<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc">'
    '<dt><span class="chapter"><a href="#eval">3. Evaluation and Compilation</a></span></dt>'
    '<dt><span class="appendix"><a href="#faq">A. Frequently Asked Questions (With Answers)'
    "</a></span></dt></dl></div>"
)


def impnotes(chapter_text: str = "The stack is small by default.", faq: str = APPENDIX) -> str:
    """The one-page manual: title, contents, a chapter, Part V's title, the FAQ appendix,
    the licence appendix, the index."""
    return (
        "<!DOCTYPE html><html><head><title>Implementation Notes for GNU CLISP</title></head>"
        '<body><div class="book"><div class="titlepage"><h1 class="title">'
        '<a id="impnotes-top"></a>Implementation Notes for GNU CLISP</h1></div>'
        + BOOK_TOC
        + '<div class="chapter"><div class="titlepage"><h2 class="title"><a id="eval"></a>'
        "Chapter 3. Evaluation and Compilation</h2></div>"
        f"<p>{chapter_text}</p><p>Users ask: {Q_STACK} See the -m option.</p></div>"
        '<div class="part"><div class="titlepage"><h1 class="title"><a id="appendices"></a>'
        "Part V. Appendices</h1></div>"
        + faq
        + LICENCE
        + '</div><div class="index"><h2 class="title"><a id="idx"></a>Index</h2>'
        "<p>DEFVAR, 3</p></div></div></body></html>\n"
    )


def test_split_clisp_impnotes_questions_answers_and_ids() -> None:
    faq, qa, rest = ns.split_clisp_impnotes(impnotes())
    # every answered question of the qandaset, in order, as written (wrapped lines joined,
    # curly quotes kept, the code under a question asked with it); each answer exactly its
    # answer row, nested divs included; ids the numbers of the question cells; the
    # unanswered "report bugs" asks nothing
    nsc.assert_split_answers(faq, qa, ASKED, ANSWERS)
    assert "report bugs" not in faq
    # the FAQ page: the appendix's title, abstract and section headings, no question list
    assert faq.startswith("# Appendix A. Frequently Asked Questions (With Answers) about CLISP")
    assert "on the mailing lists." in faq and "## A.4. Troubles" in faq
    assert "## A.1.1. Miscellaneous" in faq and "ask for help" not in faq
    # the rest of the manual: the chapter, the licence appendix and the index, no FAQ text
    for kept in ("Chapter 3. Evaluation", "The stack is small", "Appendix B. GNU Free", "Index"):
        assert kept in rest and kept not in faq
    for _, _, a in qa:
        assert a not in rest
    assert "zorkmids" not in rest and "Appendix A. Frequently" not in rest
    assert "Table of Contents" not in rest  # the book's contents list (naming the FAQ) dropped


def test_split_clisp_impnotes_edges() -> None:
    # no FAQ appendix: nothing asked, the page all in the rest
    faq, qa, rest = ns.split_clisp_impnotes(impnotes(faq=""))
    assert (faq, qa) == ("", []) and "Appendix B. GNU Free" in rest and "Chapter 3" in rest
    # an appendix whose anchor only starts with "faq" is not the FAQ
    other = LICENCE.replace('id="fdl"', 'id="faq-notes"').replace("Licence text", "Notes")
    faq, qa, rest = ns.split_clisp_impnotes(impnotes(faq=other + APPENDIX))
    assert [k for k, _, _ in qa] == list(ANSWERS) and "Notes" in rest and "Notes" not in faq
    # the appendix ends at its own closing div, not at a nested one's; never closed, it
    # runs to the page's end
    assert ns.clisp_faq_appendix('<div class="appendix"><a id="faq"></a><div>x</div>y</div>z') == (
        0,
        len('<div class="appendix"><a id="faq"></a><div>x</div>y</div>'),
    )
    unclosed = '<p>a</p><div class="appendix"><a id="faq"></a><div>x</div>'
    assert ns.clisp_faq_appendix(unclosed) == (len("<p>a</p>"), len(unclosed))
    assert ns.clisp_faq_appendix('<div class="appendix"><a id="fdl"></a></div>') is None


_WORD = st.sampled_from(["stack", "lisp", "closure", "readline", "image", "module", "gc"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),  # a new section before the entry
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: unanswered)
            st.booleans(),  # the answer in a nested div
        ),
        min_size=1,
        max_size=7,
    ),
    st.integers(min_value=0, max_value=2),  # appendices before the FAQ
    st.booleans(),  # the licence appendix after it
)
def test_split_clisp_impnotes_property(
    entries: list[tuple[bool, list[str], int, list[str], bool]], before: int, after: bool
) -> None:
    """Random entries in sections, questions wrapped over one to three lines, some
    unanswered, answers in nested divs or not, other appendices before and after: one
    question per answered entry, in order, its number the id, its answer row the answer, in
    the FAQ page; no question (asked or not) and no question list left in either part; the other
    appendices in the rest only, the FAQ's text in the FAQ page only."""
    rows = _div("h3", "faq-s0", "A.1. First section", "")
    listed = ""
    expected = []
    section, place = 1, 0
    for n, (new_section, qwords, wrap, awords, nested) in enumerate(entries):
        if new_section:
            section, place = section + 1, 0
            rows += _div("h3", f"faq-s{n}", f"A.{section}. section{n}title", "")
        place += 1
        words = [f"entry{n}x", *qwords]
        lines = [" ".join(words[i::wrap]) for i in range(wrap) if words[i::wrap]]
        listed += _li(f"A.{section}.{place}.", f"q{n}", f"entry{n}x listed")
        rows += _q(f"q{n}", f"A.{section}.{place}.", "<p>" + "\n   ".join(lines) + "</p>")
        if awords:
            answer = " ".join(["Answer", *awords]) + "."
            cell = f"<div><div><p>{answer}</p></div></div>" if nested else f"<p>{answer}</p>"
            rows += _a(cell)
            expected.append((f"{section}.{place}", " ".join(lines), answer))
    faq_html = (
        '<div class="appendix"><h2 class="title"><a id="faq"></a>Appendix A. FAQ</h2>'
        f'<div class="qandaset"><dl>{listed}</dl><table><tbody>{rows}</tbody></table></div></div>'
    )
    others = "".join(
        LICENCE.replace('id="fdl"', f'id="other{i}"').replace("Licence text", f"other{i}text")
        for i in range(before)
    )
    later = LICENCE.replace('id="fdl"', 'id="later"').replace("Licence text", "latertext")
    page = impnotes(faq=others + faq_html + (later if after else ""))
    faq, qa, rest = ns.split_clisp_impnotes(page)
    # every question row leaves the FAQ page, answered or not (the qandaset reader's rule)
    nsc.assert_random_split(faq, qa, expected)
    for _, _, a in qa:
        assert a in faq and a not in rest
    assert "listed" not in faq and "entry" not in rest
    for i in range(before):
        assert f"other{i}text" in rest and f"other{i}text" not in faq
    assert ("latertext" in rest) == after and "latertext" not in faq
    assert "Licence text" in rest and "Licence text" not in faq
    assert "Chapter 3" in rest and "Chapter 3" not in faq


# -- the set, built from a package tree shaped like Debian's clisp-doc ----------------------


REFENTRY = (
    '<html><head><title>clisp</title></head><body><div class="refentry"><a id="clisp"></a>'
    '<div class="refnamediv"><h2>Name</h2><p>clisp — ANSI Common Lisp compiler, interpreter '
    'and debugger.</p></div><div class="refsect1"><h2>Options</h2><p>-m memory-size: sets the '
    "memory the program may use.</p>"
    '<div class="warning" style="margin-left: 0.5in; margin-right: 0.5in;">'
    '<h3 class="title">Warning</h3><p>Changing the encoding affects every stream.</p></div>'
    "</div></div></body></html>\n"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str | None = None) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.CLISP_PACKAGE, "1:2.49.20210628-3")
    doc: Path = root / ns.CLISP_DOC
    (doc / "doc").mkdir(parents=True)
    padded = impnotes(chapter_text="Evaluation goes on. " * 8_000)
    (doc / ns.CLISP_IMPNOTES).write_text(padded if page is None else page)
    (doc / "doc/clisp.html").write_text(REFENTRY)
    (doc / "doc/clisp-link.html").write_text(
        REFENTRY.replace("clisp — ANSI", "clisp-link — link a new external module to").replace(
            "-m memory-size", "create module"
        )
    )
    write_gz(doc / "README.gz", f"This is GNU CLISP. Users ask: {Q_HELP} Mail the list.\n")
    (doc / "SUMMARY").write_text("GNU CLISP is a Common Lisp implementation.\n")
    (doc / "ANNOUNCE").write_text("GNU CLISP is available via anonymous ftp.\n")
    write_gz(doc / "doc/LISP-tutorial.txt.gz", "A short introduction to Lisp.\n")
    write_gz(doc / "doc/CLOS-guide.txt.gz", "A short guide to CLOS.\n")
    for out in ("README.de.gz", "README.es.gz", "NEWS.gz", "doc/clisp.pdf.gz"):
        write_gz(doc / out, "left out\n")
    (doc / "MAGIC.add").write_text("left out\n")
    write_gz(root / "usr/share/doc/clisp-doc/changelog.gz", "left out\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the notes over the page limit), the documentation folder."""
    return _package(tmp_path, monkeypatch)


FILES = {
    "faq.md",
    "doc/clisp.md",
    "doc/clisp-link.md",
    "README",
    "SUMMARY",
    "ANNOUNCE",
    "doc/LISP-tutorial.txt",
    "doc/CLOS-guide.txt",
}


def test_clisp_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.clisp_faq_set()
    nsc.assert_package_set(
        nset,
        "clisp-faq",
        ids=list(ANSWERS),
        files=FILES,
        source="faq.md",
        version="1:2.49.20210628-3",
        too_long="doc/impnotes.md",
        answers=ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the README quoting a question scrubbed, its other text kept; the man pages as HTML
    # read as DocBook; the notes and guides as text
    assert "Mail the list." in nset.files["README"] and Q_HELP not in nset.files["README"]
    assert "ANSI Common Lisp compiler" in nset.files["doc/clisp.md"]
    assert "sets the memory" in nset.files["doc/clisp.md"]
    # read as DocBook: an admonition's title is a heading of its own (a plain HTML reading
    # gives it the <h3> level under the man page's sections)
    assert "\n# Warning\n\nChanging the encoding" in nset.files["doc/clisp.md"]
    assert "link a new external module" in nset.files["doc/clisp-link.md"]
    assert "Common Lisp implementation" in nset.files["SUMMARY"]
    assert "anonymous ftp" in nset.files["ANNOUNCE"]
    assert "introduction to Lisp" in nset.files["doc/LISP-tutorial.txt"]
    assert "guide to CLOS" in nset.files["doc/CLOS-guide.txt"]
    assert nset.left_out == ()


def test_clisp_faq_set_keeps_the_rest_of_the_notes_under_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch, impnotes())
    nset = ns.clisp_faq_set()
    assert set(nset.files) == FILES | {"doc/impnotes.md"}
    rest = nset.files["doc/impnotes.md"]
    # the rest of the manual in, the question its chapter quotes scrubbed, no FAQ text
    assert "See the -m option." in rest and Q_STACK not in rest
    assert "Appendix B. GNU Free" in rest and "zorkmids" not in rest
    assert "over 150000 chars: none" in nset.note
    nsc.assert_questions_out_answers_in(nset, ANSWERS)


def test_clisp_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = impnotes(
        faq=APPENDIX.replace(
            "DEFVAR proclaims the variable SPECIAL, so every binding of it is dynamic.",
            "It is SPECIAL.",
        )
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.clisp_faq_set(), Q_DEFVAR, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the appendix as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"faq.txt": ns.html_text(APPENDIX)}
    nsc.assert_leak_checked(ns.clisp_faq_set(), shipped, ASKED)


def test_clisp_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = APPENDIX.replace(
        "</tbody></table>",
        _q("faq-exec", "A.3.1.", "<p>How do I create an executable file with all my code?</p>")
        + _a("<p>Save an image with EXT:SAVEINITMEM and the :EXECUTABLE argument.</p>")
        + "</tbody></table>",
    )
    assert more != APPENDIX
    nsc.assert_halves_survive_an_added_question(
        ns.clisp_faq_set,
        lambda: (doc_dir / ns.CLISP_IMPNOTES).write_text(
            impnotes(chapter_text="Evaluation goes on. " * 8_000, faq=more)
        ),
    )


def test_clisp_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.CLISP_IMPNOTES).write_text(impnotes(faq=""))
    with pytest.raises(FileNotFoundError, match="no FAQ appendix"):
        ns.clisp_faq_set()
    (doc_dir / ns.CLISP_IMPNOTES).unlink()
    nsc.assert_refuses_without_faq(ns.clisp_faq_set, ns.CLISP_IMPNOTES)
