"""The ``graphicsmagick-faq`` natural-question set (``bench/natural_sets.py``), its reading of
GraphicsMagick's docutils-built FAQ page and the question-leak check
(``bench/check_question_leaks.py``) on a small inline FAQ shaped as Debian's
``graphicsmagick`` ships it (``/usr/share/doc/graphicsmagick/www/FAQ.html``: the site's
banner with its search form, the navigation menu, the ``<h1 class="title">``, the reST
comments, a ``<div class="contents topic">`` box of in-page links to every question, then
one ``<div class="section" id="...">`` per entry whose ``<h1>`` is the question wrapped in a
back-link to the contents (asked; stated; quoting a message with ``&quot;``; with ``<em>`` or
``<cite>`` inside), answers of paragraphs, ``literal-block`` commands and lists, an
unanswered entry, the rule and the site's copyright footer) beside the other pages of
``www/`` (the README page quoting a question, a utility's page, ``gm.html`` over the page
limit, the changelogs, news and licence pages and ``wand/`` to be left out) and Debian's
note, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question's text is left in any file (the headings, the
contents box, a page quoting one); each answer is exactly the text under its heading up to
the next entry or the footer; ids are the FAQ's section ids, so an added entry keeps the
halves; an answer too short to judge leaves the set but not the corpus's scrubbing.
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

Q_DIFFER = "How does GraphicsMagick differ from ImageMagick?"
Q_MANY = "How can I process many files at once?"
Q_DELEGATE = 'I received the following message, "?????? delegation failed ...". What does it mean?'
Q_PAGE = "How do I change the default PostScript page size?"
Q_TRIMMED = "When I display a PostScript image, white borders are trimmed."
Q_IDENTIFY = "What does identify report?"
ASKED = (Q_DIFFER, Q_MANY, Q_DELEGATE, Q_PAGE, Q_TRIMMED, Q_IDENTIFY)
IDS = (
    "how-does-graphicsmagick-differ-from-imagemagick",
    "how-can-i-process-many-files-at-once",
    "i-received-the-following-message-delegation-failed-what-does-it-mean",
    "how-do-i-change-the-default-postscript-page-size",
    "when-i-display-a-postscript-image-white-borders-are-trimmed",
    "what-does-identify-report",
)
A_DIFFER = (
    "GraphicsMagick is originally based on (forked from) ImageMagick 5.5.2 in November 2002.\n\n"
    "GraphicsMagick is usually faster than ImageMagick."
)
A_MANY = (
    "Use the batch utility, or mogrify with a wildcard:\n\n"
    "```\ngm mogrify -resize 50% *.jpg\n```\n\n"
    "- mogrify replaces the files in place.\n\n- batch reads commands from a file."
)
A_DELEGATE = "GraphicsMagick uses external programs (delegates) to read some formats."
A_PAGE = "The default dimensions of a PostScript page is 612x792."
A_TRIMMED = (
    "GraphicsMagick automatically trims any PostScript image as defined by its bounding box."
)
A_IDENTIFY = (
    "By default identify reports only the most basic properties:\n\n"
    "```\n% gm identify seaworld.jpg\n```\n\n"
    "but with -verbose it can report on a large number of properties."
)
ANSWERS = dict(zip(IDS, (A_DIFFER, A_MANY, A_DELEGATE, A_PAGE, A_TRIMMED, A_IDENTIFY), strict=True))

HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n    <meta charset="utf-8">\n'
    "\t<title>GraphicsMagick FAQ</title>\n"
    '\t<link media="screen" href="docutils-articles.css" type="text/css" rel="stylesheet">\n'
    "</head>\n\n<body>\n\n"
    '<div class="banner">\n<img src="images/gm-107x76.png" alt="GraphicMagick logo" />\n'
    '<span class="title">GraphicsMagick</span>\n'
    '<form action="http://www.google.com/search">\n'
    '<span class="nowrap"><input type="text" name="q" size="25" maxlength="255" /></span>\n'
    "</form>\n</div>\n\n\n"
    '<div class="navmenu">\n<ul>\n  <li><a href="index.html">Home</a></li>\n'
    '  <li><a href="utilities.html">Utilities</a></li>\n</ul>\n</div>\n\n'
)
FOOTER = (
    '\n\n<hr class="docutils">\n<div class="document">\n'
    '    <p><a href="Copyright.html">Copyright</a> © GraphicsMagick Group 2002 - 2023'
    "<!--SPONSOR_LOGO--></p>\n</div>\n\n</div>\n</body>\n</html>\n"
)


def _entry(sid: str, n: int, heading: str, answer: str) -> str:
    return (
        f'<div class="section" id="{sid}">\n'
        f'<h1><a class="toc-backref" href="#id{n}">{heading}</a></h1>\n{answer}\n</div>\n'
    )


def _contents(items: list[tuple[str, str]]) -> str:
    links = "".join(
        f'<li><p><a class="reference internal" href="#{sid}" id="id{n}">{text}</a></p></li>\n'
        for n, (sid, text) in enumerate(items, start=1)
    )
    return (
        '<div class="contents topic" id="faq-contents">\n'
        f'<p class="topic-title">FAQ Contents</p>\n<ul class="simple">\n{links}</ul>\n</div>\n'
    )


_HEADINGS = (
    Q_DIFFER,
    Q_MANY,
    "I received the following message, &quot;?????? delegation failed ...&quot;. "
    "What does it mean?",
    "How do I change the default <em>PostScript</em> page size?",
    "When I display a <em>PostScript</em> image, white\nborders are trimmed.",
    "What does <cite>identify</cite> report?",
)
FAQ = (
    HEAD
    + '<div class="document" id="graphicsmagick-faq">\n'
    + '<h1 class="title">GraphicsMagick FAQ</h1>\n'
    + "<!-- -*- mode: rst -*- -->\n<!-- This text is in reStucturedText format. -->\n"
    + _contents(
        [*zip(IDS, _HEADINGS, strict=True), ("is-this-answered", "Is this answered at all?")]
    )
    + _entry(
        IDS[0],
        1,
        _HEADINGS[0],
        "<p><em>GraphicsMagick</em> is originally based on (forked from) ImageMagick\n"
        "5.5.2 in November 2002.</p>\n"
        "<p>GraphicsMagick is usually faster than ImageMagick.</p>",
    )
    + _entry(
        IDS[1],
        2,
        _HEADINGS[1],
        "<p>Use the batch utility, or mogrify with a wildcard:</p>\n"
        '<pre class="literal-block">gm mogrify -resize 50% *.jpg</pre>\n'
        '<ul class="simple">\n<li><p>mogrify replaces the files in place.</p></li>\n'
        "<li><p>batch reads commands from a file.</p></li>\n</ul>",
    )
    + _entry(
        IDS[2],
        3,
        _HEADINGS[2],
        "<p>GraphicsMagick uses external programs (delegates) to read some formats.</p>",
    )
    + _entry(IDS[3], 4, _HEADINGS[3], f"<p>{A_PAGE}</p>")
    + _entry("is-this-answered", 5, "Is this answered at all?", "")
    + _entry(
        IDS[4],
        6,
        _HEADINGS[4],
        "<p>GraphicsMagick automatically trims any <em>PostScript</em> image as defined\n"
        "by its bounding box.</p>",
    )
    + _entry(
        IDS[5],
        7,
        _HEADINGS[5],
        "<p>By default <cite>identify</cite> reports only the most basic properties:</p>\n"
        '<pre class="literal-block">% gm identify seaworld.jpg</pre>\n'
        "<p>but with -verbose it can report on a large number of properties.</p>",
    )
    + "</div>"
    + FOOTER
)


def test_split_gm_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_gm_faq(FAQ)
    # every section's <h1> a question, its tags and the back-link gone, entities read and
    # spaces folded; ids the section ids; the answer the text under it up to the next one
    nsc.assert_split_answers(page, qa, ASKED, ANSWERS)
    # the banner, the menu, the contents box and the unanswered entry leave the page; the
    # title stays, and the footer (in no answer)
    assert "FAQ Contents" not in page and "Utilities" not in page and "logo" not in page
    assert "answered at all" not in page
    assert page.startswith("# GraphicsMagick FAQ\n\n")
    assert page.rstrip().endswith("Copyright © GraphicsMagick Group 2002 - 2023")
    assert all("Copyright" not in a for *_, a in qa)


def test_split_gm_faq_edges() -> None:
    # no entry: the page converted, nothing asked; a repeated id gets -2; an <h1> with no
    # section opening right before it is text (the page's title); a section whose heading
    # is an <h2> is text; with no footer the last answer runs to the page's end
    page, none = ns.split_gm_faq("<h1>Notes</h1><p>Text.</p>")
    assert none == [] and page == "# Notes\n\nText.\n"
    page, qa = ns.split_gm_faq(
        '<h1 class="title">Title</h1>\n'
        + _entry("same", 1, "Same?", "<p>First.</p>")
        + _entry("same", 2, "Again?", "<p>Second.</p>")
        + '<div class="section" id="sub">\n<h2>Not a question</h2>\n<p>Plain.</p>\n</div>\n'
        + '<div class="note">\n<h1>Loose heading</h1>\n<p>Plain two.</p>\n</div>\n'
    )
    assert qa == [
        ("same", "Same?", "First."),
        (
            "same-2",
            "Again?",
            "Second.\n\n## Not a question\n\nPlain.\n\n# Loose heading\n\nPlain two.",
        ),
    ]
    assert page == f"# Title\n\nFirst.\n\n{qa[1][2]}\n"


_WORD = st.sampled_from(["image", "gif", "resize", "matte", "jpeg", "convert", "png", "page"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.booleans(),  # the heading's words in <em>
        ),
        min_size=1,
        max_size=8,
    )
)
def test_split_gm_faq_property(entries: list[tuple[list[str], list[str], bool]]) -> None:
    """Random entries, some unanswered, some headings with inline tags, between a contents
    box and the footer: one question per answered entry, in order, its section id its id,
    the text under it its answer, in the page; no question's word left in it."""
    items, body, expected = [], "", []
    for n, (qwords, awords, em) in enumerate(entries, start=1):
        sid = f"entry{n}x"
        question = " ".join([f"entry{n}x", *qwords]) + "?"
        heading = f"entry{n}x <em>{' '.join(qwords)}</em>?" if em else question
        answer = " ".join(["Answer", *awords]) if awords else ""
        items.append((sid, heading))
        body += _entry(sid, n, heading, f"<p>{answer}</p>" if answer else "")
        if answer:
            expected.append((sid, question, answer))
    page, qa = ns.split_gm_faq(
        HEAD + '<h1 class="title">Random</h1>\n' + _contents(items) + body + FOOTER
    )
    nsc.assert_random_split(page, qa, expected)
    assert page.rstrip().endswith("2002 - 2023")


# -- the set, built from a package tree shaped like Debian's graphicsmagick ---------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GM_PACKAGE, "1.4+really1.3.40-4+deb12u1")
    www: Path = root / ns.GM_WWW

    def page(rel: str, title: str, body: str) -> None:
        (www / rel).parent.mkdir(parents=True, exist_ok=True)
        (www / rel).write_text(
            f'<html><head><title>{title}</title></head><body>{HEAD}<div class="document">'
            f'<h1 class="title">{title}</h1>{body}</div>{FOOTER}',
            encoding="utf-8",
        )

    www.mkdir(parents=True)
    (www / ns.GM_FAQ).write_text(faq, encoding="utf-8")
    page("README.html", "GraphicsMagick README", f"<p>See the FAQ: {Q_MANY} Use batch.</p>")
    page("convert.html", "GraphicsMagick Convert", "<p>Convert between image formats.</p>")
    page("gm.html", "gm", "<p>Every utility again.</p>" * 8_000)
    for gone in ("ChangeLog-2003.html", "Changelog.html", "Changes.html", "NEWS.html"):
        page(gone, "left out", "<p>left out</p>")
    page("Copyright.html", "left out", "<p>left out</p>")
    page("wand/magick_wand.html", "left out", "<p>left out</p>")
    (www / "magick.css").write_text("left out\n")
    doc = www.parent
    (doc / "README.Debian").write_text("The utilities are run as gm subcommands.\n")
    (doc / "copyright").write_text("left out\n")
    return www


@pytest.fixture
def www(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ page :data:`FAQ`), its ``www/`` folder."""
    return _package(tmp_path, monkeypatch)


def test_graphicsmagick_faq_set_from_a_package_tree(www: Path) -> None:
    nset = ns.graphicsmagick_faq_set()
    nsc.assert_package_set(
        nset,
        "graphicsmagick-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "README.md", "convert.md", "README.Debian"},
        source="FAQ.md",
        version="1.4+really1.3.40-4+deb12u1",
        too_long="gm.html",
        answers=ANSWERS,
    )
    text = " ".join(nset.files.values())
    assert "left out" not in text
    # the banner and the menu out of every page; a page quoting a question scrubbed, its
    # other text kept; Debian's note as text
    assert "logo" not in text and "Utilities" not in text
    assert "Use batch." in nset.files["README.md"]
    assert "gm subcommands" in nset.files["README.Debian"]


def test_graphicsmagick_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace(f"<p>{A_PAGE}</p>", "<p>It is 612x792.</p>")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.graphicsmagick_faq_set(), Q_PAGE, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(www: Path) -> None:
    nsc.assert_leak_checked(ns.graphicsmagick_faq_set(), {"FAQ.html": FAQ}, ASKED, is_html=True)


def test_graphicsmagick_faq_set_halves_are_fixed_and_disjoint(www: Path) -> None:
    more = FAQ.replace(
        FOOTER,
        _entry(
            "how-do-i-extract-a-single-image",
            9,
            "How do I extract a single image from a multi-image file?",
            "<p>Use the subimage syntax after the file name, as in file.gif[2].</p>",
        )
        + FOOTER,
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.graphicsmagick_faq_set,
        lambda: (www / ns.GM_FAQ).write_text(more, encoding="utf-8"),
    )


def test_graphicsmagick_faq_set_refuses_a_package_without_the_faq(www: Path) -> None:
    (www / ns.GM_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.graphicsmagick_faq_set, ns.GM_FAQ)
