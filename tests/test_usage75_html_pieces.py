"""Pieces of raw HTML pages that hold navigation alone, in the vector stores (helper usage75).

README's LangChain flow over a Sphinx manual's raw pages (``Document(p.read_text())``,
``RecursiveCharacterTextSplitter(chunk_size=800)``, ``TreehopVectorStore.from_documents``)
cuts each page's local table of contents into chunks of ``<li><a class="reference internal"
...>`` markup. The store keeps an HTML chunk as its text (navigation dropped), which for such
a chunk is nothing, so it kept the markup as given (helper usage71's rule): on Jinja's manual
234 of 2,300 chunks were stored, embedded and returned as raw tags, and an agent's find tool
answered one (helper usage74). Now such a piece is stored as its visible link text, one line
per entry; a piece with no visible character at all (``<!DOCTYPE html>``, opening tags) is
still kept as given, so its id round-trips (``get_by_ids``, ``delete``, an upsert).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, TextNode

from langchain_treehop import TreehopVectorStore, create_treehop_tools
from llama_index.vector_stores.treehop import TreehopVectorStore as LiTreehopVectorStore
from treehop import Treehop
from treehop.ingest.markup import html_to_markdown, html_visible_text
from treehop.integration_kit import page_text, stored_page_text

from treehop_test_doubles import BagOfWordsEmbedder

_SOURCE = "/usr/share/doc/python-jinja2-doc/html/api.html"
# Jinja's api.html as RecursiveCharacterTextSplitter cut it: a piece of the page's local
# table of contents (Sphinx's ``div.sphinxsidebar`` ``ul``), verbatim in shape.
_TOC = (
    '<li><a class="reference internal" href="#jinja2.Template.blocks"><code class="docutils '
    'literal notranslate"><span class="pre">Template.blocks</span></code></a></li>\n'
    '<li><a class="reference internal" href="#jinja2.Template.is_up_to_date"><code '
    'class="docutils literal notranslate"><span class="pre">Template.is_up_to_date</span>'
    "</code></a></li>\n</ul>\n</li>\n"
    '<li><a class="reference internal" href="#the-meta-api">The Meta API</a><ul>\n'
    '<li><a class="reference internal" href="#jinja2.meta.find_undeclared_variables"><code '
    'class="docutils literal notranslate"><span class="pre">find_undeclared_variables()'
    "</span></code></a></li>\n</ul>\n</li>\n</ul>\n"
)
_TOC_LINES = [
    "- Template.blocks",
    "- Template.is_up_to_date",
    "- The Meta API",
    "- find_undeclared_variables()",
]
# A piece with no visible character: the splitter's cut before a method's signature.
_TAGS_ONLY = (
    '<dl class="py method">\n<dt class="sig sig-object py" id="jinja2.Environment.get_template">'
)
_HEAD = (
    '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
    "<title>API &#8212; Jinja Documentation (3.1.x)</title>\n"
    '<script src="_static/jquery.js"></script>\n</head><body>\n'
)
_TEXT = (
    '<section id="the-meta-api"><h2>The Meta API<a class="headerlink" href="#the-meta-api">'
    "¶</a></h2><p>The meta API returns some information about abstract syntax trees that "
    "could help applications to implement more advanced template concepts: "
    "find_undeclared_variables() finds every variable a template reads from its context.</p>"
)
_CHUNKS = [
    Document(page_content=_HEAD, metadata={"source": _SOURCE, "start_index": 0}),
    Document(page_content=_TOC, metadata={"source": _SOURCE, "start_index": 700}),
    Document(page_content=_TEXT, metadata={"source": _SOURCE, "start_index": 1500}),
    Document(page_content=_TAGS_ONLY, metadata={"source": _SOURCE, "start_index": 2300}),
]
_IDS = ["head", "toc", "text", "tags"]
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")


@pytest.fixture
def client() -> Iterator[Treehop]:
    with Treehop(embedder=BagOfWordsEmbedder(), tagger=None) as c:
        yield c


def test_the_premise_the_contents_piece_converts_to_nothing() -> None:
    """Control (passes before the change): treehop's page conversion drops a table of
    contents, so the piece has no text as a page; the text chunk has."""
    meta = _CHUNKS[1].metadata
    assert not page_text(_TOC, meta).strip()
    assert not page_text(_HEAD, meta).strip()
    assert "find_undeclared_variables" in page_text(_TEXT, meta)


def test_a_contents_piece_is_stored_as_its_link_text(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    assert store.add_documents(_CHUNKS, ids=_IDS) == _IDS
    by_id = {d.id: d for d in store.get_by_ids(_IDS)}
    assert set(by_id) == set(_IDS)
    toc = by_id["toc"]
    assert toc.page_content.splitlines() == _TOC_LINES
    assert toc.metadata == _CHUNKS[1].metadata


def test_a_contents_piece_ranks_as_its_markup_did(client: Treehop) -> None:
    """Shown as its link text, embedded as the markup it came as: a list of other sections'
    titles must not outrank the section that answers (as text, aptitude's DocBook footers
    took 2 of 48 top-4 slots of 12 questions, 0 as markup)."""
    store = TreehopVectorStore(client)
    store.add_documents(_CHUNKS, ids=_IDS)
    for q in ("The Meta API", "The Meta API find_undeclared_variables"):
        assert [d.id for d in store.similarity_search(q, k=1)] == ["text"], q
    toc = store.get_by_ids(["toc"])[0]
    assert toc.page_content.splitlines() == _TOC_LINES  # (shown as its text all the same)
    # the index's vector for it is the markup's, not the link text's
    uri = next(
        n.uri for n in client.aio.store.iter_nodes(store.base_uri) if n.content.startswith("- ")
    )
    stored = np.asarray(client.aio.store.get_vectors([uri]))[0]
    as_markup, as_text = np.asarray(client.aio.embedder.embed([_TOC, toc.page_content]))
    assert np.allclose(stored, as_markup) and not np.allclose(stored, as_text)


def test_a_piece_with_no_visible_character_is_kept_as_given(client: Treehop) -> None:
    """Nothing to store as text: the markup stays, and its id works as any other's."""
    store = TreehopVectorStore(client)
    store.add_documents(_CHUNKS, ids=_IDS)
    by_id = {d.id: d for d in store.get_by_ids(["head", "tags"])}
    assert by_id["head"].page_content == _HEAD
    assert by_id["tags"].page_content == _TAGS_ONLY
    assert store.delete(["tags"])
    assert [d.id for d in store.get_by_ids(_IDS)] == ["head", "toc", "text"]
    # an upsert of the same id replaces it
    store.add_documents(
        [Document(page_content="<hr />", metadata={"source": _SOURCE})], ids=["head"]
    )
    assert store.get_by_ids(["head"])[0].page_content == "<hr />"


def test_no_search_answers_raw_contents_markup(client: Treehop) -> None:
    store = TreehopVectorStore(client)
    store.add_documents(_CHUNKS, ids=_IDS)
    for q in ("The Meta API", "Template.blocks is_up_to_date", "find undeclared variables"):
        hits = store.similarity_search(q, k=4)
        assert "toc" in [d.id for d in hits]
        for d in hits:
            if d.id in ("toc", "text"):
                assert _TAG.search(d.page_content) is None, (q, d.page_content)


def test_the_agents_find_tool_answers_the_link_text(client: Treehop) -> None:
    """usage74: ``create_treehop_tools``' find answered the contents chunk as ``<li><a ...>``."""
    TreehopVectorStore(client).add_documents(_CHUNKS, ids=_IDS)
    find = create_treehop_tools(client, k=2)[0]
    answer = find.invoke({"query": "Template.blocks is_up_to_date"})
    assert "- Template.is_up_to_date" in answer
    assert "<li>" not in answer and "reference internal" not in answer


def test_the_llamaindex_store_keeps_the_same_text(client: Treehop) -> None:
    store = LiTreehopVectorStore(client=client)
    nodes = [
        TextNode(id_=i, text=d.page_content, metadata=dict(d.metadata))
        for i, d in zip(_IDS, _CHUNKS, strict=True)
    ]
    assert store.add(nodes) == _IDS
    got = {n.node_id: n.get_content() for n in store.get_nodes(node_ids=_IDS)}
    assert got["toc"].splitlines() == _TOC_LINES
    assert got["tags"] == _TAGS_ONLY and got["head"] == _HEAD
    assert "find_undeclared_variables()" in got["text"] and "<p>" not in got["text"]
    # embedded as the node came (its markup, with the metadata LlamaIndex embeds)
    uri = next(
        n.uri for n in client.aio.store.iter_nodes("viking://resources") if n.content == got["toc"]
    )
    stored = np.asarray(client.aio.store.get_vectors([uri]))[0]
    came = nodes[1].get_content(metadata_mode=MetadataMode.EMBED)
    as_came, as_text = np.asarray(client.aio.embedder.embed([came, got["toc"]]))
    assert np.allclose(stored, as_came) and not np.allclose(stored, as_text)


def test_stored_text_only_changes_markup_that_converts_to_nothing() -> None:
    """The rule touches nothing else: a page with text is its conversion, plain text and a
    flattened page as before (``page_text``)."""
    meta = {"source": _SOURCE}
    assert stored_page_text(_TEXT, meta) == (page_text(_TEXT, meta), False)
    assert stored_page_text("plain <b> notes", {"source": "a.txt"}) == ("plain <b> notes", False)
    assert stored_page_text("Prev Up Next", meta) == ("Prev Up Next", False)
    assert stored_page_text(_TOC, {}) == (_TOC, False)  # not HTML by its start nor metadata
    assert stored_page_text(_TAGS_ONLY, meta) == (_TAGS_ONLY, False)
    assert stored_page_text(_HEAD, meta) == (_HEAD, False)
    assert stored_page_text(_TOC, meta) == ("\n".join(_TOC_LINES), True)


def test_the_file_converter_is_unchanged_for_pages() -> None:
    """``add_resource``'s conversion still drops the contents (the sets built from HTML)."""
    page = f"<html><body><div class='toc'><ul>{_TOC}</div>{_TEXT}</body></html>"
    text = html_to_markdown(page)[0]
    assert "Template.blocks" not in text and "find_undeclared_variables()" in text


_WORDS = st.text(alphabet="abcxyz &;<>'\"é¶\t", min_size=1, max_size=12)
_INLINE = [
    '<a href="#x">',
    "</a>",
    "<span>",
    "</span>",
    '<code class="pre">',
    "</code>",
    "<!-- c -->",
]
_BLOCKS = ["<li>", "</li>", "<ul>", "</ul>", "<br>", "<p>", "</p>", "<hr />"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(_INLINE + _BLOCKS), _WORDS.map(html.escape)), max_size=30)
)
def test_visible_text_is_the_words_in_order(parts: list[str]) -> None:
    """Property: markup of tags and escaped words gives back exactly those words, in order
    (an inline tag joins the text around it, a block tag separates it; no tag, attribute or
    permalink sign; entities decoded); no blank line; ``""`` when no word is left."""
    out = html_visible_text("".join(parts))
    seen = "".join("" if p in _INLINE else " " if p in _BLOCKS else html.unescape(p) for p in parts)
    expected = seen.replace("¶", "").split()
    assert [w for w in out.split() if w != "-"] == [w for w in expected if w != "-"]
    assert all(line.strip() for line in out.splitlines())
    assert (out == "") == (not expected)


def test_hidden_elements_text_is_not_visible() -> None:
    doc = "<head><title>T</title><style>p{}</style></head><script>x()</script><p>seen</p>"
    assert html_visible_text(doc) == "seen"
