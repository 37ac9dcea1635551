"""The ``docutils-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
Docutils FAQ (docutils HTML) and the question-leak check (``bench/check_question_leaks.py``)
on a small inline page shaped as Debian's ``docutils-doc`` ships it
(``/usr/share/doc/docutils-doc/FAQ.html``: the XHTML head, ``<div class="document">``, the
``<h1 class="title">``, the docinfo table, the maintainers' comment, a numbered contents box
``<div class="contents topic">`` naming every group and question again, an introduction,
then ``<div class="section">`` groups with numbered ``<h1>`` titles linking back to the
contents, holding one such div per entry with its numbered ``<h2>`` question: entities
(``&quot;``, ``&amp;``), an ``<em>`` inside one, two spaces inside another, a stated entry,
an unanswered entry; answers of paragraphs, literal blocks, lists and footnotes) beside the
folder's other pages (a ``docs/`` page with the menu bar and a local contents box, the
menu-bar fragment ``docs/header.html``, the README quoting a question, a long HISTORY to be
cut at its sections; the ``.txt`` sources, the stylesheets, the Debian changelog, NEWS and
copyright to be left out), in a package tree laid out as ``docutils-doc`` unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents box, a page quoting one); each answer is exactly the text under its question up to
the next ``<h2>``/``<h1>``; questions carry no section number; ids are the FAQ's section
ids, so an added entry keeps the halves; an answer too short to judge leaves the set but not
the corpus's scrubbing.
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

Q_WHAT = "What is Docutils?"
Q_NAME = 'Why is it called "reStructuredText"?'
Q_TITLE = "How can I indicate the document title? Subtitle?"
Q_LITERAL = "How can I make a literal block with some formatting?"
Q_QA = "How can I mark up a FAQ or other list of questions & answers?"
Q_EMPTY = "Is this entry answered at all?"
Q_CONTRIB = "How to make code contributions that are easily accepted"
ASKED = (Q_WHAT, Q_NAME, Q_TITLE, Q_LITERAL, Q_QA, Q_CONTRIB)
ANSWERS = {
    "what-is-docutils": "Docutils is a system for processing plaintext documentation into "
    "useful formats, such as HTML, XML, and LaTeX.\n\n- a library;\n\n- several front-end "
    "tools.",
    "why-is-it-called-restructuredtext": "It's the result of revising and reinterpreting "
    "StructuredText.",
    "how-can-i-indicate-the-document-title-subtitle": "A uniquely-adorned section title at "
    "the beginning of a document is treated specially:\n\n```\n\n========\n Title\n========\n"
    "\n```",
    "how-can-i-make-a-literal-block-with-some-formatting": "Use the parsed-literal directive"
    ".[1]\n\n | [1] | Added in Docutils 0.3.",
    "how-can-i-mark-up-a-faq-or-other-list-of-questions-answers": "There is no specific "
    "syntax for FAQs and Q&A lists; use a definition list.",
    "how-to-make-code-contributions-that-are-easily-accepted": "Follow the Python coding "
    "conventions and send patches with tests.",
}


def _backref(n: int, text: str) -> str:
    """A heading's text as docutils writes it under a numbered contents box: a link back
    to the box's item, the section's number, three no-break spaces, the title."""
    return f'<a class="toc-backref" href="#toc-entry-{n}">{text}</a>'


def _page(doc_id: str, title: str, body: str, *, header: bool = False) -> str:
    """A page as docutils' HTML writer writes the folder's pages: the XHTML head, the menu
    bar the ``docs/`` pages open with (``header``), the document's title and body."""
    bar = (
        '<div class="header">\n<a class="reference external" '
        'href="https://docutils.sourceforge.io">Docutils</a> | <a class="reference external" '
        'href="../index.html">Overview</a> | <a class="reference external" '
        'href="../index.html#user">Users</a>\n<hr class="header"/>\n</div>\n'
        if header
        else ""
    )
    return (
        '<?xml version="1.0" encoding="utf-8" ?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML '
        '1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">\n<head>\n'
        '<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="css/html4css1.css" '
        f'type="text/css" />\n</head>\n<body>\n{bar}<div class="document" id="{doc_id}">\n'
        f'<h1 class="title">{title}</h1>\n{body}</div>\n</body>\n</html>\n'
    )


NBSP3 = "&nbsp;&nbsp;&nbsp;"

# (group id, number, title, [(section id, number, title markup, answer markup)])
GROUPS = [
    (
        "docutils",
        "1",
        "Docutils",
        [
            (
                "what-is-docutils",
                "1.1",
                Q_WHAT,
                "<p>Docutils is a system for processing plaintext documentation into useful\n"
                'formats, such as HTML, XML, and LaTeX.</p>\n<ul class="simple">\n'
                "<li>a library;</li>\n<li>several front-end tools.</li>\n</ul>\n",
            ),
            (
                "why-is-it-called-restructuredtext",
                "1.2",
                "Why is it called &quot;reStructuredText&quot;?",
                "<p>It's the result of revising and reinterpreting StructuredText.</p>\n",
            ),
            ("is-this-entry-answered-at-all", "1.3", Q_EMPTY, ""),
        ],
    ),
    (
        "restructuredtext",
        "2",
        "reStructuredText",
        [
            (
                "how-can-i-indicate-the-document-title-subtitle",
                "2.6",
                "How can I indicate the document title?  Subtitle?",
                "<p>A uniquely-adorned section title at the beginning of a document is "
                'treated\nspecially:</p>\n<pre class="literal-block">\n========\n Title\n'
                "========\n</pre>\n",
            ),
            (
                "how-can-i-make-a-literal-block-with-some-formatting",
                "2.19",
                "How can I make a literal block with <em>some</em> formatting?",
                '<p>Use the parsed-literal directive.<a class="footnote-reference brackets" '
                'href="#id3" id="id1">[1]</a></p>\n<table class="docutils footnote" '
                'frame="void" id="id3" rules="none">\n<tbody valign="top">\n<tr><td '
                'class="label"><a class="fn-backref" href="#id1">[1]</a></td><td>Added in '
                "Docutils 0.3.</td></tr>\n</tbody>\n</table>\n",
            ),
            (
                "how-can-i-mark-up-a-faq-or-other-list-of-questions-answers",
                "2.21",
                "How can I mark up a FAQ or other list of questions &amp; answers?",
                "<p>There is no specific syntax for FAQs and Q&amp;A lists; use a definition "
                "list.</p>\n",
            ),
        ],
    ),
    (
        "miscellaneous",
        "5",
        "Miscellaneous",
        [
            (
                "how-to-make-code-contributions-that-are-easily-accepted",
                "5.2",
                Q_CONTRIB,
                "<p>Follow the Python coding conventions and send patches with tests.</p>\n",
            ),
        ],
    ),
]


def _faq(groups: list[tuple[str, str, str, list[tuple[str, str, str, str]]]]) -> str:
    n = 0
    items, body = [], []
    for gid, gnum, gtitle, entries in groups:
        n += 1
        gitem = f'<li><a class="reference internal" href="#{gid}" id="toc-entry-{n}">{gnum}'
        body.append(
            f'<div class="section" id="{gid}">\n<h1>{_backref(n, gnum + NBSP3 + gtitle)}</h1>\n'
        )
        subs = []
        for sid, num, title, answer in entries:
            n += 1
            subs.append(
                f'<li><a class="reference internal" href="#{sid}" id="toc-entry-{n}">{num}'
                f"{NBSP3}{title}</a></li>\n"
            )
            body.append(
                f'<div class="section" id="{sid}">\n<h2>{_backref(n, num + NBSP3 + title)}</h2>\n'
                f"{answer}</div>\n"
            )
        body.append("</div>\n")
        items.append(
            f'{gitem}{NBSP3}{gtitle}</a><ul class="auto-toc">\n{"".join(subs)}</ul>\n</li>\n'
        )
    return _page(
        "docutils-faq-frequently-asked-questions",
        "Docutils FAQ (Frequently Asked Questions)",
        '<table class="docinfo" frame="void" rules="none">\n<tbody valign="top">\n'
        '<tr><th class="docinfo-name">Date:</th>\n<td>2022-06-17</td></tr>\n</tbody>\n'
        "</table>\n<!-- NOTE TO MAINTAINERS: Please add new questions to the end of their\n"
        "sections, so section/question numbers remain stable. -->\n"
        '<div class="contents topic" id="contents">\n<p class="topic-title">Contents</p>\n'
        f'<ul class="auto-toc simple">\n{"".join(items)}</ul>\n</div>\n'
        "<p>This is a work in progress.</p>\n" + "".join(body),
    )


FAQ = _faq(GROUPS)


def test_split_docutils_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_docutils_faq(FAQ)
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the contents box and the unanswered entry leave the page; the title, the docinfo,
    # the introduction and the groups' numbered titles stay, in no answer
    assert "Contents" not in page and "answered at all" not in page
    assert page.startswith("# Docutils FAQ (Frequently Asked Questions)\n")
    assert "2022-06-17" in page and "This is a work in progress." in page
    for group in ("# 1 Docutils", "# 2 reStructuredText", "# 5 Miscellaneous"):
        assert group in page and all(group not in a for _, _, a in qa)
    # no entry's number is left in the page either (the headings went whole)
    for number in ("1.1", "2.19", "5.2"):
        assert number not in page


def test_docutils_doc_page_markdown_and_split_edges() -> None:
    # the menu bar and every contents box go, nested divs counted; a class that only starts
    # with a dropped name is kept
    assert (
        ns.docutils_doc_page_markdown(
            '<div class="header"><a href="x">Docutils</a> | <div>Users</div></div>'
            '<div class="document"><h1 class="title">Tools</h1>'
            '<div class="contents local topic"><ul><li>Intro</li></ul></div>'
            '<div class="headerless"><p>kept</p></div><p>Text.</p></div>'
        )
        == "# Tools\n\nkept\n\nText.\n"
    )
    # an <h2> with no section id before it gets the question's slug; a repeat gets -2; an
    # <h1> ends the answer above it and stays in the page
    page, qa = ns.split_docutils_faq(
        "<body><h2>Same words?</h2><p>First answer.</p>"
        '<div class="section" id="dup"><h2>3.1&nbsp;&nbsp;&nbsp;One?</h2><p>One answer.</p></div>'
        '<div class="section" id="dup"><h2>3.2 Two?</h2><p>Two answer.</p></div>'
        "<h2>Same words?</h2><p>Second answer.</p><h1>Another group</h1><p>Under it.</p>"
        "</body>"
    )
    nsc.assert_slugs_and_repeats(page, qa, "Another group")
    # only a leading section number is a label: a number inside the question stays
    _, qa = ns.split_docutils_faq(
        "<h2>4.1 Is 0.19 the last release?</h2><p>No, there will be more.</p>"
        "<h2>2020 plans</h2><p>See the to-do list.</p>"
    )
    assert [q for _, q, _ in qa] == ["Is 0.19 the last release?", "2020 plans"]
    # a page with no FAQ entries: no question, its text kept
    page, none = ns.split_docutils_faq(_page("x", "Credits", "<p>Prose.</p>"))
    assert none == [] and page == "# Credits\n\nProse.\n"


_WORD = st.sampled_from(["directive", "role", "writer", "reader", "table", "footnote", "rst"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=0, max_size=8),  # the title's words after the first
            st.booleans(),  # asked ("?") or stated
            st.booleans(),  # a new group opens before it
            st.booleans(),  # wrapped over two lines
            st.lists(_WORD, min_size=0, max_size=20),  # the answer's words (may be none)
        ),
        max_size=8,
    )
)
def test_split_docutils_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, list[str]]],
) -> None:
    """Random numbered entries, asked or stated, in one group or several, wrapped or not,
    some unanswered: one question per answered entry, in order, without its number, its
    section id its id, its answer its text, in the page; no question left in it (the
    contents box gone with the entries)."""
    groups: list[tuple[str, str, str, list[tuple[str, str, str, str]]]] = []
    expected = []
    for k, (words, asked, new_group, wrapped, awords) in enumerate(entries):
        title = ("\n" if wrapped else " ").join([f"entry{k}x", *words]) + ("?" if asked else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        if new_group or not groups:
            groups.append((f"g{k}", str(len(groups) + 1), f"Group {k}", []))
        number = f"{groups[-1][1]}.{len(groups[-1][3]) + 1}"
        groups[-1][3].append((f"sid{k}", number, title, f"<p>{answer}</p>\n" if answer else ""))
        if answer:
            expected.append((f"sid{k}", " ".join(title.split()), answer))
    page, qa = ns.split_docutils_faq(_faq(groups))
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's docutils-doc --------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.DOCUTILS_PACKAGE, "0.19+dfsg-6")
    doc: Path = root / ns.DOCUTILS_DOC

    def page(rel: str, title: str, body: str, *, header: bool = False) -> None:
        (doc / rel).parent.mkdir(parents=True, exist_ok=True)
        (doc / rel).write_text(_page("p", title, body, header=header), encoding="utf-8")

    doc.mkdir(parents=True)
    (doc / ns.DOCUTILS_FAQ).write_text(faq, encoding="utf-8")
    (doc / "FAQ.txt").write_text(f"{Q_WHAT}\n---\n")
    page(
        "README.html",
        "README: Docutils 0.19",
        f"<p>Questions? &#8220;{Q_WHAT}&#8221; It converts text.</p><p>Install it.</p>",
    )
    (doc / "README.txt").write_text("left out\n")
    page(
        "docs/user/tools.html",
        "Docutils Front-End Tools",
        '<div class="contents local topic" id="contents"><ul><li><a href="#intro">'
        "Introduction</a></li></ul></div>\n"
        '<div class="section" id="intro"><h1>Introduction</h1><p>Tools convert '
        "text.</p></div>\n",
        header=True,
    )
    (doc / "docs" / "header.html").write_text(
        _page("p", "Menu", "", header=True).replace(
            '<h1 class="title">Menu</h1>', "<!-- Minimal menu bar for inclusion -->"
        ),
        encoding="utf-8",
    )
    page(
        "HISTORY.html",
        "Docutils History",
        "<p>History intro.</p>"
        + "".join(
            f'<div class="section"><h2>Release 0.{n}</h2>'
            + "<p>Fixed a bug here.</p>" * 3000
            + "</div>"
            for n in (17, 18, 19)
        ),
    )
    (doc / "css").mkdir()
    (doc / "css" / "html4css1.css").write_text("body { color: black }\n")
    (doc / "css" / "left.html").write_text(_page("p", "Left out", "<p>left out</p>"))
    write_gz(doc / "changelog.Debian.gz", "left out\n")
    write_gz(doc / "NEWS.Debian.gz", "left out\n")
    (doc / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_docutils_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.docutils_faq_set()
    cut = {
        "HISTORY/00-docutils-history.md",
        "HISTORY/01-release-0-17.md",
        "HISTORY/02-release-0-18.md",
        "HISTORY/03-release-0-19.md",
    }
    nsc.assert_package_set(
        nset,
        "docutils-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "README.md", "docs/user/tools.md", *cut},
        source="FAQ.md",
        version="0.19+dfsg-6",
        too_long="HISTORY.html in 4 files",
    )
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert "no text of their own, out: docs/header.html;" in nset.note
    text = " ".join(nset.files.values())
    assert "left out" not in text and "Overview" not in text
    # a docs/ page without its menu bar and contents box; the quoting page scrubbed, its
    # other text kept; each cut file under the limit, headed by its section
    assert nset.files["docs/user/tools.md"] == (
        "# Docutils Front-End Tools\n\n# Introduction\n\nTools convert text.\n"
    )
    assert "It converts text." in nset.files["README.md"]
    assert all(len(nset.files[rel]) <= ns.DOCUTILS_MAX_PAGE_CHARS for rel in cut)
    assert nset.files["HISTORY/02-release-0-18.md"].startswith("## Release 0.18\n")


def test_docutils_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "Follow the Python coding conventions and send patches with tests.", "See the policies."
    )
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.docutils_faq_set(), Q_CONTRIB, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.docutils_faq_set(), {"FAQ.html": FAQ}, ASKED, is_html=True)


def test_docutils_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _faq(
        [
            *GROUPS[:-1],
            (
                *GROUPS[-1][:3],
                [
                    *GROUPS[-1][3],
                    (
                        "is-there-a-docutils-mailing-list",
                        "5.3",
                        "Is there a Docutils mailing list?",
                        "<p>Yes, docutils-users on SourceForge; subscribe there.</p>\n",
                    ),
                ],
            ),
        ]
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.docutils_faq_set,
        lambda: (doc / ns.DOCUTILS_FAQ).write_text(more, encoding="utf-8"),
    )


def test_docutils_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.DOCUTILS_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.docutils_faq_set, "FAQ.html")
