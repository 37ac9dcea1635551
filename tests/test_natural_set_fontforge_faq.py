"""The ``fontforge-faq`` natural-question set (``bench/natural_sets.py``), its reading of
FontForge's Sphinx-built FAQ page and the question-leak check (``bench/check_question_leaks.py``)
on a small inline ``faq.html`` shaped as Debian's ``fontforge-doc`` ships it (the manual's
sidebar; the main column: an ``<h1>`` with its pilcrow, an epigraph and a line of
introduction, group sections that hold only an ``<h2>`` and the list of links to the group's
questions, an external one among them, a rule; then ``<dl id="faq-...">`` entries whose
``<dt><strong>`` is the question, holding ``&amp;``, an ``<em>`` and a menu selection; an
epigraph carrying the next entry's label; an answer with a nested ``<dl>`` sub-topic, one
opening with its own epigraph, one continued after a rule in a blockquote, one quoting
another question as a link; a stated entry; an entry as a bold paragraph over a blockquote;
the closing epigraphs) beside the manual's pages it links to (one of them over the page
limit, one linking back into an FAQ entry, one quoting a question) and pages it does not
link to, in a package tree laid out as the package unpacks (marker present, nothing
downloaded); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: no question or contents line is left in any file; each
answer is exactly the text after its question up to the next question or closing epigraph,
the blockquotes set after a rule included; nested sub-topics stay answer text; the corpus is
the FAQ and the pages it links to, one hop, under the page and total limits; ids are the
FAQ's labels, so an entry added keeps the halves; an answer too short to judge leaves the set
but not the corpus's scrubbing.
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

Q_EDITOR = "Why a font editor, aren\u2019t there enough fonts already?"
Q_CPP = "Why isn\u2019t FontForge written in C++ (or Why C++ is not my favorite language)?"
Q_SPACING = "How do I set the line spacing on a font?"
Q_INSTALL = "How do I install the fonts once I\u2019ve made them?"
Q_MINIMUM = "Minimum requirements"
Q_BITMAP = "How do I convert from a bitmap format to an outline format?"
Q_COPY = "Why doesn\u2019t Edit \u2023 Copy copy glyph names as well as glyph info?"
Q_MEMORY = "My system keeps crashing because FontForge keeps running out of memory. What can I do?"
Q_TALK = "Why don\u2019t I talk at conferences?"
Q_AMP = "Using FontForge & TeX together"

PERMALINK = nsc.SPHINX_PERMALINK
FAQ = f"""<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>Frequently Asked Questions &#8212; FontForge 20230101 documentation</title>
    <link rel="next" title="Appendices" href="appendices.html" />
  </head><body>
    <div class="document">
      <div class="documentwrapper">
        <div class="bodywrapper">
          <div class="body" role="main">
  <section id="frequently-asked-questions">
<h1>Frequently Asked Questions{PERMALINK.format("frequently-asked-questions")}</h1>
<blockquote class="epigraph">
<div><div class="line-block">
<div class="line"><strong>Sir Toby:</strong> Thy most exquisite reason, dear knight?</div>
</div>
<p class="attribution">\u2014Twelfth Night \u2013 Shakespeare</p>
</div></blockquote>
<p>(or many of the questions I\u2019ve been asked so far)</p>
<section id="general-questions-about-fontforge">
<h2>General questions about FontForge{PERMALINK.format("general-questions-about-fontforge")}</h2>
<ul class="simple">
<li><p><a class="reference internal" href="#faq-font-editor"><span class="std std-ref">Why a font \
editor, aren\u2019t there enough fonts already? contentsline</span></a></p>
<ul>
<li><p><a class="reference internal" href="#faq-c-plus-plus"><span class="std std-ref">Why \
isn\u2019t FontForge written in C++ contentsline</span></a></p></li>
</ul>
</li>
<li><p><a class="reference external" href="https://github.com/fontforge/fontforge/issues">Where \
can I find a list of known bugs? contentsline</a></p></li>
</ul>
</section>
<section id="questions-about-font-formats">
<h2>Questions about <a class="reference internal" href="appendices/bibliography.html"><span \
class="doc">Font Formats</span></a>{PERMALINK.format("questions-about-font-formats")}</h2>
<ul class="simple">
<li><p><a class="reference internal" href="#faq-talk"><span class="std std-ref">Why \
don\u2019t I talk contentsline</span></a></p></li>
</ul>
</section>
<section id="random-questions">
<h2>Random questions{PERMALINK.format("random-questions")}</h2>
<ul class="simple">
<li><p><a class="reference internal" href="#faq-memory"><span class="std std-ref">My system \
keeps crashing contentsline</span></a></p></li>
</ul>
<hr class="docutils" />
<blockquote class="epigraph" id="faq-font-editor">
<div><div class="line-block">
<div class="line">But Eeyore was saying to himself,</div>
<div class="line">\u201cThis writing business.\u201d</div>
</div>
<p class="attribution">\u2014Winnie-the-Pooh \u2013 A.A. Milne</p>
</div></blockquote>
<dl>
<dt><strong>Why a font editor, aren\u2019t there enough fonts
already?</strong></dt><dd><p>Well\u2026 no. A font is a work of art and represents the
individual genius of its creator.</p>
<ol class="arabic simple">
<li><p>There are lots of latin fonts.</p></li>
<li><p>Playing with fonts is fun.</p></li>
</ol>
</dd>
</dl>
<dl id="faq-c-plus-plus">
<dt><strong>Why isn\u2019t FontForge written in C++ (or <em>Why C++ is not my favorite
language</em>)?</strong></dt><dd><blockquote class="epigraph">
<div><p>Why not?</p>
<p class="attribution">\u2014The Phantom Tollbooth \u2013 Juster</p>
</div></blockquote>
<p>Because C is the language I know best and the widget set is written in it.</p>
</dd>
</dl>
<dl id="faq-linespace">
<dt><strong>How do I set the line spacing on a font?</strong></dt><dd><p>Set the typographic
ascent and descent in <a class="reference internal" \
href="ui/dialogs/fontinfo.html#fontinfo-os2"><span
class="std std-ref">Element &gt; Font Info &gt; OS/2</span></a> and the line gap beside them.</p>
</dd>
</dl>
<dl id="faq-font-install">
<dt><strong>How do I install the fonts once I\u2019ve made them?</strong></dt><dd><dl>
<dt>Unix &amp; X</dt><dd><p>Copy the font to ~/.fonts and run fc-cache.</p>
</dd>
<dt>Windows</dt><dd><p>Drag the font onto the Fonts control panel.</p>
</dd>
</dl>
</dd>
</dl>
<dl id="faq-minimum">
<dt><strong>Minimum requirements</strong></dt><dd><p>FontForge runs on any unix with X11 and
about 20 megabytes of memory; see the <a class="reference internal" \
href="index.html">overview</a>.</p>
</dd>
</dl>
<dl class="simple" id="faq-bitmap-outline">
<dt><strong>How do I convert from a bitmap format to an outline format?</strong></dt><dd><p>Make
sure potrace or autotrace is installed on your system first.</p>
</dd>
</dl>
<hr class="docutils" />
<blockquote>
<div><ul>
<li><p>Create a new font and use <a class="reference internal" \
href="ui/menus/filemenu.html#filemenu-import"><span class="std std-ref">File-&gt;Import\
</span></a></p></li>
<li><p><span class="menuselection">Element \u2023 Autotrace</span></p></li>
</ul>
</div></blockquote>
<dl id="faq-no-copy-names">
<dt><strong>Why doesn\u2019t <span class="menuselection">Edit \u2023 Copy</span> copy glyph names
as well as glyph info?</strong></dt><dd><p>Because names must be unique in a font, so the copy
would clash with the glyph already there.</p>
</dd>
</dl>
<dl id="faq-excessive-memory">
<dt><strong>Using FontForge &amp; TeX together</strong></dt><dd><p>Generate a type1 font with an
afm and a tfm file beside it.</p>
<p>See also: <a class="reference internal" href="#faq-memory"><span class="std std-ref">My system
keeps crashing because FontForge keeps running out of memory. What can I do?</span></a></p>
</dd>
</dl>
<dl id="faq-memory">
<dt><strong>My system keeps crashing because FontForge keeps running out of memory. What can I
do?</strong></dt><dd><p>Well it rather depends on what system you are working on, and how much
swap it has.</p>
</dd>
</dl>
<p id="faq-talk"><strong>Why don\u2019t I talk at conferences?</strong></p>
<blockquote>
<div><p>Because I have nothing to say, and I would rather write code.</p>
</div></blockquote>
<hr class="docutils" />
<blockquote class="epigraph">
<div><p>It\u2019s all in Plato, all in Plato: bless me, what do they teach them?</p>
<p class="attribution">\u2014<em>The Last Battle</em> \u2013 C.S. Lewis</p>
</div></blockquote>
</section>
</section>
          </div>
        </div>
      </div>
      <div class="sphinxsidebar" role="navigation" aria-label="main navigation">
        <div class="sphinxsidebarwrapper">
<h3>Navigation</h3>
<ul class="current">
<li class="toctree-l1"><a class="reference internal" href="tutorial.html">Tutorial</a></li>
<li class="toctree-l2"><a href="#random-questions">Random questions sidebarline</a></li>
</ul>
        </div>
      </div>
    </div>
  </body>
</html>
"""
A_EDITOR = (
    "Well\u2026 no. A font is a work of art and represents the individual genius of its "
    "creator.\n\n- There are lots of latin fonts.\n\n- Playing with fonts is fun."
)
A_CPP = (
    "Why not?\n\n\u2014The Phantom Tollbooth \u2013 Juster\n\nBecause C is the language I "
    "know best and the widget set is written in it."
)
A_SPACING = (
    "Set the typographic ascent and descent in Element > Font Info > OS/2 and the line gap "
    "beside them."
)
A_INSTALL = (
    "Unix & X\n\nCopy the font to ~/.fonts and run fc-cache.\n\nWindows\n\n"
    "Drag the font onto the Fonts control panel."
)
A_MINIMUM = (
    "FontForge runs on any unix with X11 and about 20 megabytes of memory; see the overview."
)
A_BITMAP = (
    "Make sure potrace or autotrace is installed on your system first.\n\n"
    "- Create a new font and use File->Import\n\n- Element \u2023 Autotrace"
)
A_COPY = (
    "Because names must be unique in a font, so the copy would clash with the glyph already there."
)
A_AMP = (
    "Generate a type1 font with an afm and a tfm file beside it.\n\nSee also: My system keeps "
    "crashing because FontForge keeps running out of memory. What can I do?"
)
A_MEMORY = "Well it rather depends on what system you are working on, and how much swap it has."
A_TALK = "Because I have nothing to say, and I would rather write code."
ASKED = (
    Q_EDITOR,
    Q_CPP,
    Q_SPACING,
    Q_INSTALL,
    Q_MINIMUM,
    Q_BITMAP,
    Q_COPY,
    Q_AMP,
    Q_MEMORY,
    Q_TALK,
)
ANSWERS = {
    "faq-font-editor": A_EDITOR,
    "faq-c-plus-plus": A_CPP,
    "faq-linespace": A_SPACING,
    "faq-font-install": A_INSTALL,
    "faq-minimum": A_MINIMUM,
    "faq-bitmap-outline": A_BITMAP,
    "faq-no-copy-names": A_COPY,
    "faq-excessive-memory": A_AMP,
    "faq-memory": A_MEMORY,
    "faq-talk": A_TALK,
}
# the scrubbed corpus: "See also:" loses the question it quoted, in the answer too
SET_ANSWERS = {**ANSWERS, "faq-excessive-memory": A_AMP.replace(Q_MEMORY, "")}


def test_split_fontforge_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_fontforge_faq(FAQ)
    # every top-level <dt> and the bold paragraph asked, in order, whatever its form; the
    # question the term's text (wrapped lines joined, <em> and the menu span read, &amp;
    # read); the answer the text after it up to the next question or a top-level epigraph,
    # the blockquote after a rule included; nested sub-topics stay answer text; the id the
    # <dl>'s (or paragraph's) label, else the epigraph's just before it
    assert [q for _, q, _ in qa] == list(ASKED)
    assert [k for k, _, _ in qa] == list(ANSWERS) and dict((k, a) for k, _, a in qa) == ANSWERS
    # each answer in the page and no question left in it but in the cross-reference
    # quoting one ("See also: <a>My system keeps crashing ...</a>"), answer text here: the
    # set's scrub takes it out (test_fontforge_faq_set_from_a_package_tree)
    for _, q, a in qa:
        assert a in page
        assert nsc.flat(page).count(nsc.flat(q)) == (q == Q_MEMORY)
    # the contents lists leave the page (the external link's line too); the group titles,
    # the title, the introduction and the epigraphs stay, the closing one in no answer; the
    # sidebar is not read
    assert "contentsline" not in page and "sidebarline" not in page and "Tutorial" not in page
    for title in ("General questions about FontForge", "Questions about Font Formats"):
        assert page.count(title) == 1
    assert "# Frequently Asked Questions" in page and "\u00b6" not in page
    assert "(or many of the questions I\u2019ve been asked so far)" in page
    assert "But Eeyore was saying" in page and page.rstrip().endswith("C.S. Lewis")
    for _, _, a in qa:
        assert "Eeyore" not in a and "Plato" not in a and "Frequently" not in a


def test_split_fontforge_faq_edges() -> None:
    # no main column: the page read whole; no entry: the page as markdown, nothing asked
    assert ns.split_fontforge_faq("<p>No entries.</p>") == ("No entries.\n", [])
    # no group title: nothing is taken as contents, a list before the entries stays
    page, qa = ns.split_fontforge_faq(
        '<ul><li><a href="#a">Kept list.</a></li></ul>'
        '<dl id="a"><dt>Q?</dt><dd>An answer.</dd></dl>'
    )
    assert qa == [("a", "Q?", "An answer.")] and "Kept list." in page
    # the contents end at the first rule after the first group title: a list after it stays
    page, qa = ns.split_fontforge_faq(
        '<h2>Group</h2><ul><li><a href="#a">Contentsline.</a></li></ul><hr />'
        '<ul><li>Kept item.</li></ul><dl id="a"><dt>Q?</dt><dd>An answer.</dd></dl>'
    )
    assert qa == [("a", "Q?", "An answer.")]
    assert "Kept item." in page and "Contentsline." not in page and "## Group" in page
    # an entry with no label takes the question's slug, a repeated label -2; a term with no
    # answer asks nothing and stays; a bold paragraph inside an answer is answer text; a
    # paragraph with more than bold text is not a question
    page, qa = ns.split_fontforge_faq(
        "<dl><dt>Same words?</dt><dd><p><strong>Inside.</strong></p></dd></dl>"
        '<dl id="dup"><dt>One?</dt><dd>1 1.</dd></dl><dl id="dup"><dt>Two?</dt><dd>2 2.</dd></dl>'
        '<dl><dt>Unanswered?</dt><dd></dd></dl><dl id="z"><dt>Last?</dt><dd>Last one.</dd></dl>'
        "<p><strong>Bold</strong> and plain words.</p>"
    )
    assert qa == [
        ("same-words", "Same words?", "Inside."),
        ("dup", "One?", "1 1."),
        ("dup-2", "Two?", "2 2."),
        ("z", "Last?", "Last one.\n\nBold and plain words."),
    ]
    assert "Unanswered?" in page
    # an unclosed term is text and does not swallow the next entry; a heading ends an
    # answer and stays in the page in none
    page, qa = ns.split_fontforge_faq(
        "<dl><dt>Broken<dd>x</dd></dl><dl><dt>Fine?</dt><dd>Yes it is.</dd></dl>"
        "<h2>After</h2><p>Under it.</p>"
    )
    assert qa == [("fine", "Fine?", "Yes it is.")]
    assert "## After" in page and "Under it." in page and "Broken" in page
    # nor does it run on to a nested sub-topic's term: not a question, its text kept
    page, qa = ns.split_fontforge_faq(
        "<dl><dt>Broken<dd><p>Its text.</p><dl><dt>Sub</dt><dd>Sub text.</dd></dl></dd></dl>"
    )
    assert qa == [] and "Broken" in page and "Sub text." in page
    # a <dt> in a blockquote (not a top-level <dl>) is not a question
    assert (
        ns.split_fontforge_faq("<blockquote><dl><dt>Q?</dt><dd>A.</dd></dl></blockquote>")[1] == []
    )


_WORD = st.sampled_from(["glyph", "kern", "hint", "spline", "encoding", "bitmap", "ttf"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["dl", "p", "epigraph"]),  # the head's form, or its label's place
            st.lists(_WORD, min_size=1, max_size=8),  # the question's words
            st.integers(min_value=1, max_value=3),  # lines the question is wrapped over
            st.lists(_WORD, min_size=0, max_size=10),  # the answer's words (none: unanswered)
            st.booleans(),  # a nested sub-topic in the answer
            st.booleans(),  # the answer continued after a rule
        ),
        min_size=1,
        max_size=7,
    ),
    st.booleans(),  # the contents lists before the entries
)
def test_split_fontforge_faq_property(
    entries: list[tuple[str, list[str], int, list[str], bool, bool]], contents: bool
) -> None:
    """Random entries (a ``<dl>`` with its label, a ``<dl>`` labelled by the epigraph
    before it, a bold paragraph over a blockquote), questions wrapped over one to three
    lines, some unanswered, some with a nested sub-topic or continued after a rule, with or
    without the contents lists: one question per answered entry, in order, its label the id
    (repeats ``-2``), the answer the text up to the next question in the page; no asked
    question and no contents line left in it; unanswered entries kept; the closing epigraph
    in no answer."""
    text = '<div class="body" role="main"><h1>FAQ</h1>\n<p>Intro.</p>\n'
    if contents:
        text += "<section><h2>Group</h2>\n<ul>\n"
        for n, (_, words, *_rest) in enumerate(entries):
            text += f'<li><a href="#faq-{n}">contentsline{n} {" ".join(words)}</a></li>\n'
        text += "</ul>\n</section>\n"
    text += "<section><hr />\n"
    expected = []
    seen: dict[str, int] = {}
    for n, (form, qwords, wrap, awords, nested, ruled) in enumerate(entries):
        label = f"faq-{n % 3}"
        words = [f"entry{n}x", *qwords]
        lines = [" ".join(words[i::wrap]) for i in range(wrap) if words[i::wrap]]
        question = "\n".join(lines)
        answer_html = f"<p>{' '.join(['Answer', *awords])}.</p>" if awords else ""
        answer_md = f"{' '.join(['Answer', *awords])}." if awords else ""
        if awords and nested:
            answer_html += "<dl><dt>Sub topic</dt><dd><p>Sub text.</p></dd></dl>"
            answer_md += "\n\nSub topic\n\nSub text."
        if form == "p":
            text += f'<p id="{label}"><strong>{question}</strong></p>\n'
            text += f"<blockquote><div>{answer_html}</div></blockquote>\n"
        else:
            if form == "epigraph":
                text += f'<blockquote class="epigraph" id="{label}"><p>Quote{n}.</p></blockquote>\n'
            own = f' id="{label}"' if form == "dl" else ""
            text += (
                f"<dl{own}>\n<dt><strong>{question}</strong></dt><dd>{answer_html}</dd>\n</dl>\n"
            )
        if awords and ruled:
            text += "<hr />\n<blockquote><div><p>More text.</p></div></blockquote>\n"
            answer_md += "\n\nMore text."
        if awords:
            seen[label] = seen.get(label, 0) + 1
            key = label if seen[label] == 1 else f"{label}-{seen[label]}"
            expected.append((key, " ".join(lines), answer_md))
    text += '<hr />\n<blockquote class="epigraph"><p>Closing words.</p></blockquote>\n'
    text += "</section></div>"
    page, qa = ns.split_fontforge_faq(text)
    unanswered = [n for n, e in enumerate(entries) if not e[3]]
    for n in unanswered:
        assert f"entry{n}x" in page
    if not unanswered:
        nsc.assert_random_split(page, qa, expected)
    assert qa == expected
    for _, _, a in qa:
        assert a in page and "Closing words" not in a and "contentsline" not in a
        assert "Quote" not in a and "Intro." not in a
    for n, e in enumerate(entries):
        if e[3]:
            assert f"entry{n}x" not in page
        if e[0] == "epigraph":
            assert f"Quote{n}." in page
    assert "contentsline" not in page and page.rstrip().endswith("Closing words.")
    assert "Intro." in page and (not contents or page.count("## Group") == 1)


# -- the set, built from a package tree shaped like Debian's fontforge-doc -------------------


def _page(title: str, body: str) -> str:
    return (
        '<html><body><div class="body" role="main"><section>'
        f"<h1>{title}</h1>\n{body}\n</section></div>"
        '<div class="sphinxsidebar"><p>sidebar words</p></div></body></html>\n'
    )


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.FONTFORGE_PACKAGE, "1:20230101~dfsg-1.1")
    doc: Path = root / ns.FONTFORGE_DOC
    (doc / "ui/dialogs").mkdir(parents=True)
    (doc / "ui/menus").mkdir(parents=True)
    (doc / "appendices").mkdir(parents=True)
    (doc / "old/ja").mkdir(parents=True)
    (doc / ns.FONTFORGE_FAQ).write_text(faq)
    (doc / "ui/dialogs/fontinfo.html").write_text(
        _page(
            "Font Info",
            "<p>The OS/2 pane sets the typographic ascent.</p>\n"
            '<p><a class="reference internal" href="../../faq.html#faq-linespace"><span>See the '
            "FAQ</span></a> for a discussion on line spacing.</p>\n"
            f"<p>People ask: {Q_SPACING} The answer is the OS/2 pane.</p>",
        )
    )
    (doc / "index.html").write_text(_page("FontForge Documentation", "<p>A font editor.</p>"))
    (doc / "appendices/bibliography.html").write_text(
        _page("Bibliography", "<p>The TrueType reference manual.</p>")
    )
    (doc / "ui/menus/filemenu.html").write_text(
        _page("The File Menu", "<p>Import reads a bitmap font. " + "Words. " * 25_000 + "</p>")
    )
    (doc / "tutorial.html").write_text(_page("Tutorial", "<p>left out</p>"))
    (doc / "genindex.html").write_text(_page("Index", "<p>left out</p>"))
    (doc / "old/ja/faq.html").write_text(_page("FAQ", "<p>left out</p>"))
    (tmp_path / "changelog").write_text("left out\n")
    return doc


@pytest.fixture
def doc_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), the documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_fontforge_linked_pages_one_hop(doc_dir: Path) -> None:
    # the pages the main column links to, in the order of the first link, fragments
    # dropped; the sidebar's links, external and in-page links and pages not shipped out
    (doc_dir / ns.FONTFORGE_FAQ).write_text(
        FAQ.replace("</section>\n</section>", '<a href="ui/missing.html">x</a></section></section>')
    )
    faq = (doc_dir / ns.FONTFORGE_FAQ).read_text()
    assert ns.fontforge_linked_pages(faq, doc_dir) == [
        "appendices/bibliography.html",
        "ui/dialogs/fontinfo.html",
        "index.html",
        "ui/menus/filemenu.html",
    ]


def test_fontforge_faq_set_from_a_package_tree(doc_dir: Path) -> None:
    nset = ns.fontforge_faq_set()
    nsc.assert_package_set(
        nset,
        "fontforge-faq",
        ids=list(ANSWERS),
        files={"faq.md", "appendices/bibliography.md", "ui/dialogs/fontinfo.md", "index.md"},
        source="faq.md",
        version="1:20230101~dfsg-1.1",
        too_long="ui/menus/filemenu.html",
        answers=SET_ANSWERS,
    )
    assert "left out" not in " ".join(nset.files.values())
    # the linked pages' main columns only; the paragraph linking into an FAQ entry
    # dropped (fish_page_markdown), the sentence quoting a question scrubbed
    fontinfo = nset.files["ui/dialogs/fontinfo.md"]
    assert "The OS/2 pane sets the typographic ascent." in fontinfo
    assert "The answer is the OS/2 pane." in fontinfo and Q_SPACING not in fontinfo
    assert "discussion on line spacing" not in fontinfo and "sidebar" not in fontinfo
    assert "A font editor." in nset.files["index.md"]
    assert "over 600000 chars together: none" in nset.note
    assert nset.left_out == ()


def test_fontforge_faq_set_caps_the_linked_total(
    doc_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a page that would take the linked pages' total over the cap stays out and is named; a
    # later, shorter one still joins
    (doc_dir / "appendices/bibliography.html").write_text(
        _page("Bibliography", "<p>" + "Reference. " * 300 + "</p>")
    )
    monkeypatch.setattr(ns, "FONTFORGE_MAX_LINKED_CHARS", 1_000)
    nset = ns.fontforge_faq_set()
    assert "appendices/bibliography.md" not in nset.files
    assert {"ui/dialogs/fontinfo.md", "index.md"} <= set(nset.files)
    assert "over 1000 chars together: appendices/bibliography.md" in nset.note


def test_fontforge_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace("Because names must be unique in a font, so the copy\nwould clash", "No")
    short = short.replace(" with the glyph already there.</p>", "</p>")
    assert short != FAQ
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.fontforge_faq_set(), Q_COPY, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc_dir: Path) -> None:
    # the FAQ as a browser shows it (tags out, entities read, lines folded): the check
    # finds every question there, so it could fail
    shipped = {"faq.txt": ns.xboard_heading_text(FAQ.replace("<", " <"))}
    nsc.assert_leak_checked(ns.fontforge_faq_set(), shipped, ASKED)


def test_fontforge_faq_set_halves_are_fixed_and_disjoint(doc_dir: Path) -> None:
    more = FAQ.replace(
        '<p id="faq-talk">',
        '<dl id="faq-tex"><dt><strong>Why doesn\u2019t TeX work with my fonts?</strong></dt>'
        "<dd><p>TeX needs a tfm file and an entry in a map file for each font.</p></dd></dl>\n"
        '<p id="faq-talk">',
    )
    assert more != FAQ
    nsc.assert_halves_survive_an_added_question(
        ns.fontforge_faq_set, lambda: (doc_dir / ns.FONTFORGE_FAQ).write_text(more)
    )


def test_fontforge_faq_set_refuses_a_package_without_the_faq(doc_dir: Path) -> None:
    (doc_dir / ns.FONTFORGE_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.fontforge_faq_set, ns.FONTFORGE_FAQ)
