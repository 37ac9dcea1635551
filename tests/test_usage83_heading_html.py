"""A Markdown heading's inline HTML tags render as nothing, so they lead no chunk title.

usage83: sysstat's FAQ (Debian ``sysstat``, ``FAQ.md.gz``) anchors each heading,
``### 2. Questions related to sar, sadc and sadf<a name="sar"></a>``; the anchor led every
chunk title, heading path and abstract of its section, which is what a LangChain / LlamaIndex
program and an agent read first (``... › 2. Questions related to sar, sadc and sadf<a
name="sar"></a>``).
"""

from __future__ import annotations

import string
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from treehop import Treehop
from treehop.ingest.markup import parse

from treehop_test_doubles import BagOfWordsEmbedder

FAQ = """## Welcome to the sysstat's Frequently Asked Questions!

### 2. Questions related to sar, sadc and sadf<a name="sar"></a>

---
2.18.<a name="2_18"></a> How can I keep sar data for more than one month?

A: By default sar saves its data in the standard system activity daily data file.
Set HISTORY in the sysstat configuration file to keep more days.
"""


def test_an_anchor_in_a_heading_leads_no_chunk_title(tmp_path: Path) -> None:
    """The folder walk of a Markdown FAQ long enough to be chunked: every chunk's title,
    heading path and abstract name the heading as it renders."""
    (tmp_path / "doc").mkdir()
    long_faq = FAQ + "\n".join(
        f"More about sar option number {i} and its files." for i in range(300)
    )
    (tmp_path / "doc" / "FAQ.md").write_text(long_faq, encoding="utf-8")
    with Treehop(None, embedder=BagOfWordsEmbedder()) as th:
        th.add_resource(str(tmp_path / "doc"), target_uri="viking://resources/doc")
        file_node = th.store.get(["viking://resources/doc/FAQ.md"])[0]
        assert file_node is not None and file_node.metadata["chunks"] > 1
        uris = [
            f"viking://resources/doc/FAQ.md#chunk-{i}" for i in range(file_node.metadata["chunks"])
        ]
        chunks = [n for n in th.store.get(uris) if n is not None]
        hits = th.find("keep sar data for more than one month", limit=3).contexts()
    title = (
        "Welcome to the sysstat's Frequently Asked Questions! › "
        "2. Questions related to sar, sadc and sadf"
    )
    assert chunks and all(n.metadata["chunk_title"] == title for n in chunks)
    assert all(n.abstract.startswith(title + ": ") for n in chunks)
    assert all(n.content.startswith(title + "\n") for n in chunks)  # what is embedded
    assert hits and all(m.abstract.startswith(title + ": ") for m in hits if "#chunk-" in m.uri)


def test_inline_tags_dropped_text_kept_code_spans_and_non_tags_kept() -> None:
    heading = parse("## 1.3.<A NAME='1_3'></A> Why <em>HH:MM:SS</em>?<br/>\n\nbody", "markdown")
    assert heading.sections[0].path == ("1.3. Why HH:MM:SS?",)
    # code, and text that only looks like a tag (an obfuscated mail address, a C++ type)
    kept = parse("## `Vector<b>` and sysstat <at> orange.fr, list<int>\n\nbody", "markdown")
    assert kept.sections[0].path == ("Vector<b> and sysstat <at> orange.fr, list<int>",)
    # a setext heading too
    assert parse("Title <span class='x'>two</span>\n=====\n\nbody", "markdown").title == "Title two"


def test_an_html_pages_heading_keeps_its_decoded_text() -> None:
    # the HTML path hands parse() text whose entities are decoded: "<b>" there was written
    # about HTML (``&lt;b&gt;``), so it stays
    assert parse("## The <b> element\n\nbody", "html").sections[0].path == ("The <b> element",)


_WORDS = st.text(
    alphabet=string.ascii_letters + string.digits + " .,?!-:'", min_size=1, max_size=60
)
_TAGS = st.sampled_from(
    ['<a name="x_1"></a>', "<a id=top></a>", "<br>", "<br/>", "<code>", "</code>", "<SPAN>"]
)


@settings(max_examples=200, deadline=None)
@given(_WORDS, _TAGS, st.integers(min_value=0, max_value=60))
def test_a_tag_anywhere_in_a_heading_leaves_the_heading_a_reader_sees(words, tag, at) -> None:
    """Property: an inline tag inserted anywhere in a heading gives the heading without it
    (words joined by the tag are the text as rendered: ``a<br>b`` reads ``ab``)."""
    if not words.strip():
        return
    at = min(at, len(words))
    with_tag = words[:at] + tag + words[at:]
    plain = parse(f"## {words}\n\nbody", "markdown").sections[0].path
    tagged = parse(f"## {with_tag}\n\nbody", "markdown").sections[0].path
    assert tagged == plain
