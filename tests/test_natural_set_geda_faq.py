"""The ``geda-faq`` natural-question set (``bench/natural_sets.py``): the gEDA wiki's FAQ
pages as Debian's ``lepton-eda`` ships them (``/usr/share/doc/lepton-eda/wiki/``: DokuWiki's
HTML export, one file a page, headings with their anchor inside, each section's text in a
``<div class="levelN">`` and an ``<!-- EDIT -->`` comment after it), read by the ZoneMinder
reading unchanged (:func:`natural_sets.split_zoneminder_faq`), and the question-leak check
(``bench/check_question_leaks.py``), on small inline pages shaped as shipped: the project's
FAQ page (a question whose answer has sub-sections of its own), a tool's FAQ page (group
titles with no text, a question, a user's problem report, a title without "?" that asks, a
two-word topic title with text that does not), a third FAQ page with a short answer, beside
the wiki's other pages (one quoting a question, one over the page limit, the sitemap, a copy
of the start page, a Russian translation, a style sheet and an image), in a package tree
laid out as the package unpacks (marker present, nothing downloaded); offline, no embedding
model, no test reads the real package.

What the set's numbers rest on: no question is left in any file; each answer is exactly the
text under its heading up to the next heading of its level or higher; group and topic
titles stay and ask nothing; every FAQ page is found by its name, each question's source is
its own page; ids are the page and the question's slug, so a question added keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_set_checks as nsc
import natural_sets as ns
from debian_package_double import unpacked_package

VERSION = "1.9.18-1"

Q_PROJECT = "What is the gEDA project?"
Q_BETTER = "So which is better, a suite of programs or an integrated application?"
Q_BUG = "I found a bug! What can I do about it?"
Q_NO_SYMBOL = "There is no symbol in the chooser dialog!"
Q_UNLOCK = "How do I unlock a locked component"
Q_LAYERS = "How many layers does PCB support?"
Q_INSTALL = "How do I install pcb?"
ASKED = [Q_BUG, Q_NO_SYMBOL, Q_UNLOCK, Q_LAYERS, Q_PROJECT, Q_BETTER]
"""In the set's order: the FAQ pages by name (``geda-faq-gschem``, ``-pcb``, then
``geda-faq``), each page's questions in page order."""

A_PROJECT = "The gEDA project is a suite of free tools for electronic design automation."
A_BETTER_LEAD = "Both have merits, and the gEDA developers chose a suite on purpose."
A_PROS = "Each tool does one job well and can be replaced on its own."
A_CONS = "The tools must agree on file formats and conventions."
A_BUG = "Write to the geda-user mailing list first, then file it in the tracker."
A_NO_SYMBOL = "The symbol library path is not set: check your gafrc for component-library."
A_UNLOCK = "Select the component with a box, then choose Edit and Unlock from the menu."
A_LAYERS = "Out of the box, pcb supports sixteen copper layers; users patched it for more."
RESOURCES = "The tutorial and the mailing list archives help the most."


def _head(level: int, n: int, title: str) -> str:
    anchor = ns._slug(title).replace("-", "_") or "x"
    return (
        f'<h{level} class="sectionedit{n}"><a name="{anchor}" id="{anchor}">{title}</a>'
        f"</h{level}>\n"
    )


def _section(level: int, n: int, title: str, body: str) -> str:
    div = (
        f'<div class="level{level}">\n{body}\n</div>\n'
        if body
        else f'<div class="level{level}">\n\n</div>\n'
    )
    return _head(level, n, title) + div + f'<!-- EDIT{n} SECTION "{title}" [1-2] -->\n'


def _page(*sections: str, lead: str = "") -> str:
    return (
        '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN">\n<html>\n<head>\n'
        '  <link rel="stylesheet" media="screen" type="text/css" href="./style.css" />\n'
        '  <meta http-equiv="Content-Type" content="text/html; charset=utf-8" />\n'
        '</head>\n<body>\n<div class="dokuwiki export">\n'
        + lead
        + "".join(sections)
        + "</div>\n</body>\n</html>\n"
    )


def _p(text: str) -> str:
    return f"<p>\n{text}\n</p>"


PROJECT_FAQ = _page(
    _section(2, 1, "gEDA FAQ", ""),
    _section(3, 2, Q_PROJECT, _p(A_PROJECT)),
    _section(3, 3, Q_BETTER, _p(A_BETTER_LEAD)),
    _section(4, 4, "Suite (confederacy) pros:", _p(A_PROS)),
    _section(4, 5, "Suite (confederacy) cons:", _p(A_CONS)),
    lead=_p("<em>Translations of this page are also available in the following languages:</em>"),
)
GSCHEM_FAQ = _page(
    _section(2, 1, "General", ""),
    _section(3, 2, Q_BUG, _p(A_BUG)),
    _section(2, 3, "Gschem usage", ""),
    _section(3, 4, Q_NO_SYMBOL, _p(A_NO_SYMBOL)),
    _section(3, 5, Q_UNLOCK, _p(A_UNLOCK)),
    _section(3, 6, "Gschem Resources", _p(RESOURCES)),
)
PCB_FAQ = _page(
    _section(2, 1, "pcb FAQ", ""),
    _section(3, 2, Q_LAYERS, _p(A_LAYERS)),
    _section(3, 3, Q_INSTALL, _p('See <a href="geda-installation.html">installation</a>.')),
)
SHIPPED = {
    "geda-faq.html": PROJECT_FAQ,
    "geda-faq-gschem.html": GSCHEM_FAQ,
    "geda-faq-pcb.html": PCB_FAQ,
}
IDS = [
    "gschem/i-found-a-bug-what-can-i-do-about-it",
    "gschem/there-is-no-symbol-in-the-chooser-dialog",
    "gschem/how-do-i-unlock-a-locked-component",
    "pcb/how-many-layers-does-pcb-support",
    "geda/what-is-the-geda-project",
    "geda/so-which-is-better-a-suite-of-programs-o",
]
SOURCES = {
    "geda/": "geda-faq.md",
    "gschem/": "geda-faq-gschem.md",
    "pcb/": "geda-faq-pcb.md",
}
START = _page(_section(1, 1, "gEDA Project Wiki", _p("Download, symbols and documentation.")))


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **pages: str) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GEDA_PACKAGE, VERSION)
    doc: Path = root / ns.GEDA_DOC
    doc.mkdir(parents=True)
    for name, text in SHIPPED.items():
        (doc / name).write_text(text, encoding="utf-8")
    (doc / "start.html").write_text(START, encoding="utf-8")
    (doc / "index.html").write_text(START.replace("Download", "leftout copy"), encoding="utf-8")
    (doc / "sitemap.html").write_text(_page(_p("leftout sitemap")), encoding="utf-8")
    (doc / "geda-csygas.ru.html").write_text(_page(_p("leftout translation")), encoding="utf-8")
    (doc / "geda-pcb_tips.html").write_text(
        _page(
            _section(2, 1, "Tips", _p(f"People ask: {Q_LAYERS} The limit is in the source.")),
        ),
        encoding="utf-8",
    )
    (doc / "geda-csygas.html").write_text(
        _page(_section(2, 1, "Circuit simulation", _p("Spice decks. " * 12_000))),
        encoding="utf-8",
    )
    (doc / "style.css").write_text("leftout { }\n", encoding="utf-8")
    (doc / "images").mkdir()
    (doc / "images/bullet.gif").write_bytes(b"GIF89a")
    for name, text in pages.items():  # a test's own version of a page, written last
        (doc / name).write_text(text, encoding="utf-8")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:data:`SHIPPED`), the wiki folder."""
    return _package(tmp_path, monkeypatch)


def _answers(nset: ns.NaturalSet) -> dict[str, str]:
    return {q.qid.removeprefix("geda-faq:"): q.answers[0][0] for q in nset.questions}


def test_geda_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.geda_faq_set()
    assert nset.name == "geda-faq"
    assert [q.qid for q in nset.questions] == [f"geda-faq:{k}" for k in IDS]
    assert [q.text for q in nset.questions] == ASKED
    assert set(nset.files) == {
        "geda-faq.md",
        "geda-faq-gschem.md",
        "geda-faq-pcb.md",
        "start.md",
        "geda-pcb_tips.md",
    }
    for q in nset.questions:
        page = q.qid.removeprefix("geda-faq:").split("/")[0] + "/"
        assert q.source == SOURCES[page]
        assert q.answers[0][0] in nset.files[q.source]
    answers = _answers(nset)
    assert answers["geda/what-is-the-geda-project"] == A_PROJECT
    assert answers["gschem/how-do-i-unlock-a-locked-component"] == A_UNLOCK
    assert answers["pcb/how-many-layers-does-pcb-support"] == A_LAYERS
    # a question's own sub-sections are its answer, not questions of their own
    better = answers["geda/so-which-is-better-a-suite-of-programs-o"]
    assert better.startswith(A_BETTER_LEAD)
    assert A_PROS in better and A_CONS in better and "Suite (confederacy) cons:" in better
    nsc.assert_questions_out_answers_in(nset)
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("geda-faq")
    assert VERSION in nset.note and "over 150000 chars: geda-csygas.html" in nset.note
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus
    # group titles and a two-word topic title with text stay and ask nothing
    gschem = nset.files["geda-faq-gschem.md"]
    assert "Gschem usage" in gschem and "General" in gschem
    assert "Gschem Resources" in gschem and RESOURCES in gschem
    # a page quoting a question: scrubbed, its other text kept
    tips = nset.files["geda-pcb_tips.md"]
    assert "People ask:" in tips and "The limit is in the source." in tips
    # the short answer left out and named (its question still scrubbed)
    assert nset.left_out == (Q_INSTALL,)
    assert "3 FAQ pages" in nset.note


def test_geda_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = GSCHEM_FAQ.replace(A_NO_SYMBOL, "Check gafrc.")
    assert short != GSCHEM_FAQ
    _package(tmp_path, monkeypatch, **{"geda-faq-gschem.html": short})
    nset = ns.geda_faq_set()
    assert set(nset.left_out) == {Q_NO_SYMBOL, Q_INSTALL}
    assert len(nset.questions) == len(ASKED) - 1
    assert nsc.flat(Q_NO_SYMBOL) not in nsc.flat(" ".join(nset.files.values()))


def test_a_page_not_named_as_faq_asks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the FAQ pages are read for questions (by their names): a wiki page whose headings
    are questions ("How do I make a board outline?") stays whole in the corpus."""
    tips = _page(_section(3, 1, "How do I make a board outline for my gerbers?", _p(A_LAYERS)))
    _package(tmp_path, monkeypatch, **{"geda-pcb_tips.html": tips})
    nset = ns.geda_faq_set()
    assert [q.qid for q in nset.questions] == [f"geda-faq:{k}" for k in IDS]
    assert "How do I make a board outline for my gerbers?" in nset.files["geda-pcb_tips.md"]


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    nset = ns.geda_faq_set()
    nsc.assert_leak_checked(nset, SHIPPED, [*ASKED, Q_INSTALL], is_html=True)


def test_geda_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = GSCHEM_FAQ.replace(
        "<!-- EDIT5",
        "<!-- EDIT5b -->\n"
        + _section(
            3, 9, "How do I move a component?", _p("Drag it with the middle mouse button held.")
        )
        + "<!-- EDIT5",
        1,
    )
    assert more != GSCHEM_FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.geda_faq_set,
        lambda: (doc_dir / "geda-faq-gschem.html").write_text(more, encoding="utf-8"),
    )


def test_geda_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.GEDA_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.geda_faq_set, ns.GEDA_FAQ)


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(
        st.lists(
            st.tuples(
                st.booleans(),  # a question ("...?") or a one-word topic title
                st.lists(_WORD, min_size=1, max_size=5),
                st.lists(_WORD, min_size=0, max_size=12),
            ),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_geda_faq_set_reads_any_dokuwiki_faq_page(
    groups: list[list[tuple[bool, list[str], list[str]]]],
) -> None:
    """Any tool's FAQ page of the DokuWiki shape (no main column; anchors inside the
    headings; EDIT comments), as ``geda-faq-pcb.html`` in the package tree: each ``<h3>``
    question with text asked once, as ``pcb/<slug>``, from that page, with exactly its text
    as the answer (left out and named when under five words), and gone from every file; a
    question with no text, a topic title and every empty ``<h2>`` group title stay in the
    page and ask nothing; the other FAQ pages' questions unchanged around it."""
    sections: list[str] = []
    expected: list[tuple[str, str, str]] = []
    short: list[str] = []
    kept: list[str] = []
    n = 0
    for g, entries in enumerate(groups, start=1):
        n += 1
        sections.append(_section(2, n, f"group{g}x", ""))
        kept.append(f"group{g}x")
        for e, (asks, title, words) in enumerate(entries, start=1):
            n += 1
            text = f"q{g}n{e}x " + " ".join(title) + "?" if asks else f"t{g}n{e}x"
            answer = " ".join(words)
            sections.append(_section(3, n, text, _p(answer) if words else ""))
            if asks and len(words) >= ns.MIN_ANSWER_WORDS:
                expected.append((f"pcb/{ns._slug(text)}", text, answer))
            elif asks and words:
                short.append(text)
            else:
                kept.append(text)
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as mp:
        _package(Path(tmp), mp, **{"geda-faq-pcb.html": _page(*sections)})
        nset = ns.geda_faq_set()
    got = [
        (q.qid.removeprefix("geda-faq:"), q.text, q.answers[0][0], q.source) for q in nset.questions
    ]
    assert [g[:3] for g in got if g[0].startswith("pcb/")] == expected
    assert {g[3] for g in got if g[0].startswith("pcb/")} <= {"geda-faq-pcb.md"}
    assert [g[1] for g in got if not g[0].startswith("pcb/")] == [
        Q_BUG,
        Q_NO_SYMBOL,
        Q_UNLOCK,
        Q_PROJECT,
        Q_BETTER,
    ]
    assert list(nset.left_out) == short  # this page replaces the one with Q_INSTALL
    page = nset.files["geda-faq-pcb.md"]
    corpus = nsc.flat(" ".join(nset.files.values()))
    for _, question, _ in expected:
        assert nsc.flat(question) not in corpus
    for question in short:
        assert nsc.flat(question) not in corpus
    for heading in kept:
        assert heading in page
