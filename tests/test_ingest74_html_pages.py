"""What ingest made of an HTML manual's pages (the Apache httpd manual, helper usage84's "left
alone"; bench/README.md, "(helper ingest74)"): an emptied "See also" took the next section,
a language picker and the page banner were indexed as text, a shell prompt's ``#`` kept the
converter's backslash, and a slot said its passage's heading once per chunk.

Each test builds its page inline and goes through the public API where one shows it
(``Treehop.find``, ``slot_text``, LangChain's ``page_content``)."""

from __future__ import annotations

import html
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_treehop import TreehopRetriever
from treehop import Treehop
from treehop.ingest import markup
from treehop.ingest.chunking import split_text
from treehop.ingest.markup import html_to_markdown
from treehop.models import ChunkContext, ContextType, MatchedContext

from treehop_test_doubles import BagOfWordsEmbedder

LANGUAGES = (
    '<div class="toplang"><p><span>Available Languages: </span>'
    '<a href="../de/core.html" hreflang="de" rel="alternate">&nbsp;de&nbsp;</a> |\n'
    '<a href="core.html">&nbsp;en&nbsp;</a> |\n'
    '<a href="../zh-cn/core.html" hreflang="zh-cn" rel="alternate">&nbsp;zh-cn&nbsp;</a>'
    "</p></div>"
)


def _directive(name: str, body: str) -> str:
    # Apache's module page: each directive ends with a "See also" whose links go to places
    # in pages of the site (a contents list's lines: dropped), so the heading is left empty
    return (
        f'<div class="directive-section"><h2>{name} Directive</h2><p>{body}</p>'
        '<h3>See also</h3><ul><li><a href="#other">Other</a></li>'
        '<li><a href="mod_x.html#y">Y</a></li></ul></div>'
    )


PAGE = (
    "<html><head><title>core - Web Server</title></head><body>"
    '<div id="page-header"><p class="menu"><a href="m.html">Modules</a> | '
    '<a href="g.html">Glossary</a> | <a href="s.html">Sitemap</a></p>'
    '<p class="apache">Web Server Version 2.4</p></div>'
    '<div id="path"><a href="/">Web</a> &gt; <a href="d.html">Documentation</a></div>'
    '<div id="page-content"><h1>Core Features</h1>'
    + LANGUAGES
    + _directive("KeepAlive", "Enables persistent connections over one socket. " * 25)
    + _directive("KeepAliveTimeout", "Seconds the server waits for a next request: 5.")
    + "<h2>Passwords</h2><p>Type:</p>"
    '<div class="example"><p><code># htpasswd -c /usr/local/passwd rbowen<br>'
    "New password: secret</code></p></div>"
    "<pre># a comment in code\n\\# kept as written</pre>"
    "</div>" + LANGUAGES.replace("toplang", "bottomlang") + "</body></html>"
)


def _chunks(page: str) -> list[tuple[str, str]]:
    text, _ = html_to_markdown(page)
    return [(c.title, c.text) for c in split_text(text, "html", 1000)]


def test_an_empty_see_also_does_not_take_the_next_section() -> None:
    chunks = _chunks(PAGE)
    titled = {title: text for title, text in chunks}
    # 111ffd0f: "Core Features › KeepAlive Directive › See also" held the KeepAliveTimeout
    # section, its heading glued in as a text line
    assert not [t for t in titled if t.endswith("See also")]
    timeout = [t for t, text in chunks if "Seconds the server waits" in text]
    assert timeout == ["Core Features › KeepAliveTimeout Directive"]
    assert not titled[timeout[0]].startswith("KeepAliveTimeout Directive")


def test_a_heading_over_its_children_still_names_them() -> None:
    # the pop of an empty heading's group must keep a child's path (the case before)
    chunks = _chunks("<h1>Guide</h1><h2>Install</h2><h3>Linux</h3><p>apt install it.</p>")
    assert chunks == [("Guide › Install › Linux", "apt install it.")]


def test_the_language_picker_and_the_banner_are_not_text() -> None:
    text, _ = html_to_markdown(PAGE)
    for chrome in ("Available Languages", "zh-cn", "Sitemap", "Version 2.4", "Documentation"):
        assert chrome not in text, chrome
    assert text.startswith("# Core Features\n")  # (no <title> line before the page's h1)


def test_a_list_of_words_or_a_link_in_prose_is_kept() -> None:
    kept = (
        "<h1>T</h1><p>Values: on | off | auto</p>"  # no link to another language
        '<p>Read it <a href="../de/x.html" hreflang="de">in German</a> too.</p>'
        '<p>Codes: <a href="x.html" hreflang="de">de</a> | en | the rest</p>'
    )
    text, _ = html_to_markdown(kept)
    assert "Values: on | off | auto" in text
    assert "Read it in German too." in text
    assert "Codes: de | en | the rest" in text


def test_a_shell_prompt_keeps_its_hash_without_the_backslash() -> None:
    chunks = _chunks(PAGE)
    body = "\n".join(text for _, text in chunks)
    assert "# htpasswd -c /usr/local/passwd rbowen" in body
    assert "\\# htpasswd" not in body
    # code is code: a fence's lines are never touched
    assert "# a comment in code\n\\# kept as written" in body


def test_a_line_that_starts_with_a_backslash_reads_as_written() -> None:
    page = "<h1>T</h1><p>\\n ends a line</p><p>## not a heading</p><p>=====</p><p>x</p>"
    chunks = _chunks(page)
    assert chunks[0][1].split("\n\n") == ["\\n ends a line", "## not a heading", "=====", "x"]


_LINE = st.text(alphabet="#\\=-`~ ab?1.", min_size=1, max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=6))
def test_paragraph_text_comes_back_as_written(paragraphs: list[str]) -> None:
    # whatever a paragraph starts with (a heading's #, a rule, a fence, a backslash), its
    # chunk shows it as the page does: the converter's escape is taken back exactly once
    page = "<h1>Page</h1>" + "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    shown = [" ".join(p.split()) for p in paragraphs]
    shown = [p for p in shown if p]
    text = "\n\n".join(t for _, t in _chunks(page))
    # (rule lines alone are an author's mark between entries, dropped by the chunker)
    got = [b for b in text.split("\n\n") if b]
    if not shown:  # (blank paragraphs only: the page's one chunk is its title)
        assert got == ["Page"]
        return
    for block in got:
        assert block in shown
    assert all(not b.startswith("\\") or b in shown for b in got)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["de", "en", "fr", "zh-cn", "pt-br", "ja", "tr"]), min_size=2),
    st.sampled_from(["", "Available Languages: ", "Languages: "]),
    st.sampled_from([" | ", ", ", " "]),
)
def test_language_lists_are_recognised(codes: list[str], label: str, sep: str) -> None:
    text = label + sep.join(codes)
    assert markup.language_list(text) == (len(text) <= 400)
    assert not markup.language_list(text + " and more words")
    assert not markup.language_list(codes[0])  # one code alone is not a list


def test_a_slot_says_its_heading_once(tmp_path: Path) -> None:
    title = "Core Features › KeepAlive Directive"
    m = MatchedContext(
        uri="viking://resources/kb/core.html#chunk-1",
        context_type=ContextType.RESOURCE,
        is_leaf=True,
        abstract="",
        score=1.0,
        content=f"{title}\n\nsecond part",
        chunk_index=1,
        metadata={"chunk_title": title},
        collapsed=[
            ChunkContext(
                uri="u0", chunk_index=0, score=0.5, content=f"{title}\n\nfirst part", position=-1
            ),
            ChunkContext(
                uri="u2", chunk_index=2, score=0.5, content=f"{title}\n\nthird", position=1
            ),
        ],
    )
    assert m.slot_text == f"{title}\n\nfirst part\n\nsecond part\n\nthird"


def test_through_find_and_langchain(tmp_path: Path) -> None:
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "core.html").write_text(PAGE, encoding="utf-8")
    long = " ".join(f"Keep-alive sentence {i} about persistent sockets." for i in range(70))
    (tmp_path / "kb" / "long.html").write_text(f"<h1>Long</h1><p>{long}</p>", encoding="utf-8")
    small = "<h1>Small</h1><p>Run:</p><p><code># htpasswd -c pw ann</code></p>"
    (tmp_path / "kb" / "small.html").write_text(small, encoding="utf-8")
    with Treehop(tmp_path / "idx", embedder=BagOfWordsEmbedder(), reader_processes=0) as th:
        th.add_resource(tmp_path / "kb", target_uri="viking://resources/kb")
        hit = th.find("KeepAliveTimeout next request seconds", limit=1).contexts()[0]
        assert hit.metadata["chunk_title"] == "Core Features › KeepAliveTimeout Directive"
        slot = th.find("keep-alive sentence persistent sockets", limit=1).contexts()[0]
        assert len(slot.collapsed) >= 1
        assert slot.slot_text.count("Long\n\n") == 1
        docs = TreehopRetriever(client=th, k=5).invoke("htpasswd")
        texts = [d.page_content for d in docs]
        assert any("# htpasswd -c" in t for t in texts)
        assert not any("\\# htpasswd" in t or "Available Languages" in t for t in texts)


def test_an_empty_page_title_still_names_its_sibling_section() -> None:
    # control (passes on 111ffd0f too): Doxygen's pages put the page title and "Introduction"
    # at one level; the title, with no text of its own, still leads the chunk
    md = "# avr-libc and assembler programs\n\n# Introduction\n\nThere might be reasons.\n"
    chunks = [(c.title, c.text) for c in split_text(md, "markdown", 1000)]
    assert chunks == [
        ("avr-libc and assembler programs", "Introduction\n\nThere might be reasons.")
    ]
