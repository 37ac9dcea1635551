"""A user's first hour, stop 63 (LangChain): raw HTML pages cut by a text splitter.

A user who swaps README's ``rglob("*.md")`` for a Debian manual's ``*.html`` pages (DocBook:
every page ends in a ``div.navfooter`` of Prev / Up / Next images) and splits the raw pages
with ``RecursiveCharacterTextSplitter`` hands ``TreehopVectorStore.from_documents`` chunks
whose last one per page is that footer's markup alone. The store keeps an HTML page as its
text, which for such a chunk is nothing, and the whole batch was refused with
``IngestError: document 5: the text is empty (no visible character)`` about a chunk of 800
visible characters. ``InMemoryVectorStore`` and our LlamaIndex store (a node whose HTML holds
no text is kept as given) take the same chunks: so does this store now.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_text_splitters import RecursiveCharacterTextSplitter

from langchain_treehop import TreehopVectorStore
from treehop import Treehop
from treehop.errors import IngestError
from treehop.integration_kit import page_text

from lc_helpers import WordHashEmbeddings
from treehop_test_doubles import BagOfWordsEmbedder

_SECTION = (
    '<div class="section"><h2 class="title">Holding packages</h2>'
    "<p>Hold a package with the = key; it is then never upgraded.</p>"
)
_FOOTER = (
    '</p></div><div class="navfooter"><hr /><table width="100%" summary="Navigation footer">'
    '<tr><td width="40%" align="left"><a accesskey="p" href="ch01.html">'
    '<img src="images/prev.gif" alt="Prev" /></a>\xa0</td><td width="20%" align="center">'
    '<a accesskey="u" href="ch01.html"><img src="images/up.gif" alt="Up" /></a></td>'
    '<td width="40%" align="right">\xa0<a accesskey="n" href="ch01s02.html">'
    '<img src="images/next.gif" alt="Next" /></a></td></tr></table></div></body></html>'
)
_SOURCE = "/usr/share/doc/aptitude/html/en/ch01s01.html"
_CHUNKS = [
    Document(page_content=_SECTION, metadata={"source": _SOURCE, "start_index": 0}),
    Document(page_content=_FOOTER, metadata={"source": _SOURCE, "start_index": 900}),
]


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


def test_the_footer_chunk_has_no_text_once_converted() -> None:
    """The premise: the store keeps an HTML chunk as its text, and the footer has none."""
    assert page_text(_SECTION, _CHUNKS[0].metadata).strip()
    assert not page_text(_FOOTER, _CHUNKS[1].metadata).strip()


def test_the_reference_store_takes_the_split_page() -> None:
    ref = InMemoryVectorStore(WordHashEmbeddings())
    assert len(ref.add_documents(_CHUNKS)) == 2


def test_a_chunk_of_markup_alone_is_stored_as_given(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    ids = store.add_documents(_CHUNKS, ids=["s", "f"])
    assert ids == ["s", "f"]
    by_id = {d.id: d for d in store.get_by_ids(["s", "f"])}
    # the chunk with text is stored as its text, the one without as it came
    assert by_id["s"].page_content.startswith("## Holding packages")
    assert "<h2" not in by_id["s"].page_content
    assert by_id["f"].page_content == _FOOTER
    assert by_id["f"].metadata == _CHUNKS[1].metadata
    hits = store.similarity_search("hold a package so it is never upgraded", k=1)
    assert [d.id for d in hits] == ["s"]


def test_raw_pages_cut_by_a_splitter_go_in_as_they_come(client: Treehop) -> None:
    """The user's own pipeline: whole raw pages, RecursiveCharacterTextSplitter, the store."""
    head = (
        '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n<!DOCTYPE html PUBLIC '
        '"-//W3C//DTD XHTML 1.0 Transitional//EN" "x.dtd"><html><head><title>Using '
        "aptitude</title></head><body>"
    )
    # DocBook output starts a new line before the footer: the splitter cuts there.
    para = "\n\t" + " ".join(["The hold flag keeps a package at its version."] * 9) + "</p>"
    pages = [
        Document(
            page_content=head
            + _SECTION.replace("Holding", f"Part {n} holding")
            + para
            + "\n      "
            + _FOOTER,
            metadata={"source": f"/doc/en/ch0{n}.html"},
        )
        for n in (1, 2)
    ]
    chunks = RecursiveCharacterTextSplitter(chunk_size=800, add_start_index=True).split_documents(
        pages
    )
    assert any(not page_text(c.page_content, c.metadata).strip() for c in chunks)
    store = TreehopVectorStore(client)
    assert len(store.add_documents(chunks)) == len(chunks)
    hits = store.similarity_search("part 2 holding packages", k=2)
    assert hits and hits[0].metadata["source"] == "/doc/en/ch02.html"


def test_an_empty_text_is_still_refused(client: Treehop) -> None:
    """Control: a text with no visible character, HTML or not, is refused as before."""
    store = TreehopVectorStore(client)
    for text, meta in (("  \n", {}), ("\u200b", {"source": "a.html"})):
        with pytest.raises(IngestError, match="empty"):
            store.add_texts([text], [meta])
