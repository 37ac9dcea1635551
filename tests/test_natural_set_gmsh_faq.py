"""The ``gmsh-faq`` natural-question set (``bench/natural_sets.py``): Gmsh's FAQ as Debian's
``gmsh-doc`` ships it (``/usr/share/doc/gmsh-doc/gmsh.html``: the reference manual as one
texi2any page, its "Appendix F Frequently asked questions" seven ``<h3>`` sections of ``<ol>``
items, each item's first line the question, the answer's paragraphs and lists under it):
each item's first line read as an ``<h4>`` heading (``gmsh_faq_headings``), then R's
texi2any reader (``texi2any_page_markdown``, ``split_texinfo_chapters``) and Django's heading
rule at level 4 (``split_heading_questions``), unchanged (``split_gmsh_faq``), beside the
manual's front matter, chapters and the compiling appendix, on a small inline package tree
of that shape (the navigation lines and menus, the table of contents, an answer holding a
``<ul>`` of its own and one opening with it, an ``<ol>`` inside an answer, a ``<pre>``
example, a question with ``<code>`` in it, an answer too short to judge, appendices left
out, the second copy of the page under ``doc/gmsh/``, demos, tutorial files, the PDF, the
changelogs and the copyright); offline, no embedding model, no test reads the real package.

What the set's numbers rest on: every top-level item of the FAQ's lists asks, its first
line the question; each answer is exactly the rest of the item up to the next question or
section; an answer's own list items ask nothing; the front matter, chapters and the
compiling appendix are the corpus, the other appendices and every non-manual file are not;
no question is left in any file; the halves are fixed.
"""

from __future__ import annotations

import html
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

VERSION = "4.8.4+ds2-3"

Q_WHAT = "What is Gmsh?"
Q_SLOW = (
    "Gmsh is very slow when I use many transformations (Translate, Rotate, Symmetry, "
    "Extrude, etc.) with the built-in CAD kernel. What’s wrong?"
)
Q_CODE = "How can I save a mesh file with a given MSH file format version?"
Q_SHORT = "How do I compute a section of a plot?"
Q_SICN = "What is the signification of SICN, Gamma and SIGE in Tools->Statistics?"
Q_CONFIG = "Where does Gmsh save its configuration files?"
ASKED = [Q_WHAT, Q_CONFIG, Q_SLOW, Q_CODE, Q_SICN]
A_WHAT = (
    "Gmsh is an automatic three-dimensional finite element mesh generator with built-in "
    "pre- and post-processing facilities."
)
A_CONFIG = (
    "Gmsh will attempt to save temporary files first in the $GMSH_HOME directory, then in "
    "$HOME, in that order."
)
A_SLOW = (
    "The default behavior of Gmsh is to check and suppress all duplicate entities. There "
    "are two solutions to this problem:\n\n"
    "-  you may save the unrolled geometry in another file (e.g. with gmsh file.geo -0);\n\n"
    "-  or you may set the Geometry.AutoCoherence option to 0."
)
A_CODE = (
    "-  In the GUI: open ‘File->Export’ and pick the version.\n\n"
    "-  In a .geo script: add the line\n\n"
    "```\nMesh.MshFileVersion = 2.2;\n\n```\n\n"  # the reader keeps the <pre>'s last newline
    "Then save as usual."
)
A_SICN = (
    "They measure the quality of the tetrahedra in a mesh:\n\n"
    "-  SICN: signed inverse condition number\n\n"
    "-  Gamma: inscribed radius / circumscribed radius\n\n"
    "See Mesh module for the others."
)
ANSWERS = {  # ids: the questions' slugs, their first 40 characters
    "what-is-gmsh": A_WHAT,
    "where-does-gmsh-save-its-configuration-f": A_CONFIG,
    "gmsh-is-very-slow-when-i-use-many-transf": A_SLOW,
    "how-can-i-save-a-mesh-file-with-a-given-": A_CODE,
    "what-is-the-signification-of-sicn-gamma-": A_SICN,
}


def _nav(this: str) -> str:
    return (
        '<div class="header">\n<p>\nNext: <a href="#x">Next node</a>, Previous: '
        f'<a href="#y">{this} before</a>, Up: <a href="#Top">Gmsh</a> &nbsp; '
        '[<a href="#SEC_Contents">Contents</a>]</p>\n</div>\n'
    )


PAGE = (
    "<!DOCTYPE html>\n<html>\n<head>\n<title>Gmsh 4.8.4</title>\n"
    '<style type="text/css">\na.summary-letter {text-decoration: none}\n</style>\n'
    '</head>\n<body lang="en">\n'
    '<h1 class="settitle" align="center">Gmsh 4.8.4 (development version)</h1>\n'
    '<div class="contents">\n<h2 class="contents-heading">Table of Contents</h2>\n'
    '<ul class="no-bullet">\n<li><a href="#Overview">1 Overview</a></li>\n'
    '<li><a href="#FAQ">Appendix F Frequently asked questions</a></li>\n</ul>\n</div>\n'
    + _nav("Top")
    + '<h2 class="unnumbered">Obtaining Gmsh</h2>\n'
    "<p>The source code and pre-compiled binaries can be downloaded from gmsh.info.</p>\n"
    + _nav("Obtaining")
    + '<span id="Overview-1"></span><h2 class="chapter">1 Overview</h2>\n'
    "<p>Gmsh is built around four modules: geometry, mesh, solver and post-processing.</p>\n"
    '<ul class="section-toc">\n<li><a href="#Geometry">Geometry: geometrical entity '
    "definition</a></li>\n</ul>\n"
    + _nav("Overview")
    + '<h3 class="section">1.1 Geometry: geometrical entity definition</h3>\n'
    "<p>Gmsh uses a boundary representation to describe geometries.</p>\n"
    + _nav("Tutorial")
    + '<h2 class="appendix">Appendix A Tutorial</h2>\n'
    "<p>leftout tutorial text: Point(1) = {0, 0, 0, lc};</p>\n"
    + _nav("Compiling")
    + '<h2 class="appendix">Appendix C Compiling the source code</h2>\n'
    "<p>Stable releases and source snapshots are available from gmsh.info. Use cmake.</p>\n"
    + _nav("FAQ")
    + '<span id="Frequently-asked-questions-1"></span>'
    '<h2 class="appendix">Appendix F Frequently asked questions</h2>\n\n'
    '<ul class="section-toc">\n<li><a href="#The-basics">The basics</a></li>\n'
    '<li><a href="#Mesh">Mesh module</a></li>\n</ul>\n<hr>\n'
    '<div class="section" id="The-basics">\n'
    + _nav("The basics")
    + '<h3 class="section">F.1 The basics</h3>\n\n<ol>\n'
    f"<li> {Q_WHAT}\n\n<p>{A_WHAT.replace(' with built', chr(10) + 'with built')}\n</p>\n"
    f"</li><li> {Q_CONFIG}\n\n<p>Gmsh will attempt to save temporary files first in the "
    "<code>$GMSH_HOME</code> directory, then in\n<code>$HOME</code>, in that order.\n</p>"
    "</li></ol>\n\n\n<hr>\n</div>\n"
    '<div class="section" id="Mesh">\n'
    + _nav("Mesh")
    + '<h3 class="section">F.5 Mesh module</h3>\n\n<ol>\n'
    "<li> Gmsh is very slow when I use many transformations (Translate, Rotate, Symmetry,\n"
    "Extrude, etc.) with the built-in CAD kernel. What&rsquo;s wrong?\n\n"
    "<p>The default behavior of Gmsh is to check and suppress all duplicate entities. "
    "There\nare two solutions to this problem:\n</p><ul>\n"
    "<li> you may save the unrolled geometry in another file (e.g. with gmsh\nfile.geo -0);\n"
    "</li><li> or you may set the <code>Geometry.AutoCoherence</code> option to 0.\n"
    "</li></ul>\n\n"
    "</li><li> How can I save a mesh file with a given <code>MSH</code> file format "
    "version?\n\n<ul>\n<li> In the GUI: open &lsquo;File-&gt;Export&rsquo; and pick the "
    "version.\n</li><li> In a <samp>.geo</samp> script: add the line\n"
    '<div class="example">\n<pre class="example">Mesh.MshFileVersion = 2.2;\n</pre></div>\n'
    "</li></ul>\n<p>Then save as usual.\n</p>\n"
    f"</li><li> {Q_SHORT}\n\n<p>Use &lsquo;Cut Plane&rsquo;.\n</p>\n"
    f"</li><li> What is the signification of SICN, Gamma and SIGE in "
    "Tools-&gt;Statistics?\n\n<p>They measure the quality of the tetrahedra in a mesh:\n"
    "</p>\n<ol>\n<li> SICN: signed inverse condition number\n</li><li> Gamma: inscribed "
    "radius / circumscribed radius\n</li></ol>\n<p>See Mesh module for the others.\n</p>"
    "</li></ol>\n\n<hr>\n</div>\n"
    + _nav("History")
    + '<h2 class="appendix">Appendix G Version history</h2>\n'
    "<p>leftout history: 4.8.4 (April 28, 2021): small bug fixes.</p>\n"
    + _nav("License")
    + '<h2 class="appendix">Appendix I License</h2>\n'
    "<p>leftout GNU General Public License text.</p>\n"
    + _nav("Index")
    + '<h2 class="unnumbered">Concept index</h2>\n'
    '<table class="index-cp"><tr><td><a href="#x">leftout index entry</a></td></tr></table>\n'
    "</body>\n</html>\n"
)
SHIPPED = {"gmsh.html": PAGE}
FILES = {  # the title page (headings alone) and the concept index dropped by R's reader
    "gmsh/00-obtaining-gmsh.md",
    "gmsh/01-1-overview.md",
    "gmsh/03-appendix-c-compiling-the-source-code.md",
    "gmsh/04-appendix-f-frequently-asked-questions.md",
}
FAQ_FILE = "gmsh/04-appendix-f-frequently-asked-questions.md"


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package as shipped: ``gmsh.html`` (and its second copy under ``doc/gmsh/`` with
    the README, credits, demos and tutorial files), the PDF, ``converters/``, ``solvers/``,
    the changelogs and the copyright."""
    root = unpacked_package(tmp_path, monkeypatch, ns.GMSH_PACKAGE, VERSION)
    doc = root / ns.GMSH_DOC
    doc.mkdir(parents=True, exist_ok=True)
    (doc / ns.GMSH_MANUAL).write_text(PAGE, encoding="utf-8")
    copy = doc / "doc/gmsh"
    (copy / "demos/boolean").mkdir(parents=True)
    (copy / "tutorial/python").mkdir(parents=True)
    (copy / "gmsh.html").write_text(PAGE.replace("Gmsh is built", "leftout copy"), "utf-8")
    (copy / "README.txt").write_text("leftout readme\n", encoding="utf-8")
    write_gz(copy / "CREDITS.txt.gz", "leftout credits\n")
    (copy / "demos/boolean/simple7.geo").write_text("// leftout demo\n", encoding="utf-8")
    (copy / "tutorial/t1.geo").write_text("// leftout tutorial\n", encoding="utf-8")
    (copy / "tutorial/python/t1.py").write_text("# leftout tutorial\n", encoding="utf-8")
    write_gz(doc / "gmsh.pdf.gz", "%PDF-1.4 leftout\n")
    for folder in ("converters/brl-cad", "solvers/c++"):
        (doc / folder).mkdir(parents=True)
        (doc / folder / "README").write_text("leftout tool\n", encoding="utf-8")
    for name in ("changelog.gz", "changelog.Debian.gz"):
        write_gz(doc / name, "leftout changes\n")
    (doc / "copyright").write_text("leftout\n", encoding="utf-8")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _package(tmp_path, monkeypatch)


def test_gmsh_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.gmsh_faq_set()
    assert nset.name == "gmsh-faq"
    # every top-level item asks, in order, its first line the question (wrapped lines
    # joined, <code> and entities read as text); the items of an answer's own lists ask
    # nothing
    assert [q.qid for q in nset.questions] == [f"gmsh-faq:{k}" for k in ANSWERS]
    assert [q.text for q in nset.questions] == ASKED
    nsc.assert_questions_out_answers_in(nset, ANSWERS)
    assert {q.source for q in nset.questions} == {FAQ_FILE}
    assert set(nset.files) == FILES
    nsc.assert_files_as_written(nset)
    nsc.assert_held_out("gmsh-faq")
    faq = nset.files[FAQ_FILE]
    # the appendix and section titles stay, in no answer; no heading of a question is left
    assert faq.startswith("## Appendix F Frequently asked questions\n\n### F.1 The basics\n")
    assert "### F.5 Mesh module" in faq and not re.search(r"(?m)^#{4,} ", faq)
    # a left-out entry's answer stays in the page, between its neighbours
    assert "Then save as usual.\n\nUse ‘Cut Plane’.\n\nThey measure" in faq
    # navigation lines, menus and the table of contents are out of every file
    corpus = " ".join(nset.files.values())
    assert "Next node" not in corpus and "Contents]" not in corpus
    assert "Table of Contents" not in corpus
    assert "Gmsh is built around four modules" in nset.files["gmsh/01-1-overview.md"]
    assert "1.1 Geometry" in nset.files["gmsh/01-1-overview.md"]
    assert "Use cmake." in nset.files["gmsh/03-appendix-c-compiling-the-source-code.md"]
    assert "gmsh.info" in nset.files["gmsh/00-obtaining-gmsh.md"]
    # the other appendices, the index, the second copy, demos, tutorial files, tools, the
    # PDF, changelogs and copyright out
    assert "leftout" not in corpus
    assert VERSION in nset.note and "appendix-a-tutorial" in nset.note
    nsc.assert_left_out(nset, Q_SHORT, len(ASKED))


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.gmsh_faq_set(), SHIPPED, [*ASKED, Q_SHORT], is_html=True)


def test_gmsh_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = PAGE.replace(
        f"</li><li> {Q_SHORT}",
        "</li><li> Does Gmsh support curved elements?\n\n<p>Yes, just choose the "
        f"appropriate order in the mesh menu.\n</p>\n</li><li> {Q_SHORT}",
    )
    assert more != PAGE
    nsc.assert_halves_survive_an_added_question(
        ns.gmsh_faq_set, lambda: (doc / ns.GMSH_MANUAL).write_text(more, encoding="utf-8")
    )


def test_gmsh_faq_set_refuses_a_package_without_the_manual(doc: Path) -> None:
    (doc / ns.GMSH_MANUAL).unlink()
    nsc.assert_refuses_without_faq(ns.gmsh_faq_set, ns.GMSH_MANUAL)


_WORD = st.sampled_from(["mesh", "Gmsh", "STEP", "3D", "Plugin(Cut)", "it's", "a", "&amp;"])


def _text(words: list[str]) -> str:
    return " ".join(words)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(  # sections: each a list of items
        st.lists(
            st.tuples(
                st.lists(_WORD, max_size=6),  # the question's words after its tag
                st.lists(st.lists(_WORD, min_size=1, max_size=5), min_size=1, max_size=3),
                st.lists(st.lists(_WORD, min_size=1, max_size=4), max_size=3),  # inner list
                st.sampled_from(["ul", "ol"]),
                st.booleans(),  # the inner list before the paragraphs
            ),
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_split_gmsh_faq_reads_list_items_property(
    sections: list[list[tuple[list[str], list[list[str]], list[list[str]], str, bool]]],
) -> None:
    """Random one-page manuals shaped as Gmsh's: a chapter, then the FAQ appendix of
    sections, each an ``<ol>`` of items (the question on the item's first line, then
    paragraphs and perhaps a ``<ul>``/``<ol>`` of the answer's own, before or after them),
    then another appendix: every top-level item asks, in order, its words the question; the
    answer is exactly the item's paragraphs and list as markdown, in the page's order; the
    inner items ask nothing; ids the slugs; no question left in the FAQ's file; the section
    titles kept; the chapter and the other appendix their own files, untouched."""
    body = [
        '<h2 class="chapter">1 Overview</h2>\n<p>Gmsh overview text.</p>\n',
        '<h2 class="appendix">Appendix F Frequently asked questions</h2>\n',
    ]
    expected: list[tuple[str, str]] = []
    n = 0
    for s, items in enumerate(sections, start=1):
        body.append(f'<h3 class="section">F.{s} Section{s}</h3>\n\n<ol>\n')
        for k, (words, paras, inner, kind, first) in enumerate(items):
            words = [f"entry{n}x", *words]
            n += 1
            ps = "".join(f"<p>{_text(p)}\n</p>\n" for p in paras)
            lst = (
                f"<{kind}>\n" + "".join(f"<li> {_text(i)}\n</li>" for i in inner) + f"</{kind}>\n"
                if inner
                else ""
            )
            item = ("</li><li> " if k else "<li> ") + _text(words) + "\n\n"
            body.append(item + (lst + ps if first else ps + lst))
            md_ps = [html.unescape(_text(p)) for p in paras]
            md_lst = ["-  " + html.unescape(_text(i)) for i in inner]
            answer = "\n\n".join(md_lst + md_ps if first else md_ps + md_lst)
            expected.append((ns._norm(html.unescape(_text(words))), answer))
        body.append("</li></ol>\n\n")
    body.append('<h2 class="appendix">Appendix G Version history</h2>\n<p>History.</p>\n')
    page = "<html><body>\n" + "".join(body) + "</body></html>\n"
    parts, faq_rel, qa = ns.split_gmsh_faq(page)
    assert [(q, a) for _, q, a in qa] == expected
    assert [k for k, _, _ in qa] == [ns._slug(q) for q, _ in expected]
    assert faq_rel == "01-appendix-f-frequently-asked-questions.md"
    faq = parts[faq_rel]
    assert not re.search(r"entry\d+x", faq) and not re.search(r"(?m)^#{4,} ", faq)
    assert all(f"### F.{s} Section{s}" in faq for s in range(1, len(sections) + 1))
    nsc.assert_page_keeps_answers(qa, faq)
    assert parts["00-1-overview.md"] == "## 1 Overview\n\nGmsh overview text.\n"
    assert parts["02-appendix-g-version-history.md"].endswith("History.\n")
