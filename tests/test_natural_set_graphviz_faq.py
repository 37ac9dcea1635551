"""The ``graphviz-faq`` natural-question set (``bench/natural_sets.py``), its reading of the
Graphviz FAQ page and the question-leak check (``bench/check_question_leaks.py``) on a small
inline page shaped as Debian's ``graphviz-doc`` ships it
(``/usr/share/doc/graphviz/html/FAQ.html``: hand-written HTML 4, a title and a note, ``<h2>``
groups of entries, each a bold line after an anchor: numbered ``<B>Q1</A>. ...</B>``,
lettered, bare ``<B>Q. ...</B>`` with the ``</A>`` after it, one run on into its example
with the anchor's ``</A>`` inside the bold, one stated, one with ``<tt>`` inside, one
repeating another's anchor, one anchor written ``name = Q11``; answers of paragraphs,
``<pre>`` graphs, lists with ``<b>`` items, a table; an entry with no text; the last entry
repeated after ``</HTML>``) beside the reference and build pages and the folder's notes (a
page quoting a question, an over-long page, the index pages, the schema, a PDF, an example
graph and ``AUTHORS`` to be left out), in a package tree laid out as ``graphviz-doc``
unpacks (marker present, nothing downloaded); offline, no embedding model, no test reads the
real package.

What the set's numbers rest on: no question's text is left in any file (the entries, the
copy after ``</HTML>``, a page quoting one); each answer is exactly the text under its bold
line up to the next one or the next group heading; ids are the FAQ's anchors, so an added
entry keeps the halves; an answer too short to judge leaves the set but not the corpus's
scrubbing.
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

Q_ATTRS = "Where can I see a list of all the attributes that control dot or neato?"
Q_LARGER = "I'm trying to make a layout larger. How?"
Q_PDF = "How can I generate graph layouts in PDF?"
Q_CLUSTERS = "Clusters are hard to see."
Q_FONTS = "How do I get font and color changes in record labels or other labels?"
Q_CUSTOM = "How can I get custom shapes or images in my graph?"
Q_GIF = (
    "Why don't my custom GIF images appear? What is the meaning of Warning: No loadimage "
    'plugin for "gif:cairo"?'
)
Q_CGI = (
    "I've installed Debian Graphviz and it works just fine on the command line, but when I "
    'execute a CGI script, no output is generated. For example, the code system("dot -Tpng '
    '/tmp/tree.gv"); produces no file.'
)
Q_EMPTY = "Is this entry answered at all?"
Q_PLUGINS = "What do all these plugin libraries do?"
ASKED = (Q_ATTRS, Q_LARGER, Q_PDF, Q_CLUSTERS, Q_FONTS, Q_CUSTOM, Q_GIF, Q_CGI, Q_PLUGINS)

PLUGINS = """<A name=Q42 HREF=#Q42><B>Q41</A>. What do all these plugin libraries do?</B>
<p>
<ul>
\t<li><b>lasi</b> - Adds support for UTF8 characters in PostScript output:
\t<table><tr><th>-Tps:core</th><td>no</td></tr></table>
\t<li><b>gs</b> - Provides support for usershapes in PostScript.
</ul>


</BODY>
</HTML>
"""
FAQ = f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<HTML><HEAD><TITLE>Graphviz FAQ 2008-06-06</TITLE></HEAD><BODY>
<H1>Graphviz FAQ 2009-09-10</H1>
<p>
<b>Note</b>:
This is not a tutorial — see the user guides.

<h2>General</h2>

<A name=Q1 HREF=#Q1>
<B>Q1</A>. Where can I see a list of all the attributes that control dot or neato?</B>

</A>
<P>
See <A HREF="info/attrs.html">
Graph Attributes</A> and the command line.
<p>
<A name=Q3 HREF=#Q3>
<B>Q3</A>. I'm trying to make a layout larger. How?</B>

<p>
Adjust parameters such as <tt>fontsize, nodesep</tt> and <tt>ranksep</tt>.
For example,
<pre>
           digraph G {{
                ranksep = 1.5;
                a -&gt; b -&gt; c;
           }}
</pre>
<P>
<A name=Q4a>
<B>Q. How can I generate graph layouts in PDF?</B>
</A>
<P>
Use the <tt>-Tpdf</tt> command line option of the cairo drivers.
<h2>Clusters</h2>
<A name=Q6 HREF=#Q6>
<B>Q6</A>. Clusters are hard to see.</B>

<P>
Set bgcolor=grey (or some other color) in the cluster.
<p>
<A name=Q7 HREF=#Q7>
<B>Q7</A>. Is this entry answered at all?</B>
<H2>Output features</H2>
<A name = Q11>
<B>Q. How do I get font and color changes in record labels or other labels?</B>
</A>
<P>
This is not possible in record shapes; use HTML-like labels.
<A name=Q16 HREF=#Q16>
<B>Q16</A>. How can I get custom shapes or images in my graph?</B>
<P>
Please see the Shape HowTo for some approaches.
<A name=Q16 HREF=#Q16b>
<B>Q16b</A>. Why don't my custom GIF images appear? What is the meaning of
<tt>Warning: No loadimage plugin for "gif:cairo"</tt>?</B>
<P>
Prior to graphviz-2.26 the cairo renderers could not load GIF images.
<A name=Q28>
<B>Q. I've installed Debian Graphviz and it works just fine on the command line,
but when I execute a CGI script, no output is generated.</A>
For example, the code
<tt>
system("dot -Tpng /tmp/tree.gv");
</tt>
produces no file.</B>
<P>
Provide a HOME directory in the Apache userid's environment.
<P>
{PLUGINS}{PLUGINS.split("</BODY>")[0]}</BODY></HTML>
"""
ANSWERS = {
    "Q1": "See  Graph Attributes and the command line.",
    "Q3": "Adjust parameters such as fontsize, nodesep and ranksep. For example,\n\n"
    "```\n\n           digraph G {\n                ranksep = 1.5;\n"
    "                a -> b -> c;\n           }\n\n```",
    "Q4a": "Use the -Tpdf command line option of the cairo drivers.",
    "Q6": "Set bgcolor=grey (or some other color) in the cluster.",
    "Q11": "This is not possible in record shapes; use HTML-like labels.",
    "Q16": "Please see the Shape HowTo for some approaches.",
    "Q16-2": "Prior to graphviz-2.26 the cairo renderers could not load GIF images.",
    "Q28": "Provide a HOME directory in the Apache userid's environment.",
    "Q42": "- lasi - Adds support for UTF8 characters in PostScript output:",
}


def test_split_graphviz_faq_questions_answers_and_ids() -> None:
    page, qa = ns.split_graphviz_faq(FAQ)
    assert [q for _, q, _ in qa] == list(ASKED)  # tags dropped, the run-on question whole
    assert [k for k, _, _ in qa] == list(ANSWERS)  # the anchors; a repeated one gets -2
    answers = {k: a for k, _, a in qa}
    assert {k: a for k, a in answers.items() if k != "Q42"} == {
        k: a for k, a in ANSWERS.items() if k != "Q42"
    }
    assert answers["Q42"].startswith(ANSWERS["Q42"]) and "| -Tps:core | no" in answers["Q42"]
    assert "usershapes in PostScript" in answers["Q42"]  # a <b> item does not end the answer
    nsc.assert_page_keeps_answers(qa, page)
    # the group headings and the title stay in the page, in no answer; the entry with no
    # text asks nothing and leaves the page all the same; the copy after </HTML> is dropped
    assert "Clusters" in page and "Output features" in page and "Graphviz FAQ 2009" in page
    assert all("Clusters" not in a and "Output features" not in a for *_, a in qa)
    assert "answered at all" not in page
    assert page.count("Adds support for UTF8") == 1


def test_split_graphviz_faq_edges() -> None:
    # a bold line not opening with "Q<n>." is text, so is "Q" with no dot; a question with no
    # anchor takes "Q" and its number; one with no </b> asks nothing
    _, qa = ns.split_graphviz_faq(
        "<b>Note</b>: intro.\n<B>Q9</A>. I can only get 11x17 output.</B>\n<p>Printer setup."
        "\n<b>Quick</b> tip.\n<b>Q2 not a question</b>\n<b>Q3. Unclosed?\n<p>Still answer 9."
    )
    assert qa == [
        (
            "Q9",
            "I can only get 11x17 output.",
            "Printer setup. Quick tip. Q2 not a question Q3. Unclosed?\nStill answer 9.",
        )
    ]
    page, none = ns.split_graphviz_faq("<h1>Graphviz</h1><p>No entry here.</p>")
    assert none == [] and page == "# Graphviz\n\nNo entry here.\n"


_WORD = st.sampled_from(["dot", "neato", "cluster", "edge", "label", "layout", "node"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(_WORD, min_size=1, max_size=10),  # the question's words
            st.sampled_from(["", "a", "b"]),  # a letter after the number
            st.booleans(),  # bare "Q." (numbered from the anchor) or "Q<n></A>."
            st.lists(_WORD, min_size=0, max_size=16),  # the answer's words (may be none)
            st.booleans(),  # a group heading after the entry
        ),
        max_size=8,
    )
)
def test_split_graphviz_faq_property(
    entries: list[tuple[list[str], str, bool, list[str], bool]],
) -> None:
    """Random entries, numbered or bare, some unanswered, some before a group heading: one
    question per answered entry, in order, its anchor its id, its answer its text, in the
    page; no question's word left in it."""
    parts = ["<H1>Graphviz FAQ</H1>"]
    expected: list[tuple[str, str, str]] = []
    for k, (qwords, letter, bare, awords, group) in enumerate(entries):
        anchor, question = f"Q{k}{letter}", " ".join([f"entry{k}x", *qwords]) + "?"
        label = "Q." if bare else f"Q{k}{letter}</A>."
        parts.append(f"<A name={anchor} HREF=#{anchor}>\n<B>{label} {question}</B>\n")
        if awords:
            answer = " ".join(["Answer", *awords])
            parts.append(f"<P>\n{answer}\n")
            expected.append((anchor, question, answer))
        if group:
            parts.append(f"<h2>Group {k}</h2>\n")
    page, qa = ns.split_graphviz_faq("".join(parts) + "</BODY></HTML>")
    nsc.assert_random_split(page, qa, expected)


# -- the set, built from a package tree shaped like Debian's graphviz-doc -----------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faq: str = FAQ) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.GRAPHVIZ_PACKAGE, "2.42.2-7+deb12u1")
    doc: Path = root / ns.GRAPHVIZ_DOC
    (doc / "html/info").mkdir(parents=True)
    (doc / ns.GRAPHVIZ_FAQ).write_text(faq, encoding="utf-8")
    info = doc / "html/info"
    (info / "lang.html").write_text(
        f"<h1>The DOT Language</h1><p>A graph — {Q_CLUSTERS} Use subgraph cluster_0.</p>",
        encoding="utf-8",
    )
    (info / "attrs.html").write_text("<h1>Attributes</h1>" + "<p>ranksep</p>\n" * 20000)
    (info / "shapes.html").write_text("<h1>Node Shapes</h1><p>box, ellipse</p>")
    (doc / "html/build.html").write_text("<h1>Building</h1><p>./configure</p>")
    for skipped in ("html/index.html", "html/info/index.html"):
        (doc / skipped).write_text("<a href=FAQ.html>FAQ</a>")
    write_gz(doc / "html/schema/attributes.xml.gz", "<attributes/>")
    write_gz(doc / "pdf/dotguide.pdf.gz", "%PDF-1.4")
    (doc / "examples/graphs").mkdir(parents=True)
    (doc / "examples/graphs/clust.gv").write_text("digraph G { a -> b }\n")
    (doc / "AUTHORS").write_text("left out\n")
    write_gz(doc / "Dot.ref.gz", "Quick Reference Guide for GraphViz\n\n-Tformat\n")
    write_gz(doc / "fontfaq.txt.gz", "Graphviz and fonts.\n===================\n")
    return doc


@pytest.fixture
def doc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The package tree as shipped (the FAQ :data:`FAQ`), its documentation folder."""
    return _package(tmp_path, monkeypatch)


def test_graphviz_faq_set_from_a_package_tree(doc: Path) -> None:
    nset = ns.graphviz_faq_set()
    nsc.assert_package_set(
        nset,
        "graphviz-faq",
        ids=list(ANSWERS),
        files={"FAQ.md", "info/lang.md", "info/shapes.md", "build.md", "Dot.ref", "fontfaq.txt"},
        source="FAQ.md",
        version="2.42.2-7+deb12u1",
        too_long="html/info/attrs.html",
    )
    nsc.assert_questions_out_answers_in(nset)
    # a page quoting a question: scrubbed, its other text kept; UTF-8 read as such
    assert "tutorial — see" in nset.files["FAQ.md"] and "A graph — " in nset.files["info/lang.md"]
    assert "cluster_0" in nset.files["info/lang.md"]


def test_graphviz_faq_set_leaves_out_a_short_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    short = FAQ.replace("Set bgcolor=grey (or some other color) in the cluster.", "Use bgcolor.")
    _package(tmp_path, monkeypatch, short)
    nsc.assert_left_out(ns.graphviz_faq_set(), Q_CLUSTERS, len(ASKED) - 1)


def test_no_question_text_is_left_in_any_file(doc: Path) -> None:
    nsc.assert_leak_checked(ns.graphviz_faq_set(), {"FAQ.html": FAQ}, ASKED, is_html=True)


def test_graphviz_faq_set_halves_are_fixed_and_disjoint(doc: Path) -> None:
    more = FAQ.replace(
        "<A name=Q7 HREF=#Q7>",
        "<A name=Q8 HREF=#Q8>\n<B>Q8</A>. How can I get high quality (antialiased) output?</B>"
        "\n<P>\nMake the layout in Postscript, then convert it with ghostscript.\n"
        "<A name=Q7 HREF=#Q7>",
    )
    nsc.assert_halves_survive_an_added_question(
        ns.graphviz_faq_set, lambda: (doc / ns.GRAPHVIZ_FAQ).write_text(more, encoding="utf-8")
    )


def test_graphviz_faq_set_refuses_a_package_without_the_faq(doc: Path) -> None:
    (doc / ns.GRAPHVIZ_FAQ).unlink()
    nsc.assert_refuses_without_faq(ns.graphviz_faq_set, "html/FAQ.html")
