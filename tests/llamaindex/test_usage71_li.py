"""A user's first hour, stop 63 (LlamaIndex): a raw HTML page's footer chunk, given to the
tree-ingest helper ``add_documents``.

Two nodes of one page (``file_path`` ``.../ch01s01.html``), the second its DocBook
``div.navfooter`` alone (a text splitter over the raw page cuts there): the helper stores an
HTML page as its text, and the footer has none. It was refused as ``document 1: the text is
empty (no visible character)`` about ~460 visible characters of markup; now it says what the
chunk is and what to do, as LangChain's helper does. (The vector stores keep such a chunk as
given; the helper builds one file of the nodes, whose text the markup is not.)
"""

from __future__ import annotations

import pytest
from llama_index.core import Document

from llama_index.retrievers.treehop import add_documents
from treehop import Treehop
from treehop.errors import IngestError

from treehop_test_doubles import BagOfWordsEmbedder

# (as tests/langchain/unit_tests/test_usage71_lc.py's)
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
_PAGE = "/usr/share/doc/aptitude/html/en/ch01s01.html"


def test_a_footer_chunk_is_refused_saying_what_it_is() -> None:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        docs = [
            Document(text=_SECTION, metadata={"file_path": _PAGE}),
            Document(text=_FOOTER, metadata={"file_path": _PAGE}),
        ]
        with pytest.raises(IngestError) as caught:
            add_documents(th, docs)
        message = str(caught.value)
        assert message.startswith("document 1: its HTML page has no text outside navigation")
        assert "text splitter" in message
        assert th.ls() == []  # refused before anything was written


def test_the_page_with_text_goes_in() -> None:
    """Control: the chunk with text alone is stored."""
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as th:
        uris = add_documents(th, [Document(text=_SECTION, metadata={"file_path": _PAGE})])
        assert len(uris) == 1
        assert "Holding packages" in th.read(uris[0])
