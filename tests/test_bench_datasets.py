"""The held-out git-doc converter of ``bench/datasets.py`` on a tiny hand-made package tree.

What the ``gitdoc`` set's numbers rest on: asciidoc man pages and articles and the DocBook user
manual become Markdown pages with their headings as ``#`` lines and without navigation
(tables of contents, the "Last updated" footer, the "Part of the git(1) suite" section); the
pages are laid out as git(1) groups them (the package's ``cmds-*.txt`` lists); links resolve
to the page (or user-manual chapter) they point to in that layout, so anchor-text queries are
labelled with the right page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_tree as bt
import datasets as ds

MANPAGE = """<html><head><title>git-frob(1)</title><style>h1 {{ color: red; }}</style></head>
<body class="manpage">
<div id="header">
<h1>
git-frob(1) Manual Page
</h1>
<h2>NAME</h2>
<div class="sectionbody">
<p>git-frob -
   Frobnicate the working tree
</p>
</div>
</div>
<div id="content">
<div class="sect1">
<h2 id="_synopsis">SYNOPSIS</h2>
<div class="sectionbody">
<div class="verseblock">
<pre class="content"><em>git frob</em> [--hard] &lt;path&gt;</pre>
</div>
</div>
</div>
<div class="sect1">
<h2 id="_description">DESCRIPTION</h2>
<div class="sectionbody">
<div class="paragraph"><p>This command frobnicates every file below the given path until it shines.
See <a href="git-polish.html">git-polish(1)</a> and {link}.</p></div>
<div class="sect2">
<h3 id="_frobbing_a_whole_repository">Frobbing a whole repository at once</h3>
<div class="listingblock">
<div class="content">
<pre><code>$ git frob --hard .</code></pre>
</div></div>
</div>
</div>
</div>
<div class="sect1">
<h2 id="_git">GIT</h2>
<div class="sectionbody">
<div class="paragraph"><p>Part of the <a href="git.html">git(1)</a> suite</p></div>
</div>
</div>
</div>
<div id="footnotes"><hr /></div>
<div id="footer">
<div id="footer-text">
Last updated
 2024-05-31 00:35:55 UTC
</div>
</div>
</body>
</html>
"""

ARTICLE = """<html><body class="article">
<div id="header">
<h1>How to polish a repository</h1>
<div id="toc"><div id="toctitle">Table of Contents</div><a href="#_steps">Steps in order</a></div>
</div>
<div id="content">
<div id="preamble"><div class="sectionbody">
<div class="paragraph"><p>Polishing makes a repository shine for its next reader,
slowly and with care.
It takes an afternoon, a clean working tree and a little patience with old history.</p></div>
</div></div>
<div class="sect1">
<h2 id="_steps">Steps in order</h2>
<div class="sectionbody">
<div class="paragraph"><p>First frob it, as the
<a href="../user-manual.html#frobbing">user manual explains in detail</a>, then rinse it.</p></div>
</div>
</div>
</div>
<div id="footer"><div id="footer-text">Last updated 2024-05-31</div></div>
</body></html>
"""

USER_MANUAL = """<html><head><title>Git User Manual</title></head><body>
<div lang="en" class="book">
<div class="titlepage"><div><div>
<h1 class="title"><a name="id-1"></a>Git User Manual</h1>
</div></div></div>
<div class="toc"><p><b>Table of Contents</b></p>
<dl class="toc"><dt><a href="#intro">Introduction</a></dt></dl></div>
<div class="preface"><div class="titlepage"><div><div>
<h1 class="title"><a name="intro"></a>Introduction</h1>
</div></div></div>
<p>Git is a fast distributed revision control system, and this manual is about using it well.
It starts from the everyday commands and ends with the object database underneath them.
Read <a class="xref" href="#frobbing" title="Frobbing things">
the section called \u201cFrobbing things\u201d</a> first.</p></div>
<div class="chapter"><div class="titlepage"><div><div>
<h1 class="title"><a name="basics"></a>Chapter 1. Basics</h1>
</div></div></div>
<div class="toc">
<dl class="toc"><dt><a href="#frobbing">Frobbing things</a></dt></dl></div>
<div class="section"><div class="titlepage"><div><div>
<h2 class="title"><a name="frobbing"></a>Frobbing things</h2>
</div></div></div>
<p>To frob a tree you run the frob command; it never touches the object database at all.
Frobbing is safe to repeat: a second run finds nothing left to change and says so.</p>
<pre class="screen">$ git frob .</pre></div></div>
</div></body></html>
"""


def _package(tmp_path: Path) -> Path:
    root = tmp_path / "git-doc"
    (root / "howto").mkdir(parents=True)
    link = '<a href="howto/polish.html">the polishing recipe for beginners</a>'
    (root / "git-frob.html").write_text(MANPAGE.format(link=link))
    polish = MANPAGE.format(link="nothing else").replace("frob", "polish")
    (root / "git-polish.html").write_text(polish)
    (root / "git.html").write_text(MANPAGE.format(link="every command").replace("git-frob", "git"))
    (root / "index.html").write_text((root / "git.html").read_text())  # a copy: left out
    (root / "howto" / "polish.html").write_text(ARTICLE)
    (root / "user-manual.html").write_text(USER_MANUAL)
    (root / "cmds-mainporcelain.txt").write_text(
        "linkgit:git-frob[1]::\n\tFrobnicate the working tree.\n\n"
    )
    return root


def test_pages_follow_git1_grouping_and_keep_only_content(tmp_path: Path) -> None:
    root = _package(tmp_path)
    pages = {p.relpath: p for p in ds.convert_gitdoc(root)}
    assert sorted(pages) == [
        "commands/git-polish.md",  # a man page in no cmds list
        "commands/porcelain/main/git-frob.md",  # listed in cmds-mainporcelain.txt
        "git.md",
        "howto/polish.md",
        "user-manual/00-intro.md",
        "user-manual/01-basics.md",
    ]
    frob = pages["commands/porcelain/main/git-frob.md"]
    assert frob.title == "git-frob(1) Manual Page"
    # The NAME line sits under the title; headings are Markdown headings; code is fenced.
    assert frob.text.startswith(
        "# git-frob(1) Manual Page\n\ngit-frob - Frobnicate the working tree\n\n## SYNOPSIS\n"
    )
    assert "### Frobbing a whole repository at once\n" in frob.text
    assert "```\n$ git frob --hard .\n```" in frob.text
    assert [h["text"] for h in frob.headings] == [
        "git-frob(1) Manual Page",
        "SYNOPSIS",
        "DESCRIPTION",
        "Frobbing a whole repository at once",
    ]
    # Navigation and boilerplate are gone: footer stamp, "GIT" section, styles, TOCs.
    for page in pages.values():
        assert "Last updated" not in page.text
        assert "Part of the" not in page.text
        assert "Table of Contents" not in page.text
        assert "color: red" not in page.text
    article = pages["howto/polish.md"]
    assert article.text.startswith("# How to polish a repository\n\nPolishing makes")
    assert "Steps in order" in article.text and article.text.count("Steps in order") == 1
    chapter = pages["user-manual/01-basics.md"]
    assert chapter.text.startswith("# Chapter 1. Basics\n\n## Frobbing things\n")
    assert "```\n$ git frob .\n```" in chapter.text


def test_links_resolve_into_the_new_layout(tmp_path: Path) -> None:
    pages = {p.relpath: p for p in ds.convert_gitdoc(_package(tmp_path))}
    frob = {str(lk["text"]): lk for lk in pages["commands/porcelain/main/git-frob.md"].links}
    assert frob["the polishing recipe for beginners"]["target"] == "howto/polish.md"
    # A man page reference names its target, like an API cross-reference: code, no query.
    assert frob["git-polish(1)"]["target"] == "commands/git-polish.md"
    assert frob["git-polish(1)"]["code"] is True
    # A fragment of the user manual resolves to the chapter that defines it, from another
    # directory and from another chapter; DocBook's xref wrapper is unwrapped.
    (howto_link,) = pages["howto/polish.md"].links
    assert howto_link["target"] == "user-manual/01-basics.md"
    intro = {str(lk["text"]): lk for lk in pages["user-manual/00-intro.md"].links}
    assert intro["Frobbing things"]["target"] == "user-manual/01-basics.md"

    anchors = ds.derive_anchor_queries(list(pages.values()), n=10)
    got = {q["query"]: q["relevant"] for q in anchors}
    assert got == {
        "the polishing recipe for beginners": "howto/polish.md",
        "user manual explains in detail": "user-manual/01-basics.md",
    }  # "Frobbing things" is a heading, "git-polish(1)" code: neither is a query


def test_materialise_writes_the_tree(tmp_path: Path) -> None:
    out, pages = ds.materialise_gitdoc(_package(tmp_path), tmp_path / "out")
    written = sorted(
        str(f.relative_to(out)) for f in out.rglob("*.md") if not f.name.startswith(".")
    )
    assert written == sorted(p.relpath for p in pages)
    assert (out / "howto" / "polish.md").read_text() == next(
        p.text for p in pages if p.relpath == "howto/polish.md"
    )


def test_gitdoc_query_file_is_the_derived_held_out_set() -> None:
    """The checked-in labels: three kinds, unique ids, one judged ``.md`` page each, none on a
    page the converter leaves out; and the set is held out (never in ``--dataset all``)."""
    raw = json.loads(ds.GITDOC_QUERIES_FILE.read_text())
    assert "git-doc" in raw["source"] and "held out" in raw["source"]
    assert raw["derived_by"] == "python bench/datasets.py --rebuild-gitdoc-queries"
    qs = ds.load_query_file(ds.GITDOC_QUERIES_FILE)
    assert {q["kind"] for q in qs} == {"heading", "first_sentence", "anchor"}
    assert len({q["qid"] for q in qs}) == len(qs)
    assert all(q["query"].strip() and q["relevant"].endswith(".md") for q in qs)
    assert not any(q["relevant"] in {"index.md", "everyday.md"} for q in qs)
    assert not any(q["query"].startswith("git-") and " - " in q["query"] for q in qs)
    assert "gitdoc" in bt.HELD_OUT_SETS and "gitdoc" not in bt.SETS
