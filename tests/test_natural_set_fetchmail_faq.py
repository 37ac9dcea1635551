"""The ``fetchmail-faq`` natural-question set's parser (``bench/natural_sets.py``) on small
inline pages shaped like fetchmail's ``fetchmail-FAQ.html`` (offline, no embedding model).

What the set's numbers rest on: every question's text leaves the corpus (the heading and the
two contents lists that repeat it), the answer is exactly the text under its question (sub-
headings included, the next question excluded), withdrawn (struck-out) questions ask nothing,
and the page's navigation (header/footer tables, signature) is not indexed as text.
"""

from __future__ import annotations

import gzip
import re
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written

FAQ_HTML = """<?xml version="1.0" encoding="ISO-8859-1"?>
<html xmlns="http://www.w3.org/1999/xhtml">
<head><title>The Widget FAQ</title></head>
<body>
<table width="100%" summary="Canned page footer"><tr>
<td>Back to <a href="index.html">Widget Home Page</a></td><td>$Date$</td></tr></table>
<hr/>
<h1 id="FAQ">Frequently Asked Questions About Widgets</h1>
<p>Read <a href="#G2">G2</a> before reporting a bug.</p>

<h1 id="Contents">Contents</h1>
<a href="#C_G">G. General problems</a><br/>

<h1 id="Contentdetail">Detailed Contents</h1>
<h2 id="C_G">General problems</h2>
<a href="#G1">G1. What is a widget and why should I care?</a><br/>
<a href="#G2">G2. How do I report a crash in the widget daemon?</a><br/>
<a href="#G3"><strike>G3. Why does the old widgetrc parser reject numbers?</strike></a><br/>

<hr/>
<h1 id="G">General problems</h1>
<h2><a id="G1" name="G1">G1. What is a widget and why
should I care?</a></h2>
<p>A widget turns remote mailboxes into local mail, forwarding each message to the
local SMTP listener.</p>

<h2><a id="G2" name="G2">G2. How do I report a crash in the widget daemon?</a></h2>
<p>Run it with <code>-v -v</code> and send the transcript.</p>
<h3>If it dies at start-up</h3>
<pre>
widget --nodetach -v
</pre>
<div class="note"><p>Stray markup.</p></div></div>
<p>Attach the core file too.</p>

<h2><a id="G3" name="G3"><strike>G3. Why does the old widgetrc parser reject
numbers?</strike></a></h2>
<p>The answer that used to be here no longer applies.</p>

<h1>Other problems</h1>
<h2><a name="O1">O1. Does the daemon reread its configuration file every poll cycle?</a></h2>
<p>Yes: it checks the file's modification time before each poll.</p>
<h2><a name="O2">O2. Empty question with no answer at all?</a></h2>
<hr/>
<table width="100%" summary="Canned page footer"><tr>
<td>Back to <a href="index.html">Widget Home Page</a></td></tr></table>
<address>A. Maintainer &lt;am@example.org&gt;</address>
</body>
</html>
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


# -- HTML -> markdown --------------------------------------------------------------------


def test_page_to_markdown_keeps_the_body_and_drops_navigation() -> None:
    md = ns.page_to_markdown(FAQ_HTML)
    assert "# Frequently Asked Questions About Widgets" in md
    assert "## G1. What is a widget and why should I care?" in md
    assert "### If it dies at start-up" in md
    assert re.search(r"```\n+widget --nodetach -v\n+```", md)  # <pre> is fenced
    # the header/footer tables, <head> title and <address> signature are navigation
    assert "Back to" not in md and "$Date$" not in md
    assert "The Widget FAQ" not in md and "Maintainer" not in md
    # a stray </div> does not end the page: the text after it is kept
    assert "Attach the core file too." in md
    # withdrawn entries keep their strike-through
    assert "## ~~G3. Why does the old widgetrc parser reject numbers?~~" in md


def test_page_without_body_tag_is_converted_whole() -> None:
    md = ns.page_to_markdown("<h1>Title</h1><p>one <s>two</s> three</p>")
    assert md == "# Title\n\none ~~two~~ three\n"


# -- splitting the FAQ -------------------------------------------------------------------


def test_split_coded_faq_questions_answers_and_files() -> None:
    files, qa = ns.split_coded_faq(ns.page_to_markdown(FAQ_HTML))
    assert list(files) == [
        "00-frequently-asked-questions-about-widgets.md",
        "01-general-problems.md",
        "02-other-problems.md",
    ]
    by_code = {code: (q, a) for code, q, a in qa}
    assert list(by_code) == ["G1", "G2", "O1"]  # G3 struck out, O2 has no answer
    assert by_code["G1"][0] == "What is a widget and why should I care?"
    assert by_code["G1"][1].startswith("A widget turns remote mailboxes")
    g2 = by_code["G2"][1]
    # the answer runs through its own ### sub-heading, code and stray markup ...
    assert "### If it dies at start-up" in g2 and "widget --nodetach -v" in g2
    assert g2.rstrip().endswith("Attach the core file too.")
    # ... and stops at the next question (a withdrawn one included)
    assert "no longer applies" not in g2
    assert by_code["O1"][1] == "Yes: it checks the file's modification time before each poll."
    for _, _, a in qa:
        assert any(a in text for text in files.values())


def test_split_coded_faq_deletes_every_question_and_the_contents() -> None:
    files, _ = ns.split_coded_faq(ns.page_to_markdown(FAQ_HTML))
    corpus = _corpus(files)
    for q in (
        "What is a widget and why should I care?",
        "How do I report a crash in the widget daemon?",
        "Why does the old widgetrc parser reject numbers?",
        "Does the daemon reread its configuration file every poll cycle?",
    ):
        assert q.lower() not in corpus
    assert "detailed contents" not in corpus  # the two contents lists are dropped whole
    assert "g. general problems" not in corpus
    # a withdrawn question's answer stays in the tree the user has
    assert "the answer that used to be here no longer applies." in corpus
    # the FAQ's own section titles and preface stay
    assert files["01-general-problems.md"].startswith("# General problems\n")
    assert "read g2 before reporting a bug." in corpus


def test_split_coded_faq_reads_no_heading_inside_fenced_code() -> None:
    md = "# S\n\n## A1. Real question here?\n\n```\n## B2. not a heading\n# nor this\n```\ntail\n"
    files, qa = ns.split_coded_faq(md)
    assert [(c, q) for c, q, _ in qa] == [("A1", "Real question here?")]
    assert "## B2. not a heading" in qa[0][2] and qa[0][2].endswith("tail")
    assert list(files) == ["00-s.md"]


def test_split_coded_faq_keeps_uncoded_h2_as_a_heading_that_ends_an_answer() -> None:
    md = "# S\n\n## A1. Question one?\n\nanswer one\n\n## A group\n\ngroup text\n"
    files, qa = ns.split_coded_faq(md)
    assert qa == [("A1", "Question one?", "answer one")]
    assert "## A group\n\ngroup text" in files["00-s.md"]


def test_split_coded_faq_text_before_first_section_opens_the_first_file() -> None:
    files, qa = ns.split_coded_faq("preface text\n\n## Z9. Where is it?\n\nhere\n")
    assert qa == [("Z9", "Where is it?", "here")]
    assert files == {"00-faq.md": "preface text\n\nhere\n"}


_LINE = st.one_of(
    st.text(alphabet="abc xyz?.`~#\n", max_size=30),
    st.builds(lambda t: "# " + t, st.text(alphabet="abc Contents", min_size=1, max_size=20)),
    st.builds(
        lambda c, n, t, s: f"## {'~~' if s else ''}{c}{n}. {t}{'~~' if s else ''}",
        st.sampled_from("GXR"),
        st.integers(0, 30),
        st.text(alphabet="abcd ?", min_size=1, max_size=20),
        st.booleans(),
    ),
    st.builds(lambda t: "### " + t, st.text(alphabet="abc", max_size=10)),
    st.just("```"),
    st.just("## Detailed Contents"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=40))
@example(["## G0. ?", "?\n", "\n?"])  # (an answer with a run of blank lines, squeezed)
def test_split_coded_faq_never_leaves_a_question_heading_in_the_corpus(
    lines: list[str],
) -> None:
    md = "\n".join(lines)
    files, qa = ns.split_coded_faq(md)
    fence = False
    for text in files.values():
        for line in text.split("\n"):
            if line.startswith("```"):
                fence = not fence
            assert fence or not re.match(r"^## (~~)?[A-Z]\d+\.\s+\S", line), line
    for code, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"[A-Z]\d+", code)
        assert any(a in text for text in files.values())
    assert len(qa) <= sum(1 for line in lines if line.startswith("## "))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="<>/ab h1234p=\"'!-&;strikeaddresstable\n", max_size=200))
def test_page_to_markdown_never_crashes(page: str) -> None:
    md = ns.page_to_markdown(page)
    assert md.endswith("\n")


# -- the set, built from a package tree shaped like Debian's fetchmail --------------------


def test_fetchmail_faq_set_from_a_package_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = unpacked_package(tmp_path, monkeypatch, ns.FETCHMAIL_PACKAGE, "6.4.37-1")
    doc = root / ns.FETCHMAIL_DOC
    doc.mkdir(parents=True)
    (doc / ns.FETCHMAIL_FAQ).write_text(FAQ_HTML, encoding="latin-1")
    (doc / "fetchmail-features.html").write_text(
        "<html><body><table summary='Canned page header'><tr><td>Back</td></tr></table>"
        "<h1>Feature List</h1><p>See the FAQ: How do I report a crash in the widget "
        "daemon? It is answered there.</p></body></html>",
        encoding="latin-1",
    )
    with gzip.open(doc / "README.SSL.gz", "wt", encoding="latin-1") as fh:
        fh.write("Widgets and SSL\n\nUse sslcertck.\n")
    nset = ns.fetchmail_faq_set()
    assert [q.qid for q in nset.questions] == [
        "fetchmail-faq:G1",
        "fetchmail-faq:G2",
        "fetchmail-faq:O1",
    ]
    assert {q.source for q in nset.questions} == {
        "01-general-problems.md",
        "02-other-problems.md",
    }
    assert set(nset.files) == {
        "00-frequently-asked-questions-about-widgets.md",
        "01-general-problems.md",
        "02-other-problems.md",
        "fetchmail-features.md",
        "README.SSL",
    }
    # the linked page quoted a question verbatim: scrubbed, so the corpus never holds it
    assert "how do i report a crash" not in _corpus(nset.files)
    assert "it is answered there." in _corpus(nset.files)
    assert "Back" not in nset.files["fetchmail-features.md"]
    # written to disk as the retrievers read it
    assert_files_as_written(nset)
    assert "6.4.37-1" in nset.note and "1 struck-out" in nset.note
    assert "todo.html" not in nset.note  # only pages that exist are listed


def test_check_removed_refuses_a_question_left_in_the_corpus() -> None:
    files, qa = ns.split_coded_faq("# S\n\n## A1. Where does the widget log go?\n\nto syslog\n")
    q = ns.NaturalQuestion("x:A1", qa[0][1], ((qa[0][2], 1.0),))
    ns._check_removed(files, [q])  # removed: fine
    with pytest.raises(ValueError, match="left in the corpus"):
        ns._check_removed({**files, "b.md": "where does the widget\nlog go?"}, [q])
