"""The ``libxml2-faq`` natural-question set (``bench/natural_sets.py``), its reading of
libxml2's FAQ (hand-written XHTML in the site's page template) and the question-leak check
(``bench/check_question_leaks.py``) on a small inline FAQ page shaped as Debian's
``libxml2-doc`` ships it (``/usr/share/doc/libxml2/html/FAQ.html``: the template's header
of logos over the site's title and the page's ``<h2>`` title, the left column of link
menus, the main column with "Table of Contents:" over a list of links to the sections;
``<h3>`` sections of ``<ol>`` entries ``<li><em>question</em>``, one with its question mark
after the ``<em>``, one wrapped over two lines, one with a nested list holding an item that
opens with ``<em>``, one with no text under it; an item with no ``<em>``; the last list's
"etc ..." item; the author's name at the foot) beside the site's other pages, the API
reference's module pages and the tutorial (a page quoting a question, a page over the page
limit, the whole-site page and the API's index pages to be left out), in a package tree
laid out as ``libxml2-doc`` unpacks (marker present, nothing downloaded); offline, no
embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the entries, a page
quoting one); each answer is exactly the rest of its list item; ids are the questions'
slugs, so an added entry keeps the halves; an answer too short to judge leaves the set but
not the corpus's scrubbing.
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

Q_EMBED = "Can I embed libxml2 in a proprietary application ?"
Q_GET = "Where can I get libxml ?"
Q_RPM = "I can't install the libxml(2) RPM package due to failed dependencies"
Q_CHAR = 'So what is this funky "xmlChar" used all the time?'
ASKED = (Q_EMBED, Q_GET, Q_RPM, Q_CHAR)
ANSWERS = {
    "can-i-embed-libxml2-in-a-proprietary-app": "Yes. The MIT License allows you to keep "
    "proprietary the changes you made to libxml.",
    "where-can-i-get-libxml": "The original distribution comes from xmlsoft.org or gnome.org",
    "i-can-t-install-the-libxml-2-rpm-package": "The most generic solution is to re-fetch "
    "the latest src.rpm, and rebuild it locally with\n\n- rpm --rebuild libxml(2)-xxx.src.rpm"
    "\n\n- Nested emphasis opening an item, part of this answer",
    "so-what-is-this-funky-xmlchar-used-all-t": "It is a null terminated sequence of utf-8 "
    "characters. And only utf-8!",
}


def _page(title: str, main: str) -> str:
    """A page of the site's template: header (logos, site title, page title), left column
    of menus, main column ``main``."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<html><head><title>' + title + "</title>"
        '</head><body bgcolor="#8b7765"><table border="0" width="100%"><tr><td width="120">'
        '<a href="http://swpat.ffii.org/"><img src="epatents.png" alt="Action" /></a></td>'
        '<td><table><tr><td align="center"><h1>The XML C parser and toolkit of Gnome</h1>'
        f"<h2>{title}</h2></td></tr></table></td></tr></table>"
        '<table border="0"><tr><td bgcolor="#8b7765"><table><tr>'
        '<td valign="top" width="200" bgcolor="#8b7765"><table><tr><td><center><b>Main Menu'
        '</b></center></td></tr><tr><td bgcolor="#fffacd"><ul><li><a href="index.html">Home'
        '</a></li><li><a href="FAQ.html">FAQ</a></li></ul></td></tr></table></td>'
        '<td valign="top" bgcolor="#8b7765"><table><tr><td><table><tr><td bgcolor="#fffacd">'
        f"{main}</td></tr></table></td></tr></table></td></tr></table></td></tr></table>"
        "</body></html>"
    )


FAQ = _page(
    "FAQ",
    '<p>Table of Contents:</p><ul>\n  <li><a href="FAQ.html#License">License(s)</a></li>\n'
    '  <li><a href="FAQ.html#Installati">Installation</a></li>\n</ul>'
    '<h3><a name="License" id="License">License</a>(s)</h3><ol>\n'
    f"  <li><em>{Q_EMBED}</em>\n    <p>Yes. The MIT License allows you to keep proprietary "
    "the changes you made to libxml.</p>\n  </li>\n</ol>"
    '<h3><a name="Installati" id="Installati">Installation</a></h3><ol>\n'
    '  <li><strong><span style="background-color: #FF0000">Do Not Use\n    libxml1</span>'
    "</strong>, use libxml2<p></p></li>\n"
    "  <li><em>Where can I get libxml</em> ?\n    <p>The original distribution comes from <a "
    'href="ftp://xmlsoft.org/libxml2/">xmlsoft.org</a> or gnome.org</p>\n  </li>\n'
    "  <li><em>Is this entry answered at all?</em></li>\n"
    "  <li><em>I can't install the libxml(2) RPM package due to failed\n    dependencies</em>"
    "\n    <p>The most generic solution is to re-fetch the latest src.rpm, and rebuild it "
    "locally with</p>\n    <ul><li><code>rpm --rebuild libxml(2)-xxx.src.rpm</code></li>\n"
    "    <li><em>Nested emphasis</em> opening an item, part of this answer</li></ul>\n"
    "  </li>\n"
    "  <li><em>So what is this funky &quot;xmlChar&quot; used all the time?</em>\n"
    "    <p>It is a null terminated sequence of utf-8 characters. And only utf-8!</p>\n"
    "  </li>\n  <li>etc ...</li>\n</ol>"
    '<p></p><p><a href="bugs.html">Daniel Veillard</a></p>',
)


def test_split_libxml2_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_libxml2_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # the mark outside <em> kept, lines joined
    assert {k: a for k, _, a in qa} == ANSWERS  # slugs; the rest of each item, nested lists
    assert [k for k, _, _ in qa] == list(ANSWERS)
    for _, q, a in qa:
        assert a in page
        assert nsc.flat(q) not in nsc.flat(page)
    # the header, the menus, the list of sections and the unanswered entry leave the page;
    # the page's title, the section headings, an item with no <em>, "etc ..." and the
    # author's name stay, in no answer
    for gone in ("toolkit of Gnome", "Main Menu", "Home", "answered at all"):
        assert gone not in page
    assert page.startswith("# FAQ\n")
    assert "### License(s)" in page and "### Installation" in page
    assert page.count("License(s)") == 1 and page.count("Installation") == 1  # list gone
    assert "Do Not Use libxml1" in page and "etc ..." in page and "Daniel Veillard" in page
    assert all("Do Not Use" not in a and "etc ..." not in a and "Veillard" not in a for *_, a in qa)


def test_split_libxml2_faq_edges() -> None:
    # no template: the page read whole, nothing asked without an <em> item; a repeat -2;
    # an item whose </li> is left out ends at the next item or at its list's end
    page, none = ns.split_libxml2_faq("<html><body><h1>Notes</h1><p>Text.</p></body></html>")
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_libxml2_faq(
        "<body><ol><li><em>One?</em><p>First.</p><li><em>One?</em><p>Second.</p></ol>"
        "<p>After the list.</p></body>"
    )
    assert qa == [("one", "One?", "First."), ("one-2", "One?", "Second.")]
    assert page == "First.\n\nSecond.\n\nAfter the list.\n"
    # a page without the template's main column is read whole; with it, main column only
    assert ns.libxml2_page_markdown("<p>Plain page.</p>") == "Plain page.\n"
    site = ns.libxml2_page_markdown(_page("Thread safety", "<p>Mostly thread safe.</p>"))
    assert site.startswith("# Thread safety\n") and "Mostly thread safe." in site
    assert "Main Menu" not in site and "toolkit of Gnome" not in site


_WORD = st.sampled_from(["xml", "parser", "libxml", "node", "dtd", "xpath", "encoding"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.booleans(),  # the item's </li> written or left out
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_libxml2_faq_property(entries: list[tuple[list[str], list[str], bool]]) -> None:
    """Random entries, some unanswered, some with their ``</li>`` left out: one question per
    answered entry, in order, its slug its id, its answer its text, in the page; no
    question's word left in it."""
    items, expected = "", []
    for p, (qwords, awords, closed) in enumerate(entries, start=1):
        q = " ".join([f"entry{p}x", *qwords]) + "?"
        answer = " ".join(["Answer", *awords]) if awords else ""
        items += f"<li><em>{q}</em>" + (f"<p>{answer}</p>" if answer else "")
        items += "</li>\n" if closed else "\n"
        if answer:
            expected.append((ns._slug(q), q, answer))
    page, qa = ns.split_libxml2_faq(_page("FAQ", f"<h3>Section</h3><ol>{items}</ol>"))
    assert [(q, a) for _, q, a in qa] == [(q, a) for _, q, a in expected]
    for _, _, a in qa:
        assert a in page
    assert not re.search(r"entry\d+x", page)


# -- the set, built from a package tree shaped like Debian's libxml2-doc -------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.LIBXML2_PACKAGE, "2.9.14+dfsg-1.3~deb12u6")
    doc: Path = root / ns.LIBXML2_DOC
    (doc / "html").mkdir(parents=True)
    (doc / "tutorial").mkdir()
    (doc / "examples").mkdir()
    (doc / ns.LIBXML2_FAQ).write_text(faq, encoding="utf-8")
    (doc / "threads.html").write_text(
        _page("Thread safety", f"<p>See the FAQ, &#8216;{Q_CHAR}&#8217; Mostly safe.</p>")
    )
    (doc / "index.html").write_text(_page("libxml", "<p>Libxml2 is the XML C parser.</p>"))
    (doc / "news.html").write_text(_page("Releases", "<p>Fixed a bug.</p>" * 20_000))
    (doc / "xml.html").write_text(_page("left out", "<p>left out</p>"))
    (doc / "html" / "libxml-tree.html").write_text(
        _page("Module tree from libxml2", "<p>The tree API.</p>")
    )
    for skipped in ("index.html", "book1.html"):
        (doc / "html" / skipped).write_text(_page("left out", "<p>left out</p>"))
    (doc / "tutorial" / "ar01s02.html").write_text(
        '<html><body><div class="navheader">Prev Next</div><div class="sect1">'
        '<h2 class="title">Data Types</h2><p>A basic replacement for char.</p></div>'
        '<div class="navfooter">Prev Home Next</div></body></html>'
    )
    (doc / "libxml2-api.xml").write_text("<api>left out</api>\n")
    (doc / "examples" / "parse1.c").write_text("/* left out */\n")
    write_gz(doc.parent / "changelog.Debian.gz", "left out\n")
    (doc.parent / "copyright").write_text("left out\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the site's folder."""
    return _package(tmp_path, monkeypatch)


def test_libxml2_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.libxml2_faq_set()
    nsc.assert_package_set(
        nset,
        "libxml2-faq",
        ids=list(ANSWERS),
        files={
            "FAQ.md",
            "threads.md",
            "index.md",
            "html/libxml-tree.md",
            "tutorial/ar01s02.md",
        },
        source="FAQ.md",
        version="2.9.14+dfsg-1.3~deb12u6",
        too_long="news.html",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text and "Main Menu" not in text and "Prev" not in text
    # a page quoting a question scrubbed, its other text kept; API and tutorial pages read
    assert "Mostly safe." in nset.files["threads.md"]
    assert nset.files["html/libxml-tree.md"].startswith("# Module tree from libxml2\n")
    assert "A basic replacement for char." in nset.files["tutorial/ar01s02.md"]


def test_libxml2_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(
        "It is a null terminated sequence of utf-8 characters. And only utf-8!", "UTF-8 bytes."
    )
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.libxml2_faq_set(), Q_CHAR, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.libxml2_faq_set(), {"FAQ.html": FAQ}, ASKED, is_html=True)


def test_libxml2_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "  <li>etc ...</li>",
        "  <li><em>What about C++ ?</em>\n    <p>libxml2 is written in pure C in order to "
        "allow easy reuse on a number of platforms.</p>\n  </li>\n  <li>etc ...</li>",
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.libxml2_faq_set, lambda: (doc / ns.LIBXML2_FAQ).write_text(more, encoding="utf-8")
    )


def test_libxml2_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.LIBXML2_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.libxml2_faq_set, "FAQ.html")
