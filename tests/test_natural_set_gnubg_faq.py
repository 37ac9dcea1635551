"""The ``gnubg-faq`` natural-question set (``bench/natural_sets.py``), its reading of GNU
Backgammon's one-page DocBook XSL manual and the question-leak check
(``bench/check_question_leaks.py``) on a small inline ``gnubg.html`` shaped as Debian's
``gnubg-data`` ships it (every title an ``<hN class="title">`` in its section's titlepage, a
title page with an author's ``<h3>``, a table of contents, ``sect1`` chapters, one of them
asking "Where do I...?" in a ``sect3`` of its own, the chapter "Frequently Asked Questions"
(``id="gnubg-faq"``) of ``sect2`` groups over ``sect3`` entries: a title with markup in it, a
statement, a screen with a ``###`` line, a ``sect4`` inside an answer, an entry answered by a
cross-reference to another, an entry with no answer; the FDL appendix over the page limit)
beside "All about GNU Backgammon" (quoting a question, with a "Tip" admonition) and the files
the set leaves out (PDF copies, changelog, copyright), in a package tree laid out as the
package unpacks (marker present, nothing downloaded); offline, no embedding model, no test
reads the real package.

What the set's numbers rest on: no question is left in any file; each answer is exactly the
text under its title up to the next section title of its depth or above, sub-sections kept;
only the FAQ chapter's ``sect3`` titles are asked (another chapter's stay); the group titles
stay; ids are the group's and the entry's places, so an entry added at a group's end keeps
the halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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
from debian_package_double import unpacked_package

_TAGS = {"sect1": "h2", "sect2": "h3", "sect3": "h4", "sect4": "h5", "appendix": "h2"}


def sect(kind: str, anchor: str, title: str, body: str) -> str:
    """A DocBook XSL section as the stylesheets write it: the titlepage's nested divs, the
    title an ``<hN class="title">`` (``clear: both`` on a chapter's), the anchor inside."""
    tag = _TAGS[kind]
    style = ' style="clear: both"' if tag == "h2" else ""
    return (
        f'<div class="{kind}"><div class="titlepage"><div><div><{tag} class="title"{style}>'
        f'<a id="{anchor}"></a>{title}</{tag}></div></div></div>{body}</div>'
    )


Q_WHAT = "What is GNU Backgammon?"
Q_STRONG = "GNU Backgammon is too strong for me"
Q_PLIES = "What are Plies?"
Q_START = "I only get a command-line interface"
Q_EPC = "What does EPC mean?"
Q_EPC_SHORT = "EPC?"
A_WHAT = "GNU Backgammon (gnubg) is a program for playing and analysing backgammon positions."
A_STRONG = "Go to the menu Settings → Players and change the values for Player 0."
A_PLIES = (
    "A ply describes how far GNU Backgammon evaluates the position.\n\n"
    "**Which ply to use**\n\n"
    "Use 2-ply for play and 3-ply for analysis."
)
A_START = "Run it from a terminal:\n\n```\n### not a heading\ngnubg -t\n```"
A_EPC = "The effective pip count is the number of rolls you need, times 8.17, to bear off."
ASKED = (Q_WHAT, Q_STRONG, Q_PLIES, Q_START, Q_EPC, Q_EPC_SHORT)
ANSWERS = {"1.1": A_WHAT, "1.2": A_STRONG, "2.1": A_PLIES, "2.2": A_START, "3.1": A_EPC}
APP = '<span class="application">GNU Backgammon</span>'

FAQ_CHAPTER = sect(
    "sect1",
    "gnubg-faq",
    "Frequently Asked Questions",
    sect(
        "sect2",
        "gnubg-faq_general",
        "General questions",
        sect(
            "sect3",
            "gnubg-faq_general_gnubg",
            f"What is {APP}?",
            f"<p>{APP} (gnubg) is a program for\n  playing and analysing backgammon positions.</p>",
        )
        + sect(
            "sect3",
            "gnubg-faq_strong",
            f"{APP} is too strong for me",
            "<p>Go to the menu Settings → Players and change the values for Player 0.</p>",
        )
        + sect("sect3", "gnubg-faq_empty", "An entry nobody answered", ""),
    )
    + sect(
        "sect2",
        "gnubg-faq_settings",
        "Settings",
        sect(
            "sect3",
            "gnubg-faq_plies",
            "What are Plies?",
            "<p>A ply describes how far GNU Backgammon evaluates the position.</p>"
            + sect(
                "sect4",
                "gnubg-faq_plies_use",
                "Which ply to use",
                "<p>Use 2-ply for play and 3-ply for analysis.</p>",
            ),
        )
        + sect(
            "sect3",
            "gnubg-faq_cli",
            "I only get a command-line interface",
            '<p>Run it from a terminal:</p><pre class="screen">### not a heading\ngnubg -t</pre>',
        ),
    )
    + sect(
        "sect2",
        "gnubg-faq_abbr",
        "Abbreviations",
        sect(
            "sect3",
            "gnubg-faq_analysing_epc",
            "What does EPC mean?",
            "<p>The effective pip count is the number of rolls you need, times 8.17, to bear "
            "off.</p>",
        )
        + sect(
            "sect3",
            "gnubg-faq_abbr_epc",
            "EPC?",
            '<p>See <a class="xref" href="#gnubg-faq_analysing_epc" title="What does EPC '
            'mean?">the section called “What does EPC mean?”</a></p>',
        ),
    ),
)
CHAPTERS = (
    sect(
        "sect1",
        "gnubg-intro",
        "Introduction",
        "<p>This manual describes how to use GNU Backgammon.</p>"
        + sect("sect2", "gnubg-intro_gpl", "GPL copying/warranty info", "<p>No warranty.</p>"),
    )
    + sect(
        "sect1",
        "gnubg-tech",
        "Technical Notes",
        sect(
            "sect2",
            "gnubg-tech_db",
            "Obtaining bearoff databases",
            sect(
                "sect3",
                "gnubg-tech_db_where",
                "Where do I put the databases?",
                "<p>Put the bearoff databases in the program's folder.</p>",
            ),
        ),
    )
    + FAQ_CHAPTER
    + sect("appendix", "fdl", "A. GNU Free Documentation License", "<p>FDL text. </p>" * 20_000)
)
TOC = (
    '<div class="toc"><p><strong>Table of Contents</strong></p><dl class="toc"><dt>'
    '<a href="#gnubg-intro">tocline Introduction</a></dt><dt>'
    '<a href="#gnubg-faq">tocline Frequently Asked Questions</a></dt></dl></div>'
)
TITLE_PAGE = (
    '<div xml:lang="en" class="article" lang="en"><div class="titlepage"><div><div>'
    '<h2 class="title"><a id="gnubg"></a>GNU Backgammon Manual V1.00.0</h2></div><div><div '
    'class="authorgroup"><div class="author"><h3 class="author">Christian Anthon</h3></div>'
    "</div></div></div><hr /></div>"
)


def manual(chapters: str = CHAPTERS) -> str:
    """``gnubg.html`` as shipped around ``chapters``: the XHTML head, the article's title
    page and table of contents, the chapters, the closing tags."""
    return (
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<html><head><title>GNU '
        f"Backgammon Manual</title></head><body>{TITLE_PAGE}{TOC}{chapters}</div></body></html>"
    )


def test_docbook_xsl_section_levels_classes_section_titles_only() -> None:
    page = ns.docbook_xsl_section_levels(manual())
    # each section's title takes its section's class (an appendix's: sect1)
    assert page.count('<h2 class="sect1" style="clear: both">') == 4
    assert page.count('<h3 class="sect2">') == 5 and page.count('<h4 class="sect3">') == 8
    assert (
        page.count('<h5 class="sect4">') == 1 and 'class="title"' not in page.split("</h2>", 1)[1]
    )
    # the article's title and the author's heading are not a section's: left as they are
    assert '<h2 class="title"><a id="gnubg">' in page and '<h3 class="author">' in page


def test_split_gnubg_manual_questions_answers_and_ids() -> None:
    parts, faq, qa = ns.split_gnubg_manual(manual())
    # the parts: the title page, then each chapter in order, the FAQ the fourth
    assert len(parts) == 5 and faq == 3
    assert parts[0].startswith("# GNU Backgammon Manual V1.00.0")
    assert [p.split("\n", 1)[0] for p in parts[1:]] == [
        "# Introduction",
        "# Technical Notes",
        "# Frequently Asked Questions",
        "# A. GNU Free Documentation License",
    ]
    # every FAQ sect3 with an answer asked, in order (markup out, spaces folded); the answer
    # the text under it up to the next section title of its depth or above, a sect4 kept as
    # a bold line, a screen as a fence whose "###" line is no heading; the id its group's
    # and its own place (the unanswered 1.3 counted); the cross-reference answer kept as the
    # page has it (the set's scrub takes the question out of it)
    assert [q for _, q, _ in qa] == list(ASKED)
    expected = {**ANSWERS, "3.2": "See the section called “What does EPC mean?”"}
    assert [(k, a) for k, _, a in qa] == list(expected.items())
    for _, _, a in qa:
        assert a in parts[faq]
    page = parts[faq]
    # the group titles stay as headings; the unanswered entry leaves the page, asking nothing
    assert "## General questions" in page and "## Settings" in page and "## Abbreviations" in page
    assert "nobody answered" not in page and "###" not in page.replace("### not a heading", "")
    # another chapter's sect3, a question in form, is not asked and stays as a heading
    assert "### Where do I put the databases?" in parts[2]
    # the table of contents leaves; the section levels follow the sections
    assert "tocline" not in "".join(parts)
    assert "## GPL copying/warranty info" in parts[1] and "## Obtaining bearoff" in parts[2]


def test_split_gnubg_manual_edges() -> None:
    # no FAQ chapter: the parts, none asked
    parts, faq, qa = ns.split_gnubg_manual(manual(CHAPTERS.replace(FAQ_CHAPTER, "")))
    assert faq is None and qa == [] and len(parts) == 4
    # no chapter at all: the page is one part
    assert ns.split_gnubg_manual("<p>Only text.</p>") == (["Only text.\n"], None, [])
    # the anchor in the title page (before any chapter) makes no FAQ; a longer anchor
    # (a group's, "gnubg-faq_general") makes none either
    early = manual(CHAPTERS.replace(FAQ_CHAPTER, "")).replace(TOC, '<a id="gnubg-faq"></a>')
    assert ns.split_gnubg_manual(early)[1:] == (None, [])
    grouped = manual(CHAPTERS.replace('<a id="gnubg-faq"></a>', ""))
    assert ns.split_gnubg_manual(grouped)[1:] == (None, [])
    # the first chapter holding the anchor is the FAQ; a second copy is a chapter like others
    twice = manual(CHAPTERS + FAQ_CHAPTER)
    parts, faq, qa = ns.split_gnubg_manual(twice)
    assert faq == 3 and len(qa) == 6 and "### What is GNU Backgammon?" in parts[5]
    # a FAQ without sect3 titles ending in "?" asks nothing (the shared splitter's rule)
    plain = FAQ_CHAPTER.replace("?</h4>", "</h4>").replace(
        "Backgammon</span>?", "Backgammon</span>"
    )
    assert ns.split_gnubg_manual(manual(plain))[2] == []
    # numbering: entries counted within each group, groups counted in the chapter
    numbered = ns._number_faq_headings("# F\n## G\n### a\n### b\n## H\n```\n### c\n```\n### d")
    assert numbered == "# F\n## G\n### 1.1. a\n### 1.2. b\n## H\n```\n### c\n```\n### 2.1. d"


_WORD = st.sampled_from(["dice", "cube", "match", "rollout", "pip", "bearoff", "equity"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(  # the FAQ's groups, each a list of entries
        st.lists(
            st.tuples(
                st.lists(_WORD, min_size=1, max_size=6),  # the title's words
                st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: no answer)
                st.booleans(),  # a sect4 inside the answer
            ),
            min_size=0,
            max_size=4,
        ),
        min_size=1,
        max_size=4,
    ),
    st.integers(min_value=0, max_value=2),  # chapters before the FAQ
    st.booleans(),  # a chapter after it
)
def test_split_gnubg_manual_property(
    groups: list[list[tuple[list[str], list[str], bool]]], before: int, after: bool
) -> None:
    """A random FAQ chapter (groups of entries, titles ending in "?", answers of random
    words, some with none, some with a sect4 inside) among random other chapters holding a
    sect3 question of their own: one question per answered entry, in order, the id its
    group's and its place, the answer its paragraph (and the sect4 as a bold line), in the
    page; no asked question left; the group titles and the other chapters' titles kept."""
    body = ""
    expected = []
    for g, entries in enumerate(groups, start=1):
        inner = ""
        for e, (words, awords, sub) in enumerate(entries, start=1):
            marker = f"entry{g}0{e}x"
            answer = " ".join(awords)
            html_ = f"<p>{answer}</p>" if answer else ""
            if answer and sub:
                html_ += sect("sect4", f"s{g}{e}", f"sub{g}0{e}", "<p>subtext</p>")
                answer += f"\n\n**sub{g}0{e}**\n\nsubtext"
            inner += sect("sect3", f"q{g}{e}", " ".join([marker, *words]) + "?", html_)
            if answer:
                expected.append((f"{g}.{e}", " ".join([marker, *words]) + "?", answer))
        body += sect("sect2", f"g{g}", f"group{g}x", inner)
    other = sect("sect1", "o", "Other", sect("sect3", "oq", "kept question?", "<p>k</p>"))
    chapters = other * before + sect("sect1", "gnubg-faq", "FAQ", body) + other * after
    parts, faq, qa = ns.split_gnubg_manual(manual(chapters))
    assert faq == before + 1 and len(parts) == before + 2 + after
    nsc.assert_random_split(parts[faq], qa, expected)
    for g in range(1, len(groups) + 1):
        assert f"## group{g}x" in parts[faq]
    assert all("### kept question?" in p for i, p in enumerate(parts) if i and i != faq)


# -- the set, built from a package tree shaped like Debian's gnubg-data -------------------

ALLABOUT = (
    '<html><body><div class="article"><div class="titlepage"><div><div><h2 class="title">'
    '<a id="allabout"></a>All about GNU Backgammon</h2></div></div></div>'
    + sect(
        "sect1",
        "features",
        "Features",
        "<p>Players who think GNU Backgammon is too strong for me can lower its level.</p>"
        '<div class="tip"><h3 class="title">Tip</h3><p>Tip text.</p></div>'
        + sect("sect2", "features_list", "Brief feature list", "<p>Analysis, rollouts.</p>"),
    )
    + "</div></body></html>"
)


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str | None = None) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GNUBG_PACKAGE, "1.07.001-1")
    doc: Path = root / ns.GNUBG_DOC
    doc.mkdir(parents=True)
    (doc / ns.GNUBG_MANUAL).write_text(manual() if page is None else page, encoding="utf-8")
    (doc / "allabout.html").write_text(ALLABOUT, encoding="utf-8")
    (doc / "gnubg.pdf").write_text("leftout pdf\n")
    (doc / "allabout.pdf").write_text("leftout pdf\n")
    (doc / "changelog.gz").write_bytes(b"leftout")
    (root / "usr/share/doc/gnubg-data").mkdir(parents=True)
    (root / "usr/share/doc/gnubg-data/copyright").write_text("leftout\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (:func:`manual`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


FILES = {
    "manual/00-gnu-backgammon-manual-v1-00-0.md",
    "manual/01-introduction.md",
    "manual/02-technical-notes.md",
    "manual/03-frequently-asked-questions.md",
    "allabout.md",
}


def test_gnubg_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.gnubg_faq_set()
    nsc.assert_package_set(
        nset,
        "gnubg-faq",
        ids=list(ANSWERS),
        files=FILES,
        source="manual/03-frequently-asked-questions.md",
        version="1.07.001-1",
        too_long="manual/04-a-gnu-free-documentation-license.md",
        answers=ANSWERS,
    )
    corpus = " ".join(nset.files.values())
    assert "leftout" not in corpus and "tocline" not in corpus
    # the page quoting a question scrubbed, its other text kept; converted with its levels
    about = nset.files["allabout.md"]
    assert "Players who think" in about and "can lower its level." in about
    assert about.startswith("# All about GNU Backgammon") and "\n# Features" in about
    assert "\n## Brief feature list" in about and "Tip text." in about
    # the cross-reference answer, its question scrubbed, is too short: left out and named
    assert nset.left_out == (Q_EPC_SHORT,) and "EPC?" in nset.note
    faq = nset.files["manual/03-frequently-asked-questions.md"]
    assert "See the section called “”" in faq


def test_gnubg_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = manual().replace(A_STRONG, "See Settings.")
    assert short != manual()
    _package(tmp_path, monkeypatch, short)
    nset = ns.gnubg_faq_set()
    assert nset.left_out == (Q_STRONG, Q_EPC_SHORT) and Q_STRONG in nset.note
    assert len(nset.questions) == len(ANSWERS) - 1
    assert nsc.flat(Q_STRONG) not in nsc.flat(" ".join(nset.files.values()))


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the manual as shipped: the check finds every question there, so it could fail
    nsc.assert_leak_checked(ns.gnubg_faq_set(), {"gnubg.html": manual()}, ASKED, is_html=True)


def test_gnubg_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    added = sect(
        "sect3",
        "gnubg-faq_new",
        "How do I import a match?",
        "<p>Use the menu File, Import and pick the file you saved.</p>",
    )
    empty = sect("sect3", "gnubg-faq_empty", "An entry nobody answered", "")
    more = manual().replace(empty, empty + added)
    assert more != manual()
    nsc.assert_halves_survive_an_added_question(
        ns.gnubg_faq_set, lambda: (doc_dir / ns.GNUBG_MANUAL).write_text(more, encoding="utf-8")
    )


def test_gnubg_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.GNUBG_MANUAL).write_text(manual(CHAPTERS.replace(FAQ_CHAPTER, "")))
    with pytest.raises(FileNotFoundError, match="no FAQ chapter with questions"):
        ns.gnubg_faq_set()
    (doc_dir / ns.GNUBG_MANUAL).unlink()
    nsc.assert_refuses_without_faq(ns.gnubg_faq_set, ns.GNUBG_MANUAL)
