"""The ``asymptote-faq`` natural-question set (``bench/natural_sets.py``): Asymptote's
bfnn-built FAQ pages read by FFTW's splitter (``split_fftw_faq``), the set built from them
beside the Asymptote manual, and the question-leak check (``bench/check_question_leaks.py``),
on small inline pages shaped as Debian's ``asymptote-doc`` ships them
(``/usr/share/doc/asymptote/faq/sectionN.html``: an ``<h1>`` title over the section's name,
the page's contents list of links before an ``<hr>``, ``<h2><A name=...>Question N.M.
<title></A></h2>`` entries, titles wrapped over lines, one with ``<code>`` inside and one
with ``&quot;``, two entries of one page sharing an anchor as the shipped section 5 does
("reversearrow"), answers of prose and ``<pre>``, an entry with no text, then the footer:
"Next:" / "Back:" links, an ``<address>`` with the date, "Extracted from Asymptote
Frequently Asked Questions") beside texi2any manual pages (navigation header), the
manual's contents page and index, texi2any's one-line redirect pages, a page over the
limit, and the FAQ's index page, ASCII and Info copies, an example and a PDF to be left
out, in a package tree laid out as ``asymptote-doc`` unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the FAQ's headings,
its contents lists, a manual page quoting one); each answer is exactly the text under its
``<h2>`` up to the next one; the section pages read in their numbers' order (``section10``
after ``section9``); ids are the FAQ's anchors, a repeated one ``-2`` across the whole set,
so ids are unique and an added entry keeps the halves; an answer too short to judge leaves
the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package, write_gz

Q_WHAT = "What is Asymptote?"
Q_BADCPU = (
    "Why do I get the error Bad CPU type in executable on installing Asymptote from the MAC "
    "OS binary?"
)
Q_STRING = 'Why do I get the error "string not terminated" when I try to set a directory?'
Q_EMPTY = "Is this entry answered at all?"
Q_REVERSE = "How do I reverse the direction of an arrowhead?"
Q_SIZE = "How do I change the size of all arrows?"
Q_STYLES = "Can I create other arrowhead styles?"
Q_MULTI = "Is it possible to produce multi-page documents with asymptote?"


def _section(number: int, title: str, entries: list[tuple[str, str, str]], last: bool) -> str:
    """A bfnn section page of Asymptote's FAQ: (anchor, question HTML, answer HTML)."""
    toc = "\n".join(
        f'<li><a href="#{a}" rel=subdocument>Q{number}.{k + 1}. {q}</a>'
        for k, (a, q, _) in enumerate(entries)
    )
    body = "".join(
        f'<h2><A name="{a}">\nQuestion {number}.{k + 1}.  {q}\n</A></h2>\n\n{ans}\n'
        for k, (a, q, ans) in enumerate(entries)
    )
    nxt = (
        ""
        if last
        else (
            f'Next: <a href="section{number + 1}.html" rel=precedes>Questions about more</a>.<br>\n'
        )
    )
    return (
        '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 3.2//EN">\n<html>\n<head><title>\n'
        f"Asymptote FAQ - Section {number}\n</title>\n"
        '<link rev="made" href="mailto:">\n<link rel="Contents" href="index.html">\n'
        '</head><body text="#000000" bgcolor="#FFFFFF"><h1>\n'
        f"Asymptote FAQ - Section {number} <br>\n{title}\n</h1>\n\n<ul>\n{toc}\n</ul><hr>\n\n"
        f"{body}<hr>\n{nxt}"
        f'Back: <a href="section{number - 1}.html" rev=precedes>Questions before</a>.<br>\n'
        '<a href="index.html" rev=subdocument>Return to contents</a>.<p>\n<address>\n'
        '<A href="https://asymptote.sourceforge.io">Asymptote</A> \n- 2023-02-10\n'
        "</address><br>\nExtracted from Asymptote Frequently Asked Questions,\n"
        "Copyright &copy; 2023 .\n</body></html>\n"
    )


SECTION_1 = _section(
    1,
    "About Asymptote",
    [
        (
            "whatisasy",
            Q_WHAT,
            "Asymptote is a vector graphics language designed for technical graphics, "
            "inspired by MetaPost but with an improved C++-like syntax.",
        ),
        ("emptyentry", Q_EMPTY, ""),
    ],
    last=False,
)
SECTION_2 = _section(
    2,
    "Questions about installation and setup",
    [
        (
            "osxbadCPU",
            "Why do I get the error <code>Bad CPU type in executable</code> on installing "
            "Asymptote from the MAC OS\nbinary?",
            "This means either that you have a binary distribution for another MAC "
            "architecture, or that the binary is damaged.",
        ),
        (
            "escapechar",
            "Why do I get the error &quot;string not terminated&quot; when I try to\n"
            "set a directory?",
            "The backslash is an escape character here, so the closing quote is escaped:\n"
            '<pre>\nsettings.dir="C:\\\\asymptote\\\\";\n</pre>\nDouble it.',
        ),
    ],
    last=False,
)
SECTION_5 = _section(
    5,
    "Questions about arrows",
    [
        (
            "reversearrow",
            Q_REVERSE,
            "Use the option <code>Arrow(Relative(0))</code> or draw the path reversed with "
            "<code>reverse(p)</code>.",
        ),
        (
            "reversearrow",
            Q_SIZE,
            "Redefine the default arrow size in your configuration file:\n"
            "<pre>\narrowfactor=2;\n</pre>\nAll arrows then scale with it.",
        ),
        (
            "arrowhead",
            Q_STYLES,
            "Yes, you can build an arrowhead of your own from a path and a filltype.",
        ),
    ],
    last=False,
)
SECTION_10 = _section(
    10,
    "Questions about output",
    [
        (
            "multipage",
            "Is it possible to produce multi-page documents with\nasymptote?",
            "Yes, simply call the newpage() function. This is used by the slide package.",
        ),
    ],
    last=True,
)
ASKED = (Q_WHAT, Q_BADCPU, Q_STRING, Q_REVERSE, Q_SIZE, Q_STYLES, Q_MULTI)
IDS = (
    "whatisasy",
    "osxbadCPU",
    "escapechar",
    "reversearrow",
    "reversearrow-2",
    "arrowhead",
    "multipage",
)
ANSWERS = {
    "whatisasy": (
        "Asymptote is a vector graphics language designed for technical graphics, inspired "
        "by MetaPost but with an improved C++-like syntax."
    ),
    "osxbadCPU": (
        "This means either that you have a binary distribution for another MAC architecture, "
        "or that the binary is damaged."
    ),
    "escapechar": (
        "The backslash is an escape character here, so the closing quote is escaped:\n\n"
        '```\n\nsettings.dir="C:\\\\asymptote\\\\";\n\n```\n\n Double it.'
    ),
    "reversearrow": (
        "Use the option Arrow(Relative(0)) or draw the path reversed with reverse(p)."
    ),
    "reversearrow-2": (
        "Redefine the default arrow size in your configuration file:\n\n```\n\narrowfactor=2;"
        "\n\n```\n\n All arrows then scale with it."
    ),
    "arrowhead": "Yes, you can build an arrowhead of your own from a path and a filltype.",
    "multipage": ("Yes, simply call the newpage() function. This is used by the slide package."),
}
SOURCES = {
    "whatisasy": "faq/section1.md",
    "osxbadCPU": "faq/section2.md",
    "escapechar": "faq/section2.md",
    "reversearrow": "faq/section5.md",
    "reversearrow-2": "faq/section5.md",
    "arrowhead": "faq/section5.md",
    "multipage": "faq/section10.md",
}

_HEADER = (
    '<div class="header">\n<p>\nNext: <a href="{nxt}.html" accesskey="n" rel="next">{nxt}</a>,'
    ' Up: <a href="Programming.html" rel="up">Programming</a> &nbsp; [<a href="index.html#'
    'SEC_Contents" title="Table of contents" rel="contents">Contents</a>]</p>\n</div>\n<hr>\n'
)


def _manual_page(title: str, body: str, nxt: str = "Files") -> str:
    """A page of the Asymptote manual as texi2any writes it (navigation header, one node)."""
    return (
        "<!DOCTYPE html>\n<html>\n<!-- Created by GNU Texinfo 6.8 -->\n<head>\n"
        f"<title>{title} (Asymptote)</title>\n"
        '<meta name="Generator" content="makeinfo">\n</head>\n<body lang="en">\n'
        '<div class="section" id="'
        + title.replace(" ", "-")
        + '">\n'
        + _HEADER.format(nxt=nxt)
        + f'<h3 class="section">{title}</h3>\n{body}\n</div>\n</body>\n</html>\n'
    )


def _redirect(target: str) -> str:
    """One of texi2any's one-line pages for a node name that is not a file of its own."""
    return (
        "<!DOCTYPE html>\n<html>\n<head>\n<title>arrows (Asymptote)</title>\n"
        f'<meta http-equiv="Refresh" content="0; url={target}">\n</head>\n<body>\n'
        f'<p>The node you are looking for is at <a href="{target}">arrows</a>.</p>\n'
        "</body>\n</html>\n"
    )


def _package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, section5: str = SECTION_5
) -> tuple[Path, Path]:
    root = unpacked_package(tmp_path, monkeypatch, ns.ASY_PACKAGE, "2.85+ds-1")
    doc: Path = root / ns.ASY_DOC
    faq = doc / ns.ASY_FAQ_DIR
    faq.mkdir(parents=True)
    (faq / "section1.html").write_text(SECTION_1)
    (faq / "section2.html").write_text(SECTION_2)
    (faq / "section5.html").write_text(section5)
    (faq / "section10.html").write_text(SECTION_10)
    (faq / "index.html").write_text(f"<h1>Asymptote FAQ</h1><ul><li>{Q_WHAT}<li>{Q_SIZE}</ul>")
    write_gz(doc / "asy-faq.ascii.gz", f"Question 5.3. {Q_SIZE}\n\nleft out\n")
    write_gz(root / "usr/share/info/asy-faq.info.gz", f"5.3 {Q_SIZE}\nleft out\n")
    (doc / "examples").mkdir()
    (doc / "examples" / "arrows.asy").write_text("// left out\ndraw((0,0)--(1,1),Arrow);\n")
    (doc / "asymptote.pdf").write_bytes(b"%PDF-1.5 left out")
    manual = doc / ns.ASY_MANUAL
    manual.mkdir()
    (manual / "Drawing-commands.html").write_text(
        _manual_page(
            "Drawing commands",
            f"<p>A reader asks: {Q_REVERSE} The arrow keyword takes a position along the path.</p>",
        )
    )
    (manual / "Pens.html").write_text(
        _manual_page("Pens", "<p>In <code>Asymptote</code>, pens provide a context.</p>")
    )
    (manual / "graph.html").write_text(
        _manual_page("graph", "<p>This package implements two-dimensional graphs.</p>" * 4_000)
    )
    (manual / "arrows.html").write_text(_redirect("draw.html#arrows"))
    (manual / "Bode.png").write_bytes(b"\x89PNG")
    for skipped in ns.ASY_MANUAL_SKIP:
        (manual / skipped).write_text(_manual_page("Index", f"<p>left out {Q_STYLES}</p>"))
    return doc, faq


@pytest.fixture
def faq(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the sections above), its ``faq/`` folder."""
    return _package(tmp_path, monkeypatch)[1]


def test_split_fftw_faq_reads_asymptote_pages() -> None:
    """FFTW's splitter on Asymptote's pages (the same generator): questions with ``<code>``
    and ``&quot;`` read plain, the anchors kept as they are (the repeat told apart later, by
    the set), each answer up to the next ``<h2>``, the footer ("Next:" / "Back:", the
    address, "Extracted from") in no answer and not in the page; the title stays."""
    page, qa = ns.split_fftw_faq(SECTION_5)
    assert [(k, q) for k, q, _ in qa] == [
        ("reversearrow", Q_REVERSE),
        ("reversearrow", Q_SIZE),
        ("arrowhead", Q_STYLES),
    ]
    nsc.assert_page_keeps_answers(qa, page)
    assert "Question 5." not in page and "Q5.2." not in page
    assert "Asymptote FAQ - Section 5" in page and "Questions about arrows" in page
    for footer in ("Extracted from", "2023-02-10", "Back:", "Return to contents"):
        assert footer not in page and all(footer not in a for *_, a in qa)
    _, two = ns.split_fftw_faq(SECTION_2)
    assert [q for _, q, _ in two] == [Q_BADCPU, Q_STRING]


def test_asymptote_faq_set_from_a_package_tree(faq: Path) -> None:
    nset = ns.asymptote_faq_set()
    assert nset.name == "asymptote-faq"
    # sections read in their numbers' order (section10 last), the empty entry asks nothing,
    # the anchor used twice on one page told apart
    assert [q.qid for q in nset.questions] == [f"asymptote-faq:{k}" for k in IDS]
    assert [q.text for q in nset.questions] == list(ASKED)
    assert {q.qid.removeprefix("asymptote-faq:"): q.source for q in nset.questions} == SOURCES
    # the manual's pages, but its contents page, index, redirect page, images and the page
    # over the limit; the FAQ's index page, copies, examples and PDFs out
    assert set(nset.files) == {
        "faq/section1.md",
        "faq/section2.md",
        "faq/section5.md",
        "faq/section10.md",
        "manual/Drawing-commands.md",
        "manual/Pens.md",
    }
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert "left out" not in " ".join(nset.files.values())
    # the manual page quoting a question: scrubbed, its other text kept; nav header gone
    drawing = nset.files["manual/Drawing-commands.md"]
    assert "The arrow keyword takes a position along the path." in drawing
    assert "accesskey" not in drawing and "Next:" not in drawing
    nsc.assert_files_as_written(nset)
    assert "2.85+ds-1" in nset.note and "over 150000 chars: graph.html" in nset.note
    assert "2 texi2any pages" in nset.note
    nsc.assert_held_out("asymptote-faq")


def test_asymptote_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = SECTION_5.replace(ANSWERS["arrowhead"], "Yes: see arrowhead.")
    assert short != SECTION_5
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.asymptote_faq_set(), Q_STYLES, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(faq: Path) -> None:
    shipped = {
        f"s{n}.md": ns.page_to_markdown(page)
        for n, page in ((1, SECTION_1), (2, SECTION_2), (5, SECTION_5), (10, SECTION_10))
    }
    nsc.assert_leak_checked(ns.asymptote_faq_set(), shipped, ASKED)


def test_asymptote_faq_set_halves_are_fixed_and_disjoint(faq: Path) -> None:
    more = SECTION_5.replace(
        '<h2><A name="arrowhead">',
        '<h2><A name="reversearrow">\nQuestion 5.4.  Can an arrow sit in the middle of a '
        "path?\n</A></h2>\n\nYes: use the MidArrow arrowhead on the path you draw.\n"
        '<h2><A name="arrowhead">',
    )
    assert more != SECTION_5
    nsc.assert_halves_survive_an_added_question(
        ns.asymptote_faq_set, lambda: (faq / "section5.html").write_text(more)
    )
    ids = [q.qid for q in ns.asymptote_faq_set().questions]
    assert ids[3:6] == [f"asymptote-faq:reversearrow{s}" for s in ("", "-2", "-3")]


def test_asymptote_faq_set_refuses_a_package_without_the_faq(faq: Path) -> None:
    (faq / "section1.html").unlink()
    nsc.assert_refuses_without_faq(ns.asymptote_faq_set, "faq/section1.html")


_ANCHOR = st.sampled_from(["arrows", "labels", "graph", "fonts", "output"])
_WORD = st.sampled_from(["path", "pen", "label", "axis", "picture", "frame", "guide"])


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(_ANCHOR, st.lists(_WORD, min_size=0, max_size=12)),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_asymptote_faq_set_ids_property(
    tmp_path_factory: pytest.TempPathFactory, sections: list[list[tuple[str, list[str]]]]
) -> None:
    """Random section pages whose entries reuse a few anchors, within a page and across
    pages, some unanswered: the set asks every answered entry once, in the pages' numbers'
    order, its id the anchor the first time and ``-2``, ``-3`` after (unique across the
    set), its answer the text under it, its source its page; no question left in a file."""
    tmp = tmp_path_factory.mktemp("asy")
    with pytest.MonkeyPatch.context() as mp:
        root = unpacked_package(tmp, mp, ns.ASY_PACKAGE, "2.85+ds-1")
        faq = root / ns.ASY_DOC / ns.ASY_FAQ_DIR
        faq.mkdir(parents=True)
        (root / ns.ASY_DOC / ns.ASY_MANUAL).mkdir()
        expected, seen, n = [], {}, 0
        for number, entries in enumerate(sections, start=1):
            spec = []
            for anchor, words in entries:
                n += 1
                question = f"entry{n}x {anchor} question?"
                # (five words at least: the set judges no shorter answer)
                answer = " ".join(["The", "answer", "is", "as", "follows", *words]) if words else ""
                spec.append((anchor, question, answer))
                if answer:
                    key = ns._repeat_id(seen, anchor)
                    expected.append((f"asymptote-faq:{key}", question, answer, number))
            page = _section(number, "Questions", spec, last=number == len(sections))
            (faq / f"section{number}.html").write_text(page)
        nset = ns.asymptote_faq_set()
    got = [(q.qid, q.text, q.answers[0][0], q.source) for q in nset.questions]
    assert got == [(k, q, a, f"faq/section{s}.md") for k, q, a, s in expected]
    assert len({q.qid for q in nset.questions}) == len(nset.questions)
    assert not re.search(r"entry\d+x", " ".join(nset.files.values()))
