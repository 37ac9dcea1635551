"""The ``lxml-faq`` natural-question set (``bench/natural_sets.py``), its reading of lxml's
docutils-built FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a
small inline page shaped like Debian's ``python-lxml-doc`` ships it
(``/usr/share/doc/python-lxml/html/FAQ.html``: a side menu listing every page's sections
(the FAQ's groups among them), a donation banner, the ``<h1 class="title">``, a contents
box (``<div class="contents topic">``) listing every question again as in-page links, an
intro with a highlighted code sample, then one ``<div class="section">`` per group (its
``<h1>``) holding one per entry, its ``<h2>`` the question, some with ``<tt>`` inside, some
stated ("My application crashes!"); answers of paragraphs, code samples in nested divs
with ``>>>`` lines, lists; an entry with no text) beside the tree's other pages (the front
page with the same menu and banner and a link into an FAQ entry, the tutorial quoting a
question, an over-long changelog page, the sitemap, the generated API reference, the key
and style sheet), in a package tree laid out as ``python-lxml-doc`` unpacks (marker
present, nothing downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
contents box, another page quoting one); the side menu and banner, on every page, in none;
each answer is exactly the text under its question up to the next ``<h2>`` or ``<h1>``; ids
are the FAQ's section ids, so an added entry keeps the halves; an answer too short to judge
leaves the set but not the corpus's scrubbing.
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

Q_TUTORIAL = "Is there a tutorial?"
Q_OBJECTIFY = "What is the difference between lxml.etree and lxml.objectify?"
Q_PRETTY = "Why doesn't the pretty_print option reformat my XML output?"
Q_CRASH = "My application crashes!"
Q_EMPTY = "Is this entry answered at all?"
Q_THREADS = "Can I use threads to concurrently access the lxml API?"
Q_FINDALL = "What are the findall() and xpath() methods on Element(Tree)?"


def _tt(text: str) -> str:
    """docutils' inline literal."""
    return f'<tt class="docutils literal">{text}</tt>'


def _sample(*lines: str) -> str:
    """A highlighted code sample (``<div class="syntax"><pre>``)."""
    body = "\n".join(
        f'<span class="gp">&gt;&gt;&gt; </span><span class="n">{ln}</span>' for ln in lines
    )
    return f'<div class="syntax"><pre><span></span>{body}\n</pre></div>\n'


def _menu() -> str:
    """The side menu every page of the tree has (the FAQ's groups among its items) and,
    after it, the donation banner."""
    banner = (
        '<div class="banner"><div class="banner_image"><img src="python-xml-title.png" /></div>'
        '<div class="banner_link"><a href="index.html#support-the-project">Like the tool? '
        '<br class="first" />Help making it better! <br class="second" />Your donation helps!'
        "</a></div></div>"
    )
    return (
        '<div class="sidemenu" id="sidemenu"><div class="menutrigger" '
        'onclick="trigger_menu(event)">Menu</div><div class="menu">'
        f"{banner}"
        '<ul id="lxml-section"><li><span class="section title">lxml</span>'
        '<ul class="menu current" id="FAQ-menu"><li class="menu title"><a href="FAQ.html">'
        'lxml FAQ - Frequently Asked Questions</a><ul class="submenu">'
        '<li class="menu item"><a href="FAQ.html#general-questions">General Questions</a></li>'
        '<li class="menu item"><a href="FAQ.html#id1">Threading</a></li></ul></li></ul>'
        '<ul class="menu foreign" id="tutorial-menu"><li class="menu title">'
        '<a href="tutorial.html">The lxml.etree Tutorial</a></li></ul></li></ul>'
        "</div></div>"
        f"{banner}"
    )


def _page(doc_id: str, title: str, body: str, contents: str = "") -> str:
    """A page of lxml's docutils build: head, the side menu and banner, the title, an
    optional contents box, the body."""
    return (
        '<?xml version="1.0" encoding="utf-8" ?>\n<html xmlns="http://www.w3.org/1999/xhtml">\n'
        '<head>\n<meta http-equiv="Content-Type" content="text/html; charset=utf-8" />\n'
        f"<title>{title}</title>\n"
        '<link rel="stylesheet" href="style.css" type="text/css" />\n'
        '<script type="text/javascript">function hide_menu() {}</script></head>\n'
        '<body onclick="hide_menu()">\n'
        f'<div class="document" id="{doc_id}">\n{_menu()}<h1 class="title">{title}</h1>\n'
        f"{contents}{body}</div>\n</body>\n</html>\n"
    )


def _entry(sid: str, title: str, body: str) -> str:
    return f'<div class="section" id="{sid}">\n<h2>{title}</h2>\n{body}</div>\n'


GROUPS = [
    (
        "general-questions",
        "General Questions",
        [
            (
                "is-there-a-tutorial",
                "Is there a tutorial?",
                '<p>Read the <a class="reference external" href="tutorial.html">lxml.etree '
                "Tutorial</a>. It gives an overview of the most important concepts in "
                f"{_tt('lxml.etree')}.</p>\n"
                '<ul class="simple">\n<li>Na\u00efve recipes still work.</li>\n</ul>\n',
            ),
            (
                "what-is-the-difference-between-lxml-etree-and-lxml-objectify",
                "What is the difference between lxml.etree and lxml.objectify?",
                "<p>The two modules provide different ways of handling XML.</p>\n"
                + _sample("root = etree.XML('&lt;root/&gt;')", "root.tag")
                + "<p>Objectify is a data binding API.</p>\n",
            ),
            ("is-this-entry-answered-at-all", "Is this entry answered at all?", ""),
        ],
    ),
    (
        "bugs",
        "Bugs",
        [
            (
                "my-application-crashes",
                "My application crashes!",
                "<p>One of the goals of lxml is \u201cno segfaults\u201d, so if there is "
                "no clear warning in the documentation, report it.</p>\n",
            ),
            (
                "why-doesn-t-the-pretty-print-option-reformat-my-xml-output",
                f"Why doesn't the {_tt('pretty_print')} option reformat my XML output?",
                "<p>Pretty printing only works when there is no ignorable whitespace left "
                "in the tree.</p>\n",
            ),
        ],
    ),
    (
        "id1",
        "Threading",
        [
            (
                "can-i-use-threads-to-concurrently-access-the-lxml-api",
                "Can I use threads to concurrently access the lxml API?",
                '<p>Short answer: yes, see <a class="reference internal" '
                'href="#threading">threading</a> for the details of the global interpreter '
                "lock.</p>\n",
            ),
            (
                "what-are-the-findall-and-xpath-methods-on-element-tree",
                f"What are the {_tt('findall()')} and {_tt('xpath()')} methods on Element(Tree)?",
                f"<p>{_tt('findall()')} is part of the original ElementTree API.</p>\n",
            ),
        ],
    ),
]
IDS = [
    (sid, q)
    for sid, q in zip(
        [sid for _, _, entries in GROUPS for sid, _, _ in entries],
        [Q_TUTORIAL, Q_OBJECTIFY, Q_EMPTY, Q_CRASH, Q_PRETTY, Q_THREADS, Q_FINDALL],
        strict=True,
    )
    if sid != "is-this-entry-answered-at-all"
]


def _faq(groups: list[tuple[str, str, list[tuple[str, str, str]]]]) -> str:
    contents = (
        '<div class="contents topic" id="contents">\n<p class="topic-title">Contents</p>\n<ul>\n'
        + "".join(
            f'<li><a class="reference internal" href="#{gid}">{gtitle}</a><ul>\n'
            + "".join(
                f'<li><a class="reference internal" href="#{sid}">{t}</a></li>\n'
                for sid, t, _ in entries
            )
            + "</ul>\n</li>\n"
            for gid, gtitle, entries in groups
        )
        + "</ul>\n</div>\n"
    )
    body = (
        "<p>The code examples below use the <cite>lxml.etree</cite> module:</p>\n"
        + _sample("from lxml import etree")
        + "".join(
            f'<div class="section" id="{gid}">\n<h1>{gtitle}</h1>\n'
            + "".join(_entry(*e) for e in entries)
            + "</div>\n"
            for gid, gtitle, entries in groups
        )
    )
    return _page(
        "lxml-faq-frequently-asked-questions",
        "lxml FAQ - Frequently Asked Questions",
        body,
        contents,
    )


PAGE = _faq(GROUPS)


def test_split_lxml_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_lxml_faq(PAGE)
    assert [(k, q) for k, q, _ in qa] == IDS
    answers = {k: a for k, _, a in qa}
    tutorial = answers["is-there-a-tutorial"]
    assert nsc.flat(tutorial).startswith("read the lxml.etree tutorial. it gives an overview")
    assert "Naïve recipes still work." in tutorial
    # a code sample's ">>>" lines are code; the answer runs past them
    objectify = answers[IDS[1][0]]
    assert ">>> root.tag" in objectify and "data binding API" in objectify
    assert nsc.flat(answers["my-application-crashes"]).endswith(
        "no segfaults”, so if there is no clear warning in the documentation, report it."
    )
    # an <h1> (the next group's title) ends the answer above it and stays in the page
    assert answers[IDS[3][0]] == (
        "Pretty printing only works when there is no ignorable whitespace left in the tree."
    )
    assert "# Bugs" in page and "# Threading" in page and "# General Questions" in page
    # the last answer stops at the page's end
    assert answers[IDS[-1][0]] == "findall() is part of the original ElementTree API."
    nsc.assert_page_keeps_answers(qa, page)
    # the side menu, the banner (twice: in the menu and after it) and the contents box
    # are gone; the title and the intro stay
    for gone in ("Menu", "Like the tool", "donation", "Contents", "The lxml.etree Tutorial"):
        assert gone not in page
    assert page.startswith("# lxml FAQ - Frequently Asked Questions")
    assert ">>> from lxml import etree" in page
    # an entry with nothing under it asks nothing and leaves the page all the same
    assert "answered at all" not in page


def test_docutils_page_body_and_split_edges() -> None:
    # nested divs inside a dropped div do not end it; a class that only starts with a
    # dropped name is kept; an unclosed dropped div runs to the end
    body = ns.docutils_page_body(
        '<div class="document"><div class="sidemenu"><div><div>m</div></div>n</div>'
        '<div class="bannerless">kept</div><p>text</p>'
        "<div class='contents local topic'><ul><li>c</li></ul></div>"
        '<div class="section"><p>more</p></div><div class="banner">open'
    )
    assert body == (
        '<div class="document"><div class="bannerless">kept</div><p>text</p>'
        '<div class="section"><p>more</p></div>'
    )
    # an <h2> with no section id before it gets the question's slug; a repeat gets -2
    page, qa = ns.split_lxml_faq(
        "<body><h2>Same words?</h2><p>First answer.</p>"
        '<div class="section" id="dup"><h2>One?</h2><p>One answer.</p></div>'
        '<div class="section" id="dup"><h2>Two?</h2><p>Two answer.</p></div>'
        "<h2>Same words?</h2><p>Second answer.</p><h1>Another group</h1><p>Under it.</p>"
        "</body>"
    )
    nsc.assert_slugs_and_repeats(page, qa, "Another group")
    # inline tags in a heading leave no space of their own; entities decoded
    _, qa = ns.split_lxml_faq(f"<h2>Why <em>is</em> {_tt('a()')}&#8217;s output?</h2><p>Text.</p>")
    assert qa[0][1] == "Why is a()\u2019s output?"
    # a page with no FAQ entries: no question, its text kept
    page, none = ns.split_lxml_faq(_page("x", "Credits", "<p>Prose.</p>"))
    assert none == [] and "Prose." in page and "Menu" not in page


_WORD = st.sampled_from(["xpath", "parser", "objectify", "thread", "xslt", "tree", "namespace"])


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
def test_split_lxml_faq_property(
    entries: list[tuple[list[str], bool, bool, bool, list[str]]],
) -> None:
    """Random entries, asked or stated, in one group or several, wrapped or not, some
    unanswered: one question per answered entry, in order, its section id its id, its
    answer its text, in the page; no title left in it (the contents box gone with the
    entries)."""
    spec: list[tuple[str, str, str]] = []
    groups: list[tuple[str, str, list[tuple[str, str, str]]]] = []
    for k, (words, asked, new_group, wrapped, awords) in enumerate(entries):
        title = ("\n" if wrapped else " ").join([f"entry{k}x", *words]) + ("?" if asked else "")
        answer = " ".join(["Answer", *awords]) if awords else ""
        if new_group or not groups:
            groups.append((f"g{k}", f"Group {k}", []))
        groups[-1][2].append((f"sid{k}", title, f"<p>{answer}</p>\n" if answer else ""))
        spec.append((f"sid{k}", " ".join(title.split()), answer))
    page, qa = ns.split_lxml_faq(_faq(groups))
    assert qa == [(k, t, a) for k, t, a in spec if a]
    for _, _, a in qa:
        assert a in page
    for _, t, _ in spec:
        assert t not in " ".join(page.split())


# -- the set, built from a package tree shaped like Debian's python-lxml-doc ---------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str = PAGE) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.LXML_PACKAGE, "4.9.2-1")
    doc: Path = root / ns.LXML_DOC
    (doc / "apidoc").mkdir(parents=True)
    (doc / ns.LXML_FAQ).write_text(page, encoding="utf-8")
    (doc / "index.html").write_text(
        _page(
            "lxml",
            "lxml - XML and HTML with Python",
            '<div class="section" id="introduction"><h1>Introduction</h1>'
            "<p>lxml is a Pythonic binding for libxml2 and libxslt.</p>"
            '<p>See the <a class="reference external" href="FAQ.html#what-is-the-difference-'
            'between-lxml-etree-and-lxml-objectify">objectify and etree</a> FAQ entry.</p>'
            "</div>",
        ),
        encoding="utf-8",
    )
    (doc / "tutorial.html").write_text(
        _page(
            "the-lxml-etree-tutorial",
            "The lxml.etree Tutorial",
            f"<p>People ask: {Q_TUTORIAL} This is it.</p>"
            "<p>The tutorial\u2019s examples run in lxml 4.9.</p>",
            '<div class="contents topic" id="contents"><ul><li><a href="#the-element-class">'
            "The Element class</a></li></ul></div>",
        ),
        encoding="utf-8",
    )
    (doc / "changes-4.9.2.html").write_text(
        '<html><body><div class="document"><h1 class="title">lxml changelog</h1><ul>'
        + "<li>fixed a bug</li>\n" * 20000
        + "</ul></div></body></html>",
        encoding="utf-8",
    )
    (doc / "sitemap.html").write_text(_page("sitemap", "Sitemap", "<p>Sitemap</p>"))
    (doc / "apidoc" / "lxml.etree.html").write_text("<html><body><p>etree API</p></body></html>")
    (doc / "apidoc" / "genindex.html").write_text("<html><body><p>Index</p></body></html>")
    (doc / "pubkey.asc").write_text("-----BEGIN PGP PUBLIC KEY BLOCK-----\n")
    (doc / "style.css").write_text("body { color: black }\n")
    examples = root / "usr/share/doc/python-lxml-doc/examples"
    examples.mkdir(parents=True)
    (examples / "simple.xml").write_text("<root><a/></root>\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`PAGE`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_lxml_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.lxml_faq_set()
    nsc.assert_package_set(
        nset,
        "lxml-faq",
        ids=[k for k, _ in IDS],
        files={"FAQ.md", "index.md", "tutorial.md"},
        source="FAQ.md",
        version="4.9.2-1",
        too_long="changes-4.9.2.html",
    )
    # UTF-8 read as such
    assert "Naïve recipes" in nset.files["FAQ.md"]
    assert "tutorial\u2019s examples" in nset.files["tutorial.md"]
    # the side menu, the banner and the contents box are in no page
    for rel, text in nset.files.items():
        for gone in ("Menu", "Like the tool", "donation", "The Element class", "submenu"):
            assert gone not in text, (rel, gone)
    # a hand-written link into an FAQ entry keeps its text (it names no question)
    index = nset.files["index.md"]
    assert "# Introduction" in index and "objectify and etree FAQ entry" in index
    # the page quoting a question: scrubbed, its other text kept
    assert "This is it." in nset.files["tutorial.md"]


def test_lxml_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = PAGE.replace(
        "One of the goals of lxml is \u201cno segfaults\u201d, so if there is no clear warning "
        "in the documentation, report it.",
        "Report it.",
    )
    assert short != PAGE
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.lxml_faq_set(), Q_CRASH, len(IDS) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(
        ns.lxml_faq_set(), {"FAQ.md": ns.lxml_page_markdown(PAGE)}, [q for _, q in IDS]
    )


def test_lxml_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = _faq(
        [
            *GROUPS,
            (
                "xpath-and-document-traversal",
                "XPath and Document Traversal",
                [
                    (
                        "how-can-i-modify-the-tree-during-iteration",
                        "How can I modify the tree during iteration?",
                        "<p>Collect the elements in a list first, then change the tree.</p>\n",
                    )
                ],
            ),
        ]
    )
    nsc.assert_halves_survive_an_added_question(
        ns.lxml_faq_set, lambda: (doc / ns.LXML_FAQ).write_text(more, encoding="utf-8")
    )


def test_lxml_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.LXML_PACKAGE, "4.9.2-1")
    (root / ns.LXML_DOC).mkdir(parents=True)
    nsc.assert_refuses_without_faq(ns.lxml_faq_set, "FAQ.html")
