"""The ``r-faq`` natural-question set's parser (``bench/natural_sets.py``) on small inline
pages shaped like texi2any's one-page manuals (Debian ``r-doc-html``: ``R-FAQ.html`` and R's
manuals; offline, no embedding model).

What the set's numbers rest on: the navigation lines and per-node menus (which repeat every
question's title) leave the page, every numbered section of a question chapter leaves the
corpus with the answer exactly the text under it (the next section or chapter excluded, its
own sub-sections inside it), the first chapter's sections stay as headings, a fenced code
comment (``## ...`` in R code) is never a heading, indices and a title page of headings alone
are dropped, and each chapter becomes its own file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import natural_sets as ns
from debian_package_double import unpacked_package
from natural_set_checks import assert_files_as_written


def _nav(next_title: str) -> str:
    return (
        '<div class="header">\n<p>\nNext: <a href="#x" accesskey="n" rel="next">'
        f'{next_title}</a>, Up: <a href="#Top">W FAQ</a> &nbsp; '
        '[<a href="#SEC_Contents" rel="contents">Contents</a>]</p>\n</div>\n'
    )


FAQ_HTML = f"""<!DOCTYPE html>
<html>
<head><title>W FAQ</title><meta name="Generator" content="texi2any"></head>
<body lang="en">
<h1 class="settitle">W FAQ</h1>
<h2>Frequently Asked Questions on W</h2>
<h3>Version 2022-09-08</h3>
<h2 class="contents-heading">Table of Contents</h2>
<div class="contents">
<ul class="no-bullet">
  <li><a href="#Intro">1 Introduction</a></li>
  <li><a href="#Basics">2 W Basics</a>
  <ul class="no-bullet">
    <li><a href="#q1">2.1 Where can the W sources be obtained?</a></li>
  </ul></li>
</ul>
</div>
<div class="chapter" id="Intro">
{_nav("W Basics")}<h2 class="chapter">1 Introduction</h2>
<ul class="section-toc">
<li><a href="#Legalese">Legalese</a></li>
</ul>
<div class="section" id="Legalese">
{_nav("W Basics")}<h3 class="section">1.1 Legalese</h3>
<p>This document is free software.</p>
</div></div>
<div class="chapter" id="Basics">
{_nav("Where can the W sources be obtained?")}<h2 class="chapter">2 W Basics</h2>
<ul class="section-toc">
<li><a href="#q1">Where can the W sources be obtained?</a></li>
<li><a href="#q2">How can W be installed on my machine?</a></li>
</ul>
<div class="section" id="q1">
{_nav("How can W be installed on my machine?")}<h3 class="section">2.1 Where can the W
sources be obtained?</h3>
<p>From the archive network; see the installation manual.</p>
</div>
<div class="section" id="q2">
{_nav("How can W be installed (Unix-like)")}<h3 class="section">2.2 How can W be installed
on my machine?</h3>
<p>It depends on the platform.</p>
<div class="subsection" id="q2u">
{_nav("W Miscellanea")}<h4 class="subsection">2.2.1 How can W be installed (Unix-like)</h4>
<p>Run make install.</p>
</div></div></div>
<div class="chapter" id="Misc">
{_nav("Acknowledgments")}<h2 class="chapter">3 W Miscellanea</h2>
<div class="section" id="q3">
<h3 class="section">3.1 How can I create rotated axis labels?</h3>
<p>Use text() with srt:</p>
<pre class="example">## Increase the bottom margin
par(mar = c(7, 4, 4, 2))
### a third-level comment
</pre>
<p>Then plot.</p>
</div></div>
<div class="chapter" id="Ack">
<h2 class="chapter">4 Acknowledgments</h2>
<p>Thanks to the list.</p>
</div>
</body></html>
"""

MANUAL_HTML = f"""<html><body>
<h1 class="top">An Introduction to W</h1>
<p>This is an introduction to W. Where can the W sources be obtained? See the FAQ.</p>
<div class="chapter" id="Intro">
{_nav("Installing")}<h2 class="chapter">1 Introduction and preliminaries</h2>
<p>W is an environment.</p>
<h3 class="section">1.1 The W environment</h3>
<p>An integrated suite.</p>
</div>
<h2 class="appendix">Appendix A A sample session</h2>
<p>Start W and type commands.</p>
<h2 class="unnumbered">Concept index</h2>
<table class="index-cp"><tr><td><a href="#Intro">environment</a></td></tr></table>
</body></html>
"""


def _corpus(files: dict[str, str]) -> str:
    return " ".join(" ".join(files.values()).split()).lower()


def test_texi2any_page_markdown_drops_navigation_menus_and_contents() -> None:
    md = ns.texi2any_page_markdown(FAQ_HTML)
    assert "Next:" not in md and "[Contents]" not in md and "Up:" not in md
    assert "Table of Contents" not in md
    # the titles are left only in the headings themselves, once each
    assert md.count("Where can the W sources be obtained?") == 1
    assert md.count("How can W be installed on my machine?") == 1
    assert "## 2 W Basics" in md and "#### 2.2.1 How can W be installed (Unix-like)" in md
    assert "From the archive network; see the installation manual." in md


def test_split_texinfo_chapters_questions_answers_and_files() -> None:
    md = ns._sub_sections_as_bold(ns.texi2any_page_markdown(FAQ_HTML), 3)
    files, qa = ns.split_texinfo_chapters(md, first_question_chapter=2)
    # the title page (headings alone) is dropped; each chapter is a file, in order
    assert list(files) == [
        "00-1-introduction.md",
        "01-2-w-basics.md",
        "02-3-w-miscellanea.md",
        "03-4-acknowledgments.md",
    ]
    assert [(n, q) for n, q, _ in qa] == [
        ("2.1", "Where can the W sources be obtained?"),
        ("2.2", "How can W be installed on my machine?"),
        ("3.1", "How can I create rotated axis labels?"),
    ]
    by_num = {n: a for n, _, a in qa}
    assert by_num["2.1"] == "From the archive network; see the installation manual."
    # an answer keeps its own sub-section (as a bold line) and stops at the next chapter
    assert by_num["2.2"] == (
        "It depends on the platform.\n\n**2.2.1 How can W be installed (Unix-like)**\n\n"
        "Run make install."
    )
    # R code's comments inside a fence are neither headings nor the end of the answer
    a31 = by_num["3.1"]
    assert "## Increase the bottom margin" in a31 and "### a third-level comment" in a31
    assert a31.endswith("Then plot.")
    # the first chapter's sections ask nothing and stay as headings
    assert files["00-1-introduction.md"] == (
        "## 1 Introduction\n\n### 1.1 Legalese\n\nThis document is free software.\n"
    )
    assert files["03-4-acknowledgments.md"] == "## 4 Acknowledgments\n\nThanks to the list.\n"
    for _, q, a in qa:
        assert q.lower() not in _corpus(files)
        assert any(a in text for text in files.values())


def test_split_texinfo_chapters_of_a_manual_asks_nothing_and_drops_the_index() -> None:
    files, qa = ns.split_texinfo_chapters(ns.texi2any_page_markdown(MANUAL_HTML))
    assert qa == []
    assert list(files) == [
        "00-an-introduction-to-w.md",
        "01-1-introduction-and-preliminaries.md",
        "02-appendix-a-a-sample-session.md",
    ]
    assert "### 1.1 The W environment" in files["01-1-introduction-and-preliminaries.md"]
    assert "index" not in _corpus(files)


def test_split_texinfo_chapters_sections_of_another_chapter_are_not_questions() -> None:
    md = "## 2 Basics\n\n### 3.1 Misnumbered\n\nbody\n\n### 2.1 Right one?\n\nanswer\n"
    files, qa = ns.split_texinfo_chapters(md, first_question_chapter=2)
    assert qa == [("2.1", "Right one?", "answer")]
    # the misnumbered section stays a heading; only the question's heading leaves
    assert files == {"00-2-basics.md": "## 2 Basics\n\n### 3.1 Misnumbered\n\nbody\n\nanswer\n"}


_LINE = st.one_of(
    st.text(alphabet="ab #?", max_size=12),
    st.just(""),
    st.just("```"),
    st.builds(lambda n, t: f"## {n} {t}", st.integers(0, 4), st.text("abc ", max_size=6)),
    st.builds(
        lambda a, b, t: f"### {a}.{b} {t}",
        st.integers(0, 4),
        st.integers(0, 9),
        st.text(alphabet="abcd ?", min_size=1, max_size=12),
    ),
    st.builds(lambda t: f"#### {t}", st.text("ab", max_size=4)),
    st.just("## Concept index"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=40), st.integers(0, 3))
def test_split_texinfo_chapters_never_leaves_a_question_heading_in_the_corpus(
    lines: list[str], first: int
) -> None:
    files, qa = ns.split_texinfo_chapters("\n".join(lines), first_question_chapter=first)
    # lines compared with their spaces folded, as the question's text is
    out = [" ".join(line.split()) for text in files.values() for line in text.split("\n")]
    given_lines = [" ".join(line.split()) for line in lines]
    asked = [f"### {num} {q}" for num, q, _ in qa]
    for num, q, a in qa:
        assert a.strip() and q.strip() and re.fullmatch(r"\d+\.\d+", num)
        assert int(num.split(".")[0]) >= first
        heading = f"### {num} {q}"
        # each question takes its own heading line out of the corpus: what is left of that
        # line is only its other copies (in code, before a chapter, in another chapter)
        assert out.count(heading) + asked.count(heading) <= given_lines.count(heading), heading
        assert any(a in t for t in files.values())
    assert all(re.fullmatch(r"\d\d-[a-z0-9-]+\.md", rel) for rel in files)
    assert len(set(files)) == len(files)


# -- the set, built from a package tree shaped like Debian's r-doc-html ------------------


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_faq: bool = True) -> Path:
    root = unpacked_package(tmp_path, monkeypatch, ns.R_PACKAGE, "4.2.2.20221110-2")
    manual = root / ns.R_MANUAL
    manual.mkdir(parents=True)
    if with_faq:
        (manual / ns.R_FAQ).write_text(FAQ_HTML, encoding="utf-8")
    return manual


def test_r_faq_set_from_a_package_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manual = _package(tmp_path, monkeypatch)
    (manual / "R-intro.html").write_text(MANUAL_HTML, encoding="utf-8")
    (manual / "R-exts.html").write_text(  # a developer manual: never in
        MANUAL_HTML.replace("Introduction to W", "Writing W Extensions"), encoding="utf-8"
    )
    nset = ns.r_faq_set()
    assert [q.qid for q in nset.questions] == ["r-faq:2.1", "r-faq:2.2", "r-faq:3.1"]
    assert [q.source for q in nset.questions] == [
        "R-FAQ/01-2-w-basics.md",
        "R-FAQ/01-2-w-basics.md",
        "R-FAQ/02-3-w-miscellanea.md",
    ]
    assert set(nset.files) == {
        "R-FAQ/00-1-introduction.md",
        "R-FAQ/01-2-w-basics.md",
        "R-FAQ/02-3-w-miscellanea.md",
        "R-FAQ/03-4-acknowledgments.md",
        "R-intro/00-an-introduction-to-w.md",
        "R-intro/01-1-introduction-and-preliminaries.md",
        "R-intro/02-appendix-a-a-sample-session.md",
    }
    corpus = _corpus(nset.files)
    # the manual quoted a question verbatim: scrubbed, the rest of its line kept
    assert "where can the w sources be obtained" not in corpus
    assert "this is an introduction to w. see the faq." in corpus
    assert "writing w extensions" not in corpus
    assert_files_as_written(nset)
    assert "4.2.2.20221110-2" in nset.note and "4 chapter files" in nset.note
    assert "(R-intro)" in nset.note
    assert "r-faq" in ns.HELD_OUT_SETS and "r-faq" not in ns.NATURAL_SETS and "r-faq" in ns.BUILDERS


def test_r_faq_set_refuses_a_package_without_the_faq(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _package(tmp_path, monkeypatch, with_faq=False)
    with pytest.raises(FileNotFoundError, match=r"no R-FAQ\.html under"):
        ns.r_faq_set()
